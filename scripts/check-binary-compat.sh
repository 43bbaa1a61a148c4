#!/bin/sh
# Binary drop-in: programs compiled against Debian's liburing-dev headers and
# linked to the distribution's liburing.so.2 run unchanged with ours in its
# place (LD_LIBRARY_PATH and LD_PRELOAD), and really use ours.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
lib=$top/build/lib
if [ ! -f /usr/include/liburing.h ] || ! ls /usr/lib/*/liburing.so >/dev/null 2>&1; then
    echo "skip: Debian's liburing-dev is not installed (scripts/install-deps.sh installs it)" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c 5000000 /dev/urandom > "$tmp/in"

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
