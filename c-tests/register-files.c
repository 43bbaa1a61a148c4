/* SPDX-License-Identifier: MIT */
/*
 * Registered file tables:
 *  - unregister/update with no table: -ENXIO (alloc range: -EINVAL);
 *  - register_files, then a fixed-file write reaches the pipe; a second
 *    registration is -EBUSY; updates in and out of range (-EINVAL);
 *  - files_tags / files_update_tag: replacing or removing a tagged slot
 *    posts a CQE carrying the tag, so does unregistering the table
 *    (kernels before 6.13 post no tags on unregister: noted, then skip);
 *  - files_sparse plus file_alloc_range steer IORING_FILE_INDEX_ALLOC;
 *    without a table (never registered, or unregistered) an allocation
 *    is -ENFILE while a chosen slot is -ENXIO;
 *  - too many files: -EMFILE, and the -EMFILE retry raises RLIMIT_NOFILE
 *    (only when the hard limit allows it);
 *  - no fd or mapping leaks from failed registrations.
 */
#include <liburing.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "test-util.h"
#include "reap-util.h"

static void no_table(void)
{
	struct io_uring ring;
	int fds[2] = { 0, 1 };

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK_EQ(io_uring_unregister_files(&ring), -ENXIO, "unregister none");
	CHECK_EQ(io_uring_register_files_update(&ring, 0, fds, 2), -ENXIO,
		 "update none");
	CHECK_EQ(io_uring_register_file_alloc_range(&ring, 0, 1), -EINVAL,
		 "alloc range none");
	CHECK_EQ(io_uring_register_files(&ring, fds, 0), -EINVAL, "zero files");
	io_uring_queue_exit(&ring);
}

static void fixed_write(struct io_uring *ring, int idx, int rfd, char c)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe cqe;
	char got = 0;

	io_uring_prep_write(sqe, idx, &c, 1, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = 0x1234;
	CHECK_EQ(io_uring_submit(ring), 1, "submit fixed write");
	CHECK_EQ(tu_reap(ring, &cqe, 1), 1, "fixed write cqe");
	CHECK_EQ(cqe.res, 1, "fixed write res");
	CHECK_EQ(read(rfd, &got, 1), 1, "read back");
	CHECK_EQ(got, c, "byte through fixed file");
}

static void basic(void)
{
	struct io_uring ring;
	int p[2], q[2], files[4];

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK(pipe(p) == 0 && pipe(q) == 0, "pipe");
	files[0] = p[1];
	files[1] = -1;
	files[2] = q[1];
	files[3] = -1;
	CHECK_EQ(io_uring_register_files(&ring, files, 4), 0, "register");
	CHECK_EQ(io_uring_register_files(&ring, files, 4), -EBUSY, "again");
	fixed_write(&ring, 0, p[0], 'a');
	fixed_write(&ring, 2, q[0], 'b');

	/* Put q's write end in slot 1 and p's in slot 3. */
	int upd[2] = { q[1], p[1] };

	CHECK_EQ(io_uring_register_files_update(&ring, 1, upd, 1), 1, "upd 1");
	CHECK_EQ(io_uring_register_files_update(&ring, 3, &upd[1], 1), 1,
		 "upd 3");
	fixed_write(&ring, 1, q[0], 'c');
	fixed_write(&ring, 3, p[0], 'd');
	CHECK_EQ(io_uring_register_files_update(&ring, 3, upd, 2), -EINVAL,
		 "update past the end");
	CHECK_EQ(io_uring_register_files_update(&ring, 4, upd, 1), -EINVAL,
		 "update at the end");
	/* Skip leaves a slot alone. */
	int skip = IORING_REGISTER_FILES_SKIP;

	CHECK_EQ(io_uring_register_files_update(&ring, 0, &skip, 1), 1, "skip");
	fixed_write(&ring, 0, p[0], 'e');

	CHECK_EQ(io_uring_unregister_files(&ring), 0, "unregister");
	CHECK_EQ(io_uring_unregister_files(&ring), -ENXIO, "unregister twice");
	/* Only -1 is a sparse slot at registration: SKIP (-2) there is a
	 * bad fd, and nothing stays registered. */
	int with_skip[2] = { p[1], IORING_REGISTER_FILES_SKIP };

	CHECK_EQ(io_uring_register_files(&ring, with_skip, 2), -EBADF,
		 "register with FILES_SKIP");
	CHECK_EQ(io_uring_unregister_files(&ring), -ENXIO,
		 "unregister after a failed register");
	close(p[0]); close(p[1]); close(q[0]); close(q[1]);
	io_uring_queue_exit(&ring);
}

static void tagged(void)
{
	struct io_uring ring;
	struct io_uring_cqe cqes[8];
	int p[2], files[3];
	__u64 tags[3] = { 101, 102, 0 };

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	if (!(ring.features & IORING_FEAT_RSRC_TAGS))
		SKIP("kernel lacks IORING_FEAT_RSRC_TAGS");
	CHECK(pipe(p) == 0, "pipe");
	files[0] = p[0];
	files[1] = p[1];
	files[2] = -1;
	CHECK_EQ(io_uring_register_files_tags(&ring, files, tags, 3), 0,
		 "register tags");
	/* A tag on an empty slot is invalid. */
	struct io_uring r2;

	CHECK_EQ(io_uring_queue_init(8, &r2, 0), 0, "queue_init 2");
	__u64 badtags[3] = { 1, 2, 3 };

	CHECK_EQ(io_uring_register_files_tags(&r2, files, badtags, 3), -EINVAL,
		 "tag on empty slot");
	io_uring_queue_exit(&r2);

	fixed_write(&ring, 1, p[0], 'x');
	CHECK(tu_quiet(&ring), "no tag cqe while slot in use");

	/* Remove slot 0 (tag 101): its tag CQE must arrive. */
	int minus1 = -1;
	__u64 t0 = 0;

	CHECK_EQ(io_uring_register_files_update_tag(&ring, 0, &minus1, &t0, 1),
		 1, "remove slot 0");
	CHECK_EQ(tu_reap(&ring, cqes, 1), 1, "tag cqe for slot 0");
	CHECK_EQ(cqes[0].user_data, 101, "tag of slot 0");
	CHECK_EQ(cqes[0].res, 0, "tag cqe res");

	/* Fill the empty slot 2 with a new tag, then replace slot 1. */
	__u64 t2 = 103, t1 = 104;

	CHECK_EQ(io_uring_register_files_update_tag(&ring, 2, &p[1], &t2, 1),
		 1, "fill slot 2");
	CHECK_EQ(io_uring_register_files_update_tag(&ring, 1, &p[0], &t1, 1),
		 1, "replace slot 1");
	CHECK_EQ(tu_reap(&ring, cqes, 1), 1, "tag cqe for slot 1");
	CHECK_EQ(cqes[0].user_data, 102, "old tag of slot 1");
	CHECK_EQ(io_uring_register_files_update_tag(&ring, 2, &p[1], &t2, 5),
		 -EINVAL, "tagged update out of range");
	fixed_write(&ring, 2, p[0], 'y');

	/* Unregistering the table posts the two live tags. */
	CHECK_EQ(io_uring_unregister_files(&ring), 0, "unregister tagged");
	if (tu_reap_unregister_tags(&ring, cqes, 2)) {
		CHECK((cqes[0].user_data == 103 && cqes[1].user_data == 104) ||
		      (cqes[0].user_data == 104 && cqes[1].user_data == 103),
		      "unregister tags %llu %llu",
		      (unsigned long long)cqes[0].user_data,
		      (unsigned long long)cqes[1].user_data);
	}
	CHECK(tu_quiet(&ring), "no further cqes");
	close(p[0]); close(p[1]);
	io_uring_queue_exit(&ring);
}

/* A direct socket into `slot` (IORING_FILE_INDEX_ALLOC: any); its res. */
static int socket_direct(struct io_uring *ring, unsigned slot)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe cqe;

	if (slot == IORING_FILE_INDEX_ALLOC)
		io_uring_prep_socket_direct_alloc(sqe, AF_UNIX, SOCK_DGRAM, 0, 0);
	else
		io_uring_prep_socket_direct(sqe, AF_UNIX, SOCK_DGRAM, 0, slot, 0);
	CHECK_EQ(io_uring_submit(ring), 1, "submit socket");
	CHECK_EQ(tu_reap(ring, &cqe, 1), 1, "socket cqe");
	if (cqe.res == -EINVAL || cqe.res == -EOPNOTSUPP)
		SKIP("direct socket unsupported (%d)", cqe.res);
	return cqe.res;
}

static void sparse_alloc(void)
{
	struct io_uring ring;
	int sv[2];

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK_EQ(socket_direct(&ring, IORING_FILE_INDEX_ALLOC), -ENFILE,
		 "alloc before any table");
	CHECK_EQ(socket_direct(&ring, 3), -ENXIO, "slot before any table");
	CHECK_EQ(io_uring_register_files_sparse(&ring, 16), 0, "sparse");
	CHECK_EQ(io_uring_register_file_alloc_range(&ring, 10, 7), -EINVAL,
		 "alloc range past end");
	CHECK_EQ(io_uring_register_file_alloc_range(&ring, 10, 6), 0,
		 "alloc range");
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");

	/* Two allocations land at 10 and 11. */
	for (int i = 0; i < 2; i++)
		CHECK_EQ(socket_direct(&ring, IORING_FILE_INDEX_ALLOC), 10 + i,
			 "allocated slot");
	CHECK_EQ(io_uring_unregister_files(&ring), 0, "unregister");
	/* The allocator's hint must not outlive the table. */
	CHECK_EQ(socket_direct(&ring, IORING_FILE_INDEX_ALLOC), -ENFILE,
		 "alloc after unregister");
	CHECK_EQ(socket_direct(&ring, 3), -ENXIO, "slot after unregister");
	close(sv[0]); close(sv[1]);
	io_uring_queue_exit(&ring);
}

static void set_nofile(rlim_t cur, rlim_t max)
{
	struct rlimit rl = { .rlim_cur = cur, .rlim_max = max };

	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s",
	      strerror(errno));
}

static rlim_t nofile_cur(void)
{
	struct rlimit rl;

	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	return rl.rlim_cur;
}

/* Runs in a child, since it lowers the fd limits for good. */
static void rlimit_child(void)
{
	struct io_uring ring;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");

	/* Soft limit too low, hard limit roomy: the retry raises the soft one. */
	set_nofile(64, 4096);
	CHECK_EQ(io_uring_register_files_sparse(&ring, 1000), 0,
		 "sparse 1000 with soft limit 64");
	CHECK_EQ(nofile_cur(), 64 + 1000, "soft limit after retry");
	CHECK_EQ(io_uring_unregister_files(&ring), 0, "unregister");

	/* Same for io_uring_register_files with real fds. */
	set_nofile(16, 4096);
	int files[32];

	for (int i = 0; i < 32; i++)
		files[i] = 0;
	CHECK_EQ(io_uring_register_files(&ring, files, 32), 0,
		 "32 files with soft limit 16");
	CHECK_EQ(nofile_cur(), 16 + 32, "soft limit after files retry");
	CHECK_EQ(io_uring_unregister_files(&ring), 0, "unregister");

	/* And the tagged variant. */
	__u64 tags[32] = { 0 };

	set_nofile(16, 4096);
	CHECK_EQ(io_uring_register_files_tags(&ring, files, tags, 32), 0,
		 "32 tagged files with soft limit 16");
	CHECK_EQ(nofile_cur(), 16 + 32, "soft limit after tags retry");
	CHECK_EQ(io_uring_unregister_files(&ring), 0, "unregister");

	/* Hard limit too low: raising fails, the error stays -EMFILE. */
	set_nofile(64, 64);
	CHECK_EQ(io_uring_register_files_sparse(&ring, 1000), -EMFILE,
		 "sparse 1000 with hard limit 64");
	CHECK_EQ(nofile_cur(), 64, "soft limit unchanged");
	io_uring_queue_exit(&ring);
	exit(0);
}

static void too_many(void)
{
	struct io_uring ring;
	int fds0, maps0, st;
	pid_t pid;

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	fds0 = tu_count_fds();
	maps0 = tu_count_maps();
	/* Above the kernel's table maximum (1 << 20). */
	CHECK_EQ(io_uring_register_files_sparse(&ring, (1U << 20) + 1), -EMFILE,
		 "table above the kernel maximum");
	CHECK_EQ(io_uring_register_files_sparse(&ring, 0), -EINVAL,
		 "empty sparse table");
	CHECK_EQ(tu_count_fds(), fds0, "fds after failed registrations");
	CHECK_EQ(tu_count_maps(), maps0, "maps after failed registrations");
	io_uring_queue_exit(&ring);

	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		rlimit_child();
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rlimit child failed");
}

int main(int argc, char **argv)
{
	(void)argc;
	tu_set_name(argv[0]);
	no_table();
	basic();
	tagged();
	too_many();
	sparse_alloc();
	return tu_done();
}
