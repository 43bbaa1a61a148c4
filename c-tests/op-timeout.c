/* SPDX-License-Identifier: MIT */
/*
 * Timeout opcodes: timeout (expiry and completion count), link_timeout,
 * timeout_remove, timeout_update.
 */
#include "op-util.h"

static struct __kernel_timespec ms(long m)
{
	struct __kernel_timespec t = { .tv_sec = m / 1000,
				       .tv_nsec = (m % 1000) * 1000000 };
	return t;
}

/* A read of the pipe end 'fd' under a link timeout of 't'; returns the
 * link timeout's SQE. */
static struct io_uring_sqe *linked_read(struct io_uring *ring, int fd,
					char *buf, unsigned len,
					struct __kernel_timespec *t)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_read(sqe, fd, buf, len, 0);
	return op_link_timeout(ring, sqe, t);
}

/* Arms timeout `t` as user_data 1, then removes it with user_data 2, each
 * in a submit call of its own. */
static void arm_and_remove(struct io_uring *ring, struct __kernel_timespec *t)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_timeout(sqe, t, 0, 0);
	io_uring_sqe_set_data64(sqe, 1);
	op_submit(ring, 1);
	sqe = op_sqe(ring);
	io_uring_prep_timeout_remove(sqe, 1, 0);
	io_uring_sqe_set_data64(sqe, 2);
	op_submit(ring, 1);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct __kernel_timespec t1, t2;
	struct op_cqe c[3];
	long long t0, dt;
	int p[2];
	char buf[8];

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);

	/* a 50ms timeout expires with -ETIME after >= 50ms */
	t1 = ms(50);
	t0 = tu_now_ns();
	sqe = op_sqe(&ring);
	io_uring_prep_timeout(sqe, &t1, 0, 0);
	CHECK_EQ(op_run1(&ring), -ETIME, "timeout expiry");
	dt = tu_now_ns() - t0;
	CHECK(dt >= 45000000LL && dt < 2000000000LL, "timeout took %lld ns", dt);

	/* count = 1: completes with 0 as soon as one other CQE posts */
	t1 = ms(10000);
	sqe = op_sqe(&ring);
	io_uring_prep_timeout(sqe, &t1, 1, 0);
	io_uring_sqe_set_data64(sqe, 1);
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 2);
	t0 = tu_now_ns();
	op_submit(&ring, 2);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[0].res, 0, "counted timeout");
	CHECK(tu_now_ns() - t0 < 5000000000LL, "counted timeout waited");

	/* timeout_update shortens a long timeout; timeout_remove cancels */
	t1 = ms(10000);
	sqe = op_sqe(&ring);
	io_uring_prep_timeout(sqe, &t1, 0, 0);
	io_uring_sqe_set_data64(sqe, 1);
	op_submit(&ring, 1);
	t2 = ms(20);
	sqe = op_sqe(&ring);
	io_uring_prep_timeout_update(sqe, &t2, 1, 0);
	io_uring_sqe_set_data64(sqe, 2);
	t0 = tu_now_ns();
	op_submit(&ring, 1);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[1].res, 0, "timeout_update");
	CHECK_EQ(c[0].res, -ETIME, "updated timeout expiry");
	CHECK(tu_now_ns() - t0 < 5000000000LL, "update did not shorten");

	arm_and_remove(&ring, &t1);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[1].res, 0, "timeout_remove");
	CHECK_EQ(c[0].res, -ECANCELED, "removed timeout");
	sqe = op_sqe(&ring);
	io_uring_prep_timeout_remove(sqe, 999, 0);
	CHECK_EQ(op_run1(&ring), -ENOENT, "timeout_remove unknown");

	/* The remove's CQE comes first: the kernel completes the removed
	 * timeout from task work, after the submit batch. */
	arm_and_remove(&ring, &t1);
	{
		struct io_uring_cqe *cqe;

		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait remove");
		CHECK(cqe->user_data == 2 && cqe->res == 0, "remove's CQE first");
		io_uring_cqe_seen(&ring, cqe);
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait removed");
		CHECK(cqe->user_data == 1 && cqe->res == -ECANCELED, "then the removed timeout's");
		io_uring_cqe_seen(&ring, cqe);
	}

	/* link_timeout cancels a read that never completes */
	CHECK(pipe(p) == 0, "pipe");
	t1 = ms(30);
	linked_read(&ring, p[0], buf, sizeof(buf), &t1);
	op_submit(&ring, 2);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[0].res, -ECANCELED, "read cut by link_timeout");
	CHECK_EQ(c[1].res, -ETIME, "link_timeout fired");
	/* ... and does not fire when the read finishes first */
	CHECK(write(p[1], "ok", 2) == 2, "write");
	t1 = ms(5000);
	linked_read(&ring, p[0], buf, sizeof(buf), &t1);
	op_submit(&ring, 2);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[0].res, 2, "linked read");
	CHECK_EQ(c[1].res, -ECANCELED, "unused link_timeout");

	/* A count of 2^32 - 1 never fires by count: the 30ms timer does. */
	t1 = ms(30);
	sqe = op_sqe(&ring);
	io_uring_prep_timeout(sqe, &t1, -1U, 0);
	CHECK_EQ(op_run1(&ring), -ETIME, "timeout with count -1U");

	/* A link timeout that fails at submission (ioprio set) gets its own
	 * -EINVAL; the read it guards -ECANCELED. */
	sqe = linked_read(&ring, p[0], buf, sizeof(buf), &t1);
	sqe->ioprio = 1;
	op_submit(&ring, 2);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[0].res, -ECANCELED, "read before a bad link_timeout");
	CHECK_EQ(c[1].res, -EINVAL, "bad link_timeout");

	/* IOSQE_CQE_SKIP_SUCCESS on a link timeout hides both its -ETIME
	 * when it fires and its -ECANCELED when its request wins: one CQE
	 * each time, the request's, and then the ring is empty. */
	for (int fire = 0; fire < 2; fire++) {
		if (!fire)
			CHECK(write(p[1], "ok", 2) == 2, "write");
		t1 = ms(fire ? 20 : 5000);
		sqe = linked_read(&ring, p[0], buf, sizeof(buf), &t1);
		io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
		op_submit(&ring, 2);
		op_wait_n(&ring, c, 1);
		CHECK_EQ(c[0].user_data, 1, "the request's CQE");
		CHECK_EQ(c[0].res, fire ? -ECANCELED : 2, "request under a quiet link_timeout");
		usleep(50 * 1000);
		CHECK_EQ(io_uring_cq_ready(&ring), 0, "quiet link_timeout posted a CQE");
	}

	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
