/* SPDX-License-Identifier: MIT */
/*
 * Ring I/O never asks for a file's times. The kernel's io_uring stats
 * nothing, and a stat that reports ctime or mtime has a side effect on
 * file systems with multigrain timestamps (ext4, xfs, btrfs, tmpfs since
 * Linux 6.13): the next write must stamp a fresh fine-grained time, which
 * dirties the inode, and every fdatasync then writes the inode out too.
 *
 * A child process installs, on every thread it has (the library's too), a
 * seccomp filter that kills it on stat, lstat, fstat, newfstatat, and on
 * statx asking for any time; then it runs buffered, vectored, O_DIRECT,
 * IOSQE_ASYNC, registered-file and linked write+fsync requests, fallocate
 * and a poll on the file. The child must exit normally.
 */
#include <liburing.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/stat.h>
#include "test-util.h"

#define BS 4096
#define DEPTH 8

#ifndef STATX_BTIME
#define STATX_BTIME 0x800U
#endif
#define TIMES (STATX_ATIME | STATX_MTIME | STATX_CTIME | STATX_BTIME)

static void forbid_stat(void)
{
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fstat, 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_newfstatat, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_stat, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_lstat, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_statx, 0, 3),
		/* statx's mask, args[3], low word */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, TIMES, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };

	CHECK(!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
	/* TSYNC: threads the library already started get the filter too. */
	CHECK(!syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fp),
	      "seccomp: %s", strerror(errno));
}

static void reap(struct io_uring *ring, int n, const char *what)
{
	for (int i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe(ring, &cqe);

		if (ret)
			_exit(10);
		if (cqe->res < 0) {
			fprintf(stderr, "%s: %s (%llu)\n", what, strerror(-cqe->res),
				(unsigned long long)cqe->user_data);
			_exit(11);
		}
		io_uring_cqe_seen(ring, cqe);
	}
}

static void run(int fd, int dfd)
{
	static char bufs[DEPTH][BS] __attribute__((aligned(4096)));
	struct iovec iov[2] = { { bufs[0], BS / 2 }, { bufs[1], BS / 2 } };
	struct io_uring ring;
	struct io_uring_sqe *sqe;

	if (io_uring_queue_init(64, &ring, 0))
		_exit(12);
	/* Warm up: workers and the reactor exist before the filter. */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_ASYNC;
	io_uring_submit(&ring);
	reap(&ring, 1, "nop");
	forbid_stat();

	for (int round = 0; round < 4; round++) {
		/* write + fdatasync pairs, as a database log does */
		for (int i = 0; i < DEPTH; i++) {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_write(sqe, fd, bufs[i], BS, (off_t)(round * DEPTH + i) * BS);
			sqe->flags |= IOSQE_IO_LINK;
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_fsync(sqe, fd, i & 1 ? IORING_FSYNC_DATASYNC : 0);
		}
		io_uring_submit(&ring);
		reap(&ring, 2 * DEPTH, "write+fsync");
		for (int i = 0; i < DEPTH; i++) {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read(sqe, fd, bufs[i], BS, (off_t)i * BS);
			if (i & 1)
				sqe->flags |= IOSQE_ASYNC;
		}
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_writev(sqe, fd, iov, 2, 0);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_readv(sqe, fd, iov, 2, BS);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_write(sqe, fd, bufs[2], BS, 3 * BS);
		sqe->flags |= IOSQE_ASYNC;
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_fallocate(sqe, fd, 0, 0, 64 * BS);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_poll_add(sqe, fd, POLLIN);
		io_uring_submit(&ring);
		reap(&ring, DEPTH + 5, "read/writev/readv/async/fallocate/poll");
		if (dfd >= 0) {
			for (int i = 0; i < DEPTH; i++) {
				sqe = io_uring_get_sqe(&ring);
				if (i & 1)
					io_uring_prep_read(sqe, dfd, bufs[i], BS, (off_t)i * BS);
				else
					io_uring_prep_write(sqe, dfd, bufs[i], BS, (off_t)i * BS);
			}
			io_uring_submit(&ring);
			reap(&ring, DEPTH, "O_DIRECT");
		}
	}
	if (io_uring_register_files(&ring, &fd, 1))
		_exit(13);
	for (int i = 0; i < DEPTH; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_write(sqe, 0, bufs[i], BS, (off_t)i * BS);
		sqe->flags |= IOSQE_FIXED_FILE | IOSQE_IO_LINK;
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_fsync(sqe, 0, IORING_FSYNC_DATASYNC);
		sqe->flags |= IOSQE_FIXED_FILE;
	}
	io_uring_submit(&ring);
	reap(&ring, 2 * DEPTH, "fixed write+fsync");
	io_uring_queue_exit(&ring);
	_exit(0);
}

int main(int argc, char **argv)
{
	static char zero[BS] __attribute__((aligned(4096)));
	char path[64];
	int st, dfd = -1;

	(void)argc;
	tu_set_name(argv[0]);
	int fd = tu_temp_file(path, sizeof(path));
	tu_pwrite_all(fd, zero, BS, 63 * BS);
	/* O_DIRECT needs a disk file system; tmpfs may refuse it. */
	const char *dirs[] = { "/var/tmp", "." };
	for (unsigned i = 0; i < 2 && dfd < 0; i++)
		dfd = open(dirs[i], O_TMPFILE | O_RDWR | O_DIRECT, 0600);
	if (dfd < 0)
		tu_lacks("a file system taking O_DIRECT");
	else
		tu_pwrite_all(dfd, zero, BS, 15 * BS);

	fflush(NULL);
	pid_t p = fork();
	CHECK(p >= 0, "fork: %s", strerror(errno));
	if (p == 0)
		run(fd, dfd);
	CHECK(waitpid(p, &st, 0) == p, "waitpid");
	CHECK(!(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS),
	      "a stat asking for the file's times ran during ring I/O");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: status %#x", st);
	return tu_done();
}
