/* SPDX-License-Identifier: MIT */
/*
 * LIBURING_RS_TRACE: a child process runs a known sequence of requests
 * with the trace going to a file named after its pid; the parent then finds
 * one line per setup, registration, submission, completion and teardown,
 * with every field by name. Also: =1 traces to stderr, and without the
 * variable nothing is written at all.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>
#include "op-util.h"
#include "diag-util.h"

static struct io_uring ring;
static char buf[8192];

/* Waits in the library for n completions (so all are traced), then
 * consumes them. */
static void wait_n(unsigned n)
{
	struct io_uring_cqe *cqe;

	CHECK_EQ(io_uring_wait_cqes(&ring, &cqe, n, NULL, NULL), 0, "wait_cqes");
	io_uring_cq_advance(&ring, n);
}

static void *thread_nop(void *arg)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	(void)arg;
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 8);
	io_uring_submit_and_wait(&ring, 1);
	return NULL;
}

/* The traced program: every kind of line at least once. */
static void c_ops(const char *file)
{
	static struct __kernel_timespec ms1 = { .tv_nsec = 1000000 };
	static struct __kernel_timespec ms5 = { .tv_nsec = 5000000 };
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int p[2], fd, err;
	pthread_t t;

	op_ring(&ring, 8, 0);
	CHECK(pipe(p) == 0, "pipe");
	CHECK_EQ(io_uring_register_files(&ring, &p[0], 1), 0, "register_files");
	br = io_uring_setup_buf_ring(&ring, 2, 5, 0, &err);
	CHECK(br, "setup_buf_ring");
	io_uring_buf_ring_add(br, buf + 4096, 64, 17, io_uring_buf_ring_mask(2), 0);
	io_uring_buf_ring_advance(br, 1);

	sqe = op_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, file, O_RDONLY | O_CLOEXEC, 0);
	io_uring_sqe_set_data64(sqe, 1);
	io_uring_submit_and_wait(&ring, 1);
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek");
	fd = cqe->res;
	CHECK(fd >= 0, "openat: %s", strerror(-fd));
	io_uring_cqe_seen(&ring, cqe);

	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, fd, buf, 4096, 0);
	io_uring_sqe_set_data64(sqe, 2);
	sqe = op_sqe(&ring);
	io_uring_prep_timeout(sqe, &ms1, 0, 0);
	io_uring_sqe_set_data64(sqe, 3);
	sqe = op_sqe(&ring);
	io_uring_prep_poll_add(sqe, 0, POLLIN);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, 4);
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_sqe_set_data64(sqe, 5);
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 6);
	io_uring_submit(&ring);
	CHECK(write(p[1], "hello", 5) == 5, "write");
	wait_n(5);

	/* a provided buffer: the completion names its id */
	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, p[0], NULL, 64, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 5;
	io_uring_sqe_set_data64(sqe, 7);
	io_uring_submit_and_wait(&ring, 1);
	wait_n(1);

	/* another thread, another tid */
	CHECK(pthread_create(&t, NULL, thread_nop, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	wait_n(1);

	/* consumed by inline code alone, between two library calls */
	sqe = op_sqe(&ring);
	io_uring_prep_timeout(sqe, &ms5, 0, 0);
	io_uring_sqe_set_data64(sqe, 9);
	io_uring_submit(&ring);
	usleep(50000);
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek after sleep");
	io_uring_cqe_seen(&ring, cqe);

	io_uring_free_buf_ring(&ring, br, 2, 5);
	io_uring_queue_exit(&ring);
}

static void c_nop(void)
{
	struct io_uring_sqe *sqe;
	Dl_info info;

	/* where the library was found, when asked */
	if (getenv("DIAG_SHOW_LIB") && dladdr((void *)io_uring_queue_init, &info) && info.dli_fname)
		printf("library: %s\n", info.dli_fname);
	/* another user's link, planted at the name the trace will take */
	if (getenv("DIAG_PLANT")) {
		char name[256];

		snprintf(name, sizeof(name), "%s.%d", getenv("DIAG_PLANT"), (int)getpid());
		CHECK(symlink(getenv("DIAG_VICTIM"), name) == 0, "symlink %s: %s", name, strerror(errno));
	}

	op_ring(&ring, 4, 0);
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 7);
	io_uring_submit_and_wait(&ring, 1);
	io_uring_cq_advance(&ring, 1);
	io_uring_queue_exit(&ring);
}

/* Asserts that some line of `text` holds every one of the strings. */
static void want(const char *text, const char *a, const char *b, const char *c)
{
	for (const char *s = text; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		const char *e = strchr(s, '\n');
		char line[2048];

		snprintf(line, sizeof(line), "%.*s", e ? (int)(e - s) : (int)strlen(s), s);
		if (strstr(line, a) && (!b || strstr(line, b)) && (!c || strstr(line, c)))
			return;
	}
	FAIL("no trace line with \"%s\" / \"%s\" / \"%s\" in:\n%s", a, b ? b : "", c ? c : "", text);
}

static char text[65536];

static void read_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	CHECK(fd >= 0, "trace file %s: %s", path, strerror(errno));
	n = read(fd, text, sizeof(text) - 1);
	CHECK(n > 0, "empty trace file %s", path);
	text[n] = '\0';
	close(fd);
}

int main(int argc, char **argv)
{
	static struct du_run r;
	char dir[64], pattern[128], path[160], data[128], head[128], s1[256];
	const char *env[2] = { pattern, NULL };
	int fd;

	tu_set_name(argv[0]);
	if (argc == 3 && !strcmp(argv[1], "case")) {
		if (!strcmp(argv[2], "ops"))
			c_ops(getenv("DIAG_TRACE_DATA"));
		else
			c_nop();
		return 0;
	}
	du_trace_dir("/tmp/liburing-rs-trace.XXXXXX", dir, data, buf, sizeof(buf));

	/* to a file, %p expanded */
	snprintf(pattern, sizeof(pattern), "LIBURING_RS_TRACE=%s/trace.%%p", dir);
	du_run_case("ops", env, &r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "ops case failed:\n%s", r.out);
	CHECK(r.len == 0, "the trace went to stderr too:\n%s", r.out);
	snprintf(path, sizeof(path), "%s/trace.%d", dir, (int)r.pid);
	read_file(path);
	{
		struct stat sb;

		CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "trace file mode %o, want 0600",
		      sb.st_mode & 0777);
	}
	unlink(path);

	snprintf(head, sizeof(head), " pid=%d tid=%d ring=", (int)r.pid, (int)r.pid);
	CHECK(text[2] == ':' && text[5] == ':' && text[8] == '.' && text[15] == ' ',
	      "line does not start with HH:MM:SS.uuuuuu: %.40s", text);
	want(text, head, "setup entries=8 flags=0 -> flags=", "features=SINGLE_MMAP|");
	want(text, head, "register REGISTER_FILES nr=1 -> 0", NULL);
	want(text, "register REGISTER_PBUF_RING bgid=5 entries=2 -> 0", NULL, NULL);
	snprintf(s1, sizeof(s1), "path=\"%s\" open_flags=O_RDONLY|O_CLOEXEC mode=0", data);
	want(text, "submit OPENAT fd=AT_FDCWD off=0 len=0 addr=0x", "flags=0 user_data=0x1 ", s1);
	want(text, "complete user_data=0x1 res=", "flags=0 op=OPENAT latency=", NULL);
	want(text, "submit READ fd=", " off=0 len=4096 addr=0x", "flags=0 user_data=0x2");
	want(text, "complete user_data=0x2 res=4096 flags=0 op=READ latency=", NULL, NULL);
	want(text, "submit TIMEOUT fd=-1 off=0 len=1 addr=0x", "user_data=0x3 timeout=0.001s", NULL);
	want(text, "complete user_data=0x3 res=-ETIME flags=0 op=TIMEOUT latency=", NULL, NULL);
	want(text, "submit POLL_ADD fd=fixed:0 ", "flags=FIXED_FILE user_data=0x4 events=POLLIN", NULL);
	want(text, "complete user_data=0x4 res=1 flags=0 op=POLL_ADD latency=", NULL, NULL);
	want(text, "submit NOP fd=-1 ", "flags=LINK user_data=0x5", NULL);
	want(text, "complete user_data=0x6 res=0 flags=0 op=NOP latency=", NULL, NULL);
	want(text, "submit READ fd=", "flags=BUFFER_SELECT buf_group=5 user_data=0x7", NULL);
	want(text, "complete user_data=0x7 res=5 flags=F_BUFFER(17) op=READ latency=", NULL, NULL);
	want(text, "submit NOP ", "user_data=0x8", NULL);
	CHECK(!strstr(du_line(text, "user_data=0x8", s1, sizeof(s1)), head),
	      "the other thread's line has the main thread's tid: %s", s1);
	want(text, head, "1 completions reaped before they could be traced", NULL);
	want(text, head, "register UNREGISTER_PBUF_RING bgid=5 -> 0", NULL);
	want(text, head, "exit submitted=9 completions_traced=8 completions_unseen=1 peak_in_flight=", NULL);

	/* =1: stderr */
	du_run_case("nop", (const char *[]){ "LIBURING_RS_TRACE=1", NULL }, &r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "nop case failed:\n%s", r.out);
	want(r.out, "submit NOP fd=-1 off=0 len=0 addr=0x0 flags=0 user_data=0x7", NULL, NULL);
	want(r.out, "complete user_data=0x7 res=0 flags=0 op=NOP latency=", NULL, NULL);

	/*
	 * A trace file is never opened through a symlink (a name with %p:
	 * only a new file). The planted link's target stays untouched and the
	 * trace goes to stderr, in both formats.
	 */
	{
		char victim[128], link[128], plant[160], vict[160], trace[160];
		const char *fmts[] = { "LIBURING_RS_TRACE_FORMAT=text", "LIBURING_RS_TRACE_FORMAT=json" };
		static const char precious[] = "precious\n";
		char back[64];

		snprintf(victim, sizeof(victim), "%s/victim", dir);
		snprintf(link, sizeof(link), "%s/link", dir);
		fd = open(victim, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		CHECK(fd >= 0, "create %s", victim);
		tu_pwrite_all(fd, precious, strlen(precious), 0);
		close(fd);
		CHECK(symlink(victim, link) == 0, "symlink");
		snprintf(plant, sizeof(plant), "DIAG_PLANT=%s/planted", dir);
		snprintf(vict, sizeof(vict), "DIAG_VICTIM=%s", victim);
		for (int f = 0; f < 2; f++) {
			const char *planted[] = { pattern, fmts[f], plant, vict, NULL };
			const char *linked[] = { trace, fmts[f], NULL };

			snprintf(pattern, sizeof(pattern), "LIBURING_RS_TRACE=%s/planted.%%p", dir);
			du_run_case("nop", planted, &r);
			CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "planted case failed:\n%s", r.out);
			CHECK(strstr(r.out, "cannot open LIBURING_RS_TRACE file") && strstr(r.out, "(-EEXIST)"),
			      "a planted link at the %%p name was not refused:\n%s", r.out);
			CHECK(strstr(r.out, f ? "\"name\":\"NOP\"" : "submit NOP"), "no trace on stderr:\n%s", r.out);
			snprintf(path, sizeof(path), "%s/planted.%d", dir, (int)r.pid);
			unlink(path);

			snprintf(trace, sizeof(trace), "LIBURING_RS_TRACE=%s", link);
			du_run_case("nop", linked, &r);
			CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "linked case failed:\n%s", r.out);
			CHECK(strstr(r.out, "cannot open LIBURING_RS_TRACE file") && strstr(r.out, "(-ELOOP)"),
			      "a trace name that is a symlink was followed:\n%s", r.out);

			fd = open(victim, O_RDONLY);
			CHECK(fd >= 0, "open %s", victim);
			memset(back, 0, sizeof(back));
			CHECK(read(fd, back, sizeof(back) - 1) == (ssize_t)strlen(precious) && !strcmp(back, precious),
			      "the link's target was written to: \"%s\"", back);
			close(fd);
		}
		unlink(link);
		unlink(victim);
	}

	/*
	 * The library reached through a symlink in another directory: the
	 * diagnostics are found beside the file the link resolves to.
	 */
	{
		Dl_info info;
		char libdir[128], real[PATH_MAX], lib[200], ldpath[160];
		const char *show[] = { "LIBURING_RS_TRACE=1", "LIBURING_RS_DIAG_LIB", "DIAG_SHOW_LIB=1", ldpath, NULL };

		if (dladdr((void *)io_uring_queue_init, &info) && info.dli_fname && strstr(info.dli_fname, "liburing.so") &&
		    realpath(info.dli_fname, real)) {
			snprintf(libdir, sizeof(libdir), "%s/lib", dir);
			CHECK(mkdir(libdir, 0755) == 0, "mkdir %s", libdir);
			snprintf(lib, sizeof(lib), "%s/liburing.so.2", libdir);
			CHECK(symlink(real, lib) == 0, "symlink %s", lib);
			snprintf(ldpath, sizeof(ldpath), "LD_LIBRARY_PATH=%s", libdir);
			du_run_case("nop", show, &r);
			CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "symlinked-library case failed:\n%s", r.out);
			snprintf(s1, sizeof(s1), "library: %s\n", lib);
			CHECK(strstr(r.out, s1), "the child did not load the library through %s:\n%s", lib, r.out);
			CHECK(!strstr(r.out, "diagnostics off") && strstr(r.out, "submit NOP"),
			      "diagnostics not found through the symlink:\n%s", r.out);
			unlink(lib);
			rmdir(libdir);
		} else {
			printf("(the library is linked in statically: no symlink to follow)\n");
		}
	}

	/* a format it does not know: said so, and text it is */
	du_run_case("nop", (const char *[]){ "LIBURING_RS_TRACE=1", "LIBURING_RS_TRACE_FORMAT=xml", NULL }, &r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "nop case failed:\n%s", r.out);
	want(r.out, "LIBURING_RS_TRACE_FORMAT \"xml\" is neither text nor json; tracing as text", NULL, NULL);
	want(r.out, "submit NOP fd=-1 off=0 len=0 addr=0x0 flags=0 user_data=0x7", NULL, NULL);

	/* unset: not a byte, not a file */
	du_run_case("nop", NULL, &r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && r.len == 0,
	      "trace off, yet output:\n%s", r.out);
	unlink(data);
	CHECK(rmdir(dir) == 0, "files left in %s (a trace written with the variable unset?)", dir);
	tu_pass();
	return 0;
}
