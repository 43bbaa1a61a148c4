/* SPDX-License-Identifier: MIT */
/*
 * Registered ring fds and related ring management:
 *  - io_uring_register_ring_fd: enter_ring_fd becomes the registered index,
 *    int_flags gains IORING_ENTER_REGISTERED_RING, submit/wait still work;
 *  - io_uring_unregister_ring_fd restores enter_ring_fd == ring_fd;
 *  - io_uring_close_ring_fd after registration closes the real fd
 *    (ring_fd becomes -1) while submission through the registered index
 *    keeps working; unregistering after that leaves a ring with no fd,
 *    and tearing it down leaves no fd behind;
 *  - IORING_SETUP_REGISTERED_FD_ONLY: the ring comes with a registered
 *    index and no fd, works, and leaves no fd behind either;
 *  - io_uring_ring_dontfork then fork(): the child has no ring mappings
 *    (mapped rings, and NO_MMAP rings in library or caller memory), the
 *    parent's ring keeps working;
 * Parts a kernel lacks (registered-ring close before 6.3, NO_MMAP before
 * 6.5, NO_SQARRAY before 6.6) are left out and named in the final skip.
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
	int ret, fd, fds0 = tu_count_fds();

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
	CHECK_EQ(tu_count_fds(), fds0, "fds after a ring whose fd was closed");
}

static void test_registered_fd_only(void)
{
	struct io_uring ring;
	unsigned vals[2] = { 0, 0 };
	int ret, fds0 = tu_count_fds();

	ret = io_uring_queue_init(8, &ring, IORING_SETUP_REGISTERED_FD_ONLY |
				  IORING_SETUP_NO_MMAP);
	if (ret == -EINVAL && tu_lacks_before(6, 5, "IORING_SETUP_REGISTERED_FD_ONLY"))
		return;
	CHECK_EQ(ret, 0, "REGISTERED_FD_ONLY setup");
	CHECK_EQ(ring.ring_fd, -1, "ring_fd of a REGISTERED_FD_ONLY ring");
	CHECK(ring.int_flags & IORING_ENTER_REGISTERED_RING, "registered bit");
	CHECK_EQ(io_uring_close_ring_fd(&ring), -EBADF, "close_ring_fd with no fd");
	CHECK_EQ(io_uring_register_iowq_max_workers(&ring, vals), 0,
		 "register through the index");
	nops(&ring, 8, 500, "nops on a REGISTERED_FD_ONLY ring");
	io_uring_queue_exit(&ring);
	CHECK_EQ(tu_count_fds(), fds0, "fds after a REGISTERED_FD_ONLY ring");
}

/* Whether any mapping in /proc/<pid>/maps contains address a. */
static int maps_contain(pid_t pid, const void *a)
{
	char path[64], line[512];
	uintptr_t x = (uintptr_t)a;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	CHECK(f, "open %s: %s", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			found = x >= lo && x < hi;
	}
	fclose(f);
	return found;
}

/*
 * io_uring_ring_dontfork, then fork(): no page of the ring (SQEs, SQ and
 * CQ rings) is inherited, read from the child's /proc/<pid>/maps while the
 * child waits, and the parent's ring keeps working. With NO_MMAP rings the
 * whole block the library allocated must go too.
 */
static void test_dontfork(unsigned flags, void *mem, size_t mem_len,
			  const char *kind)
{
	struct io_uring_params p;
	struct io_uring ring;
	int ret, status, go[2];
	pid_t pid;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	if (mem)
		ret = io_uring_queue_init_mem(8, &ring, &p, mem, mem_len);
	else
		ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret == -EINVAL && (flags & IORING_SETUP_NO_MMAP) &&
	    tu_lacks_before(6, 5, "IORING_SETUP_NO_MMAP"))
		return;
	if (ret == -EINVAL && (flags & IORING_SETUP_NO_SQARRAY) &&
	    tu_lacks_before(6, 6, "IORING_SETUP_NO_SQARRAY"))
		return;
	CHECK(ret >= 0, "%s: init: %s", kind, strerror(-ret));
	ret = io_uring_ring_dontfork(&ring);
	CHECK_EQ(ret, 0, "io_uring_ring_dontfork");
	nops(&ring, 3, 300, "nops before fork");

	CHECK(pipe(go) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char c;

		close(go[1]);
		_exit(read(go[0], &c, 1) < 0);
	}
	close(go[0]);
	CHECK(!maps_contain(pid, ring.sq.sqes), "%s: child has the SQEs", kind);
	CHECK(!maps_contain(pid, ring.sq.ring_ptr), "%s: child has the SQ ring",
	      kind);
	CHECK(!maps_contain(pid, ring.cq.ring_ptr), "%s: child has the CQ ring",
	      kind);
	CHECK(!maps_contain(pid, ring.cq.cqes), "%s: child has the CQEs", kind);
	CHECK(maps_contain(getpid(), ring.cq.cqes), "%s: parent lost the CQEs",
	      kind);
	close(go[1]);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status");

	nops(&ring, 5, 400, "parent nops after fork");
	io_uring_queue_exit(&ring);
}

int main(int argc, char *argv[])
{
	(void)argc;
	tu_set_name(argv[0]);

	test_register_unregister();
	test_close_ring_fd();
	test_registered_fd_only();
	test_dontfork(0, NULL, 0, "mapped ring");
	test_dontfork(IORING_SETUP_NO_SQARRAY, NULL, 0, "mapped ring, no SQ array");
	test_dontfork(IORING_SETUP_NO_MMAP, NULL, 0, "NO_MMAP, library memory");
	{
		size_t len = 64 * 1024;
		void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		CHECK(mem != MAP_FAILED, "mmap");
		test_dontfork(IORING_SETUP_NO_MMAP, mem, len,
			      "NO_MMAP, caller memory");
		munmap(mem, len);
	}
	return tu_done();
}
