/* SPDX-License-Identifier: MIT */
/*
 * 128-byte SQEs on an IORING_SETUP_SQE_MIXED ring: 64- and 128-byte NOPs
 * interleaved so that big entries land on the last SQ slot (where
 * io_uring_get_sqe128 pads with a CQE-less NOP and wraps), over many
 * rounds; every user_data completes exactly once with res 0 and no
 * padding NOP posts a CQE.  Also: io_uring_get_sqe128 is NULL on a plain
 * ring and a normal SQE on an SQE128 ring, and a URING_CMD128 socket
 * command (SIOCINQ) when the kernel takes it.
 */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "op-util.h"

#define ENTRIES		16
#define ROUNDS		400
#define MAX_UD		64

static unsigned char seen[ROUNDS][MAX_UD];

static void reap(struct io_uring *ring, int round, int n)
{
	for (int i = 0; i < n; i++) {
		struct op_cqe c = op_wait(ring);
		unsigned r = (unsigned)(c.user_data >> 16);
		unsigned k = (unsigned)(c.user_data & 0xffff);

		CHECK(c.user_data != 0, "CQE from a padding NOP (res %d)",
		      c.res);
		CHECK(r == (unsigned)round && k < MAX_UD,
		      "unexpected user_data %#llx in round %d",
		      (unsigned long long)c.user_data, round);
		CHECK(!seen[r][k], "user_data %#llx completed twice",
		      (unsigned long long)c.user_data);
		CHECK_EQ(c.res, 0, "nop/nop128 result");
		seen[r][k] = 1;
	}
	/* nothing else may be pending: padding NOPs are CQE-less */
	{
		struct io_uring_cqe *cqe;
		int ret = io_uring_peek_cqe(ring, &cqe);

		CHECK(ret == -EAGAIN, "extra CQE after round %d: ud %#llx res %d",
		      round, ret ? 0ULL : (unsigned long long)cqe->user_data,
		      ret ? ret : cqe->res);
	}
}

/*
 * Userspace-only check of io_uring_get_sqe128's slot accounting, usable on
 * kernels without SQE_MIXED: a plain ring whose kernel head has been moved
 * near the end by real NOPs, with the SQE_MIXED bit set in ring.flags only
 * while entries are handed out (never submitted; the tail is rewound).
 */
static void get_sqe128_accounting(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe, *a, *b;
	unsigned saved_flags, tail0;

	op_ring(&ring, 8, 0);
	CHECK_EQ(ring.sq.ring_entries, 8, "sq entries");
	/* move kernel head and our tail to 5 */
	for (int i = 0; i < 5; i++) {
		sqe = op_sqe(&ring);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, i + 1);
	}
	op_submit(&ring, 5);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(op_wait(&ring).res, 0, "nop");
	tail0 = ring.sq.sqe_tail;
	CHECK_EQ(tail0 & 7, 5, "tail position");

	saved_flags = ring.flags;
	ring.flags |= IORING_SETUP_SQE_MIXED;
	/* slot 5 is not last: big entry takes slots 5,6 */
	a = io_uring_get_sqe128(&ring);
	CHECK(a == &ring.sq.sqes[5], "big entry at slot 5");
	CHECK_EQ(io_uring_sq_ready(&ring), 2, "ready after one big");
	/* slot 7 is last: the helper pads it and wraps to 0 */
	b = io_uring_get_sqe128(&ring);
	CHECK(b == &ring.sq.sqes[0], "wrapped big entry at slot 0");
	CHECK(ring.sq.sqes[7].opcode == IORING_OP_NOP &&
	      (ring.sq.sqes[7].flags & IOSQE_CQE_SKIP_SUCCESS),
	      "slot 7 padding: op %u flags %#x", ring.sq.sqes[7].opcode,
	      ring.sq.sqes[7].flags);
	CHECK_EQ(io_uring_sq_ready(&ring), 5, "ready after wrap");
	CHECK_EQ(io_uring_sq_space_left(&ring), 3, "space after wrap");
	/* 3 free: slot 2 not last, big fits (2,3) */
	CHECK(io_uring_get_sqe128(&ring) == &ring.sq.sqes[2], "big at 2");
	/* 1 free: big refused, tail unchanged; small still fits */
	CHECK(io_uring_get_sqe128(&ring) == NULL, "big with 1 free");
	CHECK_EQ(io_uring_sq_ready(&ring), 7, "ready after refusal");
	CHECK(io_uring_get_sqe(&ring) == &ring.sq.sqes[4], "small at 4");
	CHECK(io_uring_get_sqe(&ring) == NULL, "full ring");
	/* discard (nothing was submitted), then small, small, big: wraps */
	ring.sq.sqe_tail = tail0;
	CHECK(io_uring_get_sqe(&ring) == &ring.sq.sqes[5], "small at 5");
	CHECK(io_uring_get_sqe(&ring) == &ring.sq.sqes[6], "small at 6");
	CHECK(io_uring_get_sqe128(&ring) == &ring.sq.sqes[0], "pad+wrap");
	CHECK_EQ(ring.sq.sqe_tail, tail0 + 5, "pad+wrap tail");
	ring.sq.sqe_tail = tail0;
	ring.flags = saved_flags;

	/* the ring still works */
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	CHECK_EQ(op_run1(&ring), 0, "nop after rewind");
	io_uring_queue_exit(&ring);
}

static const char *mixed_rounds(void)
{
	struct io_uring ring;
	uint64_t rng = 0x1234567;
	int ret, wraps = 0, bigs = 0, smalls = 0;

	ret = io_uring_queue_init(ENTRIES, &ring, IORING_SETUP_SQE_MIXED);
	if (ret == -EINVAL)
		return "kernel rejects IORING_SETUP_SQE_MIXED (EINVAL)";
	if (ret < 0)
		FAIL("queue_init(SQE_MIXED): %s", strerror(-ret));
	if (!op_has(&ring, IORING_OP_NOP128)) {
		io_uring_queue_exit(&ring);
		return "kernel lacks IORING_OP_NOP128";
	}

	for (int round = 0; round < ROUNDS; round++) {
		int n = 0, slots = 0;
		/* how many entries to queue this round: 1..ENTRIES-1 */
		int want = 1 + (int)(tu_rand_next(&rng) % (ENTRIES - 1));

		while (n < want && n < MAX_UD) {
			struct io_uring_sqe *sqe;
			unsigned tail = ring.sq.sqe_tail;
			int big = (tu_rand_next(&rng) & 1) ||
				  ((tail + 1) & ring.sq.ring_mask) == 0;
			int pad = big && ((tail + 1) & ring.sq.ring_mask) == 0;
			int need = big ? 2 + pad : 1;

			if ((int)io_uring_sq_space_left(&ring) < need) {
				/* a too-full ring must refuse, not corrupt */
				if (big) {
					CHECK(io_uring_get_sqe128(&ring) == NULL,
					      "get_sqe128 with %u slots left",
					      io_uring_sq_space_left(&ring));
					CHECK(ring.sq.sqe_tail == tail,
					      "refused get_sqe128 moved the tail");
				}
				break;
			}
			if (big) {
				sqe = io_uring_get_sqe128(&ring);
				CHECK(sqe != NULL, "get_sqe128 NULL, %u left",
				      io_uring_sq_space_left(&ring));
				CHECK_EQ(ring.sq.sqe_tail - tail, need,
					 "slots taken by get_sqe128");
				if (pad) {
					struct io_uring_sqe *p =
						&ring.sq.sqes[tail & ring.sq.ring_mask];

					CHECK(p->opcode == IORING_OP_NOP &&
					      (p->flags & IOSQE_CQE_SKIP_SUCCESS),
					      "padding entry: op %u flags %#x",
					      p->opcode, p->flags);
					CHECK(sqe == &ring.sq.sqes[0],
					      "wrapped 128-byte SQE not at slot 0");
					wraps++;
				} else {
					CHECK(sqe == &ring.sq.sqes[tail & ring.sq.ring_mask],
					      "128-byte SQE not at the tail slot");
				}
				io_uring_prep_nop128(sqe);
				CHECK_EQ(sqe->opcode, IORING_OP_NOP128, "nop128 opcode");
				bigs++;
			} else {
				sqe = io_uring_get_sqe(&ring);
				CHECK(sqe != NULL, "get_sqe NULL");
				io_uring_prep_nop(sqe);
				smalls++;
			}
			/* user_data 0 is reserved to spot padding CQEs */
			io_uring_sqe_set_data64(sqe, ((__u64)round << 16) | (n + 1));
			n++;
			slots += need;
		}
		CHECK(n > 0, "round %d queued nothing", round);
		CHECK_EQ(io_uring_sq_ready(&ring), slots, "sq_ready");
		ret = io_uring_submit(&ring);
		CHECK(ret > 0 && ret <= slots, "submit: %d (slots %d)", ret,
		      slots);
		CHECK_EQ(io_uring_sq_ready(&ring), 0, "sq_ready after submit");
		reap(&ring, round, n);
		for (int k = 1; k <= n; k++)
			CHECK(seen[round][k], "round %d ud %d never completed",
			      round, k);
	}
	CHECK(wraps >= 10, "only %d wrapping 128-byte SQEs", wraps);
	CHECK(bigs > 100 && smalls > 100, "bigs %d smalls %d", bigs, smalls);
	io_uring_queue_exit(&ring);
	return NULL;
}

static void other_rings(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int ret;

	/* plain ring: no 128-byte SQEs at all */
	op_ring(&ring, 8, 0);
	CHECK(io_uring_get_sqe128(&ring) == NULL,
	      "get_sqe128 on a plain ring is not NULL");
	CHECK_EQ(io_uring_sq_ready(&ring), 0, "plain ring tail moved");
	io_uring_queue_exit(&ring);

	/* SQE128 ring: every entry is big; get_sqe128 is get_sqe */
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQE128);
	if (ret == -EINVAL) {
		tu_lacks("IORING_SETUP_SQE128");
		return;
	}
	CHECK_EQ(ret, 0, "queue_init(SQE128)");
	for (int i = 0; i < 20; i++) {
		unsigned tail = ring.sq.sqe_tail;

		sqe = io_uring_get_sqe128(&ring);
		CHECK(sqe != NULL, "get_sqe128 on SQE128 ring");
		CHECK(sqe == (struct io_uring_sqe *)((char *)ring.sq.sqes +
			(size_t)(tail & ring.sq.ring_mask) * 128),
		      "SQE128 ring entry address");
		CHECK_EQ(ring.sq.sqe_tail, tail + 1, "SQE128 tail step");
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 100 + i);
		op_submit(&ring, 1);
		struct op_cqe c = op_wait(&ring);

		CHECK(c.user_data == (__u64)(100 + i) && c.res == 0,
		      "SQE128 nop: ud %llu res %d",
		      (unsigned long long)c.user_data, c.res);
	}
	io_uring_queue_exit(&ring);
}

static void cmd128_siocinq(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char msg[123];
	int rx, tx, ret;

	if (io_uring_queue_init(8, &ring, IORING_SETUP_SQE_MIXED) < 0)
		return;
	if (!op_has(&ring, IORING_OP_URING_CMD128)) {
		io_uring_queue_exit(&ring);
		return;
	}
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(rx >= 0 && tx >= 0, "udp sockets");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(rx, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind");
	CHECK(getsockname(rx, (struct sockaddr *)&sa, &sl) == 0, "getsockname");
	memset(msg, 'q', sizeof(msg));
	CHECK(sendto(tx, msg, sizeof(msg), 0, (struct sockaddr *)&sa,
		     sizeof(sa)) == (ssize_t)sizeof(msg), "sendto");

	/* a small SQE first, so the big one sits at slot 1 */
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 1);
	sqe = io_uring_get_sqe128(&ring);
	CHECK(sqe != NULL, "get_sqe128");
	io_uring_prep_uring_cmd128(sqe, SOCKET_URING_OP_SIOCINQ, rx);
	CHECK_EQ(sqe->opcode, IORING_OP_URING_CMD128, "cmd128 opcode");
	CHECK_EQ(sqe->cmd_op, SOCKET_URING_OP_SIOCINQ, "cmd128 cmd_op");
	CHECK_EQ(sqe->fd, rx, "cmd128 fd");
	io_uring_sqe_set_data64(sqe, 2);
	ret = io_uring_submit(&ring);
	CHECK(ret > 0, "submit cmd128: %d", ret);
	{
		struct op_cqe c[2];

		op_wait_n(&ring, c, 2);
		CHECK_EQ(c[0].res, 0, "nop before cmd128");
		ret = c[1].res;
	}
	if (ret == -EINVAL || ret == -EOPNOTSUPP || ret == -ENOTSUP) {
		tu_lacks("SOCKET_URING_OP_SIOCINQ through URING_CMD128");
	} else {
		CHECK_EQ(ret, sizeof(msg), "cmd128 SIOCINQ bytes queued");
	}
	close(rx);
	close(tx);
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	const char *why;

	other_rings();
	get_sqe128_accounting();
	why = mixed_rounds();
	if (why)
		SKIP("%s; only the userspace get_sqe128 checks and the "
		     "plain/SQE128 ring checks ran", why);
	cmd128_siocinq();
	return tu_done();
}
