/* SPDX-License-Identifier: MIT */
/*
 * URING_CMD SOCKET_URING_OP_TX_TIMESTAMP: a multishot command that posts
 * each TX timestamp of a socket's error queue as a 32-byte CQE (the
 * OPT_ID key in res, the type and hardware bit in flags, the time after
 * the CQE) and goes on posting new ones until cancelled; on CQE32 and
 * CQE_MIXED rings (DEFER_TASKRUN ones too), -EINVAL on others, -EOPNOTSUPP on files that are no
 * socket. Timestamps that carry their packet (no OPT_TSONLY) are not
 * posted and stay queued. The engine refuses sockets whose error queue
 * may also hold errors (IP_RECVERR), which recvmsg could not leave there
 * (a limit the README names).
 */
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include "op-util.h"

#define TS_UD 43

static struct sockaddr_in dst;

/* A UDP socket with TX timestamps 'flags' and a receiver it sends to. */
static int ts_socket(unsigned flags, int *rx)
{
	socklen_t len = sizeof(dst);
	int fd;

	*rx = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(*rx >= 0, "socket");
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(*rx, (struct sockaddr *)&dst, sizeof(dst)) == 0, "bind");
	CHECK(getsockname(*rx, (struct sockaddr *)&dst, &len) == 0,
	      "getsockname");
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(fd >= 0, "socket");
	CHECK(setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags,
			 sizeof(flags)) == 0, "SO_TIMESTAMPING");
	return fd;
}

static void send_one(int fd)
{
	CHECK(sendto(fd, "t", 1, 0, (struct sockaddr *)&dst, sizeof(dst)) == 1,
	      "sendto: %s", strerror(errno));
}

static void queue_ts(struct io_uring *ring, int fd)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = SOCKET_URING_OP_TX_TIMESTAMP;
	sqe->user_data = TS_UD;
	op_submit(ring, 1);
}

struct ts {
	int res;
	unsigned flags;
	__u64 sec, nsec;
};

/* Waits up to 'ms' for the next CQE; 0 if none came. */
static int next_in(struct io_uring *ring, struct ts *t, int ms)
{
	struct __kernel_timespec to = { .tv_nsec = ms * 1000000LL };
	struct io_uring_cqe *cqe;

	if (io_uring_wait_cqe_timeout(ring, &cqe, &to))
		return 0;
	CHECK_EQ(cqe->user_data, TS_UD, "user_data");
	t->res = cqe->res;
	t->flags = cqe->flags;
	t->sec = cqe->big_cqe[0];
	t->nsec = cqe->big_cqe[1];
	io_uring_cqe_seen(ring, cqe);
	return 1;
}

static int next(struct io_uring *ring, struct ts *t)
{
	return next_in(ring, t, 500);
}

/* The next CQE is a timestamp of key 'key' and type 'type', taken now. */
static void expect_ts(struct io_uring *ring, int key, int type, int mixed)
{
	struct timespec now;
	struct ts t;

	CHECK(next(ring, &t), "no timestamp CQE for key %d type %d", key, type);
	CHECK(t.flags & IORING_CQE_F_MORE, "timestamp %d: res %d without F_MORE",
	      key, t.res);
	CHECK_EQ(t.res, key, "timestamp key");
	CHECK_EQ(t.flags >> IORING_TIMESTAMP_TYPE_SHIFT, type, "timestamp type");
	CHECK(!(t.flags & IORING_CQE_F_TSTAMP_HW), "software timestamp");
	CHECK(!!(t.flags & IORING_CQE_F_32) == mixed,
	      "IORING_CQE_F_32 on a %s ring", mixed ? "mixed" : "CQE32");
	clock_gettime(CLOCK_REALTIME, &now);
	CHECK(t.nsec < 1000000000 && t.sec <= (__u64)now.tv_sec &&
	      t.sec + 10 >= (__u64)now.tv_sec,
	      "timestamp %llu.%09llu, now %ld", (unsigned long long)t.sec,
	      (unsigned long long)t.nsec, (long)now.tv_sec);
}

/* Cancels the command: -ECANCELED without F_MORE ends it. */
static void cancel_ts(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = op_sqe(ring);
	struct io_uring_cqe *cqe;
	int got_cancel = 0, got_end = 0;

	io_uring_prep_cancel64(sqe, TS_UD, 0);
	sqe->user_data = 1;
	op_submit(ring, 1);
	while (!got_cancel || !got_end) {
		CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, "wait");
		if (cqe->user_data == 1) {
			CHECK_EQ(cqe->res, 0, "cancel");
			got_cancel = 1;
		} else {
			CHECK_EQ(cqe->user_data, TS_UD, "user_data");
			CHECK_EQ(cqe->res, -ECANCELED, "cancelled command");
			CHECK(!(cqe->flags & IORING_CQE_F_MORE), "F_MORE at end");
			got_end = 1;
		}
		io_uring_cqe_seen(ring, cqe);
	}
}

static void stream(unsigned setup)
{
	unsigned base = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
			SOF_TIMESTAMPING_OPT_TSONLY;
	int mixed = !!(setup & IORING_SETUP_CQE_MIXED);
	struct io_uring ring;
	struct ts t;
	int fd, rx;

	op_ring(&ring, 16, setup);
	/* two packets sent before, one while it waits: keys 0, 1, 2 */
	fd = ts_socket(base | SOF_TIMESTAMPING_TX_SOFTWARE, &rx);
	send_one(fd);
	send_one(fd);
	queue_ts(&ring, fd);
	expect_ts(&ring, 0, SCM_TSTAMP_SND, mixed);
	expect_ts(&ring, 1, SCM_TSTAMP_SND, mixed);
	CHECK(!next(&ring, &t), "extra CQE res %d flags %x", t.res, t.flags);
	send_one(fd);
	expect_ts(&ring, 2, SCM_TSTAMP_SND, mixed);
	cancel_ts(&ring);
	close(fd);

	/* two types per packet, in the order they were taken */
	fd = ts_socket(base | SOF_TIMESTAMPING_TX_SCHED |
		       SOF_TIMESTAMPING_TX_SOFTWARE, &rx);
	send_one(fd);
	queue_ts(&ring, fd);
	expect_ts(&ring, 0, SCM_TSTAMP_SCHED, mixed);
	expect_ts(&ring, 0, SCM_TSTAMP_SND, mixed);
	cancel_ts(&ring);
	close(fd);
	close(rx);
	io_uring_queue_exit(&ring);
}

/* Timestamps with their packet (no OPT_TSONLY) stay for the program. */
static void with_packet(void)
{
	unsigned flags = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
			 SOF_TIMESTAMPING_TX_SOFTWARE;
	char buf[16], ctl[512];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct io_uring ring;
	struct ts t;
	int fd, rx;

	op_ring(&ring, 8, IORING_SETUP_CQE32);
	fd = ts_socket(flags, &rx);
	send_one(fd);
	queue_ts(&ring, fd);
	CHECK(!next(&ring, &t), "timestamp with packet posted: res %d", t.res);
	cancel_ts(&ring);
	CHECK(recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) > 0,
	      "the timestamp stays queued with its packet: %s",
	      strerror(errno));
	close(fd);
	close(rx);
	io_uring_queue_exit(&ring);
}

/* An error queue that also holds errors: the kernel posts the timestamp
 * and leaves the error; the engine cannot, and refuses. */
static void with_errors(void)
{
	unsigned flags = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
			 SOF_TIMESTAMPING_OPT_TSONLY |
			 SOF_TIMESTAMPING_TX_SOFTWARE;
	char ctl[512];
	struct msghdr msg = { .msg_control = ctl,
			      .msg_controllen = sizeof(ctl) };
	struct sock_extended_err *ee = NULL;
	struct io_uring ring;
	struct cmsghdr *c;
	struct ts t;
	int fd, rx, one = 1;

	op_ring(&ring, 8, IORING_SETUP_CQE32);
	fd = ts_socket(flags, &rx);
	CHECK(setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)) == 0,
	      "IP_RECVERR");
	/* nobody listens on the closed receiver's port: an ICMP error */
	close(rx);
	send_one(fd);
	usleep(20000);
	queue_ts(&ring, fd);
	if (tu_on_engine()) {
		CHECK(next(&ring, &t), "no CQE");
		CHECK_EQ(t.res, -EOPNOTSUPP, "engine, error queue with errors");
		goto out;
	}
	expect_ts(&ring, 0, SCM_TSTAMP_SND, 0);
	cancel_ts(&ring);
	/* the error is still there */
	CHECK_EQ(recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT), 0,
		 "error queue after the timestamps");
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR)
			ee = (struct sock_extended_err *)CMSG_DATA(c);
	CHECK(ee && ee->ee_origin == SO_EE_ORIGIN_ICMP &&
	      ee->ee_errno == ECONNREFUSED, "ICMP error kept");
out:
	close(fd);
	io_uring_queue_exit(&ring);
}

static void bad_input(void)
{
	struct io_uring ring;
	int fd, rx, p[2];

	/* 16-byte CQEs cannot carry the time */
	op_ring(&ring, 8, 0);
	fd = ts_socket(SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TSONLY,
		       &rx);
	queue_ts(&ring, fd);
	CHECK_EQ(op_wait(&ring).res, -EINVAL, "16-byte CQE ring");
	io_uring_queue_exit(&ring);

	op_ring(&ring, 8, IORING_SETUP_CQE32);
	CHECK(pipe(p) == 0, "pipe");
	queue_ts(&ring, p[0]);
	CHECK_EQ(op_wait(&ring).res, -EOPNOTSUPP, "a pipe");
	close(p[0]);
	close(p[1]);
	close(fd);
	close(rx);
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct ts t;
	int fd, rx;

	(void)argc;
	tu_set_name(argv[0]);
	/* kernels before 6.17 have no timestamp command */
	op_ring(&ring, 8, IORING_SETUP_CQE32);
	fd = ts_socket(SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TSONLY,
		       &rx);
	queue_ts(&ring, fd);
	if (next_in(&ring, &t, 50) && t.res == -EOPNOTSUPP)
		SKIP("no SOCKET_URING_OP_TX_TIMESTAMP");
	io_uring_queue_exit(&ring);
	close(fd);
	close(rx);

	stream(IORING_SETUP_CQE32);
	stream(IORING_SETUP_CQE_MIXED);
	stream(IORING_SETUP_CQE32 | IORING_SETUP_SINGLE_ISSUER |
	       IORING_SETUP_DEFER_TASKRUN);
	with_packet();
	with_errors();
	bad_input();
	tu_pass();
	return 0;
}
