#!/bin/sh
# Checks the dynamic symbol table of a built shared library against the ABI
# table abi/liburing-2.15-symbols.tsv: every row for that library must be
# exported, defined, with the same version node (name@@NODE). The project's
# own symbols (abi/liburing-rs-symbols.txt) must be there too, in node
# URING_RS_1.0; nothing else may be.
#
#   sh c-tests/ffi-symbols.sh [LIBNAME]
#
# LIBNAME is the soname column of the table, liburing-ffi.so.2 by default
# (c-tests/so-symbols.sh runs the same check for liburing.so.2).
# Also checks that libc.so.6 is the only DT_NEEDED entry.
# Exit 0 = every row present, 1 = something missing or wrong, 77 = no readelf.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
lib=${1:-liburing-ffi.so.2}
# LIBURING_LIB_DIR points the check at another build (e.g. a reference one).
so=${LIBURING_LIB_DIR:-$top/build/lib}/$lib
table=$top/abi/liburing-2.15-symbols.tsv
own=$top/abi/liburing-rs-symbols.txt
# Exported on purpose beyond the table (see Makefile EXTRA_SYMS).
allowed_extra="__io_uring_queue_init_params io_uring_unmap_rings"

if ! command -v readelf >/dev/null 2>&1; then
    echo "$lib: SKIP: readelf not installed" >&2
    exit 77
fi
if [ ! -f "$table" ]; then
    echo "$lib: FAIL: ABI table $table not found" >&2
    exit 1
fi
if [ ! -e "$so" ]; then
    echo "$lib: FAIL: $so does not exist; run \`make lib\` first" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Expected "name@@NODE" lines; a reference build of upstream liburing
# (LIBURING_LIB_DIR) has none of the project's own.
{
    awk -F'\t' -v lib="$lib" 'NR > 1 && $3 == lib { print $1 "@@" $2 }' "$table"
    [ -n "${LIBURING_LIB_DIR:-}" ] ||
        sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/$/@@URING_RS_1.0/' "$own"
} | sort -u >"$tmp/want"
nwant=$(wc -l <"$tmp/want")
if [ "$nwant" -eq 0 ]; then
    echo "$lib: FAIL: the table has no rows for $lib" >&2
    exit 1
fi

# Defined, global/weak symbols with a default version, as "name@@NODE".
# Version-definition entries (name == node, ABS) are not functions: dropped.
readelf --dyn-syms --wide "$so" |
    awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") {
            if ($7 == "ABS" && $8 ~ /^(LIBURING_[0-9.]+|URING_RS_1\.0)$/) next
            print $8 }' |
    awk -F'@' '{ if (NF >= 3 && $1 == $3) next; print }' |
    sort -u >"$tmp/have"

# Symbols that are exported without any version node at all.
grep -v '@' "$tmp/have" >"$tmp/unversioned" || true

comm -23 "$tmp/want" "$tmp/have" >"$tmp/missing"
comm -13 "$tmp/want" "$tmp/have" | grep '@' >"$tmp/extra0" || true
: >"$tmp/extra"
while read -r s; do
    n=${s%%@*}
    ok=0
    for a in $allowed_extra; do [ "$n" = "$a" ] && ok=1; done
    [ $ok -eq 0 ] && echo "$s" >>"$tmp/extra"
done <"$tmp/extra0"

# A missing row may still be exported under a wrong node: say so.
status=0
nmiss=$(wc -l <"$tmp/missing")
if [ "$nmiss" -gt 0 ]; then
    status=1
    echo "$lib: $nmiss of $nwant table rows missing:"
    while read -r s; do
        n=${s%%@*}
        other=$(grep -E "^$n(@|\$)" "$tmp/have" | tr '\n' ' ')
        if [ -n "$other" ]; then
            echo "  MISSING $s (exported as: $other)"
        else
            echo "  MISSING $s"
        fi
    done <"$tmp/missing"
fi
nextra=$(wc -l <"$tmp/extra")
if [ "$nextra" -gt 0 ]; then
    status=1
    echo "$lib: $nextra unexpected extra exports:"
    sed 's/^/  EXTRA /' "$tmp/extra"
fi
if [ -s "$tmp/unversioned" ]; then
    status=1
    echo "$lib: symbols exported without a version node:"
    sed 's/^/  UNVERSIONED /' "$tmp/unversioned"
fi

# DT_NEEDED: libc.so.6 only.
readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$tmp/needed"
needed=$(cat "$tmp/needed")
# A reference build of upstream liburing (LIBURING_LIB_DIR) is linked with
# -nostdlib and needs nothing at all; accept that there only.
if [ -n "${LIBURING_LIB_DIR:-}" ] && [ -z "$needed" ]; then
    needed=libc.so.6
fi
if [ "$needed" != "libc.so.6" ]; then
    status=1
    echo "$lib: DT_NEEDED must be exactly libc.so.6, got: $(tr '\n' ' ' <"$tmp/needed")"
fi
# The soname must be the table's library name.
sn=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$sn" != "$lib" ]; then
    status=1
    echo "$lib: SONAME is '$sn'"
fi

if [ $status -eq 0 ]; then
    echo "$lib: PASS: all $nwant expected symbols exported with their version node; NEEDED libc.so.6 only"
fi
exit $status
