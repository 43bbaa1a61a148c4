/* SPDX-License-Identifier: MIT */
/*
 * io_uring_resize_rings loses nothing:
 *  - CQEs pending in the CQ survive a resize (the kernel moves them);
 *  - SQEs prepared but not yet submitted survive it too, at the same
 *    distance from the head, and run with their own user_data;
 *  - more unsubmitted SQEs than the new SQ holds: -EOVERFLOW, ring intact;
 *  - when the address space for the new rings cannot be had (RLIMIT_AS),
 *    the call fails before the kernel switches, and the old ring still
 *    works at its old size.
 * Skips (exit 77) where the kernel has no ring resizing (before 6.13).
 */
#include <liburing.h>
#include <sys/resource.h>
#include "test-util.h"

static void nops(struct io_uring *ring, unsigned n, unsigned long long ud)
{
	struct io_uring_cqe *cqe;

	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		CHECK(sqe, "no sqe for nop %u", i);
		io_uring_prep_nop(sqe);
		sqe->user_data = ud + i;
	}
	CHECK_EQ(io_uring_submit_and_wait(ring, n), n, "submit nops");
	for (unsigned i = 0; i < n; i++) {
		CHECK_EQ(io_uring_peek_cqe(ring, &cqe), 0, "peek nop");
		CHECK(cqe->user_data == ud + i && cqe->res == 0,
		      "nop %u: ud %llu res %d", i,
		      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
}

static int resize(struct io_uring *ring, unsigned sq, unsigned cq)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.sq_entries = sq;
	p.cq_entries = cq;
	p.flags = IORING_SETUP_CQSIZE;
	return io_uring_resize_rings(ring, &p);
}

static void init_resizable(struct io_uring *ring, unsigned entries)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_params(entries, ring, &p);
	if (ret == -EINVAL)
		SKIP("no DEFER_TASKRUN (needed for resizing)");
	CHECK_EQ(ret, 0, "queue_init_params(DEFER_TASKRUN)");
}

static void test_pending_cqes(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int ret;

	init_resizable(&ring, 8);
	/* 12 completions pending in the 16-entry CQ (2 submits of 6). */
	for (int b = 0; b < 2; b++) {
		for (int i = 0; i < 6; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_nop(sqe);
			sqe->user_data = b * 6 + i;
		}
		CHECK_EQ(io_uring_submit(&ring), 6, "submit");
	}
	CHECK_EQ(io_uring_get_events(&ring), 0, "get_events");
	CHECK_EQ(io_uring_cq_ready(&ring), 12, "pending before resize");

	ret = resize(&ring, 64, 256);
	if ((ret == -EINVAL || ret == -EOPNOTSUPP) && !tu_kernel_at_least(6, 13))
		SKIP("%s lacks IORING_REGISTER_RESIZE_RINGS (%s)",
		     tu_on_engine() ? "the userspace engine" : "kernel",
		     strerror(-ret));
	CHECK_EQ(ret, 0, "io_uring_resize_rings");
	CHECK_EQ(ring.sq.ring_entries, 64, "sq entries after resize");
	CHECK_EQ(ring.cq.ring_entries, 256, "cq entries after resize");
	CHECK_EQ(io_uring_cq_ready(&ring), 12, "pending CQEs after resize");
	for (unsigned i = 0; i < 12; i++) {
		CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek after resize");
		CHECK(cqe->user_data == i && cqe->res == 0,
		      "cqe %u after resize: ud %llu res %d", i,
		      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK_EQ(io_uring_sq_space_left(&ring), 64, "sq space after resize");
	nops(&ring, 64, 1000);
	nops(&ring, 64, 2000);
	io_uring_queue_exit(&ring);
}

/* Prepare `n` NOPs without submitting them, after `skew` have gone through
 * so that head and tail sit mid-ring; resize; all run with their data. */
static void test_unsubmitted(unsigned from, unsigned to, unsigned skew,
			     unsigned n)
{
	struct io_uring ring;

	init_resizable(&ring, from);
	nops(&ring, skew, 100);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		CHECK(sqe, "no sqe");
		io_uring_prep_nop(sqe);
		sqe->user_data = 5000 + i;
	}
	CHECK_EQ(resize(&ring, to, 2 * to), 0, "resize with unsubmitted SQEs");
	CHECK_EQ(io_uring_sq_ready(&ring), n, "SQEs ready after resize");
	CHECK_EQ(io_uring_submit_and_wait(&ring, n), n, "submit them");
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek");
		CHECK(cqe->user_data == 5000 + i && cqe->res == 0,
		      "%u->%u: SQE %u came back as ud %llu res %d", from, to, i,
		      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "extra CQEs");
	nops(&ring, to, 7000);
	io_uring_queue_exit(&ring);
}

static void test_too_many_unsubmitted(void)
{
	struct io_uring ring;

	init_resizable(&ring, 16);
	for (unsigned i = 0; i < 10; i++)
		io_uring_prep_nop(io_uring_get_sqe(&ring));
	CHECK_EQ(resize(&ring, 8, 16), -EOVERFLOW, "shrink below pending");
	CHECK_EQ(ring.sq.ring_entries, 16, "ring kept its size");
	CHECK_EQ(io_uring_submit(&ring), 10, "pending SQEs still submit");
	CHECK_EQ(io_uring_get_events(&ring), 0, "get_events");
	CHECK_EQ(io_uring_cq_ready(&ring), 10, "their CQEs");
	io_uring_cq_advance(&ring, 10);
	io_uring_queue_exit(&ring);
}

/* Virtual memory in use, from /proc/self/status, in bytes. */
static unsigned long vm_size(void)
{
	long long kb = tu_status_value("/proc/self/status", "VmSize");

	CHECK(kb > 0, "no VmSize in /proc/self/status");
	return (unsigned long)kb * 1024;
}

static void test_no_address_space(void)
{
	struct rlimit old, tight;
	struct io_uring ring;
	int ret;

	init_resizable(&ring, 8);
	CHECK_EQ(getrlimit(RLIMIT_AS, &old), 0, "getrlimit");
	/* Room for small allocations, not for 32768-entry rings (3 MiB). */
	tight = old;
	tight.rlim_cur = vm_size() + 512 * 1024;
	CHECK_EQ(setrlimit(RLIMIT_AS, &tight), 0, "setrlimit");
	ret = resize(&ring, 32768, 65536);
	CHECK_EQ(setrlimit(RLIMIT_AS, &old), 0, "restore RLIMIT_AS");
	CHECK_EQ(ret, -ENOMEM, "resize without address space");
	CHECK_EQ(ring.sq.ring_entries, 8, "sq entries unchanged");
	CHECK_EQ(ring.cq.ring_entries, 16, "cq entries unchanged");
	/* The kernel was never asked: the old rings are still its rings. */
	nops(&ring, 8, 9000);
	nops(&ring, 8, 9100);
	CHECK_EQ(resize(&ring, 32768, 65536), 0, "the same resize, with room");
	nops(&ring, 64, 9200);
	io_uring_queue_exit(&ring);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);

	test_pending_cqes();
	test_unsubmitted(8, 64, 0, 5);
	test_unsubmitted(8, 64, 6, 8);
	test_unsubmitted(64, 8, 61, 7);
	test_unsubmitted(16, 16, 13, 16);
	test_too_many_unsubmitted();
	test_no_address_space();
	tu_pass();
	return T_EXIT_PASS;
}
