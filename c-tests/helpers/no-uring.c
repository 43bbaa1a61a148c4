/* SPDX-License-Identifier: MIT */
/*
 * no-uring: runs a command in a process where the io_uring system calls
 * fail, the way a container's seccomp profile makes them fail.
 *
 *   no-uring ERRNO COMMAND [ARG...]
 *
 * ERRNO is a name (EPERM, ENOSYS, EACCES, EINVAL, ENOMEM) or a number.
 * The helper installs a seccomp filter that answers io_uring_setup,
 * io_uring_enter and io_uring_register with -ERRNO and lets every other
 * system call through, then execs COMMAND (searched in PATH). Like any
 * seccomp filter it cannot be removed: COMMAND and everything it starts
 * keep it. No privileges are needed (it sets no_new_privs first).
 *
 * Exit status: COMMAND's own, or 2 for a usage error, 126 if the filter
 * cannot be installed, 127 if COMMAND cannot be run.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define THIS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define THIS_ARCH AUDIT_ARCH_I386
#elif defined(__riscv) && __riscv_xlen == 64
#define THIS_ARCH AUDIT_ARCH_RISCV64
#else
#error "no-uring: add this architecture's AUDIT_ARCH_* value"
#endif

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{ "EPERM", EPERM }, { "ENOSYS", ENOSYS }, { "EACCES", EACCES },
	{ "EINVAL", EINVAL }, { "ENOMEM", ENOMEM },
};

static int parse_errno(const char *s)
{
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (!strcmp(s, errnos[i].name))
			return errnos[i].value;
	v = strtol(s, &end, 10);
	if (*s && !*end && v > 0 && v <= SECCOMP_RET_DATA)
		return (int)v;
	return -1;
}

static int install_filter(int err)
{
	const unsigned int answer = SECCOMP_RET_ERRNO | ((unsigned int)err & SECCOMP_RET_DATA);
	struct sock_filter prog[] = {
		/* Another architecture's numbers mean other calls: let them be. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, answer),
	};
	struct sock_fprog fprog = {
		.len = sizeof(prog) / sizeof(prog[0]),
		.filter = prog,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0);
}

int main(int argc, char *argv[])
{
	int err;

	if (argc < 3 || (err = parse_errno(argv[1])) < 0) {
		fprintf(stderr, "usage: no-uring ERRNO COMMAND [ARG...]\n"
				"  ERRNO: EPERM, ENOSYS, EACCES, EINVAL, ENOMEM or a number\n");
		return 2;
	}
	if (install_filter(err)) {
		perror("no-uring: installing the seccomp filter");
		return 126;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "no-uring: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
