/* SPDX-License-Identifier: MIT */
/*
 * Golden test for the SQE-building inline helpers of liburing.h.
 *
 * Each case starts from an SQE pair filled with 0xA5, calls one helper with
 * fixed arguments, and compares all 128 bytes against an expectation built
 * field by field from the kernel's io_uring ABI: what each opcode reads from
 * which field. Bytes a helper must leave alone stay 0xA5 in the expectation,
 * so both missing and stray writes are caught.
 *
 * Standalone: needs only the headers. Build and run:
 *   cc -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude \
 *      c-tests/sqe-golden.c -o sqe-golden && ./sqe-golden
 */
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>

#define GARBAGE 0xA5

static struct io_uring_sqe got[2], want[2];
static const char *cur;
static int failures, cases;

#define P(x) ((void *) (uintptr_t) (x))
#define U(x) ((__u64) (uintptr_t) (x))

static void start(const char *name)
{
	cur = name;
	cases++;
	memset(got, GARBAGE, sizeof(got));
	memset(want, GARBAGE, sizeof(want));
}

/* the five fields every opcode-setting helper writes */
static void core(__u8 op, __s32 fd, __u64 addr, __u32 len, __u64 off)
{
	want->opcode = op;
	want->fd = fd;
	want->addr = addr;
	want->len = len;
	want->off = off;
}

static void check(void)
{
	const unsigned char *g = (const unsigned char *) got;
	const unsigned char *w = (const unsigned char *) want;
	unsigned i;

	if (!memcmp(got, want, sizeof(got)))
		return;
	failures++;
	printf("FAIL %s:", cur);
	for (i = 0; i < sizeof(got); i++)
		if (g[i] != w[i])
			printf(" [%u] %02x!=%02x", i, g[i], w[i]);
	printf("\n");
}

#define T(name) start(#name); for (int once_ = 1; once_; once_ = 0, check())

static void test_setters(void)
{
	T(io_uring_initialize_sqe) {
		io_uring_initialize_sqe(got);
		want->flags = 0; want->ioprio = 0; want->rw_flags = 0;
		want->buf_index = 0; want->personality = 0; want->file_index = 0;
		want->addr3 = 0; want->__pad2[0] = 0;
	}
	T(io_uring_sqe_set_data) {
		io_uring_sqe_set_data(got, P(0x1234));
		want->user_data = 0x1234;
	}
	T(io_uring_sqe_set_data64) {
		io_uring_sqe_set_data64(got, 0xfedcba9876543210ULL);
		want->user_data = 0xfedcba9876543210ULL;
	}
	T(io_uring_sqe_set_flags) {
		io_uring_sqe_set_flags(got, 0x1ff);
		want->flags = 0xff;
	}
	T(io_uring_sqe_set_buf_group) {
		io_uring_sqe_set_buf_group(got, 0x12345);
		want->buf_group = 0x2345;
	}
	T(io_uring_prep_send_set_addr) {
		io_uring_prep_send_set_addr(got, (const struct sockaddr *) P(0x5000), 16);
		want->addr2 = 0x5000; want->addr_len = 16;
	}
}

static void test_rw(void)
{
	const struct iovec *iov = (const struct iovec *) P(0x1000);

	T(io_uring_prep_rw) {
		io_uring_prep_rw(IORING_OP_READ, got, 5, P(0x1000), 77, 0x99);
		core(IORING_OP_READ, 5, 0x1000, 77, 0x99);
	}
	T(io_uring_prep_read) {
		io_uring_prep_read(got, 3, P(0x2000), 4096, 1ULL << 40);
		core(IORING_OP_READ, 3, 0x2000, 4096, 1ULL << 40);
	}
	T(io_uring_prep_write) {
		io_uring_prep_write(got, 3, P(0x2000), 512, 8);
		core(IORING_OP_WRITE, 3, 0x2000, 512, 8);
	}
	T(io_uring_prep_readv) {
		io_uring_prep_readv(got, 4, iov, 3, 100);
		core(IORING_OP_READV, 4, 0x1000, 3, 100);
	}
	T(io_uring_prep_readv2) {
		io_uring_prep_readv2(got, 4, iov, 3, 100, RWF_NOWAIT);
		core(IORING_OP_READV, 4, 0x1000, 3, 100);
		want->rw_flags = RWF_NOWAIT;
	}
	T(io_uring_prep_writev) {
		io_uring_prep_writev(got, 4, iov, 2, (__u64) -1);
		core(IORING_OP_WRITEV, 4, 0x1000, 2, (__u64) -1);
	}
	T(io_uring_prep_writev2) {
		io_uring_prep_writev2(got, 4, iov, 2, 7, RWF_DSYNC);
		core(IORING_OP_WRITEV, 4, 0x1000, 2, 7);
		want->rw_flags = RWF_DSYNC;
	}
	T(io_uring_prep_read_fixed) {
		io_uring_prep_read_fixed(got, 6, P(0x3000), 64, 9, 0x10002);
		core(IORING_OP_READ_FIXED, 6, 0x3000, 64, 9);
		want->buf_index = 2;
	}
	T(io_uring_prep_write_fixed) {
		io_uring_prep_write_fixed(got, 6, P(0x3000), 64, 9, 5);
		core(IORING_OP_WRITE_FIXED, 6, 0x3000, 64, 9);
		want->buf_index = 5;
	}
	T(io_uring_prep_readv_fixed) {
		io_uring_prep_readv_fixed(got, 6, iov, 4, 9, 1, 3);
		core(IORING_OP_READV_FIXED, 6, 0x1000, 4, 9);
		want->rw_flags = 1; want->buf_index = 3;
	}
	T(io_uring_prep_writev_fixed) {
		io_uring_prep_writev_fixed(got, 6, iov, 4, 9, 2, 3);
		core(IORING_OP_WRITEV_FIXED, 6, 0x1000, 4, 9);
		want->rw_flags = 2; want->buf_index = 3;
	}
	T(io_uring_prep_read_multishot) {
		io_uring_prep_read_multishot(got, 7, 0, 11, 0x10005);
		core(IORING_OP_READ_MULTISHOT, 7, 0, 0, 11);
		want->buf_group = 5; want->flags = IOSQE_BUFFER_SELECT;
	}
	T(io_uring_prep_fsync) {
		io_uring_prep_fsync(got, 8, IORING_FSYNC_DATASYNC);
		core(IORING_OP_FSYNC, 8, 0, 0, 0);
		want->fsync_flags = IORING_FSYNC_DATASYNC;
	}
	T(io_uring_prep_sync_file_range) {
		io_uring_prep_sync_file_range(got, 8, 4096, 1 << 20, 2);
		core(IORING_OP_SYNC_FILE_RANGE, 8, 0, 4096, 1 << 20);
		want->sync_range_flags = 2;
	}
	T(io_uring_prep_fallocate) {
		/* the length goes in addr, the mode in len */
		io_uring_prep_fallocate(got, 8, 3, 4096, 1ULL << 33);
		core(IORING_OP_FALLOCATE, 8, 1ULL << 33, 3, 4096);
	}
	T(io_uring_prep_fadvise) {
		io_uring_prep_fadvise(got, 8, 100, 200, 4);
		core(IORING_OP_FADVISE, 8, 0, 200, 100);
		want->fadvise_advice = 4;
	}
	T(io_uring_prep_fadvise64) {
		io_uring_prep_fadvise64(got, 8, 100, (off_t) 1 << 35, 4);
		core(IORING_OP_FADVISE, 8, 1ULL << 35, 0, 100);
		want->fadvise_advice = 4;
	}
	T(io_uring_prep_madvise) {
		io_uring_prep_madvise(got, P(0x7000), 8192, 3);
		core(IORING_OP_MADVISE, -1, 0x7000, 8192, 0);
		want->fadvise_advice = 3;
	}
	T(io_uring_prep_madvise64) {
		io_uring_prep_madvise64(got, P(0x7000), (off_t) 1 << 34, 3);
		core(IORING_OP_MADVISE, -1, 0x7000, 0, 1ULL << 34);
		want->fadvise_advice = 3;
	}
	T(io_uring_prep_ftruncate) {
		io_uring_prep_ftruncate(got, 9, -2);
		core(IORING_OP_FTRUNCATE, 9, 0, 0, (__u64) -2);
	}
	T(io_uring_prep_splice) {
		io_uring_prep_splice(got, 3, -1, 4, 1000, 65536, SPLICE_F_MOVE);
		/* fd_out in fd, off_out in off, off_in in addr, fd_in in splice_fd_in */
		core(IORING_OP_SPLICE, 4, (__u64) -1, 65536, 1000);
		want->splice_fd_in = 3; want->splice_flags = SPLICE_F_MOVE;
	}
	T(io_uring_prep_tee) {
		io_uring_prep_tee(got, 3, 4, 100, 0);
		core(IORING_OP_TEE, 4, 0, 100, 0);
		want->splice_fd_in = 3; want->splice_flags = 0;
	}
}

static void test_poll_timeout_cancel(void)
{
	const struct __kernel_timespec *ts = (const struct __kernel_timespec *) P(0x4000);

	T(io_uring_prep_nop) {
		io_uring_prep_nop(got);
		core(IORING_OP_NOP, -1, 0, 0, 0);
	}
	T(io_uring_prep_nop128) {
		io_uring_prep_nop128(got);
		core(IORING_OP_NOP128, -1, 0, 0, 0);
	}
	T(io_uring_prep_poll_add) {
		io_uring_prep_poll_add(got, 5, POLLIN | POLLOUT);
		core(IORING_OP_POLL_ADD, 5, 0, 0, 0);
		want->poll32_events = POLLIN | POLLOUT;	/* little-endian host */
	}
	T(io_uring_prep_poll_multishot) {
		io_uring_prep_poll_multishot(got, 5, POLLIN);
		core(IORING_OP_POLL_ADD, 5, 0, IORING_POLL_ADD_MULTI, 0);
		want->poll32_events = POLLIN;
	}
	T(io_uring_prep_poll_remove) {
		io_uring_prep_poll_remove(got, 0xabcdef);
		core(IORING_OP_POLL_REMOVE, -1, 0xabcdef, 0, 0);
	}
	T(io_uring_prep_poll_update) {
		io_uring_prep_poll_update(got, 11, 22, POLLOUT, IORING_POLL_UPDATE_EVENTS);
		core(IORING_OP_POLL_REMOVE, -1, 11, IORING_POLL_UPDATE_EVENTS, 22);
		want->poll32_events = POLLOUT;
	}
	T(io_uring_prep_timeout) {
		io_uring_prep_timeout(got, ts, 3, IORING_TIMEOUT_ABS);
		core(IORING_OP_TIMEOUT, -1, 0x4000, 1, 3);
		want->timeout_flags = IORING_TIMEOUT_ABS;
	}
	T(io_uring_prep_timeout_remove) {
		io_uring_prep_timeout_remove(got, 77, 0);
		core(IORING_OP_TIMEOUT_REMOVE, -1, 77, 0, 0);
		want->timeout_flags = 0;
	}
	T(io_uring_prep_timeout_update) {
		io_uring_prep_timeout_update(got, ts, 77, IORING_TIMEOUT_ABS);
		core(IORING_OP_TIMEOUT_REMOVE, -1, 77, 0, 0x4000);
		want->timeout_flags = IORING_TIMEOUT_ABS | IORING_TIMEOUT_UPDATE;
	}
	T(io_uring_prep_link_timeout) {
		io_uring_prep_link_timeout(got, ts, 0);
		core(IORING_OP_LINK_TIMEOUT, -1, 0x4000, 1, 0);
		want->timeout_flags = 0;
	}
	T(io_uring_prep_cancel64) {
		io_uring_prep_cancel64(got, 1ULL << 50, IORING_ASYNC_CANCEL_ALL);
		core(IORING_OP_ASYNC_CANCEL, -1, 1ULL << 50, 0, 0);
		want->cancel_flags = IORING_ASYNC_CANCEL_ALL;
	}
	T(io_uring_prep_cancel) {
		io_uring_prep_cancel(got, P(0x8000), 0);
		core(IORING_OP_ASYNC_CANCEL, -1, 0x8000, 0, 0);
		want->cancel_flags = 0;
	}
	T(io_uring_prep_cancel_fd) {
		io_uring_prep_cancel_fd(got, 12, IORING_ASYNC_CANCEL_ALL);
		core(IORING_OP_ASYNC_CANCEL, 12, 0, 0, 0);
		want->cancel_flags = IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD;
	}
}

static void test_net(void)
{
	struct sockaddr *sa = (struct sockaddr *) P(0x5000);
	socklen_t *slen = (socklen_t *) P(0x5100);
	struct msghdr *msg = (struct msghdr *) P(0x5200);

	T(io_uring_prep_accept) {
		io_uring_prep_accept(got, 3, sa, slen, SOCK_CLOEXEC);
		core(IORING_OP_ACCEPT, 3, 0x5000, 0, 0x5100);
		want->accept_flags = SOCK_CLOEXEC;
	}
	T(io_uring_prep_accept_direct) {
		io_uring_prep_accept_direct(got, 3, sa, slen, 0, 4);
		core(IORING_OP_ACCEPT, 3, 0x5000, 0, 0x5100);
		want->accept_flags = 0; want->file_index = 5;
	}
	T(io_uring_prep_accept_direct/alloc) {
		io_uring_prep_accept_direct(got, 3, sa, slen, 0, IORING_FILE_INDEX_ALLOC);
		core(IORING_OP_ACCEPT, 3, 0x5000, 0, 0x5100);
		want->accept_flags = 0; want->file_index = IORING_FILE_INDEX_ALLOC;
	}
	T(io_uring_prep_multishot_accept) {
		io_uring_prep_multishot_accept(got, 3, NULL, NULL, 0);
		core(IORING_OP_ACCEPT, 3, 0, 0, 0);
		want->accept_flags = 0;
		want->ioprio = 0xA5A5 | IORING_ACCEPT_MULTISHOT;	/* or-ed in */
	}
	T(io_uring_prep_multishot_accept_direct) {
		io_uring_prep_multishot_accept_direct(got, 3, NULL, NULL, 0);
		core(IORING_OP_ACCEPT, 3, 0, 0, 0);
		want->accept_flags = 0;
		want->ioprio = 0xA5A5 | IORING_ACCEPT_MULTISHOT;
		want->file_index = IORING_FILE_INDEX_ALLOC;
	}
	T(io_uring_prep_connect) {
		io_uring_prep_connect(got, 3, sa, 28);
		core(IORING_OP_CONNECT, 3, 0x5000, 0, 28);
	}
	T(io_uring_prep_bind) {
		io_uring_prep_bind(got, 3, sa, 16);
		core(IORING_OP_BIND, 3, 0x5000, 0, 16);
	}
	T(io_uring_prep_listen) {
		io_uring_prep_listen(got, 3, 128);
		core(IORING_OP_LISTEN, 3, 0, 128, 0);
	}
	T(io_uring_prep_shutdown) {
		io_uring_prep_shutdown(got, 3, SHUT_RDWR);
		core(IORING_OP_SHUTDOWN, 3, 0, SHUT_RDWR, 0);
	}
	T(io_uring_prep_send) {
		io_uring_prep_send(got, 3, P(0x6000), 100, MSG_NOSIGNAL);
		core(IORING_OP_SEND, 3, 0x6000, 100, 0);
		want->msg_flags = MSG_NOSIGNAL;
	}
	T(io_uring_prep_send_bundle) {
		io_uring_prep_send_bundle(got, 3, 0, 0);
		core(IORING_OP_SEND, 3, 0, 0, 0);
		want->msg_flags = 0; want->ioprio = 0xA5A5 | IORING_RECVSEND_BUNDLE;
	}
	T(io_uring_prep_sendto) {
		io_uring_prep_sendto(got, 3, P(0x6000), 100, 0, sa, 16);
		/* addr2 (the destination) shares its slot with off */
		core(IORING_OP_SEND, 3, 0x6000, 100, 0x5000);
		want->msg_flags = 0; want->addr_len = 16;
	}
	T(io_uring_prep_send_zc) {
		io_uring_prep_send_zc(got, 3, P(0x6000), 100, 0, IORING_SEND_ZC_REPORT_USAGE);
		core(IORING_OP_SEND_ZC, 3, 0x6000, 100, 0);
		want->msg_flags = 0; want->ioprio = IORING_SEND_ZC_REPORT_USAGE;
	}
	T(io_uring_prep_send_zc_fixed) {
		io_uring_prep_send_zc_fixed(got, 3, P(0x6000), 100, 0, 0, 9);
		core(IORING_OP_SEND_ZC, 3, 0x6000, 100, 0);
		want->msg_flags = 0; want->ioprio = IORING_RECVSEND_FIXED_BUF;
		want->buf_index = 9;
	}
	T(io_uring_prep_recv) {
		io_uring_prep_recv(got, 3, P(0x6000), 100, MSG_WAITALL);
		core(IORING_OP_RECV, 3, 0x6000, 100, 0);
		want->msg_flags = MSG_WAITALL;
	}
	T(io_uring_prep_recv_multishot) {
		io_uring_prep_recv_multishot(got, 3, NULL, 0, 0);
		core(IORING_OP_RECV, 3, 0, 0, 0);
		want->msg_flags = 0; want->ioprio = 0xA5A5 | IORING_RECV_MULTISHOT;
	}
	T(io_uring_prep_recvmsg) {
		io_uring_prep_recvmsg(got, 3, msg, MSG_PEEK);
		core(IORING_OP_RECVMSG, 3, 0x5200, 1, 0);
		want->msg_flags = MSG_PEEK;
	}
	T(io_uring_prep_recvmsg_multishot) {
		io_uring_prep_recvmsg_multishot(got, 3, msg, 0);
		core(IORING_OP_RECVMSG, 3, 0x5200, 1, 0);
		want->msg_flags = 0; want->ioprio = 0xA5A5 | IORING_RECV_MULTISHOT;
	}
	T(io_uring_prep_sendmsg) {
		io_uring_prep_sendmsg(got, 3, msg, 0);
		core(IORING_OP_SENDMSG, 3, 0x5200, 1, 0);
		want->msg_flags = 0;
	}
	T(io_uring_prep_sendmsg_zc) {
		io_uring_prep_sendmsg_zc(got, 3, msg, 0);
		core(IORING_OP_SENDMSG_ZC, 3, 0x5200, 1, 0);
		want->msg_flags = 0;
	}
	T(io_uring_prep_sendmsg_zc_fixed) {
		io_uring_prep_sendmsg_zc_fixed(got, 3, msg, 0, 4);
		core(IORING_OP_SENDMSG_ZC, 3, 0x5200, 1, 0);
		want->msg_flags = 0; want->buf_index = 4;
		want->ioprio = 0xA5A5 | IORING_RECVSEND_FIXED_BUF;
	}
	T(io_uring_prep_socket) {
		io_uring_prep_socket(got, AF_INET, SOCK_STREAM, 0, 0);
		/* domain in fd, protocol in len, type in off */
		core(IORING_OP_SOCKET, AF_INET, 0, 0, SOCK_STREAM);
		want->rw_flags = 0;
	}
	T(io_uring_prep_socket_direct) {
		io_uring_prep_socket_direct(got, AF_INET6, SOCK_DGRAM, 17, 2, 0);
		core(IORING_OP_SOCKET, AF_INET6, 0, 17, SOCK_DGRAM);
		want->rw_flags = 0; want->file_index = 3;
	}
	T(io_uring_prep_socket_direct_alloc) {
		io_uring_prep_socket_direct_alloc(got, AF_UNIX, SOCK_STREAM, 0, 0);
		core(IORING_OP_SOCKET, AF_UNIX, 0, 0, SOCK_STREAM);
		want->rw_flags = 0; want->file_index = IORING_FILE_INDEX_ALLOC;
	}
	T(io_uring_prep_epoll_ctl) {
		io_uring_prep_epoll_ctl(got, 5, -3, 1, (const struct epoll_event *) P(0x9000));
		/* the target fd sits in off as a zero-extended 32-bit value */
		core(IORING_OP_EPOLL_CTL, 5, 0x9000, 1, 0xfffffffdULL);
	}
	T(io_uring_prep_epoll_wait) {
		io_uring_prep_epoll_wait(got, 5, (struct epoll_event *) P(0x9000), 64, 0);
		core(IORING_OP_EPOLL_WAIT, 5, 0x9000, 64, 0);
		want->rw_flags = 0;
	}
}

static void test_fs(void)
{
	const char *a = (const char *) P(0xa000);
	const char *b = (const char *) P(0xb000);

	T(io_uring_prep_openat) {
		io_uring_prep_openat(got, 7, a, O_RDONLY | O_CLOEXEC, 0644);
		core(IORING_OP_OPENAT, 7, 0xa000, 0644, 0);
		want->open_flags = O_RDONLY | O_CLOEXEC;
	}
	T(io_uring_prep_openat_direct) {
		io_uring_prep_openat_direct(got, 7, a, 0, 0, 9);
		core(IORING_OP_OPENAT, 7, 0xa000, 0, 0);
		want->open_flags = 0; want->file_index = 10;
	}
	T(io_uring_prep_open) {
		io_uring_prep_open(got, a, O_WRONLY, 0600);
		core(IORING_OP_OPENAT, AT_FDCWD, 0xa000, 0600, 0);
		want->open_flags = O_WRONLY;
	}
	T(io_uring_prep_open_direct) {
		io_uring_prep_open_direct(got, a, 0, 0, IORING_FILE_INDEX_ALLOC);
		core(IORING_OP_OPENAT, AT_FDCWD, 0xa000, 0, 0);
		want->open_flags = 0; want->file_index = IORING_FILE_INDEX_ALLOC;
	}
	T(io_uring_prep_openat2) {
		io_uring_prep_openat2(got, 7, a, (const struct open_how *) P(0xc000));
		core(IORING_OP_OPENAT2, 7, 0xa000, sizeof(struct open_how), 0xc000);
	}
	T(io_uring_prep_openat2_direct) {
		io_uring_prep_openat2_direct(got, 7, a, (const struct open_how *) P(0xc000), 0);
		core(IORING_OP_OPENAT2, 7, 0xa000, 24, 0xc000);
		want->file_index = 1;
	}
	T(io_uring_prep_close) {
		io_uring_prep_close(got, 9);
		core(IORING_OP_CLOSE, 9, 0, 0, 0);
	}
	T(io_uring_prep_close_direct) {
		io_uring_prep_close_direct(got, 6);
		core(IORING_OP_CLOSE, 0, 0, 0, 0);
		want->file_index = 7;
	}
	T(io_uring_prep_statx) {
		io_uring_prep_statx(got, 7, a, AT_SYMLINK_NOFOLLOW, 0x7ff, (struct statx *) P(0xd000));
		core(IORING_OP_STATX, 7, 0xa000, 0x7ff, 0xd000);
		want->statx_flags = AT_SYMLINK_NOFOLLOW;
	}
	T(io_uring_prep_unlinkat) {
		io_uring_prep_unlinkat(got, 7, a, AT_REMOVEDIR);
		core(IORING_OP_UNLINKAT, 7, 0xa000, 0, 0);
		want->unlink_flags = AT_REMOVEDIR;
	}
	T(io_uring_prep_unlink) {
		io_uring_prep_unlink(got, a, 0);
		core(IORING_OP_UNLINKAT, AT_FDCWD, 0xa000, 0, 0);
		want->unlink_flags = 0;
	}
	T(io_uring_prep_renameat) {
		io_uring_prep_renameat(got, 7, a, 8, b, 1);
		core(IORING_OP_RENAMEAT, 7, 0xa000, 8, 0xb000);
		want->rename_flags = 1;
	}
	T(io_uring_prep_rename) {
		io_uring_prep_rename(got, a, b);
		core(IORING_OP_RENAMEAT, AT_FDCWD, 0xa000, (__u32) AT_FDCWD, 0xb000);
		want->rename_flags = 0;
	}
	T(io_uring_prep_mkdirat) {
		io_uring_prep_mkdirat(got, 7, a, 0755);
		core(IORING_OP_MKDIRAT, 7, 0xa000, 0755, 0);
	}
	T(io_uring_prep_mkdir) {
		io_uring_prep_mkdir(got, a, 0700);
		core(IORING_OP_MKDIRAT, AT_FDCWD, 0xa000, 0700, 0);
	}
	T(io_uring_prep_symlinkat) {
		io_uring_prep_symlinkat(got, a, 7, b);
		core(IORING_OP_SYMLINKAT, 7, 0xa000, 0, 0xb000);
	}
	T(io_uring_prep_symlink) {
		io_uring_prep_symlink(got, a, b);
		core(IORING_OP_SYMLINKAT, AT_FDCWD, 0xa000, 0, 0xb000);
	}
	T(io_uring_prep_linkat) {
		io_uring_prep_linkat(got, 7, a, 8, b, AT_SYMLINK_FOLLOW);
		core(IORING_OP_LINKAT, 7, 0xa000, 8, 0xb000);
		want->hardlink_flags = AT_SYMLINK_FOLLOW;
	}
	T(io_uring_prep_link) {
		io_uring_prep_link(got, a, b, 0);
		core(IORING_OP_LINKAT, AT_FDCWD, 0xa000, (__u32) AT_FDCWD, 0xb000);
		want->hardlink_flags = 0;
	}
	T(io_uring_prep_getxattr) {
		io_uring_prep_getxattr(got, a, (char *) P(0xe000), b, 64);
		core(IORING_OP_GETXATTR, 0, 0xa000, 64, 0xe000);
		want->addr3 = 0xb000; want->xattr_flags = 0;
	}
	T(io_uring_prep_setxattr) {
		io_uring_prep_setxattr(got, a, (const char *) P(0xe000), b, 1, 64);
		core(IORING_OP_SETXATTR, 0, 0xa000, 64, 0xe000);
		want->addr3 = 0xb000; want->xattr_flags = 1;
	}
	T(io_uring_prep_fgetxattr) {
		io_uring_prep_fgetxattr(got, 4, a, (char *) P(0xe000), 64);
		core(IORING_OP_FGETXATTR, 4, 0xa000, 64, 0xe000);
		want->xattr_flags = 0;
	}
	T(io_uring_prep_fsetxattr) {
		io_uring_prep_fsetxattr(got, 4, a, (const char *) P(0xe000), 2, 64);
		core(IORING_OP_FSETXATTR, 4, 0xa000, 64, 0xe000);
		want->xattr_flags = 2;
	}
	T(io_uring_prep_files_update) {
		io_uring_prep_files_update(got, (int *) P(0xf000), 4, -1);
		core(IORING_OP_FILES_UPDATE, -1, 0xf000, 4, (__u64) -1);
	}
	T(io_uring_prep_fixed_fd_install) {
		io_uring_prep_fixed_fd_install(got, 3, 0);
		core(IORING_OP_FIXED_FD_INSTALL, 3, 0, 0, 0);
		want->flags = IOSQE_FIXED_FILE; want->install_fd_flags = 0;
	}
	T(io_uring_prep_pipe) {
		io_uring_prep_pipe(got, (int *) P(0xf000), O_CLOEXEC);
		core(IORING_OP_PIPE, 0, 0xf000, 0, 0);
		want->pipe_flags = O_CLOEXEC;
	}
	T(io_uring_prep_pipe_direct) {
		io_uring_prep_pipe_direct(got, (int *) P(0xf000), 0, 1);
		core(IORING_OP_PIPE, 0, 0xf000, 0, 0);
		want->pipe_flags = 0; want->file_index = 2;
	}
}

static void test_misc(void)
{
	T(io_uring_prep_provide_buffers) {
		io_uring_prep_provide_buffers(got, P(0x10000), 4096, 8, 3, 100);
		/* nr in fd, bid in off */
		core(IORING_OP_PROVIDE_BUFFERS, 8, 0x10000, 4096, 100);
		want->buf_group = 3;
	}
	T(io_uring_prep_remove_buffers) {
		io_uring_prep_remove_buffers(got, 8, 3);
		core(IORING_OP_REMOVE_BUFFERS, 8, 0, 0, 0);
		want->buf_group = 3;
	}
	T(io_uring_prep_msg_ring) {
		io_uring_prep_msg_ring(got, 10, 0x55, 0x1122334455667788ULL, 0);
		core(IORING_OP_MSG_RING, 10, 0, 0x55, 0x1122334455667788ULL);
		want->msg_ring_flags = 0;
	}
	T(io_uring_prep_msg_ring_cqe_flags) {
		io_uring_prep_msg_ring_cqe_flags(got, 10, 1, 2, 0, IORING_CQE_F_MORE);
		core(IORING_OP_MSG_RING, 10, 0, 1, 2);
		want->msg_ring_flags = IORING_MSG_RING_FLAGS_PASS;
		want->file_index = IORING_CQE_F_MORE;
	}
	T(io_uring_prep_msg_ring_fd) {
		io_uring_prep_msg_ring_fd(got, 10, 4, 6, 99, 0);
		core(IORING_OP_MSG_RING, 10, IORING_MSG_SEND_FD, 0, 99);
		want->addr3 = 4; want->file_index = 7; want->msg_ring_flags = 0;
	}
	T(io_uring_prep_msg_ring_fd_alloc) {
		io_uring_prep_msg_ring_fd_alloc(got, 10, -5, 99, IORING_MSG_RING_CQE_SKIP);
		core(IORING_OP_MSG_RING, 10, IORING_MSG_SEND_FD, 0, 99);
		want->addr3 = (__u64) -5;	/* source fd is sign-extended */
		want->file_index = IORING_FILE_INDEX_ALLOC;
		want->msg_ring_flags = IORING_MSG_RING_CQE_SKIP;
	}
	T(io_uring_prep_waitid) {
		io_uring_prep_waitid(got, P_PID, 1234, (siginfo_t *) P(0x11000), WEXITED, 0);
		/* id in fd, idtype in len, infop in addr2, options in file_index */
		core(IORING_OP_WAITID, 1234, 0, P_PID, 0x11000);
		want->waitid_flags = 0; want->file_index = WEXITED;
	}
	T(io_uring_prep_futex_wait) {
		io_uring_prep_futex_wait(got, (const uint32_t *) P(0x12000), 5, ~0ULL, 2, 0);
		/* futex2 flags in fd, value in off, mask in addr3 */
		core(IORING_OP_FUTEX_WAIT, 2, 0x12000, 0, 5);
		want->futex_flags = 0; want->addr3 = ~0ULL;
	}
	T(io_uring_prep_futex_wake) {
		io_uring_prep_futex_wake(got, (const uint32_t *) P(0x12000), 1, 0xff, 2, 0);
		core(IORING_OP_FUTEX_WAKE, 2, 0x12000, 0, 1);
		want->futex_flags = 0; want->addr3 = 0xff;
	}
	T(io_uring_prep_futex_waitv) {
		io_uring_prep_futex_waitv(got, (const struct futex_waitv *) P(0x13000), 3, 0);
		core(IORING_OP_FUTEX_WAITV, 0, 0x13000, 3, 0);
		want->futex_flags = 0;
	}
}

static void test_uring_cmd(void)
{
	T(__io_uring_prep_uring_cmd) {
		__io_uring_prep_uring_cmd(got, IORING_OP_URING_CMD, 0x77, 3);
		want->opcode = IORING_OP_URING_CMD; want->fd = 3;
		want->cmd_op = 0x77; want->__pad1 = 0; want->addr = 0; want->len = 0;
	}
	T(io_uring_prep_uring_cmd) {
		io_uring_prep_uring_cmd(got, 0x88, 3);
		want->opcode = IORING_OP_URING_CMD; want->fd = 3;
		want->cmd_op = 0x88; want->__pad1 = 0; want->addr = 0; want->len = 0;
	}
	T(io_uring_prep_uring_cmd128) {
		io_uring_prep_uring_cmd128(got, 0x88, 3);
		want->opcode = IORING_OP_URING_CMD128; want->fd = 3;
		want->cmd_op = 0x88; want->__pad1 = 0; want->addr = 0; want->len = 0;
	}
	T(io_uring_prep_cmd_sock) {
		io_uring_prep_cmd_sock(got, SOCKET_URING_OP_SETSOCKOPT, 3, SOL_SOCKET,
				       SO_REUSEADDR, P(0x14000), 4);
		want->opcode = IORING_OP_URING_CMD; want->fd = 3;
		want->cmd_op = SOCKET_URING_OP_SETSOCKOPT; want->__pad1 = 0; want->len = 0;
		want->level = SOL_SOCKET; want->optname = SO_REUSEADDR;
		want->optval = 0x14000; want->optlen = 4;
	}
	T(io_uring_prep_cmd_getsockname) {
		io_uring_prep_cmd_getsockname(got, 3, (struct sockaddr *) P(0x5000),
					      (socklen_t *) P(0x5100), 1);
		want->opcode = IORING_OP_URING_CMD; want->fd = 3;
		want->cmd_op = SOCKET_URING_OP_GETSOCKNAME; want->__pad1 = 0; want->len = 0;
		want->addr = 0x5000; want->addr3 = 0x5100; want->optlen = 1;
	}
	T(io_uring_prep_cmd_discard) {
		io_uring_prep_cmd_discard(got, 3, 4096, 1 << 20);
		want->opcode = IORING_OP_URING_CMD; want->fd = 3;
		want->cmd_op = BLOCK_URING_CMD_DISCARD; want->__pad1 = 0; want->len = 0;
		want->addr = 4096; want->addr3 = 1 << 20;
	}
	T(io_uring_prep_cmd_zone_reset_all) {
		io_uring_prep_cmd_zone_reset_all(got, 3);
		want->opcode = IORING_OP_URING_CMD; want->fd = 3;
		want->cmd_op = BLOCK_URING_CMD_ZONE_RESET_ALL; want->__pad1 = 0;
		want->addr = 0; want->len = 0;
	}
}

/* get_sqe / get_sqe128 on a fake in-memory ring: slot choice and reset. */
static void test_get_sqe(void)
{
	static struct io_uring_sqe sqes[8];
	unsigned khead = 0, ktail = 0, kflags = 0;
	struct io_uring ring;
	struct io_uring_sqe *s;

	memset(&ring, 0, sizeof(ring));
	ring.sq.khead = &khead;
	ring.sq.ktail = &ktail;
	ring.sq.kflags = &kflags;
	ring.sq.sqes = sqes;
	ring.sq.ring_mask = 7;
	ring.sq.ring_entries = 8;
	ring.flags = IORING_SETUP_SQE_MIXED;
	ring.sq.sqe_tail = 6;
	khead = 2;

	start("io_uring_get_sqe");
	memset(sqes, GARBAGE, sizeof(sqes));
	s = io_uring_get_sqe(&ring);
	if (s != &sqes[6] || ring.sq.sqe_tail != 7 || s->flags || s->ioprio ||
	    s->rw_flags || s->buf_index || s->personality || s->file_index ||
	    s->addr3 || s->__pad2[0] || s->opcode != GARBAGE) {
		printf("FAIL io_uring_get_sqe\n");
		failures++;
	}

	/* tail at the last slot: a skip-success NOP pads it, entry wraps to 0 */
	start("io_uring_get_sqe128/wrap");
	s = io_uring_get_sqe128(&ring);
	if (s != &sqes[0] || ring.sq.sqe_tail != 10 ||
	    sqes[7].opcode != IORING_OP_NOP ||
	    sqes[7].flags != IOSQE_CQE_SKIP_SUCCESS || sqes[7].fd != -1) {
		printf("FAIL io_uring_get_sqe128/wrap\n");
		failures++;
	}

	start("io_uring_get_sqe/full");
	khead = 2;
	if (io_uring_get_sqe(&ring) != NULL) {
		printf("FAIL io_uring_get_sqe/full\n");
		failures++;
	}

	start("io_uring_get_sqe128/plain ring");
	ring.flags = 0;
	khead = 10;
	if (io_uring_get_sqe128(&ring) != NULL) {
		printf("FAIL io_uring_get_sqe128/plain ring\n");
		failures++;
	}
}

int main(void)
{
	if (sizeof(struct io_uring_sqe) != 64 || sizeof(struct io_uring) != 216 ||
	    sizeof(struct io_uring_sq) != 104 || sizeof(struct io_uring_cq) != 88 ||
	    sizeof(struct io_uring_cqe_iter) != 24 ||
	    sizeof(struct io_uring_zcrx_rq) != 40) {
		printf("FAIL struct sizes\n");
		return 1;
	}
	test_setters();
	test_rw();
	test_poll_timeout_cancel();
	test_net();
	test_fs();
	test_misc();
	test_uring_cmd();
	test_get_sqe();
	printf("%d cases, %d failures\n", cases, failures);
	return failures ? 1 : 0;
}
