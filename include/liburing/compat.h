/* SPDX-License-Identifier: MIT */
#ifndef LIBURING_COMPAT_H
#define LIBURING_COMPAT_H

/*
 * Fixed stand-in for the file liburing's configure generates. The probes
 * it runs are replaced by __has_include and #ifndef guards, so the header
 * also works with uapi headers older than the kernel being targeted.
 */

#if defined(__has_include)
#if __has_include("linux/time_types.h")
#include <linux/time_types.h>
#else
#include <stdint.h>
struct __kernel_timespec {
	int64_t		tv_sec;
	long long	tv_nsec;
};
#endif
#else
#include <linux/time_types.h>
#endif
/* Tell liburing/io_uring.h the timespec type is already settled. */
#define UAPI_LINUX_IO_URING_H_SKIP_LINUX_TIME_TYPES_H 1

#if defined(__has_include)
#if __has_include("linux/openat2.h")
#define __LIBURING_HAVE_OPENAT2_H 1
#endif
#else
#define __LIBURING_HAVE_OPENAT2_H 1
#endif
#ifdef __LIBURING_HAVE_OPENAT2_H
#include <linux/openat2.h>
#undef __LIBURING_HAVE_OPENAT2_H
#else
#include <stdint.h>
struct open_how {
	uint64_t	flags;
	uint64_t	mode;
	uint64_t	resolve;
};
#endif

#if defined(__has_include)
#if __has_include("linux/blkdev.h")
#include <linux/blkdev.h>
#endif
#endif

#include <linux/ioctl.h>

/* Block device uring_cmd opcodes (uapi linux/blkdev.h, 6.12 and later). */
#ifndef BLOCK_URING_CMD_DISCARD
#define BLOCK_URING_CMD_DISCARD			_IO(0x12, 0)
#endif
#ifndef BLOCK_URING_CMD_ZONE_RESET_ALL
#define BLOCK_URING_CMD_ZONE_RESET_ALL		_IO(0x12, 1)
#endif

#endif
