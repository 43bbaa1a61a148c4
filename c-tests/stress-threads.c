/* SPDX-License-Identifier: MIT */
/*
 * One ring shared by three threads with no lock, as liburing allows:
 *  - a submitter fills and submits NOPs with user_data 0..N-1;
 *  - a reaper waits for their completions and marks each one seen;
 *  - a third thread keeps updating the ring's registered file table.
 * Every user_data must come back exactly once, and every update succeed.
 * N is 2 million; LIBURING_RS_STRESS=1 makes it 10 million.
 *
 * Then a struct io_uring at an odd address (as inside a packed struct):
 * setup, submit, wait, register and exit must all work through it. Only
 * library functions touch that struct here (fields are read with memcpy),
 * so the test itself makes no misaligned access.
 */
#include <liburing.h>
#include <pthread.h>
#include <stddef.h>
#include "test-util.h"

#define MAX_INFLIGHT 512

static struct io_uring ring;
static unsigned long long total;
static unsigned char *seen;
static unsigned long long reaped;	/* written by the reaper only */
static int stop_updates;
static unsigned long long updates;

static void *submitter(void *arg)
{
	unsigned long long next = 0;

	(void)arg;
	while (next < total) {
		unsigned long long done = __atomic_load_n(&reaped, __ATOMIC_ACQUIRE);
		unsigned batch = 0;

		if (next - done >= MAX_INFLIGHT) {
			sched_yield();
			continue;
		}
		while (next < total && batch < 32) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			if (!sqe)
				break;
			io_uring_prep_nop(sqe);
			sqe->user_data = next++;
			batch++;
		}
		int ret = io_uring_submit(&ring);

		CHECK(ret >= 0, "submit: %s", strerror(-ret));
	}
	return NULL;
}

static void *reaper(void *arg)
{
	unsigned long long n = 0;

	(void)arg;
	while (n < total) {
		struct io_uring_cqe *cqe;
		unsigned head, got = 0;
		int ret = io_uring_wait_cqe(&ring, &cqe);

		CHECK_EQ(ret, 0, "wait_cqe");
		io_uring_for_each_cqe(&ring, head, cqe) {
			unsigned long long ud = cqe->user_data;

			CHECK(ud < total, "stray user_data %llu", ud);
			CHECK(!seen[ud], "user_data %llu seen twice", ud);
			CHECK_EQ(cqe->res, 0, "nop result");
			seen[ud] = 1;
			got++;
		}
		io_uring_cq_advance(&ring, got);
		n += got;
		__atomic_store_n(&reaped, n, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *updater(void *arg)
{
	int fd = *(int *)arg;

	while (!__atomic_load_n(&stop_updates, __ATOMIC_ACQUIRE)) {
		int f = (updates & 1) ? -1 : fd;
		int ret = io_uring_register_files_update(&ring, updates % 64,
							 &f, 1);

		CHECK_EQ(ret, 1, "files_update");
		updates++;
	}
	return NULL;
}

/* The library's exported get_sqe, not the header's inline one. */
extern struct io_uring_sqe *lib_get_sqe(struct io_uring *r)
	__asm__("io_uring_get_sqe");

static void *field(struct io_uring *r, size_t off)
{
	void *p;

	memcpy(&p, (char *)r + off, sizeof(p));
	return p;
}

static void test_misaligned(void)
{
	static _Alignas(64) char buf[sizeof(struct io_uring) + 64];
	struct io_uring *r = (struct io_uring *)(buf + 3);
	struct io_uring_cqe *cqe;
	unsigned *khead;
	int fd = 0;

	CHECK_EQ(io_uring_queue_init(8, r, 0), 0, "init at an odd address");
	for (unsigned round = 0; round < 20; round++) {
		for (unsigned i = 0; i < 4; i++) {
			struct io_uring_sqe *sqe = lib_get_sqe(r);

			CHECK(sqe, "no sqe");
			io_uring_prep_nop(sqe);
			sqe->user_data = round * 4 + i;
		}
		CHECK_EQ(io_uring_submit(r), 4, "submit at an odd address");
		for (unsigned i = 0; i < 4; i++) {
			CHECK_EQ(__io_uring_get_cqe(r, &cqe, 0, 1, NULL), 0,
				 "wait at an odd address");
			CHECK_EQ(cqe->user_data, round * 4 + i, "user_data");
			khead = field(r, offsetof(struct io_uring, cq) +
					 offsetof(struct io_uring_cq, khead));
			__atomic_store_n(khead, *khead + 1, __ATOMIC_RELEASE);
		}
	}
	CHECK_EQ(io_uring_register_files(r, &fd, 1), 0, "register files");
	CHECK_EQ(io_uring_unregister_files(r), 0, "unregister files");
	CHECK_EQ(io_uring_register_ring_fd(r), 1, "register ring fd");
	CHECK_EQ(io_uring_submit(r), 0, "submit nothing");
	io_uring_queue_exit(r);
	CHECK(lib_get_sqe(r) == NULL, "sqe after exit");
	CHECK_EQ(io_uring_submit(r), -EBADF, "submit after exit");
}

int main(int argc, char *argv[])
{
	pthread_t s, r, u;
	const char *env = getenv("LIBURING_RS_STRESS");
	int devnull;

	(void)argc;
	tu_set_name(argv[0]);
	total = env && *env && strcmp(env, "0") ? 10000000ULL : 2000000ULL;
	seen = calloc(total, 1);
	CHECK(seen, "calloc");
	devnull = open("/dev/null", O_RDWR);
	CHECK(devnull >= 0, "open /dev/null");

	CHECK_EQ(io_uring_queue_init(64, &ring, 0), 0, "queue_init");
	CHECK_EQ(io_uring_register_files_sparse(&ring, 64), 0, "sparse files");
	CHECK(!pthread_create(&r, NULL, reaper, NULL), "reaper thread");
	CHECK(!pthread_create(&u, NULL, updater, &devnull), "updater thread");
	CHECK(!pthread_create(&s, NULL, submitter, NULL), "submitter thread");
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	__atomic_store_n(&stop_updates, 1, __ATOMIC_RELEASE);
	pthread_join(u, NULL);

	for (unsigned long long i = 0; i < total; i++)
		CHECK(seen[i], "user_data %llu never completed", i);
	CHECK(updates > 0, "no file update ran");
	CHECK_EQ(io_uring_cq_ready(&ring), 0, "CQEs left over");
	io_uring_queue_exit(&ring);
	printf("%s: %llu NOPs, %llu file updates\n", tu_name, total, updates);

	test_misaligned();
	free(seen);
	close(devnull);
	tu_pass();
	return T_EXIT_PASS;
}
