/*
 * NOP throughput: fill `depth` SQEs with io_uring_prep_nop, submit them with
 * io_uring_submit_and_wait(depth), reap with io_uring_for_each_cqe +
 * io_uring_cq_advance. Ring created with io_uring_queue_init(depth, ring, 0).
 *
 *   nop [depth...]           timed: BENCH_SECS (default 1) per depth, prints
 *                            "nop depth=D ops=N secs=S mops=M"
 *   nop -n OPS depth         fixed op count, for callgrind: the whole measured
 *                            loop is inside bench_loop() (noinline), so
 *                            --toggle-collect=bench_loop counts exactly it.
 */
#include <liburing.h>
#include "common.h"

__attribute__((noinline))
unsigned long bench_loop(struct io_uring *ring, unsigned depth, unsigned long batches)
{
	unsigned long done = 0;
	unsigned inflight = 0;

	for (unsigned long b = 0; b < batches; b++) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		for (unsigned i = 0; i < depth; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
			io_uring_prep_nop(sqe);
		}
		inflight += depth;
		io_uring_submit_and_wait(ring, depth);
		io_uring_for_each_cqe(ring, head, cqe) {
			if (cqe->res < 0)
				abort();
			n++;
		}
		io_uring_cq_advance(ring, n);
		inflight -= n;
		done += n;
	}
	/* NOPs complete inline; drain anything left so counts are exact. */
	while (inflight) {
		struct io_uring_cqe *cqe;
		if (io_uring_wait_cqe(ring, &cqe))
			abort();
		io_uring_cqe_seen(ring, cqe);
		inflight--;
		done++;
	}
	return done;
}

static void run_timed(unsigned depth, double secs)
{
	struct io_uring ring;
	int ret = io_uring_queue_init(depth, &ring, 0);
	if (ret)
		die("io_uring_queue_init", ret);

	/* warm-up, and size a chunk to roughly 5 ms */
	unsigned long chunk = 64;
	double t0 = now_sec();
	bench_loop(&ring, depth, chunk);
	double dt = now_sec() - t0;
	if (dt > 0)
		chunk = (unsigned long)(chunk * 0.005 / dt) + 1;

	unsigned long ops = 0;
	double start = now_sec(), end;
	do {
		ops += bench_loop(&ring, depth, chunk);
		end = now_sec();
	} while (end - start < secs);
	io_uring_queue_exit(&ring);
	printf("nop depth=%u ops=%lu secs=%.4f mops=%.4f\n", depth, ops,
	       end - start, ops / (end - start) / 1e6);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const unsigned def_depths[] = { 1, 2, 4, 8, 16, 32, 128 };
	double secs = env_double("BENCH_SECS", 1.0);

	if (argc >= 4 && !strcmp(argv[1], "-n")) {
		unsigned long ops = strtoul(argv[2], NULL, 0);
		unsigned depth = atoi(argv[3]);
		struct io_uring ring;
		int ret = io_uring_queue_init(depth, &ring, 0);
		if (ret)
			die("io_uring_queue_init", ret);
		unsigned long done = bench_loop(&ring, depth, ops / depth);
		io_uring_queue_exit(&ring);
		printf("nop depth=%u ops=%lu\n", depth, done);
		return 0;
	}
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			run_timed(atoi(argv[i]), secs);
	} else {
		for (unsigned i = 0; i < sizeof(def_depths) / sizeof(def_depths[0]); i++)
			run_timed(def_depths[i], secs);
	}
	return 0;
}
