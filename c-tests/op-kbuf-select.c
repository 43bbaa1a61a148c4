/* SPDX-License-Identifier: MIT */
/*
 * Buffer selection, case by case (each result is the kernel's):
 *  - legacy groups: buffers go out in the order provided; a read that has
 *    to wait gives its buffer back and takes it again; a failed read
 *    consumes its legacy buffer and names it; REMOVE_BUFFERS counts what
 *    it removed; bad PROVIDE/REMOVE arguments and group kinds;
 *  - -ENOBUFS for an empty group and for a group id never used;
 *  - READV with buffer select (one iovec giving the length);
 *  - rings: a failed read on a pipe leaves the ring buffer unconsumed; a
 *    waiting read consumes exactly one buffer;
 *  - READ_MULTISHOT on a pipe: F_MORE per chunk, -ENOBUFS without F_MORE
 *    once the ring is empty with the unread data still in the pipe, EOF
 *    ends it, cancel ends it, -EBADFD on a regular file, -EINVAL without
 *    buffer select or with a length;
 *  - READ_MULTISHOT on an incremental ring: IORING_CQE_F_BUF_MORE while
 *    the buffer has room, consecutive pieces of one buffer;
 *  - a ring unregistered under an armed READ_MULTISHOT: the next data
 *    ends it with -ENOBUFS and stays in the pipe;
 *  - READ_MULTISHOT whose CQE finds the CQ full: that CQE ends it (no
 *    F_MORE, overflowed), the rest of the data stays in the pipe;
 *  - files that cannot poll take their ring buffer for good at selection:
 *    a read at EOF and a failed read (a directory) still name it.
 */
#include <fcntl.h>
#include "op-util.h"

static struct io_uring ring;

static struct io_uring_sqe *prep_select_read(int fd, unsigned len, int bgid,
					     __u64 ud)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_read(sqe, fd, NULL, len, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	sqe->user_data = ud;
	return sqe;
}

static int provide(void *mem, int len, int nr, int bgid, int bid)
{
	io_uring_prep_provide_buffers(op_sqe(&ring), mem, len, nr, bgid, bid);
	return op_run1(&ring);
}

static int remove_bufs(int nr, int bgid)
{
	io_uring_prep_remove_buffers(op_sqe(&ring), nr, bgid);
	return op_run1(&ring);
}

static void wpipe(int fd, const char *s)
{
	CHECK_EQ(write(fd, s, strlen(s)), (ssize_t)strlen(s), "pipe write");
}

static void legacy(void)
{
	static char mem[4][32];
	struct op_cqe c;
	int p[2];

	CHECK(pipe(p) == 0, "pipe");
	CHECK_EQ(provide(mem, 32, 4, 1, 100), 0, "provide 4");
	/* first provided, first used */
	wpipe(p[1], "abc");
	prep_select_read(p[0], 0, 1, 1);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, 3, "read");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | 100 << IORING_CQE_BUFFER_SHIFT,
		 "first buffer, no other flag");
	CHECK(!memcmp(mem[0], "abc", 3), "data in buffer 100");

	/* a read that waits gives the buffer back and takes it again */
	prep_select_read(p[0], 2, 1, 2);
	op_submit(&ring, 1);
	usleep(20000);
	wpipe(p[1], "xyz");
	c = op_wait(&ring);
	CHECK_EQ(c.res, 2, "clamped to the asked length");
	CHECK_EQ(c.flags >> IORING_CQE_BUFFER_SHIFT, 101, "next buffer");
	CHECK(!memcmp(mem[1], "xy", 2), "data in buffer 101");

	/* a failed read (the pipe's write end) consumes and names its buffer */
	prep_select_read(p[1], 0, 1, 3);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, -EBADF, "read from the write end");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | 102 << IORING_CQE_BUFFER_SHIFT,
		 "failed read names its legacy buffer");

	/* READV with buffer select: one iovec, its length is the size */
	{
		struct iovec iov = { NULL, 1 }, two[2];
		struct io_uring_sqe *sqe = op_sqe(&ring);

		io_uring_prep_readv(sqe, p[0], &iov, 1, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = 1;
		c = op_wait((op_submit(&ring, 1), &ring));
		CHECK_EQ(c.res, 1, "readv select");
		CHECK_EQ(c.flags >> IORING_CQE_BUFFER_SHIFT, 103, "last buffer");
		CHECK(mem[3][0] == 'z', "readv data");
		sqe = op_sqe(&ring);
		io_uring_prep_readv(sqe, p[0], two, 2, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = 1;
		CHECK_EQ(op_run1(&ring), -EINVAL, "readv select with 2 iovecs");
	}

	/* group 1 is empty now, group 555 never existed (6.1 keeps every
	 * group below 64) */
	wpipe(p[1], "q");
	prep_select_read(p[0], 0, 1, 4);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, -ENOBUFS, "empty group");
	CHECK_EQ(c.flags, 0, "no flags on ENOBUFS");
	prep_select_read(p[0], 0, 555, 5);
	CHECK_EQ(op_run1(&ring), -ENOBUFS, "group never provided");
	CHECK_EQ(remove_bufs(1, 1), 0, "remove from an empty group");
	CHECK_EQ(remove_bufs(1, 555), -ENOENT, "remove from no group");

	/* REMOVE_BUFFERS counts */
	CHECK_EQ(provide(mem, 8, 10, 2, 0), 0, "provide 10");
	CHECK_EQ(remove_bufs(4, 2), 4, "remove 4 of 10");
	CHECK_EQ(remove_bufs(100, 2), 6, "remove the other 6");
	CHECK_EQ(remove_bufs(100, 2), 0, "nothing left");

	/* bad arguments */
	CHECK_EQ(provide(mem, 8, 0, 3, 0), -E2BIG, "provide 0 buffers");
	/* refused since 6.12 (older kernels take them) */
	if (tu_on_engine() || tu_kernel_at_least(6, 12)) {
		CHECK_EQ(provide(mem, 0, 1, 3, 0), -EINVAL, "provide 0 bytes");
		CHECK_EQ(provide(mem, 8, 2, 3, 65535), -EINVAL,
			 "bids past 65535");
	}
	CHECK_EQ(provide(mem, 8, 1, 3, 65536), -E2BIG, "bid 65536");
	CHECK_EQ(provide((void *)(~0UL - 4), 8, 1, 3, 0), -EOVERFLOW,
		 "address wraps");
	CHECK_EQ(remove_bufs(0, 2), -EINVAL, "remove 0");
	{
		struct io_uring_sqe *sqe = op_sqe(&ring);

		io_uring_prep_provide_buffers(sqe, mem, 8, 1, 3, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		CHECK_EQ(op_run1(&ring), -EOPNOTSUPP, "provide with select");
	}
	/* last bid is 65535: accepted */
	CHECK_EQ(provide(mem, 8, 1, 3, 65535), 0, "bid 65535");
	CHECK_EQ(remove_bufs(1, 3), 1, "remove it");
	close(p[0]);
	close(p[1]);
}

static void rings(void)
{
	static char mem[4 * 64];
	struct io_uring_buf_ring *br = op_buf_ring(&ring, 4, 7, mem, 64);
	struct op_cqe c;
	int p[2];
	uint16_t h;

	CHECK(pipe(p) == 0, "pipe");
	/* a failed read on a pollable file does not consume (since 6.12; 6.1
	 * names the buffer, and its next read takes the one after) */
	prep_select_read(p[1], 0, 7, 1);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, -EBADF, "ring read from the write end");
	if (!tu_on_engine() && !tu_kernel_at_least(6, 12)) {
		close(p[0]);
		close(p[1]);
		CHECK_EQ(io_uring_free_buf_ring(&ring, br, 4, 7), 0, "free 7");
		return;
	}
	CHECK_EQ(c.flags, 0, "ring buffer not named");
	OP_CHECK_HEAD(&ring, 7, 0, "ring head unmoved");
	/* a waiting read consumes one buffer */
	prep_select_read(p[0], 0, 7, 2);
	op_submit(&ring, 1);
	usleep(20000);
	OP_CHECK_HEAD(&ring, 7, 0, "head while waiting");
	wpipe(p[1], "ring");
	c = op_wait(&ring);
	CHECK_EQ(c.res, 4, "ring read");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER, "buffer 0");
	OP_CHECK_HEAD(&ring, 7, 1, "head after");
	/* a legacy op on a ring group */
	CHECK_EQ(provide(mem, 8, 1, 7, 0), -EINVAL, "provide into a ring");
	CHECK_EQ(remove_bufs(1, 7), -EINVAL, "remove from a ring");
	/* PBUF_STATUS of a legacy group */
	CHECK_EQ(provide(mem, 8, 1, 8, 0), 0, "legacy group 8");
	CHECK_EQ(io_uring_buf_ring_head(&ring, 8, &h), -EINVAL,
		 "head of a legacy group");
	CHECK_EQ(io_uring_unregister_buf_ring(&ring, 8), -EINVAL,
		 "unregister a legacy group");
	CHECK_EQ(remove_bufs(1, 8), 1, "empty group 8");
	/* an emptied legacy group can become a ring */
	{
		static char m2[2 * 64];
		struct io_uring_buf_ring *b2 = op_buf_ring(&ring, 2, 8, m2, 64);

		CHECK_EQ(io_uring_free_buf_ring(&ring, b2, 2, 8), 0, "free 8");
	}
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 4, 7), 0, "free 7");
	close(p[0]);
	close(p[1]);
}

static void read_mshot(void)
{
	static char mem[4 * 16];
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct op_cqe c;
	char rest[64];
	int p[2], fd;

	if (!op_has(&ring, IORING_OP_READ_MULTISHOT))
		return;
	br = op_buf_ring(&ring, 4, 9, mem, 16);
	CHECK(pipe(p) == 0, "pipe");
	/* argument checks */
	sqe = op_sqe(&ring);
	io_uring_prep_read_multishot(sqe, p[0], 0, 0, 9);
	sqe->flags &= ~IOSQE_BUFFER_SELECT;
	CHECK_EQ(op_run1(&ring), -EINVAL, "multishot read without select");
	sqe = op_sqe(&ring);
	io_uring_prep_read_multishot(sqe, p[0], 8, 0, 9);
	CHECK_EQ(op_run1(&ring), -EINVAL, "multishot read with a length");
	fd = open("/proc/self/exe", O_RDONLY);
	CHECK(fd >= 0, "open");
	sqe = op_sqe(&ring);
	io_uring_prep_read_multishot(sqe, fd, 0, 0, 9);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, -EBADFD, "multishot read of a regular file");
	CHECK_EQ(c.flags, 0, "flags");
	OP_CHECK_HEAD(&ring, 9, 0, "no buffer used");
	close(fd);

	/* three chunks, then the ring runs dry with 40 bytes in the pipe */
	sqe = op_sqe(&ring);
	io_uring_prep_read_multishot(sqe, p[0], 0, 0, 9);
	sqe->user_data = 9;
	op_submit(&ring, 1);
	for (int i = 0; i < 3; i++) {
		char m[8];

		snprintf(m, sizeof(m), "m%d", i);
		wpipe(p[1], m);
		c = op_wait(&ring);
		CHECK_EQ(c.user_data, 9, "ud");
		CHECK_EQ(c.res, 2, "chunk");
		CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | IORING_CQE_F_MORE |
			 (unsigned)i << IORING_CQE_BUFFER_SHIFT, "chunk flags");
		CHECK(!memcmp(mem + i * 16, m, 2), "chunk data");
	}
	wpipe(p[1], "0123456789abcdef0123456789abcdef01234567");
	c = op_wait(&ring);
	CHECK_EQ(c.res, 16, "last buffer filled");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | IORING_CQE_F_MORE |
		 3 << IORING_CQE_BUFFER_SHIFT, "last buffer flags");
	c = op_wait(&ring);
	CHECK_EQ(c.res, -ENOBUFS, "ring dry");
	CHECK_EQ(c.flags, 0, "ENOBUFS ends it (no F_MORE)");
	CHECK_EQ(read(p[0], rest, sizeof(rest)), 24, "the rest stayed");
	CHECK(!memcmp(rest, "0123456789abcdef01234567", 24), "rest data");
	OP_CHECK_HEAD(&ring, 9, 4, "four buffers used");

	/* refill; EOF ends it with res 0 and no buffer */
	for (int i = 0; i < 4; i++)
		io_uring_buf_ring_add(br, mem + i * 16, 16, i,
				      io_uring_buf_ring_mask(4), i);
	io_uring_buf_ring_advance(br, 4);
	sqe = op_sqe(&ring);
	io_uring_prep_read_multishot(sqe, p[0], 0, 0, 9);
	sqe->user_data = 10;
	op_submit(&ring, 1);
	wpipe(p[1], "end");
	c = op_wait(&ring);
	CHECK(c.res == 3 && (c.flags & IORING_CQE_F_MORE), "before EOF");
	close(p[1]);
	c = op_wait(&ring);
	CHECK_EQ(c.res, 0, "EOF");
	CHECK_EQ(c.flags, 0, "EOF flags");
	OP_CHECK_HEAD(&ring, 9, 5, "EOF used no buffer");
	close(p[0]);

	/* cancel ends an armed one */
	CHECK(pipe(p) == 0, "pipe");
	sqe = op_sqe(&ring);
	io_uring_prep_read_multishot(sqe, p[0], 0, 0, 9);
	sqe->user_data = 11;
	op_submit(&ring, 1);
	usleep(10000);
	sqe = op_sqe(&ring);
	io_uring_prep_cancel64(sqe, 11, 0);
	sqe->user_data = 12;
	op_submit(&ring, 1);
	for (int i = 0; i < 2; i++) {
		c = op_wait(&ring);
		if (c.user_data == 12)
			CHECK_EQ(c.res, 0, "cancel");
		else
			CHECK(c.user_data == 11 && c.res == -ECANCELED &&
			      c.flags == 0, "cancelled: %d %#x", c.res, c.flags);
	}

	/* unregistered under an armed one: the next data ends it */
	sqe = op_sqe(&ring);
	io_uring_prep_read_multishot(sqe, p[0], 0, 0, 9);
	sqe->user_data = 13;
	op_submit(&ring, 1);
	usleep(10000);
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 4, 9), 0, "free under use");
	wpipe(p[1], "lost?");
	c = op_wait(&ring);
	CHECK_EQ(c.user_data, 13, "ud");
	CHECK_EQ(c.res, -ENOBUFS, "group gone");
	CHECK_EQ(c.flags, 0, "flags");
	CHECK_EQ(read(p[0], rest, sizeof(rest)), 5, "data not lost");
	close(p[0]);
	close(p[1]);
}

static void inc_mshot(void)
{
	static char mem[2 * 64];
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct op_cqe c;
	int p[2], err;

	if (!op_has(&ring, IORING_OP_READ_MULTISHOT))
		return;
	br = io_uring_setup_buf_ring(&ring, 2, 10, IOU_PBUF_RING_INC, &err);
	if (!br && err == -EINVAL && tu_lacks_before(6, 12, "IOU_PBUF_RING_INC"))
		return;
	CHECK(br, "inc ring: %d", err);
	op_buf_ring_fill(br, 2, mem, 64);
	CHECK(pipe(p) == 0, "pipe");
	sqe = op_sqe(&ring);
	io_uring_prep_read_multishot(sqe, p[0], 0, 0, 10);
	op_submit(&ring, 1);
	/* 30 + 30 + 30 bytes: buffer 0 at 0 and 30, then 4 more finish it
	 * and the remaining 26 go to buffer 1 */
	for (int i = 0; i < 2; i++) {
		char m[31];

		memset(m, 'a' + i, 30);
		m[30] = 0;
		wpipe(p[1], m);
		c = op_wait(&ring);
		CHECK_EQ(c.res, 30, "inc chunk");
		CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | IORING_CQE_F_MORE |
			 IORING_CQE_F_BUF_MORE, "buffer 0 keeps room");
		CHECK(mem[i * 30] == 'a' + i && mem[i * 30 + 29] == 'a' + i,
		      "piece %d in place", i);
	}
	wpipe(p[1], "zzzz");
	c = op_wait(&ring);
	CHECK_EQ(c.res, 4, "fills buffer 0");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | IORING_CQE_F_MORE,
		 "buffer 0 done");
	CHECK(!memcmp(mem + 60, "zzzz", 4), "tail of buffer 0");
	wpipe(p[1], "next");
	c = op_wait(&ring);
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | IORING_CQE_F_MORE |
		 IORING_CQE_F_BUF_MORE | 1 << IORING_CQE_BUFFER_SHIFT,
		 "then buffer 1");
	close(p[1]);
	c = op_wait(&ring);
	CHECK(c.res == 0 && c.flags == 0, "EOF: %d %#x", c.res, c.flags);
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 2, 10), 0, "free");
	close(p[0]);
}

static void cq_full(void)
{
	static char mem[64 * 16];
	struct io_uring r2;
	struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE,
				     .cq_entries = 4 };
	struct io_uring_buf_ring *br;
	struct io_uring_cqe *cqe;
	char big[200], rest[256];
	int fds[2], err, n = 0;

	CHECK_EQ(io_uring_queue_init_params(4, &r2, &p), 0, "init");
	br = io_uring_setup_buf_ring(&r2, 64, 1, 0, &err);
	CHECK(br, "buf ring %d", err);
	for (int i = 0; i < 64; i++)
		io_uring_buf_ring_add(br, mem + i * 16, 16, i, 63, i);
	io_uring_buf_ring_advance(br, 64);
	CHECK(pipe(fds) == 0, "pipe");
	io_uring_prep_read_multishot(io_uring_get_sqe(&r2), fds[0], 0, 0, 1);
	CHECK_EQ(io_uring_submit(&r2), 1, "submit");
	usleep(10000);
	memset(big, 'x', sizeof(big));
	CHECK_EQ(write(fds[1], big, sizeof(big)), 200, "write");
	/* reap only after the burst (the engine reads on another thread) */
	usleep(50000);
	/* 4 CQEs fill the CQ; the 5th (buffer 4) is the last */
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(io_uring_wait_cqe(&r2, &cqe), 0, "wait");
		CHECK_EQ(cqe->res, 16, "cq-full chunk");
		CHECK_EQ(cqe->flags, IORING_CQE_F_BUFFER | (unsigned)i <<
			 IORING_CQE_BUFFER_SHIFT | (i < 4 ? IORING_CQE_F_MORE : 0),
			 "cq-full flags");
		io_uring_cqe_seen(&r2, cqe);
		n++;
	}
	CHECK_EQ(io_uring_peek_cqe(&r2, &cqe), -EAGAIN, "nothing after the last");
	OP_CHECK_HEAD(&r2, 1, 5, "five buffers used");
	CHECK_EQ(read(fds[0], rest, sizeof(rest)), 200 - 16 * n, "rest stayed");
	CHECK_EQ(io_uring_free_buf_ring(&r2, br, 64, 1), 0, "free");
	io_uring_queue_exit(&r2);
	close(fds[0]);
	close(fds[1]);
}

static void files(void)
{
	static char mem[4 * 64];
	struct io_uring_buf_ring *br = op_buf_ring(&ring, 4, 11, mem, 64);
	struct op_cqe c;
	char path[] = "/tmp/op-kbuf-select.XXXXXX";
	int fd = mkstemp(path), dfd = open("/tmp", O_RDONLY | O_DIRECTORY);

	CHECK(fd >= 0 && dfd >= 0, "files");
	unlink(path);
	CHECK_EQ(write(fd, "file", 4), 4, "write");
	prep_select_read(fd, 0, 11, 1);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, 4, "file read");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER, "buffer 0");
	CHECK(!memcmp(mem, "file", 4), "file data");
	prep_select_read(fd, 0, 11, 2)->off = 1 << 20;
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, 0, "read at EOF");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | 1 << IORING_CQE_BUFFER_SHIFT,
		 "EOF names buffer 1");
	prep_select_read(dfd, 0, 11, 3);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, -EISDIR, "read of a directory");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | 2 << IORING_CQE_BUFFER_SHIFT,
		 "the failed read names buffer 2");
	OP_CHECK_HEAD(&ring, 11, 3, "three consumed");
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 4, 11), 0, "free");
	close(fd);
	close(dfd);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 16, 0);
	if (!op_has(&ring, IORING_OP_PROVIDE_BUFFERS))
		SKIP("no IORING_OP_PROVIDE_BUFFERS");
	op_probe_buf_status(&ring);
	legacy();
	rings();
	files();
	read_mshot();
	inc_mshot();
	if (op_has(&ring, IORING_OP_READ_MULTISHOT))
		cq_full();
	io_uring_queue_exit(&ring);
	return tu_done();
}
