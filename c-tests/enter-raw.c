/* SPDX-License-Identifier: MIT */
/*
 * The raw system call wrappers exported by liburing: io_uring_setup,
 * io_uring_enter, io_uring_enter2 and io_uring_register. They return a
 * negative errno on failure (not -1 + errno).
 *
 *  - A ring built entirely by hand: io_uring_setup + three mmap()s using
 *    the offsets the kernel reports, an SQE written directly, the tail
 *    published, io_uring_enter(to_submit=1, min_complete=1, GETEVENTS),
 *    and the CQE read back from the mapped CQ.
 *  - io_uring_register(IORING_REGISTER_PROBE) on the raw fd.
 *  - io_uring_enter2 with IORING_ENTER_EXT_ARG and a timeout -> -ETIME.
 *  - io_uring_enter(GETEVENTS) on a ring from io_uring_queue_init.
 *  - Error returns for bad fds / arguments.
 */
#include <liburing.h>
#include <sys/mman.h>
#include "test-util.h"

static void hand_built_ring(void)
{
	struct io_uring_params p;
	void *sq_ptr, *cq_ptr;
	struct io_uring_sqe *sqes;
	size_t sq_sz, cq_sz;
	int fd, ret;

	memset(&p, 0, sizeof(p));
	fd = io_uring_setup(4, &p);
	CHECK(fd >= 0, "io_uring_setup: %s", strerror(-fd));
	CHECK_EQ(p.sq_entries, 4, "params.sq_entries");
	CHECK_EQ(p.cq_entries, 8, "params.cq_entries");
	CHECK(p.features & IORING_FEAT_SINGLE_MMAP, "no FEAT_SINGLE_MMAP");
	CHECK(p.features & IORING_FEAT_NODROP, "no FEAT_NODROP");
	CHECK(p.sq_off.array != 0 && p.cq_off.cqes != 0, "offsets not filled");

	sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (cq_sz > sq_sz)
		sq_sz = cq_sz;
	sq_ptr = mmap(NULL, sq_sz, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
	CHECK(sq_ptr != MAP_FAILED, "mmap sq ring: %s", strerror(errno));
	cq_ptr = sq_ptr;	/* single mmap */
	sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		    IORING_OFF_SQES);
	CHECK(sqes != MAP_FAILED, "mmap sqes: %s", strerror(errno));

	unsigned *sq_tail = (unsigned *)((char *)sq_ptr + p.sq_off.tail);
	unsigned *sq_head = (unsigned *)((char *)sq_ptr + p.sq_off.head);
	unsigned *sq_mask = (unsigned *)((char *)sq_ptr + p.sq_off.ring_mask);
	unsigned *sq_array = (unsigned *)((char *)sq_ptr + p.sq_off.array);
	unsigned *cq_head = (unsigned *)((char *)cq_ptr + p.cq_off.head);
	unsigned *cq_tail = (unsigned *)((char *)cq_ptr + p.cq_off.tail);
	unsigned *cq_mask = (unsigned *)((char *)cq_ptr + p.cq_off.ring_mask);
	struct io_uring_cqe *cqes =
		(struct io_uring_cqe *)((char *)cq_ptr + p.cq_off.cqes);

	CHECK_EQ(*sq_mask, 3, "sq ring mask");
	CHECK_EQ(*cq_mask, 7, "cq ring mask");

	/* Three rounds of 3 NOPs, so indices wrap the 4-entry SQ. */
	for (unsigned round = 0; round < 3; round++) {
		unsigned tail = *sq_tail;

		for (unsigned i = 0; i < 3; i++) {
			unsigned idx = (tail + i) & *sq_mask;

			memset(&sqes[idx], 0, sizeof(sqes[idx]));
			sqes[idx].opcode = IORING_OP_NOP;
			sqes[idx].user_data = round * 10 + i;
			sq_array[idx] = idx;
		}
		__atomic_store_n(sq_tail, tail + 3, __ATOMIC_RELEASE);

		ret = io_uring_enter(fd, 3, 3, IORING_ENTER_GETEVENTS, NULL);
		CHECK_EQ(ret, 3, "io_uring_enter submit+wait");
		CHECK_EQ(__atomic_load_n(sq_head, __ATOMIC_ACQUIRE), tail + 3,
			 "kernel sq head");

		unsigned head = *cq_head;
		unsigned ctail = __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE);

		CHECK_EQ(ctail - head, 3, "cqes posted");
		for (unsigned i = 0; i < 3; i++) {
			struct io_uring_cqe *c = &cqes[(head + i) & *cq_mask];

			CHECK(c->user_data == round * 10 + i, "cqe %u ud %llu",
			      i, (unsigned long long)c->user_data);
			CHECK_EQ(c->res, 0, "raw nop res");
		}
		__atomic_store_n(cq_head, head + 3, __ATOMIC_RELEASE);
	}

	/* Probe through the raw register wrapper. */
	size_t plen = sizeof(struct io_uring_probe) +
		      256 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *probe = calloc(1, plen);

	CHECK(probe, "calloc");
	ret = io_uring_register(fd, IORING_REGISTER_PROBE, probe, 256);
	CHECK_EQ(ret, 0, "io_uring_register(PROBE)");
	CHECK(probe->last_op >= IORING_OP_WRITE, "probe last_op %u",
	      probe->last_op);
	CHECK(probe->ops[IORING_OP_NOP].flags & IO_URING_OP_SUPPORTED,
	      "NOP not supported per raw probe");
	/* A probe must be zeroed: the kernel refuses a dirty one. */
	ret = io_uring_register(fd, IORING_REGISTER_PROBE, probe, 256);
	CHECK_EQ(ret, -EINVAL, "io_uring_register(PROBE) with a used buffer");
	free(probe);

	/* enter2 with an extended argument carrying a 20 ms timeout. */
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 20000000 };
	struct io_uring_getevents_arg arg = {
		.ts = (unsigned long long)(uintptr_t)&ts,
	};
	long long start = tu_now_ns();

	ret = io_uring_enter2(fd, 0, 1,
			      IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			      &arg, sizeof(arg));
	CHECK_EQ(ret, -ETIME, "io_uring_enter2 with timeout");
	CHECK(tu_now_ns() - start >= 19000000LL, "enter2 returned too early");

	/* enter2 with the plain sigset form. */
	sigset_t set;

	sigemptyset(&set);
	ret = io_uring_enter2(fd, 0, 0, IORING_ENTER_GETEVENTS, &set, _NSIG / 8);
	CHECK_EQ(ret, 0, "io_uring_enter2 with sigmask, nothing to do");

	munmap(sqes, p.sq_entries * sizeof(struct io_uring_sqe));
	munmap(sq_ptr, sq_sz);
	close(fd);
}

static void enter_on_liburing_ring(void)
{
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(8, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");
	for (int i = 0; i < 5; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_nop(sqe);
		sqe->user_data = i;
	}
	CHECK_EQ(io_uring_submit(&ring), 5, "submit");
	ret = io_uring_enter(ring.ring_fd, 0, 5, IORING_ENTER_GETEVENTS, NULL);
	CHECK_EQ(ret, 0, "io_uring_enter(GETEVENTS) on a liburing ring");
	CHECK_EQ(io_uring_cq_ready(&ring), 5, "cq ready after raw enter");
	io_uring_cq_advance(&ring, 5);

	/* Raw register on a liburing ring: a probe. */
	size_t plen = sizeof(struct io_uring_probe) +
		      8 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *probe = calloc(1, plen);

	CHECK(probe, "calloc");
	ret = io_uring_register(ring.ring_fd, IORING_REGISTER_PROBE, probe, 8);
	CHECK_EQ(ret, 0, "io_uring_register(PROBE, 8)");
	CHECK(probe->ops_len <= 8, "ops_len %u exceeds the 8 asked for",
	      probe->ops_len);
	free(probe);
	io_uring_queue_exit(&ring);
}

static void errors(void)
{
	struct io_uring_params p;
	int badfd = 900, devnull;

	while (fcntl(badfd, F_GETFD) != -1)
		badfd++;

	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_setup(0, &p), -EINVAL, "io_uring_setup(0)");
	memset(&p, 0, sizeof(p));
	p.flags = 1U << 31;
	CHECK_EQ(io_uring_setup(4, &p), -EINVAL, "io_uring_setup(bad flags)");
	memset(&p, 0, sizeof(p));
	p.resv[0] = 1;
	CHECK_EQ(io_uring_setup(4, &p), -EINVAL,
		 "io_uring_setup with reserved field set");

	CHECK_EQ(io_uring_enter(badfd, 0, 0, 0, NULL), -EBADF,
		 "io_uring_enter(bad fd)");
	CHECK_EQ(io_uring_enter2(badfd, 0, 0, 0, NULL, 0), -EBADF,
		 "io_uring_enter2(bad fd)");
	CHECK_EQ(io_uring_register(badfd, IORING_REGISTER_PROBE, NULL, 0),
		 -EBADF, "io_uring_register(bad fd)");

	devnull = open("/dev/null", O_RDONLY);
	CHECK(devnull >= 0, "open /dev/null");
	CHECK_EQ(io_uring_enter(devnull, 0, 0, 0, NULL), -EOPNOTSUPP,
		 "io_uring_enter on a non-ring fd");
	CHECK_EQ(io_uring_register(devnull, IORING_REGISTER_PROBE, NULL, 0),
		 -EOPNOTSUPP, "io_uring_register on a non-ring fd");
	close(devnull);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);
	if (tu_kernel_uring_blocked())
		SKIP("the kernel refuses io_uring: the raw wrappers have no ring to call");

	hand_built_ring();
	enter_on_liburing_ring();
	errors();
	tu_pass();
	return T_EXIT_PASS;
}
