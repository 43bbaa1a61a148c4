/*
 * io_uring_queue_init(DEPTH, ring, 0) + io_uring_queue_exit pairs per second.
 * DEPTH defaults to 8 (argv[1] overrides). Runs BENCH_SECS (default 1).
 */
#include <liburing.h>
#include "common.h"

int main(int argc, char **argv)
{
	unsigned depth = argc > 1 ? atoi(argv[1]) : 8;
	double secs = env_double("BENCH_SECS", 1.0);
	unsigned long n = 0;
	struct io_uring ring;
	double start = now_sec(), end;

	do {
		for (int i = 0; i < 64; i++) {
			int ret = io_uring_queue_init(depth, &ring, 0);
			if (ret)
				die("io_uring_queue_init", ret);
			io_uring_queue_exit(&ring);
		}
		n += 64;
		end = now_sec();
	} while (end - start < secs);
	printf("init depth=%u pairs=%lu secs=%.4f kpairs=%.3f\n", depth, n,
	       end - start, n / (end - start) / 1e3);
	return 0;
}
