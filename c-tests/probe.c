/* SPDX-License-Identifier: MIT */
/*
 * Opcode probing: io_uring_get_probe() (private throwaway ring) and
 * io_uring_get_probe_ring() (existing ring) agree with each other, report a
 * sane last_op / ops_len, mark NOP, READ, WRITE, READV, WRITEV as supported,
 * report out-of-range opcodes as unsupported, and can be freed; and both
 * carry exactly the kernel's own answer to IORING_REGISTER_PROBE, asked
 * with a raw system call.
 */
#include <liburing.h>
#include <sys/syscall.h>
#include "test-util.h"

static void check_probe(const struct io_uring_probe *p, const char *what)
{
	static const int must[] = {
		IORING_OP_NOP, IORING_OP_READV, IORING_OP_WRITEV,
		IORING_OP_READ, IORING_OP_WRITE, IORING_OP_TIMEOUT,
		IORING_OP_FSYNC,
	};

	CHECK(p, "%s returned NULL", what);
	/* A 6.x kernel knows well beyond IORING_OP_WRITE. */
	CHECK(p->last_op >= IORING_OP_WRITE, "%s: last_op %u too small",
	      what, p->last_op);
	CHECK(p->ops_len == (unsigned)p->last_op + 1,
	      "%s: ops_len %u, last_op %u", what, p->ops_len, p->last_op);
	CHECK(p->ops_len <= 256, "%s: ops_len %u > 256", what, p->ops_len);
	for (unsigned i = 0; i < p->ops_len; i++)
		CHECK(p->ops[i].op == i, "%s: ops[%u].op = %u", what, i,
		      p->ops[i].op);
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++) {
		CHECK(io_uring_opcode_supported(p, must[i]),
		      "%s: opcode %d reported unsupported", what, must[i]);
		CHECK(p->ops[must[i]].flags & IO_URING_OP_SUPPORTED,
		      "%s: ops[%d] lacks IO_URING_OP_SUPPORTED", what, must[i]);
	}
	CHECK(!io_uring_opcode_supported(p, p->last_op + 1),
	      "%s: opcode past last_op reported supported", what);
	CHECK(!io_uring_opcode_supported(p, 255),
	      "%s: opcode 255 reported supported", what);
}

/* Same last_op, length and per-opcode flags as the kernel reports. */
static void check_against_kernel(const struct io_uring_probe *p, int ring_fd,
				 const char *what)
{
	size_t sz = sizeof(*p) + 256 * sizeof(p->ops[0]);
	struct io_uring_probe *k = calloc(1, sz);
	unsigned n = 0;
	long ret;

	CHECK(k, "calloc");
	/* The raw wrapper: the kernel's answer, or the engine's for its rings. */
	ret = io_uring_register(ring_fd, IORING_REGISTER_PROBE, k, 256);
	CHECK_EQ(ret, 0, "raw IORING_REGISTER_PROBE");
	CHECK_EQ(p->last_op, k->last_op, what);
	CHECK_EQ(p->ops_len, k->ops_len, what);
	for (unsigned i = 0; i < k->ops_len; i++) {
		CHECK(p->ops[i].flags == k->ops[i].flags,
		      "%s: opcode %u flags %#x, kernel says %#x", what, i,
		      p->ops[i].flags, k->ops[i].flags);
		n += !!(k->ops[i].flags & IO_URING_OP_SUPPORTED);
	}
	printf("%s: %u of %u opcodes supported, as the kernel says\n", what, n,
	       k->ops_len);
	free(k);
}

int main(int argc, char *argv[])
{
	struct io_uring_probe *p1, *p2;
	struct io_uring ring;
	int ret;

	(void)argc;
	tu_set_name(argv[0]);

	p1 = io_uring_get_probe();
	check_probe(p1, "io_uring_get_probe");

	ret = io_uring_queue_init(4, &ring, 0);
	CHECK_EQ(ret, 0, "io_uring_queue_init");
	p2 = io_uring_get_probe_ring(&ring);
	check_probe(p2, "io_uring_get_probe_ring");
	check_against_kernel(p1, ring.ring_fd, "io_uring_get_probe");
	check_against_kernel(p2, ring.ring_fd, "io_uring_get_probe_ring");

	CHECK(p1->last_op == p2->last_op, "last_op differs: %u vs %u",
	      p1->last_op, p2->last_op);
	for (unsigned i = 0; i <= p1->last_op; i++)
		CHECK(io_uring_opcode_supported(p1, i) ==
		      io_uring_opcode_supported(p2, i),
		      "opcode %u support differs between probes", i);

	/* The ring still works after being probed. */
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;

	CHECK(sqe, "get_sqe");
	io_uring_prep_nop(sqe);
	sqe->user_data = 42;
	CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "submit_and_wait");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek_cqe");
	CHECK(cqe->user_data == 42 && cqe->res == 0, "bad nop cqe");
	io_uring_cqe_seen(&ring, cqe);

	io_uring_free_probe(p1);
	io_uring_free_probe(p2);
	io_uring_queue_exit(&ring);
	tu_pass();
	return T_EXIT_PASS;
}
