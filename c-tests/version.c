/* SPDX-License-Identifier: MIT */
/*
 * Library version queries: io_uring_major_version/minor_version,
 * io_uring_check_version (true when the asked-for version is NEWER than the
 * library, i.e. "the library is too old"), the IO_URING_CHECK_VERSION macro
 * with the same meaning at compile time, and the version macros.
 */
#include <liburing.h>
#include "test-util.h"

#if !defined(IO_URING_VERSION_MAJOR) || !defined(IO_URING_VERSION_MINOR)
#error "version macros missing from liburing.h"
#endif

#if IO_URING_VERSION_MAJOR != 2 || IO_URING_VERSION_MINOR != 15
#error "headers do not describe liburing 2.15"
#endif

/* The macro must be usable in preprocessor conditionals. */
#if IO_URING_CHECK_VERSION(2, 15)
#error "IO_URING_CHECK_VERSION(2, 15) must be false for 2.15"
#endif
#if !IO_URING_CHECK_VERSION(2, 16)
#error "IO_URING_CHECK_VERSION(2, 16) must be true for 2.15"
#endif

struct vcase {
	int major, minor;
	bool too_old;	/* expected io_uring_check_version() result */
};

static const struct vcase cases[] = {
	{ 0, 0, false },
	{ 1, 0, false },
	{ 1, 99, false },
	{ 2, 0, false },
	{ 2, 1, false },
	{ 2, 14, false },
	{ 2, 15, false },
	{ 2, 16, true },
	{ 2, 100, true },
	{ 3, 0, true },
	{ 3, -1, true },
	{ 100, 0, true },
	{ -1, 1000, false },
	{ 2, -1, false },
};

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);

	CHECK_EQ(io_uring_major_version(), 2, "io_uring_major_version");
	CHECK_EQ(io_uring_minor_version(), 15, "io_uring_minor_version");
	CHECK_EQ(io_uring_major_version(), IO_URING_VERSION_MAJOR,
		 "runtime major vs header");
	CHECK_EQ(io_uring_minor_version(), IO_URING_VERSION_MINOR,
		 "runtime minor vs header");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct vcase *c = &cases[i];
		bool got = io_uring_check_version(c->major, c->minor);
		bool macro = IO_URING_CHECK_VERSION(c->major, c->minor);

		CHECK(got == c->too_old,
		      "io_uring_check_version(%d, %d) = %d, want %d",
		      c->major, c->minor, got, c->too_old);
		CHECK(macro == c->too_old,
		      "IO_URING_CHECK_VERSION(%d, %d) = %d, want %d",
		      c->major, c->minor, macro, c->too_old);
	}
	tu_pass();
	return T_EXIT_PASS;
}
