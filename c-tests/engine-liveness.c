/* SPDX-License-Identifier: MIT */
/*
 * Liveness: nothing a ring does stalls another ring, and a ring with
 * requests blocked in workers goes away promptly.
 *
 *  (a) ACCEPT on a blocking listener that another thread also accept()s
 *      on: a 10 ms timeout on a second ring still fires in time after each
 *      connection, and the ACCEPT takes a connection in the end.
 *  (b) READ of a pty slave that another thread also read()s: as (a).
 *  (c) CONNECT on a blocking socket: O_NONBLOCK is never seen set by a
 *      thread watching the file's flags; results 0 and -ECONNREFUSED.
 *  (d) io_uring_queue_exit with a SPLICE from an empty pipe, a READ of a
 *      FIFO nobody writes to, an ACCEPT, a CONNECT of a blocking socket
 *      and the second SPLICE of a chain pending returns within 100 ms and
 *      leaves no thread, fd or mapping behind.
 *  (e) ASYNC_CANCEL of a SPLICE blocked in a worker: -EALREADY for the
 *      cancel, and the SPLICE ends with what the kernel reports; of an
 *      IOSQE_ASYNC READ of an empty pipe: 0 and -ECANCELED; of a CONNECT
 *      of a blocking socket that waits: 0 and -ECANCELED (-ETIME and
 *      -ECANCELED with a link timeout).
 *
 * The kernel's answers are the reference; the same assertions hold there.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include "op-util.h"

/* The bound for a 10 ms timeout to fire, and for a ring exit. */
#define BOUND_MS 100
#define ROUNDS 60

static double ms_since(long long t0)
{
	return (tu_now_ns() - t0) / 1e6;
}

/* A 10 ms timeout on 'ring' completes within BOUND_MS. */
static void timeout_fires(struct io_uring *ring, const char *what, int i)
{
	struct __kernel_timespec ts = { .tv_nsec = 10000000 };
	struct __kernel_timespec bound = { .tv_sec = 1 };
	struct io_uring_cqe *cqe;
	long long t0 = tu_now_ns();
	int ret;

	io_uring_prep_timeout(op_sqe(ring), &ts, 0, 0);
	op_submit(ring, 1);
	ret = io_uring_wait_cqe_timeout(ring, &cqe, &bound);
	if (ret < 0)
		FAIL("%s, round %d: 10 ms timeout not done after 1 s", what,
		     i);
	CHECK_EQ(cqe->res, -ETIME, "timeout");
	io_uring_cqe_seen(ring, cqe);
	if (ms_since(t0) > BOUND_MS)
		FAIL("%s, round %d: 10 ms timeout took %.1f ms", what, i,
		     ms_since(t0));
}

/* Peeks for the CQE of 'ud' on 'ring'; returns 1 and its result if there. */
static int peek_res(struct io_uring *ring, __u64 ud, int *res)
{
	struct io_uring_cqe *cqe;

	if (io_uring_peek_cqe(ring, &cqe) != 0)
		return 0;
	if (cqe->user_data != ud)
		FAIL("unexpected CQE %llu (%d)",
		     (unsigned long long)cqe->user_data, cqe->res);
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return 1;
}

/* Waits up to a second for the CQE of 'ud'. */
static int wait_res(struct io_uring *ring, __u64 ud)
{
	struct __kernel_timespec bound = { .tv_sec = 1 };
	struct io_uring_cqe *cqe;
	int res;

	if (io_uring_wait_cqe_timeout(ring, &cqe, &bound) < 0)
		FAIL("no CQE for %llu after 1 s", (unsigned long long)ud);
	CHECK(peek_res(ring, ud, &res), "CQE vanished");
	return res;
}

/* A thread blocked in a system call, stopped by a signal without
 * SA_RESTART. */
struct racer {
	pthread_t t;
	int fd;
	atomic_int stop;
	atomic_int done;
	atomic_int taken;
};

static void on_usr1(int sig)
{
	(void)sig;
}

static void racer_stop(struct racer *r)
{
	atomic_store(&r->stop, 1);
	while (!atomic_load(&r->done)) {
		pthread_kill(r->t, SIGUSR1);
		usleep(1000);
	}
	pthread_join(r->t, NULL);
}

static void *accept_racer(void *p)
{
	struct racer *r = p;

	while (!atomic_load(&r->stop)) {
		int c = accept(r->fd, NULL, NULL);

		if (c >= 0) {
			atomic_fetch_add(&r->taken, 1);
			close(c);
		} else if (errno != EINTR) {
			break;
		}
	}
	atomic_store(&r->done, 1);
	return NULL;
}

static int listener(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0, "socket: %s", strerror(errno));
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(!bind(fd, (struct sockaddr *)sa, sizeof(*sa)), "bind: %s",
	      strerror(errno));
	CHECK(!listen(fd, 256), "listen: %s", strerror(errno));
	CHECK(!getsockname(fd, (struct sockaddr *)sa, &len), "getsockname");
	return fd;
}

static int connect_to(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0, "socket: %s", strerror(errno));
	CHECK(!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)),
	      "connect: %s", strerror(errno));
	return fd;
}

static void test_accept_race(void)
{
	struct io_uring ring, tring;
	struct racer r = { 0 };
	struct io_uring_sqe *sqe;
	struct sockaddr_in sa;
	int lfd = listener(&sa), res, got = 0, clients[ROUNDS + 4], n = 0;

	op_ring(&ring, 8, 0);
	op_ring(&tring, 8, 0);
	r.fd = lfd;
	CHECK(!pthread_create(&r.t, NULL, accept_racer, &r), "pthread_create");
	sqe = op_sqe(&ring);
	io_uring_prep_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
	sqe->user_data = 1;
	op_submit(&ring, 1);
	for (int i = 0; i < ROUNDS; i++) {
		clients[n++] = connect_to(&sa);
		timeout_fires(&tring, "accept race", i);
		if (peek_res(&ring, 1, &res)) {
			CHECK(res >= 0, "ACCEPT: %s", strerror(-res));
			close(res);
			got++;
			sqe = op_sqe(&ring);
			io_uring_prep_accept(sqe, lfd, NULL, NULL,
					     SOCK_CLOEXEC);
			sqe->user_data = 1;
			op_submit(&ring, 1);
		}
	}
	racer_stop(&r);
	/* Whatever the racer left queued, one more connection completes the
	 * pending ACCEPT now. */
	clients[n++] = connect_to(&sa);
	res = wait_res(&ring, 1);
	CHECK(res >= 0, "last ACCEPT: %s", strerror(-res));
	close(res);
	CHECK(got + atomic_load(&r.taken) <= ROUNDS, "more accepts than "
	      "connections");
	for (int i = 0; i < n; i++)
		close(clients[i]);
	io_uring_queue_exit(&tring);
	io_uring_queue_exit(&ring);
	close(lfd);
}

static void *read_racer(void *p)
{
	struct racer *r = p;
	char c;

	while (!atomic_load(&r->stop)) {
		ssize_t n = read(r->fd, &c, 1);

		if (n == 1)
			atomic_fetch_add(&r->taken, 1);
		else if (n < 0 && errno != EINTR)
			break;
	}
	atomic_store(&r->done, 1);
	return NULL;
}

/*
 * The READs come from a thread of their own that never waits in
 * io_uring_enter on their ring: the kernel runs a READ of a tty that
 * polled readable as task work of its submitter, where the read waits
 * (ttys ignore IOCB_NOWAIT) if the racer took the byte, so that thread
 * must not be the one writing. On the engine the ring's readiness set is
 * then served by the reactor, which carries the other ring's timeouts.
 */
struct pty_reader {
	struct io_uring ring;
	int fd;
	atomic_int stop;
	atomic_int done;
	atomic_int got;
	atomic_int bad;
};

static void *pty_reader(void *p)
{
	struct pty_reader *pr = p;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	char buf[64];
	int pending = 0;

	for (;;) {
		if (!pending && !atomic_load(&pr->stop)) {
			sqe = io_uring_get_sqe(&pr->ring);
			io_uring_prep_read(sqe, pr->fd, buf, sizeof(buf), 0);
			sqe->user_data = 1;
			if (io_uring_submit(&pr->ring) != 1) {
				atomic_store(&pr->bad, -1);
				break;
			}
			pending = 1;
		}
		if (io_uring_peek_cqe(&pr->ring, &cqe) == 0) {
			/* The kernel's task work read ends with EINTR when
			 * a wait is cut short; that is no byte. */
			if (cqe->res > 0)
				atomic_fetch_add(&pr->got, cqe->res);
			else if (cqe->res != -EINTR)
				atomic_store(&pr->bad, cqe->res);
			io_uring_cqe_seen(&pr->ring, cqe);
			pending = 0;
			continue;
		}
		if (!pending)
			break;
		usleep(500);
	}
	atomic_store(&pr->done, 1);
	return NULL;
}

static void test_pty_race(void)
{
	struct io_uring tring;
	struct pty_reader pr = { 0 };
	struct racer r = { 0 };
	struct termios tio;
	pthread_t rt;
	int m, s, total;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		SKIP("posix_openpt: %s", strerror(errno));
	CHECK(!grantpt(m) && !unlockpt(m), "grantpt/unlockpt");
	s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	CHECK(s >= 0, "open pty slave: %s", strerror(errno));
	CHECK(!tcgetattr(s, &tio), "tcgetattr");
	cfmakeraw(&tio);
	CHECK(!tcsetattr(s, TCSANOW, &tio), "tcsetattr");
	op_ring(&pr.ring, 8, 0);
	op_ring(&tring, 8, 0);
	pr.fd = s;
	r.fd = s;
	CHECK(!pthread_create(&r.t, NULL, read_racer, &r), "pthread_create");
	CHECK(!pthread_create(&rt, NULL, pty_reader, &pr), "pthread_create");
	for (int i = 0; i < ROUNDS; i++) {
		CHECK(write(m, "x", 1) == 1, "write master: %s",
		      strerror(errno));
		timeout_fires(&tring, "pty race", i);
	}
	racer_stop(&r);
	atomic_store(&pr.stop, 1);
	/* The racer is gone: the READ still pending takes this byte. */
	CHECK(write(m, "y", 1) == 1, "write master");
	for (int i = 0; i < 200 && !atomic_load(&pr.done); i++)
		usleep(5000);
	CHECK(atomic_load(&pr.done), "the pending READ never completed");
	pthread_join(rt, NULL);
	CHECK_EQ(atomic_load(&pr.bad), 0, "READ result");
	total = atomic_load(&pr.got) + atomic_load(&r.taken);
	CHECK_EQ(total, ROUNDS + 1, "bytes read");
	io_uring_queue_exit(&tring);
	io_uring_queue_exit(&pr.ring);
	close(s);
	close(m);
}

struct watcher {
	atomic_int fd;
	atomic_int stop;
	atomic_int seen;
	atomic_long looks;
};

static void *flags_watcher(void *p)
{
	struct watcher *w = p;

	while (!atomic_load(&w->stop)) {
		int fl = fcntl(atomic_load(&w->fd), F_GETFL);

		if (fl >= 0 && (fl & O_NONBLOCK))
			atomic_store(&w->seen, 1);
		atomic_fetch_add(&w->looks, 1);
	}
	return NULL;
}

static void test_connect_flags(void)
{
	struct io_uring ring;
	struct watcher w = { 0 };
	struct sockaddr_in sa, closed;
	pthread_t t;
	int lfd = listener(&sa), cfd, c;

	/* A port nobody listens on: bound but not listening. */
	int dead = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof(closed);

	memset(&closed, 0, sizeof(closed));
	closed.sin_family = AF_INET;
	closed.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(!bind(dead, (struct sockaddr *)&closed, sizeof(closed)), "bind");
	CHECK(!getsockname(dead, (struct sockaddr *)&closed, &len), "name");
	op_ring(&ring, 8, 0);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	atomic_store(&w.fd, cfd);
	CHECK(!pthread_create(&t, NULL, flags_watcher, &w), "pthread_create");
	while (!atomic_load(&w.looks))
		usleep(100);
	for (int i = 0; i < 200; i++) {
		int refuse = i & 1;

		struct io_uring_sqe *sqe = op_sqe(&ring);

		io_uring_prep_connect(sqe, cfd,
				      (struct sockaddr *)(refuse ? &closed : &sa),
				      sizeof(sa));
		sqe->user_data = 3;
		op_submit(&ring, 1);
		c = wait_res(&ring, 3);
		CHECK_EQ(c, refuse ? -ECONNREFUSED : 0, "CONNECT");
		CHECK(!(fcntl(cfd, F_GETFL) & O_NONBLOCK), "left O_NONBLOCK");
		if (!refuse) {
			int a = accept(lfd, NULL, NULL);

			CHECK(a >= 0, "accept: %s", strerror(errno));
			close(a);
		}
		/* A fresh socket for the next round, at the same number so
		 * the watcher keeps looking at it. */
		int n = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		CHECK(n >= 0 && dup3(n, cfd, O_CLOEXEC) == cfd, "dup3");
		close(n);
	}
	atomic_store(&w.stop, 1);
	pthread_join(t, NULL);
	if (atomic_load(&w.seen))
		FAIL("another thread saw O_NONBLOCK set on the socket during "
		     "CONNECT");
	io_uring_queue_exit(&ring);
	close(cfd);
	close(dead);
	close(lfd);
}

/* This process's threads, less the kernel's io_uring threads: older
 * kernels keep an idle one for a while after its ring went, and they are
 * no thread of the program's or the engine's. */
static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d, "opendir /proc/self/task");
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' && !tu_kernel_io_thread(e->d_name);
	closedir(d);
	return n;
}

/* Waits (up to 2 s) for the thread count to come back to 'want'. */
static int settle_threads(int want)
{
	int n = count_threads();

	for (int i = 0; i < 200 && n > want; i++) {
		usleep(10000);
		n = count_threads();
	}
	return n;
}

/*
 * A listener whose accept queue is full: SYNs to it are dropped, so a
 * connect(2) to it waits. The queued connections' sockets are in fill[].
 */
static int full_listener(struct sockaddr_in *sa, int fill[2])
{
	socklen_t len = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0, "socket");
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(!bind(fd, (struct sockaddr *)sa, sizeof(*sa)), "bind");
	CHECK(!listen(fd, 0), "listen");
	CHECK(!getsockname(fd, (struct sockaddr *)sa, &len), "getsockname");
	/* A backlog of 0 holds one connection; the second connect's SYN is
	 * dropped and it stays in progress. */
	for (int i = 0; i < 2; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
				 SOCK_CLOEXEC, 0);
		CHECK(fill[i] >= 0, "socket");
		connect(fill[i], (struct sockaddr *)sa, sizeof(*sa));
	}
	usleep(20000);
	return fd;
}

/* One ring with a SPLICE from an empty pipe, a READ of a FIFO nobody
 * writes to, an ACCEPT and a CONNECT of a blocking socket pending: its
 * exit returns within BOUND_MS. */
static void exit_round(void)
{
	struct io_uring ring;
	struct sockaddr_in sa, full;
	const char *fifo = op_path("fifo");
	int p[2], q[2], r[2], ff, lfd, flfd, fill[2], cfd;
	struct io_uring_sqe *sqe;
	char buf[16];
	long long t0;

	CHECK(!pipe2(p, O_CLOEXEC) && !pipe2(q, O_CLOEXEC), "pipe");
	CHECK(!pipe2(r, O_CLOEXEC) && write(r[1], "x", 1) == 1, "pipe");
	CHECK(!mkfifo(fifo, 0600), "mkfifo: %s", strerror(errno));
	/* O_RDWR: the FIFO is open, nobody ever writes, a read waits. */
	ff = open(fifo, O_RDWR | O_CLOEXEC);
	CHECK(ff >= 0, "open fifo: %s", strerror(errno));
	lfd = listener(&sa);
	flfd = full_listener(&full, fill);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(cfd >= 0, "socket");

	op_ring(&ring, 8, 0);
	io_uring_prep_splice(op_sqe(&ring), p[0], -1, q[1], -1, 16, 0);
	io_uring_prep_read(op_sqe(&ring), ff, buf, sizeof(buf), 0);
	io_uring_prep_accept(op_sqe(&ring), lfd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_prep_connect(op_sqe(&ring), cfd, (struct sockaddr *)&full,
			      sizeof(full));
	/* A chain: the first SPLICE moves the byte there is, the second,
	 * started by the worker that ran the first, waits on the empty pipe. */
	sqe = op_sqe(&ring);
	io_uring_prep_splice(sqe, r[0], -1, q[1], -1, 1, 0);
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_prep_splice(op_sqe(&ring), p[0], -1, q[1], -1, 16, 0);
	op_submit(&ring, 6);
	usleep(50000);
	/* The first SPLICE of the chain is done. */
	CHECK_EQ(io_uring_cq_ready(&ring), 1, "completions before exit");
	io_uring_cq_advance(&ring, 1);
	t0 = tu_now_ns();
	io_uring_queue_exit(&ring);
	if (ms_since(t0) > BOUND_MS)
		FAIL("io_uring_queue_exit took %.1f ms", ms_since(t0));

	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(r[0]);
	close(r[1]);
	close(ff);
	close(lfd);
	close(cfd);
	close(fill[0]);
	close(fill[1]);
	close(flfd);
	unlink(fifo);
}

static void test_exit(void)
{
	int threads, fds, maps, now;

	/* A first round warms up: the allocators' first arenas and the thread
	 * stacks glibc keeps cached for reuse stay mapped after it. */
	exit_round();
	threads = settle_threads(1);
	fds = tu_count_fds();
	maps = tu_count_maps();
	for (int i = 0; i < 8; i++) {
		exit_round();
		CHECK_EQ(settle_threads(threads), threads, "threads after exit");
		CHECK_EQ(tu_count_fds(), fds, "fds after exit");
	}
	/* A round may run one more worker at a time than the first did (the
	 * timing of a worker's exit decides), and glibc then caches one more
	 * stack: two lines, stack and guard page. Two such are allowed; a leak
	 * would add lines in each of the eight rounds. */
	now = tu_count_maps();
	CHECK(now <= maps + 4, "mappings after 8 ring exits: %d, before %d",
	      now, maps);
}

/* Once the request `target` had 50 ms to start, cancels it with a request
 * of user_data `ud` and reaps both CQEs: c[0] is the cancel's, c[1] the
 * target's. A cancel that finds nothing while the target is still
 * pending is tried again 50 ms later (up to 2 s): on a loaded machine the
 * kernel's request may not have reached io-wq yet. */
static void cancel_later(struct io_uring *ring, __u64 target, __u64 ud, struct op_cqe c[2])
{
	int have_target = 0;

	for (int tries = 0;; tries++) {
		struct io_uring_sqe *sqe;
		struct op_cqe x;

		usleep(50000);
		sqe = op_sqe(ring);
		io_uring_prep_cancel64(sqe, target, 0);
		sqe->user_data = ud;
		op_submit(ring, 1);
		for (;;) {
			x = op_wait(ring);
			if (x.user_data != target)
				break;
			CHECK(!have_target, "a second CQE for request %llu", (unsigned long long)target);
			c[1] = x;
			have_target = 1;
		}
		CHECK_EQ(x.user_data, ud, "cancel's CQE");
		c[0] = x;
		if (x.res != -ENOENT || have_target || tries == 40)
			break;
	}
	if (!have_target)
		c[1] = op_wait(ring);
	CHECK_EQ(c[1].user_data, target, "cancelled request's CQE");
}

static void test_cancel_running(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct op_cqe c[2];
	char buf[16];
	int p[2], q[2];

	CHECK(!pipe2(p, O_CLOEXEC) && !pipe2(q, O_CLOEXEC), "pipe");
	op_ring(&ring, 8, 0);
	sqe = op_sqe(&ring);
	io_uring_prep_splice(sqe, p[0], -1, q[1], -1, 16, 0);
	sqe->user_data = 1;
	op_submit(&ring, 1);
	cancel_later(&ring, 1, 2, c);
	CHECK_EQ(c[0].res, -EALREADY, "ASYNC_CANCEL of a running SPLICE");
	/* Linux 6.18's splice reports the interrupt as -ERESTARTSYS (as the
	 * engine does); 6.1 and 6.12 report -EINTR. */
	CHECK(c[1].res == -512 || (c[1].res == -EINTR && !tu_on_engine()),
	      "interrupted SPLICE: %d", c[1].res);

	/* A READ of a pipe with IOSQE_ASYNC does not hold a worker: it waits
	 * for readiness (the kernel's io-wq arms a poll for it), so it is
	 * still taken back. */
	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, p[0], buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = 3;
	op_submit(&ring, 1);
	cancel_later(&ring, 3, 4, c);
	CHECK_EQ(c[0].res, 0, "ASYNC_CANCEL of an IOSQE_ASYNC pipe READ");
	CHECK_EQ(c[1].res, -ECANCELED, "cancelled READ");
	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/*
 * CONNECT of a blocking socket to a listener whose queue is full waits:
 * the kernel in a poll, the engine on a worker. A link timeout and an
 * ASYNC_CANCEL both take it back: -ECANCELED, with -ETIME for the link
 * timeout and 0 for the cancel (liburing's connect test does the first).
 */
static void test_cancel_connect(void)
{
	struct __kernel_timespec ts = { .tv_nsec = 100000 };
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	struct sockaddr_in full;
	struct op_cqe c[2];
	int flfd, fill[2], cfd;

	flfd = full_listener(&full, fill);
	op_ring(&ring, 8, 0);
	for (int round = 0; round < 2; round++) {
		cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(cfd >= 0, "socket");
		sqe = op_sqe(&ring);
		io_uring_prep_connect(sqe, cfd, (struct sockaddr *)&full,
				      sizeof(full));
		sqe->user_data = 1;
		if (round == 0) {
			sqe->flags |= IOSQE_IO_LINK;
			sqe = op_sqe(&ring);
			io_uring_prep_link_timeout(sqe, &ts, 0);
			sqe->user_data = 2;
			op_submit(&ring, 2);
		} else {
			op_submit(&ring, 1);
			usleep(50000);
			sqe = op_sqe(&ring);
			io_uring_prep_cancel64(sqe, 1, 0);
			sqe->user_data = 2;
			op_submit(&ring, 1);
		}
		op_wait_n(&ring, c, 2);
		CHECK_EQ(c[0].res, -ECANCELED, "cancelled CONNECT");
		CHECK_EQ(c[1].res, round == 0 ? -ETIME : 0,
			 round == 0 ? "link timeout" : "ASYNC_CANCEL of CONNECT");
		close(cfd);
	}
	io_uring_queue_exit(&ring);
	close(fill[0]);
	close(fill[1]);
	close(flfd);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	/* One letter per part, (a) to (e); all of them by default. */
	const char *parts = argc > 1 ? argv[1] : "abcde";

	tu_set_name(argv[0]);
	op_mkdtemp();
	/* No SA_RESTART: a racer's blocking call ends when told to stop. */
	sigaction(SIGUSR1, &sa, NULL);
	if (strchr(parts, 'd'))
		test_exit();
	if (strchr(parts, 'e')) {
		test_cancel_running();
		test_cancel_connect();
	}
	if (strchr(parts, 'a'))
		test_accept_race();
	if (strchr(parts, 'b'))
		test_pty_race();
	if (strchr(parts, 'c'))
		test_connect_flags();
	return tu_done();
}
