/* SPDX-License-Identifier: MIT */
/*
 * io_uring-cp: copy a file with IORING_OP_READV / IORING_OP_WRITEV,
 * keeping up to QD reads in flight. As each read completes its buffer is
 * written out at the same offset; when the write finishes the buffer is
 * reused for the next read. Short reads and writes are resubmitted for
 * the remaining bytes.
 *
 * usage: io_uring-cp <infile> <outfile>
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <liburing.h>

#define QD	32
#define BS	(32 * 1024)

struct req {
	int writing;
	off_t off;		/* start of this block in both files */
	size_t len;		/* block length */
	size_t done;		/* bytes finished in the current phase */
	struct iovec iov;
	char *buf;
};

static int infd, outfd;

static void queue_req(struct io_uring *ring, struct req *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	/* The ring has room for every request, so this cannot fail. */
	r->iov.iov_base = r->buf + r->done;
	r->iov.iov_len = r->len - r->done;
	if (r->writing)
		io_uring_prep_writev(sqe, outfd, &r->iov, 1, r->off + r->done);
	else
		io_uring_prep_readv(sqe, infd, &r->iov, 1, r->off + r->done);
	io_uring_sqe_set_data(sqe, r);
}

static int copy(struct io_uring *ring, off_t size)
{
	struct req *reqs = calloc(QD, sizeof(*reqs));
	struct req *idle[QD];
	int nidle = 0, busy = 0;
	off_t next = 0;

	if (!reqs)
		return 1;
	for (int i = 0; i < QD; i++) {
		reqs[i].buf = malloc(BS);
		if (!reqs[i].buf)
			return 1;
		idle[nidle++] = &reqs[i];
	}

	while (next < size || busy) {
		/* Keep the read queue full. */
		while (next < size && nidle) {
			struct req *r = idle[--nidle];

			r->writing = 0;
			r->off = next;
			r->len = size - next < BS ? (size_t)(size - next) : BS;
			r->done = 0;
			queue_req(ring, r);
			next += r->len;
			busy++;
		}

		int ret = io_uring_submit_and_wait(ring, 1);

		if (ret < 0) {
			fprintf(stderr, "io_uring_submit_and_wait: %s\n",
				strerror(-ret));
			return 1;
		}

		struct io_uring_cqe *cqe;

		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			struct req *r = io_uring_cqe_get_data(cqe);
			int res = cqe->res;

			io_uring_cqe_seen(ring, cqe);
			if (res == -EAGAIN || res == -EINTR) {
				queue_req(ring, r);
				continue;
			}
			if (res < 0) {
				fprintf(stderr, "%s: %s\n",
					r->writing ? "writev" : "readv",
					strerror(-res));
				return 1;
			}
			if (res == 0) {
				fprintf(stderr, "%s: unexpected end of file\n",
					r->writing ? "writev" : "readv");
				return 1;
			}
			r->done += (size_t)res;
			if (r->done < r->len) {
				queue_req(ring, r);	/* short: do the rest */
			} else if (!r->writing) {
				r->writing = 1;
				r->done = 0;
				queue_req(ring, r);
			} else {
				busy--;
				idle[nidle++] = r;
			}
		}
	}

	for (int i = 0; i < QD; i++)
		free(reqs[i].buf);
	free(reqs);
	return 0;
}

int main(int argc, char *argv[])
{
	struct io_uring ring;
	struct stat st;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s <infile> <outfile>\n"
			"  Copies infile to outfile with readv/writev io_uring "
			"requests, %d reads in flight.\n", argv[0], QD);
		return 1;
	}
	infd = open(argv[1], O_RDONLY);
	if (infd < 0) {
		perror(argv[1]);
		return 1;
	}
	outfd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (outfd < 0) {
		perror(argv[2]);
		return 1;
	}
	if (fstat(infd, &st) < 0) {
		perror("fstat");
		return 1;
	}
	ret = io_uring_queue_init(QD, &ring, 0);
	if (ret < 0) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	ret = copy(&ring, st.st_size);
	io_uring_queue_exit(&ring);
	close(infd);
	if (close(outfd) < 0) {
		perror("close");
		return 1;
	}
	return ret;
}
