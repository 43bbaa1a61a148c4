/* SPDX-License-Identifier: MIT */
/*
 * A process that dies while posting to a ring it shares through fork()
 * never blocks the others. Each round a child floods the shared CQ with
 * NOPs and is killed (SIGKILL) at a random moment, possibly while it holds
 * whatever lock CQ posting takes; the parent, with the child dead but not
 * yet reaped (a zombie), must still complete its own request (a poll it
 * armed before the fork) within 1 s. The same with the child in another
 * PID namespace, where its pid means nothing to the parent (root only).
 * The kernel's rings pass trivially; the userspace engine's CQ lock is
 * the point.
 */
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include "liburing.h"
#include "test-util.h"

/* Each kill lands inside the engine's CQ lock with a chance of a few
 * percent: enough rounds that an engine whose lock outlived its holder
 * fails nearly every run. */
#ifndef ROUNDS
#define ROUNDS 100
#endif
#ifndef NS_ROUNDS
#define NS_ROUNDS 100
#endif
#define BATCH 2048
#define POLL_UD 0x5011
#define CHILD_UD 0xc0de

static int round_no;
static int ns_refused;
/* How long the parent's request may take: 1 s; 5 s in emulated guests. */
static long long bound_ns = 1000000000LL;

/* The parent's post hangs behind a dead holder: fail, from a handler. */
static void on_alarm(int sig)
{
	static const char m[] = "fork-lock: the parent's request hung after a child died\n";

	(void)sig;
	(void)!write(2, m, sizeof(m) - 1);
	_exit(1);
}

/* The child: NOPs as fast as the CQ takes them, until killed. */
static void flood(struct io_uring *ring)
{
	for (;;) {
		if (io_uring_cq_ready(ring) + BATCH > ring->cq.ring_entries) {
			sched_yield();
			continue;
		}
		for (int i = 0; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			if (!sqe)
				break;
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, CHILD_UD);
		}
		if (io_uring_submit(ring) < 0)
			_exit(2);
	}
}

/* Drops every CQE; returns how many were the child's. */
static unsigned drain(struct io_uring *ring, int *saw_poll)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0, kids = 0;

	io_uring_for_each_cqe(ring, head, cqe) {
		if (cqe->user_data == CHILD_UD)
			kids++;
		else if (cqe->user_data == POLL_UD && saw_poll)
			*saw_poll = 1;
		else
			FAIL("round %d: unexpected CQE %llu res %d", round_no,
			     (unsigned long long)cqe->user_data, cqe->res);
		n++;
	}
	io_uring_cq_advance(ring, n);
	return kids;
}

static char proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	char c = '?';

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return c;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		c = p[2];
	fclose(f);
	return c;
}

/*
 * One round. `in_ns`: the flooding child is pid 1 of a new PID namespace
 * (started by an intermediate child that stays alive, so the killed one
 * stays a zombie until the intermediate goes).
 */
static void one_round(int in_ns)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int p[2], saw = 0;
	pid_t pid, mid = -1;
	long long t0;

	CHECK(pipe(p) == 0, "pipe");
	CHECK_EQ(io_uring_queue_init(4096, &ring, 0), 0, "setup");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	io_uring_sqe_set_data64(sqe, POLL_UD);
	CHECK_EQ(io_uring_submit(&ring), 1, "poll");
	if (!in_ns) {
		pid = fork();
		CHECK(pid >= 0, "fork");
		if (pid == 0)
			flood(&ring);
	} else {
		int c[2];

		CHECK(pipe(c) == 0, "pipe");
		mid = fork();
		CHECK(mid >= 0, "fork");
		if (mid == 0) {
			pid_t g;

			if (unshare(CLONE_NEWPID) < 0)
				_exit(3);
			g = fork();
			if (g < 0)
				_exit(4);
			if (g == 0) {
				if (getpid() != 1)
					_exit(5);
				flood(&ring);
			}
			if (write(c[1], &g, sizeof(g)) != sizeof(g))
				_exit(6);
			for (;;)
				pause();
		}
		close(c[1]);
		if (read(c[0], &pid, sizeof(pid)) != sizeof(pid)) {
			int st;

			CHECK(waitpid(mid, &st, 0) == mid, "waitpid");
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3, "intermediate child: status %#x", st);
			close(c[0]);
			ns_refused = 1;
			io_uring_queue_exit(&ring);
			close(p[0]);
			close(p[1]);
			return;
		}
		close(c[0]);
	}
	/* Wait for the child's first CQEs, then let it run a random while. */
	t0 = tu_now_ns();
	while (!drain(&ring, NULL))
		CHECK(tu_now_ns() - t0 < 5000000000LL, "round %d: no CQE from the child", round_no);
	long long run = (rand() % 3000) * 1000LL;

	t0 = tu_now_ns();
	while (tu_now_ns() - t0 < run)
		drain(&ring, NULL);
	CHECK(kill(pid, SIGKILL) == 0, "kill");
	if (!in_ns) {
		siginfo_t si;

		/* Dead, and left unreaped. */
		CHECK(waitid(P_PID, pid, &si, WEXITED | WNOWAIT) == 0, "waitid");
		CHECK(si.si_code == CLD_KILLED, "round %d: child not killed (code %d status %d)", round_no,
		      si.si_code, si.si_status);
	} else {
		t0 = tu_now_ns();
		while (proc_state(pid) != 'Z')
			CHECK(tu_now_ns() - t0 < 5000000000LL, "round %d: child in a PID namespace still alive", round_no);
	}
	CHECK(proc_state(pid) == 'Z', "round %d: child %d is no zombie (%c)", round_no, pid, proc_state(pid));

	/* The parent's own request completes, past whatever the child held. */
	alarm(10);
	t0 = tu_now_ns();
	CHECK(write(p[1], "x", 1) == 1, "write");
	while (!saw) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_nsec = 100000000 };
		int ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);

		CHECK(ret == 0 || ret == -ETIME || ret == -EINTR, "wait: %d", ret);
		drain(&ring, &saw);
		CHECK(tu_now_ns() - t0 < bound_ns, "round %d: the parent's poll took over %lld ms", round_no,
		      bound_ns / 1000000);
	}
	alarm(0);
	CHECK(proc_state(pid) == 'Z', "round %d: the child was reaped before the check", round_no);

	if (in_ns) {
		int st;

		kill(mid, SIGKILL);
		CHECK(waitpid(mid, &st, 0) == mid, "waitpid");
	} else {
		int st;

		CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child status %#x", st);
	}
	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	signal(SIGALRM, on_alarm);
	srand((unsigned)getpid());
	/* Emulated guests (scripts/test-kernels.sh) run a fifth of the rounds. */
	int div = getenv("LIBURING_RS_TEST_EMULATED") ? 5 : 1;

	if (div > 1)
		bound_ns *= 5;
	for (round_no = 0; round_no < ROUNDS / div; round_no++)
		one_round(0);
	for (; round_no < (ROUNDS + NS_ROUNDS) / div && !ns_refused; round_no++)
		one_round(1);
	if (ns_refused)
		SKIP("unshare(CLONE_NEWPID) refused (root needed): no PID namespace rounds; the rest passed");
	return tu_done();
}
