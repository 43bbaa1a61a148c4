/* SPDX-License-Identifier: MIT */
/* IORING_OP_EPOLL_CTL (add/mod/del) and IORING_OP_EPOLL_WAIT. */
#include <sys/epoll.h>
#include "op-util.h"

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct epoll_event ev, out[4];
	int ep, p[2], n;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	op_need(&ring, IORING_OP_EPOLL_CTL, "IORING_OP_EPOLL_CTL");
	ep = epoll_create1(0);
	CHECK(ep >= 0 && pipe(p) == 0, "epoll_create1/pipe");

	ev.events = EPOLLIN;
	ev.data.u64 = 0xabcdef;
	sqe = op_sqe(&ring);
	io_uring_prep_epoll_ctl(sqe, ep, p[0], EPOLL_CTL_ADD, &ev);
	CHECK_EQ(op_run1(&ring), 0, "epoll_ctl ADD");
	sqe = op_sqe(&ring);
	io_uring_prep_epoll_ctl(sqe, ep, p[0], EPOLL_CTL_ADD, &ev);
	CHECK_EQ(op_run1(&ring), -EEXIST, "epoll_ctl ADD twice");
	CHECK(write(p[1], "e", 1) == 1, "write");
	n = epoll_wait(ep, out, 4, 1000);
	CHECK(n == 1 && out[0].data.u64 == 0xabcdef && (out[0].events & EPOLLIN),
	      "epoll_wait after io_uring ADD: %d", n);

	if (op_has(&ring, IORING_OP_EPOLL_WAIT)) {
		memset(out, 0, sizeof(out));
		sqe = op_sqe(&ring);
		io_uring_prep_epoll_wait(sqe, ep, out, 4, 0);
		CHECK_EQ(op_run1(&ring), 1, "IORING_OP_EPOLL_WAIT");
		CHECK(out[0].data.u64 == 0xabcdef, "epoll_wait event data");
	}

	ev.events = EPOLLOUT;
	ev.data.u64 = 7;
	sqe = op_sqe(&ring);
	io_uring_prep_epoll_ctl(sqe, ep, p[0], EPOLL_CTL_MOD, &ev);
	CHECK_EQ(op_run1(&ring), 0, "epoll_ctl MOD");
	CHECK(epoll_wait(ep, out, 4, 0) == 0, "read end never EPOLLOUT");
	sqe = op_sqe(&ring);
	io_uring_prep_epoll_ctl(sqe, ep, p[0], EPOLL_CTL_DEL, NULL);
	CHECK_EQ(op_run1(&ring), 0, "epoll_ctl DEL");
	sqe = op_sqe(&ring);
	io_uring_prep_epoll_ctl(sqe, ep, p[0], EPOLL_CTL_DEL, NULL);
	CHECK_EQ(op_run1(&ring), -ENOENT, "epoll_ctl DEL twice");

	io_uring_queue_exit(&ring);
	return tu_done();
}
