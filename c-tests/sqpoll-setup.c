/* SPDX-License-Identifier: MIT */
/*
 * What setting up and entering an SQPOLL ring answers, on the kernel and
 * on the engine alike:
 *  - flags that cannot go with SQPOLL (task-run notifications), SQ_AFF
 *    without SQPOLL or with a CPU the caller may not use, ATTACH_WQ with a
 *    closed fd, a non-ring fd, or a ring without SQPOLL: the kernel's errno;
 *  - params->features reports SQPOLL_NONFIXED; SQ_AFF pins the thread to
 *    sq_thread_cpu, and it works;
 *  - ATTACH_WQ onto an SQPOLL ring shares its thread (no new task) and
 *    both rings get their SQEs done;
 *  - io_uring_enter returns to_submit (SQ_WAIT, SQ_WAKEUP, and a failed
 *    GETEVENTS after a non-zero to_submit) and the SQ thread submits;
 *    with nothing to submit or wait for it returns 0, also once the SQ
 *    thread idles and the thread that set the ring up has exited;
 *  - R_DISABLED: queued SQEs wait until io_uring_enable_rings;
 *  - SINGLE_ISSUER: another thread may submit and wait (the SQ thread is
 *    the issuer), but not register (-EEXIST);
 *  - the SQ flags word carries IORING_SQ_CQ_OVERFLOW and
 *    IORING_SQ_NEED_WAKEUP at once, each cleared on its own, and no CQE
 *    of an overflowing SQPOLL ring is lost or reordered.
 */
#define LIBURING_RS_SOURCE
#include <liburing.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include "op-util.h"

static int setup(struct io_uring *ring, unsigned flags, unsigned cpu, int wq_fd)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	p.sq_thread_cpu = cpu;
	p.sq_thread_idle = 50;
	p.wq_fd = wq_fd;
	return io_uring_queue_init_params(8, ring, &p);
}

/* The thread ids of this process. */
struct tids {
	int n;
	long id[64];
};

static void tids(struct tids *t)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	CHECK(d, "opendir /proc/self/task: %s", strerror(errno));
	t->n = 0;
	while ((e = readdir(d)) && t->n < 64)
		if (e->d_name[0] != '.')
			t->id[t->n++] = atol(e->d_name);
	closedir(d);
}

/*
 * How many threads of `now` `before` lacks: threads of earlier rings that
 * leave meanwhile (late on slow, emulated machines) do not count.
 */
static int added(const struct tids *before, const struct tids *now)
{
	int n = 0;

	for (int i = 0; i < now->n; i++) {
		int old = 0;

		for (int j = 0; j < before->n; j++)
			old |= now->id[i] == before->id[j];
		n += !old;
	}
	return n;
}

/* One NOP through the ring, reaped within 2 s. */
static void nop(struct io_uring *ring, unsigned long long ud)
{
	struct __kernel_timespec ts = { .tv_sec = 2 };
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;

	CHECK(sqe, "no sqe");
	io_uring_prep_nop(sqe);
	sqe->user_data = ud;
	CHECK(io_uring_submit(ring) >= 0, "submit");
	CHECK_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), 0, "nop cqe");
	CHECK_EQ(cqe->user_data, ud, "nop user_data");
	CHECK_EQ(cqe->res, 0, "nop res");
	io_uring_cqe_seen(ring, cqe);
}

static void test_refused(void)
{
	struct io_uring ring, plain;
	cpu_set_t set;
	unsigned bad_cpu = CPU_SETSIZE;

	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN, 0, 0),
		 -EINVAL, "SQPOLL with COOP_TASKRUN");
	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN |
		       IORING_SETUP_TASKRUN_FLAG, 0, 0), -EINVAL, "SQPOLL with TASKRUN_FLAG");
	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_SINGLE_ISSUER |
		       IORING_SETUP_DEFER_TASKRUN, 0, 0), -EINVAL, "SQPOLL with DEFER_TASKRUN");
	CHECK_EQ(setup(&ring, IORING_SETUP_SQ_AFF, 0, 0), -EINVAL, "SQ_AFF without SQPOLL");
	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0, "sched_getaffinity");
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (!CPU_ISSET(c, &set)) {
			bad_cpu = c;
			break;
		}
	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF, bad_cpu, 0),
		 -EINVAL, "SQ_AFF on a CPU not allowed");
	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF, 100000, 0),
		 -EINVAL, "SQ_AFF on CPU 100000");
	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ, 0, 999),
		 -ENXIO, "ATTACH_WQ to a closed fd");
	CHECK_EQ(setup(&ring, IORING_SETUP_ATTACH_WQ, 0, 999), -ENXIO,
		 "ATTACH_WQ (no SQPOLL) to a closed fd");
	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ, 0, 1),
		 -EINVAL, "ATTACH_WQ to a non-ring fd");
	CHECK_EQ(io_uring_queue_init(8, &plain, 0), 0, "plain ring");
	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ, 0, plain.ring_fd),
		 -EINVAL, "SQPOLL ATTACH_WQ to a ring without SQPOLL");
	CHECK_EQ(setup(&ring, IORING_SETUP_ATTACH_WQ, 0, plain.ring_fd), 0,
		 "ATTACH_WQ (no SQPOLL) to a plain ring");
	nop(&ring, 1);
	io_uring_queue_exit(&ring);
	io_uring_queue_exit(&plain);
}

/* The ids of this process's threads; returns how many (at most max). */
static int task_ids(int *ids, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d, "opendir /proc/self/task: %s", strerror(errno));
	while ((e = readdir(d)) && n < max)
		if (e->d_name[0] != '.')
			ids[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

static void test_features_and_affinity(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	int cpu = sched_getcpu(), before[64], after[64], nb, na, sq_tid = -1, pinned = 0;

	if (cpu < 0)
		cpu = 0;
	nb = task_ids(before, 64);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
	p.sq_thread_cpu = cpu;
	CHECK_EQ(io_uring_queue_init_params(8, &ring, &p), 0, "SQPOLL with SQ_AFF");
	CHECK(p.features & IORING_FEAT_SQPOLL_NONFIXED, "SQPOLL_NONFIXED reported");
	CHECK(p.features & IORING_FEAT_NODROP, "NODROP reported");
	CHECK(ring.features == p.features, "ring.features");
	/* The new thread is the SQ thread; it pins itself as it starts. */
	na = task_ids(after, 64);
	for (int i = 0; i < na && sq_tid < 0; i++) {
		int old = 0;

		for (int j = 0; j < nb; j++)
			old |= after[i] == before[j];
		if (!old)
			sq_tid = after[i];
	}
	CHECK(sq_tid > 0, "no new thread for the SQPOLL ring");
	for (int i = 0; i < 100 && !pinned; i++) {
		cpu_set_t set;

		CHECK_EQ(sched_getaffinity(sq_tid, sizeof(set), &set), 0, "SQ thread affinity");
		pinned = CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
		if (!pinned)
			usleep(10000);
	}
	CHECK(pinned, "SQ thread pinned to CPU %d", cpu);
	for (int i = 0; i < 8; i++)
		nop(&ring, 10 + i);
	io_uring_queue_exit(&ring);
}

static void test_attach(void)
{
	struct io_uring a, b;
	struct tids t0, ta, tb;

	tids(&t0);
	CHECK_EQ(setup(&a, IORING_SETUP_SQPOLL, 0, -1), 0, "first SQPOLL ring");
	tids(&ta);
	for (int i = 0; i < 100 && added(&t0, &ta) == 0; i++) {
		usleep(20000);
		tids(&ta);
	}
	CHECK_EQ(added(&t0, &ta), 1, "an SQPOLL ring adds one thread");
	CHECK_EQ(setup(&b, IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ, 0, a.ring_fd), 0,
		 "ATTACH_WQ to an SQPOLL ring");
	tids(&tb);
	CHECK_EQ(added(&ta, &tb), 0, "an attached ring shares the thread");
	for (int i = 0; i < 20; i++) {
		nop(&a, 100 + i);
		nop(&b, 200 + i);
	}
	/* The first ring goes; the thread stays for the second. */
	io_uring_queue_exit(&a);
	for (int i = 0; i < 5; i++)
		nop(&b, 300 + i);
	io_uring_queue_exit(&b);
}

static void test_enter(void)
{
	struct io_uring ring;
	int ret;

	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL, 0, -1), 0, "SQPOLL ring");
	ret = io_uring_enter(ring.ring_fd, 5, 0, 0, NULL);
	CHECK_EQ(ret, 5, "enter returns to_submit");
	ret = io_uring_enter(ring.ring_fd, 3, 0, IORING_ENTER_SQ_WAIT, NULL);
	CHECK_EQ(ret, 3, "SQ_WAIT with room returns to_submit");
	ret = io_uring_enter(ring.ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL);
	CHECK_EQ(ret, 0, "SQ_WAKEUP");
	ret = io_uring_enter(ring.ring_fd, 2, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			     (void *)1);
	CHECK_EQ(ret, 2, "a bad wait argument is not reported after to_submit");
	ret = io_uring_enter(ring.ring_fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			     (void *)1);
	CHECK_EQ(ret, -EINVAL, "a bad wait argument alone");
	/* SQEs made visible by the tail alone, no enter: the thread finds them. */
	for (int i = 0; i < 4; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_nop(sqe);
		sqe->user_data = 40 + i;
	}
	io_uring_smp_store_release(ring.sq.ktail, ring.sq.sqe_tail);
	ring.sq.sqe_head = ring.sq.sqe_tail;
	io_uring_smp_mb();
	if (IO_URING_READ_ONCE(*ring.sq.kflags) & IORING_SQ_NEED_WAKEUP)
		io_uring_enter(ring.ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL);
	ret = io_uring_submit_and_wait(&ring, 4);
	CHECK(ret >= 0, "submit_and_wait: %d", ret);
	CHECK(io_uring_cq_ready(&ring) >= 4, "4 CQEs from the tail alone");
	io_uring_cq_advance(&ring, io_uring_cq_ready(&ring));
	io_uring_queue_exit(&ring);
}

static void *setup_in_thread(void *arg)
{
	CHECK_EQ(setup(arg, IORING_SETUP_SQPOLL, 0, -1), 0, "SQPOLL ring");
	return NULL;
}

static void test_enter_empty(void)
{
	struct io_uring ring;
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, setup_in_thread, &ring), 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK_EQ(io_uring_enter(ring.ring_fd, 0, 0, 0, NULL), 0, "empty enter");
	usleep(150000); /* three idle periods: the SQ thread sleeps */
	CHECK_EQ(io_uring_enter(ring.ring_fd, 0, 0, 0, NULL), 0, "empty enter once idle");
	nop(&ring, 90);
	io_uring_queue_exit(&ring);
}

static void test_disabled(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;

	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_R_DISABLED, 0, -1), 0,
		 "SQPOLL with R_DISABLED");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 7;
	io_uring_submit(&ring);
	usleep(100000);
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "nothing submitted while disabled");
	CHECK_EQ(io_uring_enter(ring.ring_fd, 0, 1, IORING_ENTER_GETEVENTS, NULL), -EBADFD,
		 "enter on a disabled ring");
	CHECK_EQ(io_uring_enable_rings(&ring), 0, "enable_rings");
	CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "CQE after enable");
	CHECK_EQ(cqe->user_data, 7, "user_data after enable");
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
}

static void *other_thread(void *arg)
{
	struct io_uring *ring = arg;
	int fd = 0;

	nop(ring, 77);
	/* Registrations stay the submitter's. */
	CHECK_EQ(io_uring_register_files(ring, &fd, 1), -EEXIST,
		 "register from another thread of a SINGLE_ISSUER ring");
	return NULL;
}

static void test_single_issuer(void)
{
	struct io_uring ring;
	pthread_t t;

	CHECK_EQ(setup(&ring, IORING_SETUP_SQPOLL | IORING_SETUP_SINGLE_ISSUER, 0, -1), 0,
		 "SQPOLL with SINGLE_ISSUER");
	nop(&ring, 76);
	CHECK_EQ(pthread_create(&t, NULL, other_thread, &ring), 0, "pthread_create");
	pthread_join(t, NULL);
	nop(&ring, 78);
	{
		int fd = 0;

		CHECK_EQ(io_uring_register_files(&ring, &fd, 1), 0, "register from the submitter");
	}
	io_uring_queue_exit(&ring);
}

static void test_overflow_flags(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	unsigned flags = 0;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_CQSIZE;
	p.sq_thread_idle = 10;
	p.cq_entries = 4;
	CHECK_EQ(io_uring_queue_init_params(4, &ring, &p), 0, "SQPOLL ring with 4 CQEs");
	CHECK_EQ(p.cq_entries, 4, "CQ size");
	for (unsigned round = 0; round < 4; round++) {
		for (unsigned i = 0; i < 4; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			/* A kernel's sqring_wait may return before there is room. */
			for (int k = 0; !sqe && k < 1000; k++) {
				io_uring_submit(&ring);
				io_uring_sqring_wait(&ring);
				sqe = io_uring_get_sqe(&ring);
			}
			CHECK(sqe, "no sqe");
			io_uring_prep_nop(sqe);
			sqe->user_data = round * 4 + i;
		}
		io_uring_submit(&ring);
	}
	/* 16 NOPs for 4 CQ slots: the rest overflows, then the thread sleeps. */
	for (int i = 0; i < 200; i++) {
		flags = IO_URING_READ_ONCE(*ring.sq.kflags);
		if ((flags & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_NEED_WAKEUP)) ==
		    (IORING_SQ_CQ_OVERFLOW | IORING_SQ_NEED_WAKEUP))
			break;
		usleep(5000);
	}
	CHECK(flags & IORING_SQ_CQ_OVERFLOW, "CQ_OVERFLOW set (flags %#x)", flags);
	CHECK(flags & IORING_SQ_NEED_WAKEUP, "NEED_WAKEUP set next to it (flags %#x)", flags);
	for (unsigned i = 0; i < 16; i++) {
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0, "overflowed CQE");
		CHECK_EQ(cqe->user_data, i, "CQEs in order");
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_get_events(&ring);
	flags = IO_URING_READ_ONCE(*ring.sq.kflags);
	CHECK(!(flags & IORING_SQ_CQ_OVERFLOW), "CQ_OVERFLOW cleared (flags %#x)", flags);
	CHECK(flags & IORING_SQ_NEED_WAKEUP, "NEED_WAKEUP kept (flags %#x)", flags);
	nop(&ring, 99);
	io_uring_queue_exit(&ring);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);
	op_need_sqpoll();
	test_refused();
	test_features_and_affinity();
	test_attach();
	test_enter();
	test_enter_empty();
	test_disabled();
	test_single_issuer();
	test_overflow_flags();
	tu_pass();
	return T_EXIT_PASS;
}
