#!/bin/sh
# Writes a GNU ld version script for one library from the ABI table.
#   gen-map.sh TABLE LIBRARY OWN_LIST [EXTRA_NODE EXTRA_SYMBOL...]
# Nodes run from the oldest to the newest one the table names for LIBRARY,
# each inheriting the one before, empty ones included, as liburing's own
# scripts have them. Extra symbols, if any, go into EXTRA_NODE. The
# project's own symbols (OWN_LIST, one per line, # comments) get a node of
# their own, URING_RS_1.0, which inherits nothing.
set -eu
table=$1 lib=$2 own=$3
shift 3
extra_node=${1:-}
[ $# -gt 0 ] && shift
extras="$*"
own_syms=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$own")
awk -F '\t' -v lib="$lib" -v extra_node="$extra_node" -v extras="$extras" -v own="$own_syms" '
NR == 1 { next }
$3 == lib {
    split($2, v, ".")
    minor = v[2] + 0
    syms[minor] = syms[minor] "\t\t" $1 ";\n"
    if (minor > max) max = minor
    if (min == "" || minor < min) min = minor
}
END {
    if (extra_node != "") {
        split(extra_node, v, ".")
        m = v[2] + 0
        n = split(extras, e, " ")
        for (i = 1; i <= n; i++) syms[m] = syms[m] "\t\t" e[i] ";\n"
        if (m > max) max = m
    }
    for (m = min; m <= max; m++) {
        printf "LIBURING_2.%d {\n", m
        if (syms[m] != "") printf "\tglobal:\n%s", syms[m]
        if (m == min) printf "\tlocal:\n\t\t*;\n};\n\n"
        else printf "} LIBURING_2.%d;\n\n", m - 1
    }
    n = split(own, o, "\n")
    if (n > 0) {
        printf "URING_RS_1.0 {\n\tglobal:\n"
        for (i = 1; i <= n; i++) printf "\t\t%s;\n", o[i]
        printf "};\n"
    }
}' "$table"
if [ -n "${URING_RS_SYMS:-}" ]; then
    printf 'URING_RS_1.0 {\n\tglobal:\n'
    for s in $URING_RS_SYMS; do printf '\t\t%s;\n' "$s"; done
    printf '};\n'
fi
