/* SPDX-License-Identifier: MIT */
/*
 * Path and descriptor opcodes, checked by their effect on the filesystem:
 * openat, open, openat2, open_direct/openat_direct (fixed file table),
 * close, close_direct, renameat/rename, unlinkat/unlink, mkdirat/mkdir,
 * symlinkat/symlink, linkat/link.
 */
#include <linux/openat2.h>
#include "op-util.h"

static int exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct open_how how;
	struct stat st;
	char buf[64];
	int fd, ret, dfd;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	op_mkdtemp();
	dfd = open(op_dir, O_DIRECTORY | O_RDONLY);
	CHECK(dfd >= 0, "open dir");

	/* openat relative to a directory fd creates the file with the mode */
	sqe = op_sqe(&ring);
	io_uring_prep_openat(sqe, dfd, "a", O_CREAT | O_RDWR | O_EXCL, 0640);
	fd = op_run1(&ring);
	CHECK(fd >= 0, "openat: %s", strerror(-fd));
	CHECK(write(fd, "hello", 5) == 5, "write via openat fd");
	CHECK(stat(op_path("a"), &st) == 0 && (st.st_mode & 0777) == 0640,
	      "openat: mode %o", st.st_mode & 0777);
	/* O_EXCL on an existing file */
	sqe = op_sqe(&ring);
	io_uring_prep_openat(sqe, dfd, "a", O_CREAT | O_RDWR | O_EXCL, 0640);
	CHECK_EQ(op_run1(&ring), -EEXIST, "openat O_EXCL existing");

	/* close returns 0 and the fd is gone */
	sqe = op_sqe(&ring);
	io_uring_prep_close(sqe, fd);
	CHECK_EQ(op_run1(&ring), 0, "close");
	CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF, "fd still open after close");

	/* open (AT_FDCWD) for reading */
	sqe = op_sqe(&ring);
	io_uring_prep_open(sqe, op_path("a"), O_RDONLY, 0);
	fd = op_run1(&ring);
	CHECK(fd >= 0, "open: %s", strerror(-fd));
	CHECK(read(fd, buf, sizeof(buf)) == 5 && !memcmp(buf, "hello", 5),
	      "open: wrong content");
	close(fd);

	/* openat2 with RESOLVE_BENEATH: a path escaping the dir is refused */
	if (op_has(&ring, IORING_OP_OPENAT2)) {
		memset(&how, 0, sizeof(how));
		how.flags = O_RDONLY;
		how.resolve = RESOLVE_BENEATH;
		sqe = op_sqe(&ring);
		io_uring_prep_openat2(sqe, dfd, "a", &how);
		fd = op_run1(&ring);
		CHECK(fd >= 0, "openat2: %s", strerror(-fd));
		close(fd);
		sqe = op_sqe(&ring);
		io_uring_prep_openat2(sqe, dfd, "../", &how);
		CHECK_EQ(op_run1(&ring), -EXDEV, "openat2 RESOLVE_BENEATH escape");
	}

	/* direct opens into the fixed table, then read through the slot */
	ret = io_uring_register_files_sparse(&ring, 4);
	CHECK_EQ(ret, 0, "register_files_sparse");
	sqe = op_sqe(&ring);
	io_uring_prep_openat_direct(sqe, dfd, "a", O_RDONLY, 0, 2);
	CHECK_EQ(op_run1(&ring), 0, "openat_direct into slot 2");
	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, 2, buf, sizeof(buf), 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	CHECK_EQ(op_run1(&ring), 5, "read from fixed slot 2");
	CHECK(!memcmp(buf, "hello", 5), "fixed read content");
	sqe = op_sqe(&ring);
	io_uring_prep_open_direct(sqe, op_path("a"), O_RDONLY, 0,
				  IORING_FILE_INDEX_ALLOC);
	ret = op_run1(&ring);
	CHECK(ret >= 0 && ret < 4 && ret != 2, "open_direct alloc: %d", ret);
	if (op_has(&ring, IORING_OP_OPENAT2)) {
		memset(&how, 0, sizeof(how));
		how.flags = O_RDONLY;
		sqe = op_sqe(&ring);
		io_uring_prep_openat2_direct(sqe, dfd, "a", &how, 3);
		CHECK_EQ(op_run1(&ring), 0, "openat2_direct into slot 3");
	}
	/* close_direct frees the slot; a second close is -EBADF */
	sqe = op_sqe(&ring);
	io_uring_prep_close_direct(sqe, 2);
	CHECK_EQ(op_run1(&ring), 0, "close_direct");
	sqe = op_sqe(&ring);
	io_uring_prep_close_direct(sqe, 2);
	CHECK_EQ(op_run1(&ring), -EBADF, "close_direct of an empty slot");
	CHECK_EQ(io_uring_unregister_files(&ring), 0, "unregister_files");

	/* mkdirat / mkdir */
	sqe = op_sqe(&ring);
	io_uring_prep_mkdirat(sqe, dfd, "d1", 0750);
	CHECK_EQ(op_run1(&ring), 0, "mkdirat");
	CHECK(stat(op_path("d1"), &st) == 0 && S_ISDIR(st.st_mode) &&
	      (st.st_mode & 0777) == 0750, "mkdirat result");
	sqe = op_sqe(&ring);
	io_uring_prep_mkdir(sqe, op_path("d2"), 0700);
	CHECK_EQ(op_run1(&ring), 0, "mkdir");
	sqe = op_sqe(&ring);
	io_uring_prep_mkdir(sqe, op_path("d2"), 0700);
	CHECK_EQ(op_run1(&ring), -EEXIST, "mkdir existing");

	/* renameat / rename */
	sqe = op_sqe(&ring);
	io_uring_prep_renameat(sqe, dfd, "a", dfd, "b", 0);
	CHECK_EQ(op_run1(&ring), 0, "renameat");
	CHECK(!exists(op_path("a")) && exists(op_path("b")), "renameat effect");
	sqe = op_sqe(&ring);
	io_uring_prep_rename(sqe, op_path("b"), op_path("d1/c"));
	CHECK_EQ(op_run1(&ring), 0, "rename");
	CHECK(exists(op_path("d1/c")), "rename effect");
	/* RENAME_NOREPLACE onto an existing name */
	CHECK(close(open(op_path("x"), O_CREAT | O_WRONLY, 0600)) == 0, "create x");
	sqe = op_sqe(&ring);
	io_uring_prep_renameat(sqe, AT_FDCWD, op_path("x"), AT_FDCWD,
			       op_path("d1/c"), RENAME_NOREPLACE);
	CHECK_EQ(op_run1(&ring), -EEXIST, "renameat RENAME_NOREPLACE");

	/* symlinkat / symlink */
	sqe = op_sqe(&ring);
	io_uring_prep_symlinkat(sqe, "d1/c", dfd, "s1");
	CHECK_EQ(op_run1(&ring), 0, "symlinkat");
	ret = readlink(op_path("s1"), buf, sizeof(buf) - 1);
	CHECK(ret == 4 && !memcmp(buf, "d1/c", 4), "symlinkat target");
	sqe = op_sqe(&ring);
	io_uring_prep_symlink(sqe, "nowhere", op_path("s2"));
	CHECK_EQ(op_run1(&ring), 0, "symlink");
	CHECK(lstat(op_path("s2"), &st) == 0 && S_ISLNK(st.st_mode), "symlink");

	/* linkat (following the symlink) / link */
	sqe = op_sqe(&ring);
	io_uring_prep_linkat(sqe, dfd, "s1", dfd, "h1", AT_SYMLINK_FOLLOW);
	CHECK_EQ(op_run1(&ring), 0, "linkat");
	CHECK(stat(op_path("d1/c"), &st) == 0 && st.st_nlink == 2,
	      "linkat: nlink %ld", (long)st.st_nlink);
	sqe = op_sqe(&ring);
	io_uring_prep_link(sqe, op_path("d1/c"), op_path("h2"), 0);
	CHECK_EQ(op_run1(&ring), 0, "link");
	CHECK(stat(op_path("d1/c"), &st) == 0 && st.st_nlink == 3, "link nlink");

	/* unlinkat / unlink, and AT_REMOVEDIR */
	sqe = op_sqe(&ring);
	io_uring_prep_unlinkat(sqe, dfd, "h1", 0);
	CHECK_EQ(op_run1(&ring), 0, "unlinkat");
	sqe = op_sqe(&ring);
	io_uring_prep_unlink(sqe, op_path("h2"), 0);
	CHECK_EQ(op_run1(&ring), 0, "unlink");
	CHECK(stat(op_path("d1/c"), &st) == 0 && st.st_nlink == 1, "unlink nlink");
	sqe = op_sqe(&ring);
	io_uring_prep_unlinkat(sqe, dfd, "d2", 0);
	CHECK_EQ(op_run1(&ring), -EISDIR, "unlinkat on a dir without flag");
	sqe = op_sqe(&ring);
	io_uring_prep_unlinkat(sqe, dfd, "d2", AT_REMOVEDIR);
	CHECK_EQ(op_run1(&ring), 0, "unlinkat AT_REMOVEDIR");
	CHECK(!exists(op_path("d2")), "dir still there");
	sqe = op_sqe(&ring);
	io_uring_prep_unlink(sqe, op_path("d2"), 0);
	CHECK_EQ(op_run1(&ring), -ENOENT, "unlink missing");

	close(dfd);
	io_uring_queue_exit(&ring);
	return tu_done();
}
