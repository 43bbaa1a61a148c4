#!/bin/sh
# The floors of docs/ARCHITECTURE.md ("Floors"), read from the code: every
# `crate::X` path (in `use` lines and inline, `crate::{X, Y}` groups and
# `super::super::X` included) in a file under src/ is an arrow from the
# file's module to X. An arrow must go down a floor; one that goes up or
# sideways (engine <-> diag) fails, printed as file:line and the arrow.
#
#   4  capi
#   3  ring  intercept
#   2  engine  diag
#   1  sys  rt
#
# src/lib.rs (the root, which declares the modules) and src/bin/ (crates
# of their own, above the library) are not read.
set -u
cd "$(dirname "$0")/.."
files=$(find src -name '*.rs' ! -path 'src/bin/*' ! -path src/lib.rs | sort)
# shellcheck disable=SC2086 # file names under src/ have no spaces
exec awk '
BEGIN {
    floor["capi"] = 4
    floor["ring"] = 3; floor["intercept"] = 3
    floor["engine"] = 2; floor["diag"] = 2
    floor["sys"] = 1; floor["rt"] = 1
    bad = 0
}
FNR == 1 {
    from = FILENAME; sub(/^src\//, "", from); sub(/[\/.].*/, "", from)
    if (!(from in floor)) { printf "%s: module %s has no floor in this script\n", FILENAME, from; bad++ }
    group = 0
}
function arrow(to, path) {
    if (!(to in floor) || to == from) return
    if (floor[to] < floor[from]) return
    printf "%s:%d: %s -> %s (%s, floor %d -> %d): %s\n", FILENAME, FNR, from, to,
        floor[to] == floor[from] ? "sideways" : "up", floor[from], floor[to], path
    bad++
}
# The names at the top level of a `crate::{...}` group, which may span lines.
function scan_group(s,    c, i, name) {
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "{") { depth++; want = (depth == 1); continue }
        if (c == "}") { if (--depth == 0) { group = 0; return substr(s, i + 1) } continue }
        if (c == ",") { want = (depth == 1); continue }
        if (want && c ~ /[A-Za-z_]/) {
            name = substr(s, i); match(name, /^[A-Za-z_][A-Za-z0-9_]*/)
            match(name, /^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*/)
            arrow(substr(name, 1, index(substr(name, 1, RLENGTH) "::", "::") - 1), "crate::{" substr(name, 1, RLENGTH) "}")
            i += RLENGTH - 1; want = 0
        }
    }
    return ""
}
{
    s = $0
    sub(/\/\/.*/, "", s)
    if (group) s = scan_group(s)
    while (match(s, /(crate|super::super)::(\{|[A-Za-z_][A-Za-z0-9_]*)/)) {
        pre = RSTART > 1 ? substr(s, RSTART - 1, 1) : ""
        m = substr(s, RSTART, RLENGTH)
        rest = substr(s, RSTART + RLENGTH)
        if (pre ~ /[$A-Za-z0-9_:]/) { s = rest; continue }
        if (m ~ /super::super::/ && FILENAME !~ /^src\/[^\/]+\/[^\/]+\.rs$/) { s = rest; continue }
        path = substr(s, RSTART, RLENGTH)
        sub(/^(crate|super::super)::/, "", m)
        if (m == "{") { group = 1; depth = 1; want = 1; s = scan_group(rest); continue }
        if (match(rest, /^(::[A-Za-z_][A-Za-z0-9_]*)+/)) path = path substr(rest, 1, RLENGTH)
        arrow(m, path)
        s = rest
    }
}
END {
    if (bad) { printf "%d arrow(s) against the floors capi -> ring -> {engine, diag} -> sys\n", bad; exit 1 }
    print "floors hold: capi -> ring, intercept -> {engine, diag} -> sys, rt"
}' $files
