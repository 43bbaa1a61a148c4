/* SPDX-License-Identifier: MIT */
/*
 * A ring driven by the raw system calls, as a program without liburing
 * drives one (the io-uring crate, fio's engine, Zig's std). The tests in
 * this directory link no liburing: scripts/check-intercept.sh runs each
 * on the kernel and under uring-run with io_uring blocked by seccomp, and
 * both runs must pass the same checks.
 */
#ifndef INTERCEPT_RAW_H
#define INTERCEPT_RAW_H

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <liburing/io_uring.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: check failed: %s (errno %d)\n", __FILE__, __LINE__, #c, errno); exit(1); } } while (0)

static inline int sys_setup(unsigned entries, struct io_uring_params *p)
{
	return (int)syscall(__NR_io_uring_setup, entries, p);
}

static inline int sys_enter(int fd, unsigned submit, unsigned min, unsigned flags, void *arg, size_t sz)
{
	return (int)syscall(__NR_io_uring_enter, fd, submit, min, flags, arg, sz);
}

static inline int sys_register(int fd, unsigned op, void *arg, unsigned nr)
{
	return (int)syscall(__NR_io_uring_register, fd, op, arg, nr);
}

struct raw_ring {
	int fd;
	struct io_uring_params p;
	void *sq, *cq;
	size_t sq_len, cq_len, sqes_len;
	struct io_uring_sqe *sqes;
	_Atomic unsigned *sq_tail, *cq_head, *cq_tail;
	unsigned *sq_mask, *sq_array, *cq_mask;
	struct io_uring_cqe *cqes;
	unsigned sqe_tail;
};

static inline void raw_init(struct raw_ring *r, unsigned entries, unsigned flags)
{
	memset(r, 0, sizeof(*r));
	r->p.flags = flags;
	r->fd = sys_setup(entries, &r->p);
	CHECK(r->fd >= 0);
	r->sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(unsigned);
	r->cq_len = r->p.cq_off.cqes + r->p.cq_entries * sizeof(struct io_uring_cqe);
	if (r->p.features & IORING_FEAT_SINGLE_MMAP) {
		if (r->cq_len > r->sq_len)
			r->sq_len = r->cq_len;
		r->cq_len = r->sq_len;
	}
	r->sq = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	CHECK(r->sq != MAP_FAILED);
	if (r->p.features & IORING_FEAT_SINGLE_MMAP) {
		r->cq = r->sq;
	} else {
		r->cq = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
		CHECK(r->cq != MAP_FAILED);
	}
	r->sqes_len = r->p.sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	CHECK(r->sqes != MAP_FAILED);
	r->sq_tail = (void *)((char *)r->sq + r->p.sq_off.tail);
	r->sq_mask = (void *)((char *)r->sq + r->p.sq_off.ring_mask);
	r->sq_array = (void *)((char *)r->sq + r->p.sq_off.array);
	r->cq_head = (void *)((char *)r->cq + r->p.cq_off.head);
	r->cq_tail = (void *)((char *)r->cq + r->p.cq_off.tail);
	r->cq_mask = (void *)((char *)r->cq + r->p.cq_off.ring_mask);
	r->cqes = (void *)((char *)r->cq + r->p.cq_off.cqes);
	r->sqe_tail = atomic_load_explicit(r->sq_tail, memory_order_relaxed);
}

static inline void raw_exit(struct raw_ring *r)
{
	munmap(r->sqes, r->sqes_len);
	if (r->cq != r->sq)
		munmap(r->cq, r->cq_len);
	munmap(r->sq, r->sq_len);
	close(r->fd);
}

static inline struct io_uring_sqe *raw_sqe(struct raw_ring *r)
{
	unsigned i = r->sqe_tail++ & *r->sq_mask;
	struct io_uring_sqe *s = &r->sqes[i];

	memset(s, 0, sizeof(*s));
	r->sq_array[i] = i;
	return s;
}

/* Publishes the SQEs taken and enters: returns io_uring_enter's answer. */
static inline int raw_submit(struct raw_ring *r, unsigned wait)
{
	unsigned n = r->sqe_tail - atomic_load_explicit(r->sq_tail, memory_order_relaxed);

	atomic_store_explicit(r->sq_tail, r->sqe_tail, memory_order_release);
	return sys_enter(r->fd, n, wait, wait ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
}

/* The next CQE (copied), or 0 when none is pending. */
static inline int raw_peek(struct raw_ring *r, struct io_uring_cqe *out)
{
	unsigned head = atomic_load_explicit(r->cq_head, memory_order_relaxed);

	if (head == atomic_load_explicit(r->cq_tail, memory_order_acquire))
		return 0;
	*out = r->cqes[head & *r->cq_mask];
	atomic_store_explicit(r->cq_head, head + 1, memory_order_release);
	return 1;
}

/* Waits for the next CQE and copies it to *c. */
static inline void raw_wait(struct raw_ring *r, struct io_uring_cqe *c)
{
	while (!raw_peek(r, c)) {
		int ret = sys_enter(r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
		CHECK(ret >= 0 || errno == EINTR);
	}
}

#endif
