/* SPDX-License-Identifier: MIT */
/*
 * nop-demo: submit N no-op requests through io_uring and count how many
 * completed successfully.
 *
 * usage: nop-demo [N]     (default N = 1000)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <liburing.h>

#define RING_SIZE 64

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [N]\n"
		"  Submits N IORING_OP_NOP requests (default 1000) and prints "
		"how many completed.\n", prog);
}

int main(int argc, char *argv[])
{
	struct io_uring ring;
	unsigned long total = 1000, queued = 0, done = 0, failed = 0;
	int ret;

	if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "-h") ||
				       !strcmp(argv[1], "--help")))) {
		usage(argv[0]);
		return argc > 2 ? 1 : 0;
	}
	if (argc == 2) {
		char *end;

		errno = 0;
		total = strtoul(argv[1], &end, 0);
		if (errno || *end || argv[1][0] == '-') {
			fprintf(stderr, "%s: bad count '%s'\n", argv[0], argv[1]);
			usage(argv[0]);
			return 1;
		}
	}

	ret = io_uring_queue_init(RING_SIZE, &ring, 0);
	if (ret < 0) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}

	while (done < total) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;

		/* Top up the submission queue. */
		while (queued < total) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			if (!sqe)
				break;
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, queued);
			queued++;
		}
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0) {
			fprintf(stderr, "io_uring_submit_and_wait: %s\n",
				strerror(-ret));
			break;
		}
		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res < 0)
				failed++;
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
		done += seen;
	}
	io_uring_queue_exit(&ring);

	printf("submitted %lu NOPs, %lu completed, %lu failed\n", queued,
	       done, failed);
	return (done == total && !failed) ? 0 : 1;
}
