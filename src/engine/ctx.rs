//! One engine ring: the memory it shares with the application and the
//! completion side (posting, overflow, wake-ups, eventfd signalling).
//!
//! The application reads and writes the shared memory from inline code at
//! any time, so the engine never forms a reference to it: heads, tails and
//! flags are reached as atomics, entries through raw pointers, with the
//! kernel's orderings (acquire on what the application publishes, release
//! on what the engine publishes).

use alloc::collections::{BTreeSet, VecDeque};
use core::sync::atomic::{
    fence, AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};

use super::lock::{futex_wake, Mutex};
use super::os;
use super::req::{ArmedList, Fifo, Mode};
use super::rsrc::Rsrc;
use crate::sys::{
    io_uring_cqe, io_uring_sqe, IORING_CQE_F_32, IORING_CQE_F_SKIP, IORING_CQ_EVENTFD_DISABLED, IORING_SETUP_CQE32,
    IORING_SETUP_CQE_MIXED, IORING_SETUP_R_DISABLED, IORING_SQ_CQ_OVERFLOW,
};

/// Byte offsets inside the rings region, the kernel's `struct io_rings`.
pub(crate) mod off {
    pub const SQ_HEAD: usize = 0;
    pub const SQ_TAIL: usize = 4;
    pub const CQ_HEAD: usize = 8;
    pub const CQ_TAIL: usize = 12;
    pub const SQ_MASK: usize = 16;
    pub const CQ_MASK: usize = 20;
    pub const SQ_ENTRIES: usize = 24;
    pub const CQ_ENTRIES: usize = 28;
    pub const SQ_DROPPED: usize = 32;
    pub const SQ_FLAGS: usize = 36;
    pub const CQ_FLAGS: usize = 40;
    pub const CQ_OVERFLOW: usize = 44;
    /// Words in the padding before the CQEs, for rings shared with other
    /// processes through fork(): the wake sequence, how many threads (of
    /// any process) sleep on it, and how many forked children have used
    /// the ring. (Bytes 48..52 are unused: the CQ lock is `Ctx::cq_xlock`.)
    pub const X_SEQ: usize = 52;
    pub const X_WAITERS: usize = 56;
    pub const X_PEERS: usize = 60;
    pub const CQES: usize = 64;
}

/// A completion on its way to the CQ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cqe {
    pub user_data: u64,
    pub res: i32,
    pub flags: u32,
    /// The second half of a 32-byte CQE (CQE32 rings, and IORING_CQE_F_32
    /// entries of CQE_MIXED rings).
    pub big: [u64; 2],
}

impl Cqe {
    pub(crate) const fn new(user_data: u64, res: i32, flags: u32) -> Cqe {
        Cqe { user_data, res, flags, big: [0; 2] }
    }
}

/// Where the ring's memory comes from.
pub(crate) struct Memory {
    /// Start of the rings region (`struct io_rings` and the CQEs).
    pub rings: *mut u8,
    pub rings_len: usize,
    pub sqes: *mut io_uring_sqe,
    pub sqes_len: usize,
    /// True when the engine mapped it (and unmaps it at teardown); false
    /// for IORING_SETUP_NO_MMAP memory, which is the application's.
    pub owned: bool,
    /// The memfd behind the mapping where a second mapping cannot be made
    /// with mremap (valgrind, say); -1 otherwise.
    pub memfd: i32,
    /// IORING_SETUP_NO_MMAP memory of a trapped setup, pinned as the
    /// kernel pins it (`setup::pin`): `rings` and `sqes` are the engine's
    /// own mappings of the pages the program sees at these addresses
    /// (0: not pinned).
    pub app_rings: u64,
    pub app_sqes: u64,
}

/// Completion-side state, under `Ctx::inner`.
pub(crate) struct Inner {
    /// Tail of the CQEs written so far (published by `commit`).
    cq_tail: u32,
    /// CQEs that found the CQ full, oldest first.
    overflow: VecDeque<Cqe>,
    /// CQEs written since the last notification.
    pending_notify: u32,
    /// Chains waiting behind an IOSQE_IO_DRAIN barrier, in submission order.
    pub defer: Fifo,
    /// Requests inside `defer`, chain members included.
    pub nr_deferred: u32,
    /// An IOSQE_IO_DRAIN was seen and no request has since gone through
    /// the drain queue straight away: new requests queue up behind it.
    pub drain_active: bool,
    /// Requests that can be found by cancellation (queued, running or armed).
    pub armed: ArmedList,
    /// The POLL_ADD requests in `armed`, by (user_data, address): poll
    /// updates find theirs without walking every armed request.
    pub polls: BTreeSet<(u64, usize)>,
    /// Completions made off the submitter thread of a DEFER_TASKRUN ring,
    /// run when the submitter next asks for events.
    pub task_work: VecDeque<super::req::TaskWork>,
    /// Non-timeout CQEs posted so far (sequence for count-based timeouts).
    pub cq_events: u32,
    /// Count-based timeouts, in order of their target sequence.
    pub seq_timeouts: alloc::vec::Vec<super::req::ReqPtr>,
    /// Count-based timeouts whose count was reached, to complete once the
    /// lock is dropped.
    pub fired: alloc::vec::Vec<super::req::ReqPtr>,
}

pub(crate) struct Ctx {
    /// The ring fd as the application has it (an eventfd, readable while
    /// CQEs are pending): the registry's key, -1 once the application gave
    /// it up (`table::unmap_fd`). The number is the application's: the
    /// engine never reads or writes through it (see `efd`).
    pub fd: AtomicI32,
    /// The engine's own dup of the ring fd, at an engine number
    /// (`os::dup`): every signal, drain and epoll registration goes
    /// through it, so the application closing its number, and reusing
    /// it, leaves the file it then holds alone.
    pub efd: i32,
    /// The `os::epoch` the ring was made in. Once an engine fd was found
    /// closed or replaced behind the engine's back (`os::numbers_lost`),
    /// the ring is dead: calls answer -EBADF, as on an exited ring, and
    /// none of its fds is used or closed again.
    pub epoch: u32,
    /// The application's number no longer holds the ring fd (`check_app_fd`).
    pub fd_lost: AtomicBool,
    /// CLOCK_MONOTONIC of the last `check_app_fd_due` check.
    pub app_fd_checked: AtomicU64,
    /// IORING_SETUP_* flags the ring was created with.
    pub flags: u32,
    /// The `table::FORK_GEN` the ring belongs to: set at creation, and again
    /// in a forked child that takes the ring over (see `fork.rs`).
    pub fork_gen: AtomicU32,
    /// The ring went through fork(): another process may post to its CQ
    /// and wait on it, so posting takes `cq_xlock` and wake-ups go
    /// through `off::X_SEQ` and the ring fd too.
    pub forked: AtomicBool,
    /// The CQ posting lock shared with the processes the ring was forked
    /// into, made before `forked` is set (read `forked` with Acquire to
    /// see it); in the engine's lock order it comes right after `inner`,
    /// and nothing is taken under it.
    pub cq_xlock: super::lock::SharedLock,
    /// The requests its sharers have in flight, made with `cq_xlock`
    /// (see `fork::Records`).
    pub xrec: super::fork::Records,
    /// `fork::CHILD` or `fork::JOINED` in a child that took the ring over.
    pub fork_child: AtomicU8,
    /// The ring's index in the registry.
    pub handle: AtomicU32,
    /// The ring memory, its sizes and the SQ index array (null with
    /// IORING_SETUP_NO_SQARRAY): changed only by IORING_REGISTER_RESIZE_RINGS,
    /// which holds `submit` and `inner` (and waits out `rings_users`), so
    /// that whoever holds either lock reads them consistently.
    pub rings: AtomicPtr<u8>,
    pub sqes: AtomicPtr<io_uring_sqe>,
    pub sq_entries: AtomicU32,
    pub cq_entries: AtomicU32,
    pub sq_array: AtomicPtr<u32>,
    /// Threads using the rings region with neither lock held and off the
    /// submitter thread (`pin_rings`): a resize unmaps the old region only
    /// once none is left.
    pub rings_users: AtomicU32,
    /// Submission side (the kernel's uring_lock); it also guards the
    /// ring's `Memory` (the kernel's mmap_lock comes under it).
    pub submit: Mutex<super::submit::SubmitState>,
    /// Freed requests on their way back to the submitter (any thread).
    pub returned: super::req::Returned,
    /// Completion side (the kernel's completion_lock).
    pub inner: Mutex<Inner>,
    /// Whether CQEs wait in `Inner::overflow` (written under `inner`, read
    /// without it): the engine's own record, since IORING_SQ_CQ_OVERFLOW
    /// sits in memory the application can write.
    pub overflow_held: AtomicBool,
    /// Bumped after every CQ publish: the futex waiters sleep on it.
    pub cq_seq: AtomicU32,
    pub cq_waiters: AtomicU32,
    /// Futex waiters about to sleep on `cq_seq` since the last wake-up
    /// (high half; a batch of posts pays one futex wake, not one each),
    /// and the lowest CQ tail any of them waits for (low half): a post
    /// that leaves the tail short of it wakes nobody, as the kernel's
    /// io_should_wake lets a waiter for 16 CQEs sleep through the first 15.
    pub cq_sleep: AtomicU64,
    /// Timeouts that expired (they wake waiters, as in the kernel).
    pub timeouts_fired: AtomicU32,
    /// `timeouts_fired` as of the last wake of `cq_sleep`'s sleepers: a
    /// post after a timeout fired wakes them whatever their counts.
    pub timeouts_woken: AtomicU32,
    /// The ring fd has been signalled and not yet reset.
    pub fd_signalled: AtomicBool,
    /// Requests alive (allocated and not yet freed).
    pub users: AtomicU32,
    /// IORING_SETUP_R_DISABLED and not yet enabled.
    pub disabled: AtomicBool,
    /// pthread_self() of the only allowed submitter (SINGLE_ISSUER), or 0.
    pub submitter: AtomicU64,
    /// Registered eventfd: fd | ASYNC_ONLY << 32 | PRESENT << 33. The fd
    /// is the engine's dup, as the kernel holds a reference of its own.
    pub evfd: AtomicU64,
    /// Threads signalling the registered eventfd: unregistering waits for
    /// them before it closes the dup, so no signal reaches its number
    /// once the call has returned.
    pub evfd_users: AtomicU32,
    /// DEFER_TASKRUN completions wait in `Inner::task_work`.
    pub tw_pending: AtomicBool,
    /// Chains wait in `Inner::defer`.
    pub deferred_pending: AtomicBool,
    /// Timeouts wait in `Inner::fired`.
    pub fired_pending: AtomicBool,
    /// Tear-down has begun: new work is refused.
    pub dying: AtomicBool,
    /// Registered files and buffers.
    pub rsrc: Mutex<Rsrc>,
    /// Provided-buffer groups.
    pub kbuf: Mutex<super::kbuf::Groups>,
    /// Wake eventfds of threads waiting with a signal mask.
    pub sig_waiters: Mutex<alloc::vec::Vec<i32>>,
    pub nr_sig_waiters: AtomicU32,
    /// A registered wait-argument region (address, bytes).
    pub wait_region: Mutex<(u64, usize)>,
    /// Set up by IORING_REGISTER_RESTRICTIONS, in force (`restricted`)
    /// once the ring is enabled.
    pub restrictions: Mutex<super::register::Restrictions>,
    pub restricted: AtomicBool,
    /// The thread inside `submit::submit` (pthread_self; 0: none) and the
    /// credentials it read there, for every request of that call (see
    /// `creds::snapshot`); `submit_creds_used` once they are set.
    pub in_submit: AtomicUsize,
    /// That call queued requests for workers without waking any: it wakes
    /// them at its end (`io_wq::flush_kicks`). Only the thread in
    /// `in_submit` touches it.
    pub kicks_owed: AtomicBool,
    pub submit_creds: Mutex<Option<alloc::sync::Arc<super::creds::Creds>>>,
    pub submit_creds_used: AtomicBool,
    /// The dups that call's requests share, one per fd (see
    /// `req::SharedFile`); `submit_files_used` once any is kept.
    pub submit_files: Mutex<alloc::vec::Vec<alloc::sync::Arc<super::req::SharedFile>>>,
    pub submit_files_used: AtomicBool,
    /// Shared dups of earlier submit calls, held only by their requests
    /// still in flight: a later call naming the same open file (kcmp)
    /// takes one of them rather than a dup of its own.
    /// Each with the program fd it was taken from. A strong hold made of
    /// one must end in `req::put_shared`, which closes the dup with the
    /// last; never a plain drop.
    pub recent_files: Mutex<alloc::vec::Vec<(i32, alloc::sync::Weak<super::req::SharedFile>)>>,
    /// How often waits were short lately: from `wait::SPIN_AFTER`, a
    /// waiter looks at the CQ a while before it sleeps (`wait::spin`).
    pub wait_spin: AtomicU32,
    /// Absolute wait timeouts count in CLOCK_BOOTTIME (IORING_REGISTER_CLOCK).
    pub clock_boottime: AtomicBool,
    /// Registered credentials (IORING_REGISTER_PERSONALITY).
    pub personalities: Mutex<super::creds::Personalities>,
    /// NAPI busy-poll settings (IORING_REGISTER_NAPI).
    pub napi: Mutex<super::napi::Napi>,
    /// The epoll set of requests waiting on files.
    pub ready: super::readiness::Readiness,
    /// The SQPOLL thread serving the ring, if any.
    pub sqd: Option<alloc::sync::Arc<super::sqpoll::Sqd>>,
}

// SAFETY: the raw pointers address shared ring memory that is only accessed
// through atomics or under the locks above.
unsafe impl Send for Ctx {}
// SAFETY: as above.
unsafe impl Sync for Ctx {}

/// See `Ctx::check_app_fd_due`.
const APP_FD_CHECK_NS: u64 = 1_000_000;
/// Shared dups kept for later submit calls (`recent_files`).
const RECENT_FILES: usize = 4;

pub(crate) const EVFD_ASYNC: u64 = 1 << 32;
pub(crate) const EVFD_PRESENT: u64 = 1 << 33;

impl Inner {
    /// The CQ tail as the engine wrote it.
    pub(crate) fn cq_tail(&self) -> u32 {
        self.cq_tail
    }

    pub(crate) fn new() -> Inner {
        Inner {
            cq_tail: 0,
            overflow: VecDeque::new(),
            pending_notify: 0,
            defer: Fifo::new(),
            nr_deferred: 0,
            drain_active: false,
            armed: ArmedList::new(),
            polls: BTreeSet::new(),
            task_work: VecDeque::new(),
            cq_events: 0,
            seq_timeouts: alloc::vec::Vec::new(),
            fired: alloc::vec::Vec::new(),
        }
    }

    /// In a forked child: the parent's requests and held-back CQEs stay
    /// the parent's. Only the child's copies of the fds the requests took
    /// (their file references) go, as they would keep the parent's files
    /// open for as long as the child lives.
    pub(crate) fn reset_after_fork(&mut self, ctx: &Ctx) {
        for r in self.armed.iter() {
            // SAFETY: only this thread exists; the copy is ours to read.
            let q = unsafe { r.get() };
            super::req::put_file(ctx, q);
        }
        super::fork::keep(core::mem::replace(self, Inner::new()));
        self.cq_tail = ctx.word(off::CQ_TAIL).load(Ordering::Acquire);
    }
}

impl Ctx {
    /// A ring's state as setup makes it: ring fd `fd` (the program's
    /// number) and `efd` (the engine's dup), `flags` as set up, its memory
    /// with `entries` (SQ, CQ) and the SQ array (null with NO_SQARRAY), and
    /// the SQPOLL thread it joins.
    pub(crate) fn new(
        fd: i32,
        efd: i32,
        flags: u32,
        mem: Memory,
        (sq_entries, cq_entries): (u32, u32),
        sq_array: *const u32,
        sqd: Option<alloc::sync::Arc<super::sqpoll::Sqd>>,
    ) -> Ctx {
        Ctx {
            fd: AtomicI32::new(fd),
            efd,
            epoch: os::epoch(),
            fd_lost: AtomicBool::new(false),
            app_fd_checked: AtomicU64::new(0),
            flags,
            fork_gen: AtomicU32::new(super::table::FORK_GEN.load(Ordering::Relaxed)),
            forked: AtomicBool::new(false),
            cq_xlock: super::lock::SharedLock::new(),
            xrec: super::fork::Records::new(),
            fork_child: AtomicU8::new(0),
            handle: AtomicU32::new(0),
            rings: AtomicPtr::new(mem.rings),
            sqes: AtomicPtr::new(mem.sqes),
            sq_entries: AtomicU32::new(sq_entries),
            cq_entries: AtomicU32::new(cq_entries),
            sq_array: AtomicPtr::new(sq_array as *mut u32),
            rings_users: AtomicU32::new(0),
            submit: Mutex::new(super::submit::SubmitState::new(mem)),
            returned: super::req::Returned::new(),
            inner: Mutex::new(Inner::new()),
            overflow_held: AtomicBool::new(false),
            cq_seq: AtomicU32::new(0),
            cq_waiters: AtomicU32::new(0),
            cq_sleep: AtomicU64::new(0),
            timeouts_fired: AtomicU32::new(0),
            timeouts_woken: AtomicU32::new(0),
            fd_signalled: AtomicBool::new(false),
            users: AtomicU32::new(0),
            disabled: AtomicBool::new(flags & IORING_SETUP_R_DISABLED != 0),
            submitter: AtomicU64::new(0),
            evfd: AtomicU64::new(0),
            evfd_users: AtomicU32::new(0),
            tw_pending: AtomicBool::new(false),
            deferred_pending: AtomicBool::new(false),
            fired_pending: AtomicBool::new(false),
            dying: AtomicBool::new(false),
            rsrc: Mutex::new(Rsrc::new()),
            kbuf: Mutex::new(super::kbuf::Groups::new()),
            sig_waiters: Mutex::new(alloc::vec::Vec::new()),
            nr_sig_waiters: AtomicU32::new(0),
            wait_region: Mutex::new((0, 0)),
            clock_boottime: AtomicBool::new(false),
            restrictions: Mutex::new(super::register::Restrictions::new()),
            restricted: AtomicBool::new(false),
            in_submit: core::sync::atomic::AtomicUsize::new(0),
            kicks_owed: AtomicBool::new(false),
            submit_creds: super::lock::Mutex::new(None),
            submit_creds_used: AtomicBool::new(false),
            submit_files: Mutex::new(alloc::vec::Vec::new()),
            submit_files_used: AtomicBool::new(false),
            recent_files: Mutex::new(alloc::vec::Vec::new()),
            wait_spin: AtomicU32::new(0),
            personalities: Mutex::new(super::creds::Personalities::new()),
            napi: Mutex::new(super::napi::Napi::new()),
            ready: super::readiness::Readiness::new(),
            sqd,
        }
    }

    /// The ring fd's current number.
    pub(crate) fn fd(&self) -> i32 {
        self.fd.load(Ordering::Acquire)
    }

    /// Whether the calling thread is inside `submit::submit` for this ring
    /// (`in_submit`).
    pub(crate) fn on_submit_thread(&self) -> bool {
        // SAFETY: pthread_self has no preconditions.
        self.in_submit.load(Ordering::Relaxed) == unsafe { libc::pthread_self() } as usize
    }

    /// The dup of program fd `fd` that the requests of the calling
    /// thread's submit call to this ring share (a fresh one outside such
    /// a call). Within one call the program cannot have closed the fd and
    /// opened another file there, unless an SQE of the call did that: the
    /// submitter forgets the call's dups before any SQE that could
    /// (`forget_submit_files`); another thread's close() may as well have
    /// come after the call.
    pub(crate) fn submit_file(&self, fd: i32) -> Result<alloc::sync::Arc<super::req::SharedFile>, i32> {
        let cached = self.on_submit_thread();
        if cached {
            if let Some(s) = self.submit_files.lock().iter().find(|s| s.app == fd) {
                return Ok(s.clone());
            }
            if let Some(s) = self.recent_file(fd) {
                self.keep_for_call(&s);
                return Ok(s);
            }
        }
        let d = super::fileref::dup_file(fd);
        if d < 0 {
            return Err(d);
        }
        // Looked at once, on the dup: only regular files are shared (never
        // armed on the readiness set, which registers fds by number).
        let (kind, key) = super::rw::file_hash(d);
        let s = alloc::sync::Arc::new(super::req::SharedFile { app: fd, fd: d, kind, key });
        if cached && kind & super::rw::HASH_REG != 0 {
            self.keep_for_call(&s);
            let mut r = self.recent_files.lock();
            r.retain(|(app, w)| *app != fd && w.strong_count() != 0);
            if r.len() >= RECENT_FILES {
                r.remove(0);
            }
            r.push((fd, alloc::sync::Arc::downgrade(&s)));
        }
        Ok(s)
    }

    /// Lets the rest of the submit call share `s`.
    fn keep_for_call(&self, s: &alloc::sync::Arc<super::req::SharedFile>) {
        self.submit_files.lock().push(s.clone());
        self.submit_files_used.store(true, Ordering::Relaxed);
    }

    /// A shared dup of an earlier call still in use whose file is the one
    /// program fd `fd` holds now. Only kcmp can tell: files alike in
    /// identity may differ in mode or flags, and a dup kept for one must
    /// not serve the other.
    fn recent_file(&self, fd: i32) -> Option<alloc::sync::Arc<super::req::SharedFile>> {
        let s = {
            let mut r = self.recent_files.lock();
            let i = r.iter().position(|e| e.0 == fd)?;
            match r[i].1.upgrade() {
                Some(s) => s,
                None => {
                    r.swap_remove(i);
                    return None;
                }
            }
        };
        if os::kcmp_file(fd, s.fd) == Ok(true) {
            return Some(s);
        }
        // Not that file any more: its requests keep it; later calls dup anew.
        self.recent_files.lock().retain(|e| e.0 != fd);
        super::req::put_shared(self, s);
        None
    }

    /// Drops the submit call's shared dups from the cache (their requests
    /// keep theirs): at the end of the call, and before an SQE that may
    /// close an fd or open one.
    #[inline]
    pub(crate) fn forget_submit_files(&self) {
        if self.submit_files_used.load(Ordering::Relaxed) {
            self.forget_submit_files_now();
        }
    }

    #[inline(never)]
    fn forget_submit_files_now(&self) {
        self.submit_files_used.store(false, Ordering::Relaxed);
        let old = core::mem::take(&mut *self.submit_files.lock());
        for s in old {
            super::req::put_shared(self, s);
        }
    }

    /// The ring is dead for engine fds lost (see `epoch`).
    #[inline]
    pub(crate) fn is_lost(&self) -> bool {
        self.epoch != os::epoch()
    }

    /// An fd of the ring's own was found closed or replaced: this ring and
    /// every other of the epoch die (see `epoch`); this one's waiters wake
    /// to find it so, the others' within their sleep's cap.
    #[cold]
    pub(crate) fn lose(&self) {
        if !self.is_lost() {
            os::numbers_lost();
        }
        self.cq_seq.fetch_add(1, Ordering::SeqCst);
        futex_wake(&self.cq_seq, i32::MAX);
        if self.forked.load(Ordering::Relaxed) {
            let _pin = self.pin_rings();
            self.word(off::X_SEQ).fetch_add(1, Ordering::SeqCst);
            super::lock::futex_wake_shared(self.word(off::X_SEQ), i32::MAX);
        }
    }

    /// Whether `efd` still is the ring fd's file as far as fstat tells
    /// (a file of another kind at its number fails); loses the ring if not.
    fn efd_ok(&self) -> bool {
        if self.is_lost() {
            return false;
        }
        if !os::anon_ok(self.efd) {
            self.lose();
            return false;
        }
        true
    }

    /// Signals or drains the ring fd through `efd` once it passed
    /// `efd_ok`; a failure other than an empty or full counter loses the
    /// ring.
    fn efd_op(&self, op: fn(i32) -> i32) {
        if self.efd_ok() {
            let r = op(self.efd);
            if r < 0 && r != -libc::EAGAIN {
                self.lose();
            }
        }
    }

    /// `check_app_fd` for the calls that check it (register calls, and
    /// waits about to sleep), at most once per `APP_FD_CHECK_NS`: it costs
    /// two system calls.
    #[inline]
    pub(crate) fn check_app_fd_due(&self, fd: i32, now: u64) -> Result<(), i32> {
        if now.wrapping_sub(self.app_fd_checked.load(Ordering::Relaxed)) < APP_FD_CHECK_NS {
            return Ok(());
        }
        self.app_fd_checked.store(now, Ordering::Relaxed);
        self.check_app_fd(fd)
    }

    /// Whether the application's number `fd`, which led to this ring,
    /// still holds the ring fd. The kernel answers -EBADF for a closed fd
    /// and -EOPNOTSUPP for a file that is no ring; once the number was
    /// found reused it stays refused.
    #[cold]
    #[inline(never)]
    pub(crate) fn check_app_fd(&self, fd: i32) -> Result<(), i32> {
        if !self.fd_lost.load(Ordering::Relaxed) {
            if !self.efd_ok() {
                return Err(-libc::EBADF);
            }
            if os::same_file(fd, self.efd) == Ok(true) {
                return Ok(());
            }
            self.fd_lost.store(true, Ordering::Relaxed);
        }
        // SAFETY: F_GETFD only inspects the descriptor table.
        Err(if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 { -libc::EBADF } else { -libc::EOPNOTSUPP })
    }

    /// A shared ring word. The caller holds `submit` or `inner`, runs on
    /// the ring's submitter thread, or holds a `pin_rings` (a resize
    /// replaces the region otherwise; see `rings`).
    #[inline(always)]
    pub(crate) fn word(&self, off: usize) -> &AtomicU32 {
        // SAFETY: every offset in `off` is a 4-byte aligned u32 inside the
        // live rings region, which stays mapped while the caller may use
        // it (above); the application only touches it atomically (or not
        // at all) while the engine does.
        unsafe { &*(self.rings.load(Ordering::Acquire).add(off) as *const AtomicU32) }
    }

    /// Keeps the rings region mapped for a thread that uses it with
    /// neither lock held (see `word`).
    #[inline]
    pub(crate) fn pin_rings(&self) -> RingsPin<'_> {
        // SeqCst, against the resize's swap of `rings` and its load of
        // the count (as `evfd_users`).
        self.rings_users.fetch_add(1, Ordering::SeqCst);
        RingsPin(&self.rings_users)
    }

    #[inline(always)]
    pub(crate) fn sq_entries(&self) -> u32 {
        self.sq_entries.load(Ordering::Relaxed)
    }

    #[inline(always)]
    pub(crate) fn cq_entries(&self) -> u32 {
        self.cq_entries.load(Ordering::Relaxed)
    }

    #[inline(always)]
    pub(crate) fn cq_mask(&self) -> u32 {
        self.cq_entries() - 1
    }

    #[inline(always)]
    pub(crate) fn sq_mask(&self) -> u32 {
        self.sq_entries() - 1
    }

    /// Entries the application has not consumed yet.
    pub(crate) fn cq_ready(&self) -> u32 {
        let tail = self.word(off::CQ_TAIL).load(Ordering::Acquire);
        tail.wrapping_sub(self.word(off::CQ_HEAD).load(Ordering::Acquire))
    }

    pub(crate) fn set_sq_flag(&self, f: u32, on: bool) {
        let w = self.word(off::SQ_FLAGS);
        if on {
            w.fetch_or(f, Ordering::SeqCst);
        } else {
            w.fetch_and(!f, Ordering::SeqCst);
        }
    }

    /// Writes one CQE at `idx` (not yet published); `wide` writes its
    /// second half too (CQE32 rings, and F_32 entries of a CQE_MIXED ring,
    /// which take two slots).
    fn write_cqe(&self, idx: u32, c: &Cqe, wide: bool) {
        let shift = (self.flags & IORING_SETUP_CQE32 != 0) as usize;
        let slot = ((idx & self.cq_mask()) as usize) << shift;
        // SAFETY: the slot (and, for a wide entry, the one after it) lies
        // in the CQE array (mask; `put` never lets a mixed ring's wide
        // entry start on the last slot) and is ours: it is beyond the
        // published tail and the application's head (acquired in `put`)
        // says it finished with it.
        unsafe {
            let p = self.cqes_ptr().add(slot);
            core::ptr::write_volatile(
                p,
                io_uring_cqe { user_data: c.user_data, res: c.res, flags: c.flags, big_cqe: [] },
            );
            if wide {
                let extra = p.add(1) as *mut u64;
                core::ptr::write_volatile(extra, c.big[0]);
                core::ptr::write_volatile(extra.add(1), c.big[1]);
            }
        }
    }

    /// Locks the completion side to write the CQ. On a forked ring this
    /// also takes the cross-process lock and catches up with CQEs another
    /// process posted. The published CQ tail is all a holder trusts: one
    /// that died mid-post left at most unpublished entries beyond it,
    /// which the next writer overwrites, and wake-ups it did not make,
    /// which the next post makes.
    #[inline]
    pub(crate) fn lock_cq(&self) -> CqGuard<'_> {
        let mut g = self.inner.lock();
        let x = self.forked.load(Ordering::Acquire);
        if x {
            let died = self.cq_xlock.lock();
            g.cq_tail = self.word(off::CQ_TAIL).load(Ordering::Acquire);
            if died {
                super::fork::holder_died(self, g.cq_tail);
            }
        }
        CqGuard { g, x: x.then_some(&self.cq_xlock) }
    }

    /// Whether `c` fits in the CQ now: the slots it takes (two for a big
    /// CQE of a mixed ring, plus the padding entry at the ring's end).
    fn has_room(&self, inner: &Inner, c: &Cqe) -> bool {
        let head = self.word(off::CQ_HEAD).load(Ordering::Acquire);
        let free = self.cq_entries() - inner.cq_tail.wrapping_sub(head);
        if self.flags & IORING_SETUP_CQE_MIXED != 0 && c.flags & IORING_CQE_F_32 != 0 {
            free >= 2 + (inner.cq_tail & self.cq_mask() == self.cq_mask()) as u32
        } else {
            free != 0
        }
    }

    /// Writes `c` at the tail if the CQ has room for it; false if not.
    /// On a CQE_MIXED ring a 32-byte entry (IORING_CQE_F_32) takes two
    /// slots and never wraps: at the last slot it goes behind a padding
    /// entry (IORING_CQE_F_SKIP), as the kernel lays them out.
    fn put(&self, inner: &mut Inner, c: &Cqe) -> bool {
        if !self.has_room(inner, c) {
            return false;
        }
        let mixed_big = self.flags & IORING_SETUP_CQE_MIXED != 0 && c.flags & IORING_CQE_F_32 != 0;
        if !mixed_big {
            self.write_cqe(inner.cq_tail, c, self.flags & IORING_SETUP_CQE32 != 0);
            inner.cq_tail = inner.cq_tail.wrapping_add(1);
            inner.pending_notify += 1;
            return true;
        }
        if inner.cq_tail & self.cq_mask() == self.cq_mask() {
            self.write_cqe(inner.cq_tail, &Cqe::new(0, 0, IORING_CQE_F_SKIP), false);
            inner.cq_tail = inner.cq_tail.wrapping_add(1);
        }
        self.write_cqe(inner.cq_tail, c, true);
        inner.cq_tail = inner.cq_tail.wrapping_add(2);
        inner.pending_notify += 1;
        true
    }

    /// Moves overflowed CQEs into the CQ while there is room.
    fn flush_overflow_locked(&self, inner: &mut Inner) {
        while let Some(c) = inner.overflow.front() {
            let c = *c;
            if !self.put(inner, &c) {
                return;
            }
            inner.overflow.pop_front();
        }
        self.overflow_held.store(false, Ordering::Relaxed);
        self.set_sq_flag(IORING_SQ_CQ_OVERFLOW, false);
    }

    /// Adds one CQE behind everything posted or overflowed before it.
    pub(crate) fn fill(&self, inner: &mut Inner, c: &Cqe) {
        inner.cq_events = inner.cq_events.wrapping_add(1);
        if !inner.seq_timeouts.is_empty() {
            self.collect_seq_timeouts(inner);
        }
        if !inner.overflow.is_empty() {
            self.flush_overflow_locked(inner);
        }
        if !inner.overflow.is_empty() || !self.put(inner, c) {
            inner.overflow.push_back(*c);
            self.overflow_held.store(true, Ordering::Relaxed);
            self.set_sq_flag(IORING_SQ_CQ_OVERFLOW, true);
        }
    }

    /// Publishes what `fill` wrote; returns how many new CQEs need a
    /// notification (done by `notify` once the lock is dropped). A
    /// registered eventfd is signalled first, so it is readable by the time
    /// the CQEs are visible. `mode` is the posting thread's kind: an async
    /// eventfd hears only of completions made on workers.
    pub(crate) fn commit(&self, inner: &mut Inner, mode: Mode) -> u32 {
        let n = inner.pending_notify;
        if n != 0 {
            inner.pending_notify = 0;
            self.signal_eventfd(mode);
            self.word(off::CQ_TAIL).store(inner.cq_tail, Ordering::Release);
        }
        n
    }

    /// Signals the registered eventfd, unless it is disabled, or async-only
    /// and `mode` is not a worker's.
    #[inline]
    pub(crate) fn signal_eventfd(&self, mode: Mode) {
        if self.evfd.load(Ordering::Relaxed) & EVFD_PRESENT != 0 {
            self.signal_eventfd_registered(mode);
        }
    }

    #[inline(never)]
    fn signal_eventfd_registered(&self, mode: Mode) {
        // Counted before the eventfd is read: `unregister_eventfd` clears
        // it, then waits for the count, then closes.
        self.evfd_users.fetch_add(1, Ordering::SeqCst);
        let ev = self.evfd.load(Ordering::SeqCst);
        if ev & EVFD_PRESENT != 0
            && (ev & EVFD_ASYNC == 0 || mode == Mode::Worker)
            && self.word(off::CQ_FLAGS).load(Ordering::Relaxed) & IORING_CQ_EVENTFD_DISABLED == 0
            && !self.is_lost()
            && os::eventfd_signal(ev as u32 as i32) < 0
        {
            // Closed behind the engine's back (close_range, say).
            self.lose();
        }
        self.evfd_users.fetch_sub(1, Ordering::Release);
    }

    /// Flushes overflow into freed CQ space (on every wait and peek).
    pub(crate) fn flush_overflow(&self) {
        // Set (under the lock) while anything is held back.
        if !self.overflow_held.load(Ordering::Relaxed) {
            return;
        }
        let n = {
            let mut inner = self.lock_cq();
            if inner.overflow.is_empty() {
                return;
            }
            self.flush_overflow_locked(&mut inner);
            self.commit(&mut inner, Mode::Inline)
        };
        if n != 0 {
            self.notify();
        }
        self.run_fired(Mode::Inline);
    }

    pub(crate) fn overflow_pending(&self) -> bool {
        self.word(off::SQ_FLAGS).load(Ordering::Relaxed) & IORING_SQ_CQ_OVERFLOW != 0
    }

    /// Posts CQEs completed inline, `max` at most, that `fill` writes:
    /// called with a run of free, contiguous CQE slots (each two u64
    /// words: user_data, then res and flags) and how many it may write, it
    /// writes from the first and returns how many it wrote, fewer than
    /// asked when it ran out. Returns how many were posted. One lock, CQEs
    /// written straight into the CQ; through `fill` (one at a time via a
    /// bounce slot) when CQE32, overflow or count timeouts need its care,
    /// or the CQ is full. The inline paths of plain NOPs and simple reads
    /// and writes use it.
    #[inline(always)]
    pub(crate) fn post_words(&self, max: u32, mut fill: impl FnMut(*mut u64, u32) -> u32) -> u32 {
        let mut inner = self.lock_cq();
        let plain = self.flags & IORING_SETUP_CQE32 == 0 && inner.overflow.is_empty() && inner.seq_timeouts.is_empty();
        let room = if plain {
            self.cq_entries() - inner.cq_tail.wrapping_sub(self.word(off::CQ_HEAD).load(Ordering::Acquire))
        } else {
            0
        };
        let (base, mask, tail) = (self.cqes_ptr() as *mut u64, self.cq_mask(), inner.cq_tail);
        let fast = room.min(max);
        let mut done = 0;
        while done < fast {
            let slot = tail.wrapping_add(done) & mask;
            let run = (fast - done).min(self.cq_entries() - slot);
            // SAFETY: `run` free slots from `slot` lie in the CQE array
            // (room counts slots the application's head released).
            let k = fill(unsafe { base.add(slot as usize * 2) }, run);
            done += k;
            if k < run {
                break;
            }
        }
        inner.cq_tail = tail.wrapping_add(done);
        inner.cq_events = inner.cq_events.wrapping_add(done);
        inner.pending_notify += done;
        if done == fast {
            // Out of room (or not plain): `fill` queues the rest behind.
            let mut bounce = [0u64; 2];
            while done < max && fill(bounce.as_mut_ptr(), 1) == 1 {
                self.fill(&mut inner, &Cqe::new(bounce[0], bounce[1] as u32 as i32, (bounce[1] >> 32) as u32));
                done += 1;
            }
        }
        let posted = self.commit(&mut inner, Mode::Inline);
        drop(inner);
        if posted != 0 {
            self.notify();
        }
        self.run_fired(Mode::Inline);
        done
    }

    #[inline(always)]
    fn cqes_ptr(&self) -> *mut io_uring_cqe {
        // SAFETY: the CQE array starts at off::CQES in the rings region
        // (the caller holds `inner`: see `rings`).
        unsafe { self.rings.load(Ordering::Acquire).add(off::CQES) as *mut io_uring_cqe }
    }

    /// Posts CQEs in order and wakes whoever waits for them.
    pub(crate) fn post_all(&self, cqes: &[Cqe], mode: Mode) {
        self.post_done(None, cqes, 0, mode);
    }

    /// `post_all` for a request that completes: it leaves the armed list
    /// (`unlist`) under the same hold of the lock as its CQEs go in, so a
    /// completion takes the lock once, and no canceller finds it listed
    /// once its CQE is out. `rec`: its slot in the forked ring's records
    /// (0: none), which it leaves under the same hold, after its CQE is
    /// published.
    pub(crate) fn post_done(&self, done: Option<super::req::ReqPtr>, cqes: &[Cqe], rec: u32, mode: Mode) {
        if cqes.is_empty() {
            if let Some(req) = done {
                self.unlist(req);
            }
            if rec != 0 {
                super::fork::unrecord(self, rec);
            }
            return;
        }
        let n = {
            let mut inner = self.lock_cq();
            if let Some(req) = done {
                self.unlist_locked(&mut inner, req);
            }
            for c in cqes {
                self.fill(&mut inner, c);
            }
            if rec != 0 {
                super::fork::retiring(self, rec, inner.cq_tail);
            }
            let n = self.commit(&mut inner, mode);
            if rec != 0 {
                super::fork::unrecord(self, rec);
                super::fork::retired(self);
            }
            n
        };
        if n != 0 {
            self.notify();
        }
        self.run_fired(mode);
    }

    /// Posts one CQE only if it goes straight into the CQ (nothing held
    /// back, room left); false otherwise. The kernel ends a multishot
    /// request rather than overflow one of its CQEs.
    pub(crate) fn try_post(&self, c: &Cqe, mode: Mode) -> bool {
        let n = {
            let mut inner = self.lock_cq();
            if !inner.overflow.is_empty() || !self.has_room(&inner, c) {
                return false;
            }
            self.fill(&mut inner, c);
            self.commit(&mut inner, mode)
        };
        if n != 0 {
            self.notify();
        }
        self.run_fired(mode);
        true
    }

    /// Whether `c` would go straight into the CQ now (nothing held back,
    /// room left): asked by a multishot that cannot put back what it
    /// takes for its CQE (a timestamp read off a socket's error queue).
    pub(crate) fn room_for(&self, c: &Cqe) -> bool {
        let inner = self.lock_cq();
        inner.overflow.is_empty() && self.has_room(&inner, c)
    }

    /// Signals the ring fd and wakes waiters after new CQEs became visible.
    pub(crate) fn notify(&self) {
        // One fence orders the CQ tail store before both checks below
        // (each pairs with a fence or locked op on the other side).
        fence(Ordering::SeqCst);
        self.signal_fd();
        self.wake_fenced(Some(self.word(off::CQ_TAIL).load(Ordering::Relaxed)));
    }

    /// Wakes every thread waiting in `enter` to look at the ring again.
    pub(crate) fn wake_waiters(&self) {
        fence(Ordering::SeqCst);
        self.wake_fenced(None);
    }

    /// `wake_waiters` after the fence. Waiters count themselves in
    /// `cq_waiters` (then fence) before they check the ring, so either
    /// they see what changed or this sees them and bumps `cq_seq`, which
    /// their futex sleep watches. A waiter counts itself in `cq_sleep`
    /// before that sleep: if this takes the count first, the bump before
    /// it is what the waiter's futex compares against, and it does not
    /// sleep; otherwise this wakes it, unless `tail` (a post's) is short
    /// of every sleeper's target and no timeout fired since the last wake.
    fn wake_fenced(&self, tail: Option<u32>) {
        self.ready.kick(self);
        if self.forked.load(Ordering::Relaxed) {
            self.wake_other_processes();
        }
        if self.cq_waiters.load(Ordering::Relaxed) != 0 {
            self.cq_seq.fetch_add(1, Ordering::SeqCst);
            let sleep = self.cq_sleep.load(Ordering::SeqCst);
            if sleep != 0 {
                let fired = self.timeouts_fired.load(Ordering::SeqCst);
                let short = tail.is_some_and(|t| {
                    (t.wrapping_sub(sleep as u32) as i32) < 0 && fired == self.timeouts_woken.load(Ordering::SeqCst)
                });
                if !short && self.cq_sleep.swap(0, Ordering::SeqCst) != 0 {
                    self.timeouts_woken.store(fired, Ordering::SeqCst);
                    futex_wake(&self.cq_seq, i32::MAX);
                }
            }
            if self.nr_sig_waiters.load(Ordering::SeqCst) != 0 {
                for &fd in self.sig_waiters.lock().iter() {
                    os::eventfd_signal(fd);
                }
            }
        }
    }

    /// Wakes threads of every process sleeping on a forked ring: the ones
    /// on `off::X_SEQ`, and, once a child has used the ring, the servers of
    /// readiness sets, whose sets hold the ring fd (see `Readiness::open`).
    #[cold]
    fn wake_other_processes(&self) {
        let _pin = self.pin_rings();
        self.word(off::X_SEQ).fetch_add(1, Ordering::SeqCst);
        if self.word(off::X_WAITERS).load(Ordering::SeqCst) != 0 {
            super::lock::futex_wake_shared(self.word(off::X_SEQ), i32::MAX);
        }
        if self.fork_child.load(Ordering::Relaxed) != super::fork::JOINED
            && self.word(off::X_PEERS).load(Ordering::SeqCst) == 0
        {
            return;
        }
        self.efd_op(os::eventfd_signal);
        if !self.fd_signalled.swap(true, Ordering::SeqCst) {
            super::reactor::watch_ring(self);
        }
    }

    /// Makes the ring fd readable. It stays readable until the reactor sees
    /// the CQ drained (see `reset_fd`), so a busy ring pays for one write
    /// per drain cycle, not per CQE. Called after a SeqCst fence (the CQ
    /// tail store before the flag load, against `reset_fd`'s order).
    #[inline]
    fn signal_fd(&self) {
        if !self.fd_signalled.load(Ordering::Relaxed) && !self.fd_signalled.swap(true, Ordering::SeqCst) {
            self.signal_fd_now();
        }
    }

    #[cold]
    #[inline(never)]
    fn signal_fd_now(&self) {
        self.efd_op(os::eventfd_signal);
        super::reactor::watch_ring(self);
    }

    /// Clears the ring fd's readability if the CQ is empty. Returns true if
    /// it is still signalled (CQEs pending).
    pub(crate) fn reset_fd(&self) -> bool {
        if !self.fd_signalled.load(Ordering::SeqCst) {
            return false;
        }
        if self.cq_ready() != 0 {
            return true;
        }
        self.fd_signalled.store(false, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        self.efd_op(os::eventfd_drain);
        // A CQE posted meanwhile may have seen the flag still set and
        // skipped its signal; or its poster saw it clear, set it and
        // signalled just before the drain took that away (its CQE may be
        // consumed already). Either way signal again: the flag set with
        // the fd drained would let every later CQE skip its signal.
        if self.cq_ready() != 0 || self.fd_signalled.load(Ordering::SeqCst) {
            self.fd_signalled.store(true, Ordering::SeqCst);
            self.efd_op(os::eventfd_signal);
            return true;
        }
        false
    }
}

/// A use of the rings region off both locks (see `Ctx::pin_rings`).
pub(crate) struct RingsPin<'a>(&'a AtomicU32);

impl Drop for RingsPin<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// The completion side, locked for writing the CQ (see `Ctx::lock_cq`).
pub(crate) struct CqGuard<'a> {
    g: super::lock::Guard<'a, Inner>,
    /// The cross-process lock, held on a forked ring.
    x: Option<&'a super::lock::SharedLock>,
}

impl core::ops::Deref for CqGuard<'_> {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.g
    }
}

impl core::ops::DerefMut for CqGuard<'_> {
    fn deref_mut(&mut self) -> &mut Inner {
        &mut self.g
    }
}

impl Drop for CqGuard<'_> {
    fn drop(&mut self) {
        if let Some(x) = self.x {
            x.unlock();
        }
    }
}

#[cfg(test)]
#[path = "ctx_tests.rs"]
pub(crate) mod tests;
