/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_MSG_RING between two rings: data messages (plain and with
 * CQE flags passed through) and passing a fixed file to a given slot and to
 * an allocated slot. Then the kernel's errors (closed and non-ring targets,
 * fixed-file targets, bad flags, disabled targets, fd passing mistakes),
 * CQE_SKIP, targets with DEFER_TASKRUN, a full CQ and an eventfd, and
 * targets torn down while messages fly.
 */
#include <pthread.h>
#include <sys/eventfd.h>
#include "op-util.h"

static int msg(struct io_uring *from, int fd, unsigned len, __u64 ud,
	       unsigned flags)
{
	io_uring_prep_msg_ring(op_sqe(from), fd, len, ud, flags);
	return op_run1(from);
}

/* b has a sparse file table of 8 by now; p is a pipe. */
static void errors(struct io_uring *a, struct io_uring *b, int p[2])
{
	struct io_uring_sqe *sqe;
	struct io_uring c;
	struct io_uring_params prm;
	struct io_uring_cqe *cqe;
	int fd;

	/* a closed ring fd, -1, and a plain file (the kernel: -EBADFD) */
	op_ring(&c, 4, 0);
	fd = c.ring_fd;
	io_uring_queue_exit(&c);
	CHECK_EQ(msg(a, fd, 1, 1, 0), -EBADF, "msg_ring to a closed ring");
	CHECK_EQ(msg(a, -1, 1, 1, 0), -EBADF, "msg_ring to fd -1");
	CHECK_EQ(msg(a, p[1], 1, 1, 0), -EBADFD, "msg_ring to a pipe");

	/* a fixed-file target: no ring can be one, so a pipe or nothing */
	sqe = op_sqe(a);
	io_uring_prep_msg_ring(sqe, 0, 1, 1, 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK_EQ(op_run1(a), -EBADFD, "msg_ring to fixed file 0 (a pipe)");
	sqe = op_sqe(a);
	io_uring_prep_msg_ring(sqe, 5, 1, 1, 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK_EQ(op_run1(a), -EBADF, "msg_ring to an empty fixed slot");

	/* bad flags and fields; CQE_SKIP is for fd passing only */
	CHECK_EQ(msg(a, b->ring_fd, 1, 1, IORING_MSG_RING_CQE_SKIP), -EINVAL,
		 "data message with CQE_SKIP");
	CHECK_EQ(msg(a, b->ring_fd, 1, 1, 1U << 2), -EINVAL, "unknown msg flag");
	sqe = op_sqe(a);
	io_uring_prep_msg_ring(sqe, b->ring_fd, 1, 1, 0);
	sqe->addr = 9;
	CHECK_EQ(op_run1(a), -EINVAL, "unknown msg command");
	sqe = op_sqe(a);
	io_uring_prep_msg_ring(sqe, b->ring_fd, 1, 1, 0);
	sqe->file_index = 3;
	CHECK_EQ(op_run1(a), -EINVAL, "cqe flags without FLAGS_PASS");
	CHECK_EQ(io_uring_cq_ready(b), 0, "a refused message reached b");

	/* message to itself: its CQE comes before the sender's */
	CHECK_EQ(msg(a, a->ring_fd, 5, 0x55, 0), 5, "the target CQE first");
	CHECK_EQ(op_wait(a).res, 0, "then the sender's");

	/* a disabled target */
	memset(&prm, 0, sizeof(prm));
	prm.flags = IORING_SETUP_R_DISABLED;
	CHECK_EQ(io_uring_queue_init_params(4, &c, &prm), 0, "R_DISABLED ring");
	CHECK_EQ(msg(a, c.ring_fd, 1, 1, 0), -EBADFD, "msg_ring to a disabled ring");
	io_uring_queue_exit(&c);

	/* fd passing mistakes */
	sqe = op_sqe(a);
	io_uring_prep_msg_ring_fd(sqe, a->ring_fd, 0, 1, 0x79, 0);
	CHECK_EQ(op_run1(a), -EINVAL, "msg_ring_fd to itself");
	sqe = op_sqe(a);
	io_uring_prep_msg_ring_fd(sqe, b->ring_fd, 6, 1, 0x79, 0);
	CHECK_EQ(op_run1(a), -EBADF, "msg_ring_fd from an empty slot");
	sqe = op_sqe(a);
	io_uring_prep_msg_ring_fd(sqe, b->ring_fd, 0, 8, 0x79, 0);
	CHECK_EQ(op_run1(a), -EINVAL, "msg_ring_fd past the target table");
	op_ring(&c, 4, 0);
	sqe = op_sqe(a);
	io_uring_prep_msg_ring_fd(sqe, c.ring_fd, 0, 1, 0x79, 0);
	CHECK_EQ(op_run1(a), -ENXIO, "msg_ring_fd to a ring without a table");
	io_uring_queue_exit(&c);
	CHECK_EQ(io_uring_cq_ready(b), 0, "a refused fd reached b");

	/* CQE_SKIP: the file arrives, no CQE does */
	sqe = op_sqe(a);
	io_uring_prep_msg_ring_fd(sqe, b->ring_fd, 0, 7, 0x7a, IORING_MSG_RING_CQE_SKIP);
	CHECK_EQ(op_run1(a), 0, "msg_ring_fd with CQE_SKIP");
	CHECK_EQ(io_uring_peek_cqe(b, &cqe), -EAGAIN, "CQE_SKIP posted a CQE");
	sqe = op_sqe(b);
	io_uring_prep_nop(sqe);
	sqe->nop_flags = 1U << 1 | 1U << 2;	/* NOP_FILE | NOP_FIXED_FILE */
	sqe->fd = 7;
	if (op_run1(b) == -EINVAL)
		tu_lacks("IORING_NOP_FILE");
	else {
		sqe = op_sqe(b);
		io_uring_prep_nop(sqe);
		sqe->nop_flags = 1U << 1 | 1U << 2;
		sqe->fd = 7;
		CHECK_EQ(op_run1(b), 0, "slot 7 filled by the skipped message");
	}

	/* no ring fd goes into a file table; the refused update empties
	 * the slot (the kernel drops the old file first) */
	{
		int rfd = b->ring_fd;

		CHECK_EQ(io_uring_register_files_update(a, 0, &rfd, 1), -EBADF,
			 "a ring fd in a file table");
		sqe = op_sqe(a);
		io_uring_prep_msg_ring(sqe, 0, 1, 1, 0);
		io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
		CHECK_EQ(op_run1(a), -EBADF, "slot 0 after the refused update");
	}
}

/* Targets with DEFER_TASKRUN, a full CQ (NODROP) and an eventfd. */
static void targets(struct io_uring *a)
{
	struct io_uring_params prm;
	struct io_uring t;
	eventfd_t v;
	int efd, ret;

	memset(&prm, 0, sizeof(prm));
	prm.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_params(4, &t, &prm);
	if (ret == -EINVAL) {
		tu_lacks("IORING_SETUP_DEFER_TASKRUN");
	} else {
		CHECK_EQ(ret, 0, "DEFER_TASKRUN ring");
		CHECK_EQ(msg(a, t.ring_fd, 3, 0x33, 0), 0, "msg to DEFER_TASKRUN");
		struct op_cqe c = op_wait(&t);

		CHECK(c.user_data == 0x33 && c.res == 3, "DEFER_TASKRUN target CQE");
		io_uring_queue_exit(&t);
	}

	/* a CQ of 2: the third and later messages wait in the overflow list */
	memset(&prm, 0, sizeof(prm));
	prm.flags = IORING_SETUP_CQSIZE;
	prm.cq_entries = 2;
	CHECK_EQ(io_uring_queue_init_params(2, &t, &prm), 0, "small CQ ring");
	efd = eventfd(0, EFD_NONBLOCK);
	CHECK(efd >= 0, "eventfd");
	CHECK_EQ(io_uring_register_eventfd(&t, efd), 0, "register_eventfd");
	for (int i = 0; i < 6; i++)
		CHECK_EQ(msg(a, t.ring_fd, i, 100 + i, 0), 0, "msg to a small CQ");
	CHECK(eventfd_read(efd, &v) == 0 && v > 0, "target eventfd not signalled");
	CHECK(IO_URING_READ_ONCE(*t.sq.kflags) & IORING_SQ_CQ_OVERFLOW,
	      "target CQ overflow flag");
	for (int i = 0; i < 6; i++) {
		struct op_cqe c = op_wait(&t);

		CHECK(c.user_data == (__u64)(100 + i) && c.res == i,
		      "message %d after overflow: ud %llu res %d", i,
		      (unsigned long long)c.user_data, c.res);
	}
	io_uring_queue_exit(&t);
	close(efd);
}

struct race {
	struct io_uring *from;
	int fd;
	int bad;
};

static void *sender(void *arg)
{
	struct race *r = arg;

	for (int i = 0; i < 8; i++) {
		int res = msg(r->from, r->fd, 1, 1, 0);

		if (res != 0 && res != -EBADF && res != -EBADFD)
			r->bad = res;
	}
	return NULL;
}

/* Targets torn down while another thread's ring messages them. */
static void teardown_race(void)
{
	for (int round = 0; round < 50; round++) {
		struct io_uring from, to;
		struct race r;
		pthread_t t;

		op_ring(&from, 16, 0);
		op_ring(&to, 4, 0);
		r.from = &from;
		r.fd = to.ring_fd;
		r.bad = 0;
		CHECK(pthread_create(&t, NULL, sender, &r) == 0, "pthread_create");
		usleep(round % 5 * 50);
		io_uring_queue_exit(&to);
		pthread_join(t, NULL);
		CHECK_EQ(r.bad, 0, "message to a ring being torn down");
		io_uring_queue_exit(&from);
	}
}

int main(int argc, char **argv)
{
	struct io_uring a, b;
	struct io_uring_sqe *sqe;
	struct op_cqe c;
	int p[2], ret;
	char buf[8];

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&a, 8, 0);
	op_ring(&b, 8, 0);
	op_need(&a, IORING_OP_MSG_RING, "IORING_OP_MSG_RING");

	/* data: b gets a CQE with our user_data and res = len */
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring(sqe, b.ring_fd, 0x1234, 0xdeadbeefcafeULL, 0);
	io_uring_sqe_set_data64(sqe, 1);
	CHECK_EQ(op_run1(&a), 0, "msg_ring (sender)");
	c = op_wait(&b);
	CHECK(c.user_data == 0xdeadbeefcafeULL && c.res == 0x1234,
	      "msg_ring target CQE: ud %#llx res %#x",
	      (unsigned long long)c.user_data, c.res);

	/* cqe_flags passed through with IORING_MSG_RING_FLAGS_PASS */
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring_cqe_flags(sqe, b.ring_fd, 7, 99, 0, 0x5a0000);
	ret = op_run1(&a);
	if (ret != -EINVAL ||
	    !tu_lacks_before(6, 3, "IORING_MSG_RING_FLAGS_PASS")) {
		CHECK_EQ(ret, 0, "msg_ring_cqe_flags");
		c = op_wait(&b);
		CHECK(c.user_data == 99 && c.res == 7 && c.flags == 0x5a0000,
		      "cqe_flags target CQE: flags %#x", c.flags);
	}
	/* to a descriptor that is not a ring */
	CHECK(pipe(p) == 0, "pipe");
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring(sqe, p[0], 0, 0, 0);
	CHECK_EQ(op_run1(&a), -EBADFD, "msg_ring to a non-ring fd");

	/* fd passing: a's fixed slot 0 (pipe read end) -> b's slot 4 */
	CHECK_EQ(io_uring_register_files(&a, &p[0], 1), 0, "register a");
	CHECK_EQ(io_uring_register_files_sparse(&b, 8), 0, "register b");
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring_fd(sqe, b.ring_fd, 0, 4, 0x77, 0);
	CHECK_EQ(op_run1(&a), 0, "msg_ring_fd");
	c = op_wait(&b);
	CHECK(c.user_data == 0x77, "msg_ring_fd target CQE ud");
	CHECK(write(p[1], "fd!", 3) == 3, "write");
	sqe = op_sqe(&b);
	io_uring_prep_read(sqe, 4, buf, sizeof(buf), 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK_EQ(op_run1(&b), 3, "read through the passed fixed file");
	CHECK(!memcmp(buf, "fd!", 3), "passed file content");

	/* allocated slot: the sender's result is the slot chosen in b */
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring_fd_alloc(sqe, b.ring_fd, 0, 0x78, 0);
	ret = op_run1(&a);
	CHECK(ret >= 0 && ret < 8 && ret != 4, "msg_ring_fd_alloc slot %d", ret);
	c = op_wait(&b);
	CHECK(c.user_data == 0x78, "alloc target CQE ud");
	CHECK(write(p[1], "2", 1) == 1, "write");
	sqe = op_sqe(&b);
	io_uring_prep_read(sqe, ret, buf, sizeof(buf), 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK_EQ(op_run1(&b), 1, "read via allocated slot");

	errors(&a, &b, p);
	targets(&a);
	teardown_race();
	io_uring_queue_exit(&a);
	io_uring_queue_exit(&b);
	close(p[0]);
	close(p[1]);
	return tu_done();
}
