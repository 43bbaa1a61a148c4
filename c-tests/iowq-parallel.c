/* SPDX-License-Identifier: MIT */
/*
 * Blocking file I/O runs in parallel where the kernel's does, and one at a
 * time where the kernel's io-wq serialises it. Threads inside a write are
 * counted through /proc/self/task/N/syscall while requests are in flight.
 * - 32 O_DIRECT writes into the holes of one file: on the engine more
 *   than one worker is inside a write at the same moment (writes that must
 *   allocate are refused by native AIO's non-blocking attempt and go to
 *   workers, as the kernel's go to io-wq; engine-aio.c covers overwrites,
 *   which stay on AIO). The kernel checks that they all land.
 * - 32 buffered writes to one file with IOSQE_ASYNC: never more than one
 *   worker inside a write at once (io-wq hashes them by inode), while
 *   buffered writes split over two files do overlap. Their data comes from
 *   a file mapping dropped from the page cache, so that each write waits
 *   for the disk in a page fault, where it can be seen.
 * - Chains of write, write, fdatasync on one file: their writes also run
 *   one at a time, and each chain's second write lands after its first.
 * - With IORING_REGISTER_IOWQ_MAX_WORKERS {4, 4}, never more than 4 workers
 *   are inside a write.
 * Every write's result and the data are checked on either engine.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "liburing.h"
#include "test-util.h"

#define NR 32
#define BS 4096
#define BIG (256 * 1024)
#define SPAN_NS 3000000000LL

static pid_t self;

static int in_pwritev2(const char *syscall_line)
{
	return atol(syscall_line) == SYS_pwritev2;
}

/* Threads of this process (the caller aside) inside pwritev2 right now. */
static int writers(void)
{
	return tu_count_tasks("syscall", in_pwritev2, self);
}

/* Submits `nr` writes of `len` bytes (fd[i % nfd], slot i) from `buf`,
 * filled with `seed`'s pattern unless `seed` is 0, and samples writers()
 * until all complete. Returns the most seen. */
static int round_of(struct io_uring *ring, const int *fd, int nfd, char *buf, unsigned nr, size_t len,
		    unsigned flags, uint64_t seed)
{
	unsigned i, done = 0;
	int most = 0;

	for (i = 0; i < nr; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (seed)
			tu_pattern_fill(buf + i * len, len, seed, (uint64_t)i * len);
		io_uring_prep_write(sqe, fd[i % nfd], buf + i * len, len, (off_t)i * len);
		sqe->flags |= flags;
		sqe->user_data = i;
	}
	CHECK_EQ(io_uring_submit(ring), (int)nr, "submit");
	while (done < nr) {
		struct io_uring_cqe *cqe;
		int w = writers();

		if (w > most)
			most = w;
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			CHECK_EQ(cqe->res, (int)len, "write result");
			io_uring_cqe_seen(ring, cqe);
			done++;
		}
	}
	return most;
}

/* `nr` chains on one file: a write of `len` bytes from `src` (slot i),
 * linked to a write of the same range from `buf` (filled with `seed`'s
 * pattern), linked to an fdatasync. Samples writers() until all complete
 * and returns the most seen. */
static int chains_of(struct io_uring *ring, int fd, char *src, char *buf, unsigned nr, size_t len, uint64_t seed)
{
	unsigned i, done = 0;
	int most = 0;

	for (i = 0; i < nr; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		tu_pattern_fill(buf + i * len, len, seed, (uint64_t)i * len);
		io_uring_prep_write(sqe, fd, src + i * len, len, (off_t)i * len);
		sqe->flags |= IOSQE_IO_LINK;
		sqe->user_data = len;
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_write(sqe, fd, buf + i * len, len, (off_t)i * len);
		sqe->flags |= IOSQE_IO_LINK;
		sqe->user_data = len;
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		sqe->user_data = 0;
	}
	CHECK_EQ(io_uring_submit(ring), (int)nr * 3, "submit");
	while (done < nr * 3) {
		struct io_uring_cqe *cqe;
		int w = writers();

		if (w > most)
			most = w;
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			CHECK_EQ(cqe->res, (int)cqe->user_data, "chain member result");
			io_uring_cqe_seen(ring, cqe);
			done++;
		}
	}
	return most;
}

static void verify(int fd, char *tmp, unsigned nr, size_t len, uint64_t seed, unsigned step, unsigned first)
{
	for (unsigned i = first; i < nr; i += step) {
		tu_pread_all(fd, tmp, len, (off_t)i * len);
		CHECK(tu_pattern_check(tmp, len, seed, (uint64_t)i * len) < 0, "data of write %u", i);
	}
}

/* Drops the source mapping's pages, so that reading them waits for the disk. */
static void cold(int fd, void *map, size_t len)
{
	CHECK_EQ(madvise(map, len, MADV_DONTNEED), 0, "madvise");
	CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0, "fadvise");
}

#define SRC_SEED 7

int main(int argc, char **argv)
{
	struct io_uring ring;
	char path[64], path2[64], path3[64], *buf, *tmp, *src;
	int fd, dfd, fd2, sfd, engine, most;
	unsigned vals[2] = { 4, 4 };
	uint64_t seed = 1;
	long long t0;

	(void)argc;
	tu_set_name(argv[0]);
	self = syscall(SYS_gettid);
	engine = tu_on_engine();
	fd = tu_temp_file(path, sizeof(path));
	fd2 = tu_temp_file(path2, sizeof(path2));
	CHECK_EQ(ftruncate(fd, (off_t)NR * BIG), 0, "ftruncate");
	dfd = open(path, O_RDWR | O_DIRECT);
	if (dfd < 0 && errno == EINVAL)
		SKIP("%s does not do O_DIRECT", path);
	CHECK(dfd >= 0, "open O_DIRECT: %s", strerror(errno));
	CHECK_EQ(posix_memalign((void **)&buf, 4096, (size_t)NR * BIG), 0, "memalign");
	CHECK_EQ(posix_memalign((void **)&tmp, 4096, BIG), 0, "memalign");
	CHECK_EQ(io_uring_queue_init(64, &ring, 0), 0, "setup");
	sfd = tu_temp_file(path3, sizeof(path3));
	tu_pattern_fill(buf, (size_t)NR * BIG, SRC_SEED, 0);
	tu_pwrite_all(sfd, buf, (size_t)NR * BIG, 0);
	CHECK_EQ(fdatasync(sfd), 0, "fdatasync");
	src = mmap(NULL, (size_t)NR * BIG, PROT_READ, MAP_SHARED, sfd, 0);
	CHECK(src != MAP_FAILED, "mmap: %s", strerror(errno));

	/* O_DIRECT writes run side by side. */
	most = 0;
	t0 = tu_now_ns();
	do {
		int m = round_of(&ring, &dfd, 1, buf, NR, BS, 0, ++seed);
		if (m > most)
			most = m;
	} while (engine && most < 2 && tu_now_ns() - t0 < SPAN_NS);
	verify(fd, tmp, NR, BS, seed, 1, 0);
	if (engine)
		CHECK(most >= 2, "O_DIRECT writes: at most %d worker(s) inside a write at once", most);

	/* Buffered writes to one file: one worker at a time... */
	most = 0;
	t0 = tu_now_ns();
	do {
		int m;

		cold(sfd, src, (size_t)NR * BIG);
		m = round_of(&ring, &fd, 1, src, NR, BIG, IOSQE_ASYNC, 0);
		if (m > most)
			most = m;
		if (engine)
			CHECK(m <= 1, "buffered writes to one file: %d workers inside a write at once", m);
	} while (engine && most < 1 && tu_now_ns() - t0 < SPAN_NS);
	if (engine)
		CHECK(most == 1, "never saw a worker inside a buffered write");
	verify(fd, tmp, NR, BIG, SRC_SEED, 1, 0);

	/* ...but to two files they overlap. */
	most = 0;
	t0 = tu_now_ns();
	do {
		int both[2] = { fd, fd2 };
		int m;

		cold(sfd, src, (size_t)NR * BIG);
		m = round_of(&ring, both, 2, src, NR, BIG, IOSQE_ASYNC, 0);
		if (m > most)
			most = m;
	} while (engine && most < 2 && tu_now_ns() - t0 < SPAN_NS);
	verify(fd, tmp, NR, BIG, SRC_SEED, 2, 0);
	verify(fd2, tmp, NR, BIG, SRC_SEED, 2, 1);
	if (engine)
		CHECK(most >= 2, "buffered writes to two files never overlapped");

	/* Linked writes to one file (write, write, fdatasync chains) are
	 * serialised too, and each chain's second write lands last. */
	for (int round = 0; round < 3; round++) {
		cold(sfd, src, (size_t)NR * BIG);
		most = chains_of(&ring, fd, src, buf, NR / 4, BIG, ++seed);
		if (engine)
			CHECK(most <= 1, "linked buffered writes to one file: %d workers inside a write at once", most);
		verify(fd, tmp, NR / 4, BIG, seed, 1, 0);
	}

	/* The cap holds. */
	CHECK_EQ(io_uring_register_iowq_max_workers(&ring, vals), 0, "set {4, 4}");
	most = 0;
	t0 = tu_now_ns();
	do {
		int m = round_of(&ring, &dfd, 1, buf, NR, BS, 0, ++seed);
		if (m > most)
			most = m;
	} while (tu_now_ns() - t0 < SPAN_NS / 6);
	verify(fd, tmp, NR, BS, seed, 1, 0);
	CHECK(most <= 4, "with a cap of 4: %d workers inside a write at once", most);

	io_uring_queue_exit(&ring);
	close(dfd);
	close(fd);
	close(fd2);
	munmap(src, (size_t)NR * BIG);
	close(sfd);
	free(buf);
	free(tmp);
	tu_pass();
	return T_EXIT_PASS;
}
