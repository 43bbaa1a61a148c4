/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_CQE_MIXED: NOPs posting normal 16-byte CQEs mixed with
 * NOPs asking for a 32-byte CQE (IORING_NOP_CQE32; the kernel copies
 * sqe->off and sqe->addr into big_cqe[0] and big_cqe[1] and sets
 * IORING_CQE_F_32), enough to wrap a small CQ ring many times.  The CQEs
 * are consumed four ways: io_uring_for_each_cqe, io_uring_cqe_iter_*,
 * io_uring_peek_batch_cqe and io_uring_wait_cqe/io_uring_cqe_seen.
 * Every user_data must arrive exactly once and in order, io_uring_cqe_nr
 * is 2 exactly for the big ones, and the kernel's padding entries
 * (IORING_CQE_F_SKIP, posted when a big CQE would straddle the ring end)
 * are never handed out by peek/wait/peek_batch; the raw iterator shows
 * them (as liburing's does) only on the ring's last slot.
 * Also a CQE32 ring walked with the iterator across the wraparound, and a
 * full mixed CQ holding big CQEs back in order.
 */
#include "op-util.h"

#define CQ_ENTRIES	16
#define BATCH_MAX	7	/* 7 big = 14 slots + 1 pad <= 16 */
#define TOTAL		3000

enum mode { M_FOR_EACH, M_ITER, M_PEEK_BATCH, M_WAIT, M_NR };
static const char *mode_name[] = { "for_each_cqe", "cqe_iter",
				   "peek_batch_cqe", "wait_cqe" };

static struct io_uring ring;
static unsigned char is_big[TOTAL + 1];
static __u64 next_expected;
static unsigned pads_seen_iter, pads_hidden, bigs_seen;

static __u64 extra0(__u64 ud) { return ud * 0x9E3779B97F4A7C15ULL; }
static __u64 extra1(__u64 ud) { return ~ud ^ 0xabcdef0011223344ULL; }

/* Checks one real CQE (never a padding one) and consumes its number. */
static void check_cqe(const struct io_uring_cqe *cqe, int m)
{
	__u64 ud = cqe->user_data;

	CHECK(!(cqe->flags & IORING_CQE_F_SKIP),
	      "%s: padding CQE handed out (ud %llu flags %#x)",
	      mode_name[m], (unsigned long long)ud, cqe->flags);
	CHECK(ud == next_expected,
	      "%s: got user_data %llu, want %llu", mode_name[m],
	      (unsigned long long)ud, (unsigned long long)next_expected);
	CHECK_EQ(cqe->res, 0, "nop res");
	if (is_big[ud]) {
		CHECK(cqe->flags & IORING_CQE_F_32,
		      "%s: ud %llu should be a 32-byte CQE (flags %#x)",
		      mode_name[m], (unsigned long long)ud, cqe->flags);
		CHECK_EQ(io_uring_cqe_nr(cqe), 2, "cqe_nr of a big CQE");
		CHECK(cqe->big_cqe[0] == extra0(ud) &&
		      cqe->big_cqe[1] == extra1(ud),
		      "%s: ud %llu big_cqe %#llx %#llx", mode_name[m],
		      (unsigned long long)ud,
		      (unsigned long long)cqe->big_cqe[0],
		      (unsigned long long)cqe->big_cqe[1]);
		bigs_seen++;
	} else {
		CHECK(!(cqe->flags & IORING_CQE_F_32),
		      "%s: ud %llu unexpectedly big", mode_name[m],
		      (unsigned long long)ud);
		CHECK_EQ(io_uring_cqe_nr(cqe), 1, "cqe_nr of a small CQE");
	}
	next_expected++;
}

/* Raw-iterator entry: returns slots used; padding is checked, not counted. */
static unsigned iter_entry(struct io_uring_cqe *cqe, unsigned pos, int m,
			   unsigned *got)
{
	CHECK(cqe == &ring.cq.cqes[pos & ring.cq.ring_mask],
	      "%s: entry for position %u is not slot %u", mode_name[m], pos,
	      pos & ring.cq.ring_mask);
	if (cqe->flags & IORING_CQE_F_SKIP) {
		CHECK((pos & ring.cq.ring_mask) == ring.cq.ring_mask,
		      "padding entry at slot %u, not the last one",
		      pos & ring.cq.ring_mask);
		CHECK(!(cqe->flags & IORING_CQE_F_32),
		      "padding entry flagged F_32");
		CHECK(cqe->user_data == 0, "padding entry has user_data %llu",
		      (unsigned long long)cqe->user_data);
		pads_seen_iter++;
		return 1;
	}
	check_cqe(cqe, m);
	(*got)++;
	return io_uring_cqe_nr(cqe);
}

static void consume(int m, unsigned n)
{
	unsigned got = 0;

	while (got < n) {
		struct io_uring_cqe *cqe;
		unsigned slots = 0, head, pos;

		switch (m) {
		case M_FOR_EACH:
			pos = *ring.cq.khead;
			io_uring_for_each_cqe(&ring, head, cqe) {
				CHECK_EQ(head, pos + slots, "for_each head");
				slots += iter_entry(cqe, pos + slots, m, &got);
			}
			io_uring_cq_advance(&ring, slots);
			break;
		case M_ITER: {
			struct io_uring_cqe_iter it = io_uring_cqe_iter_init(&ring);

			pos = it.head;
			CHECK_EQ(it.head, *ring.cq.khead, "iter head");
			CHECK_EQ(it.tail, *ring.cq.ktail, "iter tail");
			while (io_uring_cqe_iter_next(&it, &cqe)) {
				slots += iter_entry(cqe, pos + slots, m, &got);
				CHECK_EQ(it.head, pos + slots, "iter position");
			}
			CHECK_EQ(slots, it.tail - pos, "iterator slots");
			io_uring_cq_advance(&ring, slots);
			break;
		}
		case M_PEEK_BATCH: {
			struct io_uring_cqe *cqes[2 * BATCH_MAX + 2];
			unsigned before = *ring.cq.khead;
			unsigned nr = io_uring_peek_batch_cqe(&ring, cqes,
					(unsigned)(sizeof(cqes) / sizeof(cqes[0])));

			/* a padding entry at the head is consumed, not returned */
			if (nr && cqes[0] != &ring.cq.cqes[before & ring.cq.ring_mask])
				pads_hidden++;

			for (unsigned i = 0; i < nr; i++) {
				check_cqe(cqes[i], m);
				slots += io_uring_cqe_nr(cqes[i]);
			}
			got += nr;
			io_uring_cq_advance(&ring, slots);
			break;
		}
		case M_WAIT: {
			unsigned before = *ring.cq.khead;
			int ret = io_uring_wait_cqe(&ring, &cqe);

			CHECK_EQ(ret, 0, "wait_cqe");
			if (cqe != &ring.cq.cqes[before & ring.cq.ring_mask]) {
				CHECK((before & ring.cq.ring_mask) == ring.cq.ring_mask &&
				      cqe == &ring.cq.cqes[0],
				      "wait_cqe stepped from slot %u to entry %ld",
				      before & ring.cq.ring_mask,
				      (long)(cqe - ring.cq.cqes));
				pads_hidden++;
			}
			check_cqe(cqe, m);
			got++;
			io_uring_cqe_seen(&ring, cqe);
			continue;
		}
		}
		if (got < n && m != M_WAIT) {
			/* nothing more visible yet: block until there is */
			int ret = io_uring_wait_cqe(&ring, &cqe);

			CHECK_EQ(ret, 0, "wait_cqe (refill)");
		}
	}
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "CQ not empty after a batch");
}

static int probe_nop_cqe32(void)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);
	struct op_cqe c;

	io_uring_prep_nop(sqe);
	sqe->nop_flags = IORING_NOP_CQE32;
	sqe->off = 1;
	sqe->addr = 2;
	io_uring_sqe_set_data64(sqe, 0);
	op_submit(&ring, 1);
	c = op_wait(&ring);
	return c.res;
}

static void mixed(void)
{
	struct io_uring_params p;
	uint64_t rng = 42;
	__u64 ud = 1;
	int ret, batches = 0;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQE_MIXED | IORING_SETUP_CQSIZE;
	p.cq_entries = CQ_ENTRIES;
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret == -EINVAL)
		SKIP("IORING_SETUP_CQE_MIXED not supported by this kernel");
	CHECK_EQ(ret, 0, "queue_init_params(CQE_MIXED)");
	CHECK_EQ(ring.cq.ring_entries, CQ_ENTRIES, "cq entries");
	CHECK_EQ(io_uring_cqe_shift(&ring), 0, "cqe shift of a mixed ring");
	ret = probe_nop_cqe32();
	if (ret == -EINVAL)
		SKIP("kernel rejects IORING_NOP_CQE32 on a CQE_MIXED ring");
	CHECK_EQ(ret, 0, "probe NOP with IORING_NOP_CQE32");
	next_expected = 1;

	while (ud <= TOTAL) {
		int m = batches % M_NR;
		unsigned n = 1 + (unsigned)(tu_rand_next(&rng) % BATCH_MAX);

		if (ud + n - 1 > TOTAL)
			n = (unsigned)(TOTAL - ud + 1);
		for (unsigned i = 0; i < n; i++, ud++) {
			struct io_uring_sqe *sqe = op_sqe(&ring);

			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, ud);
			/* mostly big, so they keep hitting the ring's end */
			is_big[ud] = (tu_rand_next(&rng) % 3) != 0;
			if (is_big[ud]) {
				sqe->nop_flags = IORING_NOP_CQE32;
				sqe->off = extra0(ud);
				sqe->addr = extra1(ud);
			}
		}
		op_submit(&ring, (int)n);
		consume(m, n);
		batches++;
	}
	CHECK_EQ(next_expected, TOTAL + 1, "CQEs seen");
	CHECK(bigs_seen > TOTAL / 2, "only %u big CQEs", bigs_seen);
	/* ring wrapped ~TOTAL*1.7/16 times; padding must have happened */
	CHECK(pads_seen_iter > 0, "iterator never met a padding entry");
	CHECK(pads_hidden > 0, "wait/peek_batch never stepped over padding");
	printf("note: %u big CQEs, %u padding entries seen by iterators, "
	       "%u stepped over by wait/peek_batch\n", bigs_seen,
	       pads_seen_iter, pads_hidden);
	CHECK(*ring.cq.khead > 10 * CQ_ENTRIES, "CQ head only at %u",
	      *ring.cq.khead);
	io_uring_queue_exit(&ring);
}

/* CQE32 ring: every entry is 32 bytes, the iterator steps over whole ones. */
static void cqe32_ring(void)
{
	struct io_uring r;
	int ret, use_flag;
	__u64 ud = 1, want = 1;

	ret = io_uring_queue_init(8, &r, IORING_SETUP_CQE32);
	CHECK_EQ(ret, 0, "queue_init(CQE32)");
	CHECK_EQ(io_uring_cqe_shift(&r), 1, "cqe shift of a CQE32 ring");
	/* Does NOP take IORING_NOP_CQE32 here?  Otherwise extras are 0. */
	{
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r);
		struct io_uring_cqe *cqe;

		io_uring_prep_nop(sqe);
		sqe->nop_flags = IORING_NOP_CQE32;
		sqe->off = 5;
		sqe->addr = 6;
		CHECK_EQ(io_uring_submit(&r), 1, "submit");
		CHECK_EQ(io_uring_wait_cqe(&r, &cqe), 0, "wait");
		use_flag = cqe->res == 0;
		if (use_flag)
			CHECK(cqe->big_cqe[0] == 5 && cqe->big_cqe[1] == 6,
			      "CQE32 ring: NOP extras %llu %llu",
			      (unsigned long long)cqe->big_cqe[0],
			      (unsigned long long)cqe->big_cqe[1]);
		io_uring_cqe_seen(&r, cqe);
	}
	for (int round = 0; round < 300; round++) {
		unsigned n = 1 + (unsigned)(round % 7), slots = 0;
		struct io_uring_cqe_iter it;
		struct io_uring_cqe *cqe;

		for (unsigned i = 0; i < n; i++, ud++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&r);

			CHECK(sqe != NULL, "get_sqe");
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, ud);
			if (use_flag) {
				sqe->nop_flags = IORING_NOP_CQE32;
				sqe->off = extra0(ud);
				sqe->addr = extra1(ud);
			}
		}
		CHECK_EQ(io_uring_submit_and_wait(&r, n), n, "submit_and_wait");
		it = io_uring_cqe_iter_init(&r);
		CHECK_EQ(it.shift, 1, "iterator shift");
		CHECK_EQ(it.tail - it.head, n, "CQE32 ring: ready entries");
		while (io_uring_cqe_iter_next(&it, &cqe)) {
			unsigned pos = *r.cq.khead + slots;

			CHECK(cqe == &r.cq.cqes[(pos & r.cq.ring_mask) << 1],
			      "CQE32 entry address at position %u", pos);
			CHECK(cqe->user_data == want, "CQE32: ud %llu want %llu",
			      (unsigned long long)cqe->user_data,
			      (unsigned long long)want);
			CHECK_EQ(cqe->res, 0, "CQE32 nop res");
			CHECK(!(cqe->flags & (IORING_CQE_F_SKIP | IORING_CQE_F_32)),
			      "CQE32 ring entry flags %#x", cqe->flags);
			CHECK_EQ(io_uring_cqe_nr(cqe), 1, "cqe_nr on a CQE32 ring");
			if (use_flag)
				CHECK(cqe->big_cqe[0] == extra0(want) &&
				      cqe->big_cqe[1] == extra1(want),
				      "CQE32 extras for ud %llu",
				      (unsigned long long)want);
			else
				CHECK(cqe->big_cqe[0] == 0 && cqe->big_cqe[1] == 0,
				      "CQE32 NOP extras not zero");
			want++;
			slots++;
		}
		CHECK_EQ(slots, n, "CQE32 entries walked");
		io_uring_cq_advance(&r, slots);
	}
	CHECK(*r.cq.khead > 20 * r.cq.ring_entries, "CQE32 head only at %u",
	      *r.cq.khead);
	io_uring_queue_exit(&r);
}

/*
 * A full mixed CQ: a 32-byte CQE that does not fit waits in the overflow
 * list (IORING_SQ_CQ_OVERFLOW) and lands, in order, once there is room; a
 * padding entry fills the last slot when a big one would straddle the end.
 */
static void mixed_overflow(void)
{
	struct io_uring r;
	struct io_uring_params p;
	struct io_uring_cqe *cqe;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQE_MIXED;
	ret = io_uring_queue_init_params(4, &r, &p);
	if (ret == -EINVAL)
		return;
	CHECK_EQ(ret, 0, "queue_init_params(CQE_MIXED)");
	CHECK_EQ(r.cq.ring_entries, 8, "cq entries");
	/* move the CQ to slot 3 */
	for (int i = 0; i < 3; i++)
		io_uring_prep_nop(op_sqe(&r));
	op_submit(&r, 3);
	io_uring_cq_advance(&r, 3);
	/* slots 3-4, 5-6, padding at 7, 0-1; the fourth does not fit */
	for (int i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = op_sqe(&r);

		io_uring_prep_nop(sqe);
		sqe->nop_flags = IORING_NOP_CQE32;
		sqe->off = 100 + i;
		sqe->addr = 200 + i;
		io_uring_sqe_set_data64(sqe, 10 + i);
		op_submit(&r, 1);
	}
	CHECK_EQ(*r.cq.ktail - *r.cq.khead, 7, "slots used by three big CQEs and a pad");
	CHECK(IO_URING_READ_ONCE(*r.sq.kflags) & IORING_SQ_CQ_OVERFLOW,
	      "the fourth big CQE is not held back");
	CHECK(r.cq.cqes[7].flags & IORING_CQE_F_SKIP, "no padding entry at slot 7");
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(io_uring_wait_cqe(&r, &cqe), 0, "wait_cqe");
		CHECK(cqe->user_data == (__u64)(10 + i) && (cqe->flags & IORING_CQE_F_32) &&
		      cqe->big_cqe[0] == (__u64)(100 + i) && cqe->big_cqe[1] == (__u64)(200 + i),
		      "big CQE %d after overflow: ud %llu flags %#x", i,
		      (unsigned long long)cqe->user_data, cqe->flags);
		io_uring_cqe_seen(&r, cqe);
	}
	CHECK(!(IO_URING_READ_ONCE(*r.sq.kflags) & IORING_SQ_CQ_OVERFLOW),
	      "overflow flag still set");
	io_uring_queue_exit(&r);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	cqe32_ring();
	mixed_overflow();
	mixed();
	tu_pass();
	return 0;
}
