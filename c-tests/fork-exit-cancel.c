/* SPDX-License-Identifier: MIT */
/*
 * A forked child submits requests to the ring it shares with its parent
 * and then leaves while they are in flight: (a) by _exit(), (b) by
 * exec'ing a trivial program; (c) the same as (b) with the roles swapped:
 * a parent submits and execs, its forked child waits; (d) a child that
 * keeps submitting short timeouts is killed at a random moment, perhaps
 * while it posts: none of its timeouts ends twice (-ETIME, or -ECANCELED
 * where the engine cancels it). The engine ends each; Linux 6.18 now and
 * then loses one of a killed task's, so there that is not asserted. The kernel cancels a task's requests when
 * it execs, and the CQEs land in the shared CQ: the parent, which never
 * submitted them, gets each one, once, and does not hang. Checked:
 *  - a read on a pipe only the child has, a poll on it: -ECANCELED;
 *  - a pipe read guarded by a link timeout: both -ECANCELED;
 *  - a timeout that expired before the child left: its -ETIME only;
 *  - (b) a timeout: -ECANCELED; a timeout linked to a NOP: both
 *    -ECANCELED; a timeout with IOSQE_CQE_SKIP_SUCCESS linked to a NOP:
 *    the timeout -ECANCELED, the NOP no CQE at all.
 * At exit the kernel cancels only what must run again in the task (the
 * pipe's requests, woken as the exit closes the pipe, end -ECANCELED);
 * timeouts run on until they fire, so (a) submits none (the engine
 * cancels them at once: docs/engine.md, limits).
 */
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "liburing.h"
#include "test-util.h"

enum { UD_READ = 1, UD_TIMEOUT, UD_POLL, UD_LINK_HEAD, UD_LINK_NOP,
       UD_SKIP_HEAD, UD_SKIP_NOP, UD_LT_READ, UD_LT, UD_EXPIRED, UD_MAX };

/* What the parent must see for each user_data (0: no CQE). */
static const int want[UD_MAX] = {
	[UD_READ] = -ECANCELED, [UD_TIMEOUT] = -ECANCELED,
	[UD_POLL] = -ECANCELED, [UD_LINK_HEAD] = -ECANCELED,
	[UD_LINK_NOP] = -ECANCELED, [UD_SKIP_HEAD] = -ECANCELED,
	[UD_SKIP_NOP] = 0, [UD_LT_READ] = -ECANCELED, [UD_LT] = -ECANCELED,
	[UD_EXPIRED] = -ETIME,
};

/* The requests (a) leaves out (see above). */
static int timeout_kind(int ud)
{
	return ud == UD_TIMEOUT || (ud >= UD_LINK_HEAD && ud <= UD_SKIP_NOP);
}

static struct io_uring_sqe *get_sqe(struct io_uring *ring, uint64_t ud,
				    unsigned flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		_exit(2);
	sqe->user_data = ud;
	sqe->flags |= flags;
	return sqe;
}

static void child(struct io_uring *ring, int how)
{
	static struct __kernel_timespec long_ts = { .tv_sec = 30 };
	static struct __kernel_timespec short_ts = { .tv_nsec = 1000000 };
	static char buf[2][16];
	struct io_uring_sqe *sqe;
	int p[2];

	if (pipe(p))
		_exit(3);
	sqe = get_sqe(ring, UD_EXPIRED, 0);
	io_uring_prep_timeout(sqe, &short_ts, 0, 0);
	sqe = get_sqe(ring, UD_READ, 0);
	io_uring_prep_read(sqe, p[0], buf[0], sizeof(buf[0]), 0);
	sqe = get_sqe(ring, UD_POLL, 0);
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	if (how == 'a')
		goto submit;
	sqe = get_sqe(ring, UD_TIMEOUT, 0);
	io_uring_prep_timeout(sqe, &long_ts, 0, 0);
	sqe = get_sqe(ring, UD_LINK_HEAD, IOSQE_IO_LINK);
	io_uring_prep_timeout(sqe, &long_ts, 0, 0);
	sqe = get_sqe(ring, UD_LINK_NOP, 0);
	io_uring_prep_nop(sqe);
	sqe = get_sqe(ring, UD_SKIP_HEAD,
		      IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS);
	io_uring_prep_timeout(sqe, &long_ts, 0, 0);
	sqe = get_sqe(ring, UD_SKIP_NOP, 0);
	io_uring_prep_nop(sqe);
submit:
	if (io_uring_submit(ring) != (how == 'a' ? 3 : 8))
		_exit(4);
	/* Separately, so that the ring has room for 8 SQEs only. */
	sqe = get_sqe(ring, UD_LT_READ, IOSQE_IO_LINK);
	io_uring_prep_read(sqe, p[0], buf[1], sizeof(buf[1]), 0);
	sqe = get_sqe(ring, UD_LT, 0);
	io_uring_prep_link_timeout(sqe, &long_ts, 0);
	if (io_uring_submit(ring) != 2)
		_exit(5);
	/* Let the short timeout expire, without reaping its CQE. */
	usleep(100 * 1000);
	if (how == 'a')
		_exit(0);
	execl("/bin/true", "true", (char *)NULL);
	_exit(6);
}

/* The waiter's side: every CQE expected, once, then nothing more. */
static void collect(struct io_uring *ring, int how)
{
	struct io_uring_cqe *cqe;
	int seen[UD_MAX] = { 0 }, got = 0, expect = 0, i, ret;
	long long deadline;

	for (i = 1; i < UD_MAX; i++)
		expect += want[i] != 0 && !(how == 'a' && timeout_kind(i));
	/* Everything expected, then a while longer for duplicates. */
	deadline = tu_now_ns() + 10000000000LL;
	for (;;) {
		struct __kernel_timespec ts = { .tv_nsec = 200000000 };

		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (ret == -ETIME) {
			if (got >= expect)
				break;
			CHECK(tu_now_ns() < deadline,
			      "(%c) %d of %d CQEs after 10 s", how, got,
			      expect);
			continue;
		}
		CHECK_EQ(ret, 0, "wait_cqe_timeout");
		CHECK(cqe->user_data > 0 && cqe->user_data < UD_MAX,
		      "(%c) stray CQE %llu", how,
		      (unsigned long long)cqe->user_data);
		i = (int)cqe->user_data;
		CHECK(!seen[i], "(%c) CQE %d twice", how, i);
		CHECK(want[i] != 0 && !(how == 'a' && timeout_kind(i)),
		      "(%c) CQE %d (res %d) not submitted or skipped", how, i,
		      cqe->res);
		if (cqe->res != want[i])
			FAIL("(%c) CQE %d: res %d, want %d", how, i, cqe->res,
			     want[i]);
		seen[i] = 1;
		got++;
		io_uring_cqe_seen(ring, cqe);
	}
	CHECK_EQ(got, expect, "CQEs");
	io_uring_queue_exit(ring);
}

static void run(int how)
{
	struct io_uring ring;
	int ret, status;
	pid_t pid;

	ret = io_uring_queue_init(8, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		child(&ring, how);
	CHECK_EQ(waitpid(pid, &status, 0), pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "(%c) child status %#x", how, status);
	collect(&ring, how);
}

/*
 * (c): a submitter forks the waiter, then submits and execs; the waiter,
 * reparented away from us, says through a pipe that it got everything.
 */
static void run_parent_leaves(void)
{
	struct io_uring ring;
	int p[2], ret, status;
	char c = 0;
	pid_t pid, waiter;

	CHECK(!pipe2(p, O_CLOEXEC), "pipe2: %s", strerror(errno));
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		if (io_uring_queue_init(8, &ring, 0))
			_exit(7);
		waiter = fork();
		if (waiter < 0)
			_exit(8);
		if (waiter == 0) {
			collect(&ring, 'c');
			if (write(p[1], "k", 1) != 1)
				_exit(9);
			_exit(0);
		}
		/* The waiter's pipe end goes with the exec. */
		child(&ring, 'b');
	}
	close(p[1]);
	CHECK_EQ(waitpid(pid, &status, 0), pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "(c) submitter status %#x", status);
	ret = (int)read(p[0], &c, 1);
	CHECK(ret == 1 && c == 'k', "(c) the waiter failed (see above)");
	close(p[0]);
}

#define KILL_ROUNDS 20
#define KILL_MAX 4096

struct kill_shm {
	/* Timeouts the child has submitted (user_data 1 to n). */
	volatile unsigned submitted;
	/* CQEs the parent has reaped. */
	volatile unsigned reaped;
};

static void kill_child(struct io_uring *ring, struct kill_shm *shm)
{
	static struct __kernel_timespec ts[3] = {
		{ .tv_nsec = 100000 }, { .tv_nsec = 1000000 },
		{ .tv_nsec = 3000000 },
	};
	unsigned i;

	for (i = 1; i < KILL_MAX; i++) {
		struct io_uring_sqe *sqe;

		/* At most 6 in flight: the CQ never overflows. */
		while (i - 1 - shm->reaped >= 6)
			usleep(100);
		sqe = get_sqe(ring, i, 0);
		io_uring_prep_timeout(sqe, &ts[i % 3], 0, 0);
		if (io_uring_submit(ring) != 1)
			_exit(10);
		shm->submitted = i;
	}
	pause();
	_exit(0);
}

static void run_killed(struct kill_shm *shm, unsigned round)
{
	static unsigned char seen[KILL_MAX + 1];
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	unsigned got, n, k;
	long long deadline, kill_at;
	int ret, status, killed = 0;
	pid_t pid;

	memset(seen, 0, sizeof(seen));
	shm->submitted = shm->reaped = 0;
	ret = io_uring_queue_init(8, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		kill_child(&ring, shm);
	kill_at = tu_now_ns() + 5000000LL + (round * 7919 % 40) * 1000000LL;
	deadline = tu_now_ns() + 10000000000LL;
	for (;;) {
		struct __kernel_timespec ts = { .tv_nsec = 1000000 };

		if (!killed && tu_now_ns() >= kill_at) {
			CHECK(!kill(pid, SIGKILL), "kill: %s", strerror(errno));
			CHECK_EQ(waitpid(pid, &status, 0), pid, "waitpid");
			CHECK(WIFSIGNALED(status), "(d) child status %#x",
			      status);
			killed = 1;
			/* Long enough for any late CQE to show. */
			kill_at = tu_now_ns() + 300000000LL;
		}
		n = shm->submitted;
		/* A CQE may come before its submitter counts it: count here. */
		for (got = 0, k = 1; k <= n; k++)
			got += seen[k];
		if (killed && tu_now_ns() >= kill_at &&
		    (got >= n || !tu_on_engine()))
			break;
		CHECK(tu_now_ns() < deadline, "(d) round %u: %u of %u CQEs "
		      "after 10 s", round, got, n);
		ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		if (ret == -ETIME)
			continue;
		CHECK_EQ(ret, 0, "wait_cqe_timeout");
		CHECK(cqe->user_data >= 1 && cqe->user_data < KILL_MAX,
		      "(d) stray CQE %llu", (unsigned long long)cqe->user_data);
		CHECK(!seen[cqe->user_data], "(d) round %u: CQE %llu twice",
		      round, (unsigned long long)cqe->user_data);
		CHECK(cqe->res == -ETIME || cqe->res == -ECANCELED,
		      "(d) CQE %llu: res %d", (unsigned long long)cqe->user_data,
		      cqe->res);
		/* So may the one being submitted as the child died. */
		seen[cqe->user_data] = 1;
		io_uring_cqe_seen(&ring, cqe);
		shm->reaped = shm->reaped + 1;
	}
	if (tu_on_engine())
		CHECK_EQ(got, n, "(d) CQEs");
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	if (access("/bin/true", X_OK))
		SKIP("no /bin/true to exec");
	run('a');
	run('b');
	run_parent_leaves();
	{
		struct kill_shm *shm = mmap(NULL, sizeof(*shm),
					    PROT_READ | PROT_WRITE,
					    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		unsigned round;

		CHECK(shm != MAP_FAILED, "mmap: %s", strerror(errno));
		for (round = 0; round < KILL_ROUNDS; round++)
			run_killed(shm, round);
	}
	tu_pass();
	return T_EXIT_PASS;
}
