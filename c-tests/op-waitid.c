/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_WAITID on forked children: status, pid and code in siginfo
 * (exited, killed, stopped), P_ALL and P_PGID, WNOHANG with nothing to
 * report, bad arguments, cancellation of a pending wait (also by a link
 * timeout), and a ring torn down with a wait still pending.
 */
#include <signal.h>
#include <sys/wait.h>
#include "op-util.h"

static pid_t child_pausing(void)
{
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

/* waitid arguments refused (or with nothing to wait for), in order */
static const struct {
	idtype_t type;
	id_t id;
	int options;
	__u64 addr;	/* written over the SQE's addr when not 0 */
	int res;
	const char *what;
} bad[] = {
	{ P_ALL, 0, 0, 0, -EINVAL, "waitid without WEXITED/WSTOPPED/WCONTINUED" },
	{ (idtype_t)77, 0, WEXITED, 0, -EINVAL, "waitid with an unknown idtype" },
	{ P_PID, 0, WEXITED, 0, -EINVAL, "waitid P_PID 0" },
	{ P_ALL, 0, WEXITED, 1, -EINVAL, "waitid with sqe->addr set" },
	{ P_ALL, 0, WEXITED, 0, -ECHILD, "waitid with no children" },
};

static void more_cases(struct io_uring *ring)
{
	struct io_uring_sqe *sqe;
	struct op_cqe c[2];
	siginfo_t si;
	pid_t pid;

	/* WNOHANG with a live child: res 0, si_signo 0 and si_pid 0 */
	pid = child_pausing();
	memset(&si, 0xff, sizeof(si));
	sqe = op_sqe(ring);
	io_uring_prep_waitid(sqe, P_PID, pid, &si, WEXITED | WNOHANG, 0);
	CHECK_EQ(op_run1(ring), 0, "waitid WNOHANG, nothing yet");
	CHECK(si.si_signo == 0 && si.si_pid == 0, "WNOHANG siginfo: signo %d pid %d",
	      si.si_signo, si.si_pid);

	/* stopped child (WSTOPPED, retried until seen) */
	sqe = op_sqe(ring);
	io_uring_prep_waitid(sqe, P_PID, pid, &si, WSTOPPED, 0);
	op_submit(ring, 1);
	usleep(5000);
	CHECK_EQ(io_uring_cq_ready(ring), 0, "WSTOPPED wait completed early");
	kill(pid, SIGSTOP);
	CHECK_EQ(op_wait(ring).res, 0, "waitid WSTOPPED");
	CHECK(si.si_pid == pid && si.si_code == CLD_STOPPED &&
	      si.si_status == SIGSTOP, "stopped siginfo: code %d status %d",
	      si.si_code, si.si_status);

	/* P_ALL, then cancel a pending wait by user_data */
	sqe = op_sqe(ring);
	io_uring_prep_waitid(sqe, P_ALL, 0, &si, WEXITED, 0);
	io_uring_sqe_set_data64(sqe, 1);
	op_submit(ring, 1);
	usleep(5000);
	CHECK_EQ(io_uring_cq_ready(ring), 0, "P_ALL wait completed early");
	sqe = op_sqe(ring);
	io_uring_prep_cancel64(sqe, 1, 0);
	io_uring_sqe_set_data64(sqe, 2);
	op_submit(ring, 1);
	op_wait_n(ring, c, 2);
	CHECK_EQ(c[0].res, -ECANCELED, "cancelled waitid");
	/* the kernel counts the waitid it cancelled */
	CHECK_EQ(c[1].res, 1, "cancel of a waitid");

	/* P_PGID (our group) sees the killed child; P_PID was cancelled above */
	sqe = op_sqe(ring);
	io_uring_prep_waitid(sqe, P_PGID, 0, &si, WEXITED, 0);
	op_submit(ring, 1);
	kill(pid, SIGKILL);
	CHECK_EQ(op_wait(ring).res, 0, "waitid P_PGID");
	CHECK(si.si_pid == pid && si.si_code == CLD_KILLED, "P_PGID siginfo: pid %d code %d",
	      si.si_pid, si.si_code);

	/* bad input: no event asked for, unknown idtype, pid 0, sqe->addr;
	 * then a good one with no children left */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sqe = op_sqe(ring);
		io_uring_prep_waitid(sqe, bad[i].type, bad[i].id, &si,
				     bad[i].options, 0);
		if (bad[i].addr)
			sqe->addr = bad[i].addr;
		CHECK_EQ(op_run1(ring), bad[i].res, bad[i].what);
	}
}

/* A ring torn down with waits pending completes nothing, leaves no fd
 * behind (the engine's pidfds) and leaves the children to the process. */
static void teardown_pending(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	siginfo_t si;
	pid_t pid = child_pausing();
	int fds = tu_count_fds();

	op_ring(&ring, 4, 0);
	sqe = op_sqe(&ring);
	io_uring_prep_waitid(sqe, P_PID, pid, &si, WEXITED, 0);
	sqe = op_sqe(&ring);
	io_uring_prep_waitid(sqe, P_ALL, 0, &si, WSTOPPED, 0);
	op_submit(&ring, 2);
	io_uring_queue_exit(&ring);
	CHECK_EQ(tu_count_fds(), fds, "fds after teardown with waits pending");
	kill(pid, SIGKILL);
	memset(&si, 0, sizeof(si));
	if (tu_on_engine())
		CHECK(waitid(P_PID, pid, &si, WEXITED) == 0 && si.si_pid == pid,
		      "child not reapable after teardown: %s", strerror(errno));
	else
		/* the kernel cancels a closed ring's waits from a workqueue,
		 * so its wait may still race ours for the child */
		waitid(P_PID, pid, &si, WEXITED);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	siginfo_t si;
	pid_t pid;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 4, 0);
	op_need(&ring, IORING_OP_WAITID, "IORING_OP_WAITID");

	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		usleep(20000);
		_exit(42);
	}
	memset(&si, 0, sizeof(si));
	sqe = op_sqe(&ring);
	io_uring_prep_waitid(sqe, P_PID, pid, &si, WEXITED, 0);
	CHECK_EQ(op_run1(&ring), 0, "waitid");
	CHECK(si.si_pid == pid && si.si_code == CLD_EXITED && si.si_status == 42,
	      "siginfo: pid %d code %d status %d", si.si_pid, si.si_code,
	      si.si_status);
	/* the child is reaped: waiting again finds nothing */
	sqe = op_sqe(&ring);
	io_uring_prep_waitid(sqe, P_PID, pid, &si, WEXITED, 0);
	CHECK_EQ(op_run1(&ring), -ECHILD, "waitid after reap");

	/* a killed child reports CLD_KILLED */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		pause();
		_exit(0);
	}
	sqe = op_sqe(&ring);
	io_uring_prep_waitid(sqe, P_PID, pid, &si, WEXITED, 0);
	op_submit(&ring, 1);
	kill(pid, SIGKILL);
	CHECK_EQ(op_wait(&ring).res, 0, "waitid killed child");
	CHECK(si.si_pid == pid && si.si_code == CLD_KILLED &&
	      si.si_status == SIGKILL, "killed siginfo: code %d status %d",
	      si.si_code, si.si_status);

	/* A link timeout that cuts a waitid short answers 1, the count the
	 * kernel's waitid cancellation gives, not -ETIME (6.12 still says
	 * -ETIME). */
	{
		struct __kernel_timespec ts = { .tv_nsec = 30 * 1000 * 1000 };
		struct op_cqe c[2];

		pid = fork();
		CHECK(pid >= 0, "fork");
		if (pid == 0) {
			alarm(10);	/* never outlives a failed test for long */
			pause();
			_exit(0);
		}
		sqe = op_sqe(&ring);
		io_uring_prep_waitid(sqe, P_PID, pid, &si, WEXITED, 0);
		op_link_timeout(&ring, sqe, &ts);
		op_submit(&ring, 2);
		op_wait_n(&ring, c, 2);
		CHECK_EQ(c[0].res, -ECANCELED, "waitid cut by a link timeout");
		if (c[1].res != -ETIME ||
		    !tu_lacks_before(6, 18, "a link timeout's cancel count over a waitid"))
			CHECK_EQ(c[1].res, 1, "link timeout over a waitid");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}

	more_cases(&ring);
	io_uring_queue_exit(&ring);
	teardown_pending();
	return tu_done();
}
