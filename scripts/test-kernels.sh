#!/bin/sh
# Runs the C tests of c-tests/ on Debian's 6.1 and 6.12 kernels under qemu,
# and the same binaries on the host's kernel, then prints a table of the
# results (test x kernel) and writes it as TSV.
#
#   scripts/test-kernels.sh [-o FILE]     (FILE: build/kernels/kernels.tsv)
#
# Each test is built once, linked to build/lib/liburing.a, and must pass or
# skip (exit 77, naming what the kernel lacks) on every kernel; a failure,
# a timeout or a guest that dies before the end fails the run. A guest
# kernel that panics gets one more boot, starting at the test that was
# running; a second panic fails the run. Without qemu,
# busybox or cpio, or with neither a kernel in the cache nor the archive in
# reach, it skips (77).
#
# Environment:
#   LIBURING_RS_KERNEL_CACHE   where the kernel packages are kept
#                              (${XDG_CACHE_HOME:-~/.cache}/liburing-rs/kernels)
#   LIBURING_RS_KERNELS        kernel series to boot ("6.1 6.12")
#   LIBURING_RS_KERNEL_TESTS   names of the tests to run (all of c-tests/*.c)
#   LIBURING_RS_KERNEL_ACCEL   kvm or tcg (default: kvm if a probe boot works)
#   LIBURING_RS_KERNEL_TIMEOUT seconds one test may take in a guest (60)
#   LIBURING_RS_KERNEL_PEER    a built liburing source tree (src/liburing.a,
#                              src/include): the same tests are also built
#                              against it and run beside ours, for comparison
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
out=$B/kernels
table=$out/kernels.tsv
[ "${1:-}" = -o ] && [ -n "${2:-}" ] && table=$2
cache=${LIBURING_RS_KERNEL_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/liburing-rs/kernels}
series=${LIBURING_RS_KERNELS:-6.1 6.12}
ttime=${LIBURING_RS_KERNEL_TIMEOUT:-60}
peer=${LIBURING_RS_KERNEL_PEER:-}
CC=${CC:-cc}
CFLAGS_T="-std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror"

skip() { echo "skip: $*"; exit 77; }
die() { echo "error: $*" >&2; exit 1; }

for tool in qemu-system-x86_64 cpio gzip dpkg-deb apt-get strip readelf; do
    command -v $tool >/dev/null 2>&1 ||
        skip "$tool is missing (scripts/install-deps.sh installs qemu-system-x86, busybox-static and cpio)"
done
busybox=$(command -v busybox) || skip "busybox is missing (install busybox-static)"
readelf -l "$busybox" 2>/dev/null | grep -q INTERP &&
    skip "$busybox is not statically linked (install busybox-static)"
[ -f "$B/lib/liburing.a" ] || die "build/lib/liburing.a is missing: run make first"

rm -rf "$out"
mkdir -p "$out/log" "$cache" || die "cannot create $out or $cache"

# --- Kernels: the newest cloud image of each series, kept in the cache.
# Prints the kernel's release name after making sure $cache/vmlinuz-<it> exists.
fetch_kernel() { # series
    pat="^linux-image-$(echo "$1" | sed 's/\./\\./g')[.-].*-cloud-amd64-unsigned\$"
    pkg=$(apt-cache pkgnames linux-image- 2>/dev/null | grep -E "$pat" | sort -V | tail -1)
    if [ -n "$pkg" ] && ! ls "$cache/${pkg}_"*.deb >/dev/null 2>&1; then
        # Into a private directory first: another run may share the cache.
        dl=$(mktemp -d "$cache/dl.XXXXXX")
        if (cd "$dl" && apt-get download "$pkg") >"$out/log/apt-$1.log" 2>&1; then
            # The new package replaces the older ones of its series.
            for old in $(ls "$cache" | grep -E "${pat%\$}_"); do
                o=$(echo "$old" | sed -e 's/_.*//' -e 's/^linux-image-//' -e 's/-unsigned$//')
                rm -f "$cache/$old" "$cache/vmlinuz-$o"
            done
            mv "$dl"/*.deb "$cache/"
        else
            pkg=
        fi
        rm -rf "$dl"
    fi
    # Offline, or the archive dropped the package: the newest one cached.
    [ -n "$pkg" ] && ls "$cache/${pkg}_"*.deb >/dev/null 2>&1 ||
        pkg=$(ls "$cache" | grep -E "${pat%\$}_" | sort -V | tail -1 | sed 's/_.*//')
    [ -n "$pkg" ] || return 1
    deb=$(ls "$cache/${pkg}_"*.deb | tail -1)
    rel=$(echo "$pkg" | sed -e 's/^linux-image-//' -e 's/-unsigned$//')
    if [ ! -s "$cache/vmlinuz-$rel" ]; then
        dpkg-deb --fsys-tarfile "$deb" | tar -xO "./boot/vmlinuz-$rel" >"$cache/vmlinuz-$rel.$$" &&
            mv "$cache/vmlinuz-$rel.$$" "$cache/vmlinuz-$rel" || { rm -f "$cache/vmlinuz-$rel.$$"; return 1; }
    fi
    # The upstream version ("6.1.192") names the column of the table.
    ver=$(basename "$deb" | sed -e 's/^[^_]*_//' -e 's/[-~_].*//')
    echo "$rel $ver"
}

kernels=""
for s in $series; do
    k=$(fetch_kernel "$s") ||
        skip "no $s kernel: none found with apt-cache or fetched with apt-get download (log: $out/log/apt-$s.log), and none in $cache"
    kernels="$kernels $(echo "$k" | tr ' ' '/')"
done

# --- Test programs, one set per library.
tests=${LIBURING_RS_KERNEL_TESTS:-$(cd "$top/c-tests" && ls *.c | sed 's/\.c$//')}
build_set() { # set cflags libs
    mkdir -p "$out/bin/$1" "$out/root/t/$1"
    for t in $tests; do
        [ -f "$top/c-tests/$t.c" ] || die "no test c-tests/$t.c"
        if $CC $CFLAGS_T $2 -o "$out/bin/$1/$t" "$top/c-tests/$t.c" $3 -lpthread \
            >"$out/log/cc-$1-$t.log" 2>&1; then
            strip -o "$out/root/t/$1/$t" "$out/bin/$1/$t"
        else
            echo "$1 $t nobuild 0 see $out/log/cc-$1-$t.log" >>"$out/nobuild"
        fi
    done
}
: >"$out/nobuild"
build_set rs "-I$top/include" "$B/lib/liburing.a"
grep '^rs ' "$out/nobuild" && die "tests did not build"
# Helper programs the tests run (c-tests/helpers/), found by the tests at
# ../helpers/ from their own directory.
mkdir -p "$out/root/t/helpers"
for h in "$top"/c-tests/helpers/*.c; do
    [ -f "$h" ] || continue
    $CC $CFLAGS_T -o "$out/root/t/helpers/$(basename "$h" .c)" "$h" \
        >"$out/log/cc-helper.log" 2>&1 || die "helper $h did not build"
done
sets=rs
if [ -n "$peer" ]; then
    [ -f "$peer/src/liburing.a" ] || die "$peer/src/liburing.a is missing"
    build_set peer "-I$peer/src/include" "$peer/src/liburing.a"
    sets="rs peer"
fi

# The diagnostics library, which statically linked tests find only through
# LIBURING_RS_DIAG_LIB.
mkdir -p "$out/root/t/lib"
cp "$B/lib/liburing-rs-diag.so.2.15" "$out/root/t/lib/" || die "build/lib/liburing-rs-diag.so.2.15 is missing"

# --- The initramfs: busybox, the tests, the shared libraries they load, /init.
root=$out/root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp "$busybox" "$root/bin/busybox"
for lib in $(ldd "$out"/root/t/*/* 2>/dev/null | grep -oE '/[^ :]+\.so[^ :]*' | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
cat >"$root/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
ip link set lo up
case \$(cat /proc/cmdline) in *lrs.probe*) echo "@@KT-PROBE"; poweroff -f ;; esac
echo "@@KT-BEGIN \$(uname -r)"
export LIBURING_RS_DIAG_LIB=/t/lib/liburing-rs-diag.so.2.15
export LIBURING_RS_TEST_EMULATED=1
$(sed -n '/^#GUEST-RUN/,/^#GUEST-RUN-END/p' "$0")
KT_FROM=\$(sed -n 's/.*lrs.from=\([^ ]*\).*/\1/p' /proc/cmdline)
for s in $sets; do run_set \$s /t/\$s $ttime; done
echo "@@KT-END"
poweroff -f
EOF
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs.gz" ||
    die "cannot pack the initramfs"

# Runs every program of a directory in a fresh scratch directory with a
# time limit and prints one "@@KT set test status seconds last-line" line
# each, with the output of failures behind "@@KO". Shared by /init (busybox
# sh) and the host run, so both judge a test the same way.
#GUEST-RUN
run_set() { # set dir seconds; KT_FROM: the set/test a resumed run starts at
    for p in "$2"/*; do
        [ -x "$p" ] || continue
        # Resuming: nothing before that test runs again.
        [ -z "${KT_FROM:-}" ] || [ "$KT_FROM" = "$1/${p##*/}" ] || continue
        KT_FROM=
        w=$(mktemp -d /tmp/kt.XXXXXX)
        read -r t0 _ </proc/uptime
        (cd "$w" && exec timeout -s KILL "$3" "$p") >"$w.log" 2>&1
        st=$?
        retried=
        # Under emulation (TCG) a timing-bound check now and then misses its
        # window; such a test runs once more, and the table says so. A real
        # failure fails twice.
        case $st in 0|77) ;; *)
            if [ -n "${LIBURING_RS_TEST_EMULATED:-}" ]; then
                retried=$( (grep -E ': (SKIP|FAIL): ' "$w.log" || cat "$w.log") | tail -n 1 | tr '\t' ' ')
                rm -rf "$w" && mkdir -p "$w"
                (cd "$w" && exec timeout -s KILL "$3" "$p") >"$w.log" 2>&1
                st=$?
            fi ;;
        esac
        read -r t1 _ </proc/uptime
        secs=$(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }")
        [ $st -eq 137 ] && st=timeout   # the SIGKILL of timeout
        # The verdict line of test-util.h if there is one, else the last.
        msg=$( (grep -E ': (SKIP|FAIL): ' "$w.log" || cat "$w.log") | tail -n 1 | tr '\t' ' ')
        [ -z "$retried" ] || msg="second run (the first: $retried) $msg"
        echo "@@KT $1 ${p##*/} $st $secs $msg"
        case $st in 0|77) ;; *) tail -n 20 "$w.log" | sed "s|^|@@KO $1 ${p##*/}: |" ;; esac
        rm -rf "$w" "$w.log"
    done
}
#GUEST-RUN-END

# --- Acceleration: KVM if a probe boot gets to /init, TCG otherwise.
first=$(echo "$kernels" | awk '{ print $1 }' | cut -d/ -f1)
boot() { # accel vmlinuz append log [seconds]
    case $1 in
    kvm) acc="-enable-kvm -cpu host" ;;
    *)   acc="-accel tcg -cpu max" ;;
    esac
    timeout -s KILL "${5:-1800}" qemu-system-x86_64 $acc -smp 2 -m 1024 -nic none \
        -kernel "$2" -initrd "$out/initramfs.gz" \
        -append "console=ttyS0 quiet panic=-1 $3" -nographic -no-reboot \
        </dev/null >"$4" 2>&1
}
accel=${LIBURING_RS_KERNEL_ACCEL:-}
if [ -z "$accel" ]; then
    accel=tcg
    if [ -w /dev/kvm ]; then
        # A nested guest may stop with a KVM internal error instead of
        # booting (qemu then waits forever), so the probe has a short leash:
        # a working KVM reaches /init in a second or two.
        boot kvm "$cache/vmlinuz-$first" lrs.probe "$out/log/probe-kvm.log" 10
        grep -aq '@@KT-PROBE' "$out/log/probe-kvm.log" && accel=kvm
    fi
fi

# The test after "@@KT set test" in the guests' order (set/test), or the
# first one when given nothing.
next_test() {
    last=${1#@@KT }
    found=
    for s in $sets; do
        for p in "$out/root/t/$s"/*; do
            [ -x "$p" ] || continue
            [ -z "$last" ] || [ -n "$found" ] && { echo "$s/${p##*/}"; return; }
            [ "$s ${p##*/}" = "$last" ] && found=1
        done
    done
}

# --- Runs: each kernel in a guest, then the host.
: >"$out/results"
guest_limit=$(( $(echo "$tests" | wc -w) * $(echo "$sets" | wc -w) * ttime + 300 ))
for k in $kernels; do
    rel=${k%/*} ver=${k#*/}
    log=$out/log/guest-$ver.log
    start=$(date +%s)
    boot "$accel" "$cache/vmlinuz-$rel" "" "$log" $guest_limit
    echo "$ver: $accel guest ran $(( $(date +%s) - start )) s"
    if ! grep -aq '@@KT-BEGIN' "$log"; then
        tail -n 15 "$log" >&2
        skip "the $rel guest did not reach /init under qemu ($accel); console in $log"
    fi
    grep -aoE '@@KT .*' "$log" | tr -d '\r' | sed "s|^@@KT |$ver |" >>"$out/results"
    if ! grep -aq '@@KT-END' "$log" && grep -aq 'Kernel panic' "$log"; then
        # These distribution kernels have panicked under TCG now and then
        # (a double fault in the slab allocator, once in many runs): boot
        # once more at the test that was running. A second panic stands.
        next=$(next_test "$(grep -aoE '@@KT [^ ]+ [^ ]+' "$log" | tail -n 1 | tr -d '\r')")
        echo "$ver: the guest kernel panicked; booting again at $next (console of the first boot in $log.panic)"
        mv "$log" "$log.panic"
        boot "$accel" "$cache/vmlinuz-$rel" "lrs.from=$next" "$log" $guest_limit
        grep -aoE '@@KT .*' "$log" | tr -d '\r' | sed "s|^@@KT |$ver |" >>"$out/results"
    fi
    grep -aq '@@KT-END' "$log" || echo "$ver - guest-died 0 0 the guest stopped before the end" >>"$out/results"
done
host=$(uname -r | sed 's/-.*//')
export LIBURING_RS_DIAG_LIB="$out/root/t/lib/liburing-rs-diag.so.2.15"
for s in $sets; do
    run_set "$s" "$out/root/t/$s" "$ttime" >"$out/log/host-$s.log"
    grep -aoE '@@KT .*' "$out/log/host-$s.log" | sed "s|^@@KT |$host |" >>"$out/results"
done
while read -r s t _ _ msg; do echo "- $s $t nobuild 0 $msg"; done <"$out/nobuild" >>"$out/results"

# --- The table: one row per test, one column per kernel (and per library
# when a peer is given), then the reasons for skips and failures.
cols=""
for k in $kernels; do cols="$cols ${k#*/}"; done
cols="$cols $host"
awk -v cols="$cols" -v sets="$sets" -v host="$host" '
    { key = $1 SUBSEP $2 SUBSEP $3
      st = $4 == "0" ? "pass" : $4 == "77" ? "skip" : $4 == "timeout" ? "timeout" \
         : $4 == "nobuild" ? "nobuild" : "FAIL(" $4 ")"
      res[key] = st
      msg = ""; for (i = 6; i <= NF; i++) msg = msg (i > 6 ? " " : "") $i
      sub(/^[^:]*: (SKIP|FAIL): /, "", msg)
      if (st != "pass") why[key] = msg
      if ($3 != "-" && $3 != "guest-died") names[$3] = 1
      if ($3 == "guest-died") died[$1 SUBSEP $2] = 1 }
    END {
      nc = split(cols, c, " "); ns = split(sets, s, " ")
      hdr = "test"
      for (j = 1; j <= ns; j++) for (i = 1; i <= nc; i++)
          hdr = hdr "\t" (s[j] == "rs" ? "" : "liburing ") c[i] (c[i] == host ? " (host)" : "")
      print hdr "\tnotes"
      n = 0
      for (t in names) {
          for (r = ++n; r > 1 && order[r - 1] > t; r--) order[r] = order[r - 1]
          order[r] = t
      }
      for (r = 1; r <= n; r++) {
          t = order[r]; line = t; nw = 0
          for (j = 1; j <= ns; j++) for (i = 1; i <= nc; i++) {
              key = c[i] SUBSEP s[j] SUBSEP t
              st = key in res ? res[key] : (("-" SUBSEP s[j] SUBSEP t) in res ? "nobuild" \
                 : (c[i] SUBSEP s[j]) in died ? "crash" : "missing")
              if (st == "nobuild") key = "-" SUBSEP s[j] SUBSEP t
              line = line "\t" st
              if (st == "pass" || !(key in why)) continue
              # One note per distinct reason, naming the columns it holds for.
              w = why[key]; lbl = (s[j] == "rs" ? "" : "liburing ") c[i]
              if ((r SUBSEP w) in where) where[r, w] = where[r, w] ", " lbl
              else { where[r, w] = lbl; reason[++nw] = w }
          }
          notes = ""
          for (k = 1; k <= nw; k++)
              notes = notes (k > 1 ? "; " : "") where[r, reason[k]] ": " reason[k]
          print line "\t" notes
      } }' "$out/results" >"$out/kernels.tsv"
if command -v column >/dev/null; then
    column -t -s "$(printf '\t')" "$out/kernels.tsv"
else
    cat "$out/kernels.tsv"
fi

# Our library must pass or skip everywhere; the peer is only compared.
bad=$(awk -F '\t' 'NR == 1 { for (i = 2; i < NF; i++) if ($i !~ /^liburing /) ours[i] = 1; next }
    { for (i in ours) if ($i != "pass" && $i != "skip") print $1 " (" $i ")" }' "$out/kernels.tsv")
if [ -n "$bad" ]; then
    echo "not passing or skipping:" $bad
    grep -aoE '@@KO rs .*' "$out"/log/guest-*.log "$out"/log/host-*.log |
        sed 's/@@KO rs //; s|^.*/log/||' | tr -d '\r' | tail -n 60
    exit 1
fi
if [ "$table" != "$out/kernels.tsv" ]; then
    mkdir -p "$(dirname "$table")" && cp "$out/kernels.tsv" "$table"
fi
echo "every test passed or skipped on$(echo "$cols" | sed 's/ /, /g; s/^,//') ($accel); table in $table"
