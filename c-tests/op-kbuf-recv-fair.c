/* SPDX-License-Identifier: MIT */
/*
 * Fairness between multishot receives with provided buffers: two of them
 * on two unix stream socketpairs, each socket holding 4096 bytes when they
 * are armed, with RECV's len (1024) capping each receive and 32-byte
 * buffers. The CQEs must take turns exactly as the 6.18 kernel's do:
 *  - a bundle that filled its cap yields at once: 1024 bytes from one
 *    request, then 1024 from the other, and so on;
 *  - without bundles a request receives once and retries 32 times more
 *    (33 CQEs, 1056 bytes) before the other one gets its turn.
 * Both on a plain ring and on one with IORING_SETUP_DEFER_TASKRUN. Kernels
 * before 6.18 may take turns differently: that is noted as lacking.
 *
 * The receives are submitted by io_uring_submit_and_wait on a ring that
 * already waits on a file (an armed poll). The kernel runs no retry before
 * a submit returns; the engine, while no thread serves the ring, lets its
 * reactor retry the first receive while the submitter still issues the
 * second, so a plain io_uring_submit of fresh receives takes turns there
 * only once both are armed (a known gap of the engine's scheduling).
 */
#include <poll.h>
#include <sys/socket.h>
#include "op-util.h"
#include "reap-util.h"

#define NR_BUFS 512
#define BUF_LEN 32
#define PER_SOCK 4096
#define CAP 1024
#define BGID 3

static char mem[NR_BUFS][BUF_LEN];

/* One turn: the bytes a request got in consecutive CQEs. */
struct turn {
	int who;
	int bytes;
};

/* The next CQE; a request that stalls fails the test instead of hanging. */
static void next(struct io_uring *ring, struct io_uring_cqe *c)
{
	CHECK_EQ(tu_reap_ns(ring, c, 1, 5000000000LL), 1, "a CQE in 5 s");
}

static void arm(struct io_uring *ring, int fd, int who, int bundle)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_recv_multishot(sqe, fd, NULL, CAP, 0);
	if (bundle)
		sqe->ioprio |= IORING_RECVSEND_BUNDLE;
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	sqe->user_data = who;
}

/* Runs both receives until all 2 * PER_SOCK bytes came; fills `turns` and
 * returns how many there were. */
static int run(unsigned setup_flags, int bundle, struct turn *turns, int max)
{
	/* Room for every CQE of a turn: a full CQ would end the requests. */
	struct io_uring_params p = { .flags = setup_flags | IORING_SETUP_CQSIZE,
				     .cq_entries = 256 };
	struct io_uring_buf_ring *br;
	struct io_uring ring;
	char data[PER_SOCK];
	int sv[2][2], pfd[2], err, n = 0, left = 2 * PER_SOCK;

	err = io_uring_queue_init_params(8, &ring, &p);
	if (err == -EINVAL && (setup_flags & IORING_SETUP_DEFER_TASKRUN) &&
	    tu_lacks_before(6, 1, "IORING_SETUP_DEFER_TASKRUN"))
		return 0;
	CHECK_EQ(err, 0, "queue_init");
	if (bundle && !(p.features & IORING_FEAT_RECVSEND_BUNDLE)) {
		tu_lacks("IORING_FEAT_RECVSEND_BUNDLE");
		io_uring_queue_exit(&ring);
		return 0;
	}
	br = io_uring_setup_buf_ring(&ring, NR_BUFS, BGID, 0, &err);
	if (!br && err == -EINVAL && tu_lacks_before(5, 19, "buffer rings")) {
		io_uring_queue_exit(&ring);
		return 0;
	}
	CHECK(br, "setup_buf_ring: %d", err);
	for (int i = 0; i < NR_BUFS; i++)
		io_uring_buf_ring_add(br, mem[i], BUF_LEN, i,
				      io_uring_buf_ring_mask(NR_BUFS), i);
	io_uring_buf_ring_advance(br, NR_BUFS);

	/* A poll left armed on an idle pipe: the ring already waits on a
	 * file when the receives come (see the note at the top). */
	CHECK(pipe(pfd) == 0, "pipe");
	io_uring_prep_poll_add(op_sqe(&ring), pfd[0], POLLIN);
	op_submit(&ring, 1);

	for (int s = 0; s < 2; s++) {
		CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[s]) == 0, "pair");
		memset(data, 'a' + s, sizeof(data));
		CHECK_EQ(write(sv[s][1], data, sizeof(data)), PER_SOCK,
			 "queue data");
		arm(&ring, sv[s][0], s + 1, bundle);
	}
	err = io_uring_submit_and_wait(&ring, 1);
	if (err == 1) {
		/* The first receive failed its prep, which ends the submit. */
		struct io_uring_cqe c;

		next(&ring, &c);
		CHECK(c.res == -EINVAL &&
		      tu_lacks_before(6, 18, "multishot RECV with a length"),
		      "first receive: %d", c.res);
		goto out;
	}
	CHECK_EQ(err, 2, "submit receives");

	while (left > 0) {
		struct io_uring_cqe c;
		int who;

		next(&ring, &c);
		who = (int)c.user_data;
		CHECK(who == 1 || who == 2, "user_data %d", who);
		CHECK(c.res > 0, "receive %d: %d", who, c.res);
		CHECK(c.flags & IORING_CQE_F_MORE, "request %d still armed", who);
		CHECK(c.flags & IORING_CQE_F_BUFFER, "a buffer is named");
		CHECK(mem[c.flags >> IORING_CQE_BUFFER_SHIFT][0] == 'a' + who - 1,
		      "request %d's bytes are its socket's", who);
		left -= c.res;
		if (n && turns[n - 1].who == who) {
			turns[n - 1].bytes += c.res;
			continue;
		}
		CHECK(n < max, "too many turns");
		turns[n++] = (struct turn){ who, c.res };
	}
	CHECK_EQ(left, 0, "no byte more than was sent");

	/* EOF ends both receives, the pipe's data the poll. */
	for (int s = 0; s < 2; s++) {
		close(sv[s][1]);
		sv[s][1] = -1;
	}
	CHECK_EQ(write(pfd[1], "x", 1), 1, "pipe write");
	for (int i = 0; i < 3; i++) {
		struct io_uring_cqe c;

		next(&ring, &c);
		if (!c.user_data) {
			CHECK(c.res & POLLIN, "poll: %d", c.res);
			continue;
		}
		CHECK_EQ(c.res, 0, "EOF");
		CHECK(!(c.flags & IORING_CQE_F_MORE), "EOF ends request %d",
		      (int)c.user_data);
	}
out:
	for (int s = 0; s < 2; s++) {
		close(sv[s][0]);
		if (sv[s][1] >= 0)
			close(sv[s][1]);
	}
	close(pfd[0]);
	close(pfd[1]);
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, NR_BUFS, BGID), 0, "free");
	io_uring_queue_exit(&ring);
	return n;
}

static void check(unsigned setup_flags, int bundle)
{
	/* The turns the kernel takes, in order, starting with request 1. */
	static const int bundled[] = { 1024, 1024, 1024, 1024,
				       1024, 1024, 1024, 1024 };
	static const int single[] = { 1056, 1056, 1056, 1056,
				      1056, 1056, 928, 928 };
	const int *want = bundle ? bundled : single;
	struct turn turns[64];
	int n = run(setup_flags, bundle, turns, 64), same = n == 8;

	if (!n)
		return;
	for (int i = 0; same && i < n; i++)
		same = turns[i].who == 1 + i % 2 && turns[i].bytes == want[i];
	if (same || (!tu_on_engine() &&
		     tu_lacks_before(6, 18, "6.18's multishot receive turns")))
		return;
	for (int i = 0; i < n; i++)
		fprintf(stderr, "  turn %d: request %d, %d bytes\n", i,
			turns[i].who, turns[i].bytes);
	FAIL("%s receives%s do not take their turns as the kernel's",
	     bundle ? "bundled" : "single",
	     setup_flags ? " under DEFER_TASKRUN" : "");
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	for (int bundle = 1; bundle >= 0; bundle--) {
		check(0, bundle);
		check(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER,
		      bundle);
	}
	return tu_done();
}
