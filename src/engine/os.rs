//! Thin wrappers over the libc calls the engine makes. Each returns a
//! non-negative value or `-errno`, like the kernel would.

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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

/// Closes an fd the engine owns; one from before `numbers_lost` is left
/// alone: its number may be the program's by now.
pub(crate) fn close(fd: i32) {
    if fd < 0 {
        return;
    }
    if fd >= high_base() {
        if let Some((w, bit)) = own_bit(fd, false) {
            if w.fetch_and(!bit, Ordering::AcqRel) & bit != 0 && stale(fd) {
                return;
            }
        }
    }
    // SAFETY: callers pass fds the engine owns and no longer uses.
    unsafe { crate::sys::close(fd) };
}

/// A non-blocking, close-on-exec eventfd of the engine's own, at an
/// engine number (`high`).
pub(crate) fn eventfd() -> i32 {
    high(app_eventfd())
}

/// A non-blocking, close-on-exec eventfd at the lowest free number, as
/// the kernel hands out a ring fd.
pub(crate) fn app_eventfd() -> i32 {
    // SAFETY: no memory is involved.
    let fd = cvt32(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) });
    if fd >= 0 && ANON_INO.load(Ordering::Relaxed) == 0 {
        if let Ok((dev, ino)) = ident(fd) {
            ANON_DEV.store(dev, Ordering::Relaxed);
            ANON_INO.store(ino, Ordering::Release);
        }
    }
    fd
}

/// `app_eventfd` at a number in `first..end` if one is free there (a ring
/// fd interception can see closed, `crate::sys::seccomp::RING_FD_FIRST`),
/// else at the lowest.
pub(crate) fn app_eventfd_in(first: i32, end: i32) -> i32 {
    let fd = app_eventfd();
    if fd < 0 || (first..end).contains(&fd) {
        return fd;
    }
    match dup_from(fd, first) {
        d if (first..end).contains(&d) => {
            close(fd);
            d
        }
        d => {
            close(d);
            fd
        }
    }
}

/// The identity the kernel gives every anonymous-inode file (eventfds,
/// epoll sets, timerfds), learnt from the engine's first eventfd.
static ANON_DEV: AtomicU64 = AtomicU64::new(0);
static ANON_INO: AtomicU64 = AtomicU64::new(0);

/// Whether `fd`, one of the engine's eventfds, epoll sets or timerfds, is
/// still open on an anonymous-inode file: closed, or reopened by the
/// application on a file, pipe or socket, it is not.
pub(crate) fn anon_ok(fd: i32) -> bool {
    let ino = ANON_INO.load(Ordering::Acquire);
    ino != 0 && ident(fd) == Ok((ANON_DEV.load(Ordering::Relaxed), ino))
}

/// Adds one to an eventfd counter; a full counter is already readable
/// (-EAGAIN is success). Returns 0 or -errno.
pub(crate) fn eventfd_signal(fd: i32) -> i32 {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a live u64.
    let n = cvt(unsafe { libc::write(fd, &one as *const u64 as *const c_void, 8) }) as i32;
    if n == -libc::EAGAIN {
        0
    } else {
        n.min(0)
    }
}

/// Empties an eventfd counter (non-blocking fds only); 0 or -errno
/// (-EAGAIN: it was empty).
pub(crate) fn eventfd_drain(fd: i32) -> i32 {
    let mut v: u64 = 0;
    // SAFETY: reads 8 bytes into a live u64.
    (cvt(unsafe { libc::read(fd, &mut v as *mut u64 as *mut c_void, 8) }) as i32).min(0)
}

/// The lowest number the engine's own fds take: the program's opens get
/// the lowest free numbers, so after it closes fds it does not know of
/// (close_range), the engine's numbers stay closed, and their next use
/// fails instead of reaching a file of the program's. Half the soft
/// RLIMIT_NOFILE, at most 4096 (the fd table grows to it); 0 where that
/// leaves too little room.
pub(crate) fn high_base() -> i32 {
    use core::sync::atomic::AtomicI32;
    static BASE: AtomicI32 = AtomicI32::new(-1);
    let b = BASE.load(Ordering::Relaxed);
    if b >= 0 {
        return b;
    }
    let cur = crate::sys::getrlimit(libc::RLIMIT_NOFILE).map_or(0, |(soft, _)| soft);
    let b = match (cur / 2).min(4096) as i32 {
        b if b < 64 => 0,
        b => b,
    };
    BASE.store(b, Ordering::Relaxed);
    b
}

fn dup_from(fd: i32, min: i32) -> i32 {
    // SAFETY: no memory is involved.
    cvt32(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, min) })
}

/// Numbers from `high_base` up that the engine holds, a bit each, in
/// pages allocated on first use: a number the kernel hands out again while
/// its bit is set was closed behind the engine's back.
const OWN_PAGE_BITS: usize = 4096;
const OWN_PAGES: usize = 256;
type OwnPage = [AtomicU64; OWN_PAGE_BITS / 64];
#[allow(clippy::declare_interior_mutable_const)]
const NO_OWN_PAGE: core::sync::atomic::AtomicPtr<OwnPage> = core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());
static OWNED: [core::sync::atomic::AtomicPtr<OwnPage>; OWN_PAGES] = [NO_OWN_PAGE; OWN_PAGES];
/// The highest engine number handed out so far.
static HWM: core::sync::atomic::AtomicI32 = core::sync::atomic::AtomicI32::new(0);
/// Engine numbers start here once some were lost (see `numbers_lost`).
static FLOOR: core::sync::atomic::AtomicI32 = core::sync::atomic::AtomicI32::new(0);
/// Bumped by `numbers_lost`: rings and fds of an older epoch are dead.
static EPOCH: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

/// The bit of engine number `n`, if it has one.
fn own_bit(n: i32, create: bool) -> Option<(&'static AtomicU64, u64)> {
    let i = (n - high_base()) as usize;
    let (page, bit) = (i / OWN_PAGE_BITS, i % OWN_PAGE_BITS);
    let slot = OWNED.get(page)?;
    let mut p = slot.load(Ordering::Acquire);
    if p.is_null() {
        if !create {
            return None;
        }
        // An all-zero page of atomics is a valid OwnPage.
        let fresh = alloc::boxed::Box::into_raw(alloc::boxed::Box::new([0u64; OWN_PAGE_BITS / 64])) as *mut OwnPage;
        p = match slot.compare_exchange(core::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => fresh,
            Err(other) => {
                // SAFETY: `fresh` was never published.
                drop(unsafe { alloc::boxed::Box::from_raw(fresh) });
                other
            }
        };
    }
    // SAFETY: pages are never freed once published.
    Some((unsafe { &(*p)[bit / 64] }, 1 << (bit % 64)))
}

/// The current epoch (see `numbers_lost`).
#[inline]
pub(crate) fn epoch() -> u32 {
    EPOCH.load(Ordering::Relaxed)
}

/// Some engine fd was found closed behind the engine's back (close_range,
/// say): the others most likely went too, and their numbers may come back
/// as the program's files. Everything of the current epoch is dead from
/// now on (rings answer -EBADF; the reactor and waiting threads take fresh
/// fds), and new engine numbers start above every old one, so that no
/// stale holder ever reaches a new fd; old numbers are never closed.
#[cold]
pub(crate) fn numbers_lost() {
    FLOOR.fetch_max(HWM.load(Ordering::Relaxed).saturating_add(1), Ordering::SeqCst);
    EPOCH.fetch_add(1, Ordering::SeqCst);
}

/// Whether `fd`, an engine number, was handed out before the last
/// `numbers_lost`.
#[inline]
pub(crate) fn stale(fd: i32) -> bool {
    fd >= high_base() && fd < FLOOR.load(Ordering::Relaxed)
}

/// Duplicates an fd (close-on-exec) at an engine number (see
/// `high_base`), so a request keeps its file alive; anywhere if the
/// limit has dropped meanwhile.
pub(crate) fn dup(fd: i32) -> i32 {
    loop {
        let base = high_base();
        let min = base.max(FLOOR.load(Ordering::Relaxed));
        let d = match dup_from(fd, min) {
            e if e == -libc::EINVAL || e == -libc::EMFILE => return dup_from(fd, 0),
            d => d,
        };
        if d < base {
            return d;
        }
        if d > HWM.load(Ordering::Relaxed) {
            HWM.fetch_max(d, Ordering::Relaxed);
        }
        let Some((w, bit)) = own_bit(d, true) else { return d };
        if w.fetch_or(bit, Ordering::AcqRel) & bit == 0 {
            return d;
        }
        // Still the engine's, yet handed out again: closed behind its
        // back. Its holder never closes it (it is below the new floor).
        numbers_lost();
        // SAFETY: `d` is ours, just made.
        unsafe { crate::sys::close(d) };
    }
}

/// Moves an fd the engine just made to an engine number (see `dup`);
/// errors and fds that cannot move pass through.
pub(crate) fn high(fd: i32) -> i32 {
    if fd < 0 || fd >= high_base() {
        return fd;
    }
    match dup(fd) {
        d if d > fd => {
            close(fd);
            d
        }
        d => {
            close(d);
            fd
        }
    }
}

/// What the engine asks of a file: its type bits (S_IFMT), device and
/// inode.
#[derive(Clone, Copy)]
pub(crate) struct Ident {
    pub kind: u32,
    pub dev: u64,
    pub ino: u64,
}

/// Set once statx is refused (seccomp, kernels before 4.11).
static NO_STATX: AtomicBool = AtomicBool::new(false);

/// The type, device and inode of `fd`, or -errno. Only those are asked
/// for: a stat that reports the times marks them as seen, and on file
/// systems with multigrain timestamps (ext4, xfs, btrfs and tmpfs since
/// 6.13) the file's next write must then stamp a fine-grained time,
/// dirtying the inode that the next fdatasync writes out. The kernel's
/// io_uring stats nothing, so neither may the engine. AT_STATX_DONT_SYNC
/// keeps it off the wire on network file systems.
pub(crate) fn ident_of(fd: i32) -> Result<Ident, i32> {
    if !NO_STATX.load(Ordering::Relaxed) {
        let mut sx = core::mem::MaybeUninit::<libc::statx>::uninit();
        let flags = libc::AT_EMPTY_PATH | libc::AT_STATX_DONT_SYNC;
        let mask = libc::STATX_TYPE | libc::STATX_INO;
        // SAFETY: an empty NUL-terminated path and room for a statx.
        let r = unsafe { libc::syscall(libc::SYS_statx, fd, c"".as_ptr(), flags, mask, sx.as_mut_ptr()) };
        if r == 0 {
            // SAFETY: a successful statx writes the whole struct.
            let sx = unsafe { sx.assume_init() };
            // Compared only with other `ident_of` results, never with st_dev.
            let dev = (sx.stx_dev_major as u64) << 32 | sx.stx_dev_minor as u64;
            return Ok(Ident { kind: sx.stx_mode as u32 & libc::S_IFMT, dev, ino: sx.stx_ino });
        }
        match errno() {
            e if e == -libc::ENOSYS || e == -libc::EPERM => NO_STATX.store(true, Ordering::Relaxed),
            e => return Err(e),
        }
    }
    // SAFETY: an all-zero stat is valid; fstat fills it.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: live stat buffer.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(errno());
    }
    let dev = (libc::major(st.st_dev) as u64) << 32 | libc::minor(st.st_dev) as u64;
    Ok(Ident { kind: st.st_mode & libc::S_IFMT, dev, ino: st.st_ino as u64 })
}

/// What an fd refers to: device and inode (all anonymous-inode files,
/// eventfds and epoll sets among them, share one), or -errno.
pub(crate) fn ident(fd: i32) -> Result<(u64, u64), i32> {
    ident_of(fd).map(|i| (i.dev, i.ino))
}

/// The file's type bits (S_IFMT), or 0 if it cannot be told.
pub(crate) fn file_type(fd: i32) -> u32 {
    ident_of(fd).map_or(0, |i| i.kind)
}

/// Whether fds `a` and `b` are the same open file description (a dup of
/// each other), exactly: kcmp, else (kcmp refused, as container profiles
/// do) whether toggling O_APPEND, which an eventfd ignores, on `b` shows
/// on `a`. Closed fds are not the same.
pub(crate) fn same_description(a: i32, b: i32) -> bool {
    match kcmp_file(a, b) {
        Ok(same) => return same,
        Err(e) if e == -libc::EBADF => return false,
        Err(_) => {}
    }
    // SAFETY: F_GETFL and F_SETFL only read and set file status flags.
    unsafe {
        let (fa, fb) = (libc::fcntl(a, libc::F_GETFL), libc::fcntl(b, libc::F_GETFL));
        if fa < 0 || fb < 0 || fa != fb || libc::fcntl(b, libc::F_SETFL, fb ^ libc::O_APPEND) < 0 {
            return false;
        }
        let same = libc::fcntl(a, libc::F_GETFL) == fb ^ libc::O_APPEND;
        libc::fcntl(b, libc::F_SETFL, fb);
        same
    }
}

/// Another of this process's fds than `a` and `b` that is the same open
/// file description as `b` (from /proc/self/fd), if there is one.
pub(crate) fn other_dup(a: i32, b: i32) -> Option<i32> {
    // SAFETY: a NUL-terminated path; the fd is closed below.
    let dir = unsafe { libc::open(c"/proc/self/fd".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if dir < 0 {
        return None;
    }
    let mut buf = [0u8; 4096];
    let mut found = None;
    'read: loop {
        // SAFETY: getdents64 writes at most buf.len() bytes into buf.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        if n <= 0 {
            break;
        }
        let mut at = 0usize;
        while at + 19 < n as usize {
            // struct linux_dirent64: d_reclen at 16 (u16), d_name at 19.
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            if reclen < 20 || at + reclen > n as usize {
                break 'read;
            }
            let name = buf[at + 19..at + reclen].split(|&c| c == 0).next().unwrap_or(&[]);
            let fd = if !name.is_empty() && name.len() < 10 && name.iter().all(u8::is_ascii_digit) {
                name.iter().fold(0i32, |n, &c| n * 10 + (c - b'0') as i32)
            } else {
                -1
            };
            if fd >= 0 && fd != a && fd != b && fd != dir && same_description(fd, b) {
                found = Some(fd);
                break 'read;
            }
            at += reclen;
        }
    }
    close(dir);
    found
}

/// Whether fds `a` and `b` are the same open file (kcmp), or -errno (-EBADF:
/// one is closed). Where kcmp is missing, files with the same identity
/// count as the same.
pub(crate) fn same_file(a: i32, b: i32) -> Result<bool, i32> {
    match kcmp_file(a, b) {
        Err(e) if e == -libc::ENOSYS || e == -libc::EPERM => Ok(ident(a)? == ident(b)?),
        r => r,
    }
}

/// kcmp(KCMP_FILE): whether fds `a` and `b` are the same open file
/// description, or -errno (-EPERM or -ENOSYS where a container refuses
/// kcmp or the kernel lacks it).
pub(crate) fn kcmp_file(a: i32, b: i32) -> Result<bool, i32> {
    const KCMP_FILE: i32 = 0;
    // A refusal is for good (a seccomp filter, a kernel without kcmp).
    let refused = KCMP_REFUSED.load(Ordering::Relaxed);
    if refused != 0 {
        return Err(refused);
    }
    // SAFETY: kcmp takes no memory.
    let r = unsafe {
        let pid = libc::getpid();
        libc::syscall(libc::SYS_kcmp, pid, pid, KCMP_FILE, a, b)
    };
    if r < 0 {
        let e = errno();
        if e == -libc::ENOSYS || e == -libc::EPERM {
            KCMP_REFUSED.store(e, Ordering::Relaxed);
        }
        Err(e)
    } else {
        Ok(r == 0)
    }
}

/// kcmp's refusal (-ENOSYS or -EPERM) once seen, else 0.
static KCMP_REFUSED: core::sync::atomic::AtomicI32 = core::sync::atomic::AtomicI32::new(0);

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
/// from caller memory: exactly the string and its NUL, or
/// Err(-ENAMETOOLONG) when no NUL comes in time. No read crosses a page
/// boundary, so a string ending just before an unmapped page is fine.
/// The first read is short: paths are mostly far shorter than a page, and
/// copying (and allocating) a page for each would cost more than the op.
pub(crate) fn copy_str_from_user(src: u64, max: usize) -> Result<alloc::boxed::Box<[u8]>, i32> {
    const FIRST: usize = 256;
    let page = crate::sys::mem::page_size() as u64;
    let to_page = |at: u64| (page - at % page) as usize;
    let mut first = [0u8; FIRST];
    let n = to_page(src).min(FIRST).min(max);
    copy_from_user(first.as_mut_ptr(), src, n)?;
    if let Some(i) = first[..n].iter().position(|&b| b == 0) {
        return Ok(first[..=i].into());
    }
    let mut out = first[..n].to_vec();
    let mut at = src + n as u64;
    while out.len() < max {
        let chunk = to_page(at).min(max - out.len());
        let old = out.len();
        out.resize(old + chunk, 0);
        copy_from_user(out[old..].as_mut_ptr(), at, chunk)?;
        if let Some(i) = out[old..].iter().position(|&b| b == 0) {
            out.truncate(old + i + 1);
            return Ok(out.into_boxed_slice());
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

/// Names the calling thread as ps and top show it (15 bytes at most):
/// `prefix`, then the process id if `pid`, as the kernel names its
/// io_uring threads ("iou-wrk-PID", "iou-sqp-PID").
pub(crate) fn name_thread(prefix: &str, pid: bool) {
    let mut digits = [0u8; 10];
    // SAFETY: getpid takes no memory.
    let id = if pid { decimal(unsafe { libc::getpid() } as u32, &mut digits) } else { &[] };
    let mut buf = [0u8; 16];
    let n = prefix.len().min(15);
    buf[..n].copy_from_slice(&prefix.as_bytes()[..n]);
    let m = id.len().min(15 - n);
    buf[n..n + m].copy_from_slice(&id[..m]);
    // SAFETY: a NUL-terminated name of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, buf.as_ptr()) };
}

/// Runs `f(arg)` on a new detached thread with every signal blocked, so
/// the application's signals never land on engine threads.
pub(crate) fn spawn(f: extern "C" fn(*mut c_void) -> *mut c_void, arg: *mut c_void) -> Result<(), i32> {
    start_thread(f, arg, true).map(|_| ())
}

/// As `spawn`, but the thread must be joined (see `join`): its stack is
/// then free for the next thread before that one starts.
pub(crate) fn spawn_joinable(
    f: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
) -> Result<libc::pthread_t, i32> {
    start_thread(f, arg, false)
}

/// Waits for a thread from `spawn_joinable` to end.
pub(crate) fn join(t: libc::pthread_t) {
    // glibc frees the stack under the lock its set*id() broadcast holds.
    super::creds::end_streak();
    // SAFETY: `t` came from spawn_joinable and is joined once.
    unsafe { libc::pthread_join(t, core::ptr::null_mut()) };
}

/// What a thread `start_thread` makes runs, and with what.
struct Start {
    f: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
}

/// Non-null on the threads the engine made (`start_thread`), which never
/// change their own credentials but for glibc's set*id() broadcast.
static ENGINE_THREAD: ThreadKey = ThreadKey::new(no_dtor);

extern "C" fn no_dtor(_: *mut c_void) {}

/// Whether the calling thread is one the engine made (a worker, the
/// reactor, an SQ thread, a watcher), not one of the program's.
pub(crate) fn is_engine_thread() -> bool {
    !ENGINE_THREAD.get().is_null()
}

extern "C" fn engine_thread_main(p: *mut c_void) -> *mut c_void {
    // SAFETY: `start_thread` boxed it for this thread alone.
    let s = unsafe { alloc::boxed::Box::from_raw(p as *mut Start) };
    ENGINE_THREAD.set(1 as *mut c_void);
    (s.f)(s.arg)
}

fn start_thread(
    f: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
    detached: bool,
) -> Result<libc::pthread_t, i32> {
    let start = alloc::boxed::Box::into_raw(alloc::boxed::Box::new(Start { f, arg })) as *mut c_void;
    // glibc takes a stack under the lock its set*id() broadcast holds.
    super::creds::end_streak();
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
        let ret = libc::pthread_create(&mut tid, &attr, engine_thread_main, start);
        libc::pthread_attr_destroy(&mut attr);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, core::ptr::null_mut());
        if ret != 0 {
            drop(alloc::boxed::Box::from_raw(start as *mut Start));
            return Err(-ret);
        }
        Ok(tid)
    }
}

/// A pthread key made on first use: a per-thread word whose destructor
/// runs at thread exit for non-null values.
pub(crate) struct ThreadKey {
    key: core::sync::atomic::AtomicU32,
    /// 0 not made, 1 being made, 2 made, 3 failed.
    state: core::sync::atomic::AtomicU32,
    dtor: extern "C" fn(*mut c_void),
}

impl ThreadKey {
    pub(crate) const fn new(dtor: extern "C" fn(*mut c_void)) -> ThreadKey {
        use core::sync::atomic::AtomicU32;
        ThreadKey { key: AtomicU32::new(u32::MAX), state: AtomicU32::new(0), dtor }
    }

    fn key(&self) -> Option<libc::pthread_key_t> {
        use core::sync::atomic::Ordering::Acquire;
        if self.state.load(Acquire) == 2 {
            return Some(self.key.load(Acquire));
        }
        loop {
            match self.state.compare_exchange(0, 1, Acquire, Acquire) {
                Ok(_) => {
                    let mut k: libc::pthread_key_t = 0;
                    // SAFETY: k is a live key slot; the destructor is a plain fn.
                    let ok = unsafe { libc::pthread_key_create(&mut k, Some(self.dtor)) } == 0;
                    if ok {
                        self.key.store(k, core::sync::atomic::Ordering::Release);
                    }
                    self.state.store(if ok { 2 } else { 3 }, core::sync::atomic::Ordering::Release);
                }
                Err(1) => core::hint::spin_loop(),
                Err(2) => return Some(self.key.load(Acquire)),
                Err(_) => return None,
            }
        }
    }

    /// The calling thread's value (null until set).
    pub(crate) fn get(&self) -> *mut c_void {
        // SAFETY: a valid key; reading a thread's own slot.
        self.key().map_or(core::ptr::null_mut(), |k| unsafe { libc::pthread_getspecific(k) })
    }

    /// Sets the calling thread's value; false if no key could be made.
    pub(crate) fn set(&self, v: *mut c_void) -> bool {
        // SAFETY: a valid key; writing a thread's own slot.
        self.key().is_some_and(|k| unsafe { libc::pthread_setspecific(k, v) } == 0)
    }

    /// Whether the key was made (a forked child checks before `get`).
    pub(crate) fn made(&self) -> bool {
        self.state.load(core::sync::atomic::Ordering::Acquire) == 2
    }
}

/// The whole of a small file (one of /proc's), or None if it cannot be
/// opened.
pub(crate) fn read_file(path: &core::ffi::CStr) -> Option<alloc::vec::Vec<u8>> {
    // SAFETY: a NUL-terminated path; the fd is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let mut text = alloc::vec::Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        // SAFETY: reads at most chunk.len() bytes into chunk.
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr() as *mut c_void, chunk.len()) };
        if n <= 0 {
            break;
        }
        text.extend_from_slice(&chunk[..n as usize]);
    }
    close(fd);
    Some(text)
}

/// "/proc/self/fd/N", NUL-terminated: the path that names fd `fd`.
pub(crate) fn proc_fd_path(fd: i32) -> [u8; 25] {
    let mut path = *b"/proc/self/fd/\0\0\0\0\0\0\0\0\0\0\0";
    let mut digits = [0u8; 10];
    let d = decimal(fd as u32, &mut digits);
    path[14..14 + d.len()].copy_from_slice(d);
    path
}

/// `v` in decimal digits, written into `buf` (no core::fmt, which would
/// weigh on the library's size).
pub(crate) fn decimal(mut v: u32, buf: &mut [u8; 10]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return &buf[at..];
        }
    }
}

/// The target of fd `fd`'s /proc link, read into `buf` (None without
/// /proc, or for a closed fd).
pub(crate) fn fd_link(fd: i32, buf: &mut [u8]) -> Option<&[u8]> {
    let path = proc_fd_path(fd);
    // SAFETY: a NUL-terminated path and a live buffer of the length given.
    let n = unsafe {
        libc::readlink(path.as_ptr() as *const libc::c_char, buf.as_mut_ptr() as *mut libc::c_char, buf.len())
    };
    (n > 0).then(|| &buf[..n as usize])
}

#[cfg(test)]
#[path = "os_tests.rs"]
mod tests;
