/* SPDX-License-Identifier: MIT */
/*
 * link-cp: copy a file using linked read -> write request pairs.
 *
 * Every chunk is one READ with IOSQE_IO_LINK set followed by the WRITE of
 * the same buffer, so the kernel starts the write only after the read has
 * finished. Several such chains are kept in flight. If a read comes back
 * short (which breaks the link and cancels the write) the remainder is
 * simply queued again as a new chain.
 *
 * usage: link-cp <infile> <outfile>
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <liburing.h>

#define QD	16		/* chains in flight */
#define BS	(64 * 1024)

struct chunk {
	off_t off;		/* file offset this chunk covers */
	size_t len;		/* bytes still to copy */
	int read_res;		/* result of the read half */
	int pending;		/* CQEs outstanding for this chain */
	char *buf;
};

static int infd, outfd;

static int queue_chain(struct io_uring *ring, struct chunk *c)
{
	struct io_uring_sqe *sqe;

	/* Both halves or nothing: never leave a dangling linked read. */
	if (io_uring_sq_space_left(ring) < 2)
		return -EBUSY;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, infd, c->buf, c->len, c->off);
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_sqe_set_data(sqe, c);

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_write(sqe, outfd, c->buf, c->len, c->off);
	/* Tag write completions by setting the low pointer bit. */
	io_uring_sqe_set_data(sqe, (char *)c + 1);
	c->pending = 2;
	c->read_res = 0;
	return 0;
}

static int copy(struct io_uring *ring, off_t size)
{
	struct chunk chunks[QD];
	struct chunk *free_list[QD];
	int nfree = 0, inflight = 0;
	off_t next = 0;

	for (int i = 0; i < QD; i++) {
		chunks[i].buf = malloc(BS);
		if (!chunks[i].buf) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		free_list[nfree++] = &chunks[i];
	}

	while (next < size || inflight) {
		/* Start new chains while there is data and a free chunk. */
		while (next < size && nfree) {
			struct chunk *c = free_list[--nfree];

			c->off = next;
			c->len = size - next < BS ? (size_t)(size - next) : BS;
			if (queue_chain(ring, c)) {
				free_list[nfree++] = c;
				break;
			}
			next += c->len;
			inflight++;
		}

		int ret = io_uring_submit_and_wait(ring, 1);

		if (ret < 0) {
			fprintf(stderr, "io_uring_submit_and_wait: %s\n",
				strerror(-ret));
			return 1;
		}

		struct io_uring_cqe *cqe;

		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			uintptr_t tag = (uintptr_t)io_uring_cqe_get_data(cqe);
			struct chunk *c = (struct chunk *)(tag & ~(uintptr_t)1);
			int is_write = tag & 1, res = cqe->res;

			io_uring_cqe_seen(ring, cqe);
			if (is_write) {
				if (res == -ECANCELED) {
					/* Read was short or failed; see below. */
				} else if (res < 0) {
					fprintf(stderr, "write: %s\n",
						strerror(-res));
					return 1;
				} else if ((size_t)res != c->len) {
					fprintf(stderr, "short write\n");
					return 1;
				}
			} else {
				if (res < 0) {
					fprintf(stderr, "read: %s\n",
						strerror(-res));
					return 1;
				}
				if (res == 0) {
					fprintf(stderr, "unexpected EOF\n");
					return 1;
				}
				c->read_res = res;
			}
			if (--c->pending)
				continue;

			/* Both halves are in. Short read: redo the rest. */
			if ((size_t)c->read_res < c->len) {
				size_t got = (size_t)c->read_res;

				/*
				 * Rare (file changed under us): write what
				 * was read synchronously, then chain the rest.
				 */
				if (pwrite(outfd, c->buf, got, c->off) !=
				    (ssize_t)got) {
					perror("pwrite");
					return 1;
				}
				c->off += got;
				c->len -= got;
				if (queue_chain(ring, c)) {
					fprintf(stderr, "no SQE for retry\n");
					return 1;
				}
				continue;
			}
			inflight--;
			free_list[nfree++] = c;
		}
	}

	for (int i = 0; i < QD; i++)
		free(chunks[i].buf);
	return 0;
}

int main(int argc, char *argv[])
{
	struct io_uring ring;
	struct stat st;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s <infile> <outfile>\n"
			"  Copies infile to outfile with linked read->write "
			"io_uring requests.\n", argv[0]);
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
	ret = io_uring_queue_init(QD * 2, &ring, 0);
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
