#!/bin/sh
# Installs into a scratch DESTDIR, then builds a program the way a user
# would, with `pkg-config --cflags --libs liburing`, and runs it against the
# installed library. Also checks the shipped files and the library's size.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=/opt/liburing-rs
make -s -C "$top" install DESTDIR="$tmp/root" PREFIX=$prefix >/dev/null
root=$tmp/root$prefix

for f in lib/liburing.so.2.15 lib/liburing.so.2 lib/liburing.so lib/liburing.a \
         lib/liburing-ffi.so.2.15 lib/liburing-ffi.so.2 lib/liburing-ffi.a \
         lib/liburing-rs-diag.so.2.15 lib/liburing-rs-syscall.so.2.15 \
         lib/pkgconfig/liburing.pc lib/pkgconfig/liburing-ffi.pc \
         include/liburing.h include/liburing/io_uring.h include/liburing/barrier.h \
         include/liburing/compat.h include/liburing/io_uring_version.h \
         share/man/man2/io_uring_setup.2 share/man/man3/io_uring_queue_init.3 \
         share/man/man1/uring-run.1 share/man/man3/liburing_rs_intercept_syscall.3 \
         share/man/man7/liburing-rs.7 share/man/man7/io_uring.7; do
    [ -e "$root/$f" ] || { echo "not installed: $f"; exit 1; }
done

# The .pc files name the install prefix; point pkg-config at the DESTDIR copy.
export PKG_CONFIG_PATH=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$tmp/root
[ "$(pkg-config --modversion liburing)" = 2.15 ] || { echo "pkg-config version"; exit 1; }
cflags=$(pkg-config --cflags liburing)
case $cflags in *_GNU_SOURCE*) echo "Cflags force _GNU_SOURCE: $cflags"; exit 1 ;; esac

cat > "$tmp/prog.c" <<'C'
#include <liburing.h>
#include <stdio.h>
int main(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	if (io_uring_queue_init(4, &ring, 0))
		return 1;
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	if (io_uring_submit_and_wait(&ring, 1) != 1 || io_uring_peek_cqe(&ring, &cqe))
		return 1;
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	printf("%d.%d\n", io_uring_major_version(), io_uring_minor_version());
	return 0;
}
C
cc -Wall -Werror "$tmp/prog.c" -o "$tmp/prog" $(pkg-config --cflags --libs liburing) \
    -Wl,-rpath,"$root/lib"
[ "$("$tmp/prog")" = 2.15 ] || { echo "installed library did not run"; exit 1; }
# The installed library finds its diagnostics next to itself.
LIBURING_RS_TRACE=1 "$tmp/prog" 2>"$tmp/trace" >/dev/null
grep -q ' submit NOP ' "$tmp/trace" || { echo "no trace from the installed library:"; cat "$tmp/trace"; exit 1; }
# The installed uring-run preloads the installed library and its syscall(3)
# object, from beside itself.
pre=$("$root/bin/uring-run" sh -c 'echo "$LD_PRELOAD"')
[ "$pre" = "$root/bin/../lib/liburing.so.2:$root/bin/../lib/liburing-rs-syscall.so.2.15" ] ||
    { echo "uring-run preloads: $pre"; exit 1; }
cc -Wall -Werror "$tmp/prog.c" -o "$tmp/prog-ffi" $(pkg-config --cflags --libs liburing-ffi) \
    -Wl,-rpath,"$root/lib"
[ "$("$tmp/prog-ffi")" = 2.15 ] || { echo "installed ffi library did not run"; exit 1; }

# Stripped size. Issue 6 set 64 KiB for the drop-in library alone; the
# setup diagnosis, the userspace engine and the interception of raw io_uring
# calls live in it now too (the trace and the checker have a library of
# their own). The engine's credential switching, fd ownership, worker
# interrupts and interception took it from 314 to 339 KiB; the op rows'
# cold hooks, IORING_OP_PIPE, the trapped close of ring fds and pinned
# NO_MMAP memory to 371 KiB; ring resizing, the query, EPOLL_WAIT, TX
# timestamps, the cancellation of a dead fork sharer's requests, the
# lock-keeping file references and shared dups to 395 KiB. The ceiling
# still catches what would bloat it by accident: std, unwinding, a stray
# format! (416 KiB).
strip -o "$tmp/s.so" "$root/lib/liburing.so.2.15"
size=$(stat -c %s "$tmp/s.so")
[ "$size" -lt 425984 ] || { echo "liburing.so.2.15 stripped is $size bytes"; exit 1; }

# Uninstall takes back every file install put there.
make -s -C "$top" uninstall DESTDIR="$tmp/root" PREFIX=$prefix >/dev/null
left=$(find "$tmp/root" ! -type d)
[ -z "$left" ] || { echo "make uninstall left:"; echo "$left"; exit 1; }
echo "installed, pkg-config build runs, uninstalled; stripped liburing.so.2.15: $size bytes"
