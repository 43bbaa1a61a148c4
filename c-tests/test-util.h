/* SPDX-License-Identifier: MIT */
/*
 * Small shared helpers for the liburing-rs C test programs.
 *
 * Conventions: exit 0 = pass, 77 = skip (with a one-line reason on stderr),
 * anything else = fail (with a message saying what went wrong).
 */
#ifndef LIBURING_RS_TEST_UTIL_H
#define LIBURING_RS_TEST_UTIL_H

#include <dirent.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <unistd.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

/* Name of the running test, used as a prefix for messages. */
static const char *tu_name = "test";

static inline void tu_set_name(const char *argv0)
{
	const char *s = strrchr(argv0, '/');

	tu_name = s ? s + 1 : argv0;
}

/* Temp file path registered for removal on failure exits. */
static char tu_cleanup_paths[4][64];

static inline void tu_register_cleanup(const char *path)
{
	for (int i = 0; i < 4; i++) {
		if (!tu_cleanup_paths[i][0]) {
			snprintf(tu_cleanup_paths[i], sizeof(tu_cleanup_paths[i]),
				 "%s", path);
			return;
		}
	}
}

static inline void tu_unregister_cleanup(const char *path)
{
	for (int i = 0; i < 4; i++) {
		if (!strcmp(tu_cleanup_paths[i], path))
			tu_cleanup_paths[i][0] = '\0';
	}
}

static inline void tu_run_cleanup(void)
{
	for (int i = 0; i < 4; i++) {
		if (tu_cleanup_paths[i][0]) {
			unlink(tu_cleanup_paths[i]);
			tu_cleanup_paths[i][0] = '\0';
		}
	}
}

static inline void __attribute__((noreturn, format(printf, 2, 3)))
tu_exit(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: ", tu_name,
		code == T_EXIT_SKIP ? "SKIP" : "FAIL");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	tu_run_cleanup();
	exit(code);
}

#define FAIL(...) tu_exit(T_EXIT_FAIL, __VA_ARGS__)
#define SKIP(...) tu_exit(T_EXIT_SKIP, __VA_ARGS__)

/* Assert a condition; on failure print file:line, the expression and a note. */
#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			FAIL(__VA_ARGS__);				\
		}							\
	} while (0)

/* Assert an integer return value equals an expected one. */
#define CHECK_EQ(got, want, what)					\
	do {								\
		long long __g = (long long)(got);			\
		long long __w = (long long)(want);			\
		if (__g != __w) {					\
			fprintf(stderr, "%s:%d: %s\n", __FILE__,	\
				__LINE__, #got " == " #want);		\
			FAIL("%s: got %lld (%s), want %lld", what, __g,	\
			     __g < 0 ? strerror((int)-__g) : "-", __w);	\
		}							\
	} while (0)

/*
 * True when the kernel refuses io_uring itself (seccomp, the
 * io_uring_disabled sysctl): the raw system calls then have no kernel
 * ring to work on, and the library runs rings on its userspace engine.
 */
static inline int tu_kernel_uring_blocked(void)
{
	unsigned char params[120] = { 0 };	/* struct io_uring_params */
	long fd = syscall(__NR_io_uring_setup, 1, params);

	if (fd >= 0) {
		close((int)fd);
		return 0;
	}
	return errno == ENOSYS || errno == EPERM || errno == EACCES;
}

static inline void tu_pass(void)
{
	printf("%s: PASS\n", tu_name);
	tu_run_cleanup();
}

/*
 * Kernel features a test found missing and stepped around. A test that
 * noted any ends with tu_done() in a skip naming them, not in a pass: what
 * ran passed, but the test did not see everything it covers.
 */
static char tu_lacking[512];

static inline void tu_lacks(const char *feature)
{
	size_t n = strlen(tu_lacking);

	if (strstr(tu_lacking, feature))
		return;
	snprintf(tu_lacking + n, sizeof(tu_lacking) - n, "%s%s",
		 n ? ", " : "", feature);
}

/*
 * Whether this process's rings run on liburing-rs's userspace engine:
 * asked for with LIBURING_RS_ENGINE=user, or picked in auto mode because
 * the kernel refuses io_uring. The engine's features are its own, whatever
 * the running kernel's release.
 */
static inline int tu_on_engine(void)
{
	const char *e = getenv("LIBURING_RS_ENGINE");

	if (e && !strcmp(e, "user"))
		return 1;
	if (e && !strcmp(e, "kernel"))
		return 0;
	return tu_kernel_uring_blocked();
}

static inline int tu_done(void)
{
	if (tu_lacking[0])
		SKIP("%s lacks %s; the rest passed",
		     tu_on_engine() ? "the userspace engine" : "kernel",
		     tu_lacking);
	tu_pass();
	return T_EXIT_PASS;
}

/* Whether the running kernel is release major.minor or later. */
static inline int tu_kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	/* The engine is no kernel release: judge its refusals as an old one. */
	if (tu_on_engine())
		return 0;
	if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		ma = mi = 0;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * For an answer that means "not supported" when nothing else tells: on a
 * kernel older than the release that brought `feature`, notes it as
 * missing and returns 1; on a newer one returns 0, so that the caller's
 * check goes on and fails there.
 */
static inline int tu_lacks_before(int major, int minor, const char *feature)
{
	if (tu_kernel_at_least(major, minor))
		return 0;
	tu_lacks(feature);
	return 1;
}

/*
 * A ring's setup flags. While LIBURING_RS_TRACE or LIBURING_RS_CHECK is on,
 * liburing-rs keeps bit 31 of ring->flags set, to send the ring's submits
 * past its diagnostics; no kernel setup flag uses that bit.
 */
#define tu_ring_flags(ring) ((ring)->flags & ~(1U << 31))

/* Monotonic clock in nanoseconds. */
static inline long long tu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* xorshift64* pseudo random generator; deterministic for a given seed. */
static inline uint64_t tu_rand_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static inline void tu_fill_random(void *buf, size_t len, uint64_t seed)
{
	uint64_t st = seed ? seed : 0x9E3779B97F4A7C15ULL;
	unsigned char *p = buf;
	size_t i = 0;

	while (i < len) {
		uint64_t v = tu_rand_next(&st);
		size_t n = len - i < 8 ? len - i : 8;

		memcpy(p + i, &v, n);
		i += n;
	}
}

/* Position-dependent pattern: byte i of the stream holds a hash of (seed, i). */
static inline unsigned char tu_pattern_byte(uint64_t seed, uint64_t off)
{
	uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ULL ^ seed;

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 29;
	return (unsigned char)x;
}

static inline void tu_pattern_fill(void *buf, size_t len, uint64_t seed,
				   uint64_t start_off)
{
	unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = tu_pattern_byte(seed, start_off + i);
}

/* Returns -1 if ok, or the index of the first mismatching byte. */
static inline long long tu_pattern_check(const void *buf, size_t len,
					 uint64_t seed, uint64_t start_off)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != tu_pattern_byte(seed, start_off + i))
			return (long long)i;
	return -1;
}

/*
 * Create a temp file (in /tmp, falling back to the cwd) and return an fd
 * opened O_RDWR. The path is written to 'path' (at least 64 bytes) and is
 * registered for removal if the test fails.
 */
static inline int tu_temp_file(char *path, size_t pathlen)
{
	const char *dirs[] = { "/tmp", "." };
	int fd = -1;

	for (unsigned i = 0; i < 2 && fd < 0; i++) {
		snprintf(path, pathlen, "%s/liburing-rs-test.XXXXXX", dirs[i]);
		fd = mkstemp(path);
	}
	if (fd < 0)
		FAIL("mkstemp: %s", strerror(errno));
	tu_register_cleanup(path);
	return fd;
}

/* Write a whole buffer with pwrite, handling short writes. */
static inline void tu_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t r = pwrite(fd, p, len, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			FAIL("pwrite: %s", strerror(errno));
		}
		p += r;
		len -= (size_t)r;
		off += r;
	}
}

/* Read a whole buffer with pread; fails if the file is shorter. */
static inline void tu_pread_all(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			FAIL("pread: %s", strerror(errno));
		}
		if (r == 0)
			FAIL("pread: unexpected end of file");
		p += r;
		len -= (size_t)r;
		off += r;
	}
}

/* Temp file filled with 'len' random bytes (also returned in *data). */
static inline int tu_temp_file_random(char *path, size_t pathlen, size_t len,
				      uint64_t seed, unsigned char **data)
{
	int fd = tu_temp_file(path, pathlen);
	unsigned char *buf = malloc(len ? len : 1);

	if (!buf)
		FAIL("malloc(%zu) failed", len);
	tu_fill_random(buf, len, seed);
	tu_pwrite_all(fd, buf, len, 0);
	if (data)
		*data = buf;
	else
		free(buf);
	return fd;
}

/*
 * Count the entries of a directory such as /proc/self/fd or
 * /proc/self/task (-1 if it cannot be opened), "." and ".." aside. Like
 * tu_count_maps, it never mallocs, so counting cannot change the mapping
 * count under AddressSanitizer. Counting /proc/self/fd includes the
 * directory's own fd.
 */
static inline int tu_count_dir(const char *path)
{
	_Alignas(struct dirent64) char buf[4096];
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int n = 0;
	long r;

	if (fd < 0)
		return -1;
	while ((r = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < r;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);

			n += de->d_name[0] != '.';
			off += de->d_reclen;
		}
	}
	close(fd);
	return n;
}

/* Entries in /proc/self/fd (-1 if unavailable), the counting fd aside. */
static inline int tu_count_fds(void)
{
	int n = tu_count_dir("/proc/self/fd");

	return n < 0 ? n : n - 1;
}

/*
 * This process's fds open on `path` (-1 if /proc/self/fd is unavailable);
 * if `cloexec` is given, how many of them are close-on-exec. The library's
 * own references to a file (the engine's dups) count too.
 */
static inline int tu_fds_naming(const char *path, int *cloexec)
{
	char link[300], target[256];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0, ce = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		if (strcmp(target, path))
			continue;
		n++;
		ce += (fcntl(atoi(de->d_name), F_GETFD) & FD_CLOEXEC) != 0;
	}
	closedir(d);
	if (cloexec)
		*cloexec = ce;
	return n;
}

/*
 * Whether thread `tid` of this process is one of the kernel's io_uring
 * threads (an io-wq worker or SQPOLL thread): PF_IO_WORKER (0x10) in the
 * flags field of its stat. Their names (iou-wrk-*, iou-sqp-*) do not
 * tell, as the engine names its own threads alike.
 */
static inline int tu_kernel_io_thread(const char *tid)
{
	char path[300], line[1024], *p;
	unsigned long flags = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	/* After the name: state ppid pgrp session tty_nr tpgid flags. */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return 0;
	return (flags & 0x10) != 0;
}

/*
 * Threads of this process, thread `skip` aside (0: none), whose
 * /proc/self/task/TID/`file` reads as text that `match` accepts (the
 * first 63 bytes). Fails the test if /proc/self/task cannot be read.
 */
static inline int tu_count_tasks(const char *file, int (*match)(const char *text), pid_t skip)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d != NULL, "opendir /proc/self/task: %s", strerror(errno));
	while ((e = readdir(d))) {
		char path[300], text[64];
		int fd, len;

		if (e->d_name[0] == '.' || atoi(e->d_name) == skip)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/%s", e->d_name, file);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, text, sizeof(text) - 1);
		close(fd);
		if (len > 0) {
			text[len] = 0;
			n += match(text) != 0;
		}
	}
	closedir(d);
	return n;
}

/* The number after `key` (with its colon) in a /proc status file, or -1. */
static inline long long tu_status_value(const char *path, const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtoll(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Threads of this process (-1 if /proc/self/task is unavailable). */
static inline int tu_count_threads(void)
{
	return tu_count_dir("/proc/self/task");
}

/*
 * Count lines of /proc/self/maps (-1 if unavailable). Read with plain
 * read(2) into a stack buffer: going through stdio would malloc, and under
 * AddressSanitizer a first malloc of a size class maps a new region, which
 * would show up as a leaked mapping.
 */
static inline int tu_count_maps(void)
{
	char buf[4096];
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int n = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < r; i++)
			n += buf[i] == '\n';
	close(fd);
	return n;
}

/*
 * Counts /proc/self/maps until it comes back to `want`, for up to 10 s:
 * idle threads of the userspace engine exit a few seconds after their last
 * ring, and each takes its stack mappings with it. Returns the last count.
 */
static inline int tu_settled_maps(int want)
{
	int n = tu_count_maps();

	for (int i = 0; i < 100 && n != want; i++) {
		usleep(100 * 1000);
		n = tu_count_maps();
	}
	return n;
}

#endif
