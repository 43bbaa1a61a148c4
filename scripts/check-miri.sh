#!/bin/sh
# Runs the ring logic's multi-threaded unit test (src/ring/shared_tests.rs)
# under Miri, whose data-race detector and borrow tracker catch any
# reference two threads hold to one struct io_uring. The previous design,
# which made a `&mut IoUring` in every call, fails it. Skips (77) where no
# nightly toolchain with Miri is installed: Miri exists only on nightly.
set -u
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    echo "skip: no nightly toolchain with the miri component (rustup component add --toolchain nightly miri)"
    exit 77
fi
out=$(cargo +nightly miri test --lib shared_tests 2>&1); st=$?
printf '%s\n' "$out" | grep -E 'test result|Undefined Behavior|error' | head -5
[ $st -eq 0 ] || { printf '%s\n' "$out" | tail -40; exit 1; }
printf '%s\n' "$out" | grep -q '1 passed' || { echo "the Miri test did not run"; exit 1; }
