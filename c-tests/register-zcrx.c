/* SPDX-License-Identifier: MIT */
/*
 * Zero-copy receive (zcrx) registration, as far as it goes without a NIC:
 *  - io_uring_register_ifq on a ring without DEFER_TASKRUN/CQE32 and with
 *    unknown flags: -EINVAL; an unknown interface: -ENODEV; loopback,
 *    which has no queue management: -EOPNOTSUPP;
 *  - io_uring_register_zcrx_ctrl with no ifq or an unknown op: -EINVAL;
 *  - nothing leaks from the failed attempts;
 *  - a real zcrx data path needs a NIC with header split and queue API,
 *    so the test then exits 77 saying so.
 */
#include <liburing.h>
#include <net/if.h>
#include <sys/mman.h>
#include "test-util.h"

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_zcrx_area_reg area;
	struct io_uring_region_desc rd;
	struct io_uring_zcrx_ifq_reg reg;
	struct zcrx_ctrl ctrl;
	size_t asz = 1 << 20, rsz = 1 << 16;
	int ret, fds0, maps0;
	void *amem, *rmem;

	(void)argc;
	tu_set_name(argv[0]);
	if (geteuid() != 0)
		SKIP("zcrx needs CAP_NET_ADMIN");

	amem = mmap(NULL, asz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rmem = mmap(NULL, rsz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(amem != MAP_FAILED && rmem != MAP_FAILED, "mmap");
	memset(&area, 0, sizeof(area));
	area.addr = (unsigned long)amem;
	area.len = asz;
	memset(&rd, 0, sizeof(rd));
	rd.user_addr = (unsigned long)rmem;
	rd.size = rsz;
	rd.flags = IORING_MEM_REGION_TYPE_USER;
	memset(&reg, 0, sizeof(reg));
	reg.if_idx = if_nametoindex("lo");
	reg.rq_entries = 64;
	reg.area_ptr = (unsigned long)&area;
	reg.region_ptr = (unsigned long)&rd;
	CHECK(reg.if_idx > 0, "no loopback interface");

	/* A plain ring cannot host an ifq. */
	CHECK_EQ(io_uring_queue_init(8, &ring, 0), 0, "queue_init");
	CHECK_EQ(io_uring_register_ifq(&ring, &reg), -EINVAL, "plain ring");
	io_uring_queue_exit(&ring);

	ret = io_uring_queue_init(8, &ring, IORING_SETUP_DEFER_TASKRUN |
				  IORING_SETUP_SINGLE_ISSUER |
				  IORING_SETUP_CQE32);
	if (ret == -EINVAL)
		SKIP("DEFER_TASKRUN rings unsupported");
	CHECK_EQ(ret, 0, "queue_init");
	fds0 = tu_count_fds();
	maps0 = tu_count_maps();

	ret = io_uring_register_ifq(&ring, &reg);
	if (ret == -EINVAL)
		SKIP("kernel without zcrx support");
	CHECK_EQ(ret, -EOPNOTSUPP, "loopback has no queue API");
	reg.if_idx = 0x7ffffff0;
	CHECK_EQ(io_uring_register_ifq(&ring, &reg), -ENODEV, "no such interface");
	reg.if_idx = if_nametoindex("lo");
	reg.flags = 0x80;
	CHECK_EQ(io_uring_register_ifq(&ring, &reg), -EINVAL, "unknown flag");
	CHECK_EQ(tu_count_fds(), fds0, "fds after failed ifq registrations");
	CHECK_EQ(tu_count_maps(), maps0, "maps after failed ifq registrations");

	memset(&ctrl, 0, sizeof(ctrl));
	ctrl.op = ZCRX_CTRL_FLUSH_RQ;
	CHECK_EQ(io_uring_register_zcrx_ctrl(&ring, &ctrl), -EINVAL, "no ifq");
	ctrl.op = 77;
	CHECK_EQ(io_uring_register_zcrx_ctrl(&ring, &ctrl), -EINVAL, "bad op");
	io_uring_queue_exit(&ring);
	munmap(amem, asz);
	munmap(rmem, rsz);
	SKIP("argument and error paths checked; zero-copy receive itself needs "
	     "a NIC with header split and the netdev queue API");
}
