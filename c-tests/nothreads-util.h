/* Refusing new threads to a test process, shared by the tests of what the
 * engine does when it cannot start a worker. */
#ifndef LIBURING_RS_NOTHREADS_UTIL_H
#define LIBURING_RS_NOTHREADS_UTIL_H

#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "test-util.h"

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

/*
 * Installs, on every thread of the process (TSYNC), a seccomp filter under
 * which making a thread fails with EAGAIN: clone with CLONE_THREAD, and
 * clone3 (whose flags sit in memory a filter cannot read). fork() still
 * works, through clone without CLONE_THREAD.
 */
static inline void tu_refuse_threads(void)
{
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
		/* clone's flags, args[0], low word */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAGAIN),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };

	CHECK(!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
	CHECK(!syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fp),
	      "seccomp: %s", strerror(errno));
}

#endif
