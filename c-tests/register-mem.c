/* SPDX-License-Identifier: MIT */
/*
 * Memory regions, queries and BPF filters:
 *  - io_uring_register_region with user memory as the wait-argument area
 *    of an R_DISABLED ring; io_uring_submit_and_wait_reg then takes its
 *    timeout from that memory; a second region is -EBUSY, a wait-arg
 *    region on an enabled ring and unknown flags are -EINVAL;
 *  - a kernel-allocated region registers too;
 *  - io_uring_register_wait_reg (a stub returning -EINVAL in liburing)
 *    registers page-aligned wait slots of an R_DISABLED ring, which
 *    io_uring_submit_and_wait_reg then uses; bad arguments are -EINVAL;
 *  - io_uring_register_query reports opcode counts that agree with the
 *    probe (the kernel's, or the engine's where the kernel refuses
 *    io_uring), flags unknown queries in hdr->result, follows chains;
 *  - io_uring_register_bpf_filter(_task): argument validation.
 * On kernels without memory regions (before 6.13) or without queries those
 * parts are left out and named in the final skip.
 */
#define LIBURING_RS_SOURCE
#include <liburing.h>
#include <sys/mman.h>
#include "test-util.h"

static void region_test(void)
{
	struct io_uring ring;
	struct io_uring_region_desc rd;
	struct io_uring_mem_region_reg mr;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct io_uring_reg_wait *rw;
	int ret;

	rw = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		  -1, 0);
	CHECK(rw != MAP_FAILED, "mmap");
	memset(rw, 0, pg);

	/* On an enabled ring a wait-arg region is refused. */
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	memset(&rd, 0, sizeof(rd));
	rd.user_addr = (unsigned long)rw;
	rd.size = pg;
	rd.flags = IORING_MEM_REGION_TYPE_USER;
	memset(&mr, 0, sizeof(mr));
	mr.region_uptr = (unsigned long)&rd;
	mr.flags = IORING_MEM_REGION_REG_WAIT_ARG;
	ret = io_uring_register_region(&ring, &mr);
	CHECK_EQ(ret, -EINVAL, "wait-arg region on an enabled ring");
	mr.flags = 0x100;
	CHECK_EQ(io_uring_register_region(&ring, &mr), -EINVAL, "unknown flag");
	io_uring_queue_exit(&ring);

	ret = io_uring_queue_init(8, &ring, IORING_SETUP_R_DISABLED);
	CHECK_EQ(ret, 0, "queue_init disabled");
	mr.flags = IORING_MEM_REGION_REG_WAIT_ARG;
	/* Memory that cannot be pinned for writing is -EFAULT: none, or a
	 * read-only mapping. */
	void *ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(ro != MAP_FAILED, "mmap read-only");
	rd.user_addr = 0;
	ret = io_uring_register_region(&ring, &mr);
	if (ret == -EINVAL &&
	    tu_lacks_before(6, 13, "IORING_REGISTER_MEM_REGION")) {
		io_uring_queue_exit(&ring);
		munmap(rw, pg);
		munmap(ro, pg);
		return;
	}
	CHECK_EQ(ret, -EFAULT, "region at NULL");
	rd.user_addr = (unsigned long)ro;
	CHECK_EQ(io_uring_register_region(&ring, &mr), -EFAULT,
		 "read-only region");
	munmap(ro, pg);
	rd.user_addr = (unsigned long)rw;
	ret = io_uring_register_region(&ring, &mr);
	CHECK_EQ(ret, 0, "register wait-arg region");
	CHECK_EQ(io_uring_register_region(&ring, &mr), -EBUSY, "second region");
	CHECK_EQ(io_uring_enable_rings(&ring), 0, "enable");

	/* Slot 1 of the region holds a 20 ms timeout. */
	rw[1].ts.tv_sec = 0;
	rw[1].ts.tv_nsec = 20 * 1000 * 1000;
	rw[1].flags = IORING_REG_WAIT_TS;
	struct io_uring_cqe *cqe;
	long long t0 = tu_now_ns();

	ret = io_uring_submit_and_wait_reg(&ring, &cqe, 1, 1);
	CHECK_EQ(ret, -ETIME, "wait with the region's timeout");
	CHECK(tu_now_ns() - t0 >= 15 * 1000 * 1000, "timeout too short");

	/* With a NOP queued the same wait completes at once. */
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	io_uring_prep_nop(sqe);
	sqe->user_data = 9;
	/* It returns what it submitted, as io_uring_submit_and_wait does. */
	CHECK_EQ(io_uring_submit_and_wait_reg(&ring, &cqe, 1, 1), 1,
		 "wait with a nop");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "nop cqe ready");
	CHECK_EQ(cqe->user_data, 9, "nop cqe");
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	munmap(rw, pg);

	/* Kernel-allocated region, no special use (the userspace engine has
	 * only wait-argument regions, and refuses it). */
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	memset(&rd, 0, sizeof(rd));
	rd.size = pg;
	memset(&mr, 0, sizeof(mr));
	mr.region_uptr = (unsigned long)&rd;
	if (liburing_rs_ring_engine(&ring) == LIBURING_RS_ENGINE_USER) {
		CHECK_EQ(io_uring_register_region(&ring, &mr), -EINVAL, "kernel region on the engine");
		io_uring_queue_exit(&ring);
		return;
	}
	CHECK_EQ(io_uring_register_region(&ring, &mr), 0, "kernel region");
	rd.size = 0;
	CHECK_EQ(io_uring_register_region(&ring, &mr), -EBUSY, "one region");
	io_uring_queue_exit(&ring);
}

static void wait_reg_test(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct io_uring_reg_wait *rw;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	long long t0;
	int ret;

	rw = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(rw != MAP_FAILED, "mmap");

	/* Bad arguments, and an enabled ring, are refused. */
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK_EQ(io_uring_register_wait_reg(&ring, NULL, 1), -EINVAL, "NULL slots");
	CHECK_EQ(io_uring_register_wait_reg(&ring, rw, 0), -EINVAL, "no slots");
	CHECK_EQ(io_uring_register_wait_reg(&ring, rw + 1, 1), -EINVAL, "unaligned");
	CHECK_EQ(io_uring_register_wait_reg(&ring, rw, 1), -EINVAL, "enabled ring");
	io_uring_queue_exit(&ring);

	CHECK_EQ(io_uring_queue_init(8, &ring, IORING_SETUP_R_DISABLED), 0,
		 "queue_init disabled");
	ret = io_uring_register_wait_reg(&ring, rw, 4);
	if (ret == -EINVAL &&
	    tu_lacks_before(6, 13, "IORING_REGISTER_MEM_REGION")) {
		io_uring_queue_exit(&ring);
		munmap(rw, pg);
		return;
	}
	CHECK_EQ(ret, 0, "register 4 wait slots");
	CHECK_EQ(io_uring_register_wait_reg(&ring, rw, 4), -EBUSY, "second region");
	CHECK_EQ(io_uring_enable_rings(&ring), 0, "enable");

	/* Slot 3 holds a 30 ms timeout; the wait takes it from there. */
	memset(rw, 0, 4 * sizeof(*rw));
	rw[3].ts.tv_nsec = 30 * 1000 * 1000;
	rw[3].flags = IORING_REG_WAIT_TS;
	t0 = tu_now_ns();
	CHECK_EQ(io_uring_submit_and_wait_reg(&ring, &cqe, 1, 3), -ETIME,
		 "wait with slot 3's timeout");
	CHECK(tu_now_ns() - t0 >= 25 * 1000 * 1000, "timeout too short");

	io_uring_prep_nop(io_uring_get_sqe(&ring));
	CHECK_EQ(io_uring_submit_and_wait_reg(&ring, &cqe, 1, 3), 1, "submit+wait");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "nop completed");
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	munmap(rw, pg);
}

static void query_test(void)
{
	struct io_uring ring;
	struct io_uring_query_opcode op;
	struct io_uring_query_hdr h, h2;
	int ret;

	/* The query describes the io_uring a ring set up now gets: compare it
	 * with a kernel ring, whatever LIBURING_RS_ENGINE says, or with an
	 * engine ring where the kernel refuses io_uring (the engine answers). */
	const char *engine = getenv("LIBURING_RS_ENGINE");
	char saved[16];

	snprintf(saved, sizeof(saved), "%s", engine ? engine : "");
	setenv("LIBURING_RS_ENGINE", tu_kernel_uring_blocked() ? "auto" : "kernel", 1);
	memset(&op, 0, sizeof(op));
	memset(&h, 0, sizeof(h));
	h.query_op = IO_URING_QUERY_OPCODES;
	h.query_data = (unsigned long)&op;
	h.size = sizeof(op);
	ret = io_uring_register_query(&h);
	if (ret == -EINVAL) {
		tu_lacks("IORING_REGISTER_QUERY");
		return;
	}
	CHECK_EQ(ret, 0, "query");
	CHECK_EQ(h.result, 0, "query result");

	/* The opcode count matches the probe, the features the ring's. */
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	struct io_uring_probe *p = io_uring_get_probe_ring(&ring);

	CHECK(p, "probe");
	CHECK_EQ(op.nr_request_opcodes, p->last_op + 1, "request opcodes");
	CHECK((op.feature_flags & ring.features) == ring.features,
	      "features %llx vs ring %x", (unsigned long long)op.feature_flags,
	      ring.features);
	CHECK(op.nr_register_opcodes > IORING_REGISTER_RESIZE_RINGS,
	      "register opcodes %u", op.nr_register_opcodes);
	CHECK(op.sqe_flags & IOSQE_BUFFER_SELECT, "sqe flags");
	io_uring_free_probe(p);
	io_uring_queue_exit(&ring);

	/* A chain: an unknown query is reported in its own header only. */
	memset(&op, 0, sizeof(op));
	memset(&h2, 0, sizeof(h2));
	h2.query_op = 9999;
	h.next_entry = (unsigned long)&h2;
	h.result = 0;
	CHECK_EQ(io_uring_register_query(&h), 0, "chained query");
	CHECK_EQ(h.result, 0, "first entry");
	CHECK(op.nr_request_opcodes > 0, "first entry filled");
	CHECK_EQ(h2.result, -EOPNOTSUPP, "unknown query op");

	/* A short answer buffer gets just its share (the ABI grows at the
	 * end); a header whose result is not zero on input is refused. */
	memset(&op, 0xff, sizeof(op));
	h.next_entry = 0;
	h.size = 4;
	h.result = 0;
	CHECK_EQ(io_uring_register_query(&h), 0, "short query");
	CHECK_EQ(h.result, 0, "short query result");
	CHECK(op.nr_request_opcodes > 0 && op.nr_request_opcodes < 1000,
	      "first field filled");
	CHECK_EQ(op.nr_register_opcodes, 0xffffffffu, "past the size untouched");
	h.result = -1;
	CHECK_EQ(io_uring_register_query(&h), 0, "dirty header");
	CHECK_EQ(h.result, -EINVAL, "dirty header result");
	CHECK_EQ(io_uring_register_query(NULL), 0, "empty chain");
	h.size = sizeof(op);
	h.result = 0;
	h.query_data = 8;
	CHECK_EQ(io_uring_register_query(&h), -EFAULT, "bad data pointer");
	if (engine)
		setenv("LIBURING_RS_ENGINE", saved, 1);
	else
		unsetenv("LIBURING_RS_ENGINE");
}

static void bpf_test(void)
{
	struct io_uring ring;
	struct io_uring_bpf bpf;

	/* This kernel predates BPF filters or rejects an empty command:
	 * either way a zeroed request must fail with -EINVAL, not crash. */
	memset(&bpf, 0, sizeof(bpf));
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK_EQ(io_uring_register_bpf_filter(&ring, &bpf), -EINVAL, "ring");
	/* The task-wide call reaches the kernel whatever the ring is. */
	if (!tu_kernel_uring_blocked())
		CHECK_EQ(io_uring_register_bpf_filter_task(&bpf), -EINVAL, "task");
	bpf.cmd_type = IO_URING_BPF_CMD_FILTER;
	bpf.resv = 1;
	CHECK_EQ(io_uring_register_bpf_filter(&ring, &bpf), -EINVAL,
		 "reserved field");
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	wait_reg_test();
	query_test();
	bpf_test();
	region_test();
	return tu_done();
}
