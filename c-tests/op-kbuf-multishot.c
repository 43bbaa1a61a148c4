/* SPDX-License-Identifier: MIT */
/*
 * Provided-buffer-ring operations run for real:
 *  - io_uring_prep_send_bundle over loopback TCP: one send takes a run of
 *    ring buffers; the peer must get their bytes in ring order;
 *  - io_uring_prep_read_multishot on a pipe: one CQE per written chunk,
 *    each with IORING_CQE_F_BUFFER and the chunk's bytes, then EOF ends it;
 *  - io_uring_prep_recvmsg_multishot over loopback UDP with IP_PKTINFO,
 *    each buffer parsed with io_uring_recvmsg_validate, _name, _cmsg_firsthdr/_nexthdr,
 *    _payload and _payload_length (source address, control message, payload,
 *    and MSG_TRUNC for a datagram larger than the buffer).
 */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include "op-util.h"

static struct io_uring ring;

static struct io_uring_buf_ring *buf_ring(unsigned entries, int bgid)
{
	struct io_uring_buf_ring *br;
	int ret;

	br = io_uring_setup_buf_ring(&ring, entries, bgid, 0, &ret);
	if (!br && (ret == -EINVAL || ret == -ENOENT))
		SKIP("provided buffer rings unsupported: %s", strerror(-ret));
	CHECK(br != NULL, "setup_buf_ring(%u, %d): %s", entries, bgid,
	      strerror(-ret));
	return br;
}

/* ---------------------------------------------------------------- send bundle */

#define SB_BUFS		16
#define SB_LEN		256
#define SB_SEED		0x5eedULL

static void tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	CHECK(l >= 0, "socket");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(l, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind");
	CHECK(listen(l, 1) == 0, "listen");
	CHECK(getsockname(l, (struct sockaddr *)&sa, &sl) == 0, "getsockname");
	*a = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(*a >= 0, "socket");
	CHECK(connect(*a, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect");
	*b = accept(l, NULL, NULL);
	CHECK(*b >= 0, "accept");
	close(l);
}

static void test_send_bundle(void)
{
	static unsigned char bufs[SB_BUFS][SB_LEN];
	struct io_uring_buf_ring *br;
	const int bgid = 1, mask = io_uring_buf_ring_mask(SB_BUFS);
	unsigned char *rx;
	size_t total = 0;
	int s, r;

	if (!(ring.features & IORING_FEAT_RECVSEND_BUNDLE)) {
		tu_lacks("IORING_FEAT_RECVSEND_BUNDLE");
		return;
	}
	tcp_pair(&s, &r);
	br = buf_ring(SB_BUFS, bgid);
	rx = malloc(2 * SB_BUFS * SB_LEN);
	CHECK(rx != NULL, "malloc");

	/* two rounds, so the second one starts from a moved ring head */
	for (int round = 0; round < 2; round++) {
		size_t base = total, sent = 0;
		int expect_bid = 0;

		for (int i = 0; i < SB_BUFS; i++) {
			tu_pattern_fill(bufs[i], SB_LEN, SB_SEED,
					base + (size_t)i * SB_LEN);
			io_uring_buf_ring_add(br, bufs[i], SB_LEN, i, mask, i);
		}
		io_uring_buf_ring_advance(br, SB_BUFS);

		while (sent < (size_t)SB_BUFS * SB_LEN) {
			struct io_uring_sqe *sqe = op_sqe(&ring);
			struct op_cqe c;

			io_uring_prep_send_bundle(sqe, s, 0, 0);
			CHECK(sqe->ioprio & IORING_RECVSEND_BUNDLE,
			      "send_bundle: no IORING_RECVSEND_BUNDLE in ioprio");
			CHECK(sqe->addr == 0 && sqe->len == 0,
			      "send_bundle: addr/len not 0");
			sqe->flags |= IOSQE_BUFFER_SELECT;
			sqe->buf_group = bgid;
			io_uring_sqe_set_data64(sqe, 7);
			op_submit(&ring, 1);
			c = op_wait(&ring);
			if (c.res == -EINVAL && round == 0 && sent == 0)
				SKIP("send bundle rejected: %s", strerror(-c.res));
			CHECK(c.res > 0, "send_bundle: %d (%s)", c.res,
			      c.res < 0 ? strerror(-c.res) : "-");
			CHECK(c.flags & IORING_CQE_F_BUFFER,
			      "send_bundle CQE without F_BUFFER (%#x)", c.flags);
			CHECK_EQ(c.flags >> IORING_CQE_BUFFER_SHIFT, expect_bid,
				 "send_bundle first buffer id");
			CHECK(c.res % SB_LEN == 0,
			      "send_bundle sent a partial buffer: %d", c.res);
			sent += (size_t)c.res;
			expect_bid += c.res / SB_LEN;
		}
		CHECK_EQ(sent, SB_BUFS * SB_LEN, "bytes sent");
		total += sent;
	}

	/* everything, in ring order, on the other side */
	for (size_t got = 0; got < total;) {
		ssize_t n = recv(r, rx + got, total - got, 0);

		CHECK(n > 0, "recv: %zd (%s)", n, strerror(errno));
		got += (size_t)n;
	}
	{
		long long bad = tu_pattern_check(rx, total, SB_SEED, 0);

		CHECK(bad < 0, "bundle byte %lld out of order/corrupt", bad);
	}
	/* ring now empty: a further bundle send finds no buffer */
	{
		struct io_uring_sqe *sqe = op_sqe(&ring);
		int res;

		io_uring_prep_send_bundle(sqe, s, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = bgid;
		res = op_run1(&ring);
		CHECK_EQ(res, -ENOBUFS, "send_bundle with an empty ring");
	}
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, SB_BUFS, bgid), 0,
		 "free_buf_ring");
	free(rx);
	close(s);
	close(r);
}

/* ------------------------------------------------------- read multishot */

#define RM_BUFS		8
#define RM_LEN		128
#define RM_CHUNKS	24

static void test_read_multishot(void)
{
	static unsigned char bufs[RM_BUFS][RM_LEN];
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct op_cqe c;
	const int bgid = 2, mask = io_uring_buf_ring_mask(RM_BUFS);
	size_t off = 0;
	int fds[2];

	if (!op_has(&ring, IORING_OP_READ_MULTISHOT))
		return;
	CHECK(pipe(fds) == 0, "pipe");
	br = buf_ring(RM_BUFS, bgid);
	for (int i = 0; i < RM_BUFS; i++)
		io_uring_buf_ring_add(br, bufs[i], RM_LEN, i, mask, i);
	io_uring_buf_ring_advance(br, RM_BUFS);

	sqe = op_sqe(&ring);
	io_uring_prep_read_multishot(sqe, fds[0], 0, 0, bgid);
	CHECK_EQ(sqe->opcode, IORING_OP_READ_MULTISHOT, "read_multishot opcode");
	CHECK(sqe->flags & IOSQE_BUFFER_SELECT, "read_multishot buffer select");
	CHECK_EQ(sqe->buf_group, bgid, "read_multishot buf_group");
	io_uring_sqe_set_data64(sqe, 0x4d);
	op_submit(&ring, 1);

	/* 3x more chunks than buffers: each buffer is handed back after use */
	for (int k = 0; k < RM_CHUNKS; k++) {
		unsigned char chunk[RM_LEN];
		size_t len = 1 + (size_t)(k * 37) % RM_LEN;
		unsigned bid;

		tu_pattern_fill(chunk, len, 0x77, off);
		CHECK(write(fds[1], chunk, len) == (ssize_t)len, "pipe write");
		c = op_wait(&ring);
		CHECK(c.user_data == 0x4d, "ud %llu",
		      (unsigned long long)c.user_data);
		CHECK(c.res == (int)len, "chunk %d: res %d (%s) want %zu", k,
		      c.res, c.res < 0 ? strerror(-c.res) : "-", len);
		CHECK(c.flags & IORING_CQE_F_BUFFER, "chunk %d: no F_BUFFER", k);
		CHECK(c.flags & IORING_CQE_F_MORE, "chunk %d: no F_MORE", k);
		bid = c.flags >> IORING_CQE_BUFFER_SHIFT;
		CHECK(bid == (unsigned)(k % RM_BUFS),
		      "chunk %d: buffer id %u", k, bid);
		CHECK(memcmp(bufs[bid], chunk, len) == 0,
		      "chunk %d: data differs", k);
		off += len;
		/* give the buffer back */
		io_uring_buf_ring_add(br, bufs[bid], RM_LEN, bid, mask, 0);
		io_uring_buf_ring_advance(br, 1);
	}
	/* EOF ends the multishot: a final CQE without F_MORE */
	close(fds[1]);
	c = op_wait(&ring);
	CHECK(c.user_data == 0x4d, "final ud");
	CHECK_EQ(c.res, 0, "read_multishot at EOF");
	CHECK(!(c.flags & IORING_CQE_F_MORE), "F_MORE after EOF");
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, RM_BUFS, bgid), 0,
		 "free_buf_ring");
	close(fds[0]);
}

/* ------------------------------------------------- recvmsg multishot UDP */

#define RV_BUFS		8
#define RV_LEN		256
#define RV_MSGS		20

static void test_recvmsg_multishot(void)
{
	static unsigned char bufs[RV_BUFS][RV_LEN];
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct sockaddr_in rxa, txa;
	socklen_t sl;
	struct msghdr msg;
	const int bgid = 3, mask = io_uring_buf_ring_mask(RV_BUFS);
	unsigned lo_index = if_nametoindex("lo");
	int rx, tx, one = 1;
	size_t hdr;
	unsigned cap;

	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(rx >= 0 && tx >= 0, "udp sockets");
	memset(&rxa, 0, sizeof(rxa));
	rxa.sin_family = AF_INET;
	rxa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	txa = rxa;
	CHECK(bind(rx, (struct sockaddr *)&rxa, sizeof(rxa)) == 0, "bind rx");
	CHECK(bind(tx, (struct sockaddr *)&txa, sizeof(txa)) == 0, "bind tx");
	sl = sizeof(rxa);
	CHECK(getsockname(rx, (struct sockaddr *)&rxa, &sl) == 0, "name rx");
	sl = sizeof(txa);
	CHECK(getsockname(tx, (struct sockaddr *)&txa, &sl) == 0, "name tx");
	CHECK(setsockopt(rx, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) == 0,
	      "IP_PKTINFO");

	br = buf_ring(RV_BUFS, bgid);
	for (int i = 0; i < RV_BUFS; i++)
		io_uring_buf_ring_add(br, bufs[i], RV_LEN, i, mask, i);
	io_uring_buf_ring_advance(br, RV_BUFS);

	memset(&msg, 0, sizeof(msg));
	msg.msg_namelen = sizeof(struct sockaddr_in);
	msg.msg_controllen = CMSG_SPACE(sizeof(struct in_pktinfo));
	hdr = sizeof(struct io_uring_recvmsg_out) + msg.msg_namelen +
	      msg.msg_controllen;
	cap = (unsigned)(RV_LEN - hdr);	/* payload room per buffer */

	sqe = op_sqe(&ring);
	io_uring_prep_recvmsg_multishot(sqe, rx, &msg, 0);
	CHECK(sqe->ioprio & IORING_RECV_MULTISHOT, "no IORING_RECV_MULTISHOT");
	CHECK_EQ(sqe->opcode, IORING_OP_RECVMSG, "recvmsg opcode");
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	io_uring_sqe_set_data64(sqe, 0x52);
	op_submit(&ring, 1);

	for (int k = 0; k < RV_MSGS; k++) {
		unsigned char dgram[2 * RV_LEN];
		/* the last message is too big for one buffer: MSG_TRUNC */
		int trunc = k == RV_MSGS - 1;
		size_t len = trunc ? cap + 40 : 1 + (size_t)(k * 29) % cap;
		struct io_uring_recvmsg_out *o;
		struct sockaddr_in *from;
		struct cmsghdr *cm;
		struct op_cqe c;
		unsigned bid, plen;

		tu_pattern_fill(dgram, len, 0xd9, (uint64_t)k << 20);
		CHECK(sendto(tx, dgram, len, 0, (struct sockaddr *)&rxa,
			     sizeof(rxa)) == (ssize_t)len, "sendto");
		c = op_wait(&ring);
		if (k == 0 && (c.res == -EINVAL || c.res == -EOPNOTSUPP))
			SKIP("recvmsg multishot unsupported: %s",
			     strerror(-c.res));
		CHECK(c.user_data == 0x52, "ud");
		CHECK(c.res > 0, "msg %d: res %d (%s)", k, c.res,
		      c.res < 0 ? strerror(-c.res) : "-");
		CHECK(c.flags & IORING_CQE_F_BUFFER, "msg %d: no F_BUFFER", k);
		CHECK(c.flags & IORING_CQE_F_MORE, "msg %d: no F_MORE", k);
		bid = c.flags >> IORING_CQE_BUFFER_SHIFT;
		CHECK(bid < RV_BUFS, "bid %u", bid);

		/* too short for header + name: rejected */
		CHECK(io_uring_recvmsg_validate(bufs[bid],
			(int)(sizeof(*o) + msg.msg_namelen - 1), &msg) == NULL,
		      "validate accepted a short buffer");
		CHECK(io_uring_recvmsg_validate(bufs[bid], -1, &msg) == NULL,
		      "validate accepted a negative length");
		o = io_uring_recvmsg_validate(bufs[bid], c.res, &msg);
		CHECK(o == (void *)bufs[bid], "validate: %p for %p", (void *)o,
		      (void *)bufs[bid]);

		CHECK_EQ(o->namelen, sizeof(struct sockaddr_in), "namelen");
		from = io_uring_recvmsg_name(o);
		CHECK((unsigned char *)from == bufs[bid] + sizeof(*o),
		      "name not right after the header");
		CHECK(from->sin_family == AF_INET &&
		      from->sin_port == txa.sin_port &&
		      from->sin_addr.s_addr == htonl(INADDR_LOOPBACK),
		      "msg %d: source %s:%u, want port %u", k,
		      inet_ntoa(from->sin_addr), ntohs(from->sin_port),
		      ntohs(txa.sin_port));

		cm = io_uring_recvmsg_cmsg_firsthdr(o, &msg);
		CHECK(cm != NULL, "msg %d: no control message (controllen %u)",
		      k, o->controllen);
		CHECK((unsigned char *)cm == (unsigned char *)from + msg.msg_namelen,
		      "cmsg not right after the name area");
		CHECK(cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO,
		      "cmsg level %d type %d", cm->cmsg_level, cm->cmsg_type);
		CHECK_EQ(cm->cmsg_len, CMSG_LEN(sizeof(struct in_pktinfo)),
			 "cmsg_len");
		{
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			CHECK(pi.ipi_addr.s_addr == htonl(INADDR_LOOPBACK),
			      "pktinfo dst %s", inet_ntoa(pi.ipi_addr));
			if (lo_index)
				CHECK_EQ(pi.ipi_ifindex, lo_index,
					 "pktinfo ifindex");
		}
		CHECK(io_uring_recvmsg_cmsg_nexthdr(o, &msg, cm) == NULL,
		      "a second control message");

		CHECK((unsigned char *)io_uring_recvmsg_payload(o, &msg) ==
		      bufs[bid] + hdr, "payload offset");
		plen = io_uring_recvmsg_payload_length(o, c.res, &msg);
		/* the kernel reports the bytes copied (no MSG_TRUNC recv flag) */
		CHECK_EQ(o->payloadlen, plen, "recvmsg_out payloadlen");
		if (trunc) {
			CHECK(o->flags & MSG_TRUNC, "no MSG_TRUNC (flags %#x)",
			      o->flags);
			CHECK_EQ(plen, cap, "truncated payload length");
			CHECK_EQ(c.res, RV_LEN, "truncated res");
		} else {
			CHECK(!(o->flags & MSG_TRUNC), "MSG_TRUNC on msg %d", k);
			CHECK_EQ(plen, len, "payload length");
		}
		CHECK(memcmp(io_uring_recvmsg_payload(o, &msg), dgram, plen) == 0,
		      "msg %d: payload differs", k);

		io_uring_buf_ring_add(br, bufs[bid], RV_LEN, bid, mask, 0);
		io_uring_buf_ring_advance(br, 1);
	}

	/* end it: cancel the multishot, then a final CQE without F_MORE */
	{
		struct op_cqe c;
		int seen_final = 0, seen_cancel = 0;

		sqe = op_sqe(&ring);
		io_uring_prep_cancel64(sqe, 0x52, 0);
		io_uring_sqe_set_data64(sqe, 0x99);
		op_submit(&ring, 1);
		for (int i = 0; i < 2; i++) {
			c = op_wait(&ring);
			if (c.user_data == 0x99) {
				CHECK_EQ(c.res, 0, "cancel");
				seen_cancel = 1;
			} else {
				CHECK(c.user_data == 0x52, "ud");
				CHECK_EQ(c.res, -ECANCELED, "cancelled recvmsg");
				CHECK(!(c.flags & IORING_CQE_F_MORE),
				      "F_MORE after cancel");
				seen_final = 1;
			}
		}
		CHECK(seen_cancel && seen_final, "cancel completions");
	}
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, RV_BUFS, bgid), 0,
		 "free_buf_ring");
	close(rx);
	close(tx);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 16, 0);
	op_need(&ring, IORING_OP_SEND, "IORING_OP_SEND");
	test_read_multishot();
	test_recvmsg_multishot();
	test_send_bundle();
	return tu_done();
}
