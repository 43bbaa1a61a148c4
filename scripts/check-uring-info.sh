#!/bin/sh
# uring-info where io_uring is blocked, as a container's seccomp profile
# blocks it: under build/helpers/no-uring the report must say io_uring is
# unavailable, name the seccomp filter as the cause and run nothing on the
# kernel; --check must fail. Then: the man page lints clean, and
# `make install` / `make uninstall` put the program in and take it out.
# (tests/uring_info.rs compares the report with the kernel.)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
info=$top/build/bin/uring-info
helper=$top/build/helpers/no-uring
fail=0
bad() { echo "FAIL: $*"; fail=1; }

for f in "$info" "$helper"; do
    [ -x "$f" ] || { echo "FAIL: $f missing (make; scripts/test.sh builds the helper)"; exit 1; }
done

for err in EPERM ENOSYS; do
    text=$("$helper" $err "$info") || bad "report under the $err filter exited $?"
    echo "$text" | grep -q "^  available  *no$" || bad "$err: report does not say unavailable"
    echo "$text" | grep -q "^  cause  *ring setup failed with $err: a seccomp filter blocks io_uring" ||
        bad "$err: cause is not the seccomp filter: $(echo "$text" | grep cause)"
    echo "$text" | grep -q "^  seccomp  *2 (filter" || bad "$err: seccomp mode not shown as 2"
    echo "$text" | grep -q "^  rings run on  *userspace engine (the kernel refuses io_uring" || bad "$err: engine line"
    LIBURING_RS_ENGINE=kernel "$helper" $err "$info" | grep -q "^  rings run on  *none (the kernel refuses io_uring" ||
        bad "$err: engine line with LIBURING_RS_ENGINE=kernel"
    json=$("$helper" $err "$info" --json) || bad "--json under the $err filter exited $?"
    echo "$json" | grep -q "\"io_uring\": {\"available\": false, \"error\": \"$err\", \"cause\": \"ring setup failed with $err: a seccomp filter" ||
        bad "$err: JSON io_uring member: $(echo "$json" | grep '"io_uring"')"
    echo "$json" | grep -q '"engine": {"selected": "userspace engine"' || bad "$err: JSON engine"
    "$helper" $err "$info" --check NOP 2>/dev/null
    [ $? -eq 1 ] || bad "$err: --check NOP did not exit 1"
done

if command -v mandoc >/dev/null 2>&1; then
    lint=$(mandoc -T lint -W warning "$top/man/man1/uring-info.1" 2>&1)
    [ -z "$lint" ] || bad "mandoc lint: $lint"
else
    bad "mandoc is not installed (scripts/install-deps.sh installs it)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$top" install DESTDIR="$tmp" PREFIX=/usr >/dev/null || bad "make install"
"$tmp/usr/bin/uring-info" --check NOP || bad "installed uring-info --check NOP"
make -s -C "$top" uninstall DESTDIR="$tmp" PREFIX=/usr >/dev/null || bad "make uninstall"
[ -e "$tmp/usr/bin/uring-info" ] && bad "make uninstall left bin/uring-info"

[ $fail -eq 0 ] && echo "uring-info: seccomp cause named (EPERM, ENOSYS), man page clean, install/uninstall ok"
exit $fail
