/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the c-tests/op-*.c programs, which run one real
 * operation per opcode and check its result, and by other ring tests.
 */
#ifndef LIBURING_RS_OP_UTIL_H
#define LIBURING_RS_OP_UTIL_H

#include <ftw.h>
#include <sys/stat.h>
#include "liburing.h"
#include "test-util.h"

/* Scratch directory (mkdtemp under /tmp), removed at exit. */
static char op_dir[64];

static int op_rm_one(const char *p, const struct stat *sb, int type,
		     struct FTW *ftw)
{
	(void)sb; (void)type; (void)ftw;
	return remove(p);
}

static void op_rm_dir(void)
{
	if (op_dir[0])
		nftw(op_dir, op_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	op_dir[0] = '\0';
}

static inline const char *op_mkdtemp(void)
{
	snprintf(op_dir, sizeof(op_dir), "/tmp/liburing-rs-op.XXXXXX");
	if (!mkdtemp(op_dir))
		FAIL("mkdtemp: %s", strerror(errno));
	atexit(op_rm_dir);
	return op_dir;
}

/* Path inside the scratch directory (static rotating buffers). */
static inline const char *op_path(const char *name)
{
	static char bufs[8][128];
	static int n;
	char *b = bufs[n++ & 7];

	snprintf(b, sizeof(bufs[0]), "%s/%s", op_dir, name);
	return b;
}

static inline void op_ring(struct io_uring *ring, unsigned entries,
			   unsigned flags)
{
	int ret = io_uring_queue_init(entries, ring, flags);

	if (ret == -ENOSYS || ret == -EPERM)
		SKIP("io_uring unavailable: %s", strerror(-ret));
	if (ret < 0)
		FAIL("io_uring_queue_init(%u, %#x): %s", entries, flags,
		     strerror(-ret));
}

/* Skip (77) if the kernel does not support one of these opcodes. */
static inline void op_need(struct io_uring *ring, int op, const char *name)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(ring);

	if (!p)
		SKIP("no opcode probe on this kernel");
	if (!io_uring_opcode_supported(p, op)) {
		io_uring_free_probe(p);
		SKIP("kernel lacks %s", name);
	}
	io_uring_free_probe(p);
}

/* Whether the kernel has an opcode; a missing one is noted with tu_lacks,
 * so a test that steps around it ends (tu_done) in a skip naming it. */
#define op_has(ring, op) op_has_named(ring, op, #op)

static inline int op_has_named(struct io_uring *ring, int op, const char *name)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(ring);
	int r = p && io_uring_opcode_supported(p, op);

	if (p)
		io_uring_free_probe(p);
	if (!r)
		tu_lacks(name);
	return r;
}

static inline struct io_uring_sqe *op_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		FAIL("io_uring_get_sqe returned NULL");
	return sqe;
}

/* Queues n NOPs with user_data ud, ud + 1, ... */
static inline void op_nops(struct io_uring *ring, unsigned n,
			   unsigned long long ud)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = op_sqe(ring);

		io_uring_prep_nop(sqe);
		sqe->user_data = ud + i;
	}
}

/* An SQPOLL ring whose thread idles out after idle_ms. */
static inline int op_sqpoll_ring(struct io_uring *ring, unsigned entries,
				 unsigned idle_ms)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = idle_ms;
	return io_uring_queue_init_params(entries, ring, &p);
}

/* Skips the test where this user may not set up SQPOLL rings. */
static inline void op_need_sqpoll(void)
{
	struct io_uring ring;
	int ret = op_sqpoll_ring(&ring, 8, 0);

	if (ret == -EPERM)
		SKIP("SQPOLL not permitted for this user");
	CHECK_EQ(ret, 0, "SQPOLL ring");
	io_uring_queue_exit(&ring);
}

struct op_cqe {
	__u64 user_data;
	int res;
	unsigned flags;
};

/* Waits for one completion, copies it out and marks it seen. */
static inline struct op_cqe op_wait(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	struct op_cqe c;
	int ret = io_uring_wait_cqe(ring, &cqe);

	if (ret < 0)
		FAIL("io_uring_wait_cqe: %s", strerror(-ret));
	c.user_data = cqe->user_data;
	c.res = cqe->res;
	c.flags = cqe->flags;
	io_uring_cqe_seen(ring, cqe);
	return c;
}

/* Submits everything queued; fails unless exactly 'want' were submitted. */
static inline void op_submit(struct io_uring *ring, int want)
{
	int ret = io_uring_submit(ring);

	if (ret != want)
		FAIL("io_uring_submit: %d (%s), want %d", ret,
		     ret < 0 ? strerror(-ret) : "-", want);
}

/* Submit the queued SQE and return its completion result. */
static inline int op_run1(struct io_uring *ring)
{
	op_submit(ring, 1);
	return op_wait(ring).res;
}

/* Collects n completions into out[], ordered by user_data 1..n. */
static inline void op_wait_n(struct io_uring *ring, struct op_cqe *out, int n)
{
	for (int i = 0; i < n; i++) {
		struct op_cqe c = op_wait(ring);

		if (c.user_data < 1 || c.user_data > (__u64)n)
			FAIL("unexpected user_data %llu",
			     (unsigned long long)c.user_data);
		out[c.user_data - 1] = c;
	}
}

/* Makes 'sqe' the head (user_data 1) of a link whose next request, queued
 * here, is a link timeout of 'ts' (user_data 2); returns that one's SQE. */
static inline struct io_uring_sqe *op_link_timeout(struct io_uring *ring,
						   struct io_uring_sqe *sqe,
						   struct __kernel_timespec *ts)
{
	io_uring_sqe_set_flags(sqe, IOSQE_IO_LINK);
	io_uring_sqe_set_data64(sqe, 1);
	sqe = op_sqe(ring);
	io_uring_prep_link_timeout(sqe, ts, 0);
	io_uring_sqe_set_data64(sqe, 2);
	return sqe;
}

/* Gives buffer ring 'br' n buffers of blen bytes each from 'mem' (ids
 * 0..n-1). */
static inline void op_buf_ring_fill(struct io_uring_buf_ring *br, unsigned n,
				    char *mem, unsigned blen)
{
	for (unsigned i = 0; i < n; i++)
		io_uring_buf_ring_add(br, mem + i * blen, blen, i,
				      io_uring_buf_ring_mask(n), i);
	io_uring_buf_ring_advance(br, n);
}

/* Buffer ring 'bgid' filled by op_buf_ring_fill; a kernel without buffer
 * rings skips the test. */
static inline struct io_uring_buf_ring *op_buf_ring(struct io_uring *ring,
						    unsigned n, int bgid,
						    char *mem, unsigned blen)
{
	struct io_uring_buf_ring *br;
	int err;

	br = io_uring_setup_buf_ring(ring, n, bgid, 0, &err);
	if (!br && err == -EINVAL)
		SKIP("kernel lacks buffer rings");
	CHECK(br, "setup_buf_ring: %d", err);
	op_buf_ring_fill(br, n, mem, blen);
	return br;
}

/* Whether the kernel reports a buffer ring's head (IORING_REGISTER_PBUF_STATUS,
 * 6.8): where it does not, op_probe_buf_status notes it lacking and the
 * head checks are left out. */
static int op_buf_status = 1;

static inline void op_probe_buf_status(struct io_uring *ring)
{
	uint16_t h;

	if (io_uring_buf_ring_head(ring, 0xffff, &h) == -EINVAL &&
	    tu_lacks_before(6, 8, "IORING_REGISTER_PBUF_STATUS"))
		op_buf_status = 0;
}

static inline unsigned op_buf_head(struct io_uring *ring, int bgid)
{
	uint16_t h = 0xffff;

	CHECK_EQ(io_uring_buf_ring_head(ring, bgid, &h), 0, "buf_ring_head");
	return h;
}

#define OP_CHECK_HEAD(ring, bgid, want, what)				\
	do {								\
		if (op_buf_status)					\
			CHECK_EQ(op_buf_head(ring, bgid), want, what);	\
	} while (0)

/* Result that means "this kernel/filesystem cannot": turn into a skip. */
static inline void op_skip_if_unsupported(int res, const char *what)
{
	if (res == -EINVAL || res == -EOPNOTSUPP || res == -ENOTSUP ||
	    res == -ENOSYS)
		SKIP("%s not supported here: %s", what, strerror(-res));
}

#endif
