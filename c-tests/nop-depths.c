/* SPDX-License-Identifier: MIT */
/*
 * NOP round trips at every power-of-two depth from 1 to 4096. Each round
 * fills the whole SQ with NOPs carrying distinct user_data, submits them in
 * one go, reaps every completion and checks that each user_data came back
 * exactly once with res == 0. Several rounds per depth make the SQ and CQ
 * indices wrap around the ring.
 */
#include <liburing.h>
#include "test-util.h"

#define ROUNDS 5

static void run_depth(unsigned depth, unsigned char *seen)
{
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(depth, &ring, 0);
	if (ret == -ENOMEM)
		SKIP("queue_init(%u): out of memory", depth);
	CHECK_EQ(ret, 0, "io_uring_queue_init");
	CHECK(ring.sq.ring_entries == depth,
	      "depth %u: sq ring has %u entries", depth, ring.sq.ring_entries);
	CHECK(ring.cq.ring_entries >= depth,
	      "depth %u: cq ring has %u entries", depth, ring.cq.ring_entries);

	for (unsigned round = 0; round < ROUNDS; round++) {
		unsigned long long base = ((unsigned long long)depth << 32) |
					  ((unsigned long long)round << 20);

		memset(seen, 0, depth);
		CHECK_EQ(io_uring_sq_space_left(&ring), depth, "sq space left");
		for (unsigned i = 0; i < depth; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			CHECK(sqe, "depth %u round %u: no sqe for slot %u",
			      depth, round, i);
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, base + i);
		}
		CHECK(io_uring_get_sqe(&ring) == NULL,
		      "depth %u: got an sqe from a full SQ", depth);
		CHECK_EQ(io_uring_sq_ready(&ring), depth, "sq ready");

		ret = io_uring_submit(&ring);
		CHECK_EQ(ret, depth, "io_uring_submit");

		for (unsigned i = 0; i < depth; i++) {
			struct io_uring_cqe *cqe;
			unsigned long long ud, idx;

			ret = io_uring_wait_cqe(&ring, &cqe);
			CHECK_EQ(ret, 0, "io_uring_wait_cqe");
			ud = io_uring_cqe_get_data64(cqe);
			CHECK_EQ(cqe->res, 0, "nop res");
			CHECK((ud & ~0xfffffULL) == base,
			      "depth %u round %u: foreign user_data %#llx",
			      depth, round, ud);
			idx = ud & 0xfffff;
			CHECK(idx < depth, "user_data index %llu out of range",
			      idx);
			CHECK(!seen[idx], "depth %u round %u: user_data %llu seen twice",
			      depth, round, idx);
			seen[idx] = 1;
			io_uring_cqe_seen(&ring, cqe);
		}
		for (unsigned i = 0; i < depth; i++)
			CHECK(seen[i], "depth %u round %u: user_data %u missing",
			      depth, round, i);
		CHECK_EQ(io_uring_cq_ready(&ring), 0, "cq ready after reap");
	}
	io_uring_queue_exit(&ring);
}

int main(int argc, char *argv[])
{
	unsigned char *seen = malloc(4096);

	(void)argc;
	tu_set_name(argv[0]);
	CHECK(seen, "malloc");
	for (unsigned depth = 1; depth <= 4096; depth <<= 1)
		run_depth(depth, seen);
	free(seen);
	tu_pass();
	return T_EXIT_PASS;
}
