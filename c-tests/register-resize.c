/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_RESIZE_RINGS as io_uring_register(2) answers it, the
 * kernel's answers being the reference:
 *  - rings without DEFER_TASKRUN, nr_args other than 1, a NULL argument,
 *    setup flags other than CQSIZE and CLAMP, and sizes setup would refuse
 *    get -EINVAL with the params left alone; an unreadable argument -EFAULT;
 *    a thread other than the SINGLE_ISSUER submitter -EEXIST;
 *  - a resize writes back the sizes (rounded, clamped), the ring's own
 *    NO_SQARRAY/SQE128/CQE32/... flags and the offsets setup gave, and
 *    leaves every other field (the SQ array's offset among them) as it was;
 *  - SQEs published but not consumed and CQEs not reaped move to the new
 *    rings at the same positions; more than the new rings hold is
 *    -EOVERFLOW; the CQ flags, dropped and overflow counters carry over;
 *  - the old mappings stay readable, no longer the ring's; mmap of the ring
 *    fd maps the new memory;
 *  - an IORING_SETUP_NO_MMAP ring moves into the memory the call names
 *    (-EFAULT without any, -EINVAL for an address not page-aligned).
 * Skips (exit 77) before Linux 6.13, which has no ring resizing.
 */
#include <liburing.h>
#include <pthread.h>
#include <sys/mman.h>
#include "test-util.h"

static int resize_raw(int fd, void *arg, unsigned nr)
{
	return io_uring_register(fd, IORING_REGISTER_RESIZE_RINGS, arg, nr);
}

static int resize(int fd, struct io_uring_params *p)
{
	return resize_raw(fd, p, 1);
}

static void init_defer(struct io_uring *ring, struct io_uring_params *p)
{
	int ret;

	memset(p, 0, sizeof(*p));
	p->flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_params(8, ring, p);
	if (ret == -EINVAL)
		SKIP("no DEFER_TASKRUN (needed for resizing)");
	CHECK_EQ(ret, 0, "queue_init_params(DEFER_TASKRUN)");
}

/* A resize the kernel refuses with -EINVAL before writing anything back. */
static void refused(int fd, unsigned flags, unsigned sq, unsigned cq,
		    const char *what)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	p.sq_entries = sq;
	p.cq_entries = cq;
	CHECK_EQ(resize(fd, &p), -EINVAL, what);
	CHECK(p.sq_entries == sq && p.cq_entries == cq && p.flags == flags &&
	      p.sq_off.head == 0 && p.cq_off.cqes == 0,
	      "%s: params written back", what);
}

static void *other_thread(void *arg)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	return (void *)(long)resize(*(int *)arg, &p);
}

static void test_bad_input(void)
{
	struct io_uring_params p, setup;
	struct io_uring ring;
	pthread_t t;
	void *none, *ret;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	refused(ring.ring_fd, 0, 16, 0, "ring without DEFER_TASKRUN");
	io_uring_queue_exit(&ring);

	init_defer(&ring, &setup);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	if (resize(ring.ring_fd, &p) == -EINVAL && tu_lacks_before(6, 13, "IORING_REGISTER_RESIZE_RINGS")) {
		io_uring_queue_exit(&ring);
		return;
	}
	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	CHECK_EQ(resize_raw(ring.ring_fd, &p, 0), -EINVAL, "nr_args 0");
	CHECK_EQ(resize_raw(ring.ring_fd, &p, 2), -EINVAL, "nr_args 2");
	CHECK_EQ(resize_raw(ring.ring_fd, NULL, 1), -EINVAL, "NULL params");
	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED, "mmap PROT_NONE");
	CHECK_EQ(resize_raw(ring.ring_fd, none, 1), -EFAULT, "unreadable params");
	munmap(none, 4096);
	refused(ring.ring_fd, IORING_SETUP_SQPOLL, 16, 0, "SQPOLL flag");
	refused(ring.ring_fd, IORING_SETUP_DEFER_TASKRUN, 16, 0, "DEFER_TASKRUN flag");
	refused(ring.ring_fd, IORING_SETUP_NO_SQARRAY, 16, 0, "NO_SQARRAY flag");
	refused(ring.ring_fd, 0, 0, 0, "0 SQ entries");
	refused(ring.ring_fd, 0, 100000, 0, "SQ over the maximum");
	refused(ring.ring_fd, IORING_SETUP_CQSIZE, 16, 0, "0 CQ entries");
	refused(ring.ring_fd, IORING_SETUP_CQSIZE, 16, 8, "CQ smaller than SQ");
	refused(ring.ring_fd, IORING_SETUP_CQSIZE, 16, 1 << 20, "CQ over the maximum");

	CHECK_EQ(pthread_create(&t, NULL, other_thread, &ring.ring_fd), 0, "pthread_create");
	CHECK_EQ(pthread_join(t, &ret), 0, "pthread_join");
	CHECK_EQ((long)ret, -EEXIST, "resize from a thread not the submitter");
	io_uring_queue_exit(&ring);
}

static void check_offsets(const struct io_uring_params *p,
			  const struct io_uring_params *setup, const char *what)
{
	CHECK(p->sq_off.head == setup->sq_off.head &&
	      p->sq_off.tail == setup->sq_off.tail &&
	      p->sq_off.ring_mask == setup->sq_off.ring_mask &&
	      p->sq_off.ring_entries == setup->sq_off.ring_entries &&
	      p->sq_off.flags == setup->sq_off.flags &&
	      p->sq_off.dropped == setup->sq_off.dropped &&
	      p->sq_off.resv1 == 0 && p->sq_off.user_addr == 0,
	      "%s: SQ offsets differ from setup's", what);
	CHECK(p->cq_off.head == setup->cq_off.head &&
	      p->cq_off.tail == setup->cq_off.tail &&
	      p->cq_off.ring_mask == setup->cq_off.ring_mask &&
	      p->cq_off.ring_entries == setup->cq_off.ring_entries &&
	      p->cq_off.overflow == setup->cq_off.overflow &&
	      p->cq_off.cqes == setup->cq_off.cqes &&
	      p->cq_off.flags == setup->cq_off.flags &&
	      p->cq_off.resv1 == 0 && p->cq_off.user_addr == 0,
	      "%s: CQ offsets differ from setup's", what);
}

static void test_write_back(void)
{
	struct io_uring_params p, setup;
	struct io_uring ring;
	unsigned keep;

	init_defer(&ring, &setup);
	keep = setup.flags & (IORING_SETUP_NO_SQARRAY | IORING_SETUP_SQE128 |
			      IORING_SETUP_CQE32 | IORING_SETUP_NO_MMAP |
			      IORING_SETUP_CQE_MIXED);

	/* Fields a resize does not use come back as they went in. */
	memset(&p, 0xff, sizeof(p));
	p.flags = 0;
	p.sq_entries = 10;
	p.cq_entries = 0;
	if (resize(ring.ring_fd, &p) == -EINVAL && tu_lacks_before(6, 13, "IORING_REGISTER_RESIZE_RINGS")) {
		io_uring_queue_exit(&ring);
		return;
	}
	CHECK_EQ(p.sq_entries, 16, "SQ entries rounded up");
	CHECK_EQ(p.cq_entries, 32, "CQ entries twice the SQ's");
	CHECK_EQ(p.flags, keep, "flags: the ring's own kept");
	CHECK(p.features == ~0U && p.sq_thread_cpu == ~0U &&
	      p.sq_thread_idle == ~0U && p.wq_fd == ~0U &&
	      p.resv[0] == ~0U && p.resv[1] == ~0U && p.resv[2] == ~0U,
	      "fields a resize ignores were changed");
	CHECK_EQ(p.sq_off.array, ~0U, "SQ array offset left alone");
	check_offsets(&p, &setup, "plain");

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CLAMP;
	p.sq_entries = 100000;
	CHECK_EQ(resize(ring.ring_fd, &p), 0, "CLAMP");
	CHECK(p.sq_entries == 32768 && p.cq_entries == 65536,
	      "CLAMP: %u/%u entries", p.sq_entries, p.cq_entries);
	CHECK_EQ(p.flags, IORING_SETUP_CLAMP | keep, "CLAMP flags");

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.sq_entries = 16;
	p.cq_entries = 100;
	CHECK_EQ(resize(ring.ring_fd, &p), 0, "CQSIZE");
	CHECK(p.sq_entries == 16 && p.cq_entries == 128,
	      "CQSIZE: %u/%u entries", p.sq_entries, p.cq_entries);
	check_offsets(&p, &setup, "CQSIZE");
	/* liburing's own mappings are stale now: close by the fd. */
	io_uring_queue_exit(&ring);
}

static void map_new(int fd, struct io_uring_params *p, struct io_uring *r)
{
	memset(r, 0, sizeof(*r));
	CHECK_EQ(io_uring_queue_mmap(fd, p, r), 0, "io_uring_queue_mmap");
}

static void unmap(struct io_uring *r)
{
	munmap(r->sq.sqes, r->sq.sqes_sz);
	munmap(r->sq.ring_ptr, r->sq.ring_sz);
	if (r->cq.ring_ptr != r->sq.ring_ptr)
		munmap(r->cq.ring_ptr, r->cq.ring_sz);
}

static void test_moves(void)
{
	struct io_uring_params p, setup;
	struct io_uring ring, r2, r3;
	struct io_uring_sqe *sqe;
	unsigned old_tail;
	int fd;

	init_defer(&ring, &setup);
	fd = ring.ring_fd;
	for (int i = 0; i < 4; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = i + 1;
	}
	/* Published, not submitted. */
	io_uring_smp_store_release(ring.sq.ktail, ring.sq.sqe_tail);

	memset(&p, 0, sizeof(p));
	p.sq_entries = 2;
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 2;
	if (resize(fd, &p) == -EINVAL && tu_lacks_before(6, 13, "IORING_REGISTER_RESIZE_RINGS")) {
		io_uring_queue_exit(&ring);
		return;
	}
	memset(&p, 0, sizeof(p));
	p.sq_entries = 2;
	CHECK_EQ(resize(fd, &p), -EOVERFLOW, "4 SQEs into 2 slots");
	CHECK_EQ(p.sq_entries, 2, "EOVERFLOW after the write-back");
	memset(&p, 0, sizeof(p));
	p.sq_entries = 4;
	CHECK_EQ(resize(fd, &p), 0, "4 SQEs into 4 slots");
	map_new(fd, &p, &r2);
	CHECK(*r2.sq.khead == 0 && *r2.sq.ktail == 4,
	      "new SQ head/tail %u/%u", *r2.sq.khead, *r2.sq.ktail);
	CHECK_EQ(*r2.sq.kring_entries, 4, "new SQ entries");
	CHECK_EQ(io_uring_enter(fd, 4, 4, IORING_ENTER_GETEVENTS, NULL), 4, "submit the moved SQEs");
	CHECK(*r2.cq.khead == 0 && *r2.cq.ktail == 4,
	      "CQ head/tail %u/%u", *r2.cq.khead, *r2.cq.ktail);
	for (unsigned i = 0; i < 4; i++) {
		struct io_uring_cqe *c = &r2.cq.cqes[i & *r2.cq.kring_mask];

		CHECK(c->user_data == i + 1 && c->res == 0,
		      "moved SQE %u: ud %llu res %d", i,
		      (unsigned long long)c->user_data, c->res);
	}

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.sq_entries = 1;
	p.cq_entries = 2;
	CHECK_EQ(resize(fd, &p), -EOVERFLOW, "4 CQEs into 2 slots");

	/* Reap one, then move the other 3 with the CQ's flags and counters. */
	io_uring_smp_store_release(r2.cq.khead, 1);
	*r2.cq.kflags = IORING_CQ_EVENTFD_DISABLED;
	*r2.sq.kdropped = 77;
	*r2.cq.koverflow = 55;
	old_tail = *r2.cq.ktail;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.sq_entries = 2;
	p.cq_entries = 8;
	CHECK_EQ(resize(fd, &p), 0, "3 CQEs into 8 slots");
	map_new(fd, &p, &r3);
	CHECK(*r3.cq.khead == 1 && *r3.cq.ktail == 4,
	      "moved CQ head/tail %u/%u", *r3.cq.khead, *r3.cq.ktail);
	for (unsigned i = 1; i < 4; i++)
		CHECK_EQ(r3.cq.cqes[i & *r3.cq.kring_mask].user_data, i + 1, "moved CQE");
	CHECK_EQ(*r3.cq.kflags, IORING_CQ_EVENTFD_DISABLED, "CQ flags carried");
	CHECK_EQ(*r3.sq.kdropped, 77, "SQ dropped carried");
	CHECK_EQ(*r3.cq.koverflow, 55, "CQ overflow carried");
	CHECK_EQ(*r3.cq.kring_entries, 8, "new CQ entries");
	/* The old mapping is still there, and no longer the ring's. */
	CHECK_EQ(*r2.cq.ktail, old_tail, "old mapping readable");
	*r2.cq.khead = 0;
	CHECK_EQ(*r3.cq.khead, 1, "old mapping is not the ring's");

	unmap(&r2);
	unmap(&r3);
	io_uring_queue_exit(&ring);
}

static void *pages(size_t n)
{
	void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(m != MAP_FAILED, "mmap");
	return m;
}

static void test_no_mmap(void)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	void *mem = pages(65536);
	void *rings2 = pages(65536), *sqes2 = pages(65536);
	int fd, ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_mem(4, &ring, &p, mem, 65536);
	if (ret == -EINVAL) {
		tu_lacks("IORING_SETUP_NO_MMAP");
		return;
	}
	CHECK(ret >= 0, "io_uring_queue_init_mem: %d", ret);
	fd = ring.ring_fd;

	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	p.sq_off.user_addr = (unsigned long)sqes2;
	ret = resize(fd, &p);
	if (ret == -EINVAL && tu_lacks_before(6, 13, "IORING_REGISTER_RESIZE_RINGS")) {
		io_uring_queue_exit(&ring);
		return;
	}
	CHECK_EQ(ret, -EFAULT, "NO_MMAP resize without rings memory");
	p.cq_off.user_addr = (unsigned long)rings2 + 8;
	CHECK_EQ(resize(fd, &p), -EINVAL, "NO_MMAP resize, rings not page-aligned");
	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	p.cq_off.user_addr = (unsigned long)rings2;
	p.sq_off.user_addr = (unsigned long)sqes2;
	CHECK_EQ(resize(fd, &p), 0, "NO_MMAP resize");
	CHECK(p.flags & IORING_SETUP_NO_MMAP, "NO_MMAP kept");
	CHECK(p.cq_off.user_addr == (unsigned long)rings2 &&
	      p.sq_off.user_addr == (unsigned long)sqes2, "user addresses written back");
	CHECK_EQ(*(unsigned *)((char *)rings2 + p.sq_off.ring_entries), 16, "new SQ entries in the new memory");
	sqe = sqes2;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_NOP;
	sqe->user_data = 42;
	io_uring_smp_store_release((unsigned *)((char *)rings2 + p.sq_off.tail), 1);
	CHECK_EQ(io_uring_enter(fd, 1, 1, IORING_ENTER_GETEVENTS, NULL), 1, "NOP in the new memory");
	cqe = (void *)((char *)rings2 + p.cq_off.cqes);
	CHECK_EQ(*(unsigned *)((char *)rings2 + p.cq_off.tail), 1, "CQ tail in the new memory");
	CHECK(cqe->user_data == 42 && cqe->res == 0, "NOP's CQE: ud %llu res %d",
	      (unsigned long long)cqe->user_data, cqe->res);
	io_uring_queue_exit(&ring);
	munmap(mem, 65536);
	munmap(rings2, 65536);
	munmap(sqes2, 65536);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);

	test_bad_input();
	test_write_back();
	test_moves();
	test_no_mmap();
	return tu_done();
}
