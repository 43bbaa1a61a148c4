/* SPDX-License-Identifier: MIT */
/* Poll opcodes on a pipe: poll_add, poll_multishot, poll_update, poll_remove. */
#include <poll.h>
#include "op-util.h"

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct op_cqe c[2];
	int p[2];
	char ch;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	CHECK(pipe(p) == 0, "pipe");

	/* one-shot poll fires with POLLIN once data arrives */
	sqe = op_sqe(&ring);
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	io_uring_sqe_set_data64(sqe, 1);
	op_submit(&ring, 1);
	CHECK(io_uring_cq_ready(&ring) == 0, "poll completed before data");
	CHECK(write(p[1], "x", 1) == 1, "write");
	c[0] = op_wait(&ring);
	CHECK(c[0].user_data == 1 && (c[0].res & POLLIN) &&
	      !(c[0].flags & IORING_CQE_F_MORE), "poll_add: res %#x", c[0].res);
	CHECK(read(p[0], &ch, 1) == 1, "drain");

	/* poll_remove of a pending poll: poll ends -ECANCELED, remove 0 */
	sqe = op_sqe(&ring);
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	io_uring_sqe_set_data64(sqe, 1);
	op_submit(&ring, 1);
	sqe = op_sqe(&ring);
	io_uring_prep_poll_remove(sqe, 1);
	io_uring_sqe_set_data64(sqe, 2);
	op_submit(&ring, 1);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[0].res, -ECANCELED, "removed poll");
	CHECK_EQ(c[1].res, 0, "poll_remove");
	sqe = op_sqe(&ring);
	io_uring_prep_poll_remove(sqe, 12345);
	CHECK_EQ(op_run1(&ring), -ENOENT, "poll_remove of unknown user_data");

	/* multishot: two events on one request, both with F_MORE */
	sqe = op_sqe(&ring);
	io_uring_prep_poll_multishot(sqe, p[0], POLLIN);
	io_uring_sqe_set_data64(sqe, 5);
	op_submit(&ring, 1);
	for (int i = 0; i < 2; i++) {
		CHECK(write(p[1], "y", 1) == 1, "write");
		c[0] = op_wait(&ring);
		CHECK(c[0].user_data == 5 && (c[0].res & POLLIN) &&
		      (c[0].flags & IORING_CQE_F_MORE),
		      "multishot event %d: res %#x flags %#x", i, c[0].res,
		      c[0].flags);
		CHECK(read(p[0], &ch, 1) == 1, "drain");
	}

	/* Each wake-up is seen by an io_uring_get_events made right after
	 * it, before the program takes the data back: the kernel runs the
	 * poll's task work by the time any enter returns. */
	for (int i = 0; i < 50; i++) {
		struct io_uring_cqe *cqe;

		CHECK(write(p[1], "w", 1) == 1, "write");
		CHECK(io_uring_get_events(&ring) >= 0, "get_events");
		CHECK(io_uring_peek_cqe(&ring, &cqe) == 0, "no CQE after wake-up %d and get_events", i);
		CHECK(cqe->user_data == 5 && (cqe->res & POLLIN) && (cqe->flags & IORING_CQE_F_MORE),
		      "multishot event after get_events: res %#x flags %#x", cqe->res, cqe->flags);
		io_uring_cqe_seen(&ring, cqe);
		CHECK(read(p[0], &ch, 1) == 1, "drain");
		CHECK(!io_uring_cq_ready(&ring), "a second CQE for one wake-up");
	}

	/* poll_update: move the multishot poll from user_data 5 to 6 and
	 * re-arm its mask; the next event must carry the new user_data. */
	sqe = op_sqe(&ring);
	io_uring_prep_poll_update(sqe, 5, 6, POLLIN,
				  IORING_POLL_UPDATE_USER_DATA |
				  IORING_POLL_UPDATE_EVENTS | IORING_POLL_ADD_MULTI);
	io_uring_sqe_set_data64(sqe, 9);
	CHECK_EQ(op_run1(&ring), 0, "poll_update");
	CHECK(write(p[1], "z", 1) == 1, "write");
	c[0] = op_wait(&ring);
	CHECK(c[0].user_data == 6 && (c[0].res & POLLIN),
	      "updated poll: ud %llu res %#x", (unsigned long long)c[0].user_data,
	      c[0].res);
	CHECK(read(p[0], &ch, 1) == 1, "drain");
	/* the old user_data names nothing any more */
	sqe = op_sqe(&ring);
	io_uring_prep_poll_remove(sqe, 5);
	CHECK_EQ(op_run1(&ring), -ENOENT, "poll_remove by the old user_data");
	/* remove by the new user_data */
	sqe = op_sqe(&ring);
	io_uring_prep_poll_remove(sqe, 6);
	io_uring_sqe_set_data64(sqe, 10);
	op_submit(&ring, 1);
	for (int i = 0; i < 2; i++) {
		c[0] = op_wait(&ring);
		if (c[0].user_data == 10)
			CHECK_EQ(c[0].res, 0, "poll_remove updated");
		else
			CHECK(c[0].user_data == 6 && c[0].res == -ECANCELED,
			      "multishot end: %d", c[0].res);
	}
	sqe = op_sqe(&ring);
	io_uring_prep_poll_update(sqe, 777, 778, POLLIN,
				  IORING_POLL_UPDATE_EVENTS | IORING_POLL_UPDATE_USER_DATA);
	CHECK_EQ(op_run1(&ring), -ENOENT, "poll_update of unknown request");
	/* a new user_data without IORING_POLL_UPDATE_USER_DATA is invalid */
	sqe = op_sqe(&ring);
	io_uring_prep_poll_update(sqe, 777, 778, POLLIN, IORING_POLL_UPDATE_EVENTS);
	CHECK_EQ(op_run1(&ring), -EINVAL, "poll_update new_user_data w/o flag");

	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
