/* SPDX-License-Identifier: MIT */
/*
 * sigsys-own: a program with SIGSYS handlers of its own (one set with
 * signal() before main, one with sigaction() in main) keeps them: setting
 * one reports the previous one, its own seccomp traps and a kill(SIGSYS)
 * reach its handler with their siginfo, and its raw io_uring calls still
 * work. system() (posix_spawn, whose child resets handlers with every
 * signal blocked) still runs its command.
 */
#include "raw.h"
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/audit.h>

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

static volatile sig_atomic_t first_hits, hits, last_code, last_errno;

static void first_handler(int sig)
{
	(void)sig;
	first_hits++;
}

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	hits++;
	last_code = si->si_code;
	last_errno = si->si_errno;
	if (si->si_code == SYS_SECCOMP)
		((ucontext_t *)uc)->uc_mcontext.gregs[REG_RAX] = 4242;
}

__attribute__((constructor)) static void early(void)
{
	signal(SIGSYS, first_handler);
}

static void nop(void)
{
	struct raw_ring r;
	struct io_uring_cqe c;
	struct io_uring_sqe *s;

	raw_init(&r, 4, 0);
	s = raw_sqe(&r);
	s->opcode = IORING_OP_NOP;
	s->user_data = 7;
	CHECK(raw_submit(&r, 1) == 1);
	CHECK(raw_peek(&r, &c) && c.user_data == 7 && c.res == 0);
	raw_exit(&r);
}

int main(void)
{
	struct sigaction sa, old;
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | 0x42),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fprog = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };

	nop();
	CHECK(kill(getpid(), SIGSYS) == 0);
	CHECK(first_hits == 1);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	CHECK(sigaction(SIGSYS, &sa, &old) == 0);
	CHECK(old.sa_handler == first_handler);
	CHECK(sigaction(SIGSYS, &sa, &old) == 0);
	CHECK(old.sa_sigaction == handler && (old.sa_flags & SA_SIGINFO));
	nop();
	CHECK(system("exit 3") == 3 << 8);
	CHECK(hits == 0);

	CHECK(kill(getpid(), SIGSYS) == 0);
	CHECK(hits == 1 && last_code == SI_USER);

	/* The program's own trap, with its own data. */
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) == 0);
	CHECK(syscall(__NR_getppid) == 4242);
	CHECK(hits == 2 && last_code == SYS_SECCOMP && last_errno == 0x42);
	nop();
	CHECK(hits == 2 && first_hits == 1);
	printf("sigsys-own: ok\n");
	return 0;
}
