/* SPDX-License-Identifier: MIT */
/*
 * SEND with IOSQE_BUFFER_SELECT from a buffer ring takes the ring's head
 * buffer when it is issued, and keeps it while it waits for room: a send
 * that would block holds buffer 0, so the next send (on another socket)
 * goes with buffer 1, and the blocked one sends buffer 0 once it can.
 * That is the kernel's order, which the engine must keep.
 */
#include <sys/socket.h>
#include "liburing.h"
#include "test-util.h"

#define BGID 7
#define NBUF 4
#define BLEN 64

static int send_sel(struct io_uring *ring, int fd, __u64 ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_send(sqe, fd, NULL, 0, MSG_NOSIGNAL);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	io_uring_sqe_set_data64(sqe, ud);
	return io_uring_submit(ring);
}

/* Fills the socket's send path until a send would block; returns bytes. */
static long fill(int fd)
{
	static char junk[4096];
	long total = 0;
	ssize_t n;

	while ((n = send(fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0)
		total += n;
	CHECK(errno == EAGAIN || errno == EWOULDBLOCK, "fill: %s", strerror(errno));
	return total;
}

int main(int argc, char **argv)
{
	static char data[NBUF][BLEN];
	struct __kernel_timespec ts = { 5, 0 };
	struct io_uring_buf_ring *br;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int full[2], open_[2], ret, bid;
	long filled;
	char got[BLEN];

	(void)argc;
	tu_set_name(argv[0]);
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "ring");
	br = io_uring_setup_buf_ring(&ring, NBUF, BGID, 0, &ret);
	if (!br && (ret == -EINVAL || ret == -ENOENT))
		SKIP("buffer rings unsupported (%d)", ret);
	CHECK(br, "setup_buf_ring: %d", ret);
	for (int i = 0; i < NBUF; i++) {
		memset(data[i], 'a' + i, BLEN);
		io_uring_buf_ring_add(br, data[i], BLEN, i, io_uring_buf_ring_mask(NBUF), i);
	}
	io_uring_buf_ring_advance(br, NBUF);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, full) == 0, "socketpair");
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, open_) == 0, "socketpair");
	filled = fill(full[0]);

	/* This one would block: it must not keep buffer 0. */
	CHECK_EQ(send_sel(&ring, full[0], 1), 1, "submit blocked send");
	/* Before 6.10 a SEND ignores the flag and completes at once. */
	if (io_uring_peek_cqe(&ring, &cqe) == 0 && tu_lacks_before(6, 10, "SEND with a selected buffer"))
		return tu_done();
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), -EAGAIN, "blocked send completed");
	CHECK_EQ(send_sel(&ring, open_[0], 2), 1, "submit open send");
	CHECK_EQ(io_uring_wait_cqe_timeout(&ring, &cqe, &ts), 0, "open send");
	CHECK(cqe->user_data == 2 && cqe->res == BLEN && (cqe->flags & IORING_CQE_F_BUFFER),
	      "open send: ud %llu res %d flags %#x", (unsigned long long)cqe->user_data,
	      cqe->res, cqe->flags);
	bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
	CHECK_EQ(bid, 1, "buffer of the send that went first");
	io_uring_cqe_seen(&ring, cqe);
	CHECK_EQ(recv(open_[1], got, BLEN, 0), BLEN, "read the open socket");
	CHECK(got[0] == 'b' && got[BLEN - 1] == 'b', "open socket got buffer %c", got[0]);

	/* Drain what filled the socket: the blocked send goes, with buffer 0. */
	while (filled > 0) {
		static char sink[4096];
		ssize_t n = recv(full[1], sink, filled < (long)sizeof(sink) ? filled : (long)sizeof(sink), 0);

		CHECK(n > 0, "drain: %s", n < 0 ? strerror(errno) : "EOF");
		filled -= n;
	}
	CHECK_EQ(io_uring_wait_cqe_timeout(&ring, &cqe, &ts), 0, "blocked send");
	CHECK(cqe->user_data == 1 && cqe->res == BLEN && (cqe->flags & IORING_CQE_F_BUFFER),
	      "blocked send: ud %llu res %d flags %#x", (unsigned long long)cqe->user_data,
	      cqe->res, cqe->flags);
	CHECK_EQ(cqe->flags >> IORING_CQE_BUFFER_SHIFT, 0, "buffer of the send that went second");
	io_uring_cqe_seen(&ring, cqe);
	CHECK_EQ(recv(full[1], got, BLEN, 0), BLEN, "read the drained socket");
	CHECK(got[0] == 'a' && got[BLEN - 1] == 'a', "drained socket got buffer %c", got[0]);

	io_uring_free_buf_ring(&ring, br, NBUF, BGID);
	io_uring_queue_exit(&ring);
	tu_pass();
	return T_EXIT_PASS;
}
