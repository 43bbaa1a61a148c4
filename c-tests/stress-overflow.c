/* SPDX-License-Identifier: MIT */
/*
 * A 4-entry CQ under a million NOPs: each round submits 64 of them before
 * reaping any, so 60 wait in the kernel's overflow list every time. Every
 * user_data must come back once, in submission order, and the ring must
 * report the overflow it went through. LIBURING_RS_STRESS=1: 10 million.
 */
#include <liburing.h>
#include "test-util.h"

#define ROUND 64

int main(int argc, char *argv[])
{
	const char *env = getenv("LIBURING_RS_STRESS");
	unsigned long long total = env && *env && strcmp(env, "0") ?
				   10000000ULL : 1000000ULL;
	unsigned long long next = 0, expect = 0;
	struct io_uring_params p;
	struct io_uring ring;
	int overflowed = 0;

	(void)argc;
	tu_set_name(argv[0]);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 4;
	CHECK_EQ(io_uring_queue_init_params(4, &ring, &p), 0, "queue_init");
	CHECK_EQ(ring.cq.ring_entries, 4, "cq entries");
	if (!(p.features & IORING_FEAT_NODROP))
		SKIP("kernel drops overflowed CQEs (no IORING_FEAT_NODROP)");

	while (expect < total) {
		for (unsigned i = 0; i < ROUND; i += 4) {
			for (unsigned j = 0; j < 4; j++) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

				CHECK(sqe, "no sqe");
				io_uring_prep_nop(sqe);
				sqe->user_data = next++;
			}
			CHECK_EQ(io_uring_submit(&ring), 4, "submit");
		}
		overflowed |= io_uring_cq_has_overflow(&ring);
		for (unsigned i = 0; i < ROUND; i++) {
			struct io_uring_cqe *cqe;

			CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait_cqe");
			CHECK(cqe->user_data == expect,
			      "got user_data %llu, want %llu",
			      (unsigned long long)cqe->user_data, expect);
			CHECK_EQ(cqe->res, 0, "nop result");
			io_uring_cqe_seen(&ring, cqe);
			expect++;
		}
	}
	CHECK(overflowed, "the CQ never overflowed");
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "CQEs left over");
	CHECK(!io_uring_cq_has_overflow(&ring), "overflow left over");
	io_uring_queue_exit(&ring);
	printf("%s: %llu NOPs through a 4-entry CQ\n", tu_name, total);
	tu_pass();
	return T_EXIT_PASS;
}
