/* SPDX-License-Identifier: MIT */
/*
 * POSIX record locks across io_uring I/O. The kernel's io_uring holds its
 * files by reference, outside the program's fd table, so no request and
 * no registration ever drops a lock the program holds with F_SETLK. The
 * engine's own fds live in that table, and closing one drops the
 * process's locks on the file: a limit named in docs/engine.md until its
 * references move out of the table. On the kernel this test asserts that
 * every lock survives; on the engine it reports which cases still lose
 * theirs and exits 77, and it fails there only if a lock is lost in a
 * case the limit does not name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "liburing.h"
#include "test-util.h"
#include "op-util.h"

static int fd;

static void lock_whole(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	CHECK(!fcntl(fd, F_SETLK, &fl), "F_SETLK: %s", strerror(errno));
}

/* Whether the lock is still ours: another process cannot take it. */
static int still_locked(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
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

/* The file registered as a fixed file, then unregistered. */
static void register_unregister(struct io_uring *ring)
{
	CHECK_EQ(io_uring_register_files(ring, &fd, 1), 0, "register_files");
	CHECK_EQ(io_uring_unregister_files(ring), 0, "unregister_files");
}

/* A plain read with IOSQE_ASYNC. */
static void async_read(struct io_uring *ring)
{
	char buf[64];
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_read(sqe, fd, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_ASYNC;
	CHECK(op_run1(ring) >= 0, "IOSQE_ASYNC read");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*run)(struct io_uring *);
		int named; /* the engine's limit names this case */
	} cases[] = {
		{ "write linked to fsync", write_fsync, 1 },
		{ "register and unregister the file", register_unregister, 1 },
		{ "IOSQE_ASYNC read", async_read, 1 },
	};
	struct io_uring ring;
	char path[64], lost[256] = "";
	int engine;

	(void)argc;
	tu_set_name(argv[0]);
	fd = tu_temp_file(path, sizeof(path));
	op_ring(&ring, 8, 0);
	engine = tu_on_engine();
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lock_whole();
		CHECK(still_locked(), "lock not taken before %s", cases[i].name);
		cases[i].run(&ring);
		if (still_locked())
			continue;
		CHECK(engine, "the kernel dropped the lock: %s", cases[i].name);
		CHECK(cases[i].named, "the engine dropped the lock in a case its limit does not name: %s",
		      cases[i].name);
		snprintf(lost + strlen(lost), sizeof(lost) - strlen(lost), "%s%s", *lost ? ", " : "",
			 cases[i].name);
	}
	io_uring_queue_exit(&ring);
	/* Ring exit closes nothing of the program's. */
	lock_whole();
	CHECK(still_locked(), "lock lost at ring exit");
	close(fd);
	if (*lost)
		SKIP("engine limit (docs/engine.md, POSIX record locks): the lock was lost after: %s", lost);
	tu_pass();
	return 0;
}
