/* SPDX-License-Identifier: MIT */
/*
 * When no worker thread can be started, the engine runs the queued work
 * on a thread standing in for one: the program's own thread inside its
 * submit call, or the engine's thread-starting thread (the nursery). A
 * request that blocks for good there must still be cancellable, and the
 * ring's exit must not wait for it forever.
 *
 * The request is an IOSQE_ASYNC open of a FIFO that nobody opens for
 * writing: it blocks in open(2) until interrupted. Each case runs in a
 * child process whose threads a seccomp filter forbids to start threads
 * (clone with CLONE_THREAD, and clone3, fail with EAGAIN):
 *  1. filter first, so the open runs on the submitting thread; a thread
 *     made before the filter cancels it with IORING_REGISTER_SYNC_CANCEL;
 *  2. filter once the engine's nursery exists and its workers have gone
 *     idle and left, so the open runs on the nursery; the program cancels
 *     one such open, then leaves a second one blocked and tears the ring
 *     down.
 * The interrupted open completes with -512, the kernel's internal
 * "restart" code, which Linux 6.18's io-wq leaves in an open's CQE (6.1
 * and 6.12 report -EINTR); the same program runs on the kernel, whose
 * io-wq threads the filter does not stop (case 2 needs the engine's
 * nursery and is passed over there).
 */
#include <liburing.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "nothreads-util.h"
#include "test-util.h"

static char fifo[64];

static void queue_fifo_open(struct io_uring *ring, uint64_t user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_openat(sqe, AT_FDCWD, fifo, O_RDONLY, 0);
	sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = user_data;
}

#define ERESTARTSYS 512

/* The open's CQE, within 5 s: interrupted. */
static void expect_interrupted(struct io_uring *ring, uint64_t user_data)
{
	struct __kernel_timespec ts = { .tv_sec = 5 };
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

	if (ret) {
		fprintf(stderr, "open %llu: no CQE after 5 s: %s\n", (unsigned long long)user_data,
			strerror(-ret));
		_exit(10);
	}
	if (cqe->user_data != user_data ||
	    !(cqe->res == -ERESTARTSYS || (cqe->res == -EINTR && !tu_on_engine()))) {
		fprintf(stderr, "CQE %llu res %d, wanted open %llu interrupted (-%d; -EINTR before Linux 6.18)\n",
			(unsigned long long)cqe->user_data, cqe->res, (unsigned long long)user_data,
			ERESTARTSYS);
		_exit(11);
	}
	io_uring_cqe_seen(ring, cqe);
}

static int sync_cancel(struct io_uring *ring, uint64_t user_data)
{
	struct io_uring_sync_cancel_reg reg = {
		.addr = user_data,
		.timeout = { .tv_sec = 5 },
	};

	return io_uring_register_sync_cancel(ring, &reg);
}

struct canceller {
	struct io_uring *ring;
	int ret;
};

static void *cancel_later(void *arg)
{
	struct canceller *c = arg;

	usleep(200 * 1000);
	c->ret = sync_cancel(c->ring, 1);
	return NULL;
}

/* Case 1: the open blocks the submitting thread; another cancels it. */
static void on_submitter(void)
{
	struct io_uring ring;
	struct canceller c = { .ring = &ring };
	pthread_t t;

	CHECK(!io_uring_queue_init(8, &ring, 0), "queue_init");
	CHECK(!pthread_create(&t, NULL, cancel_later, &c), "pthread_create");
	tu_refuse_threads();
	alarm(20);
	queue_fifo_open(&ring, 1);
	CHECK(io_uring_submit(&ring) == 1, "submit");
	expect_interrupted(&ring, 1);
	CHECK(!pthread_join(t, NULL), "pthread_join");
	CHECK(c.ret == 0, "sync cancel of the blocked open: %s", strerror(-c.ret));
	io_uring_queue_exit(&ring);
	_exit(0);
}

static int is_nursery(const char *comm)
{
	return !strncmp(comm, "uring-rs-spawn", 14);
}

static int is_worker(const char *comm)
{
	return !strncmp(comm, "iou-wrk-", 8);
}

/* Case 2: the opens run on the nursery. Exits 77 where there is none. */
static void on_nursery(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	long long t0;

	CHECK(!io_uring_queue_init(8, &ring, 0), "queue_init");
	/* Two requests for workers at once start the nursery. */
	for (int i = 0; i < 2; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_nop(sqe);
		sqe->flags |= IOSQE_ASYNC;
	}
	CHECK(io_uring_submit_and_wait(&ring, 2) == 2, "submit the NOPs");
	for (int i = 0; i < 2; i++) {
		CHECK(!io_uring_wait_cqe(&ring, &cqe) && cqe->res == 0, "NOP");
		io_uring_cqe_seen(&ring, cqe);
	}
	/* It names itself once it runs, maybe after both NOPs are done. */
	t0 = tu_now_ns();
	while (!tu_count_tasks("comm", is_nursery, 0)) {
		if (tu_now_ns() - t0 > 2000000000LL)
			_exit(T_EXIT_SKIP);
		usleep(10 * 1000);
	}
	/* Both workers start (one by the nursery, maybe only now), go idle
	 * and leave after a few seconds; the nursery stays. */
	t0 = tu_now_ns();
	while (tu_count_tasks("comm", is_worker, 0) < 2) {
		CHECK(tu_now_ns() - t0 < 2000000000LL, "two workers did not start in 2 s");
		usleep(10 * 1000);
	}
	while (tu_count_tasks("comm", is_worker, 0)) {
		CHECK(tu_now_ns() - t0 < 10000000000LL, "the idle workers did not leave in 10 s");
		usleep(50 * 1000);
	}
	tu_refuse_threads();
	alarm(20);
	queue_fifo_open(&ring, 1);
	CHECK(io_uring_submit(&ring) == 1, "submit");
	usleep(100 * 1000);
	CHECK(tu_count_tasks("comm", is_nursery, 0) == 1, "the nursery is gone");
	CHECK(sync_cancel(&ring, 1) == 0, "sync cancel of the blocked open");
	expect_interrupted(&ring, 1);
	/* Left blocked: the exit must cancel it. */
	queue_fifo_open(&ring, 2);
	CHECK(io_uring_submit(&ring) == 1, "submit");
	usleep(100 * 1000);
	io_uring_queue_exit(&ring);
	_exit(0);
}

static int run_case(void (*fn)(void), const char *what)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	if (pid == 0)
		fn();
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	if (WIFSIGNALED(status))
		FAIL("%s: the child died of signal %d (SIGALRM: it hung)", what, WTERMSIG(status));
	if (WEXITSTATUS(status) == T_EXIT_SKIP)
		return 0;
	CHECK(WEXITSTATUS(status) == 0, "%s: the child failed (exit %d)", what, WEXITSTATUS(status));
	return 1;
}

int main(int argc, char *argv[])
{
	int ran;

	(void)argc;
	tu_set_name(argv[0]);
	snprintf(fifo, sizeof(fifo), "/tmp/standin-fifo.%d", (int)getpid());
	CHECK(!mkfifo(fifo, 0600), "mkfifo: %s", strerror(errno));
	tu_register_cleanup(fifo);
	run_case(on_submitter, "open on the submitting thread");
	ran = run_case(on_nursery, "open on the nursery");
	if (!ran && tu_on_engine())
		FAIL("the engine started no nursery");
	if (!ran)
		printf("%s: no engine nursery here (the kernel's io-wq needs none): case 2 does not apply\n",
		       tu_name);
	return tu_done();
}
