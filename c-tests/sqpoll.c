/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_SQPOLL with a short idle time (10 ms):
 *  - NOPs submitted are picked up by the kernel's SQ thread;
 *  - after sleeping well past the idle time the thread goes to sleep and
 *    sets IORING_SQ_NEED_WAKEUP; io_uring_submit must then wake it, and
 *    the NOPs still complete;
 *  - io_uring_sqring_wait returns once SQ space is available.
 */
#define LIBURING_RS_SOURCE
#include <liburing.h>
#include "op-util.h"

static void nops_round(struct io_uring *ring, unsigned n, unsigned long long ud)
{
	op_nops(ring, n, ud);
	int ret = io_uring_submit(ring);

	CHECK_EQ(ret, n, "submit on sqpoll ring");
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 2 };

		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		CHECK_EQ(ret, 0, "wait for sqpoll nop");
		CHECK(cqe->user_data >= ud && cqe->user_data < ud + n,
		      "stray user_data %llu", (unsigned long long)cqe->user_data);
		CHECK_EQ(cqe->res, 0, "nop res");
		io_uring_cqe_seen(ring, cqe);
	}
}

int main(int argc, char *argv[])
{
	struct io_uring ring;
	int ret, saw_wakeup = 0;

	(void)argc;
	tu_set_name(argv[0]);

	ret = op_sqpoll_ring(&ring, 8, 10);
	if (ret == -EPERM)
		SKIP("SQPOLL not permitted for this user");
	CHECK_EQ(ret, 0, "queue_init_params(SQPOLL)");
	CHECK(ring.flags & IORING_SETUP_SQPOLL, "SQPOLL not in ring.flags");

	nops_round(&ring, 4, 100);

	for (int r = 0; r < 3; r++) {
		/* Let the SQ thread idle out and go to sleep. */
		for (int i = 0; i < 50; i++) {
			usleep(20000);
			if (IO_URING_READ_ONCE(*ring.sq.kflags) &
			    IORING_SQ_NEED_WAKEUP)
				break;
		}
		if (IO_URING_READ_ONCE(*ring.sq.kflags) & IORING_SQ_NEED_WAKEUP)
			saw_wakeup++;
		nops_round(&ring, 4, 1000 * (r + 1));
	}
	CHECK(saw_wakeup > 0, "SQ thread never set IORING_SQ_NEED_WAKEUP "
	      "with a 10 ms idle time");

	/*
	 * The kernel's SQ thread may post a batch's CQEs before it moves the
	 * SQ head past the batch: wait (up to 2 s) until the SQ is empty.
	 */
	for (int i = 0; i < 100 && io_uring_sq_space_left(&ring) < ring.sq.ring_entries; i++)
		usleep(20000);
	/* Fill the SQ completely; sqring_wait waits for the thread to drain. */
	op_nops(&ring, ring.sq.ring_entries, 5000);
	CHECK(io_uring_get_sqe(&ring) == NULL, "SQ should be full");
	ret = io_uring_submit(&ring);
	CHECK_EQ(ret, ring.sq.ring_entries, "submit full SQ");
	ret = io_uring_sqring_wait(&ring);
	CHECK(ret >= 0, "io_uring_sqring_wait: %s", strerror(-ret));
	CHECK(io_uring_sq_space_left(&ring) > 0, "no SQ space after sqring_wait");
	for (unsigned i = 0; i < ring.sq.ring_entries; i++) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 2 };

		ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		CHECK_EQ(ret, 0, "wait for drained nops");
		CHECK_EQ(cqe->res, 0, "nop res");
		io_uring_cqe_seen(&ring, cqe);
	}
	/* With free space, sqring_wait returns at once. */
	ret = io_uring_sqring_wait(&ring);
	CHECK(ret >= 0, "io_uring_sqring_wait with space: %s", strerror(-ret));

	io_uring_queue_exit(&ring);
	tu_pass();
	return T_EXIT_PASS;
}
