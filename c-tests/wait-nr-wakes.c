/* SPDX-License-Identifier: MIT */
/*
 * A thread waiting for N completions sleeps until the N-th: completions
 * posted one at a time by worker threads do not wake it for each (the
 * kernel's CQ wake-up asks io_should_wake the same). A timeout that fires
 * still ends such a wait early, with fewer.
 *
 * The completions are IOSQE_ASYNC opens of FIFOs, which wait on workers
 * until a helper thread opens each FIFO's other end, 3 ms apart. The
 * waiting thread's voluntary context switches (each sleep is one) are
 * counted around io_uring_wait_cqe_nr, once the workers exist. That
 * count is checked on the engine only: Linux 6.18 hands each finished
 * io-wq request to the waiting task to free (task work), which wakes it
 * once per request whatever it waits for.
 */
#include <liburing.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include "test-util.h"

#define N 8

static char fifos[N][64];
static int writers[N];

static void remove_fifos(void)
{
	for (int i = 0; i < N; i++)
		if (fifos[i][0])
			unlink(fifos[i]);
}

/* Opens the writing end of FIFO i once its reader waits. */
static int open_writer(int i)
{
	long long t0 = tu_now_ns();
	int fd;

	while ((fd = open(fifos[i], O_WRONLY | O_NONBLOCK)) < 0) {
		if (errno != ENXIO || tu_now_ns() - t0 > 5000000000LL)
			return -errno;
		usleep(500);
	}
	return fd;
}

static void *open_spaced(void *arg)
{
	int first = *(int *)arg;

	for (int i = first; i < N; i++) {
		usleep(3000);
		writers[i] = open_writer(i);
	}
	return NULL;
}

static long voluntary_switches(void)
{
	long long n = tu_status_value("/proc/thread-self/status", "voluntary_ctxt_switches");

	CHECK(n >= 0, "no voluntary_ctxt_switches in /proc/thread-self/status");
	return (long)n;
}

static void queue_opens(struct io_uring *ring, int first)
{
	for (int i = first; i < N; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		io_uring_prep_openat(sqe, AT_FDCWD, fifos[i], O_RDONLY, 0);
		sqe->flags |= IOSQE_ASYNC;
		sqe->user_data = i;
	}
}

/* Reaps `n` CQEs of opens, checking and closing each fd. */
static void reap_opens(struct io_uring *ring, int n)
{
	for (int i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		CHECK(!io_uring_wait_cqe(ring, &cqe), "wait_cqe");
		CHECK(cqe->user_data < N && cqe->res >= 0, "open %llu: %d", (unsigned long long)cqe->user_data,
		      cqe->res);
		close(cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
}

static void close_writers(int first)
{
	for (int i = first; i < N; i++) {
		CHECK(writers[i] >= 0, "writer %d: %s", i, strerror(-writers[i]));
		close(writers[i]);
	}
}

/* N opens completing 3 ms apart: one wait, few sleeps. */
static void one_wake(struct io_uring *ring, int count)
{
	struct io_uring_cqe *cqe;
	long before, after;
	int first = 0, ret;
	pthread_t t;

	queue_opens(ring, 0);
	CHECK(io_uring_submit(ring) == N, "submit");
	before = voluntary_switches();
	CHECK(!pthread_create(&t, NULL, open_spaced, &first), "pthread_create");
	ret = io_uring_wait_cqe_nr(ring, &cqe, N);
	after = voluntary_switches();
	CHECK(!ret, "wait_cqe_nr: %s", strerror(-ret));
	CHECK(io_uring_cq_ready(ring) == N, "%u CQEs ready after waiting for %d", io_uring_cq_ready(ring), N);
	CHECK(!pthread_join(t, NULL), "pthread_join");
	/* Starting the helper thread may cost a switch; a wake per CQE
	 * would cost eight. */
	if (count && tu_on_engine())
		CHECK(after - before <= 3, "the wait for %d CQEs slept %ld times", N, after - before);
	else if (count)
		printf("%s: the kernel's ring woke the wait for %d CQEs %ld times (its task work)\n", tu_name, N,
		       after - before);
	reap_opens(ring, N);
	close_writers(0);
}

/* A timeout firing ends a wait for N early, as in the kernel. */
static void timeout_ends_wait(struct io_uring *ring)
{
	struct __kernel_timespec ts = { .tv_nsec = 20 * 1000 * 1000 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	long long t0;
	int ret;

	queue_opens(ring, 1);
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = 100;
	t0 = tu_now_ns();
	ret = io_uring_submit_and_wait(ring, N);
	CHECK(ret == N, "submit_and_wait: %d", ret);
	CHECK(tu_now_ns() - t0 < 500000000LL, "a wait for %d CQEs went on %lld ms past a 20 ms timeout", N,
	      (tu_now_ns() - t0) / 1000000);
	CHECK(!io_uring_peek_cqe(ring, &cqe), "no CQE after the wait");
	CHECK(cqe->user_data == 100 && cqe->res == -ETIME, "CQE %llu res %d, wanted the timeout's -ETIME",
	      (unsigned long long)cqe->user_data, cqe->res);
	io_uring_cqe_seen(ring, cqe);
	for (int i = 1; i < N; i++)
		writers[i] = open_writer(i);
	reap_opens(ring, N - 1);
	close_writers(1);
}

int main(int argc, char *argv[])
{
	struct io_uring ring;

	(void)argc;
	tu_set_name(argv[0]);
	atexit(remove_fifos);
	for (int i = 0; i < N; i++) {
		snprintf(fifos[i], sizeof(fifos[i]), "/tmp/wait-nr-%d.%d", (int)getpid(), i);
		CHECK(!mkfifo(fifos[i], 0600), "mkfifo: %s", strerror(errno));
	}
	CHECK(!io_uring_queue_init(4 * N, &ring, 0), "queue_init");
	/* The first round starts the workers (the kernel's io-wq has the
	 * waiting task create them, which wakes it); the second counts. */
	one_wake(&ring, 0);
	one_wake(&ring, 1);
	timeout_ends_wait(&ring);
	io_uring_queue_exit(&ring);
	return tu_done();
}
