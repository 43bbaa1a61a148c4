/* SPDX-License-Identifier: MIT */
#ifndef LIBURING_BARRIER_H
#define LIBURING_BARRIER_H

/*
 * Memory-ordering primitives shared by the inline helpers and by programs
 * that poke at the rings directly. The kernel pairs its own barriers with
 * these: the CQ tail and SQ head (SQPOLL) are read with acquire, the CQ
 * head and buffer-ring tail are published with release.
 */

#ifndef _LOCAL_INLINE
#if defined(__cplusplus) && __cplusplus >= 202002L
#define _LOCAL_INLINE inline
#else
#define _LOCAL_INLINE static inline
#endif
#endif

#ifdef __cplusplus
#include <atomic>

#ifndef LIBURING_NOEXCEPT
#define LIBURING_NOEXCEPT noexcept
#endif

/*
 * C++ has no __typeof__-style cast to an atomic view of a plain object, so
 * these are templates that reinterpret the object as std::atomic<T>
 * (which has the same size and representation for the integer types used).
 */
template <typename T>
_LOCAL_INLINE std::atomic<T> *__io_uring_atomic_view(T *obj) LIBURING_NOEXCEPT
{
	return reinterpret_cast<std::atomic<T> *>(obj);
}

template <typename T>
_LOCAL_INLINE const std::atomic<T> *
__io_uring_atomic_view(const T *obj) LIBURING_NOEXCEPT
{
	return reinterpret_cast<const std::atomic<T> *>(obj);
}

template <typename T>
_LOCAL_INLINE void IO_URING_WRITE_ONCE(T &var, T val) LIBURING_NOEXCEPT
{
	__io_uring_atomic_view(&var)->store(val, std::memory_order_relaxed);
}

template <typename T>
_LOCAL_INLINE T IO_URING_READ_ONCE(const T &var) LIBURING_NOEXCEPT
{
	return __io_uring_atomic_view(&var)->load(std::memory_order_relaxed);
}

template <typename T>
_LOCAL_INLINE void io_uring_smp_store_release(T *p, T v) LIBURING_NOEXCEPT
{
	__io_uring_atomic_view(p)->store(v, std::memory_order_release);
}

template <typename T>
_LOCAL_INLINE T io_uring_smp_load_acquire(const T *p) LIBURING_NOEXCEPT
{
	return __io_uring_atomic_view(p)->load(std::memory_order_acquire);
}

_LOCAL_INLINE void io_uring_smp_mb() LIBURING_NOEXCEPT
{
	std::atomic_thread_fence(std::memory_order_seq_cst);
}

#else /* !__cplusplus */
/* Kept for programs that use C11 atomics and got them through liburing.h. */
#include <stdatomic.h>

/*
 * The GCC/Clang __atomic builtins operate on plain objects of any integer
 * or pointer type, which is exactly what the ring indices are.
 */
#define IO_URING_WRITE_ONCE(var, val) \
	__atomic_store_n(&(var), (val), __ATOMIC_RELAXED)
#define IO_URING_READ_ONCE(var) \
	__atomic_load_n(&(var), __ATOMIC_RELAXED)

#define io_uring_smp_store_release(p, v) \
	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define io_uring_smp_load_acquire(p) \
	__atomic_load_n((p), __ATOMIC_ACQUIRE)

#define io_uring_smp_mb() \
	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif /* __cplusplus */

#endif /* LIBURING_BARRIER_H */
