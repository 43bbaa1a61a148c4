/*
 * Loopback TCP echo: round trips per second over C connections, with the
 * echo server driven by io_uring (RECV then SEND per connection; kernel or
 * userspace engine ring, per LIBURING_RS_ENGINE) or by a plain epoll loop.
 * The client is the same epoll loop thread in both cases: it keeps one
 * 64-byte message in flight per connection for BENCH_SECS (default 1).
 *
 *   echo uring|epoll C...   prints "echo impl=... conns=C rt_per_sec=X"
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "liburing.h"
#include "common.h"

#define MSG 64
#define MAXC 256

static int srv[MAXC], cli[MAXC], nconn;
static volatile int stop;
static double secs;

static void make_conns(int n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(sa);
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, MAXC) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &l))
		die("listener", errno);
	for (int i = 0; i < n; i++) {
		cli[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (cli[i] < 0 || connect(cli[i], (struct sockaddr *)&sa, sizeof(sa)))
			die("connect", errno);
		srv[i] = accept(lfd, NULL, NULL);
		if (srv[i] < 0)
			die("accept", errno);
		setsockopt(cli[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(srv[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	close(lfd);
	nconn = n;
}

/* Client: one message in flight per connection; counts round trips. */
static void *client(void *arg)
{
	static char buf[MSG];
	long long *trips = arg;
	int ep = epoll_create1(0);
	struct epoll_event evs[64];
	double end;

	for (int i = 0; i < nconn; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };

		epoll_ctl(ep, EPOLL_CTL_ADD, cli[i], &e);
		if (write(cli[i], buf, MSG) != MSG)
			die("client write", errno);
	}
	end = now_sec() + secs;
	while (now_sec() < end) {
		int n = epoll_wait(ep, evs, 64, 100);

		for (int k = 0; k < n; k++) {
			int i = evs[k].data.u32, got = 0;

			while (got < MSG) {
				int r = read(cli[i], buf, MSG - got);

				if (r <= 0)
					die("client read", errno);
				got += r;
			}
			++*trips;
			if (write(cli[i], buf, MSG) != MSG)
				die("client write", errno);
		}
	}
	stop = 1;
	for (int i = 0; i < nconn; i++)
		shutdown(cli[i], SHUT_WR);
	close(ep);
	return NULL;
}

static void serve_epoll(void)
{
	static char buf[MSG];
	struct epoll_event evs[64];
	int ep = epoll_create1(0), open = nconn;

	for (int i = 0; i < nconn; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };

		epoll_ctl(ep, EPOLL_CTL_ADD, srv[i], &e);
	}
	while (open > 0) {
		int n = epoll_wait(ep, evs, 64, -1);

		for (int k = 0; k < n; k++) {
			int i = evs[k].data.u32, r = read(srv[i], buf, MSG);

			if (r <= 0) {
				epoll_ctl(ep, EPOLL_CTL_DEL, srv[i], NULL);
				open--;
			} else if (write(srv[i], buf, r) != r) {
				die("server write", errno);
			}
		}
	}
	close(ep);
}

static void serve_uring(void)
{
	static char bufs[MAXC][MSG];
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int open = nconn, ret = io_uring_queue_init(2 * MAXC, &ring, 0);

	if (ret < 0)
		die("queue_init", ret);
	/* user_data: connection index, bit 16 set for a send */
	for (int i = 0; i < nconn; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_recv(sqe, srv[i], bufs[i], MSG, 0);
		io_uring_sqe_set_data64(sqe, i);
	}
	while (open > 0) {
		unsigned head, seen = 0;

		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR)
			die("submit_and_wait", ret);
		io_uring_for_each_cqe(&ring, head, cqe) {
			int i = cqe->user_data & 0xffff, send = cqe->user_data >> 16;
			struct io_uring_sqe *sqe;

			seen++;
			if (cqe->res <= 0) {
				if (!send)
					open--;
				continue;
			}
			sqe = io_uring_get_sqe(&ring);
			if (send)
				io_uring_prep_recv(sqe, srv[i], bufs[i], MSG, 0);
			else
				io_uring_prep_send(sqe, srv[i], bufs[i], cqe->res, 0);
			io_uring_sqe_set_data64(sqe, i | (send ? 0 : 1 << 16));
		}
		io_uring_cq_advance(&ring, seen);
	}
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	int uring;

	if (argc < 3)
		return fprintf(stderr, "usage: echo uring|epoll C...\n"), 2;
	uring = !strcmp(argv[1], "uring");
	secs = env_double("BENCH_SECS", 1);
	for (int a = 2; a < argc; a++) {
		long long trips = 0;
		pthread_t t;
		int n = atoi(argv[a]);

		if (n < 1 || n > MAXC)
			return fprintf(stderr, "bad connection count %d\n", n), 2;
		make_conns(n);
		stop = 0;
		pthread_create(&t, NULL, client, &trips);
		if (uring)
			serve_uring();
		else
			serve_epoll();
		pthread_join(t, NULL);
		for (int i = 0; i < n; i++) {
			close(srv[i]);
			close(cli[i]);
		}
		printf("echo impl=%s conns=%d rt_per_sec=%.0f\n", argv[1], n, trips / secs);
	}
	return 0;
}
