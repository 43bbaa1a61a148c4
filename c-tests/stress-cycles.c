/* SPDX-License-Identifier: MIT */
/*
 * 10,000 ring init/exit cycles leak nothing: the counts of /proc/self/fd
 * entries and /proc/self/maps lines are the same before and after. The
 * cycles mix plain rings, rings without an SQ array, NO_MMAP rings in
 * library and caller memory, rings with a registered fd, probes, and
 * setups that fail. LIBURING_RS_STRESS=1 runs 100,000 cycles.
 */
#include <liburing.h>
#include <sys/mman.h>
#include <malloc.h>
#include "test-util.h"

static void cycle(unsigned i, void *mem, size_t mem_len)
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_probe *probe;
	int ret;

	memset(&p, 0, sizeof(p));
	switch (i % 7) {
	case 0:
		ret = io_uring_queue_init(8, &ring, 0);
		break;
	case 1:
		p.flags = IORING_SETUP_NO_SQARRAY;
		ret = io_uring_queue_init_params(16, &ring, &p);
		break;
	case 2:
		p.flags = IORING_SETUP_NO_MMAP;
		ret = io_uring_queue_init_params(8, &ring, &p);
		break;
	case 3:
		ret = io_uring_queue_init_mem(8, &ring, &p, mem, mem_len);
		ret = ret > 0 ? 0 : ret;
		break;
	case 4:
		ret = io_uring_queue_init(4, &ring, 0);
		if (!ret)
			CHECK_EQ(io_uring_register_ring_fd(&ring), 1, "ring fd");
		break;
	case 5:
		probe = io_uring_get_probe();
		CHECK(probe, "probe");
		io_uring_free_probe(probe);
		ret = io_uring_queue_init(0, &ring, 0);
		CHECK_EQ(ret, -EINVAL, "entries 0");
		break;
	default:
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = 1;
		ret = io_uring_queue_init_params(8, &ring, &p);
		CHECK_EQ(ret, -EINVAL, "cq smaller than sq");
		break;
	}
	if (ret == 0) {
		io_uring_prep_nop(io_uring_get_sqe(&ring));
		CHECK_EQ(io_uring_submit(&ring), 1, "submit");
	}
	io_uring_queue_exit(&ring);
}

int main(int argc, char *argv[])
{
	const char *env = getenv("LIBURING_RS_STRESS");
	unsigned n = env && *env && strcmp(env, "0") ? 100000 : 10000;
	size_t mem_len = 64 * 1024;
	void *mem;
	int fds, maps;

	(void)argc;
	tu_set_name(argv[0]);
	/* glibc gives each new thread that mallocs an arena of its own, mapped
	 * for good; one arena keeps the mapping count about the library. */
	mallopt(M_ARENA_MAX, 1);
	mem = mmap(NULL, mem_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED, "mmap");
	for (unsigned i = 0; i < 14; i++)
		cycle(i, mem, mem_len);
	fds = tu_count_fds();
	maps = tu_count_maps();
	for (unsigned i = 0; i < n; i++)
		cycle(i, mem, mem_len);
	CHECK_EQ(tu_count_fds(), fds, "fds after the cycles");
	CHECK_EQ(tu_settled_maps(maps), maps, "mappings after the cycles");
	munmap(mem, mem_len);
	printf("%s: %u cycles, %d fds, %d mappings throughout\n", tu_name, n,
	       fds, maps);
	tu_pass();
	return T_EXIT_PASS;
}
