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
 *  - IOU_PBUF_RING_INC: one buffer serves several reads, in order; a
 *    read at EOF leaves it in place and IORING_CQE_F_BUF_MORE says it has
 *    room, as does a regular file's read (which takes its length early);
 *    with min_left, a buffer whose rest falls below it is retired and the
 *    next read takes the next one; min_left without IOU_PBUF_RING_INC is
 *    -EINVAL, and unregistering ignores it;
 *  - repeated setup/free and failed setups leak no mapping or fd.
 * Kernels before 6.8 have no IORING_REGISTER_PBUF_STATUS (head/available
 * then return the kernel's -EINVAL), before 6.4 no IOU_PBUF_RING_MMAP,
 * before 6.12 no IOU_PBUF_RING_INC, and only recent ones (6.18.y) know
 * min_left: those parts are left out and the test ends in a skip naming
 * them.
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

/* One read of up to `len` bytes from `fd` at `off` into a buffer of group
 * `bgid`. */
static struct rd buf_read(struct io_uring *ring, int fd, int bgid,
			  unsigned len, long long off)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe cqe;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, fd, NULL, len, off);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = bgid;
	CHECK_EQ(io_uring_submit(ring), 1, "submit read");
	CHECK_EQ(tu_reap(ring, &cqe, 1), 1, "read cqe");
	return (struct rd){ cqe.res, cqe.flags };
}

static struct rd select_read(struct io_uring *ring, int p[2], int bgid,
			     unsigned len, char c)
{
	char data[BUF_SZ];

	CHECK(len <= sizeof(data), "len");
	memset(data, c, len);
	CHECK_EQ(write(p[1], data, len), len, "pipe write");
	return buf_read(ring, p[0], bgid, BUF_SZ, 0);
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

/*
 * Whether to hold an incremental read's CQE to the IORING_CQE_F_BUF_MORE
 * rules of the 6.18 kernel here (room left at EOF and after a regular
 * file's read): the engine follows them; an older kernel that leaves the
 * flag out is noted as lacking `feature`.
 */
static int buf_more_rules(unsigned flags, const char *feature)
{
	return (flags & IORING_CQE_F_BUF_MORE) || tu_on_engine() ||
	       !tu_lacks_before(6, 18, feature);
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

	/* EOF moves nothing: buffer 1 is named, stays where it was, and is
	 * reported as having room. */
	close(p[1]);
	cqe = buf_read(&ring, p[0], 4, BUF_SZ, 0);
	CHECK_EQ(cqe.res, 0, "read at EOF");
	CHECK_EQ(cqe.flags >> IORING_CQE_BUFFER_SHIFT, 1, "EOF names buffer 1");
	if (buf_more_rules(cqe.flags, "IORING_CQE_F_BUF_MORE at EOF")) {
		CHECK(cqe.flags & IORING_CQE_F_BUF_MORE, "EOF keeps buffer 1");
		CHECK_EQ(br->bufs[1].addr, (uintptr_t)(mem + BUF_SZ + 8),
			 "EOF leaves buffer 1's address");
		CHECK_EQ(br->bufs[1].len, BUF_SZ - 8,
			 "EOF leaves buffer 1's length");
	}
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 2, 4), 0, "free");
	close(p[0]);
	io_uring_queue_exit(&ring);
}

/*
 * A regular file cannot be polled, so the kernel consumes the requested
 * length of an incremental buffer when it picks it, before reading; the
 * CQE still says whether the buffer kept room, at EOF too.
 */
static void incremental_file(void)
{
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	static char mem[BUF_SZ];
	char path[64], data[64];
	struct rd cqe;
	int err, fd;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	br = io_uring_setup_buf_ring(&ring, 1, 5, IOU_PBUF_RING_INC, &err);
	if (!br && err == -EINVAL &&
	    tu_lacks_before(6, 12, "IOU_PBUF_RING_INC")) {
		io_uring_queue_exit(&ring);
		return;
	}
	CHECK(br, "inc ring: %d", err);
	fill(br, mem, 1);
	fd = tu_temp_file(path, sizeof(path));
	memset(data, 'f', sizeof(data));
	tu_pwrite_all(fd, data, sizeof(data), 0);

	for (int i = 0; i < 3; i++) {
		cqe = buf_read(&ring, fd, 5, 32, -1);
		CHECK_EQ(cqe.res, i < 2 ? 32 : 0, "file read");
		CHECK_EQ(cqe.flags >> IORING_CQE_BUFFER_SHIFT, 0, "buffer 0");
		if (!buf_more_rules(cqe.flags, "IORING_CQE_F_BUF_MORE on files"))
			break;
		CHECK(cqe.flags & IORING_CQE_F_BUF_MORE, "file read %d: room", i);
		/* The requested 32 bytes were taken, EOF or not. */
		CHECK_EQ(br->bufs[0].addr, (uintptr_t)(mem + 32 * (i + 1)),
			 "buffer address after a file read");
		CHECK_EQ(br->bufs[0].len, BUF_SZ - 32 * (i + 1),
			 "buffer length after a file read");
	}
	CHECK_EQ(io_uring_free_buf_ring(&ring, br, 1, 5), 0, "free");
	close(fd);
	unlink(path);
	tu_unregister_cleanup(path);
	io_uring_queue_exit(&ring);
}

/* min_left: the fewest bytes a partly used incremental buffer must keep. */
static void incremental_min_left(void)
{
	struct io_uring_buf_reg reg = { 0 };
	struct io_uring_buf_ring *br;
	static char mem[2 * BUF_SZ];
	struct io_uring ring;
	struct rd cqe;
	uint16_t head;
	int ret, p[2];

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	br = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(br != MAP_FAILED, "mmap");
	io_uring_buf_ring_init(br);
	reg.ring_addr = (uintptr_t)br;
	reg.ring_entries = 2;
	reg.bgid = 6;
	reg.min_left = 100;
	CHECK_EQ(io_uring_register_buf_ring(&ring, &reg, 0), -EINVAL,
		 "min_left without IOU_PBUF_RING_INC");
	reg.flags = 0;
	ret = io_uring_register_buf_ring(&ring, &reg, IOU_PBUF_RING_INC);
	if (ret == -EINVAL && !tu_on_engine()) {
		tu_lacks("io_uring_buf_reg.min_left");
		goto out;
	}
	CHECK_EQ(ret, 0, "register with min_left");
	fill(br, mem, 2);
	CHECK(pipe(p) == 0, "pipe");

	/* 256 - 100 leaves 156, enough: buffer 0 stays */
	cqe = select_read(&ring, p, 6, 100, 'm');
	CHECK_EQ(cqe.res, 100, "first read");
	CHECK_EQ(cqe.flags >> IORING_CQE_BUFFER_SHIFT, 0, "buffer 0");
	CHECK(cqe.flags & IORING_CQE_F_BUF_MORE, "156 bytes left is room");
	/* 156 - 100 leaves 56, below min_left: buffer 0 is retired */
	cqe = select_read(&ring, p, 6, 100, 'n');
	CHECK_EQ(cqe.res, 100, "second read");
	CHECK_EQ(cqe.flags >> IORING_CQE_BUFFER_SHIFT, 0, "still buffer 0");
	CHECK(!(cqe.flags & IORING_CQE_F_BUF_MORE), "56 bytes left is none");
	CHECK_EQ(br->bufs[0].len, 0, "retired buffer's length");
	if (have_status) {
		CHECK_EQ(io_uring_buf_ring_head(&ring, 6, &head), 0, "head");
		CHECK_EQ(head, 1, "head past the retired buffer");
	}
	cqe = select_read(&ring, p, 6, 10, 'o');
	CHECK_EQ(cqe.flags >> IORING_CQE_BUFFER_SHIFT, 1, "then buffer 1");
	CHECK(mem[BUF_SZ] == 'o', "read lands at buffer 1's start");
	close(p[0]);
	close(p[1]);
	/* unregistering looks at bgid, flags and the reserved words only */
	memset(&reg, 0, sizeof(reg));
	reg.bgid = 6;
	reg.min_left = 5;
	CHECK_EQ(io_uring_register(ring.ring_fd, IORING_UNREGISTER_PBUF_RING,
				   &reg, 1), 0, "unregister with min_left");
out:
	munmap(br, 4096);
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
	incremental_file();
	incremental_min_left();
	kernel_mem();
	return tu_done();
}
