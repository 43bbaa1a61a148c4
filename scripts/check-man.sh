#!/bin/sh
# Checks the manual pages under man/:
#  - every exported function, every inline helper of the header and every
#    liburing_rs_* extension declared in include/liburing.h has a page in
#    section 2 or 3 (its own file, or a one-line `.so` alias to one);
#  - every page is clean under `mandoc -T lint -W warning`;
#  - every SYNOPSIS compiles as C against include/ and spells each prototype
#    as the header declares it; each name of a page's NAME section that is a
#    library function has a prototype there;
#  - cross references to io_uring and liburing pages resolve;
#  - the pages install with `make install-man DESTDIR=...` (the man part of
#    `make install`), `man -M` renders io_uring_prep_read from the staged
#    tree (io_uring_queue_init while that page does not exist yet), and
#    `make uninstall-man` removes every installed file.
#
# Usage: sh scripts/check-man.sh [TREE]   (TREE defaults to this repository)
# CHECK_MAN_GROUP=man-prep limits the section 2/3 checks to the names of that
# group in CHECK_MAN_PARTITION (default /work/wt/man-partition.tsv, a
# development aid; the file is optional).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tree=$(cd "${1:-$here}" && pwd) || exit 1
cd "$tree" || exit 1
for tool in mandoc man; do
    command -v $tool >/dev/null 2>&1 || {
        echo "skip: $tool is not installed (scripts/install-deps.sh installs it)"; exit 77; }
done
[ -d man ] || { echo "no man/ directory in $tree"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
problems=0
fail() { echo "$*"; problems=$((problems + 1)); }

# --- The names that need a page. ---------------------------------------------
{
    awk -F '\t' 'NR > 1 { print $1 }' abi/liburing-2.15-symbols.tsv
    grep -v '^#' abi/liburing-2.15-inline-helpers.txt
    grep -o 'liburing_rs_[A-Za-z0-9_]*[[:space:]]*(' include/liburing.h | tr -d ' \t('
} | sort -u > "$tmp/names"

group=${CHECK_MAN_GROUP:-}
part=${CHECK_MAN_PARTITION:-/work/wt/man-partition.tsv}
if [ -n "$group" ]; then
    if [ -f "$part" ]; then
        awk -F '\t' -v g="$group" '$1 == g { print $2 }' "$part" | sort -u > "$tmp/want"
        echo "group $group: $(wc -l < "$tmp/want") names from $part"
    else
        echo "note: $part not found, CHECK_MAN_GROUP ignored"
        group=""
    fi
fi
[ -n "$group" ] || cp "$tmp/names" "$tmp/want"

# --- Pages: primary pages and .so aliases. -----------------------------------
is_alias() { head -c 4 "$1" | grep -q '^\.so '; }
: > "$tmp/pages"; : > "$tmp/aliases"
for f in man/man[1-9]/*.[1-9]; do
    [ -f "$f" ] || continue
    name=$(basename "$f"); name=${name%.*}
    sec=${f##*.}
    case $sec in
    2|3) [ -n "$group" ] && ! grep -qx "$name" "$tmp/want" && continue ;;
    esac
    if is_alias "$f"; then echo "$f" >> "$tmp/aliases"; else echo "$f" >> "$tmp/pages"; fi
done

# The names each page documents (its NAME section).
nm_names() {
    awk '/^\.Sh / { in_name = ($2 == "NAME") ; next }
         in_name && /^\.Nm / { print $2 }' "$1"
}

# Aliases: exactly one line `.so manN/TARGET.N`, the target exists and
# lists the alias's name.
while read -r f; do
    name=$(basename "$f"); name=${name%.*}
    if [ "$(wc -l < "$f")" -ne 1 ]; then fail "alias $f: must be the single line .so manN/PAGE.N"; continue; fi
    target=$(sed -n 's/^\.so \(man[1-9]\/[^ ]*\.[1-9]\)$/\1/p' "$f")
    if [ -z "$target" ]; then fail "alias $f: malformed .so line: $(cat "$f")"; continue; fi
    if [ ! -f "man/$target" ] || is_alias "man/$target"; then
        fail "alias $f: target man/$target is not a page"; continue
    fi
    nm_names "man/$target" | grep -qx "$name" || fail "alias $f: man/$target does not list $name in NAME"
done < "$tmp/aliases"

# --- Coverage. ----------------------------------------------------------------
missing=""
while read -r n; do
    [ -f "man/man3/$n.3" ] || [ -f "man/man2/$n.2" ] || missing="$missing $n"
done < "$tmp/want"
if [ -n "$missing" ]; then
    count=$(echo $missing | wc -w)
    fail "missing pages ($count):"
    for n in $missing; do echo "    $n"; done
fi

# --- Lint. ----------------------------------------------------------------------
while read -r f; do
    out=$(mandoc -T lint -W warning "$f" 2>&1)
    [ -z "$out" ] || fail "lint $f:
$(printf '%s\n' "$out" | sed 's/^/    /')"
done < "$tmp/pages"

# --- Synopses. --------------------------------------------------------------
# Prototype text is compared with all spacing around * ( ) , [ ] removed.
norm_awk='
    function norm(s) {
        gsub(/[ \t]+/, " ", s)
        gsub(/ *\* */, "*", s); gsub(/ *\( */, "(", s); gsub(/ *\) */, ")", s)
        gsub(/ *, */, ",", s); gsub(/ *\[ */, "[", s); gsub(/ *\] */, "]", s)
        sub(/^ /, "", s); sub(/ $/, "", s)
        return s
    }'
# Rendered SYNOPSIS text of each section 2/3 page into one C file, each
# page's part behind a #line naming the page, preprocessor lines first.
: > "$tmp/cpp"; : > "$tmp/body"; : > "$tmp/protos"
while read -r f; do
    case $f in *.2|*.3) ;; *) continue ;; esac
    mandoc -T ascii "$f" | sed 's/.\x08//g' | awk '
        /^SYNOPSIS/ { on = 1; next }
        on && /^[^ \t]/ { exit }
        on { print }' > "$tmp/syn"
    if [ ! -s "$tmp/syn" ]; then fail "synopsis $f: no SYNOPSIS section"; continue; fi
    grep '^[[:space:]]*#' "$tmp/syn" | sed 's/^[[:space:]]*//' >> "$tmp/cpp"
    printf '#line 1 "%s(SYNOPSIS)"\n' "$f" >> "$tmp/body"
    grep -v '^[[:space:]]*#' "$tmp/syn" >> "$tmp/body"
    # One normalised prototype per line: PAGE <TAB> NAME <TAB> TEXT.
    grep -v '^[[:space:]]*#' "$tmp/syn" | tr '\n' ' ' | tr ';' '\n' | awk -v f="$f" "$norm_awk"'
        {
            s = norm($0)
            if (!match(s, /[A-Za-z_][A-Za-z0-9_]*\(/)) next
            print f "\t" substr(s, RSTART, RLENGTH - 1) "\t" s
        }' >> "$tmp/protos"
    # Every library name of the NAME section must have a prototype here.
    for n in $(nm_names "$f"); do
        grep -qx "$n" "$tmp/names" || continue
        awk -F '\t' -v f="$f" -v n="$n" '$1 == f && $2 == n { ok = 1 } END { exit !ok }' \
            "$tmp/protos" || fail "synopsis $f: no prototype for $n"
    done
done < "$tmp/pages"

if [ -s "$tmp/body" ]; then
    { echo '#define _GNU_SOURCE'; sort -u "$tmp/cpp" | grep -vx '#define _GNU_SOURCE'
      echo '#include <liburing.h>'; cat "$tmp/body"; } > "$tmp/syn.c"
    if ! ${CC:-cc} -std=gnu11 -fsyntax-only -Wall -Wextra -Werror -fmax-errors=0 \
            -I"$tree/include" "$tmp/syn.c" > "$tmp/cc.log" 2>&1; then
        fail "synopsis: does not compile:
$(sed 's/^/    /' "$tmp/cc.log" | head -60)"
    fi
fi

# The header's prototypes, normalised: NAME <TAB> TEXT.
awk "$norm_awk"'
    function emit(s) {
        gsub(/IOURINGINLINE|_LOCAL_INLINE|LIBURING_NOEXCEPT/, " ", s)
        s = norm(s)
        if (match(s, /[A-Za-z_][A-Za-z0-9_]*\(/))
            print substr(s, RSTART, RLENGTH - 1) "\t" s
    }
    {
        line = $0; out = ""
        # comments
        while (line != "") {
            if (incom) {
                i = index(line, "*/")
                if (!i) { line = ""; break }
                line = substr(line, i + 2); incom = 0
            } else {
                i = index(line, "/*")
                if (!i) { out = out line; break }
                out = out substr(line, 1, i - 1) " "; line = substr(line, i + 2); incom = 1
            }
        }
        # preprocessor lines and their continuations
        if (cont || out ~ /^[ \t]*#/) { cont = (out ~ /\\$/); next }
        if (out ~ /^[ \t]*extern "C"/) next
        for (k = 1; k <= length(out); k++) {
            c = substr(out, k, 1)
            if (depth == 0) {
                if (c == "{") { emit(buf); buf = ""; depth = 1 }
                else if (c == ";") { emit(buf); buf = "" }
                else if (c != "}") buf = buf c
            } else if (c == "{") depth++
            else if (c == "}") depth--
        }
        buf = buf " "
    }' include/liburing.h > "$tmp/header"

while IFS='	' read -r f n text; do
    grep -qx "$n" "$tmp/names" || { fail "synopsis $f: $n is not a function of this library"; continue; }
    awk -F '\t' -v n="$n" -v t="$text" '$1 == n && $2 == t { ok = 1 } END { exit !ok }' \
        "$tmp/header" && continue
    hdr=$(awk -F '\t' -v n="$n" '$1 == n { print $2 }' "$tmp/header" | head -1)
    fail "synopsis $f: $n differs from include/liburing.h
    page:   $text
    header: $hdr"
done < "$tmp/protos"

# --- Cross references. -------------------------------------------------------
while read -r f; do
    awk '/^\.Xr / { print $2, $3 }' "$f" | while read -r xn xs; do
        case $xn in io_uring*|liburing*) ;; *) continue ;; esac
        xs=${xs%%[!0-9]*}
        [ -f "man/man$xs/$xn.$xs" ] && continue
        # Trees without the overview lack all of section 7 (a partial branch).
        [ "$xs" = 7 ] && [ ! -f man/man7/liburing-rs.7 ] && continue
        other=$(ls man/man[1-9]/"$xn".[1-9] 2>/dev/null | head -1)
        if [ -n "$other" ]; then
            echo "xref $f: $xn($xs) is in section ${other##*.}"
        elif ! grep -qx "$xn" "$tmp/names"; then
            echo "xref $f: no page $xn($xs)"
        fi
    done
done < "$tmp/pages" > "$tmp/xref"
[ -s "$tmp/xref" ] && fail "$(cat "$tmp/xref")"

# --- Install, render with man(1), uninstall. ----------------------------------
if [ -z "$group" ]; then
    stage=$tmp/stage
    # A tree whose Makefile predates install-man borrows this one's rules.
    mk="make -s -C $tree"
    grep -q '^install-man:' Makefile || mk="$mk -f $here/Makefile"
    if $mk install-man DESTDIR="$stage" PREFIX=/usr > "$tmp/make.log" 2>&1; then
        page=io_uring_prep_read
        [ -f man/man3/$page.3 ] || page=io_uring_queue_init
        out=$(LC_ALL=C MANWIDTH=80 man -M "$stage/usr/share/man" -P cat 3 $page 2>"$tmp/man.err")
        st=$?
        if [ $st -ne 0 ] || [ -s "$tmp/man.err" ] ||
           ! printf '%s\n' "$out" | grep -q "$page"; then
            fail "render: man -M <staged> $page (exit $st):
$(sed 's/^/    /' "$tmp/man.err")"
        fi
        n_inst=$(find "$stage" -type f | wc -l)
        n_src=$(ls man/man[1-9]/*.[1-9] | wc -l)
        [ "$n_inst" -eq "$n_src" ] || fail "install-man: installed $n_inst files for $n_src pages"
        $mk uninstall-man DESTDIR="$stage" PREFIX=/usr >> "$tmp/make.log" 2>&1
        left=$(find "$stage" -type f)
        [ -z "$left" ] || fail "uninstall-man left files behind:
$left"
    else
        fail "make install-man failed:
$(sed 's/^/    /' "$tmp/make.log")"
    fi
fi

npages=$(wc -l < "$tmp/pages"); naliases=$(wc -l < "$tmp/aliases")
nwant=$(wc -l < "$tmp/want")
echo "$nwant names, $npages pages, $naliases aliases, $problems problem(s)"
[ $problems -eq 0 ]
