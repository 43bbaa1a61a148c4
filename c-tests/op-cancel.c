/* SPDX-License-Identifier: MIT */
/*
 * Cancellation: by user_data (cancel64 and pointer cancel), by fd
 * (IORING_ASYNC_CANCEL_FD, with _ALL), and IORING_ASYNC_CANCEL_ANY.
 */
#include "op-util.h"

static struct io_uring ring;
static char buf[4][8];

static void queue_read(int fd, __u64 ud, int i)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_read(sqe, fd, buf[i], sizeof(buf[i]), 0);
	io_uring_sqe_set_data64(sqe, ud);
}

#define CANCEL_UD 100

/* Submits the cancel request prepared in 'sqe' and collects n CQEs: its
 * own (want_cancel_res) and n - 1 requests it cancelled (-ECANCELED). */
static void cancel_and_collect(struct io_uring_sqe *sqe, int n,
			       int want_cancel_res)
{
	int canceled = 0, seen_cancel = 0, want_canceled = n - 1;

	io_uring_sqe_set_data64(sqe, CANCEL_UD);
	op_submit(&ring, 1);
	for (int i = 0; i < n; i++) {
		struct op_cqe c = op_wait(&ring);

		if (c.user_data == CANCEL_UD) {
			seen_cancel = 1;
			CHECK_EQ(c.res, want_cancel_res, "cancel result");
		} else {
			CHECK_EQ(c.res, -ECANCELED, "canceled request");
			canceled++;
		}
	}
	CHECK(seen_cancel && canceled == want_canceled,
	      "canceled %d, want %d", canceled, want_canceled);
}

int main(int argc, char **argv)
{
	struct io_uring_sqe *sqe;
	int p[2], q[2];
	static int tag;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 16, 0);
	CHECK(pipe(p) == 0 && pipe(q) == 0, "pipe");

	/* by user_data */
	queue_read(p[0], 11, 0);
	op_submit(&ring, 1);
	sqe = op_sqe(&ring);
	io_uring_prep_cancel64(sqe, 11, 0);
	cancel_and_collect(sqe, 2, 0);
	sqe = op_sqe(&ring);
	io_uring_prep_cancel64(sqe, 11, 0);
	CHECK_EQ(op_run1(&ring), -ENOENT, "cancel of nothing");

	/* by pointer user_data */
	{
		struct io_uring_sqe *s = op_sqe(&ring);

		io_uring_prep_read(s, p[0], buf[0], sizeof(buf[0]), 0);
		io_uring_sqe_set_data(s, &tag);
		op_submit(&ring, 1);
		sqe = op_sqe(&ring);
		io_uring_prep_cancel(sqe, &tag, 0);
		io_uring_sqe_set_data64(sqe, CANCEL_UD);
		op_submit(&ring, 1);
		for (int i = 0; i < 2; i++) {
			struct io_uring_cqe *cqe;

			CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait");
			if (cqe->user_data == CANCEL_UD)
				CHECK_EQ(cqe->res, 0, "cancel(ptr)");
			else
				CHECK(io_uring_cqe_get_data(cqe) == &tag &&
				      cqe->res == -ECANCELED, "ptr-canceled read");
			io_uring_cqe_seen(&ring, cqe);
		}
	}

	/* all requests with a user_data, then by fd */
	queue_read(p[0], 12, 0);
	queue_read(p[0], 12, 1);
	op_submit(&ring, 2);
	sqe = op_sqe(&ring);
	io_uring_prep_cancel64(sqe, 12, IORING_ASYNC_CANCEL_ALL);
	cancel_and_collect(sqe, 3, 2);

	queue_read(p[0], 1, 0);
	queue_read(p[0], 2, 1);
	queue_read(q[0], 3, 2);
	op_submit(&ring, 3);
	sqe = op_sqe(&ring);
	io_uring_prep_cancel_fd(sqe, p[0], IORING_ASYNC_CANCEL_ALL);
	cancel_and_collect(sqe, 3, 2);
	/* the q read is still pending: cancel by fd (first match only) */
	sqe = op_sqe(&ring);
	io_uring_prep_cancel_fd(sqe, q[0], 0);
	cancel_and_collect(sqe, 2, 0);

	/* ANY: everything in flight */
	queue_read(p[0], 1, 0);
	queue_read(q[0], 2, 1);
	queue_read(p[0], 3, 2);
	op_submit(&ring, 3);
	sqe = op_sqe(&ring);
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	cancel_and_collect(sqe, 4, 3);

	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
