#!/bin/sh
# Real programs whose io_uring a container refuses: each on this library's
# engine against the fallback it has of its own, and against the kernel's
# io_uring, in rounds whose order rotates. Writes benches/programs.md.
#
# - qemu-img bench (Debian's qemu-utils): 4 KiB O_DIRECT I/O at QD32 on a
#   raw image. Fallback: QEMU's thread pool (-i threads, aio=threads).
# - MariaDB (Debian's mariadb-server) under sysbench's OLTP read/write and
#   write-only runs, 8 client threads, a 64 MiB buffer pool, O_DIRECT data
#   files. Fallback: InnoDB's simulated AIO, which it takes by itself when
#   io_uring_queue_init fails.
# - plocate (Debian's plocate): queries of a database of /usr, a short
#   process each, whose index reads and statx calls go through io_uring.
#   Fallback: pread and access(2), which it takes when io_uring_queue_init
#   fails. Measures what the engine costs a short-lived program.
#
# "Refused" is c-tests/helpers/no-uring: a seccomp filter answering the
# io_uring system calls with EPERM. On the engine, the program loads this
# library (LD_LIBRARY_PATH) in place of Debian's liburing.so.2; for its
# fallback and for the kernel it loads Debian's own.
#
#   sh benches/programs.sh      (~12 minutes; make bench-programs)
#
# Environment: BENCH_ROUNDS (default 3), BENCH_MARIADB_SECS (per point,
# default 30), BENCH_STORAGE_DIR (an O_DIRECT-capable disk directory for
# the image and the data directory, default /var/tmp), BENCH_OUT.
set -eu

REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/benches/stats.sh"
B=$REPO/build/bench-programs
OUT=${BENCH_OUT:-$REPO/benches/programs.md}
ROUNDS=${BENCH_ROUNDS:-3}
MSECS=${BENCH_MARIADB_SECS:-30}
SDIR=${BENCH_STORAGE_DIR:-/var/tmp}
OURS=$REPO/build/lib
unset LD_LIBRARY_PATH LD_PRELOAD LIBURING_RS_ENGINE || true

say() { printf '%s\n' "$*" >&2; }

need=""
command -v qemu-img >/dev/null 2>&1 || need="$need qemu-utils"
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need="$need mariadb-server"
command -v sysbench >/dev/null 2>&1 || need="$need sysbench"
command -v plocate >/dev/null 2>&1 || need="$need plocate"
if [ -n "$need" ]; then
	say "installing:$need"
	apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need >/dev/null
fi
make -s -C "$REPO" lib >&2
mkdir -p "$B" "$REPO/build/helpers"
NOURING=$REPO/build/helpers/no-uring
[ -x "$NOURING" ] || ${CC:-cc} -O2 -Wall -Wextra -Werror "$REPO/c-tests/helpers/no-uring.c" -o "$NOURING"
if ! "$NOURING" EPERM true 2>/dev/null; then
	say "seccomp filters unavailable here: nothing to compare"
	exit 77
fi

# via MODE COMMAND...: execs COMMAND on the kernel's io_uring (through
# env, so that every mode starts it through one exec more), with io_uring
# refused so that it takes its own fallback, or on this library's engine
# with io_uring refused. It replaces the shell it runs in: call it in a
# subshell, or in the background (then $! is the program's pid).
via() {
	m=$1; shift
	case $m in
	kernel) exec env "$@" ;;
	pool | fallback) exec "$NOURING" EPERM "$@" ;;
	engine) export LD_LIBRARY_PATH="$OURS"; exec "$NOURING" EPERM "$@" ;;
	esac
}

RAW=$B/raw.txt
: > "$RAW"
rec() { printf '%s %s %s %s\n' "$1" "$2" "$3" "$4" >> "$RAW"; }   # mode metric value round

# rotate ROUND WORD...: the words, starting at ROUND modulo their count.
rotate() {
	_k=$(($1 % ($# - 1))); shift
	_head=""; _tail=""; _i=0
	for _w in "$@"; do
		if [ $_i -lt $_k ]; then _tail="$_tail $_w"; else _head="$_head $_w"; fi
		_i=$((_i + 1))
	done
	echo $_head $_tail
}

# ------------------------------------------------------------ qemu-img
IMG=$SDIR/liburing-bench-qemu.img
if [ ! -f "$IMG" ] || [ "$(stat -c %s "$IMG")" != 536870912 ]; then
	say "creating $IMG (512 MiB, written: no holes)"
	dd if=/dev/urandom of="$IMG" bs=1M count=512 status=none
	sync
fi
QVER=$(qemu-img --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')
# qimg MODE ARGS...: seconds qemu-img bench reports.
qimg() {
	m=$1; shift
	aio=io_uring
	[ "$m" = pool ] && aio=threads
	(via "$m" qemu-img bench -f raw -t none -i $aio "$@" "$IMG") 2>&1 |
		sed -n 's/^Run completed in \([0-9.]*\) seconds.*/\1/p'
}
say "qemu-img bench, $ROUNDS rounds"
r=0
while [ $r -lt "$ROUNDS" ]; do
	for m in $(rotate $r engine pool kernel); do
		rec $m qemu_write "$(qimg $m -w -c 50000 -d 32 -s 4096)" $r
		rec $m qemu_read "$(qimg $m -c 100000 -d 32 -s 4096)" $r
	done
	r=$((r + 1))
done

# ------------------------------------------------------------ MariaDB
MD=$SDIR/liburing-bench-mariadb
SOCK=$B/mariadb.sock
MBIN=/usr/sbin/mariadbd
MVER=$($MBIN --version | sed -n 's/.*Ver \([^ ]*\).*/\1/p')
MOPTS="--no-defaults --user=root --datadir=$MD --socket=$SOCK --skip-networking --innodb-buffer-pool-size=64M
 --innodb-log-file-size=256M --innodb-flush-method=O_DIRECT --innodb-flush-log-at-trx-commit=1 --innodb-io-capacity=2000"
SB="sysbench --db-driver=mysql --mysql-socket=$SOCK --mysql-user=root --tables=4 --table-size=200000"
mstop() {
	if [ -n "${MPID:-}" ]; then
		kill "$MPID" 2>/dev/null || true
		wait "$MPID" 2>/dev/null || true
		MPID=""
	fi
}
trap mstop EXIT INT TERM
# mstart MODE: starts the server; checks in its log that it took the I/O
# path the mode names.
mstart() {
	log=$B/mariadb.$1.log
	: > "$log"
	via "$1" $MBIN $MOPTS --log-error="$log" &
	MPID=$!
	i=0
	until mariadb -S "$SOCK" -e 'select 1' >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 300 ] || ! kill -0 "$MPID" 2>/dev/null; then
			say "mariadbd ($1) did not start; its log:"; cat "$log" >&2; exit 1
		fi
		sleep 0.2
	done
	case $1 in
	fallback) want='falling back to innodb_use_native_aio=OFF' ;;
	*) want='InnoDB: Using io_uring' ;;
	esac
	if ! grep -q "$want" "$log"; then
		say "mariadbd ($1): its log lacks \"$want\""; cat "$log" >&2; exit 1
	fi
}
if [ ! -f "$MD/.prepared" ]; then
	say "creating the MariaDB data directory $MD"
	rm -rf "$MD"
	mkdir -p "$MD"
	mariadb-install-db --no-defaults --user=root --datadir="$MD" >/dev/null 2>&1
	mstart kernel
	mariadb -S "$SOCK" -e 'create database if not exists sbtest'
	$SB oltp_read_write prepare >/dev/null
	mstop
	touch "$MD/.prepared"
fi
say "MariaDB + sysbench, $ROUNDS rounds of ${MSECS} s points"
r=0
while [ $r -lt "$ROUNDS" ]; do
	for m in $(rotate $r engine fallback kernel); do
		mstart $m
		for wl in oltp_read_write oltp_write_only; do
			tps=$($SB --threads=8 --time="$MSECS" --report-interval=0 $wl run |
				sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p')
			rec $m "mdb_$wl" "$tps" $r
		done
		mstop
	done
	r=$((r + 1))
done

# ------------------------------------------------------------ plocate
PDB=$B/plocate-usr.db
PRUNS=${BENCH_PLOCATE_RUNS:-200}
updatedb -o "$PDB" -U /usr
PVER=$(plocate --version | sed -n '1s/.* //p')
# ploc MODE QUERY RUNS: microseconds per query, each its own process.
ploc() {
	t0=$(date +%s%N)
	i=0
	while [ $i -lt "$3" ]; do
		(via "$1" plocate -d "$PDB" -c "$2") >/dev/null
		i=$((i + 1))
	done
	echo $((($(date +%s%N) - t0) / $3 / 1000))
}
PCOUNT1=$(plocate -d "$PDB" -c passwd)
PCOUNT2=$(plocate -d "$PDB" -c share/doc)
say "plocate, $ROUNDS rounds of $PRUNS queries"
r=0
while [ $r -lt "$ROUNDS" ]; do
	for m in $(rotate $r engine fallback kernel); do
		rec $m plocate_few "$(ploc $m passwd "$PRUNS")" $r
		rec $m plocate_many "$(ploc $m share/doc $((PRUNS / 2)))" $r
	done
	r=$((r + 1))
done

# ------------------------------------------------------------ report
# med MODE METRIC: the median over rounds.
med() {
	awk -v a="$1" -v m="$2" '$1 == a && $2 == m && NF == 4 { print $3 }' "$RAW" | median
}
# row METRIC LABEL FALLBACK UNIT DIR: DIR "lower" for times.
row() {
	e=$(med engine "$1"); f=$(med "$3" "$1"); k=$(med kernel "$1")
	[ -n "$e" ] && [ -n "$f" ] && [ -n "$k" ] || { echo "| $2 | (no data) | | | | | |"; return 0; }
	rf=$(paired engine "$3" "$1"); rk=$(paired engine kernel "$1")
	awk -v e="$e" -v f="$f" -v k="$k" -v rf="$rf" -v rk="$rk" -v l="$2" -v u="$4" -v d="$5" 'BEGIN{
		if (d == "lower") { rf = 1 / rf; rk = 1 / rk }
		printf "| %s | %s %s | %s %s | %s %s | %.2f | %.2f | %s |\n", l, e, u, f, u, k, u, rf, rk,
			(rf >= 1.0) ? "met" : "NOT met" }'
}
{
echo "# Real programs on the engine, against their own fallbacks"
echo
echo "Generated by \`benches/programs.sh\` ($(date -u +%Y-%m-%d), $(nproc) CPUs, Linux $(uname -r), load average"
echo "$(cut -d' ' -f1-3 /proc/loadavg) at the end). io_uring refused by a seccomp filter (EPERM) for the engine and"
echo "the fallback; the kernel's io_uring (Debian's liburing) for reference. $ROUNDS rounds, order rotating. Values are"
echo "medians; the ratios are medians of each round's own ratio, speed over speed (so > 1 is faster), 1.0x the"
echo "fallback being the goal of issue 22."
echo
echo "| workload | engine | program's fallback | kernel io_uring | engine / fallback | engine / kernel | >= 1.0x fallback |"
echo "|---|---|---|---|---|---|---|"
row qemu_write "qemu-img $QVER bench: 50,000 4 KiB O_DIRECT writes, QD32 (fallback: -i threads)" pool s lower
row qemu_read "qemu-img $QVER bench: 100,000 4 KiB O_DIRECT reads, QD32 (fallback: -i threads)" pool s lower
row mdb_oltp_read_write "MariaDB $MVER, sysbench oltp_read_write, 8 threads (fallback: simulated AIO)" fallback tps higher
row mdb_oltp_write_only "MariaDB $MVER, sysbench oltp_write_only, 8 threads (fallback: simulated AIO)" fallback tps higher
row plocate_few "plocate $PVER, one query of /usr's database matching $PCOUNT1 paths, a process each (fallback: pread, access)" fallback us lower
row plocate_many "plocate $PVER, one query matching $PCOUNT2 paths, a process each (fallback: pread, access)" fallback us lower
echo
echo "MariaDB: 4 tables of 200,000 rows (about 190 MiB) against a 64 MiB buffer pool, O_DIRECT data files,"
echo "innodb_flush_log_at_trx_commit=1, ${MSECS} s per point. InnoDB sends page flushes and read-ahead through"
echo "its AIO (io_uring here); its redo log writes and most page reads are plain system calls of its own threads,"
echo "the same in every column."
echo
echo "plocate: microseconds per query, the whole process from exec to exit, $PRUNS runs of the first query and"
echo "$((PRUNS / 2)) of the second per point; each checks the paths it found with statx, through io_uring when it has it."
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
cat "$OUT"
