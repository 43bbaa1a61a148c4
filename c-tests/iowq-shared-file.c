/* SPDX-License-Identifier: MIT */
/*
 * Several buffered writes to one file in one submit call, which on ext4
 * refuse RWF_NOWAIT and go to a worker (the engine then shares one dup of
 * the fd among them), keep the kernel's file semantics:
 * - 16 writes to each of two files, submitted together; the program then
 *   puts other files at both fd numbers (dup2) before it waits. Every
 *   write lands in the file its fd named at submission, none in the new
 *   files.
 * - Writes, an IORING_OP_CLOSE of their fd, and a write to that fd, in one
 *   submit call: the writes before the close land, the one after it fails
 *   with -EBADF, as in the kernel, which looks the fd up at submission.
 * - The same with IORING_OP_OPENAT putting a new file at the closed fd's
 *   number before the last write, which then lands in the new file.
 * - Across submit calls: writes still in flight from one call while the
 *   next names the same fd number. If the number still holds the same
 *   open file, the writes land there and, once all complete, no extra
 *   fd naming the file is left. If the program put the same file there
 *   again, opened read-only, the next write fails with -EBADF (a dup
 *   kept from the first call must not serve it); if it put another file
 *   there, the next write lands in that one.
 * Buffered writes to one file still run one at a time (iowq-parallel
 * checks that); here each write's result and the data are checked.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include "liburing.h"
#include "test-util.h"

#define NR 16
#define BS 4096

static unsigned char bufs[2][NR][BS];

static void prep_write(struct io_uring *ring, int fd, void *buf, off_t off, uint64_t ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK(sqe != NULL, "no SQE");
	io_uring_prep_write(sqe, fd, buf, BS, off);
	sqe->user_data = ud;
}

/* Checks that the file at 'path' holds NR blocks of pattern 'seed'. */
static void check_file(const char *path, uint64_t seed, int blocks)
{
	unsigned char back[BS];
	int fd = open(path, O_RDONLY);

	CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	for (int i = 0; i < blocks; i++) {
		CHECK(pread(fd, back, BS, (off_t)i * BS) == BS, "read back block %d", i);
		CHECK(tu_pattern_check(back, BS, seed, (uint64_t)i * BS) < 0, "block %d of %s holds other bytes", i,
		      path);
	}
	close(fd);
}

static void remove_file(const char *path)
{
	unlink(path);
	tu_unregister_cleanup(path);
}

static off_t size_of(int fd)
{
	struct stat st;

	CHECK(fstat(fd, &st) == 0, "fstat: %s", strerror(errno));
	return st.st_size;
}

/* Two files, NR writes to each in one call, both fds replaced before the wait. */
static void test_replaced_fds(struct io_uring *ring)
{
	char path[2][64], other[2][64];
	int fd[2], new[2];

	for (int f = 0; f < 2; f++) {
		fd[f] = tu_temp_file(path[f], sizeof(path[f]));
		new[f] = tu_temp_file(other[f], sizeof(other[f]));
		for (int i = 0; i < NR; i++)
			tu_pattern_fill(bufs[f][i], BS, 100 + f, (uint64_t)i * BS);
	}
	for (int i = 0; i < NR; i++)
		for (int f = 0; f < 2; f++)
			prep_write(ring, fd[f], bufs[f][i], (off_t)i * BS, (uint64_t)f << 8 | i);
	CHECK(io_uring_submit(ring) == 2 * NR, "submit");
	for (int f = 0; f < 2; f++) {
		CHECK(dup2(new[f], fd[f]) == fd[f], "dup2: %s", strerror(errno));
		close(new[f]);
	}
	for (int n = 0; n < 2 * NR; n++) {
		struct io_uring_cqe *cqe;

		CHECK(io_uring_wait_cqe(ring, &cqe) == 0, "wait");
		CHECK(cqe->res == BS, "write %llx: %d", (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
	for (int f = 0; f < 2; f++) {
		check_file(path[f], 100 + f, NR);
		CHECK(size_of(fd[f]) == 0, "a write reached the file put at fd %d after the submit", fd[f]);
		close(fd[f]);
		remove_file(path[f]);
		remove_file(other[f]);
	}
}

/*
 * NR writes to a file, IORING_OP_CLOSE of its fd, then (with 'reopen') an
 * IORING_OP_OPENAT that takes that number again, and one more write to
 * the number, all in one call.
 */
static void test_close_in_call(struct io_uring *ring, int reopen)
{
	char path[64], other[64];
	int fd = tu_temp_file(path, sizeof(path));
	const int lowest = fd;
	struct io_uring_sqe *sqe;
	int last_res = 0, opened = -1;

	/* The OPENAT must get fd's number: no lower number may be free. */
	for (;;) {
		int d = dup(0);

		CHECK(d >= 0, "dup: %s", strerror(errno));
		if (d > fd) {
			close(d);
			break;
		}
	}
	for (int i = 0; i < NR; i++)
		tu_pattern_fill(bufs[0][i], BS, 200, (uint64_t)i * BS);
	tu_pattern_fill(bufs[1][0], BS, 201, 0);
	for (int i = 0; i < NR; i++)
		prep_write(ring, fd, bufs[0][i], (off_t)i * BS, i);
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_close(sqe, fd);
	sqe->user_data = 1000;
	if (reopen) {
		int t = tu_temp_file(other, sizeof(other));

		close(t);
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_openat(sqe, AT_FDCWD, other, O_RDWR, 0);
		sqe->user_data = 1001;
	}
	prep_write(ring, fd, bufs[1][0], 0, 2000);
	CHECK(io_uring_submit(ring) == NR + 2 + reopen, "submit");
	for (int n = 0; n < NR + 2 + reopen; n++) {
		struct io_uring_cqe *cqe;

		CHECK(io_uring_wait_cqe(ring, &cqe) == 0, "wait");
		if (cqe->user_data < NR)
			CHECK(cqe->res == BS, "write %llu before the close: %d", (unsigned long long)cqe->user_data,
			      cqe->res);
		else if (cqe->user_data == 1000)
			CHECK(cqe->res == 0, "close: %d", cqe->res);
		else if (cqe->user_data == 1001)
			opened = cqe->res;
		else
			last_res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	check_file(path, 200, NR);
	if (!reopen) {
		CHECK(last_res == -EBADF, "write after the close: %d, not -EBADF", last_res);
	} else {
		CHECK(opened == lowest, "openat got fd %d, not %d", opened, lowest);
		CHECK(last_res == BS, "write after the openat: %d", last_res);
		check_file(other, 201, 1);
		close(opened);
		remove_file(other);
	}
	remove_file(path);
}

#define BIG (64 * 1024)
#define NBIG 32

static unsigned char big[BIG];

/* NBIG writes of BIG bytes to 'fd' in one call: some still run later. */
static void submit_big(struct io_uring *ring, int fd)
{
	for (int i = 0; i < NBIG; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		CHECK(sqe != NULL, "no SQE");
		io_uring_prep_write(sqe, fd, big, BIG, (off_t)i * BIG);
		sqe->user_data = 1000 + i;
	}
	CHECK(io_uring_submit(ring) == NBIG, "submit");
}

/* Reaps NBIG + 1 CQEs; returns the result of user_data 7. */
static int reap_big(struct io_uring *ring)
{
	int last = 0;

	for (int n = 0; n < NBIG + 1; n++) {
		struct io_uring_cqe *cqe;

		CHECK(io_uring_wait_cqe(ring, &cqe) == 0, "wait");
		if (cqe->user_data == 7)
			last = cqe->res;
		else
			CHECK(cqe->res == BIG, "write %llu: %d", (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
	return last;
}

/* how: 0 same open file, 1 reopened read-only, 2 another file. */
static void test_across_calls(struct io_uring *ring, int how)
{
	char path[64] = "/var/tmp/liburing-rs-test.XXXXXX", other[64];
	int fd = mkstemp(path);

	if (fd < 0)
		fd = tu_temp_file(path, sizeof(path));
	else
		tu_register_cleanup(path);
	int keep = open(path, O_RDONLY);
	CHECK(keep >= 0, "open: %s", strerror(errno));
	submit_big(ring, fd);
	if (how == 1) {
		int ro = open(path, O_RDONLY);
		CHECK(dup2(ro, fd) == fd, "dup2: %s", strerror(errno));
		close(ro);
	} else if (how == 2) {
		int nf = tu_temp_file(other, sizeof(other));
		CHECK(dup2(nf, fd) == fd, "dup2: %s", strerror(errno));
		close(nf);
	}
	tu_pattern_fill(bufs[0][0], BS, 300, 0);
	prep_write(ring, fd, bufs[0][0], (off_t)NBIG * BIG, 7);
	CHECK(io_uring_submit(ring) == 1, "submit");
	int last = reap_big(ring);
	if (how == 1) {
		CHECK(last == -EBADF, "write through a read-only fd: %d, want -EBADF", last);
	} else {
		CHECK(last == BS, "last write: %d", last);
		CHECK(size_of(keep) == (off_t)(how == 2 ? NBIG * BIG : NBIG * BIG + BS),
		      "the last write went to the wrong file (how %d)", how);
	}
	if (how == 2) {
		CHECK(size_of(fd) == (off_t)(NBIG * BIG) + BS, "the other file misses the last write");
		remove_file(other);
	}
	/*
	 * Every request is done: only the program's own fds name the file
	 * once the worker that posted the last CQE has let its dup go.
	 */
	int want = how == 2 ? 1 : 2, left = tu_fds_naming(path, NULL);
	for (int i = 0; i < 2000 && left != want; i++) {
		usleep(1000);
		left = tu_fds_naming(path, NULL);
	}
	CHECK(left == want, "fds left on %s: %d", path, left);
	close(fd);
	close(keep);
	remove_file(path);
}

int main(int argc, char **argv)
{
	struct io_uring ring;

	(void)argc;
	tu_set_name(argv[0]);
	CHECK(io_uring_queue_init(64, &ring, 0) == 0, "queue_init");
	for (int round = 0; round < 3; round++) {
		test_replaced_fds(&ring);
		test_close_in_call(&ring, 0);
		test_close_in_call(&ring, 1);
		for (int how = 0; how < 3; how++)
			test_across_calls(&ring, how);
	}
	io_uring_queue_exit(&ring);
	return tu_done();
}
