/* SPDX-License-Identifier: MIT */
/*
 * A request runs with the credentials of its submitter even when the
 * program changes its own right after submitting. Here the program takes
 * on uid 65534 with seteuid(), submits an OPENAT that creates a file
 * (IOSQE_ASYNC, so a worker runs it), then returns to root at once, after
 * a pause that varies from try to try so that the change lands at every
 * point of the worker's run. Every file must belong to 65534: on the
 * kernel the request carries the submitter's credentials; on the engine
 * the worker must not let glibc's set*id() broadcast reach it between its
 * credential check and the open (the engine once created 1% of them as
 * root).
 *
 * Then the same behind a run of buffered writes to one file, which one
 * worker runs back to back (io-wq hashes them by inode) with the OPENAT
 * linked to the last: the engine's worker keeps SIGSETXID blocked from
 * request to request there, so the change must still land between two of
 * them, and the OPENAT still create as 65534. No seteuid() may wait long
 * for a busy worker either. Needs root.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "liburing.h"
#include "test-util.h"
#include "op-util.h"

#define TRIES 3000
#define NOBODY 65534
#define RUNS 300
#define WRITES 16

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The streak phase: returns files created by another owner. */
static int behind_writes(struct io_uring *ring, const char *dir)
{
	static char buf[4096];
	char path[64], data[64];
	double slowest = 0;
	int wrong = 0;

	snprintf(data, sizeof(data), "%s/data", dir);
	int fd = open(data, O_CREAT | O_RDWR | O_CLOEXEC, 0666);
	CHECK(fd >= 0, "open %s: %s", data, strerror(errno));
	CHECK(!fchmod(fd, 0666), "fchmod");
	for (int i = 0; i < RUNS; i++) {
		struct io_uring_sqe *sqe;
		struct stat st;
		int created = -1;

		snprintf(path, sizeof(path), "%s/g%d", dir, i);
		CHECK(!seteuid(NOBODY), "seteuid(%d): %s", NOBODY, strerror(errno));
		for (int w = 0; w < WRITES; w++) {
			sqe = op_sqe(ring);
			io_uring_prep_write(sqe, fd, buf, sizeof(buf), (off_t)w * sizeof(buf));
			sqe->flags |= IOSQE_ASYNC | (w == WRITES - 1 ? IOSQE_IO_LINK : 0);
			sqe->user_data = 0;
		}
		sqe = op_sqe(ring);
		io_uring_prep_openat(sqe, AT_FDCWD, path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		sqe->user_data = 1;
		op_submit(ring, WRITES + 1);
		for (volatile int s = 0; s < (i % 32) * 200; s++)
			;
		double t = now();
		CHECK(!seteuid(0), "seteuid(0): %s", strerror(errno));
		t = now() - t;
		slowest = t > slowest ? t : slowest;
		for (int n = 0; n < WRITES + 1; n++) {
			struct op_cqe c = op_wait(ring);

			CHECK(c.res >= 0, "%s: %s", c.user_data ? "openat" : "write", strerror(-c.res));
			if (c.user_data)
				created = c.res;
		}
		CHECK(!fstat(created, &st), "fstat");
		close(created);
		unlink(path);
		wrong += st.st_uid != NOBODY;
	}
	close(fd);
	unlink(data);
	/* One buffered write's time, with room for a loaded machine. */
	CHECK(slowest < 0.5, "seteuid(0) waited %.3f s for the workers", slowest);
	return wrong;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	char dir[] = "/tmp/liburing-rs-setxid.XXXXXX", path[64];
	int wrong = 0;

	(void)argc;
	tu_set_name(argv[0]);
	if (geteuid() != 0)
		SKIP("needs root to change its effective uid");
	CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	CHECK(!chmod(dir, 0777), "chmod: %s", strerror(errno));
	op_ring(&ring, 32, 0);
	for (int i = 0; i < TRIES; i++) {
		struct io_uring_sqe *sqe;
		struct op_cqe c;
		struct stat st;

		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		CHECK(!seteuid(NOBODY), "seteuid(%d): %s", NOBODY, strerror(errno));
		sqe = op_sqe(&ring);
		io_uring_prep_openat(sqe, AT_FDCWD, path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		sqe->flags |= IOSQE_ASYNC;
		op_submit(&ring, 1);
		for (volatile int s = 0; s < (i % 64) * 40; s++)
			;
		CHECK(!seteuid(0), "seteuid(0): %s", strerror(errno));
		c = op_wait(&ring);
		CHECK(c.res >= 0, "openat: %s", strerror(-c.res));
		CHECK(!fstat(c.res, &st), "fstat");
		close(c.res);
		unlink(path);
		wrong += st.st_uid != NOBODY;
	}
	CHECK_EQ(wrong, 0, "files created with another owner than their submitter");
	wrong = behind_writes(&ring, dir);
	CHECK_EQ(wrong, 0, "files created behind writes with another owner than their submitter");
	rmdir(dir);
	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
