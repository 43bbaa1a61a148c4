/* SPDX-License-Identifier: MIT */
/*
 * Load: an echo server on one ring, a multishot RECV per connection over
 * one shared buffer ring, each received buffer sent back as it is (one
 * send in flight per connection, so the stream keeps its order) and given
 * back to the ring once sent. A child process runs the clients: each
 * sends its share of a pattern and checks every byte that comes back.
 * Multishot receives end with -ENOBUFS when the ring runs dry and are
 * armed again.
 *
 * Short by default (64 connections, 8 MiB); LIBURING_RS_LOAD_CONNS and
 * LIBURING_RS_LOAD_MIB ask for more (`make load`: 1000 connections,
 * 1 GiB). Prints the bytes moved, the time, the peak RSS (VmHWM) and the
 * most threads the process had, which must stay under the engine's
 * worker cap (readiness waits never take a thread).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <dirent.h>
#include "op-util.h"

#define NBUF	4096
#define BUFSZ	4096
#define BGID	1
#define UD_SEND	(1ULL << 62)

struct conn {
	int fd;
	/* received buffers waiting to be echoed: bid and length */
	unsigned short *q_bid;
	int *q_len;
	unsigned qh, qt, qcap;
	int sending;		/* a send in flight: offset into the head */
	int sent_off;
	int armed;
	int eof;
};

static unsigned char *bufs;
static struct io_uring_buf_ring *br;
static struct io_uring ring;

static unsigned char pat(unsigned conn, unsigned long long off)
{
	unsigned long long x = (off >> 3) * 0x9e3779b97f4a7c15ULL + conn;

	return (unsigned char)((x >> ((off & 7) * 8)) ^ (x >> 29));
}

static void give_back(unsigned bid)
{
	io_uring_buf_ring_add(br, bufs + (size_t)bid * BUFSZ, BUFSZ, bid,
			      io_uring_buf_ring_mask(NBUF), 0);
	io_uring_buf_ring_advance(br, 1);
}

static struct io_uring_sqe *sqe_get(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	if (!sqe) {
		io_uring_submit(&ring);
		sqe = io_uring_get_sqe(&ring);
	}
	CHECK(sqe, "no sqe");
	return sqe;
}

static void arm(struct conn *c, unsigned i)
{
	struct io_uring_sqe *sqe = sqe_get();

	io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	io_uring_sqe_set_data64(sqe, i);
	c->armed = 1;
}

static void send_next(struct conn *c, unsigned i)
{
	struct io_uring_sqe *sqe;
	unsigned bid;

	if (c->sending || c->qh == c->qt)
		return;
	bid = c->q_bid[c->qh % c->qcap];
	sqe = sqe_get();
	io_uring_prep_send(sqe, c->fd, bufs + (size_t)bid * BUFSZ + c->sent_off,
			   c->q_len[c->qh % c->qcap] - c->sent_off, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, UD_SEND | i);
	c->sending = 1;
}

static long vm_hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* The clients: send each connection's share, check what comes back. */
static int clients(struct sockaddr_in *sa, unsigned nconn,
		   unsigned long long per)
{
	struct pollfd *p = calloc(nconn, sizeof(*p));
	unsigned long long *out = calloc(nconn, sizeof(*out));
	unsigned long long *in = calloc(nconn, sizeof(*in));
	unsigned char buf[16384];
	unsigned done = 0;

	if (!p || !out || !in)
		return 2;
	for (unsigned i = 0; i < nconn; i++) {
		p[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (p[i].fd < 0)
			return 3;
		if (connect(p[i].fd, (struct sockaddr *)sa, sizeof(*sa)) &&
		    errno != EINPROGRESS)
			return 4;
		p[i].events = POLLIN | POLLOUT;
	}
	while (done < nconn) {
		if (poll(p, nconn, 20000) <= 0)
			return 5;
		for (unsigned i = 0; i < nconn; i++) {
			if (p[i].revents & POLLOUT && out[i] < per) {
				size_t n = per - out[i] < sizeof(buf) ?
					   per - out[i] : sizeof(buf);

				for (size_t k = 0; k < n; k++)
					buf[k] = pat(i, out[i] + k);
				ssize_t w = write(p[i].fd, buf, n);

				if (w > 0)
					out[i] += (size_t)w;
				else if (w < 0 && errno != EAGAIN)
					return 6;
				if (out[i] == per)
					p[i].events = POLLIN;
			}
			if (p[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t r = read(p[i].fd, buf, sizeof(buf));

				if (r < 0 && errno == EAGAIN)
					continue;
				if (r <= 0)
					return 7;
				for (ssize_t k = 0; k < r; k++)
					if (buf[k] != pat(i, in[i] + k)) {
						fprintf(stderr, "conn %u: byte %llu wrong\n",
							i, in[i] + k);
						return 8;
					}
				in[i] += (size_t)r;
				if (in[i] == per) {
					close(p[i].fd);
					p[i].fd = -1;
					done++;
				}
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *ec = getenv("LIBURING_RS_LOAD_CONNS");
	const char *em = getenv("LIBURING_RS_LOAD_MIB");
	unsigned nconn = ec ? (unsigned)atoi(ec) : 64;
	unsigned long long total = (em ? atoll(em) : 8) << 20;
	unsigned long long per, echoed = 0;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct io_uring_params prm = { .flags = IORING_SETUP_CQSIZE,
				       .cq_entries = 16384 };
	struct conn *c;
	struct rlimit rl;
	int lfd, err, st, max_threads = 0, nobufs = 0, live;
	long long t0;
	pid_t pid;

	(void)argc;
	tu_set_name(argv[0]);
	signal(SIGPIPE, SIG_IGN);
	if (nconn < 1 || nconn > 20000)
		FAIL("LIBURING_RS_LOAD_CONNS out of range");
	per = total / nconn;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 2 * nconn + 64) {
		rl.rlim_cur = rl.rlim_max < 2 * nconn + 64 ? rl.rlim_max
							   : 2 * nconn + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur < 2 * nconn + 64)
			SKIP("need %u fds", 2 * nconn + 64);
	}
	if (io_uring_queue_init_params(4096, &ring, &prm) < 0)
		SKIP("no ring");
	bufs = malloc((size_t)NBUF * BUFSZ);
	CHECK(bufs, "malloc");
	br = io_uring_setup_buf_ring(&ring, NBUF, BGID, 0, &err);
	if (!br)
		SKIP("no buffer rings: %s", strerror(-err));
	for (unsigned i = 0; i < NBUF; i++)
		give_back(i);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(lfd >= 0 && !bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) &&
	      !listen(lfd, 4096) &&
	      !getsockname(lfd, (struct sockaddr *)&sa, &sl), "listen");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		io_uring_queue_exit(&ring);
		_exit(clients(&sa, nconn, per));
	}
	c = calloc(nconn, sizeof(*c));
	CHECK(c, "calloc");
	for (unsigned i = 0; i < nconn; i++) {
		c[i].fd = accept(lfd, NULL, NULL);
		CHECK(c[i].fd >= 0, "accept: %s", strerror(errno));
		c[i].qcap = NBUF + 1;
		c[i].q_bid = malloc(c[i].qcap * sizeof(*c[i].q_bid));
		c[i].q_len = malloc(c[i].qcap * sizeof(*c[i].q_len));
		CHECK(c[i].q_bid && c[i].q_len, "malloc");
		arm(&c[i], i);
	}
	close(lfd);
	t0 = tu_now_ns();
	io_uring_submit(&ring);
	live = (int)nconn;
	while (live > 0) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 20 };
		unsigned head, n = 0;

		CHECK_EQ(io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts,
							  NULL) >= 0, 1,
			 "server stalled");
		io_uring_for_each_cqe(&ring, head, cqe) {
			__u64 ud = cqe->user_data;
			unsigned i = (unsigned)(ud & 0xffffffff);
			struct conn *k = &c[i];

			n++;
			if (ud & UD_SEND) {
				CHECK(cqe->res > 0, "send: %d", cqe->res);
				k->sending = 0;
				k->sent_off += cqe->res;
				echoed += (unsigned)cqe->res;
				if (k->sent_off == k->q_len[k->qh % k->qcap]) {
					give_back(k->q_bid[k->qh % k->qcap]);
					k->qh++;
					k->sent_off = 0;
				}
				send_next(k, i);
			} else if (cqe->res > 0) {
				CHECK(cqe->flags & IORING_CQE_F_BUFFER, "no buffer");
				k->q_bid[k->qt % k->qcap] = cqe->flags >> 16;
				k->q_len[k->qt % k->qcap] = cqe->res;
				k->qt++;
				if (!(cqe->flags & IORING_CQE_F_MORE))
					arm(k, i);
				send_next(k, i);
			} else if (cqe->res == -ENOBUFS) {
				nobufs++;
				arm(k, i);
			} else {
				CHECK_EQ(cqe->res, 0, "recv");
				k->eof = 1;
			}
			if (k->eof && !k->sending && k->qh == k->qt && k->fd >= 0) {
				close(k->fd);
				k->fd = -1;
				live--;
			}
		}
		io_uring_cq_advance(&ring, n);
		if ((echoed >> 20) != ((echoed - 1) >> 20) || live == 0) {
			int t = tu_count_threads();

			if (t > max_threads)
				max_threads = t;
		}
	}
	double secs = (double)(tu_now_ns() - t0) / 1e9;

	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "clients: status %#x", st);
	CHECK_EQ(echoed, per * nconn, "bytes echoed");
	/* the reactor and this thread; no worker for readiness waits */
	CHECK(max_threads <= 2 + 2 * (int)sysconf(_SC_NPROCESSORS_ONLN),
	      "threads: %d", max_threads);
	fprintf(stderr, "%u connections, %llu MiB echoed and verified in %.2f s"
		" (%.0f MiB/s), %d ENOBUFS re-arms, VmHWM %ld kB, at most %d threads\n",
		nconn, echoed >> 20, secs, (double)(echoed >> 20) / secs, nobufs,
		vm_hwm_kb(), max_threads);
	io_uring_free_buf_ring(&ring, br, NBUF, BGID);
	io_uring_queue_exit(&ring);
	for (unsigned i = 0; i < nconn; i++) {
		free(c[i].q_bid);
		free(c[i].q_len);
	}
	free(c);
	free(bufs);
	tu_pass();
	return 0;
}
