/* SPDX-License-Identifier: MIT */
/* IORING_OP_WAITID on a forked child: status, pid and code in siginfo. */
#include <signal.h>
#include <sys/wait.h>
#include "op-util.h"

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

	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
