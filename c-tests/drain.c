/* SPDX-License-Identifier: MIT */
/*
 * IOSQE_IO_DRAIN: a drained request starts only once everything submitted
 * before it has completed, and then it does start, whatever ended the
 * requests before it.
 *  - A drained NOP behind a NOP sent to a worker (IOSQE_ASYNC) completes.
 *    (Their CQEs may come in either order: 6.1 posts the worker's later.)
 *  - The same with a request after the drain that fails at submission (an
 *    unknown SQE flag): its failure must not leave the drain waiting. The
 *    userspace engine once missed that wake-up and hung on the first try.
 * 2,000 rounds each (20,000 with LIBURING_RS_STRESS=1).
 */
#include <liburing.h>
#include "test-util.h"

static void round_trip(struct io_uring *ring, bool bad_after)
{
	unsigned want = bad_after ? 3 : 2;
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_IO_DRAIN;
	sqe->user_data = 2;
	if (bad_after) {
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_nop(sqe);
		sqe->flags = 0x80;
		sqe->user_data = 3;
	}
	CHECK_EQ(io_uring_submit(ring), want, "submit");
	for (unsigned k = 0; k < want; k++) {
		struct __kernel_timespec ts = { .tv_sec = 5 };
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

		if (ret == -ETIME)
			FAIL("drain never started: %u of %u CQEs after 5 s", k, want);
		CHECK_EQ(ret, 0, "wait");
		switch (cqe->user_data) {
		case 1:
			CHECK_EQ(cqe->res, 0, "worker NOP");
			break;
		case 2:
			CHECK_EQ(cqe->res, 0, "drained NOP");
			break;
		case 3:
			CHECK_EQ(cqe->res, -EINVAL, "unknown SQE flag");
			break;
		default:
			FAIL("unexpected user_data %llu", (unsigned long long)cqe->user_data);
		}
		io_uring_cqe_seen(ring, cqe);
	}
}

int main(int argc, char *argv[])
{
	const char *env = getenv("LIBURING_RS_STRESS");
	unsigned rounds = env && *env && strcmp(env, "0") ? 20000 : 2000;
	struct io_uring ring;

	(void)argc;
	tu_set_name(argv[0]);
	CHECK_EQ(io_uring_queue_init(16, &ring, 0), 0, "queue_init");
	for (unsigned i = 0; i < rounds; i++)
		round_trip(&ring, false);
	for (unsigned i = 0; i < rounds; i++)
		round_trip(&ring, true);
	io_uring_queue_exit(&ring);
	tu_pass();
	return T_EXIT_PASS;
}
