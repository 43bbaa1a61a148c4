/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_R_DISABLED: a ring created disabled refuses submission with
 * -EBADFD until io_uring_enable_rings(); after that the queued SQEs (and
 * new ones) go through. Enabling twice fails with -EBADFD.
 */
#include <liburing.h>
#include "test-util.h"

int main(int argc, char *argv[])
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	(void)argc;
	tu_set_name(argv[0]);

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED;
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret == -EINVAL)
		SKIP("kernel does not support IORING_SETUP_R_DISABLED");
	CHECK_EQ(ret, 0, "queue_init_params(R_DISABLED)");
	CHECK(ring.flags & IORING_SETUP_R_DISABLED, "flag not recorded");

	sqe = io_uring_get_sqe(&ring);
	CHECK(sqe, "get_sqe on disabled ring");
	io_uring_prep_nop(sqe);
	sqe->user_data = 1;
	ret = io_uring_submit(&ring);
	CHECK_EQ(ret, -EBADFD, "submit on disabled ring");

	/* Waiting is refused too. */
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 10000000 };

	ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
	CHECK_EQ(ret, -EBADFD, "wait on disabled ring");

	ret = io_uring_enable_rings(&ring);
	CHECK_EQ(ret, 0, "io_uring_enable_rings");

	/* The NOP queued earlier is still in the SQ and goes now. */
	ret = io_uring_submit(&ring);
	CHECK_EQ(ret, 1, "submit after enable");
	ret = io_uring_wait_cqe(&ring, &cqe);
	CHECK_EQ(ret, 0, "wait_cqe after enable");
	CHECK(cqe->user_data == 1 && cqe->res == 0, "bad cqe: ud %llu res %d",
	      (unsigned long long)cqe->user_data, cqe->res);
	io_uring_cqe_seen(&ring, cqe);

	for (int i = 0; i < 4; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = 10 + i;
	}
	CHECK_EQ(io_uring_submit_and_wait(&ring, 4), 4, "submit_and_wait");
	CHECK_EQ(io_uring_cq_ready(&ring), 4, "cq ready");
	io_uring_cq_advance(&ring, 4);

	ret = io_uring_enable_rings(&ring);
	CHECK_EQ(ret, -EBADFD, "enabling an enabled ring");

	io_uring_queue_exit(&ring);
	tu_pass();
	return T_EXIT_PASS;
}
