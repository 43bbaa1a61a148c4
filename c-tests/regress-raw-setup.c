/*
 * Regression: the raw io_uring_setup() wrapper hands its arguments to the
 * kernel untouched, so a NULL params pointer reports the kernel's -EFAULT
 * (liburing's own io_uring_setup test expects exactly that), and a bad
 * entry count the kernel's -EINVAL.
 */
#include <liburing.h>
#include "test-util.h"

int main(void)
{
	struct io_uring_params p;
	int fd;

	tu_set_name("regress-raw-setup");
	if (tu_kernel_uring_blocked())
		SKIP("the kernel refuses io_uring: the raw wrappers have no ring to call");
	CHECK_EQ(io_uring_setup(1, NULL), -EFAULT, "setup with NULL params");

	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_setup(0, &p), -EINVAL, "setup with 0 entries");

	memset(&p, 0, sizeof(p));
	fd = io_uring_setup(4, &p);
	CHECK(fd >= 0, "setup(4): %d", fd);
	CHECK(p.sq_entries == 4 && p.cq_entries == 8, "geometry %u/%u",
	      p.sq_entries, p.cq_entries);
	close(fd);
	tu_pass();
	return 0;
}
