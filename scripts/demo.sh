#!/bin/sh
# Copies a 16 MiB random file with examples/link-cp (linked read->write
# chains) against the freshly built library and checks the copy.
set -eu
B=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c 16777216 /dev/urandom > "$tmp/in"
"$B/examples/link-cp" "$tmp/in" "$tmp/out"
cmp "$tmp/in" "$tmp/out"
echo "link-cp copied 16 MiB through $(ldd "$B/examples/link-cp" | awk '/liburing/ {print $3}'): identical"
