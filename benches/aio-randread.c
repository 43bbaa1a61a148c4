/*
 * The randread workload on glibc's POSIX AIO instead of io_uring: 4 KiB
 * random reads, DEPTH (default 32) requests in flight, over FILE for
 * BENCH_SECS (default 2), always buffered (the engine comparison is
 * page-cache hot). glibc serves aio_read with a pool of helper threads
 * doing pread; the pool is sized to the depth with aio_init.
 * Prints "randread mode=posix-aio depth=D ios=N secs=S iops=X".
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common.h"

#define BS 4096

static void start(struct aiocb *cb, int fd, char *buf, unsigned long long blocks)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_fildes = fd;
	cb->aio_buf = buf;
	cb->aio_nbytes = BS;
	cb->aio_offset = (off_t)((xorshift() % blocks) * BS);
	cb->aio_sigevent.sigev_notify = SIGEV_NONE;
	if (aio_read(cb))
		die("aio_read", errno);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: aio-randread FILE [depth]\n");
		return 2;
	}
	unsigned depth = argc > 2 ? atoi(argv[2]) : 32;
	double secs = env_double("BENCH_SECS", 2.0);
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		die(argv[1], errno);
	unsigned long long blocks = st.st_size / BS;
	if (!blocks || depth == 0)
		die("file too small or depth 0", EINVAL);

	struct aioinit init = { .aio_threads = (int)depth, .aio_num = (int)depth, .aio_idle_time = 1 };
	aio_init(&init);
	struct aiocb *cbs = calloc(depth, sizeof(*cbs));
	const struct aiocb **list = calloc(depth, sizeof(*list));
	char *bufs;
	if (!cbs || !list || posix_memalign((void **)&bufs, 4096, (size_t)depth * BS))
		die("allocation", ENOMEM);
	for (unsigned i = 0; i < depth; i++) {
		start(&cbs[i], fd, bufs + (size_t)i * BS, blocks);
		list[i] = &cbs[i];
	}
	unsigned long done = 0;
	unsigned live = depth;
	double t0 = now_sec(), end = t0;
	while (live) {
		if (aio_suspend(list, depth, NULL) && errno != EINTR)
			die("aio_suspend", errno);
		end = now_sec();
		int stop = end - t0 >= secs;
		for (unsigned i = 0; i < depth; i++) {
			if (!list[i] || aio_error(&cbs[i]) == EINPROGRESS)
				continue;
			ssize_t r = aio_return(&cbs[i]);
			if (r != BS)
				die("read", r < 0 ? errno : EIO);
			if (stop) {
				list[i] = NULL;
				live--;
			} else {
				done++;
				start(&cbs[i], fd, bufs + (size_t)i * BS, blocks);
			}
		}
	}
	printf("randread mode=posix-aio depth=%u ios=%lu secs=%.4f iops=%.0f\n", depth,
	       done, end - t0, done / (end - t0));
	return 0;
}
