/* SPDX-License-Identifier: MIT */
/*
 * LIBURING_RS_TRACE_FORMAT=json and uring-info --summary.
 *
 * A child runs a known workload (a chain of three linked NOPs, an open
 * that fails, a 20 ms timeout, a read) with the JSON trace on; python3's
 * json module then reads the file, with the closing bracket added as a
 * viewer would, and checks one slice per request with the right opcode
 * and result, the timeout's slice longer than the NOPs', a flow for each
 * of the two links (bound inside a slice), counters never below zero,
 * slices of one lane that never overlap, and the wait for the timeout as
 * a slice of the thread's library calls; every process and lane is named,
 * a forked child's under its own pid. uring-info --summary of that
 * workload, traced as JSON and as text, counts its requests and names
 * its errors (ENOENT, ETIME). A child killed with SIGKILL in the middle of a run
 * leaves a file that parses the same way. Then uring-info --summary, on
 * the text and JSON traces of examples/link-cp (a 2 MiB copy: 32 linked
 * READ/WRITE pairs) and of a multishot-recv echo server (20 messages:
 * one RECV whose 20 F_MORE completions carry them, 20 SENDs), must count
 * exactly those requests, with percentiles in order and within the
 * slices' shortest and longest durations.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "op-util.h"
#include "diag-util.h"

static struct io_uring ring;
static char buf[4096];

static void c_work(const char *file)
{
	static struct __kernel_timespec ms20 = { .tv_nsec = 20000000 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int fd, p[2];

	op_ring(&ring, 16, 0);
	CHECK(pipe(p) == 0, "pipe");
	CHECK_EQ(io_uring_register_files(&ring, p, 2), 0, "register_files");
	fd = open(file, O_RDONLY);
	CHECK(fd >= 0, "open %s", file);
	for (int i = 1; i <= 3; i++) {
		sqe = op_sqe(&ring);
		io_uring_prep_nop(sqe);
		if (i < 3)
			sqe->flags |= IOSQE_IO_LINK;
		io_uring_sqe_set_data64(sqe, i);
	}
	sqe = op_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, "/nonexistent/liburing-rs", O_RDONLY, 0);
	io_uring_sqe_set_data64(sqe, 4);
	sqe = op_sqe(&ring);
	io_uring_prep_timeout(sqe, &ms20, 0, 0);
	io_uring_sqe_set_data64(sqe, 5);
	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, fd, buf, sizeof(buf), 0);
	io_uring_sqe_set_data64(sqe, 6);
	CHECK_EQ(io_uring_submit(&ring), 6, "submit");
	for (int i = 0; i < 6; i++) {
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait_cqe");
		io_uring_cqe_seen(&ring, cqe);
	}
	close(fd);
	io_uring_queue_exit(&ring);
}

/* A ring in each of two processes: the child's events come under its own
 * pid, named, with lanes of its own. */
static void c_fork(void)
{
	struct io_uring_cqe *cqe;
	pid_t pid;
	int st;

	op_ring(&ring, 4, 0);
	op_nops(&ring, 1, 1);
	CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "submit_and_wait");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek");
	io_uring_cqe_seen(&ring, cqe);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct io_uring child;

		op_ring(&child, 4, 0);
		op_nops(&child, 2, 10);
		CHECK_EQ(io_uring_submit_and_wait(&child, 2), 2, "child submit_and_wait");
		io_uring_cq_advance(&child, 2);
		io_uring_queue_exit(&child);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed");
	io_uring_queue_exit(&ring);
}

/* Runs until killed. */
static void c_forever(void)
{
	struct io_uring_cqe *cqe;

	op_ring(&ring, 8, 0);
	for (unsigned long long ud = 0;; ud += 8) {
		op_nops(&ring, 8, ud);
		CHECK_EQ(io_uring_submit_and_wait(&ring, 8), 8, "submit_and_wait");
		for (int i = 0; i < 8; i++) {
			CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek");
			io_uring_cqe_seen(&ring, cqe);
		}
	}
}

#define MSGS 20
#define BGID 3
#define NBUFS 8
static char bufs[NBUFS][256];
static int client_fd;

static void *client(void *arg)
{
	char msg[64], echo[64];

	(void)arg;
	for (int i = 0; i < MSGS; i++) {
		int n = snprintf(msg, sizeof(msg), "message %d", i);
		ssize_t got = 0, r;

		CHECK(write(client_fd, msg, n) == n, "client write");
		while (got < n) {
			r = read(client_fd, echo + got, n - got);
			CHECK(r > 0, "client read: %zd", r);
			got += r;
		}
		CHECK(!memcmp(msg, echo, n), "echo differs");
	}
	shutdown(client_fd, SHUT_WR);
	return NULL;
}

/* A multishot-recv echo server on one end of a socket pair, a client
 * thread on the other doing one message at a time. */
static void c_echo(void)
{
	static char out[MSGS][256];
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int sv[2], err, sends = 0, done = 0, echoed = 0;
	pthread_t t;

	op_ring(&ring, 16, 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	client_fd = sv[1];
	br = io_uring_setup_buf_ring(&ring, NBUFS, BGID, 0, &err);
	CHECK(br, "setup_buf_ring: %s", strerror(-err));
	for (int i = 0; i < NBUFS; i++)
		io_uring_buf_ring_add(br, bufs[i], sizeof(bufs[i]), i, io_uring_buf_ring_mask(NBUFS), i);
	io_uring_buf_ring_advance(br, NBUFS);
	sqe = op_sqe(&ring);
	io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	io_uring_sqe_set_data64(sqe, 1);
	io_uring_submit(&ring);
	CHECK(pthread_create(&t, NULL, client, NULL) == 0, "pthread_create");
	while (!done || sends) {
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait_cqe");
		if (cqe->user_data == 2) {
			CHECK(cqe->res > 0, "send: %d", cqe->res);
			sends--;
		} else if (cqe->res > 0) {
			int bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;

			CHECK(cqe->flags & IORING_CQE_F_MORE, "recv ended early");
			CHECK(echoed < MSGS, "more messages than sent");
			memcpy(out[echoed], bufs[bid], cqe->res);
			sqe = op_sqe(&ring);
			io_uring_prep_send(sqe, sv[0], out[echoed], cqe->res, 0);
			io_uring_sqe_set_data64(sqe, 2);
			echoed++;
			sends++;
			io_uring_buf_ring_add(br, bufs[bid], sizeof(bufs[bid]), bid, io_uring_buf_ring_mask(NBUFS), 0);
			io_uring_buf_ring_advance(br, 1);
			io_uring_submit(&ring);
		} else {
			CHECK_EQ(cqe->res, 0, "recv end");
			CHECK(!(cqe->flags & IORING_CQE_F_MORE), "EOF with F_MORE");
			done = 1;
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	pthread_join(t, NULL);
	CHECK_EQ(echoed, MSGS, "messages echoed");
	io_uring_free_buf_ring(&ring, br, NBUFS, BGID);
	io_uring_queue_exit(&ring);
}

/* The checks on a JSON trace, in python3 (argv: file, then
 * "user_data:OPCODE:res" for each request expected, "links=N",
 * "longer=A,B" for a slice (A) that must outlast another, "waits" for a
 * library call slice as long as the timeout). */
static const char *checker =
"import json, sys\n"
"text = open(sys.argv[1]).read()\n"
"assert text.startswith('['), 'no array'\n"
"ev = json.loads(text if text.rstrip().endswith(']') else text + ']')\n"
"sl = [e for e in ev if e['ph'] == 'X' and e['cat'] == 'request']\n"
"by = {}\n"
"for e in sl:\n"
"    assert e['dur'] >= 0, e\n"
"    by.setdefault(int(e['args']['user_data'], 16), []).append(e)\n"
"lanes = {}\n"
"for e in ev:\n"
"    if e['ph'] != 'X':\n"
"        continue\n"
"    lanes.setdefault((e['pid'], e['tid']), []).append((e['ts'], e['ts'] + e['dur']))\n"
"for k, v in lanes.items():\n"
"    v.sort()\n"
"    for a, b in zip(v, v[1:]):\n"
"        assert b[0] >= a[1] - 1e-6, ('overlap on lane', k, a, b)\n"
"for e in ev:\n"
"    if e['ph'] == 'C':\n"
"        assert all(x >= 0 for x in e['args'].values()), e\n"
"spans = {}\n"
"for e in ev:\n"
"    if e['ph'] == 'X' or e.get('cat') == 'unfinished':\n"
"        spans.setdefault((e['pid'], e['tid']), []).append((e['ts'], e['ts'] + e.get('dur', 0)))\n"
"fl = {}\n"
"for e in ev:\n"
"    if e['ph'] in 'sf':\n"
"        inside = [s for s in spans.get((e['pid'], e['tid']), []) if s[0] <= e['ts'] <= s[1]]\n"
"        assert inside, ('flow binds no slice', e)\n"
"        fl.setdefault(e['id'], set()).add(e['ph'])\n"
"links = sum(1 for v in fl.values() if v == {'s', 'f'})\n"
"assert all(v == {'s', 'f'} for v in fl.values()), ('half a flow', fl)\n"
"for a in sys.argv[2:]:\n"
"    if a.startswith('links='):\n"
"        assert links == int(a[6:]), ('flows', links, a)\n"
"    elif a.startswith('longer='):\n"
"        x, y = (int(n) for n in a[7:].split(','))\n"
"        assert by[x][0]['dur'] > by[y][0]['dur'], ('duration order', by[x], by[y])\n"
"    elif a == 'waits':\n"
"        assert any(e['ph'] == 'X' and e['cat'] == 'call' and e['dur'] >= 1000 for e in ev), 'no wait of the timeout'\n"
"    elif a.startswith('pids='):\n"
"        assert len({e['pid'] for e in ev}) == int(a[5:]), ('processes', a)\n"
"    elif a.startswith('min='):\n"
"        assert len(sl) >= int(a[4:]), ('slices', len(sl))\n"
"    else:\n"
"        ud, op, res = a.split(':')\n"
"        got = by.get(int(ud), [])\n"
"        assert len(got) == 1, ('slices for', ud, got)\n"
"        assert got[0]['name'] == op and str(got[0]['args']['res']) == res, ('slice', a, got[0])\n"
"procs = {e['pid'] for e in ev if e['ph'] == 'M' and e['name'] == 'process_name'}\n"
"tracks = {(e['pid'], e['tid']) for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name'}\n"
"for e in ev:\n"
"    assert e['pid'] in procs, ('process without a name', e)\n"
"    if e['ph'] in 'Xisf' and e['tid'] != 0:\n"
"        assert (e['pid'], e['tid']) in tracks, ('lane without a name', e)\n"
"names = [e['name'] for e in ev if e['ph'] == 'i']\n"
"print(len(sl), 'slices', links, 'links', len(names), 'instants')\n";

static int have_python(void)
{
	return system("python3 -c 'import json' >/dev/null 2>&1") == 0;
}

static void py_check(const char *file, const char *args)
{
	char cmd[4096], pyfile[160];
	FILE *f;
	int st;

	snprintf(pyfile, sizeof(pyfile), "%s.py", file);
	f = fopen(pyfile, "w");
	CHECK(f, "write %s", pyfile);
	fputs(checker, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s 2>&1", pyfile, file, args);
	st = system(cmd);
	unlink(pyfile);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "JSON trace %s fails its checks (%s)", file, args);
}

static char dir[64], bindir[512];

/* Runs `cmd` with its stdout into `out`; its exit status. */
static int capture(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0, r;

	CHECK(p, "popen %s", cmd);
	while (n + 1 < size && (r = fread(out + n, 1, size - 1 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	return pclose(p);
}

/*
 * The summary's line for opcode `op`: its request count, and its F_MORE
 * completions. Completions the program consumed with inline helpers before
 * a library call let the trace look are not seen (the ring line counts
 * them), so of `more` those may be missing.
 */
static void summary_op(const char *sum, const char *op, long count, long more)
{
	char name[32], p[4][16];
	const char *line;
	long c, u, m, ring_unseen;

	/* the heading, then the ring */
	line = strstr(sum, "\nring ");
	line = line ? strstr(line + 1, "\nring ") : NULL;
	CHECK(line && sscanf(line + 1, "ring %31s pid %*d %*d %ld", name, &ring_unseen) == 2, "no ring line:\n%s", sum);
	snprintf(name, sizeof(name), "\n%s ", op);
	line = strstr(sum, name);
	CHECK(line, "no %s line in the summary:\n%s", op, sum);
	CHECK(sscanf(line + 1, "%31s %ld %ld %ld %15s %15s %15s %15s", name, &c, &u, &m, p[0], p[1], p[2], p[3]) == 8,
	      "summary line for %s:\n%s", op, sum);
	CHECK(c == count && m <= more && m + ring_unseen >= more,
	      "%s: count %ld more %ld, want %ld and %ld:\n%s", op, c, m, count, more, sum);
}

/* From --summary --json: opcode `op`'s percentiles are ordered and lie
 * within [lo, hi] ns. */
static void summary_bounds(const char *js, const char *op, long long lo, long long hi)
{
	char key[64];
	const char *s;
	long long p50, p90, p99, max;

	snprintf(key, sizeof(key), "{\"op\":\"%s\"", op);
	s = strstr(js, key);
	CHECK(s, "no %s in %s", op, js);
	s = strstr(s, "\"p50_ns\":");
	CHECK(s && sscanf(s, "\"p50_ns\":%lld,\"p90_ns\":%lld,\"p99_ns\":%lld,\"max_ns\":%lld", &p50, &p90, &p99, &max) == 4,
	      "percentiles of %s in %s", op, js);
	CHECK(lo <= p50 && p50 <= p90 && p90 <= p99 && p99 <= max && max <= hi,
	      "%s: p50 %lld p90 %lld p99 %lld max %lld not within [%lld, %lld]", op, p50, p90, p99, max, lo, hi);
}

/* Shortest and longest slice of opcode `op` in a JSON trace, ns; 0 when
 * it has none (every completion of it unseen). */
static int slice_range(const char *file, const char *op, long long *lo, long long *hi)
{
	char cmd[1024], out[128];

	snprintf(cmd, sizeof(cmd), "python3 -c \"import json,sys; t=open('%s').read(); "
		 "e=json.loads(t if t.rstrip().endswith(']') else t+']'); "
		 "d=[round(x['dur']*1000) for x in e if x['ph']=='X' and x['name']=='%s']; "
		 "print(min(d), max(d)) if d else print('none')\"", file, op);
	CHECK(capture(cmd, out, sizeof(out)) == 0, "slices of %s: %s", op, out);
	return sscanf(out, "%lld %lld", lo, hi) == 2;
}

/* Traces `prog` (a command line, run through the shell) in `fmt` to
 * `file`. */
static void traced(const char *prog, const char *fmt, const char *file)
{
	char cmd[4096];
	int st;

	snprintf(cmd, sizeof(cmd), "LIBURING_RS_TRACE=%s LIBURING_RS_TRACE_FORMAT=%s %s", file, fmt, prog);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed", cmd);
}

/* The summary of the known workload: its requests, and its errors by
 * name. */
static void work_summary(const char *file)
{
	static char sum[16384];
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "%s/bin/uring-info --summary %s", bindir, file);
	CHECK(capture(cmd, sum, sizeof(sum)) == 0, "%s failed", cmd);
	summary_op(sum, "NOP", 3, 0);
	summary_op(sum, "OPENAT", 1, 0);
	summary_op(sum, "TIMEOUT", 1, 0);
	summary_op(sum, "READ", 1, 0);
	CHECK(strstr(sum, "ENOENT:1\n") && strstr(sum, "ETIME:1\n"), "errors by errno missing:\n%s", sum);
}

static void summaries(const char *name, const char *prog, const char *ops[], const long counts[][2])
{
	static char sum[16384];
	char file[160], cmd[2048];

	for (int json = 0; json < 2; json++) {
		snprintf(file, sizeof(file), "%s/%s.%s", dir, name, json ? "json" : "txt");
		traced(prog, json ? "json" : "text", file);
		snprintf(cmd, sizeof(cmd), "%s/bin/uring-info --summary %s", bindir, file);
		CHECK(capture(cmd, sum, sizeof(sum)) == 0, "%s failed", cmd);
		for (int i = 0; ops[i]; i++)
			summary_op(sum, ops[i], counts[i][0], counts[i][1]);
		CHECK(strstr(sum, "peak_in_flight") && strstr(sum, "cq_overflow"), "no ring line:\n%s", sum);
		if (json) {
			snprintf(cmd, sizeof(cmd), "%s/bin/uring-info --summary --json %s", bindir, file);
			CHECK(capture(cmd, sum, sizeof(sum)) == 0, "%s failed", cmd);
			for (int i = 0; ops[i]; i++) {
				long long lo, hi;

				if (slice_range(file, ops[i], &lo, &hi))
					summary_bounds(sum, ops[i], lo, hi);
			}
			py_check(file, "min=1");
		}
		unlink(file);
	}
}

int main(int argc, char **argv)
{
	static struct du_run r;
	char data[128], pattern[160], path[1024], args[512], cmd[2048], self[512], exe[512], *slash;
	ssize_t n;
	const char *env[3] = { pattern, "LIBURING_RS_TRACE_FORMAT=json", NULL };
	struct stat sb;
	pid_t pid;
	int fd, st;

	tu_set_name(argv[0]);
	if (argc == 3 && !strcmp(argv[1], "case")) {
		if (!strcmp(argv[2], "work"))
			c_work(getenv("DIAG_TRACE_DATA"));
		else if (!strcmp(argv[2], "echo"))
			c_echo();
		else if (!strcmp(argv[2], "fork"))
			c_fork();
		else
			c_forever();
		return 0;
	}
	if (!have_python())
		SKIP("python3 (with its json module) is needed to read the trace back");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0, "readlink");
	self[n] = '\0';
	snprintf(exe, sizeof(exe), "%s", self);
	/* build/c-tests/this: build/bin and build/examples are beside */
	slash = strrchr(exe, '/');
	*slash = '\0';
	slash = strrchr(exe, '/');
	CHECK(slash, "exe path");
	*slash = '\0';
	snprintf(bindir, sizeof(bindir), "%s", exe);
	snprintf(path, sizeof(path), "%s/bin/uring-info", bindir);
	if (access(path, X_OK))
		SKIP("%s not built", path);

	du_trace_dir("/tmp/liburing-rs-timeline.XXXXXX", dir, data, buf, sizeof(buf));

	/* the known workload */
	snprintf(pattern, sizeof(pattern), "LIBURING_RS_TRACE=%s/trace.%%p", dir);
	du_run_case("work", env, &r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "work case failed:\n%s", r.out);
	CHECK(r.len == 0, "output on stderr:\n%s", r.out);
	snprintf(path, sizeof(path), "%s/trace.%d", dir, (int)r.pid);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "trace file mode %o, want 0600", sb.st_mode & 0777);
	snprintf(args, sizeof(args), "1:NOP:0 2:NOP:0 3:NOP:0 4:OPENAT:-ENOENT 5:TIMEOUT:-ETIME 6:READ:%zu "
		 "links=2 longer=5,1 longer=5,6 waits", sizeof(buf));
	py_check(path, args);
	work_summary(path);
	unlink(path);
	/* the same workload traced as text: the same summary */
	{
		const char *text_env[3] = { pattern, "LIBURING_RS_TRACE_FORMAT=text", NULL };

		du_run_case("work", text_env, &r);
		CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "work case (text) failed:\n%s", r.out);
		snprintf(path, sizeof(path), "%s/trace.%d", dir, (int)r.pid);
		work_summary(path);
		unlink(path);
	}

	/* a forked child traced into the same file */
	snprintf(pattern, sizeof(pattern), "LIBURING_RS_TRACE=%s/forked.%%p", dir);
	du_run_case("fork", env, &r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "fork case failed:\n%s", r.out);
	snprintf(path, sizeof(path), "%s/forked.%d", dir, (int)r.pid);
	py_check(path, "1:NOP:0 10:NOP:0 11:NOP:0 pids=2");
	unlink(path);

	/* killed in the middle */
	snprintf(pattern, sizeof(pattern), "LIBURING_RS_TRACE=%s/killed.%%p", dir);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		setenv("LIBURING_RS_TRACE_FORMAT", "json", 1);
		putenv(pattern);
		execl("/proc/self/exe", tu_name, "case", "forever", (char *)NULL);
		_exit(127);
	}
	/* killed once it has traced a while (or after 10 s) */
	snprintf(path, sizeof(path), "%s/killed.%d", dir, (int)pid);
	for (int i = 0; i < 1000 && (stat(path, &sb) || sb.st_size < 256 * 1024); i++)
		usleep(10000);
	usleep(20000);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st), "the child was not killed");
	py_check(path, "min=8");
	unlink(path);

	/* summaries: link-cp on a 2 MiB file */
	{
		static const char *ops[] = { "READ", "WRITE", NULL };
		static const long counts[][2] = { { 32, 0 }, { 32, 0 } };
		char src[160], dst[160];
		static char big[2 << 20];

		snprintf(src, sizeof(src), "%s/src", dir);
		snprintf(dst, sizeof(dst), "%s/dst", dir);
		fd = open(src, O_CREAT | O_WRONLY, 0644);
		CHECK(fd >= 0, "create %s", src);
		tu_fill_random(big, sizeof(big), 24);
		tu_pwrite_all(fd, big, sizeof(big), 0);
		close(fd);
		snprintf(cmd, sizeof(cmd), "%s/examples/link-cp %s %s", bindir, src, dst);
		snprintf(path, sizeof(path), "%s/examples/link-cp", bindir);
		if (access(path, X_OK))
			SKIP("%s not built", path);
		summaries("link-cp", cmd, ops, counts);
		unlink(src);
		unlink(dst);
	}
	/* summaries: the echo server */
	{
		static const char *ops[] = { "SEND", "RECV", NULL };
		static const long counts[][2] = { { MSGS, 0 }, { 1, MSGS } };

		snprintf(cmd, sizeof(cmd), "%s case echo", self);
		summaries("echo", cmd, ops, counts);
	}
	unlink(data);
	CHECK(rmdir(dir) == 0, "files left in %s", dir);
	tu_pass();
	return 0;
}
