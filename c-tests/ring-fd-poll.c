/* SPDX-License-Identifier: MIT */
/*
 * The ring fd as an event loop sees it (QEMU's, libuv's, tokio's): a loop
 * that sleeps in ppoll() on the ring fd, then takes every CQE and
 * resubmits, with 32 requests in flight that complete on other threads
 * (IOSQE_ASYNC reads of a file, so the engine's workers post them while
 * the loop consumes). The ring fd must be readable whenever CQEs are
 * waiting: a ppoll that sleeps its whole second with CQEs in the CQ is a
 * lost wake-up (QEMU's qemu-img bench hung on one on the engine).
 */
#include <poll.h>
#include <string.h>
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
	tu_pass();
	return 0;
}
