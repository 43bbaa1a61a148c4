#!/bin/sh
# Runs every test of the project; `make test` calls it after building.
# Prints one line per test and ends with "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
B=$top/build
CC=${CC:-cc}
CFLAGS_T="-std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -I$top/include"
pass=0 fail=0 skip=0 failed=""

report() { # name status
    case $2 in
    0)  pass=$((pass + 1)); echo "PASS $1" ;;
    77) skip=$((skip + 1)); echo "SKIP $1" ;;
    *)  fail=$((fail + 1)); failed="$failed $1"; echo "FAIL $1 (exit $2)" ;;
    esac
}

# 1. Rust unit and integration tests.
if cargo test --release --quiet >"$B/cargo-test.log" 2>&1; then
    report cargo-test 0
else
    cat "$B/cargo-test.log"; report cargo-test 1
fi
grep -E '^test result:' "$B/cargo-test.log" | sed 's/^/    /'

# 2. Shell-driven checks: scripts/check-*.sh and c-tests/*.sh.
for t in scripts/check-*.sh c-tests/*.sh; do
    [ -f "$t" ] || continue
    case $t in c-tests/gen-*) continue ;; esac
    out=$(sh "$t" 2>&1); st=$?
    [ $st -ne 0 ] && [ $st -ne 77 ] && printf '%s\n' "$out" | tail -30
    [ $st -eq 77 ] && printf '%s\n' "$out" | tail -1 | sed 's/^/    /'
    report "$(basename "$t")" $st
done

# 3. C tests, each linked against the shared and against the static library,
# then (shared) on the userspace engine: once chosen with
# LIBURING_RS_ENGINE=user, once by auto mode with io_uring blocked by
# seccomp (EPERM and ENOSYS in turn; scripts/check-no-uring.sh built the
# helper and skipped if seccomp is unavailable).
tbin=$B/c-tests
mkdir -p "$tbin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
blocked=EPERM
[ -x "$B/no-uring" ] && "$B/no-uring" EPERM true 2>/dev/null || blocked=
for src in c-tests/*.c; do
    name=$(basename "$src" .c)
    for kind in shared static engine blocked; do
        exe=$tbin/$name.$kind
        run=
        case $kind in
        shared) link="-L$B/lib -luring -Wl,-rpath,$B/lib" ;;
        static) link="$B/lib/liburing.a" ;;
        engine) exe=$tbin/$name.shared; run="env LIBURING_RS_ENGINE=user" ;;
        blocked)
            exe=$tbin/$name.shared
            if [ -z "$blocked" ]; then report "$name [blocked]" 77; continue; fi
            run="$B/no-uring $blocked"
            blocked=$([ $blocked = EPERM ] && echo ENOSYS || echo EPERM) ;;
        esac
        if [ $kind = shared ] || [ $kind = static ]; then
            if ! $CC $CFLAGS_T -o "$exe" "$src" $link -lpthread 2>"$work/cc.log"; then
                cat "$work/cc.log"; report "$name [$kind] (build)" 1; continue
            fi
        fi
        [ -x "$exe" ] || { report "$name [$kind] (not built)" 1; continue; }
        (cd "$work" && env -u LIBURING_RS_ENGINE timeout 120 $run "$exe") >"$work/out.log" 2>&1; st=$?
        [ $st -ne 0 ] && [ $st -ne 77 ] && tail -20 "$work/out.log"
        [ $st -eq 77 ] && tail -1 "$work/out.log" | sed 's/^/    /'
        report "$name [$kind]" $st
    done
done

echo
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
