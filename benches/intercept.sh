#!/bin/sh
# Interception benchmarks (`make bench` runs this after benches/run.sh and
# appends its section to benches/results.md; alone it prints the section):
# getpid() and close() under a container-like filter with and without
# interception's filter; one io_uring_enter through syscall(3) with
# uring-run's syscall(3) object and trapped (interception without the
# object); NOP round trips at depth 1 and 32 both ways against the same
# engine through liburing; fio 4 KiB
# random reads at QD32 on a page-cache file through interception against
# fio's io_uring engine on the kernel, with psync and libaio beside them.
# Every row's runs are interleaved; medians over BENCH_RUNS runs.
set -eu
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/benches/stats.sh"
B=$REPO/build/bench
# fio's file lives on a disk filesystem (ext4 here), read once so that it
# is all in the page cache, and fio is told not to drop that cache when a
# job starts (--invalidate=0; its default of 1 turns every run into disk
# reads). Not tmpfs: tmpfs refuses RWF_NOWAIT, so the engine would hand
# every read to a worker thread, where on a disk filesystem it reads a
# cached page inline, as the kernel's io_uring does.
DIR=${BENCH_FIO_DIR:-/var/tmp}
[ -d "$DIR" ] || DIR=${BENCH_DIR:-/tmp}
if [ "${BENCH_QUICK:-0}" = 1 ]; then RUNS=${BENCH_RUNS:-3}; SECS=0.3; FIO_SECS=1; FIO_MB=64
else RUNS=${BENCH_RUNS:-7}; SECS=0.5; FIO_SECS=2; FIO_MB=128; fi
run=$REPO/build/bin/uring-run
# Interception without the syscall(3) object: every io_uring call traps.
trapped="env LD_PRELOAD=$REPO/build/lib/liburing.so.2 LIBURING_RS_INTERCEPT=1"
nouring=$REPO/build/helpers/no-uring
say() { printf '%s\n' "$*" >&2; }
mkdir -p "$REPO/build/helpers"
[ -x "$nouring" ] || gcc -O2 -o "$nouring" "$REPO/c-tests/helpers/no-uring.c"
[ -x "$run" ] || { say "intercept bench: build uring-run first (make bin)"; exit 0; }
mkdir -p "$B"
gcc -O2 -g -I"$REPO/include" "$REPO/benches/intercept.c" -o "$B/intercept" \
    "$REPO/build/lib/liburing.so" -Wl,-rpath,"$REPO/build/lib"
RAW=$B/intercept.txt
: > "$RAW"
rec() { printf '%s %s\n' "$1" "$2" >> "$RAW"; }
val() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
FILE=$DIR/liburing-bench-fio.$FIO_MB
if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" != $((FIO_MB * 1048576)) ]; then
    dd if=/dev/urandom of="$FILE" bs=1M count=$FIO_MB status=none
fi
cat "$FILE" > /dev/null
trap 'rm -f "$FILE"' EXIT
have_fio=0; command -v fio >/dev/null && have_fio=1
fio_iops() { # engine depth [prefix...]
    e=$1; d=$2; shift 2
    "$@" fio --name=rr --filename="$FILE" --rw=randread --bs=4k --size=${FIO_MB}M --invalidate=0 \
        --ioengine=$e --iodepth=$d --time_based --runtime=$FIO_SECS --minimal 2>/dev/null | grep '^3;' | cut -d';' -f8
}
export BENCH_SECS=$SECS
i=1
while [ $i -le $RUNS ]; do
    say "intercept bench run $i/$RUNS"
    # getpid in back-to-back pairs: the machine's drift between runs is
    # larger than the difference, so each pair gives one ratio.
    for p in 1 2 3; do
        a=$("$nouring" EPERM "$B/intercept" getpid | val ns)
        f=$("$nouring" EPERM "$run" "$B/intercept" getpid | val ns)
        rec getpid_plain "$a"; rec getpid_filter "$f"
        rec getpid_ratio "$(awk -v a="$a" -v f="$f" 'BEGIN { print f / a }')"
    done
    a=$("$nouring" EPERM "$B/intercept" close | val ns)
    f=$("$nouring" EPERM "$run" "$B/intercept" close | val ns)
    rec close_plain "$a"; rec close_filter "$f"
    rec enter_kernel "$("$B/intercept" enter | val ns)"
    rec enter_shim "$("$nouring" EPERM "$run" "$B/intercept" enter | val ns)"
    rec enter_trapped "$("$nouring" EPERM $trapped "$B/intercept" enter | val ns)"
    for d in 1 32; do
        rec nop_shim_d$d "$("$nouring" EPERM "$run" "$B/intercept" raw $d | val mops)"
        rec nop_trap_d$d "$("$nouring" EPERM $trapped "$B/intercept" raw $d | val mops)"
        rec nop_lib_d$d "$("$nouring" EPERM "$B/intercept" lib $d | val mops)"
    done
    if [ $have_fio = 1 ]; then
        cat "$FILE" > /dev/null
        rec fio_kernel "$(fio_iops io_uring 32 env)"
        rec fio_trap "$(fio_iops io_uring 32 "$nouring" EPERM "$run")"
        rec fio_psync "$(fio_iops psync 1 env)"
        rec fio_libaio "$(fio_iops libaio 32 env)"
    fi
    i=$((i + 1))
done
med() { awk -v k="$1" '$1 == k && $2 != "" { print $2 }' "$RAW" | median; }
echo
echo "## Interception (uring-run, io_uring blocked by seccomp)"
echo
echo "Programs making the raw io_uring system calls, under \`no-uring EPERM uring-run\`, against peers in the same runs"
echo "(interleaved); medians over $RUNS runs. benches/intercept.c and fio $(fio --version 2>/dev/null || echo '(not installed)')."
echo
echo "| metric | through interception | peer | ratio | goal |"
echo "|---|---|---|---|---|"
gp=$(med getpid_plain); gf=$(med getpid_filter); gr=$(med getpid_ratio)
awk -v p="$gp" -v f="$gf" -v r="$gr" 'BEGIN { printf "| getpid(), ns (peer: the container filter alone; ratio: median of %s back-to-back pairs) | %.1f | %.1f | %.3f | within 5%%: %s |\n", "'$((RUNS * 3))'", f, p, r, (r <= 1.05) ? "met" : "NOT met" }'
awk -v f="$(med close_filter)" -v p="$(med close_plain)" 'BEGIN { printf "| close() of an fd that is not open, ns (peer: the container filter alone; the filter tests close()'"'"'s fd) | %.1f | %.1f | %.3f | report |\n", f, p, f / p }'
awk -v t="$(med enter_shim)" -v k="$(med enter_kernel)" 'BEGIN { printf "| one empty io_uring_enter by syscall(3), ns, with the syscall(3) object (peer: the kernel ring) | %.0f | %.0f | %.2f | report |\n", t, k, t / k }'
awk -v t="$(med enter_trapped)" -v k="$(med enter_kernel)" 'BEGIN { printf "| one empty io_uring_enter, ns, trapped (peer: the kernel ring) | %.0f | %.0f | %.1f | report |\n", t, k, t / k }'
for d in 1 32; do
    awk -v t="$(med nop_shim_d$d)" -v x="$(med nop_trap_d$d)" -v l="$(med nop_lib_d$d)" -v d=$d 'BEGIN { printf "| NOP round trips by syscall(3), Mops/s, depth %d, with the syscall(3) object (peer: the engine through liburing) | %.3f | %.3f | %.2f | report: %.1fx the trapped |\n", d, t, l, t / l, t / x }'
    awk -v t="$(med nop_trap_d$d)" -v l="$(med nop_lib_d$d)" -v d=$d 'BEGIN { printf "| NOP round trips by syscall(3), Mops/s, depth %d, trapped (peer: the engine through liburing) | %.3f | %.3f | %.2f | report |\n", d, t, l, t / l }'
done
if [ $have_fio = 1 ]; then
    k=$(med fio_kernel)
    awk -v t="$(med fio_trap)" -v k="$k" 'BEGIN { r = t / k; printf "| fio randread 4 KiB QD32 (page cache), IOPS (peer: fio io_uring on the kernel) | %.0f | %.0f | %.2f | >= 0.7x: %s |\n", t, k, r, (r >= 0.7) ? "met" : "NOT met" }'
    awk -v p="$(med fio_psync)" -v k="$k" 'BEGIN { printf "| fio psync engine (QD1: synchronous), IOPS | %.0f | %.0f | %.2f | beside |\n", p, k, p / k }'
    awk -v p="$(med fio_libaio)" -v k="$k" 'BEGIN { printf "| fio libaio engine QD32, IOPS | %.0f | %.0f | %.2f | beside |\n", p, k, p / k }'
fi
echo
fs=$(stat -f -c %T "$DIR" 2>/dev/null || echo '?')
echo "fio's file is in $DIR ($fs), read before each run's fio rows and kept in the page cache (--invalidate=0); every fio row"
echo "runs with the same options. \"Trapped\" rows run under interception without uring-run's syscall(3) object, so"
echo "that each io_uring call is a seccomp trap and a SIGSYS delivery. fio gains nothing from the object: on x86_64 it"
echo "makes io_uring_enter with a \`syscall\` instruction of its own (fio's FIO_ARCH_HAS_SYSCALL), so each fio submit (one"
echo "io_uring_enter per I/O: fio's default iodepth_batch_submit=1) is still a trapped call, which costs more than the"
echo "4 KiB copy itself; only fio's setup and registrations go through syscall(3)."
