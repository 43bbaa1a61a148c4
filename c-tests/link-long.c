/* SPDX-License-Identifier: MIT */
/*
 * Long chains: 4,096 requests in one IOSQE_IO_LINK chain run one after
 * the other, and each completes exactly once, in chain order. Three
 * chains: NOPs that complete at submission, NOPs whose head goes to a
 * worker thread first (IOSQE_ASYNC), and reads at the file position (-1)
 * that must come back in order, each with the byte at its own offset.
 * The userspace engine once ran a chain by recursion and overflowed a
 * worker's stack on such chains.
 */
#include <liburing.h>
#include "test-util.h"

#define LEN	4096

static void check_chain(struct io_uring *ring, const char *what,
			const unsigned char *buf)
{
	for (unsigned i = 0; i < LEN; i++) {
		struct io_uring_cqe *cqe;

		CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, "wait_cqe");
		if (cqe->user_data != i)
			FAIL("%s: cqe %u has user_data %llu", what, i,
				(unsigned long long)cqe->user_data);
		CHECK_EQ(cqe->res, buf ? 1 : 0, "res");
		if (buf && buf[i] != (unsigned char)(i * 7))
			FAIL("%s: read %u got byte %u", what, i, buf[i]);
		io_uring_cqe_seen(ring, cqe);
	}
	CHECK_EQ(io_uring_cq_ready(ring), 0, "extra completions");
}

static void nop_chain(struct io_uring *ring, bool async)
{
	for (unsigned i = 0; i < LEN; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		CHECK(sqe, "sqe %u", i);
		io_uring_prep_nop(sqe);
		sqe->user_data = i;
		if (i + 1 < LEN)
			sqe->flags |= IOSQE_IO_LINK;
		if (async && i == 0)
			sqe->flags |= IOSQE_ASYNC;
	}
	CHECK_EQ(io_uring_submit(ring), LEN, "submit");
	check_chain(ring, async ? "async nops" : "nops", NULL);
}

static void read_chain(struct io_uring *ring)
{
	char path[] = "/tmp/link-long-XXXXXX";
	unsigned char data[LEN], *buf = calloc(LEN, 1);
	int fd = mkstemp(path);

	CHECK(fd >= 0 && buf, "mkstemp");
	unlink(path);
	for (unsigned i = 0; i < LEN; i++)
		data[i] = (unsigned char)(i * 7);
	CHECK_EQ(write(fd, data, LEN), LEN, "write");
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0, "lseek");
	for (unsigned i = 0; i < LEN; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		io_uring_prep_read(sqe, fd, buf + i, 1, -1);
		sqe->user_data = i;
		if (i + 1 < LEN)
			sqe->flags |= IOSQE_IO_LINK;
		if (i == 0)
			sqe->flags |= IOSQE_ASYNC;
	}
	CHECK_EQ(io_uring_submit(ring), LEN, "submit reads");
	check_chain(ring, "reads", buf);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), LEN, "file position after the reads");
	close(fd);
	free(buf);
}

int main(int argc, char *argv[])
{
	struct io_uring_params p;
	struct io_uring ring;

	(void)argc;
	tu_set_name(argv[0]);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 2 * LEN;
	CHECK_EQ(io_uring_queue_init_params(LEN, &ring, &p), 0, "queue_init");
	nop_chain(&ring, false);
	nop_chain(&ring, true);
	read_chain(&ring);
	io_uring_queue_exit(&ring);
	tu_pass();
	return T_EXIT_PASS;
}
