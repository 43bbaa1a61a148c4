/* SPDX-License-Identifier: MIT */
/*
 * The ring fd as an event loop sees it (QEMU's, libuv's, tokio's): a loop
 * that sleeps in ppoll() on the ring fd, then takes every CQE and
 * resubmits, with 32 requests in flight that complete on other threads
 * (IOSQE_ASYNC reads of a file, so the engine's workers post them while
 * the loop consumes). The ring fd must be readable whenever CQEs are
 * waiting: a ppoll that sleeps its whole second with CQEs in the CQ is a
 * lost wake-up (QEMU's qemu-img bench hung on one on the engine).
 *
 * Then a poll that watches the ring fd through an epoll set holding it (a
 * multishot POLL_ADD on the epoll fd), and a NOP: the NOP's CQE makes the
 * ring fd readable, so the poll fires too, even when the program takes
 * the NOP's CQE and waits again at once (the engine once cleared the
 * ring fd's readiness in that wait, before its poll had looked, and the
 * wait never ended). Then no further CQE comes: the poll's own CQE does
 * not feed itself for ever.
 */
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include "liburing.h"
#include "test-util.h"
#include "op-util.h"

#define DEPTH 32
#define OPS 60000

static char bufs[DEPTH][512];

static void queue_read(struct io_uring *ring, int fd, unsigned i)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_read(sqe, fd, bufs[i], sizeof(bufs[i]), (i % 8) * 512);
	sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = i;
}

static void through_epoll(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct __kernel_timespec ts = { .tv_sec = 2 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int got[3] = { 0 };

	op_ring(&ring, 8, 0);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0, "epoll_create1: %s", strerror(errno));
	ev.data.fd = ring.ring_fd;
	CHECK(!epoll_ctl(ep, EPOLL_CTL_ADD, ring.ring_fd, &ev), "epoll_ctl: %s", strerror(errno));
	struct io_uring_sqe *sqe = op_sqe(&ring);
	io_uring_prep_poll_multishot(sqe, ep, POLLIN);
	sqe->user_data = 1;
	CHECK_EQ(io_uring_submit(&ring), 1, "submit poll");
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 2;
	CHECK_EQ(io_uring_submit(&ring), 1, "submit nop");
	for (int i = 0; i < 2; i++) {
		int ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);

		CHECK(ret == 0, "CQE %d of 2 (poll on the epoll set, NOP): %s", i + 1, strerror(-ret));
		CHECK(cqe->user_data == 1 || cqe->user_data == 2, "user_data %llu",
		      (unsigned long long)cqe->user_data);
		got[cqe->user_data]++;
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK(got[1] == 1 && got[2] == 1, "poll %d, NOP %d", got[1], got[2]);
	CHECK(io_uring_peek_cqe(&ring, &cqe) != 0, "a third CQE (user_data %llu)", (unsigned long long)cqe->user_data);
	close(ep);
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	char path[64];
	int fd, done = 0, inflight = 0;
	long long start = tu_now_ns();

	(void)argc;
	tu_set_name(argv[0]);
	fd = tu_temp_file(path, sizeof(path));
	memset(bufs, 'r', sizeof(bufs));
	tu_pwrite_all(fd, bufs, 8 * 512, 0);
	op_ring(&ring, 64, 0);
	for (unsigned i = 0; i < DEPTH; i++, inflight++)
		queue_read(&ring, fd, i);
	CHECK_EQ(io_uring_submit(&ring), DEPTH, "submit");
	while (done < OPS && tu_now_ns() - start < 60LL * 1000000000) {
		struct pollfd pfd = { .fd = ring.ring_fd, .events = POLLIN };
		struct timespec ts = { .tv_sec = 1 };
		struct io_uring_cqe *cqe;
		int n;

		if (!io_uring_cq_ready(&ring)) {
			n = ppoll(&pfd, 1, &ts, NULL);
			CHECK(n >= 0, "ppoll: %s", strerror(errno));
			CHECK(n == 1 || !io_uring_cq_ready(&ring),
			      "ppoll slept a second with %u CQEs waiting (%d done, %d in flight)",
			      io_uring_cq_ready(&ring), done, inflight);
			CHECK(n == 1 || inflight == 0, "no completion for a second with %d reads in flight", inflight);
		}
		while (!io_uring_peek_cqe(&ring, &cqe)) {
			unsigned i = (unsigned)cqe->user_data;

			CHECK_EQ(cqe->res, 512, "read");
			io_uring_cqe_seen(&ring, cqe);
			done++;
			inflight--;
			if (done + inflight < OPS) {
				queue_read(&ring, fd, i);
				inflight++;
			}
		}
		CHECK(io_uring_submit(&ring) >= 0, "resubmit");
	}
	CHECK_EQ(done, OPS, "reads completed within a minute");
	io_uring_queue_exit(&ring);
	close(fd);
	through_epoll();
	tu_pass();
	return 0;
}
