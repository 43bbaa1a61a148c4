/* SPDX-License-Identifier: MIT */
#ifndef LIBURING_VERSION_H
#define LIBURING_VERSION_H

/* Release of liburing whose interface this library provides. */
#define IO_URING_VERSION_MAJOR 2
#define IO_URING_VERSION_MINOR 15

#endif
