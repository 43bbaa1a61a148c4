/* SPDX-License-Identifier: MIT */
/*
 * NAPI settings as Linux 6.13+ reads struct io_uring_napi: the byte after
 * prefer_busy_poll is an opcode (register, add or delete a static NAPI
 * id) and the next word its parameter (the tracking mode, or the id).
 *  - every call first writes the previous settings back, tracking mode
 *    included (255 while inactive), unless the struct's padding is dirty;
 *  - the timeout is capped at 10 ms and prefer_busy_poll read as a bool;
 *  - static ids: only in static tracking mode, only ids above the CPU
 *    range, -EEXIST twice, -ENOENT when absent, dropped by a new
 *    registration;
 *  - unregister reports timeout and prefer flag (no mode) and clears all;
 *  - an IOPOLL ring refuses registration, and nr must be 1.
 * The liburing header still calls these bytes pad[3] and resv, so the
 * test uses its own copy of the kernel's layout.
 */
#include <liburing.h>
#include "test-util.h"

struct knapi {
	__u32 to;
	__u8 prefer, opcode, pad[2];
	__u32 op_param, resv;
};

enum { OP_REG, OP_ADD, OP_DEL };
enum { DYNAMIC, STATIC, INACTIVE = 255 };

static struct io_uring ring;

static int reg(struct knapi *k)
{
	return io_uring_register(ring.ring_fd, IORING_REGISTER_NAPI, k, 1);
}

/* A call with opcode `op`; checks the settings it reports back. */
static int call(__u32 to, __u8 prefer, __u8 op, __u32 param, __u32 was_to,
		__u8 was_prefer, __u32 was_mode, const char *what)
{
	struct knapi k = { to, prefer, op, { 0, 0 }, param, 0 };
	int ret = reg(&k);

	CHECK(k.to == was_to && k.prefer == was_prefer && k.opcode == 0 &&
	      k.op_param == was_mode && k.resv == 0,
	      "%s: reported %u/%u/%u/%u, want %u/%u/%u", what, k.to, k.prefer,
	      k.opcode, k.op_param, was_to, was_prefer, was_mode);
	return ret;
}

static void ids(void)
{
	CHECK_EQ(call(33, 0, OP_REG, STATIC, 10000, 1, DYNAMIC, "static"), 0,
		 "static tracking");
	CHECK_EQ(call(0, 0, OP_ADD, 1, 33, 0, STATIC, "id 1"), -EINVAL,
		 "an id in the CPU range");
	CHECK_EQ(call(0, 0, OP_ADD, 100000, 33, 0, STATIC, "add"), 0, "add id");
	CHECK_EQ(call(0, 0, OP_ADD, 100000, 33, 0, STATIC, "add again"), -EEXIST,
		 "add the same id");
	CHECK_EQ(call(0, 0, OP_DEL, 100000, 33, 0, STATIC, "del"), 0, "del id");
	CHECK_EQ(call(0, 0, OP_DEL, 100000, 33, 0, STATIC, "del again"), -ENOENT,
		 "del an absent id");
	CHECK_EQ(call(0, 0, OP_ADD, 100001, 33, 0, STATIC, "add"), 0, "add id");
	CHECK_EQ(call(34, 0, OP_REG, STATIC, 33, 0, STATIC, "re-register"), 0,
		 "re-register");
	CHECK_EQ(call(0, 0, OP_DEL, 100001, 34, 0, STATIC, "del"), -ENOENT,
		 "ids dropped by a new registration");
	CHECK_EQ(call(34, 0, OP_REG, DYNAMIC, 34, 0, STATIC, "dynamic"), 0,
		 "dynamic tracking");
	CHECK_EQ(call(0, 0, OP_ADD, 100000, 34, 0, DYNAMIC, "add"), -EINVAL,
		 "add an id while tracking dynamically");
}

int main(int argc, char **argv)
{
	struct knapi k;
	int ret;

	(void)argc;
	tu_set_name(argv[0]);
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");

	memset(&k, 0, sizeof(k));
	k.to = 100;
	k.prefer = 1;
	ret = reg(&k);
	/* A kernel built without busy polling says so; the engine has it. */
	if ((ret == -EINVAL || ret == -EOPNOTSUPP) && !tu_on_engine())
		SKIP("NAPI registration unsupported (%d)", ret);
	CHECK_EQ(ret, 0, "register");
	if (!tu_on_engine() && !tu_kernel_at_least(6, 13))
		SKIP("NAPI opcodes and tracking modes came with Linux 6.13");
	CHECK(k.to == 0 && k.prefer == 0 && k.opcode == 0 && k.op_param == INACTIVE,
	      "first registration reported %u/%u/%u/%u", k.to, k.prefer, k.opcode,
	      k.op_param);

	/* The reported timeout of a 20 ms request is capped. */
	CHECK_EQ(call(20000, 7, OP_REG, DYNAMIC, 100, 1, DYNAMIC, "big"), 0,
		 "register 20 ms");
	memset(&k, 0, sizeof(k));
	CHECK_EQ(reg(&k), 0, "read back");
	if (k.to != 10000 && !tu_lacks_before(6, 18, "the 10 ms NAPI cap"))
		FAIL("timeout read back %u, want 10000", k.to);
	CHECK_EQ(k.prefer, 1, "prefer_busy_poll read as a bool");
	CHECK_EQ(call(10000, 1, OP_REG, DYNAMIC, 0, 0, DYNAMIC, "restore"), 0,
		 "register 10 ms");

	/* Errors after the write-back leave the settings as they were. */
	CHECK_EQ(call(5, 0, 9, 0, 10000, 1, DYNAMIC, "opcode 9"), -EINVAL,
		 "unknown opcode");
	CHECK_EQ(call(5, 0, OP_REG, 5, 10000, 1, DYNAMIC, "mode 5"), -EINVAL,
		 "unknown tracking mode");
	/* Dirty padding is refused before anything is written. */
	memset(&k, 0, sizeof(k));
	k.to = 77;
	k.pad[1] = 1;
	CHECK_EQ(reg(&k), -EINVAL, "dirty pad");
	CHECK(k.to == 77 && k.pad[1] == 1, "nothing written back for a dirty pad");
	memset(&k, 0, sizeof(k));
	k.resv = 1;
	CHECK_EQ(reg(&k), -EINVAL, "dirty resv");
	CHECK_EQ(io_uring_register(ring.ring_fd, IORING_REGISTER_NAPI, &k, 2),
		 -EINVAL, "nr 2");
	CHECK_EQ(io_uring_register(ring.ring_fd, IORING_REGISTER_NAPI, NULL, 1),
		 -EINVAL, "NULL");

	ids();

	memset(&k, 0xff, sizeof(k));
	CHECK_EQ(io_uring_register(ring.ring_fd, IORING_UNREGISTER_NAPI, &k, 1), 0,
		 "unregister");
	CHECK(k.to == 34 && k.prefer == 0 && k.op_param == 0 && k.resv == 0,
	      "unregister reported %u/%u/%u", k.to, k.prefer, k.op_param);
	CHECK_EQ(io_uring_register(ring.ring_fd, IORING_UNREGISTER_NAPI, NULL, 0),
		 -EINVAL, "unregister with nr 0");
	CHECK_EQ(io_uring_register(ring.ring_fd, IORING_UNREGISTER_NAPI, NULL, 1), 0,
		 "unregister NULL");
	CHECK_EQ(call(0, 0, OP_ADD, 100000, 0, 0, INACTIVE, "inactive"), -EINVAL,
		 "add an id while inactive");
	io_uring_queue_exit(&ring);

	CHECK_EQ(io_uring_queue_init(8, &ring, IORING_SETUP_IOPOLL), 0, "IOPOLL ring");
	memset(&k, 0, sizeof(k));
	CHECK_EQ(reg(&k), -EINVAL, "register on an IOPOLL ring");
	CHECK_EQ(io_uring_register(ring.ring_fd, IORING_UNREGISTER_NAPI, &k, 1), 0,
		 "unregister on an IOPOLL ring");
	io_uring_queue_exit(&ring);
	return tu_done();
}
