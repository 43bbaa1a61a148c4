/* SPDX-License-Identifier: MIT */
/*
 * The SQPOLL thread going to sleep and being woken:
 *  - after sq_thread_idle without work it sets IORING_SQ_NEED_WAKEUP; a
 *    submit wakes it, its CQE comes, and the flag is clear again while
 *    the thread is awake;
 *  - no SQE is ever lost when a submit races with the thread going to
 *    sleep: many rounds with pauses around the 1 ms idle time, each one's
 *    CQEs must all arrive;
 *  - io_uring_sqring_wait on a full SQ sleeps until the thread, woken by
 *    another thread, has made room.
 */
#define LIBURING_RS_SOURCE
#include <liburing.h>
#include <pthread.h>
#include <time.h>
#include "op-util.h"

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static unsigned sq_flags(struct io_uring *ring)
{
	return IO_URING_READ_ONCE(*ring->sq.kflags);
}

/* Queues n NOPs and submits them; returns the time of the submit. */
static long long queue_nops(struct io_uring *ring, unsigned n, unsigned long long ud)
{
	op_nops(ring, n, ud);
	int ret = io_uring_submit(ring);

	/* The SQEs the thread has not taken yet: older ones may be among
	 * them (a kernel may post CQEs before it moves the SQ head). */
	CHECK(ret >= 0 && ret <= (int)ring->sq.ring_entries, "submit: %d", ret);
	return now_us();
}

static void reap(struct io_uring *ring, unsigned n, unsigned long long ud, const char *what)
{
	for (unsigned i = 0; i < n; i++) {
		struct __kernel_timespec ts = { .tv_sec = 5 };
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

		CHECK_EQ(ret, 0, what);
		CHECK(cqe->user_data >= ud && cqe->user_data < ud + n,
		      "%s: stray user_data %llu", what, (unsigned long long)cqe->user_data);
		CHECK_EQ(cqe->res, 0, what);
		io_uring_cqe_seen(ring, cqe);
	}
}

static void test_need_wakeup(void)
{
	struct io_uring ring;
	int slept = 0;

	CHECK_EQ(op_sqpoll_ring(&ring, 8, 10), 0, "SQPOLL ring, 10 ms idle");
	for (int r = 0; r < 5; r++) {
		long long t;

		for (int i = 0; i < 200 && !(sq_flags(&ring) & IORING_SQ_NEED_WAKEUP); i++)
			usleep(5000);
		if (sq_flags(&ring) & IORING_SQ_NEED_WAKEUP)
			slept++;
		t = queue_nops(&ring, 2, 100 * r);
		reap(&ring, 2, 100 * r, "CQE after waking the thread");
		/* Awake for 10 ms after its work: the flag is down meanwhile. */
		CHECK(!(sq_flags(&ring) & IORING_SQ_NEED_WAKEUP) || now_us() - t >= 10000,
		      "NEED_WAKEUP still set right after the wake-up");
	}
	CHECK_EQ(slept, 5, "NEED_WAKEUP set after each idle period");
	io_uring_queue_exit(&ring);
}

static void pause_us(long long us, int spin)
{
	if (!spin) {
		usleep(us);
		return;
	}
	long long end = now_us() + us;

	while (now_us() < end)
		;
}

static void test_race(void)
{
	struct io_uring ring;
	unsigned seed = 12345;
	int slept = 0, awake = 0;
	long long start = now_us();

	CHECK_EQ(op_sqpoll_ring(&ring, 16, 1), 0, "SQPOLL ring, 1 ms idle");
	for (int i = 0; i < 1500 && now_us() - start < 4000000; i++) {
		unsigned n = 1 + (seed >> 16) % 4;

		seed = seed * 1103515245 + 12345;
		/* Pauses spread over 0.5 to 1.5 ms, straddling the idle time. */
		pause_us(500 + (seed >> 16) % 1000, i & 1);
		seed = seed * 1103515245 + 12345;
		if (sq_flags(&ring) & IORING_SQ_NEED_WAKEUP)
			slept++;
		else
			awake++;
		queue_nops(&ring, n, 1000ULL * i);
		reap(&ring, n, 1000ULL * i, "CQE of a submit racing with sleep");
	}
	CHECK(slept > 0 && awake > 0, "rounds met the thread both asleep (%d) and awake (%d)",
	      slept, awake);
	io_uring_queue_exit(&ring);
}

struct waker {
	struct io_uring *ring;
	long long delay_us;
};

static void *wake_later(void *arg)
{
	struct waker *w = arg;

	usleep(w->delay_us);
	io_uring_enter(w->ring->ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL);
	return NULL;
}

static void test_sqring_wait(void)
{
	struct io_uring ring;
	struct waker w = { &ring, 100000 };
	pthread_t t;
	long long t0, waited;
	unsigned entries;
	int ret;

	CHECK_EQ(op_sqpoll_ring(&ring, 8, 5), 0, "SQPOLL ring, 5 ms idle");
	entries = ring.sq.ring_entries;
	for (int i = 0; i < 200 && !(sq_flags(&ring) & IORING_SQ_NEED_WAKEUP); i++)
		usleep(5000);
	CHECK(sq_flags(&ring) & IORING_SQ_NEED_WAKEUP, "thread asleep");
	/* Fill the SQ and publish it without waking the thread. */
	op_nops(&ring, entries, 500);
	CHECK(io_uring_get_sqe(&ring) == NULL, "SQ full");
	io_uring_smp_store_release(ring.sq.ktail, ring.sq.sqe_tail);
	ring.sq.sqe_head = ring.sq.sqe_tail;
	CHECK_EQ(io_uring_sq_space_left(&ring), 0, "no room before the wake-up");
	CHECK_EQ(pthread_create(&t, NULL, wake_later, &w), 0, "pthread_create");
	t0 = now_us();
	/* The kernel may return early without room: wait again then. */
	do {
		ret = io_uring_sqring_wait(&ring);
		CHECK(ret >= 0, "sqring_wait: %d", ret);
		waited = now_us() - t0;
	} while (!io_uring_sq_space_left(&ring) && waited < 5000000);
	CHECK(io_uring_sq_space_left(&ring) > 0, "room after sqring_wait (%lld us)", waited);
	CHECK(waited >= 50000, "room after %lld us, before the wake-up", waited);
	pthread_join(t, NULL);
	reap(&ring, entries, 500, "CQEs of the full SQ");
	io_uring_queue_exit(&ring);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);
	op_need_sqpoll();
	test_need_wakeup();
	test_race();
	test_sqring_wait();
	tu_pass();
	return T_EXIT_PASS;
}
