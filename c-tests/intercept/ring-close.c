/* SPDX-License-Identifier: MIT */
/*
 * ring-close: close(2) of a ring fd, as a program without liburing makes
 * it, ends the ring there and then, as the kernel's does:
 * - an IORING_SETUP_NO_MMAP ring in the program's memory, closed and its
 *   memory freed at once (what liburing's io_uring_queue_exit and its
 *   init-mem test do), 200 times over, with a new ring set up in memory
 *   that may be the old one's; an SQPOLL one whose memory is unmapped
 *   before its fd is closed (io_uring_queue_exit's order for memory
 *   liburing allocated), which the kernel's pin keeps working; and after
 *   the close, the memory is the program's own again (a forked child's
 *   writes stay in the child);
 * - a ring closed with a read of a pipe in flight lets go of the pipe: the
 *   writer gets EPIPE once the program closes its own read end;
 * - a ring that has a registered index lives on there after its fd is
 *   closed, and its requests still complete, until the index goes;
 * - a ring reached through a dup of its fd keeps working after the
 *   original is closed, and a request in flight on it completes;
 * - close(2) of other files at the numbers rings get answers as ever;
 * - a ring closed while another thread waits in io_uring_enter on it:
 *   close returns, and new rings work.
 */
#include "raw.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>

#define MEM_LEN (64 * 1024)

/* A NO_MMAP ring in `mem`: rings at the start, SQEs at half way. */
static int nommap_setup(struct io_uring_params *p, char *mem)
{
	memset(p, 0, sizeof(*p));
	p->flags = IORING_SETUP_NO_MMAP | IORING_SETUP_NO_SQARRAY;
	p->cq_off.user_addr = (unsigned long)mem;
	p->sq_off.user_addr = (unsigned long)(mem + MEM_LEN / 2);
	return sys_setup(8, p);
}

static void nommap_nops(int fd, struct io_uring_params *p, char *mem, unsigned n)
{
	struct io_uring_sqe *sqes = (void *)(mem + MEM_LEN / 2);
	_Atomic unsigned *sq_tail = (void *)(mem + p->sq_off.tail);
	_Atomic unsigned *cq_head = (void *)(mem + p->cq_off.head);
	_Atomic unsigned *cq_tail = (void *)(mem + p->cq_off.tail);
	unsigned *cq_mask = (void *)(mem + p->cq_off.ring_mask);
	struct io_uring_cqe *cqes = (void *)(mem + p->cq_off.cqes);
	unsigned tail = atomic_load(sq_tail), head, i;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *s = &sqes[(tail + i) & (p->sq_entries - 1)];

		memset(s, 0, sizeof(*s));
		s->opcode = IORING_OP_NOP;
		s->user_data = 7 + i;
	}
	atomic_store(sq_tail, tail + n);
	CHECK(sys_enter(fd, n, n, IORING_ENTER_GETEVENTS, NULL, 0) == (int)n);
	head = atomic_load(cq_head);
	CHECK(atomic_load(cq_tail) - head == n);
	for (i = 0; i < n; i++)
		CHECK(cqes[(head + i) & *cq_mask].user_data == 7 + i && cqes[(head + i) & *cq_mask].res == 0);
	atomic_store(cq_head, head + n);
}

/* Whether a write to `wfd` gets EPIPE within a second. */
static int epipe_soon(int wfd)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (write(wfd, "x", 1) < 0) {
			CHECK(errno == EPIPE);
			return 1;
		}
		usleep(1000);
	}
	return 0;
}

static void pipe_read(struct raw_ring *r, int rfd, char *buf, unsigned long ud)
{
	struct io_uring_sqe *s = raw_sqe(r);

	s->opcode = IORING_OP_READ;
	s->fd = rfd;
	s->addr = (unsigned long)buf;
	s->len = 1;
	s->user_data = ud;
	CHECK(raw_submit(r, 0) == 1);
}

static struct raw_ring waited;

static void *wait_forever(void *arg)
{
	(void)arg;
	sys_enter(waited.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	return NULL;
}

int main(void)
{
	struct io_uring_params p;
	struct io_uring_cqe c;
	struct raw_ring r;
	char buf[8];
	int i, fd, pfd[2];

	signal(SIGPIPE, SIG_IGN);

	/* NO_MMAP rings closed, then their memory freed, again and again. */
	for (i = 0; i < 200; i++) {
		char *mem = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		CHECK(mem != MAP_FAILED);
		fd = nommap_setup(&p, mem);
		if (fd == -1 && errno == EINVAL && i == 0) {
			printf("ring-close: IORING_SETUP_NO_MMAP not supported, NO_MMAP part skipped\n");
			break;
		}
		CHECK(fd >= 0);
		nommap_nops(fd, &p, mem, 4);
		CHECK(close(fd) == 0);
		CHECK(munmap(mem, MEM_LEN) == 0);
		/* Time for any thread still holding the ring to touch it. */
		if (i % 20 == 0)
			usleep(2000);
	}

	if (i == 200) {
		char *mem = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		pid_t pid;
		int st;

		/*
		 * Memory unmapped before its ring's fd is closed (what
		 * io_uring_queue_exit does with memory liburing allocated): the
		 * kernel pinned it; an SQPOLL thread polling it lives on.
		 */
		CHECK(mem != MAP_FAILED);
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_NO_MMAP | IORING_SETUP_NO_SQARRAY | IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 1000;
		p.cq_off.user_addr = (unsigned long)mem;
		p.sq_off.user_addr = (unsigned long)(mem + MEM_LEN / 2);
		fd = sys_setup(8, &p);
		CHECK(fd >= 0);
		CHECK(munmap(mem, MEM_LEN) == 0);
		usleep(20000);
		CHECK(close(fd) == 0);

		/* A closed ring's memory is the program's own again: a child's copy is its own. */
		mem = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(mem != MAP_FAILED);
		fd = nommap_setup(&p, mem);
		CHECK(fd >= 0);
		nommap_nops(fd, &p, mem, 2);
		CHECK(close(fd) == 0);
		mem[MEM_LEN / 2] = 1;
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			mem[MEM_LEN / 2] = 2;
			_exit(0);
		}
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		CHECK(mem[MEM_LEN / 2] == 1);
		CHECK(munmap(mem, MEM_LEN) == 0);
	}

	/* A read in flight when the ring is closed: the ring lets go of the pipe. */
	CHECK(pipe(pfd) == 0);
	raw_init(&r, 4, 0);
	pipe_read(&r, pfd[0], buf, 1);
	raw_exit(&r);
	CHECK(close(pfd[0]) == 0);
	CHECK(epipe_soon(pfd[1]));
	close(pfd[1]);

	/* A registered index keeps the ring. */
	raw_init(&r, 4, 0);
	{
		struct io_uring_rsrc_update up = { .offset = -1U, .data = (unsigned)r.fd };
		unsigned idx;

		CHECK(sys_register(r.fd, IORING_REGISTER_RING_FDS, &up, 1) == 1);
		idx = up.offset;
		CHECK(close(r.fd) == 0);
		r.fd = (int)idx;
		{
			struct io_uring_sqe *s = raw_sqe(&r);

			s->opcode = IORING_OP_NOP;
			s->user_data = 42;
		}
		atomic_store(r.sq_tail, r.sqe_tail);
		CHECK(sys_enter((int)idx, 1, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING, NULL, 0) == 1);
		CHECK(raw_peek(&r, &c) && c.user_data == 42 && c.res == 0);
		/* An unregistration that names an fd is refused, as the kernel's. */
		up.offset = idx;
		CHECK(sys_register((int)idx, IORING_UNREGISTER_RING_FDS | IORING_REGISTER_USE_REGISTERED_RING, &up, 1) == -1 && errno == EINVAL);
		/* Its last index gone, the ring with no fd goes. */
		up.data = 0;
		CHECK(sys_register((int)idx, IORING_UNREGISTER_RING_FDS | IORING_REGISTER_USE_REGISTERED_RING, &up, 1) == 1);
		r.fd = -1;
		raw_exit(&r);
	}

	/* A dup of the ring fd: the original closed, the ring works on. */
	CHECK(pipe(pfd) == 0);
	raw_init(&r, 4, 0);
	pipe_read(&r, pfd[0], buf, 5);
	fd = dup(r.fd);
	CHECK(fd >= 0);
	CHECK(close(r.fd) == 0);
	r.fd = fd;
	CHECK(write(pfd[1], "y", 1) == 1);
	raw_wait(&r, &c);
	CHECK(c.user_data == 5 && c.res == 1 && buf[0] == 'y');
	{
		struct io_uring_sqe *s = raw_sqe(&r);

		s->opcode = IORING_OP_NOP;
		s->user_data = 6;
	}
	CHECK(raw_submit(&r, 1) == 1);
	CHECK(raw_peek(&r, &c) && c.user_data == 6);
	raw_exit(&r);
	close(pfd[0]);
	close(pfd[1]);

	/* Other files at the numbers whose close is trapped close as ever. */
	CHECK(pipe(pfd) == 0);
	CHECK(dup2(pfd[1], 1000) == 1000);
	CHECK(close(1000) == 0);
	CHECK(close(1000) == -1 && errno == EBADF);
	CHECK(close(pfd[1]) == 0);
	CHECK(read(pfd[0], buf, 1) == 0);
	CHECK(close(pfd[0]) == 0);

	/* Closed while another thread waits in io_uring_enter on it: close
	 * returns at once (the waiter holds the ring, as the kernel's fdget
	 * does), and a new ring can be set up and used meanwhile. */
	{
		pthread_t t;
		struct raw_ring r2;

		raw_init(&waited, 4, 0);
		CHECK(pthread_create(&t, NULL, wait_forever, NULL) == 0);
		usleep(50000);
		CHECK(close(waited.fd) == 0);
		raw_init(&r2, 4, 0);
		{
			struct io_uring_sqe *s = raw_sqe(&r2);

			s->opcode = IORING_OP_NOP;
			s->user_data = 9;
		}
		CHECK(raw_submit(&r2, 1) == 1);
		CHECK(raw_peek(&r2, &c) && c.user_data == 9);
		raw_exit(&r2);
	}

	printf("ring-close: ok\n");
	return 0;
}
