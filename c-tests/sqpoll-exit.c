/* SPDX-License-Identifier: MIT */
/*
 * SQPOLL teardown:
 *  - io_uring_queue_exit while the SQ thread is busy with a full SQ of
 *    NOPs, pipe reads that never complete and timeouts returns, again and
 *    again;
 *  - 1,000 setup/exit cycles leave no thread and no fd behind;
 *  - a forked child waking the parent's SQPOLL ring's thread and waiting
 *    on the ring gets the kernel's answers (a timeout, nothing hangs), and
 *    its teardown of its copy leaves the parent's ring working;
 *  - registered files added while the thread runs are used by it.
 */
#define LIBURING_RS_SOURCE
#include <liburing.h>
#include <dirent.h>
#include <sys/wait.h>
#include "op-util.h"

static int count(const char *dir)
{
	int n = tu_count_dir(dir);

	CHECK(n >= 0, "opendir %s: %s", dir, strerror(errno));
	return n;
}

/* The count of `dir` once it stops changing (threads of torn-down kernel
 * rings leave asynchronously). */
static int settled(const char *dir)
{
	int last = -1, n;

	for (int i = 0; i < 150 && (n = count(dir)) != last; i++) {
		last = n;
		usleep(20000);
	}
	return n;
}

static void test_exit_busy(void)
{
	for (int round = 0; round < 20; round++) {
		struct __kernel_timespec ts = { .tv_sec = 10 };
		struct io_uring ring;
		char buf[8];
		int fds[2];
		unsigned i = 0;

		CHECK_EQ(op_sqpoll_ring(&ring, 256, 10), 0, "SQPOLL ring");
		CHECK_EQ(pipe(fds), 0, "pipe");
		for (; i < 4; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_read(sqe, fds[0], buf, sizeof(buf), 0);
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_timeout(sqe, &ts, 0, 0);
		}
		for (struct io_uring_sqe *sqe; (sqe = io_uring_get_sqe(&ring)); )
			io_uring_prep_nop(sqe);
		io_uring_submit(&ring);
		if (round & 1)
			usleep(round * 50);
		io_uring_queue_exit(&ring);
		close(fds[0]);
		close(fds[1]);
	}
}

static void test_cycles(void)
{
	int threads = settled("/proc/self/task"), fds = count("/proc/self/fd");

	for (int i = 0; i < 1000; i++) {
		struct io_uring ring;
		struct io_uring_cqe *cqe;

		CHECK_EQ(op_sqpoll_ring(&ring, 4, 0), 0, "SQPOLL ring in a cycle");
		if (i % 10 == 0) {
			io_uring_prep_nop(io_uring_get_sqe(&ring));
			CHECK(io_uring_submit(&ring) >= 0, "submit");
			CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "NOP in a cycle");
			io_uring_cqe_seen(&ring, cqe);
		}
		io_uring_queue_exit(&ring);
	}
	/* A kernel ring's SQ thread leaves after its teardown returns: give
	 * them time. Fewer is fine: an earlier ring's may have left since. */
	for (int i = 0; i < 500 && count("/proc/self/task") > threads; i++)
		usleep(20000);
	CHECK(count("/proc/self/task") <= threads, "threads leaked by 1,000 cycles");
	CHECK_EQ(count("/proc/self/fd"), fds, "fds after 1,000 cycles");
}

static void test_fork(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int status;
	pid_t pid;

	CHECK_EQ(op_sqpoll_ring(&ring, 8, 10), 0, "SQPOLL ring");
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	CHECK(io_uring_submit(&ring) >= 0, "submit");
	CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "parent NOP");
	io_uring_cqe_seen(&ring, cqe);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* The rings' memory is shared with the parent: the child only
		 * waits and wakes, it does not queue SQEs. */
		struct __kernel_timespec ts = { .tv_nsec = 200000000 };
		int ret, wake;

		alarm(10);
		wake = io_uring_enter(ring.ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL);
		ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		if (ret != -ETIME || wake != 0)
			_exit(3);
		io_uring_queue_exit(&ring);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid, "waitpid");
	CHECK(WIFEXITED(status), "child killed by signal %d", WTERMSIG(status));
	CHECK_EQ(WEXITSTATUS(status), 0, "child's answer on the inherited ring");
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	CHECK(io_uring_submit(&ring) >= 0, "submit after fork");
	CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "parent NOP after fork");
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
}

static void test_fixed_files(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	char out[4] = "abc", in[4] = { 0 };
	int fds[2], sparse[2] = { -1, -1 };

	CHECK_EQ(op_sqpoll_ring(&ring, 8, 0), 0, "SQPOLL ring");
	CHECK_EQ(pipe(fds), 0, "pipe");
	CHECK_EQ(io_uring_register_files(&ring, sparse, 2), 0, "register sparse files");
	/* Updated while the thread polls. */
	CHECK_EQ(io_uring_register_files_update(&ring, 0, fds, 2), 2, "files update");
	io_uring_prep_write(io_uring_get_sqe(&ring), 1, out, 3, 0);
	io_uring_sqe_set_flags(ring.sq.sqes + ((ring.sq.sqe_tail - 1) & ring.sq.ring_mask),
			       IOSQE_FIXED_FILE | IOSQE_IO_LINK);
	io_uring_prep_read(io_uring_get_sqe(&ring), 0, in, 3, 0);
	io_uring_sqe_set_flags(ring.sq.sqes + ((ring.sq.sqe_tail - 1) & ring.sq.ring_mask),
			       IOSQE_FIXED_FILE);
	CHECK(io_uring_submit(&ring) >= 0, "submit");
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "fixed-file CQE");
		CHECK_EQ(cqe->res, 3, "fixed-file read/write");
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK(!memcmp(in, "abc", 3), "data through fixed files");
	io_uring_queue_exit(&ring);
	close(fds[0]);
	close(fds[1]);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);
	op_need_sqpoll();
	test_exit_busy();
	test_fixed_files();
	test_fork();
	test_cycles();
	tu_pass();
	return T_EXIT_PASS;
}
