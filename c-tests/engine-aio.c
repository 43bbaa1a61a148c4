/* SPDX-License-Identifier: MIT */
/*
 * O_DIRECT reads and writes on a file whose blocks exist: the kernel has
 * them in flight without a thread, and so does the engine, on native AIO.
 * Every case runs on either engine and must give the kernel's results.
 * - 32 writes at once (plain, vectored, registered buffer, registered
 *   file), then 32 reads of the same: results and data. On the engine
 *   with native AIO to be had, no io worker thread is made for them.
 * - The program closes its fd right after submitting: the requests still
 *   complete on the file they named.
 * - write -> fdatasync -> read of the same range, linked: in order, and
 *   the read sees the write. An O_DIRECT read across the end of the file
 *   is short and fails its link, as in the kernel.
 * - A misaligned buffer gets what pwrite(2) gets (-EINVAL on ext4), an
 *   unmapped one -EFAULT.
 * - Writes into holes, which must allocate, complete too (the engine's go
 *   to workers, as the kernel's go to io-wq).
 * - A cancel of a write in flight finds nothing to take back, or the
 *   write is cancelled before it started: never both a cancel and a
 *   finished write.
 * - io_uring_queue_exit with 32 writes in flight returns, and the
 *   engine's fds go with the ring (with the process's only ring, and
 *   beside another).
 * - The writes and reads again on a DEFER_TASKRUN ring and an SQPOLL one.
 * - An fd number (plain, or registered) that was O_DIRECT and now holds
 *   the file opened buffered: whole buffered writes and reads, also where
 *   half the range is in the page cache.
 * - Four threads, each with a ring of its own (one DEFER_TASKRUN), do
 *   rounds of 8 writes and 8 reads of their own blocks while a fifth
 *   keeps entering a ring of its own: every request completes on its
 *   ring, once, with its data, whichever thread's call saw it finish (on
 *   the engine, any thread's enter may post another ring's completions).
 * - A forked child does the same I/O on a ring of its own.
 * On the engine the test runs again with LIBURING_RS_AIO=0, which sends
 * O_DIRECT I/O to workers instead: the results must be the same.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/aio_abi.h>
#include "liburing.h"
#include "test-util.h"

#define NR 32
#define BS 4096
#define FILE_LEN ((off_t)NR * 4 * BS)

static char *buf, *tmp;

static int io_worker_name(const char *comm)
{
	return !strncmp(comm, "iou-wrk-", 8);
}

/* Threads of this process named as io workers (iou-wrk-PID): the
 * engine's workers, or the kernel's io-wq threads. */
static int workers(void)
{
	return tu_count_tasks("comm", io_worker_name, 0);
}

/* Whether the engine may use native AIO in this process. */
static int aio_expected(void)
{
	const char *v = getenv("LIBURING_RS_AIO");
	aio_context_t ctx = 0;

	if (!tu_on_engine() || (v && !strcmp(v, "0")))
		return 0;
	if (syscall(SYS_io_setup, 1, &ctx) < 0)
		return 0;
	syscall(SYS_io_destroy, ctx);
	return 1;
}

/* Reaps `nr` CQEs, checking each against want[user_data]; samples
 * workers() meanwhile and returns the most seen. */
static int reap(struct io_uring *ring, unsigned nr, const int *want)
{
	int most = 0;

	for (unsigned done = 0; done < nr;) {
		struct io_uring_cqe *cqe;
		int w = workers();

		if (w > most)
			most = w;
		/* A DEFER_TASKRUN ring posts only inside a call. */
		if (io_uring_peek_cqe(ring, &cqe))
			io_uring_get_events(ring);
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			CHECK_EQ(cqe->res, want[cqe->user_data], "result of request");
			io_uring_cqe_seen(ring, cqe);
			done++;
		}
	}
	return most;
}

/* Request i of a batch: its 4 KiB slot at offset i * 4 * BS, by way of
 * kind i % 4: plain, vectored (two halves), registered buffer, registered
 * file (index 0). */
static void prep(struct io_uring *ring, int fd, int write, unsigned i, struct iovec *iov)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	char *b = buf + (size_t)i * BS;
	off_t off = (off_t)i * 4 * BS;

	switch (i % 4) {
	case 0:
		if (write)
			io_uring_prep_write(sqe, fd, b, BS, off);
		else
			io_uring_prep_read(sqe, fd, b, BS, off);
		break;
	case 1:
		iov[0] = (struct iovec){ b, BS / 2 };
		iov[1] = (struct iovec){ b + BS / 2, BS / 2 };
		if (write)
			io_uring_prep_writev(sqe, fd, iov, 2, off);
		else
			io_uring_prep_readv(sqe, fd, iov, 2, off);
		break;
	case 2:
		if (write)
			io_uring_prep_write_fixed(sqe, fd, b, BS, off, 0);
		else
			io_uring_prep_read_fixed(sqe, fd, b, BS, off, 0);
		break;
	default:
		if (write)
			io_uring_prep_write(sqe, 0, b, BS, off);
		else
			io_uring_prep_read(sqe, 0, b, BS, off);
		sqe->flags |= IOSQE_FIXED_FILE;
	}
	sqe->user_data = i;
}

/* 32 writes of `seed`'s pattern, then (unless `close_after`) 32 reads
 * back; returns the most io workers seen during the writes. With
 * `close_after`, *fd is closed right after the writes are submitted and
 * reopened once they completed. */
static int batch(struct io_uring *ring, const char *path, int *fd, uint64_t seed, int close_after)
{
	struct iovec iov[NR][2];
	int want[NR], most;

	for (unsigned i = 0; i < NR; i++) {
		tu_pattern_fill(buf + (size_t)i * BS, BS, seed, (uint64_t)i * 4 * BS);
		want[i] = BS;
		prep(ring, *fd, 1, i, iov[i]);
	}
	CHECK_EQ(io_uring_submit(ring), NR, "submit writes");
	if (close_after)
		close(*fd);
	most = reap(ring, NR, want);
	if (close_after) {
		*fd = open(path, O_RDWR | O_DIRECT);
		CHECK(*fd >= 0, "reopen: %s", strerror(errno));
	}
	for (unsigned i = 0; i < NR; i++) {
		tu_pread_all(*fd, tmp, BS, (off_t)i * 4 * BS);
		CHECK(tu_pattern_check(tmp, BS, seed, (uint64_t)i * 4 * BS) < 0, "data of write %u", i);
	}
	if (close_after)
		return most;
	memset(buf, 0, (size_t)NR * BS);
	for (unsigned i = 0; i < NR; i++)
		prep(ring, *fd, 0, i, iov[i]);
	CHECK_EQ(io_uring_submit(ring), NR, "submit reads");
	reap(ring, NR, want);
	for (unsigned i = 0; i < NR; i++)
		CHECK(tu_pattern_check(buf + (size_t)i * BS, BS, seed, (uint64_t)i * 4 * BS) < 0, "data of read %u", i);
	return most;
}

/* Waits for one CQE and returns it as (user_data, res). */
static void one(struct io_uring *ring, uint64_t *ud, int *res)
{
	struct io_uring_cqe *cqe;

	CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, "wait");
	*ud = cqe->user_data;
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
}

/* Submits the `n` SQEs prepared (user_data 1..n) and reaps their CQEs
 * into got[user_data]. */
static void submit_and_reap(struct io_uring *ring, int n, int *got, const char *what)
{
	uint64_t ud;
	int res;

	CHECK_EQ(io_uring_submit(ring), n, what);
	for (int i = 0; i < n; i++) {
		one(ring, &ud, &res);
		CHECK(ud >= 1 && ud <= (uint64_t)n, "%s: user_data %llu", what, (unsigned long long)ud);
		got[ud] = res;
	}
}

static void chains(struct io_uring *ring, int fd, uint64_t seed)
{
	struct io_uring_sqe *sqe;
	uint64_t ud;
	int res, got[4];

	tu_pattern_fill(buf, BS, seed, 5 * BS);
	memset(buf + BS, 0, BS);
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_write(sqe, fd, buf, BS, 5 * BS);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 2;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, fd, buf + BS, BS, 5 * BS);
	sqe->user_data = 3;
	CHECK_EQ(io_uring_submit(ring), 3, "submit chain");
	for (int i = 0; i < 3; i++) {
		one(ring, &ud, &res);
		CHECK_EQ(ud, (uint64_t)i + 1, "chain completes in order");
		got[i] = res;
	}
	CHECK_EQ(got[0], BS, "chained write");
	CHECK_EQ(got[1], 0, "chained fdatasync");
	CHECK_EQ(got[2], BS, "chained read");
	CHECK(tu_pattern_check(buf + BS, BS, seed, 5 * BS) < 0, "chained read sees the write");

	/* Across the end of the file: short, and its link fails. */
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, fd, buf, 2 * BS, FILE_LEN - BS);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 2;
	submit_and_reap(ring, 2, got, "short chain");
	CHECK_EQ(got[1], BS, "read across the end");
	CHECK_EQ(got[2], -ECANCELED, "link behind a short read");
}

static void errors(struct io_uring *ring, int fd)
{
	char *none = mmap(NULL, BS, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct io_uring_sqe *sqe;
	int got[3];

	CHECK(none != MAP_FAILED, "mmap: %s", strerror(errno));
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_write(sqe, fd, buf + 1, BS, 0);
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_write(sqe, fd, none, BS, 0);
	sqe->user_data = 2;
	submit_and_reap(ring, 2, got, "bad writes");
	/* As the same write by pwrite(2) on this file system (ext4 refuses a
	 * misaligned buffer; tmpfs takes it). */
	CHECK_EQ(got[1], pwrite(fd, buf + 1, BS, 0) < 0 ? -errno : BS, "misaligned buffer");
	CHECK_EQ(got[2], -EFAULT, "unmapped buffer");
	munmap(none, BS);
}

static void cancel(struct io_uring *ring, int fd, uint64_t seed)
{
	struct io_uring_sqe *sqe;
	int rounds = 20, got[3];

	while (rounds--) {
		tu_pattern_fill(buf, BS, seed, 7 * BS);
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_write(sqe, fd, buf, BS, 7 * BS);
		sqe->user_data = 1;
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_cancel64(sqe, 1, 0);
		sqe->user_data = 2;
		submit_and_reap(ring, 2, got, "write and cancel");
		if (got[2] == 0)
			CHECK_EQ(got[1], -ECANCELED, "write the cancel took");
		else
			CHECK(got[2] == -ENOENT || got[2] == -EALREADY, "cancel of a write in flight: %d", got[2]);
		if (got[2] != 0)
			CHECK_EQ(got[1], BS, "write the cancel missed");
	}
}

static void exit_in_flight(const char *path, uint64_t seed)
{
	struct io_uring ring;
	int fd, before, now;
	long long t0;

	fd = open(path, O_RDWR | O_DIRECT);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	/* A worker may still be letting go of a dup from the cases before. */
	before = tu_count_fds();
	for (int i = 0; i < 100; i++) {
		usleep(20000);
		if ((now = tu_count_fds()) == before)
			break;
		before = now;
	}
	CHECK_EQ(io_uring_queue_init(64, &ring, 0), 0, "setup");
	for (unsigned i = 0; i < NR; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		tu_pattern_fill(buf + (size_t)i * BS, BS, seed, (uint64_t)i * 4 * BS);
		io_uring_prep_write(sqe, fd, buf + (size_t)i * BS, BS, (off_t)i * 4 * BS);
	}
	CHECK_EQ(io_uring_submit(&ring), NR, "submit");
	io_uring_queue_exit(&ring);
	/* The kernel lets go of its references a moment after the close. */
	t0 = tu_now_ns();
	while ((now = tu_count_fds()) > before && tu_now_ns() - t0 < 2000000000LL)
		usleep(1000);
	CHECK_EQ(now, before, "fds after the ring's exit");
	close(fd);
}

static void holes(struct io_uring *ring, int fd, uint64_t seed)
{
	int want[NR];

	/* Past the end: every block must be allocated. */
	for (unsigned i = 0; i < NR; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		tu_pattern_fill(buf + (size_t)i * BS, BS, seed, FILE_LEN + (uint64_t)i * 2 * BS);
		io_uring_prep_write(sqe, fd, buf + (size_t)i * BS, BS, FILE_LEN + (off_t)i * 2 * BS);
		sqe->user_data = i;
		want[i] = BS;
	}
	CHECK_EQ(io_uring_submit(ring), NR, "submit writes into holes");
	reap(ring, NR, want);
	for (unsigned i = 0; i < NR; i++) {
		tu_pread_all(fd, tmp, BS, FILE_LEN + (off_t)i * 2 * BS);
		CHECK(tu_pattern_check(tmp, BS, seed, FILE_LEN + (uint64_t)i * 2 * BS) < 0, "data of hole write %u", i);
	}
	CHECK_EQ(ftruncate(fd, FILE_LEN), 0, "ftruncate back");
}

/* One request on `ring` (IOSQE_FIXED_FILE with index 0 if `fixed`);
 * returns its result. */
static int one_rw(struct io_uring *ring, int fd, int fixed, int write, char *b, unsigned len, off_t off)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	uint64_t ud;
	int res;

	if (write)
		io_uring_prep_write(sqe, fixed ? 0 : fd, b, len, off);
	else
		io_uring_prep_read(sqe, fixed ? 0 : fd, b, len, off);
	if (fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	CHECK_EQ(io_uring_submit(ring), 1, "submit");
	one(ring, &ud, &res);
	return res;
}

/* An fd number (the program's, or the engine's for a registered file)
 * that was O_DIRECT and now holds the same file opened buffered: its
 * writes and reads are buffered ones, whole, even where only part of the
 * range is in the page cache. */
static void stale_hint(struct io_uring *ring, const char *path, uint64_t seed)
{
	for (int fixed = 0; fixed < 2; fixed++) {
		int dfd = open(path, O_RDWR | O_DIRECT), bfd;

		CHECK(dfd >= 0, "open: %s", strerror(errno));
		if (fixed)
			CHECK_EQ(io_uring_register_files(ring, &dfd, 1), 0, "register O_DIRECT file");
		tu_pattern_fill(buf, 2 * BS, seed, 9 * BS);
		CHECK_EQ(one_rw(ring, dfd, fixed, 1, buf, 2 * BS, 9 * BS), 2 * BS, "O_DIRECT write");
		if (fixed)
			CHECK_EQ(io_uring_unregister_files(ring), 0, "unregister");
		close(dfd);
		bfd = open(path, O_RDWR);
		CHECK(bfd >= 0, "open: %s", strerror(errno));
		if (fixed)
			CHECK_EQ(io_uring_register_files(ring, &bfd, 1), 0, "register buffered file");
		tu_pattern_fill(buf, 2 * BS, seed + 1, 9 * BS);
		CHECK_EQ(one_rw(ring, bfd, fixed, 1, buf, 2 * BS, 9 * BS), 2 * BS, "buffered write");
		CHECK_EQ(fdatasync(bfd), 0, "fdatasync");
		CHECK_EQ(posix_fadvise(bfd, 0, 0, POSIX_FADV_DONTNEED), 0, "fadvise");
		/* The first half cached, the second not. */
		tu_pread_all(bfd, tmp, BS, 9 * BS);
		memset(buf, 0, 2 * BS);
		CHECK_EQ(one_rw(ring, bfd, fixed, 0, buf, 2 * BS, 9 * BS), 2 * BS, "buffered read, half cached");
		CHECK(tu_pattern_check(buf, 2 * BS, seed + 1, 9 * BS) < 0, "data of the buffered read");
		if (fixed)
			CHECK_EQ(io_uring_unregister_files(ring), 0, "unregister");
		close(bfd);
		seed += 2;
	}
}

#define TH 4
#define TH_QD 8
#define TH_ROUNDS 150

struct th_arg {
	int fd, idx;
	uint64_t seed;
};

static volatile int th_stop;

/* Slot i of a round: block a->idx of the 4-block stride, so that the
 * threads' blocks never meet. */
static off_t th_off(const struct th_arg *a, int round, int i)
{
	return (off_t)((round * TH_QD + i) % NR * 4 + a->idx) * BS;
}

/* Waits for `n` CQEs of the given kind (user_data slot | write << 8),
 * each at most once, within 10 s each: a completion lost between the
 * threads that may post it would hang here. */
static void th_reap(struct io_uring *ring, int n, int write, unsigned *seen)
{
	struct __kernel_timespec ts = { .tv_sec = 10 };

	for (int got = 0; got < n;) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		unsigned slot;

		CHECK(ret == 0, "thread: wait for %s %d of %d: %d", write ? "write" : "read", got, n, ret);
		slot = cqe->user_data & 0xff;
		CHECK(slot < TH_QD && (cqe->user_data >> 8) == (unsigned)write, "thread: user_data %llx",
		      (unsigned long long)cqe->user_data);
		CHECK(cqe->res == BS, "thread: result %d", cqe->res);
		CHECK(!(*seen & 1u << slot), "thread: slot %u completed twice", slot);
		*seen |= 1u << slot;
		io_uring_cqe_seen(ring, cqe);
		got++;
	}
}

static void *th_io(void *p)
{
	struct th_arg *a = p;
	struct io_uring ring;
	unsigned flags = a->idx == 0 ? IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN : 0;
	char *b;

	if (io_uring_queue_init(16, &ring, flags) == -EINVAL)
		CHECK_EQ(io_uring_queue_init(16, &ring, 0), 0, "thread: setup");
	CHECK_EQ(posix_memalign((void **)&b, 4096, TH_QD * BS), 0, "memalign");
	for (int round = 0; round < TH_ROUNDS; round++) {
		uint64_t seed = a->seed + round;
		unsigned seen = 0;

		for (int i = 0; i < TH_QD; i++) {
			off_t off = th_off(a, round, i);
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			tu_pattern_fill(b + (size_t)i * BS, BS, seed, (uint64_t)off);
			io_uring_prep_write(sqe, a->fd, b + (size_t)i * BS, BS, off);
			sqe->user_data = 1u << 8 | i;
		}
		CHECK_EQ(io_uring_submit(&ring), TH_QD, "thread: submit writes");
		th_reap(&ring, TH_QD, 1, &seen);
		memset(b, 0, TH_QD * BS);
		seen = 0;
		for (int i = 0; i < TH_QD; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_read(sqe, a->fd, b + (size_t)i * BS, BS, th_off(a, round, i));
			sqe->user_data = i;
		}
		CHECK_EQ(io_uring_submit(&ring), TH_QD, "thread: submit reads");
		th_reap(&ring, TH_QD, 0, &seen);
		for (int i = 0; i < TH_QD; i++) {
			CHECK(tu_pattern_check(b + (size_t)i * BS, BS, seed, (uint64_t)th_off(a, round, i)) < 0,
			      "thread %d: data of read %d", a->idx, i);
		}
	}
	free(b);
	io_uring_queue_exit(&ring);
	return NULL;
}

/* Enters a ring of its own over and over (a NOP each time): its calls
 * may find the other threads' I/O finished and post it. */
static void *th_poke(void *p)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;

	(void)p;
	CHECK_EQ(io_uring_queue_init(4, &ring, 0), 0, "poker: setup");
	while (!th_stop) {
		io_uring_prep_nop(io_uring_get_sqe(&ring));
		CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "poker: submit");
		CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "poker: cqe");
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return NULL;
}

static void threads(int fd, uint64_t seed)
{
	pthread_t io[TH], poke;
	struct th_arg a[TH];

	th_stop = 0;
	CHECK_EQ(pthread_create(&poke, NULL, th_poke, NULL), 0, "pthread_create");
	for (int t = 0; t < TH; t++) {
		a[t] = (struct th_arg){ .fd = fd, .idx = t, .seed = seed + (uint64_t)t * 1000 };
		CHECK_EQ(pthread_create(&io[t], NULL, th_io, &a[t]), 0, "pthread_create");
	}
	for (int t = 0; t < TH; t++)
		CHECK_EQ(pthread_join(io[t], NULL), 0, "pthread_join");
	th_stop = 1;
	CHECK_EQ(pthread_join(poke, NULL), 0, "pthread_join");
}

static void setup_ring_flags(struct io_uring *ring, int fd, unsigned flags)
{
	struct iovec reg = { buf, (size_t)NR * BS };

	CHECK_EQ(io_uring_queue_init(64, ring, flags), 0, "setup");
	CHECK_EQ(io_uring_register_buffers(ring, &reg, 1), 0, "register buffers");
	CHECK_EQ(io_uring_register_files(ring, &fd, 1), 0, "register files");
}

static void setup_ring(struct io_uring *ring, int fd)
{
	setup_ring_flags(ring, fd, 0);
}

/* The same writes and reads on a ring whose completions wait for the
 * submitter's next call (DEFER_TASKRUN), and on one an SQ thread submits
 * for (skipped where the kernel lacks either). */
static void other_rings(const char *path, int *fd, uint64_t seed)
{
	unsigned flags[] = { IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_SQPOLL };

	for (unsigned i = 0; i < 2; i++) {
		struct io_uring ring;
		int ret = io_uring_queue_init(4, &ring, flags[i]);

		if (ret == -EINVAL) {
			tu_lacks(i ? "IORING_SETUP_SQPOLL" : "IORING_SETUP_DEFER_TASKRUN");
			continue;
		}
		CHECK_EQ(ret, 0, "setup");
		io_uring_queue_exit(&ring);
		setup_ring_flags(&ring, *fd, flags[i]);
		batch(&ring, path, fd, seed + i, 0);
		io_uring_queue_exit(&ring);
	}
}

/* A temporary file with every block written and out of the page cache
 * (O_DIRECT overwrites then neither allocate nor invalidate cached
 * pages); returns it opened O_DIRECT. */
static int direct_file(char *path, size_t len)
{
	int fd = tu_temp_file(path, len), dfd;

	for (off_t off = 0; off < FILE_LEN; off += BS) {
		tu_pattern_fill(tmp, BS, 1, (uint64_t)off);
		tu_pwrite_all(fd, tmp, BS, off);
	}
	CHECK_EQ(fdatasync(fd), 0, "fdatasync");
	CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0, "fadvise");
	dfd = open(path, O_RDWR | O_DIRECT);
	if (dfd < 0 && errno == EINVAL)
		SKIP("%s does not do O_DIRECT", path);
	CHECK(dfd >= 0, "open O_DIRECT: %s", strerror(errno));
	close(fd);
	return dfd;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	char path[64];
	int dfd, most, status;
	int aio = aio_expected();
	uint64_t seed = 11;
	pid_t pid;

	(void)argc;
	tu_set_name(argv[0]);
	CHECK_EQ(posix_memalign((void **)&buf, 4096, (size_t)NR * 2 * BS), 0, "memalign");
	CHECK_EQ(posix_memalign((void **)&tmp, 4096, BS), 0, "memalign");
	dfd = direct_file(path, sizeof(path));
	/* First, as the process's only ring: its exit also ends the engine's
	 * AIO context and threads. */
	exit_in_flight(path, ++seed);
	setup_ring(&ring, dfd);

	/* In flight together; on native AIO, without a thread each. */
	most = 0;
	for (int i = 0; i < 3; i++) {
		int m = batch(&ring, path, &dfd, ++seed, 0);
		if (m > most)
			most = m;
	}
	/* None was made: nothing went to a worker. */
	if (aio)
		CHECK_EQ(most, 0, "io workers while on native AIO");
	batch(&ring, path, &dfd, ++seed, 1);
	chains(&ring, dfd, ++seed);
	errors(&ring, dfd);
	holes(&ring, dfd, ++seed);
	cancel(&ring, dfd, ++seed);
	exit_in_flight(path, ++seed);
	other_rings(path, &dfd, ++seed);
	threads(dfd, ++seed);
	seed += TH * 1000 + TH_ROUNDS;
	{
		struct io_uring plain;

		CHECK_EQ(io_uring_queue_init(8, &plain, 0), 0, "setup");
		stale_hint(&plain, path, ++seed);
		io_uring_queue_exit(&plain);
		seed += 4;
	}

	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct io_uring child;
		char cpath[64];
		int cfd = direct_file(cpath, sizeof(cpath));

		setup_ring(&child, cfd);
		batch(&child, cpath, &cfd, 1000, 0);
		chains(&child, cfd, 1001);
		io_uring_queue_exit(&child);
		unlink(cpath);
		_exit(0);
	}
	/* The parent's ring, now shared with the child, goes on too. */
	batch(&ring, path, &dfd, ++seed, 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	io_uring_queue_exit(&ring);
	close(dfd);
	/* On the engine, once more with that I/O on workers. */
	if (tu_on_engine() && !getenv("LIBURING_RS_AIO")) {
		pid = fork();
		CHECK(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0) {
			setenv("LIBURING_RS_AIO", "0", 1);
			execv("/proc/self/exe", argv);
			_exit(127);
		}
		CHECK_EQ(waitpid(pid, &status, 0), pid, "waitpid");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "with LIBURING_RS_AIO=0: status %#x", status);
	}
	return tu_done();
}
