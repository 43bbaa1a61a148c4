/* SPDX-License-Identifier: MIT */
#ifndef LIB_URING_H
#define LIB_URING_H

/*
 * Public interface of liburing-rs, a Rust implementation of liburing 2.15.
 * Source and binary compatible with liburing's own header: same types,
 * same exported functions, and the same inline helpers, which must build
 * exactly the submission entries liburing builds.
 */

/* System headers that programs written against liburing rely on. */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <inttypes.h>
#include <time.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/swab.h>
#include <linux/filter.h>
#include <sys/wait.h>

/*
 * In strict ISO C mode glibc hides the POSIX types used below; pull in just
 * those definitions so the header still builds there.
 */
#if defined(__GLIBC__) && !defined(__USE_POSIX)
#include <bits/types/sigset_t.h>
#include <bits/types/siginfo_t.h>
#endif
#if defined(__GLIBC__) && !defined(__USE_XOPEN) && !defined(__USE_XOPEN2K8)
#include <bits/types/idtype_t.h>
#endif
#if defined(__GLIBC__) && !defined(__id_t_defined)
/* same guard protocol glibc uses, so a later <sys/types.h> won't clash */
typedef __id_t id_t;
#define __id_t_defined
#endif

/* AT_FDCWD is POSIX-2008 only; its value is fixed by the Linux ABI. */
#ifdef AT_FDCWD
#define __IO_URING_CWD AT_FDCWD
#else
#define __IO_URING_CWD (-100)
#endif

#include "liburing/compat.h"
#include "liburing/io_uring.h"
#include "liburing/io_uring/query.h"
#include "liburing/io_uring/bpf_filter.h"
#include "liburing/io_uring_version.h"

#ifndef uring_unlikely
#define uring_unlikely(cond)	__builtin_expect(!!(cond), 0)
#endif

#ifndef uring_likely
#define uring_likely(cond)	__builtin_expect(!!(cond), 1)
#endif

/*
 * IOURINGINLINE marks helpers that liburing-ffi.so exports as real symbols
 * (src/ffi.c defines it empty before including this file); _LOCAL_INLINE
 * marks private helpers that stay inline everywhere. C++20 modules cannot
 * export internal-linkage functions, hence plain "inline" there.
 */
#ifndef IOURINGINLINE
#if defined(__cplusplus) && __cplusplus >= 202002L
#define IOURINGINLINE inline
#else
#define IOURINGINLINE static inline
#endif
#endif

#ifndef _LOCAL_INLINE
#if defined(__cplusplus) && __cplusplus >= 202002L
#define _LOCAL_INLINE inline
#else
#define _LOCAL_INLINE static inline
#endif
#endif

/* Must come after _LOCAL_INLINE: the C++ barrier templates use it. */
#include "liburing/barrier.h"

/* Syscall numbers, for C libraries that predate io_uring. */
#ifdef __alpha__
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup		535
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter		536
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register		537
#endif
#elif defined __mips__
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup		(__NR_Linux + 425)
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter		(__NR_Linux + 426)
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register		(__NR_Linux + 427)
#endif
#else
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup		425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter		426
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register		427
#endif
#endif

#ifdef __cplusplus
#define LIBURING_NOEXCEPT noexcept
#else
#define LIBURING_NOEXCEPT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Application-side view of the submission queue. */
struct io_uring_sq {
	unsigned *khead;
	unsigned *ktail;
	/* deprecated, read ring_mask instead */
	unsigned *kring_mask;
	/* deprecated, read ring_entries instead */
	unsigned *kring_entries;
	unsigned *kflags;
	unsigned *kdropped;
	unsigned *array;
	struct io_uring_sqe *sqes;

	unsigned sqe_head;
	unsigned sqe_tail;

	size_t ring_sz;
	void *ring_ptr;

	unsigned ring_mask;
	unsigned ring_entries;

	unsigned sqes_sz;
	unsigned pad;
};

/* Application-side view of the completion queue. */
struct io_uring_cq {
	unsigned *khead;
	unsigned *ktail;
	/* deprecated, read ring_mask instead */
	unsigned *kring_mask;
	/* deprecated, read ring_entries instead */
	unsigned *kring_entries;
	unsigned *kflags;
	unsigned *koverflow;
	struct io_uring_cqe *cqes;

	size_t ring_sz;
	void *ring_ptr;

	unsigned ring_mask;
	unsigned ring_entries;

	unsigned pad[2];
};

struct io_uring {
	struct io_uring_sq sq;
	struct io_uring_cq cq;
	unsigned flags;
	int ring_fd;

	unsigned features;
	int enter_ring_fd;
	__u8 int_flags;
	__u8 pad[3];
	unsigned pad2;
};

/* Refill queue of a zero-copy receive interface queue. */
struct io_uring_zcrx_rq {
	__u32 *khead;
	__u32 *ktail;
	__u32 rq_tail;
	unsigned ring_entries;

	struct io_uring_zcrx_rqe *rqes;
	void *ring_ptr;
};

_LOCAL_INLINE __u64 uring_ptr_to_u64(const void *ptr) LIBURING_NOEXCEPT
{
	return (__u64) (uintptr_t) ptr;
}

/*
 * Functions implemented by the library.
 */

/* Probe results are malloc'ed; release them with io_uring_free_probe(). */
struct io_uring_probe *io_uring_get_probe_ring(struct io_uring *ring)
	LIBURING_NOEXCEPT;
struct io_uring_probe *io_uring_get_probe(void) LIBURING_NOEXCEPT;
void io_uring_free_probe(struct io_uring_probe *probe) LIBURING_NOEXCEPT;

IOURINGINLINE int io_uring_opcode_supported(const struct io_uring_probe *p,
					    int op) LIBURING_NOEXCEPT
{
	if (op < 0 || op > (int) p->last_op)
		return 0;
	return (p->ops[op].flags & IO_URING_OP_SUPPORTED) ? 1 : 0;
}

int io_uring_queue_init_mem(unsigned entries, struct io_uring *ring,
			    struct io_uring_params *p,
			    void *buf, size_t buf_size) LIBURING_NOEXCEPT;
int io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
			       struct io_uring_params *p) LIBURING_NOEXCEPT;
int io_uring_queue_init(unsigned entries, struct io_uring *ring,
			unsigned flags) LIBURING_NOEXCEPT;
int io_uring_queue_mmap(int fd, struct io_uring_params *p,
			struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_ring_dontfork(struct io_uring *ring) LIBURING_NOEXCEPT;
void io_uring_queue_exit(struct io_uring *ring) LIBURING_NOEXCEPT;
unsigned io_uring_peek_batch_cqe(struct io_uring *ring,
				 struct io_uring_cqe **cqes,
				 unsigned count) LIBURING_NOEXCEPT;
int io_uring_wait_cqes(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
		       unsigned wait_nr, struct __kernel_timespec *ts,
		       sigset_t *sigmask) LIBURING_NOEXCEPT;
int io_uring_wait_cqes_min_timeout(struct io_uring *ring,
				   struct io_uring_cqe **cqe_ptr,
				   unsigned wait_nr,
				   struct __kernel_timespec *ts,
				   unsigned int min_ts_usec,
				   sigset_t *sigmask) LIBURING_NOEXCEPT;
int io_uring_wait_cqe_timeout(struct io_uring *ring,
			      struct io_uring_cqe **cqe_ptr,
			      struct __kernel_timespec *ts) LIBURING_NOEXCEPT;
int io_uring_submit(struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
	LIBURING_NOEXCEPT;
int io_uring_submit_and_wait_timeout(struct io_uring *ring,
				     struct io_uring_cqe **cqe_ptr,
				     unsigned wait_nr,
				     struct __kernel_timespec *ts,
				     sigset_t *sigmask) LIBURING_NOEXCEPT;
int io_uring_submit_and_wait_min_timeout(struct io_uring *ring,
					 struct io_uring_cqe **cqe_ptr,
					 unsigned wait_nr,
					 struct __kernel_timespec *ts,
					 unsigned min_wait,
					 sigset_t *sigmask) LIBURING_NOEXCEPT;
int io_uring_submit_and_wait_reg(struct io_uring *ring,
				 struct io_uring_cqe **cqe_ptr,
				 unsigned wait_nr, int reg_index)
	LIBURING_NOEXCEPT;

int io_uring_register_wait_reg(struct io_uring *ring,
			       struct io_uring_reg_wait *reg, int nr)
	LIBURING_NOEXCEPT;
int io_uring_resize_rings(struct io_uring *ring, struct io_uring_params *p)
	LIBURING_NOEXCEPT;
int io_uring_clone_buffers_offset(struct io_uring *dst, struct io_uring *src,
				  unsigned int dst_off, unsigned int src_off,
				  unsigned int nr, unsigned int flags)
	LIBURING_NOEXCEPT;
int __io_uring_clone_buffers_offset(struct io_uring *dst,
				    struct io_uring *src,
				    unsigned int dst_off, unsigned int src_off,
				    unsigned int nr, unsigned int flags)
	LIBURING_NOEXCEPT;
int io_uring_clone_buffers(struct io_uring *dst, struct io_uring *src)
	LIBURING_NOEXCEPT;
int __io_uring_clone_buffers(struct io_uring *dst, struct io_uring *src,
			     unsigned int flags) LIBURING_NOEXCEPT;
int io_uring_register_buffers(struct io_uring *ring,
			      const struct iovec *iovecs,
			      unsigned nr_iovecs) LIBURING_NOEXCEPT;
int io_uring_register_buffers_tags(struct io_uring *ring,
				   const struct iovec *iovecs,
				   const __u64 *tags, unsigned nr)
	LIBURING_NOEXCEPT;
int io_uring_register_buffers_sparse(struct io_uring *ring, unsigned nr)
	LIBURING_NOEXCEPT;
int io_uring_register_buffers_update_tag(struct io_uring *ring,
					 unsigned off,
					 const struct iovec *iovecs,
					 const __u64 *tags, unsigned nr)
	LIBURING_NOEXCEPT;
int io_uring_unregister_buffers(struct io_uring *ring) LIBURING_NOEXCEPT;

int io_uring_register_files(struct io_uring *ring, const int *files,
			    unsigned nr_files) LIBURING_NOEXCEPT;
int io_uring_register_files_tags(struct io_uring *ring, const int *files,
				 const __u64 *tags, unsigned nr)
	LIBURING_NOEXCEPT;
int io_uring_register_files_sparse(struct io_uring *ring, unsigned nr)
	LIBURING_NOEXCEPT;
int io_uring_register_files_update_tag(struct io_uring *ring, unsigned off,
				       const int *files, const __u64 *tags,
				       unsigned nr_files) LIBURING_NOEXCEPT;

int io_uring_unregister_files(struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_register_files_update(struct io_uring *ring, unsigned off,
				   const int *files, unsigned nr_files)
	LIBURING_NOEXCEPT;
int io_uring_register_eventfd(struct io_uring *ring, int fd)
	LIBURING_NOEXCEPT;
int io_uring_register_eventfd_async(struct io_uring *ring, int fd)
	LIBURING_NOEXCEPT;
int io_uring_unregister_eventfd(struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_register_probe(struct io_uring *ring, struct io_uring_probe *p,
			    unsigned nr) LIBURING_NOEXCEPT;
int io_uring_register_personality(struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_unregister_personality(struct io_uring *ring, int id)
	LIBURING_NOEXCEPT;
int io_uring_register_restrictions(struct io_uring *ring,
				   struct io_uring_restriction *res,
				   unsigned int nr_res) LIBURING_NOEXCEPT;
int io_uring_enable_rings(struct io_uring *ring) LIBURING_NOEXCEPT;
int __io_uring_sqring_wait(struct io_uring *ring) LIBURING_NOEXCEPT;
#ifdef _GNU_SOURCE
int io_uring_register_iowq_aff(struct io_uring *ring, size_t cpusz,
			       const cpu_set_t *mask) LIBURING_NOEXCEPT;
#endif
int io_uring_unregister_iowq_aff(struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_register_iowq_max_workers(struct io_uring *ring,
				       unsigned int *values) LIBURING_NOEXCEPT;
int io_uring_register_ring_fd(struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_unregister_ring_fd(struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_close_ring_fd(struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_register_buf_ring(struct io_uring *ring,
			       struct io_uring_buf_reg *reg,
			       unsigned int flags) LIBURING_NOEXCEPT;
int io_uring_unregister_buf_ring(struct io_uring *ring, int bgid)
	LIBURING_NOEXCEPT;
int io_uring_buf_ring_head(struct io_uring *ring, int buf_group,
			   uint16_t *head) LIBURING_NOEXCEPT;
int io_uring_register_sync_cancel(struct io_uring *ring,
				  struct io_uring_sync_cancel_reg *reg)
	LIBURING_NOEXCEPT;
int io_uring_register_sync_msg(struct io_uring_sqe *sqe) LIBURING_NOEXCEPT;

int io_uring_register_file_alloc_range(struct io_uring *ring,
				       unsigned off, unsigned len)
	LIBURING_NOEXCEPT;

int io_uring_register_napi(struct io_uring *ring, struct io_uring_napi *napi)
	LIBURING_NOEXCEPT;
int io_uring_unregister_napi(struct io_uring *ring,
			     struct io_uring_napi *napi) LIBURING_NOEXCEPT;
int io_uring_register_ifq(struct io_uring *ring,
			  struct io_uring_zcrx_ifq_reg *reg) LIBURING_NOEXCEPT;
int io_uring_register_zcrx_ctrl(struct io_uring *ring, struct zcrx_ctrl *ctrl)
	LIBURING_NOEXCEPT;

int io_uring_register_clock(struct io_uring *ring,
			    struct io_uring_clock_register *arg)
	LIBURING_NOEXCEPT;
int io_uring_register_bpf_filter(struct io_uring *ring,
				 struct io_uring_bpf *bpf) LIBURING_NOEXCEPT;
int io_uring_register_bpf_filter_task(struct io_uring_bpf *bpf)
	LIBURING_NOEXCEPT;

int io_uring_register_query(struct io_uring_query_hdr *query)
	LIBURING_NOEXCEPT;

int io_uring_get_events(struct io_uring *ring) LIBURING_NOEXCEPT;
int io_uring_submit_and_get_events(struct io_uring *ring) LIBURING_NOEXCEPT;

/* Thin wrappers around the three io_uring system calls. */
int io_uring_enter(unsigned int fd, unsigned int to_submit,
		   unsigned int min_complete, unsigned int flags,
		   sigset_t *sig) LIBURING_NOEXCEPT;
int io_uring_enter2(unsigned int fd, unsigned int to_submit,
		    unsigned int min_complete, unsigned int flags,
		    void *arg, size_t sz) LIBURING_NOEXCEPT;
int io_uring_setup(unsigned int entries, struct io_uring_params *p)
	LIBURING_NOEXCEPT;
int io_uring_register(unsigned int fd, unsigned int opcode, const void *arg,
		      unsigned int nr_args) LIBURING_NOEXCEPT;

int io_uring_register_region(struct io_uring *ring,
			     struct io_uring_mem_region_reg *reg)
	LIBURING_NOEXCEPT;

/* Provided-buffer rings: allocate+register, and unregister+free. */
struct io_uring_buf_ring *io_uring_setup_buf_ring(struct io_uring *ring,
						  unsigned int nentries,
						  int bgid, unsigned int flags,
						  int *err) LIBURING_NOEXCEPT;
int io_uring_free_buf_ring(struct io_uring *ring, struct io_uring_buf_ring *br,
			   unsigned int nentries, int bgid) LIBURING_NOEXCEPT;

/* Slow path behind the peek/wait helpers; not meant to be called directly. */
int __io_uring_get_cqe(struct io_uring *ring,
		       struct io_uring_cqe **cqe_ptr, unsigned submit,
		       unsigned wait_nr, sigset_t *sigmask) LIBURING_NOEXCEPT;

int io_uring_set_iowait(struct io_uring *ring, bool enable_iowait)
	LIBURING_NOEXCEPT;

/* user_data of the library's internal timeout requests (pre EXT_ARG). */
#define LIBURING_UDATA_TIMEOUT	((__u64) -1)

/*
 * CQ indexing: rings set up with IORING_SETUP_CQE32 use two io_uring_cqe
 * slots per entry, so an index is shifted left by 1 on those.
 */
IOURINGINLINE unsigned io_uring_cqe_shift_from_flags(unsigned flags)
	LIBURING_NOEXCEPT
{
	return (flags & IORING_SETUP_CQE32) ? 1U : 0U;
}

IOURINGINLINE unsigned io_uring_cqe_shift(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return io_uring_cqe_shift_from_flags(ring->flags);
}

/* Slots taken by this CQE: two for a 32-byte entry on a mixed ring. */
IOURINGINLINE unsigned io_uring_cqe_nr(const struct io_uring_cqe *cqe)
{
	return (cqe->flags & IORING_CQE_F_32) ? 2U : 1U;
}

struct io_uring_cqe_iter {
	struct io_uring_cqe *cqes;
	unsigned mask;
	unsigned shift;
	unsigned head;
	unsigned tail;
};

IOURINGINLINE struct io_uring_cqe_iter
io_uring_cqe_iter_init(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	struct io_uring_cqe_iter it;

	it.cqes = ring->cq.cqes;
	it.mask = ring->cq.ring_mask;
	it.shift = io_uring_cqe_shift(ring);
	it.head = *ring->cq.khead;
	/* pairs with the kernel's release of the tail: CQEs below it are valid */
	it.tail = io_uring_smp_load_acquire(ring->cq.ktail);
	return it;
}

IOURINGINLINE bool io_uring_cqe_iter_next(struct io_uring_cqe_iter *iter,
					  struct io_uring_cqe **cqe)
	LIBURING_NOEXCEPT
{
	struct io_uring_cqe *c;
	unsigned pos = iter->head;

	if (pos == iter->tail)
		return false;

	/* A 32-byte CQE ring (shift 1) spans two array entries per slot. */
	c = &iter->cqes[(size_t) (pos & iter->mask) << iter->shift];
	/* Two-slot CQEs (CQE_MIXED rings only) advance one more. */
	iter->head = pos + 1 + ((c->flags & IORING_CQE_F_32) >> 15);
	*cqe = c;
	return true;
}

/*
 * Walk the ready CQEs without consuming them; follow with
 * io_uring_cq_advance(). The second argument (any unsigned lvalue, called
 * head by convention) is only kept updated for compatibility. The macro's
 * own names are reserved ones, so that no argument can be mistaken for the
 * iterator's member.
 */
#define io_uring_for_each_cqe(ring, __uring_head, cqe)			\
	for (struct io_uring_cqe_iter __io_uring_cqe_it =			\
		     io_uring_cqe_iter_init(ring);				\
	     ((__uring_head) = __io_uring_cqe_it.head),			\
	     io_uring_cqe_iter_next(&__io_uring_cqe_it, &(cqe));		\
	     (void) (__uring_head))

/* Hand nr consumed CQ slots back to the kernel. */
IOURINGINLINE void io_uring_cq_advance(struct io_uring *ring, unsigned nr)
	LIBURING_NOEXCEPT
{
	unsigned *khead = ring->cq.khead;

	if (!nr)
		return;
	/* release: our reads of the CQEs complete before the kernel reuses them */
	io_uring_smp_store_release(khead, *khead + nr);
}

/* Mark one CQE from io_uring_peek_cqe()/io_uring_wait_cqe() as consumed. */
IOURINGINLINE void io_uring_cqe_seen(struct io_uring *ring,
				     struct io_uring_cqe *cqe)
	LIBURING_NOEXCEPT
{
	if (cqe != NULL)
		io_uring_cq_advance(ring, io_uring_cqe_nr(cqe));
}

/*
 * SQE field setters and user data.
 */

IOURINGINLINE void io_uring_sqe_set_data(struct io_uring_sqe *sqe, void *data)
	LIBURING_NOEXCEPT
{
	sqe->user_data = (unsigned long) data;
}

IOURINGINLINE void *io_uring_cqe_get_data(const struct io_uring_cqe *cqe)
	LIBURING_NOEXCEPT
{
	return (void *) (uintptr_t) cqe->user_data;
}

IOURINGINLINE void io_uring_sqe_set_data64(struct io_uring_sqe *sqe,
					   __u64 data)
	LIBURING_NOEXCEPT
{
	sqe->user_data = data;
}

IOURINGINLINE __u64 io_uring_cqe_get_data64(const struct io_uring_cqe *cqe)
{
	return cqe->user_data;
}

/* Feature test: the *_data64 accessors exist. */
#define LIBURING_HAVE_DATA64

IOURINGINLINE void io_uring_sqe_set_flags(struct io_uring_sqe *sqe,
					  unsigned flags)
	LIBURING_NOEXCEPT
{
	sqe->flags = (__u8) flags;
}

IOURINGINLINE void io_uring_sqe_set_buf_group(struct io_uring_sqe *sqe,
					      int bgid)
	LIBURING_NOEXCEPT
{
	sqe->buf_group = (__u16) bgid;
}

/* The kernel reads file_index as slot+1; zero means "not a direct fd". */
_LOCAL_INLINE void __io_uring_set_target_fixed_file(struct io_uring_sqe *sqe,
						    unsigned int file_index)
	LIBURING_NOEXCEPT
{
	sqe->file_index = file_index + 1;
}

/* IORING_FILE_INDEX_ALLOC is passed through as-is, any other slot +1. */
_LOCAL_INLINE void __io_uring_set_direct_slot(struct io_uring_sqe *sqe,
					      unsigned int slot)
	LIBURING_NOEXCEPT
{
	sqe->file_index = (slot == IORING_FILE_INDEX_ALLOC) ? slot : slot + 1;
}

/*
 * Reset the fields that prep helpers don't all write, so a recycled SQE
 * never leaks flags from its previous use. opcode, fd, off, addr, len and
 * user_data are left alone: every prep helper sets the first five, and
 * callers set user_data themselves.
 */
IOURINGINLINE void io_uring_initialize_sqe(struct io_uring_sqe *sqe)
	LIBURING_NOEXCEPT
{
	sqe->flags = 0;
	sqe->ioprio = 0;
	sqe->rw_flags = 0;
	sqe->buf_index = 0;
	sqe->personality = 0;
	sqe->file_index = 0;
	sqe->addr3 = 0;
	sqe->__pad2[0] = 0;
}

/*
 * Common core of the prep helpers: writes opcode, fd, addr, len and off,
 * and nothing else.
 */
_LOCAL_INLINE void __io_uring_sqe_core(struct io_uring_sqe *sqe, int op,
				       int fd, __u64 addr, unsigned len,
				       __u64 off) LIBURING_NOEXCEPT
{
	sqe->opcode = (__u8) op;
	sqe->fd = fd;
	sqe->off = off;
	sqe->addr = addr;
	sqe->len = len;
}

IOURINGINLINE void io_uring_prep_rw(int op, struct io_uring_sqe *sqe, int fd,
				    const void *addr, unsigned len,
				    __u64 offset)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, op, fd, (unsigned long) addr, len, offset);
}

/*
 * Splice nbytes from fd_in to fd_out; at least one must be a pipe. An
 * offset of -1 means "use and advance the file position"; for a pipe it
 * must be -1.
 */
IOURINGINLINE void io_uring_prep_splice(struct io_uring_sqe *sqe,
					int fd_in, int64_t off_in,
					int fd_out, int64_t off_out,
					unsigned int nbytes,
					unsigned int splice_flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_SPLICE, fd_out, (__u64) off_in,
			    nbytes, (__u64) off_out);
	sqe->splice_fd_in = fd_in;
	sqe->splice_flags = splice_flags;
}

IOURINGINLINE void io_uring_prep_tee(struct io_uring_sqe *sqe,
				     int fd_in, int fd_out,
				     unsigned int nbytes,
				     unsigned int splice_flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_TEE, fd_out, 0, nbytes, 0);
	sqe->splice_fd_in = fd_in;
	sqe->splice_flags = splice_flags;
}

IOURINGINLINE void io_uring_prep_readv(struct io_uring_sqe *sqe, int fd,
				       const struct iovec *iovecs,
				       unsigned nr_vecs, __u64 offset)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_READV, sqe, fd, iovecs, nr_vecs, offset);
}

IOURINGINLINE void io_uring_prep_readv2(struct io_uring_sqe *sqe, int fd,
					const struct iovec *iovecs,
					unsigned nr_vecs, __u64 offset,
					int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_READV, sqe, fd, iovecs, nr_vecs, offset);
	sqe->rw_flags = flags;
}

IOURINGINLINE void io_uring_prep_read_fixed(struct io_uring_sqe *sqe, int fd,
					    void *buf, unsigned nbytes,
					    __u64 offset, int buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_READ_FIXED, sqe, fd, buf, nbytes, offset);
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_readv_fixed(struct io_uring_sqe *sqe, int fd,
					     const struct iovec *iovecs,
					     unsigned nr_vecs, __u64 offset,
					     int flags, int buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_READV_FIXED, sqe, fd, iovecs, nr_vecs,
			 offset);
	sqe->rw_flags = flags;
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_writev(struct io_uring_sqe *sqe, int fd,
					const struct iovec *iovecs,
					unsigned nr_vecs, __u64 offset)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_WRITEV, sqe, fd, iovecs, nr_vecs, offset);
}

IOURINGINLINE void io_uring_prep_writev2(struct io_uring_sqe *sqe, int fd,
					 const struct iovec *iovecs,
					 unsigned nr_vecs, __u64 offset,
					 int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_WRITEV, sqe, fd, iovecs, nr_vecs, offset);
	sqe->rw_flags = flags;
}

IOURINGINLINE void io_uring_prep_write_fixed(struct io_uring_sqe *sqe, int fd,
					     const void *buf, unsigned nbytes,
					     __u64 offset, int buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_WRITE_FIXED, sqe, fd, buf, nbytes, offset);
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_writev_fixed(struct io_uring_sqe *sqe, int fd,
					      const struct iovec *iovecs,
					      unsigned nr_vecs, __u64 offset,
					      int flags, int buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_WRITEV_FIXED, sqe, fd, iovecs, nr_vecs,
			 offset);
	sqe->rw_flags = flags;
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_recvmsg(struct io_uring_sqe *sqe, int fd,
					 struct msghdr *msg, unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_RECVMSG, sqe, fd, msg, 1, 0);
	sqe->msg_flags = flags;
}

IOURINGINLINE void io_uring_prep_recvmsg_multishot(struct io_uring_sqe *sqe,
						   int fd, struct msghdr *msg,
						   unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_recvmsg(sqe, fd, msg, flags);
	sqe->ioprio |= IORING_RECV_MULTISHOT;
}

IOURINGINLINE void io_uring_prep_sendmsg(struct io_uring_sqe *sqe, int fd,
					 const struct msghdr *msg,
					 unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SENDMSG, sqe, fd, msg, 1, 0);
	sqe->msg_flags = flags;
}

/*
 * poll32_events is read by the kernel as a native 32-bit value whose two
 * 16-bit halves are swapped on big-endian hosts (legacy 16-bit field).
 */
_LOCAL_INLINE unsigned __io_uring_prep_poll_mask(unsigned poll_mask)
	LIBURING_NOEXCEPT
{
#if __BYTE_ORDER == __BIG_ENDIAN
	return __swahw32(poll_mask);
#else
	return poll_mask;
#endif
}

IOURINGINLINE void io_uring_prep_poll_add(struct io_uring_sqe *sqe, int fd,
					  unsigned poll_mask)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_POLL_ADD, fd, 0, 0, 0);
	sqe->poll32_events = __io_uring_prep_poll_mask(poll_mask);
}

IOURINGINLINE void io_uring_prep_poll_multishot(struct io_uring_sqe *sqe,
						int fd, unsigned poll_mask)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_POLL_ADD, fd, 0,
			    IORING_POLL_ADD_MULTI, 0);
	sqe->poll32_events = __io_uring_prep_poll_mask(poll_mask);
}

IOURINGINLINE void io_uring_prep_poll_remove(struct io_uring_sqe *sqe,
					     __u64 user_data)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_POLL_REMOVE, -1, user_data, 0, 0);
}

IOURINGINLINE void io_uring_prep_poll_update(struct io_uring_sqe *sqe,
					     __u64 old_user_data,
					     __u64 new_user_data,
					     unsigned poll_mask, unsigned flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_POLL_REMOVE, -1, old_user_data,
			    flags, new_user_data);
	sqe->poll32_events = __io_uring_prep_poll_mask(poll_mask);
}

IOURINGINLINE void io_uring_prep_fsync(struct io_uring_sqe *sqe, int fd,
				       unsigned fsync_flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_FSYNC, fd, 0, 0, 0);
	sqe->fsync_flags = fsync_flags;
}

IOURINGINLINE void io_uring_prep_nop(struct io_uring_sqe *sqe)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_NOP, -1, 0, 0, 0);
}

IOURINGINLINE void io_uring_prep_nop128(struct io_uring_sqe *sqe)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_NOP128, -1, 0, 0, 0);
}

IOURINGINLINE void io_uring_prep_timeout(struct io_uring_sqe *sqe,
					 const struct __kernel_timespec *ts,
					 unsigned count, unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_TIMEOUT, sqe, -1, ts, 1, count);
	sqe->timeout_flags = flags;
}

IOURINGINLINE void io_uring_prep_timeout_remove(struct io_uring_sqe *sqe,
						__u64 user_data, unsigned flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_TIMEOUT_REMOVE, -1, user_data, 0, 0);
	sqe->timeout_flags = flags;
}

IOURINGINLINE void io_uring_prep_timeout_update(struct io_uring_sqe *sqe,
						const struct __kernel_timespec *ts,
						__u64 user_data, unsigned flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_TIMEOUT_REMOVE, -1, user_data, 0,
			    (uintptr_t) ts);
	sqe->timeout_flags = flags | IORING_TIMEOUT_UPDATE;
}

IOURINGINLINE void io_uring_prep_accept(struct io_uring_sqe *sqe, int fd,
					struct sockaddr *addr,
					socklen_t *addrlen, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_ACCEPT, sqe, fd, addr, 0,
			 uring_ptr_to_u64(addrlen));
	sqe->accept_flags = (__u32) flags;
}

/* Accept into a registered-file slot (or IORING_FILE_INDEX_ALLOC). */
IOURINGINLINE void io_uring_prep_accept_direct(struct io_uring_sqe *sqe, int fd,
					       struct sockaddr *addr,
					       socklen_t *addrlen, int flags,
					       unsigned int file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_accept(sqe, fd, addr, addrlen, flags);
	__io_uring_set_direct_slot(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_multishot_accept(struct io_uring_sqe *sqe,
						  int fd, struct sockaddr *addr,
						  socklen_t *addrlen, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_accept(sqe, fd, addr, addrlen, flags);
	sqe->ioprio |= IORING_ACCEPT_MULTISHOT;
}

/* Multishot accept; each new socket goes to a kernel-allocated slot. */
IOURINGINLINE void io_uring_prep_multishot_accept_direct(struct io_uring_sqe *sqe,
							 int fd,
							 struct sockaddr *addr,
							 socklen_t *addrlen,
							 int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_multishot_accept(sqe, fd, addr, addrlen, flags);
	sqe->file_index = IORING_FILE_INDEX_ALLOC;
}

IOURINGINLINE void io_uring_prep_cancel64(struct io_uring_sqe *sqe,
					  __u64 user_data, int flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_ASYNC_CANCEL, -1, user_data, 0, 0);
	sqe->cancel_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_cancel(struct io_uring_sqe *sqe,
					const void *user_data, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_cancel64(sqe, uring_ptr_to_u64(user_data), flags);
}

IOURINGINLINE void io_uring_prep_cancel_fd(struct io_uring_sqe *sqe, int fd,
					   unsigned int flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_ASYNC_CANCEL, fd, 0, 0, 0);
	sqe->cancel_flags = flags | IORING_ASYNC_CANCEL_FD;
}

IOURINGINLINE void io_uring_prep_link_timeout(struct io_uring_sqe *sqe,
					      const struct __kernel_timespec *ts,
					      unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_LINK_TIMEOUT, sqe, -1, ts, 1, 0);
	sqe->timeout_flags = flags;
}

IOURINGINLINE void io_uring_prep_connect(struct io_uring_sqe *sqe, int fd,
					 const struct sockaddr *addr,
					 socklen_t addrlen)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_CONNECT, sqe, fd, addr, 0, addrlen);
}

IOURINGINLINE void io_uring_prep_bind(struct io_uring_sqe *sqe, int fd,
				      const struct sockaddr *addr,
				      socklen_t addrlen)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_BIND, sqe, fd, addr, 0, addrlen);
}

IOURINGINLINE void io_uring_prep_listen(struct io_uring_sqe *sqe, int fd,
					int backlog)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_LISTEN, fd, 0, (unsigned) backlog, 0);
}

struct epoll_event;
IOURINGINLINE void io_uring_prep_epoll_wait(struct io_uring_sqe *sqe, int fd,
					    struct epoll_event *events,
					    int maxevents, unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_EPOLL_WAIT, sqe, fd, events,
			 (unsigned) maxevents, 0);
	sqe->rw_flags = flags;
}

IOURINGINLINE void io_uring_prep_files_update(struct io_uring_sqe *sqe,
					      int *fds, unsigned nr_fds,
					      int offset)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FILES_UPDATE, sqe, -1, fds, nr_fds,
			 (__u64) offset);
}

IOURINGINLINE void io_uring_prep_fallocate(struct io_uring_sqe *sqe, int fd,
					   int mode, __u64 offset, __u64 len)
	LIBURING_NOEXCEPT
{
	/* the length travels in addr, the mode in len */
	__io_uring_sqe_core(sqe, IORING_OP_FALLOCATE, fd, len,
			    (unsigned int) mode, offset);
}

IOURINGINLINE void io_uring_prep_openat(struct io_uring_sqe *sqe, int dfd,
					const char *path, int flags,
					mode_t mode)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_OPENAT, sqe, dfd, path, mode, 0);
	sqe->open_flags = (__u32) flags;
}

/* Open into a registered-file slot (or IORING_FILE_INDEX_ALLOC). */
IOURINGINLINE void io_uring_prep_openat_direct(struct io_uring_sqe *sqe,
					       int dfd, const char *path,
					       int flags, mode_t mode,
					       unsigned file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_openat(sqe, dfd, path, flags, mode);
	__io_uring_set_direct_slot(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_open(struct io_uring_sqe *sqe,
				      const char *path, int flags, mode_t mode)
	LIBURING_NOEXCEPT
{
	io_uring_prep_openat(sqe, __IO_URING_CWD, path, flags, mode);
}

IOURINGINLINE void io_uring_prep_open_direct(struct io_uring_sqe *sqe,
					     const char *path, int flags,
					     mode_t mode, unsigned file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_openat_direct(sqe, __IO_URING_CWD, path, flags, mode,
				    file_index);
}

IOURINGINLINE void io_uring_prep_close(struct io_uring_sqe *sqe, int fd)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_CLOSE, fd, 0, 0, 0);
}

IOURINGINLINE void io_uring_prep_close_direct(struct io_uring_sqe *sqe,
					      unsigned file_index)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_CLOSE, 0, 0, 0, 0);
	__io_uring_set_target_fixed_file(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_read(struct io_uring_sqe *sqe, int fd,
				      void *buf, unsigned nbytes, __u64 offset)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_READ, sqe, fd, buf, nbytes, offset);
}

IOURINGINLINE void io_uring_prep_read_multishot(struct io_uring_sqe *sqe,
						int fd, unsigned nbytes,
						__u64 offset, int buf_group)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_READ_MULTISHOT, fd, 0, nbytes,
			    offset);
	sqe->buf_group = (__u16) buf_group;
	/* buffers always come from the group, so this overrides any flags */
	sqe->flags = IOSQE_BUFFER_SELECT;
}

IOURINGINLINE void io_uring_prep_write(struct io_uring_sqe *sqe, int fd,
				       const void *buf, unsigned nbytes,
				       __u64 offset)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_WRITE, sqe, fd, buf, nbytes, offset);
}

struct statx;
IOURINGINLINE void io_uring_prep_statx(struct io_uring_sqe *sqe, int dfd,
				       const char *path, int flags,
				       unsigned mask, struct statx *statxbuf)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_STATX, sqe, dfd, path, mask,
			 uring_ptr_to_u64(statxbuf));
	sqe->statx_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_fadvise(struct io_uring_sqe *sqe, int fd,
					 __u64 offset, __u32 len, int advice)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_FADVISE, fd, 0, len, offset);
	sqe->fadvise_advice = (__u32) advice;
}

IOURINGINLINE void io_uring_prep_madvise(struct io_uring_sqe *sqe, void *addr,
					 __u32 length, int advice)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_MADVISE, sqe, -1, addr, length, 0);
	sqe->fadvise_advice = (__u32) advice;
}

/* 64-bit length variants: the length moves from len to addr / off. */
IOURINGINLINE void io_uring_prep_fadvise64(struct io_uring_sqe *sqe, int fd,
					   __u64 offset, off_t len, int advice)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_FADVISE, fd, (__u64) len, 0, offset);
	sqe->fadvise_advice = (__u32) advice;
}

IOURINGINLINE void io_uring_prep_madvise64(struct io_uring_sqe *sqe, void *addr,
					   off_t length, int advice)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_MADVISE, sqe, -1, addr, 0, (__u64) length);
	sqe->fadvise_advice = (__u32) advice;
}

IOURINGINLINE void io_uring_prep_send(struct io_uring_sqe *sqe, int sockfd,
				      const void *buf, size_t len, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SEND, sqe, sockfd, buf, (__u32) len, 0);
	sqe->msg_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_send_bundle(struct io_uring_sqe *sqe,
					     int sockfd, size_t len, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_send(sqe, sockfd, NULL, len, flags);
	sqe->ioprio |= IORING_RECVSEND_BUNDLE;
}

/* Turn a send into a sendto: destination address rides in addr2. */
IOURINGINLINE void io_uring_prep_send_set_addr(struct io_uring_sqe *sqe,
					       const struct sockaddr *dest_addr,
					       __u16 addr_len)
	LIBURING_NOEXCEPT
{
	sqe->addr2 = (unsigned long) (const void *) dest_addr;
	sqe->addr_len = addr_len;
}

IOURINGINLINE void io_uring_prep_sendto(struct io_uring_sqe *sqe, int sockfd,
					const void *buf, size_t len, int flags,
					const struct sockaddr *addr,
					socklen_t addrlen)
	LIBURING_NOEXCEPT
{
	io_uring_prep_send(sqe, sockfd, buf, len, flags);
	io_uring_prep_send_set_addr(sqe, addr, (__u16) addrlen);
}

IOURINGINLINE void io_uring_prep_send_zc(struct io_uring_sqe *sqe, int sockfd,
					 const void *buf, size_t len, int flags,
					 unsigned zc_flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SEND_ZC, sqe, sockfd, buf, (__u32) len, 0);
	sqe->msg_flags = (__u32) flags;
	sqe->ioprio = (__u16) zc_flags;
}

IOURINGINLINE void io_uring_prep_send_zc_fixed(struct io_uring_sqe *sqe,
					       int sockfd, const void *buf,
					       size_t len, int flags,
					       unsigned zc_flags,
					       unsigned buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_send_zc(sqe, sockfd, buf, len, flags,
			      zc_flags | IORING_RECVSEND_FIXED_BUF);
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_sendmsg_zc(struct io_uring_sqe *sqe, int fd,
					    const struct msghdr *msg,
					    unsigned flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SENDMSG_ZC, sqe, fd, msg, 1, 0);
	sqe->msg_flags = flags;
}

IOURINGINLINE void io_uring_prep_sendmsg_zc_fixed(struct io_uring_sqe *sqe,
						  int fd,
						  const struct msghdr *msg,
						  unsigned flags,
						  unsigned buf_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_sendmsg_zc(sqe, fd, msg, flags);
	sqe->ioprio |= IORING_RECVSEND_FIXED_BUF;
	sqe->buf_index = (__u16) buf_index;
}

IOURINGINLINE void io_uring_prep_recv(struct io_uring_sqe *sqe, int sockfd,
				      void *buf, size_t len, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_RECV, sqe, sockfd, buf, (__u32) len, 0);
	sqe->msg_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_recv_multishot(struct io_uring_sqe *sqe,
						int sockfd, void *buf,
						size_t len, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_recv(sqe, sockfd, buf, len, flags);
	sqe->ioprio |= IORING_RECV_MULTISHOT;
}

/*
 * Multishot recvmsg result layout, inside the selected buffer:
 *   struct io_uring_recvmsg_out | name (msg_namelen) |
 *   control (msg_controllen) | payload
 * where the lengths come from the msghdr the request was prepared with.
 */
IOURINGINLINE struct io_uring_recvmsg_out *
io_uring_recvmsg_validate(void *buf, int buf_len, struct msghdr *msgh)
	LIBURING_NOEXCEPT
{
	unsigned long room, name_sz, ctrl_sz;

	if (buf_len < 0)
		return NULL;
	room = (unsigned long) (unsigned int) buf_len;
	if (room < sizeof(struct io_uring_recvmsg_out))
		return NULL;
	room -= sizeof(struct io_uring_recvmsg_out);
	/* compare piecewise so that no sum can wrap */
	name_sz = msgh->msg_namelen;
	if (name_sz > room)
		return NULL;
	room -= name_sz;
	ctrl_sz = msgh->msg_controllen;
	if (ctrl_sz > room)
		return NULL;
	return (struct io_uring_recvmsg_out *) buf;
}

IOURINGINLINE void *io_uring_recvmsg_name(struct io_uring_recvmsg_out *o)
	LIBURING_NOEXCEPT
{
	return (void *) (o + 1);
}

IOURINGINLINE struct cmsghdr *
io_uring_recvmsg_cmsg_firsthdr(struct io_uring_recvmsg_out *o,
			       struct msghdr *msgh)
	LIBURING_NOEXCEPT
{
	unsigned char *ctrl;

	if (o->controllen < sizeof(struct cmsghdr))
		return NULL;
	ctrl = (unsigned char *) io_uring_recvmsg_name(o) + msgh->msg_namelen;
	return (struct cmsghdr *) ctrl;
}

IOURINGINLINE struct cmsghdr *
io_uring_recvmsg_cmsg_nexthdr(struct io_uring_recvmsg_out *o,
			      struct msghdr *msgh, struct cmsghdr *cmsg)
	LIBURING_NOEXCEPT
{
	unsigned char *limit, *next;
	struct cmsghdr *hdr;

	if (cmsg->cmsg_len < sizeof(struct cmsghdr))
		return NULL;
	limit = (unsigned char *) io_uring_recvmsg_cmsg_firsthdr(o, msgh) +
		o->controllen;
	next = (unsigned char *) cmsg + CMSG_ALIGN(cmsg->cmsg_len);
	/* the next header, and then its whole payload, must fit */
	if (next + sizeof(struct cmsghdr) > limit)
		return NULL;
	hdr = (struct cmsghdr *) next;
	if (next + CMSG_ALIGN(hdr->cmsg_len) > limit)
		return NULL;
	return hdr;
}

IOURINGINLINE void *io_uring_recvmsg_payload(struct io_uring_recvmsg_out *o,
					     struct msghdr *msgh)
	LIBURING_NOEXCEPT
{
	unsigned char *p = (unsigned char *) io_uring_recvmsg_name(o);

	return (void *) (p + msgh->msg_namelen + msgh->msg_controllen);
}

IOURINGINLINE unsigned int
io_uring_recvmsg_payload_length(struct io_uring_recvmsg_out *o,
				int buf_len, struct msghdr *msgh)
	LIBURING_NOEXCEPT
{
	unsigned long start, end;

	if (buf_len < 0)
		return 0;
	start = (unsigned long) io_uring_recvmsg_payload(o, msgh);
	end = (unsigned long) o + buf_len;
	return start < end ? (unsigned int) (end - start) : 0;
}

IOURINGINLINE void io_uring_prep_openat2(struct io_uring_sqe *sqe, int dfd,
					 const char *path,
					 const struct open_how *how)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_OPENAT2, sqe, dfd, path, sizeof(*how),
			 uring_ptr_to_u64(how));
}

/* openat2 into a registered-file slot (or IORING_FILE_INDEX_ALLOC). */
IOURINGINLINE void io_uring_prep_openat2_direct(struct io_uring_sqe *sqe,
						int dfd, const char *path,
						const struct open_how *how,
						unsigned file_index)
	LIBURING_NOEXCEPT
{
	io_uring_prep_openat2(sqe, dfd, path, how);
	__io_uring_set_direct_slot(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_epoll_ctl(struct io_uring_sqe *sqe, int epfd,
					   int fd, int op,
					   const struct epoll_event *ev)
	LIBURING_NOEXCEPT
{
	/* fd goes in off as an unsigned 32-bit value, not sign-extended */
	io_uring_prep_rw(IORING_OP_EPOLL_CTL, sqe, epfd, ev, (__u32) op,
			 (__u32) fd);
}

IOURINGINLINE void io_uring_prep_provide_buffers(struct io_uring_sqe *sqe,
						 void *addr, int len, int nr,
						 int bgid, int bid)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_PROVIDE_BUFFERS, sqe, nr, addr,
			 (__u32) len, (__u64) bid);
	sqe->buf_group = (__u16) bgid;
}

IOURINGINLINE void io_uring_prep_remove_buffers(struct io_uring_sqe *sqe,
						int nr, int bgid)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_REMOVE_BUFFERS, nr, 0, 0, 0);
	sqe->buf_group = (__u16) bgid;
}

IOURINGINLINE void io_uring_prep_shutdown(struct io_uring_sqe *sqe, int fd,
					  int how)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_SHUTDOWN, fd, 0, (__u32) how, 0);
}

IOURINGINLINE void io_uring_prep_unlinkat(struct io_uring_sqe *sqe, int dfd,
					  const char *path, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_UNLINKAT, sqe, dfd, path, 0, 0);
	sqe->unlink_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_unlink(struct io_uring_sqe *sqe,
					const char *path, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_unlinkat(sqe, __IO_URING_CWD, path, flags);
}

IOURINGINLINE void io_uring_prep_renameat(struct io_uring_sqe *sqe, int olddfd,
					  const char *oldpath, int newdfd,
					  const char *newpath,
					  unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_RENAMEAT, sqe, olddfd, oldpath,
			 (__u32) newdfd, uring_ptr_to_u64(newpath));
	sqe->rename_flags = flags;
}

IOURINGINLINE void io_uring_prep_rename(struct io_uring_sqe *sqe,
					const char *oldpath,
					const char *newpath)
	LIBURING_NOEXCEPT
{
	io_uring_prep_renameat(sqe, __IO_URING_CWD, oldpath, __IO_URING_CWD, newpath, 0);
}

IOURINGINLINE void io_uring_prep_sync_file_range(struct io_uring_sqe *sqe,
						 int fd, unsigned len,
						 __u64 offset, int flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_SYNC_FILE_RANGE, fd, 0, len, offset);
	sqe->sync_range_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_mkdirat(struct io_uring_sqe *sqe, int dfd,
					 const char *path, mode_t mode)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_MKDIRAT, sqe, dfd, path, mode, 0);
}

IOURINGINLINE void io_uring_prep_mkdir(struct io_uring_sqe *sqe,
				       const char *path, mode_t mode)
	LIBURING_NOEXCEPT
{
	io_uring_prep_mkdirat(sqe, __IO_URING_CWD, path, mode);
}

IOURINGINLINE void io_uring_prep_symlinkat(struct io_uring_sqe *sqe,
					   const char *target, int newdirfd,
					   const char *linkpath)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SYMLINKAT, sqe, newdirfd, target, 0,
			 uring_ptr_to_u64(linkpath));
}

IOURINGINLINE void io_uring_prep_symlink(struct io_uring_sqe *sqe,
					 const char *target,
					 const char *linkpath)
	LIBURING_NOEXCEPT
{
	io_uring_prep_symlinkat(sqe, target, __IO_URING_CWD, linkpath);
}

IOURINGINLINE void io_uring_prep_linkat(struct io_uring_sqe *sqe, int olddfd,
					const char *oldpath, int newdfd,
					const char *newpath, int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_LINKAT, sqe, olddfd, oldpath,
			 (__u32) newdfd, uring_ptr_to_u64(newpath));
	sqe->hardlink_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_link(struct io_uring_sqe *sqe,
				      const char *oldpath, const char *newpath,
				      int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_linkat(sqe, __IO_URING_CWD, oldpath, __IO_URING_CWD, newpath, flags);
}

/*
 * MSG_RING: post a CQE (res = len, user_data = data) to the ring behind fd.
 * The _cqe_flags variant also passes the CQE flags, via file_index.
 */
IOURINGINLINE void io_uring_prep_msg_ring_cqe_flags(struct io_uring_sqe *sqe,
						    int fd, unsigned int len,
						    __u64 data,
						    unsigned int flags,
						    unsigned int cqe_flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_MSG_RING, fd, 0, len, data);
	sqe->msg_ring_flags = flags | IORING_MSG_RING_FLAGS_PASS;
	sqe->file_index = cqe_flags;
}

IOURINGINLINE void io_uring_prep_msg_ring(struct io_uring_sqe *sqe, int fd,
					  unsigned int len, __u64 data,
					  unsigned int flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_MSG_RING, fd, 0, len, data);
	sqe->msg_ring_flags = flags;
}

/* Install our direct descriptor source_fd in the target ring's table. */
IOURINGINLINE void io_uring_prep_msg_ring_fd(struct io_uring_sqe *sqe, int fd,
					     int source_fd, int target_fd,
					     __u64 data, unsigned int flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_MSG_RING, fd, IORING_MSG_SEND_FD, 0,
			    data);
	sqe->addr3 = (__u64) source_fd;
	__io_uring_set_direct_slot(sqe, (unsigned int) target_fd);
	sqe->msg_ring_flags = flags;
}

IOURINGINLINE void io_uring_prep_msg_ring_fd_alloc(struct io_uring_sqe *sqe,
						   int fd, int source_fd,
						   __u64 data,
						   unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_msg_ring_fd(sqe, fd, source_fd,
				  (int) IORING_FILE_INDEX_ALLOC, data, flags);
}

IOURINGINLINE void io_uring_prep_getxattr(struct io_uring_sqe *sqe,
					  const char *name, char *value,
					  const char *path, unsigned int len)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_GETXATTR, sqe, 0, name, len,
			 uring_ptr_to_u64(value));
	sqe->addr3 = uring_ptr_to_u64(path);
	sqe->xattr_flags = 0;
}

IOURINGINLINE void io_uring_prep_setxattr(struct io_uring_sqe *sqe,
					  const char *name, const char *value,
					  const char *path, int flags,
					  unsigned int len)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_SETXATTR, sqe, 0, name, len,
			 uring_ptr_to_u64(value));
	sqe->addr3 = uring_ptr_to_u64(path);
	sqe->xattr_flags = (__u32) flags;
}

IOURINGINLINE void io_uring_prep_fgetxattr(struct io_uring_sqe *sqe,
					   int fd, const char *name,
					   char *value, unsigned int len)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FGETXATTR, sqe, fd, name, len,
			 uring_ptr_to_u64(value));
	sqe->xattr_flags = 0;
}

IOURINGINLINE void io_uring_prep_fsetxattr(struct io_uring_sqe *sqe, int fd,
					   const char *name, const char *value,
					   int flags, unsigned int len)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FSETXATTR, sqe, fd, name, len,
			 uring_ptr_to_u64(value));
	sqe->xattr_flags = (__u32) flags;
}

/* socket(2): domain in fd, protocol in len, type in off. */
IOURINGINLINE void io_uring_prep_socket(struct io_uring_sqe *sqe, int domain,
					int type, int protocol,
					unsigned int flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_SOCKET, domain, 0,
			    (unsigned) protocol, (__u64) type);
	sqe->rw_flags = (int) flags;
}

IOURINGINLINE void io_uring_prep_socket_direct(struct io_uring_sqe *sqe,
					       int domain, int type,
					       int protocol,
					       unsigned file_index,
					       unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_socket(sqe, domain, type, protocol, flags);
	__io_uring_set_direct_slot(sqe, file_index);
}

IOURINGINLINE void io_uring_prep_socket_direct_alloc(struct io_uring_sqe *sqe,
						     int domain, int type,
						     int protocol,
						     unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_socket(sqe, domain, type, protocol, flags);
	sqe->file_index = IORING_FILE_INDEX_ALLOC;
}

/*
 * uring_cmd: cmd_op selects the command and the 8-byte word at off is
 * cmd_op plus a zeroed pad. addr and len are cleared; the command payload
 * (sqe->cmd) is the caller's to fill.
 */
IOURINGINLINE void __io_uring_prep_uring_cmd(struct io_uring_sqe *sqe,
					     int op,
					     __u32 cmd_op,
					     int fd)
	LIBURING_NOEXCEPT
{
	sqe->opcode = (__u8) op;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
	sqe->__pad1 = 0;
	sqe->addr = 0;
	sqe->len = 0;
}

IOURINGINLINE void io_uring_prep_uring_cmd(struct io_uring_sqe *sqe,
					   int cmd_op,
					   int fd)
	LIBURING_NOEXCEPT
{
	__io_uring_prep_uring_cmd(sqe, IORING_OP_URING_CMD, (__u32) cmd_op, fd);
}

IOURINGINLINE void io_uring_prep_uring_cmd128(struct io_uring_sqe *sqe,
					      int cmd_op,
					      int fd)
	LIBURING_NOEXCEPT
{
	__io_uring_prep_uring_cmd(sqe, IORING_OP_URING_CMD128, (__u32) cmd_op,
				  fd);
}

/* Socket commands (SOCKET_URING_OP_*), e.g. getsockopt/setsockopt. */
IOURINGINLINE void io_uring_prep_cmd_sock(struct io_uring_sqe *sqe,
					  int cmd_op,
					  int fd,
					  int level,
					  int optname,
					  void *optval,
					  int optlen)
	LIBURING_NOEXCEPT
{
	io_uring_prep_uring_cmd(sqe, cmd_op, fd);
	/* level and optname share the 8 bytes of addr */
	sqe->level = (__u32) level;
	sqe->optname = (__u32) optname;
	sqe->optlen = (__u32) optlen;
	sqe->optval = uring_ptr_to_u64(optval);
}

IOURINGINLINE void io_uring_prep_cmd_getsockname(struct io_uring_sqe *sqe,
						 int fd,
						 struct sockaddr *sockaddr,
						 socklen_t *sockaddr_len,
						 int peer)
	LIBURING_NOEXCEPT
{
	io_uring_prep_uring_cmd(sqe, SOCKET_URING_OP_GETSOCKNAME, fd);
	sqe->addr = uring_ptr_to_u64(sockaddr);
	sqe->addr3 = uring_ptr_to_u64(sockaddr_len);
	/* non-zero asks for the peer's address (getpeername) */
	sqe->optlen = (__u32) peer;
}

IOURINGINLINE void io_uring_prep_waitid(struct io_uring_sqe *sqe,
					idtype_t idtype,
					id_t id,
					siginfo_t *infop,
					int options, unsigned int flags)
	LIBURING_NOEXCEPT
{
	/* id in fd, idtype in len, infop in addr2, options in file_index */
	__io_uring_sqe_core(sqe, IORING_OP_WAITID, (int) id, 0,
			    (unsigned) idtype, uring_ptr_to_u64(infop));
	sqe->waitid_flags = flags;
	sqe->file_index = (__u32) options;
}

/* futex2: futex_flags go in fd, the value in off and the mask in addr3. */
IOURINGINLINE void io_uring_prep_futex_wake(struct io_uring_sqe *sqe,
					    const uint32_t *futex, uint64_t val,
					    uint64_t mask, uint32_t futex_flags,
					    unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FUTEX_WAKE, sqe, (int) futex_flags, futex, 0,
			 val);
	sqe->futex_flags = flags;
	sqe->addr3 = mask;
}

IOURINGINLINE void io_uring_prep_futex_wait(struct io_uring_sqe *sqe,
					    const uint32_t *futex, uint64_t val,
					    uint64_t mask, uint32_t futex_flags,
					    unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FUTEX_WAIT, sqe, (int) futex_flags, futex, 0,
			 val);
	sqe->futex_flags = flags;
	sqe->addr3 = mask;
}

struct futex_waitv;
IOURINGINLINE void io_uring_prep_futex_waitv(struct io_uring_sqe *sqe,
					     const struct futex_waitv *futex,
					     uint32_t nr_futex,
					     unsigned int flags)
	LIBURING_NOEXCEPT
{
	io_uring_prep_rw(IORING_OP_FUTEX_WAITV, sqe, 0, futex, nr_futex, 0);
	sqe->futex_flags = flags;
}

/* Turn direct descriptor fd into a regular one; fd is always fixed here. */
IOURINGINLINE void io_uring_prep_fixed_fd_install(struct io_uring_sqe *sqe,
						  int fd,
						  unsigned int flags)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_FIXED_FD_INSTALL, fd, 0, 0, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->install_fd_flags = flags;
}

#ifdef _GNU_SOURCE
IOURINGINLINE void io_uring_prep_ftruncate(struct io_uring_sqe *sqe,
					   int fd, loff_t len)
	LIBURING_NOEXCEPT
{
	__io_uring_sqe_core(sqe, IORING_OP_FTRUNCATE, fd, 0, 0, (__u64) len);
}
#endif

IOURINGINLINE void io_uring_prep_cmd_discard(struct io_uring_sqe *sqe,
					     int fd,
					     uint64_t offset, uint64_t nbytes)
	LIBURING_NOEXCEPT
{
	io_uring_prep_uring_cmd(sqe, (int) BLOCK_URING_CMD_DISCARD, fd);
	sqe->addr = offset;
	sqe->addr3 = nbytes;
}

IOURINGINLINE void io_uring_prep_cmd_zone_reset_all(struct io_uring_sqe *sqe,
						    int fd)
	LIBURING_NOEXCEPT
{
	io_uring_prep_uring_cmd(sqe, (int) BLOCK_URING_CMD_ZONE_RESET_ALL, fd);
}

IOURINGINLINE void io_uring_prep_pipe(struct io_uring_sqe *sqe, int *fds,
				      int pipe_flags)
{
	io_uring_prep_rw(IORING_OP_PIPE, sqe, 0, fds, 0, 0);
	sqe->pipe_flags = (__u32) pipe_flags;
}

/* Create the pipe's two ends as direct descriptors. */
IOURINGINLINE void io_uring_prep_pipe_direct(struct io_uring_sqe *sqe, int *fds,
					     int pipe_flags,
					     unsigned int file_index)
{
	io_uring_prep_pipe(sqe, fds, pipe_flags);
	__io_uring_set_direct_slot(sqe, file_index);
}

/*
 * Ring state queries.
 */

/*
 * With SQPOLL the kernel thread moves the SQ head, and we must not reuse
 * an SQE it may still be reading: acquire. Taken unconditionally, since an
 * acquire load is a plain load on x86 and saves testing the ring's flags.
 */
IOURINGINLINE unsigned io_uring_load_sq_head(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return io_uring_smp_load_acquire(ring->sq.khead);
}

/* SQEs queued but not yet consumed by the kernel. */
IOURINGINLINE unsigned io_uring_sq_ready(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	/* measured against the kernel's head so a short submit stays in sync */
	return ring->sq.sqe_tail - io_uring_load_sq_head(ring);
}

IOURINGINLINE unsigned io_uring_sq_space_left(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return ring->sq.ring_entries - io_uring_sq_ready(ring);
}

/* SQ indexing: IORING_SETUP_SQE128 rings use two slots per entry. */
IOURINGINLINE unsigned io_uring_sqe_shift_from_flags(unsigned flags)
	LIBURING_NOEXCEPT
{
	return (flags & IORING_SETUP_SQE128) ? 1U : 0U;
}

IOURINGINLINE unsigned io_uring_sqe_shift(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return io_uring_sqe_shift_from_flags(ring->flags);
}

/*
 * SQPOLL only: block until the SQ ring has a free entry. Returns at once
 * when not using SQPOLL or when there is room already.
 */
IOURINGINLINE int io_uring_sqring_wait(struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	if ((ring->flags & IORING_SETUP_SQPOLL) && !io_uring_sq_space_left(ring))
		return __io_uring_sqring_wait(ring);
	return 0;
}

/* CQEs posted by the kernel and not yet consumed. */
IOURINGINLINE unsigned io_uring_cq_ready(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	unsigned tail = io_uring_smp_load_acquire(ring->cq.ktail);

	return tail - *ring->cq.khead;
}

/* True when CQEs overflowed and wait in the kernel to be flushed. */
IOURINGINLINE bool io_uring_cq_has_overflow(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return (IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_CQ_OVERFLOW) != 0;
}

IOURINGINLINE bool io_uring_cq_eventfd_enabled(const struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	/* kernels without CQ flags cannot disable it */
	if (ring->cq.kflags == NULL)
		return true;
	return (*ring->cq.kflags & IORING_CQ_EVENTFD_DISABLED) == 0;
}

/* Switch eventfd notifications on or off; -EOPNOTSUPP on old kernels. */
IOURINGINLINE int io_uring_cq_eventfd_toggle(struct io_uring *ring,
					     bool enabled)
	LIBURING_NOEXCEPT
{
	uint32_t val;

	if (io_uring_cq_eventfd_enabled(ring) == enabled)
		return 0;
	if (ring->cq.kflags == NULL)
		return -EOPNOTSUPP;

	val = *ring->cq.kflags;
	if (enabled)
		val &= ~IORING_CQ_EVENTFD_DISABLED;
	else
		val |= IORING_CQ_EVENTFD_DISABLED;
	IO_URING_WRITE_ONCE(*ring->cq.kflags, val);
	return 0;
}

/* Get a completion, waiting until at least wait_nr are available. */
IOURINGINLINE int io_uring_wait_cqe_nr(struct io_uring *ring,
				       struct io_uring_cqe **cqe_ptr,
				       unsigned wait_nr)
	LIBURING_NOEXCEPT
{
	return __io_uring_get_cqe(ring, cqe_ptr, 0, wait_nr, NULL);
}

/*
 * Decide whether the CQE at the head is one the application must not see:
 * a CQE flagged IORING_CQE_F_SKIP, or (kernels without EXT_ARG) one of the
 * library's internal timeouts. Such an entry is consumed here. Returns true
 * to keep scanning; a failed internal timeout stores its error in *err and
 * stops the scan.
 */
_LOCAL_INLINE bool io_uring_skip_cqe(struct io_uring *ring,
				     struct io_uring_cqe *cqe, int *err)
{
	if (!(cqe->flags & IORING_CQE_F_SKIP)) {
		if (ring->features & IORING_FEAT_EXT_ARG)
			return false;
		if (cqe->user_data != LIBURING_UDATA_TIMEOUT)
			return false;
		if (cqe->res < 0)
			*err = cqe->res;
	}
	io_uring_cq_advance(ring, io_uring_cqe_nr(cqe));
	return *err == 0;
}

/*
 * Look at the CQ head without entering the kernel. Internal: applications
 * use io_uring_peek_cqe() / io_uring_wait_cqe*().
 */
IOURINGINLINE int __io_uring_peek_cqe(struct io_uring *ring,
				      struct io_uring_cqe **cqe_ptr,
				      unsigned *nr_available)
	LIBURING_NOEXCEPT
{
	const unsigned mask = ring->cq.ring_mask;
	const unsigned shift = io_uring_cqe_shift(ring);
	struct io_uring_cqe *found = NULL;
	unsigned avail;
	int err = 0;

	for (;;) {
		/* acquire on tail makes every CQE before it readable; we own head */
		unsigned tail = io_uring_smp_load_acquire(ring->cq.ktail);
		unsigned head = *ring->cq.khead;
		struct io_uring_cqe *cqe;

		avail = tail - head;
		if (avail == 0)
			break;
		cqe = &ring->cq.cqes[(head & mask) << shift];
		if (!io_uring_skip_cqe(ring, cqe, &err)) {
			/* on error the entry was an already-consumed timeout */
			if (!err)
				found = cqe;
			break;
		}
	}

	*cqe_ptr = found;
	if (nr_available)
		*nr_available = avail;
	return err;
}

/* Non-blocking: 0 with *cqe_ptr set, or -EAGAIN when nothing is ready. */
IOURINGINLINE int io_uring_peek_cqe(struct io_uring *ring,
				    struct io_uring_cqe **cqe_ptr)
	LIBURING_NOEXCEPT
{
	if (__io_uring_peek_cqe(ring, cqe_ptr, NULL) == 0) {
		unsigned kflags;

		if (*cqe_ptr)
			return 0;
		/*
		 * Only enter the kernel when it might produce something:
		 * IOPOLL reaping, overflowed CQEs or pending task work.
		 */
		if (ring->flags & IORING_SETUP_IOPOLL)
			return io_uring_wait_cqe_nr(ring, cqe_ptr, 0);
		kflags = IO_URING_READ_ONCE(*ring->sq.kflags);
		if (!(kflags & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN)))
			return -EAGAIN;
	}
	return io_uring_wait_cqe_nr(ring, cqe_ptr, 0);
}

/* Blocking: wait for one completion. */
IOURINGINLINE int io_uring_wait_cqe(struct io_uring *ring,
				    struct io_uring_cqe **cqe_ptr)
	LIBURING_NOEXCEPT
{
	if (__io_uring_peek_cqe(ring, cqe_ptr, NULL) == 0 && *cqe_ptr != NULL)
		return 0;
	return io_uring_wait_cqe_nr(ring, cqe_ptr, 1);
}

/*
 * Reserve the next free SQE, reset by io_uring_initialize_sqe(), or NULL
 * when the SQ ring is full. Nothing reaches the kernel before
 * io_uring_submit().
 */
IOURINGINLINE struct io_uring_sqe *_io_uring_get_sqe(struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned head = io_uring_load_sq_head(ring);
	unsigned tail = sq->sqe_tail;
	struct io_uring_sqe *sqe;
	unsigned idx;

	if (tail - head >= sq->ring_entries)
		return NULL;
	/*
	 * A predicted branch on SQE128 is cheaper than a variable shift, and
	 * indexing before the tail store spares a reload of ring->flags.
	 */
	idx = tail & sq->ring_mask;
	if (uring_unlikely(ring->flags & IORING_SETUP_SQE128))
		idx <<= 1;
	sqe = sq->sqes + idx;
	sq->sqe_tail = tail + 1;
	io_uring_initialize_sqe(sqe);
	return sqe;
}

/*
 * Provided-buffer rings.
 */

IOURINGINLINE int io_uring_buf_ring_mask(__u32 ring_entries)
	LIBURING_NOEXCEPT
{
	return (int) (ring_entries - 1);
}

IOURINGINLINE void io_uring_buf_ring_init(struct io_uring_buf_ring *br)
	LIBURING_NOEXCEPT
{
	br->tail = 0;
}

/*
 * Fill the entry buf_offset places past the current tail. The kernel does
 * not see it until io_uring_buf_ring_advance().
 */
IOURINGINLINE void io_uring_buf_ring_add(struct io_uring_buf_ring *br,
					 void *addr, unsigned int len,
					 unsigned short bid, int mask,
					 int buf_offset)
	LIBURING_NOEXCEPT
{
	int slot = (br->tail + buf_offset) & mask;
	struct io_uring_buf *b = &br->bufs[slot];

	b->addr = uring_ptr_to_u64(addr);
	b->len = len;
	b->bid = bid;
}

/* Publish count added buffers; release orders the entry writes first. */
IOURINGINLINE void io_uring_buf_ring_advance(struct io_uring_buf_ring *br,
					     int count)
	LIBURING_NOEXCEPT
{
	__u16 next = (__u16) (br->tail + count);

	io_uring_smp_store_release(&br->tail, next);
}

IOURINGINLINE void __io_uring_buf_ring_cq_advance(struct io_uring *ring,
						  struct io_uring_buf_ring *br,
						  int cq_count, int buf_count)
	LIBURING_NOEXCEPT
{
	io_uring_buf_ring_advance(br, buf_count);
	io_uring_cq_advance(ring, (unsigned) cq_count);
}

/* Return count buffers and consume count CQEs in one go. */
IOURINGINLINE void io_uring_buf_ring_cq_advance(struct io_uring *ring,
						struct io_uring_buf_ring *br,
						int count)
	LIBURING_NOEXCEPT
{
	__io_uring_buf_ring_cq_advance(ring, br, count, count);
}

/* Buffers still available to the kernel in group bgid, or -errno. */
IOURINGINLINE int io_uring_buf_ring_available(struct io_uring *ring,
					      struct io_uring_buf_ring *br,
					      unsigned short bgid)
	LIBURING_NOEXCEPT
{
	uint16_t head;
	int ret = io_uring_buf_ring_head(ring, bgid, &head);

	if (ret)
		return ret;
	return (uint16_t) (br->tail - head);
}

/*
 * io_uring_get_sqe() is inline for applications but also a real symbol of
 * liburing.so.2 (older binaries link against it). The library itself, and
 * src/ffi.c, define LIBURING_INTERNAL to see only the declaration.
 */
#ifndef LIBURING_INTERNAL
IOURINGINLINE struct io_uring_sqe *io_uring_get_sqe(struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	return _io_uring_get_sqe(ring);
}
#else
struct io_uring_sqe *io_uring_get_sqe(struct io_uring *ring);
#endif

/*
 * Reserve a 128-byte SQE. On SQE128 rings that is any SQE; on
 * SQE_MIXED rings it takes two adjacent slots, and if only the last slot
 * before the wrap is free, that slot is filled with a NOP that posts no
 * CQE on success. Other rings get NULL. The caller must use a 128-byte
 * opcode so the kernel advances over both slots.
 */
IOURINGINLINE struct io_uring_sqe *io_uring_get_sqe128(struct io_uring *ring)
	LIBURING_NOEXCEPT
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned head = io_uring_load_sq_head(ring);
	unsigned tail = sq->sqe_tail;
	struct io_uring_sqe *sqe;

	if (ring->flags & IORING_SETUP_SQE128)
		return io_uring_get_sqe(ring);
	if (!(ring->flags & IORING_SETUP_SQE_MIXED))
		return NULL;

	if (((tail + 1) & sq->ring_mask) == 0) {
		/* pad the last slot, and the big entry starts at slot 0 */
		if ((tail + 2) - head >= sq->ring_entries)
			return NULL;
		sqe = _io_uring_get_sqe(ring);
		io_uring_prep_nop(sqe);
		sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
		tail = sq->sqe_tail;
	} else if ((tail + 1) - head >= sq->ring_entries) {
		return NULL;
	}

	sq->sqe_tail = tail + 2;
	sqe = &sq->sqes[tail & sq->ring_mask];
	io_uring_initialize_sqe(sqe);
	return sqe;
}

ssize_t io_uring_mlock_size(unsigned entries, unsigned flags)
	LIBURING_NOEXCEPT;
ssize_t io_uring_mlock_size_params(unsigned entries, struct io_uring_params *p)
	LIBURING_NOEXCEPT;

ssize_t io_uring_memory_size(unsigned entries, unsigned flags)
	LIBURING_NOEXCEPT;
ssize_t io_uring_memory_size_params(unsigned entries,
				    struct io_uring_params *p)
	LIBURING_NOEXCEPT;

/*
 * Version checks: IO_URING_CHECK_VERSION() at compile time (usable in #if),
 * io_uring_check_version() against the library actually loaded. Both are
 * true when the version is OLDER than the one asked for.
 */
int io_uring_major_version(void) LIBURING_NOEXCEPT;
int io_uring_minor_version(void) LIBURING_NOEXCEPT;
bool io_uring_check_version(int major, int minor) LIBURING_NOEXCEPT;

#define IO_URING_CHECK_VERSION(major, minor)			\
	((major) > IO_URING_VERSION_MAJOR ||			\
	 ((major) == IO_URING_VERSION_MAJOR &&			\
	  (minor) > IO_URING_VERSION_MINOR))

/*
 * liburing-rs additions. LIBURING_RS is always defined, so a program can
 * tell at build time that it is built against this library. The functions
 * below are declared only when the program defines LIBURING_RS_SOURCE
 * before including this header; they live in the version node URING_RS_1.0.
 */
#define LIBURING_RS 1

#ifdef LIBURING_RS_SOURCE
/*
 * Why the calling thread's last failed ring setup (io_uring_queue_init,
 * io_uring_queue_init_params, io_uring_queue_init_mem, or a library call
 * that sets up a ring of its own) failed: one line of plain text naming the
 * cause, such as a seccomp filter, kernel.io_uring_disabled, RLIMIT_MEMLOCK,
 * setup flags the kernel does not know or entries out of range. NULL if no
 * ring setup has failed in this thread. The string belongs to the library
 * and stays valid until the thread's next failed setup or its exit; a
 * successful setup does not clear it.
 */
const char *liburing_rs_setup_error(void) LIBURING_NOEXCEPT;

/*
 * Which engine runs a ring set up by io_uring_queue_init*(): the kernel's
 * io_uring, or the userspace engine (chosen by LIBURING_RS_ENGINE, or in
 * "auto" mode when the kernel refuses io_uring with ENOSYS, EPERM or
 * EACCES). Returns LIBURING_RS_ENGINE_KERNEL, LIBURING_RS_ENGINE_USER,
 * -EINVAL for a NULL ring, -EBADF for a ring that is not set up, or
 * -EBADFD for an engine ring inherited across fork().
 */
#define LIBURING_RS_ENGINE_KERNEL	0
#define LIBURING_RS_ENGINE_USER		1
int liburing_rs_ring_engine(const struct io_uring *ring) LIBURING_NOEXCEPT;

/*
 * The io_uring system call nr (__NR_io_uring_setup, __NR_io_uring_enter or
 * __NR_io_uring_register) with its six arguments in args[], served by the
 * userspace engine when this library serves the process's intercepted
 * io_uring calls (uring-run, LIBURING_RS_INTERCEPT=1): what the kernel
 * would return (a value, or -errno) is stored in *res and 1 returned, with
 * no seccomp trap taken. Returns 0, *res untouched, when this library does
 * not serve them (interception is off, another copy of the library serves
 * it, nr is none of the three, or args or res is NULL): the caller then
 * makes the system call itself. uring-run's syscall(3) preload object,
 * liburing-rs-syscall.so, is its user.
 */
int liburing_rs_intercept_syscall(long nr, const long *args, long *res) LIBURING_NOEXCEPT;
#endif

#ifdef __cplusplus
}
#endif

#ifdef IOURINGINLINE
#undef IOURINGINLINE
#endif

#ifdef _LOCAL_INLINE
#undef _LOCAL_INLINE
#endif

#endif
