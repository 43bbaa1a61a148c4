/* SPDX-License-Identifier: MIT */
/*
 * bad-raw: garbage arguments to the raw io_uring calls, and mmap of a ring
 * fd at a wrong offset or size, or at an address of the caller's, get the
 * kernel's errno, and so do bad ring resizes; ordinary shared
 * file mappings at offset 0 (which the interception filter traps too)
 * still work.
 */
#include "raw.h"
#include <fcntl.h>

#define ERR(call, e) do { errno = 0; long r_ = (long)(call); \
	if (r_ != -1 || errno != (e)) { fprintf(stderr, "%s:%d: %s: got %ld errno %d, want errno %d\n", \
		__FILE__, __LINE__, #call, r_, errno, (e)); exit(1); } } while (0)

int main(void)
{
	struct io_uring_params p;
	struct raw_ring r;
	int pfd[2], tfd;
	char path[] = "/tmp/bad-raw-XXXXXX";
	void *m;

	memset(&p, 0, sizeof(p));
	ERR(sys_setup(0, &p), EINVAL);
	ERR(sys_setup(1, NULL), EFAULT);
	ERR(sys_setup(1, (void *)8), EFAULT);
	p.resv[1] = 1;
	ERR(sys_setup(1, &p), EINVAL);
	memset(&p, 0, sizeof(p));
	p.flags = 1u << 30;
	ERR(sys_setup(1, &p), EINVAL);
	memset(&p, 0, sizeof(p));
	ERR(sys_setup(1u << 20, &p), EINVAL);

	CHECK(pipe(pfd) == 0);
	ERR(sys_enter(-1, 0, 0, 0, NULL, 0), EBADF);
	ERR(sys_enter(999, 0, 0, 0, NULL, 0), EBADF);
	ERR(sys_enter(pfd[0], 0, 0, 0, NULL, 0), EOPNOTSUPP);
	ERR(sys_enter(pfd[0], 0, 0, 1u << 20, NULL, 0), EINVAL);
	ERR(sys_register(-1, 9999, NULL, 0), EINVAL);
	ERR(sys_register(999, IORING_REGISTER_PROBE, NULL, 0), EBADF);
	ERR(sys_register(pfd[0], IORING_REGISTER_PROBE, NULL, 0), EOPNOTSUPP);

	raw_init(&r, 4, 0);
	ERR(sys_enter(r.fd, 0, 0, 1u << 20, NULL, 0), EINVAL);
	ERR(sys_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, (void *)8, sizeof(struct io_uring_getevents_arg)), EFAULT);
	ERR(sys_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, NULL, 3), EINVAL);
	ERR(sys_register(r.fd, 9999, NULL, 0), EINVAL);
	ERR(sys_register(r.fd, IORING_REGISTER_FILES, (void *)8, 1), EFAULT);
	ERR(sys_register(r.fd, IORING_UNREGISTER_FILES, NULL, 0), ENXIO);

	/* Ring mappings at a wrong offset or size. */
	ERR(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0x18000000), ENOMEM);
	ERR(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, IORING_OFF_PBUF_RING), ENOMEM);
	ERR(mmap(NULL, 0, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, IORING_OFF_SQ_RING), EINVAL);
	/* The kernel places ring mappings itself: a hint or MAP_FIXED is refused. */
	m = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	ERR(mmap(m, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r.fd, IORING_OFF_SQ_RING), EINVAL);
	ERR(mmap((char *)m + 4096, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, IORING_OFF_SQES), EINVAL);
	munmap(m, 8192);
	/* Resizing wants a DEFER_TASKRUN ring, and one params struct. */
	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	ERR(sys_register(r.fd, IORING_REGISTER_RESIZE_RINGS, &p, 1), EINVAL);
	ERR(sys_register(r.fd, IORING_REGISTER_RESIZE_RINGS, NULL, 1), EINVAL);
	raw_exit(&r);

	/* A shared mapping of a plain file at offset 0. */
	tfd = mkstemp(path);
	CHECK(tfd >= 0);
	unlink(path);
	CHECK(write(tfd, "intercepted", 11) == 11);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
	CHECK(m != MAP_FAILED && !memcmp(m, "intercepted", 11));
	memcpy(m, "INTER", 5);
	CHECK(munmap(m, 4096) == 0);
	{
		char b[11];

		CHECK(pread(tfd, b, 11, 0) == 11 && !memcmp(b, "INTERcepted", 11));
	}
	ERR(mmap(NULL, 4096, PROT_READ, MAP_SHARED, 999, 0), EBADF);
	close(tfd);
	close(pfd[0]);
	close(pfd[1]);
	printf("bad-raw: ok\n");
	return 0;
}
