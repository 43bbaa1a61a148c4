/* SPDX-License-Identifier: MIT */
/*
 * Every request runs with the credentials of the thread that submitted it,
 * wherever it runs, as on the kernel (the kernel's answer is what each
 * check expects; the test needs root):
 *  - a thread that lowered only its own ids (raw setresuid, or setfsuid)
 *    gets -EACCES for an openat of a root-only file with IOSQE_ASYNC, an
 *    O_CREAT in a root-only directory, an unlinkat of a root-owned file,
 *    an openat linked behind a recv that waits, and one behind a drain;
 *  - an SQPOLL ring runs its requests with its creator's credentials;
 *  - a personality records fs ids and capabilities: one registered by a
 *    thread with setfsuid(), or by a root thread without CAP_DAC_OVERRIDE,
 *    cannot open another user's 0600 file;
 *  - a setuid-root program (real uid 1000, effective 0) can use a
 *    personality of uid 2000, and keeps root afterwards;
 *  - setuid() of the process while a worker runs a personality request
 *    leaves no thread with root, and later requests do not get it back;
 *  - under AT_SECURE (a setuid program) LIBURING_RS_ENGINE is ignored;
 *  - a thread without CAP_DAC_OVERRIDE gets -EACCES for an openat of
 *    user1's 0600 file linked behind a recv, when the recv completes
 *    while another thread waits on the ring, one that ran such a chain
 *    without the capability before and has since raised it again
 *    (capset alone, its ids unchanged);
 *  - the ring says so: IORING_FEAT_CUR_PERSONALITY.
 */
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include "op-util.h"

#define NOBODY 65534
#define USER1 1000
#define USER2 2000

int liburing_rs_ring_engine(struct io_uring *ring);

/* CHECK_EQ with a formatted note. */
#define EXPECT(got, want, ...)						\
	do {								\
		long long g_ = (got), w_ = (want);			\
		if (g_ != w_) {						\
			fprintf(stderr, "%s:%d: got %lld (%s), want %lld\n", \
				__FILE__, __LINE__, g_,			\
				g_ < 0 ? strerror((int)-g_) : "-", w_);	\
			FAIL(__VA_ARGS__);				\
		}							\
	} while (0)

static struct io_uring ring;

static int result_of(struct io_uring *r, unsigned long long ud, int n)
{
	int res = -1;

	for (int i = 0; i < n; i++) {
		struct op_cqe c = op_wait(r);

		if (c.user_data == ud)
			res = c.res;
	}
	if (res >= 0 && ud >= 100 && ud < 200)
		close(res);
	return res;
}

static struct io_uring_sqe *open_sqe(struct io_uring *r, const char *path,
				     int flags, unsigned sqe_flags)
{
	struct io_uring_sqe *sqe = op_sqe(r);

	io_uring_prep_openat(sqe, AT_FDCWD, path, flags, 0600);
	sqe->flags |= sqe_flags;
	sqe->user_data = 100;
	return sqe;
}

/* The calling thread alone takes on the ids (raw calls, not glibc's). */
static void lower_thread(unsigned uid)
{
	CHECK(syscall(SYS_setresgid, uid, uid, uid) == 0, "setresgid");
	CHECK(syscall(SYS_setresuid, uid, uid, uid) == 0, "setresuid");
}

static void check_denied(struct io_uring *r, const char *what)
{
	struct io_uring_sqe *sqe;
	int sv[2];
	char c = 'x';

	open_sqe(r, op_path("secret"), O_RDONLY, IOSQE_ASYNC);
	op_submit(r, 1);
	EXPECT(result_of(r, 100, 1), -EACCES, "%s: async openat of a root-only file", what);

	open_sqe(r, op_path("locked/new"), O_CREAT | O_WRONLY, 0);
	op_submit(r, 1);
	EXPECT(result_of(r, 100, 1), -EACCES, "%s: O_CREAT in a root-only directory", what);
	CHECK(access(op_path("locked/new"), F_OK) != 0, "%s: file created", what);

	io_uring_prep_unlinkat(op_sqe(r), AT_FDCWD, op_path("locked/victim"), 0);
	op_submit(r, 1);
	{
		struct op_cqe cq = op_wait(r);

		EXPECT(cq.res, -EACCES, "%s: unlinkat of a root-owned file", what);
	}
	CHECK(access(op_path("locked/victim"), F_OK) == 0, "%s: file deleted", what);

	/* Behind a recv that waits: the openat runs when the data comes. */
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	sqe = op_sqe(r);
	io_uring_prep_recv(sqe, sv[0], &c, 1, 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 0;
	open_sqe(r, op_path("secret"), O_RDONLY, 0);
	op_submit(r, 2);
	usleep(20000);
	EXPECT(write(sv[1], "y", 1), 1, "write");
	EXPECT(result_of(r, 100, 2), -EACCES, "%s: openat linked behind a recv", what);

	/* Behind a drain, once a pending recv ends. */
	sqe = op_sqe(r);
	io_uring_prep_recv(sqe, sv[0], &c, 1, 0);
	sqe->user_data = 0;
	open_sqe(r, op_path("secret"), O_RDONLY, IOSQE_IO_DRAIN);
	op_submit(r, 2);
	usleep(20000);
	EXPECT(write(sv[1], "z", 1), 1, "write");
	EXPECT(result_of(r, 100, 2), -EACCES, "%s: openat behind a drain", what);
	close(sv[0]);
	close(sv[1]);
}

/* Root's requests first, so that the threads that serve them later (on
 * the engine: workers, the reactor) exist before a thread lowers its ids. */
static void warm_up(void)
{
	struct io_uring_sqe *sqe;
	int sv[2];
	char c;

	for (int i = 0; i < 4; i++)
		open_sqe(&ring, op_path("secret"), O_RDONLY, IOSQE_ASYNC);
	op_submit(&ring, 4);
	for (int i = 0; i < 4; i++)
		CHECK(result_of(&ring, 100, 1) >= 0, "root's async openat");
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	sqe = op_sqe(&ring);
	io_uring_prep_recv(sqe, sv[0], &c, 1, 0);
	sqe->user_data = 0;
	op_submit(&ring, 1);
	usleep(20000);
	CHECK_EQ(write(sv[1], "w", 1), 1, "write");
	CHECK_EQ(result_of(&ring, 0, 1), 1, "recv");
	close(sv[0]);
	close(sv[1]);
}

static void *lowered_thread(void *arg)
{
	(void)arg;
	lower_thread(NOBODY);
	check_denied(&ring, "thread at uid nobody");
	return NULL;
}

static void *fsuid_thread(void *arg)
{
	(void)arg;
	syscall(SYS_setfsuid, NOBODY);
	EXPECT((int)syscall(SYS_setfsuid, -1), NOBODY, "setfsuid");
	check_denied(&ring, "thread at fsuid nobody");
	return NULL;
}

static void run_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	void *ret;

	CHECK(!pthread_create(&t, NULL, fn, arg), "pthread_create");
	pthread_join(t, &ret);
}

/* SQPOLL: the creator's credentials, not the submitter's. */
static void *sqpoll_by_nobody(void *arg)
{
	struct io_uring r;
	int ret;

	(void)arg;
	lower_thread(NOBODY);
	ret = op_sqpoll_ring(&r, 8, 100);
	if (ret == -EPERM)
		return NULL;
	EXPECT(ret, 0, "SQPOLL ring as nobody");
	open_sqe(&r, op_path("secret"), O_RDONLY, 0);
	op_submit(&r, 1);
	EXPECT(result_of(&r, 100, 1), -EACCES, "SQPOLL ring made by nobody");
	io_uring_queue_exit(&r);
	return NULL;
}

static void *submit_to_root_sqpoll(void *arg)
{
	struct io_uring *r = arg;

	lower_thread(NOBODY);
	open_sqe(r, op_path("secret"), O_RDONLY, 0);
	op_submit(r, 1);
	CHECK(result_of(r, 100, 1) >= 0, "nobody submitting to root's SQPOLL ring");
	return NULL;
}

static void test_sqpoll(void)
{
	struct io_uring r;

	run_thread(sqpoll_by_nobody, NULL);
	if (op_sqpoll_ring(&r, 8, 100) != 0)
		return;
	run_thread(submit_to_root_sqpoll, &r);
	io_uring_queue_exit(&r);
}

static int pers_id;

static void *register_with_fsuid(void *arg)
{
	(void)arg;
	syscall(SYS_setfsuid, USER2);
	pers_id = io_uring_register_personality(&ring);
	return NULL;
}

/* The calling thread's CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, in or
 * out of its effective set (root keeps them permitted). */
static void dac_caps(int on)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	unsigned dac = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);

	CHECK(!syscall(SYS_capget, &h, d), "capget");
	d[0].effective = on ? d[0].effective | dac : d[0].effective & ~dac;
	CHECK(!syscall(SYS_capset, &h, d), "capset");
}

static void *register_without_dac(void *arg)
{
	(void)arg;
	dac_caps(0);
	pers_id = io_uring_register_personality(&ring);
	return NULL;
}

static struct io_uring serve_ring;
static int serve_sv[2], serve_go[2], serve_done[2];

/* recv on serve_sv[0] linked to an openat of `path` (user_data 100). */
static void recv_then_open(const char *path)
{
	static char c;
	struct io_uring_sqe *sqe = op_sqe(&serve_ring);

	io_uring_prep_recv(sqe, serve_sv[0], &c, 1, 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 0;
	open_sqe(&serve_ring, path, O_RDONLY, 0);
}

/* Sends a byte to serve_sv[1] in 20 ms, from another thread, so that the
 * caller is waiting on the ring when the recv completes. */
static void *send_later(void *arg)
{
	(void)arg;
	usleep(20000);
	CHECK_EQ(write(serve_sv[1], "s", 1), 1, "write");
	return NULL;
}

static int wait_chain(void)
{
	pthread_t t;
	int res;

	CHECK(!pthread_create(&t, NULL, send_later, NULL), "pthread_create");
	res = result_of(&serve_ring, 100, 2);
	pthread_join(t, NULL);
	return res;
}

/* Submits a chain without CAP_DAC_OVERRIDE, then stays (the kernel runs
 * the chain's next link in its submitter's task) until told. */
static void *dropped_submitter(void *arg)
{
	char c;

	(void)arg;
	dac_caps(0);
	CHECK_EQ(read(serve_go[0], &c, 1), 1, "read");
	recv_then_open(op_path("user1"));
	op_submit(&serve_ring, 2);
	CHECK_EQ(write(serve_go[0], "k", 1), 1, "write");
	CHECK_EQ(read(serve_done[0], &c, 1), 1, "read");
	return NULL;
}

static void *raised_server(void *arg)
{
	char c;

	(void)arg;
	/* Its own chain first, without the capability: on the engine, the
	 * recv completes here (this thread waits) and so does the openat. */
	dac_caps(0);
	recv_then_open(op_path("victim-copy"));
	op_submit(&serve_ring, 2);
	CHECK(wait_chain() >= 0, "openat of a root-owned file without DAC caps");
	dac_caps(1);
	CHECK_EQ(write(serve_go[1], "g", 1), 1, "write");
	CHECK_EQ(read(serve_go[1], &c, 1), 1, "read");
	EXPECT(wait_chain(), -EACCES, "openat linked by a thread without CAP_DAC_OVERRIDE, run while a thread with it waits");
	CHECK_EQ(write(serve_done[1], "d", 1), 1, "write");
	return NULL;
}

static void test_raised_server(void)
{
	pthread_t sub, srv;
	int fd = open(op_path("victim-copy"), O_CREAT | O_WRONLY, 0600);

	CHECK(fd >= 0, "victim-copy");
	close(fd);
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, serve_sv), "socketpair");
	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, serve_go), "socketpair");
	CHECK(!pipe(serve_done), "pipe");
	op_ring(&serve_ring, 8, 0);
	CHECK(!pthread_create(&sub, NULL, dropped_submitter, NULL), "pthread_create");
	CHECK(!pthread_create(&srv, NULL, raised_server, NULL), "pthread_create");
	pthread_join(srv, NULL);
	pthread_join(sub, NULL);
	io_uring_queue_exit(&serve_ring);
	for (int i = 0; i < 2; i++) {
		close(serve_sv[i]);
		close(serve_go[i]);
		close(serve_done[i]);
	}
}

/* An openat of user1's 0600 file with personality pers_id, three ways. */
static void check_pers_denied(const char *what)
{
	static const unsigned flags[] = { 0, IOSQE_ASYNC };

	CHECK(pers_id > 0, "%s: register personality: %d", what, pers_id);
	for (int i = 0; i < 2; i++) {
		struct io_uring_sqe *sqe = open_sqe(&ring, op_path("user1"), O_RDONLY, flags[i]);

		sqe->personality = pers_id;
		op_submit(&ring, 1);
		EXPECT(result_of(&ring, 100, 1), -EACCES, "%s (flags %#x)", what, flags[i]);
	}
	EXPECT(io_uring_unregister_personality(&ring, pers_id), 0, "unregister");
	/* Root without a personality still opens it. */
	open_sqe(&ring, op_path("user1"), O_RDONLY, IOSQE_ASYNC);
	op_submit(&ring, 1);
	CHECK(result_of(&ring, 100, 1) >= 0, "%s: root afterwards", what);
}

static void *register_as_user2(void *arg)
{
	(void)arg;
	lower_thread(USER2);
	pers_id = io_uring_register_personality(&ring);
	return NULL;
}

/* A setuid-root program run by user1: real 1000, effective and saved 0. */
static void test_setuid_program(void)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct io_uring_sqe *sqe;

		op_ring(&ring, 16, 0);	/* the parent's stays the parent's */
		CHECK(!setresuid(USER1, 0, 0), "setresuid");
		run_thread(register_as_user2, NULL);
		CHECK(pers_id > 0, "register as user2: %d", pers_id);
		for (int i = 0; i < 2; i++) {
			sqe = open_sqe(&ring, op_path("user2"), O_RDONLY, i ? IOSQE_ASYNC : 0);
			sqe->personality = pers_id;
			op_submit(&ring, 1);
			CHECK(result_of(&ring, 100, 1) >= 0, "user2's file with user2's personality");
			sqe = open_sqe(&ring, op_path("secret"), O_RDONLY, i ? IOSQE_ASYNC : 0);
			sqe->personality = pers_id;
			op_submit(&ring, 1);
			EXPECT(result_of(&ring, 100, 1), -EACCES, "root's file with user2's personality");
		}
		open_sqe(&ring, op_path("secret"), O_RDONLY, IOSQE_ASYNC);
		op_submit(&ring, 1);
		CHECK(result_of(&ring, 100, 1) >= 0, "root's file without the personality");
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "setuid-program child: status %#x", st);
}

static void *late_writer(void *arg)
{
	int fd;

	(void)arg;
	usleep(200000);
	fd = open(op_path("fifo"), O_WRONLY);
	CHECK(fd >= 0, "open FIFO for writing");
	close(fd);
	return NULL;
}

/* No thread of the process has uid 0 (real, effective, saved or fs). */
static void check_no_root(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char path[300], line[256];

	CHECK(d, "opendir");
	while ((e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		/* The kernel's own io_uring threads keep the credentials they
		 * were made with and switch per request; the set*id() calls
		 * never reach them. The engine's threads must follow them. */
		if (tu_kernel_io_thread(e->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned a, b, c, dd;
			unsigned long long cap;

			if (sscanf(line, "Uid: %u %u %u %u", &a, &b, &c, &dd) == 4)
				CHECK(a && b && c && dd, "thread %s: %s", e->d_name, line);
			if (sscanf(line, "CapEff: %llx", &cap) == 1 || sscanf(line, "CapPrm: %llx", &cap) == 1)
				CHECK(!cap, "thread %s: %s", e->d_name, line);
		}
		fclose(f);
	}
	closedir(d);
}

/* setuid() while a worker runs a request with a personality. */
static void test_drop(void)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct io_uring_sqe *sqe;
		pthread_t t;
		int id;

		op_ring(&ring, 16, 0);
		run_thread(register_as_user2, NULL);
		id = pers_id;
		CHECK(id > 0, "register: %d", id);
		/* The open waits for a writer on a worker wearing user2's ids. */
		sqe = open_sqe(&ring, op_path("fifo"), O_RDONLY, 0);
		sqe->personality = id;
		op_submit(&ring, 1);
		usleep(50000);
		CHECK(!pthread_create(&t, NULL, late_writer, NULL), "pthread_create");
		CHECK(!setuid(USER1), "setuid");
		pthread_join(t, NULL);
		CHECK(result_of(&ring, 100, 1) >= 0, "FIFO open with the personality");
		usleep(50000);
		check_no_root();
		open_sqe(&ring, op_path("secret"), O_RDONLY, IOSQE_ASYNC);
		op_submit(&ring, 1);
		EXPECT(result_of(&ring, 100, 1), -EACCES, "async openat after the drop");
		check_no_root();
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "drop child: status %#x", st);
}

/* Child of a setuid copy of this program: prints what its ring runs on. */
static int secure_child(void)
{
	struct io_uring r;
	int ret = io_uring_queue_init(4, &r, 0);

	if (!getauxval(AT_SECURE))
		return 3;
	if (ret < 0)
		return 4;
	ret = liburing_rs_ring_engine(&r);
	io_uring_queue_exit(&r);
	return ret == 0 ? 10 : 11;
}

static int run_copy(const char *exe, const char *engine, int drop)
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		char *argv[] = { (char *)exe, "secure-child", NULL };

		if (engine)
			setenv("LIBURING_RS_ENGINE", engine, 1);
		else
			unsetenv("LIBURING_RS_ENGINE");
		if (drop && setresuid(USER1, USER1, USER1))
			_exit(2);
		execv(exe, argv);
		_exit(2);
	}
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_secure(void)
{
	char exe[64], buf[65536];
	int in, out, auto_st, st;
	ssize_t n;

	snprintf(exe, sizeof(exe), "/tmp/liburing-rs-creds-suid.%d", getpid());
	in = open("/proc/self/exe", O_RDONLY);
	out = open(exe, O_WRONLY | O_CREAT | O_EXCL, 0755);
	CHECK(in >= 0 && out >= 0, "copy of the test program");
	tu_register_cleanup(exe);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		EXPECT(write(out, buf, n), n, "write");
	close(in);
	close(out);
	CHECK(!chmod(exe, 04755), "chmod");
	st = run_copy(exe, "user", 1);
	if (st == 3 || st == 2 || st == 127) {
		/* no_new_privs (the seccomp helper), a nosuid /tmp, or a path
		 * user1 cannot reach: no AT_SECURE to test here. */
		printf("AT_SECURE part not run (child status %d)\n", st);
		return;
	}
	auto_st = run_copy(exe, NULL, 1);
	CHECK(auto_st == 10 || auto_st == 11, "setuid copy, auto: %d", auto_st);
	EXPECT(st, auto_st, "setuid copy with LIBURING_RS_ENGINE=user");
	EXPECT(run_copy(exe, "bogus", 1), auto_st, "setuid copy with LIBURING_RS_ENGINE=bogus");
}

int main(int argc, char *argv[])
{
	int fd;

	if (argc > 1 && !strcmp(argv[1], "secure-child"))
		return secure_child();
	tu_set_name(argv[0]);
	if (geteuid() != 0)
		SKIP("needs root to switch credentials");
	op_mkdtemp();
	CHECK(!chmod(op_dir, 0755), "chmod");
	fd = open(op_path("secret"), O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0, "secret");
	close(fd);
	CHECK(!mkdir(op_path("locked"), 0755), "mkdir");
	fd = open(op_path("locked/victim"), O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0, "victim");
	close(fd);
	for (int u = 0; u < 2; u++) {
		const char *name = u ? "user2" : "user1";

		fd = open(op_path(name), O_CREAT | O_WRONLY, 0600);
		CHECK(fd >= 0 && !fchown(fd, u ? USER2 : USER1, u ? USER2 : USER1), "%s", name);
		close(fd);
	}

	CHECK(!mkfifo(op_path("fifo"), 0666) && !chmod(op_path("fifo"), 0666), "mkfifo");
	op_ring(&ring, 16, 0);
	CHECK(ring.features & IORING_FEAT_CUR_PERSONALITY, "no IORING_FEAT_CUR_PERSONALITY");
	warm_up();
	run_thread(lowered_thread, NULL);
	run_thread(fsuid_thread, NULL);
	test_raised_server();
	test_sqpoll();

	run_thread(register_with_fsuid, NULL);
	check_pers_denied("personality registered with setfsuid(2000)");
	run_thread(register_without_dac, NULL);
	check_pers_denied("personality registered without CAP_DAC_OVERRIDE");

	test_setuid_program();
	test_drop();
	test_secure();
	io_uring_queue_exit(&ring);
	return tu_done();
}
