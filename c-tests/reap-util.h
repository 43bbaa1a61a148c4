/* Collecting CQEs with a deadline, shared by the registration tests. */
#ifndef LIBURING_RS_REAP_UTIL_H
#define LIBURING_RS_REAP_UTIL_H

#include <liburing.h>
#include "test-util.h"

/* Copies up to `want` CQEs into `out`, waiting at most `ns` for each one;
 * returns how many arrived. */
static inline int tu_reap_ns(struct io_uring *ring, struct io_uring_cqe *out,
			     int want, long long ns)
{
	int got = 0;

	while (got < want) {
		struct __kernel_timespec ts = { .tv_sec = ns / 1000000000,
						.tv_nsec = ns % 1000000000 };
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe_timeout(ring, &cqe, &ts))
			break;
		out[got++] = *cqe;
		io_uring_cqe_seen(ring, cqe);
	}
	return got;
}

/* Waits up to 3 s per expected CQE: 6.1 posts the tag of a replaced
 * resource from delayed work, a second after the update. */
static inline int tu_reap(struct io_uring *ring, struct io_uring_cqe *out, int want)
{
	return tu_reap_ns(ring, out, want, 3000000000LL);
}

/* Reaps the `want` tag CQEs an unregister posts into `out`; returns whether
 * they came. Kernels before 6.13 post none: that is noted with tu_lacks. */
static inline int tu_reap_unregister_tags(struct io_uring *ring,
					  struct io_uring_cqe *out, int want)
{
	int got = tu_reap(ring, out, want);

	if (got == 0 && tu_lacks_before(6, 13, "tag CQEs for resources "
					"dropped by unregister"))
		return 0;
	CHECK_EQ(got, want, "tag cqes on unregister");
	return 1;
}

/* True when no CQE shows up within 200 ms. */
static inline int tu_quiet(struct io_uring *ring)
{
	struct io_uring_cqe cqe;

	return tu_reap_ns(ring, &cqe, 1, 200000000LL) == 0;
}

#endif
