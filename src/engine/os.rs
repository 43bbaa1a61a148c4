//! Thin wrappers over the libc calls the engine makes. Each returns a
//! non-negative value or `-errno`, like the kernel would.

use core::ffi::c_void;

/// The kernel's internal "interrupted, restart" code. Only an interrupt
/// (cancellation, ring exit; see io_wq.rs) makes a worker's call fail
/// with EINTR, and the kernel's io-wq leaves this code in the CQE of the
/// ops that do not turn it into -EINTR themselves (splice, tee, open).
pub(crate) const ERESTARTSYS: i32 = 512;

/// A worker's result after an interrupt, as those ops report it.
pub(crate) fn restart_code(ret: i32) -> i32 {
    if ret == -libc::EINTR {
        -ERESTARTSYS
    } else {
        ret
    }
}

/// `-errno` of the last failed libc call.
#[inline]
pub(crate) fn errno() -> i32 {
    // SAFETY: errno's location is valid for the calling thread.
    -unsafe { *libc::__errno_location() }
}

/// Folds a libc `-1`-and-errno result into `-errno`.
#[inline]
pub(crate) fn cvt(ret: isize) -> isize {
    if ret < 0 {
        errno() as isize
    } else {
        ret
    }
}

#[inline]
pub(crate) fn cvt32(ret: i32) -> i32 {
    if ret < 0 {
        errno()
    } else {
        ret
    }
}

/// Closes an fd the engine owns.
pub(crate) fn close(fd: i32) {
    if fd >= 0 {
        // SAFETY: callers pass fds the engine owns and no longer uses.
        unsafe { libc::close(fd) };
    }
}

/// A non-blocking, close-on-exec eventfd.
pub(crate) fn eventfd() -> i32 {
    // SAFETY: no memory is involved.
    cvt32(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })
}

/// Adds one to an eventfd counter; a full counter is already readable.
pub(crate) fn eventfd_signal(fd: i32) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a live u64.
    unsafe { libc::write(fd, &one as *const u64 as *const c_void, 8) };
}

/// Empties an eventfd counter (non-blocking fds only).
pub(crate) fn eventfd_drain(fd: i32) {
    let mut v: u64 = 0;
    // SAFETY: reads 8 bytes into a live u64.
    unsafe { libc::read(fd, &mut v as *mut u64 as *mut c_void, 8) };
}

/// Duplicates an fd (close-on-exec) so a request keeps its file alive.
pub(crate) fn dup(fd: i32) -> i32 {
    // SAFETY: no memory is involved.
    cvt32(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) })
}

/// CLOCK_MONOTONIC in nanoseconds.
pub(crate) fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

pub(crate) fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a live timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub(crate) fn ns_to_timespec(ns: u64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / 1_000_000_000) as _, tv_nsec: (ns % 1_000_000_000) as _ }
}

/// A wait's timespec as the kernel reads it (timespec64_to_ktime, no range
/// check): nanoseconds, 0 for a time at or before zero, None for one too
/// far to count (the kernel's KTIME_MAX: no limit).
pub(crate) fn ktime_ns(sec: i64, nsec: i64) -> Option<u64> {
    const KTIME_SEC_MAX: i64 = i64::MAX / 1_000_000_000;
    if sec >= KTIME_SEC_MAX {
        return None;
    }
    let ns = (sec as i128) * 1_000_000_000 + nsec as i128;
    Some(ns.clamp(0, i64::MAX as i128) as u64)
}

/// The number of CPUs this process may run on (at least 1).
pub(crate) fn cpus() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as u32
    } else {
        1
    }
}

/// Copies `len` bytes of caller memory at `src` into `dst` without trusting
/// `src`: an unmapped address yields `-EFAULT` instead of a crash. Uses
/// process_vm_readv on ourselves; where that is blocked, falls back to a
/// plain copy after refusing NULL.
pub(crate) fn copy_from_user(dst: *mut u8, src: u64, len: usize) -> Result<(), i32> {
    if len == 0 {
        return Ok(());
    }
    if src == 0 {
        return Err(-libc::EFAULT);
    }
    let local = libc::iovec { iov_base: dst as *mut c_void, iov_len: len };
    let remote = libc::iovec { iov_base: src as *mut c_void, iov_len: len };
    // SAFETY: `dst` has room for `len` bytes (caller contract); the kernel
    // checks `src` and fails with EFAULT rather than faulting.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == len as isize {
        return Ok(());
    }
    match errno() {
        e if n < 0 && (e == -libc::ENOSYS || e == -libc::EPERM) => {
            // SAFETY: the caller passed a non-NULL user buffer of `len`
            // bytes; without process_vm_readv we have to trust it.
            unsafe { core::ptr::copy_nonoverlapping(src as *const u8, dst, len) };
            Ok(())
        }
        _ => Err(-libc::EFAULT),
    }
}

/// Copies a NUL-terminated string of at most `max` bytes (NUL included)
/// from caller memory, a page at a time so a string ending just before an
/// unmapped page is fine. Err(-ENAMETOOLONG) when no NUL comes in time.
pub(crate) fn copy_str_from_user(src: u64, max: usize) -> Result<alloc::vec::Vec<u8>, i32> {
    let page = crate::ring::page_size() as u64;
    let mut out = alloc::vec::Vec::new();
    let mut at = src;
    while out.len() < max {
        let chunk = ((page - at % page) as usize).min(max - out.len());
        let old = out.len();
        out.resize(old + chunk, 0);
        copy_from_user(out[old..].as_mut_ptr(), at, chunk)?;
        if let Some(i) = out[old..].iter().position(|&b| b == 0) {
            out.truncate(old + i + 1);
            return Ok(out);
        }
        at += chunk as u64;
    }
    Err(-libc::ENAMETOOLONG)
}

/// Copies `len` bytes from `src` into caller memory at `dst`, with the
/// same checks as [`copy_from_user`].
pub(crate) fn copy_to_user(dst: u64, src: *const u8, len: usize) -> Result<(), i32> {
    if len == 0 {
        return Ok(());
    }
    if dst == 0 {
        return Err(-libc::EFAULT);
    }
    let local = libc::iovec { iov_base: src as *mut c_void, iov_len: len };
    let remote = libc::iovec { iov_base: dst as *mut c_void, iov_len: len };
    // SAFETY: `src` holds `len` bytes (caller contract); the kernel checks
    // `dst` and fails with EFAULT rather than faulting.
    let n = unsafe { libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == len as isize {
        return Ok(());
    }
    match errno() {
        e if n < 0 && (e == -libc::ENOSYS || e == -libc::EPERM) => {
            // SAFETY: as in copy_from_user's fallback.
            unsafe { core::ptr::copy_nonoverlapping(src, dst as *mut u8, len) };
            Ok(())
        }
        _ => Err(-libc::EFAULT),
    }
}

/// Runs `f(arg)` on a new detached thread with every signal blocked, so
/// the application's signals never land on engine threads.
pub(crate) fn spawn(f: extern "C" fn(*mut c_void) -> *mut c_void, arg: *mut c_void) -> Result<(), i32> {
    start_thread(f, arg, true).map(|_| ())
}

/// As `spawn`, but the thread must be joined (see `join`): its stack is
/// then free for the next thread before that one starts.
pub(crate) fn spawn_joinable(f: extern "C" fn(*mut c_void) -> *mut c_void, arg: *mut c_void) -> Result<libc::pthread_t, i32> {
    start_thread(f, arg, false)
}

/// Waits for a thread from `spawn_joinable` to end.
pub(crate) fn join(t: libc::pthread_t) {
    // SAFETY: `t` came from spawn_joinable and is joined once.
    unsafe { libc::pthread_join(t, core::ptr::null_mut()) };
}

fn start_thread(f: extern "C" fn(*mut c_void) -> *mut c_void, arg: *mut c_void, detached: bool) -> Result<libc::pthread_t, i32> {
    // SAFETY: plain libc calls on live, local structs; the old mask is
    // restored before returning.
    unsafe {
        let mut all: libc::sigset_t = core::mem::zeroed();
        let mut old: libc::sigset_t = core::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        if detached {
            libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        }
        libc::pthread_attr_setstacksize(&mut attr, 256 * 1024);
        let mut tid: libc::pthread_t = 0;
        let ret = libc::pthread_create(&mut tid, &attr, f, arg);
        libc::pthread_attr_destroy(&mut attr);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, core::ptr::null_mut());
        if ret != 0 {
            return Err(-ret);
        }
        Ok(tid)
    }
}

/// Whether the pages holding `len` bytes from `addr` are mapped writable: the
/// kernel pins them for writing, and faulting them in for writing
/// (MADV_POPULATE_WRITE, which never changes contents) fails the same
/// way. Read-only memory gets EINVAL, as does a kernel without the
/// advice: a page of our own stack tells the two apart.
pub(crate) fn writable(addr: u64, len: usize) -> bool {
    let page = crate::ring::page_size();
    const MADV_POPULATE_WRITE: i32 = 23;
    let populate = |a: usize, n: usize| {
        // SAFETY: populating only faults pages in; it changes no memory.
        if unsafe { libc::madvise(a as *mut libc::c_void, n, MADV_POPULATE_WRITE) } == 0 {
            0
        } else {
            errno()
        }
    };
    let start = addr as usize & !(page - 1);
    let end = (addr as usize).saturating_add(len).saturating_add(page - 1) & !(page - 1);
    match populate(start, end - start) {
        0 => true,
        e if e == -libc::EINVAL => {
            let here = 0u8;
            populate(&here as *const u8 as usize & !(page - 1), page) != 0
        }
        _ => false,
    }
}
