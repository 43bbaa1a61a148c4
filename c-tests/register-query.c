/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_QUERY, with no ring (fd -1) and on a ring, as the
 * kernel answers it (Linux 6.18 is the reference; the engine answers for
 * itself where it serves rings):
 *  - IO_URING_QUERY_OPCODES fills io_uring_query_opcode: counts above the
 *    opcodes in use, every feature a ring reports, the setup, enter and
 *    SQE flags a ring takes; the same with and without a ring;
 *  - a buffer shorter than the answer gets its first bytes, a longer one
 *    zeros after it, and hdr.size says how much was answered;
 *  - an unknown query gets -EOPNOTSUPP in hdr.result, reserved bits, a
 *    non-zero result or size 0 -EINVAL, the buffer zeroed to its size;
 *  - chains are followed; a cycle is -ERANGE, an unreadable header or
 *    buffer -EFAULT, nr_args other than 0 -EINVAL, a NULL chain 0.
 * Skips (exit 77) before Linux 6.18, which has no query.
 */
#include <liburing.h>
#include <liburing/io_uring/query.h>
#include "test-util.h"

static int query(int fd, void *arg, unsigned nr)
{
	return io_uring_register(fd, IORING_REGISTER_QUERY, arg, nr);
}

static void hdr_init(struct io_uring_query_hdr *h, unsigned op, void *data,
		     unsigned size)
{
	memset(h, 0, sizeof(*h));
	h->query_op = op;
	h->query_data = (unsigned long)data;
	h->size = size;
}

static void check_answer(const struct io_uring_query_opcode *o,
			 const struct io_uring_params *p, const char *what)
{
	CHECK(o->nr_request_opcodes > IORING_OP_TIMEOUT, "%s: %u request opcodes", what, o->nr_request_opcodes);
	CHECK(o->nr_register_opcodes > IORING_REGISTER_QUERY, "%s: %u register opcodes", what, o->nr_register_opcodes);
	CHECK((o->feature_flags & p->features) == p->features,
	      "%s: features %#llx lack the ring's %#x", what, (unsigned long long)o->feature_flags, p->features);
	CHECK((o->ring_setup_flags & (IORING_SETUP_SQPOLL | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_NO_SQARRAY)) ==
	      (IORING_SETUP_SQPOLL | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_NO_SQARRAY),
	      "%s: setup flags %#llx", what, (unsigned long long)o->ring_setup_flags);
	CHECK((o->enter_flags & (IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG)) ==
	      (IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG),
	      "%s: enter flags %#llx", what, (unsigned long long)o->enter_flags);
	CHECK_EQ(o->sqe_flags, 0x7f, "SQE flags");
	CHECK(o->nr_query_opcodes >= 1, "%s: %u query opcodes", what, o->nr_query_opcodes);
}

int main(int argc, char *argv[])
{
	struct io_uring_query_hdr h, h2, h3;
	struct io_uring_query_opcode o, o2, o3;
	struct io_uring_params p;
	struct io_uring ring;
	unsigned char buf[256];
	int ret;

	(void)argc;
	tu_set_name(argv[0]);
	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_queue_init_params(8, &ring, &p), 0, "queue_init");

	memset(&o, 0xee, sizeof(o));
	hdr_init(&h, IO_URING_QUERY_OPCODES, &o, sizeof(o));
	ret = query(-1, &h, 0);
	if (ret == -EINVAL && tu_lacks_before(6, 18, "IORING_REGISTER_QUERY"))
		return tu_done();
	CHECK_EQ(ret, 0, "query without a ring");
	CHECK_EQ(h.result, 0, "result");
	CHECK_EQ(h.size, sizeof(o), "answered size");
	check_answer(&o, &p, "no ring");

	memset(&o2, 0xee, sizeof(o2));
	hdr_init(&h, IO_URING_QUERY_OPCODES, &o2, sizeof(o2));
	CHECK_EQ(query(ring.ring_fd, &h, 0), 0, "query on a ring");
	CHECK(h.result == 0 && h.size == sizeof(o2), "ring: result %d size %u", h.result, h.size);
	CHECK(!memcmp(&o, &o2, sizeof(o)), "the ring's answer differs from the ring-less one");

	/* Shorter and longer buffers. */
	memset(buf, 0xee, sizeof(buf));
	hdr_init(&h, IO_URING_QUERY_OPCODES, buf, 4);
	CHECK_EQ(query(-1, &h, 0), 0, "4-byte query");
	CHECK(h.result == 0 && h.size == 4, "4 bytes: result %d size %u", h.result, h.size);
	CHECK(!memcmp(buf, &o, 4) && buf[4] == 0xee, "4 bytes: wrong bytes written");
	memset(buf, 0xee, sizeof(buf));
	hdr_init(&h, IO_URING_QUERY_OPCODES, buf, 200);
	CHECK_EQ(query(-1, &h, 0), 0, "200-byte query");
	CHECK(h.result == 0 && h.size == sizeof(o), "200 bytes: result %d size %u", h.result, h.size);
	CHECK(!memcmp(buf, &o, sizeof(o)), "200 bytes: answer");
	for (unsigned i = sizeof(o); i < 200; i++)
		CHECK(buf[i] == 0, "200 bytes: byte %u not zeroed", i);
	CHECK(buf[200] == 0xee, "200 bytes: written past the size");

	/* Refused entries: the result says why, the buffer is zeroed. */
	memset(buf, 0xee, sizeof(buf));
	hdr_init(&h, 77, buf, 16);
	CHECK_EQ(query(-1, &h, 0), 0, "unknown query");
	CHECK(h.result == -EOPNOTSUPP && h.size == 0, "unknown: result %d size %u", h.result, h.size);
	CHECK(buf[0] == 0 && buf[15] == 0 && buf[16] == 0xee, "unknown: buffer not zeroed to its size");
	hdr_init(&h, IO_URING_QUERY_OPCODES, buf, 0);
	CHECK_EQ(query(-1, &h, 0), 0, "size 0");
	CHECK_EQ(h.result, -EINVAL, "size 0 result");
	memset(buf, 0xee, sizeof(buf));
	hdr_init(&h, IO_URING_QUERY_OPCODES, buf, 8);
	h.result = 5;
	CHECK_EQ(query(-1, &h, 0), 0, "result set");
	CHECK(h.result == -EINVAL && h.size == 0 && buf[0] == 0, "result set: %d %u", h.result, h.size);
	hdr_init(&h, IO_URING_QUERY_OPCODES, buf, 8);
	h.__resv[1] = 1;
	CHECK_EQ(query(-1, &h, 0), 0, "reserved set");
	CHECK_EQ(h.result, -EINVAL, "reserved set result");

	/* Faults, arguments, chains. */
	hdr_init(&h, IO_URING_QUERY_OPCODES, (void *)8, 8);
	CHECK_EQ(query(-1, &h, 0), -EFAULT, "unreadable buffer");
	hdr_init(&h, 77, NULL, 8);
	CHECK_EQ(query(-1, &h, 0), -EFAULT, "unknown query, no buffer to zero");
	CHECK_EQ(query(-1, (void *)8, 0), -EFAULT, "unreadable header");
	CHECK_EQ(query(-1, NULL, 0), 0, "empty chain");
	hdr_init(&h, IO_URING_QUERY_OPCODES, &o, sizeof(o));
	CHECK_EQ(query(-1, &h, 1), -EINVAL, "nr_args 1");
	hdr_init(&h, IO_URING_QUERY_OPCODES, &o, sizeof(o));
	h.next_entry = 8;
	CHECK_EQ(query(-1, &h, 0), -EFAULT, "unreadable next header");
	CHECK(h.result == 0 && h.size == sizeof(o), "the entry before the bad one answered");
	hdr_init(&h, IO_URING_QUERY_OPCODES, &o, sizeof(o));
	h.next_entry = (unsigned long)&h;
	CHECK_EQ(query(-1, &h, 0), -ERANGE, "self-referencing chain");

	memset(&o2, 0, sizeof(o2));
	memset(&o3, 0, sizeof(o3));
	hdr_init(&h3, IO_URING_QUERY_OPCODES, &o3, sizeof(o3));
	hdr_init(&h2, IO_URING_QUERY_OPCODES, &o2, sizeof(o2));
	h2.next_entry = (unsigned long)&h3;
	hdr_init(&h, IO_URING_QUERY_OPCODES, buf, sizeof(o));
	h.next_entry = (unsigned long)&h2;
	CHECK_EQ(query(ring.ring_fd, &h, 0), 0, "chain of 3");
	CHECK(h.result == 0 && h2.result == 0 && h3.result == 0, "chain results");
	CHECK(!memcmp(&o2, &o, sizeof(o)) && !memcmp(&o3, &o, sizeof(o)), "chain answers");

	io_uring_queue_exit(&ring);
	return tu_done();
}
