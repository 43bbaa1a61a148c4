/* SPDX-License-Identifier: MIT */
/*
 * A loopback client for echo services: it drives a server on 127.0.0.1
 * and checks that every byte comes back unchanged.
 *
 *   loopback-peer tcp PORT CONNS BYTES   CONNS connections at once, each
 *                                        sending BYTES and reading them back
 *   loopback-peer udp PORT COUNT SIZE    COUNT datagrams of SIZE bytes, one
 *                                        at a time, each echoed back
 *   loopback-peer relay LPORT PORT CONNS BYTES
 *                                        for a one-way relay (a proxy): listens
 *                                        on LPORT as the relay's backend, sends
 *                                        BYTES on each of CONNS connections to
 *                                        PORT and checks what reaches LPORT
 *
 * Each connection (or datagram) carries its own pseudo-random pattern, so
 * data crossing between connections is caught too. Prints one line,
 * "ok ...", and exits 0; on a mismatch, a stall of 10 s or an error it
 * says what went wrong and exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define STALL_MS 10000

static int fail(const char *what)
{
	fprintf(stderr, "loopback-peer: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Byte `i` of stream `id`: cheap, and different for every stream. */
static unsigned char pattern(unsigned id, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)id << 32);

	x ^= x >> 29;
	return (unsigned char)(x * 0xbf58476d1ce4e5b9ULL >> 56);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sockaddr_in target(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

struct conn {
	int fd;
	uint64_t sent, got;
};

/* poll(2) over the set; <0 after saying why (an error, or a stall). */
static int poll_progress(struct pollfd *p, unsigned n, unsigned left, const char *what)
{
	int r = poll(p, n, STALL_MS);

	if (r < 0)
		return -fail("poll");
	if (r == 0) {
		fprintf(stderr, "loopback-peer: no progress for %d ms, %u %s unfinished\n",
			STALL_MS, left, what);
		return -1;
	}
	return r;
}

/* Sends the next part of stream `id` (bytes from `byte`) without blocking. */
static int send_more(struct conn *c, unsigned id, uint64_t bytes,
		     unsigned char (*byte)(unsigned, uint64_t))
{
	unsigned char buf[16384];
	size_t len = bytes - c->sent < sizeof(buf) ? bytes - c->sent : sizeof(buf);
	ssize_t w;

	for (size_t k = 0; k < len; k++)
		buf[k] = byte(id, c->sent + k);
	w = send(c->fd, buf, len, MSG_NOSIGNAL);
	if (w < 0 && errno != EAGAIN)
		return fail("send");
	if (w > 0)
		c->sent += (uint64_t)w;
	return 0;
}

static int tcp(int port, unsigned nconn, uint64_t bytes)
{
	struct sockaddr_in a = target(port);
	struct conn *c = calloc(nconn, sizeof(*c));
	struct pollfd *p = calloc(nconn, sizeof(*p));
	unsigned char buf[16384];
	unsigned left = nconn;
	double t0 = now();

	if (!c || !p)
		return fail("calloc");
	for (unsigned i = 0; i < nconn; i++) {
		int one = 1;

		c[i].fd = socket(AF_INET, SOCK_STREAM, 0);
		if (c[i].fd < 0)
			return fail("socket");
		if (connect(c[i].fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			return fail("connect");
		setsockopt(c[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		fcntl(c[i].fd, F_SETFL, O_NONBLOCK);
	}
	while (left) {
		int n = 0;

		for (unsigned i = 0; i < nconn; i++) {
			p[i].fd = c[i].got < bytes ? c[i].fd : -1;
			p[i].events = POLLIN | (c[i].sent < bytes ? POLLOUT : 0);
			p[i].revents = 0;
		}
		n = poll_progress(p, nconn, left, "connections");
		if (n < 0)
			return 1;
		for (unsigned i = 0; i < nconn; i++) {
			if ((p[i].revents & POLLOUT) && send_more(&c[i], i, bytes, pattern))
				return 1;
			if (p[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t r = recv(c[i].fd, buf, sizeof(buf), 0);

				if (r < 0 && errno == EAGAIN)
					continue;
				if (r <= 0) {
					fprintf(stderr, "loopback-peer: connection %u closed after %llu of %llu bytes\n",
						i, (unsigned long long)c[i].got,
						(unsigned long long)bytes);
					return 1;
				}
				for (ssize_t k = 0; k < r; k++) {
					if (buf[k] != pattern(i, c[i].got + (uint64_t)k)) {
						fprintf(stderr, "loopback-peer: connection %u byte %llu differs\n",
							i, (unsigned long long)(c[i].got + (uint64_t)k));
						return 1;
					}
				}
				c[i].got += (uint64_t)r;
				if (c[i].got == bytes)
					left--;
			}
		}
	}
	printf("ok tcp conns=%u bytes_each=%llu total=%llu secs=%.3f\n", nconn,
	       (unsigned long long)bytes, (unsigned long long)bytes * nconn,
	       now() - t0);
	for (unsigned i = 0; i < nconn; i++)
		close(c[i].fd);
	free(c);
	free(p);
	return 0;
}

static int udp(int port, unsigned count, unsigned size)
{
	struct sockaddr_in a = target(port);
	unsigned char *out = malloc(size), *in = malloc(size + 1);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	double t0 = now();

	if (fd < 0 || !out || !in)
		return fail("socket");
	for (unsigned i = 0; i < count; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		for (unsigned k = 0; k < size; k++)
			out[k] = pattern(i, k);
		if (sendto(fd, out, size, 0, (struct sockaddr *)&a, sizeof(a)) != (ssize_t)size)
			return fail("sendto");
		if (poll(&p, 1, STALL_MS) != 1) {
			fprintf(stderr, "loopback-peer: datagram %u not echoed within %d ms\n",
				i, STALL_MS);
			return 1;
		}
		r = recv(fd, in, size + 1, 0);
		if (r != (ssize_t)size || memcmp(in, out, size)) {
			fprintf(stderr, "loopback-peer: datagram %u came back as %zd different bytes\n",
				i, r);
			return 1;
		}
	}
	printf("ok udp datagrams=%u size=%u secs=%.3f\n", count, size, now() - t0);
	close(fd);
	free(out);
	free(in);
	return 0;
}

/*
 * One-way relay check. Each stream starts with its 4-byte id, so the
 * backend side can tell the relayed connections apart whatever order
 * they are accepted in.
 */
static unsigned char relay_byte(unsigned id, uint64_t i)
{
	return i < 4 ? (unsigned char)(id >> (8 * i)) : pattern(id, i - 4);
}

static int relay(int lport, int port, unsigned nconn, uint64_t bytes)
{
	struct sockaddr_in la = target(lport), a = target(port);
	unsigned total = 2 * nconn + 1, accepted = 0, left = nconn;
	struct conn *c = calloc(2 * nconn, sizeof(*c));
	struct pollfd *p = calloc(total, sizeof(*p));
	unsigned *id = calloc(nconn, sizeof(*id));
	unsigned char buf[16384];
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);
	double t0 = now();

	bytes += 4;
	if (!c || !p || !id || lfd < 0)
		return fail("setup");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&la, sizeof(la)) < 0 || listen(lfd, 128) < 0)
		return fail("listen");
	/* c[0..nconn) send to the relay, c[nconn..) are what it connected. */
	for (unsigned i = 0; i < nconn; i++) {
		c[i].fd = socket(AF_INET, SOCK_STREAM, 0);
		if (c[i].fd < 0 || connect(c[i].fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			return fail("connect");
		fcntl(c[i].fd, F_SETFL, O_NONBLOCK);
		c[nconn + i].fd = -1;
	}
	while (left) {
		int n;

		p[0].fd = accepted < nconn ? lfd : -1;
		p[0].events = POLLIN;
		for (unsigned i = 0; i < nconn; i++) {
			p[1 + i].fd = c[i].sent < bytes ? c[i].fd : -1;
			p[1 + i].events = POLLOUT;
			p[1 + nconn + i].fd = c[nconn + i].fd >= 0 && c[nconn + i].got < bytes ?
					      c[nconn + i].fd : -1;
			p[1 + nconn + i].events = POLLIN;
		}
		n = poll_progress(p, total, left, "streams");
		if (n < 0)
			return 1;
		if (p[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);

			if (fd < 0)
				return fail("accept");
			c[nconn + accepted++].fd = fd;
		}
		for (unsigned i = 0; i < nconn; i++) {
			struct conn *s = &c[i], *r = &c[nconn + i];

			if ((p[1 + i].revents & POLLOUT) && send_more(s, i, bytes, relay_byte))
				return 1;
			if (p[1 + nconn + i].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t got = recv(r->fd, buf, sizeof(buf), MSG_DONTWAIT);

				if (got < 0 && errno == EAGAIN)
					continue;
				if (got <= 0) {
					fprintf(stderr, "loopback-peer: relayed stream closed after %llu of %llu bytes\n",
						(unsigned long long)r->got, (unsigned long long)bytes);
					return 1;
				}
				for (ssize_t k = 0; k < got; k++, r->got++) {
					if (r->got < 4) {
						id[i] |= (unsigned)buf[k] << (8 * r->got);
						if (r->got == 3 && id[i] >= nconn) {
							fprintf(stderr, "loopback-peer: relayed stream names %u\n", id[i]);
							return 1;
						}
						continue;
					}
					if (buf[k] != relay_byte(id[i], r->got)) {
						fprintf(stderr, "loopback-peer: stream %u byte %llu differs\n",
							id[i], (unsigned long long)(r->got - 4));
						return 1;
					}
				}
				if (r->got == bytes)
					left--;
			}
		}
	}
	printf("ok relay conns=%u bytes_each=%llu secs=%.3f\n", nconn,
	       (unsigned long long)(bytes - 4), now() - t0);
	for (unsigned i = 0; i < 2 * nconn; i++)
		close(c[i].fd);
	close(lfd);
	free(c);
	free(p);
	free(id);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc == 6 && !strcmp(argv[1], "relay"))
		return relay(atoi(argv[2]), atoi(argv[3]), (unsigned)atoi(argv[4]),
			     strtoull(argv[5], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "tcp"))
		return tcp(atoi(argv[2]), (unsigned)atoi(argv[3]),
			   strtoull(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "udp"))
		return udp(atoi(argv[2]), (unsigned)atoi(argv[3]),
			   (unsigned)atoi(argv[4]));
	fprintf(stderr, "usage: %s tcp PORT CONNS BYTES | udp PORT COUNT SIZE |"
		" relay LPORT PORT CONNS BYTES\n", argv[0]);
	return 2;
}
