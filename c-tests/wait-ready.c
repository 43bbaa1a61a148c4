/* SPDX-License-Identifier: MIT */
/*
 * Waiting for requests that wait on file readiness (reads of pipes and
 * sockets that would block), as a thread in io_uring_wait_cqe* sees it:
 *  - a signal whose handler runs ends the wait with -EINTR, and one that
 *    the wait's mask blocks does not;
 *  - a completion still arrives while nobody waits: after a wait ends, a
 *    read that becomes ready shows up in the CQ (and makes the ring fd
 *    readable) without another call into the library;
 *  - two threads waiting on one ring at once both get their completions,
 *    round after round;
 *  - a kernel ring's task work in the same thread does not end an engine
 *    ring's wait early;
 *  - a thread that enters over and over without ever sleeping (its CQEs
 *    always ready) does not keep a ready read from completing;
 *  - wait timeouts are read as the kernel reads them: a tv_nsec of a
 *    second or more adds up, and a negative time has already passed.
 * The engine serves readiness from the waiting thread itself, and from its
 * reactor when nobody waits; the kernel ring is the reference.
 */
#define LIBURING_RS_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include "liburing.h"
#include "test-util.h"

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled = 1;
}

struct delayed {
	pthread_t target;
	int fd;
	long long delay_ns;
};

/* After the delay: signals the target thread, or writes a byte to fd. */
static void *later(void *arg)
{
	struct delayed *d = arg;
	struct timespec ts = { d->delay_ns / 1000000000LL, d->delay_ns % 1000000000LL };

	nanosleep(&ts, NULL);
	if (d->fd >= 0)
		CHECK(write(d->fd, "x", 1) == 1, "write: %s", strerror(errno));
	else
		pthread_kill(d->target, SIGUSR1);
	return NULL;
}

static void prep_read(struct io_uring *ring, int fd, char *buf, __u64 ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK(sqe, "no SQE");
	io_uring_prep_read(sqe, fd, buf, 1, 0);
	io_uring_sqe_set_data64(sqe, ud);
	CHECK_EQ(io_uring_submit(ring), 1, "submit read");
}

static void test_signals(struct io_uring *ring)
{
	struct __kernel_timespec ts = { 5, 0 }, short_ts = { 0, 100000000 };
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct io_uring_cqe *cqe;
	struct delayed d = { pthread_self(), -1, 50000000 };
	sigset_t block;
	pthread_t t;
	char buf[1];
	int p[2];

	CHECK(pipe(p) == 0, "pipe");
	sigaction(SIGUSR1, &sa, NULL);
	prep_read(ring, p[0], buf, 1);
	/* The handler runs during the wait: -EINTR, nothing completed. */
	handled = 0;
	pthread_create(&t, NULL, later, &d);
	CHECK_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), -EINTR, "signal during the wait");
	pthread_join(t, NULL);
	CHECK(handled, "handler did not run");
	/* Blocked by the wait's own mask: the timeout ends it instead. */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	{
		sigset_t during;

		sigfillset(&during);
		sigdelset(&during, SIGKILL);
		handled = 0;
		raise(SIGUSR1);
		CHECK_EQ(io_uring_wait_cqes(ring, &cqe, 1, &short_ts, &during), -ETIME, "masked signal");
		CHECK(!handled, "handler ran under the wait's mask");
	}
	pthread_sigmask(SIG_UNBLOCK, &block, NULL);
	CHECK(handled, "pending signal not delivered after the wait");
	/* The read is still pending and completes normally. */
	CHECK(write(p[1], "y", 1) == 1, "write");
	CHECK_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), 0, "read after the signals");
	CHECK(cqe->user_data == 1 && cqe->res == 1 && buf[0] == 'y', "read: ud %llu res %d",
	      (unsigned long long)cqe->user_data, cqe->res);
	io_uring_cqe_seen(ring, cqe);
	close(p[0]);
	close(p[1]);
	signal(SIGUSR1, SIG_DFL);
}

/* A read that becomes ready while nobody waits still completes. */
static void test_unwatched(struct io_uring *ring)
{
	struct __kernel_timespec ts = { 5, 0 };
	struct io_uring_cqe *cqe;
	char a[1], b[1];
	int p[2], q[2];

	CHECK(pipe(p) == 0 && pipe(q) == 0, "pipe");
	for (int round = 0; round < 50; round++) {
		long long t0;
		struct pollfd pfd = { ring->ring_fd, POLLIN, 0 };

		/* Wait on one read while another stays pending. */
		prep_read(ring, p[0], a, 1);
		prep_read(ring, q[0], b, 2);
		CHECK(write(p[1], "a", 1) == 1, "write p");
		CHECK_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), 0, "wait for the first read");
		CHECK(cqe->user_data == 1 && cqe->res == 1, "first: ud %llu res %d",
		      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(ring, cqe);
		/* No more calls that wait: the second must arrive on its own. */
		CHECK(write(q[1], "b", 1) == 1, "write q");
		t0 = tu_now_ns();
		while (io_uring_peek_cqe(ring, &cqe) == -EAGAIN)
			CHECK(tu_now_ns() - t0 < 2000000000LL, "round %d: the second read never completed", round);
		CHECK(cqe->user_data == 2 && cqe->res == 1 && b[0] == 'b', "second: ud %llu res %d",
		      (unsigned long long)cqe->user_data, cqe->res);
		CHECK(poll(&pfd, 1, 1000) == 1, "round %d: ring fd not readable with a CQE pending", round);
		io_uring_cqe_seen(ring, cqe);
	}
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

struct pair_arg {
	struct io_uring *ring;
	int rounds;
	int seen[2];
	pthread_mutex_t lock;
};

/* Each waiter takes whatever CQE comes and counts it by user_data. */
static void *waiter(void *arg)
{
	struct pair_arg *pa = arg;
	struct __kernel_timespec ts = { 5, 0 };

	for (;;) {
		struct io_uring_cqe *cqe;
		int ret, done;

		pthread_mutex_lock(&pa->lock);
		done = pa->seen[0] + pa->seen[1] == 2 * pa->rounds;
		pthread_mutex_unlock(&pa->lock);
		if (done)
			return NULL;
		ret = io_uring_wait_cqe_timeout(pa->ring, &cqe, &ts);
		if (ret == -ETIME || ret == -EAGAIN || ret == -EINTR)
			continue;
		CHECK_EQ(ret, 0, "waiter");
		pthread_mutex_lock(&pa->lock);
		/* The other waiter may have taken it meanwhile. */
		if (io_uring_peek_cqe(pa->ring, &cqe) == 0) {
			CHECK(cqe->res == 1 && cqe->user_data < 2, "pair: ud %llu res %d",
			      (unsigned long long)cqe->user_data, cqe->res);
			pa->seen[cqe->user_data]++;
			io_uring_cqe_seen(pa->ring, cqe);
		}
		pthread_mutex_unlock(&pa->lock);
	}
}

static void test_two_waiters(struct io_uring *ring)
{
	struct pair_arg pa = { ring, 2000, { 0, 0 }, PTHREAD_MUTEX_INITIALIZER };
	long long t0 = tu_now_ns();
	pthread_t t[2];
	char bufs[2][1];
	int p[2][2];

	CHECK(pipe(p[0]) == 0 && pipe(p[1]) == 0, "pipe");
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, waiter, &pa);
	for (int r = 0; r < pa.rounds; r++) {
		int want;

		pthread_mutex_lock(&pa.lock);
		prep_read(ring, p[0][0], bufs[0], 0);
		prep_read(ring, p[1][0], bufs[1], 1);
		want = pa.seen[0] + pa.seen[1] + 2;
		pthread_mutex_unlock(&pa.lock);
		CHECK(write(p[0][1], "0", 1) == 1 && write(p[1][1], "1", 1) == 1, "write");
		for (;;) {
			int got;

			pthread_mutex_lock(&pa.lock);
			got = pa.seen[0] + pa.seen[1];
			pthread_mutex_unlock(&pa.lock);
			if (got == want)
				break;
			CHECK(tu_now_ns() - t0 < 60000000000LL, "round %d: completions lost (%d of %d)", r, got, want);
			sched_yield();
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(pa.seen[0] == pa.rounds && pa.seen[1] == pa.rounds, "seen %d and %d", pa.seen[0], pa.seen[1]);
	for (int i = 0; i < 2; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}

/*
 * A kernel ring's pipe read, woken while this thread waits on an engine
 * ring, sends task work to this thread.
 */
static void test_kernel_task_work(void)
{
	struct __kernel_timespec ts = { 5, 0 };
	struct io_uring kring, ering;
	struct io_uring_cqe *cqe;
	struct delayed dk, de;
	struct io_uring_sqe *sqe;
	pthread_t tk, te;
	char kb[1], eb[1];
	int kp[2], ep[2], ret;

	if (tu_kernel_uring_blocked())
		return;
	setenv("LIBURING_RS_ENGINE", "kernel", 1);
	CHECK_EQ(io_uring_queue_init(4, &kring, 0), 0, "kernel ring");
	setenv("LIBURING_RS_ENGINE", "user", 1);
	CHECK_EQ(io_uring_queue_init(4, &ering, 0), 0, "engine ring");
	CHECK_EQ(liburing_rs_ring_engine(&ering), LIBURING_RS_ENGINE_USER, "engine of the user ring");
	CHECK(pipe(kp) == 0 && pipe(ep) == 0, "pipe");
	for (int round = 0; round < 20; round++) {
		sqe = io_uring_get_sqe(&kring);
		io_uring_prep_read(sqe, kp[0], kb, 1, 0);
		CHECK_EQ(io_uring_submit(&kring), 1, "kernel read");
		prep_read(&ering, ep[0], eb, 7);
		dk = (struct delayed){ pthread_self(), kp[1], 10000000 };
		de = (struct delayed){ pthread_self(), ep[1], 60000000 };
		pthread_create(&tk, NULL, later, &dk);
		pthread_create(&te, NULL, later, &de);
		/* The kernel read completes first; only the engine's read ends this. */
		ret = io_uring_wait_cqe_timeout(&ering, &cqe, &ts);
		CHECK(ret == 0, "round %d: engine wait: %s", round, strerror(-ret));
		CHECK(cqe->user_data == 7 && cqe->res == 1, "engine read: ud %llu res %d",
		      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(&ering, cqe);
		pthread_join(tk, NULL);
		pthread_join(te, NULL);
		CHECK_EQ(io_uring_wait_cqe_timeout(&kring, &cqe, &ts), 0, "kernel read");
		CHECK(cqe->res == 1, "kernel read: res %d", cqe->res);
		io_uring_cqe_seen(&kring, cqe);
	}
	io_uring_queue_exit(&kring);
	io_uring_queue_exit(&ering);
	close(kp[0]);
	close(kp[1]);
	close(ep[0]);
	close(ep[1]);
}

/* NOPs keep a CQE ready on every wait while a pipe read waits to be served. */
static void test_busy_waiter(struct io_uring *ring)
{
	struct delayed d = { pthread_self(), -1, 20000000 };
	struct io_uring_cqe *cqe;
	long long t0;
	pthread_t t;
	char buf[1];
	int p[2], got = 0;

	CHECK(pipe(p) == 0, "pipe");
	prep_read(ring, p[0], buf, 9);
	d.fd = p[1];
	pthread_create(&t, NULL, later, &d);
	t0 = tu_now_ns();
	while (!got) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		unsigned head, n = 0;

		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 8);
		CHECK(io_uring_submit_and_wait(ring, 1) >= 0, "submit_and_wait");
		io_uring_for_each_cqe(ring, head, cqe) {
			n++;
			if (cqe->user_data == 9) {
				CHECK(cqe->res == 1 && buf[0] == 'x', "read: res %d", cqe->res);
				got = 1;
			}
		}
		io_uring_cq_advance(ring, n);
		CHECK(tu_now_ns() - t0 < 2000000000LL, "the read never completed while the waiter spun");
	}
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
}

static void test_odd_timespecs(struct io_uring *ring)
{
	static const struct { long long sec, nsec, min_ms, max_ms; } c[] = {
		{ 0, 1200000000LL, 1150, 3000 },	/* 1.2 s */
		{ 0, -5, 0, 100 },
		{ -1, 0, 0, 100 },
	};
	struct io_uring_cqe *cqe;

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct __kernel_timespec ts = { c[i].sec, c[i].nsec };
		long long t0 = tu_now_ns(), ms;

		CHECK_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), -ETIME, "odd timespec");
		ms = (tu_now_ns() - t0) / 1000000;
		CHECK(ms >= c[i].min_ms && ms <= c[i].max_ms, "timespec {%lld, %lld}: waited %lld ms",
		      c[i].sec, c[i].nsec, ms);
	}
}

int main(int argc, char **argv)
{
	struct io_uring ring;

	(void)argc;
	tu_set_name(argv[0]);
	CHECK_EQ(io_uring_queue_init(16, &ring, 0), 0, "ring");
	test_signals(&ring);
	test_unwatched(&ring);
	test_two_waiters(&ring);
	test_busy_waiter(&ring);
	test_odd_timespecs(&ring);
	io_uring_queue_exit(&ring);
	test_kernel_task_work();
	tu_pass();
	return T_EXIT_PASS;
}
