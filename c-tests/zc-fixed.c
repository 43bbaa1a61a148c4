/* SPDX-License-Identifier: MIT */
/*
 * Zero-copy sends from registered buffers over loopback TCP, with the
 * result, CQE flags and bytes of Linux 6.18:
 *  - SEND_ZC with IORING_RECVSEND_FIXED_BUF from inside a buffer, at an
 *    offset from its start; a range running past the buffer is -EFAULT;
 *  - SENDMSG_ZC with IORING_RECVSEND_FIXED_BUF (Linux 6.15): several
 *    iovecs, each inside the registered buffer, go out in order; an iovec
 *    outside it, an empty one or a bad buffer index is -EFAULT;
 *  - every request posts its result with IORING_CQE_F_MORE, then the
 *    IORING_CQE_F_NOTIF notification.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include "op-util.h"

#define BUF_LEN (64 * 1024)

static struct io_uring ring;
static unsigned char *rbuf;
static int tx, rx;

/* A connected loopback TCP pair: tx (sender) and rx (receiver). */
static void tcp_pair(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t l = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	      listen(lfd, 1) == 0 &&
	      getsockname(lfd, (struct sockaddr *)&sa, &l) == 0, "listener");
	tx = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(tx >= 0 && connect(tx, (struct sockaddr *)&sa, sizeof(sa)) == 0,
	      "connect: %s", strerror(errno));
	rx = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	CHECK(rx >= 0, "accept");
	close(lfd);
}

/* Reads exactly `len` bytes from rx and compares them with `want`. */
static void expect_bytes(const void *want, size_t len, const char *what)
{
	unsigned char got[BUF_LEN];
	size_t n = 0;

	while (n < len) {
		struct pollfd p = { rx, POLLIN, 0 };
		ssize_t r;

		CHECK(poll(&p, 1, 5000) == 1, "%s: data never arrived", what);
		r = read(rx, got + n, len - n);
		CHECK(r > 0, "%s: read %zd", what, r);
		n += r;
	}
	CHECK(!memcmp(got, want, len), "%s: bytes differ", what);
}

/* The result of the queued zero-copy send, after checking both CQEs. */
static int zc_result(const char *what)
{
	struct op_cqe c, n;

	op_submit(&ring, 1);
	c = op_wait(&ring);
	CHECK(c.flags & IORING_CQE_F_MORE, "%s: no F_MORE (%d %#x)", what,
	      c.res, c.flags);
	n = op_wait(&ring);
	CHECK(n.res == 0 && n.flags == IORING_CQE_F_NOTIF &&
	      n.user_data == c.user_data, "%s: notification %d %#x", what,
	      n.res, n.flags);
	return c.res;
}

static void send_fixed(void)
{
	io_uring_prep_send_zc_fixed(op_sqe(&ring), tx, rbuf + 100, 20000,
				    MSG_WAITALL, 0, 0);
	CHECK_EQ(zc_result("send_zc at offset 100"), 20000, "send_zc count");
	expect_bytes(rbuf + 100, 20000, "send_zc at offset 100");

	/* The last byte of the buffer alone, then one byte past its end. */
	io_uring_prep_send_zc_fixed(op_sqe(&ring), tx, rbuf + BUF_LEN - 1, 1,
				    0, 0, 0);
	CHECK_EQ(zc_result("send_zc of the last byte"), 1, "last byte");
	expect_bytes(rbuf + BUF_LEN - 1, 1, "last byte");
	io_uring_prep_send_zc_fixed(op_sqe(&ring), tx, rbuf + BUF_LEN - 1, 2,
				    0, 0, 0);
	CHECK_EQ(zc_result("send_zc past the end"), -EFAULT, "past the end");
}

/* A SENDMSG_ZC of `iov` from registered buffer `idx`; its result. */
static int sendmsg_fixed(struct iovec *iov, int n, int idx, const char *what)
{
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = n };

	io_uring_prep_sendmsg_zc_fixed(op_sqe(&ring), tx, &m, MSG_WAITALL, idx);
	return zc_result(what);
}

static void sendmsg_fixed_cases(void)
{
	struct iovec v[3] = {
		{ rbuf + 7, 5000 }, { rbuf + 30000, 3 }, { rbuf, 9000 },
	};
	unsigned char want[14003];
	int res;

	res = sendmsg_fixed(v, 3, 0, "sendmsg_zc fixed");
	/* The engine has it whatever the kernel's release. */
	if (res == -EINVAL && !tu_on_engine() &&
	    tu_lacks_before(6, 15, "fixed-buffer SENDMSG_ZC"))
		return;
	CHECK_EQ(res, 14003, "sendmsg_zc fixed count");
	memcpy(want, rbuf + 7, 5000);
	memcpy(want + 5000, rbuf + 30000, 3);
	memcpy(want + 5003, rbuf, 9000);
	expect_bytes(want, sizeof(want), "sendmsg_zc fixed");

	{
		struct iovec out[2] = { { rbuf, 10 }, { rbuf + BUF_LEN - 5, 6 } };
		struct iovec under = { rbuf - 1, 2 };
		struct iovec empty[2] = { { rbuf, 10 }, { rbuf + 10, 0 } };

		CHECK_EQ(sendmsg_fixed(out, 2, 0, "iovec past the end"), -EFAULT,
			 "iovec past the end");
		CHECK_EQ(sendmsg_fixed(&under, 1, 0, "iovec before the start"),
			 -EFAULT, "iovec before the start");
		CHECK_EQ(sendmsg_fixed(empty, 2, 0, "empty iovec"), -EFAULT,
			 "empty iovec");
		CHECK_EQ(sendmsg_fixed(v, 1, 1, "bad buffer index"), -EFAULT,
			 "bad buffer index");
	}
	/* Nothing of the refused sends reached the peer. */
	{
		struct pollfd p = { rx, POLLIN, 0 };

		CHECK_EQ(poll(&p, 1, 50), 0, "stray bytes after refused sends");
	}
}

int main(int argc, char **argv)
{
	struct iovec reg;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	op_need(&ring, IORING_OP_SEND_ZC, "IORING_OP_SEND_ZC");
	op_need(&ring, IORING_OP_SENDMSG_ZC, "IORING_OP_SENDMSG_ZC");
	rbuf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(rbuf != MAP_FAILED, "mmap");
	tu_pattern_fill(rbuf, BUF_LEN, 11, 0);
	reg.iov_base = rbuf;
	reg.iov_len = BUF_LEN;
	CHECK_EQ(io_uring_register_buffers(&ring, &reg, 1), 0, "register");
	tcp_pair();
	send_fixed();
	sendmsg_fixed_cases();
	close(tx);
	close(rx);
	io_uring_queue_exit(&ring);
	munmap(rbuf, BUF_LEN);
	return tu_done();
}
