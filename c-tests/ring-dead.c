/* SPDX-License-Identifier: MIT */
/*
 * A ring after io_uring_queue_exit, or after a failed setup, is inert:
 *  - every library call on it returns -EBADF (or NULL), and none reaches
 *    the kernel (a register call with fd -1 would act on the whole task);
 *  - the header's inline helpers find no free SQE and no CQE, and the
 *    eventfd toggle refuses instead of writing;
 *  - exiting it again does nothing.
 * The same holds for a ring whose setup failed.
 */
#include <liburing.h>
#include <sys/eventfd.h>
#include "test-util.h"

static void check_inert(struct io_uring *ring, const char *state)
{
	struct io_uring_cqe *cqe = (void *)1;
	struct __kernel_timespec ts = { .tv_nsec = 1000000 };
	struct iovec iov = { .iov_base = &ts, .iov_len = sizeof(ts) };
	struct io_uring_params p;
	int fd = 0, err = 0;

	CHECK(io_uring_get_sqe(ring) == NULL, "%s: got an SQE", state);
	CHECK_EQ(io_uring_sq_space_left(ring), 0, state);
	CHECK_EQ(io_uring_sq_ready(ring), 0, state);
	CHECK_EQ(io_uring_cq_ready(ring), 0, state);
	CHECK(!io_uring_cq_has_overflow(ring), "%s: overflow", state);
	CHECK_EQ(io_uring_cq_eventfd_toggle(ring, false), -EOPNOTSUPP, state);

	CHECK_EQ(io_uring_submit(ring), -EBADF, state);
	CHECK_EQ(io_uring_submit_and_wait(ring, 1), -EBADF, state);
	CHECK_EQ(io_uring_submit_and_get_events(ring), -EBADF, state);
	CHECK_EQ(io_uring_get_events(ring), -EBADF, state);
	/* The inline peek finds nothing and says so without a call. */
	CHECK_EQ(io_uring_peek_cqe(ring, &cqe), -EAGAIN, state);
	CHECK(cqe == NULL, "%s: peek left a CQE pointer", state);
	CHECK_EQ(io_uring_wait_cqe(ring, &cqe), -EBADF, state);
	CHECK_EQ(io_uring_wait_cqe_timeout(ring, &cqe, &ts), -EBADF, state);
	CHECK_EQ(io_uring_wait_cqes(ring, &cqe, 2, &ts, NULL), -EBADF, state);
	CHECK_EQ(io_uring_wait_cqes_min_timeout(ring, &cqe, 1, &ts, 10, NULL),
		 -EBADF, state);
	CHECK_EQ(io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL),
		 -EBADF, state);
	CHECK_EQ(io_uring_submit_and_wait_min_timeout(ring, &cqe, 1, &ts, 10,
						      NULL), -EBADF, state);
	CHECK_EQ(io_uring_submit_and_wait_reg(ring, &cqe, 1, 0), -EBADF, state);
	CHECK_EQ(io_uring_peek_batch_cqe(ring, &cqe, 1), 0, state);

	CHECK_EQ(io_uring_register_files(ring, &fd, 1), -EBADF, state);
	CHECK_EQ(io_uring_register_files_sparse(ring, 4), -EBADF, state);
	CHECK_EQ(io_uring_unregister_files(ring), -EBADF, state);
	CHECK_EQ(io_uring_register_buffers(ring, &iov, 1), -EBADF, state);
	CHECK_EQ(io_uring_unregister_buffers(ring), -EBADF, state);
	CHECK_EQ(io_uring_register_eventfd(ring, 0), -EBADF, state);
	CHECK_EQ(io_uring_register_personality(ring), -EBADF, state);
	CHECK_EQ(io_uring_enable_rings(ring), -EBADF, state);
	CHECK_EQ(io_uring_register_ring_fd(ring), -EBADF, state);
	CHECK_EQ(io_uring_unregister_ring_fd(ring), -EBADF, state);
	CHECK_EQ(io_uring_close_ring_fd(ring), -EBADF, state);
	CHECK_EQ(io_uring_set_iowait(ring, false), -EBADF, state);
	CHECK_EQ(io_uring_ring_dontfork(ring), -EBADF, state);
	CHECK(io_uring_get_probe_ring(ring) == NULL, "%s: probe", state);
	CHECK(io_uring_setup_buf_ring(ring, 8, 1, 0, &err) == NULL, "%s", state);
	CHECK_EQ(err, -EBADF, state);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	CHECK_EQ(io_uring_resize_rings(ring, &p), -EBADF, state);
	io_uring_queue_exit(ring);
	io_uring_queue_exit(ring);
}

int main(int argc, char *argv[])
{
	struct io_uring_params p;
	struct io_uring ring;
	int fds_before, fds_after;

	(void)argc;
	tu_set_name(argv[0]);
	fds_before = tu_count_fds();

	/* After exit: the ring had fds, mappings and work behind it. */
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	CHECK_EQ(io_uring_submit(&ring), 1, "submit");
	io_uring_queue_exit(&ring);
	CHECK_EQ(ring.ring_fd, -1, "ring_fd after exit");
	check_inert(&ring, "after exit");

	/* After a registered-fd ring's exit. */
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK_EQ(io_uring_register_ring_fd(&ring), 1, "register_ring_fd");
	io_uring_queue_exit(&ring);
	check_inert(&ring, "after exit of a registered ring");

	/* After failed setups: bad entries, unknown flags. */
	memset(&ring, 0xa5, sizeof(ring));
	CHECK_EQ(io_uring_queue_init(0, &ring, 0), -EINVAL, "entries 0");
	check_inert(&ring, "after a failed init");
	memset(&p, 0, sizeof(p));
	p.flags = 1U << 30;
	CHECK_EQ(io_uring_queue_init_params(8, &ring, &p), -EINVAL, "flags");
	check_inert(&ring, "after a refused flag");

	fds_after = tu_count_fds();
	CHECK_EQ(fds_after, fds_before, "fds leaked");
	tu_pass();
	return T_EXIT_PASS;
}
