#!/bin/sh
# Installs the Debian packages the build and the tests use, if missing:
# a C toolchain, pkg-config, binutils (readelf), liburing-dev (Debian's
# liburing 2.3, the peer for the binary-compatibility test and benchmarks),
# mandoc and man-db (lint and rendering of the manual pages), python3
# (c-tests/diag-timeline reads the JSON trace back with its json module), fio
# (a program making raw io_uring calls, for interception's test and bench), for
# `make deb` debhelper (with dpkg-dev) and lintian, and for the
# older-kernel tests qemu, a static busybox and cpio.
# Rust comes from rustup and is expected to be on PATH already; through it
# this also installs the nightly toolchain's miri and rust-src components
# (Miri exists only on nightly) and builds Miri's sysroot, for
# scripts/check-miri.sh. Without rustup, or when its server cannot be
# reached, that step is left out with a warning, and the check skips.
# `install-deps.sh --miri` does only that step.
set -eu

miri_ok() { cargo +nightly miri --version >/dev/null 2>&1; }

# Adds the components to an installed nightly (no download of a new
# toolchain), else installs the newest nightly that has them.
install_miri() {
    command -v rustup >/dev/null 2>&1 || { echo "error: rustup is not on PATH"; return 1; }
    if ! miri_ok; then
        if rustup toolchain list | grep -q '^nightly-'; then
            rustup component add --toolchain nightly miri rust-src 2>&1 || true
        fi
        miri_ok || rustup toolchain install nightly --profile minimal --allow-downgrade --no-self-update \
            --component miri,rust-src 2>&1 || return 1
        miri_ok || { echo "error: rustup installed nightly, but cargo +nightly miri does not run"; return 1; }
    fi
    # Miri's own sysroot, built once (about a minute) and kept in ~/.cache.
    cargo +nightly miri setup >/dev/null 2>&1 || { echo "error: cargo +nightly miri setup failed"; return 1; }
}

if [ "${1:-}" = --miri ]; then
    install_miri
    exit
fi
# rustfmt, for scripts/check-fmt.sh (part of rustup's default profile, but
# not of its minimal one).
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt >/dev/null 2>&1 ||
    echo "warning: rustfmt not installed, scripts/check-fmt.sh will skip" >&2
if ! why=$(install_miri); then
    echo "warning: Miri not installed, scripts/check-miri.sh will skip: $(printf '%s\n' "$why" | grep '^error:' | tail -1)" >&2
fi

need=""
for p in gcc g++ make pkg-config binutils liburing-dev mandoc man-db python3 fio \
         debhelper lintian qemu-system-x86 busybox-static cpio; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages:$need (run as root, or: sudo apt-get install$need)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
case " $need " in
*" qemu-system-x86 "*)
    # qemu-system-x86 pulls in qemu-system-common, which a newer qemu-utils
    # (a backport) refuses; asking for qemu-utils of the same version keeps
    # qemu-img and qemu-io instead of letting apt remove them.
    v=$(apt-cache policy qemu-system-x86 | awk '/Candidate:/ { print $2 }')
    need="$need qemu-utils=$v"
    apt-get install -y -qq --allow-downgrades $need
    ;;
*)  apt-get install -y -qq $need ;;
esac
