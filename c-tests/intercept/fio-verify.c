/* SPDX-License-Identifier: MIT */
/*
 * fio-verify: fio's own io_uring engine (raw system calls, no liburing)
 * under `no-uring EPERM uring-run`: random writes verified by crc32c
 * read-back, plain and with --sqthread_poll, --fixedbufs and
 * --registerfiles. Each run must exit 0, report err= 0 and read back
 * every block it wrote. Without uring-run the same run must fail, which
 * shows io_uring really is blocked.
 *
 *   fio-verify NO-URING URING-RUN DIR
 *
 * Skips (77) when fio is not installed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

/* Runs argv with stdout and stderr into buf; returns the exit status. */
static int run(char *const argv[], char *buf, size_t len)
{
	int pfd[2], st;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while ((r = read(pfd[0], buf + n, len - 1 - n)) > 0 && n + r < len - 1)
		n += r;
	buf[n] = 0;
	close(pfd[0]);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* fio's verified random-write job under no-uring (and uring-run, if given). */
static int fio(char *nouring, char *uring_run, char *fname, char *extra, char *out, size_t len)
{
	char *args[20];
	int n = 0;

	args[n++] = nouring;
	args[n++] = "EPERM";
	if (uring_run)
		args[n++] = uring_run;
	args[n++] = "fio";
	args[n++] = "--name=verify";
	args[n++] = "--ioengine=io_uring";
	args[n++] = fname;
	args[n++] = "--size=16M";
	args[n++] = "--bs=4k";
	args[n++] = "--iodepth=32";
	args[n++] = "--rw=randwrite";
	args[n++] = "--verify=crc32c";
	args[n++] = "--verify_fatal=1";
	args[n++] = "--do_verify=1";
	args[n++] = "--verify_state_save=0";
	if (extra)
		args[n++] = extra;
	args[n] = NULL;
	return run(args, out, len);
}

int main(int argc, char **argv)
{
	static char out[1 << 16];
	char *extra[] = { NULL, "--sqthread_poll=1", "--fixedbufs=1", "--registerfiles=1" };
	char file[4096], fname[4200];
	int fail = 0, st;

	if (argc != 4) {
		fprintf(stderr, "usage: fio-verify NO-URING URING-RUN DIR\n");
		return 2;
	}
	if (system("fio --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "fio-verify: skip: fio is not installed (scripts/install-deps.sh installs it)\n");
		return 77;
	}
	/* fio leaves its files (verify state among them) in its directory. */
	if (chdir(argv[3])) {
		perror(argv[3]);
		return 1;
	}
	snprintf(file, sizeof(file), "%s/fio-verify.dat", argv[3]);
	snprintf(fname, sizeof(fname), "--filename=%s", file);
	st = fio(argv[1], NULL, fname, NULL, out, sizeof(out));
	if (st == 0 || !strstr(out, "Operation not permitted")) {
		fprintf(stderr, "fio-verify: fio without uring-run was not refused (exit %d):\n%s\n", st, out);
		fail = 1;
	}
	for (unsigned i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		st = fio(argv[1], argv[2], fname, extra[i], out, sizeof(out));
		if (st != 0 || !strstr(out, "err= 0") || !strstr(out, "READ: bw=") || strstr(out, "verify: bad")) {
			fprintf(stderr, "fio-verify: fio %s under uring-run failed (exit %d):\n%s\n", extra[i] ? extra[i] : "", st, out);
			fail = 1;
			continue;
		}
		printf("fio-verify: randwrite + crc32c verify %s: ok\n", extra[i] ? extra[i] : "(plain)");
	}
	unlink(file);
	return fail;
}
