/* SPDX-License-Identifier: MIT */
/*
 * Linked read -> write chains (IOSQE_IO_LINK) copying a file, verified byte
 * for byte. Each chunk is a READ linked to a WRITE of the same buffer; the
 * write may only start once the read finished, so the data written must be
 * what was read. Several chains are in flight at once.
 *
 * Then: a link whose head fails (read from a bad fd) must fail the head
 * with its own error and complete every later member with -ECANCELED; and
 * a short read in a chain also breaks the link (the write gets -ECANCELED).
 */
#include <liburing.h>
#include <sys/stat.h>
#include "test-util.h"

#define FILE_SIZE	(2 * 1024 * 1024 + 777)
#define CHUNK		(32 * 1024)
#define CHAINS		8

static void copy_linked(struct io_uring *ring, int infd, int outfd, size_t size)
{
	unsigned char *bufs[CHAINS];
	size_t nchunks = (size + CHUNK - 1) / CHUNK, chunk = 0;

	for (int i = 0; i < CHAINS; i++) {
		bufs[i] = malloc(CHUNK);
		CHECK(bufs[i], "malloc");
	}

	while (chunk < nchunks) {
		unsigned batch = 0;

		for (int i = 0; i < CHAINS && chunk < nchunks; i++, chunk++) {
			off_t off = (off_t)chunk * CHUNK;
			unsigned len = size - (size_t)off < CHUNK ?
				       (unsigned)(size - (size_t)off) : CHUNK;
			struct io_uring_sqe *sqe;

			/* Poison the buffer so a write-before-read shows. */
			memset(bufs[i], 0xa5, CHUNK);

			sqe = io_uring_get_sqe(ring);
			CHECK(sqe, "no sqe for read");
			io_uring_prep_read(sqe, infd, bufs[i], len, off);
			sqe->flags |= IOSQE_IO_LINK;
			sqe->user_data = ((unsigned long long)chunk << 1) | 0;

			sqe = io_uring_get_sqe(ring);
			CHECK(sqe, "no sqe for write");
			io_uring_prep_write(sqe, outfd, bufs[i], len, off);
			sqe->user_data = ((unsigned long long)chunk << 1) | 1;
			batch += 2;
		}
		int ret = io_uring_submit_and_wait(ring, batch);
		CHECK_EQ(ret, batch, "submit_and_wait");

		for (unsigned n = 0; n < batch; n++) {
			struct io_uring_cqe *cqe;
			unsigned long long c;
			size_t want;

			ret = io_uring_wait_cqe(ring, &cqe);
			CHECK_EQ(ret, 0, "wait_cqe");
			c = cqe->user_data >> 1;
			want = size - c * CHUNK < CHUNK ? size - c * CHUNK : CHUNK;
			CHECK(cqe->res == (int)want,
			      "chunk %llu %s: res %d, want %zu", c,
			      (cqe->user_data & 1) ? "write" : "read",
			      cqe->res, want);
			io_uring_cqe_seen(ring, cqe);
		}
	}
	for (int i = 0; i < CHAINS; i++)
		free(bufs[i]);
}

/* Reap 'n' CQEs into res[] indexed by user_data (which must be < n). */
static void reap_indexed(struct io_uring *ring, int *res, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		res[i] = 1;	/* marker: not seen */
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe(ring, &cqe);

		CHECK_EQ(ret, 0, "wait_cqe");
		CHECK(cqe->user_data < n, "unexpected user_data %llu",
		      (unsigned long long)cqe->user_data);
		CHECK(res[cqe->user_data] == 1, "user_data %llu seen twice",
		      (unsigned long long)cqe->user_data);
		res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
}

static void failed_head(struct io_uring *ring, int outfd)
{
	char buf[64];
	int res[4];
	struct io_uring_sqe *sqe;
	int badfd = 1000;

	/* Make sure the head really has a bad fd. */
	while (fcntl(badfd, F_GETFD) != -1)
		badfd++;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, badfd, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 0;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_write(sqe, outfd, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 1;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 2;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);	/* last member: no link flag */
	sqe->user_data = 3;

	CHECK_EQ(io_uring_submit(ring), 4, "submit failing chain");
	reap_indexed(ring, res, 4);
	CHECK_EQ(res[0], -EBADF, "failed head result");
	CHECK_EQ(res[1], -ECANCELED, "linked write after failed head");
	CHECK_EQ(res[2], -ECANCELED, "linked nop after failed head");
	CHECK_EQ(res[3], -ECANCELED, "last linked nop after failed head");

	/* A request after the chain (not linked) is unaffected. */
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 0;
	CHECK_EQ(io_uring_submit(ring), 1, "submit nop");
	reap_indexed(ring, res, 1);
	CHECK_EQ(res[0], 0, "nop after chain");
}

static void short_read_breaks_link(struct io_uring *ring, int infd, int outfd,
				   size_t size)
{
	char buf[256];
	int res[2];
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, infd, buf, sizeof(buf), size - 10);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 0;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_write(sqe, outfd, buf, sizeof(buf), size);
	sqe->user_data = 1;
	CHECK_EQ(io_uring_submit(ring), 2, "submit short chain");
	reap_indexed(ring, res, 2);
	CHECK_EQ(res[0], 10, "short read at EOF");
	CHECK_EQ(res[1], -ECANCELED, "write linked after short read");
}

int main(int argc, char *argv[])
{
	char inpath[64], outpath[64];
	unsigned char *data, *got;
	struct io_uring ring;
	struct stat st;
	int infd, outfd, ret;

	(void)argc;
	tu_set_name(argv[0]);

	infd = tu_temp_file_random(inpath, sizeof(inpath), FILE_SIZE, 0xfeed,
				   &data);
	outfd = tu_temp_file(outpath, sizeof(outpath));

	ret = io_uring_queue_init(CHAINS * 2, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");

	copy_linked(&ring, infd, outfd, FILE_SIZE);

	got = malloc(FILE_SIZE);
	CHECK(got, "malloc");
	CHECK(fstat(outfd, &st) == 0, "fstat");
	CHECK_EQ(st.st_size, FILE_SIZE, "copy size");
	tu_pread_all(outfd, got, FILE_SIZE, 0);
	for (size_t i = 0; i < FILE_SIZE; i++)
		CHECK(got[i] == data[i], "byte %zu differs", i);

	failed_head(&ring, outfd);
	short_read_breaks_link(&ring, infd, outfd, FILE_SIZE);

	/* The cancelled write must not have touched the output file. */
	CHECK(fstat(outfd, &st) == 0, "fstat");
	CHECK_EQ(st.st_size, FILE_SIZE, "output size after cancelled writes");
	tu_pread_all(outfd, got, 64, 0);
	CHECK(memcmp(got, data, 64) == 0, "cancelled write modified output");

	io_uring_queue_exit(&ring);
	close(infd);
	close(outfd);
	free(data);
	free(got);
	tu_pass();
	return T_EXIT_PASS;
}
