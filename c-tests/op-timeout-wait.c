/* SPDX-License-Identifier: MIT */
/*
 * Timeouts:
 *  - io_uring_wait_cqe_timeout with nothing pending returns -ETIME after
 *    roughly the requested time (never clearly earlier);
 *  - io_uring_submit_and_wait_timeout submits and either returns a CQE
 *    (when enough complete) or -ETIME;
 *  - io_uring_wait_cqes with a timeout, both satisfied and timing out;
 *  - IORING_OP_TIMEOUT (prep_timeout) with count 0 fires with -ETIME;
 *  - IORING_OP_TIMEOUT with count N completes with 0 once N other CQEs
 *    were posted, well before its time;
 *  - io_uring_wait_cqes_min_timeout / io_uring_submit_and_wait_min_timeout.
 */
#include "op-util.h"

#define MSEC 1000000LL

static struct __kernel_timespec ts_ms(long long ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * MSEC,
	};
	return ts;
}

static void check_elapsed(long long start, long long want_ms, const char *what)
{
	long long el = tu_now_ns() - start;

	/* Allow 1 ms of slack below (clock granularity), a lot above. */
	CHECK(el >= (want_ms - 1) * MSEC, "%s returned after %lld us, asked %lld ms",
	      what, el / 1000, want_ms);
	CHECK(el < (want_ms + 2000) * MSEC, "%s took %lld ms, asked %lld ms", what,
	      el / MSEC, want_ms);
}

static void reap_all(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(ring, &cqe) == 0)
		io_uring_cqe_seen(ring, cqe);
}

/* The wait returned 'cqe', one of the n nops queued from user_data 'ud',
 * and all n are in the CQ; reaps them. */
static void check_nops_done(struct io_uring *ring, struct io_uring_cqe *cqe,
			    unsigned n, unsigned long long ud, const char *what)
{
	CHECK(cqe && cqe->user_data >= ud && cqe->user_data < ud + n,
	      "%s: no or wrong cqe returned", what);
	CHECK_EQ(io_uring_cq_ready(ring), n, what);
	reap_all(ring);
}

static void test_wait_cqe_timeout(struct io_uring *ring)
{
	struct __kernel_timespec ts = ts_ms(50);
	struct io_uring_cqe *cqe = NULL;
	long long start = tu_now_ns();
	int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

	CHECK_EQ(ret, -ETIME, "wait_cqe_timeout with nothing pending");
	check_elapsed(start, 50, "wait_cqe_timeout");

	/* With a completion available it returns it at once. */
	op_nops(ring, 1, 7);
	CHECK_EQ(io_uring_submit(ring), 1, "submit");
	ts = ts_ms(5000);
	start = tu_now_ns();
	ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
	CHECK_EQ(ret, 0, "wait_cqe_timeout with a nop");
	CHECK(tu_now_ns() - start < 1000 * MSEC, "waited too long for a nop");
	CHECK(cqe->user_data == 7 && cqe->res == 0, "bad nop cqe");
	io_uring_cqe_seen(ring, cqe);
}

static void test_submit_and_wait_timeout(struct io_uring *ring)
{
	struct __kernel_timespec ts = ts_ms(5000);
	struct io_uring_cqe *cqe = NULL;
	long long start;
	int ret;

	op_nops(ring, 4, 100);
	ret = io_uring_submit_and_wait_timeout(ring, &cqe, 4, &ts, NULL);
	CHECK(ret >= 0, "submit_and_wait_timeout: %s", strerror(-ret));
	CHECK_EQ(ret, 4, "submit_and_wait_timeout submitted");
	CHECK(cqe, "no cqe returned");
	CHECK_EQ(io_uring_cq_ready(ring), 4, "cqes ready");
	reap_all(ring);

	/*
	 * Ask for more completions than can come. The kernel waits out the
	 * timeout; since requests were submitted, the call reports the
	 * submit count and hands back one of the CQEs that did arrive.
	 */
	op_nops(ring, 2, 200);
	ts = ts_ms(40);
	start = tu_now_ns();
	cqe = NULL;
	ret = io_uring_submit_and_wait_timeout(ring, &cqe, 3, &ts, NULL);
	CHECK_EQ(ret, 2, "submit_and_wait_timeout waiting for 3 of 2");
	check_elapsed(start, 40, "submit_and_wait_timeout");
	CHECK_EQ(io_uring_sq_ready(ring), 0, "sq not flushed");
	check_nops_done(ring, cqe, 2, 200, "submit_and_wait_timeout, 3 of 2");

	/* Nothing to submit and nothing completes: -ETIME. */
	ts = ts_ms(40);
	start = tu_now_ns();
	ret = io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL);
	CHECK_EQ(ret, -ETIME, "submit_and_wait_timeout with no work");
	check_elapsed(start, 40, "submit_and_wait_timeout (no work)");
}

static void test_wait_cqes(struct io_uring *ring)
{
	struct __kernel_timespec ts = ts_ms(5000);
	struct io_uring_cqe *cqe = NULL;
	long long start;
	int ret;

	op_nops(ring, 3, 300);
	CHECK_EQ(io_uring_submit(ring), 3, "submit");
	ret = io_uring_wait_cqes(ring, &cqe, 3, &ts, NULL);
	CHECK_EQ(ret, 0, "wait_cqes for 3 completed nops");
	check_nops_done(ring, cqe, 3, 300, "wait_cqes");

	ts = ts_ms(30);
	start = tu_now_ns();
	ret = io_uring_wait_cqes(ring, &cqe, 2, &ts, NULL);
	CHECK_EQ(ret, -ETIME, "wait_cqes with nothing pending");
	check_elapsed(start, 30, "wait_cqes");
}

static void test_op_timeout(struct io_uring *ring)
{
	struct __kernel_timespec ts = ts_ms(30);
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	long long start;
	int ret;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 0x1000;
	start = tu_now_ns();
	CHECK_EQ(io_uring_submit(ring), 1, "submit timeout");
	ret = io_uring_wait_cqe(ring, &cqe);
	CHECK_EQ(ret, 0, "wait_cqe for timeout");
	CHECK(cqe->user_data == 0x1000, "wrong user_data %llu",
	      (unsigned long long)cqe->user_data);
	CHECK_EQ(cqe->res, -ETIME, "pure timeout res");
	io_uring_cqe_seen(ring, cqe);
	check_elapsed(start, 30, "IORING_OP_TIMEOUT");

	/* count = 3: fires (res 0) as soon as 3 other CQEs are posted. */
	struct __kernel_timespec lts = ts_ms(10000);

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_timeout(sqe, &lts, 3, 0);
	sqe->user_data = 0x2000;
	CHECK_EQ(io_uring_submit(ring), 1, "submit counted timeout");
	start = tu_now_ns();
	op_nops(ring, 3, 0x3000);
	CHECK_EQ(io_uring_submit(ring), 3, "submit nops");

	int got_timeout = 0, got_nops = 0;

	for (int i = 0; i < 4; i++) {
		struct __kernel_timespec wts = ts_ms(3000);

		ret = io_uring_wait_cqe_timeout(ring, &cqe, &wts);
		CHECK_EQ(ret, 0, "counted timeout did not complete");
		if (cqe->user_data == 0x2000) {
			CHECK_EQ(cqe->res, 0, "counted timeout res");
			got_timeout++;
		} else {
			CHECK(cqe->user_data >= 0x3000 && cqe->user_data < 0x3003,
			      "unexpected user_data");
			CHECK_EQ(cqe->res, 0, "nop res");
			got_nops++;
		}
		io_uring_cqe_seen(ring, cqe);
	}
	CHECK(got_timeout == 1 && got_nops == 3, "timeout %d nops %d",
	      got_timeout, got_nops);
	CHECK(tu_now_ns() - start < 2000 * MSEC,
	      "counted timeout waited for its full time");
}

static void test_min_timeout(struct io_uring *ring)
{
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe = NULL;
	long long start;
	int ret;

	if (!(ring->features & IORING_FEAT_MIN_TIMEOUT)) {
		/* liburing then refuses these calls with -EINVAL. */
		ts = ts_ms(10);
		ret = io_uring_wait_cqes_min_timeout(ring, &cqe, 1, &ts, 1000,
						     NULL);
		CHECK_EQ(ret, -EINVAL, "min_timeout without kernel support");
		tu_lacks("IORING_FEAT_MIN_TIMEOUT");
		return;
	}

	/* Nothing pending: overall timeout expires with -ETIME. */
	ts = ts_ms(60);
	start = tu_now_ns();
	ret = io_uring_wait_cqes_min_timeout(ring, &cqe, 1, &ts, 10000, NULL);
	CHECK_EQ(ret, -ETIME, "wait_cqes_min_timeout with nothing pending");
	check_elapsed(start, 60, "wait_cqes_min_timeout");

	/* A timeout shorter than the min wait (20 ms against 50 ms) only
	 * counts once the min wait is over: -ETIME after 50 ms. */
	ts = ts_ms(20);
	start = tu_now_ns();
	ret = io_uring_wait_cqes_min_timeout(ring, &cqe, 1, &ts, 50000, NULL);
	CHECK_EQ(ret, -ETIME, "timeout shorter than the min wait");
	check_elapsed(start, 50, "timeout shorter than the min wait");

	/*
	 * Wait for 8 with only 2 coming: once the min wait (20 ms) passed and
	 * at least one CQE is there, the wait ends long before the 3 s total.
	 */
	op_nops(ring, 2, 0x4000);
	ts = ts_ms(3000);
	start = tu_now_ns();
	ret = io_uring_submit_and_wait_min_timeout(ring, &cqe, 8, &ts, 20000,
						   NULL);
	CHECK(ret >= 0, "submit_and_wait_min_timeout: %s", strerror(-ret));
	CHECK_EQ(ret, 2, "submit_and_wait_min_timeout submitted");
	CHECK(tu_now_ns() - start < 1500 * MSEC,
	      "min timeout did not cut the wait short (%lld ms)",
	      (tu_now_ns() - start) / MSEC);
	check_nops_done(ring, cqe, 2, 0x4000, "submit_and_wait_min_timeout");

	/* Enough completions: returns at once with a CQE. */
	op_nops(ring, 2, 0x5000);
	ts = ts_ms(3000);
	ret = io_uring_submit_and_wait_min_timeout(ring, &cqe, 2, &ts, 1000,
						   NULL);
	CHECK_EQ(ret, 2, "submit_and_wait_min_timeout (satisfied)");
	CHECK_EQ(io_uring_cq_ready(ring), 2, "cq ready");
	reap_all(ring);

	op_nops(ring, 1, 0x6000);
	CHECK_EQ(io_uring_submit(ring), 1, "submit");
	ts = ts_ms(3000);
	ret = io_uring_wait_cqes_min_timeout(ring, &cqe, 1, &ts, 1000, NULL);
	CHECK_EQ(ret, 0, "wait_cqes_min_timeout (satisfied)");
	CHECK(cqe->user_data == 0x6000, "wrong cqe");
	io_uring_cqe_seen(ring, cqe);
}

int main(int argc, char *argv[])
{
	struct io_uring ring;
	int ret;

	(void)argc;
	tu_set_name(argv[0]);

	ret = io_uring_queue_init(16, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");
	CHECK(ring.features & IORING_FEAT_EXT_ARG,
	      "6.x kernel should report IORING_FEAT_EXT_ARG");

	test_wait_cqe_timeout(&ring);
	test_submit_and_wait_timeout(&ring);
	test_wait_cqes(&ring);
	test_op_timeout(&ring);
	test_min_timeout(&ring);

	io_uring_queue_exit(&ring);
	return tu_done();
}
