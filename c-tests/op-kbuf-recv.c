/* SPDX-License-Identifier: MIT */
/*
 * Receives and sends with provided buffers on unix stream socketpairs,
 * case by case (each result is the kernel's):
 *  - RECV with buffer select: the buffer is named; EOF and errors give a
 *    legacy buffer back (no F_BUFFER) and consume no ring buffer;
 *  - multishot RECV: F_MORE and IORING_CQE_F_SOCK_NONEMPTY while more is
 *    queued, the SQE's len caps each receive, optlen the total; it ends
 *    with -ENOBUFS (no F_MORE) once the ring is empty, the unread bytes
 *    staying in the socket;
 *  - a ring unregistered under an armed multishot RECV: the next data
 *    ends it with -ENOBUFS and stays in the socket;
 *  - RECV bundles: several buffers in one CQE (the first one named, the
 *    ring head past all of them; a buffer larger than what is left of the
 *    asked length ends the bundle rather than being cut), -ENOENT for a
 *    missing group, -ENOBUFS for an empty one; a buffer cut to the asked
 *    length keeps its ring entry whole, and ends the bundle even after a
 *    wait;
 *  - SEND with buffer select: one buffer, or a bundle of them (its
 *    length bounding the first part only); -ENOENT for a missing group; a
 *    send cancelled while it waits for room names the buffer it took; from
 *    an incremental ring, IORING_CQE_F_BUF_MORE while the buffer has room.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include "op-util.h"

#define BL 16

static struct io_uring ring;
static char mem[8][BL];

static struct io_uring_buf_ring *mkring(unsigned n, int bgid)
{
	return op_buf_ring(&ring, n, bgid, mem[0], BL);
}

static void pair(int sv[2])
{
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
}

static void put(int fd, const char *s)
{
	CHECK_EQ(write(fd, s, strlen(s)), (ssize_t)strlen(s), "write");
}

static struct io_uring_sqe *recv_sqe(int fd, unsigned len, int bgid,
				     unsigned ioprio, __u64 ud)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_recv(sqe, fd, NULL, len, 0);
	sqe->ioprio |= ioprio;
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	sqe->user_data = ud;
	return sqe;
}

static void one_shot(void)
{
	static char lmem[2][BL];
	struct op_cqe c;
	int sv[2];

	pair(sv);
	io_uring_prep_provide_buffers(op_sqe(&ring), lmem, BL, 2, 1, 40);
	CHECK_EQ(op_run1(&ring), 0, "provide");
	put(sv[1], "hi");
	recv_sqe(sv[0], 0, 1, 0, 1);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, 2, "recv");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | 40 << IORING_CQE_BUFFER_SHIFT,
		 "legacy buffer 40");
	/* EOF gives the legacy buffer back: the next recv gets it */
	shutdown(sv[1], SHUT_WR);
	recv_sqe(sv[0], 0, 1, 0, 2);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, 0, "EOF");
	CHECK_EQ(c.flags, 0, "EOF names no buffer");
	io_uring_prep_remove_buffers(op_sqe(&ring), 8, 1);
	CHECK_EQ(op_run1(&ring), 1, "buffer 41 is back in the group");
	close(sv[0]);
	close(sv[1]);

	/* ring: a receive on a non-socket fails and consumes nothing */
	{
		struct io_uring_buf_ring *br = mkring(4, 2);
		int p[2];

		CHECK(pipe(p) == 0, "pipe");
		recv_sqe(p[0], 0, 2, 0, 3);
		c = op_wait((op_submit(&ring, 1), &ring));
		CHECK_EQ(c.res, -ENOTSOCK, "recv on a pipe");
		CHECK_EQ(c.flags, 0, "no buffer");
		OP_CHECK_HEAD(&ring, 2, 0, "ring untouched");
		CHECK_EQ(io_uring_free_buf_ring(&ring, br, 4, 2), 0, "free");
		close(p[0]);
		close(p[1]);
	}
}

static void multishot(void)
{
	struct io_uring_buf_ring *br = mkring(4, 3);
	struct op_cqe c;
	char rest[64];
	int sv[2];

	pair(sv);
	/* 40 bytes queued, each receive capped at 10: four CQEs, the first
	 * three saying more is queued; then the ring is dry */
	put(sv[1], "0123456789abcdefghijklmnopqrstuvwxyzABCD");
	put(sv[1], "tail");
	recv_sqe(sv[0], 10, 3, IORING_RECV_MULTISHOT, 5);
	op_submit(&ring, 1);
	for (int i = 0; i < 4; i++) {
		c = op_wait(&ring);
		if (i == 0 && c.res == -EINVAL &&
		    tu_lacks_before(6, 16, "multishot RECV caps (len, optlen)")) {
			CHECK_EQ(read(sv[0], rest, sizeof(rest)), 44, "drain");
			goto unregister;
		}
		CHECK_EQ(c.user_data, 5, "ud");
		CHECK_EQ(c.res, 10, "capped receive");
		CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | IORING_CQE_F_MORE |
			 IORING_CQE_F_SOCK_NONEMPTY |
			 (unsigned)i << IORING_CQE_BUFFER_SHIFT, "flags");
		CHECK(!memcmp(mem[i], "0123456789abcdefghijklmnopqrstuvwxyzABCD"
			      + 10 * i, 10), "data %d", i);
	}
	c = op_wait(&ring);
	CHECK_EQ(c.res, -ENOBUFS, "ring dry");
	CHECK_EQ(c.flags, 0, "ENOBUFS ends it");
	CHECK_EQ(read(sv[0], rest, sizeof(rest)), 4, "the rest stayed");
	OP_CHECK_HEAD(&ring, 3, 4, "four buffers used");

	/* optlen: at most 12 bytes in all (each receive may overshoot) */
	for (int i = 0; i < 4; i++)
		io_uring_buf_ring_add(br, mem[i], BL, i, 3, i);
	io_uring_buf_ring_advance(br, 4);
	put(sv[1], "abcdefghijklmnopqrst");
	{
		struct io_uring_sqe *sqe = recv_sqe(sv[0], 8, 3,
						    IORING_RECV_MULTISHOT, 6);

		sqe->file_index = 12;
	}
	op_submit(&ring, 1);
	c = op_wait(&ring);
	CHECK(c.res == 8 && (c.flags & IORING_CQE_F_MORE), "first 8");
	c = op_wait(&ring);
	CHECK_EQ(c.res, 8, "second 8");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | IORING_CQE_F_SOCK_NONEMPTY |
		 1 << IORING_CQE_BUFFER_SHIFT, "limit reached: no F_MORE");
	CHECK_EQ(read(sv[0], rest, sizeof(rest)), 4, "rest after the limit");

unregister:
	/* unregistered under an armed one: the next data ends it */
	recv_sqe(sv[0], 0, 3, IORING_RECV_MULTISHOT, 7);
	op_submit(&ring, 1);
	usleep(10000);
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 4, 3), 0, "free under use");
	put(sv[1], "kept");
	c = op_wait(&ring);
	CHECK_EQ(c.user_data, 7, "ud");
	CHECK_EQ(c.res, -ENOBUFS, "group gone");
	CHECK_EQ(c.flags, 0, "flags");
	CHECK_EQ(read(sv[0], rest, sizeof(rest)), 4, "data not lost");
	close(sv[0]);
	close(sv[1]);
}

static void bundles(void)
{
	struct io_uring_buf_ring *br;
	struct op_cqe c;
	char rest[128];
	int sv[2];

	if (!(ring.features & IORING_FEAT_RECVSEND_BUNDLE)) {
		tu_lacks("IORING_FEAT_RECVSEND_BUNDLE");
		return;
	}
	pair(sv);
	recv_sqe(sv[0], 0, 9, IORING_RECVSEND_BUNDLE, 1);
	CHECK_EQ(op_run1(&ring), -ENOENT, "bundle from a missing group");
	br = mkring(8, 4);
	/* 40 bytes asked for: two whole buffers in one CQE; the third would
	 * have to be cut to 8 bytes, so it is left for later */
	put(sv[1], "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH");
	recv_sqe(sv[0], 40, 4, IORING_RECVSEND_BUNDLE, 2);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, 32, "bundle");
	CHECK_EQ(c.flags & ~IORING_CQE_F_SOCK_NONEMPTY, IORING_CQE_F_BUFFER,
		 "first buffer named");
	OP_CHECK_HEAD(&ring, 4, 2, "two buffers consumed");
	CHECK(!memcmp(mem[0], "0123456789abcdef", 16) &&
	      !memcmp(mem[1], "ghijklmnopqrstuv", 16), "bundle data in order");
	CHECK_EQ(read(sv[0], rest, sizeof(rest)), 12, "rest");

	/* SEND with buffer select: one buffer; a bundle takes the rest */
	memcpy(mem[2], "send-one-buffer!", BL);
	{
		struct io_uring_sqe *sqe = op_sqe(&ring);

		io_uring_prep_send(sqe, sv[0], NULL, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = 4;
		c = op_wait((op_submit(&ring, 1), &ring));
		CHECK_EQ(c.res, BL, "send one buffer");
		CHECK_EQ(c.flags, IORING_CQE_F_BUFFER |
			 2 << IORING_CQE_BUFFER_SHIFT, "buffer 2 sent");
		CHECK_EQ(read(sv[1], rest, sizeof(rest)), BL, "peer got it");
		CHECK(!memcmp(rest, "send-one-buffer!", BL), "sent data");

		sqe = op_sqe(&ring);
		io_uring_prep_send_bundle(sqe, sv[0], 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = 4;
		c = op_wait((op_submit(&ring, 1), &ring));
		CHECK_EQ(c.res, 5 * BL, "send bundle of the 5 left");
		CHECK_EQ(c.flags, IORING_CQE_F_BUFFER |
			 3 << IORING_CQE_BUFFER_SHIFT, "from buffer 3");
		OP_CHECK_HEAD(&ring, 4, 8, "all consumed");
		CHECK_EQ(read(sv[1], rest, sizeof(rest)), 5 * BL, "peer");

		sqe = op_sqe(&ring);
		io_uring_prep_send(sqe, sv[0], NULL, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = 4;
		CHECK_EQ(op_run1(&ring), -ENOBUFS, "send from an empty ring");
		sqe = op_sqe(&ring);
		io_uring_prep_send(sqe, sv[0], NULL, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = 9;
		CHECK_EQ(op_run1(&ring), -ENOENT, "send from a missing group");
	}
	recv_sqe(sv[0], 0, 4, IORING_RECVSEND_BUNDLE, 3);
	CHECK_EQ(op_run1(&ring), -ENOBUFS, "bundle from an empty ring");
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 8, 4), 0, "free");

	/* a send waiting for room holds its buffer: cancelled, it names it */
	br = mkring(8, 5);
	{
		char junk[4096] = { 0 };
		struct io_uring_sqe *sqe;
		int fl = fcntl(sv[0], F_GETFL);

		fcntl(sv[0], F_SETFL, fl | O_NONBLOCK);
		while (write(sv[0], junk, sizeof(junk)) > 0)
			;
		fcntl(sv[0], F_SETFL, fl);
		sqe = op_sqe(&ring);
		io_uring_prep_send(sqe, sv[0], NULL, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = 5;
		sqe->user_data = 20;
		op_submit(&ring, 1);
		usleep(10000);
		io_uring_prep_cancel64(op_sqe(&ring), 20, 0);
		op_submit(&ring, 1);
		for (int i = 0; i < 2; i++) {
			c = op_wait(&ring);
			if (c.user_data != 20)
				continue;
			CHECK_EQ(c.res, -ECANCELED, "cancelled send");
			CHECK_EQ(c.flags, IORING_CQE_F_BUFFER,
				 "the cancelled send names buffer 0");
		}
		OP_CHECK_HEAD(&ring, 5, 1, "its buffer is consumed");
	}
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 8, 5), 0, "free");
	close(sv[0]);
	close(sv[1]);
}

/*
 * A bundle whose first buffer is longer than asked cuts that buffer in its
 * own mapping only: the ring entry keeps its length, whether the receive
 * fails (-EAGAIN) or waits and then takes just what was asked, with no
 * second helping (a cut buffer ends the bundle). Kernels without the fix
 * (6.18 and recent 6.12 have it) wrote the cut length into the entry.
 */
static void bundle_cut(void)
{
	struct io_uring_buf_ring *br;
	struct op_cqe c;
	char rest[16];
	int sv[2];

	if (!(ring.features & IORING_FEAT_RECVSEND_BUNDLE)) {
		tu_lacks("IORING_FEAT_RECVSEND_BUNDLE");
		return;
	}
	pair(sv);
	br = mkring(2, 6);
	recv_sqe(sv[0], 1, 6, IORING_RECVSEND_BUNDLE, 30)->msg_flags =
		MSG_DONTWAIT;
	CHECK_EQ(op_run1(&ring), -EAGAIN, "bundle on an empty socket");
	if (br->bufs[0].len != BL && !tu_on_engine() &&
	    tu_lacks_before(6, 18, "bundle buffers kept whole"))
		goto out;
	CHECK_EQ(br->bufs[0].len, BL, "the failed bundle left buffer 0 whole");
	OP_CHECK_HEAD(&ring, 6, 0, "nothing consumed");

	recv_sqe(sv[0], 1, 6, IORING_RECVSEND_BUNDLE, 31);
	op_submit(&ring, 1);
	usleep(10000);
	put(sv[1], "abcdef");
	c = op_wait(&ring);
	CHECK_EQ(c.res, 1, "the waiting bundle takes the one byte asked");
	CHECK_EQ(c.flags & ~IORING_CQE_F_SOCK_NONEMPTY, IORING_CQE_F_BUFFER,
		 "buffer 0");
	OP_CHECK_HEAD(&ring, 6, 1, "one buffer consumed");
	CHECK_EQ(br->bufs[0].len, BL, "buffer 0's entry still whole");
	CHECK(mem[0][0] == 'a', "received byte");
	CHECK_EQ(read(sv[0], rest, sizeof(rest)), 5, "the rest stays queued");
out:
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 2, 6), 0, "free");
	close(sv[0]);
	close(sv[1]);
}

static struct io_uring_sqe *send_sqe(int fd, unsigned len, int bgid,
				     unsigned ioprio)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_send(sqe, fd, NULL, len, 0);
	sqe->ioprio |= ioprio;
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	return sqe;
}

/*
 * SEND with buffer select and a length shorter than the buffers: a bundle
 * sends that much from the first buffer, then the whole of what the group
 * holds, ending with that part once the group is empty. From an
 * incremental ring a send takes its length off the buffer and says so
 * (IORING_CQE_F_BUF_MORE) while the buffer has room.
 */
static void send_parts(void)
{
	struct io_uring_buf_ring *br;
	struct op_cqe c;
	char got[4 * BL];
	int sv[2], err;

	if (!(ring.features & IORING_FEAT_RECVSEND_BUNDLE)) {
		tu_lacks("IORING_FEAT_RECVSEND_BUNDLE");
		return;
	}
	pair(sv);
	br = mkring(2, 7);
	memcpy(mem[0], "0123456789abcdef", BL);
	memcpy(mem[1], "ghijklmnopqrstuv", BL);
	send_sqe(sv[0], 4, 7, IORING_RECVSEND_BUNDLE);
	op_submit(&ring, 1);
	c = op_wait(&ring);
	CHECK_EQ(c.res, 4, "first part: the SQE's length");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | IORING_CQE_F_MORE,
		 "buffer 0, more to come");
	c = op_wait(&ring);
	if (c.res == 4 && !tu_on_engine() &&
	    tu_lacks_before(6, 18, "uncapped later bundle parts")) {
		while (c.flags & IORING_CQE_F_MORE)
			c = op_wait(&ring);
		goto inc;
	}
	CHECK_EQ(c.res, BL, "second part: all of buffer 1");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | 1 << IORING_CQE_BUFFER_SHIFT,
		 "buffer 1 ends the bundle");
	OP_CHECK_HEAD(&ring, 7, 2, "both consumed");
	CHECK_EQ(read(sv[1], got, sizeof(got)), 4 + BL, "peer got both parts");
	CHECK(!memcmp(got, "0123ghijklmnopqrstuv", 4 + BL), "parts in order");
inc:
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 2, 7), 0, "free");

	br = io_uring_setup_buf_ring(&ring, 1, 8, IOU_PBUF_RING_INC, &err);
	if (!br && err == -EINVAL &&
	    tu_lacks_before(6, 12, "IOU_PBUF_RING_INC")) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	CHECK(br, "inc ring: %d", err);
	io_uring_buf_ring_add(br, mem[2], BL, 0, io_uring_buf_ring_mask(1), 0);
	io_uring_buf_ring_advance(br, 1);
	memcpy(mem[2], "incremental-send", BL);
	send_sqe(sv[0], 5, 8, 0);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, 5, "inc send");
	if ((c.flags & IORING_CQE_F_BUF_MORE) || tu_on_engine() ||
	    !tu_lacks_before(6, 18, "IORING_CQE_F_BUF_MORE on sends")) {
		CHECK_EQ(c.flags, IORING_CQE_F_BUFFER | IORING_CQE_F_BUF_MORE,
			 "buffer 0 keeps room");
		CHECK_EQ(br->bufs[0].addr, (uintptr_t)(mem[2] + 5),
			 "the sent piece is taken off the buffer");
		CHECK_EQ(br->bufs[0].len, BL - 5, "what is left");
	}
	send_sqe(sv[0], 0, 8, 0);
	c = op_wait((op_submit(&ring, 1), &ring));
	CHECK_EQ(c.res, BL - 5, "the rest of the buffer");
	CHECK_EQ(c.flags, IORING_CQE_F_BUFFER, "buffer 0 used up");
	CHECK_EQ(read(sv[1], got, sizeof(got)), BL, "peer got the buffer");
	CHECK(!memcmp(got, "incremental-send", BL), "pieces in order");
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 1, 8), 0, "free");
	close(sv[0]);
	close(sv[1]);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 16, 0);
	op_need(&ring, IORING_OP_RECV, "IORING_OP_RECV");
	op_probe_buf_status(&ring);
	one_shot();
	multishot();
	bundles();
	bundle_cut();
	send_parts();
	io_uring_queue_exit(&ring);
	return tu_done();
}
