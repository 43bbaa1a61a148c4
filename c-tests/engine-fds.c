/* SPDX-License-Identifier: MIT */
/*
 * A ring never reads or writes a file that is not its own:
 *  - IORING_REGISTER_EVENTFD(_ASYNC) refuses a regular file and a pipe with
 *    -EINVAL and a closed fd with -EBADF, as the kernel does, and NOPs
 *    leave the file and the pipe untouched;
 *  - the ring fd closed with close(2) and its number reused for a file,
 *    with a timeout pending: the timeout's CQE still shows in the mapped
 *    CQ (the kernel ring lives on through the mapping), the file is
 *    neither written nor read, calls that wait or register through the
 *    number answer -EOPNOTSUPP (a closed number: -EBADF) and so do all
 *    calls after them, and exiting the ring leaves the file alone; a
 *    ring registered beforehand goes on working through its index;
 *  - close_range(3, ~0U, 0) under rings with timeouts, a pending pipe
 *    read and a registered eventfd, then files opened at the freed
 *    numbers: none is written or read, nothing hangs, and the rings exit;
 *    Afterwards a new ring works, and a thread that was asleep in a wait
 *    wakes (engine: the ring died, -EBADF; kernel: the pipe read's EOF);
 *    a ring made before the old one noticed works too;
 *  - unregistering an eventfd while a multishot timeout keeps posting,
 *    then reusing the eventfd's numbers (the program's, and any the
 *    library took for it) for a file: the file is never written.
 *  - direct descriptors take no number of the program's and are never
 *    inherited across exec.
 */
#include <liburing.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include "test-util.h"

#define MAX_FDS 4096

/* A file with no name: its fd, for checking, is kept at a high number. */
static int anon_file(void)
{
	char path[64];
	int fd = tu_temp_file(path, sizeof(path));

	unlink(path);
	tu_unregister_cleanup(path);
	return fd;
}

/* The file `ref` refers to was never written, nor read from its start. */
static void untouched(int ref, const char *what)
{
	struct stat st;

	CHECK(fstat(ref, &st) == 0, "%s: fstat: %s", what, strerror(errno));
	CHECK_EQ(st.st_size, 0, what);
	CHECK_EQ(lseek(ref, 0, SEEK_CUR), 0, what);
}

/* Puts a fresh file at number `at`; returns a reference fd to it. */
static int file_at(int at)
{
	int f = anon_file();

	if (f != at) {
		CHECK(dup2(f, at) == at, "dup2: %s", strerror(errno));
		close(f);
	}
	f = fcntl(at, F_DUPFD_CLOEXEC, 200);
	CHECK(f >= 0, "dup: %s", strerror(errno));
	return f;
}

static void submit_timeout(struct io_uring *ring, long long ns,
			   unsigned long long ud)
{
	static struct __kernel_timespec ts[8];
	static unsigned n;
	struct __kernel_timespec *t = &ts[n++ % 8];
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK(sqe, "no sqe");
	t->tv_sec = ns / 1000000000LL;
	t->tv_nsec = ns % 1000000000LL;
	io_uring_prep_timeout(sqe, t, 0, 0);
	sqe->user_data = ud;
	CHECK_EQ(io_uring_submit(ring), 1, "submit timeout");
}

static void nops(struct io_uring *ring, unsigned n, const char *what)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		CHECK(sqe, "%s: no sqe", what);
		io_uring_prep_nop(sqe);
	}
	CHECK_EQ(io_uring_submit_and_wait(ring, n), n, what);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, what);
		CHECK_EQ(cqe->res, 0, what);
		io_uring_cqe_seen(ring, cqe);
	}
}

static void test_register_not_eventfd(void)
{
	struct io_uring ring;
	int p[2], f = anon_file(), closed, efd;
	char c;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "init");
	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	closed = dup(f);
	close(closed);

	CHECK_EQ(io_uring_register_eventfd(&ring, f), -EINVAL, "file");
	CHECK_EQ(io_uring_register_eventfd_async(&ring, f), -EINVAL,
		 "file, async");
	CHECK_EQ(io_uring_register_eventfd(&ring, p[0]), -EINVAL, "pipe read");
	CHECK_EQ(io_uring_register_eventfd(&ring, p[1]), -EINVAL, "pipe write");
	CHECK_EQ(io_uring_register_eventfd(&ring, closed), -EBADF, "closed");
	CHECK_EQ(io_uring_register_eventfd(&ring, -1), -EBADF, "-1");
	/* Nothing was registered. */
	CHECK_EQ(io_uring_unregister_eventfd(&ring), -ENXIO, "unregister");
	nops(&ring, 4, "nops");
	untouched(f, "file");
	CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0, "nonblock");
	CHECK(read(p[0], &c, 1) < 0 && errno == EAGAIN, "pipe was written");

	/* An eventfd still works, and counts the NOPs' notification. */
	efd = eventfd(0, EFD_NONBLOCK);
	CHECK_EQ(io_uring_register_eventfd(&ring, efd), 0, "eventfd");
	CHECK_EQ(io_uring_register_eventfd(&ring, efd), -EBUSY, "again");
	CHECK_EQ(io_uring_register_eventfd(&ring, f), -EBUSY, "busy, file");
	nops(&ring, 1, "nops, eventfd");
	eventfd_t v = 0;
	CHECK(eventfd_read(efd, &v) == 0 && v >= 1, "eventfd not signalled");
	CHECK_EQ(io_uring_unregister_eventfd(&ring), 0, "unregister");
	io_uring_queue_exit(&ring);
	close(efd);
	close(p[0]);
	close(p[1]);
	close(f);
}

/*
 * The ring fd closed behind liburing's back, its number reused for a file
 * (or left closed, `reuse` 0), a timeout pending.
 */
/*
 * As above, with the ring registered first: calls go through the
 * registered index, which holds the ring as the kernel's reference does,
 * so the ring goes on working and the file stays untouched.
 */
static void test_ring_fd_reused_registered(void)
{
	const char *what = "reused ring fd, registered ring";
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int ref, fd, ret;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, what);
	ret = io_uring_register_ring_fd(&ring);
	if (ret == -EINVAL) {
		tu_lacks("IORING_REGISTER_RING_FDS");
		io_uring_queue_exit(&ring);
		return;
	}
	CHECK_EQ(ret, 1, what);
	fd = ring.ring_fd;
	submit_timeout(&ring, 50000000, 7);
	CHECK(close(fd) == 0, "%s: close: %s", what, strerror(errno));
	ref = file_at(fd);
	CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, what);
	CHECK(cqe->user_data == 7 && cqe->res == -ETIME,
	      "%s: cqe %llu res %d", what, (unsigned long long)cqe->user_data,
	      cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	nops(&ring, 4, what);
	/* Registration goes through the index too, where the ring says so. */
	if (ring.features & IORING_FEAT_REG_REG_RING)
		CHECK_EQ(io_uring_register_files_sparse(&ring, 2), 0, what);
	else
		tu_lacks("IORING_FEAT_REG_REG_RING");
	untouched(ref, what);
	io_uring_queue_exit(&ring);
	untouched(ref, what);
	close(fd);
	close(ref);
}

static void test_ring_fd_reused(int reuse)
{
	const char *what = reuse ? "reused ring fd" : "closed ring fd";
	int want = reuse ? -EOPNOTSUPP : -EBADF;
	struct __kernel_timespec ts = { .tv_nsec = 10000000 };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int ref = -1, fd;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, what);
	fd = ring.ring_fd;
	submit_timeout(&ring, 50000000, 7);
	CHECK(close(fd) == 0, "%s: close: %s", what, strerror(errno));
	if (reuse)
		ref = file_at(fd);
	usleep(150000);

	/* The timeout's CQE is in the mapped CQ, as on the kernel. */
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, what);
	CHECK(cqe->user_data == 7 && cqe->res == -ETIME,
	      "%s: cqe %llu res %d", what, (unsigned long long)cqe->user_data,
	      cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	if (reuse)
		untouched(ref, what);

	/* A wait with nothing to reap, and registration, find the fd gone. */
	CHECK_EQ(io_uring_wait_cqe_timeout(&ring, &cqe, &ts), want, what);
	CHECK_EQ(io_uring_register_files_sparse(&ring, 2), want, what);
	/* From then on every call does. */
	CHECK(io_uring_get_sqe(&ring), "%s: no sqe", what);
	CHECK_EQ(io_uring_submit(&ring), want, what);
	CHECK_EQ(io_uring_get_events(&ring), want, what);
	if (reuse)
		untouched(ref, what);
	io_uring_queue_exit(&ring);
	if (reuse) {
		untouched(ref, what);
		close(fd);
		close(ref);
	}
}

/* The fds open now, from 3 on: fills `open` (by number), returns the top. */
static int open_fds(unsigned char *open)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int top = 2, self;

	if (!d)
		return -1;
	self = dirfd(d);
	memset(open, 0, MAX_FDS);
	while ((e = readdir(d))) {
		int n = atoi(e->d_name);

		if (e->d_name[0] == '.' || n < 3 || n == self || n >= MAX_FDS)
			continue;
		open[n] = 1;
		top = n > top ? n : top;
	}
	closedir(d);
	return top;
}

static void test_close_range(void)
{
	static unsigned char was_open[MAX_FDS];
	struct io_uring ring[2];
	int p[2], efd, refs[64], nrefs = 0;
	struct io_uring_sqe *sqe;
	char buf[8];

	for (int i = 0; i < 2; i++)
		CHECK_EQ(io_uring_queue_init(8, &ring[i], 0), 0, "init");
	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	efd = eventfd(0, EFD_NONBLOCK);
	CHECK_EQ(io_uring_register_eventfd(&ring[1], efd), 0, "eventfd");
	/* A pending read on the pipe, timeouts on both rings. */
	sqe = io_uring_get_sqe(&ring[0]);
	io_uring_prep_read(sqe, p[0], buf, sizeof(buf), 0);
	sqe->user_data = 1;
	CHECK_EQ(io_uring_submit(&ring[0]), 1, "read");
	submit_timeout(&ring[0], 50000000, 2);
	submit_timeout(&ring[1], 50000000, 3);
	submit_timeout(&ring[1], 120000000, 4);
	if (open_fds(was_open) < 0)
		SKIP("no /proc/self/fd");

	/* Close every fd from 3 on (references to the new files live from 200 on). */
	if (syscall(__NR_close_range, 3U, ~0U, 0) != 0)
		SKIP("close_range: %s", strerror(errno));
	/* Files at the lowest numbers freed, as a program's opens get them. */
	for (int n = 3; n < MAX_FDS && nrefs < 32; n++)
		if (was_open[n])
			refs[nrefs++] = file_at(n);
	usleep(200000);
	for (int i = 0; i < nrefs; i++)
		untouched(refs[i], "file at a freed number");
	/* The CQEs made it to the mapped CQs, whatever the calls now answer. */
	for (int i = 0; i < 2; i++) {
		struct io_uring_cqe *cqe;

		while (io_uring_peek_cqe(&ring[i], &cqe) == 0) {
			/* The read sees the pipe's end closed (kernel). */
			CHECK((cqe->user_data >= 2 && cqe->res == -ETIME) ||
			      (cqe->user_data == 1 && cqe->res == 0),
			      "ring %d: cqe %llu res %d", i,
			      (unsigned long long)cqe->user_data, cqe->res);
			io_uring_cqe_seen(&ring[i], cqe);
		}
		struct __kernel_timespec ts = { .tv_nsec = 1000000 };
		int ret = io_uring_wait_cqe_timeout(&ring[i], &cqe, &ts);
		/* Kernel: the number now holds a file; engine: a dead ring. */
		CHECK_EQ(ret, tu_on_engine() ? -EBADF : -EOPNOTSUPP, "wait");
	}
	for (int i = 0; i < 2; i++)
		io_uring_queue_exit(&ring[i]);
	for (int i = 0; i < nrefs; i++) {
		untouched(refs[i], "file at a freed number, after exit");
		close(refs[i]);
	}
	/* The engine's own numbers: whatever it still holds goes with exit. */
	for (int n = 3; n < MAX_FDS; n++)
		close(n);
}

static void test_unregister_race(void)
{
	static unsigned char before[MAX_FDS], after[MAX_FDS];
	struct __kernel_timespec ts = { .tv_nsec = 20000 };
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int rounds = 200;

	CHECK_EQ(io_uring_queue_init(64, &ring, 0), 0, "init");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_timeout(sqe, &ts, 0, IORING_TIMEOUT_MULTISHOT);
	sqe->user_data = 9;
	CHECK_EQ(io_uring_submit(&ring), 1, "multishot timeout");
	for (int r = 0; r < rounds; r++) {
		int efd = eventfd(0, EFD_NONBLOCK), refs[8], nrefs = 0;
		struct io_uring_cqe *cqe;

		CHECK(efd >= 0, "eventfd: %s", strerror(errno));
		if (open_fds(before) < 0)
			SKIP("no /proc/self/fd");
		CHECK_EQ(io_uring_register_eventfd(&ring, efd), 0, "register");
		open_fds(after);
		usleep(r % 4 * 50);
		CHECK_EQ(io_uring_unregister_eventfd(&ring), 0, "unregister");
		/* Its numbers now hold files: the program's and any new one. */
		close(efd);
		refs[nrefs++] = file_at(efd);
		for (int n = 3; n < MAX_FDS && nrefs < 8; n++)
			if (after[n] && !before[n] && n != efd) {
				if (fcntl(n, F_GETFD) >= 0)
					FAIL("fd %d still open after unregister",
					     n);
				refs[nrefs++] = file_at(n);
			}
		usleep(300);
		for (int i = 0; i < nrefs; i++) {
			untouched(refs[i], "file at the eventfd's number");
			close(refs[i]);
		}
		close(efd);
		for (int n = 3; n < MAX_FDS; n++)
			if (after[n] && !before[n] && n != efd)
				close(n);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			CHECK(cqe->user_data == 9, "cqe %llu",
			      (unsigned long long)cqe->user_data);
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	io_uring_queue_exit(&ring);
}

static struct io_uring waiter_ring;

static void *wait_thread(void *arg)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe(&waiter_ring, &cqe);

	*(int *)arg = ret ? ret : cqe->res;
	return NULL;
}

/*
 * After close_range: a new ring works (its timeout fires), and a thread
 * asleep on a ring with a pending pipe read when close_range comes wakes:
 * with the read's end of file on the kernel (the pipe's write end went),
 * with -EBADF on the engine (the ring died), within a second or so.
 */
static void test_after_close_range(void)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	long long start;
	int p[2], res = 1;
	pthread_t t;
	char buf[8];

	CHECK_EQ(io_uring_queue_init(8, &waiter_ring, 0), 0, "init");
	submit_timeout(&waiter_ring, 10000000, 5);
	CHECK_EQ(io_uring_wait_cqe(&waiter_ring, &cqe), 0, "new ring");
	CHECK(cqe->user_data == 5 && cqe->res == -ETIME, "new ring: res %d",
	      cqe->res);
	io_uring_cqe_seen(&waiter_ring, cqe);

	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	sqe = io_uring_get_sqe(&waiter_ring);
	io_uring_prep_read(sqe, p[0], buf, sizeof(buf), 0);
	CHECK_EQ(io_uring_submit(&waiter_ring), 1, "read");
	CHECK(pthread_create(&t, NULL, wait_thread, &res) == 0, "thread");
	usleep(50000);
	start = tu_now_ns();
	syscall(__NR_close_range, 3U, ~0U, 0);
	for (int i = 0; i < 8; i++)
		anon_file();
	pthread_join(t, NULL);
	CHECK_EQ(res, tu_on_engine() ? -EBADF : 0, "asleep at close_range");
	CHECK(tu_now_ns() - start < 3000000000LL, "woke after %lld ms",
	      (tu_now_ns() - start) / 1000000);
	io_uring_queue_exit(&waiter_ring);
}

/* One byte through a pipe read on `ring`, with the read waiting first. */
static void pipe_read(struct io_uring *ring, const char *what)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int p[2];
	char c = 'x', buf[4];

	CHECK(pipe(p) == 0, "%s: pipe: %s", what, strerror(errno));
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, p[0], buf, sizeof(buf), 0);
	sqe->user_data = 11;
	CHECK_EQ(io_uring_submit(ring), 1, what);
	usleep(10000);
	CHECK(write(p[1], &c, 1) == 1, "%s: write", what);
	CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, what);
	CHECK(cqe->user_data == 11 && cqe->res == 1, "%s: read res %d", what,
	      cqe->res);
	io_uring_cqe_seen(ring, cqe);
	close(p[0]);
	close(p[1]);
}

/*
 * A ring made right after close_range, while an older ring with pending
 * requests has not noticed yet, gets fds of its own and works; the old
 * one's files stay untouched.
 */
static void test_new_ring_after_close_range(void)
{
	struct __kernel_timespec ts = { .tv_nsec = 1000000 };
	struct io_uring old, ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int p[2], refs[16], nrefs = 0;
	char buf[8];

	CHECK_EQ(io_uring_queue_init(8, &old, 0), 0, "init");
	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	sqe = io_uring_get_sqe(&old);
	io_uring_prep_read(sqe, p[0], buf, sizeof(buf), 0);
	CHECK_EQ(io_uring_submit(&old), 1, "read");
	submit_timeout(&old, 50000000, 2);
	syscall(__NR_close_range, 3U, ~0U, 0);
	for (int n = 3; n < 3 + 16; n++)
		refs[nrefs++] = file_at(n);

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "new ring");
	submit_timeout(&ring, 10000000, 5);
	CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "new ring");
	CHECK(cqe->user_data == 5 && cqe->res == -ETIME, "new ring: res %d",
	      cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	pipe_read(&ring, "new ring");
	usleep(100000);
	pipe_read(&ring, "new ring, later");
	for (int i = 0; i < nrefs; i++)
		untouched(refs[i], "file at a freed number");
	/* Its timeout (and, on the kernel, its read's end of file) posted. */
	while (io_uring_peek_cqe(&old, &cqe) == 0) {
		CHECK((cqe->user_data == 2 && cqe->res == -ETIME) ||
		      cqe->res == 0, "old ring: cqe %llu res %d",
		      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(&old, cqe);
	}
	CHECK_EQ(io_uring_wait_cqe_timeout(&old, &cqe, &ts),
		 tu_on_engine() ? -EBADF : -EOPNOTSUPP, "old ring");
	io_uring_queue_exit(&ring);
	io_uring_queue_exit(&old);
	for (int i = 0; i < nrefs; i++) {
		untouched(refs[i], "file at a freed number, after exit");
		close(refs[i]);
	}
	for (int n = 3; n < MAX_FDS; n++)
		close(n);
}

/* The lowest number open(2) hands out now. */
static int lowest_free(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0, "open: %s", strerror(errno));
	close(fd);
	return fd;
}

/*
 * Direct descriptors (an open, a socket and a pipe into the fixed table)
 * take no number of the program's: the next open(2) gets the number it
 * would have got, and whatever stands for them is close-on-exec, so no
 * exec'd program inherits it.
 */
static void test_direct_out_of_table(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	char path[64];
	int fd = tu_temp_file(path, sizeof(path));
	int low, n, cloexec, pipe_fds[2];
	struct io_uring_sqe *sqe;

	close(fd);
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK_EQ(io_uring_register_files_sparse(&ring, 8), 0, "register_files_sparse");
	low = lowest_free();
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat_direct(sqe, AT_FDCWD, path, O_RDWR, 0, 0);
	sqe->user_data = 0;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_socket_direct(sqe, AF_UNIX, SOCK_STREAM, 0, 1, 0);
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_pipe_direct(sqe, pipe_fds, 0, 2);
	sqe->user_data = 2;
	CHECK_EQ(io_uring_submit(&ring), 3, "submit");
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait_cqe");
		/* PIPE came in 6.16: -EINVAL before it. */
		CHECK(cqe->res == 0 || (cqe->user_data == 2 && cqe->res == -EINVAL), "direct op %llu: %d",
		      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK_EQ(lowest_free(), low, "lowest free number after direct opens");
	n = tu_fds_naming(path, &cloexec);
	CHECK_EQ(cloexec, n, "close-on-exec fds on the directly opened file");
	io_uring_queue_exit(&ring);
	CHECK_EQ(tu_fds_naming(path, &cloexec), 0, "fds on the file after the ring exited");
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	test_register_not_eventfd();
	test_ring_fd_reused(1);
	test_ring_fd_reused(0);
	test_ring_fd_reused_registered();
	test_unregister_race();
	test_direct_out_of_table();
	/* Last: they close every fd the test has. */
	test_close_range();
	test_after_close_range();
	test_new_ring_after_close_range();
	return tu_done();
}
