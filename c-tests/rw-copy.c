/* SPDX-License-Identifier: MIT */
/*
 * File copy with IORING_OP_READV / IORING_OP_WRITEV, verified byte for byte.
 *
 * A multi-MiB random source file (with an odd length, so the last chunk is
 * partial) is copied chunk by chunk. Each chunk is split over several
 * iovecs of unequal sizes; reads and writes carry explicit file offsets.
 * Short reads and writes are resubmitted for the remainder. A second pass
 * copies in reverse chunk order to check offsets really are honoured.
 * The iovec arrays are read at submission (IORING_FEAT_SUBMIT_STABLE): a
 * writev and a readv whose arrays are overwritten right after the submit
 * still move the bytes they first described, and so does a writev whose
 * fd is closed right after the submit.
 */
#include <liburing.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "test-util.h"

#define FILE_SIZE	(3 * 1024 * 1024 + 12345)
#define CHUNK		(64 * 1024)
#define QD		8
#define NR_VECS		4

struct slot {
	struct iovec iov[NR_VECS];
	struct iovec cur[NR_VECS];	/* iovecs adjusted after short I/O */
	int nr_cur;
	unsigned char *buf;
	off_t off;		/* file offset of the chunk */
	size_t len;		/* total chunk length */
	size_t done;		/* bytes done in the current phase */
	int writing;
};

/* Split 'len' bytes of 'buf' into NR_VECS iovecs of unequal sizes. */
static void setup_iovecs(struct slot *s)
{
	static const unsigned weights[NR_VECS] = { 1, 3, 2, 4 };
	size_t left = s->len, pos = 0;

	for (int i = 0; i < NR_VECS; i++) {
		size_t n = (i == NR_VECS - 1) ? left : s->len * weights[i] / 10;

		if (n > left)
			n = left;
		s->iov[i].iov_base = s->buf + pos;
		s->iov[i].iov_len = n;
		pos += n;
		left -= n;
	}
}

/* Build the iovec list for the part of the chunk that is not done yet. */
static void build_remaining(struct slot *s)
{
	size_t skip = s->done;

	s->nr_cur = 0;
	for (int i = 0; i < NR_VECS; i++) {
		struct iovec v = s->iov[i];

		if (skip >= v.iov_len) {
			skip -= v.iov_len;
			continue;
		}
		v.iov_base = (char *)v.iov_base + skip;
		v.iov_len -= skip;
		skip = 0;
		if (v.iov_len)
			s->cur[s->nr_cur++] = v;
	}
}

static void queue_slot(struct io_uring *ring, struct slot *s, int infd,
		       int outfd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK(sqe, "no sqe available");
	build_remaining(s);
	CHECK(s->nr_cur > 0, "nothing left to queue");
	if (s->writing)
		io_uring_prep_writev(sqe, outfd, s->cur, s->nr_cur,
				     s->off + s->done);
	else
		io_uring_prep_readv(sqe, infd, s->cur, s->nr_cur,
				    s->off + s->done);
	io_uring_sqe_set_data(sqe, s);
}

static void copy_file(struct io_uring *ring, int infd, int outfd, size_t size,
		      int reverse, unsigned *short_ios)
{
	struct slot slots[QD];
	size_t nchunks = (size + CHUNK - 1) / CHUNK, next = 0, completed = 0;
	unsigned inflight = 0;

	for (int i = 0; i < QD; i++) {
		slots[i].buf = malloc(CHUNK);
		CHECK(slots[i].buf, "malloc");
	}

	while (completed < nchunks) {
		/* Start reads for free slots. */
		for (int i = 0; i < QD && next < nchunks; i++) {
			struct slot *s = &slots[i];
			size_t idx;

			if (s->len)
				continue;	/* busy: len is reset when done */
			idx = reverse ? nchunks - 1 - next : next;
			next++;
			s->off = (off_t)idx * CHUNK;
			s->len = size - (size_t)s->off < CHUNK ?
				 size - (size_t)s->off : CHUNK;
			s->done = 0;
			s->writing = 0;
			setup_iovecs(s);
			queue_slot(ring, s, infd, outfd);
			inflight++;
		}
		int ret = io_uring_submit(ring);
		CHECK(ret >= 0, "submit: %s", strerror(-ret));

		struct io_uring_cqe *cqe;

		ret = io_uring_wait_cqe(ring, &cqe);
		CHECK_EQ(ret, 0, "wait_cqe");
		struct slot *s = io_uring_cqe_get_data(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(ring, cqe);
		inflight--;
		CHECK(res >= 0, "%s at %lld: %s", s->writing ? "writev" : "readv",
		      (long long)(s->off + s->done), strerror(-res));
		CHECK(res > 0, "%s returned 0 at %lld (EOF?)",
		      s->writing ? "writev" : "readv",
		      (long long)(s->off + s->done));
		CHECK((size_t)res <= s->len - s->done, "res %d beyond request", res);
		s->done += (size_t)res;
		if (s->done < s->len) {
			(*short_ios)++;
			queue_slot(ring, s, infd, outfd);	/* remainder */
			inflight++;
		} else if (!s->writing) {
			s->writing = 1;
			s->done = 0;
			queue_slot(ring, s, infd, outfd);
			inflight++;
		} else {
			completed++;
			s->len = 0;
		}
	}
	CHECK_EQ(inflight, 0, "requests still in flight");
	for (int i = 0; i < QD; i++)
		free(slots[i].buf);
}

static void verify(int fd, const unsigned char *want, size_t size)
{
	unsigned char *got = malloc(size);
	struct stat st;

	CHECK(got, "malloc");
	CHECK(fstat(fd, &st) == 0, "fstat");
	CHECK_EQ(st.st_size, size, "output size");
	tu_pread_all(fd, got, size, 0);
	for (size_t i = 0; i < size; i++)
		CHECK(got[i] == want[i], "byte %zu differs: %#x vs %#x", i,
		      got[i], want[i]);
	free(got);
}

/* One vectored op whose iovec array is clobbered as soon as it is submitted. */
static int submit_then_clobber(struct io_uring *ring, int write, int fd,
			       void *a, void *b, int close_fd)
{
	struct iovec iov[2] = { { a, 100 }, { b, 28 } };
	static char junk[128];
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	if (write)
		io_uring_prep_writev(sqe, fd, iov, 2, 0);
	else
		io_uring_prep_readv(sqe, fd, iov, 2, 0);
	CHECK_EQ(io_uring_submit(ring), 1, "submit");
	iov[0].iov_base = iov[1].iov_base = junk;
	iov[0].iov_len = iov[1].iov_len = 1;
	if (close_fd)
		close(fd);
	CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, "wait");
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

static void test_stable_iovecs(struct io_uring *ring, const unsigned char *data)
{
	char path[64];
	unsigned char back[128];
	int fd = tu_temp_file(path, sizeof(path)), fd2;

	CHECK_EQ(submit_then_clobber(ring, 1, fd, (void *)data, (void *)(data + 100), 0),
		 128, "writev with a clobbered iovec array");
	CHECK_EQ(submit_then_clobber(ring, 0, fd, back, back + 100, 0), 128,
		 "readv with a clobbered iovec array");
	CHECK(!memcmp(back, data, 128), "bytes of the clobbered writev/readv");
	fd2 = dup(fd);
	CHECK(ftruncate(fd, 0) == 0, "ftruncate");
	CHECK_EQ(submit_then_clobber(ring, 1, fd2, (void *)data, (void *)(data + 100), 1),
		 128, "writev on a closed fd");
	tu_pread_all(fd, back, 128, 0);
	CHECK(!memcmp(back, data, 128), "bytes of the writev on a closed fd");
	close(fd);
	unlink(path);
	tu_unregister_cleanup(path);
}

int main(int argc, char *argv[])
{
	char inpath[64], outpath[64];
	unsigned char *data;
	struct io_uring ring;
	unsigned short_ios = 0;
	int infd, outfd, ret;

	(void)argc;
	tu_set_name(argv[0]);

	infd = tu_temp_file_random(inpath, sizeof(inpath), FILE_SIZE, 0x1234,
				   &data);
	outfd = tu_temp_file(outpath, sizeof(outpath));

	ret = io_uring_queue_init(QD * 2, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");

	copy_file(&ring, infd, outfd, FILE_SIZE, 0, &short_ios);
	verify(outfd, data, FILE_SIZE);

	/* Second pass: fresh output, chunks copied last to first. */
	CHECK(ftruncate(outfd, 0) == 0, "ftruncate");
	copy_file(&ring, infd, outfd, FILE_SIZE, 1, &short_ios);
	verify(outfd, data, FILE_SIZE);

	/* A readv at EOF returns 0; one straddling EOF is short. */
	{
		unsigned char tmp[256];
		struct iovec iov[2] = {
			{ tmp, 100 }, { tmp + 100, 156 },
		};
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;

		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_readv(sqe, infd, iov, 2, FILE_SIZE - 50);
		CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "submit");
		CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek");
		CHECK_EQ(cqe->res, 50, "readv straddling EOF");
		io_uring_cqe_seen(&ring, cqe);
		CHECK(memcmp(tmp, data + FILE_SIZE - 50, 50) == 0,
		      "tail bytes differ");

		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_readv(sqe, infd, iov, 2, FILE_SIZE);
		CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "submit");
		CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek");
		CHECK_EQ(cqe->res, 0, "readv at EOF");
		io_uring_cqe_seen(&ring, cqe);
	}

	test_stable_iovecs(&ring, data);
	io_uring_queue_exit(&ring);
	close(infd);
	close(outfd);
	unlink(inpath);
	unlink(outpath);
	tu_unregister_cleanup(inpath);
	tu_unregister_cleanup(outpath);
	free(data);
	printf("%s: copied %d bytes twice, %u short I/Os resubmitted\n",
	       tu_name, FILE_SIZE, short_ios);
	tu_pass();
	return T_EXIT_PASS;
}
