//! One clear line per failed ring setup.
//!
//! [`setup_failed`] is called by the ring setup path when
//! `io_uring_queue_init*` fails. It gathers the facts that can explain the
//! failure, picks the cause ([`decide`], a pure function the tests drive
//! with made-up facts), writes one line ([`explain`]), keeps it for the
//! calling thread and, when `LIBURING_RS_TRACE` or `LIBURING_RS_CHECK` is
//! set, prints it to stderr. `liburing_rs_setup_error()` returns it.
//!
//! The line lives in a buffer of the calling thread, found through a
//! pthread key (`#[thread_local]` is not stable Rust, and the crate has no
//! `std`): it is allocated at the thread's first failure, rewritten at each
//! later one, and freed when the thread exits. A successful setup leaves it
//! alone.

use core::ffi::{c_char, c_void};
use core::ptr;
use core::sync::atomic::{AtomicUsize, Ordering};

use super::names::{push_errno, push_setup_flags};
use super::sysinfo::{SysFacts, CAP_IPC_LOCK, CAP_SYS_ADMIN, UNLIMITED};
use super::Line;
use crate::sys::*;

/// Room for the longest line (a few numbers and flag names), NUL included.
const LINE_CAP: usize = 512;

/// The kernel's ring size limits without IORING_SETUP_CLAMP.
const MAX_ENTRIES: u32 = 32768;
const MAX_CQ_ENTRIES: u32 = 2 * MAX_ENTRIES;

/// What the diagnosis looks at. Gathered at the failure, or made up by tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    /// The failure, as a positive errno.
    pub err: i32,
    pub entries: u32,
    /// The setup flags the caller asked for.
    pub flags: u32,
    pub cq_entries: u32,
    pub wq_fd: u32,
    pub resv_set: bool,
    /// Which of `flags` the kernel does not know (only looked up for EINVAL).
    pub unknown_flags: u32,
    /// Bytes of ring memory this setup asks for.
    pub ring_bytes: u64,
    /// Bytes the caller gave io_uring_queue_init_mem, if it gave any.
    pub user_mem: Option<u64>,
    pub sys: SysFacts,
}

impl Facts {
    /// `unknown_flags` and `ring_bytes` come from the ring logic, which
    /// can set up rings and size them.
    pub fn gather(
        ret: i32,
        entries: u32,
        flags: u32,
        p: &io_uring_params,
        user_mem: Option<usize>,
        unknown_flags: u32,
        ring_bytes: u64,
    ) -> Self {
        let err = -ret;
        Facts {
            err,
            entries,
            flags,
            cq_entries: p.cq_entries,
            wq_fd: p.wq_fd,
            resv_set: p.resv != [0; 3],
            unknown_flags,
            ring_bytes,
            user_mem: user_mem.map(|n| n as u64),
            sys: SysFacts::gather(),
        }
    }

    /// Seccomp mode 2: a filter is installed.
    fn filtered(&self) -> bool {
        self.sys.seccomp == Some(2)
    }
}

/// Why a setup failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// ENOSYS and no seccomp filter: the kernel has no io_uring.
    NoIoUring,
    /// ENOSYS under a seccomp filter, on a kernel that may lack io_uring.
    SeccompOrNoIoUring,
    /// A seccomp filter refuses the io_uring system calls.
    Seccomp,
    /// kernel.io_uring_disabled = 2.
    DisabledAll,
    /// kernel.io_uring_disabled = 1 and the process is neither in
    /// io_uring_group nor CAP_SYS_ADMIN.
    DisabledGroup,
    /// SQPOLL needs CAP_SYS_ADMIN before Linux 5.11.
    SqpollPrivilege,
    /// Permission denied with every known gate open.
    Denied,
    /// The kernel counts ring memory against RLIMIT_MEMLOCK, which is too low.
    Memlock,
    OutOfMemory,
    /// io_uring_queue_init_mem got less memory than the ring needs.
    BufferTooSmall,
    UnknownFlags,
    Reserved,
    /// A combination of flags the kernel refuses; the text says which.
    FlagRule(&'static str),
    EntriesZero,
    EntriesTooMany,
    CqEntries,
    NoFds,
    AttachWq,
    Unexplained,
}

/// Combinations the kernel refuses with EINVAL, in the order it checks them.
fn broken_rule(flags: u32) -> Option<&'static str> {
    let has = |f: u32| flags & f != 0;
    let rules: [(bool, &'static str); 9] = [
        (
            has(IORING_SETUP_REGISTERED_FD_ONLY) && !has(IORING_SETUP_NO_MMAP),
            "IORING_SETUP_REGISTERED_FD_ONLY needs IORING_SETUP_NO_MMAP",
        ),
        (
            has(IORING_SETUP_SQPOLL)
                && has(IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_DEFER_TASKRUN),
            "IORING_SETUP_SQPOLL cannot be combined with COOP_TASKRUN, TASKRUN_FLAG or DEFER_TASKRUN",
        ),
        (
            has(IORING_SETUP_TASKRUN_FLAG) && !has(IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN),
            "IORING_SETUP_TASKRUN_FLAG needs IORING_SETUP_COOP_TASKRUN or IORING_SETUP_DEFER_TASKRUN",
        ),
        (
            has(IORING_SETUP_HYBRID_IOPOLL) && !has(IORING_SETUP_IOPOLL),
            "IORING_SETUP_HYBRID_IOPOLL needs IORING_SETUP_IOPOLL",
        ),
        (
            has(IORING_SETUP_DEFER_TASKRUN) && !has(IORING_SETUP_SINGLE_ISSUER),
            "IORING_SETUP_DEFER_TASKRUN needs IORING_SETUP_SINGLE_ISSUER",
        ),
        (
            has(IORING_SETUP_CQE32) && has(IORING_SETUP_CQE_MIXED),
            "IORING_SETUP_CQE32 and IORING_SETUP_CQE_MIXED exclude each other",
        ),
        (
            has(IORING_SETUP_SQE128) && has(IORING_SETUP_SQE_MIXED),
            "IORING_SETUP_SQE128 and IORING_SETUP_SQE_MIXED exclude each other",
        ),
        (has(IORING_SETUP_SQ_AFF) && !has(IORING_SETUP_SQPOLL), "IORING_SETUP_SQ_AFF needs IORING_SETUP_SQPOLL"),
        (
            has(IORING_SETUP_SQ_REWIND) && (has(IORING_SETUP_SQPOLL) || !has(IORING_SETUP_NO_SQARRAY)),
            "IORING_SETUP_SQ_REWIND needs IORING_SETUP_NO_SQARRAY and cannot be used with SQPOLL",
        ),
    ];
    rules.iter().find(|r| r.0).map(|r| r.1)
}

/// The SQ size the kernel rounds `entries` to, if it accepts it.
fn sq_size(f: &Facts) -> Option<u32> {
    match f.entries {
        0 => None,
        n if n > MAX_ENTRIES && f.flags & IORING_SETUP_CLAMP == 0 => None,
        n => Some(n.min(MAX_ENTRIES).next_power_of_two()),
    }
}

fn cq_entries_bad(f: &Facts, sq: u32) -> bool {
    let clamp = f.flags & IORING_SETUP_CLAMP != 0;
    match f.cq_entries {
        0 => true,
        n if n > MAX_CQ_ENTRIES && !clamp => true,
        n => n.min(MAX_CQ_ENTRIES).next_power_of_two() < sq,
    }
}

/// Picks the cause of a failure from the facts.
pub fn decide(f: &Facts) -> Cause {
    let sys = &f.sys;
    let admin = sys.has_cap(CAP_SYS_ADMIN);
    match f.err {
        libc::ENOSYS if f.filtered() => {
            // The sysctl exists only in kernels that have io_uring.
            if sys.disabled.is_some() {
                Cause::Seccomp
            } else {
                Cause::SeccompOrNoIoUring
            }
        }
        libc::ENOSYS => Cause::NoIoUring,
        libc::EPERM | libc::EACCES => {
            if f.err == libc::EPERM && sys.disabled == Some(2) {
                Cause::DisabledAll
            } else if f.err == libc::EPERM && sys.disabled == Some(1) && !admin && !sys.in_group {
                Cause::DisabledGroup
            } else if f.filtered() {
                Cause::Seccomp
            } else if f.flags & IORING_SETUP_SQPOLL != 0 && !admin && sys.kernel_before(5, 11) {
                Cause::SqpollPrivilege
            } else {
                Cause::Denied
            }
        }
        libc::ENOMEM if f.user_mem.is_some_and(|n| n < f.ring_bytes) => Cause::BufferTooSmall,
        libc::ENOMEM => {
            let limited = sys.memlock.is_some_and(|(soft, _)| soft != UNLIMITED);
            if sys.rings_count_as_locked() && !sys.has_cap(CAP_IPC_LOCK) && limited {
                Cause::Memlock
            } else {
                Cause::OutOfMemory
            }
        }
        libc::EINVAL => {
            if f.unknown_flags != 0 {
                Cause::UnknownFlags
            } else if f.resv_set {
                Cause::Reserved
            } else if let Some(rule) = broken_rule(f.flags) {
                Cause::FlagRule(rule)
            } else if f.entries == 0 {
                Cause::EntriesZero
            } else if let Some(sq) = sq_size(f) {
                if f.flags & IORING_SETUP_CQSIZE != 0 && cq_entries_bad(f, sq) {
                    Cause::CqEntries
                } else {
                    Cause::Unexplained
                }
            } else {
                Cause::EntriesTooMany
            }
        }
        libc::EMFILE | libc::ENFILE => Cause::NoFds,
        libc::EBADF | libc::ENXIO if f.flags & IORING_SETUP_ATTACH_WQ != 0 => Cause::AttachWq,
        _ => Cause::Unexplained,
    }
}

/// Writes the line for `cause`: what failed, then why, in plain words.
pub fn explain(f: &Facts, cause: Cause, out: &mut Line<LINE_CAP>) {
    let sys = &f.sys;
    out.push("ring setup failed with ");
    push_errno(out, f.err);
    out.push(": ");
    match cause {
        Cause::NoIoUring => {
            out.push("this kernel has no io_uring (it is older than Linux 5.1 or was built without CONFIG_IO_URING)");
        }
        Cause::SeccompOrNoIoUring => {
            out.push(
                "a seccomp filter blocks io_uring here (/proc/self/status has Seccomp: 2), \
                 or this kernel has no io_uring",
            );
        }
        Cause::Seccomp => {
            out.push("a seccomp filter blocks io_uring in this process (/proc/self/status has Seccomp: 2");
            if let Some(d) = sys.disabled {
                out.push(", while kernel.io_uring_disabled = ").push_i64(d).push(" allows it");
            }
            out.push("); the filter must allow io_uring_setup, io_uring_enter and io_uring_register");
        }
        Cause::DisabledAll => {
            out.push("io_uring is switched off for every process (kernel.io_uring_disabled = 2)");
        }
        Cause::DisabledGroup => match sys.group {
            Some(g) if g >= 0 => {
                out.push("kernel.io_uring_disabled = 1 allows io_uring only to members of group ")
                    .push_i64(g)
                    .push(" (kernel.io_uring_group) and to CAP_SYS_ADMIN, and this process is neither");
            }
            _ => {
                out.push(
                    "kernel.io_uring_disabled = 1 with kernel.io_uring_group = -1 allows io_uring \
                     only to processes with CAP_SYS_ADMIN",
                );
            }
        },
        Cause::SqpollPrivilege => {
            out.push("IORING_SETUP_SQPOLL needs CAP_SYS_ADMIN before Linux 5.11");
            if let Some((a, b)) = sys.kernel {
                out.push(" (this kernel is ").push_u64(a as u64).push(".").push_u64(b as u64).push(")");
            }
        }
        Cause::Denied => {
            out.push("permission denied although ");
            if sys.disabled.is_some() {
                out.push("kernel.io_uring_disabled and ");
            }
            out.push("seccomp allow io_uring; a security module (SELinux, AppArmor) may deny it");
        }
        Cause::Memlock => {
            let (soft, _) = sys.memlock.unwrap_or((0, 0));
            out.push("RLIMIT_MEMLOCK is too low: this kernel counts ring memory as locked memory, this ring needs ")
                .push_u64(f.ring_bytes)
                .push(" bytes and the limit is ")
                .push_u64(soft)
                .push(" bytes for all locked memory of this user (raise it with ulimit -l, or grant CAP_IPC_LOCK)");
        }
        Cause::OutOfMemory => {
            out.push("the kernel could not allocate the ring (")
                .push_u64(f.ring_bytes)
                .push(" bytes for ")
                .push_u64(f.entries as u64)
                .push(" entries)");
        }
        Cause::BufferTooSmall => {
            out.push("the memory given to io_uring_queue_init_mem (")
                .push_u64(f.user_mem.unwrap_or(0))
                .push(" bytes) is less than the ")
                .push_u64(f.ring_bytes)
                .push(" bytes this ring needs");
        }
        Cause::UnknownFlags => {
            let u = f.unknown_flags;
            out.push(if u.count_ones() > 1 {
                "this kernel does not know the setup flags "
            } else {
                "this kernel does not know the setup flag "
            });
            push_setup_flags(out, u);
            out.push(" (").push_hex(u as u64).push(")");
        }
        Cause::Reserved => {
            out.push("io_uring_params.resv must be all zero");
        }
        Cause::FlagRule(rule) => {
            out.push(rule);
        }
        Cause::EntriesZero => {
            out.push("a ring needs at least 1 entry");
        }
        Cause::EntriesTooMany => {
            out.push_u64(f.entries as u64)
                .push(" entries is above the kernel's limit of ")
                .push_u64(MAX_ENTRIES as u64)
                .push(" (IORING_SETUP_CLAMP lowers the size to the limit instead)");
        }
        Cause::CqEntries => {
            out.push("cq_entries ")
                .push_u64(f.cq_entries as u64)
                .push(" does not fit IORING_SETUP_CQSIZE: it must be at least the SQ size and at most ")
                .push_u64(MAX_CQ_ENTRIES as u64)
                .push(" (unless IORING_SETUP_CLAMP is set)");
        }
        Cause::NoFds => {
            out.push("no file descriptor is left for the ring (too many open files)");
        }
        Cause::AttachWq => {
            out.push("IORING_SETUP_ATTACH_WQ: wq_fd ").push_i64(f.wq_fd as i32 as i64).push(" is not an open io_uring");
        }
        Cause::Unexplained => {
            out.push("the kernel refused ").push_u64(f.entries as u64).push(" entries with flags ");
            push_setup_flags(out, f.flags);
            if f.filtered() {
                out.push("; note that a seccomp filter is active (Seccomp: 2)");
            }
        }
    }
}

/// The hook: called once per failed `io_uring_queue_init*`, with the flags
/// the caller asked for (the setup path may have added NO_SQARRAY to `p`)
/// and the size of the caller's memory for io_uring_queue_init_mem.
pub fn setup_failed(
    ret: i32,
    entries: u32,
    flags: u32,
    p: &io_uring_params,
    user_mem: Option<usize>,
    unknown_flags: u32,
    ring_bytes: u64,
) {
    let facts = Facts::gather(ret, entries, flags, p, user_mem, unknown_flags, ring_bytes);
    let mut line = Line::<LINE_CAP>::new();
    explain(&facts, decide(&facts), &mut line);
    remember(&line);
    if announce_wanted() {
        announce(line.as_str());
    }
}

/// Whether the user asked to see diagnostics (`LIBURING_RS_TRACE` or
/// `LIBURING_RS_CHECK` set to something other than empty or "0").
fn announce_wanted() -> bool {
    [c"LIBURING_RS_TRACE", c"LIBURING_RS_CHECK"]
        .iter()
        .any(|name| !matches!(crate::sys::env::get(name), None | Some(b"" | b"0")))
}

/// Prints one line to stderr with a single system call, so lines of
/// several threads don't interleave.
fn announce(msg: &str) {
    let parts: [&[u8]; 3] = [b"liburing-rs: ", msg.as_bytes(), b"\n"];
    let iov = parts.map(|p| libc::iovec { iov_base: p.as_ptr() as *mut c_void, iov_len: p.len() });
    // SAFETY: three iovecs over live buffers, read by the kernel only; a
    // failed write is ignored.
    unsafe { libc::writev(2, iov.as_ptr(), iov.len() as i32) };
}

// ---------------------------------------------------------------------------
// The per-thread line
// ---------------------------------------------------------------------------

/// The pthread key of the per-thread buffers, plus one (0: not made yet).
static KEY: AtomicUsize = AtomicUsize::new(0);

/// Shown when a thread's buffer could not be allocated.
static NO_MEMORY: &[u8] = b"ring setup failed (no memory was left to record why)\0";

/// The pthread key's destructor for a thread's line buffer.
///
/// # Safety
/// `p` is a value stored under `KEY`: a calloc'd buffer or `NO_MEMORY`.
unsafe extern "C" fn free_line(p: *mut c_void) {
    if !ptr::eq(p as *const u8, NO_MEMORY.as_ptr()) {
        // SAFETY: every other value stored under KEY came from calloc.
        unsafe { libc::free(p) };
    }
}

fn key() -> Option<libc::pthread_key_t> {
    let k = KEY.load(Ordering::Acquire);
    if k != 0 {
        return Some((k - 1) as libc::pthread_key_t);
    }
    let mut new: libc::pthread_key_t = 0;
    // SAFETY: `new` is writable; free_line matches the destructor type.
    if unsafe { libc::pthread_key_create(&mut new, Some(free_line)) } != 0 {
        return None;
    }
    match KEY.compare_exchange(0, new as usize + 1, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Some(new),
        Err(theirs) => {
            // Another thread won the race; its key serves everyone.
            // SAFETY: `new` is ours and nothing was stored under it.
            unsafe { libc::pthread_key_delete(new) };
            Some((theirs - 1) as libc::pthread_key_t)
        }
    }
}

/// Stores the line in the calling thread's buffer.
fn remember(line: &Line<LINE_CAP>) {
    let Some(key) = key() else { return };
    // SAFETY: reading this thread's value of our key.
    let mut buf = unsafe { libc::pthread_getspecific(key) } as *mut u8;
    if buf.is_null() || ptr::eq(buf, NO_MEMORY.as_ptr()) {
        // SAFETY: calloc has no preconditions; null is handled.
        buf = unsafe { libc::calloc(1, LINE_CAP) } as *mut u8;
        let value = if buf.is_null() { NO_MEMORY.as_ptr() } else { buf as *const u8 };
        // SAFETY: storing a value for our key in this thread.
        unsafe { libc::pthread_setspecific(key, value.cast()) };
        if buf.is_null() {
            return;
        }
    }
    let text = line.as_bytes_with_nul();
    // SAFETY: buf holds LINE_CAP bytes and text is at most LINE_CAP long;
    // only this thread uses its buffer.
    unsafe { ptr::copy_nonoverlapping(text.as_ptr(), buf, text.len()) };
}

/// The calling thread's last setup failure, as a NUL-terminated string that
/// stays valid until the thread's next failed setup or its exit; null if no
/// setup has failed in this thread.
pub fn last_error() -> *const c_char {
    let k = KEY.load(Ordering::Acquire);
    if k == 0 {
        return ptr::null();
    }
    // SAFETY: reading this thread's value of our key.
    unsafe { libc::pthread_getspecific((k - 1) as libc::pthread_key_t) as *const c_char }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;
    use std::string::{String, ToString};

    fn open_system() -> SysFacts {
        SysFacts {
            disabled: Some(0),
            group: Some(-1),
            seccomp: Some(0),
            seccomp_filters: Some(0),
            cap_eff: Some(0),
            memlock: Some((8 << 20, 8 << 20)),
            kernel: Some((6, 18)),
            ..Default::default()
        }
    }

    fn facts(err: i32, entries: u32, flags: u32) -> Facts {
        Facts { err, entries, flags, ring_bytes: 20480, sys: open_system(), ..Default::default() }
    }

    fn text(f: &Facts) -> String {
        let mut l = Line::<LINE_CAP>::new();
        explain(f, decide(f), &mut l);
        l.as_str().to_string()
    }

    #[test]
    fn enosys_separates_missing_io_uring_from_seccomp() {
        let mut f = facts(libc::ENOSYS, 8, 0);
        f.sys.disabled = None;
        assert_eq!(decide(&f), Cause::NoIoUring);
        f.sys.seccomp = Some(2);
        assert_eq!(decide(&f), Cause::SeccompOrNoIoUring);
        f.sys.disabled = Some(0);
        assert_eq!(decide(&f), Cause::Seccomp);
        assert!(text(&f).starts_with("ring setup failed with ENOSYS: a seccomp filter blocks io_uring"));
    }

    #[test]
    fn eperm_checks_the_sysctl_before_seccomp() {
        let mut f = facts(libc::EPERM, 8, 0);
        f.sys.seccomp = Some(2);
        f.sys.disabled = Some(2);
        assert_eq!(decide(&f), Cause::DisabledAll);
        assert!(text(&f).contains("kernel.io_uring_disabled = 2"));

        f.sys.disabled = Some(1);
        f.sys.group = Some(1234);
        assert_eq!(decide(&f), Cause::DisabledGroup);
        assert!(text(&f).contains("members of group 1234"));
        f.sys.group = Some(-1);
        assert!(text(&f).contains("only to processes with CAP_SYS_ADMIN"));

        // In the group, or an administrator: the sysctl lets it through.
        f.sys.group = Some(1234);
        f.sys.in_group = true;
        assert_eq!(decide(&f), Cause::Seccomp);
        f.sys.in_group = false;
        f.sys.cap_eff = Some(1 << CAP_SYS_ADMIN);
        assert_eq!(decide(&f), Cause::Seccomp);
        assert!(text(&f).contains("kernel.io_uring_disabled = 1 allows it"));

        f.sys.seccomp = Some(0);
        assert_eq!(decide(&f), Cause::Denied);
    }

    #[test]
    fn sqpoll_needed_privileges_before_5_11() {
        let mut f = facts(libc::EPERM, 8, IORING_SETUP_SQPOLL);
        f.sys.kernel = Some((5, 10));
        assert_eq!(decide(&f), Cause::SqpollPrivilege);
        assert!(text(&f).ends_with("(this kernel is 5.10)"));
        f.sys.kernel = Some((5, 11));
        assert_eq!(decide(&f), Cause::Denied);
    }

    #[test]
    fn memlock_is_named_only_where_rings_count_against_it() {
        let mut f = facts(libc::ENOMEM, 4096, 0);
        f.ring_bytes = 266240;
        f.sys.memlock = Some((65536, 65536));
        f.sys.kernel = Some((5, 10));
        assert_eq!(decide(&f), Cause::Memlock);
        let t = text(&f);
        assert!(t.contains("needs 266240 bytes and the limit is 65536 bytes"), "{t}");
        f.sys.kernel = Some((6, 14));
        assert_eq!(decide(&f), Cause::Memlock);
        // Privileged, unlimited, or a kernel charging the memory cgroup:
        // plain lack of memory.
        f.sys.cap_eff = Some(1 << CAP_IPC_LOCK);
        assert_eq!(decide(&f), Cause::OutOfMemory);
        f.sys.cap_eff = Some(0);
        f.sys.memlock = Some((UNLIMITED, UNLIMITED));
        assert_eq!(decide(&f), Cause::OutOfMemory);
        f.sys.memlock = Some((65536, 65536));
        for k in [(5, 12), (6, 13)] {
            f.sys.kernel = Some(k);
            assert_eq!(decide(&f), Cause::OutOfMemory);
        }
        assert!(text(&f).contains("(266240 bytes for 4096 entries)"));
        // Memory from the caller that is too small is named first.
        f.user_mem = Some(4096);
        assert_eq!(decide(&f), Cause::BufferTooSmall);
        assert!(text(&f).ends_with("(4096 bytes) is less than the 266240 bytes this ring needs"));
        f.user_mem = Some(266240);
        assert_eq!(decide(&f), Cause::OutOfMemory);
    }

    #[test]
    fn einval_names_flags_rules_and_sizes() {
        let mut f = facts(libc::EINVAL, 8, IORING_SETUP_SQE_MIXED | (1 << 27));
        f.unknown_flags = f.flags;
        assert_eq!(decide(&f), Cause::UnknownFlags);
        assert!(text(&f).ends_with("does not know the setup flags SQE_MIXED|bit 27 (0x8080000)"));

        let f = facts(libc::EINVAL, 8, IORING_SETUP_DEFER_TASKRUN);
        assert_eq!(decide(&f), Cause::FlagRule("IORING_SETUP_DEFER_TASKRUN needs IORING_SETUP_SINGLE_ISSUER"));
        let f = facts(libc::EINVAL, 8, IORING_SETUP_SQPOLL | IORING_SETUP_COOP_TASKRUN);
        assert!(matches!(decide(&f), Cause::FlagRule(_)));

        assert_eq!(decide(&facts(libc::EINVAL, 0, 0)), Cause::EntriesZero);
        let f = facts(libc::EINVAL, 32769, 0);
        assert_eq!(decide(&f), Cause::EntriesTooMany);
        assert!(text(&f).contains("32769 entries is above the kernel's limit of 32768"));
        assert_eq!(decide(&facts(libc::EINVAL, 32769, IORING_SETUP_CLAMP)), Cause::Unexplained);

        let mut f = facts(libc::EINVAL, 8, IORING_SETUP_CQSIZE);
        f.cq_entries = 4;
        assert_eq!(decide(&f), Cause::CqEntries);
        f.cq_entries = 70000;
        assert_eq!(decide(&f), Cause::CqEntries);
        f.flags |= IORING_SETUP_CLAMP;
        assert_eq!(decide(&f), Cause::Unexplained);

        let mut f = facts(libc::EINVAL, 8, 0);
        f.resv_set = true;
        assert_eq!(decide(&f), Cause::Reserved);
    }

    #[test]
    fn other_errors_still_say_something() {
        assert_eq!(decide(&facts(libc::EMFILE, 8, 0)), Cause::NoFds);
        assert_eq!(decide(&facts(libc::EBADF, 8, IORING_SETUP_ATTACH_WQ)), Cause::AttachWq);
        let mut f = facts(libc::EIO, 8, IORING_SETUP_IOPOLL);
        f.sys.seccomp = Some(2);
        assert_eq!(
            text(&f),
            "ring setup failed with EIO: the kernel refused 8 entries with flags IOPOLL; \
             note that a seccomp filter is active (Seccomp: 2)"
        );
    }

    #[test]
    fn every_cause_fits_the_line() {
        let mut f = facts(libc::EINVAL, u32::MAX, u32::MAX);
        f.unknown_flags = u32::MAX;
        f.sys.kernel = Some((u32::MAX, u32::MAX));
        let mut line = Line::<LINE_CAP>::new();
        explain(&f, Cause::UnknownFlags, &mut line);
        assert!(line.as_str().starts_with("ring setup failed with EINVAL: this kernel does not know"));
        assert_eq!(line.as_bytes_with_nul().last(), Some(&0));
    }

    fn last() -> Option<String> {
        let p = last_error();
        // SAFETY: last_error returns null or this thread's live line.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    #[test]
    fn lines_are_kept_per_thread() {
        std::thread::spawn(|| {
            assert_eq!(last(), None);
            let p = io_uring_params::default();
            setup_failed(-libc::EINVAL, 0, 0, &p, None, 0, 0);
            assert_eq!(last().unwrap(), "ring setup failed with EINVAL: a ring needs at least 1 entry");
            std::thread::spawn(|| {
                assert_eq!(last(), None);
                setup_failed(-libc::EINVAL, 40000, 0, &io_uring_params::default(), None, 0, 0);
                assert!(last().unwrap().contains("40000 entries"));
            })
            .join()
            .unwrap();
            assert!(last().unwrap().ends_with("at least 1 entry"));
        })
        .join()
        .unwrap();
    }
}
