/* SPDX-License-Identifier: MIT */
/*
 * The userspace engine's life cycle and waits:
 *  - 10,000 init/exit cycles with work in flight (a NOP, an armed poll, an
 *    armed timeout, a queued worker op) leak no fd, thread or mapping;
 *  - the worker cap (IORING_REGISTER_IOWQ_MAX_WORKERS) holds, a queued
 *    request cancels with -ECANCELED and a running one answers -EALREADY;
 *  - a forked child takes an inherited ring over: its NOP completes there,
 *    its teardown leaves the parent's armed poll alone, and its own rings
 *    work; after io_uring_ring_dontfork a mapped ring still answers there
 *    (the engine's own mapping came along), while a NO_MMAP ring, whose
 *    only memory was kept from the child, answers -EBADFD to every call
 *    and none hangs (a process that died holding the shared CQ lock:
 *    fork-lock.c);
 *  - waits honour a signal mask (-EINTR), a minimum wait and a timeout;
 *  - an idle ring leaves every engine thread asleep.
 */
#define LIBURING_RS_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "liburing.h"
#include "test-util.h"
#include "reap-util.h"

static int count_threads(void)
{
	int n = tu_count_threads();

	CHECK(n >= 0, "opendir /proc/self/task");
	return n;
}

static int state_running(const char *stat)
{
	const char *p = strrchr(stat, ')');

	return p && p[1] && p[2] == 'R';
}

/* Threads other than this one that are running (state R). */
static int running_threads(void)
{
	return tu_count_tasks("stat", state_running, gettid());
}

/* Waits up to 3 s for the thread count to drop to `want`. */
static int threads_settle(int want)
{
	long long t0 = tu_now_ns();
	int n;

	while ((n = count_threads()) != want && tu_now_ns() - t0 < 3000000000LL)
		usleep(1000);
	return n;
}

static void user_ring(struct io_uring *ring, unsigned entries, unsigned flags)
{
	CHECK_EQ(io_uring_queue_init(entries, ring, flags), 0, "engine ring setup");
	CHECK_EQ(liburing_rs_ring_engine(ring), LIBURING_RS_ENGINE_USER, "engine");
}

static struct io_uring_sqe *sqe_of(struct io_uring *ring, __u64 ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK(sqe, "no SQE");
	io_uring_sqe_set_data64(sqe, ud);
	return sqe;
}

static void test_cycles(void)
{
	static struct __kernel_timespec ten_s = { .tv_sec = 10 };
	int fds0 = 0, maps0 = 0, threads0 = 0, p[2];
	char path[64];
	int file = tu_temp_file(path, sizeof(path));

	/* Emulated guests (scripts/test-kernels.sh) run 1,000 cycles. */
	int cycles = getenv("LIBURING_RS_TEST_EMULATED") ? 1000 : 10000;

	CHECK(pipe(p) == 0, "pipe");
	/* Baselines once thread stacks (which the C library caches for
	 * reuse) are in place: a warm-up that runs a worker and the reactor. */
	for (int i = 0; i < 200 + cycles; i++) {
		if (i == 200) {
			threads0 = threads_settle(1);
			fds0 = tu_count_fds();
			maps0 = tu_count_maps();
		}
		struct io_uring ring;
		struct io_uring_cqe *cqe;

		user_ring(&ring, 8, 0);
		io_uring_prep_nop(sqe_of(&ring, 1));
		io_uring_prep_poll_add(sqe_of(&ring, 2), p[0], POLLIN);
		io_uring_prep_timeout(sqe_of(&ring, 3), &ten_s, 0, 0);
		if (i % 100 == 0)
			io_uring_prep_fsync(sqe_of(&ring, 4), file, 0);
		CHECK(io_uring_submit(&ring) >= 3, "submit");
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "NOP");
		io_uring_queue_exit(&ring);
	}
	/* The reactor leaves on its own once the last ring is gone. */
	CHECK_EQ(threads_settle(threads0), threads0, "threads after 10,000 init/exit cycles");
	CHECK_EQ(tu_count_fds(), fds0, "fds after 10,000 init/exit cycles");
#ifndef __SANITIZE_ADDRESS__
	/* AddressSanitizer keeps state of its own for every thread that ran.
	 * Without it, the thread stacks the C library keeps for reuse still
	 * come and go with the timing of worker and reactor exits (a stack
	 * and its guard page are two lines): a few lines either way, where a
	 * leak would add some for each of the 10,000 cycles. */
	int maps = tu_settled_maps(maps0);

	CHECK(maps >= maps0 - 4 && maps <= maps0 + 4,
	      "mappings after 10,000 init/exit cycles: %d, before %d", maps, maps0);
#else
	(void)maps0;
#endif
	close(p[0]);
	close(p[1]);
	close(file);
	unlink(path);
}

/* A FIFO opened for writing with O_CREAT runs on a worker and blocks there
 * until someone opens the FIFO for reading. */
static void blocking_open(struct io_uring *ring, const char *fifo, __u64 ud)
{
	io_uring_prep_openat(sqe_of(ring, ud), AT_FDCWD, fifo, O_WRONLY | O_CREAT, 0600);
}

static void test_workers(void)
{
	struct io_uring_cqe cqes[4];
	struct io_uring ring;
	unsigned vals[2] = { 1, 0 };
	char fifo[64];
	int threads0 = threads_settle(1), rfd, n;

	snprintf(fifo, sizeof(fifo), "/tmp/liburing-rs-fifo.%d", getpid());
	tu_register_cleanup(fifo);
	CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
	user_ring(&ring, 8, 0);
	CHECK_EQ(io_uring_register_iowq_max_workers(&ring, vals), 0, "max workers");
	CHECK(vals[0] >= 1, "previous bounded cap");
	blocking_open(&ring, fifo, 1);
	blocking_open(&ring, fifo, 2);
	CHECK_EQ(io_uring_submit(&ring), 2, "submit");
	usleep(100000);
	/* One worker runs the first open, the second waits in the queue. The
	 * running one is too late to take back (-EALREADY), but its worker is
	 * interrupted, as the kernel's io-wq does: the open ends with the
	 * kernel's -ERESTARTSYS (512). */
	io_uring_prep_cancel64(sqe_of(&ring, 10), 2, 0);
	io_uring_prep_cancel64(sqe_of(&ring, 11), 1, 0);
	CHECK_EQ(io_uring_submit(&ring), 2, "submit cancels");
	n = tu_reap(&ring, cqes, 4);
	CHECK_EQ(n, 4, "CQEs of two cancels and two cancelled opens");
	for (int i = 0; i < n; i++) {
		switch (cqes[i].user_data) {
		case 1: CHECK_EQ(cqes[i].res, -512, "interrupted open"); break;
		case 2: CHECK_EQ(cqes[i].res, -ECANCELED, "queued open"); break;
		case 10: CHECK_EQ(cqes[i].res, 0, "cancel of the queued open"); break;
		case 11: CHECK_EQ(cqes[i].res, -EALREADY, "cancel of the running open"); break;
		default: FAIL("unexpected CQE %llu", (unsigned long long)cqes[i].user_data);
		}
	}
	/* Beside the one worker: the reactor and the thread that starts workers. */
	CHECK(count_threads() <= threads0 + 3, "more than one worker with a cap of 1");
	/* The worker is free again: an open that finds its reader completes. */
	blocking_open(&ring, fifo, 3);
	CHECK_EQ(io_uring_submit(&ring), 1, "submit");
	rfd = open(fifo, O_RDONLY);
	CHECK(rfd >= 0, "open FIFO for reading");
	CHECK_EQ(tu_reap(&ring, cqes, 1), 1, "the open completes");
	CHECK(cqes[0].user_data == 3 && cqes[0].res >= 0, "open result %d", cqes[0].res);
	close(cqes[0].res);
	close(rfd);
	vals[0] = 0;
	vals[1] = 0;
	CHECK_EQ(io_uring_register_iowq_max_workers(&ring, vals), 0, "read caps");
	CHECK_EQ(vals[0], 1, "bounded cap kept");
	io_uring_queue_exit(&ring);
	unlink(fifo);
	tu_unregister_cleanup(fifo);
	CHECK_EQ(threads_settle(threads0), threads0, "threads after the last ring");
}

static void test_fork(void)
{
	struct io_uring ring, kept, gone;
	struct io_uring_cqe *cqe;
	int st, p[2];
	pid_t pid;

	CHECK(pipe(p) == 0, "pipe");
	user_ring(&ring, 8, 0);
	user_ring(&kept, 8, 0);
	CHECK_EQ(io_uring_ring_dontfork(&kept), 0, "io_uring_ring_dontfork");
	user_ring(&gone, 8, IORING_SETUP_NO_MMAP);
	CHECK_EQ(io_uring_ring_dontfork(&gone), 0, "io_uring_ring_dontfork (NO_MMAP)");
	io_uring_prep_poll_add(sqe_of(&ring, 1), p[0], POLLIN);
	CHECK_EQ(io_uring_submit(&ring), 1, "armed poll");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct io_uring mine;
		unsigned vals[2] = { 0, 0 };

		alarm(10);
		CHECK_EQ(liburing_rs_ring_engine(&ring), LIBURING_RS_ENGINE_USER, "engine of an inherited ring");
		io_uring_prep_nop(sqe_of(&ring, 2));
		CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "NOP on an inherited ring");
		CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "inherited ring's CQE");
		CHECK(cqe->user_data == 2 && cqe->res == 0, "child's NOP");
		io_uring_cqe_seen(&ring, cqe);
		io_uring_queue_exit(&ring);

		/* Only calls that leave the (unmapped) ring memory alone. */
		CHECK_EQ(liburing_rs_ring_engine(&kept), LIBURING_RS_ENGINE_USER, "engine of a dontfork ring");
		CHECK_EQ(io_uring_get_events(&kept), 0, "get_events on a dontfork ring");
		io_uring_queue_exit(&kept);
		CHECK_EQ(liburing_rs_ring_engine(&gone), -EBADFD, "engine of a ring kept from the child");
		CHECK_EQ(io_uring_get_events(&gone), -EBADFD, "get_events on a ring kept from the child");
		CHECK_EQ(io_uring_register_iowq_max_workers(&gone, vals), -EBADFD,
			 "register on a ring kept from the child");
		io_uring_queue_exit(&gone);
		/* The child's own rings work, workers and reactor included. */
		user_ring(&mine, 8, 0);
		struct io_uring_sqe *sqe = sqe_of(&mine, 5);

		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 5);
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
		CHECK_EQ(io_uring_submit_and_wait(&mine, 1), 1, "child submit");
		CHECK_EQ(io_uring_peek_cqe(&mine, &cqe), 0, "child CQE");
		CHECK(cqe->user_data == 5 && cqe->res == 0, "child NOP");
		io_uring_queue_exit(&mine);
		exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed (status %#x)", st);
	/* The parent's ring is untouched: its poll still fires. */
	CHECK(write(p[1], "x", 1) == 1, "write");
	CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "parent CQE");
	CHECK(cqe->user_data == 1 && (cqe->res & POLLIN), "parent poll");
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	io_uring_queue_exit(&kept);
	io_uring_queue_exit(&gone);
	close(p[0]);
	close(p[1]);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void *kick(void *arg)
{
	usleep(50000);
	pthread_kill(*(pthread_t *)arg, SIGUSR1);
	return NULL;
}

/* Waits: signal mask, minimum wait, timeout. Run on both engines. */
static void test_waits(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_sec = 5 }, short_ts = { .tv_nsec = 30000000 };
	struct io_uring_cqe *cqe;
	sigset_t block, unblock;
	pthread_t self = pthread_self(), t;
	long long t0;

	signal(SIGUSR1, on_usr1);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	sigemptyset(&unblock);

	/* A signal pending before the wait interrupts it at once. */
	raise(SIGUSR1);
	CHECK_EQ(io_uring_wait_cqes(ring, &cqe, 1, &ts, &unblock), -EINTR, "pending signal");
	/* One arriving during the wait too. */
	pthread_create(&t, NULL, kick, &self);
	t0 = tu_now_ns();
	CHECK_EQ(io_uring_wait_cqes(ring, &cqe, 1, &ts, &unblock), -EINTR, "signal during the wait");
	CHECK(tu_now_ns() - t0 < 2000000000LL, "EINTR came late");
	pthread_join(t, NULL);
	/* Blocked by the mask: no EINTR, the timeout ends the wait. */
	raise(SIGUSR1);
	CHECK_EQ(io_uring_wait_cqes(ring, &cqe, 1, &short_ts, &block), -ETIME, "masked signal");
	pthread_sigmask(SIG_UNBLOCK, &block, NULL);

	/* Minimum wait: one CQE of the two asked for is enough after it. */
	io_uring_prep_nop(sqe_of(ring, 7));
	CHECK_EQ(io_uring_submit(ring), 1, "submit");
	t0 = tu_now_ns();
	CHECK_EQ(io_uring_wait_cqes_min_timeout(ring, &cqe, 2, &ts, 20000, NULL), 0, "min timeout");
	CHECK(tu_now_ns() - t0 < 1000000000LL, "min timeout waited for the full timeout");
	io_uring_cqe_seen(ring, cqe);
}

int main(int argc, char **argv)
{
	struct io_uring ring;

	(void)argc;
	tu_set_name(argv[0]);
	/* The C library keeps the stacks of exited threads for reuse and
	 * gives threads malloc arenas of their own as they appear, which
	 * would blur the mapping count: run without either. */
	if (!getenv("GLIBC_TUNABLES")) {
		setenv("GLIBC_TUNABLES", "glibc.pthread.stack_cache_size=0:glibc.malloc.arena_max=1", 1);
		execv("/proc/self/exe", argv);
		FAIL("re-exec: %s", strerror(errno));
	}
	if (io_uring_queue_init(4, &ring, 0) == 0) {
		if (liburing_rs_ring_engine(&ring) != LIBURING_RS_ENGINE_KERNEL)
			;
		else if (!(ring.features & IORING_FEAT_MIN_TIMEOUT))
			tu_lacks("IORING_FEAT_MIN_TIMEOUT");
		else
			test_waits(&ring);
		io_uring_queue_exit(&ring);
	}
	setenv("LIBURING_RS_ENGINE", "user", 1);
	user_ring(&ring, 4, 0);
	test_waits(&ring);
	usleep(20000);
	CHECK_EQ(running_threads(), 0, "engine threads running on an idle ring");
	io_uring_queue_exit(&ring);
	test_fork();
	test_workers();
	test_cycles();
	/* What the kernel ring lacked, named as the kernel's. */
	unsetenv("LIBURING_RS_ENGINE");
	return tu_done();
}
