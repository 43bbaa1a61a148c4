#!/bin/sh
# Installs the Debian packages the build and the tests use, if missing:
# a C toolchain, pkg-config, binutils (readelf), and liburing-dev (Debian's
# liburing 2.3, the peer for the binary-compatibility test and benchmarks),
# and mandoc (the manual pages' lint).
# Rust comes from rustup and is expected to be on PATH already.
set -eu
need=""
for p in gcc g++ make pkg-config binutils liburing-dev mandoc; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages:$need (run as root, or: sudo apt-get install$need)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $need
