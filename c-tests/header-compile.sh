#!/bin/sh
# Compile a small program against include/liburing.h in every language mode
# we promise to support, warnings as errors; then check that src/ffi.c turns
# exactly the helpers listed for liburing-ffi.so.2 into symbols.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
CC=${CC:-gcc}
CXX=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/prog.c" <<'PROG'
#include <liburing.h>

#if IO_URING_CHECK_VERSION(2, 15)
#error "header claims to be older than 2.15"
#endif
#if !IO_URING_CHECK_VERSION(2, 16)
#error "header claims to be 2.16 or newer"
#endif
#ifndef LIBURING_HAVE_DATA64
#error "LIBURING_HAVE_DATA64 missing"
#endif

int use_header(struct io_uring *ring);
int use_header(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	unsigned head, pos, seen = 0;
	struct { unsigned head; } at;
	char buf[16];

	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_read(sqe, 0, buf, sizeof(buf), 0);
	io_uring_sqe_set_data64(sqe, 42);
	sqe = io_uring_get_sqe128(ring);
	if (sqe)
		io_uring_prep_nop128(sqe);
	io_uring_for_each_cqe(ring, head, cqe) {
		seen += io_uring_cqe_nr(cqe);
	}
	/* Any name, or a member, for the position: not only "head". */
	io_uring_for_each_cqe(ring, pos, cqe) {
		seen += pos & 0;
	}
	io_uring_for_each_cqe(ring, at.head, cqe) {
		seen += at.head & 0;
	}
	io_uring_cq_advance(ring, seen);
	if (io_uring_peek_cqe(ring, &cqe) == 0)
		io_uring_cqe_seen(ring, cqe);
	io_uring_smp_store_release(ring->cq.khead,
				   io_uring_smp_load_acquire(ring->cq.khead));
	IO_URING_WRITE_ONCE(*ring->sq.kflags, IO_URING_READ_ONCE(*ring->sq.kflags));
	io_uring_smp_mb();
	return io_uring_submit(ring) + (int) io_uring_sq_ready(ring) +
		(int) io_uring_cq_ready(ring);
}
PROG
cp "$tmp/prog.c" "$tmp/prog.cc"

fail=0
check() {
	desc=$1; shift
	if "$@" -I"$root/include" -o "$tmp/out.o" 2>"$tmp/err"; then
		echo "ok   $desc"
	else
		echo "FAIL $desc"; sed -n '1,20s/^/     /p' "$tmp/err"
		fail=1
	fi
}

W="-Wall -Wextra -Werror"
check "C gnu11"               $CC  -std=gnu11 $W -c "$tmp/prog.c"
check "C gnu11 _GNU_SOURCE"   $CC  -std=gnu11 -D_GNU_SOURCE $W -c "$tmp/prog.c"
check "C c99"                 $CC  -std=c99 $W -c "$tmp/prog.c"
check "C c99 _GNU_SOURCE"     $CC  -std=c99 -D_GNU_SOURCE $W -c "$tmp/prog.c"
check "C c11"                 $CC  -std=c11 $W -c "$tmp/prog.c"
check "C++ c++11"             $CXX -std=c++11 $W -c "$tmp/prog.cc"
check "C++ c++11 _GNU_SOURCE" $CXX -std=c++11 -D_GNU_SOURCE $W -c "$tmp/prog.cc"
check "C++ c++11 no GNU"      $CXX -std=c++11 -U_GNU_SOURCE $W -c "$tmp/prog.cc"
check "C++ c++17"             $CXX -std=c++17 $W -c "$tmp/prog.cc"
check "C++ c++20"             $CXX -std=c++20 $W -c "$tmp/prog.cc"
check "C++ c++20 _GNU_SOURCE" $CXX -std=c++20 -D_GNU_SOURCE $W -c "$tmp/prog.cc"

# Macro hygiene: a parameter of a function-like macro that is also the
# name of a member the body reaches (x.param, p->param) is replaced there
# by the caller's argument, so only callers who happen to use that very
# name compile.
clash=$(perl -0777 -ne 's/\\\n/ /g;
	while (/^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)(.*)$/mg) {
		my ($n, $b) = ($1, $3);
		for my $p (split /\s*,\s*/, $2) {
			next if $p eq "" || $p eq "...";
			print "$ARGV: $n($p)\n" if $b =~ /(\.|->)\s*\Q$p\E\b/;
		}
	}' "$root"/include/liburing.h "$root"/include/liburing/*.h)
if [ -n "$clash" ]; then
	echo "FAIL macro parameter also named as a member: $clash"; fail=1
else
	echo "ok   no macro parameter doubles as a member name"
fi

# src/ffi.c: must build cleanly and define every liburing-ffi-only symbol.
check "src/ffi.c" $CC -std=gnu11 $W -fPIC -c "$root/src/ffi.c"
if [ $fail -eq 0 ]; then
	tsv="$root/abi/liburing-2.15-symbols.tsv"
	awk -F'\t' '$3=="liburing-ffi.so.2"{print $1}' "$tsv" | sort -u > "$tmp/ffi"
	awk -F'\t' '$3=="liburing.so.2"{print $1}' "$tsv" | sort -u > "$tmp/core"
	comm -23 "$tmp/ffi" "$tmp/core" > "$tmp/want"
	nm "$tmp/out.o" | awk '$2=="T"{print $3}' | sort -u > "$tmp/have"
	missing=$(comm -23 "$tmp/want" "$tmp/have")
	if [ -n "$missing" ]; then
		echo "FAIL ffi.o lacks: $missing"; fail=1
	else
		echo "ok   ffi.o defines all $(wc -l < "$tmp/want") ffi-only symbols"
	fi
	# the library itself provides io_uring_get_sqe; a copy here would clash
	if grep -qx io_uring_get_sqe "$tmp/have"; then
		echo "FAIL ffi.o defines io_uring_get_sqe"; fail=1
	fi
fi

exit $fail
