/* SPDX-License-Identifier: MIT */
/*
 * io_uring_queue_init_mem: rings placed in caller-provided memory
 * (IORING_SETUP_NO_MMAP).
 *
 *  - A 2 MiB region (huge page if one is available, else normal pages)
 *    hosts a ring; the return value is the number of bytes used, > 0 and
 *    <= the region size; the SQEs live at the start of the region.
 *  - A second ring fits in the same region at the returned offset.
 *  - NOPs and a file read work on both.
 *  - io_uring_memory_size / io_uring_memory_size_params report at least
 *    the bytes used.
 *  - A region one byte too small, or of size 0, is refused with -ENOMEM.
 *  - With a NULL buffer liburing allocates the memory itself and the ring
 *    still works.
 *  - io_uring_queue_exit leaves the caller's memory mapped.
 *  - Memory the ring cannot be written to (read-only, PROT_NONE, or with
 *    an unmapped page inside the part the ring uses) is refused with
 *    -EFAULT, with and without NO_SQARRAY, its contents untouched and
 *    no fd leaked, as the kernel answers (it pins the pages for
 *    writing); the same from the raw io_uring_setup with NO_MMAP (where
 *    the kernel serves it).
 * Before 6.5 the kernel has no NO_MMAP: then the size checks liburing
 * makes itself still give -ENOMEM / -EINVAL, the kernel's -EINVAL comes
 * back for a region that would fit (and for a NULL one), nothing leaks,
 * and the test ends in a skip naming the flag.
 */
#include <liburing.h>
#include <sys/mman.h>
#include "test-util.h"

#define REGION	(2UL * 1024 * 1024)

static char path[64];
static int file_fd;
static unsigned char file_data[16384];

static void exercise(struct io_uring *ring, const char *what)
{
	unsigned char buf[4096];
	struct io_uring_cqe *cqe;

	for (int round = 0; round < 4; round++) {
		for (unsigned i = 0; i < 6; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			CHECK(sqe, "%s: no sqe", what);
			io_uring_prep_nop(sqe);
			sqe->user_data = i;
		}
		CHECK_EQ(io_uring_submit_and_wait(ring, 6), 6, what);
		for (unsigned i = 0; i < 6; i++) {
			CHECK_EQ(io_uring_peek_cqe(ring, &cqe), 0, what);
			CHECK(cqe->res == 0 && cqe->user_data < 6,
			      "%s: bad nop cqe", what);
			io_uring_cqe_seen(ring, cqe);
		}
	}

	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_read(sqe, file_fd, buf, sizeof(buf), 4096 + 7);
	sqe->user_data = 99;
	CHECK_EQ(io_uring_submit_and_wait(ring, 1), 1, what);
	CHECK_EQ(io_uring_peek_cqe(ring, &cqe), 0, what);
	CHECK(cqe->user_data == 99, "%s: wrong cqe", what);
	CHECK_EQ(cqe->res, sizeof(buf), what);
	io_uring_cqe_seen(ring, cqe);
	CHECK(memcmp(buf, file_data + 4096 + 7, sizeof(buf)) == 0,
	      "%s: read data mismatch", what);
}

/* A kernel without IORING_SETUP_NO_MMAP: what io_uring_queue_init_mem
 * still answers itself, and that the kernel's refusal reaches the caller. */
static void without_no_mmap(void *mem)
{
	struct io_uring r;
	struct io_uring_params p;
	int maps0 = tu_count_maps(), fds0 = tu_count_fds();

	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_queue_init_mem(16, &r, &p, mem, 64), -ENOMEM,
		 "queue_init_mem with a too small buffer");
	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_queue_init_mem(16, &r, &p, mem, 0), -ENOMEM,
		 "queue_init_mem with size 0");
	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_queue_init_mem(0, &r, &p, mem, REGION), -EINVAL,
		 "queue_init_mem with 0 entries");
	memset(&p, 0, sizeof(p));
	CHECK_EQ(io_uring_queue_init_mem(8, &r, &p, NULL, 0), -EINVAL,
		 "queue_init_mem(NULL) without kernel support");
	CHECK_EQ(tu_count_maps(), maps0, "maps after refused setups");
	CHECK_EQ(tu_count_fds(), fds0, "fds after refused setups");
	/* The region stays the caller's. */
	memset(mem, 0x5a, REGION);
}

/* One setup in memory it cannot use: -EFAULT, the memory untouched. */
static void refused(char *mem, size_t len, unsigned flags, const char *what)
{
	struct io_uring r;
	struct io_uring_params p;
	int fds0 = tu_count_fds();	/* (maps: engine threads come and go) */

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	CHECK_EQ(io_uring_queue_init_mem(256, &r, &p, mem, len), -EFAULT, what);
	io_uring_queue_exit(&r);	/* harmless on a failed setup */
	CHECK_EQ(tu_count_fds(), fds0, what);
}

/* The raw setup call with NO_MMAP and ring memory at sq/cq (the raw
 * wrapper always asks the kernel: left out where it refuses io_uring). */
static int raw;

static int raw_setup(void *sq, void *cq, unsigned flags)
{
	struct io_uring_params p;
	int fd;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_MMAP | flags;
	p.sq_off.user_addr = (unsigned long)sq;
	p.cq_off.user_addr = (unsigned long)cq;
	fd = io_uring_setup(256, &p);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

/* Memory the kernel cannot pin for writing, with 256 entries: the SQEs
 * take the first 4 pages, the rings the next 3. */
static void bad_memory(void)
{
	const size_t pg = 4096, len = 16 * pg;
	static const unsigned flags[2] = { 0, IORING_SETUP_NO_SQARRAY };

	raw = !tu_kernel_uring_blocked();
	for (int i = 0; i < 2; i++) {
		unsigned f = flags[i];
		struct io_uring r;
		struct io_uring_params p;
		int ret;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
		/* The region itself takes a ring. */
		memset(&p, 0, sizeof(p));
		p.flags = f;
		ret = io_uring_queue_init_mem(256, &r, &p, m, len);
		if (ret == -EINVAL && f &&
		    tu_lacks_before(6, 6, "IORING_SETUP_NO_SQARRAY")) {
			munmap(m, len);
			continue;
		}
		CHECK(ret > 0, "queue_init_mem in good memory: %d", ret);
		exercise(&r, "ring in the region");
		io_uring_queue_exit(&r);
		if (raw)
			CHECK_EQ(raw_setup(m, m + 8 * pg, f), 0,
				 "io_uring_setup(NO_MMAP) in good memory");

		memset(m, 0x77, len);
		CHECK(mprotect(m, len, PROT_READ) == 0, "mprotect");
		refused(m, len, f, "queue_init_mem in read-only memory");
		CHECK(m[0] == 0x77 && m[5 * pg] == 0x77, "read-only memory changed");
		if (raw)
			CHECK_EQ(raw_setup(m, m + 8 * pg, f), -EFAULT,
				 "io_uring_setup(NO_MMAP) in read-only memory");
		CHECK(mprotect(m, len, PROT_NONE) == 0, "mprotect");
		refused(m, len, f, "queue_init_mem in PROT_NONE memory");
		if (raw)
			CHECK_EQ(raw_setup(m, m + 8 * pg, f), -EFAULT,
				 "io_uring_setup(NO_MMAP) in PROT_NONE memory");
		CHECK(mprotect(m, len, PROT_READ | PROT_WRITE) == 0, "mprotect");

		/* A hole in the SQEs, then one in the rings. */
		CHECK(munmap(m + 2 * pg, pg) == 0, "munmap");
		refused(m, len, f, "queue_init_mem over a hole in the SQEs");
		CHECK(m[0] == 0x77 && m[5 * pg] == 0x77, "memory changed");
		if (raw)
			CHECK_EQ(raw_setup(m, m + 8 * pg, f), -EFAULT,
				 "io_uring_setup(NO_MMAP) over a hole in the SQEs");
		CHECK(mmap(m + 2 * pg, pg, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		      m + 2 * pg, "mmap");
		CHECK(munmap(m + 5 * pg, pg) == 0, "munmap");
		refused(m, len, f, "queue_init_mem over a hole in the rings");
		CHECK(m[0] == 0x77 && m[4 * pg] == 0x77, "memory changed");
		CHECK(munmap(m + 9 * pg, pg) == 0, "munmap");
		if (raw)
			CHECK_EQ(raw_setup(m, m + 8 * pg, f), -EFAULT,
				 "io_uring_setup(NO_MMAP) over a hole in the rings");

		CHECK(munmap(m, len) == 0, "munmap");
	}
}

int main(int argc, char *argv[])
{
	struct io_uring_params p, p2;
	struct io_uring ring, ring2;
	int huge = 1, used, used2;
	void *mem;
	ssize_t need;

	(void)argc;
	tu_set_name(argv[0]);

	file_fd = tu_temp_file(path, sizeof(path));
	tu_fill_random(file_data, sizeof(file_data), 7);
	tu_pwrite_all(file_fd, file_data, sizeof(file_data), 0);

	mem = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (mem == MAP_FAILED) {
		huge = 0;
		mem = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	CHECK(mem != MAP_FAILED, "mmap 2 MiB: %s", strerror(errno));
	memset(mem, 0, REGION);

	memset(&p, 0, sizeof(p));
	used = io_uring_queue_init_mem(16, &ring, &p, mem, REGION);
	if (used == -EINVAL && tu_lacks_before(6, 5, "IORING_SETUP_NO_MMAP")) {
		without_no_mmap(mem);
		CHECK(munmap(mem, REGION) == 0, "munmap");
		close(file_fd);
		return tu_done();
	}
	CHECK(used > 0, "queue_init_mem: %s", strerror(-used));
	CHECK((size_t)used <= REGION, "used %d > region %lu", used, REGION);
	CHECK(used % 4096 == 0, "used %d not page rounded", used);
	CHECK(p.flags & IORING_SETUP_NO_MMAP, "NO_MMAP not set in params");
	CHECK(ring.flags & IORING_SETUP_NO_MMAP, "NO_MMAP not in ring.flags");
	CHECK((void *)ring.sq.sqes == mem, "sqes not at the start of the region");
	CHECK((char *)ring.sq.ring_ptr > (char *)mem &&
	      (char *)ring.sq.ring_ptr < (char *)mem + used,
	      "sq ring outside the used part of the region");

	need = io_uring_memory_size_params(16, &p);
	CHECK(need >= used, "memory_size_params %zd < used %d", need, used);
	need = io_uring_memory_size(16, p.flags);
	CHECK(need >= used, "memory_size %zd < used %d", need, used);
	need = io_uring_memory_size(16, IORING_SETUP_NO_MMAP);
	CHECK(need >= used, "memory_size(NO_MMAP) %zd < used %d", need, used);
	CHECK(io_uring_memory_size(1024, 0) > io_uring_memory_size(1, 0),
	      "memory_size does not grow with entries");

	exercise(&ring, "ring in caller memory");

	/* A second ring in the rest of the region. */
	memset(&p2, 0, sizeof(p2));
	used2 = io_uring_queue_init_mem(8, &ring2, &p2, (char *)mem + used,
					REGION - used);
	CHECK(used2 > 0, "second queue_init_mem: %s", strerror(-used2));
	CHECK((size_t)used + used2 <= REGION, "second ring overflows region");
	CHECK((char *)ring2.sq.sqes == (char *)mem + used,
	      "second ring not at the offset");
	exercise(&ring2, "second ring in caller memory");
	exercise(&ring, "first ring after second was set up");
	io_uring_queue_exit(&ring2);

	/* The region is still ours after exit: writable, no fault. */
	memset((char *)mem + used, 0x5a, used2);

	/* Too small by one byte, and size 0: -ENOMEM. */
	{
		struct io_uring r3;
		struct io_uring_params p3;
		int ret;

		memset(&p3, 0, sizeof(p3));
		ret = io_uring_queue_init_mem(16, &r3, &p3, (char *)mem + used,
					      (size_t)used - 1);
		CHECK_EQ(ret, -ENOMEM, "queue_init_mem with a too small buffer");
		memset(&p3, 0, sizeof(p3));
		ret = io_uring_queue_init_mem(16, &r3, &p3, (char *)mem + used, 0);
		CHECK_EQ(ret, -ENOMEM, "queue_init_mem with size 0");
		memset(&p3, 0, sizeof(p3));
		ret = io_uring_queue_init_mem(0, &r3, &p3, (char *)mem + used,
					      REGION - used);
		CHECK_EQ(ret, -EINVAL, "queue_init_mem with 0 entries");
	}

	/* NULL buffer: liburing provides the memory itself. */
	{
		struct io_uring r4;
		struct io_uring_params p4;
		int ret;

		memset(&p4, 0, sizeof(p4));
		ret = io_uring_queue_init_mem(8, &r4, &p4, NULL, 0);
		CHECK(ret > 0, "queue_init_mem(NULL): %s", strerror(-ret));
		CHECK(r4.flags & IORING_SETUP_NO_MMAP, "NO_MMAP not set");
		exercise(&r4, "ring in library-provided memory");
		io_uring_queue_exit(&r4);
	}

	bad_memory();

	exercise(&ring, "first ring at the end");
	io_uring_queue_exit(&ring);
	memset(mem, 0, REGION);	/* still mapped and writable */
	CHECK(munmap(mem, REGION) == 0, "munmap");

	close(file_fd);
	printf("%s: ring used %d bytes of a 2 MiB %s region\n", tu_name, used,
	       huge ? "huge page" : "normal-page");
	return tu_done();
}
