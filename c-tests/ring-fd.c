/* SPDX-License-Identifier: MIT */
/*
 * Registered ring fds and related ring management:
 *  - io_uring_register_ring_fd: enter_ring_fd becomes the registered index,
 *    int_flags gains IORING_ENTER_REGISTERED_RING, submit/wait still work;
 *  - io_uring_unregister_ring_fd restores enter_ring_fd == ring_fd;
 *  - io_uring_close_ring_fd after registration closes the real fd
 *    (ring_fd becomes -1) while submission through the registered index
 *    keeps working; unregistering after that leaves a ring with no fd;
 *  - io_uring_ring_dontfork then fork(): the child has no ring mappings,
 *    the parent's ring keeps working;
 *  - io_uring_resize_rings grows a DEFER_TASKRUN ring while CQEs are
 *    pending; they all survive.
 * Parts a kernel lacks (registered-ring close before 6.3, resizing before
 * 6.13) are left out and named in the final skip.
 */
#include <liburing.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "test-util.h"

static void nops(struct io_uring *ring, unsigned n, unsigned long long ud,
		 const char *what)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		CHECK(sqe, "%s: no sqe", what);
		io_uring_prep_nop(sqe);
		sqe->user_data = ud + i;
	}
	int ret = io_uring_submit_and_wait(ring, n);

	CHECK_EQ(ret, n, what);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0, what);
		CHECK(cqe->user_data >= ud && cqe->user_data < ud + n &&
		      cqe->res == 0, "%s: bad cqe ud %llu res %d", what,
		      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
}

static void test_register_unregister(void)
{
	struct io_uring ring;
	int ret, fd;

	ret = io_uring_queue_init(8, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");
	fd = ring.ring_fd;
	CHECK(ring.enter_ring_fd == fd, "enter_ring_fd != ring_fd initially");
	CHECK(!(ring.int_flags & IORING_ENTER_REGISTERED_RING),
	      "registered bit set on a fresh ring");

	ret = io_uring_register_ring_fd(&ring);
	if (ret == -EINVAL)
		SKIP("kernel lacks IORING_REGISTER_RING_FDS");
	CHECK_EQ(ret, 1, "io_uring_register_ring_fd");
	CHECK(ring.int_flags & IORING_ENTER_REGISTERED_RING,
	      "int_flags lacks the registered-ring bit");
	CHECK(ring.ring_fd == fd, "ring_fd changed by registration");
	CHECK(ring.enter_ring_fd >= 0 && ring.enter_ring_fd < 64,
	      "enter_ring_fd %d is not a small registered index",
	      ring.enter_ring_fd);
	nops(&ring, 6, 10, "nops via registered ring fd");

	/* Registering twice is refused. */
	CHECK_EQ(io_uring_register_ring_fd(&ring), -EEXIST,
		 "second register_ring_fd");

	ret = io_uring_unregister_ring_fd(&ring);
	CHECK_EQ(ret, 1, "io_uring_unregister_ring_fd");
	CHECK(ring.enter_ring_fd == fd, "enter_ring_fd not restored");
	CHECK(!(ring.int_flags & IORING_ENTER_REGISTERED_RING),
	      "registered bit still set");
	nops(&ring, 6, 20, "nops after unregister");
	io_uring_queue_exit(&ring);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF,
	      "ring fd still open after queue_exit");
}

static void test_close_ring_fd(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int ret, fd;

	ret = io_uring_queue_init(8, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");
	if (!(ring.features & IORING_FEAT_REG_REG_RING)) {
		CHECK_EQ(io_uring_close_ring_fd(&ring), -EOPNOTSUPP,
			 "close_ring_fd without FEAT_REG_REG_RING");
		io_uring_queue_exit(&ring);
		tu_lacks("IORING_FEAT_REG_REG_RING");
		return;
	}
	fd = ring.ring_fd;
	CHECK_EQ(io_uring_close_ring_fd(&ring), -EINVAL,
		 "close_ring_fd before registering");
	CHECK_EQ(io_uring_register_ring_fd(&ring), 1, "register_ring_fd");
	ret = io_uring_close_ring_fd(&ring);
	CHECK_EQ(ret, 1, "io_uring_close_ring_fd");
	CHECK_EQ(ring.ring_fd, -1, "ring_fd after close_ring_fd");
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF,
	      "real ring fd %d still open", fd);
	CHECK_EQ(io_uring_close_ring_fd(&ring), -EBADF,
		 "second close_ring_fd");

	nops(&ring, 8, 100, "nops with the ring fd closed");
	nops(&ring, 5, 200, "more nops with the ring fd closed");

	/* Unregistering still works (through the registered index). */
	ret = io_uring_unregister_ring_fd(&ring);
	CHECK_EQ(ret, 1, "unregister after close");
	CHECK(!(ring.int_flags & IORING_ENTER_REGISTERED_RING),
	      "registered bit still set");
	CHECK_EQ(ring.enter_ring_fd, -1, "enter_ring_fd after unregister");

	/* No fd left to enter the ring with. */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	CHECK_EQ(io_uring_submit(&ring), -EBADF, "submit on an fd-less ring");
	io_uring_queue_exit(&ring);
}

static void test_dontfork(void)
{
	struct io_uring ring;
	int ret, status;
	pid_t pid;

	ret = io_uring_queue_init(8, &ring, 0);
	CHECK_EQ(ret, 0, "queue_init");
	ret = io_uring_ring_dontfork(&ring);
	CHECK_EQ(ret, 0, "io_uring_ring_dontfork");
	nops(&ring, 3, 300, "nops before fork");

	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		unsigned char vec;
		long pg = sysconf(_SC_PAGESIZE);
		uintptr_t a = (uintptr_t)ring.sq.ring_ptr & ~(uintptr_t)(pg - 1);
		uintptr_t b = (uintptr_t)ring.sq.sqes & ~(uintptr_t)(pg - 1);

		/* Both regions must be absent in the child. */
		if (mincore((void *)a, pg, &vec) == 0 || errno != ENOMEM)
			_exit(2);
		if (mincore((void *)b, pg, &vec) == 0 || errno != ENOMEM)
			_exit(3);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status), "child died abnormally");
	CHECK(WEXITSTATUS(status) != 2, "child still has the SQ/CQ ring mapped");
	CHECK(WEXITSTATUS(status) != 3, "child still has the SQEs mapped");
	CHECK_EQ(WEXITSTATUS(status), 0, "child exit status");

	nops(&ring, 5, 400, "parent nops after fork");
	io_uring_queue_exit(&ring);
}

static void test_resize(void)
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret == -EINVAL && tu_lacks_before(6, 1, "IORING_SETUP_DEFER_TASKRUN"))
		return;
	CHECK_EQ(ret, 0, "queue_init_params(DEFER_TASKRUN)");
	CHECK_EQ(ring.cq.ring_entries, 16, "initial cq entries");

	/* 12 completions pending in the 16-entry CQ (2 submits of 6). */
	for (int b = 0; b < 2; b++) {
		for (int i = 0; i < 6; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_nop(sqe);
			sqe->user_data = b * 6 + i;
		}
		CHECK_EQ(io_uring_submit(&ring), 6, "submit");
	}
	CHECK_EQ(io_uring_get_events(&ring), 0, "get_events");
	CHECK_EQ(io_uring_cq_ready(&ring), 12, "pending before resize");

	memset(&p, 0, sizeof(p));
	p.sq_entries = 64;
	p.cq_entries = 256;
	p.flags = IORING_SETUP_CQSIZE;
	ret = io_uring_resize_rings(&ring, &p);
	if (ret == -EINVAL || ret == -EOPNOTSUPP) {
		io_uring_queue_exit(&ring);
		CHECK(tu_lacks_before(6, 13, "IORING_REGISTER_RESIZE_RINGS"),
		      "resize_rings: %s", strerror(-ret));
		return;
	}
	CHECK_EQ(ret, 0, "io_uring_resize_rings");
	CHECK_EQ(ring.sq.ring_entries, 64, "sq entries after resize");
	CHECK_EQ(ring.cq.ring_entries, 256, "cq entries after resize");
	CHECK_EQ(io_uring_cq_ready(&ring), 12, "pending CQEs after resize");
	for (unsigned i = 0; i < 12; i++) {
		CHECK_EQ(io_uring_peek_cqe(&ring, &cqe), 0, "peek after resize");
		CHECK(cqe->user_data == i && cqe->res == 0,
		      "cqe %u after resize: ud %llu res %d", i,
		      (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK_EQ(io_uring_sq_space_left(&ring), 64, "sq space after resize");

	/* Use the bigger ring to its full SQ size. */
	nops(&ring, 64, 1000, "nops on the resized ring");
	nops(&ring, 64, 2000, "nops on the resized ring (again)");
	io_uring_queue_exit(&ring);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);

	test_register_unregister();
	test_close_ring_fd();
	test_dontfork();
	test_resize();
	return tu_done();
}
