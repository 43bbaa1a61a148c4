/* SPDX-License-Identifier: MIT */
/*
 * File I/O opcodes, each run for real and checked by its effect:
 * write/read, writev/readv (+ v2 flags), write_fixed/read_fixed with
 * registered buffers, writev_fixed/readv_fixed, fsync, sync_file_range,
 * fallocate, fadvise, madvise, statx, ftruncate.
 */
#include <sys/mman.h>
#include <sys/uio.h>
#include <linux/stat.h>
#include "op-util.h"

#define SZ 8192

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	static unsigned char a[SZ], b[SZ];
	struct iovec iov[4];
	struct stat st;
	int fd, ret;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 16, 0);
	op_mkdtemp();
	fd = open(op_path("data"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0, "open: %s", strerror(errno));

	/* write then read back */
	tu_pattern_fill(a, SZ, 1, 0);
	sqe = op_sqe(&ring);
	io_uring_prep_write(sqe, fd, a, SZ, 0);
	CHECK_EQ(op_run1(&ring), SZ, "write");
	memset(b, 0, SZ);
	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, fd, b, SZ, 0);
	CHECK_EQ(op_run1(&ring), SZ, "read");
	CHECK(!memcmp(a, b, SZ), "read data differs from written");

	/* writev at an offset, readv back in pieces */
	tu_pattern_fill(a, SZ, 2, 0);
	for (int i = 0; i < 4; i++) {
		iov[i].iov_base = a + i * (SZ / 4);
		iov[i].iov_len = SZ / 4;
	}
	sqe = op_sqe(&ring);
	io_uring_prep_writev(sqe, fd, iov, 4, SZ);
	CHECK_EQ(op_run1(&ring), SZ, "writev");
	memset(b, 0, SZ);
	for (int i = 0; i < 4; i++) {
		iov[i].iov_base = b + (3 - i) * (SZ / 4);	/* reversed */
		iov[i].iov_len = SZ / 4;
	}
	sqe = op_sqe(&ring);
	io_uring_prep_readv(sqe, fd, iov, 4, SZ);
	CHECK_EQ(op_run1(&ring), SZ, "readv");
	for (int i = 0; i < 4; i++)
		CHECK(!memcmp(b + (3 - i) * (SZ / 4), a + i * (SZ / 4), SZ / 4),
		      "readv segment %d wrong", i);

	/* writev2 with RWF_DSYNC, readv2 with RWF_HIPRI=0 (plain flags) */
	iov[0].iov_base = a;
	iov[0].iov_len = 100;
	sqe = op_sqe(&ring);
	io_uring_prep_writev2(sqe, fd, iov, 1, 3 * SZ, RWF_DSYNC);
	CHECK_EQ(op_run1(&ring), 100, "writev2(RWF_DSYNC)");
	iov[0].iov_base = b;
	sqe = op_sqe(&ring);
	io_uring_prep_readv2(sqe, fd, iov, 1, 3 * SZ, 0);
	CHECK_EQ(op_run1(&ring), 100, "readv2");
	CHECK(!memcmp(a, b, 100), "readv2 data wrong");
	/* an invalid RWF flag must be rejected by the kernel */
	sqe = op_sqe(&ring);
	io_uring_prep_readv2(sqe, fd, iov, 1, 0, 0x40000000);
	CHECK_EQ(op_run1(&ring), -EOPNOTSUPP, "readv2 with bogus rw_flags");

	/* registered buffers: write_fixed / read_fixed */
	{
		unsigned char *rb = mmap(NULL, 2 * SZ, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct iovec reg[2] = { { rb, SZ }, { rb + SZ, SZ } };

		CHECK(rb != MAP_FAILED, "mmap");
		ret = io_uring_register_buffers(&ring, reg, 2);
		CHECK_EQ(ret, 0, "io_uring_register_buffers");
		tu_pattern_fill(rb, SZ, 3, 0);
		sqe = op_sqe(&ring);
		io_uring_prep_write_fixed(sqe, fd, rb, SZ, 0, 0);
		CHECK_EQ(op_run1(&ring), SZ, "write_fixed");
		memset(rb + SZ, 0, SZ);
		sqe = op_sqe(&ring);
		io_uring_prep_read_fixed(sqe, fd, rb + SZ, SZ, 0, 1);
		CHECK_EQ(op_run1(&ring), SZ, "read_fixed");
		CHECK(!memcmp(rb, rb + SZ, SZ), "read_fixed data wrong");
		/* a buffer outside the registered one is -EFAULT */
		sqe = op_sqe(&ring);
		io_uring_prep_read_fixed(sqe, fd, b, 16, 0, 0);
		CHECK_EQ(op_run1(&ring), -EFAULT, "read_fixed outside buffer");

		if (op_has(&ring, IORING_OP_WRITEV_FIXED) &&
		    op_has(&ring, IORING_OP_READV_FIXED)) {
			struct iovec v[2];

			tu_pattern_fill(rb, SZ, 4, 0);
			v[0].iov_base = rb;
			v[0].iov_len = 1000;
			v[1].iov_base = rb + 4000;
			v[1].iov_len = 1000;
			sqe = op_sqe(&ring);
			io_uring_prep_writev_fixed(sqe, fd, v, 2, 5 * SZ, 0, 0);
			CHECK_EQ(op_run1(&ring), 2000, "writev_fixed");
			memset(rb + SZ, 0, SZ);
			v[0].iov_base = rb + SZ;
			v[0].iov_len = 2000;
			sqe = op_sqe(&ring);
			io_uring_prep_readv_fixed(sqe, fd, v, 1, 5 * SZ, 0, 1);
			CHECK_EQ(op_run1(&ring), 2000, "readv_fixed");
			CHECK(!memcmp(rb + SZ, rb, 1000) &&
			      !memcmp(rb + SZ + 1000, rb + 4000, 1000),
			      "readv_fixed data wrong");
		}
		CHECK_EQ(io_uring_unregister_buffers(&ring), 0, "unregister");
		munmap(rb, 2 * SZ);
	}

	/* fsync, fdatasync and sync_file_range succeed on a regular file */
	sqe = op_sqe(&ring);
	io_uring_prep_fsync(sqe, fd, 0);
	CHECK_EQ(op_run1(&ring), 0, "fsync");
	sqe = op_sqe(&ring);
	io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	CHECK_EQ(op_run1(&ring), 0, "fdatasync");
	sqe = op_sqe(&ring);
	io_uring_prep_sync_file_range(sqe, fd, SZ, 0, 0);
	CHECK_EQ(op_run1(&ring), 0, "sync_file_range");
	sqe = op_sqe(&ring);
	io_uring_prep_fsync(sqe, 9999, 0);
	CHECK_EQ(op_run1(&ring), -EBADF, "fsync on a bad fd");

	/* fallocate extends the file */
	sqe = op_sqe(&ring);
	io_uring_prep_fallocate(sqe, fd, 0, 0, 1 << 20);
	ret = op_run1(&ring);
	if (ret != -EOPNOTSUPP) {
		CHECK_EQ(ret, 0, "fallocate");
		CHECK(fstat(fd, &st) == 0 && st.st_size == 1 << 20,
		      "fallocate: size %lld", (long long)st.st_size);
	}

	/* ftruncate */
	if (op_has(&ring, IORING_OP_FTRUNCATE)) {
		sqe = op_sqe(&ring);
		io_uring_prep_ftruncate(sqe, fd, 12345);
		CHECK_EQ(op_run1(&ring), 0, "ftruncate");
		CHECK(fstat(fd, &st) == 0 && st.st_size == 12345,
		      "ftruncate: size %lld", (long long)st.st_size);
	}

	/* fadvise / madvise */
	sqe = op_sqe(&ring);
	io_uring_prep_fadvise(sqe, fd, 0, 4096, POSIX_FADV_DONTNEED);
	CHECK_EQ(op_run1(&ring), 0, "fadvise");
	sqe = op_sqe(&ring);
	io_uring_prep_fadvise64(sqe, fd, 0, 1LL << 33, POSIX_FADV_NORMAL);
	ret = op_run1(&ring);
	if (ret != -EINVAL ||
	    !tu_lacks_before(6, 11, "64-bit fadvise/madvise lengths"))
		CHECK_EQ(ret, 0, "fadvise64");
	sqe = op_sqe(&ring);
	io_uring_prep_fadvise(sqe, fd, 0, 4096, 12345);
	CHECK_EQ(op_run1(&ring), -EINVAL, "fadvise with bad advice");
	{
		size_t len = 4 * 4096;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		CHECK(m != MAP_FAILED, "mmap");
		memset(m, 0x5a, len);
		sqe = op_sqe(&ring);
		io_uring_prep_madvise(sqe, m, len, MADV_DONTNEED);
		ret = op_run1(&ring);
		if (ret != -EINVAL) {
			CHECK_EQ(ret, 0, "madvise(DONTNEED)");
			/* private anonymous pages read back as zero */
			CHECK(m[0] == 0 && m[len - 1] == 0,
			      "MADV_DONTNEED did not drop the pages");
		}
		memset(m, 0x5a, len);
		sqe = op_sqe(&ring);
		io_uring_prep_madvise64(sqe, m, len, MADV_DONTNEED);
		ret = op_run1(&ring);
		if (ret != -EINVAL ||
		    !tu_lacks_before(6, 11, "64-bit fadvise/madvise lengths")) {
			CHECK_EQ(ret, 0, "madvise64");
			CHECK(m[4096] == 0, "madvise64 did not drop the pages");
		}
		munmap(m, len);
	}

	/* statx by path and by fd (AT_EMPTY_PATH) */
	{
		struct statx sx;

		memset(&sx, 0, sizeof(sx));
		sqe = op_sqe(&ring);
		io_uring_prep_statx(sqe, AT_FDCWD, op_path("data"), 0,
				    STATX_SIZE | STATX_MODE, &sx);
		CHECK_EQ(op_run1(&ring), 0, "statx");
		CHECK(fstat(fd, &st) == 0, "fstat");
		CHECK(sx.stx_size == (__u64)st.st_size &&
		      (sx.stx_mode & 0777) == 0644 && S_ISREG(sx.stx_mode),
		      "statx: size %llu mode %o", (unsigned long long)sx.stx_size,
		      sx.stx_mode);
		memset(&sx, 0, sizeof(sx));
		sqe = op_sqe(&ring);
		io_uring_prep_statx(sqe, fd, "", AT_EMPTY_PATH, STATX_INO, &sx);
		CHECK_EQ(op_run1(&ring), 0, "statx(AT_EMPTY_PATH)");
		CHECK(sx.stx_ino == st.st_ino, "statx inode mismatch");
		sqe = op_sqe(&ring);
		io_uring_prep_statx(sqe, AT_FDCWD, op_path("missing"), 0,
				    STATX_SIZE, &sx);
		CHECK_EQ(op_run1(&ring), -ENOENT, "statx on a missing file");
	}

	close(fd);
	io_uring_queue_exit(&ring);
	return tu_done();
}
