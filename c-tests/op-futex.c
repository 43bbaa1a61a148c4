/* SPDX-License-Identifier: MIT */
/*
 * Futex opcodes: futex_wait (value mismatch and real wake), futex_wake,
 * futex_waitv; wakes by plain futex(2) calls of another thread, waiters on
 * distinct words, cancellation, the kernel's errors for bad flags, sizes,
 * alignment and addresses, and a ring torn down with waits pending;
 * 256 waits with bitsets cost no thread each (the process stays at or
 * under 2 x CPUs + 8 threads) and still hear the wakes whose bitset
 * matches theirs, from futex(2) and from FUTEX_WAKE requests, and not the
 * others.
 */
#include <dirent.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include "op-util.h"

#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE 128
#endif
#ifndef FUTEX_BITSET_MATCH_ANY
#define FUTEX_BITSET_MATCH_ANY 0xffffffff
#endif

static const unsigned fl = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;
static uint32_t w1, w2;

static int go;

/*
 * Another thread: changes the word, then wakes it with plain futex(2). It
 * is started before the wait is queued: on 6.18 a process's first extra
 * thread gives it a private futex hash, and a private wait queued before
 * that is not found by a private wake after it.
 */
static void *outside_waker(void *arg)
{
	uint32_t *w = arg;

	while (!__atomic_load_n(&go, __ATOMIC_SEQ_CST))
		usleep(1000);
	usleep(20000);
	__atomic_store_n(w, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

static void prep_wait(struct io_uring *ring, uint32_t *w, __u64 ud)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_futex_wait(sqe, w, 0, FUTEX_BITSET_MATCH_ANY, fl, 0);
	io_uring_sqe_set_data64(sqe, ud);
}

static void more_cases(struct io_uring *ring)
{
	struct io_uring_sqe *sqe;
	struct op_cqe c[3];
	pthread_t t;

	/* a plain futex wake from another thread ends the request */
	w1 = 0;
	CHECK(pthread_create(&t, NULL, outside_waker, &w1) == 0, "pthread_create");
	prep_wait(ring, &w1, 1);
	op_submit(ring, 1);
	__atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
	c[0] = op_wait(ring);
	pthread_join(t, NULL);
	CHECK(c[0].user_data == 1 && c[0].res == 0, "futex_wait woken from outside: %d",
	      c[0].res);

	/* two words: waking one leaves the other waiting */
	w1 = w2 = 0;
	prep_wait(ring, &w1, 1);
	prep_wait(ring, &w2, 2);
	op_submit(ring, 2);
	sqe = op_sqe(ring);
	io_uring_prep_futex_wake(sqe, &w2, 10, FUTEX_BITSET_MATCH_ANY, fl, 0);
	io_uring_sqe_set_data64(sqe, 3);
	op_submit(ring, 1);
	c[0] = op_wait(ring);
	c[1] = op_wait(ring);
	CHECK((c[0].user_data == 2 && c[1].user_data == 3) ||
	      (c[0].user_data == 3 && c[1].user_data == 2), "woken: %llu and %llu",
	      (unsigned long long)c[0].user_data, (unsigned long long)c[1].user_data);
	CHECK_EQ(c[0].user_data == 3 ? c[0].res : c[1].res, 1, "waking w2");
	usleep(5000);
	CHECK_EQ(io_uring_cq_ready(ring), 0, "the waiter on w1 ended too");

	/* a wake whose bitset misses the waiter's wakes nobody */
	sqe = op_sqe(ring);
	io_uring_prep_futex_wait(sqe, &w2, 0, 0x1, fl, 0);
	io_uring_sqe_set_data64(sqe, 2);
	op_submit(ring, 1);
	sqe = op_sqe(ring);
	io_uring_prep_futex_wake(sqe, &w2, 1, 0x2, fl, 0);
	io_uring_sqe_set_data64(sqe, 5);
	CHECK_EQ(op_run1(ring), 0, "wake with another bitset");

	/* cancel both by user_data: the kernel counts the futex it cancelled */
	for (int i = 1; i <= 2; i++) {
		sqe = op_sqe(ring);
		io_uring_prep_cancel64(sqe, i, 0);
		io_uring_sqe_set_data64(sqe, 3);
		op_submit(ring, 1);
		c[0] = op_wait(ring);
		c[1] = op_wait(ring);
		if (c[0].user_data == 3) {
			c[2] = c[0];
			c[0] = c[1];
			c[1] = c[2];
		}
		CHECK(c[0].user_data == (__u64)i && c[0].res == -ECANCELED,
		      "cancelled futex_wait: ud %llu res %d",
		      (unsigned long long)c[0].user_data, c[0].res);
		CHECK_EQ(c[1].res, 1, "cancel of a futex_wait");
	}
}

static int run_wait(struct io_uring *ring, void *addr, __u64 val, __u64 mask,
		    unsigned flags)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_futex_wait(sqe, addr, val, mask, flags, 0);
	return op_run1(ring);
}

static int run_waitv(struct io_uring *ring, struct futex_waitv *wv, unsigned nr)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_futex_waitv(sqe, wv, nr, 0);
	return op_run1(ring);
}

static void bad_input(struct io_uring *ring)
{
	static uint32_t w[2] = { 1, 1 };
	struct io_uring_sqe *sqe;
	struct futex_waitv wv[2];
	char *cw = (char *)w;
	int ret;

	/* only 32-bit words; FUTEX2_NUMA refused, FUTEX2_MPOL (8) taken */
	CHECK_EQ(run_wait(ring, w, 0, FUTEX_BITSET_MATCH_ANY, 0), -EINVAL, "u8 futex");
	CHECK_EQ(run_wait(ring, w, 0, FUTEX_BITSET_MATCH_ANY, 1), -EINVAL, "u16 futex");
	CHECK_EQ(run_wait(ring, w, 0, FUTEX_BITSET_MATCH_ANY, 3), -EINVAL, "u64 futex");
	CHECK_EQ(run_wait(ring, w, 0, FUTEX_BITSET_MATCH_ANY, 2 | 4), -EINVAL, "FUTEX2_NUMA");
	ret = run_wait(ring, w, 0, FUTEX_BITSET_MATCH_ANY, 2 | 8);
	if (ret != -EINVAL || !tu_lacks_before(6, 16, "FUTEX2_MPOL"))
		CHECK_EQ(ret, -EAGAIN, "FUTEX2_MPOL");
	CHECK_EQ(run_wait(ring, w, 0, FUTEX_BITSET_MATCH_ANY, fl | 0x100), -EINVAL, "unknown flag");
	CHECK_EQ(run_wait(ring, w, 1ULL << 32, FUTEX_BITSET_MATCH_ANY, fl), -EINVAL, "value > 32 bits");
	CHECK_EQ(run_wait(ring, w, 0, 1ULL << 32, fl), -EINVAL, "mask > 32 bits");
	CHECK_EQ(run_wait(ring, w, 0, 0, fl), -EINVAL, "mask 0");
	CHECK_EQ(run_wait(ring, cw + 1, 0, FUTEX_BITSET_MATCH_ANY, fl), -EINVAL, "misaligned wait");
	CHECK_EQ(run_wait(ring, (void *)8, 0, FUTEX_BITSET_MATCH_ANY, fl), -EFAULT, "unmapped wait");
	sqe = op_sqe(ring);
	io_uring_prep_futex_wait(sqe, w, 0, FUTEX_BITSET_MATCH_ANY, fl, 1);
	CHECK_EQ(op_run1(ring), -EINVAL, "futex_wait with sqe futex_flags");
	sqe = op_sqe(ring);
	io_uring_prep_futex_wake(sqe, (uint32_t *)(void *)(cw + 2), 1, FUTEX_BITSET_MATCH_ANY, fl, 0);
	CHECK_EQ(op_run1(ring), -EINVAL, "misaligned wake");
	sqe = op_sqe(ring);
	io_uring_prep_futex_wake(sqe, (void *)8, 0, FUTEX_BITSET_MATCH_ANY, FUTEX2_SIZE_U32, 0);
	CHECK_EQ(op_run1(ring), -EFAULT, "unmapped shared wake of none");
	sqe = op_sqe(ring);
	io_uring_prep_futex_wake(sqe, w, 1, 0, fl, 0);
	CHECK_EQ(op_run1(ring), -EINVAL, "wake with mask 0");

	memset(wv, 0, sizeof(wv));
	wv[0].uaddr = (unsigned long)&w[0];
	wv[0].flags = fl;
	wv[0].val = 1;
	wv[1].uaddr = (unsigned long)&w[1];
	wv[1].flags = fl;
	CHECK_EQ(run_waitv(ring, wv, 2), -EAGAIN, "waitv with a changed word");
	CHECK_EQ(run_waitv(ring, wv, 0), -EINVAL, "waitv of none");
	CHECK_EQ(run_waitv(ring, wv, 129), -EINVAL, "waitv of 129");
	CHECK_EQ(run_waitv(ring, (void *)8, 2), -EFAULT, "waitv vector unmapped");
	wv[1].__reserved = 1;
	CHECK_EQ(run_waitv(ring, wv, 2), -EINVAL, "waitv reserved field");
	wv[1].__reserved = 0;
	wv[1].flags = 3;
	CHECK_EQ(run_waitv(ring, wv, 2), -EINVAL, "waitv u64 entry");
	wv[1].flags = fl;
	wv[1].uaddr = (unsigned long)(cw + 1);
	CHECK_EQ(run_waitv(ring, wv, 2), -EINVAL, "waitv misaligned entry");
	wv[1].uaddr = 8;
	CHECK_EQ(run_waitv(ring, wv, 2), -EFAULT, "waitv unmapped entry");
}

/* Waits pending at teardown end quietly, and no thread is left behind
 * (a watcher of the userspace engine exits with its last waiter). */
#define NBIT 256

static int thread_cap(void)
{
	return 2 * (int)sysconf(_SC_NPROCESSORS_ONLN) + 8;
}

/* Reaps `n` CQEs within 2 s: the waits get user_data 1000 + i. */
static void reap_bitset(struct io_uring *ring, int n, int want_odd, int *wake_res)
{
	for (int i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 2 };

		CHECK(io_uring_wait_cqe_timeout(ring, &cqe, &ts) == 0, "bitset wait CQE %d of %d not there", i, n);
		if (cqe->user_data == 1) {
			CHECK(wake_res, "unexpected FUTEX_WAKE CQE");
			*wake_res = cqe->res;
			wake_res = NULL;
		} else {
			CHECK(cqe->user_data >= 1000 && cqe->user_data < 1000 + NBIT,
			      "CQE %llu", (unsigned long long)cqe->user_data);
			CHECK(want_odd < 0 || (int)(cqe->user_data & 1) == want_odd,
			      "wait %llu woken by a wake with another bitset",
			      (unsigned long long)cqe->user_data);
			CHECK_EQ(cqe->res, 0, "woken bitset wait");
		}
		io_uring_cqe_seen(ring, cqe);
	}
}

static void bitset_waits(void)
{
	static uint32_t words[NBIT];
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int n, res = -1;
	long r;

	op_ring(&ring, 512, 0);
	/* One word; even waits have bitset 1, odd ones bitset 2. */
	w1 = 0;
	for (int i = 0; i < NBIT; i++) {
		sqe = op_sqe(&ring);
		io_uring_prep_futex_wait(sqe, &w1, 0, i & 1 ? 0x2 : 0x1, fl, 0);
		io_uring_sqe_set_data64(sqe, 1000 + i);
	}
	op_submit(&ring, NBIT);
	usleep(20000);
	n = tu_count_threads();
	CHECK(n <= thread_cap(), "%d threads with %d bitset waits (cap %d)", n, NBIT, thread_cap());
	/* futex(2) with a bitset nobody waits with wakes nobody */
	r = syscall(SYS_futex, &w1, FUTEX_WAKE_BITSET_PRIVATE, NBIT, NULL, NULL, 0x4);
	CHECK_EQ(r, 0, "futex(2) wake with bitset 4");
	usleep(50000);
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "waits ended by a wake with bitset 4");
	/* futex(2) with bitset 1 ends the even ones, promptly */
	r = syscall(SYS_futex, &w1, FUTEX_WAKE_BITSET_PRIVATE, NBIT, NULL, NULL, 0x1);
	CHECK(r >= 1, "futex(2) wake with bitset 1: %ld", r);
	reap_bitset(&ring, NBIT / 2, 0, NULL);
	usleep(20000);
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "odd waits ended by a wake with bitset 1");
	/* a FUTEX_WAKE request with bitset 2 ends (and counts) the odd ones */
	sqe = op_sqe(&ring);
	io_uring_prep_futex_wake(sqe, &w1, NBIT, 0x2, fl, 0);
	io_uring_sqe_set_data64(sqe, 1);
	op_submit(&ring, 1);
	reap_bitset(&ring, NBIT / 2 + 1, 1, &res);
	CHECK_EQ(res, NBIT / 2, "FUTEX_WAKE with bitset 2 count");

	/* NBIT words, one wait each, with bitset 1 */
	for (int i = 0; i < NBIT; i++) {
		words[i] = 0;
		sqe = op_sqe(&ring);
		io_uring_prep_futex_wait(sqe, &words[i], 0, 0x1, fl, 0);
		io_uring_sqe_set_data64(sqe, 1000 + i);
	}
	op_submit(&ring, NBIT);
	usleep(20000);
	n = tu_count_threads();
	CHECK(n <= thread_cap(), "%d threads with %d bitset waits on distinct words (cap %d)", n,
	      NBIT, thread_cap());
	/*
	 * Half woken by futex(2), half by FUTEX_WAKE requests, bitset 3. The
	 * futex(2) wakes follow the futex protocol (change the word, then
	 * wake): the engine's watchers may be re-arming between two wakes.
	 */
	for (int i = 0; i < NBIT; i += 2) {
		__atomic_store_n(&words[i], 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &words[i], FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0x3);
	}
	reap_bitset(&ring, NBIT / 2, 0, NULL);
	for (int i = 1; i < NBIT; i += 2) {
		sqe = op_sqe(&ring);
		io_uring_prep_futex_wake(sqe, &words[i], 1, 0x3, fl, 0);
		io_uring_sqe_set_data64(sqe, 2);
	}
	op_submit(&ring, NBIT / 2);
	for (int i = 0; i < NBIT; i++) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 2 };

		CHECK_EQ(io_uring_wait_cqe_timeout(&ring, &cqe, &ts), 0, "CQE of a wait or a wake");
		if (cqe->user_data == 2)
			CHECK_EQ(cqe->res, 1, "FUTEX_WAKE of one word");
		else
			CHECK(cqe->user_data & 1 && cqe->res == 0, "odd wait: ud %llu res %d",
			      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
}

static void teardown_pending(void)
{
	static struct futex_waitv wv[3];
	struct io_uring ring;
	int before = tu_count_threads(), n = before;

	w1 = w2 = 0;
	op_ring(&ring, 8, 0);
	prep_wait(&ring, &w1, 1);
	prep_wait(&ring, &w2, 2);
	for (int i = 0; i < 3; i++) {
		wv[i].uaddr = (unsigned long)(i ? &w2 : &w1);
		wv[i].flags = fl;
	}
	io_uring_prep_futex_waitv(op_sqe(&ring), wv, 3, 0);
	op_submit(&ring, 3);
	io_uring_queue_exit(&ring);
	for (int i = 0; i < 100 && n > before; i++) {
		usleep(10000);
		n = tu_count_threads();
	}
	CHECK(n <= before, "threads: %d before the ring, %d after its teardown",
	      before, n);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct op_cqe c[3];
	static uint32_t f1, f2;
	struct futex_waitv wv[2];
	unsigned fl = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	op_need(&ring, IORING_OP_FUTEX_WAIT, "IORING_OP_FUTEX_WAIT");

	/* value differs: -EAGAIN at once */
	f1 = 1;
	sqe = op_sqe(&ring);
	io_uring_prep_futex_wait(sqe, &f1, 0, FUTEX_BITSET_MATCH_ANY, fl, 0);
	CHECK_EQ(op_run1(&ring), -EAGAIN, "futex_wait on a changed value");

	/* wait, then wake from the same ring: wake res = 1 woken */
	f1 = 0;
	sqe = op_sqe(&ring);
	io_uring_prep_futex_wait(sqe, &f1, 0, FUTEX_BITSET_MATCH_ANY, fl, 0);
	io_uring_sqe_set_data64(sqe, 1);
	op_submit(&ring, 1);
	CHECK(io_uring_cq_ready(&ring) == 0, "futex_wait completed early");
	sqe = op_sqe(&ring);
	io_uring_prep_futex_wake(sqe, &f1, 1, FUTEX_BITSET_MATCH_ANY, fl, 0);
	io_uring_sqe_set_data64(sqe, 2);
	op_submit(&ring, 1);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[0].res, 0, "woken futex_wait");
	CHECK_EQ(c[1].res, 1, "futex_wake woke count");
	/* waking with nobody waiting */
	sqe = op_sqe(&ring);
	io_uring_prep_futex_wake(sqe, &f1, 1, FUTEX_BITSET_MATCH_ANY, fl, 0);
	CHECK_EQ(op_run1(&ring), 0, "futex_wake with no waiters");

	/* waitv on two futexes; waking the second: res = its index 1 */
	f1 = 0;
	f2 = 0;
	memset(wv, 0, sizeof(wv));
	wv[0].uaddr = (unsigned long)&f1;
	wv[0].flags = fl;
	wv[1].uaddr = (unsigned long)&f2;
	wv[1].flags = fl;
	sqe = op_sqe(&ring);
	io_uring_prep_futex_waitv(sqe, wv, 2, 0);
	io_uring_sqe_set_data64(sqe, 1);
	op_submit(&ring, 1);
	sqe = op_sqe(&ring);
	io_uring_prep_futex_wake(sqe, &f2, 1, FUTEX_BITSET_MATCH_ANY, fl, 0);
	io_uring_sqe_set_data64(sqe, 2);
	op_submit(&ring, 1);
	op_wait_n(&ring, c, 2);
	CHECK_EQ(c[0].res, 1, "futex_waitv woken index");
	CHECK_EQ(c[1].res, 1, "futex_wake for waitv");

	more_cases(&ring);
	bad_input(&ring);
	io_uring_queue_exit(&ring);
	bitset_waits();
	teardown_pending();
	return tu_done();
}
