#!/bin/sh
# LIBURING_RS_TRACE on binaries built against Debian's liburing-dev (its
# header, its inline helpers) and run with our library in LD_PRELOAD: every
# read and write a copy makes appears once as submitted and once as
# completed (or in the count of completions the program reaped unseen).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
lib=$top/build/lib
if [ ! -f /usr/include/liburing.h ] || ! ls /usr/lib/*/liburing.so >/dev/null 2>&1; then
    echo "skip: Debian's liburing-dev is not installed (scripts/install-deps.sh installs it)" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
size=5000000
head -c $size /dev/urandom > "$tmp/in"

# prog, block size, read opcode, write opcode
for spec in "link-cp 65536 READ WRITE" "io_uring-cp 32768 READV WRITEV"; do
    set -- $spec
    prog=$1 bs=$2 rd=$3 wr=$4
    cc -O2 -o "$tmp/$prog" "$top/examples/$prog.c" -luring
    rm -f "$tmp"/trace.* "$tmp/out"
    LD_PRELOAD=$lib/liburing.so.2 LIBURING_RS_TRACE="$tmp/trace.%p" "$tmp/$prog" "$tmp/in" "$tmp/out"
    cmp "$tmp/in" "$tmp/out"
    set -- "$tmp"/trace.*
    [ $# = 1 ] && [ -f "$1" ] || { echo "$prog: expected one trace file, got: $*"; exit 1; }
    t=$1
    case $t in *".$(grep -m1 -o 'pid=[0-9]*' "$t" | cut -d= -f2)") ;;
    *) echo "$prog: trace file $t is not named after the traced pid"; exit 1 ;; esac

    chunks=$(( (size + bs - 1) / bs ))
    reads=$(grep -c " submit $rd " "$t" || true)
    writes=$(grep -c " submit $wr " "$t" || true)
    done_io=$(grep -c -E " complete .* op=($rd|$wr) " "$t" || true)
    unseen=$(sed -n 's/.* exit .*completions_unseen=\([0-9]*\).*/\1/p' "$t")
    echo "$prog: $chunks blocks; traced $reads $rd, $writes $wr submitted, $done_io completed, ${unseen:-?} reaped unseen"
    [ "$reads" = "$chunks" ] && [ "$writes" = "$chunks" ] ||
        { echo "$prog: want $chunks of each"; exit 1; }
    [ -n "$unseen" ] && [ $((done_io + unseen)) = $((2 * chunks)) ] ||
        { echo "$prog: completions do not add up"; exit 1; }
    if [ "$unseen" = 0 ]; then
        # Every byte read shows in a completion result.
        bytes=$(sed -n "s/.* complete .* res=\([0-9]*\) .* op=$rd .*/\1/p" "$t" | awk '{ s += $1 } END { print s + 0 }')
        [ "$bytes" = $size ] || { echo "$prog: traced $rd results add up to $bytes, not $size"; exit 1; }
    fi
done
