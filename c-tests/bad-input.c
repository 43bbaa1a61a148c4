/* SPDX-License-Identifier: MIT */
/*
 * Bad or edge-case input to ring setup and the basic calls:
 *  - 0 entries -> -EINVAL; more than 32768 entries -> -EINVAL unless
 *    IORING_SETUP_CLAMP, which clamps to 32768 SQ / 65536 CQ entries;
 *  - CQSIZE with 0 or too few CQ entries -> -EINVAL; CQSIZE beyond the
 *    CQ maximum with CLAMP is clamped;
 *  - unknown setup flags -> -EINVAL; REGISTERED_FD_ONLY without NO_MMAP
 *    -> -EINVAL;
 *  - a failed init leaves the struct io_uring zeroed, and calling
 *    io_uring_queue_exit on it afterwards does not crash;
 *  - 1000 failed inits leak no file descriptors and no mappings;
 *  - io_uring_queue_init_mem with a size-0 buffer -> -ENOMEM;
 *  - submit with nothing queued -> 0; peek on an empty CQ -> -EAGAIN;
 *    wait_cqe_timeout with no work -> -ETIME;
 *  - ring fd (un)registration calls on an unregistered ring -> -EINVAL;
 *  - probes: NOP supported; io_uring_free_probe(NULL) is a no-op;
 *  - bad SQEs get the kernel's errno in their CQE (on every engine):
 *    unknown opcodes and SQE flags, bad and closed fds, fixed files and
 *    buffers that do not exist, NULL buffers and paths, overlong paths and
 *    iovec counts, and reserved fields set.
 */
#include <liburing.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include "test-util.h"

static int init_with(unsigned entries, unsigned flags, unsigned cq_entries,
		     struct io_uring *ring, struct io_uring_params *p)
{
	memset(p, 0, sizeof(*p));
	p->flags = flags;
	p->cq_entries = cq_entries;
	return io_uring_queue_init_params(entries, ring, p);
}

static void nop_roundtrip(struct io_uring *ring, const char *what)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;

	CHECK(sqe, "%s: no sqe", what);
	io_uring_prep_nop(sqe);
	sqe->user_data = 0x1234;
	CHECK_EQ(io_uring_submit_and_wait(ring, 1), 1, what);
	CHECK_EQ(io_uring_peek_cqe(ring, &cqe), 0, what);
	CHECK(cqe->user_data == 0x1234 && cqe->res == 0, "%s: bad cqe", what);
	io_uring_cqe_seen(ring, cqe);
}

static void test_entries(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(0, &ring, 0);
	CHECK_EQ(ret, -EINVAL, "queue_init(0 entries)");

	ret = io_uring_queue_init(32769, &ring, 0);
	CHECK_EQ(ret, -EINVAL, "queue_init(32769) without CLAMP");
	ret = io_uring_queue_init(1U << 20, &ring, 0);
	CHECK_EQ(ret, -EINVAL, "queue_init(1<<20) without CLAMP");

	ret = init_with(1U << 20, IORING_SETUP_CLAMP, 0, &ring, &p);
	CHECK_EQ(ret, 0, "queue_init(1<<20, CLAMP)");
	CHECK_EQ(p.sq_entries, 32768, "clamped sq_entries");
	CHECK_EQ(p.cq_entries, 65536, "clamped cq_entries");
	CHECK_EQ(ring.sq.ring_entries, 32768, "ring sq entries");
	CHECK_EQ(ring.cq.ring_entries, 65536, "ring cq entries");
	nop_roundtrip(&ring, "clamped ring");
	io_uring_queue_exit(&ring);

	/* The maximum itself is fine without CLAMP; non-powers round up. */
	ret = io_uring_queue_init(32768, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init(32768)");
	io_uring_queue_exit(&ring);
	ret = init_with(5, 0, 0, &ring, &p);
	CHECK_EQ(ret, 0, "queue_init(5)");
	CHECK_EQ(p.sq_entries, 8, "5 entries rounded up");
	CHECK_EQ(p.cq_entries, 16, "cq is twice the sq");
	io_uring_queue_exit(&ring);

	/* CQSIZE. */
	ret = init_with(8, IORING_SETUP_CQSIZE, 0, &ring, &p);
	CHECK_EQ(ret, -EINVAL, "CQSIZE with 0 cq entries");
	ret = init_with(8, IORING_SETUP_CQSIZE, 4, &ring, &p);
	CHECK_EQ(ret, -EINVAL, "CQSIZE with fewer CQ than SQ entries");
	ret = init_with(8, IORING_SETUP_CQSIZE, 100, &ring, &p);
	CHECK_EQ(ret, 0, "CQSIZE 100");
	CHECK_EQ(p.cq_entries, 128, "CQSIZE rounded up");
	io_uring_queue_exit(&ring);
	ret = init_with(8, IORING_SETUP_CQSIZE, 1U << 20, &ring, &p);
	CHECK_EQ(ret, -EINVAL, "CQSIZE 1<<20 without CLAMP");
	ret = init_with(8, IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP, 1U << 20,
			&ring, &p);
	CHECK_EQ(ret, 0, "CQSIZE 1<<20 with CLAMP");
	CHECK_EQ(p.cq_entries, 65536, "clamped CQSIZE");
	io_uring_queue_exit(&ring);
}

static void test_flags(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(8, &ring, 1U << 31);
	CHECK_EQ(ret, -EINVAL, "unknown setup flag bit 31");
	ret = io_uring_queue_init(8, &ring, 1U << 25);
	CHECK_EQ(ret, -EINVAL, "unknown setup flag bit 25");
	ret = init_with(8, IORING_SETUP_REGISTERED_FD_ONLY, 0, &ring, &p);
	CHECK_EQ(ret, -EINVAL, "REGISTERED_FD_ONLY without NO_MMAP");
	/* SQ_AFF only makes sense together with SQPOLL. */
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQ_AFF);
	CHECK_EQ(ret, -EINVAL, "SQ_AFF without SQPOLL");
	/* DEFER_TASKRUN needs SINGLE_ISSUER. */
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_DEFER_TASKRUN);
	CHECK_EQ(ret, -EINVAL, "DEFER_TASKRUN without SINGLE_ISSUER");
}

/* A ring whose init failed must own nothing, so queue_exit on it is inert. */
static void check_owns_nothing(const struct io_uring *ring, const char *what)
{
	CHECK(ring->sq.ring_ptr == NULL && ring->sq.sqes == NULL &&
	      ring->cq.ring_ptr == NULL, what);
	CHECK(ring->ring_fd == -1 && ring->enter_ring_fd == -1, what);
	CHECK(ring->int_flags == 0, what);
}

static void test_failed_init_state(void)
{
	struct io_uring ring;
	struct stat before, after;
	int ret;

	memset(&ring, 0xa5, sizeof(ring));
	ret = io_uring_queue_init(0, &ring, 0);
	CHECK_EQ(ret, -EINVAL, "queue_init(0)");
	check_owns_nothing(&ring, "ring state after failed init");

	memset(&ring, 0xa5, sizeof(ring));
	ret = io_uring_queue_init(8, &ring, 1U << 31);
	CHECK_EQ(ret, -EINVAL, "queue_init(bad flags)");
	check_owns_nothing(&ring, "ring state after failed init (bad flags)");

	/* Exiting it twice closes no fd of ours: fd 0 survives. */
	CHECK(fstat(0, &before) == 0 || errno == EBADF, "fstat(0)");
	io_uring_queue_exit(&ring);
	io_uring_queue_exit(&ring);
	if (fstat(0, &before) == 0)
		CHECK(fstat(0, &after) == 0, "fd 0 closed by queue_exit of a failed ring");

	/* The library is still fine afterwards. */
	ret = io_uring_queue_init(4, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init after exit of failed ring");
	nop_roundtrip(&ring, "ring after failed init");
	io_uring_queue_exit(&ring);
	/* A ring that was exited owns nothing either. */
	check_owns_nothing(&ring, "ring state after queue_exit");
	io_uring_queue_exit(&ring);
}

static void test_no_leaks(void)
{
	int fds0 = tu_count_fds(), maps0 = tu_count_maps();
	int fds1, maps1;
	char small[64];

	CHECK(fds0 > 0 && maps0 > 0, "cannot read /proc/self");
	for (int i = 0; i < 1000; i++) {
		struct io_uring_params p;
		struct io_uring ring;
		int ret;

		switch (i % 5) {
		case 0:
			ret = io_uring_queue_init(0, &ring, 0);
			break;
		case 1:
			ret = io_uring_queue_init(65536, &ring, 0);
			break;
		case 2:
			ret = io_uring_queue_init(8, &ring, 1U << 31);
			break;
		case 3:
			ret = init_with(8, IORING_SETUP_CQSIZE, 2, &ring, &p);
			break;
		default:
			memset(&p, 0, sizeof(p));
			ret = io_uring_queue_init_mem(8, &ring, &p, small,
						      sizeof(small));
			break;
		}
		CHECK(ret < 0, "failing init %d (kind %d) succeeded", i, i % 5);
	}
	fds1 = tu_count_fds();
	maps1 = tu_count_maps();
	CHECK_EQ(fds1, fds0, "open fds after 1000 failed inits");
	CHECK_EQ(maps1, maps0, "mappings after 1000 failed inits");
}

static void test_empty_ops(void)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 20000000 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int ret;

	ret = io_uring_queue_init(8, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");

	CHECK_EQ(io_uring_submit(&ring), 0, "submit with nothing queued");
	CHECK_EQ(io_uring_submit_and_wait(&ring, 0), 0,
		 "submit_and_wait(0) with nothing queued");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), -EAGAIN, "peek on empty CQ");
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "cq ready on new ring");
	CHECK_EQ(io_uring_sq_ready(&ring), 0, "sq ready on new ring");
	CHECK_EQ(io_uring_sq_space_left(&ring), 8, "sq space on new ring");
	ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
	CHECK_EQ(ret, -ETIME, "wait_cqe_timeout with no work");

	CHECK_EQ(io_uring_unregister_ring_fd(&ring), -EINVAL,
		 "unregister_ring_fd on an unregistered ring");
	if (ring.features & IORING_FEAT_REG_REG_RING)
		CHECK_EQ(io_uring_close_ring_fd(&ring), -EINVAL,
			 "close_ring_fd on an unregistered ring");
	CHECK(ring.ring_fd >= 0 && fcntl(ring.ring_fd, F_GETFD) != -1,
	      "ring fd closed by a refused call");

	CHECK_EQ(io_uring_register(ring.ring_fd, 9999, NULL, 0), -EINVAL,
		 "io_uring_register with an unknown opcode");

	nop_roundtrip(&ring, "ring after empty ops");
	io_uring_queue_exit(&ring);

	/* queue_init_mem: zero-size buffer. */
	{
		struct io_uring_params p;
		void *mem = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		CHECK(mem != MAP_FAILED, "mmap");
		memset(&p, 0, sizeof(p));
		ret = io_uring_queue_init_mem(8, &ring, &p, mem, 0);
		CHECK_EQ(ret, -ENOMEM, "queue_init_mem with size 0");
		memset(&p, 0, sizeof(p));
		ret = io_uring_queue_init_mem(0, &ring, &p, mem, 65536);
		CHECK_EQ(ret, -EINVAL, "queue_init_mem with 0 entries");
		munmap(mem, 65536);
	}
}

static void test_probe(void)
{
	struct io_uring_probe *probe = io_uring_get_probe();

	CHECK(probe, "io_uring_get_probe returned NULL");
	CHECK(io_uring_opcode_supported(probe, IORING_OP_NOP),
	      "NOP not supported?");
	CHECK(!io_uring_opcode_supported(probe, 255), "op 255 supported?");
	io_uring_free_probe(probe);
	io_uring_free_probe(NULL);
}

/* Submits the one SQE `prep` fills in and returns its CQE's result. */
static int one_sqe(struct io_uring *ring, void (*prep)(struct io_uring_sqe *, void *), void *arg)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	CHECK(sqe, "no sqe");
	prep(sqe, arg);
	sqe->user_data = 77;
	CHECK_EQ(io_uring_submit(ring), 1, "submit");
	CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, "wait");
	CHECK_EQ(cqe->user_data, 77, "user_data");
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

static char big_path[5000];
static char buf[4096];
static struct __kernel_timespec one_ms = { .tv_nsec = 1000000 };

static void p_unknown_op(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_nop(s); s->opcode = 250; }
static void p_unknown_flag(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_nop(s); s->flags = 0x80; }
static void p_read_fd(struct io_uring_sqe *s, void *a) { io_uring_prep_read(s, *(int *)a, buf, 16, 0); }
static void p_read_fixed_file(struct io_uring_sqe *s, void *a) { io_uring_prep_read(s, *(int *)a, buf, 16, 0); s->flags = IOSQE_FIXED_FILE; }
static void p_read_fixed_buf(struct io_uring_sqe *s, void *a) { io_uring_prep_read_fixed(s, *(int *)a, buf, 16, 0, 3); }
static void p_read_null(struct io_uring_sqe *s, void *a) { io_uring_prep_read(s, *(int *)a, NULL, 16, 0); }
static void p_read_huge(struct io_uring_sqe *s, void *a) { io_uring_prep_read(s, *(int *)a, buf, 1U << 30, 0); }
static void p_readv_many(struct io_uring_sqe *s, void *a) { io_uring_prep_readv(s, *(int *)a, (struct iovec *)buf, 2000, 0); }
static void p_nop_flags(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_nop(s); s->nop_flags = 0x80; }
static void p_fsync_addr(struct io_uring_sqe *s, void *a) { io_uring_prep_fsync(s, *(int *)a, 0); s->addr = 1; }
static void p_fsync_prio(struct io_uring_sqe *s, void *a) { io_uring_prep_fsync(s, *(int *)a, 0); s->ioprio = 1; }
static void p_close_off(struct io_uring_sqe *s, void *a) { io_uring_prep_close(s, *(int *)a); s->off = 1; }
static void p_poll_addr(struct io_uring_sqe *s, void *a) { io_uring_prep_poll_add(s, *(int *)a, 1); s->addr = 1; }
static void p_timeout_len(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_timeout(s, &one_ms, 0, 0); s->len = 2; }
static void p_timeout_null(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_timeout(s, NULL, 0, 0); }
static void p_cancel_off(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_cancel64(s, 1, 0); s->off = 1; }
static void p_open_null(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_openat(s, AT_FDCWD, NULL, O_RDONLY, 0); }
static void p_open_long(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_openat(s, AT_FDCWD, big_path, O_RDONLY, 0); }
static void p_open_bufidx(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_openat(s, AT_FDCWD, "/", O_RDONLY, 0); s->buf_index = 1; }
static void p_statx_fdin(struct io_uring_sqe *s, void *a) { (void)a; io_uring_prep_statx(s, AT_FDCWD, "/", 0, 0, (struct statx *)buf); s->splice_fd_in = 1; }
static void p_epoll_null(struct io_uring_sqe *s, void *a) { io_uring_prep_epoll_ctl(s, *(int *)a, 0, EPOLL_CTL_ADD, NULL); }

static void test_bad_sqes(void)
{
	struct io_uring ring;
	char path[64];
	int fd, closed, bad = -1, idx = 0, efd;

	fd = tu_temp_file(path, sizeof(path));
	tu_pwrite_all(fd, "0123456789abcdef0123456789abcdef", 32, 0);
	closed = fcntl(fd, F_DUPFD, 900);
	close(closed);
	memset(big_path, 'a', sizeof(big_path) - 1);
	efd = epoll_create1(0);
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");

	CHECK_EQ(one_sqe(&ring, p_unknown_op, NULL), -EINVAL, "unknown opcode");
	CHECK_EQ(one_sqe(&ring, p_unknown_flag, NULL), -EINVAL, "unknown SQE flag");
	CHECK_EQ(one_sqe(&ring, p_read_fd, &bad), -EBADF, "read from fd -1");
	CHECK_EQ(one_sqe(&ring, p_read_fd, &closed), -EBADF, "read from a closed fd");
	CHECK_EQ(one_sqe(&ring, p_read_fixed_file, &idx), -EBADF, "fixed file without a table");
	CHECK_EQ(one_sqe(&ring, p_read_fixed_buf, &fd), -EFAULT, "fixed buffer without a table");
	CHECK_EQ(one_sqe(&ring, p_read_null, &fd), -EFAULT, "read into NULL");
	CHECK_EQ(one_sqe(&ring, p_read_huge, &fd), 32, "read with a huge length stops at EOF");
	CHECK_EQ(one_sqe(&ring, p_readv_many, &fd), -EINVAL, "2000 iovecs");
	CHECK_EQ(one_sqe(&ring, p_nop_flags, NULL), -EINVAL, "unknown NOP flags");
	CHECK_EQ(one_sqe(&ring, p_fsync_addr, &fd), -EINVAL, "fsync with addr set");
	CHECK_EQ(one_sqe(&ring, p_fsync_prio, &fd), -EINVAL, "fsync with ioprio set");
	CHECK_EQ(one_sqe(&ring, p_close_off, &closed), -EINVAL, "close with off set");
	CHECK_EQ(one_sqe(&ring, p_poll_addr, &fd), -EINVAL, "poll with addr set");
	CHECK_EQ(one_sqe(&ring, p_timeout_len, NULL), -EINVAL, "timeout with len 2");
	CHECK_EQ(one_sqe(&ring, p_timeout_null, NULL), -EFAULT, "timeout with a NULL timespec");
	CHECK_EQ(one_sqe(&ring, p_cancel_off, NULL), -EINVAL, "cancel with off set");
	CHECK_EQ(one_sqe(&ring, p_open_null, NULL), -EFAULT, "open of a NULL path");
	CHECK_EQ(one_sqe(&ring, p_open_long, NULL), -ENAMETOOLONG, "open of a 5000-byte path");
	CHECK_EQ(one_sqe(&ring, p_open_bufidx, NULL), -EINVAL, "open with buf_index set");
	CHECK_EQ(one_sqe(&ring, p_statx_fdin, NULL), -EINVAL, "statx with splice_fd_in set");
	CHECK_EQ(one_sqe(&ring, p_epoll_null, &efd), -EFAULT, "epoll_ctl ADD with a NULL event");

	CHECK_EQ(io_uring_register_files(&ring, &fd, 1), 0, "register a file");
	idx = 5;
	CHECK_EQ(one_sqe(&ring, p_read_fixed_file, &idx), -EBADF, "fixed file index out of range");
	io_uring_queue_exit(&ring);
	close(efd);
	close(fd);
	unlink(path);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);

	test_entries();
	test_flags();
	test_failed_init_state();
	test_no_leaks();
	test_empty_ops();
	test_probe();
	test_bad_sqes();
	tu_pass();
	return T_EXIT_PASS;
}
