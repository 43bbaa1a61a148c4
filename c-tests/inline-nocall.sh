#!/bin/sh
# The hot helpers must stay inline: a function that gets an SQE, preps it,
# sets its data and flags, walks the CQ and advances it compiles to code
# with no call at all (neither into the library nor anywhere else).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/hot.c" <<'C'
#include <liburing.h>

unsigned hot(struct io_uring *ring, int fd, void *buf, void *data)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;

	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return 0;
	io_uring_prep_read(sqe, fd, buf, 4096, 0);
	io_uring_sqe_set_data(sqe, data);
	io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return 0;
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 42);
	io_uring_for_each_cqe(ring, head, cqe)
		seen += (unsigned) cqe->res;
	io_uring_cq_advance(ring, seen & 1);
	if (io_uring_peek_cqe(ring, &cqe) == 0 && cqe)
		io_uring_cqe_seen(ring, cqe);
	return seen + io_uring_cq_ready(ring) + io_uring_sq_ready(ring);
}
C
for opt in -O2 -O3; do
    cc -std=gnu11 $opt -I"$top/include" -c "$tmp/hot.c" -o "$tmp/hot.o"
    # io_uring_peek_cqe may fall back to the library when the CQ is empty;
    # everything else must be inline.
    calls=$(objdump -dr "$tmp/hot.o" | grep -E 'R_X86_64_(PLT32|PC32|GOTPCREL)' |
            grep -v '__io_uring_get_cqe' || true)
    if [ -n "$calls" ]; then
        echo "calls out of the inline hot path at $opt:"
        echo "$calls"
        exit 1
    fi
done
echo "get_sqe, prep, set_data, for_each_cqe, cq_advance, cqe_seen: no calls"
