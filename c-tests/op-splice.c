/* SPDX-License-Identifier: MIT */
/* splice (file -> pipe -> file), tee (pipe -> pipe), pipe and pipe_direct. */
#include "op-util.h"

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	static unsigned char a[4096], b[4096];
	int fin, fout, p[2], q[2], fds[2], ret;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	op_need(&ring, IORING_OP_SPLICE, "IORING_OP_SPLICE");
	op_mkdtemp();
	fin = open(op_path("in"), O_CREAT | O_RDWR, 0644);
	fout = open(op_path("out"), O_CREAT | O_RDWR, 0644);
	CHECK(fin >= 0 && fout >= 0 && pipe(p) == 0 && pipe(q) == 0, "setup");
	tu_pattern_fill(a, sizeof(a), 9, 0);
	tu_pwrite_all(fin, a, sizeof(a), 0);

	/* file offset 100 -> pipe, then pipe -> file offset 0 */
	sqe = op_sqe(&ring);
	io_uring_prep_splice(sqe, fin, 100, p[1], -1, 1000, 0);
	CHECK_EQ(op_run1(&ring), 1000, "splice file->pipe");
	/* tee duplicates the pipe content into q without consuming it */
	if (op_has(&ring, IORING_OP_TEE)) {
		sqe = op_sqe(&ring);
		io_uring_prep_tee(sqe, p[0], q[1], 1000, 0);
		CHECK_EQ(op_run1(&ring), 1000, "tee");
		CHECK(read(q[0], b, sizeof(b)) == 1000 && !memcmp(b, a + 100, 1000),
		      "tee content");
	}
	sqe = op_sqe(&ring);
	io_uring_prep_splice(sqe, p[0], -1, fout, 0, 1000, 0);
	CHECK_EQ(op_run1(&ring), 1000, "splice pipe->file");
	tu_pread_all(fout, b, 1000, 0);
	CHECK(!memcmp(b, a + 100, 1000), "spliced content");
	/* a pipe offset is invalid */
	sqe = op_sqe(&ring);
	io_uring_prep_splice(sqe, fin, 0, p[1], 5, 10, 0);
	CHECK_EQ(op_run1(&ring), -ESPIPE, "splice with an offset on a pipe");

	/* pipe: two working fds */
	if (op_has(&ring, IORING_OP_PIPE)) {
		fds[0] = fds[1] = -1;
		sqe = op_sqe(&ring);
		io_uring_prep_pipe(sqe, fds, O_CLOEXEC);
		CHECK_EQ(op_run1(&ring), 0, "pipe");
		CHECK(fds[0] >= 0 && fds[1] >= 0, "pipe fds");
		CHECK(fcntl(fds[0], F_GETFD) == FD_CLOEXEC, "O_CLOEXEC not applied");
		CHECK(write(fds[1], "pp", 2) == 2 && read(fds[0], b, 2) == 2 &&
		      !memcmp(b, "pp", 2), "pipe transfer");
		close(fds[0]);
		close(fds[1]);

		/* pipe_direct: both ends in fixed slots (allocated) */
		CHECK_EQ(io_uring_register_files_sparse(&ring, 4), 0, "sparse");
		sqe = op_sqe(&ring);
		io_uring_prep_pipe_direct(sqe, fds, 0, IORING_FILE_INDEX_ALLOC);
		ret = op_run1(&ring);
		CHECK_EQ(ret, 0, "pipe_direct");
		CHECK(fds[0] >= 0 && fds[0] < 4 && fds[1] >= 0 && fds[1] < 4 &&
		      fds[0] != fds[1], "pipe_direct slots %d %d", fds[0], fds[1]);
		sqe = op_sqe(&ring);
		io_uring_prep_write(sqe, fds[1], "direct", 6, 0);
		io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
		CHECK_EQ(op_run1(&ring), 6, "write to fixed pipe");
		sqe = op_sqe(&ring);
		io_uring_prep_read(sqe, fds[0], b, 6, 0);
		io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
		CHECK_EQ(op_run1(&ring), 6, "read from fixed pipe");
		CHECK(!memcmp(b, "direct", 6), "fixed pipe content");
	}

	io_uring_queue_exit(&ring);
	return tu_done();
}
