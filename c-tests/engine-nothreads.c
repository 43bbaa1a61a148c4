/* SPDX-License-Identifier: MIT */
/*
 * No request is lost when no thread can be started. The engine starts
 * its workers (and the thread that starts them) only when a request
 * needs one; if the system refuses every new thread, the requests that
 * waited for a worker must still complete, run by the thread that asked
 * for it, and the ring must still tear down.
 *
 * A child process installs, on all its threads, a seccomp filter that
 * fails thread creation with EAGAIN (clone with CLONE_THREAD, and
 * clone3), checks that pthread_create now fails, and then runs requests
 * that always go to a worker: statx, fsync behind a linked write, a read
 * with IOSQE_ASYNC and NOPs with IOSQE_ASYNC, in one submit call and then
 * one per call. Each must complete with its own result within seconds.
 * The kernel's io-wq threads are not made through clone(2), so the same
 * program passes there.
 */
#include <liburing.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "nothreads-util.h"
#include "test-util.h"

#define NSTATX 24

static void *nothing(void *arg)
{
	return arg;
}

/* Waits for `n` CQEs, each at most 5 s, and checks each result against
 * what its user_data says it must be. */
static void reap(struct io_uring *ring, int n, const char *what)
{
	struct __kernel_timespec ts = { .tv_sec = 5 };

	for (int i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

		if (ret) {
			fprintf(stderr, "%s: CQE %d of %d not there after 5 s: %s\n", what, i + 1, n,
				strerror(-ret));
			_exit(10);
		}
		int want = (int)(cqe->user_data >> 32);
		if (cqe->res != want) {
			fprintf(stderr, "%s: request %u got %d, not %d\n", what,
				(unsigned)cqe->user_data, cqe->res, want);
			_exit(11);
		}
		io_uring_cqe_seen(ring, cqe);
	}
}

static uint64_t ud(int want, unsigned id)
{
	return (uint64_t)(uint32_t)want << 32 | id;
}

static void child(int fd)
{
	static struct statx sx[NSTATX];
	static char buf[4096];
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	pthread_t t;
	unsigned id = 0;

	tu_refuse_threads();
	if (pthread_create(&t, NULL, nothing, NULL) == 0) {
		fprintf(stderr, "the filter let a thread start\n");
		_exit(12);
	}
	alarm(60);
	CHECK(!io_uring_queue_init(64, &ring, 0), "queue_init");
	memset(buf, 'x', sizeof(buf));

	/* One submit call that needs many workers. */
	for (int i = 0; i < NSTATX; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_statx(sqe, AT_FDCWD, "/", 0, STATX_TYPE, &sx[i]);
		sqe->user_data = ud(0, id++);
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, fd, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = ud(sizeof(buf), id++);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	sqe->user_data = ud(0, id++);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, fd, buf, 100, 0);
	sqe->flags |= IOSQE_ASYNC | IOSQE_IO_DRAIN;
	sqe->user_data = ud(100, id++);
	CHECK(io_uring_submit(&ring) == NSTATX + 3, "submit");
	reap(&ring, NSTATX + 3, "one call");
	for (int i = 0; i < NSTATX; i++)
		CHECK(S_ISDIR(sx[i].stx_mode), "statx %d filled no directory mode", i);

	/* Then one request per call, each needing a worker again. */
	for (int i = 0; i < 16; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->flags |= IOSQE_ASYNC;
		sqe->user_data = ud(0, id++);
		CHECK(io_uring_submit(&ring) == 1, "submit %d", i);
		reap(&ring, 1, "one per call");
	}
	io_uring_queue_exit(&ring);
	_exit(0);
}

int main(int argc, char *argv[])
{
	char path[64];
	int fd, status;
	pid_t pid;

	(void)argc;
	tu_set_name(argv[0]);
	fd = tu_temp_file(path, sizeof(path));
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		child(fd);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	close(fd);
	unlink(path);
	if (WIFSIGNALED(status))
		FAIL("the child died of signal %d (SIGALRM: a request never completed)", WTERMSIG(status));
	CHECK(WEXITSTATUS(status) == 0, "the child failed (exit %d)", WEXITSTATUS(status));
	return tu_done();
}
