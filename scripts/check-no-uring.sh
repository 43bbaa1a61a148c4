#!/bin/sh
# io_uring blocked by seccomp (c-tests/helpers/no-uring), as container
# runtimes do: in auto mode the library falls back to its userspace engine,
# and examples/link-cp still copies files exactly, under EPERM and ENOSYS.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nouring=$B/helpers/no-uring
[ -x "$nouring" ] || ${CC:-cc} -O2 -Wall -Wextra -Werror "$top/c-tests/helpers/no-uring.c" -o "$nouring"
if ! "$nouring" EPERM true 2>/dev/null; then
    echo "SKIP: seccomp filters unavailable here"
    exit 77
fi
for err in EPERM ENOSYS; do
    for size in 0 4095 131073 9000001; do
        head -c $size /dev/urandom > "$tmp/in"
        rm -f "$tmp/out"
        unset LIBURING_RS_ENGINE
        "$nouring" $err "$B/examples/link-cp" "$tmp/in" "$tmp/out"
        cmp "$tmp/in" "$tmp/out" || { echo "link-cp under $err: copy of $size bytes differs"; exit 1; }
    done
done
echo "link-cp with io_uring blocked (EPERM, ENOSYS) copies 0 B to 9 MB exactly"
