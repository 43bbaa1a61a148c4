/* SPDX-License-Identifier: MIT */
/*
 * liburing-rs hardening: a NULL ring (or a NULL out-pointer the call must
 * write through) gets -EINVAL, or NULL from io_uring_setup_buf_ring,
 * instead of a crash. Upstream liburing dereferences these, so this test
 * is about this library only.
 */
#define LIBURING_RS_SOURCE
#include <liburing.h>
#include "test-util.h"

int main(int argc, char **argv)
{
	struct io_uring ring;
	int err = 12345, fds[1] = { 0 };
	unsigned vals[2] = { 0, 0 };

	(void)argc;
	tu_set_name(argv[0]);
	CHECK_EQ(io_uring_register_buffers(NULL, NULL, 0), -EINVAL, "buffers");
	CHECK_EQ(io_uring_register_files(NULL, fds, 1), -EINVAL, "files");
	CHECK_EQ(io_uring_unregister_files(NULL), -EINVAL, "unreg files");
	CHECK_EQ(io_uring_register_eventfd(NULL, 0), -EINVAL, "eventfd");
	CHECK_EQ(io_uring_register_iowq_max_workers(NULL, vals), -EINVAL, "wq");
	CHECK_EQ(io_uring_set_iowait(NULL, true), -EINVAL, "iowait");
	CHECK_EQ(io_uring_clone_buffers(NULL, NULL), -EINVAL, "clone");
	CHECK_EQ(io_uring_unregister_buf_ring(NULL, 0), -EINVAL, "unreg br");
	CHECK(!io_uring_setup_buf_ring(NULL, 8, 0, 0, &err), "setup br");

	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK_EQ(io_uring_clone_buffers(&ring, NULL), -EINVAL, "clone src");
	CHECK_EQ(io_uring_register_buf_ring(&ring, NULL, 0), -EINVAL, "reg");
	CHECK_EQ(io_uring_buf_ring_head(&ring, 0, NULL), -EINVAL, "head");
	CHECK(!io_uring_setup_buf_ring(&ring, 8, 0, 0, NULL), "setup no err");
	/* Nothing was registered by the refused call above (provided-buffer
	 * rings exist on the kernel only). */
	if (liburing_rs_ring_engine(&ring) == LIBURING_RS_ENGINE_KERNEL) {
		struct io_uring_buf_ring *br = io_uring_setup_buf_ring(&ring, 8, 0, 0,
								       &err);

		CHECK(br, "group 0 still free: %d", err);
		CHECK_EQ(io_uring_free_buf_ring(&ring, br, 8, 0), 0, "free");
	}
	io_uring_queue_exit(&ring);
	tu_pass();
	return 0;
}
