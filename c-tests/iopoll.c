/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_IOPOLL: ring setup works and the flag is recorded; a NOP
 * completes on it; O_DIRECT reads of a temp file are completed by polling
 * and return the file's data. If the filesystem / block device cannot do
 * polled I/O (-EOPNOTSUPP in the CQE, or O_DIRECT refused), the test exits
 * 77 saying so. Ops that cannot be polled are refused: a POLL_ADD gets
 * -EINVAL, and a read of a file opened without O_DIRECT -EOPNOTSUPP.
 */
#include <liburing.h>
#include <sys/stat.h>
#include <poll.h>
#include "test-util.h"

#define BS	4096
#define NBLK	16

/* Submits one SQE and checks its CQE's result. */
static void expect_res(struct io_uring *ring, int want, const char *what)
{
	struct io_uring_cqe *cqe;

	CHECK_EQ(io_uring_submit(ring), 1, what);
	CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, what);
	CHECK_EQ(cqe->res, want, what);
	io_uring_cqe_seen(ring, cqe);
}

/* What a polled ring refuses. */
static void refused(struct io_uring *ring, int buffered_fd)
{
	static char byte;
	int fds[2];

	CHECK(pipe(fds) == 0, "pipe");
	io_uring_prep_poll_add(io_uring_get_sqe(ring), fds[0], POLLIN);
	expect_res(ring, -EINVAL, "POLL_ADD on a polled ring");
	io_uring_prep_read(io_uring_get_sqe(ring), buffered_fd, &byte, 1, 0);
	expect_res(ring, -EOPNOTSUPP, "buffered read on a polled ring");
	close(fds[0]);
	close(fds[1]);
}

int main(int argc, char *argv[])
{
	char path[64];
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	unsigned char *data, *buf;
	int fd, dfd, ret;

	(void)argc;
	tu_set_name(argv[0]);

	ret = io_uring_queue_init(8, &ring, IORING_SETUP_IOPOLL);
	if (ret == -EINVAL)
		SKIP("kernel refuses IORING_SETUP_IOPOLL");
	CHECK_EQ(ret, 0, "queue_init(IOPOLL)");
	CHECK(ring.flags & IORING_SETUP_IOPOLL, "IOPOLL not in ring.flags");

	/* A NOP on a polled ring. */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 1;
	ret = io_uring_submit(&ring);
	CHECK_EQ(ret, 1, "submit nop");
	ret = io_uring_wait_cqe(&ring, &cqe);
	CHECK_EQ(ret, 0, "wait nop");
	CHECK(cqe->user_data == 1, "wrong cqe");
	CHECK_EQ(cqe->res, 0, "nop res on IOPOLL ring");
	io_uring_cqe_seen(&ring, cqe);

	/* File with known contents, then reopen it O_DIRECT. */
	fd = tu_temp_file_random(path, sizeof(path), BS * NBLK, 0xd1ec, &data);
	refused(&ring, fd);
	/* MSG_RING is allowed on a polled ring: a message to itself. */
	{
		struct io_uring_sqe *m_sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *m;

		io_uring_prep_msg_ring(m_sqe, ring.ring_fd, 7, 0x77, 0);
		m_sqe->user_data = 1;
		CHECK_EQ(io_uring_submit(&ring), 1, "submit msg_ring");
		for (int i = 0; i < 2; i++) {
			CHECK_EQ(io_uring_wait_cqe(&ring, &m), 0, "wait msg_ring");
			CHECK(m->user_data == 0x77 || m->user_data == 1, "msg_ring cqe");
			CHECK_EQ(m->res, m->user_data == 0x77 ? 7 : 0, "msg_ring res");
			io_uring_cqe_seen(&ring, m);
		}
	}
	CHECK(fsync(fd) == 0, "fsync: %s", strerror(errno));
	dfd = open(path, O_RDONLY | O_DIRECT);
	if (dfd < 0) {
		int e = errno;

		io_uring_queue_exit(&ring);
		SKIP("filesystem of /tmp lacks O_DIRECT: %s", strerror(e));
	}
	CHECK(posix_memalign((void **)&buf, BS, BS * NBLK) == 0,
	      "posix_memalign");

	/* Read the blocks in reverse order, 4 at a time. */
	for (int round = 0; round < NBLK / 4; round++) {
		memset(buf, 0, BS * NBLK);
		for (int i = 0; i < 4; i++) {
			int blk = NBLK - 1 - (round * 4 + i);

			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read(sqe, dfd, buf + blk * BS, BS,
					   (off_t)blk * BS);
			sqe->user_data = blk;
		}
		ret = io_uring_submit(&ring);
		CHECK_EQ(ret, 4, "submit O_DIRECT reads");
		for (int i = 0; i < 4; i++) {
			ret = io_uring_wait_cqe(&ring, &cqe);
			CHECK_EQ(ret, 0, "wait_cqe");
			if (cqe->res == -EOPNOTSUPP) {
				int res = cqe->res;

				io_uring_cqe_seen(&ring, cqe);
				io_uring_queue_exit(&ring);
				close(dfd);
				close(fd);
				SKIP("polled O_DIRECT read not supported by the "
				     "filesystem/device here (%s)",
				     strerror(-res));
			}
			CHECK_EQ(cqe->res, BS, "O_DIRECT polled read");
			unsigned blk = (unsigned)cqe->user_data;

			CHECK(blk < NBLK, "bad user_data");
			CHECK(memcmp(buf + blk * BS, data + blk * BS, BS) == 0,
			      "block %u data mismatch", blk);
			io_uring_cqe_seen(&ring, cqe);
		}
	}

	free(buf);
	free(data);
	close(dfd);
	close(fd);
	io_uring_queue_exit(&ring);
	tu_pass();
	return T_EXIT_PASS;
}
