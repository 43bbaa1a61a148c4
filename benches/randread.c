/*
 * 4 KiB random reads at depth 32 (argv[2] overrides) over FILE for BENCH_SECS
 * (default 2). Opens the file O_DIRECT if the filesystem allows it (and
 * BENCH_BUFFERED is unset), else buffered, and says which. Prints
 * "randread mode=direct|buffered iops=N".
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common.h"

#define BS 4096

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: randread FILE [depth]\n");
		return 2;
	}
	unsigned depth = argc > 2 ? atoi(argv[2]) : 32;
	double secs = env_double("BENCH_SECS", 2.0);
	const char *mode = "direct";
	int fd = -1;
	if (!getenv("BENCH_BUFFERED"))
		fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		mode = "buffered";
		fd = open(argv[1], O_RDONLY);
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		die(argv[1], errno);
	unsigned long long blocks = st.st_size / BS;
	if (!blocks)
		die("file too small", EINVAL);

	struct io_uring ring;
	int ret = io_uring_queue_init(depth, &ring, 0);
	if (ret)
		die("io_uring_queue_init", ret);
	char *bufs;
	if (posix_memalign((void **)&bufs, 4096, (size_t)depth * BS))
		die("posix_memalign", ENOMEM);

	for (unsigned i = 0; i < depth; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, fd, bufs + (size_t)i * BS, BS,
				   (xorshift() % blocks) * BS);
		sqe->user_data = i;
	}
	unsigned long done = 0;
	int first = 1;
	double start = now_sec(), end;
	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0)
			die("io_uring_submit_and_wait", ret);
		end = now_sec();
		int stop = end - start >= secs;
		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res != BS) {
				if (first && cqe->res == -EINVAL && !strcmp(mode, "direct"))
					die("O_DIRECT read rejected", cqe->res);
				die("read", cqe->res < 0 ? cqe->res : EIO);
			}
			n++;
			if (!stop) {
				unsigned i = cqe->user_data;
				struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
				io_uring_prep_read(sqe, fd, bufs + (size_t)i * BS, BS,
						   (xorshift() % blocks) * BS);
				sqe->user_data = i;
			}
		}
		first = 0;
		io_uring_cq_advance(&ring, n);
		done += n;
		if (stop)
			break;
	}
	/* the in-flight tail is not counted; drain it */
	io_uring_queue_exit(&ring);
	printf("randread mode=%s depth=%u ios=%lu secs=%.4f iops=%.0f\n", mode,
	       depth, done, end - start, done / (end - start));
	return 0;
}
