/* SPDX-License-Identifier: MIT */
/*
 * Socket opcodes off the happy path, each with the result, CQE flags and
 * errno of Linux 6.18: non-socket files, connect to a closed port,
 * MSG_WAITALL over several writes, MSG_DONTWAIT and IORING_ACCEPT_DONTWAIT,
 * POLL_FIRST, IORING_CQE_F_SOCK_NONEMPTY on receives and accepts, shutdown,
 * multishot accept into allocated direct descriptors, send_zc's
 * notification (usage report, fixed buffer, refusal on unix sockets), the
 * URING_CMD socket commands and their refusals, and a blocking socket's
 * O_NONBLOCK flag left as the program set it.
 */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <poll.h>
#include "op-util.h"

static struct io_uring ring;

/*
 * Whether to hold the kernel to an answer that Linux major.minor and later
 * give: an older kernel's other answer notes `feat` as missing instead.
 */
static int since(int ok, int major, int minor, const char *feat)
{
	return ok || !tu_lacks_before(major, minor, feat);
}

/* IORING_SEND_ZC_REPORT_USAGE came with Linux 6.2. */
static unsigned report_usage(void)
{
	if (tu_on_engine() || tu_kernel_at_least(6, 2))
		return IORING_SEND_ZC_REPORT_USAGE;
	tu_lacks("IORING_SEND_ZC_REPORT_USAGE");
	return 0;
}

static struct op_cqe run(void)
{
	op_submit(&ring, 1);
	return op_wait(&ring);
}

/* A loopback TCP listener on an ephemeral port. */
static int listener(struct sockaddr_in *sa)
{
	socklen_t l = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0, "socket");
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(fd, (struct sockaddr *)sa, sizeof(*sa)) == 0, "bind");
	CHECK(listen(fd, 16) == 0, "listen");
	CHECK(getsockname(fd, (struct sockaddr *)sa, &l) == 0, "getsockname");
	return fd;
}

static int tcp_client(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0,
	      "connect: %s", strerror(errno));
	return fd;
}

/* Whether accepted socket `a` is the other end of client `c`. */
static int same_conn(int c, int a)
{
	struct sockaddr_in x, y;
	socklen_t lx = sizeof(x), ly = sizeof(y);

	return !getsockname(c, (struct sockaddr *)&x, &lx) &&
	       !getpeername(a, (struct sockaddr *)&y, &ly) &&
	       x.sin_port == y.sin_port;
}

/* Waits until `fd` is readable (the data has crossed loopback). */
static void wait_readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	CHECK(poll(&p, 1, 5000) == 1, "poll");
}

static void non_socket(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct op_cqe c;
	char b[4];
	int p[2], v = 0;

	CHECK(pipe(p) == 0, "pipe");
	io_uring_prep_send(op_sqe(&ring), p[1], "x", 1, 0);
	CHECK_EQ(run().res, -ENOTSOCK, "send on a pipe");
	io_uring_prep_recv(op_sqe(&ring), p[0], b, 1, 0);
	CHECK_EQ(run().res, -ENOTSOCK, "recv on a pipe");
	io_uring_prep_shutdown(op_sqe(&ring), p[0], SHUT_RD);
	CHECK_EQ(run().res, -ENOTSOCK, "shutdown on a pipe");
	if (op_has(&ring, IORING_OP_LISTEN)) {
		io_uring_prep_listen(op_sqe(&ring), p[0], 1);
		CHECK_EQ(run().res, -ENOTSOCK, "listen on a pipe");
	}
	if (op_has(&ring, IORING_OP_BIND)) {
		io_uring_prep_bind(op_sqe(&ring), p[0], (struct sockaddr *)&sa, sizeof(sa));
		CHECK_EQ(run().res, -ENOTSOCK, "bind on a pipe");
		/* a bad address length is refused before the file is looked at */
		io_uring_prep_bind(op_sqe(&ring), p[0], (struct sockaddr *)&sa, 200);
		CHECK_EQ(run().res, -EINVAL, "bind with a 200-byte address");
	}
	io_uring_prep_connect(op_sqe(&ring), p[0], (struct sockaddr *)&sa, sizeof(sa));
	CHECK_EQ(run().res, -ENOTSOCK, "connect on a pipe");
	io_uring_prep_accept(op_sqe(&ring), p[0], NULL, NULL, 0);
	CHECK_EQ(run().res, -ENOTSOCK, "accept on a pipe");
	io_uring_prep_cmd_sock(op_sqe(&ring), SOCKET_URING_OP_SIOCINQ, p[0], 0, 0,
			       NULL, 0);
	CHECK_EQ(run().res, -EOPNOTSUPP, "uring_cmd SIOCINQ on a pipe");
	io_uring_prep_cmd_sock(op_sqe(&ring), SOCKET_URING_OP_GETSOCKOPT, p[0],
			       SOL_SOCKET, SO_TYPE, &v, sizeof(v));
	CHECK_EQ(run().res, -EOPNOTSUPP, "uring_cmd GETSOCKOPT on a pipe");
	/* send_zc on a pipe: the error with F_MORE, then the notification */
	io_uring_prep_send_zc(op_sqe(&ring), p[1], "x", 1, 0, 0);
	c = run();
	CHECK(c.res == -ENOTSOCK && c.flags == IORING_CQE_F_MORE,
	      "send_zc on a pipe: %d %#x", c.res, c.flags);
	c = op_wait(&ring);
	CHECK(c.res == 0 && c.flags == IORING_CQE_F_NOTIF, "notif: %d %#x", c.res,
	      c.flags);
	close(p[0]);
	close(p[1]);
}

static void connect_refused(void)
{
	struct sockaddr_in sa;
	int l = listener(&sa), fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	/* the port is free again once its listener is gone */
	close(l);
	io_uring_prep_connect(op_sqe(&ring), fd, (struct sockaddr *)&sa, sizeof(sa));
	CHECK_EQ(run().res, -ECONNREFUSED, "connect to a closed port");
	io_uring_prep_connect(op_sqe(&ring), fd, (struct sockaddr *)&sa, sizeof(sa));
	CHECK_EQ(run().res, -ECONNREFUSED, "connect again");
	/* a blocking socket stays blocking */
	CHECK(!(fcntl(fd, F_GETFL) & O_NONBLOCK), "O_NONBLOCK left set");
	close(fd);
}

static void stream_cases(void)
{
	struct io_uring_sqe *sqe;
	struct sockaddr_in sa;
	struct op_cqe c;
	char b[16];
	int l = listener(&sa), cl, sv;

	/* accept: SOCK_NONEMPTY while more connections wait */
	cl = tcp_client(&sa);
	{
		int c2 = tcp_client(&sa), a1, a2;

		io_uring_prep_accept(op_sqe(&ring), l, NULL, NULL, SOCK_CLOEXEC);
		c = run();
		a1 = c.res;
		CHECK(a1 >= 0, "accept with two queued: %d", c.res);
		if (since(c.flags == IORING_CQE_F_SOCK_NONEMPTY, 6, 10,
			  "IORING_CQE_F_SOCK_NONEMPTY on accept"))
			CHECK_EQ(c.flags, IORING_CQE_F_SOCK_NONEMPTY,
				 "accept with two queued: flags");
		io_uring_prep_accept(op_sqe(&ring), l, NULL, NULL, SOCK_CLOEXEC);
		c = run();
		a2 = c.res;
		CHECK(a2 >= 0 && c.flags == 0, "accept of the last: %d %#x", c.res,
		      c.flags);
		sqe = op_sqe(&ring);
		io_uring_prep_accept(sqe, l, NULL, NULL, 0);
		sqe->ioprio = IORING_ACCEPT_DONTWAIT;
		c = run();
		if (since(c.res == -EAGAIN, 6, 10, "IORING_ACCEPT_DONTWAIT"))
			CHECK_EQ(c.res, -EAGAIN, "accept DONTWAIT on an empty queue");
		/* keep the accepted end of `cl`, whichever came first */
		if (!same_conn(cl, a1)) {
			int t = a1;

			a1 = a2;
			a2 = t;
		}
		CHECK(same_conn(cl, a1), "neither accepted socket is cl's peer");
		close(c2);
		close(a2);
		sv = a1;
	}
	CHECK(!(fcntl(l, F_GETFL) & O_NONBLOCK), "listener O_NONBLOCK changed");

	/* recv: SOCK_NONEMPTY while bytes remain */
	CHECK(write(cl, "abcdef", 6) == 6, "write");
	wait_readable(sv);
	io_uring_prep_recv(op_sqe(&ring), sv, b, 2, 0);
	c = run();
	CHECK(c.res == 2 && c.flags == IORING_CQE_F_SOCK_NONEMPTY,
	      "recv 2 of 6: %d %#x", c.res, c.flags);
	io_uring_prep_recv(op_sqe(&ring), sv, b, sizeof(b), 0);
	c = run();
	CHECK(c.res == 4 && c.flags == 0 && !memcmp(b, "cdef", 4),
	      "recv the rest: %d %#x", c.res, c.flags);

	/* MSG_DONTWAIT on an empty socket */
	io_uring_prep_recv(op_sqe(&ring), sv, b, sizeof(b), MSG_DONTWAIT);
	CHECK_EQ(run().res, -EAGAIN, "recv MSG_DONTWAIT");

	/* MSG_WAITALL collects three writes; POLL_FIRST waits first */
	sqe = op_sqe(&ring);
	io_uring_prep_recv(sqe, sv, b, 9, MSG_WAITALL);
	io_uring_sqe_set_data64(sqe, 9);
	op_submit(&ring, 1);
	for (int i = 0; i < 3; i++) {
		struct io_uring_cqe *cq;

		CHECK_EQ(io_uring_peek_cqe(&ring, &cq), -EAGAIN, "WAITALL done early");
		CHECK(write(cl, "123", 3) == 3, "write part");
		usleep(20000);
	}
	c = op_wait(&ring);
	CHECK(c.user_data == 9 && c.res == 9 && !memcmp(b, "123123123", 9),
	      "recv WAITALL: %d", c.res);

	/* IORING_SEND_VECTORIZED: SEND of an iovec array (Linux 6.17) */
	{
		struct iovec v[2] = { { "vec", 3 }, { "tor", 3 } };

		sqe = op_sqe(&ring);
		io_uring_prep_send(sqe, cl, v, 2, 0);
		sqe->ioprio = IORING_SEND_VECTORIZED;
		c = run();
		if (since(c.res == 6, 6, 17, "IORING_SEND_VECTORIZED")) {
			CHECK_EQ(c.res, 6, "vectorized send");
			io_uring_prep_recv(op_sqe(&ring), sv, b, 6, MSG_WAITALL);
			CHECK(run().res == 6 && !memcmp(b, "vector", 6), "vectorized data");
			sqe = op_sqe(&ring);
			io_uring_prep_send(sqe, cl, v, 2000, 0);
			sqe->ioprio = IORING_SEND_VECTORIZED;
			CHECK_EQ(run().res, -EINVAL, "vectorized send of 2000 iovecs");
			sqe = op_sqe(&ring);
			io_uring_prep_recv(sqe, sv, b, 6, 0);
			sqe->ioprio = IORING_SEND_VECTORIZED;
			CHECK_EQ(run().res, -EINVAL, "recv with IORING_SEND_VECTORIZED");
		}
	}

	/* send with POLL_FIRST still sends */
	sqe = op_sqe(&ring);
	io_uring_prep_send(sqe, cl, "pf", 2, 0);
	sqe->ioprio = IORING_RECVSEND_POLL_FIRST;
	CHECK_EQ(run().res, 2, "send POLL_FIRST");
	io_uring_prep_recv(op_sqe(&ring), sv, b, 2, MSG_WAITALL);
	CHECK_EQ(run().res, 2, "recv after POLL_FIRST send");

	/* shutdown(SHUT_WR): a pending recv on the peer sees EOF */
	sqe = op_sqe(&ring);
	io_uring_prep_recv(sqe, sv, b, sizeof(b), 0);
	io_uring_sqe_set_data64(sqe, 77);
	op_submit(&ring, 1);
	usleep(10000);
	sqe = op_sqe(&ring);
	io_uring_prep_shutdown(sqe, cl, SHUT_WR);
	io_uring_sqe_set_data64(sqe, 78);
	op_submit(&ring, 1);
	for (int i = 0; i < 2; i++) {
		c = op_wait(&ring);
		if (c.user_data == 78)
			CHECK_EQ(c.res, 0, "shutdown");
		else
			/* TCP counts a received FIN as something to read */
			CHECK(c.user_data == 77 && c.res == 0 &&
			      c.flags == IORING_CQE_F_SOCK_NONEMPTY,
			      "recv at EOF: %d %#x", c.res, c.flags);
	}
	io_uring_prep_shutdown(op_sqe(&ring), cl, 7);
	CHECK_EQ(run().res, -EINVAL, "shutdown with a bad how");

	/* send_zc with a usage report and from a registered buffer */
	{
		static char zb[64];
		struct iovec iov = { zb, sizeof(zb) };

		CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0, "register");
		memcpy(zb, "fixed-zc", 8);
		unsigned rep = report_usage();

		io_uring_prep_send_zc_fixed(op_sqe(&ring), sv, zb, 8, 0, rep, 0);
		c = run();
		CHECK(c.res == 8 && c.flags == IORING_CQE_F_MORE, "send_zc fixed: %d %#x",
		      c.res, c.flags);
		c = op_wait(&ring);
		CHECK(c.flags == IORING_CQE_F_NOTIF &&
		      (unsigned)c.res == (rep ? IORING_NOTIF_USAGE_ZC_COPIED : 0),
		      "send_zc notif: %#x %#x", c.res, c.flags);
		io_uring_prep_send_zc_fixed(op_sqe(&ring), sv, zb, 8, 0, 0, 3);
		c = run();
		CHECK(c.res == -EFAULT && c.flags == IORING_CQE_F_MORE,
		      "send_zc with a bad buffer index: %d %#x", c.res, c.flags);
		c = op_wait(&ring);
		CHECK(c.res == 0 && c.flags == IORING_CQE_F_NOTIF, "its notif");
		io_uring_unregister_buffers(&ring);
		wait_readable(cl);
		CHECK(read(cl, b, 8) == 8 && !memcmp(b, "fixed-zc", 8), "zc data");
	}

	/* uring_cmd: queue sizes, SOL_SOCKET only for getsockopt */
	{
		int v = 0;

		CHECK(send(sv, "xyz", 3, 0) == 3, "send");
		wait_readable(cl);
		io_uring_prep_cmd_sock(op_sqe(&ring), SOCKET_URING_OP_SIOCINQ, cl, 0, 0,
				       NULL, 0);
		if (!since(run().res == 3, 6, 7, "socket URING_CMDs"))
			goto no_cmd;
		io_uring_prep_cmd_sock(op_sqe(&ring), SOCKET_URING_OP_SIOCOUTQ, cl, 0, 0,
				       NULL, 0);
		CHECK_EQ(run().res, 0, "SIOCOUTQ");
		io_uring_prep_cmd_sock(op_sqe(&ring), SOCKET_URING_OP_GETSOCKOPT, cl,
				       IPPROTO_TCP, 1, &v, sizeof(v));
		CHECK_EQ(run().res, -EOPNOTSUPP, "GETSOCKOPT at IPPROTO_TCP");
		io_uring_prep_cmd_sock(op_sqe(&ring), SOCKET_URING_OP_GETSOCKOPT, cl,
				       SOL_SOCKET, SO_TYPE, &v, sizeof(v));
		CHECK(run().res == 4 && v == SOCK_STREAM, "GETSOCKOPT SO_TYPE");
		io_uring_prep_cmd_sock(op_sqe(&ring), 99, cl, 0, 0, NULL, 0);
		CHECK_EQ(run().res, -EOPNOTSUPP, "unknown socket command");
		io_uring_prep_cmd_sock(op_sqe(&ring), SOCKET_URING_OP_SIOCINQ, l, 0, 0,
				       NULL, 0);
		CHECK_EQ(run().res, -EINVAL, "SIOCINQ on a listener");
	}
no_cmd:
	close(cl);
	close(sv);
	close(l);
}

/*
 * Requests ended from outside: a cancelled send_zc still posts its result
 * (with F_MORE) and its notification; a cancelled MSG_WAITALL receive
 * reports the bytes it already took.
 */
static void cancelled(void)
{
	static char big[65536];
	struct io_uring_sqe *sqe;
	struct sockaddr_in sa;
	int l = listener(&sa), cl = tcp_client(&sa), sv = accept(l, NULL, NULL);
	int zc = 0, notif = 0, cancels = 0, zc_res = 0, cancel_res = 0;
	char b[16];

	CHECK(sv >= 0, "accept");
	/* fill the connection so that a send has to wait */
	while (send(cl, big, sizeof(big), MSG_DONTWAIT) > 0)
		;
	sqe = op_sqe(&ring);
	io_uring_prep_send_zc(sqe, cl, "zc", 2, 0, 0);
	io_uring_sqe_set_data64(sqe, 30);
	op_submit(&ring, 1);
	usleep(10000);
	sqe = op_sqe(&ring);
	io_uring_prep_cancel64(sqe, 30, 0);
	io_uring_sqe_set_data64(sqe, 31);
	op_submit(&ring, 1);
	/* Under emulation an old kernel's TCP may grow the send buffer after
	 * the fill, and the send then goes out before the cancel comes: the
	 * cancel finds nothing (-ENOENT) and the send reports its 2 bytes. */
	for (int i = 0; i < 3; i++) {
		struct op_cqe c = op_wait(&ring);

		if (c.user_data == 31) {
			cancel_res = c.res;
			cancels++;
		} else if (c.flags & IORING_CQE_F_NOTIF) {
			CHECK(c.user_data == 30 && c.res == 0 && zc == 1,
			      "notif after the result: %d %#x", c.res, c.flags);
			notif++;
		} else {
			CHECK(c.user_data == 30 && c.flags == IORING_CQE_F_MORE &&
			      (c.res == -ECANCELED || c.res == 2),
			      "cancelled send_zc: %d %#x", c.res, c.flags);
			zc_res = c.res;
			zc++;
		}
	}
	CHECK(zc == 1 && notif == 1 && cancels == 1, "send_zc cancel CQEs");
	if (zc_res == 2)
		CHECK(cancel_res == -ENOENT || cancel_res == -EALREADY,
		      "cancel of a send_zc that went out: %d", cancel_res);
	else
		CHECK_EQ(cancel_res, 0, "cancel of a waiting send_zc");
	close(cl);
	close(sv);

	/* a WAITALL receive that got 4 of 10 bytes, then cancelled */
	cl = tcp_client(&sa);
	sv = accept(l, NULL, NULL);
	CHECK(sv >= 0, "accept");
	sqe = op_sqe(&ring);
	io_uring_prep_recv(sqe, sv, b, 10, MSG_WAITALL);
	io_uring_sqe_set_data64(sqe, 32);
	op_submit(&ring, 1);
	CHECK(write(cl, "abcd", 4) == 4, "write");
	usleep(20000);
	sqe = op_sqe(&ring);
	io_uring_prep_cancel64(sqe, 32, 0);
	io_uring_sqe_set_data64(sqe, 33);
	op_submit(&ring, 1);
	for (int i = 0; i < 2; i++) {
		struct op_cqe c = op_wait(&ring);

		if (c.user_data == 33)
			CHECK_EQ(c.res, 0, "cancel of a partial WAITALL recv");
		else
			CHECK(c.user_data == 32 && c.res == 4 && !memcmp(b, "abcd", 4),
			      "cancelled WAITALL recv: %d", c.res);
	}
	close(cl);
	close(sv);
	close(l);
}

static void unix_cases(void)
{
	unsigned rep;
	struct op_cqe c;
	char b[8];
	int sv[2], v = 0;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "pair");
	io_uring_prep_cmd_sock(op_sqe(&ring), SOCKET_URING_OP_SIOCINQ, sv[0], 0, 0,
			       NULL, 0);
	CHECK_EQ(run().res, -EOPNOTSUPP, "SIOCINQ on a unix socket");
	io_uring_prep_cmd_sock(op_sqe(&ring), SOCKET_URING_OP_GETSOCKOPT, sv[0],
			       SOL_SOCKET, SO_TYPE, &v, sizeof(v));
	c = run();
	if (since(c.res == 4, 6, 7, "socket URING_CMDs"))
		CHECK(c.res == 4 && v == SOCK_STREAM, "GETSOCKOPT on a unix socket");
	/* no zero-copy on unix sockets */
	rep = report_usage();
	io_uring_prep_send_zc(op_sqe(&ring), sv[0], "x", 1, 0, rep);
	c = run();
	CHECK(c.res == -EOPNOTSUPP && c.flags == IORING_CQE_F_MORE,
	      "send_zc on unix: %d %#x", c.res, c.flags);
	c = op_wait(&ring);
	CHECK(c.flags == IORING_CQE_F_NOTIF &&
	      (unsigned)c.res == (rep ? IORING_NOTIF_USAGE_ZC_COPIED : 0),
	      "unix send_zc notif: %#x %#x", c.res, c.flags);
	/* datagram-like unix sockets never say SOCK_NONEMPTY */
	close(sv[0]);
	close(sv[1]);
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "pair");
	CHECK(write(sv[1], "abc", 3) == 3 && write(sv[1], "def", 3) == 3, "write");
	io_uring_prep_recv(op_sqe(&ring), sv[0], b, 2, 0);
	c = run();
	CHECK(c.res == 2 && c.flags == 0, "seqpacket recv: %d %#x", c.res, c.flags);
	close(sv[0]);
	close(sv[1]);
}

static void direct_accept(void)
{
	struct io_uring_sqe *sqe;
	struct sockaddr_in sa;
	int l = listener(&sa), cl[3], slots[3] = { -1, -1, -1 };

	CHECK_EQ(io_uring_register_files_sparse(&ring, 4), 0, "sparse table");
	sqe = op_sqe(&ring);
	io_uring_prep_multishot_accept_direct(sqe, l, NULL, NULL, 0);
	io_uring_sqe_set_data64(sqe, 5);
	op_submit(&ring, 1);
	for (int i = 0; i < 3; i++) {
		struct op_cqe c;

		cl[i] = tcp_client(&sa);
		c = op_wait(&ring);
		CHECK(c.user_data == 5 && c.res >= 0 && c.res < 4 &&
		      (c.flags & IORING_CQE_F_MORE), "accept direct %d: %d %#x", i,
		      c.res, c.flags);
		slots[i] = c.res;
	}
	CHECK(slots[0] != slots[1] && slots[1] != slots[2] && slots[0] != slots[2],
	      "distinct slots");
	/* the fourth connection fills the table; the fifth ends the multishot */
	cl[0] = (close(cl[0]), tcp_client(&sa));
	{
		struct op_cqe c = op_wait(&ring);

		CHECK(c.res >= 0 && (c.flags & IORING_CQE_F_MORE), "fourth: %d", c.res);
	}
	{
		int extra = tcp_client(&sa);
		struct op_cqe c = op_wait(&ring);

		CHECK(c.user_data == 5 && c.res == -ENFILE &&
		      !(c.flags & IORING_CQE_F_MORE), "full table: %d %#x", c.res,
		      c.flags);
		close(extra);
	}
	/* a fixed slot for multishot is refused */
	sqe = op_sqe(&ring);
	io_uring_prep_multishot_accept(sqe, l, NULL, NULL, 0);
	sqe->file_index = 2;
	CHECK_EQ(run().res, -EINVAL, "multishot accept into a fixed slot");
	/* socket_direct without a free slot */
	io_uring_prep_socket_direct_alloc(op_sqe(&ring), AF_INET, SOCK_STREAM, 0, 0);
	CHECK_EQ(run().res, -ENFILE, "socket_direct_alloc on a full table");
	io_uring_unregister_files(&ring);
	io_uring_prep_socket_direct(op_sqe(&ring), AF_INET, SOCK_STREAM, 0, 1, 0);
	CHECK_EQ(run().res, -ENXIO, "socket_direct without a table");
	io_uring_prep_socket(op_sqe(&ring), 12345, SOCK_STREAM, 0, 0);
	CHECK_EQ(run().res, -EAFNOSUPPORT, "socket with a bad domain");
	for (int i = 0; i < 3; i++)
		close(cl[i]);
	close(l);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	op_need(&ring, IORING_OP_SOCKET, "IORING_OP_SOCKET");
	op_need(&ring, IORING_OP_URING_CMD, "IORING_OP_URING_CMD");
	non_socket();
	connect_refused();
	stream_cases();
	unix_cases();
	cancelled();
	direct_accept();
	io_uring_queue_exit(&ring);
	return tu_done();
}
