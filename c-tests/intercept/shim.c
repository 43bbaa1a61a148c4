/* SPDX-License-Identifier: MIT */
/*
 * shim: which io_uring calls trap. A seccomp trap while SIGSYS is blocked
 * kills the process (the kernel forces the default action), so a call
 * that returns with SIGSYS blocked took no trap.
 *
 *   shim syscall   with SIGSYS blocked, 1000 NOP round trips, a probe
 *                  registration and a second ring's setup through
 *                  syscall(3): under uring-run liburing-rs-syscall.so serves
 *                  them with no trap; without it the process dies of SIGSYS.
 *                  errno is kept across successful calls, and set (-1) for
 *                  a failed one, as glibc's syscall(3) does.
 *   shim asm       a NOP round trip by the program's own `syscall`
 *                  instruction: correct with SIGSYS open; in a child with
 *                  SIGSYS blocked, prints "asm=trapped" if the child died of
 *                  SIGSYS (interception), "asm=direct" if it returned (the
 *                  kernel's io_uring).
 */
#include "raw.h"
#include <signal.h>
#include <sys/wait.h>

static long asm_enter(int fd, unsigned submit, unsigned min, unsigned flags)
{
	register long r10 __asm__("r10") = flags;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)__NR_io_uring_enter), "D"((long)fd), "S"((long)submit), "d"((long)min), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static void sigsys(int how)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGSYS);
	CHECK(sigprocmask(how, &s, NULL) == 0);
}

static void nop(struct raw_ring *r, __u64 data)
{
	struct io_uring_sqe *s = raw_sqe(r);

	s->opcode = IORING_OP_NOP;
	s->user_data = data;
}

static void reap(struct raw_ring *r, __u64 data)
{
	struct io_uring_cqe c;

	CHECK(raw_peek(r, &c));
	CHECK(c.user_data == data && c.res == 0);
	CHECK(!raw_peek(r, &c));
}

static int through_syscall(struct raw_ring *r)
{
	static union {
		struct io_uring_probe p;
		char b[sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op)];
	} u;
	struct io_uring_probe *probe = &u.p;
	struct io_uring_params p2;
	int i, fd2;

	sigsys(SIG_BLOCK);
	for (i = 0; i < 1000; i++) {
		nop(r, i);
		errno = 1234;
		CHECK(raw_submit(r, 1) == 1);
		CHECK(errno == 1234);
		reap(r, i);
	}
	memset(&u, 0, sizeof(u));
	CHECK(sys_register(r->fd, IORING_REGISTER_PROBE, probe, 256) == 0);
	CHECK(probe->last_op >= IORING_OP_NOP && (probe->ops[IORING_OP_NOP].flags & IO_URING_OP_SUPPORTED));
	/* Failures: -1 and the kernel's errno. */
	CHECK(sys_enter(r->fd, 0, 0, 1u << 30, NULL, 0) == -1 && errno == EINVAL);
	CHECK(sys_register(r->fd, 9999, NULL, 0) == -1 && errno == EINVAL);
	memset(&p2, 0, sizeof(p2));
	fd2 = sys_setup(4, &p2);
	CHECK(fd2 >= 0 && p2.sq_entries == 4);
	sigsys(SIG_UNBLOCK);
	/* Closed with SIGSYS open: close() of a ring fd may trap. */
	close(fd2);
	printf("syscall: 1000 NOP round trips, a probe, a setup and two failures with SIGSYS blocked\n");
	return 0;
}

static int through_asm(struct raw_ring *r)
{
	int st;
	pid_t pid;

	nop(r, 7);
	atomic_store_explicit(r->sq_tail, r->sqe_tail, memory_order_release);
	CHECK(asm_enter(r->fd, 1, 1, IORING_ENTER_GETEVENTS) == 1);
	reap(r, 7);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		sigsys(SIG_BLOCK);
		_exit(asm_enter(r->fd, 0, 0, 0) == 0 ? 0 : 1);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) {
		printf("asm=trapped\n");
	} else {
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		printf("asm=direct\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct raw_ring r;
	int ret;

	if (argc != 2 || (strcmp(argv[1], "syscall") && strcmp(argv[1], "asm"))) {
		fprintf(stderr, "usage: shim syscall|asm\n");
		return 2;
	}
	raw_init(&r, 8, 0);
	ret = !strcmp(argv[1], "syscall") ? through_syscall(&r) : through_asm(&r);
	raw_exit(&r);
	return ret;
}
