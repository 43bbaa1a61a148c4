#!/bin/sh
# Binary drop-in: programs compiled against Debian's liburing-dev headers and
# linked to the distribution's liburing.so.2 run unchanged with ours in its
# place (LD_LIBRARY_PATH and LD_PRELOAD), and really use ours. Then
# LIBURING_RS_TRACE on the copiers: every read and write they make appears
# once as submitted and once as completed (or in the count of completions
# the program reaped before the trace could see them).
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

for ex in link-cp io_uring-cp nop-demo; do
    # System headers and system library only: no -I or -L of ours.
    cc -O2 -o "$tmp/$ex" "$top/examples/$ex.c" -luring
    readelf -V "$tmp/$ex" | grep -q 'LIBURING_2' || { echo "$ex: no versioned liburing references"; exit 1; }
done
for ex in link-cp io_uring-cp nop-demo; do
    for how in LD_LIBRARY_PATH LD_PRELOAD; do
        if [ $how = LD_LIBRARY_PATH ]; then
            run="env LD_LIBRARY_PATH=$lib"
        else
            run="env LD_PRELOAD=$lib/liburing.so.2"
        fi
        # The loader must resolve liburing.so.2 to ours, and warn about nothing.
        $run LD_DEBUG=libs LD_DEBUG_OUTPUT="$tmp/ld" "$tmp/nop-demo" 10 >/dev/null
        grep -h 'calling init' "$tmp"/ld.* | grep -q "$lib/liburing.so.2" ||
            { echo "$how: did not load $lib/liburing.so.2"; exit 1; }
        rm -f "$tmp"/ld.*
        case $ex in
        nop-demo) $run "$tmp/$ex" 1000 2>"$tmp/err" >/dev/null ;;
        *) rm -f "$tmp/out"; $run "$tmp/$ex" "$tmp/in" "$tmp/out" 2>"$tmp/err"; cmp "$tmp/in" "$tmp/out" ;;
        esac
        if [ -s "$tmp/err" ]; then echo "$ex ($how) printed:"; cat "$tmp/err"; exit 1; fi
    done
done
echo "Debian-built link-cp, io_uring-cp and nop-demo run on our liburing.so.2"

# prog, block size, read opcode, write opcode
for spec in "link-cp 65536 READ WRITE" "io_uring-cp 32768 READV WRITEV"; do
    set -- $spec
    prog=$1 bs=$2 rd=$3 wr=$4
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
