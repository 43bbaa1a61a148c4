/* SPDX-License-Identifier: MIT */
/*
 * 10,000 RECVs pending at once, one on each of 10,000 socketpairs: waiting
 * sockets must not cost a thread each (the process's thread count, from
 * /proc/self/task, stays small), and all of them complete with the right
 * data once their peers write. The program closes its own fd of each
 * socket once the RECV is submitted (the request keeps the socket, as a
 * kernel file reference does), and a child process holds the peers, so
 * that 10,000 pairs fit under a 20,000-fd limit. Then a batch is left
 * pending and the ring torn down with it armed: every fd the engine took
 * is released.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "op-util.h"

#define N 10000
#define BATCH 500

static void send_fd(int ctl, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b = 0;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	CHECK(sendmsg(ctl, &m, 0) == 1, "send_fd: %s", strerror(errno));
}

static int recv_fd(int ctl)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	int fd;

	if (recvmsg(ctl, &m, 0) != 1 || !CMSG_FIRSTHDR(&m))
		_exit(2);
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	return fd;
}

/* The child: takes the N peers, writes byte i to peer i when told. */
static void peer_child(int ctl)
{
	static int peers[N];
	char go;

	for (int i = 0; i < N; i++)
		peers[i] = recv_fd(ctl);
	if (read(ctl, &go, 1) != 1)
		_exit(3);
	for (int i = 0; i < N; i++) {
		char c = (char)('a' + i % 26);

		if (write(peers[i], &c, 1) != 1)
			_exit(4);
	}
	/* Stay until the parent has its data. */
	if (read(ctl, &go, 1) < 0)
		_exit(5);
	_exit(0);
}

static void ring_init(struct io_uring *ring)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 2 * N;
	ret = io_uring_queue_init_params(BATCH, ring, &p);
	if (ret == -ENOSYS || ret == -EPERM)
		SKIP("io_uring unavailable: %s", strerror(-ret));
	CHECK(ret == 0, "queue_init: %s", strerror(-ret));
}

int main(int argc, char **argv)
{
	static char bufs[N];
	static unsigned char seen[N];
	static int mine[BATCH], peers[BATCH];
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct rlimit rl;
	int base_threads, threads, fds0, ctl[2], status;
	pid_t pid;

	(void)argc;
	tu_set_name(argv[0]);
	/* N engine references at most, plus one batch and a few more. */
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < N + 2 * BATCH + 64)
		SKIP("RLIMIT_NOFILE hard limit %llu is below %d",
		     (unsigned long long)rl.rlim_max, N + 2 * BATCH + 64);
	if (rl.rlim_cur < N + 2 * BATCH + 64) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 4 * N : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			SKIP("cannot raise RLIMIT_NOFILE: %s", strerror(errno));
	}
	fds0 = tu_count_fds();
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == 0, "ctl");
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(ctl[0]);
		peer_child(ctl[1]);
	}
	close(ctl[1]);

	ring_init(&ring);
	base_threads = tu_count_threads();
	for (int i = 0; i < N; i += BATCH) {
		for (int j = 0; j < BATCH; j++) {
			int sv[2];
			struct io_uring_sqe *sqe = op_sqe(&ring);

			CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0,
			      "socketpair %d: %s", i + j, strerror(errno));
			send_fd(ctl[0], sv[1]);
			close(sv[1]);
			mine[j] = sv[0];
			io_uring_prep_recv(sqe, sv[0], bufs + i + j, 1, 0);
			io_uring_sqe_set_data64(sqe, i + j + 1);
		}
		op_submit(&ring, BATCH);
		for (int j = 0; j < BATCH; j++)
			close(mine[j]);
	}
	/* Nothing can have completed: no peer wrote yet. */
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), -EAGAIN, "early completion");
	threads = tu_count_threads();
	CHECK(threads >= 1 && threads <= base_threads + 4,
	      "%d pending RECVs: %d threads (was %d)", N, threads, base_threads);

	CHECK(write(ctl[0], "g", 1) == 1, "go");
	for (int got = 0; got < N; got++) {
		int ret = io_uring_wait_cqe(&ring, &cqe);
		unsigned long long i;

		CHECK(ret == 0, "wait_cqe: %s", strerror(-ret));
		i = cqe->user_data - 1;
		CHECK(i < N && !seen[i], "bad or repeated user_data %llu", i + 1);
		CHECK(cqe->res == 1 && cqe->flags == 0, "recv %llu: res %d flags %#x",
		      i, cqe->res, cqe->flags);
		CHECK(bufs[i] == (char)('a' + i % 26), "recv %llu: wrong byte", i);
		seen[i] = 1;
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK(tu_count_threads() <= base_threads + 4, "threads after completion");
	close(ctl[0]);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "peer child failed: %#x", status);

	/* A batch left armed when the ring goes away. */
	for (int j = 0; j < BATCH; j++) {
		int sv[2];

		CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0,
		      "socketpair");
		mine[j] = sv[0];
		peers[j] = sv[1];
		io_uring_prep_recv(op_sqe(&ring), sv[0], bufs + j, 1, 0);
	}
	op_submit(&ring, BATCH);
	io_uring_queue_exit(&ring);
	for (int j = 0; j < BATCH; j++) {
		close(mine[j]);
		close(peers[j]);
	}
	CHECK_EQ(tu_count_fds(), fds0, "fds after teardown");
	tu_pass();
	return T_EXIT_PASS;
}
