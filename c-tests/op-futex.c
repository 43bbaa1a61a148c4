/* SPDX-License-Identifier: MIT */
/* Futex opcodes: futex_wait (value mismatch and real wake), futex_wake, futex_waitv. */
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

	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
