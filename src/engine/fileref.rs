//! The engine's references to the program's files, kept without costing
//! the program its POSIX record locks.
//!
//! Where the kernel's io_uring takes a file reference (a request that
//! outlives its submit call, a registered file, a watched poll), the
//! engine holds a dup of the program's fd (`dup_file`). That dup sits in
//! the program's own fd table, and POSIX drops every record lock
//! (`F_SETLK`) a process holds on a file when it closes any of its fds
//! for that file. So `close_file` does not close a dup whose file the
//! process holds such a lock on: it parks it. A later `dup_file` of the
//! same open file takes the parked dup instead of making another, so a
//! program that keeps its lock across many requests costs one fd per
//! locked open file, not one per request. A parked dup is closed once no
//! lock of the process is left on its file, as seen by the next
//! `close_file` or `sweep` (ring exit).
//!
//! Limits (docs/engine.md): a lock taken by another thread between the
//! check and the close is still dropped, and a parked dup keeps its file
//! open until its locks are gone.

use super::lock::Mutex;
use super::os;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

struct Parked {
    fd: i32,
    /// Requests and slots using the dup right now (0: parked only).
    users: u32,
    /// A regular file: only those are shared, as a readiness set watches
    /// each pollable file's dup under its number once.
    reg: bool,
}

/// Parked dups. A leaf lock: nothing is taken while it is held; fork's
/// `prepare` holds it last.
static PARKED: Mutex<Vec<Parked>> = Mutex::new(Vec::new());
/// `PARKED`'s length, read without the lock on the common paths.
static NPARKED: AtomicUsize = AtomicUsize::new(0);

/// A reference of the engine's own to the open file `fd` names: a parked
/// dup of it if there is one, else a new dup (`os::dup`), or -errno.
pub(crate) fn dup_file(fd: i32) -> i32 {
    if NPARKED.load(Ordering::Acquire) != 0 {
        let mut p = PARKED.lock();
        if let Some(e) = p.iter_mut().find(|e| e.reg && !os::stale(e.fd) && same_open_file(fd, e.fd)) {
            e.users += 1;
            return e.fd;
        }
    }
    os::dup(fd)
}

/// Gives back a reference `dup_file` (or an fd the engine opened for the
/// program's table) handed out.
pub(crate) fn close_file(fd: i32) {
    if fd < 0 {
        return;
    }
    if NPARKED.load(Ordering::Acquire) == 0 {
        if !locked_here(fd) {
            os::close(fd);
            return;
        }
        park(PARKED.lock(), fd);
        return;
    }
    let mut p = PARKED.lock();
    match p.iter_mut().find(|e| e.fd == fd) {
        Some(e) => e.users -= 1,
        None if locked_here(fd) => return park(p, fd),
        None => os::close(fd),
    }
    sweep_locked(&mut p);
}

/// Moves an fd the engine opened for its fixed table (a direct open,
/// socket, accept or pipe) to an engine number, close-on-exec, as the
/// kernel's direct descriptors take no number of the program's and reach
/// no exec'd program. Moving closes the first number, so an fd whose file
/// the process holds a POSIX lock on stays where it is (close-on-exec).
pub(crate) fn to_engine_number(fd: i32) -> i32 {
    if fd < 0 || fd >= os::high_base() {
        return fd;
    }
    if !locked_here(fd) {
        return os::high(fd);
    }
    // SAFETY: F_SETFD on an fd the engine owns.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    fd
}

fn park(mut p: super::lock::Guard<'_, Vec<Parked>>, fd: i32) {
    let reg = os::file_type(fd) == libc::S_IFREG;
    p.push(Parked { fd, users: 0, reg });
    NPARKED.store(p.len(), Ordering::Release);
}

/// Closes the parked dups no request uses whose files the process holds
/// no lock on any more.
pub(crate) fn sweep() {
    if NPARKED.load(Ordering::Acquire) != 0 {
        sweep_locked(&mut PARKED.lock());
    }
}

fn sweep_locked(p: &mut Vec<Parked>) {
    p.retain(|e| {
        if os::stale(e.fd) {
            return false; // its number may be the program's by now
        }
        if e.users != 0 || locked_here(e.fd) {
            return true;
        }
        os::close(e.fd);
        false
    });
    NPARKED.store(p.len(), Ordering::Release);
}

/// Whether `a` and parked dup `b` are the same open file: kcmp, or where
/// a container refuses it, the same inode, status flags and position (two
/// opens of one file that agree on all three serve a request alike, but
/// for the position an offset of -1 moves).
fn same_open_file(a: i32, b: i32) -> bool {
    if let Ok(same) = os::kcmp_file(a, b) {
        return same;
    }
    // SAFETY: F_GETFL and lseek(SEEK_CUR) only read.
    let (fa, fb, pa, pb) = unsafe {
        (
            libc::fcntl(a, libc::F_GETFL),
            libc::fcntl(b, libc::F_GETFL),
            libc::lseek(a, 0, libc::SEEK_CUR),
            libc::lseek(b, 0, libc::SEEK_CUR),
        )
    };
    fa >= 0 && fa == fb && pa == pb && matches!((os::ident(a), os::ident(b)), (Ok(x), Ok(y)) if x == y)
}

/// Whether closing `fd` would drop a POSIX record lock this process
/// holds: F_OFD_GETLK sees every lock on the file but this open file's
/// OFD locks, and one that names this process settles it. When it names
/// another owner, a lock of ours may hide behind it: the dup is kept if
/// /proc/locks shows this process holding a POSIX lock on any file (its
/// device and inode numbers there need not match fstat's, as on
/// overlayfs), since parking costs an fd where closing may cost a lock.
fn locked_here(fd: i32) -> bool {
    // SAFETY: an all-zero flock is valid.
    let mut fl: libc::flock = unsafe { core::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as i16;
    fl.l_whence = libc::SEEK_SET as i16;
    // SAFETY: live flock; F_OFD_GETLK only fills it. An error (an O_PATH
    // fd, whose close drops nothing; a file without locking) means no
    // lock can be lost.
    if unsafe { libc::fcntl(fd, libc::F_OFD_GETLK, &mut fl) } < 0 || fl.l_type == libc::F_UNLCK as i16 {
        return false;
    }
    // SAFETY: getpid takes no memory.
    let me = unsafe { libc::getpid() };
    fl.l_pid == me || holds_posix_locks(me)
}

/// Whether /proc/locks lists a POSIX lock held by process `pid` (true
/// when it cannot be read).
fn holds_posix_locks(pid: i32) -> bool {
    let Some(text) = os::read_file(c"/proc/locks") else { return true };
    let mut digits = [0u8; 10];
    let pid = os::decimal(pid as u32, &mut digits);
    // "N: POSIX  ADVISORY  WRITE PID MAJ:MIN:INO START END"; a waiter's
    // line has "->" after the number and holds nothing.
    text.split(|&b| b == b'\n').any(|line| {
        let mut t = line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty());
        t.nth(1) == Some(b"POSIX") && t.nth(2) == Some(pid)
    })
}

/// fork(): `prepare` holds the lock across it, so the child's copy of the
/// list is whole; the parent gives it back, the child starts it free.
pub(crate) fn hold_for_fork() {
    PARKED.hold();
}

/// # Safety
/// The calling thread took the lock with `hold_for_fork`.
pub(crate) unsafe fn unhold_after_fork() {
    // SAFETY: forwarded contract.
    unsafe { PARKED.unhold() };
}

/// # Safety
/// Only in a freshly forked child, before any other thread exists. The
/// list is whole: `prepare` held the lock, or the engine was not active.
pub(crate) unsafe fn after_fork_child() {
    // SAFETY: forwarded contract.
    unsafe { PARKED.reset_after_fork() };
}
