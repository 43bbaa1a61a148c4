/* SPDX-License-Identifier: MIT */
/*
 * Socket opcodes over loopback TCP, each checked by its result: socket,
 * socket_direct, bind, listen, accept, multishot accept, connect,
 * send/recv, sendto, sendmsg/recvmsg, send_zc and sendmsg_zc (with their
 * notification CQE), shutdown, getsockname and set/getsockopt through
 * IORING_OP_URING_CMD.
 */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "op-util.h"

static struct io_uring ring;

static void recv_all(int fd, char *buf, int len)
{
	int got = 0;

	while (got < len) {
		struct io_uring_sqe *sqe = op_sqe(&ring);
		int r;

		io_uring_prep_recv(sqe, fd, buf + got, len - got, 0);
		r = op_run1(&ring);
		CHECK(r > 0, "recv: %d", r);
		got += r;
	}
}

int main(int argc, char **argv)
{
	struct io_uring_sqe *sqe;
	struct sockaddr_in sa, peer;
	socklen_t plen;
	struct op_cqe c[4];
	char buf[256];
	int lfd, cfd, afd, ret, val;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 16, 0);
	op_need(&ring, IORING_OP_SOCKET, "IORING_OP_SOCKET");

	/* socket */
	sqe = op_sqe(&ring);
	io_uring_prep_socket(sqe, AF_INET, SOCK_STREAM, 0, 0);
	lfd = op_run1(&ring);
	CHECK(lfd >= 0, "socket: %s", strerror(-lfd));
	{
		int type = 0;
		socklen_t tl = sizeof(type);

		CHECK(getsockopt(lfd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
		      type == SOCK_STREAM, "socket type");
	}
	val = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &val, sizeof(val));

	/* bind + listen through io_uring when available */
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = 0;
	if (op_has(&ring, IORING_OP_BIND) && op_has(&ring, IORING_OP_LISTEN)) {
		sqe = op_sqe(&ring);
		io_uring_prep_bind(sqe, lfd, (struct sockaddr *)&sa, sizeof(sa));
		CHECK_EQ(op_run1(&ring), 0, "bind");
		sqe = op_sqe(&ring);
		io_uring_prep_listen(sqe, lfd, 16);
		CHECK_EQ(op_run1(&ring), 0, "listen");
	} else {
		CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind");
		CHECK(listen(lfd, 16) == 0, "listen");
	}
	plen = sizeof(sa);
	CHECK(getsockname(lfd, (struct sockaddr *)&sa, &plen) == 0, "getsockname");
	CHECK(sa.sin_port != 0, "listener has no port");

	/* getsockname via uring_cmd gives the same address */
	if (op_has(&ring, IORING_OP_URING_CMD)) {
		struct sockaddr_in g;
		socklen_t gl = sizeof(g);

		memset(&g, 0, sizeof(g));
		sqe = op_sqe(&ring);
		io_uring_prep_cmd_getsockname(sqe, lfd, (struct sockaddr *)&g,
					      &gl, 0);
		ret = op_run1(&ring);
		if (ret == -EINVAL || ret == -EOPNOTSUPP) {
			tu_lacks("SOCKET_URING_OP_GETSOCKNAME");
		} else {
			CHECK_EQ(ret, 0, "cmd_getsockname");
			CHECK(gl == sizeof(g) && g.sin_port == sa.sin_port &&
			      g.sin_addr.s_addr == sa.sin_addr.s_addr,
			      "cmd_getsockname address differs");
		}
	}

	/* connect (client) + accept (server) in flight together */
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(cfd >= 0, "client socket");
	plen = sizeof(peer);
	sqe = op_sqe(&ring);
	io_uring_prep_accept(sqe, lfd, (struct sockaddr *)&peer, &plen, 0);
	io_uring_sqe_set_data64(sqe, 1);
	sqe = op_sqe(&ring);
	io_uring_prep_connect(sqe, cfd, (struct sockaddr *)&sa, sizeof(sa));
	io_uring_sqe_set_data64(sqe, 2);
	op_submit(&ring, 2);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[1].res, 0, "connect");
	afd = c[0].res;
	CHECK(afd >= 0, "accept: %s", strerror(-afd));
	CHECK(plen == sizeof(peer) && peer.sin_family == AF_INET &&
	      peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK), "accept peer");

	/* set/getsockopt via uring_cmd: SO_KEEPALIVE round trip (the kernel's
	 * getsockopt command serves SOL_SOCKET only) */
	if (op_has(&ring, IORING_OP_URING_CMD)) {
		int on = 1, got = 0;

		sqe = op_sqe(&ring);
		io_uring_prep_cmd_sock(sqe, SOCKET_URING_OP_SETSOCKOPT, afd,
				       SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
		ret = op_run1(&ring);
		if (ret == -EOPNOTSUPP || ret == -EINVAL) {
			CHECK(tu_lacks_before(6, 7, "SOCKET_URING_OP_SETSOCKOPT"),
			      "cmd_sock SETSOCKOPT: %d", ret);
		} else {
			socklen_t gl = sizeof(got);

			CHECK_EQ(ret, 0, "cmd_sock SETSOCKOPT");
			CHECK(getsockopt(afd, SOL_SOCKET, SO_KEEPALIVE, &got, &gl) == 0 &&
			      got, "SO_KEEPALIVE not set");
			got = 0;
			sqe = op_sqe(&ring);
			io_uring_prep_cmd_sock(sqe, SOCKET_URING_OP_GETSOCKOPT, afd,
					       SOL_SOCKET, SO_KEEPALIVE, &got,
					       sizeof(got));
			ret = op_run1(&ring);
			CHECK(ret >= 0, "cmd_sock GETSOCKOPT: %d", ret);
			CHECK(got == 1, "GETSOCKOPT read %d", got);
			/* and off again */
			on = 0;
			sqe = op_sqe(&ring);
			io_uring_prep_cmd_sock(sqe, SOCKET_URING_OP_SETSOCKOPT, afd,
					       SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
			CHECK_EQ(op_run1(&ring), 0, "cmd_sock SETSOCKOPT off");
			got = 1;
			CHECK(getsockopt(afd, SOL_SOCKET, SO_KEEPALIVE, &got, &gl) == 0 &&
			      !got, "SO_KEEPALIVE still set");
		}
	}

	/* send / recv */
	sqe = op_sqe(&ring);
	io_uring_prep_send(sqe, cfd, "ping-1234", 9, 0);
	CHECK_EQ(op_run1(&ring), 9, "send");
	memset(buf, 0, sizeof(buf));
	recv_all(afd, buf, 9);
	CHECK(!memcmp(buf, "ping-1234", 9), "recv content");

	/* sendto on a connected TCP socket with a NULL address */
	sqe = op_sqe(&ring);
	io_uring_prep_sendto(sqe, afd, "pong", 4, 0, NULL, 0);
	CHECK_EQ(op_run1(&ring), 4, "sendto");
	recv_all(cfd, buf, 4);
	CHECK(!memcmp(buf, "pong", 4), "sendto content");

	/* sendmsg / recvmsg with two iovecs */
	{
		struct iovec siov[2] = { { "abc", 3 }, { "defg", 4 } };
		struct msghdr sm = { .msg_iov = siov, .msg_iovlen = 2 };
		char r1[3], r2[4];
		struct iovec riov[2] = { { r1, 3 }, { r2, sizeof(r2) } };
		struct msghdr rm = { .msg_iov = riov, .msg_iovlen = 2 };

		sqe = op_sqe(&ring);
		io_uring_prep_sendmsg(sqe, cfd, &sm, 0);
		CHECK_EQ(op_run1(&ring), 7, "sendmsg");
		sqe = op_sqe(&ring);
		io_uring_prep_recvmsg(sqe, afd, &rm, MSG_WAITALL);
		CHECK_EQ(op_run1(&ring), 7, "recvmsg");
		CHECK(!memcmp(r1, "abc", 3) && !memcmp(r2, "defg", 4),
		      "recvmsg content");
	}

	/* send_zc: result CQE with F_MORE, then a notification CQE */
	if (op_has(&ring, IORING_OP_SEND_ZC)) {
		static char zbuf[4096];

		tu_pattern_fill(zbuf, sizeof(zbuf), 7, 0);
		sqe = op_sqe(&ring);
		io_uring_prep_send_zc(sqe, cfd, zbuf, sizeof(zbuf), 0, 0);
		io_uring_sqe_set_data64(sqe, 42);
		op_submit(&ring, 1);
		c[0] = op_wait(&ring);
		CHECK_EQ(c[0].res, (int)sizeof(zbuf), "send_zc result");
		CHECK(c[0].user_data == 42 && (c[0].flags & IORING_CQE_F_MORE),
		      "send_zc: first CQE flags %#x", c[0].flags);
		c[1] = op_wait(&ring);
		CHECK(c[1].user_data == 42 && (c[1].flags & IORING_CQE_F_NOTIF) &&
		      !(c[1].flags & IORING_CQE_F_MORE),
		      "send_zc: notification CQE flags %#x", c[1].flags);
		memset(buf, 0, sizeof(buf));
		{
			static char rz[4096];

			recv_all(afd, rz, sizeof(rz));
			CHECK(tu_pattern_check(rz, sizeof(rz), 7, 0) < 0,
			      "send_zc data");
		}
	}
	if (op_has(&ring, IORING_OP_SENDMSG_ZC)) {
		struct iovec siov[1] = { { "zero-copy-msg", 13 } };
		struct msghdr sm = { .msg_iov = siov, .msg_iovlen = 1 };
		int notif = 0, res = 0;

		sqe = op_sqe(&ring);
		io_uring_prep_sendmsg_zc(sqe, cfd, &sm, 0);
		io_uring_sqe_set_data64(sqe, 43);
		op_submit(&ring, 1);
		for (int i = 0; i < 2; i++) {
			struct op_cqe z = op_wait(&ring);

			CHECK(z.user_data == 43, "sendmsg_zc user_data");
			if (z.flags & IORING_CQE_F_NOTIF)
				notif++;
			else
				res = z.res;
		}
		CHECK(notif == 1 && res == 13, "sendmsg_zc: res %d notif %d", res,
		      notif);
		recv_all(afd, buf, 13);
		CHECK(!memcmp(buf, "zero-copy-msg", 13), "sendmsg_zc data");
	}

	/* shutdown(SHUT_WR): the peer reads EOF */
	if (op_has(&ring, IORING_OP_SHUTDOWN)) {
		sqe = op_sqe(&ring);
		io_uring_prep_shutdown(sqe, cfd, SHUT_WR);
		CHECK_EQ(op_run1(&ring), 0, "shutdown");
		sqe = op_sqe(&ring);
		io_uring_prep_recv(sqe, afd, buf, sizeof(buf), 0);
		CHECK_EQ(op_run1(&ring), 0, "recv after peer shutdown (EOF)");
	}
	close(afd);
	close(cfd);

	/* multishot accept: two connections, two CQEs with F_MORE */
	{
		int c1 = socket(AF_INET, SOCK_STREAM, 0);
		int c2 = socket(AF_INET, SOCK_STREAM, 0);
		int fds[2];

		sqe = op_sqe(&ring);
		io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, 0);
		io_uring_sqe_set_data64(sqe, 7);
		op_submit(&ring, 1);
		CHECK(connect(c1, (struct sockaddr *)&sa, sizeof(sa)) == 0, "c1");
		CHECK(connect(c2, (struct sockaddr *)&sa, sizeof(sa)) == 0, "c2");
		for (int i = 0; i < 2; i++) {
			struct op_cqe m = op_wait(&ring);

			CHECK(m.user_data == 7 && m.res >= 0 &&
			      (m.flags & IORING_CQE_F_MORE),
			      "multishot accept CQE %d: res %d flags %#x", i,
			      m.res, m.flags);
			fds[i] = m.res;
		}
		CHECK(fds[0] != fds[1], "same fd accepted twice");
		/* cancel the multishot accept */
		sqe = op_sqe(&ring);
		io_uring_prep_cancel64(sqe, 7, 0);
		io_uring_sqe_set_data64(sqe, 8);
		op_submit(&ring, 1);
		for (int i = 0; i < 2; i++) {
			struct op_cqe m = op_wait(&ring);

			if (m.user_data == 8)
				CHECK_EQ(m.res, 0, "cancel multishot accept");
			else
				CHECK(m.res == -ECANCELED &&
				      !(m.flags & IORING_CQE_F_MORE),
				      "multishot accept end: %d", m.res);
		}
		close(fds[0]);
		close(fds[1]);
		close(c1);
		close(c2);
	}

	/* socket_direct + accept_direct into the fixed table */
	ret = io_uring_register_files_sparse(&ring, 8);
	CHECK_EQ(ret, 0, "register_files_sparse");
	sqe = op_sqe(&ring);
	io_uring_prep_socket_direct(sqe, AF_INET, SOCK_STREAM, 0, 3, 0);
	ret = op_run1(&ring);
	CHECK_EQ(ret, 0, "socket_direct into slot 3");
	sqe = op_sqe(&ring);
	io_uring_prep_socket_direct_alloc(sqe, AF_INET, SOCK_STREAM, 0, 0);
	ret = op_run1(&ring);
	CHECK(ret >= 0 && ret < 8 && ret != 3, "socket_direct_alloc: %d", ret);
	/* connect the fixed socket (slot 3) and accept into slot 5 */
	sqe = op_sqe(&ring);
	io_uring_prep_accept_direct(sqe, lfd, NULL, NULL, 0, 5);
	io_uring_sqe_set_data64(sqe, 1);
	sqe = op_sqe(&ring);
	io_uring_prep_connect(sqe, 3, (struct sockaddr *)&sa, sizeof(sa));
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	io_uring_sqe_set_data64(sqe, 2);
	op_submit(&ring, 2);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[0].res, 0, "accept_direct");
	CHECK_EQ(c[1].res, 0, "connect on fixed socket");
	sqe = op_sqe(&ring);
	io_uring_prep_send(sqe, 3, "fixed!", 6, 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK_EQ(op_run1(&ring), 6, "send on fixed socket");
	sqe = op_sqe(&ring);
	io_uring_prep_recv(sqe, 5, buf, 6, MSG_WAITALL);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK_EQ(op_run1(&ring), 6, "recv on accepted fixed socket");
	CHECK(!memcmp(buf, "fixed!", 6), "fixed socket data");

	io_uring_queue_exit(&ring);
	close(lfd);
	return tu_done();
}
