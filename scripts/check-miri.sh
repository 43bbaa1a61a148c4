#!/bin/sh
# Runs the unit tests written for Miri under it:
#  - src/ring/shared_tests.rs: the ring logic driven from several threads,
#    where the data-race detector and the borrow tracker catch any reference
#    two threads hold to one struct io_uring (the previous design, which
#    made a `&mut IoUring` in every call, fails it);
#  - src/engine/req_tests.rs: the request lists (Fifo, ArmedList) and the
#    list freed requests go back to their submitter on (Returned), given
#    to from several threads;
#  - src/engine/ctx_tests.rs: CQ slots, u32 wraparound, overflow order;
#  - src/engine/readiness_tests.rs: the readiness set's state machine and
#    its hand-over of the cover between threads.
# Miri exists only on nightly: scripts/install-deps.sh installs it through
# rustup, and so does this script when it is missing. Skips (77) only when
# rustup cannot provide it, with rustup's reason.
set -u
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    if ! why=$(sh scripts/install-deps.sh --miri 2>&1); then
        echo "skip: no nightly toolchain with the miri component, and rustup could not install it ($(printf '%s\n' "$why" | grep '^error:' | tail -1))"
        exit 77
    fi
fi
tests="ring::shared_tests:: engine::req::tests:: engine::ctx::tests:: engine::readiness::tests::"
# Threads are preempted ten times as often as by Miri's default, so that
# the tests' races interleave within few rounds (a cover hand-over that
# loads before it stores fails in the first few).
export MIRIFLAGS="-Zmiri-preemption-rate=0.1 ${MIRIFLAGS:-}"
start=$(date +%s)
# shellcheck disable=SC2086
out=$(cargo +nightly miri test --lib -- $tests 2>&1); st=$?
printf '%s\n' "$out" | grep -E 'test result|Undefined Behavior|error' | head -5
[ $st -eq 0 ] || { printf '%s\n' "$out" | tail -40; exit 1; }
for t in $tests; do
    printf '%s\n' "$out" | grep -q "^test $t.* \.\.\. ok$" || { echo "no test of $t ran under Miri"; exit 1; }
done
echo "Miri: $(printf '%s\n' "$out" | grep -c ' \.\.\. ok$') tests in $(($(date +%s) - start)) s"
