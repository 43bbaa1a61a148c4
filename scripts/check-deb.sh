#!/bin/sh
# Debian packages: `make deb` builds liburing-rs2 and liburing-rs-dev, lintian
# reports no error or warning, the packages hold exactly what `make install`
# installs and declare that they stand in for liburing2 and liburing-dev, the
# symbols file covers the ABI table, and programs run on the unpacked
# packages. Nothing is installed: the machine's own liburing stays as it is.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
for t in dpkg-buildpackage dh lintian; do
    command -v $t >/dev/null 2>&1 ||
        { echo "skip: $t is missing (scripts/install-deps.sh installs debhelper and lintian)" >&2; exit 77; }
done
if [ ! -f /usr/include/liburing.h ]; then
    echo "skip: Debian's liburing-dev is not installed (scripts/install-deps.sh installs it)" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "$*"; exit 1; }

make -s -C "$top" deb >"$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log"; fail "make deb failed"; }
out=$top/build/deb
ver=$(cd "$top" && dpkg-parsechangelog -SVersion)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
rt=$out/liburing-rs2_${ver}_$(dpkg-architecture -qDEB_HOST_ARCH).deb
dev=$out/liburing-rs-dev_${ver}_$(dpkg-architecture -qDEB_HOST_ARCH).deb
[ -f "$rt" ] && [ -f "$dev" ] || fail "make deb did not leave $rt and $dev"

# The package version is the crate's, which is liburing's with a patch level.
crate=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -1)
[ "$ver" = "$crate" ] || fail "debian/changelog says $ver, Cargo.toml $crate"
case $ver in 2.15.*) ;; *) fail "version $ver is not liburing 2.15's" ;; esac

lintian --fail-on error,warning "$out"/*.changes >"$tmp/lintian" 2>&1 ||
    { cat "$tmp/lintian"; fail "lintian found errors or warnings"; }

field() { # deb field expected
    got=$(dpkg-deb -f "$1" "$2")
    [ "$got" = "$3" ] || fail "$(basename "$1") $2: '$got', expected '$3'"
}
field "$rt" Package liburing-rs2
field "$rt" Provides "liburing2 (= 2.15)"
field "$rt" Conflicts liburing2
field "$rt" Replaces liburing2
field "$dev" Package liburing-rs-dev
field "$dev" Depends "liburing-rs2 (= $ver)"
field "$dev" Provides "liburing-dev (= 2.15)"
field "$dev" Conflicts liburing-dev
field "$dev" Replaces liburing-dev
case $(dpkg-deb -f "$rt" Depends) in *libc6*) ;; *) fail "liburing-rs2 does not depend on libc6" ;; esac

# Contents: every path `make install` installs, in the package the split
# rules name (run time: the shared libraries, programs and their section 1
# pages; the rest is for development), man pages compressed, plus each
# package's copyright and changelog, the run-time package's lintian
# overrides, and nothing else.
make -s -C "$top" install DESTDIR="$tmp/inst" PREFIX=/usr LIBDIR=/usr/lib/$ma >"$tmp/inst.log" 2>&1 ||
    { cat "$tmp/inst.log"; fail "make install failed"; }
echo /usr/share/lintian/overrides/liburing-rs2 >"$tmp/want-rt"
(cd "$tmp/inst" && find . ! -type d) | sed 's|^\.||' | while read -r p; do
    case $p in
    /usr/share/man/*.gz) ;;
    /usr/share/man/*) p=$p.gz ;;
    esac
    case $p in
    /usr/lib/$ma/*.so.*|/usr/bin/*|/usr/share/man/man1/*) echo "$p" >>"$tmp/want-rt" ;;
    *) echo "$p" >>"$tmp/want-dev" ;;
    esac
done
for pkg in liburing-rs2:rt liburing-rs-dev:dev; do
    name=${pkg%:*} kind=${pkg#*:}
    deb=$rt; [ $kind = dev ] && deb=$dev
    printf '%s\n' /usr/share/doc/$name/copyright /usr/share/doc/$name/changelog.gz >>"$tmp/want-$kind"
    sort -o "$tmp/want-$kind" "$tmp/want-$kind"
    dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sed 's|^\.||' | sort >"$tmp/got-$kind"
    if ! cmp -s "$tmp/want-$kind" "$tmp/got-$kind"; then
        diff "$tmp/want-$kind" "$tmp/got-$kind" | sed 's/^/    /'
        fail "$name: contents differ from make install's split (< missing, > extra)"
    fi
done
lib=/usr/lib/$ma
for l in liburing.so.2 liburing-ffi.so.2; do
    dpkg-deb -c "$rt" | grep -q " \./usr/lib/$ma/$l -> ${l}.15\$" || fail "liburing-rs2: no $l link"
done
for l in liburing liburing-ffi; do
    dpkg-deb -c "$dev" | grep -q " \./usr/lib/$ma/$l.so -> $l.so.2\$" || fail "liburing-rs-dev: no $l.so link"
done

# Apart from Debian's own liburing, which the packages replace, no installed
# package owns any of their files: installing them cannot clash.
cat "$tmp/got-rt" "$tmp/got-dev" | grep -v '^/usr/share/doc/' >"$tmp/paths"
# shellcheck disable=SC2046
dpkg -S $(cat "$tmp/paths") 2>/dev/null | awk -F ': ' '{ print $1 }' | tr ',' '\n' |
    sed 's/^ *//; s/:.*//' | sort -u >"$tmp/owners"
if grep -vxE 'liburing2|liburing-dev' "$tmp/owners"; then fail "files owned by the packages above"; fi

# Control data: shlibs name our package, ldconfig runs, and the symbols
# file has every symbol of the ABI table under its library and version.
dpkg-deb -e "$rt" "$tmp/ctl"
for l in liburing liburing-ffi; do
    grep -qx "$l 2 liburing-rs2 (>= $ver)" "$tmp/ctl/shlibs" || fail "shlibs: no line for $l"
done
grep -qx 'activate-noawait ldconfig' "$tmp/ctl/triggers" || fail "no ldconfig trigger"
awk -F '\t' -v v="$ver" '
FILENAME == ARGV[1] {
    if ($0 ~ /^liburing/) { split($0, w, " "); lib = w[1] }
    else if ($0 ~ /^ /) { split(substr($0, 2), w, " "); have[lib, w[1]] = w[2] }
    next
}
FNR > 1 {
    k = $1 "@" $2
    if (!(($3, k) in have)) { print $3 ": " k " missing from the symbols file"; bad = 1 }
    else if (have[$3, k] != v) { print $3 ": " k " has version " have[$3, k]; bad = 1 }
}
END { exit bad }' "$tmp/ctl/symbols" "$top/abi/liburing-2.15-symbols.tsv" || fail "symbols file"

# A program built against Debian's liburing and linked to its liburing.so.2
# runs on the unpacked run-time package, and the loader really took ours.
dpkg-deb -x "$rt" "$tmp/root"
head -c 3000000 /dev/urandom >"$tmp/in"
for ex in link-cp nop-demo; do
    cc -O2 -o "$tmp/$ex" "$top/examples/$ex.c" -luring
done
LD_LIBRARY_PATH=$tmp/root$lib LD_DEBUG=libs LD_DEBUG_OUTPUT=$tmp/ld "$tmp/nop-demo" 100 >/dev/null
grep -h 'calling init' "$tmp"/ld.* | grep -q "$tmp/root$lib/liburing.so.2" ||
    fail "nop-demo did not load the packaged liburing.so.2"
LD_LIBRARY_PATH=$tmp/root$lib "$tmp/link-cp" "$tmp/in" "$tmp/out"
cmp "$tmp/in" "$tmp/out" || fail "link-cp on the packaged library copied wrong"

# A program Debian built and ships, if there is one: qemu-io (qemu-utils)
# writing and reading back a disk image through io_uring.
qemu=""
if command -v qemu-io >/dev/null 2>&1 && ldd "$(command -v qemu-io)" | grep -q 'liburing\.so\.2'; then
    truncate -s 1M "$tmp/img"
    rm -f "$tmp"/ld.*
    LD_LIBRARY_PATH=$tmp/root$lib LD_DEBUG=libs LD_DEBUG_OUTPUT=$tmp/ld \
        qemu-io -f raw --aio=io_uring -c 'write -P 0xa5 4096 64k' -c 'read -P 0xa5 4096 64k' \
        "$tmp/img" >"$tmp/qemu.log" 2>&1 || { cat "$tmp/qemu.log"; fail "qemu-io failed"; }
    grep -h 'calling init' "$tmp"/ld.* | grep -q "$tmp/root$lib/liburing.so.2" ||
        fail "qemu-io did not load the packaged liburing.so.2"
    grep -q 'read 65536/65536' "$tmp/qemu.log" && ! grep -qi 'fail' "$tmp/qemu.log" ||
        { cat "$tmp/qemu.log"; fail "qemu-io read back wrong"; }
    head -c 65536 /dev/zero | tr '\0' '\245' >"$tmp/want"
    tail -c +4097 "$tmp/img" | head -c 65536 | cmp -s - "$tmp/want" || fail "qemu-io wrote wrong data"
    qemu=", and so does Debian's qemu-io"
fi

# The development package builds a program the way a user would, through
# pkg-config: the header is ours (2.15, where Debian's is 2.3) and the
# linker takes our liburing.a, not Debian's.
dpkg-deb -x "$dev" "$tmp/root"
pcflags=$(PKG_CONFIG_LIBDIR=$tmp/root$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$tmp/root \
    PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
    pkg-config --static --cflags --libs liburing)
case $pcflags in *"-I$tmp/root/usr/include"*"-L$tmp/root$lib"*) ;;
    *) fail "pkg-config of the packaged liburing.pc: $pcflags" ;; esac
# shellcheck disable=SC2086
minor=$(printf '#include <liburing.h>\nIO_URING_VERSION_MINOR\n' | cc -E -P $pcflags - | tail -1)
[ "$minor" = 15 ] || fail "the packaged header says minor version $minor"
# shellcheck disable=SC2086
cc -O2 "$top/examples/nop-demo.c" -o "$tmp/nop-static" -Wl,-t -Wl,-Bstatic $pcflags -Wl,-Bdynamic \
    >"$tmp/link.log" 2>&1 || { cat "$tmp/link.log"; fail "nop-demo did not build from liburing-rs-dev"; }
grep -q "^$tmp/root$lib/liburing.a" "$tmp/link.log" || fail "the linker did not take the packaged liburing.a"
readelf -d "$tmp/nop-static" | grep -q 'liburing' && fail "nop-demo did not link liburing.a statically"
"$tmp/nop-static" 100 >/dev/null || fail "nop-demo built from liburing-rs-dev failed"

echo "liburing-rs2 and liburing-rs-dev $ver: lintian clean, contents, relations and symbols right;" \
    "programs linked to Debian's liburing run on the unpacked library$qemu"
