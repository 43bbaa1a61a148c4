/* SPDX-License-Identifier: MIT */
/*
 * LIBURING_RS_CHECK: every case below makes one mistake in a fresh process
 * with the checker on, and the checker must name it in exactly one line
 * (which request, which field, why). A correct program exercising the same
 * features must get no line at all, and LIBURING_RS_CHECK=abort must stop
 * the program after printing.
 */
#include <pthread.h>
#include <sys/uio.h>
#include "op-util.h"
#include "diag-util.h"

static struct io_uring ring;
static int pfd[2];		/* a pipe: reads on p[0] stay in flight */
static char buf[4096];

static void setup(void)
{
	op_ring(&ring, 8, 0);
	CHECK(pipe(pfd) == 0, "pipe");
}

static void submit_one(void)
{
	io_uring_submit(&ring);
}

static void c_bad_opcode(void)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_nop(sqe);
	sqe->opcode = 200;
	submit_one();
}

static void c_unsupported_opcode(void)
{
	struct io_uring_probe *p = io_uring_get_probe();
	struct io_uring_sqe *sqe;
	int op;

	CHECK(p, "io_uring_get_probe");
	for (op = 0; op < IORING_OP_LAST; op++)
		if (!io_uring_opcode_supported(p, op))
			break;
	io_uring_free_probe(p);
	if (op == IORING_OP_LAST) {
		printf("every opcode is supported here\n");
		return;
	}
	/* 128-byte opcodes are among the candidates: give them room. */
	io_uring_queue_exit(&ring);
	op_ring(&ring, 8, IORING_SETUP_SQE128);
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->opcode = op;
	submit_one();
}

static void c_buffer_select_on_write(void)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_write(sqe, pfd[1], NULL, 16, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 1;
	submit_one();
}

static void c_reserved_field(void)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_fsync(sqe, pfd[1], 0);
	sqe->addr = 0x1000;
	submit_one();
}

static void c_ioprio(void)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_nop(sqe);
	sqe->ioprio = 5;
	submit_one();
}

static void c_negative_fd(void)
{
	io_uring_prep_read(op_sqe(&ring), -1, buf, sizeof(buf), 0);
	submit_one();
}

static void c_fixed_file_beyond(void)
{
	struct io_uring_sqe *sqe;

	CHECK_EQ(io_uring_register_files(&ring, &pfd[0], 1), 0, "register_files");
	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, 5, buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	submit_one();
}

static void c_fixed_buffer_beyond(void)
{
	struct iovec iov = { buf, sizeof(buf) };

	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0, "register_buffers");
	io_uring_prep_write_fixed(op_sqe(&ring), pfd[1], buf, 16, 0, 3);
	submit_one();
}

static void c_fixed_buffer_outside(void)
{
	struct iovec iov = { buf, 1024 };

	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0, "register_buffers");
	io_uring_prep_write_fixed(op_sqe(&ring), pfd[1], buf + 1000, 100, 0, 0);
	submit_one();
}

static void c_null_addr(void)
{
	io_uring_prep_read(op_sqe(&ring), pfd[0], NULL, 16, 0);
	submit_one();
}

static void c_unregistered_group(void)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_read(sqe, pfd[0], NULL, 16, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 7;
	submit_one();
}

static void c_open_chain(void)
{
	io_uring_prep_nop(op_sqe(&ring));
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_IO_LINK;
	submit_one();
}

static void c_lonely_link_timeout(void)
{
	static struct __kernel_timespec ts = { .tv_nsec = 1000000 };

	io_uring_prep_nop(op_sqe(&ring));
	io_uring_prep_link_timeout(op_sqe(&ring), &ts, 0);
	submit_one();
}

static void c_user_data_reuse(void)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_read(sqe, pfd[0], buf, 16, 0);
	io_uring_sqe_set_data64(sqe, 42);
	submit_one();
	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, pfd[0], buf + 16, 16, 0);
	io_uring_sqe_set_data64(sqe, 42);
	submit_one();
}

static void c_seen_without_cqe(void)
{
	struct io_uring_cqe stray = { 0 };

	/* No CQE is pending, yet one (not even from the ring) is marked seen. */
	io_uring_cqe_seen(&ring, &stray);
	io_uring_prep_nop(op_sqe(&ring));
	submit_one();
}

static void c_advance_past_tail(void)
{
	io_uring_prep_nop(op_sqe(&ring));
	io_uring_prep_nop(op_sqe(&ring));
	io_uring_submit_and_wait(&ring, 2);
	io_uring_cq_advance(&ring, 5);
	io_uring_prep_nop(op_sqe(&ring));
	submit_one();
}

static void *blocked_submitter(void *arg)
{
	(void)arg;
	/* Waits inside io_uring_submit_and_wait until the pipe has data. */
	io_uring_submit_and_wait(&ring, 1);
	return NULL;
}

static void c_concurrent_submit(void)
{
	pthread_t t;

	io_uring_prep_read(op_sqe(&ring), pfd[0], buf, 16, 0);
	CHECK(pthread_create(&t, NULL, blocked_submitter, NULL) == 0, "pthread_create");
	usleep(100000);
	io_uring_submit(&ring);
	CHECK(write(pfd[1], "x", 1) == 1, "write");
	pthread_join(t, NULL);
}

static void c_use_after_exit(void)
{
	io_uring_queue_exit(&ring);
	/* Whatever this returns (or does), the checker has spoken first. */
	io_uring_submit(&ring);
}

static void c_drain_after_skip(void)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_IO_DRAIN;
	submit_one();
}

static void c_fixed_close(void)
{
	struct io_uring_sqe *sqe = op_sqe(&ring);

	io_uring_prep_close(sqe, pfd[0]);
	sqe->flags |= IOSQE_FIXED_FILE;
	submit_one();
}

/* Everything the checker knows about, used correctly. */
static void c_clean(void)
{
	static struct __kernel_timespec ts = { .tv_sec = 5 };
	struct iovec iov = { buf, sizeof(buf) };
	struct io_uring_buf_ring *br;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int err, files[2] = { pfd[0], pfd[1] };

	CHECK_EQ(io_uring_register_files(&ring, files, 2), 0, "register_files");
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0, "register_buffers");
	br = io_uring_setup_buf_ring(&ring, 4, 3, 0, &err);
	CHECK(br, "setup_buf_ring: %s", strerror(-err));
	io_uring_buf_ring_add(br, buf + 2048, 512, 0, io_uring_buf_ring_mask(4), 0);
	io_uring_buf_ring_advance(br, 1);
	CHECK(write(pfd[1], "hello", 5) == 5, "write");

	/* fixed write of the registered buffer through a fixed file */
	sqe = op_sqe(&ring);
	io_uring_prep_write_fixed(sqe, 1, buf, 8, 0, 0);
	sqe->flags |= IOSQE_FIXED_FILE | IOSQE_IO_LINK;
	io_uring_sqe_set_data64(sqe, 1);
	sqe = op_sqe(&ring);
	io_uring_prep_link_timeout(sqe, &ts, 0);
	io_uring_sqe_set_data64(sqe, 2);
	/* a read picking a provided buffer */
	sqe = op_sqe(&ring);
	io_uring_prep_read(sqe, pfd[0], NULL, 512, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 3;
	io_uring_sqe_set_data64(sqe, 3);
	CHECK_EQ(io_uring_submit(&ring), 3, "submit");
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait_cqe");
		io_uring_cqe_seen(&ring, cqe);
	}
	/* the same user_data again, now that its request completed */
	sqe = op_sqe(&ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 1);
	CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "submit_and_wait");
	io_uring_cq_advance(&ring, 1);
	/* an fsync with its unused fields left zero, a negative dirfd */
	io_uring_prep_fsync(op_sqe(&ring), pfd[1], 0);
	io_uring_prep_openat(op_sqe(&ring), AT_FDCWD, "/", O_RDONLY, 0);
	CHECK_EQ(io_uring_submit_and_wait(&ring, 2), 2, "submit_and_wait");
	io_uring_cq_advance(&ring, 2);
	io_uring_free_buf_ring(&ring, br, 4, 3);
	io_uring_queue_exit(&ring);
}

struct diag_case {
	const char *name;
	void (*fn)(void);
	const char *expect;	/* in the one check line; NULL: no line */
	int any_status;		/* the mistake may crash the program */
};

static const struct diag_case cases[] = {
	{ "bad-opcode", c_bad_opcode, "sqe 0 (opcode 200 user_data=0x0): opcode: 200 is no opcode this kernel supports", 0 },
	{ "unsupported-opcode", c_unsupported_opcode, " is not supported by ", 0 },
	{ "buffer-select-on-write", c_buffer_select_on_write, "(WRITE user_data=0x0): flags: IOSQE_BUFFER_SELECT is not accepted by WRITE", 0 },
	{ "reserved-field", c_reserved_field, "(FSYNC user_data=0x0): addr: unused by FSYNC and must be 0 (it is 0x1000)", 0 },
	{ "ioprio", c_ioprio, "(NOP user_data=0x0): ioprio: 5 must be 0 for NOP", 0 },
	{ "negative-fd", c_negative_fd, "(READ user_data=0x0): fd: -1 is negative and IOSQE_FIXED_FILE is not set", 0 },
	{ "fixed-file-beyond", c_fixed_file_beyond, "(READ user_data=0x0): fd: fixed file 5 is beyond the 1 registered files", 0 },
	{ "fixed-buffer-beyond", c_fixed_buffer_beyond, "(WRITE_FIXED user_data=0x0): buf_index: fixed buffer 3 is beyond the 1 registered buffers", 0 },
	{ "fixed-buffer-outside", c_fixed_buffer_outside, "+100 is outside registered buffer 0 (", 0 },
	{ "null-addr", c_null_addr, "(READ user_data=0x0): addr: NULL with len 16", 0 },
	{ "unregistered-group", c_unregistered_group, "buf_group: IOSQE_BUFFER_SELECT from group 7, which has no buffers registered", 0 },
	{ "open-chain", c_open_chain, "sqe 1 (NOP user_data=0x0): flags: IOSQE_IO_LINK on the last request of the submission leaves the chain open", 0 },
	{ "lonely-link-timeout", c_lonely_link_timeout, "sqe 1 (LINK_TIMEOUT user_data=0x0): opcode: LINK_TIMEOUT must directly follow a request that has IOSQE_IO_LINK set", 0 },
	{ "user-data-reuse", c_user_data_reuse, "sqe 1 (READ user_data=0x2a): user_data: 0x2a is already in flight (READ submitted ", 0 },
	{ "seen-without-cqe", c_seen_without_cqe, "CQ head 1 is past the kernel's tail 0: io_uring_cqe_seen/io_uring_cq_advance consumed 1 completion(s) that were never posted", 0 },
	{ "advance-past-tail", c_advance_past_tail, "CQ head 5 is past the kernel's tail 2: io_uring_cqe_seen/io_uring_cq_advance consumed 3 completion(s)", 0 },
	{ "concurrent-submit", c_concurrent_submit, "submit while another thread is inside a submit on this ring", 0 },
	{ "use-after-exit", c_use_after_exit, ": used after io_uring_queue_exit", 1 },
	{ "drain-after-skip", c_drain_after_skip, "(NOP user_data=0x0): flags: IOSQE_IO_DRAIN is refused once IOSQE_CQE_SKIP_SUCCESS has been used on the ring", 0 },
	{ "fixed-close", c_fixed_close, "(CLOSE user_data=0x0): flags: IOSQE_FIXED_FILE is not accepted by CLOSE", 0 },
	{ "clean", c_clean, NULL, 0 },
};

#define NCASES (int)(sizeof(cases) / sizeof(cases[0]))

int main(int argc, char **argv)
{
	static const char *const check_on[] = { "LIBURING_RS_CHECK=1", NULL };
	static const char *const check_abort[] = { "LIBURING_RS_CHECK=abort", NULL };
	static struct du_run r;
	char line[512];

	tu_set_name(argv[0]);
	if (argc == 3 && !strcmp(argv[1], "case")) {
		for (int i = 0; i < NCASES; i++) {
			if (!strcmp(argv[2], cases[i].name)) {
				setup();
				cases[i].fn();
				return 0;
			}
		}
		FAIL("no case %s", argv[2]);
	}

	for (int i = 0; i < NCASES; i++) {
		const struct diag_case *c = &cases[i];

		du_run_case(c->name, check_on, &r);
		if (strstr(r.out, ": SKIP: "))
			SKIP("%s", r.out);
		if (!c->any_status)
			CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0,
			      "case %s failed:\n%s", c->name, r.out);
		if (strstr(r.out, "every opcode is supported here")) {
			printf("%-24s (nothing to test: %s)", c->name, r.out);
			continue;
		}
		if (!c->expect) {
			CHECK(!strstr(r.out, "liburing-rs"),
			      "case %s: the checker spoke about a correct program:\n%s", c->name, r.out);
			continue;
		}
		CHECK(du_line(r.out, c->expect, line, sizeof(line)),
		      "case %s: no line with \"%s\" in:\n%s", c->name, c->expect, r.out);
		CHECK(!strncmp(line, "liburing-rs check: ", 19), "case %s: line is \"%s\"", c->name, line);
		CHECK_EQ(du_count(r.out, "liburing-rs check:"), 1, c->name);
		if (strstr(c->expect, "already in flight") || strstr(c->expect, "submit while"))
			CHECK(strstr(line, "check: warning: "), "case %s: not a warning", c->name);
		printf("%-24s %s\n", c->name, line);
	}

	/* abort mode: the line, a last word, then SIGABRT */
	du_run_case("negative-fd", check_abort, &r);
	CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
	      "LIBURING_RS_CHECK=abort did not abort:\n%s", r.out);
	CHECK(strstr(r.out, "fd: -1 is negative") &&
	      strstr(r.out, "liburing-rs check: aborting (LIBURING_RS_CHECK=abort)"),
	      "abort mode output:\n%s", r.out);

	/* and without the variable, not a word */
	du_run_case("negative-fd", NULL, &r);
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && r.len == 0,
	      "checker off, yet output:\n%s", r.out);
	tu_pass();
	return 0;
}
