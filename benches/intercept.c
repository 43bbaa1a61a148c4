/* SPDX-License-Identifier: MIT */
/*
 * Interception micro-benchmarks (benches/intercept.sh runs them):
 *
 *   intercept getpid          ns per getpid() (with or without the filter)
 *   intercept close           ns per close() of an fd number that is not open
 *   intercept enter           ns per raw io_uring_enter(fd, 0, 0, 0) on a ring
 *   intercept raw D           NOP round trips at depth D through the raw system calls
 *   intercept lib D           the same through liburing's functions
 *
 * Prints "name=... ns=..." or "name=... depth=D mops=...". BENCH_SECS sets
 * the time per measurement (default 1).
 */
#include <liburing.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double secs(void)
{
	const char *s = getenv("BENCH_SECS");

	return s ? atof(s) : 1.0;
}

struct raw {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	unsigned tail;
};

static void raw_setup(struct raw *r, unsigned entries)
{
	struct io_uring_params p;
	size_t len;
	char *m;

	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(__NR_io_uring_setup, entries, &p);
	if (r->fd < 0) {
		perror("io_uring_setup");
		exit(1);
	}
	len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.sq_off.array + p.sq_entries * 4 > len)
		len = p.sq_off.array + p.sq_entries * 4;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (m == MAP_FAILED || r->sqes == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	r->sq_tail = (void *)(m + p.sq_off.tail);
	r->sq_mask = (void *)(m + p.sq_off.ring_mask);
	r->sq_array = (void *)(m + p.sq_off.array);
	r->cq_head = (void *)(m + p.cq_off.head);
	r->cq_tail = (void *)(m + p.cq_off.tail);
	r->cq_mask = (void *)(m + p.cq_off.ring_mask);
	r->cqes = (void *)(m + p.cq_off.cqes);
	r->tail = *r->sq_tail;
}

/* One batch of `depth` NOPs, submitted and waited for in one enter. */
static void raw_batch(struct raw *r, unsigned depth)
{
	unsigned head;

	for (unsigned i = 0; i < depth; i++) {
		unsigned idx = r->tail++ & *r->sq_mask;

		memset(&r->sqes[idx], 0, sizeof(r->sqes[idx]));
		r->sqes[idx].opcode = IORING_OP_NOP;
		r->sq_array[idx] = idx;
	}
	atomic_store_explicit((_Atomic unsigned *)r->sq_tail, r->tail, memory_order_release);
	if (syscall(__NR_io_uring_enter, r->fd, depth, depth, IORING_ENTER_GETEVENTS, NULL, 0) != depth) {
		perror("io_uring_enter");
		exit(1);
	}
	head = *r->cq_head;
	atomic_store_explicit((_Atomic unsigned *)r->cq_head, head + depth, memory_order_release);
}

static void lib_batch(struct io_uring *ring, unsigned depth)
{
	for (unsigned i = 0; i < depth; i++)
		io_uring_prep_nop(io_uring_get_sqe(ring));
	if (io_uring_submit_and_wait(ring, depth) != (int)depth) {
		fprintf(stderr, "io_uring_submit_and_wait failed\n");
		exit(1);
	}
	io_uring_cq_advance(ring, depth);
}

int main(int argc, char **argv)
{
	double t0, t, limit = secs();
	unsigned long n = 0;

	if (argc >= 2 && !strcmp(argv[1], "getpid")) {
		t0 = now();
		do {
			for (int i = 0; i < 1000; i++)
				syscall(__NR_getpid);
			n += 1000;
		} while ((t = now()) - t0 < limit);
		printf("name=getpid ns=%.1f\n", (t - t0) * 1e9 / n);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "close")) {
		/* close() of an fd that is not open: the filter's close test
		 * runs, nothing traps (the number is no ring fd's). */
		t0 = now();
		do {
			for (int i = 0; i < 1000; i++)
				syscall(__NR_close, 100);
			n += 1000;
		} while ((t = now()) - t0 < limit);
		printf("name=close ns=%.1f\n", (t - t0) * 1e9 / n);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "enter")) {
		struct raw r;

		raw_setup(&r, 8);
		t0 = now();
		do {
			for (int i = 0; i < 1000; i++)
				syscall(__NR_io_uring_enter, r.fd, 0, 0, 0, NULL, 0);
			n += 1000;
		} while ((t = now()) - t0 < limit);
		printf("name=enter ns=%.1f\n", (t - t0) * 1e9 / n);
		return 0;
	}
	if (argc >= 3 && (!strcmp(argv[1], "raw") || !strcmp(argv[1], "lib"))) {
		unsigned depth = (unsigned)atoi(argv[2]);
		struct io_uring ring;
		struct raw r;
		int raw = !strcmp(argv[1], "raw");

		if (raw)
			raw_setup(&r, depth);
		else if (io_uring_queue_init(depth, &ring, 0) < 0)
			return 1;
		t0 = now();
		do {
			for (int i = 0; i < 100; i++) {
				if (raw)
					raw_batch(&r, depth);
				else
					lib_batch(&ring, depth);
			}
			n += 100 * depth;
		} while ((t = now()) - t0 < limit);
		printf("name=%s depth=%u mops=%.3f\n", argv[1], depth, n / (t - t0) / 1e6);
		return 0;
	}
	fprintf(stderr, "usage: intercept getpid | close | enter | raw DEPTH | lib DEPTH\n");
	return 2;
}
