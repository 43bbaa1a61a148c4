/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_EPOLL_WAIT: collects what an epoll instance has ready, waits
 * (without a thread of its own on the kernel) until something is, and
 * answers bad fields, counts, files and addresses as the kernel does.
 */
#include <sys/epoll.h>
#include <sys/mman.h>
#include "op-util.h"

static int ep, p[2][2];

static struct io_uring_sqe *prep_wait(struct io_uring *ring, int fd,
				      struct epoll_event *out, int max,
				      __u64 ud)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_epoll_wait(sqe, fd, out, max, 0);
	sqe->user_data = ud;
	return sqe;
}

static void fill(int i)
{
	CHECK(write(p[i][1], "e", 1) == 1, "write pipe %d", i);
}

static void drain(int i)
{
	char buf[16];

	while (read(p[i][0], buf, sizeof(buf)) > 0)
		;
}

/* No CQE shows within 'ms'. */
static void none_for(struct io_uring *ring, int ms, const char *what)
{
	struct io_uring_cqe *cqe;

	usleep(ms * 1000);
	CHECK(io_uring_peek_cqe(ring, &cqe) == -EAGAIN, "%s: completed early",
	      what);
}

static void ready(struct io_uring *ring)
{
	struct epoll_event out[4];

	fill(0);
	fill(1);
	memset(out, 0, sizeof(out));
	prep_wait(ring, ep, out, 4, 0);
	CHECK_EQ(op_run1(ring), 2, "two ready pipes");
	CHECK((out[0].data.u32 ^ out[1].data.u32) == 1 &&
	      (out[0].events & EPOLLIN) && (out[1].events & EPOLLIN),
	      "events %u/%x %u/%x", out[0].data.u32, out[0].events,
	      out[1].data.u32, out[1].events);
	/* maxevents bounds the copy, the rest stays ready */
	memset(out, 0, sizeof(out));
	prep_wait(ring, ep, out, 1, 0);
	CHECK_EQ(op_run1(ring), 1, "maxevents 1");
	CHECK(out[1].events == 0, "wrote past maxevents");
	drain(0);
	drain(1);
}

static void waits(struct io_uring *ring)
{
	struct epoll_event out[4];
	struct op_cqe c;

	memset(out, 0, sizeof(out));
	prep_wait(ring, ep, out, 4, 7);
	op_submit(ring, 1);
	none_for(ring, 20, "nothing ready");
	fill(1);
	c = op_wait(ring);
	CHECK(c.user_data == 7 && c.res == 1 && out[0].data.u32 == 1,
	      "woken wait: ud %llu res %d data %u",
	      (unsigned long long)c.user_data, c.res, out[0].data.u32);
	drain(1);

	/* the same through io-wq (IOSQE_ASYNC) */
	prep_wait(ring, ep, out, 4, 8)->flags |= IOSQE_ASYNC;
	op_submit(ring, 1);
	none_for(ring, 20, "IOSQE_ASYNC, nothing ready");
	fill(0);
	c = op_wait(ring);
	CHECK(c.user_data == 8 && c.res == 1 && out[0].data.u32 == 0,
	      "async wait: res %d data %u", c.res, out[0].data.u32);
	drain(0);

	/* the request holds the epoll file: closing the fd ends nothing */
	{
		int dup_ep = dup(ep);

		CHECK(dup_ep >= 0, "dup");
		prep_wait(ring, dup_ep, out, 4, 9);
		op_submit(ring, 1);
		close(dup_ep);
		none_for(ring, 20, "closed epoll fd");
		fill(0);
		c = op_wait(ring);
		CHECK(c.user_data == 9 && c.res == 1,
		      "wait on a closed fd: res %d", c.res);
		drain(0);
	}

	/* a registered epoll file */
	CHECK_EQ(io_uring_register_files(ring, &ep, 1), 0, "register_files");
	prep_wait(ring, 0, out, 4, 10)->flags |= IOSQE_FIXED_FILE;
	fill(1);
	CHECK_EQ(op_run1(ring), 1, "fixed epoll file");
	drain(1);
	CHECK_EQ(io_uring_unregister_files(ring), 0, "unregister_files");
}

static void cancel(struct io_uring *ring)
{
	struct epoll_event out[4];
	struct io_uring_sqe *sqe;
	struct op_cqe c[2];

	prep_wait(ring, ep, out, 4, 1);
	op_submit(ring, 1);
	sqe = op_sqe(ring);
	io_uring_prep_cancel64(sqe, 1, 0);
	sqe->user_data = 2;
	op_submit(ring, 1);
	op_wait_n(ring, c, 2);
	CHECK_EQ(c[0].res, -ECANCELED, "cancelled wait");
	CHECK_EQ(c[1].res, 0, "cancel");

	/* by its file */
	prep_wait(ring, ep, out, 4, 1);
	op_submit(ring, 1);
	sqe = op_sqe(ring);
	io_uring_prep_cancel_fd(sqe, ep, 0);
	sqe->user_data = 2;
	op_submit(ring, 1);
	op_wait_n(ring, c, 2);
	CHECK_EQ(c[0].res, -ECANCELED, "wait cancelled by fd");
	CHECK_EQ(c[1].res, 0, "cancel by fd");
}

static void bad_input(struct io_uring *ring)
{
	struct epoll_event out[4];
	struct io_uring_sqe *sqe;
	struct op_cqe c[2];
	void *gone;

	fill(0);
	/* maxevents: at least 1, at most INT_MAX / sizeof(epoll_event) */
	prep_wait(ring, ep, out, 0, 0);
	CHECK_EQ(op_run1(ring), -EINVAL, "maxevents 0");
	prep_wait(ring, ep, out, -1, 0);
	CHECK_EQ(op_run1(ring), -EINVAL, "maxevents -1");
	prep_wait(ring, ep, out, 0x7fffffff, 0);
	CHECK_EQ(op_run1(ring), -EINVAL, "maxevents INT_MAX");
	/* no epoll instance, no file */
	prep_wait(ring, p[0][0], out, 4, 0);
	CHECK_EQ(op_run1(ring), -EINVAL, "a pipe");
	prep_wait(ring, -1, out, 4, 0);
	CHECK_EQ(op_run1(ring), -EBADF, "fd -1");
	prep_wait(ring, 1000, out, 4, 0);
	CHECK_EQ(op_run1(ring), -EBADF, "fd not open");
	/* fields the kernel wants zero */
	prep_wait(ring, ep, out, 4, 0)->off = 1;
	CHECK_EQ(op_run1(ring), -EINVAL, "off");
	prep_wait(ring, ep, out, 4, 0)->rw_flags = 1;
	CHECK_EQ(op_run1(ring), -EINVAL, "rw_flags");
	prep_wait(ring, ep, out, 4, 0)->buf_index = 1;
	CHECK_EQ(op_run1(ring), -EINVAL, "buf_index");
	prep_wait(ring, ep, out, 4, 0)->splice_fd_in = 1;
	CHECK_EQ(op_run1(ring), -EINVAL, "splice_fd_in");
	prep_wait(ring, ep, out, 4, 0)->ioprio = 1;
	CHECK_EQ(op_run1(ring), -EINVAL, "ioprio");
	/* no provided buffers for it */
	prep_wait(ring, ep, out, 4, 0)->flags |= IOSQE_BUFFER_SELECT;
	CHECK_EQ(op_run1(ring), -EOPNOTSUPP, "IOSQE_BUFFER_SELECT");
	/* events the kernel cannot write: EFAULT, and the chain fails */
	gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(gone != MAP_FAILED, "mmap");
	prep_wait(ring, ep, gone, 4, 0);
	CHECK_EQ(op_run1(ring), -EFAULT, "read-only events");
	munmap(gone, 4096);
	prep_wait(ring, ep, NULL, 4, 1)->flags |= IOSQE_IO_LINK;
	sqe = op_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 2;
	op_submit(ring, 2);
	op_wait_n(ring, c, 2);
	CHECK_EQ(c[0].res, -EFAULT, "NULL events");
	CHECK_EQ(c[1].res, -ECANCELED, "request linked after it");
	/* the event stayed ready: a good wait still gets it */
	prep_wait(ring, ep, out, 4, 0);
	CHECK_EQ(op_run1(ring), 1, "event kept after EFAULT");
	drain(0);
	/* NULL events with nothing ready: the fault comes with the event */
	prep_wait(ring, ep, NULL, 4, 0);
	op_submit(ring, 1);
	none_for(ring, 20, "NULL events, nothing ready");
	fill(1);
	CHECK_EQ(op_wait(ring).res, -EFAULT, "NULL events once ready");
	drain(1);
}

int main(int argc, char **argv)
{
	struct epoll_event ev;
	struct io_uring ring;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	op_need(&ring, IORING_OP_EPOLL_WAIT, "IORING_OP_EPOLL_WAIT");
	ep = epoll_create1(0);
	CHECK(ep >= 0, "epoll_create1");
	for (int i = 0; i < 2; i++) {
		CHECK(pipe2(p[i], O_NONBLOCK) == 0, "pipe");
		ev.events = EPOLLIN;
		ev.data.u64 = i;
		CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[i][0], &ev) == 0,
		      "epoll_ctl");
	}
	ready(&ring);
	waits(&ring);
	cancel(&ring);
	bad_input(&ring);
	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
