/*
 * Storage I/O on a regular file: 4 KiB random requests at a fixed queue
 * depth for BENCH_SECS (default 1), on an io_uring ring (the kernel's or the
 * engine, as LIBURING_RS_ENGINE says) or on a pool of 64 threads taking
 * requests from a queue and doing preadv/pwritev, as QEMU's aio=threads
 * does.
 *
 *   storage ring|pool dwrite|dread|bwrite|wsync DEPTH FILE
 *
 * dwrite/dread: O_DIRECT writes/reads; bwrite: buffered writes; wsync: a
 * buffered write followed by fdatasync (linked with IOSQE_IO_LINK on the
 * ring, done back to back by one pool thread), counted as one operation.
 * handoff: a NOP with IOSQE_ASYNC (an empty job on the pool): what a trip
 * to a worker and back costs, without any I/O.
 * Prints "storage BACKEND KIND qd=N iops=X".
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "common.h"

#define BS 4096
#define POOL_THREADS 64

enum kind { DWRITE, DREAD, BWRITE, WSYNC, HANDOFF };

static int fd;
static enum kind kind;
static unsigned long long blocks;

static off_t rand_off(void)
{
	return (off_t)(xorshift() % blocks) * BS;
}

/* ------------------------------------------------------------ the ring */
static void ring_prep(struct io_uring *ring, char *buf, unsigned slot)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	off_t off = rand_off();
	if (kind == HANDOFF) {
		io_uring_prep_nop(sqe);
		sqe->flags |= IOSQE_ASYNC;
	} else if (kind == DREAD)
		io_uring_prep_read(sqe, fd, buf, BS, off);
	else
		io_uring_prep_write(sqe, fd, buf, BS, off);
	sqe->user_data = slot;
	if (kind == WSYNC) {
		sqe->flags |= IOSQE_IO_LINK;
		sqe->user_data = slot | 1ULL << 32;
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		sqe->user_data = slot;
	}
}

static unsigned long run_ring(unsigned depth, char *bufs, double secs)
{
	struct io_uring ring;
	int ret = io_uring_queue_init(depth * 2, &ring, 0);
	if (ret)
		die("io_uring_queue_init", ret);
	for (unsigned i = 0; i < depth; i++)
		ring_prep(&ring, bufs + (size_t)i * BS, i);
	unsigned long done = 0;
	double end = now_sec() + secs;
	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0, refill[256], nr = 0;

		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0)
			die("io_uring_submit_and_wait", ret);
		io_uring_for_each_cqe(&ring, head, cqe) {
			n++;
			if (cqe->res < 0)
				die("I/O", cqe->res);
			if (cqe->user_data >> 32)
				continue;
			refill[nr++] = (unsigned)cqe->user_data;
		}
		io_uring_cq_advance(&ring, n);
		done += nr;
		if (now_sec() >= end)
			break;
		for (unsigned i = 0; i < nr; i++)
			ring_prep(&ring, bufs + (size_t)refill[i] * BS, refill[i]);
	}
	io_uring_queue_exit(&ring);
	return done;
}

/* ------------------------------------------------------- the thread pool */
struct job {
	struct job *next;
	char *buf;
	off_t off;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static struct job *queue, **queue_tail = &queue, *finished;
static int stopping;

static void *pool_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!queue && !stopping)
			pthread_cond_wait(&work_cond, &lock);
		if (!queue)
			break;
		struct job *j = queue;
		queue = j->next;
		if (!queue)
			queue_tail = &queue;
		pthread_mutex_unlock(&lock);
		struct iovec iov = { j->buf, BS };
		ssize_t r = kind == HANDOFF ? BS : kind == DREAD ? preadv(fd, &iov, 1, j->off) : pwritev(fd, &iov, 1, j->off);
		if (r != BS)
			die("pool I/O", r < 0 ? errno : EIO);
		if (kind == WSYNC && fdatasync(fd))
			die("fdatasync", errno);
		pthread_mutex_lock(&lock);
		j->next = finished;
		finished = j;
		pthread_cond_signal(&done_cond);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void pool_submit(struct job *j)
{
	j->off = rand_off();
	j->next = NULL;
	*queue_tail = j;
	queue_tail = &j->next;
	pthread_cond_signal(&work_cond);
}

static unsigned long run_pool(unsigned depth, char *bufs, double secs)
{
	pthread_t th[POOL_THREADS];
	struct job *jobs = calloc(depth, sizeof(*jobs));
	for (int i = 0; i < POOL_THREADS; i++)
		if (pthread_create(&th[i], NULL, pool_thread, NULL))
			die("pthread_create", EAGAIN);
	unsigned long done = 0;
	double end = now_sec() + secs;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < depth; i++) {
		jobs[i].buf = bufs + (size_t)i * BS;
		pool_submit(&jobs[i]);
	}
	unsigned out = depth;
	while (out) {
		while (!finished)
			pthread_cond_wait(&done_cond, &lock);
		struct job *list = finished;
		finished = NULL;
		int more = now_sec() < end;
		while (list) {
			struct job *j = list;
			list = j->next;
			done++;
			if (more)
				pool_submit(j);
			else
				out--;
		}
	}
	stopping = 1;
	pthread_cond_broadcast(&work_cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < POOL_THREADS; i++)
		pthread_join(th[i], NULL);
	free(jobs);
	return done;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: storage ring|pool dwrite|dread|bwrite|wsync|handoff DEPTH FILE\n");
		return 2;
	}
	int pool = !strcmp(argv[1], "pool");
	const char *k = argv[2];
	kind = !strcmp(k, "dwrite") ? DWRITE : !strcmp(k, "dread") ? DREAD : !strcmp(k, "bwrite") ? BWRITE : !strcmp(k, "wsync") ? WSYNC : HANDOFF;
	unsigned depth = atoi(argv[3]);
	if (!depth || depth > 256)
		die("depth", EINVAL);
	double secs = env_double("BENCH_SECS", 1.0);
	int flags = kind == DREAD ? O_RDONLY : O_RDWR;
	if (kind == DREAD || kind == DWRITE)
		flags |= O_DIRECT;
	fd = open(argv[4], flags);
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		die(argv[4], errno);
	blocks = st.st_size / BS;
	if (!blocks)
		die("file too small", EINVAL);
	bench_rng ^= (unsigned long long)getpid() << 20;
	char *bufs;
	if (posix_memalign((void **)&bufs, 4096, (size_t)depth * BS))
		die("posix_memalign", ENOMEM);
	memset(bufs, 0x5a, (size_t)depth * BS);
	double t0 = now_sec();
	unsigned long done = pool ? run_pool(depth, bufs, secs) : run_ring(depth, bufs, secs);
	double t = now_sec() - t0;
	printf("storage %s %s qd=%u iops=%.0f\n", pool ? "pool" : "ring", k, depth, done / t);
	return 0;
}
