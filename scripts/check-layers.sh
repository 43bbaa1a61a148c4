#!/bin/sh
# The floors of docs/ARCHITECTURE.md, checked against the code. The floors
# are read from that document: the first fenced block under "## Floors",
# one floor a line, top first, its modules before the first two spaces
# ("ring, intercept   the ring logic; ..."). Every `crate::X` path (in
# `use` lines and inline, `crate::{X, Y}` groups and `super::super::X`
# included) in a file under src/ is an arrow from the file's module to X.
# An arrow must go down a floor; one that goes up or sideways (engine <->
# diag) fails, printed as file:line, the arrow and its path.
#
# src/lib.rs (the root, which declares the modules) and src/bin/ (crates
# of their own, above the library) are not read.
set -u
cd "$(dirname "$0")/.."
floors=$(awk '
    /^## Floors/ { in_sec = 1; next }
    in_sec && /^## / { exit }
    in_sec && /^```/ { if (in_block) exit; in_block = 1; next }
    in_block { sub(/  .*/, ""); gsub(/ /, ""); if ($0 != "") print }
' docs/ARCHITECTURE.md | awk '{ line[NR] = $0 } END { for (i = 1; i <= NR; i++) printf "%s%s=%d", (i > 1 ? ";" : ""), line[i], NR - i + 1 }')
if [ -z "$floors" ]; then
    echo "docs/ARCHITECTURE.md has no floors block under \"## Floors\""
    exit 1
fi
files=$(find src -name '*.rs' ! -path 'src/bin/*' ! -path src/lib.rs | sort)
# shellcheck disable=SC2086 # file names under src/ have no spaces
exec awk -v floors="$floors" '
BEGIN {
    # "capi=4;ring,intercept=3;..."
    n = split(floors, fl, ";")
    for (i = 1; i <= n; i++) {
        split(fl[i], kv, "="); m = split(kv[1], mods, ",")
        for (j = 1; j <= m; j++) floor[mods[j]] = kv[2] + 0
        order = order (i > 1 ? " -> " : "") (m > 1 ? "{" kv[1] "}" : kv[1])
    }
    bad = 0
}
FNR == 1 {
    nfiles++
    from = FILENAME; sub(/^src\//, "", from); sub(/[\/.].*/, "", from)
    if (!(from in floor)) { printf "%s: module %s has no floor in docs/ARCHITECTURE.md\n", FILENAME, from; bad++ }
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
    if (bad) { printf "%d arrow(s) against the floors %s (docs/ARCHITECTURE.md)\n", bad, order; exit 1 }
    printf "floors hold: %s, %d files\n", order, nfiles
}' $files
