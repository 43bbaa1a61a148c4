/* SPDX-License-Identifier: MIT */
/*
 * IORING_REGISTER_IOWQ_MAX_WORKERS sets the worker caps and reports the
 * previous ones, as the kernel does (values above INT_MAX: -EINVAL; 0
 * leaves a cap as it is and only reads it), and the caps hold: with
 * {4, 4}, 64 blocking requests (opens of a FIFO nobody reads, each with
 * IOSQE_ASYNC) never have more than 4 + 4 workers, and all complete once
 * a reader comes.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include "liburing.h"
#include "test-util.h"

#define NR 64

int main(int argc, char **argv)
{
	struct io_uring ring;
	unsigned vals[2];
	char fifo[64];
	int base, most = 0, rfd, done = 0;
	long long t0;

	(void)argc;
	tu_set_name(argv[0]);
	CHECK_EQ(io_uring_queue_init(128, &ring, 0), 0, "setup");
	base = tu_count_threads();
	CHECK(base > 0, "count threads");

	vals[0] = (unsigned)INT_MAX + 1;
	vals[1] = 0;
	CHECK_EQ(io_uring_register_iowq_max_workers(&ring, vals), -EINVAL, "cap above INT_MAX");
	vals[0] = 4;
	vals[1] = 4;
	CHECK_EQ(io_uring_register_iowq_max_workers(&ring, vals), 0, "set {4, 4}");
	CHECK(vals[0] > 0 && vals[1] > 0, "previous caps %u %u", vals[0], vals[1]);
	vals[0] = vals[1] = 0;
	CHECK_EQ(io_uring_register_iowq_max_workers(&ring, vals), 0, "read");
	CHECK(vals[0] == 4 && vals[1] == 4, "caps read back: %u %u", vals[0], vals[1]);

	snprintf(fifo, sizeof(fifo), "/tmp/liburing-rs-iowq.%d", getpid());
	tu_register_cleanup(fifo);
	CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
	for (int i = 0; i < NR; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_openat(sqe, AT_FDCWD, fifo, O_WRONLY, 0);
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
		io_uring_sqe_set_data64(sqe, i);
	}
	CHECK_EQ(io_uring_submit(&ring), NR, "submit");
	/* Workers appear as threads of the process, the kernel's too. */
	t0 = tu_now_ns();
	while (tu_now_ns() - t0 < 300000000LL) {
		int n = tu_count_threads();

		if (n > most)
			most = n;
		usleep(2000);
	}
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "an open completed with no reader");
	/* 4 + 4 workers, and the engine's reactor */
	CHECK(most - base <= 4 + 4 + 1, "%d threads while %d opens block, %d before", most, NR, base);

	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	CHECK(rfd >= 0, "open the FIFO for reading");
	while (done < NR) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 5 };

		CHECK_EQ(io_uring_wait_cqe_timeout(&ring, &cqe, &ts), 0, "open CQE");
		CHECK(cqe->res >= 0, "open %llu: %d", (unsigned long long)cqe->user_data, cqe->res);
		close(cqe->res);
		io_uring_cqe_seen(&ring, cqe);
		done++;
	}
	close(rfd);
	io_uring_queue_exit(&ring);
	unlink(fifo);
	tu_unregister_cleanup(fifo);
	return tu_done();
}
