/* SPDX-License-Identifier: MIT */
/*
 * raw-resize: a raw program resizes its DEFER_TASKRUN ring with SQEs
 * published but not submitted, maps the new rings at the offsets the
 * call wrote back, and submits them there: each completes with its own
 * user_data. A ring-less IORING_REGISTER_QUERY answers the opcode counts.
 * Linux before 6.13 (no resizing) or 6.18 (no query) passes what it has.
 */
#include "raw.h"
#include <liburing/io_uring/query.h>

int main(void)
{
	struct io_uring_query_opcode o;
	struct io_uring_query_hdr h;
	struct io_uring_params p;
	struct io_uring_cqe c;
	struct raw_ring r;
	int ret;

	memset(&o, 0, sizeof(o));
	memset(&h, 0, sizeof(h));
	h.query_op = IO_URING_QUERY_OPCODES;
	h.query_data = (unsigned long)&o;
	h.size = sizeof(o);
	ret = sys_register(-1, IORING_REGISTER_QUERY, &h, 0);
	CHECK(ret == 0 || errno == EINVAL);
	if (ret == 0)
		CHECK(h.result == 0 && h.size == sizeof(o) && o.nr_register_opcodes > IORING_REGISTER_QUERY);

	raw_init(&r, 4, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_NO_SQARRAY);
	for (int i = 0; i < 3; i++) {
		struct io_uring_sqe *s = &r.sqes[r.sqe_tail++ & *r.sq_mask];

		memset(s, 0, sizeof(*s));
		s->opcode = IORING_OP_NOP;
		s->user_data = 100 + i;
	}
	atomic_store_explicit(r.sq_tail, r.sqe_tail, memory_order_release);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	ret = sys_register(r.fd, IORING_REGISTER_RESIZE_RINGS, &p, 1);
	if (ret < 0 && errno == EINVAL) {
		raw_exit(&r);
		return 0;
	}
	CHECK(ret == 0 && p.sq_entries == 16 && p.cq_entries == 32);
	CHECK(p.flags & IORING_SETUP_NO_SQARRAY);
	/* The old mappings are the program's to drop; the new ones come
	 * from the offsets written back. */
	munmap(r.sqes, r.sqes_len);
	munmap(r.sq, r.sq_len);
	r.p = p;
	r.sq_len = r.cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r.sq = r.cq = mmap(NULL, r.sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r.fd, IORING_OFF_SQ_RING);
	CHECK(r.sq != MAP_FAILED);
	r.sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r.sqes = mmap(NULL, r.sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r.fd, IORING_OFF_SQES);
	CHECK(r.sqes != MAP_FAILED);
	r.sq_tail = (void *)((char *)r.sq + p.sq_off.tail);
	r.sq_mask = (void *)((char *)r.sq + p.sq_off.ring_mask);
	r.cq_head = (void *)((char *)r.cq + p.cq_off.head);
	r.cq_tail = (void *)((char *)r.cq + p.cq_off.tail);
	r.cq_mask = (void *)((char *)r.cq + p.cq_off.ring_mask);
	r.cqes = (void *)((char *)r.cq + p.cq_off.cqes);
	CHECK(*r.sq_mask == 15 && atomic_load(r.sq_tail) == 3);
	CHECK(sys_enter(r.fd, 3, 3, IORING_ENTER_GETEVENTS, NULL, 0) == 3);
	for (int i = 0; i < 3; i++) {
		raw_wait(&r, &c);
		CHECK(c.user_data == 100u + i && c.res == 0);
	}
	raw_exit(&r);
	return 0;
}
