/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_FIXED_FD_INSTALL: a fixed file becomes a normal descriptor;
 * and the kernel's answers to bad slots, flags and fields.
 */
#include "op-util.h"

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int p[2], fd;
	char ch;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 4, 0);
	op_need(&ring, IORING_OP_FIXED_FD_INSTALL, "IORING_OP_FIXED_FD_INSTALL");
	CHECK(pipe(p) == 0, "pipe");
	CHECK_EQ(io_uring_register_files(&ring, &p[0], 1), 0, "register_files");
	close(p[0]);	/* only the fixed slot refers to the read end now */

	sqe = op_sqe(&ring);
	io_uring_prep_fixed_fd_install(sqe, 0, 0);
	fd = op_run1(&ring);
	CHECK(fd >= 0, "fixed_fd_install: %s", strerror(-fd));
	/* installed O_CLOEXEC by default */
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC, "installed fd not CLOEXEC");
	CHECK(write(p[1], "i", 1) == 1 && read(fd, &ch, 1) == 1 && ch == 'i',
	      "read through installed fd");
	close(fd);
	sqe = op_sqe(&ring);
	io_uring_prep_fixed_fd_install(sqe, 0, IORING_FIXED_FD_NO_CLOEXEC);
	fd = op_run1(&ring);
	CHECK(fd >= 0 && fcntl(fd, F_GETFD) == 0, "NO_CLOEXEC install");
	close(fd);
	/* an empty slot */
	sqe = op_sqe(&ring);
	io_uring_prep_fixed_fd_install(sqe, 3, 0);
	CHECK_EQ(op_run1(&ring), -EBADF, "install from a bad slot");

	/* unknown flag, stray fields, not a fixed file; IOSQE_ASYNC is fine */
	sqe = op_sqe(&ring);
	io_uring_prep_fixed_fd_install(sqe, 0, 2);
	CHECK_EQ(op_run1(&ring), -EINVAL, "install with an unknown flag");
	sqe = op_sqe(&ring);
	io_uring_prep_fixed_fd_install(sqe, 0, 0);
	sqe->off = 1;
	CHECK_EQ(op_run1(&ring), -EINVAL, "install with sqe->off");
	sqe = op_sqe(&ring);
	io_uring_prep_fixed_fd_install(sqe, 0, 0);
	sqe->addr3 = 1;
	CHECK_EQ(op_run1(&ring), -EINVAL, "install with sqe->addr3");
	sqe = op_sqe(&ring);
	io_uring_prep_fixed_fd_install(sqe, 0, 0);
	sqe->flags = 0;
	CHECK_EQ(op_run1(&ring), -EBADF, "install without IOSQE_FIXED_FILE");
	sqe = op_sqe(&ring);
	io_uring_prep_fixed_fd_install(sqe, 0, 0);
	sqe->flags |= IOSQE_ASYNC;
	fd = op_run1(&ring);
	CHECK(fd >= 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC, "install with IOSQE_ASYNC: %d", fd);
	close(fd);
	sqe = op_sqe(&ring);
	io_uring_prep_fixed_fd_install(sqe, 1 << 20, 0);
	CHECK_EQ(op_run1(&ring), -EBADF, "install from a slot past the table");

	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
