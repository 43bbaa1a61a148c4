/* SPDX-License-Identifier: MIT */
/*
 * Memory the program registers and then unmaps, and user pointers that
 * point nowhere: an error in the CQE (or from the call), never a signal.
 * Covered: fixed buffers (READ_FIXED, WRITE_FIXED), buffer rings in
 * application memory (one-shot, bundle and multishot receives, unmapped
 * before use and while a multishot receive uses them), the data buffers
 * a ring names, legacy provided buffers, registering such memory, and
 * pointers read at submission (timespec, iovec array, msghdr, path,
 * futex word).
 *
 * The kernel pins registered buffers and buffer rings in application
 * memory, so after munmap it keeps using the orphaned pages: requests on
 * them still work there. The userspace engine cannot pin: it answers
 * -EFAULT where it meets the unmapped memory. Each case below therefore
 * expects exactly the kernel's answer on kernel rings and exactly -EFAULT
 * on engine rings, and says so. Memory the kernel does not pin (legacy
 * provided buffers, the data buffers a buffer ring points at, pointers
 * read at submission) gets -EFAULT from both.
 */
#include <liburing.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "test-util.h"
#include "op-util.h"

#define PG	4096
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32	0x02
#endif

static int engine;
static int file_fd;
static unsigned char file_data[2 * PG];

static void *map_pages(size_t n)
{
	void *p = mmap(NULL, n * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	return p;
}

/*
 * Unmaps len bytes at p, as munmap does (the pages go), but leaves the
 * address range reserved and inaccessible: after a plain munmap the next
 * mapping (ASan's allocator, a thread's stack) may land there and make
 * the address valid again.
 */
static void unmap(void *p, size_t len)
{
	void *q = mmap(p, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
		       -1, 0);

	CHECK(q == p, "mmap over %p: %s", p, strerror(errno));
}

/* An address where nothing is mapped. */
static void *hole(void)
{
	void *p = map_pages(1);

	unmap(p, PG);
	return p;
}

static void send_bytes(int fd, size_t n)
{
	char b[256];

	memset(b, 'x', sizeof(b));
	CHECK((size_t)send(fd, b, n, 0) == n, "send: %s", strerror(errno));
}

static void drain(int fd)
{
	char b[4096];

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		;
}

/* Fixed buffers: registered, then unmapped. */
static void fixed_buffers(struct io_uring *ring)
{
	struct io_uring_sqe *sqe;
	struct iovec iov;
	char *buf = map_pages(2);
	int res;

	iov.iov_base = buf;
	iov.iov_len = 2 * PG;
	CHECK_EQ(io_uring_register_buffers(ring, &iov, 1), 0, "register");
	unmap(buf, 2 * PG);

	/* Kernel: the pinned pages take the data. Engine: -EFAULT. */
	sqe = op_sqe(ring);
	io_uring_prep_read_fixed(sqe, file_fd, buf, PG, 0, 0);
	res = op_run1(ring);
	CHECK_EQ(res, engine ? -EFAULT : PG, "READ_FIXED into unmapped buffer");
	sqe = op_sqe(ring);
	io_uring_prep_write_fixed(sqe, file_fd, buf + PG, PG, 2 * PG, 0);
	res = op_run1(ring);
	CHECK_EQ(res, engine ? -EFAULT : PG, "WRITE_FIXED from unmapped buffer");
	CHECK_EQ(io_uring_unregister_buffers(ring), 0, "unregister");

	/* Registering unmapped or read-only memory: -EFAULT from both. */
	iov.iov_base = hole();
	iov.iov_len = PG;
	CHECK_EQ(io_uring_register_buffers(ring, &iov, 1), -EFAULT,
		 "register unmapped buffer");
	buf = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(buf != MAP_FAILED, "mmap");
	iov.iov_base = buf;
	CHECK_EQ(io_uring_register_buffers(ring, &iov, 1), -EFAULT,
		 "register read-only buffer");
	munmap(buf, PG);
}

static struct op_cqe run(struct io_uring *ring)
{
	op_submit(ring, 1);
	return op_wait(ring);
}

static void register_ring(struct io_uring *ring, void *mem, unsigned n,
			  int bgid, int want)
{
	struct io_uring_buf_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)mem;
	reg.ring_entries = n;
	reg.bgid = bgid;
	CHECK_EQ(io_uring_register_buf_ring(ring, &reg, 0), want,
		 "register_buf_ring");
}

static struct io_uring_sqe *sqe_last;

static void prep_recv_select(struct io_uring *ring, int fd, int bgid,
			     int multishot)
{
	struct io_uring_sqe *sqe = sqe_last = op_sqe(ring);

	if (multishot)
		io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
	else
		io_uring_prep_recv(sqe, fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	sqe->user_data = 7;
}

/* Buffer rings in application memory, unmapped after registration. */
static void buffer_rings(struct io_uring *ring, int sv[2])
{
	char *data = map_pages(4);
	struct op_cqe c;
	void *mem;

	/* Unmapped before any request used it. Kernel: the pinned ring
	 * still holds the four buffers. Engine: -EFAULT. */
	mem = map_pages(1);
	register_ring(ring, mem, 4, 1, 0);
	op_buf_ring_fill(mem, 4, data, PG);
	unmap(mem, PG);
	send_bytes(sv[1], 100);
	prep_recv_select(ring, sv[0], 1, 0);
	c = run(ring);
	if (engine) {
		CHECK_EQ(c.res, -EFAULT, "recv from an unmapped buffer ring");
	} else {
		CHECK_EQ(c.res, 100, "recv from an unmapped (pinned) ring");
		CHECK(c.flags & IORING_CQE_F_BUFFER, "no buffer flag");
		CHECK_EQ(c.flags >> IORING_CQE_BUFFER_SHIFT, 0, "bid");
	}
	/* A multishot receive on it: the kernel serves the three buffers
	 * left, then runs out (-ENOBUFS); the engine ends at once with
	 * -EFAULT. Either way the last CQE has no F_MORE. */
	drain(sv[0]);
	send_bytes(sv[1], 10);
	prep_recv_select(ring, sv[0], 1, 1);
	op_submit(ring, 1);
	for (int i = 0; !engine && i < 3; i++) {
		c = op_wait(ring);
		CHECK_EQ(c.res, 10, "multishot recv (kernel, pinned ring)");
		CHECK(c.flags & IORING_CQE_F_MORE, "multishot ended early");
		send_bytes(sv[1], 10);
	}
	c = op_wait(ring);
	CHECK_EQ(c.res, engine ? -EFAULT : -ENOBUFS, "multishot end");
	CHECK(!(c.flags & IORING_CQE_F_MORE), "F_MORE on the last CQE");
	CHECK_EQ(io_uring_unregister_buf_ring(ring, 1), 0, "unregister");
	drain(sv[0]);

	/* A bundle receive takes its buffers by a peek at the ring: the
	 * same answers. */
	if (ring->features & IORING_FEAT_RECVSEND_BUNDLE) {
		mem = map_pages(1);
		register_ring(ring, mem, 4, 6, 0);
		op_buf_ring_fill(mem, 4, data, PG);
		unmap(mem, PG);
		send_bytes(sv[1], 50);
		prep_recv_select(ring, sv[0], 6, 0);
		sqe_last->ioprio |= IORING_RECVSEND_BUNDLE;
		c = run(ring);
		CHECK_EQ(c.res, engine ? -EFAULT : 50,
			 "bundle recv from an unmapped buffer ring");
		CHECK_EQ(io_uring_unregister_buf_ring(ring, 6), 0, "unregister");
		drain(sv[0]);
	} else {
		tu_lacks("IORING_FEAT_RECVSEND_BUNDLE");
	}

	/* Unmapped while a multishot receive uses it: buffers the engine
	 * had already read off the ring are still served, as on the
	 * kernel; where the kernel then runs out (-ENOBUFS), the engine
	 * finds the ring gone (-EFAULT). */
	mem = map_pages(1);
	register_ring(ring, mem, 2, 2, 0);
	op_buf_ring_fill(mem, 2, data, PG);
	send_bytes(sv[1], 20);
	prep_recv_select(ring, sv[0], 2, 1);
	op_submit(ring, 1);
	c = op_wait(ring);
	CHECK_EQ(c.res, 20, "multishot recv, ring mapped");
	CHECK(c.flags & IORING_CQE_F_MORE, "multishot ended");
	unmap(mem, PG);
	send_bytes(sv[1], 20);
	c = op_wait(ring);
	CHECK_EQ(c.res, 20, "multishot recv after munmap, buffer 2 of 2");
	CHECK(c.flags & IORING_CQE_F_MORE, "multishot ended");
	send_bytes(sv[1], 20);
	c = op_wait(ring);
	CHECK_EQ(c.res, engine ? -EFAULT : -ENOBUFS, "multishot, ring used up");
	CHECK(!(c.flags & IORING_CQE_F_MORE), "F_MORE on the last CQE");
	CHECK_EQ(io_uring_unregister_buf_ring(ring, 2), 0, "unregister");
	drain(sv[0]);

	/* The ring stays, its data buffers go: the receive's copy faults,
	 * -EFAULT from both. */
	mem = map_pages(1);
	register_ring(ring, mem, 4, 3, 0);
	op_buf_ring_fill(mem, 4, hole(), PG);
	send_bytes(sv[1], 30);
	prep_recv_select(ring, sv[0], 3, 0);
	c = run(ring);
	CHECK_EQ(c.res, -EFAULT, "recv into an unmapped ring buffer");
	CHECK_EQ(io_uring_unregister_buf_ring(ring, 3), 0, "unregister");
	munmap(mem, PG);
	drain(sv[0]);

	/* Registering an unmapped, read-only or inaccessible ring: the
	 * kernel's pin for writing fails, -EFAULT. */
	register_ring(ring, hole(), 4, 4, -EFAULT);
	mem = map_pages(1);
	CHECK(mprotect(mem, PG, PROT_READ) == 0, "mprotect");
	register_ring(ring, mem, 4, 4, -EFAULT);
	CHECK(mprotect(mem, PG, PROT_NONE) == 0, "mprotect");
	register_ring(ring, mem, 4, 4, -EFAULT);
	munmap(mem, PG);
	munmap(data, 4 * PG);
}

/* Legacy provided buffers are never pinned: -EFAULT from both. */
static void legacy_buffers(struct io_uring *ring, int sv[2])
{
	struct io_uring_sqe *sqe;
	char *mem = map_pages(2);
	struct op_cqe c;

	sqe = op_sqe(ring);
	io_uring_prep_provide_buffers(sqe, mem, PG, 2, 5, 0);
	CHECK_EQ(op_run1(ring), 0, "provide buffers");
	unmap(mem, 2 * PG);
	send_bytes(sv[1], 40);
	prep_recv_select(ring, sv[0], 5, 0);
	c = run(ring);
	CHECK_EQ(c.res, -EFAULT, "recv into an unmapped provided buffer");
	sqe = op_sqe(ring);
	io_uring_prep_read(sqe, file_fd, NULL, PG, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 5;
	CHECK_EQ(op_run1(ring), -EFAULT, "read into an unmapped provided buffer");
	drain(sv[0]);
}

/* Pointers an SQE hands over that the engine reads itself. */
static void bad_pointers(struct io_uring *ring, int sv[2])
{
	struct io_uring_sqe *sqe;
	void *bad = hole();

	sqe = op_sqe(ring);
	io_uring_prep_timeout(sqe, bad, 0, 0);
	CHECK_EQ(op_run1(ring), -EFAULT, "TIMEOUT with an unmapped timespec");

	sqe = op_sqe(ring);
	io_uring_prep_readv(sqe, file_fd, bad, 2, 0);
	CHECK_EQ(op_run1(ring), -EFAULT, "READV with an unmapped iovec array");

	sqe = op_sqe(ring);
	io_uring_prep_sendmsg(sqe, sv[1], bad, 0);
	CHECK_EQ(op_run1(ring), -EFAULT, "SENDMSG with an unmapped msghdr");

	sqe = op_sqe(ring);
	io_uring_prep_recvmsg(sqe, sv[0], bad, 0);
	CHECK_EQ(op_run1(ring), -EFAULT, "RECVMSG with an unmapped msghdr");

	sqe = op_sqe(ring);
	io_uring_prep_openat(sqe, AT_FDCWD, bad, O_RDONLY, 0);
	CHECK_EQ(op_run1(ring), -EFAULT, "OPENAT with an unmapped path");

	if (op_has(ring, IORING_OP_FUTEX_WAIT)) {
		sqe = op_sqe(ring);
		io_uring_prep_futex_wait(sqe, bad, 0, FUTEX_BITSET_MATCH_ANY,
					 FUTEX2_SIZE_U32, 0);
		CHECK_EQ(op_run1(ring), -EFAULT,
			 "FUTEX_WAIT on an unmapped word");
	}
}

int main(int argc, char *argv[])
{
	struct io_uring ring;
	char path[64];
	int sv[2];

	(void)argc;
	tu_set_name(argv[0]);
	engine = tu_on_engine();

	file_fd = tu_temp_file(path, sizeof(path));
	tu_fill_random(file_data, sizeof(file_data), 11);
	tu_pwrite_all(file_fd, file_data, sizeof(file_data), 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");

	op_ring(&ring, 16, 0);
	fixed_buffers(&ring);
	buffer_rings(&ring, sv);
	legacy_buffers(&ring, sv);
	bad_pointers(&ring, sv);
	io_uring_queue_exit(&ring);

	close(sv[0]);
	close(sv[1]);
	close(file_fd);
	return tu_done();
}
