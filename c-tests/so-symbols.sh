#!/bin/sh
# Same check as ffi-symbols.sh, for build/lib/liburing.so.2 against the
# liburing.so.2 rows of abi/liburing-2.15-symbols.tsv.
here=$(cd "$(dirname "$0")" && pwd)
exec sh "$here/ffi-symbols.sh" liburing.so.2
