/* SPDX-License-Identifier: MIT */
/*
 * Multishot recv over loopback TCP, fed by a provided-buffer ring.
 *
 * A child sends 100,000 16-byte messages {seq, seq ^ MAGIC}. The parent
 * receives them with one multishot recv selecting from a 32-entry ring of
 * 128-byte buffers, holding up to HOLD buffers before giving them back, so
 * the ring runs dry now and then (-ENOBUFS ends the multishot; it is
 * re-armed). Checked:
 *  - the byte stream is exactly the messages in order;
 *  - the kernel only hands out buffers that are in the ring (never one we
 *    hold), and never writes into a held buffer (checksum on return);
 *  - the bytes after each completion still carry the buffer's own poison,
 *    so the bid in the CQE names the memory that was written;
 *  - at the end io_uring_buf_ring_head equals the number of buffers
 *    consumed (on kernels with IORING_REGISTER_PBUF_STATUS, 6.8), and
 *    every buffer is back in the ring.
 */
#include <liburing.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "test-util.h"

#define NMSG	100000u
#define MAGIC	0x5a17c0de12345678ULL
#define NBUFS	32
#define BUFSZ	128
#define HOLD	8
#define BGID	7

static unsigned char bufmem[NBUFS][BUFSZ];
static int in_ring[NBUFS];

static unsigned char poison(unsigned bid)
{
	return (unsigned char)(0x80 | bid);
}

static uint64_t sum(const unsigned char *p, unsigned n)
{
	uint64_t h = 1469598103934665603ULL;

	for (unsigned i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static void sender(int fd)
{
	uint64_t batch[2 * 64];
	uint32_t seq = 0;

	while (seq < NMSG) {
		unsigned n = 0;

		while (n < 64 && seq < NMSG) {
			batch[2 * n] = seq;
			batch[2 * n + 1] = seq ^ MAGIC;
			n++;
			seq++;
		}
		const char *p = (const char *)batch;
		size_t left = n * 16;

		while (left) {
			ssize_t w = write(fd, p, left);

			if (w < 0) {
				if (errno == EINTR)
					continue;
				_exit(2);
			}
			p += w;
			left -= (size_t)w;
		}
	}
	close(fd);
	_exit(0);
}

static void give_back(struct io_uring_buf_ring *br, unsigned bid)
{
	CHECK(!in_ring[bid], "buffer %u returned twice", bid);
	memset(bufmem[bid], poison(bid), BUFSZ);
	io_uring_buf_ring_add(br, bufmem[bid], BUFSZ, bid,
			      io_uring_buf_ring_mask(NBUFS), 0);
	io_uring_buf_ring_advance(br, 1);
	in_ring[bid] = 1;
}

static void arm(struct io_uring *ring, int fd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK(sqe, "no sqe");
	io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	sqe->user_data = 1;
	CHECK_EQ(io_uring_submit(ring), 1, "submit recv");
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	int lfd, cfd, sfd, err, st, ret, one = 1;
	pid_t pid;

	(void)argc;
	tu_set_name(argv[0]);
	signal(SIGPIPE, SIG_IGN);

	CHECK_EQ(io_uring_queue_init(64, &ring, 0), 0, "queue_init");
	br = io_uring_setup_buf_ring(&ring, NBUFS, BGID, 0, &err);
	if (!br && err == -EINVAL)
		SKIP("provided-buffer rings unsupported");
	CHECK(br, "setup_buf_ring: %d", err);
	for (unsigned i = 0; i < NBUFS; i++)
		give_back(br, i);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(lfd >= 0, "socket");
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 1))
		SKIP("no loopback TCP: %s", strerror(errno));
	CHECK(getsockname(lfd, (struct sockaddr *)&addr, &alen) == 0, "name");
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(connect(cfd, (struct sockaddr *)&addr, sizeof(addr)) == 0,
	      "connect: %s", strerror(errno));
	sfd = accept(lfd, NULL, NULL);
	CHECK(sfd >= 0, "accept");
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	close(lfd);

	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		close(sfd);
		sender(cfd);
	}
	close(cfd);

	/* Held buffers, oldest first, with their checksum at receipt. */
	unsigned held[HOLD], nheld = 0;
	uint64_t held_sum[HOLD];
	unsigned char msg[16];
	unsigned msg_fill = 0, expect = 0, rearms = 0, nobufs = 0;
	unsigned long consumed = 0;
	long long deadline = tu_now_ns() + 20000000000LL;
	int done = 0;

	arm(&ring, sfd);
	while (!done) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 2 };
		int res, more;

		CHECK(tu_now_ns() < deadline, "timed out at message %u", expect);
		CHECK_EQ(io_uring_wait_cqe_timeout(&ring, &cqe, &ts), 0,
			 "wait cqe");
		res = cqe->res;
		more = cqe->flags & IORING_CQE_F_MORE;
		if (res > 0) {
			unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;

			CHECK(cqe->flags & IORING_CQE_F_BUFFER, "no buffer");
			CHECK(bid < NBUFS, "bid %u", bid);
			CHECK(in_ring[bid], "kernel used buffer %u early", bid);
			CHECK(res <= BUFSZ, "res %d", res);
			in_ring[bid] = 0;
			consumed++;
			for (unsigned i = (unsigned)res; i < BUFSZ; i++)
				CHECK(bufmem[bid][i] == poison(bid),
				      "bid %u: byte %u is not its poison", bid, i);
			for (int i = 0; i < res; i++) {
				msg[msg_fill++] = bufmem[bid][i];
				if (msg_fill < 16)
					continue;
				uint64_t a, b;

				memcpy(&a, msg, 8);
				memcpy(&b, msg + 8, 8);
				CHECK(a == expect && b == (a ^ MAGIC),
				      "message %u: got %llu/%llx", expect,
				      (unsigned long long)a,
				      (unsigned long long)b);
				expect++;
				msg_fill = 0;
			}
			held[nheld] = bid;
			held_sum[nheld] = sum(bufmem[bid], BUFSZ);
			nheld++;
		}
		io_uring_cqe_seen(&ring, cqe);

		/* Return the oldest held buffer once HOLD are out, or all
		 * of them when the ring ran dry. */
		while (nheld == HOLD || (res == -ENOBUFS && nheld)) {
			unsigned bid = held[0];

			CHECK(sum(bufmem[bid], BUFSZ) == held_sum[0],
			      "held buffer %u changed under us", bid);
			give_back(br, bid);
			memmove(held, held + 1, (nheld - 1) * sizeof(held[0]));
			memmove(held_sum, held_sum + 1,
				(nheld - 1) * sizeof(held_sum[0]));
			nheld--;
		}
		if (res == 0) {
			done = 1;
		} else if (res < 0 && res != -ENOBUFS) {
			if (res == -EINVAL && expect == 0 && !rearms)
				SKIP("multishot recv unsupported");
			FAIL("recv error %d at message %u", res, expect);
		} else if (!more) {
			if (res == -ENOBUFS)
				nobufs++;
			rearms++;
			arm(&ring, sfd);
		}
	}
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sender failed");
	CHECK_EQ(expect, NMSG, "messages received");
	CHECK_EQ(msg_fill, 0, "partial message at EOF");

	while (nheld) {
		give_back(br, held[--nheld]);
	}
	for (unsigned i = 0; i < NBUFS; i++)
		CHECK(in_ring[i], "buffer %u lost", i);

	uint16_t head;

	ret = io_uring_buf_ring_head(&ring, BGID, &head);
	if (ret != -EINVAL ||
	    !tu_lacks_before(6, 8, "IORING_REGISTER_PBUF_STATUS")) {
		CHECK_EQ(ret, 0, "head");
		CHECK_EQ(head, (uint16_t)consumed,
			 "kernel head vs consumed buffers");
		CHECK_EQ(io_uring_buf_ring_available(&ring, br, BGID), NBUFS,
			 "all buffers available");
	}
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, NBUFS, BGID), 0, "free");
	close(sfd);
	io_uring_queue_exit(&ring);
	fprintf(stderr, "%u messages, %lu buffers, %u re-arms (%u ENOBUFS)\n",
		expect, consumed, rearms, nobufs);
	return tu_done();
}
