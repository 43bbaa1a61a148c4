/* SPDX-License-Identifier: MIT */
/*
 * A ring shared across fork(): the ring's memory is shared, so parent and
 * child see one SQ and one CQ, and each runs what it submits with its own
 * fds. Checked here:
 *  - a child asleep in a wait gets the CQE its parent posts, and so does a
 *    parent asleep while the child posts, also when the sleeper waits on
 *    a readiness request of its own (a pending socket read);
 *  - the child runs a read on a pipe only it has;
 *  - both processes posting at once (timeouts firing in each) lose and
 *    duplicate no CQE;
 *  - a SINGLE_ISSUER ring refuses the child (-EEXIST), as the kernel does;
 *  - an SQPOLL ring's thread, asleep, wakes for and runs what the child
 *    queues;
 *  - the child holds none of the files the parent's pending requests keep
 *    open (the peer of a socket sees its end once the parent closes it);
 *  - a child that exits without using the ring changes nothing for the
 *    parent.
 * The struct io_uring lives in shared memory, as a program sharing a ring
 * across fork() keeps it, and a process-shared mutex orders the two
 * processes' submissions.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "liburing.h"
#include "test-util.h"

#define N_TIMEOUTS 200

struct shm {
	struct io_uring ring;
	struct io_uring sqpoll;
	pthread_mutex_t sq_lock;
};

static struct shm *shm;

static void submit_locked(void (*prep)(struct io_uring_sqe *, void *),
			  void *arg, uint64_t user_data)
{
	struct io_uring_sqe *sqe;
	int ret;

	pthread_mutex_lock(&shm->sq_lock);
	sqe = io_uring_get_sqe(&shm->ring);
	CHECK(sqe, "no SQE");
	prep(sqe, arg);
	sqe->user_data = user_data;
	ret = io_uring_submit(&shm->ring);
	pthread_mutex_unlock(&shm->sq_lock);
	CHECK_EQ(ret, 1, "submit");
}

static void prep_nop(struct io_uring_sqe *sqe, void *arg)
{
	(void)arg;
	io_uring_prep_nop(sqe);
}

/* arg: { fd, room for one int }; a read, of a socket or a pipe. */
static void prep_recv(struct io_uring_sqe *sqe, void *arg)
{
	int *fdbuf = arg;

	io_uring_prep_read(sqe, fdbuf[0], &fdbuf[1], sizeof(int), 0);
}

/* Waits (up to 2 s) for the next CQE, which must be `want`; consumes it. */
static int reap_one(uint64_t want, int *res)
{
	struct __kernel_timespec ts = { .tv_sec = 2 };
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe_timeout(&shm->ring, &cqe, &ts);

	if (ret)
		return ret;
	if (cqe->user_data != want) {
		fprintf(stderr, "got user_data %llu, want %llu\n",
			(unsigned long long)cqe->user_data,
			(unsigned long long)want);
		return -EPROTO;
	}
	if (res)
		*res = cqe->res;
	io_uring_cqe_seen(&shm->ring, cqe);
	return 0;
}

static int child_exit(int code)
{
	fflush(stderr);
	_exit(code);
}

static pid_t fork_checked(void)
{
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	return pid;
}

/*
 * A socketpair `sv` with a read of sv[0] pending (into fdbuf, user_data
 * `ud`) and a pipe `p`, then fork(): the child's pid, or 0 in the child.
 */
static pid_t read_pending_then_fork(int sv[2], int p[2], int fdbuf[2], uint64_t ud)
{
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv) && !pipe(p), "socketpair/pipe");
	fdbuf[0] = sv[0];
	submit_locked(prep_recv, fdbuf, ud);
	return fork_checked();
}

static void wait_child(pid_t pid, const char *what)
{
	int status;

	CHECK_EQ(waitpid(pid, &status, 0), pid, "waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("%s: child failed (status %#x)", what, status);
}

/* The child sleeps in a wait until the parent posts. */
static void parent_posts_child_waits(void)
{
	pid_t pid = fork_checked();

	if (!pid)
		child_exit(reap_one(1, NULL) ? 1 : 0);
	usleep(50 * 1000);
	submit_locked(prep_nop, NULL, 1);
	wait_child(pid, "child waiting for the parent's NOP");
	CHECK_EQ(io_uring_cq_ready(&shm->ring), 0, "CQEs left over");
}

/*
 * The parent sleeps, serving a pending socket read of its own, until the
 * child posts; before that the child runs a read on a pipe only it has.
 */
static void child_posts_parent_waits(void)
{
	int sv[2], sync_p[2], fdbuf[2] = { -1, 0 }, res;
	char c;
	pid_t pid;

	pid = read_pending_then_fork(sv, sync_p, fdbuf, 10);
	if (!pid) {
		int p[2], cbuf[2] = { -1, 0 }, val = 0x5a5a;

		if (pipe(p) || write(p[1], &val, sizeof(val)) != sizeof(val))
			child_exit(2);
		cbuf[0] = p[0];
		submit_locked(prep_recv, cbuf, 11);
		if (reap_one(11, &res) || res != sizeof(val) || cbuf[1] != val)
			child_exit(3);
		if (write(sync_p[1], "x", 1) != 1)
			child_exit(4);
		usleep(50 * 1000);
		submit_locked(prep_nop, NULL, 12);
		child_exit(0);
	}
	CHECK_EQ(read(sync_p[0], &c, 1), 1, "child's read done");
	CHECK_EQ(reap_one(12, NULL), 0, "parent waiting for the child's NOP");
	wait_child(pid, "child posting");
	CHECK_EQ(write(sv[1], "abcd", 4), 4, "write");
	CHECK_EQ(reap_one(10, &res), 0, "parent's own socket read");
	CHECK_EQ(res, 4, "socket read result");
	CHECK(!memcmp(&fdbuf[1], "abcd", 4), "socket read data");
	close(sv[0]);
	close(sv[1]);
	close(sync_p[0]);
	close(sync_p[1]);
}

/* The child sleeps serving its own pending socket read; the parent posts. */
static void parent_posts_child_serves(void)
{
	int sync_p[2];
	char c;
	pid_t pid;

	CHECK(!pipe(sync_p), "pipe");
	pid = fork_checked();
	if (!pid) {
		int sv[2], cbuf[2] = { -1, 0 }, res;

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			child_exit(2);
		cbuf[0] = sv[0];
		submit_locked(prep_recv, cbuf, 20);
		if (write(sync_p[1], "x", 1) != 1)
			child_exit(3);
		if (reap_one(21, NULL))
			child_exit(4);
		if (write(sv[1], "wxyz", 4) != 4)
			child_exit(5);
		if (reap_one(20, &res) || res != 4 || memcmp(&cbuf[1], "wxyz", 4))
			child_exit(6);
		child_exit(0);
	}
	CHECK_EQ(read(sync_p[0], &c, 1), 1, "child's read submitted");
	usleep(50 * 1000);
	submit_locked(prep_nop, NULL, 21);
	wait_child(pid, "child serving its socket read");
	close(sync_p[0]);
	close(sync_p[1]);
}

/*
 * The child holds none of the files its parent's requests keep open: once
 * the parent's pending read completes and the parent closes its socket,
 * the peer sees the end of the stream while the child still lives.
 */
static void child_keeps_no_request_files(void)
{
	int sv[2], go[2], fdbuf[2] = { -1, 0 }, res;
	struct pollfd pfd;
	char c;
	pid_t pid;

	pid = read_pending_then_fork(sv, go, fdbuf, 30);
	if (!pid) {
		close(sv[0]);
		close(sv[1]);
		close(go[1]);
		child_exit(read(go[0], &c, 1) < 0);
	}
	close(go[0]);
	CHECK_EQ(write(sv[1], "abcd", 4), 4, "write");
	CHECK_EQ(reap_one(30, &res), 0, "parent's read");
	CHECK_EQ(res, 4, "read result");
	close(sv[0]);
	pfd.fd = sv[1];
	pfd.events = POLLIN;
	CHECK_EQ(poll(&pfd, 1, 1000), 1, "peer readable after the close");
	CHECK_EQ(read(sv[1], &c, 1), 0, "end of stream with the child alive");
	close(go[1]);
	wait_child(pid, "child holding nothing");
	close(sv[1]);
}

static struct __kernel_timespec expiries[20];

static void prep_timeout(struct io_uring_sqe *sqe, void *arg)
{
	io_uring_prep_timeout(sqe, arg, 0, 0);
}

static void submit_timeouts(uint64_t base)
{
	for (int i = 0; i < N_TIMEOUTS; i++)
		submit_locked(prep_timeout, &expiries[i % 20], base + i);
}

/*
 * Waits (up to 5 s) until both processes' timeouts have all fired,
 * consuming nothing. A wait may end before its count: look again.
 */
static int wait_all_timeouts(void)
{
	long long end = tu_now_ns() + 5000000000LL;

	while (io_uring_cq_ready(&shm->ring) < 2 * N_TIMEOUTS) {
		struct __kernel_timespec ts = { .tv_nsec = 100000000 };
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqes(&shm->ring, &cqe, 2 * N_TIMEOUTS, &ts, NULL);

		if (ret && ret != -ETIME && ret != -EINTR)
			return ret;
		if (tu_now_ns() > end)
			return -ETIMEDOUT;
	}
	return 0;
}

/* Both processes' timeouts fire at once: each CQE arrives exactly once. */
static void both_post(void)
{
	static unsigned char seen[2][N_TIMEOUTS];
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	pid_t pid;

	for (int i = 0; i < 20; i++)
		expiries[i].tv_nsec = i * 100000;
	pid = fork_checked();
	if (!pid) {
		submit_timeouts(2000);
		child_exit(wait_all_timeouts() ? 1 : 0);
	}
	submit_timeouts(1000);
	CHECK_EQ(wait_all_timeouts(), 0, "wait for all timeouts");
	wait_child(pid, "child's timeouts");
	io_uring_for_each_cqe(&shm->ring, head, cqe) {
		uint64_t ud = cqe->user_data;
		int who = ud >= 2000;

		CHECK(ud >= 1000 && ud < 2000 + N_TIMEOUTS && ud % 1000 < N_TIMEOUTS,
		      "stray user_data %llu", (unsigned long long)ud);
		CHECK(!seen[who][ud % 1000]++, "user_data %llu twice",
		      (unsigned long long)ud);
		CHECK_EQ(cqe->res, -ETIME, "timeout result");
		n++;
	}
	io_uring_cq_advance(&shm->ring, n);
	CHECK_EQ(n, 2 * N_TIMEOUTS, "CQEs from both processes");
}

/* A SINGLE_ISSUER ring takes no submission from the child. */
static void single_issuer(void)
{
	struct io_uring ring;
	pid_t pid;
	int ret = io_uring_queue_init(4, &ring, IORING_SETUP_SINGLE_ISSUER);

	if (ret == -EINVAL) {
		tu_lacks("IORING_SETUP_SINGLE_ISSUER");
		return;
	}
	CHECK_EQ(ret, 0, "SINGLE_ISSUER setup");
	pid = fork_checked();
	if (!pid) {
		io_uring_prep_nop(io_uring_get_sqe(&ring));
		ret = io_uring_submit(&ring);
		if (ret != -EEXIST) {
			fprintf(stderr, "child submit: %d, want -EEXIST\n", ret);
			child_exit(1);
		}
		child_exit(0);
	}
	wait_child(pid, "SINGLE_ISSUER child");
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "parent submit");
	io_uring_queue_exit(&ring);
}

/* The child queues a NOP on an SQPOLL ring whose thread went to sleep. */
static void sqpoll_child(void)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL, .sq_thread_idle = 1 };
	struct __kernel_timespec ts = { .tv_sec = 2 };
	struct io_uring_cqe *cqe;
	struct io_uring *ring = &shm->sqpoll;
	pid_t pid;
	int ret = io_uring_queue_init_params(4, ring, &p);

	if (ret == -EPERM) {
		tu_lacks("IORING_SETUP_SQPOLL (not permitted)");
		return;
	}
	CHECK_EQ(ret, 0, "SQPOLL setup");
	pid = fork_checked();
	if (!pid) {
		struct io_uring_sqe *sqe;

		usleep(20 * 1000);
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 7);
		if (io_uring_submit(ring) != 1)
			child_exit(1);
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (ret || cqe->user_data != 7 || cqe->res) {
			fprintf(stderr, "child's NOP on the SQPOLL ring: %d\n", ret);
			child_exit(2);
		}
		io_uring_cqe_seen(ring, cqe);
		child_exit(0);
	}
	wait_child(pid, "child queueing on an SQPOLL ring");
	io_uring_prep_nop(io_uring_get_sqe(ring));
	CHECK_EQ(io_uring_submit(ring), 1, "parent submit");
	CHECK_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), 0, "parent's NOP");
	io_uring_cqe_seen(ring, cqe);
	io_uring_queue_exit(ring);
}

int main(int argc, char **argv)
{
	pthread_mutexattr_t ma;
	pid_t pid;

	tu_set_name(argv[0]);
	(void)argc;
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED, "mmap");
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&shm->sq_lock, &ma);
	CHECK_EQ(io_uring_queue_init(256, &shm->ring, 0), 0, "setup");

	/* A child that never touches the ring. */
	pid = fork_checked();
	if (!pid)
		child_exit(0);
	wait_child(pid, "idle child");
	submit_locked(prep_nop, NULL, 99);
	CHECK_EQ(reap_one(99, NULL), 0, "NOP after an idle child");

	parent_posts_child_waits();
	child_posts_parent_waits();
	parent_posts_child_serves();
	child_keeps_no_request_files();
	both_post();
	single_issuer();
	sqpoll_child();
	io_uring_queue_exit(&shm->ring);
	return tu_done();
}
