/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the tests of the diagnostics room (LIBURING_RS_TRACE and
 * LIBURING_RS_CHECK). The library reads those variables once, at the
 * first ring setup of a process, so each case runs in a fresh copy of the
 * test program: the parent re-executes itself with the variables it wants
 * and reads what the child wrote to stderr.
 */
#ifndef LIBURING_RS_DIAG_UTIL_H
#define LIBURING_RS_DIAG_UTIL_H

#include <signal.h>
#include <sys/wait.h>
#include "test-util.h"

struct du_run {
	char out[65536];	/* the child's stderr (and stdout) */
	size_t len;
	int status;		/* as from waitpid */
	pid_t pid;
};

/*
 * Runs this program again as "prog case NAME" with the environment
 * variables in `env` ("NAME=value" strings, NULL-terminated; a bare "NAME"
 * removes it), and collects its output.
 */
static inline void du_run_case(const char *name, const char *const *env,
			       struct du_run *r)
{
	int p[2];
	pid_t pid;
	ssize_t n;

	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		unsetenv("LIBURING_RS_TRACE");
		unsetenv("LIBURING_RS_CHECK");
		for (; env && *env; env++) {
			char var[256];
			const char *eq = strchr(*env, '=');

			if (!eq) {
				unsetenv(*env);
				continue;
			}
			snprintf(var, sizeof(var), "%.*s", (int)(eq - *env), *env);
			setenv(var, eq + 1, 1);
		}
		execl("/proc/self/exe", tu_name, "case", name, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	r->len = 0;
	while ((n = read(p[0], r->out + r->len, sizeof(r->out) - 1 - r->len)) > 0)
		r->len += n;
	r->out[r->len] = '\0';
	close(p[0]);
	CHECK(waitpid(pid, &r->status, 0) == pid, "waitpid");
	r->pid = pid;
}

/* Number of occurrences of `needle` in `text`. */
static inline int du_count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *s = text; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* The first line of `text` containing `needle`, copied into `line`. */
static inline const char *du_line(const char *text, const char *needle,
				  char *line, size_t size)
{
	const char *s = strstr(text, needle), *b, *e;

	if (!s)
		return NULL;
	for (b = s; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(s, '\n');
	if (!e)
		e = s + strlen(s);
	snprintf(line, size, "%.*s", (int)(e - b), b);
	return line;
}

/* Makes a private directory from `tmpl` (a mkdtemp pattern) in dir[64] and
 * a file `data` in it holding `len` bytes of `buf`, whose path the traced
 * cases find in DIAG_TRACE_DATA. */
static inline void du_trace_dir(const char *tmpl, char dir[64], char data[128], const void *buf, size_t len)
{
	int fd;

	snprintf(dir, 64, "%s", tmpl);
	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(data, 128, "%s/data", dir);
	fd = open(data, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0, "create %s", data);
	tu_pwrite_all(fd, buf, len, 0);
	close(fd);
	setenv("DIAG_TRACE_DATA", data, 1);
}

#endif
