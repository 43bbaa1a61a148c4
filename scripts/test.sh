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

# 0. Test helpers (c-tests/helpers/*.c, e.g. no-uring): programs that tests
#    run, not tests themselves; built into build/helpers/.
mkdir -p "$B/helpers"
for src in c-tests/helpers/*.c; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .c)
    if ! $CC $CFLAGS_T -o "$B/helpers/$name" "$src" 2>"$B/helpers/$name.log"; then
        cat "$B/helpers/$name.log"; report "helpers/$name (build)" 1
    fi
done

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

# 3. C tests, each linked against the shared and against the static
# library, and once more against the static library with AddressSanitizer
# and UBSan (any report fails the test: -fno-sanitize-recover, and ASan's
# leak check at exit). Then (shared) on the userspace engine: once chosen
# with LIBURING_RS_ENGINE=user, once by auto mode with io_uring blocked by
# seccomp (EPERM and ENOSYS in turn, through build/helpers/no-uring).
tbin=$B/c-tests
mkdir -p "$tbin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
nouring=$B/helpers/no-uring
blocked=EPERM
[ -x "$nouring" ] && "$nouring" EPERM true 2>/dev/null || blocked=
for src in c-tests/*.c; do
    name=$(basename "$src" .c)
    for kind in shared static asan engine blocked; do
        exe=$tbin/$name.$kind
        run=
        # A static program finds liburing-rs-diag.so only when told.
        diag=$B/lib/liburing-rs-diag.so.2.15
        case $kind in
        shared) link="-L$B/lib -luring -Wl,-rpath,$B/lib"; diag="" ;;
        static) link="$B/lib/liburing.a" ;;
        asan)   link="$SAN $B/lib/liburing.a" ;;
        engine) exe=$tbin/$name.shared; diag=""; run="env LIBURING_RS_ENGINE=user" ;;
        blocked)
            exe=$tbin/$name.shared; diag=""
            if [ -z "$blocked" ]; then report "$name [blocked]" 77; continue; fi
            run="$nouring $blocked"
            blocked=$([ $blocked = EPERM ] && echo ENOSYS || echo EPERM) ;;
        esac
        case $kind in shared|static|asan)
            if ! $CC $CFLAGS_T -o "$exe" "$src" $link -lpthread 2>"$work/cc.log"; then
                cat "$work/cc.log"; report "$name [$kind] (build)" 1; continue
            fi ;;
        esac
        [ -x "$exe" ] || { report "$name [$kind] (not built)" 1; continue; }
        (cd "$work" && env -u LIBURING_RS_ENGINE LIBURING_RS_DIAG_LIB=$diag timeout 120 $run "$exe") >"$work/out.log" 2>&1; st=$?
        [ $st -ne 0 ] && [ $st -ne 77 ] && tail -20 "$work/out.log"
        [ $st -eq 77 ] && tail -1 "$work/out.log" | sed 's/^/    /'
        report "$name [$kind]" $st
    done
done

# 4. The checker stays silent on the C tests: each runs again (shared build)
#    with LIBURING_RS_CHECK=1, and its only check lines may be the mistakes it
#    makes on purpose, listed in c-tests/checker-expected.txt, which must all
#    be caught. The diag-* tests drive the checker themselves.
expected=$top/c-tests/checker-expected.txt
for src in c-tests/*.c; do
    name=$(basename "$src" .c)
    exe=$tbin/$name.shared
    case $name in diag-*) continue ;; esac
    [ -x "$exe" ] || continue
    (cd "$work" && LIBURING_RS_CHECK=1 timeout 120 "$exe") >"$work/out.log" 2>&1; st=$?
    grep -F 'liburing-rs check:' "$work/out.log" > "$work/lines" || true
    awk -F '\t' -v t="$name" '$1 == t { print $2 }' "$expected" > "$work/want"
    bad=""
    [ $st -eq 0 ] || [ $st -eq 77 ] || bad="exit $st"
    if [ -s "$work/want" ]; then
        stray=$(grep -v -F -f "$work/want" "$work/lines" || true)
        while IFS= read -r w; do
            grep -q -F -- "$w" "$work/lines" || bad="$bad; not caught: $w"
        done < "$work/want"
    else
        stray=$(cat "$work/lines")
    fi
    [ -z "$stray" ] || bad="$bad; unexpected: $stray"
    if [ -n "$bad" ]; then
        echo "    $bad"; report "$name [checker silent]" 1
    else
        report "$name [checker silent]" 0
    fi
done

echo
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
