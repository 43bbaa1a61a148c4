/* SPDX-License-Identifier: MIT */
/*
 * liburing_rs_setup_error(): after each kind of setup failure this machine
 * can produce, the line names the cause; it is kept per thread; and with
 * LIBURING_RS_CHECK set it is also printed to stderr, once, at the failure.
 *
 * Seccomp is produced with the helper build/helpers/no-uring: the test runs
 * itself again under it (argv[1] = "--under-filter").
 */
#define LIBURING_RS_SOURCE
#include <liburing.h>
#include <grp.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include "test-util.h"

#if !defined(LIBURING_RS) || LIBURING_RS != 1
#error "liburing.h must define LIBURING_RS to 1"
#endif

static const char *last(void)
{
	const char *s = liburing_rs_setup_error();

	return s ? s : "(null)";
}

/* Sets up a ring that must fail with `want`; the line must contain `text`. */
static void expect_failure(unsigned entries, struct io_uring_params *p, int want, const char *text)
{
	struct io_uring ring;
	int ret = io_uring_queue_init_params(entries, &ring, p);

	if (ret == 0)
		io_uring_queue_exit(&ring);
	CHECK_EQ(ret, want, "io_uring_queue_init_params");
	CHECK(strstr(last(), text), "line \"%s\" lacks \"%s\"", last(), text);
	CHECK(!strncmp(last(), "ring setup failed with ", 23), "line \"%s\"", last());
}

static void *other_thread(void *arg)
{
	struct io_uring ring;

	(void)arg;
	if (liburing_rs_setup_error())
		return (void *)"a new thread already has a line";
	if (io_uring_queue_init(0, &ring, 0) != -EINVAL)
		return (void *)"entries 0 did not fail";
	if (!strstr(last(), "at least 1 entry"))
		return (void *)"the thread's own line is wrong";
	return NULL;
}

/* Where the test helpers are: build/helpers, next to build/c-tests. */
static void helper_path(char *out, size_t len)
{
	char exe[2048];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	CHECK(n > 0, "readlink /proc/self/exe");
	exe[n] = '\0';
	for (int i = 0; i < 2; i++) {
		slash = strrchr(exe, '/');
		CHECK(slash, "no directory in %s", exe);
		*slash = '\0';
	}
	CHECK(snprintf(out, len, "%s/helpers/no-uring", exe) < (int)len, "path too long");
	CHECK(access(out, X_OK) == 0, "%s is missing (scripts/test.sh builds it)", out);
}

/*
 * Runs this test under the seccomp helper, with LIBURING_RS_CHECK set or
 * not, and returns what it wrote to stderr in `err`.
 */
static void run_filtered(const char *errname, int announce, char *err, size_t len)
{
	char helper[4096], exe[4096];
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	helper_path(helper, sizeof(helper));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0, "readlink");
	exe[n] = '\0';
	CHECK(pipe(fds) == 0, "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		if (announce)
			setenv("LIBURING_RS_CHECK", "1", 1);
		else
			unsetenv("LIBURING_RS_CHECK");
		unsetenv("LIBURING_RS_TRACE");
		/* In auto mode the userspace engine would take over. */
		setenv("LIBURING_RS_ENGINE", "kernel", 1);
		execl(helper, helper, errname, exe, "--under-filter", errname, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (got < (ssize_t)len - 1 && (n = read(fds[0], err + got, len - 1 - got)) > 0)
		got += n;
	err[got] = '\0';
	close(fds[0]);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "run under the %s filter failed (status 0x%x): %s", errname, status, err);
}

/* The part that runs under the filter. */
static int under_filter(const char *errname)
{
	int want = !strcmp(errname, "ENOSYS") ? -ENOSYS : -EPERM;
	struct io_uring ring;
	int ret = io_uring_queue_init(8, &ring, 0);

	if (ret != want) {
		printf("setup returned %d, want %d\n", ret, want);
		return 1;
	}
	if (!strstr(last(), "seccomp filter blocks io_uring")) {
		printf("line does not name seccomp: %s\n", last());
		return 1;
	}
	return 0;
}

/*
 * Linux 5.1-5.11 and 6.14+ charge ring memory to RLIMIT_MEMLOCK (unless the
 * process has CAP_IPC_LOCK); 5.12-6.13 charge the memory cgroup. In a child
 * without privileges and with a 4 KiB limit, a 4096-entry ring must fail
 * with a line naming RLIMIT_MEMLOCK and both sizes on the former, and
 * succeed on the latter.
 */
static void memlock_case(void)
{
	struct io_uring ring;
	struct utsname u;
	int major, minor, counts, status;
	pid_t pid;

	CHECK(uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2, "uname");
	counts = major * 100 + minor < 512 || major * 100 + minor >= 614;
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct rlimit rl = { 4096, 4096 };
		char sizes[128], sizes_old[128];
		int ret;

		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(10);
		/* As root, CAP_IPC_LOCK would lift the limit: become nobody. */
		if (geteuid() == 0 && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
				       setresuid(65534, 65534, 65534)))
			_exit(11);
		ret = io_uring_queue_init(4096, &ring, 0);
		if (!counts && ret == 0)
			_exit(0);
		/* The size of the last attempt: with NO_SQARRAY where the kernel has it. */
		snprintf(sizes, sizeof(sizes), "needs %zd bytes and the limit is 4096 bytes",
			 io_uring_memory_size(4096, IORING_SETUP_NO_SQARRAY));
		snprintf(sizes_old, sizeof(sizes_old), "needs %zd bytes and the limit is 4096 bytes",
			 io_uring_memory_size(4096, 0));
		if (counts && ret == -ENOMEM && strstr(last(), "RLIMIT_MEMLOCK is too low") &&
		    (strstr(last(), sizes) || strstr(last(), sizes_old)))
			_exit(0);
		fprintf(stderr, "kernel %d.%d: ret %d, line %s\n", major, minor, ret, last());
		_exit(12);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "memlock child exit 0x%x", status);
}

int main(int argc, char *argv[])
{
	struct io_uring_params p;
	struct io_uring ring;
	pthread_t thr;
	void *res;
	char err[4096];
	const char *before;
	const char *announced = "liburing-rs: ring setup failed with EPERM: a seccomp filter blocks io_uring";

	if (argc == 3 && !strcmp(argv[1], "--under-filter"))
		return under_filter(argv[2]);
	tu_set_name(argv[0]);
	if (tu_on_engine())
		SKIP("the diagnosis explains the kernel's refusals; here the "
		     "userspace engine sets rings up");

	CHECK(liburing_rs_setup_error() == NULL, "a line before any failure: %s", last());

	/* Entries out of range. */
	memset(&p, 0, sizeof(p));
	expect_failure(0, &p, -EINVAL, "a ring needs at least 1 entry");
	memset(&p, 0, sizeof(p));
	expect_failure(32769, &p, -EINVAL, "32769 entries is above the kernel's limit of 32768");

	/* A successful setup leaves the line alone. */
	before = liburing_rs_setup_error();
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CLAMP;
	CHECK_EQ(io_uring_queue_init_params(32769, &ring, &p), 0, "CLAMP");
	io_uring_queue_exit(&ring);
	CHECK(liburing_rs_setup_error() == before && strstr(last(), "32769"), "line changed: %s", last());

	/* CQ size out of range. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 2;
	expect_failure(8, &p, -EINVAL, "cq_entries 2 does not fit IORING_SETUP_CQSIZE");

	/* Flags no kernel knows, and one this kernel may not know yet. */
	memset(&p, 0, sizeof(p));
	p.flags = 1U << 28;
	expect_failure(8, &p, -EINVAL, "does not know the setup flag bit 28 (0x10000000)");
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQ_REWIND | IORING_SETUP_NO_SQARRAY;
	if (io_uring_queue_init_params(8, &ring, &p) == 0)
		io_uring_queue_exit(&ring);
	else
		/* Kernels before 6.6 know neither of the two flags. */
		CHECK(strstr(last(), "does not know the setup flag") &&
		      strstr(last(), "SQ_REWIND"), "line: %s", last());

	/* Caller memory too small for io_uring_queue_init_mem. */
	{
		void *mem = aligned_alloc(4096, 4096);
		char want[160];

		CHECK(mem, "aligned_alloc");
		memset(&p, 0, sizeof(p));
		CHECK_EQ(io_uring_queue_init_mem(64, &ring, &p, mem, 4096), -ENOMEM, "queue_init_mem");
		snprintf(want, sizeof(want), "the memory given to io_uring_queue_init_mem (4096 bytes) "
			 "is less than the %zd bytes this ring needs", io_uring_memory_size_params(64, &p));
		CHECK(strstr(last(), want), "line \"%s\" lacks \"%s\"", last(), want);
		free(mem);
	}

	/* A combination the kernel refuses. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_DEFER_TASKRUN;
	expect_failure(8, &p, -EINVAL, "IORING_SETUP_DEFER_TASKRUN needs IORING_SETUP_SINGLE_ISSUER");

	/* Each thread has its own line. */
	before = liburing_rs_setup_error();
	CHECK(pthread_create(&thr, NULL, other_thread, NULL) == 0, "pthread_create");
	CHECK(pthread_join(thr, &res) == 0, "pthread_join");
	CHECK(res == NULL, "%s", (const char *)res);
	CHECK(liburing_rs_setup_error() == before && strstr(last(), "SINGLE_ISSUER"),
	      "main thread's line changed: %s", last());

	memlock_case();

	/* Seccomp, both ways a filter may answer; the line is printed only on request. */
	run_filtered("EPERM", 0, err, sizeof(err));
	CHECK(err[0] == '\0', "stderr without LIBURING_RS_CHECK: %s", err);
	run_filtered("ENOSYS", 0, err, sizeof(err));
	run_filtered("EPERM", 1, err, sizeof(err));
	CHECK(!strncmp(err, announced, strlen(announced)), "stderr with LIBURING_RS_CHECK=1: %s", err);
	CHECK(strchr(err, '\n') && strchr(err, '\n')[1] == '\0', "more than one line: %s", err);

	tu_pass();
	return 0;
}
