/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_NO_SQARRAY: rings with and without the SQ index array.
 *
 *  - Explicitly requested: params.flags and ring.flags carry the flag,
 *    ring.sq.array is NULL, NOPs and a file read work.
 *  - Not requested, via io_uring_queue_init_params: liburing 2.15 asks the
 *    kernel for NO_SQARRAY anyway when it can (falling back silently), so
 *    on a kernel that knows it (6.6+) the flag shows up in params.flags.
 *  - A ring that really has an SQ array: created with io_uring_setup()
 *    (no liburing flag games) and mapped with io_uring_queue_mmap();
 *    ring.sq.array points into the mapping, and once the array is filled
 *    with the identity mapping NOPs and a read work.
 *  - IORING_SETUP_SQ_REWIND (newer than Linux 6.18, which refuses it; the
 *    engine has it): rounds of NOPs from slot 0 each time, the SQ head
 *    staying at 0, and -EINVAL with SQPOLL.
 * Before 6.6 the kernel refuses the flag: the explicit request must then
 * get the kernel's -EINVAL, and the default rings must come back with an
 * identity-mapped SQ array and work; the test ends in a skip naming the
 * flag.
 */
#include <liburing.h>
#include "test-util.h"

static char path[64];
static int file_fd;
static unsigned char file_data[8192];

/* The fallback ring of a kernel without NO_SQARRAY: flag dropped, an SQ
 * array present and mapped one to one. */
static void check_sq_array(struct io_uring *ring, unsigned params_flags,
			   const char *what)
{
	CHECK(!(params_flags & IORING_SETUP_NO_SQARRAY),
	      "%s: params.flags keeps NO_SQARRAY", what);
	CHECK(tu_ring_flags(ring) == params_flags, "%s: ring.flags %#x != params %#x",
	      what, ring->flags, params_flags);
	CHECK(ring->sq.array != NULL, "%s: no sq.array", what);
	for (unsigned i = 0; i < ring->sq.ring_entries; i++)
		CHECK(ring->sq.array[i] == i, "%s: sq.array[%u] = %u", what, i,
		      ring->sq.array[i]);
}

static void exercise(struct io_uring *ring, const char *what)
{
	unsigned char buf[4096];

	/* Several rounds of NOPs so the SQ wraps. */
	for (int round = 0; round < 6; round++) {
		for (unsigned i = 0; i < 5; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			CHECK(sqe, "%s: no sqe", what);
			io_uring_prep_nop(sqe);
			sqe->user_data = round * 100 + i;
		}
		CHECK_EQ(io_uring_submit_and_wait(ring, 5), 5, what);
		for (unsigned i = 0; i < 5; i++) {
			struct io_uring_cqe *cqe;

			CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, what);
			CHECK(cqe->res == 0, "%s: nop res %d", what, cqe->res);
			CHECK(cqe->user_data >= (unsigned)round * 100 &&
			      cqe->user_data < (unsigned)round * 100 + 5,
			      "%s: stray user_data %llu", what,
			      (unsigned long long)cqe->user_data);
			io_uring_cqe_seen(ring, cqe);
		}
	}

	/* A read of the middle of the test file. */
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;

	memset(buf, 0, sizeof(buf));
	io_uring_prep_read(sqe, file_fd, buf, sizeof(buf), 1000);
	sqe->user_data = 0x77;
	CHECK_EQ(io_uring_submit_and_wait(ring, 1), 1, what);
	CHECK_EQ(io_uring_peek_cqe(ring, &cqe), 0, what);
	CHECK(cqe->user_data == 0x77, "%s: wrong cqe", what);
	CHECK_EQ(cqe->res, sizeof(buf), what);
	io_uring_cqe_seen(ring, cqe);
	CHECK(memcmp(buf, file_data + 1000, sizeof(buf)) == 0,
	      "%s: read data mismatch", what);
}

int main(int argc, char *argv[])
{
	struct io_uring_params p;
	struct io_uring ring;
	int ret, have_flag = 1;

	(void)argc;
	tu_set_name(argv[0]);

	file_fd = tu_temp_file(path, sizeof(path));
	tu_fill_random(file_data, sizeof(file_data), 99);
	tu_pwrite_all(file_fd, file_data, sizeof(file_data), 0);

	/* 1: explicitly requested. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_SQARRAY;
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret == -EINVAL &&
	    tu_lacks_before(6, 6, "IORING_SETUP_NO_SQARRAY")) {
		have_flag = 0;
	} else {
		CHECK_EQ(ret, 0, "queue_init_params(NO_SQARRAY)");
		CHECK(p.flags & IORING_SETUP_NO_SQARRAY,
		      "params.flags lost NO_SQARRAY");
		CHECK(ring.flags & IORING_SETUP_NO_SQARRAY,
		      "ring.flags lost NO_SQARRAY");
		CHECK(ring.sq.array == NULL, "sq.array set on a NO_SQARRAY ring");
		exercise(&ring, "explicit NO_SQARRAY");
		io_uring_queue_exit(&ring);
	}

	/* 2: not requested; liburing prefers it when the kernel has it. */
	memset(&p, 0, sizeof(p));
	ret = io_uring_queue_init_params(8, &ring, &p);
	CHECK_EQ(ret, 0, "queue_init_params(0)");
	if (!have_flag) {
		check_sq_array(&ring, p.flags, "default ring");
	} else {
		CHECK(p.flags & IORING_SETUP_NO_SQARRAY,
		      "liburing did not pick NO_SQARRAY on a kernel that has it");
		CHECK(tu_ring_flags(&ring) == p.flags,
		      "ring.flags %#x != params.flags %#x", ring.flags, p.flags);
	}
	exercise(&ring, "default ring");
	io_uring_queue_exit(&ring);

	/* Same through io_uring_queue_init(). */
	ret = io_uring_queue_init(8, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init(0)");
	if (!have_flag)
		check_sq_array(&ring, tu_ring_flags(&ring), "queue_init ring");
	else
		CHECK(ring.flags & IORING_SETUP_NO_SQARRAY,
		      "queue_init did not pick NO_SQARRAY");
	exercise(&ring, "queue_init ring");
	io_uring_queue_exit(&ring);

	/* 4: IORING_SETUP_SQ_REWIND: every submit starts over at slot 0 and
	 * the SQ head never moves; it needs NO_SQARRAY and refuses SQPOLL. */
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_NO_SQARRAY | IORING_SETUP_SQ_REWIND);
	if (ret == -EINVAL && !tu_on_engine()) {
		/* Linux 6.18 predates it: an unknown flag, refused. */
		fprintf(stderr, "kernel has no IORING_SETUP_SQ_REWIND (EINVAL)\n");
	} else {
		CHECK_EQ(ret, 0, "queue_init(SQ_REWIND)");
		exercise(&ring, "SQ_REWIND ring");
		CHECK_EQ(*ring.sq.khead, 0, "SQ head of a rewinding ring");
		io_uring_queue_exit(&ring);
		/* (liburing adds NO_SQARRAY itself, so only SQPOLL can be
		 * tried through it; the raw io_uring_setup is the kernel's.) */
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQ_REWIND | IORING_SETUP_NO_SQARRAY | IORING_SETUP_SQPOLL;
		CHECK_EQ(io_uring_queue_init_params(8, &ring, &p), -EINVAL, "SQ_REWIND with SQPOLL");
	}

	/* 3: a ring with an SQ array, set up by hand (on the kernel only). */
	if (tu_kernel_uring_blocked()) {
		fprintf(stderr, "kernel refuses io_uring: no hand-made ring\n");
		close(file_fd);
		tu_pass();
		return T_EXIT_PASS;
	}
	memset(&p, 0, sizeof(p));
	int fd = io_uring_setup(8, &p);

	CHECK(fd >= 0, "io_uring_setup: %s", strerror(-fd));
	CHECK(!(p.flags & IORING_SETUP_NO_SQARRAY), "unexpected NO_SQARRAY");
	CHECK(p.sq_off.array != 0, "kernel reported no sq array offset");
	ret = io_uring_queue_mmap(fd, &p, &ring);
	CHECK_EQ(ret, 0, "io_uring_queue_mmap");
	CHECK(ring.ring_fd == fd && ring.enter_ring_fd == fd, "ring fd not set");
	CHECK(ring.sq.array != NULL, "sq.array NULL on a ring that has one");
	CHECK((char *)ring.sq.array ==
	      (char *)ring.sq.ring_ptr + p.sq_off.array,
	      "sq.array not at sq_off.array");
	for (unsigned i = 0; i < ring.sq.ring_entries; i++)
		ring.sq.array[i] = i;
	exercise(&ring, "ring with sq array");
	io_uring_queue_exit(&ring);

	close(file_fd);
	return tu_done();
}
