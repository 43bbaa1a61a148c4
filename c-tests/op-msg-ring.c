/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_MSG_RING between two rings: data messages (plain and with
 * CQE flags passed through) and passing a fixed file to a given slot and to
 * an allocated slot.
 */
#include "op-util.h"

int main(int argc, char **argv)
{
	struct io_uring a, b;
	struct io_uring_sqe *sqe;
	struct op_cqe c;
	int p[2], ret;
	char buf[8];

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&a, 8, 0);
	op_ring(&b, 8, 0);
	op_need(&a, IORING_OP_MSG_RING, "IORING_OP_MSG_RING");

	/* data: b gets a CQE with our user_data and res = len */
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring(sqe, b.ring_fd, 0x1234, 0xdeadbeefcafeULL, 0);
	io_uring_sqe_set_data64(sqe, 1);
	CHECK_EQ(op_run1(&a), 0, "msg_ring (sender)");
	c = op_wait(&b);
	CHECK(c.user_data == 0xdeadbeefcafeULL && c.res == 0x1234,
	      "msg_ring target CQE: ud %#llx res %#x",
	      (unsigned long long)c.user_data, c.res);

	/* cqe_flags passed through with IORING_MSG_RING_FLAGS_PASS */
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring_cqe_flags(sqe, b.ring_fd, 7, 99, 0, 0x5a0000);
	ret = op_run1(&a);
	if (ret != -EINVAL ||
	    !tu_lacks_before(6, 3, "IORING_MSG_RING_FLAGS_PASS")) {
		CHECK_EQ(ret, 0, "msg_ring_cqe_flags");
		c = op_wait(&b);
		CHECK(c.user_data == 99 && c.res == 7 && c.flags == 0x5a0000,
		      "cqe_flags target CQE: flags %#x", c.flags);
	}
	/* to a descriptor that is not a ring */
	CHECK(pipe(p) == 0, "pipe");
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring(sqe, p[0], 0, 0, 0);
	CHECK_EQ(op_run1(&a), -EBADFD, "msg_ring to a non-ring fd");

	/* fd passing: a's fixed slot 0 (pipe read end) -> b's slot 4 */
	CHECK_EQ(io_uring_register_files(&a, &p[0], 1), 0, "register a");
	CHECK_EQ(io_uring_register_files_sparse(&b, 8), 0, "register b");
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring_fd(sqe, b.ring_fd, 0, 4, 0x77, 0);
	CHECK_EQ(op_run1(&a), 0, "msg_ring_fd");
	c = op_wait(&b);
	CHECK(c.user_data == 0x77, "msg_ring_fd target CQE ud");
	CHECK(write(p[1], "fd!", 3) == 3, "write");
	sqe = op_sqe(&b);
	io_uring_prep_read(sqe, 4, buf, sizeof(buf), 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK_EQ(op_run1(&b), 3, "read through the passed fixed file");
	CHECK(!memcmp(buf, "fd!", 3), "passed file content");

	/* allocated slot: the sender's result is the slot chosen in b */
	sqe = op_sqe(&a);
	io_uring_prep_msg_ring_fd_alloc(sqe, b.ring_fd, 0, 0x78, 0);
	ret = op_run1(&a);
	CHECK(ret >= 0 && ret < 8 && ret != 4, "msg_ring_fd_alloc slot %d", ret);
	c = op_wait(&b);
	CHECK(c.user_data == 0x78, "alloc target CQE ud");
	CHECK(write(p[1], "2", 1) == 1, "write");
	sqe = op_sqe(&b);
	io_uring_prep_read(sqe, ret, buf, sizeof(buf), 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK_EQ(op_run1(&b), 1, "read via allocated slot");

	io_uring_queue_exit(&a);
	io_uring_queue_exit(&b);
	return tu_done();
}
