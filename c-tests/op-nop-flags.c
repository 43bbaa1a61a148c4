/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_NOP's flags as Linux 6.18 has them: an injected result, a file
 * (plain or fixed) or a registered buffer that must exist, completion as
 * task work (held back on a DEFER_TASKRUN ring until events are asked
 * for), a 32-byte CQE only where the ring has room for one, and -EINVAL for
 * a bit it does not know.
 */
#include "op-util.h"

/* nop_flags bits liburing 2.15's header does not name */
#define NOP_FILE		(1U << 1)
#define NOP_FIXED_FILE		(1U << 2)
#define NOP_FIXED_BUFFER	(1U << 3)
#define NOP_TW			(1U << 4)

static int nop(struct io_uring *ring, unsigned flags, int fd, unsigned len,
	       unsigned buf_index)
{
	struct io_uring_sqe *sqe = op_sqe(ring);

	io_uring_prep_nop(sqe);
	sqe->nop_flags = flags;
	sqe->fd = fd;
	sqe->len = len;
	sqe->buf_index = (__u16)buf_index;
	return op_run1(ring);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_params p;
	static char buf[4096];
	struct iovec iov = { buf, sizeof(buf) };
	int pfd[2], ret;

	(void)argc;
	tu_set_name(argv[0]);
	op_ring(&ring, 8, 0);
	CHECK(pipe(pfd) == 0, "pipe");

	ret = nop(&ring, IORING_NOP_INJECT_RESULT, -1, (unsigned)-EIO, 0);
	if (ret == -EINVAL && tu_lacks_before(6, 12, "IORING_NOP_INJECT_RESULT"))
		goto done;
	CHECK_EQ(ret, -EIO, "injected result");
	CHECK_EQ(nop(&ring, 0, -1, 5, 0), 0, "len without INJECT_RESULT");
	ret = nop(&ring, NOP_FILE, pfd[0], 0, 0);
	if (ret == -EINVAL) {
		tu_lacks("IORING_NOP_FILE and its siblings");
		goto done;
	}
	CHECK_EQ(ret, 0, "NOP_FILE on an open fd");
	CHECK_EQ(nop(&ring, NOP_FILE, -1, 0, 0), -EBADF, "NOP_FILE on fd -1");
	CHECK_EQ(nop(&ring, NOP_FILE | NOP_FIXED_FILE, 0, 0, 0), -EBADF,
		 "NOP_FIXED_FILE without a table");
	CHECK_EQ(nop(&ring, NOP_FIXED_FILE, 55, 0, 0), 0,
		 "NOP_FIXED_FILE alone checks nothing");
	CHECK_EQ(io_uring_register_files(&ring, &pfd[0], 1), 0, "register_files");
	CHECK_EQ(nop(&ring, NOP_FILE | NOP_FIXED_FILE, 0, 0, 0), 0, "fixed file 0");
	CHECK_EQ(nop(&ring, NOP_FILE | NOP_FIXED_FILE, 1, 0, 0), -EBADF,
		 "fixed file 1 of 1");
	CHECK_EQ(nop(&ring, NOP_FIXED_BUFFER, -1, 0, 0), -EFAULT,
		 "NOP_FIXED_BUFFER without buffers");
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0, "register_buffers");
	CHECK_EQ(nop(&ring, NOP_FIXED_BUFFER, -1, 0, 0), 0, "fixed buffer 0");
	CHECK_EQ(nop(&ring, NOP_FIXED_BUFFER, -1, 0, 1), -EFAULT, "fixed buffer 1 of 1");
	CHECK_EQ(nop(&ring, NOP_TW | IORING_NOP_INJECT_RESULT, -1, 9, 0), 9,
		 "NOP_TW on a plain ring");
	CHECK_EQ(nop(&ring, IORING_NOP_CQE32, -1, 0, 0), -EINVAL,
		 "NOP_CQE32 on a ring of 16-byte CQEs");
	CHECK_EQ(nop(&ring, 1U << 6, -1, 0, 0), -EINVAL, "unknown nop flag");
	io_uring_queue_exit(&ring);

	/* DEFER_TASKRUN: a NOP_TW's CQE waits for the submitter to ask */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ret = io_uring_queue_init_params(4, &ring, &p);
	if (ret == -EINVAL) {
		tu_lacks("IORING_SETUP_DEFER_TASKRUN");
		goto out;
	}
	CHECK_EQ(ret, 0, "DEFER_TASKRUN ring");
	io_uring_prep_nop(op_sqe(&ring));
	op_submit(&ring, 1);
	CHECK_EQ(io_uring_cq_ready(&ring), 1, "a plain NOP completes at once");
	io_uring_cq_advance(&ring, 1);
	{
		struct io_uring_sqe *sqe = op_sqe(&ring);

		io_uring_prep_nop(sqe);
		sqe->nop_flags = NOP_TW;
	}
	op_submit(&ring, 1);
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "NOP_TW posted before events were asked for");
	CHECK_EQ(io_uring_get_events(&ring), 0, "get_events");
	CHECK_EQ(io_uring_cq_ready(&ring), 1, "NOP_TW after get_events");
done:
	io_uring_queue_exit(&ring);
out:
	close(pfd[0]);
	close(pfd[1]);
	return tu_done();
}
