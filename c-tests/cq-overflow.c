/* SPDX-License-Identifier: MIT */
/*
 * CQ overflow without loss: on a ring with 16 SQ / 32 CQ entries, submit
 * 8 batches of 16 NOPs (4x the CQ size) before reaping anything. With
 * IORING_FEAT_NODROP the kernel keeps the surplus on its overflow list and
 * io_uring_cq_has_overflow() reports it; every completion must eventually
 * be delivered exactly once.
 *
 * Reaping is done with io_uring_peek_batch_cqe and with
 * io_uring_for_each_cqe + io_uring_cq_advance.
 */
#include <liburing.h>
#include "test-util.h"

#define SQ_ENTRIES	16
#define BATCHES		8
#define TOTAL		(SQ_ENTRIES * BATCHES)

static unsigned char seen[TOTAL];
static unsigned nseen;

static void note(const struct io_uring_cqe *cqe)
{
	CHECK(cqe->user_data < TOTAL, "bad user_data %llu",
	      (unsigned long long)cqe->user_data);
	CHECK_EQ(cqe->res, 0, "nop res");
	CHECK(!seen[cqe->user_data], "user_data %llu delivered twice",
	      (unsigned long long)cqe->user_data);
	seen[cqe->user_data] = 1;
	nseen++;
}

static void fill_and_submit(struct io_uring *ring)
{
	for (unsigned b = 0; b < BATCHES; b++) {
		for (unsigned i = 0; i < SQ_ENTRIES; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			CHECK(sqe, "no sqe (batch %u, %u)", b, i);
			io_uring_prep_nop(sqe);
			sqe->user_data = b * SQ_ENTRIES + i;
		}
		int ret = io_uring_submit(ring);

		CHECK_EQ(ret, SQ_ENTRIES, "submit batch");
	}
}

/* Enter the kernel so overflowed CQEs get flushed into the ring. */
static void flush_overflow(struct io_uring *ring)
{
	int ret = io_uring_get_events(ring);

	CHECK(ret >= 0, "io_uring_get_events: %s", strerror(-ret));
}

static void reap_with_peek_batch(struct io_uring *ring)
{
	struct io_uring_cqe *cqes[8];
	unsigned spins = 0;

	while (nseen < TOTAL) {
		unsigned n = io_uring_peek_batch_cqe(ring, cqes, 8);

		if (!n) {
			flush_overflow(ring);
			CHECK(++spins < 1000, "stuck at %u of %u completions",
			      nseen, TOTAL);
			continue;
		}
		CHECK(n <= 8, "peek_batch returned %u > 8", n);
		for (unsigned i = 0; i < n; i++)
			note(cqes[i]);
		io_uring_cq_advance(ring, n);
	}
}

static void reap_with_for_each(struct io_uring *ring)
{
	unsigned spins = 0;

	while (nseen < TOTAL) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		io_uring_for_each_cqe(ring, head, cqe) {
			note(cqe);
			n++;
		}
		if (!n) {
			flush_overflow(ring);
			CHECK(++spins < 1000, "stuck at %u of %u completions",
			      nseen, TOTAL);
			continue;
		}
		io_uring_cq_advance(ring, n);
	}
}

static void run(int use_for_each)
{
	struct io_uring ring;
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	ret = io_uring_queue_init_params(SQ_ENTRIES, &ring, &p);
	CHECK_EQ(ret, 0, "queue_init_params");
	if (!(p.features & IORING_FEAT_NODROP))
		SKIP("kernel lacks IORING_FEAT_NODROP");
	CHECK(ring.features & IORING_FEAT_NODROP, "ring.features lacks NODROP");
	CHECK_EQ(ring.cq.ring_entries, 2 * SQ_ENTRIES, "cq entries");

	memset(seen, 0, sizeof(seen));
	nseen = 0;
	fill_and_submit(&ring);

	CHECK_EQ(io_uring_cq_ready(&ring), ring.cq.ring_entries,
		 "cq should be full");
	CHECK(io_uring_cq_has_overflow(&ring),
	      "io_uring_cq_has_overflow false with %u CQEs pending",
	      TOTAL - ring.cq.ring_entries);
	/* Nothing is dropped, so the kernel's overflow counter stays 0. */
	CHECK_EQ(*ring.cq.koverflow, 0, "cq overflow (dropped) counter");

	if (use_for_each)
		reap_with_for_each(&ring);
	else
		reap_with_peek_batch(&ring);

	CHECK_EQ(nseen, TOTAL, "completions delivered");
	for (unsigned i = 0; i < TOTAL; i++)
		CHECK(seen[i], "completion %u lost", i);
	CHECK(!io_uring_cq_has_overflow(&ring), "overflow flag still set");
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "cq ready at end");

	/* The ring is still fully usable after the overflow. */
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;

	io_uring_prep_nop(sqe);
	sqe->user_data = 0xabc;
	CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "submit_and_wait");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek");
	CHECK(cqe->user_data == 0xabc && cqe->res == 0, "bad final cqe");
	io_uring_cqe_seen(&ring, cqe);

	io_uring_queue_exit(&ring);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);

	run(0);
	run(1);
	tu_pass();
	return T_EXIT_PASS;
}
