/* SPDX-License-Identifier: MIT */
/*
 * policy: the container's seccomp policy holds for io_uring requests
 * served by interception, and is bypassed by the kernel's io_uring.
 *
 *   policy engine   under `no-uring EPERM uring-run`: IORING_OP_OPENAT
 *                   gets -EPERM once openat(2) is denied
 *   policy kernel   with io_uring allowed: the same OPENAT succeeds
 *
 * The program denies openat (and openat2) with EPERM on all its threads
 * after it has started (its loader needs openat), as a container's
 * profile would from the start.
 */
#include "raw.h"
#include <fcntl.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

static void deny_openat(void)
{
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fprog = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };

	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHECK(syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog) == 0);
}

static int openat_op(struct raw_ring *r, unsigned flags)
{
	struct io_uring_sqe *s = raw_sqe(r);
	struct io_uring_cqe c;

	s->opcode = IORING_OP_OPENAT;
	s->fd = AT_FDCWD;
	s->addr = (unsigned long)"/dev/null";
	s->open_flags = O_RDONLY;
	s->flags = flags;
	s->user_data = 9;
	CHECK(raw_submit(r, 1) == 1);
	raw_wait(r, &c);
	CHECK(c.user_data == 9);
	return c.res;
}

int main(int argc, char **argv)
{
	struct raw_ring r;
	int engine, res, res_async;

	if (argc != 2 || (strcmp(argv[1], "engine") && strcmp(argv[1], "kernel"))) {
		fprintf(stderr, "usage: policy engine|kernel\n");
		return 2;
	}
	engine = !strcmp(argv[1], "engine");
	raw_init(&r, 4, 0);
	res = openat_op(&r, 0);
	CHECK(res >= 0);
	close(res);
	deny_openat();
	errno = 0;
	CHECK(open("/dev/null", O_RDONLY) == -1 && errno == EPERM);
	res = openat_op(&r, 0);
	res_async = openat_op(&r, IOSQE_ASYNC);
	if (engine) {
		CHECK(res == -EPERM && res_async == -EPERM);
	} else {
		CHECK(res >= 0 && res_async >= 0);
		close(res);
		close(res_async);
	}
	raw_exit(&r);
	printf("policy %s: IORING_OP_OPENAT under a filter denying openat: %s\n", argv[1],
	       engine ? "-EPERM (the filter holds)" : "opened (the kernel's io_uring bypasses the filter)");
	return 0;
}
