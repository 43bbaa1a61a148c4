/* SPDX-License-Identifier: MIT */
/*
 * NAPI busy-poll settings:
 *  - register returns the previous settings in the caller's struct, so a
 *    second registration reads back the first one's values;
 *  - unknown opcodes (the kernel's byte after prefer_busy_poll) and a
 *    NULL argument are -EINVAL; unregister accepts NULL; without a ring
 *    (fd -1) the opcode is refused: -EINVAL from kernels that know
 *    ring-less registrations (6.13), -EBADF from older ones;
 *  - actual busy polling needs a NAPI-capable NIC, which this machine's
 *    loopback is not: after the checks above the test exits 77 saying so.
 */
#include <liburing.h>
#include "test-util.h"

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_napi napi;
	int ret;

	(void)argc;
	tu_set_name(argv[0]);
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");

	memset(&napi, 0, sizeof(napi));
	napi.busy_poll_to = 100;
	napi.prefer_busy_poll = 1;
	ret = io_uring_register_napi(&ring, &napi);
	if (ret == -EINVAL || ret == -EOPNOTSUPP)
		SKIP("NAPI registration unsupported (%d)", ret);
	CHECK_EQ(ret, 0, "register napi");
	CHECK(napi.busy_poll_to == 0 && napi.prefer_busy_poll == 0,
	      "previous settings %u/%u", napi.busy_poll_to,
	      napi.prefer_busy_poll);

	memset(&napi, 0, sizeof(napi));
	napi.busy_poll_to = 250;
	CHECK_EQ(io_uring_register_napi(&ring, &napi), 0, "re-register");
	CHECK_EQ(napi.busy_poll_to, 100, "previous timeout");
	CHECK_EQ(napi.prefer_busy_poll, 1, "previous prefer");

	memset(&napi, 0, sizeof(napi));
	napi.pad[0] = 9;
	CHECK_EQ(io_uring_register_napi(&ring, &napi), -EINVAL, "bad opcode");
	CHECK_EQ(io_uring_register_napi(&ring, NULL), -EINVAL, "NULL");

	memset(&napi, 0xff, sizeof(napi));
	CHECK_EQ(io_uring_unregister_napi(&ring, &napi), 0, "unregister");
	CHECK(napi.busy_poll_to != 0xffffffffu, "unregister wrote nothing back");
	CHECK_EQ(io_uring_unregister_napi(&ring, NULL), 0, "unregister NULL");

	/* A ring with no fd never reaches the kernel: fd -1 there would be a
	 * ring-less register call acting on the whole task. */
	struct io_uring dead;

	memset(&dead, 0, sizeof(dead));
	dead.ring_fd = dead.enter_ring_fd = -1;
	CHECK_EQ(io_uring_register_napi(&dead, &napi), -EBADF, "no ring");
	io_uring_queue_exit(&ring);
	SKIP("argument checks passed; busy polling itself needs a NAPI-capable "
	     "NIC, and loopback has no NAPI instance");
}
