/*
 * What an idle ring costs. Sets up a ring (the engine is whatever
 * LIBURING_RS_ENGINE selects), wakes every part of it once (an inline NOP,
 * a poll that waits on the reactor, an fsync on a worker), then leaves it
 * idle for IDLE_SECS (default 4, past the engine's worker idle exit) and
 * measures over one more second: the process's threads, how many of them
 * are running (state R), and the CPU time the process used.
 * Prints "idle engine=E threads=N running=R cpu_ms=C".
 */
#define _GNU_SOURCE
#define LIBURING_RS_SOURCE
#include <liburing.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include "common.h"

static double cpu_sec(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return tv_sec(ru.ru_utime) + tv_sec(ru.ru_stime);
}

/* Threads of this process and how many are running, from /proc. */
static void threads(int *total, int *running)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	*total = *running = 0;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300], buf[256];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			char *p = strrchr(buf, ')');
			(*total)++;
			/* The measuring thread itself is running: not counted. */
			if (p && p[2] == 'R' && atoi(e->d_name) != gettid())
				(*running)++;
		}
		fclose(f);
	}
	closedir(d);
}

static void wait_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		die("io_uring_wait_cqe", ret);
	io_uring_cqe_seen(ring, cqe);
}

int main(void)
{
	double idle = env_double("IDLE_SECS", 4.0);
	struct io_uring ring;
	int ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		die("io_uring_queue_init", ret);
	int p[2];
	char tmpl[] = "/tmp/liburing-idle-XXXXXX";
	int fd = mkstemp(tmpl);
	if (pipe(p) || fd < 0)
		die("pipe/mkstemp", errno);
	unlink(tmpl);

	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_poll_add(sqe, p[0], POLLIN);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_fsync(sqe, fd, 0);
	io_uring_submit(&ring);
	wait_one(&ring);
	wait_one(&ring);
	if (write(p[1], "x", 1) != 1)
		die("write", errno);
	wait_one(&ring);

	usleep((useconds_t)(idle * 1e6));
	double c0 = cpu_sec();
	sleep(1);
	double c1 = cpu_sec();
	int total, running;
	threads(&total, &running);
	printf("idle engine=%s threads=%d running=%d cpu_ms=%.3f\n",
	       liburing_rs_ring_engine(&ring) == LIBURING_RS_ENGINE_USER ? "user" : "kernel",
	       total, running, (c1 - c0) * 1e3);
	io_uring_queue_exit(&ring);
	return 0;
}
