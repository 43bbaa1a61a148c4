/* SPDX-License-Identifier: MIT */
/*
 * liburing-rs-syscall.so: glibc's syscall(3), for uring-run to preload
 * beside liburing.so.2. Most programs that make the io_uring system calls
 * themselves (fio, the io-uring crate, Netty, libuv) make them through
 * syscall(3); here those three reach the engine with a function call
 * (liburing_rs_intercept_syscall) instead of a seccomp trap and a SIGSYS
 * delivery. Every other call, and the three whenever the library does not
 * serve them (interception off, the kernel's io_uring in use, no
 * liburing.so.2 loaded), is made as glibc makes it: the same registers,
 * and -1 with errno for a result in -4095..-1. The seccomp trap stays for
 * calls made by inline assembly and for ring mmaps.
 *
 * x86_64 only. Variadic integer arguments arrive in registers as fixed ones
 * do, so the prototype below reads what a syscall(3) caller passes.
 */
#include <errno.h>
#include <sys/syscall.h>

#if !defined(__x86_64__)
#error "liburing-rs-syscall.so is x86_64 only"
#endif

long syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6);

/*
 * The library's entry, declared in liburing.h under LIBURING_RS_SOURCE.
 * Weak and unversioned: bound at load time to the preloaded liburing.so.2
 * (its node URING_RS_1.0), or null where no copy of the library is loaded.
 */
extern int liburing_rs_intercept_syscall(long nr, const long *args, long *res) __attribute__((weak));

static inline long raw(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static long result(long ret)
{
	if ((unsigned long)ret > -4096UL) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

/* Out of line, so that the path of every other call keeps no frame. */
static __attribute__((noinline)) long io_uring_call(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long args[6] = { a1, a2, a3, a4, a5, a6 };
	long res;
	int saved = errno;

	if (liburing_rs_intercept_syscall && liburing_rs_intercept_syscall(nr, args, &res)) {
		/* The engine's own calls may have set errno; the program
		 * finds it as it left it, as after a kernel success. */
		errno = saved;
		return result(res);
	}
	return result(raw(nr, a1, a2, a3, a4, a5, a6));
}

long syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	if (nr == __NR_io_uring_setup || nr == __NR_io_uring_enter || nr == __NR_io_uring_register)
		return io_uring_call(nr, a1, a2, a3, a4, a5, a6);
	return result(raw(nr, a1, a2, a3, a4, a5, a6));
}
