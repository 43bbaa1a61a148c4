/* SPDX-License-Identifier: MIT */
/*
 * A thread standing in for a worker (the program's own, inside its
 * submit call, when no thread can be started) runs the op as an io-wq
 * worker would: a signal the program catches does not interrupt it, and
 * the program's handler never runs in the credentials the request wears.
 *
 * In a child whose threads a seccomp filter forbids to start threads, the
 * program registers a personality with effective uid 65534, then submits
 * an IOSQE_ASYNC open of a FIFO under that personality. A thread made
 * before the filter sends SIGUSR1 (caught) to the submitting thread
 * while the open waits, then opens the FIFO's other end. The open must
 * succeed, and the handler must have run as uid 0. Twice: without
 * SA_RESTART (a handler inside the op would cut it short with EINTR) and
 * with it (the op would go on, but the handler would have seen uid 65534).
 * On the kernel the open runs on io-wq and the handler in the wait.
 */
#include <liburing.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "nothreads-util.h"
#include "test-util.h"

#define NOBODY 65534

static char fifo[64];
static volatile sig_atomic_t handled, handler_euid = -1;
static pthread_t submitter;

static void on_usr1(int sig)
{
	(void)sig;
	handler_euid = (sig_atomic_t)geteuid();
	handled++;
}

static void *signal_then_write(void *arg)
{
	long long t0;
	int fd;

	(void)arg;
	usleep(150 * 1000);
	pthread_kill(submitter, SIGUSR1);
	usleep(150 * 1000);
	/* Without a reader (the open was cut short) this fails with ENXIO. */
	t0 = tu_now_ns();
	while ((fd = open(fifo, O_WRONLY | O_NONBLOCK)) < 0 && tu_now_ns() - t0 < 3000000000LL)
		usleep(10 * 1000);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void child(int flags)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = flags };
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	pthread_t t;
	int id, ret;

	CHECK(!io_uring_queue_init(8, &ring, 0), "queue_init");
	/* Only this thread's effective uid moves (the raw call); the saved
	 * uid stays 0, so it can come back. */
	CHECK(!syscall(SYS_setresuid, -1, NOBODY, -1), "setresuid: %s", strerror(errno));
	id = io_uring_register_personality(&ring);
	CHECK(!syscall(SYS_setresuid, -1, 0, -1), "setresuid back: %s", strerror(errno));
	CHECK(id > 0, "register_personality: %s", strerror(-id));
	CHECK(geteuid() == 0, "still uid %d", (int)geteuid());

	sigemptyset(&sa.sa_mask);
	CHECK(!sigaction(SIGUSR1, &sa, NULL), "sigaction");
	submitter = pthread_self();
	CHECK(!pthread_create(&t, NULL, signal_then_write, NULL), "pthread_create");
	tu_refuse_threads();
	alarm(20);

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, fifo, O_RDONLY, 0);
	sqe->flags |= IOSQE_ASYNC;
	sqe->personality = (__u16)id;
	sqe->user_data = 1;
	CHECK(io_uring_submit(&ring) == 1, "submit");
	do
		ret = io_uring_wait_cqe(&ring, &cqe);
	while (ret == -EINTR);
	CHECK(!ret, "wait_cqe: %s", strerror(-ret));
	CHECK(cqe->res >= 0, "the open under the personality: %s (a caught signal cut it short?)",
	      strerror(-cqe->res));
	close(cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	CHECK(!pthread_join(t, NULL), "pthread_join");
	CHECK(handled == 1, "SIGUSR1 handled %d times", (int)handled);
	CHECK(handler_euid == 0, "the handler ran as uid %d, the personality's, not the thread's 0",
	      (int)handler_euid);
	io_uring_queue_exit(&ring);
	_exit(0);
}

static void run_child(int flags, const char *what)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	if (pid == 0)
		child(flags);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	if (WIFSIGNALED(status))
		FAIL("%s: the child died of signal %d (SIGALRM: it hung)", what, WTERMSIG(status));
	CHECK(WEXITSTATUS(status) == 0, "%s: the child failed (exit %d)", what, WEXITSTATUS(status));
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);
	if (geteuid() != 0) {
		printf("%s: needs root to register a personality of another uid\n", tu_name);
		return T_EXIT_SKIP;
	}
	snprintf(fifo, sizeof(fifo), "/tmp/standin-sig-fifo.%d", (int)getpid());
	CHECK(!mkfifo(fifo, 0600), "mkfifo: %s", strerror(errno));
	tu_register_cleanup(fifo);
	/* The personality's uid opens it. */
	CHECK(!chmod(fifo, 0666), "chmod: %s", strerror(errno));
	run_child(0, "handler without SA_RESTART");
	run_child(SA_RESTART, "handler with SA_RESTART");
	return tu_done();
}
