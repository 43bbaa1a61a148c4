#!/bin/sh
# c-tests/layout.c is generated from the ABI table; fail if it is stale.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
sh "$top/c-tests/gen-layout.sh" --check "$top/abi/liburing-2.15-layouts.tsv" "$top/c-tests/layout.c"
