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
 * root). Needs root.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "liburing.h"
#include "test-util.h"
#include "op-util.h"

#define TRIES 3000
#define NOBODY 65534

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
	op_ring(&ring, 8, 0);
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
	rmdir(dir);
	io_uring_queue_exit(&ring);
	CHECK_EQ(wrong, 0, "files created with another owner than their submitter");
	tu_pass();
	return 0;
}
