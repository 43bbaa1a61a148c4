/* SPDX-License-Identifier: MIT */
/*
 * Registered buffers:
 *  - unregister with none registered: -ENXIO; double registration: -EBUSY;
 *  - a fixed write from a registered buffer carries its bytes;
 *  - invalid iovecs are refused (-EFAULT / -EINVAL as the kernel says),
 *    among them memory that is unmapped or read-only, and a shared
 *    mapping of a disk file (a private one, or shared memory, is fine);
 *  - buffers_tags / buffers_update_tag: replaced and unregistered tagged
 *    buffers post their tags (on unregister only since 6.13), a replaced
 *    one only once the read using it is done; out-of-range updates are
 *    -EINVAL;
 *  - buffers_sparse: empty slots fail fixed I/O, filled ones work;
 *  - clone_buffers (whole, offset, replace, through a registered ring fd);
 *  - without CAP_IPC_LOCK, RLIMIT_MEMLOCK caps pinned memory: a large
 *    registration fails with -ENOMEM and leaks no fd or mapping.
 */
#include <liburing.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "test-util.h"
#include "reap-util.h"

/* Fixed write of `len` bytes at `buf` (inside registered buffer `idx`) into
 * a pipe; returns the CQE result, checking the bytes when it succeeded. */
static int fixed_write(struct io_uring *ring, const char *buf, unsigned len,
		       int idx)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe cqe;
	char got[256];
	int p[2];

	CHECK(len <= sizeof(got), "len");
	CHECK(pipe(p) == 0, "pipe");
	io_uring_prep_write_fixed(sqe, p[1], buf, len, 0, idx);
	CHECK_EQ(io_uring_submit(ring), 1, "submit write_fixed");
	CHECK_EQ(tu_reap(ring, &cqe, 1), 1, "write_fixed cqe");
	if (cqe.res > 0) {
		CHECK_EQ(cqe.res, len, "write_fixed length");
		CHECK_EQ(read(p[0], got, len), len, "pipe read");
		CHECK(!memcmp(got, buf, len), "fixed write content");
	}
	close(p[0]);
	close(p[1]);
	return cqe.res;
}

static char bufs[4][4096] __attribute__((aligned(4096)));

static void basic(void)
{
	struct io_uring ring;
	struct iovec iov[2] = {
		{ bufs[0], sizeof(bufs[0]) }, { bufs[1], sizeof(bufs[1]) },
	};

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK_EQ(io_uring_unregister_buffers(&ring), -ENXIO, "unregister none");
	CHECK_EQ(io_uring_register_buffers(&ring, iov, 0), -EINVAL, "zero");
	memset(bufs[0], 'A', sizeof(bufs[0]));
	memset(bufs[1], 'B', sizeof(bufs[1]));
	CHECK_EQ(io_uring_register_buffers(&ring, iov, 2), 0, "register");
	CHECK_EQ(io_uring_register_buffers(&ring, iov, 2), -EBUSY, "again");
	CHECK_EQ(fixed_write(&ring, bufs[0] + 10, 100, 0), 100, "buf 0");
	CHECK_EQ(fixed_write(&ring, bufs[1], 200, 1), 200, "buf 1");
	/* Address outside the registered buffer. */
	CHECK_EQ(fixed_write(&ring, bufs[2], 10, 0), -EFAULT, "outside buf 0");
	CHECK_EQ(fixed_write(&ring, bufs[0], 10, 2), -EFAULT, "no buf 2");
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0, "unregister");
	CHECK_EQ(io_uring_unregister_buffers(&ring), -ENXIO, "unregister 2");

	/* Invalid iovecs. */
	struct iovec bad = { NULL, 4096 };

	CHECK_EQ(io_uring_register_buffers(&ring, &bad, 1), -EFAULT,
		 "null base");
	bad.iov_base = bufs[0];
	bad.iov_len = (1UL << 30) + 4096;
	CHECK_EQ(io_uring_register_buffers(&ring, &bad, 1), -EFAULT,
		 "over 1 GiB");
	/* Memory that cannot be pinned for writing: unmapped, read-only. */
	bad.iov_base = (void *)1UL;
	bad.iov_len = 1;
	CHECK_EQ(io_uring_register_buffers(&ring, &bad, 1), -EFAULT,
		 "unmapped buffer");
	bad.iov_base = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	CHECK(bad.iov_base != MAP_FAILED, "mmap read-only");
	bad.iov_len = 4096;
	CHECK_EQ(io_uring_register_buffers(&ring, &bad, 1), -EFAULT,
		 "read-only buffer");
	munmap(bad.iov_base, 4096);
	/* The kernel caps a table at 16384 buffers. */
	CHECK_EQ(io_uring_register_buffers(&ring, iov, 16385), -EINVAL,
		 "too many buffers");
	CHECK_EQ(io_uring_register_buffers_sparse(&ring, 16385), -EINVAL,
		 "too many sparse buffers");
	io_uring_queue_exit(&ring);
}

static void tagged_and_sparse(void)
{
	struct io_uring ring;
	struct io_uring_cqe cqes[4];
	struct iovec iov[2] = {
		{ bufs[0], sizeof(bufs[0]) }, { bufs[1], sizeof(bufs[1]) },
	};
	__u64 tags[2] = { 201, 202 };

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	if (!(ring.features & IORING_FEAT_RSRC_TAGS))
		SKIP("kernel lacks IORING_FEAT_RSRC_TAGS");
	CHECK_EQ(io_uring_register_buffers_tags(&ring, iov, tags, 2), 0,
		 "register tags");
	CHECK_EQ(io_uring_register_buffers_tags(&ring, iov, tags, 2), -EBUSY,
		 "register tags again");

	/* Replace slot 0: tag 201 comes back. */
	struct iovec niov = { bufs[2], sizeof(bufs[2]) };
	__u64 ntag = 203;

	memset(bufs[2], 'C', sizeof(bufs[2]));
	CHECK_EQ(io_uring_register_buffers_update_tag(&ring, 0, &niov, &ntag, 1),
		 1, "update slot 0");
	CHECK_EQ(tu_reap(&ring, cqes, 1), 1, "tag cqe slot 0");
	CHECK_EQ(cqes[0].user_data, 201, "old tag slot 0");
	CHECK_EQ(cqes[0].res, 0, "tag cqe res");
	CHECK_EQ(fixed_write(&ring, bufs[2], 64, 0), 64, "new buf 0");
	CHECK_EQ(io_uring_register_buffers_update_tag(&ring, 1, iov, tags, 2),
		 -EINVAL, "update past the end");
	CHECK_EQ(io_uring_register_buffers_update_tag(&ring, 2, iov, tags, 1),
		 -EINVAL, "update at the end");
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0, "unregister");
	if (tu_reap_unregister_tags(&ring, cqes, 2)) {
		CHECK(cqes[0].user_data + cqes[1].user_data == 202 + 203 &&
		      (cqes[0].user_data == 202 || cqes[0].user_data == 203),
		      "unregister tags %llu %llu",
		      (unsigned long long)cqes[0].user_data,
		      (unsigned long long)cqes[1].user_data);
	}

	/* A buffer replaced while a read into it waits: its tag comes after
	 * the read is done, as the kernel's node reference holds it. */
	{
		struct io_uring_sqe *sqe;
		struct iovec one = { bufs[3], sizeof(bufs[3]) };
		__u64 t1 = 301, t2 = 302;
		int p[2];

		CHECK(pipe(p) == 0, "pipe");
		CHECK_EQ(io_uring_register_buffers_tags(&ring, &one, &t1, 1), 0, "register one");
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read_fixed(sqe, p[0], bufs[3], 8, 0, 0);
		sqe->user_data = 300;
		CHECK_EQ(io_uring_submit(&ring), 1, "submit read_fixed");
		one.iov_base = bufs[2];
		CHECK_EQ(io_uring_register_buffers_update_tag(&ring, 0, &one, &t2, 1), 1, "replace in use");
		CHECK(tu_quiet(&ring), "no tag while the read uses the buffer");
		CHECK_EQ(write(p[1], "12345678", 8), 8, "write");
		CHECK_EQ(tu_reap(&ring, cqes, 2), 2, "read and tag");
		CHECK(cqes[0].user_data == 300 && cqes[0].res == 8, "read first");
		CHECK(cqes[1].user_data == 301 && cqes[1].res == 0, "then the old buffer's tag");
		CHECK_EQ(io_uring_unregister_buffers(&ring), 0, "unregister one");
		tu_reap_unregister_tags(&ring, cqes, 1);
		close(p[0]);
		close(p[1]);
	}

	/* Sparse table: fill slot 2 only. */
	CHECK_EQ(io_uring_register_buffers_sparse(&ring, 4), 0, "sparse");
	CHECK_EQ(fixed_write(&ring, bufs[0], 16, 2), -EFAULT, "empty slot");
	CHECK_EQ(io_uring_register_buffers_update_tag(&ring, 2, &iov[1], NULL, 1),
		 1, "fill slot 2");
	CHECK_EQ(fixed_write(&ring, bufs[1], 16, 2), 16, "filled slot");
	CHECK_EQ(io_uring_register_buffers_update_tag(&ring, 4, iov, NULL, 1),
		 -EINVAL, "sparse update out of range");
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0, "unregister sparse");
	CHECK(tu_quiet(&ring), "untagged: no cqe");
	io_uring_queue_exit(&ring);
}

static void clone_test(void)
{
	struct io_uring src, dst, dst2;
	struct iovec iov[3] = {
		{ bufs[0], 4096 }, { bufs[1], 4096 }, { bufs[2], 4096 },
	};
	int ret;

	CHECK_EQ(io_uring_queue_init(8, &src, 0), 0, "queue_init src");
	CHECK_EQ(io_uring_queue_init(8, &dst, 0), 0, "queue_init dst");
	CHECK_EQ(io_uring_queue_init(8, &dst2, 0), 0, "queue_init dst2");
	ret = io_uring_clone_buffers(&dst, &src);
	if (ret == -EINVAL &&
	    tu_lacks_before(6, 12, "IORING_REGISTER_CLONE_BUFFERS")) {
		io_uring_queue_exit(&dst2);
		io_uring_queue_exit(&dst);
		io_uring_queue_exit(&src);
		return;
	}
	CHECK_EQ(ret, -ENXIO, "clone from a ring with no buffers");
	CHECK_EQ(io_uring_register_buffers(&src, iov, 3), 0, "register src");
	memset(bufs[0], 'a', 4096);
	memset(bufs[1], 'b', 4096);
	memset(bufs[2], 'c', 4096);

	CHECK_EQ(io_uring_clone_buffers(&dst, &src), 0, "clone");
	CHECK_EQ(fixed_write(&dst, bufs[1], 32, 1), 32, "cloned buf 1");
	CHECK_EQ(io_uring_clone_buffers(&dst, &src), -EBUSY, "clone again");
	/* One ring as both source and destination: the kernel's answer. */
	CHECK_EQ(io_uring_clone_buffers(&src, &src), -EBUSY, "clone onto itself");
	ret = __io_uring_clone_buffers(&dst, &src, IORING_REGISTER_DST_REPLACE);
	/* 6.12 clones a whole table into an empty one, nothing more. */
	if (ret != -EBUSY ||
	    !tu_lacks_before(6, 13, "IORING_REGISTER_DST_REPLACE and ranged "
			     "clones")) {
		CHECK_EQ(ret, 0, "clone with replace");
		CHECK_EQ(fixed_write(&dst, bufs[2], 32, 2), 32, "replaced buf 2");
		CHECK_EQ(__io_uring_clone_buffers(&src, &src,
						  IORING_REGISTER_DST_REPLACE),
			 0, "clone onto itself, replacing");
		CHECK_EQ(fixed_write(&src, bufs[1], 32, 1), 32,
			 "self-cloned buf 1");

		/* Offset clone: src[1..3) lands at dst2[4..6), the rest empty. */
		CHECK_EQ(io_uring_clone_buffers_offset(&dst2, &src, 4, 1, 3, 0),
			 -EOVERFLOW, "src range past the end");
		CHECK_EQ(io_uring_clone_buffers_offset(&dst2, &src, 4, 1, 2, 0),
			 0, "offset clone");
		CHECK_EQ(fixed_write(&dst2, bufs[1], 8, 4), 8, "dst2 slot 4");
		CHECK_EQ(fixed_write(&dst2, bufs[2], 8, 5), 8, "dst2 slot 5");
		CHECK_EQ(fixed_write(&dst2, bufs[0], 8, 0), -EFAULT,
			 "dst2 slot 0");
		CHECK_EQ(io_uring_unregister_buffers(&dst2), 0,
			 "unregister dst2");
	}

	/* Through the source's registered fd: works with the real fd closed,
	 * while the plain-fd variant then has nothing to name the source by. */
	if (src.features & IORING_FEAT_REG_REG_RING) {
		CHECK_EQ(io_uring_register_ring_fd(&src), 1, "register src fd");
		CHECK_EQ(io_uring_close_ring_fd(&src), 1, "close src fd");
		CHECK_EQ(__io_uring_clone_buffers_offset(&dst2, &src, 0, 0, 0, 0),
			 -EBADF, "plain clone with src fd closed");
		CHECK_EQ(__io_uring_clone_buffers_offset(&dst2, &src, 0, 0, 0,
			 IORING_REGISTER_SRC_REGISTERED), 0,
			 "clone through registered src");
		CHECK_EQ(fixed_write(&dst2, bufs[0], 8, 0), 8, "dst2 slot 0");
	}
	io_uring_queue_exit(&dst2);
	io_uring_queue_exit(&dst);
	io_uring_queue_exit(&src);
}

static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		FAIL("capget: %s", strerror(errno));
	data[0].effective &= ~(1U << CAP_IPC_LOCK);
	data[0].permitted &= ~(1U << CAP_IPC_LOCK);
	data[0].inheritable &= ~(1U << CAP_IPC_LOCK);
	if (syscall(SYS_capset, &hdr, data))
		FAIL("capset: %s", strerror(errno));
}

static void memlock_child(void)
{
	struct rlimit rl = { .rlim_cur = 64 * 1024, .rlim_max = 64 * 1024 };
	struct io_uring ring;
	size_t big = 4 << 20;
	void *mem;
	int fds0, maps0, ret;

	drop_ipc_lock();
	CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0, "setrlimit");
	/* The ring is created afterwards so that it accounts pinned pages. */
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	mem = mmap(NULL, big, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED, "mmap");
	/* Small pages: a kernel that merges a huge page into one buffer
	 * (6.12 with THP always) would charge all 2 MiB of it. */
	madvise(mem, big, MADV_NOHUGEPAGE);
	memset(mem, 'm', big);

	struct iovec iov = { mem, big };

	fds0 = tu_count_fds();
	maps0 = tu_count_maps();
	for (int i = 0; i < 3; i++) {
		ret = io_uring_register_buffers(&ring, &iov, 1);
		CHECK_EQ(ret, -ENOMEM, "4 MiB over a 64 KiB memlock limit");
	}
	__u64 tag = 7;

	CHECK_EQ(io_uring_register_buffers_tags(&ring, &iov, &tag, 1), -ENOMEM,
		 "tagged, over the limit");
	CHECK_EQ(tu_count_fds(), fds0, "fds after failed registrations");
	CHECK_EQ(tu_count_maps(), maps0, "maps after failed registrations");

	/* Within the limit it works, and the pages are released again. */
	iov.iov_len = 32 * 1024;
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0, "32 KiB");
	CHECK_EQ(fixed_write(&ring, mem, 100, 0), 100, "write from it");
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0, "unregister");
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0, "32 KiB again");
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0, "unregister again");
	io_uring_queue_exit(&ring);
	exit(0);
}

static void memlock(void)
{
	int st;
	pid_t pid;

	if (geteuid() != 0) {
		/* Unprivileged: the limit applies already; no need to drop. */
		fprintf(stderr, "not root: memlock check runs as is\n");
	}
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		memlock_child();
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "memlock child failed");
}

/* A shared mapping of a file on a disk filesystem cannot be pinned for
 * writing (-EFAULT); a private mapping of it, or shared memory, can. */
static void file_backed(void)
{
	char path[] = "/var/tmp/register-buffers-XXXXXX";
	struct io_uring ring;
	struct statfs sf;
	struct iovec iov = { NULL, 8192 };
	int fd = mkstemp(path);

	if (fd < 0)
		return;
	unlink(path);
	CHECK(fstatfs(fd, &sf) == 0, "fstatfs");
	/* tmpfs and ramfs files are shared memory, which can be pinned. */
	if (sf.f_type == 0x01021994 || sf.f_type == 0x858458f6 || ftruncate(fd, 8192) != 0) {
		close(fd);
		return;
	}
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	iov.iov_base = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(iov.iov_base != MAP_FAILED, "mmap shared");
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), -EFAULT, "shared file mapping");
	munmap(iov.iov_base, 8192);
	iov.iov_base = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(iov.iov_base != MAP_FAILED, "mmap private");
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0, "private file mapping");
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0, "unregister private");
	munmap(iov.iov_base, 8192);
	iov.iov_base = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(iov.iov_base != MAP_FAILED, "mmap shared anonymous");
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0, "shared memory");
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0, "unregister shared");
	munmap(iov.iov_base, 8192);
	io_uring_queue_exit(&ring);
	close(fd);
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	basic();
	file_backed();
	tagged_and_sparse();
	memlock();
	clone_test();
	return tu_done();
}
