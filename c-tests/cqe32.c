/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_CQE32: 32-byte CQEs. io_uring_cqe_shift() is 1 (0 on a
 * normal ring), NOPs complete, and walking with io_uring_for_each_cqe,
 * io_uring_peek_cqe and io_uring_peek_batch_cqe steps over whole 32-byte
 * entries, also across the CQ wraparound (the head runs many times round).
 */
#include <liburing.h>
#include "test-util.h"

#define SQ	8

static void walk_rounds(struct io_uring *ring, int rounds)
{
	unsigned long long next = 0;

	for (int r = 0; r < rounds; r++) {
		/* Odd batch sizes so the head lands all over the ring. */
		unsigned n = 1 + (unsigned)(r % SQ);
		struct io_uring_cqe *cqe;
		unsigned head, count = 0;

		for (unsigned i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			CHECK(sqe, "no sqe");
			io_uring_prep_nop(sqe);
			sqe->user_data = next + i;
		}
		CHECK_EQ(io_uring_submit_and_wait(ring, n), n, "submit_and_wait");
		CHECK_EQ(io_uring_cq_ready(ring), n, "cq ready");

		io_uring_for_each_cqe(ring, head, cqe) {
			unsigned idx = head & ring->cq.ring_mask;

			CHECK(cqe == &ring->cq.cqes[idx << io_uring_cqe_shift(ring)],
			      "for_each_cqe: entry at head %u is not slot %u",
			      head, idx);
			CHECK(cqe->user_data == next + count,
			      "for_each_cqe: got user_data %llu want %llu",
			      (unsigned long long)cqe->user_data, next + count);
			CHECK_EQ(cqe->res, 0, "nop res");
			/* The extra 16 bytes of a NOP CQE32 are zero. */
			CHECK(cqe->big_cqe[0] == 0 && cqe->big_cqe[1] == 0,
			      "big_cqe not zero");
			count++;
		}
		CHECK_EQ(count, n, "for_each_cqe count");
		io_uring_cq_advance(ring, count);
		next += n;
	}
}

int main(int argc, char *argv[])
{
	struct io_uring_params p;
	struct io_uring ring, plain;
	struct io_uring_cqe *cqes[SQ], *cqe;
	int ret;

	(void)argc;
	tu_set_name(argv[0]);

	ret = io_uring_queue_init(4, &plain, 0);
	CHECK_EQ(ret, 0, "queue_init plain");
	CHECK_EQ(io_uring_cqe_shift(&plain), 0, "cqe_shift on a normal ring");
	io_uring_queue_exit(&plain);

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQE32;
	ret = io_uring_queue_init_params(SQ, &ring, &p);
	if (ret == -EINVAL)
		SKIP("kernel does not support IORING_SETUP_CQE32");
	CHECK_EQ(ret, 0, "queue_init_params(CQE32)");
	CHECK(ring.flags & IORING_SETUP_CQE32, "CQE32 not in ring.flags");
	CHECK_EQ(io_uring_cqe_shift(&ring), 1, "cqe_shift on a CQE32 ring");
	CHECK_EQ(io_uring_cqe_shift_from_flags(IORING_SETUP_CQE32), 1,
		 "cqe_shift_from_flags(CQE32)");
	CHECK_EQ(ring.cq.ring_entries, 2 * SQ, "cq entries");

	/* 100 rounds of 1..8 CQEs on a 16-entry CQ: wraps ~28 times. */
	walk_rounds(&ring, 100);

	/* peek_batch across the wrap: head is now at an odd position. */
	for (int r = 0; r < 10; r++) {
		for (unsigned i = 0; i < SQ; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_nop(sqe);
			sqe->user_data = 5000 + i;
		}
		CHECK_EQ(io_uring_submit_and_wait(&ring, SQ), SQ, "submit");
		unsigned n = io_uring_peek_batch_cqe(&ring, cqes, SQ);

		CHECK_EQ(n, SQ, "peek_batch count");
		for (unsigned i = 0; i < n; i++) {
			CHECK(cqes[i]->user_data == 5000 + i,
			      "peek_batch[%u] user_data %llu", i,
			      (unsigned long long)cqes[i]->user_data);
			CHECK(cqes[i]->res == 0, "peek_batch res");
		}
		io_uring_cq_advance(&ring, n);
	}

	/* peek_cqe / cqe_seen one at a time. */
	for (unsigned i = 0; i < 3; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_nop(sqe);
		sqe->user_data = 9000 + i;
	}
	CHECK_EQ(io_uring_submit_and_wait(&ring, 3), 3, "submit");
	for (unsigned i = 0; i < 3; i++) {
		CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek_cqe");
		CHECK(cqe->user_data == 9000 + i, "peek_cqe user_data %llu",
		      (unsigned long long)cqe->user_data);
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), -EAGAIN, "peek on empty CQ");

	io_uring_queue_exit(&ring);
	tu_pass();
	return T_EXIT_PASS;
}
