/* SPDX-License-Identifier: MIT */
/*
 * Provided buffers: provide_buffers / remove_buffers with a buffer-select
 * read, and a registered buffer ring feeding a multishot recv.
 */
#include <sys/socket.h>
#include "op-util.h"

#define NB 4
#define BL 64

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_buf_ring *br;
	static char pool[NB][BL], rbufs[NB][BL];
	struct op_cqe c;
	int p[2], sv[2], ret;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);

	if (!probe || !io_uring_opcode_supported(probe, IORING_OP_PROVIDE_BUFFERS))
		SKIP("IORING_OP_PROVIDE_BUFFERS unsupported");
	io_uring_free_probe(probe);
	CHECK(pipe(p) == 0, "pipe");

	/* provide 4 buffers (bid 10..13) in group 7 */
	sqe = op_sqe(&ring);
	io_uring_prep_provide_buffers(sqe, pool, BL, NB, 7, 10);
	CHECK_EQ(op_run1(&ring), 0, "provide_buffers");
	CHECK(write(p[1], "select", 6) == 6, "write");
	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, p[0], NULL, BL, 0);
	io_uring_sqe_set_flags(sqe, IOSQE_BUFFER_SELECT);
	sqe->buf_group = 7;
	op_submit(&ring, 1);
	c = op_wait(&ring);
	CHECK(c.res == 6 && (c.flags & IORING_CQE_F_BUFFER), "buffer-select read");
	ret = c.flags >> IORING_CQE_BUFFER_SHIFT;
	CHECK(ret >= 10 && ret < 10 + NB, "bid %d", ret);
	CHECK(!memcmp(pool[ret - 10], "select", 6), "data in provided buffer");
	/* 3 remain: asking to remove 8 removes 3 */
	sqe = op_sqe(&ring);
	io_uring_prep_remove_buffers(sqe, 8, 7);
	CHECK_EQ(op_run1(&ring), NB - 1, "remove_buffers count");
	sqe = op_sqe(&ring);
	io_uring_prep_remove_buffers(sqe, 1, 99);
	CHECK_EQ(op_run1(&ring), -ENOENT, "remove from a group never provided");

	/* buffer ring + multishot recv */
	br = io_uring_setup_buf_ring(&ring, NB, 3, 0, &ret);
	if (!br) {
		op_skip_if_unsupported(ret, "buffer rings");
		FAIL("io_uring_setup_buf_ring: %s", strerror(-ret));
	}
	for (int i = 0; i < NB; i++)
		io_uring_buf_ring_add(br, rbufs[i], BL, i,
				      io_uring_buf_ring_mask(NB), i);
	io_uring_buf_ring_advance(br, NB);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	sqe = op_sqe(&ring);
	io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
	io_uring_sqe_set_flags(sqe, IOSQE_BUFFER_SELECT);
	io_uring_sqe_set_buf_group(sqe, 3);
	io_uring_sqe_set_data64(sqe, 77);
	op_submit(&ring, 1);
	for (int i = 0; i < 3; i++) {
		char msg[16];
		int bid;

		snprintf(msg, sizeof(msg), "msg-%d", i);
		CHECK(write(sv[1], msg, 5) == 5, "write");
		c = op_wait(&ring);
		CHECK(c.user_data == 77 && c.res == 5 &&
		      (c.flags & IORING_CQE_F_BUFFER) && (c.flags & IORING_CQE_F_MORE),
		      "multishot recv %d: res %d flags %#x", i, c.res, c.flags);
		bid = c.flags >> IORING_CQE_BUFFER_SHIFT;
		CHECK(bid >= 0 && bid < NB && !memcmp(rbufs[bid], msg, 5),
		      "multishot recv data in bid %d", bid);
	}
	close(sv[1]);
	c = op_wait(&ring);
	CHECK(c.user_data == 77 && c.res == 0 && !(c.flags & IORING_CQE_F_MORE),
	      "multishot recv EOF: res %d flags %#x", c.res, c.flags);
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, NB, 3), 0, "free_buf_ring");

	close(sv[0]);
	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
