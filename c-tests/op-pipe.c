/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_PIPE: both ends as plain descriptors (with their flags) or as
 * direct descriptors (a chosen slot and the next one, or allocated ones);
 * and the kernel's answers to bad flags, fields, addresses and slots.
 */
#include <sys/mman.h>
#include "op-util.h"

/* Runs a PIPE prepared by the caller and returns its result. */
static int run_pipe(struct io_uring *ring, int *fds, int flags,
		    int direct, unsigned slot)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	if (direct)
		io_uring_prep_pipe_direct(sqe, fds, flags, slot);
	else
		io_uring_prep_pipe(sqe, fds, flags);
	return op_run1(ring);
}

/* Writes through end w and reads back through end r. */
static void check_flow(int w, int r, const char *what)
{
	char ch = 0;

	CHECK(write(w, "p", 1) == 1, "%s: write: %s", what, strerror(errno));
	CHECK(read(r, &ch, 1) == 1 && ch == 'p', "%s: read back", what);
}

/* Number of open descriptors of this process. */
static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static void plain(struct io_uring *ring)
{
	int fds[2] = { -1, -1 }, before = open_fds();

	CHECK_EQ(run_pipe(ring, fds, 0, 0, 0), 0, "pipe");
	CHECK(fds[0] >= 0 && fds[1] >= 0 && fds[0] != fds[1],
	      "pipe fds %d %d", fds[0], fds[1]);
	CHECK(fcntl(fds[0], F_GETFD) == 0 && fcntl(fds[1], F_GETFD) == 0,
	      "pipe without O_CLOEXEC has CLOEXEC set");
	CHECK((fcntl(fds[0], F_GETFL) & O_ACCMODE) == O_RDONLY &&
	      (fcntl(fds[1], F_GETFL) & O_ACCMODE) == O_WRONLY,
	      "fds[0] reads, fds[1] writes");
	check_flow(fds[1], fds[0], "plain pipe");
	close(fds[0]);
	close(fds[1]);

	CHECK_EQ(run_pipe(ring, fds, O_CLOEXEC | O_NONBLOCK, 0, 0), 0,
		 "pipe O_CLOEXEC|O_NONBLOCK");
	CHECK(fcntl(fds[0], F_GETFD) == FD_CLOEXEC &&
	      fcntl(fds[1], F_GETFD) == FD_CLOEXEC, "O_CLOEXEC ends");
	CHECK((fcntl(fds[0], F_GETFL) & O_NONBLOCK) &&
	      (fcntl(fds[1], F_GETFL) & O_NONBLOCK), "O_NONBLOCK ends");
	{
		char ch;
		CHECK(read(fds[0], &ch, 1) == -1 && errno == EAGAIN,
		      "empty O_NONBLOCK pipe reads EAGAIN");
	}
	close(fds[0]);
	close(fds[1]);

	/* O_DIRECT: a packet pipe */
	CHECK_EQ(run_pipe(ring, fds, O_DIRECT, 0, 0), 0, "pipe O_DIRECT");
	CHECK(fcntl(fds[1], F_GETFL) & O_DIRECT, "O_DIRECT end");
	close(fds[0]);
	close(fds[1]);
	CHECK_EQ(open_fds(), before, "descriptors left open");
}

static void bad_input(struct io_uring *ring)
{
	int fds[2] = { -1, -1 }, before = open_fds();
	struct io_uring_sqe *sqe;
	void *gone;

	/* flags outside O_CLOEXEC|O_NONBLOCK|O_DIRECT|O_NOTIFICATION_PIPE */
	CHECK_EQ(run_pipe(ring, fds, O_APPEND, 0, 0), -EINVAL, "O_APPEND");
	CHECK_EQ(run_pipe(ring, fds, O_RDWR, 0, 0), -EINVAL, "O_RDWR");
	CHECK_EQ(run_pipe(ring, fds, 1 << 30, 0, 0), -EINVAL, "bit 30");
	/* stray fields */
	sqe = op_sqe(ring);
	io_uring_prep_pipe(sqe, fds, 0);
	sqe->fd = 3;
	CHECK_EQ(op_run1(ring), -EINVAL, "pipe with sqe->fd");
	sqe = op_sqe(ring);
	io_uring_prep_pipe(sqe, fds, 0);
	sqe->off = 1;
	CHECK_EQ(op_run1(ring), -EINVAL, "pipe with sqe->off");
	sqe = op_sqe(ring);
	io_uring_prep_pipe(sqe, fds, 0);
	sqe->addr3 = 1;
	CHECK_EQ(op_run1(ring), -EINVAL, "pipe with sqe->addr3");
	/* the fds array is not writable: nothing stays open */
	CHECK_EQ(run_pipe(ring, NULL, 0, 0, 0), -EFAULT, "NULL fds");
	gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(gone != MAP_FAILED, "mmap");
	munmap(gone, 4096);
	CHECK_EQ(run_pipe(ring, gone, 0, 0, 0), -EFAULT, "unmapped fds");
	CHECK_EQ(open_fds(), before, "descriptors left by failed pipes");
	/* a failed PIPE fails its chain */
	sqe = op_sqe(ring);
	io_uring_prep_pipe(sqe, NULL, 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = op_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 2;
	op_submit(ring, 2);
	{
		struct op_cqe c[2];
		op_wait_n(ring, c, 2);
		CHECK_EQ(c[0].res, -EFAULT, "linked pipe");
		CHECK_EQ(c[1].res, -ECANCELED, "request linked after it");
	}
}

static void direct(struct io_uring *ring)
{
	int fds[2] = { -1, -1 }, table[8], fd, before = open_fds();
	struct io_uring_sqe *sqe;
	char ch = 0;

	/* no table yet: a chosen slot and an allocated one */
	CHECK_EQ(run_pipe(ring, fds, 0, 1, 0), -ENXIO, "direct, no table");
	CHECK_EQ(run_pipe(ring, fds, 0, 1, IORING_FILE_INDEX_ALLOC), -ENFILE,
		 "allocated, no table");
	CHECK_EQ(open_fds(), before, "descriptors left without a table");

	for (int i = 0; i < 8; i++)
		table[i] = -1;
	CHECK_EQ(io_uring_register_files(ring, table, 8), 0, "register_files");

	/* slot 2 and the next one, both reported back */
	fds[0] = fds[1] = 77;
	CHECK_EQ(run_pipe(ring, fds, 0, 1, 2), 0, "direct pipe at slot 2");
	CHECK(fds[0] == 2 && fds[1] == 3, "direct fds %d %d, want 2 3",
	      fds[0], fds[1]);
	/* the engine keeps its direct descriptors as hidden process fds */
	if (!tu_on_engine())
		CHECK_EQ(open_fds(), before, "direct ends in the process table");
	/* the write end at 3 writes to the read end at 2 */
	sqe = op_sqe(ring);
	io_uring_prep_write(sqe, 3, "d", 1, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	CHECK_EQ(op_run1(ring), 1, "write to direct write end");
	sqe = op_sqe(ring);
	io_uring_prep_read(sqe, 2, &ch, 1, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	CHECK_EQ(op_run1(ring), 1, "read from direct read end");
	CHECK(ch == 'd', "read back %c", ch);
	/* the ends become plain fds on request */
	sqe = op_sqe(ring);
	io_uring_prep_fixed_fd_install(sqe, 2, 0);
	fd = op_run1(ring);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
	      "installed read end: %d", fd);
	close(fd);

	/* allocated slots: the first free ones, reported back */
	fds[0] = fds[1] = -1;
	CHECK_EQ(run_pipe(ring, fds, O_NONBLOCK, 1, IORING_FILE_INDEX_ALLOC),
		 0, "allocated direct pipe");
	CHECK(fds[0] >= 0 && fds[0] < 8 && fds[1] >= 0 && fds[1] < 8 &&
	      fds[0] != fds[1] && fds[0] != 2 && fds[0] != 3 &&
	      fds[1] != 2 && fds[1] != 3,
	      "allocated slots %d %d", fds[0], fds[1]);
	sqe = op_sqe(ring);
	io_uring_prep_fixed_fd_install(sqe, fds[1], 0);
	fd = op_run1(ring);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK) &&
	      (fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY,
	      "installed O_NONBLOCK write end: %d", fd);
	close(fd);

	/* O_CLOEXEC is refused for direct descriptors */
	CHECK_EQ(run_pipe(ring, fds, O_CLOEXEC, 1, 0), -EINVAL,
		 "direct O_CLOEXEC");
	/* past the table, or its last slot (the write end has none) */
	CHECK_EQ(run_pipe(ring, fds, 0, 1, 8), -EINVAL, "slot past the table");
	CHECK_EQ(run_pipe(ring, fds, 0, 1, 7), -EINVAL, "last slot");
	/* a bad address takes both ends back out */
	CHECK_EQ(run_pipe(ring, NULL, 0, 1, IORING_FILE_INDEX_ALLOC), -EFAULT,
		 "allocated, NULL fds");
	{
		int more[2] = { -1, -1 };
		CHECK_EQ(run_pipe(ring, more, 0, 1, IORING_FILE_INDEX_ALLOC),
			 0, "allocated after a fault");
		CHECK(more[0] != fds[0] && more[0] != fds[1] &&
		      more[1] != fds[0] && more[1] != fds[1],
		      "allocated %d %d over live %d %d", more[0], more[1],
		      fds[0], fds[1]);
	}
	CHECK_EQ(io_uring_unregister_files(ring), 0, "unregister_files");
	CHECK_EQ(open_fds(), before, "descriptors left by direct pipes");
}

int main(int argc, char **argv)
{
	struct io_uring ring;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	op_need(&ring, IORING_OP_PIPE, "IORING_OP_PIPE");
	plain(&ring);
	bad_input(&ring);
	direct(&ring);
	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
