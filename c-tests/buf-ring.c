/* SPDX-License-Identifier: MIT */
/*
 * Provided-buffer rings:
 *  - io_uring_setup_buf_ring in user memory: buffer-select reads pick the
 *    buffers in ring order, io_uring_buf_ring_head follows the kernel's
 *    consumption, io_uring_buf_ring_available agrees;
 *  - errors: duplicate group -EEXIST, non power of two and more than 32768
 *    entries -EINVAL, unknown group -ENOENT for head/unregister/free;
 *  - io_uring_register_buf_ring by hand: flags are merged into reg->flags,
 *    a misaligned ring is -EINVAL;
 *  - IOU_PBUF_RING_MMAP: the ring is the kernel's, mapped from the ring fd;
 *  - IOU_PBUF_RING_INC: one buffer serves several reads, in order;
 *  - repeated setup/free and failed setups leak no mapping or fd.
 * Kernels before 6.8 have no IORING_REGISTER_PBUF_STATUS (head/available
 * then return the kernel's -EINVAL), before 6.4 no IOU_PBUF_RING_MMAP,
 * before 6.12 no IOU_PBUF_RING_INC: those parts are left out and the test
 * ends in a skip naming them.
 */
#include <liburing.h>
#include <sys/mman.h>
#include "test-util.h"
#include "reap-util.h"

#define BUF_SZ 256

/* Whether the kernel reports a group's head (IORING_REGISTER_PBUF_STATUS). */
static int have_status = 1;

/* Writes `len` bytes of `c` into the pipe, reads them with buffer select
 * from group `bgid`; returns the CQE's res and flags. */
struct rd {
	int res;
	unsigned flags;
};

static struct rd select_read(struct io_uring *ring, int p[2], int bgid,
			     unsigned len, char c)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;
	char data[BUF_SZ];

	CHECK(len <= sizeof(data), "len");
	memset(data, c, len);
	CHECK_EQ(write(p[1], data, len), len, "pipe write");
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, p[0], NULL, BUF_SZ, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	CHECK_EQ(io_uring_submit(ring), 1, "submit read");
	CHECK_EQ(tu_reap(ring, &cqe, 1), 1, "read cqe");
	return (struct rd){ cqe.res, cqe.flags };
}

/* A group without a ring: -ENOENT. 6.1 keeps a slot for every group id
 * below 64 and answers -EINVAL for one that has no ring. */
static void check_no_group(int ret, int bgid, const char *what)
{
	if (ret == -EINVAL && bgid < 64 && !tu_kernel_at_least(6, 8))
		return;
	CHECK_EQ(ret, -ENOENT, what);
}

static void fill(struct io_uring_buf_ring *br, char *mem, unsigned n)
{
	int mask = io_uring_buf_ring_mask(n);

	for (unsigned i = 0; i < n; i++)
		io_uring_buf_ring_add(br, mem + i * BUF_SZ, BUF_SZ, i, mask, i);
	io_uring_buf_ring_advance(br, n);
}

/* Consumes `n` buffers of group `bgid`, checking ids and contents. */
static void consume(struct io_uring *ring, struct io_uring_buf_ring *br,
		    char *mem, int bgid, unsigned n, unsigned entries)
{
	int p[2];
	uint16_t head;

	CHECK(pipe(p) == 0, "pipe");
	for (unsigned i = 0; i < n; i++) {
		struct rd cqe;
		unsigned bid;

		cqe = select_read(ring, p, bgid, 10 + i, 'a' + i);
		CHECK_EQ(cqe.res, 10 + i, "read length");
		CHECK(cqe.flags & IORING_CQE_F_BUFFER, "no buffer flag");
		bid = cqe.flags >> IORING_CQE_BUFFER_SHIFT;
		CHECK_EQ(bid, i, "buffers are used in ring order");
		for (unsigned j = 0; j < 10 + i; j++)
			CHECK(mem[bid * BUF_SZ + j] == (char)('a' + i),
			      "content of buffer %u", bid);
		if (!have_status)
			continue;
		CHECK_EQ(io_uring_buf_ring_head(ring, bgid, &head), 0, "head");
		CHECK_EQ(head, i + 1, "kernel head follows consumption");
		CHECK_EQ(io_uring_buf_ring_available(ring, br, bgid),
			 entries - i - 1, "available");
	}
	/* Group exhausted: the next read has no buffer. */
	if (n == entries) {
		struct rd cqe = select_read(ring, p, bgid, 1, 'z');

		CHECK_EQ(cqe.res, -ENOBUFS, "empty group");
	}
	close(p[0]);
	close(p[1]);
}

static void user_ring(void)
{
	struct io_uring ring;
	struct io_uring_buf_ring *br, *br2;
	static char mem[8 * BUF_SZ];
	int err = 1;
	uint16_t head = 0xffff;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	br = io_uring_setup_buf_ring(&ring, 8, 3, 0, &err);
	if (!br && err == -EINVAL)
		SKIP("kernel lacks provided-buffer rings");
	CHECK(br, "setup_buf_ring: %d", err);
	CHECK_EQ(err, 0, "err on success");
	if (io_uring_buf_ring_head(&ring, 3, &head) == -EINVAL &&
	    tu_lacks_before(6, 8, "IORING_REGISTER_PBUF_STATUS")) {
		have_status = 0;
		CHECK_EQ(io_uring_buf_ring_available(&ring, br, 3), -EINVAL,
			 "available without PBUF_STATUS");
	} else {
		CHECK_EQ(head, 0, "initial head");
		CHECK_EQ(io_uring_buf_ring_available(&ring, br, 3), 0,
			 "empty ring");
	}

	br2 = io_uring_setup_buf_ring(&ring, 8, 3, 0, &err);
	CHECK(!br2, "duplicate group accepted");
	CHECK_EQ(err, -EEXIST, "duplicate group");

	fill(br, mem, 8);
	if (have_status)
		CHECK_EQ(io_uring_buf_ring_available(&ring, br, 3), 8,
			 "full ring");
	consume(&ring, br, mem, 3, 8, 8);

	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 8, 3), 0, "free");
	if (have_status)
		CHECK_EQ(io_uring_buf_ring_head(&ring, 3, &head), -ENOENT,
			 "head of freed group");
	check_no_group(io_uring_unregister_buf_ring(&ring, 3), 3,
		       "unregister freed group");
	io_uring_queue_exit(&ring);
}

static void bad_args(void)
{
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	int err, maps0, fds0;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	maps0 = tu_count_maps();
	fds0 = tu_count_fds();
	br = io_uring_setup_buf_ring(&ring, 7, 1, 0, &err);
	CHECK(!br && err == -EINVAL, "7 entries: %d", err);
	br = io_uring_setup_buf_ring(&ring, 65536, 1, 0, &err);
	CHECK(!br && err == -EINVAL, "65536 entries: %d", err);
	br = io_uring_setup_buf_ring(&ring, 0, 1, 0, &err);
	CHECK(!br && err == -EINVAL, "0 entries: %d", err);
	br = io_uring_setup_buf_ring(&ring, 8, 1, 0x8000, &err);
	CHECK(!br && err == -EINVAL, "unknown flag: %d", err);
	CHECK_EQ(tu_count_maps(), maps0, "maps after failed setups");
	CHECK_EQ(tu_count_fds(), fds0, "fds after failed setups");

	/* The largest allowed ring works. */
	br = io_uring_setup_buf_ring(&ring, 32768, 1, 0, &err);
	CHECK(br, "32768 entries: %d", err);
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 32768, 1), 0, "free big");

	uint16_t head;

	if (have_status)
		CHECK_EQ(io_uring_buf_ring_head(&ring, 9, &head), -ENOENT,
			 "no group");
	check_no_group(io_uring_unregister_buf_ring(&ring, 9), 9, "no group");
	/* free of an unknown group fails before unmapping anything. */
	static struct io_uring_buf_ring fake[4];

	check_no_group(io_uring_free_buf_ring(&ring, fake, 4, 9), 9,
		       "free unknown group");

	/* Setup/free cycles leave the address space as it was. */
	for (int i = 0; i < 200; i++) {
		br = io_uring_setup_buf_ring(&ring, 64, i & 7, 0, &err);
		CHECK(br, "cycle setup %d: %d", i, err);
		CHECK_EQ(io_uring_free_buf_ring(&ring, br, 64, i & 7), 0,
			 "cycle free");
	}
	CHECK_EQ(tu_count_maps(), maps0, "maps after setup/free cycles");
	CHECK_EQ(tu_count_fds(), fds0, "fds after setup/free cycles");
	io_uring_queue_exit(&ring);
}

static void manual(void)
{
	struct io_uring ring;
	struct io_uring_buf_reg reg;
	static char mem[4 * BUF_SZ];
	void *ringmem;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK(posix_memalign(&ringmem, pg, pg) == 0, "posix_memalign");
	memset(ringmem, 0, pg);

	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)ringmem + 64;
	reg.ring_entries = 4;
	reg.bgid = 5;
	CHECK_EQ(io_uring_register_buf_ring(&ring, &reg, 0), -EINVAL,
		 "misaligned ring");

	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)ringmem;
	reg.ring_entries = 4;
	reg.bgid = 5;
	reg.flags = 0;
	CHECK_EQ(io_uring_register_buf_ring(&ring, &reg, 0x4000), -EINVAL,
		 "unknown flag");
	CHECK_EQ(reg.flags, 0x4000, "flags merged into reg");
	reg.flags = 0;
	CHECK_EQ(io_uring_register_buf_ring(&ring, &reg, 0), 0, "register");
	CHECK_EQ(io_uring_register_buf_ring(&ring, &reg, 0), -EEXIST, "again");

	struct io_uring_buf_ring *br = ringmem;

	io_uring_buf_ring_init(br);
	fill(br, mem, 4);
	consume(&ring, br, mem, 5, 4, 4);
	CHECK_EQ(io_uring_unregister_buf_ring(&ring, 5), 0, "unregister");
	free(ringmem);
	io_uring_queue_exit(&ring);
}

static void kernel_mem(void)
{
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	static char mem[16 * BUF_SZ];
	int err, maps0;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	maps0 = tu_count_maps();
	br = io_uring_setup_buf_ring(&ring, 16, 2, IOU_PBUF_RING_MMAP, &err);
	if (!br && err == -EINVAL &&
	    tu_lacks_before(6, 4, "IOU_PBUF_RING_MMAP")) {
		CHECK_EQ(tu_count_maps(), maps0, "maps after refused setup");
		io_uring_queue_exit(&ring);
		return;
	}
	CHECK(br, "mmap ring: %d", err);
	CHECK_EQ(err, 0, "err");
	/* The application's mapping; the userspace engine also keeps its own
	 * view of the ring, where the kernel's lives in kernel memory. */
	CHECK_EQ(tu_count_maps(), maps0 + 1 + tu_on_engine(),
		 "one new mapping");
	fill(br, mem, 16);
	consume(&ring, br, mem, 2, 5, 16);
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 16, 2), 0, "free");
	CHECK_EQ(tu_count_maps(), maps0, "mapping gone");
	io_uring_queue_exit(&ring);
}

static void incremental(void)
{
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	static char mem[2 * BUF_SZ];
	struct rd cqe;
	int err, p[2];

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	br = io_uring_setup_buf_ring(&ring, 2, 4, IOU_PBUF_RING_INC, &err);
	if (!br && err == -EINVAL &&
	    tu_lacks_before(6, 12, "IOU_PBUF_RING_INC")) {
		io_uring_queue_exit(&ring);
		return;
	}
	CHECK(br, "inc ring: %d", err);
	fill(br, mem, 2);
	CHECK(pipe(p) == 0, "pipe");

	/* Three reads of 50 bytes share buffer 0 at offsets 0, 50, 100. */
	for (int i = 0; i < 3; i++) {
		cqe = select_read(&ring, p, 4, 50, 'p' + i);
		CHECK_EQ(cqe.res, 50, "inc read");
		CHECK_EQ(cqe.flags >> IORING_CQE_BUFFER_SHIFT, 0, "same buffer");
		CHECK(cqe.flags & IORING_CQE_F_BUF_MORE, "buffer has room");
		for (int j = 0; j < 50; j++)
			CHECK(mem[i * 50 + j] == (char)('p' + i),
			      "inc read %d lands at offset %d", i, i * 50);
	}
	/* Reading the remaining 106 bytes finishes buffer 0. */
	cqe = select_read(&ring, p, 4, BUF_SZ - 150, 'x');
	CHECK_EQ(cqe.res, BUF_SZ - 150, "last piece");
	CHECK_EQ(cqe.flags >> IORING_CQE_BUFFER_SHIFT, 0, "still buffer 0");
	CHECK(!(cqe.flags & IORING_CQE_F_BUF_MORE), "buffer 0 complete");
	cqe = select_read(&ring, p, 4, 8, 'y');
	CHECK_EQ(cqe.flags >> IORING_CQE_BUFFER_SHIFT, 1, "then buffer 1");
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 2, 4), 0, "free");
	close(p[0]);
	close(p[1]);
	io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	user_ring();
	bad_args();
	manual();
	incremental();
	kernel_mem();
	return tu_done();
}
