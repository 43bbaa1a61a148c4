/* SPDX-License-Identifier: MIT */
/*
 * raw-ring: a program that makes the io_uring system calls itself sees
 * what it sees on the kernel: setup's params, the mappings, NOPs, reads
 * and writes, a timeout, EXT_ARG waits, registered files and buffers, a
 * probe, and a ring fd that poll, select and epoll report readable while
 * CQEs are pending. Rings closed by close(2) alone are torn down: 64 of
 * them leave no fds behind.
 */
#include "raw.h"
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/uio.h>

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	CHECK(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int pollin(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r = poll(&pfd, 1, ms);

	CHECK(r >= 0);
	return r == 1 && (pfd.revents & POLLIN);
}

int main(void)
{
	struct raw_ring r;
	struct io_uring_cqe c;
	char path[] = "/tmp/raw-ring-XXXXXX", wbuf[4096], rbuf[4096];
	int tfd, i, fds_before;

	raw_init(&r, 8, 0);
	CHECK(r.p.sq_entries == 8 && r.p.cq_entries == 16);
	CHECK(r.p.features & IORING_FEAT_SINGLE_MMAP);
	CHECK(r.p.features & IORING_FEAT_EXT_ARG);
	CHECK(r.p.sq_off.tail && r.p.cq_off.cqes);

	/* NOPs, waited for in one enter. */
	for (i = 0; i < 8; i++) {
		struct io_uring_sqe *s = raw_sqe(&r);

		s->opcode = IORING_OP_NOP;
		s->user_data = 100 + i;
	}
	CHECK(raw_submit(&r, 8) == 8);
	for (i = 0; i < 8; i++) {
		CHECK(raw_peek(&r, &c));
		CHECK(c.user_data == 100u + i && c.res == 0);
	}
	CHECK(!raw_peek(&r, &c));

	/* A write, then a read of a file. */
	tfd = mkstemp(path);
	CHECK(tfd >= 0);
	unlink(path);
	for (i = 0; i < (int)sizeof(wbuf); i++)
		wbuf[i] = (char)(i * 7 + 3);
	{
		struct io_uring_sqe *s = raw_sqe(&r);

		s->opcode = IORING_OP_WRITE;
		s->fd = tfd;
		s->addr = (unsigned long)wbuf;
		s->len = sizeof(wbuf);
		s->user_data = 1;
		CHECK(raw_submit(&r, 1) == 1);
		raw_wait(&r, &c);
		CHECK(c.user_data == 1 && c.res == (int)sizeof(wbuf));
		s = raw_sqe(&r);
		s->opcode = IORING_OP_READ;
		s->fd = tfd;
		s->addr = (unsigned long)rbuf;
		s->len = sizeof(rbuf);
		s->user_data = 2;
		CHECK(raw_submit(&r, 1) == 1);
		raw_wait(&r, &c);
		CHECK(c.user_data == 2 && c.res == (int)sizeof(rbuf));
		CHECK(!memcmp(wbuf, rbuf, sizeof(rbuf)));
	}

	/* Registered files and buffers: a fixed-file READ_FIXED. */
	{
		struct iovec iov = { .iov_base = rbuf, .iov_len = sizeof(rbuf) };
		struct io_uring_sqe *s;

		CHECK(sys_register(r.fd, IORING_REGISTER_FILES, &tfd, 1) == 0);
		CHECK(sys_register(r.fd, IORING_REGISTER_BUFFERS, &iov, 1) == 0);
		memset(rbuf, 0, sizeof(rbuf));
		s = raw_sqe(&r);
		s->opcode = IORING_OP_READ_FIXED;
		s->flags = IOSQE_FIXED_FILE;
		s->fd = 0;
		s->addr = (unsigned long)rbuf;
		s->len = sizeof(rbuf);
		s->buf_index = 0;
		s->user_data = 3;
		CHECK(raw_submit(&r, 1) == 1);
		raw_wait(&r, &c);
		CHECK(c.user_data == 3 && c.res == (int)sizeof(rbuf));
		CHECK(!memcmp(wbuf, rbuf, sizeof(rbuf)));
		CHECK(sys_register(r.fd, IORING_UNREGISTER_BUFFERS, NULL, 0) == 0);
		CHECK(sys_register(r.fd, IORING_UNREGISTER_FILES, NULL, 0) == 0);
	}

	/* The probe knows NOP and READ. */
	{
		size_t len = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
		struct io_uring_probe *p = calloc(1, len);

		CHECK(sys_register(r.fd, IORING_REGISTER_PROBE, p, 256) == 0);
		CHECK(p->last_op >= IORING_OP_READ);
		CHECK(p->ops[IORING_OP_NOP].flags & IO_URING_OP_SUPPORTED);
		free(p);
	}

	/* A timeout op, and an EXT_ARG wait that times out with nothing. */
	{
		struct __kernel_timespec ts = { .tv_nsec = 10000000 };
		struct io_uring_getevents_arg arg = { .ts = (unsigned long)&ts };
		struct io_uring_sqe *s = raw_sqe(&r);

		s->opcode = IORING_OP_TIMEOUT;
		s->addr = (unsigned long)&ts;
		s->len = 1;
		s->user_data = 4;
		CHECK(raw_submit(&r, 1) == 1);
		raw_wait(&r, &c);
		CHECK(c.user_data == 4 && c.res == -ETIME);
		errno = 0;
		CHECK(sys_enter(r.fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof(arg)) == -1 && errno == ETIME);
	}

	/* The ring fd: readable while a CQE is pending, by poll, select and
	 * epoll; no longer once the CQ is drained (the engine resets it
	 * within a millisecond). */
	{
		struct __kernel_timespec ts = { .tv_nsec = 20000000 };
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(0), readable = 1;
		struct io_uring_sqe *s;
		fd_set set;
		struct timeval tv = { .tv_sec = 1 };

		CHECK(!pollin(r.fd, 0));
		s = raw_sqe(&r);
		s->opcode = IORING_OP_NOP;
		s->user_data = 5;
		CHECK(raw_submit(&r, 0) == 1);
		CHECK(pollin(r.fd, 1000));
		FD_ZERO(&set);
		FD_SET(r.fd, &set);
		CHECK(select(r.fd + 1, &set, NULL, NULL, &tv) == 1 && FD_ISSET(r.fd, &set));
		CHECK(raw_peek(&r, &c) && c.user_data == 5);
		for (i = 0; i < 100 && readable; i++) {
			readable = pollin(r.fd, 0);
			usleep(1000);
		}
		CHECK(!readable);

		CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, r.fd, &ev) == 0);
		s = raw_sqe(&r);
		s->opcode = IORING_OP_TIMEOUT;
		s->addr = (unsigned long)&ts;
		s->len = 1;
		s->user_data = 6;
		CHECK(raw_submit(&r, 0) == 1);
		/* A kernel ring's task work may end the wait early with EINTR. */
		do
			i = epoll_wait(ep, &out, 1, 2000);
		while (i < 0 && errno == EINTR);
		CHECK(i == 1 && (out.events & EPOLLIN));
		CHECK(raw_peek(&r, &c) && c.user_data == 6 && c.res == -ETIME);
		close(ep);
	}
	close(tfd);
	raw_exit(&r);

	/* Rings closed with close(2) alone (no liburing) go away. */
	fds_before = count_fds();
	for (i = 0; i < 64; i++) {
		struct raw_ring t;

		raw_init(&t, 4, 0);
		raw_exit(&t);
	}
	CHECK(count_fds() <= fds_before + 2);
	printf("raw-ring: ok\n");
	return 0;
}
