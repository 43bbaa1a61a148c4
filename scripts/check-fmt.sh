#!/bin/sh
# The Rust sources are as rustfmt (with rustfmt.toml) writes them.
cd "$(dirname "$0")/.." || exit 1
if ! cargo fmt --version >/dev/null 2>&1; then
    echo "SKIP: cargo fmt is not installed (rustup component add rustfmt)"
    exit 77
fi
if ! out=$(cargo fmt --all -- --check 2>&1); then
    printf '%s\n' "$out" | grep '^Diff in' | head -20
    echo "FAIL: $(printf '%s\n' "$out" | grep -c '^Diff in') places differ from rustfmt's layout: run cargo fmt"
    exit 1
fi
echo "rustfmt: every Rust file is formatted"
