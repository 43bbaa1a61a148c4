/* SPDX-License-Identifier: MIT */
/*
 * Personalities (io_uring_register_personality, sqe->personality):
 *  - ids start at 1 and differ; bad arguments and unknown ids get -EINVAL
 *    (registering with an argument, unregistering an unknown id, an SQE
 *    naming one);
 *  - as root, after seteuid() to an unprivileged user, an openat of a
 *    root-only file fails with -EACCES without a personality and succeeds
 *    with root's, inline, with IOSQE_ASYNC, and at the end of a link;
 *  - a read of an empty pipe with a personality keeps its credentials when
 *    the personality is unregistered while it waits;
 *  - IORING_OP_FIXED_FD_INSTALL refuses a personality (-EPERM);
 *  - once back to root, requests without a personality run as root again
 *    (worker threads included);
 *  - a personality registered by a thread that gave up root entirely (for
 *    itself only) makes a root process's request run without root, and
 *    the process keeps root.
 */
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "op-util.h"

#define NOBODY 65534

static int open_as(struct io_uring *ring, const char *path, int pers,
		   unsigned flags, int link)
{
	struct io_uring_sqe *sqe;
	int n = 1, res;

	if (link) {
		sqe = op_sqe(ring);
		io_uring_prep_nop(sqe);
		sqe->flags |= IOSQE_IO_LINK;
		n = 2;
	}
	sqe = op_sqe(ring);
	io_uring_prep_openat(sqe, AT_FDCWD, path, O_RDONLY, 0);
	sqe->personality = pers;
	sqe->flags |= flags;
	sqe->user_data = 7;
	op_submit(ring, n);
	res = 0;
	for (int i = 0; i < n; i++) {
		struct op_cqe c = op_wait(ring);

		if (c.user_data == 7)
			res = c.res;
	}
	if (res >= 0)
		close(res);
	return res;
}

static void bad_input(struct io_uring *ring, int id)
{
	struct io_uring_sqe *sqe;
	unsigned dummy = 0;

	CHECK_EQ(io_uring_register(ring->ring_fd, IORING_REGISTER_PERSONALITY, &dummy, 0),
		 -EINVAL, "register with an argument");
	CHECK_EQ(io_uring_unregister_personality(ring, id + 100), -EINVAL,
		 "unregister an unknown id");
	sqe = op_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->personality = id + 100;
	CHECK_EQ(op_run1(ring), -EINVAL, "SQE naming an unknown personality");
}

static void fixed_fd_install(struct io_uring *ring, int id)
{
	struct io_uring_sqe *sqe;
	int p[2];

	CHECK(!pipe(p), "pipe");
	CHECK_EQ(io_uring_register_files(ring, p, 1), 0, "register files");
	sqe = op_sqe(ring);
	io_uring_prep_fixed_fd_install(sqe, 0, 0);
	sqe->personality = id;
	CHECK_EQ(op_run1(ring), -EPERM, "FIXED_FD_INSTALL with a personality");
	CHECK_EQ(io_uring_unregister_files(ring), 0, "unregister files");
	close(p[0]);
	close(p[1]);
}

/* A read waiting on a pipe outlives its personality's registration. */
static void unregister_while_waiting(struct io_uring *ring)
{
	int id = io_uring_register_personality(ring), p[2];
	struct io_uring_sqe *sqe;
	struct op_cqe c;
	char buf[4];

	CHECK(id > 0, "register: %d", id);
	CHECK(!pipe(p), "pipe");
	sqe = op_sqe(ring);
	io_uring_prep_read(sqe, p[0], buf, sizeof(buf), 0);
	sqe->personality = id;
	op_submit(ring, 1);
	CHECK_EQ(io_uring_unregister_personality(ring, id), 0, "unregister while in use");
	CHECK_EQ(write(p[1], "abcd", 4), 4, "write");
	c = op_wait(ring);
	CHECK_EQ(c.res, 4, "read after its personality went");
	CHECK(!memcmp(buf, "abcd", 4), "read data");
	close(p[0]);
	close(p[1]);
}

/* Registers a personality from a thread that gave up root for itself only
 * (the raw system calls; glibc's would change every thread). */
static void *register_as_nobody(void *arg)
{
	struct io_uring *ring = arg;
	long id = -1;

	if (syscall(SYS_setresgid, NOBODY, NOBODY, NOBODY) == 0 &&
	    syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY) == 0)
		id = io_uring_register_personality(ring);
	return (void *)id;
}

int main(int argc, char *argv[])
{
	struct io_uring ring;
	const char *path;
	int id, id2, fd;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	id = io_uring_register_personality(&ring);
	if (id == -EINVAL && !tu_on_engine())
		SKIP("the kernel has no personalities");
	CHECK(id >= 1, "first personality id %d", id);
	id2 = io_uring_register_personality(&ring);
	CHECK(id2 >= 1 && id2 != id, "second personality id %d (first %d)", id2, id);
	CHECK_EQ(io_uring_unregister_personality(&ring, id2), 0, "unregister");
	CHECK_EQ(io_uring_unregister_personality(&ring, id2), -EINVAL, "unregister twice");
	bad_input(&ring, id);
	if (op_has(&ring, IORING_OP_FIXED_FD_INSTALL))
		fixed_fd_install(&ring, id);
	unregister_while_waiting(&ring);

	if (geteuid() != 0) {
		tu_lacks("root (to change credentials)");
		io_uring_queue_exit(&ring);
		return tu_done();
	}
	op_mkdtemp();
	path = op_path("root-only");
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0, "create %s", path);
	close(fd);
	/* The scratch directory must let the unprivileged user reach the file. */
	CHECK(!chmod(op_dir, 0755), "chmod");
	CHECK(seteuid(NOBODY) == 0, "seteuid(%d): %s", NOBODY, strerror(errno));
	CHECK_EQ(open_as(&ring, path, 0, 0, 0), -EACCES, "open as nobody");
	CHECK_EQ(open_as(&ring, path, 0, IOSQE_ASYNC, 0), -EACCES, "async open as nobody");
	CHECK(open_as(&ring, path, id, 0, 0) >= 0, "open with root's personality");
	CHECK(open_as(&ring, path, id, IOSQE_ASYNC, 0) >= 0, "async open with root's personality");
	CHECK(open_as(&ring, path, id, 0, 1) >= 0, "linked open with root's personality");
	CHECK_EQ(open_as(&ring, path, 0, IOSQE_ASYNC, 0), -EACCES,
		 "async open as nobody after a personality ran");
	CHECK(seteuid(0) == 0, "seteuid(0)");
	CHECK(open_as(&ring, path, 0, 0, 0) >= 0, "open as root again");
	CHECK(open_as(&ring, path, 0, IOSQE_ASYNC, 0) >= 0, "async open as root again");

	/* Root running a request as a user with no way back to root, and
	 * coming back afterwards. */
	{
		pthread_t t;
		void *ret;
		int nobody;

		CHECK(!pthread_create(&t, NULL, register_as_nobody, &ring), "pthread_create");
		pthread_join(t, &ret);
		nobody = (int)(long)ret;
		CHECK(nobody > 0, "personality registered as nobody: %d", nobody);
		CHECK_EQ(open_as(&ring, path, nobody, 0, 0), -EACCES, "open with nobody's personality");
		CHECK_EQ(open_as(&ring, path, nobody, IOSQE_ASYNC, 0), -EACCES,
			 "async open with nobody's personality");
		CHECK(open_as(&ring, path, 0, IOSQE_ASYNC, 0) >= 0, "async open as root after nobody's");
		CHECK(open_as(&ring, path, 0, 0, 0) >= 0, "open as root after nobody's");
		CHECK_EQ(io_uring_unregister_personality(&ring, nobody), 0, "unregister nobody's");
	}
	CHECK_EQ(io_uring_unregister_personality(&ring, id), 0, "unregister");
	io_uring_queue_exit(&ring);
	return tu_done();
}
