#!/bin/sh
# Interception (uring-run, LIBURING_RS_INTERCEPT=1): the raw io_uring
# programs of c-tests/intercept/ run on the kernel and under uring-run with
# io_uring blocked by seccomp (EPERM, ENOSYS) or with the engine asked for,
# and must pass the same checks each time; a program without io_uring runs
# unchanged under uring-run; AT_SECURE turns the mode off; an unprivileged
# process gets no_new_privs only because the filter needs it; fio's own
# io_uring engine passes its crc32c verify (when fio is installed). Through
# uring-run's syscall(3) object the calls a program makes with syscall(3)
# take no trap; its own `syscall` instructions still do.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
T=$B/intercept
run=$B/bin/uring-run
nouring=$B/helpers/no-uring
CC=${CC:-cc}
CF="-std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -I$top/include"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

[ "$(uname -m)" = x86_64 ] || { echo "skip: interception is x86_64 only"; exit 77; }
[ -x "$run" ] && [ -x "$nouring" ] || { echo "skip: build uring-run and build/helpers first"; exit 77; }
"$nouring" EPERM true 2>/dev/null || { echo "skip: cannot install a seccomp filter here"; exit 77; }
mkdir -p "$T"
for src in "$top"/c-tests/intercept/*.c; do
    n=$(basename "$src" .c)
    $CC $CF -o "$T/$n" "$src" -L"$B/lib" -luring -Wl,-rpath,"$B/lib" || { bad "build $n"; continue; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The kernel's answer is the reference, where io_uring is allowed here.
kernel=1
"$T/setup-errno" | grep -q '^setup=fd' || kernel=0
# The last way has no syscall(3) object: every io_uring call traps.
for t in raw-ring bad-raw sigsys-own ring-close raw-resize; do
    if [ $kernel -eq 1 ]; then
        out=$("$T/$t" 2>&1) || bad "$t on the kernel: $out"
    fi
    for how in "$nouring EPERM $run" "$nouring ENOSYS $run" "env LIBURING_RS_ENGINE=user $run" \
               "$nouring EPERM env LD_PRELOAD=$B/lib/liburing.so.2 LIBURING_RS_INTERCEPT=1"; do
        out=$($how "$T/$t" 2>&1) || bad "$t under $how: $out"
    done
done

# syscall(3) through liburing-rs-syscall.so: with SIGSYS blocked (a trap
# would kill), the io_uring calls of a syscall(3) caller are served without
# a trap under uring-run, and kill the process with interception but
# without the object; a program's own `syscall` instruction still traps.
# With the object alone (no interception, no liburing) the kernel answers
# as through glibc's syscall(3): a ring, or -1 and EPERM where blocked.
shimso=$B/lib/liburing-rs-syscall.so.2.15
if command -v readelf >/dev/null; then
    ex=$(readelf --dyn-syms -W "$shimso" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") { print $8 }')
    [ "$ex" = syscall ] || bad "liburing-rs-syscall.so exports [$ex], not syscall alone (unversioned)"
    nd=$(readelf -d "$shimso" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    [ "$nd" = libc.so.6 ] || bad "liburing-rs-syscall.so needs [$nd]"
fi
if [ $kernel -eq 1 ]; then
    out=$("$T/shim" syscall 2>&1) || bad "shim syscall on the kernel: $out"
    out=$("$T/shim" asm 2>&1); [ "$out" = asm=direct ] || bad "shim asm on the kernel: $out"
    out=$(env LD_PRELOAD="$shimso" "$T/shim" syscall 2>&1) || bad "shim syscall, object alone, kernel: $out"
    out=$(env LD_PRELOAD="$shimso" "$T/setup-errno"); case $out in setup=fd*) ;; *) bad "object alone, kernel: $out" ;; esac
fi
for how in "$nouring EPERM $run" "$nouring ENOSYS $run" "env LIBURING_RS_ENGINE=user $run"; do
    out=$($how "$T/shim" syscall 2>&1) || bad "shim syscall under $how: $out"
    out=$($how "$T/shim" asm 2>&1); [ "$out" = asm=trapped ] || bad "shim asm under $how: $out"
done
"$nouring" EPERM env LD_PRELOAD="$B/lib/liburing.so.2" LIBURING_RS_INTERCEPT=1 "$T/shim" syscall >/dev/null 2>&1; st=$?
[ $st -eq $((128 + 31)) ] || bad "shim syscall trapped without the object: exit $st, not death by SIGSYS"
out=$("$nouring" EPERM env LD_PRELOAD="$shimso" "$T/setup-errno")
case $out in setup=errno1*) ;; *) bad "object alone, io_uring blocked: $out" ;; esac
# A uring-run with no lib/ beside it (Debian's layout) names both objects
# for the loader's path, the syscall(3) one only if the loader finds it.
mkdir -p "$work/bin" && cp "$run" "$work/bin/uring-run"
out=$(LD_LIBRARY_PATH=$B/lib "$work/bin/uring-run" sh -c 'echo "$LD_PRELOAD"')
[ "$out" = liburing.so.2:liburing-rs-syscall.so.2.15 ] || bad "uring-run away from lib/, object on the path: $out"
if ! ldconfig -p 2>/dev/null | grep -q liburing-rs-syscall; then
    out=$("$work/bin/uring-run" sh -c 'echo "$LD_PRELOAD"' 2>&1)
    [ "$out" = liburing.so.2 ] || bad "uring-run away from lib/, object nowhere: $out"
fi
echo "syscall(3) object: io_uring calls served with no trap; inline syscall traps; alone it is glibc's syscall"

# The project's C tests that make raw calls of their own (skipped in the
# [blocked] mode of scripts/test.sh) pass under uring-run, through
# liburing's raw wrappers as through the system calls.
for t in enter-raw regress-raw-setup; do
    $CC $CF -o "$T/c-$t" "$top/c-tests/$t.c" -L"$B/lib" -luring -Wl,-rpath,"$B/lib" -lpthread || { bad "build $t"; continue; }
    out=$("$nouring" EPERM "$run" "$T/c-$t" 2>&1) || bad "c-tests/$t under uring-run: $out"
done

# The container's policy: OPENAT denied through interception, and
# allowed through the kernel's io_uring, which bypasses seccomp.
out=$("$nouring" EPERM "$run" "$T/policy" engine 2>&1) || bad "policy engine: $out"
echo "$out"
if [ $kernel -eq 1 ]; then
    out=$("$T/policy" kernel 2>&1) || bad "policy kernel: $out"
    echo "$out"
fi

# Interception only where the engine serves: with io_uring allowed and no
# engine asked for, the kernel's rings are used; under AT_SECURE (file
# capabilities, as nobody) the setting is ignored.
if [ $kernel -eq 1 ]; then
    out=$("$run" "$T/setup-errno")
    case $out in setup=fd*) ;; *) bad "uring-run with io_uring allowed: $out" ;; esac
fi
out=$("$nouring" EPERM "$run" "$T/setup-errno")
case $out in "setup=fd0 secure=0 nnp=1"*) ;; *) bad "uring-run, io_uring blocked: $out" ;; esac
if command -v setcap >/dev/null && command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
    cp "$T/setup-errno" "$work/setup-errno" && chmod 755 "$work" "$work/setup-errno"
    if setcap cap_net_raw+ep "$work/setup-errno" 2>/dev/null &&
       setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$work/setup-errno" 2>/dev/null &&
       setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$B/lib/liburing.so.2"; then
        out=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
              "$nouring" EPERM env LIBURING_RS_INTERCEPT=1 "$work/setup-errno")
        case $out in "setup=errno1 secure=1"*) ;; *) bad "AT_SECURE: interception not ignored: $out" ;; esac
        # Unprivileged, no filter yet: no_new_privs is set for ours.
        out=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
              env LIBURING_RS_ENGINE=user "$run" "$T/setup-errno")
        case $out in "setup=fd0 secure=0 nnp=1"*) ;; *) bad "unprivileged: $out" ;; esac
        out=$(LIBURING_RS_ENGINE=user "$run" "$T/setup-errno")
        case $out in "setup=fd0 secure=0 nnp=0"*) ;; *) bad "root: no_new_privs set though not needed: $out" ;; esac
    else
        echo "note: AT_SECURE and unprivileged checks skipped (nobody cannot run from $B)"
    fi
fi

# Children: an exec'd dynamically linked program keeps the interception;
# one that cannot load the library (static, or a cleared environment)
# inherits the filter alone and dies of SIGSYS at its first io_uring call.
out=$("$nouring" EPERM "$run" sh -c "\"$T/raw-ring\" && exec \"$T/bad-raw\"" 2>&1) ||
    bad "exec'd children under uring-run: $out"
if $CC $CF -static -o "$work/setup-static" "$top/c-tests/intercept/raw-ring.c" 2>/dev/null; then
    "$nouring" EPERM "$run" sh -c "\"$work/setup-static\"" >/dev/null 2>&1; st=$?
    [ $st -eq $((128 + 31)) ] || bad "a static child: exit $st, not death by SIGSYS"
    "$nouring" EPERM "$run" env -i "$T/raw-ring" >/dev/null 2>&1; st=$?
    [ $st -eq $((128 + 31)) ] || bad "a child with a cleared environment: exit $st, not death by SIGSYS"
    echo "children: exec'd dynamic program intercepted; static child and env -i child killed by SIGSYS (the documented limit)"
fi

# A program without io_uring: same output and exit status.
prog='ls -l /proc/self/fd >/dev/null; seq 1 20000 | sort -r | head -3; dd if=/dev/zero bs=1k count=64 2>/dev/null | od | tail -1; exit 7'
a=$("$nouring" EPERM sh -c "$prog" 2>&1); sa=$?
b=$("$nouring" EPERM "$run" sh -c "$prog" 2>&1); sb=$?
[ "$a" = "$b" ] && [ $sa -eq $sb ] || bad "a program without io_uring differs under uring-run: [$a]($sa) vs [$b]($sb)"
out=$("$run" sh -c 'exit 3'); [ $? -eq 3 ] || bad "exit status not kept"
"$run" /nonexistent/program 2>/dev/null; [ $? -eq 127 ] || bad "a missing program is not 127"
"$run" >/dev/null 2>&1; [ $? -eq 2 ] || bad "no program is not a usage error"

# A program on the io-uring crate: the same output as on the kernel.
if cargo build -q --release --offline --example intercept_crate 2>/dev/null ||
   cargo build -q --release --example intercept_crate 2>/dev/null; then
    ex=$top/target/release/examples/intercept_crate
    e=$("$nouring" EPERM "$run" "$ex" 2>&1) || bad "intercept_crate under uring-run: $e"
    echo "$e" | grep -q '^epoll: ring fd ready, completion Some((4, -62))$' || bad "intercept_crate: $e"
    if [ $kernel -eq 1 ]; then
        k=$("$ex" 2>&1) || bad "intercept_crate on the kernel: $k"
        [ "$k" = "$e" ] || bad "intercept_crate differs: kernel [$k] engine [$e]"
    fi
    echo "intercept_crate (io-uring crate): same output as on the kernel"
    # The crate calls syscall(3): under uring-run none of its enter and
    # register calls trap (strace counts the SIGSYS deliveries), where
    # without the object each does. (strace, loading the library too, puts
    # the filter in place before the exec: the library's probe setup traps.)
    if command -v strace >/dev/null; then
        traps() { grep 'SIGSYS {' "$work/st" | grep -Ec 'si_syscall=__NR_io_uring_(enter|register)'; }
        "$nouring" EPERM "$run" strace -f -o "$work/st" -e trace=none -e signal=SIGSYS "$ex" >/dev/null 2>&1
        a=$(traps)
        "$nouring" EPERM env LD_PRELOAD="$B/lib/liburing.so.2" LIBURING_RS_INTERCEPT=1 \
            strace -f -o "$work/st" -e trace=none -e signal=SIGSYS "$ex" >/dev/null 2>&1
        b=$(traps)
        [ "$a" -eq 0 ] && [ "$b" -gt 0 ] || bad "intercept_crate: $a enter/register traps under uring-run, $b without the object"
        echo "intercept_crate: $a enter/register calls trapped under uring-run, $b without the syscall(3) object"
    fi
else
    echo "note: examples/intercept_crate did not build (no io-uring crate offline?)"
fi

# fio's io_uring engine, verified.
"$T/fio-verify" "$nouring" "$run" "$work"; st=$?
[ $st -eq 0 ] || [ $st -eq 77 ] || bad "fio-verify (exit $st)"

[ $fail -eq 0 ] && echo "intercept: raw programs, policy, SIGSYS, AT_SECURE, fio verify: ok"
exit $fail
