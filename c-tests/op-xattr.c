/* SPDX-License-Identifier: MIT */
/*
 * Extended attributes: setxattr/getxattr by path, fsetxattr/fgetxattr by
 * fd. Skips (77) when the scratch filesystem has no user xattrs.
 */
#include <sys/xattr.h>
#include "op-util.h"

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	char val[64];
	const char *p;
	int fd, ret;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	op_need(&ring, IORING_OP_SETXATTR, "IORING_OP_SETXATTR");
	op_need(&ring, IORING_OP_FGETXATTR, "IORING_OP_FGETXATTR");
	op_mkdtemp();
	p = op_path("f");
	fd = open(p, O_CREAT | O_RDWR, 0644);
	CHECK(fd >= 0, "open");
	if (fsetxattr(fd, "user.probe", "1", 1, 0) < 0)
		SKIP("filesystem of /tmp lacks user xattrs: %s",
		     strerror(errno));

	sqe = op_sqe(&ring);
	io_uring_prep_setxattr(sqe, "user.a", "value-a", p, 0, 7);
	CHECK_EQ(op_run1(&ring), 0, "setxattr");
	memset(val, 0, sizeof(val));
	CHECK(getxattr(p, "user.a", val, sizeof(val)) == 7 &&
	      !memcmp(val, "value-a", 7), "setxattr stored '%s'", val);

	memset(val, 0, sizeof(val));
	sqe = op_sqe(&ring);
	io_uring_prep_getxattr(sqe, "user.a", val, p, sizeof(val));
	CHECK_EQ(op_run1(&ring), 7, "getxattr");
	CHECK(!memcmp(val, "value-a", 7), "getxattr value '%s'", val);

	/* XATTR_CREATE on an existing name fails */
	sqe = op_sqe(&ring);
	io_uring_prep_setxattr(sqe, "user.a", "zz", p, XATTR_CREATE, 2);
	CHECK_EQ(op_run1(&ring), -EEXIST, "setxattr XATTR_CREATE existing");

	sqe = op_sqe(&ring);
	io_uring_prep_fsetxattr(sqe, fd, "user.b", "bee", 0, 3);
	CHECK_EQ(op_run1(&ring), 0, "fsetxattr");
	memset(val, 0, sizeof(val));
	sqe = op_sqe(&ring);
	io_uring_prep_fgetxattr(sqe, fd, "user.b", val, sizeof(val));
	CHECK_EQ(op_run1(&ring), 3, "fgetxattr");
	CHECK(!memcmp(val, "bee", 3), "fgetxattr value");
	/* too-small buffer */
	sqe = op_sqe(&ring);
	io_uring_prep_fgetxattr(sqe, fd, "user.b", val, 1);
	CHECK_EQ(op_run1(&ring), -ERANGE, "fgetxattr small buffer");
	/* missing attribute */
	sqe = op_sqe(&ring);
	io_uring_prep_getxattr(sqe, "user.none", val, p, sizeof(val));
	ret = op_run1(&ring);
	CHECK_EQ(ret, -ENODATA, "getxattr missing");

	close(fd);
	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
