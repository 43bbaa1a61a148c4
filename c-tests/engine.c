/* SPDX-License-Identifier: MIT */
/*
 * The userspace engine's front door: selection by LIBURING_RS_ENGINE,
 * liburing_rs_ring_engine(), setup flags and features, NOPs with every SQE
 * flag, the probe, the ring fd's readability, R_DISABLED, SINGLE_ISSUER.
 * Each ring picks its engine at setup, so this one program checks both.
 */
#define LIBURING_RS_SOURCE
#include <poll.h>
#include <pthread.h>
#include "liburing.h"
#include "test-util.h"
#include "reap-util.h"

#ifndef LIBURING_RS
#error "LIBURING_RS must be defined by liburing.h"
#endif

/* What the engine implements (and so what its probe must say). */
static const int engine_ops[] = {
	IORING_OP_NOP, IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC,
	IORING_OP_READ_FIXED, IORING_OP_WRITE_FIXED, IORING_OP_SYNC_FILE_RANGE,
	IORING_OP_ASYNC_CANCEL, IORING_OP_FALLOCATE, IORING_OP_OPENAT,
	IORING_OP_CLOSE, IORING_OP_FILES_UPDATE, IORING_OP_STATX, IORING_OP_READ,
	IORING_OP_WRITE, IORING_OP_FADVISE, IORING_OP_MADVISE, IORING_OP_OPENAT2,
	IORING_OP_EPOLL_CTL, IORING_OP_EPOLL_WAIT, IORING_OP_SPLICE, IORING_OP_TEE, IORING_OP_RENAMEAT,
	IORING_OP_UNLINKAT, IORING_OP_MKDIRAT, IORING_OP_SYMLINKAT, IORING_OP_LINKAT,
	IORING_OP_FSETXATTR, IORING_OP_SETXATTR, IORING_OP_FGETXATTR,
	IORING_OP_GETXATTR, IORING_OP_FTRUNCATE, IORING_OP_POLL_ADD,
	IORING_OP_POLL_REMOVE, IORING_OP_TIMEOUT, IORING_OP_TIMEOUT_REMOVE,
	IORING_OP_LINK_TIMEOUT, IORING_OP_READV_FIXED, IORING_OP_WRITEV_FIXED,
	IORING_OP_MSG_RING, IORING_OP_FIXED_FD_INSTALL, IORING_OP_PIPE, IORING_OP_WAITID,
	IORING_OP_FUTEX_WAIT, IORING_OP_FUTEX_WAKE, IORING_OP_FUTEX_WAITV,
	IORING_OP_PROVIDE_BUFFERS, IORING_OP_REMOVE_BUFFERS, IORING_OP_READ_MULTISHOT,
	IORING_OP_SENDMSG, IORING_OP_RECVMSG, IORING_OP_ACCEPT, IORING_OP_CONNECT,
	IORING_OP_SEND, IORING_OP_RECV, IORING_OP_SHUTDOWN, IORING_OP_SOCKET,
	IORING_OP_URING_CMD, IORING_OP_SEND_ZC, IORING_OP_SENDMSG_ZC,
	IORING_OP_BIND, IORING_OP_LISTEN, IORING_OP_NOP128, IORING_OP_URING_CMD128,
};

static int kernel_ok;

static void use_engine(const char *v)
{
	if (v)
		setenv("LIBURING_RS_ENGINE", v, 1);
	else
		unsetenv("LIBURING_RS_ENGINE");
}

static void user_ring(struct io_uring *ring, unsigned entries, unsigned flags)
{
	use_engine("user");
	int ret = io_uring_queue_init(entries, ring, flags);
	CHECK_EQ(ret, 0, "engine ring setup");
	CHECK_EQ(liburing_rs_ring_engine(ring), LIBURING_RS_ENGINE_USER, "engine of a user ring");
}

/* A bad selection fails setup with -EINVAL and prints nothing. */
static void test_selection(void)
{
	struct io_uring ring;
	int out[2], saved[2], ret;
	char buf[64];

	CHECK(pipe(out) == 0, "pipe");
	saved[0] = dup(1);
	saved[1] = dup(2);
	fflush(stdout);
	dup2(out[1], 1);
	dup2(out[1], 2);
	use_engine("bogus");
	ret = io_uring_queue_init(4, &ring, 0);
	dup2(saved[0], 1);
	dup2(saved[1], 2);
	close(saved[0]);
	close(saved[1]);
	close(out[1]);
	CHECK_EQ(ret, -EINVAL, "setup with LIBURING_RS_ENGINE=bogus");
	/* Silent by default; LIBURING_RS_CHECK/TRACE print the diagnosis. */
	if (!getenv("LIBURING_RS_CHECK") && !getenv("LIBURING_RS_TRACE"))
		CHECK_EQ(read(out[0], buf, sizeof(buf)), 0,
			 "bytes printed by a refused setup");
	close(out[0]);

	use_engine("kernel");
	ret = io_uring_queue_init(4, &ring, 0);
	if (ret == -ENOSYS || ret == -EPERM || ret == -EACCES) {
		kernel_ok = 0;
	} else {
		CHECK_EQ(ret, 0, "kernel ring setup");
		CHECK_EQ(liburing_rs_ring_engine(&ring), LIBURING_RS_ENGINE_KERNEL, "engine of a kernel ring");
		io_uring_queue_exit(&ring);
		kernel_ok = 1;
	}

	/* auto: the kernel when it works, the engine when it refuses. */
	use_engine(NULL);
	CHECK_EQ(io_uring_queue_init(4, &ring, 0), 0, "auto ring setup");
	CHECK_EQ(liburing_rs_ring_engine(&ring),
		 kernel_ok ? LIBURING_RS_ENGINE_KERNEL : LIBURING_RS_ENGINE_USER, "engine in auto mode");
	io_uring_queue_exit(&ring);
	use_engine("auto");
	CHECK_EQ(io_uring_queue_init(4, &ring, 0), 0, "auto ring setup");
	io_uring_queue_exit(&ring);

	CHECK_EQ(liburing_rs_ring_engine(NULL), -EINVAL, "engine of NULL");
	user_ring(&ring, 4, 0);
	io_uring_queue_exit(&ring);
	CHECK_EQ(liburing_rs_ring_engine(&ring), -EBADF, "engine after exit");
}

static void test_setup_flags(void)
{
	static const unsigned refused[] = {
		IORING_SETUP_ATTACH_WQ, IORING_SETUP_SQ_AFF, IORING_SETUP_HYBRID_IOPOLL,
		IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN,
		IORING_SETUP_TASKRUN_FLAG, IORING_SETUP_DEFER_TASKRUN, 1U << 31,
	};
	static const unsigned accepted[] = {
		0, IORING_SETUP_CLAMP, IORING_SETUP_SUBMIT_ALL, IORING_SETUP_SINGLE_ISSUER,
		IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_SQE128, IORING_SETUP_CQE32, IORING_SETUP_NO_SQARRAY,
		IORING_SETUP_R_DISABLED, IORING_SETUP_IOPOLL,
		IORING_SETUP_IOPOLL | IORING_SETUP_HYBRID_IOPOLL, IORING_SETUP_SQPOLL,
		IORING_SETUP_SQPOLL | IORING_SETUP_SINGLE_ISSUER,
	};
	struct io_uring_params p;
	struct io_uring ring;
	unsigned i;

	use_engine("user");
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = refused[i];
		CHECK_EQ(io_uring_queue_init_params(4, &ring, &p), -EINVAL, "refused setup flags");
	}
	for (i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = accepted[i];
		CHECK_EQ(io_uring_queue_init_params(5, &ring, &p), 0, "accepted setup flags");
		CHECK_EQ(p.sq_entries, 8, "SQ rounded to a power of two");
		CHECK_EQ(p.cq_entries, 16, "CQ twice the SQ");
		CHECK((p.flags & accepted[i]) == accepted[i], "flags kept");
		CHECK(p.features & IORING_FEAT_NODROP, "NODROP reported");
		CHECK(p.features & IORING_FEAT_EXT_ARG, "EXT_ARG reported");
		CHECK(p.features & IORING_FEAT_SQPOLL_NONFIXED, "SQPOLL_NONFIXED reported");
		io_uring_queue_exit(&ring);
	}
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 100;
	CHECK_EQ(io_uring_queue_init_params(4, &ring, &p), 0, "CQSIZE");
	CHECK_EQ(p.cq_entries, 128, "CQSIZE rounded up");
	io_uring_queue_exit(&ring);
	p.cq_entries = 2;
	CHECK_EQ(io_uring_queue_init_params(4, &ring, &p), -EINVAL, "CQ smaller than SQ");
	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_queue_init_params(0, &ring, &p), -EINVAL, "0 entries");
	CHECK_EQ(io_uring_queue_init_params(65536, &ring, &p), -EINVAL, "too many entries");
	p.flags = IORING_SETUP_CLAMP;
	CHECK_EQ(io_uring_queue_init_params(65536, &ring, &p), 0, "clamped entries");
	CHECK_EQ(p.sq_entries, 32768, "clamp to the kernel's maximum");
	io_uring_queue_exit(&ring);
	memset(&p, 0, sizeof(p));
	p.resv[1] = 1;
	CHECK_EQ(io_uring_queue_init_params(4, &ring, &p), -EINVAL, "reserved params");
}

static void nop(struct io_uring *ring, __u64 ud, unsigned char flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	CHECK(sqe, "no SQE");
	io_uring_prep_nop(sqe);
	sqe->user_data = ud;
	sqe->flags = flags;
}

/* NOPs through every path: plain, flagged, linked, async, drained. */
static void test_nops(unsigned flags)
{
	struct io_uring_cqe cqes[16];
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int i, n;

	user_ring(&ring, 16, flags);
	for (int round = 0; round < 50; round++) {
		nop(&ring, 1, 0);
		nop(&ring, 2, IOSQE_IO_LINK);
		nop(&ring, 3, IOSQE_ASYNC | IOSQE_IO_HARDLINK);
		nop(&ring, 4, 0);
		nop(&ring, 5, IOSQE_CQE_SKIP_SUCCESS);
		nop(&ring, 6, IOSQE_ASYNC);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = 7;
		sqe->nop_flags = IORING_NOP_INJECT_RESULT;
		sqe->len = (unsigned)-EIO;
		sqe->flags = IOSQE_IO_LINK;
		nop(&ring, 8, 0);
		CHECK_EQ(io_uring_submit(&ring), 8, "submit");
		n = tu_reap(&ring, cqes, 7);
		CHECK_EQ(n, 7, "CQEs");
		CHECK(round || tu_quiet(&ring), "CQE for a skipped success");
		for (i = 0; i < n; i++) {
			switch (cqes[i].user_data) {
			case 7:
				CHECK_EQ(cqes[i].res, -EIO, "injected result");
				break;
			case 8:
				CHECK_EQ(cqes[i].res, -ECANCELED, "member after a failed link");
				break;
			case 5:
				FAIL("CQE of a NOP with CQE_SKIP_SUCCESS");
			default:
				CHECK_EQ(cqes[i].res, 0, "NOP result");
			}
		}
	}
	io_uring_queue_exit(&ring);
}

/* Drain: the drained NOP comes after everything before it. */
static void test_drain(void)
{
	struct io_uring_cqe cqes[8];
	struct io_uring ring;

	user_ring(&ring, 8, 0);
	nop(&ring, 1, IOSQE_ASYNC);
	nop(&ring, 2, IOSQE_ASYNC);
	nop(&ring, 3, IOSQE_IO_DRAIN);
	nop(&ring, 4, 0);
	CHECK_EQ(io_uring_submit(&ring), 4, "submit");
	CHECK_EQ(tu_reap(&ring, cqes, 4), 4, "CQEs");
	for (int i = 0; i < 4; i++) {
		if (cqes[i].user_data == 3)
			CHECK(i == 2, "drained NOP completed at %d, before earlier ones", i);
		if (cqes[i].user_data == 4)
			CHECK(i == 3, "NOP after a drain completed before it");
	}
	io_uring_queue_exit(&ring);
}

/* Bad SQEs get the kernel's errors; without SUBMIT_ALL submission stops. */
static void test_bad_sqes(void)
{
	struct io_uring_cqe cqes[8];
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int ret;

	user_ring(&ring, 8, 0);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->opcode = 200;
	sqe->user_data = 1;
	nop(&ring, 2, 0);
	CHECK_EQ(io_uring_submit(&ring), 1, "submission stops at a bad SQE");
	CHECK_EQ(tu_reap(&ring, cqes, 1), 1, "CQE of the bad SQE");
	CHECK_EQ(cqes[0].res, -EINVAL, "unknown opcode");
	CHECK_EQ(io_uring_submit(&ring), 1, "the rest is still queued");
	CHECK_EQ(tu_reap(&ring, cqes, 1), 1, "CQE of the NOP");
	CHECK_EQ(cqes[0].res, 0, "NOP");

	nop(&ring, 3, 0x80);
	nop(&ring, 4, IOSQE_BUFFER_SELECT);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->ioprio = 1;
	sqe->user_data = 5;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->personality = 1;
	sqe->user_data = 6;
	for (int i = 0; i < 4; i++) {
		ret = io_uring_submit(&ring);
		CHECK(ret == 1, "one bad SQE per submit (%d): got %d", i, ret);
		CHECK_EQ(tu_reap(&ring, cqes, 1), 1, "CQE");
		CHECK_EQ(cqes[0].user_data, 3 + i, "user_data");
		CHECK_EQ(cqes[0].res, i == 1 ? -EOPNOTSUPP : -EINVAL, "bad SQE error");
	}

	/* A bad member in a chain: it fails, the head and the rest are cancelled. */
	nop(&ring, 10, IOSQE_IO_LINK);
	nop(&ring, 11, 0x80 | IOSQE_IO_LINK);
	nop(&ring, 12, 0);
	CHECK_EQ(io_uring_submit(&ring), 3, "chain with a bad member");
	CHECK_EQ(tu_reap(&ring, cqes, 3), 3, "chain CQEs");
	for (int i = 0; i < 3; i++)
		CHECK_EQ(cqes[i].res, cqes[i].user_data == 11 ? -EINVAL : -ECANCELED, "chain results");
	io_uring_queue_exit(&ring);

	/* SUBMIT_ALL carries on past bad SQEs. */
	user_ring(&ring, 8, IORING_SETUP_SUBMIT_ALL);
	nop(&ring, 1, 0x80);
	nop(&ring, 2, 0);
	CHECK_EQ(io_uring_submit(&ring), 2, "SUBMIT_ALL");
	CHECK_EQ(tu_reap(&ring, cqes, 2), 2, "CQEs");
	io_uring_queue_exit(&ring);
}

/* Exactly the engine's opcodes are reported. */
static void test_probe(void)
{
	struct io_uring_probe *p;
	struct io_uring ring;

	use_engine("user");
	p = io_uring_get_probe();
	CHECK(p, "io_uring_get_probe on the engine");
	for (int op = 0; op <= p->last_op; op++) {
		int want = 0;

		for (unsigned i = 0; i < sizeof(engine_ops) / sizeof(engine_ops[0]); i++)
			want |= engine_ops[i] == op;
		CHECK_EQ(io_uring_opcode_supported(p, op), want, "probe entry");
	}
	io_uring_free_probe(p);
	user_ring(&ring, 4, 0);
	p = io_uring_get_probe_ring(&ring);
	CHECK(p && io_uring_opcode_supported(p, IORING_OP_NOP), "probe of a ring");
	io_uring_free_probe(p);
	io_uring_queue_exit(&ring);
}

static int readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/* The ring fd is readable while CQEs wait, and stops being so within 1 ms
 * of the CQ draining: asserted on the median of 21 rounds (a loaded machine
 * may delay the reactor's timer now and then), with 50 ms as the limit for
 * any single round. */
static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static void test_ring_fd(void)
{
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	long long t0, lag[21];
	bool emulated = getenv("LIBURING_RS_TEST_EMULATED") != NULL;

	user_ring(&ring, 4, 0);
	CHECK(!readable(ring.ring_fd), "fresh ring fd readable");
	for (int round = 0; round < 21; round++) {
		nop(&ring, 1, round & 1 ? IOSQE_ASYNC : 0);
		CHECK_EQ(io_uring_submit(&ring), 1, "submit");
		t0 = tu_now_ns();
		while (!readable(ring.ring_fd))
			CHECK(tu_now_ns() - t0 < 1000000000LL, "ring fd never became readable");
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "wait");
		io_uring_cqe_seen(&ring, cqe);
		t0 = tu_now_ns();
		while (readable(ring.ring_fd)) {
			usleep(50);
			CHECK(tu_now_ns() - t0 < (emulated ? 500000000LL : 50000000LL),
			      "ring fd still readable long after the CQ drained");
		}
		lag[round] = tu_now_ns() - t0;
	}
	qsort(lag, 21, sizeof(lag[0]), cmp_ll);
	/* Emulated guests (scripts/test-kernels.sh) run ten to fifty times
	 * slower, more when the host is busy. */
	CHECK(lag[10] < (emulated ? 50000000LL : 1000000LL),
	      "ring fd readable %lld us (median) after the CQ drained", lag[10] / 1000);
	io_uring_queue_exit(&ring);
}

static void *other_thread_submit(void *arg)
{
	struct io_uring *ring = arg;

	nop(ring, 1, 0);
	return (void *)(long)io_uring_submit(ring);
}

static void test_issuer_and_disabled(void)
{
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	pthread_t t;
	void *ret;

	user_ring(&ring, 4, IORING_SETUP_R_DISABLED);
	nop(&ring, 1, 0);
	CHECK_EQ(io_uring_submit(&ring), -EBADFD, "submit to a disabled ring");
	CHECK_EQ(io_uring_enable_rings(&ring), 0, "enable");
	CHECK_EQ(io_uring_enable_rings(&ring), -EBADFD, "enable twice");
	CHECK_EQ(io_uring_submit_and_wait(&ring, 1), 1, "submit after enable");
	CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "CQE");
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);

	user_ring(&ring, 4, IORING_SETUP_SINGLE_ISSUER);
	pthread_create(&t, NULL, other_thread_submit, &ring);
	pthread_join(t, &ret);
	CHECK_EQ((long)ret, -EEXIST, "submit from another thread");
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	test_selection();
	test_setup_flags();
	test_nops(0);
	test_nops(IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | IORING_SETUP_NO_SQARRAY);
	test_nops(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
	test_drain();
	test_bad_sqes();
	test_probe();
	test_ring_fd();
	test_issuer_and_disabled();
	tu_pass();
	return 0;
}
