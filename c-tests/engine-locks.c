/* SPDX-License-Identifier: MIT */
/*
 * POSIX record locks across io_uring I/O. The kernel's io_uring holds its
 * files by reference, outside the program's fd table, so no request, no
 * registration and no ring exit ever drops a lock the program holds with
 * F_SETLK. The engine's own references are dups in that table, and POSIX
 * drops a process's locks on a file at the close of any of its fds for
 * it: the engine must keep (and reuse) such a dup while the lock lasts,
 * and let it go once the lock is gone. Each case below checks the lock
 * from another process, which cannot take it while it is still ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <unistd.h>
#include "liburing.h"
#include "test-util.h"
#include "op-util.h"

static int fd;
static char path[64];

/* The count settles at `want` (a request's dup goes just after its CQE). */
static int settled(int want)
{
	for (int i = 0; i < 200 && tu_fds_naming(path, NULL) != want; i++)
		usleep(1000);
	return tu_fds_naming(path, NULL);
}

static void set_lock(int type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	CHECK(!fcntl(fd, F_SETLK, &fl), "F_SETLK: %s", strerror(errno));
}

/* Whether [start, start + len) is still ours: another process cannot lock it. */
static int locked(off_t start, off_t len)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	int st;
	pid_t p = fork();

	CHECK(p >= 0, "fork");
	if (!p)
		_exit(fcntl(fd, F_SETLK, &fl) == 0 ? 1 : 0);
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st), "child");
	return WEXITSTATUS(st) == 0;
}

/* A buffered write linked to an fsync, as a database's log does. */
static void write_fsync(struct io_uring *ring)
{
	static char buf[4096];
	struct io_uring_sqe *sqe;
	struct op_cqe c[2];

	memset(buf, 'x', sizeof(buf));
	sqe = op_sqe(ring);
	io_uring_prep_write(sqe, fd, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = op_sqe(ring);
	io_uring_prep_fsync(sqe, fd, 0);
	sqe->user_data = 2;
	op_submit(ring, 2);
	op_wait_n(ring, c, 2);
	CHECK_EQ(c[0].res + c[1].res, (int)sizeof(buf), "write and fsync results");
}

static void register_unregister(struct io_uring *ring)
{
	CHECK_EQ(io_uring_register_files(ring, &fd, 1), 0, "register_files");
	CHECK_EQ(io_uring_unregister_files(ring), 0, "unregister_files");
}

/* The slot emptied by an update, and by IORING_OP_CLOSE on a fixed file. */
static void update_and_close_slot(struct io_uring *ring)
{
	int none = -1;

	CHECK_EQ(io_uring_register_files(ring, &fd, 1), 0, "register_files");
	CHECK_EQ(io_uring_register_files_update(ring, 0, &none, 1), 1, "files_update");
	CHECK_EQ(io_uring_register_files_update(ring, 0, &fd, 1), 1, "files_update");
	io_uring_prep_close_direct(op_sqe(ring), 0);
	CHECK_EQ(op_run1(ring), 0, "close_direct");
	CHECK_EQ(io_uring_unregister_files(ring), 0, "unregister_files");
}

static void async_read(struct io_uring *ring)
{
	char buf[64];
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_read(sqe, fd, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_ASYNC;
	CHECK(op_run1(ring) >= 0, "IOSQE_ASYNC read");
}

/* Many requests under one lock: whatever the engine keeps, it keeps once. */
static void many_fsyncs(struct io_uring *ring)
{
	int before = tu_fds_naming(path, NULL);

	for (int i = 0; i < 64; i++) {
		io_uring_prep_fsync(op_sqe(ring), fd, 0);
		CHECK_EQ(op_run1(ring), 0, "fsync");
	}
	CHECK(tu_fds_naming(path, NULL) <= before + 1, "64 fsyncs under a lock left %d fds on the file",
	      tu_fds_naming(path, NULL) - before);
}

/* A lock of another process, on another range, and none of ours. */
static void others_lock_only(struct io_uring *ring)
{
	int to_child[2], to_parent[2], st;
	char c = 0;
	pid_t p;

	CHECK(!pipe(to_child) && !pipe(to_parent), "pipe");
	p = fork();
	CHECK(p >= 0, "fork");
	if (!p) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1 << 20, .l_len = 1 };

		close(to_child[1]);
		close(to_parent[0]);
		c = fcntl(fd, F_SETLK, &fl) == 0;
		if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	CHECK(read(to_parent[0], &c, 1) == 1 && c == 1, "child's lock");
	/* The engine closes this request's dup: no lock of ours is on the file. */
	async_read(ring);
	CHECK_EQ(settled(1), 1, "fds on the file after a request with only another process's lock");
	/* With ours too, on a range of its own, ours survives the request. */
	set_lock(F_WRLCK, 0, 4096);
	async_read(ring);
	CHECK(locked(0, 4096), "our lock was dropped beside another process's");
	set_lock(F_UNLCK, 0, 0);
	CHECK(write(to_child[1], &c, 1) == 1, "release child");
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st), "child exit");
	close(to_child[1]);
	close(to_parent[0]);
}

/* kcmp answers EPERM, as some container profiles make it (x86_64 numbers). */
static void refuse_kcmp(void)
{
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kcmp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };

	CHECK(!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
	CHECK(!prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp), "seccomp: %s", strerror(errno));
	CHECK(syscall(SYS_kcmp, getpid(), getpid(), 0, fd, fd) < 0 && errno == EPERM, "kcmp refused");
}

/* Without kcmp, the engine still keeps one dup for all the requests. */
static void without_kcmp(void)
{
	struct io_uring ring;
	int st;
	pid_t p = fork();

	CHECK(p >= 0, "fork");
	if (!p) {
		refuse_kcmp();
		op_ring(&ring, 8, 0);
		set_lock(F_WRLCK, 0, 0);
		many_fsyncs(&ring);
		CHECK(locked(0, 0), "the lock was dropped without kcmp");
		set_lock(F_UNLCK, 0, 0);
		io_uring_queue_exit(&ring);
		CHECK_EQ(settled(1), 1, "fds on the file after the lock went, without kcmp");
		_exit(0);
	}
	CHECK(waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st), "the case without kcmp failed");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*run)(struct io_uring *);
	} cases[] = {
		{ "write linked to fsync", write_fsync },
		{ "register and unregister the file", register_unregister },
		{ "files update and close of the fixed slot", update_and_close_slot },
		{ "IOSQE_ASYNC read", async_read },
		{ "64 fsyncs", many_fsyncs },
	};
	struct io_uring ring;

	(void)argc;
	tu_set_name(argv[0]);
	fd = tu_temp_file(path, sizeof(path));
	op_ring(&ring, 8, 0);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set_lock(F_WRLCK, 0, 0);
		CHECK(locked(0, 0), "lock not taken before %s", cases[i].name);
		cases[i].run(&ring);
		CHECK(locked(0, 0), "the lock was dropped by: %s", cases[i].name);
	}

	/* Registered files still held at ring exit. */
	CHECK_EQ(io_uring_register_files(&ring, &fd, 1), 0, "register_files");
	io_uring_queue_exit(&ring);
	CHECK(locked(0, 0), "the lock was dropped by the ring's exit");

	/* Once the lock is gone, nothing the engine kept stays behind. */
	set_lock(F_UNLCK, 0, 0);
	op_ring(&ring, 8, 0);
	async_read(&ring);
	io_uring_queue_exit(&ring);
	CHECK_EQ(settled(1), 1, "fds on the file after the lock went and the ring exited");

	op_ring(&ring, 8, 0);
	others_lock_only(&ring);
	io_uring_queue_exit(&ring);
	without_kcmp();
	close(fd);
	tu_pass();
	return 0;
}
