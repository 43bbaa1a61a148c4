/* SPDX-License-Identifier: MIT */
/*
 * liburing-ffi.so.2: every inline helper of liburing.h as a real function,
 * for languages that cannot use C inline functions. Defining IOURINGINLINE
 * empty turns each "static inline" helper into an external definition.
 *
 * LIBURING_INTERNAL keeps io_uring_get_sqe() a plain declaration: the Rust
 * library already exports that symbol, and a second definition would clash.
 * _GNU_SOURCE exposes the helpers liburing.h guards with it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define IOURINGINLINE
#define LIBURING_INTERNAL

#ifdef __clang__
#pragma clang diagnostic push
/* the definitions are the prototypes here */
#pragma clang diagnostic ignored "-Wmissing-prototypes"
#endif

#include "liburing.h"

#ifdef __clang__
#pragma clang diagnostic pop
#endif
