//! Requests: their life from submission to the last CQE. Issue (inline,
//! on the reactor or on a worker), completion, links, drain, and the lists
//! that make in-flight requests findable for cancellation.
//!
//! A request is a heap object reached through [`ReqPtr`]. At any time it
//! has exactly one owner: the thread issuing it, the io-wq queue, the
//! reactor, a timer, or a canceller that won the request's state. Owners
//! hand it over through `state` and the ring's locks; only the owner reads
//! or writes the request.

use alloc::boxed::Box;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};

use super::ctx::{Cqe, Ctx};
use super::opdef;
use super::{io_wq, os};
use crate::sys::flat_sqe::Sqe;
use crate::sys::{
    IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_TASKRUN_FLAG, IORING_SQ_TASKRUN, IOSQE_ASYNC, IOSQE_CQE_SKIP_SUCCESS,
    IOSQE_FIXED_FILE, IOSQE_IO_HARDLINK, IOSQE_IO_LINK,
};

/// Where a request is (the `state` word). Transitions out of QUEUED and
/// ARMED race with cancellation and are made by compare-and-swap.
pub(crate) mod st {
    /// Owned by the thread running it; not findable.
    pub const IDLE: u32 = 0;
    /// In the io-wq queue.
    pub const QUEUED: u32 = 1;
    /// A worker is running it; too late to cancel.
    pub const RUNNING: u32 = 2;
    /// Waiting on the reactor (readiness or a timer).
    pub const ARMED: u32 = 3;
    /// Taken by a canceller, which completes it.
    pub const CANCELED: u32 = 4;
    /// A link timeout whose timer fired: the reactor completes it.
    pub const FIRING: u32 = 5;
    /// In flight on native AIO (see aio.rs): nothing can take it back.
    pub const INFLIGHT: u32 = 6;
}

/// Request flags (`Req::flags`).
pub(crate) mod rf {
    /// `file` is a dup the request closes when freed (`put_file`), or
    /// one it shares with others of its submit call (`SharedFile`).
    pub const OWN_FILE: u32 = 1 << 0;
    /// Failed at submission; `res` holds the error its CQE reports.
    pub const FAIL: u32 = 1 << 1;
    /// User memory the op needs later has been copied.
    pub const STABLE: u32 = 1 << 2;
    /// On the ring's armed list.
    pub const LISTED: u32 = 1 << 3;
    /// Registered in the ring's readiness set: freed through `readiness::bury`.
    pub const EPOLLED: u32 = 1 << 4;
    /// Went through its first issue (IOSQE_ASYNC punt, link timeout).
    pub const ISSUED: u32 = 1 << 5;
    /// DIRECT, on a file native AIO may take (see aio.rs).
    pub const AIO: u32 = 1 << 6;
    /// -ETIME is a success here (IORING_TIMEOUT_ETIME_SUCCESS).
    pub const ETIME_OK: u32 = 1 << 7;
    /// The op's own error is a plain result (`OpDef::error_fails`).
    pub const NOFAIL: u32 = 1 << 9;
    /// Cancelled behind a failed IOSQE_CQE_SKIP_SUCCESS request: no CQE, as
    /// the kernel does for the rest of such a chain.
    pub const QUIET: u32 = 1 << 10;
    /// Heads a chain that waits behind a drain barrier (IOSQE_IO_DRAIN).
    pub const DRAIN: u32 = 1 << 8;
    /// Its worker call may wait for good (a tty, not a regular file):
    /// counted against the unbounded worker cap, as `OpDef::unbounded`.
    pub const UNBOUND: u32 = 1 << 12;
    /// O_DIRECT I/O, which the kernel issues without any io-wq thread: a
    /// worker each, up to the pool's cap for such work (see io_wq.rs).
    pub const DIRECT: u32 = 1 << 13;
    /// `file` (the request's own dup) was seen to be a regular file (or,
    /// with DIRECT, a block device) when it was queued: the worker need
    /// not look again.
    pub const REG: u32 = 1 << 14;
    /// Uses a registered buffer (`rsrc::hold_buffer`) until freed.
    pub const BUF_HELD: u32 = 1 << 15;
    /// The bits above hold the request's slot + 1 in a forked ring's
    /// records (`fork::record`), or 0.
    pub const XREC_SHIFT: u32 = 16;
}

/// How the current thread may issue: `Inline` and `Reactor` must never
/// block; `Worker` may.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    Inline,
    Reactor,
    Worker,
}

impl Mode {
    pub(crate) fn is_async(self) -> bool {
        self != Mode::Inline
    }
}

/// What an op's issue function did.
pub(crate) enum Issued {
    /// Finished: post this result.
    Done(i32, u32),
    /// Would block: hand it to the reactor or a worker.
    Again,
    /// Ready, but only a blocking call can do it: hand it to a worker.
    Blocking,
    /// The op handed the request to someone else (reactor, timer).
    Queued,
}

/// A pointer to a live request; see the module documentation for who may
/// dereference it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct ReqPtr(NonNull<Req>);

// SAFETY: requests move between threads by design; exclusive ownership is
// enforced by the protocol described above, not by the type.
unsafe impl Send for ReqPtr {}
// SAFETY: as above.
unsafe impl Sync for ReqPtr {}

impl ReqPtr {
    /// # Safety
    /// The caller owns the request.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    pub(crate) unsafe fn get<'a>(self) -> &'a mut Req {
        // SAFETY: forwarded contract: the owner is the only accessor.
        unsafe { &mut *self.0.as_ptr() }
    }

    pub(crate) fn addr(self) -> u64 {
        self.0.as_ptr() as u64
    }

    /// # Safety
    /// `v` came from [`ReqPtr::addr`] of a request that is still alive.
    pub(crate) unsafe fn from_addr(v: u64) -> ReqPtr {
        // SAFETY: non-null by the contract.
        ReqPtr(unsafe { NonNull::new_unchecked(v as *mut Req) })
    }

    /// The request's state word: readable by anyone holding the lock that
    /// keeps the request alive (the ring's `inner`, or a queue's lock).
    pub(crate) fn state(&self) -> &AtomicU32 {
        // SAFETY: callers hold a lock that keeps the request alive, and
        // only touch the atomic field.
        unsafe { &(*self.0.as_ptr()).state }
    }
}

/// Op-specific state carried from prep to completion.
pub(crate) enum OpData {
    None,
    /// The second half of a big CQE (NOP with IORING_NOP_CQE32).
    Big([u64; 2]),
    /// An epoll_event copied at submission (EPOLL_CTL).
    Event([u64; 2]),
    Rw(super::rw::RwData),
    Open(super::openclose::OpenData),
    Path(super::fs::PathData),
    Xattr(alloc::boxed::Box<super::xattr::XattrData>),
    Cancel(super::cancel::CancelData),
    /// The epoll mask a POLL_ADD waits for.
    Poll(u32),
    PollUpdate(super::poll::PollUpdate),
    Timeout(super::timeout::TimeoutData),
    /// The last retry period of a WAITID that polls (ns).
    Waitid(u64),
    Futex(super::futex::FutexData),
    TimeoutRemove(super::timeout::TimeoutRemove),
    Net(alloc::boxed::Box<super::net::NetData>),
    Sock(alloc::boxed::Box<super::sock::SockData>),
}

pub(crate) struct Req {
    pub sqe: Sqe,
    pub ctx: *const Ctx,
    /// Next request of the chain (IOSQE_IO_LINK / IOSQE_IO_HARDLINK).
    pub link: Option<ReqPtr>,
    /// Next in a FIFO (io-wq queue, drain queue).
    pub qnext: Option<ReqPtr>,
    /// The ring's armed list.
    pub anext: Option<ReqPtr>,
    pub aprev: Option<ReqPtr>,
    /// The IORING_OP_LINK_TIMEOUT guarding this request, once issued.
    pub ltimeout: Option<ReqPtr>,
    /// Unique within the ring: lets a link timeout name its target without
    /// holding a pointer to it.
    pub id: u64,
    pub state: AtomicU32,
    /// The fd the op works on (a dup when `rf::OWN_FILE`), or -1.
    pub file: i32,
    pub flags: u32,
    /// The error of a request that failed at submission (`rf::FAIL`).
    pub res: i32,
    /// Credentials to run with (see creds.rs): a personality's, or the
    /// submitter's once the request left the submitting thread.
    pub creds: Option<alloc::sync::Arc<super::creds::Creds>>,
    pub io: OpData,
}

/// One dup of a program's fd for every request of a submit call that
/// names that fd and goes to a worker (`detach`): a dup, and the fstat
/// and F_GETFL that find its hash key, per call and fd rather than per
/// request. The last request to let go closes it (`put_file`).
pub(crate) struct SharedFile {
    /// The program's fd number it was taken from.
    pub app: i32,
    pub fd: i32,
    /// What `rw::file_hash` found of it: `rw::HASH_*` bits and the key.
    pub kind: u32,
    pub key: u64,
}

// Per-request state stays small (the issue asks for at most 192 bytes).
const _: () = assert!(core::mem::size_of::<Req>() <= 192);

impl Req {
    /// Its slot in a forked ring's records (see `rf::XREC_SHIFT`), which
    /// it leaves.
    fn take_xrec(&mut self) -> u32 {
        let rec = self.flags >> rf::XREC_SHIFT;
        self.flags &= (1 << rf::XREC_SHIFT) - 1;
        rec
    }

    pub(crate) fn ctx(&self) -> &Ctx {
        // SAFETY: a request keeps its ring alive (see `Ctx::users`).
        unsafe { &*self.ctx }
    }
}

/// Allocates a request for `sqe`: a freed one of the ring's if any
/// (`Returned`), else from the heap. The caller holds the submit lock,
/// which `cache` lives under.
pub(crate) fn alloc(ctx: &Ctx, cache: &mut ReqCache, sqe: &Sqe, id: u64) -> ReqPtr {
    ctx.users.fetch_add(1, Ordering::Relaxed);
    if cache.head.is_none() {
        cache.head = ctx.returned.take_all();
    }
    let Some(p) = cache.head else { return boxed(*sqe, ctx, id) };
    // SAFETY: a freed request of this ring: nobody else holds it, and the
    // submit lock keeps other submitters out of `cache`.
    let r = unsafe { p.get() };
    cache.head = r.qnext.take();
    ctx.returned.len.fetch_sub(1, Ordering::Relaxed);
    // Drops what the freed request still held (its paths, iovecs) here, on
    // the thread that allocates the next ones.
    *r = fresh(*sqe, ctx, id);
    p
}

fn fresh(sqe: Sqe, ctx: *const Ctx, id: u64) -> Req {
    Req {
        sqe,
        ctx,
        link: None,
        qnext: None,
        anext: None,
        aprev: None,
        ltimeout: None,
        id,
        state: AtomicU32::new(st::IDLE),
        file: -1,
        flags: 0,
        res: 0,
        creds: None,
        io: OpData::None,
    }
}

/// A fresh request of `ctx` on the heap, owned by the caller.
fn boxed(sqe: Sqe, ctx: *const Ctx, id: u64) -> ReqPtr {
    // SAFETY: Box::into_raw never returns null.
    ReqPtr(unsafe { NonNull::new_unchecked(Box::into_raw(Box::new(fresh(sqe, ctx, id)))) })
}

/// At most this many freed requests wait in a ring's `Returned` and
/// `ReqCache` together; more are freed at once.
const RETURNED_MAX: u32 = 256;

/// Requests freed by any thread, given back to the ring's submitter for
/// its next ones (the kernel keeps such a cache per ring too). Freed on a
/// worker, a request's memory (and that of its paths and iovecs) would
/// land in that worker's malloc cache while the submitter allocates anew,
/// each trip through malloc's slow path and arena lock. Any thread pushes;
/// only the submitter takes, and always the whole list (`take_all`), so a
/// take never races another (no ABA). A pushed request keeps its data,
/// dropped by `alloc` on reuse; it is linked through `qnext`.
pub(crate) struct Returned {
    head: core::sync::atomic::AtomicPtr<Req>,
    /// Requests here and in the submitter's `ReqCache`.
    len: AtomicU32,
}

impl Returned {
    pub(crate) const fn new() -> Returned {
        Returned { head: core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()), len: AtomicU32::new(0) }
    }

    /// Gives back a request whose file and other holds are released.
    fn give(&self, req: ReqPtr) {
        if self.len.load(Ordering::Relaxed) >= RETURNED_MAX {
            // SAFETY: allocated through Box and owned by the caller.
            drop(unsafe { Box::from_raw(req.0.as_ptr()) });
            return;
        }
        self.len.fetch_add(1, Ordering::Relaxed);
        let mut h = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: owned by the caller until the exchange publishes it.
            unsafe { req.get() }.qnext = NonNull::new(h).map(ReqPtr);
            // Release: the request's last writes come before its reuse.
            match self.head.compare_exchange_weak(h, req.0.as_ptr(), Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => h = now,
            }
        }
    }

    fn take_all(&self) -> Option<ReqPtr> {
        NonNull::new(self.head.swap(core::ptr::null_mut(), Ordering::Acquire)).map(ReqPtr)
    }
}

/// Frees a list of requests linked through `qnext`.
fn free_list(mut at: Option<ReqPtr>) {
    while let Some(p) = at {
        // SAFETY: the list's owner frees it; each was allocated through Box.
        let b = unsafe { Box::from_raw(p.0.as_ptr()) };
        at = b.qnext;
    }
}

impl Drop for Returned {
    fn drop(&mut self) {
        free_list(self.take_all());
    }
}

/// The submitter's share of `Returned`: requests taken from it and not yet
/// reused. Lives under the submit lock.
pub(crate) struct ReqCache {
    head: Option<ReqPtr>,
}

impl ReqCache {
    pub(crate) const fn new() -> ReqCache {
        ReqCache { head: None }
    }
}

impl Drop for ReqCache {
    fn drop(&mut self) {
        free_list(self.head.take());
    }
}

/// Releases a request (the caller owns it and drops every pointer to it).
pub(crate) fn free(ctx: &Ctx, req: ReqPtr) {
    // SAFETY: the caller owns the request.
    let r = unsafe { req.get() };
    let rec = r.take_xrec();
    if rec != 0 {
        super::fork::unrecord(ctx, rec);
    }
    if r.flags & rf::BUF_HELD != 0 {
        super::rsrc::put_buffer(ctx, r.id);
    }
    if r.flags & rf::EPOLLED != 0 {
        // A server of the ring's set may still hold this pointer from an
        // event batch; it also unregisters the file before closing it.
        super::readiness::bury(ctx, req);
    } else {
        put_file(ctx, r);
        ctx.returned.give(req);
    }
    // Only a tear-down waits for the count to reach zero, and it marks the
    // ring dying before it reads the count (both SeqCst).
    if ctx.users.fetch_sub(1, Ordering::SeqCst) == 1 && ctx.dying.load(Ordering::SeqCst) {
        super::lock::futex_wake(&ctx.users, i32::MAX);
    }
}

/// Lets go of the request's own dup of its file (`rf::OWN_FILE`), if it
/// has one. Every close of a request's dup goes through `close_dup`; a
/// shared dup is closed by the last request (or submit call) holding it.
pub(crate) fn put_file(ctx: &Ctx, r: &mut Req) {
    if r.flags & rf::OWN_FILE == 0 {
        return;
    }
    r.flags &= !rf::OWN_FILE;
    let fd = core::mem::replace(&mut r.file, -1);
    match super::rw::take_shared(r) {
        None => close_dup(ctx, fd),
        Some(s) => put_shared(ctx, s),
    }
}

/// Drops one hold of a shared dup, closing it with the last.
pub(crate) fn put_shared(ctx: &Ctx, s: alloc::sync::Arc<SharedFile>) {
    if let Some(s) = alloc::sync::Arc::into_inner(s) {
        close_dup(ctx, s.fd);
    }
}

fn close_dup(ctx: &Ctx, fd: i32) {
    // A lost ring's dups may be the application's files by now.
    if !ctx.is_lost() {
        super::fileref::close_file(fd);
    }
}

/// Frees the memory of a buried request.
///
/// # Safety
/// `req` was passed to `readiness::bury` and nothing refers to it any more.
pub(crate) unsafe fn free_buried(req: ReqPtr) {
    // SAFETY: per the contract.
    drop(unsafe { Box::from_raw(req.0.as_ptr()) });
}

/// Work a DEFER_TASKRUN ring runs on its submitter thread.
pub(crate) enum TaskWork {
    Complete(ReqPtr, i32, u32),
    Cqe(Cqe),
}

impl Ctx {
    fn defer_taskrun(&self) -> bool {
        self.flags & IORING_SETUP_DEFER_TASKRUN != 0
    }

    fn queue_task_work(&self, tw: TaskWork, mode: Mode) {
        self.inner.lock().task_work.push_back(tw);
        // Off the submitter thread, with no lock held.
        let _pin = self.pin_rings();
        if self.flags & IORING_SETUP_TASKRUN_FLAG != 0 {
            self.set_sq_flag(IORING_SQ_TASKRUN, true);
        }
        self.tw_pending.store(true, Ordering::SeqCst);
        // As the kernel's: pending work already signals the eventfd, so
        // an event loop learns to call io_uring_get_events.
        self.signal_eventfd(mode);
        self.wake_waiters();
    }

    /// Runs DEFER_TASKRUN completions (on the submitter thread).
    #[inline]
    pub(crate) fn run_task_work(&self) {
        if self.tw_pending.load(Ordering::SeqCst) {
            self.run_task_work_now();
        }
    }

    #[inline(never)]
    fn run_task_work_now(&self) {
        loop {
            let work = {
                let mut inner = self.inner.lock();
                let w = core::mem::take(&mut inner.task_work);
                if w.is_empty() {
                    self.tw_pending.store(false, Ordering::SeqCst);
                    if self.flags & IORING_SETUP_TASKRUN_FLAG != 0 {
                        self.set_sq_flag(IORING_SQ_TASKRUN, false);
                    }
                    return;
                }
                w
            };
            for tw in work {
                match tw {
                    TaskWork::Complete(req, res, cflags) => complete(self, req, res, cflags, Mode::Inline),
                    TaskWork::Cqe(c) => self.post_all(&[c], Mode::Inline),
                }
            }
        }
    }

    /// Posts an extra CQE for a request that stays alive (multishot).
    pub(crate) fn post_more(&self, c: Cqe, mode: Mode) {
        if mode.is_async() && self.defer_taskrun() {
            self.queue_task_work(TaskWork::Cqe(c), mode);
        } else {
            self.post_all(&[c], mode);
        }
    }

    /// `post_more` for a multishot CQE that must not overflow: false if
    /// the CQ had no room, and the request is to end with it instead.
    /// Task work on a DEFER_TASKRUN ring is posted later: queued, true.
    pub(crate) fn try_post_more(&self, c: Cqe, mode: Mode) -> bool {
        if mode.is_async() && self.defer_taskrun() {
            self.queue_task_work(TaskWork::Cqe(c), mode);
            return true;
        }
        self.try_post(&c, mode)
    }

    /// Posts a CQE that another ring sends (MSG_RING): on a DEFER_TASKRUN
    /// ring it waits as task work for the ring's own submitter, as the
    /// kernel's remote posting does.
    pub(crate) fn post_remote(&self, c: Cqe, mode: Mode) {
        if self.defer_taskrun() {
            self.queue_task_work(TaskWork::Cqe(c), mode);
        } else {
            self.post_all(&[c], mode);
        }
    }

    /// Puts `req` on the armed list in state `state` (QUEUED or ARMED).
    pub(crate) fn list(&self, req: ReqPtr, state: u32) {
        self.list_locked(&mut self.inner.lock(), req, state);
    }

    /// `list` with the inner lock already held.
    pub(crate) fn list_locked(&self, inner: &mut super::ctx::Inner, req: ReqPtr, state: u32) {
        // SAFETY: the caller owns the request until the state is published.
        let r = unsafe { req.get() };
        if r.flags & rf::LISTED == 0 {
            r.flags |= rf::LISTED;
            inner.armed.push(req);
            if opdef::get(r.sqe.opcode).indexed {
                inner.polls.insert((r.sqe.user_data, req.addr() as usize));
            }
        }
        req.state().store(state, Ordering::Release);
    }

    /// Takes a listed request back from state `from`; false if a canceller
    /// got it first.
    pub(crate) fn claim(&self, req: ReqPtr, from: u32, to: u32) -> bool {
        let _inner = self.inner.lock();
        req.state().compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    pub(crate) fn unlist(&self, req: ReqPtr) {
        // SAFETY: the caller owns the request.
        if unsafe { req.get() }.flags & rf::LISTED != 0 {
            self.unlist_locked(&mut self.inner.lock(), req);
        }
    }

    /// `unlist` with the inner lock already held.
    pub(crate) fn unlist_locked(&self, inner: &mut super::ctx::Inner, req: ReqPtr) {
        // SAFETY: the caller owns the request.
        let r = unsafe { req.get() };
        if r.flags & rf::LISTED != 0 {
            inner.armed.remove(req);
            if opdef::get(r.sqe.opcode).indexed {
                inner.polls.remove(&(r.sqe.user_data, req.addr() as usize));
            }
            r.flags &= !rf::LISTED;
        }
    }

    pub(crate) fn has_deferred(&self) -> bool {
        self.deferred_pending.load(Ordering::Acquire)
    }
}

/// Completes `req` with `res`: posts its CQE (unless skipped on success),
/// settles its link timeout, frees it, and moves its chain on.
pub(crate) fn complete(ctx: &Ctx, req: ReqPtr, res: i32, cflags: u32, mode: Mode) {
    match complete_step(ctx, req, res, cflags, mode) {
        Some(next) => issue(ctx, next, mode),
        None if ctx.has_deferred() => run_deferred(ctx, mode),
        None => {}
    }
}

/// `complete` without moving on: returns the next chain member to issue.
/// Chains advance in a loop (see `issue`), never by recursion, so a chain
/// of any length runs in constant stack.
fn complete_step(ctx: &Ctx, req: ReqPtr, res: i32, cflags: u32, mode: Mode) -> Option<ReqPtr> {
    if mode.is_async() && ctx.defer_taskrun() {
        ctx.queue_task_work(TaskWork::Complete(req, res, cflags), mode);
        return None;
    }
    // SAFETY: the caller owns the request.
    let r = unsafe { req.get() };
    let def = opdef::get(r.sqe.opcode);
    // Leaves the armed list with its CQE (`post_done`), unless the op may
    // post or re-arm first, or a link timeout settles against it.
    let late_unlist = r.ltimeout.is_none() && !def.early_unlist;
    if !late_unlist {
        ctx.unlist(req);
    }
    let (res, cflags) = match def.fail {
        Some(fail) => fail(ctx, r, res, cflags, mode),
        None => (res, cflags),
    };
    let etime_ok = res == -libc::ETIME && r.flags & rf::ETIME_OK != 0;
    let failed = (res < 0 && !etime_ok && r.flags & rf::NOFAIL == 0) || r.flags & rf::FAIL != 0;
    let mut cqes = [Cqe::default(); 2];
    let mut n = 0;
    if (!r.sqe.has(IOSQE_CQE_SKIP_SUCCESS) || failed) && r.flags & rf::QUIET == 0 {
        cqes[0] = Cqe::new(r.sqe.user_data, res, cflags);
        if let OpData::Big(b) = r.io {
            cqes[0].big = b;
        }
        n = 1;
    }
    if let Some(lt) = r.ltimeout.take() {
        if let Some(c) = (guard(lt).disarm)(ctx, lt) {
            cqes[n] = c;
            n += 1;
        }
    }
    if r.flags & rf::ISSUED == 0 {
        if let Some(lt) = r.link {
            // SAFETY: chain members belong to the head's owner.
            let l = unsafe { lt.get() };
            if opdef::get(l.sqe.opcode).guard.is_some() {
                // Never armed (its request never ran): it goes with
                // -ECANCELED whatever happened to the request, as the
                // kernel's disarm of a pending link timeout does, unless
                // it failed at submission itself.
                r.link = l.link.take();
                let own = l.flags & rf::FAIL != 0;
                if !l.sqe.has(IOSQE_CQE_SKIP_SUCCESS) || own {
                    cqes[n] = Cqe::new(l.sqe.user_data, if own { l.res } else { -libc::ECANCELED }, 0);
                    n += 1;
                }
                free(ctx, lt);
            }
        }
    }
    ctx.post_done(late_unlist.then_some(req), &cqes[..n], r.take_xrec(), mode);
    let next = r.link.take();
    let hard = r.sqe.has(IOSQE_IO_HARDLINK);
    let quiet = r.sqe.has(IOSQE_CQE_SKIP_SUCCESS);
    free(ctx, req);
    let next = next?;
    if failed && !hard {
        fail_links(ctx, next, mode, quiet);
        return None;
    }
    // SAFETY: chain members belong to the head's owner.
    let rec = unsafe { next.get() }.flags >> rf::XREC_SHIFT;
    if rec != 0 {
        super::fork::unquiet(ctx, rec);
    }
    Some(next)
}

/// The hooks of a request bound as its chain predecessor's guard.
fn guard(lt: ReqPtr) -> opdef::Guard {
    // SAFETY: a bound guard belongs to the owner of the request it guards.
    let op = unsafe { lt.get() }.sqe.opcode;
    opdef::get(op).guard.expect("bound only from a row with guard hooks")
}

/// Completes the rest of a chain after a member failed: each posts its own
/// submission error, or -ECANCELED; no CQE at all (`quiet`) when the failed
/// member had IOSQE_CQE_SKIP_SUCCESS.
pub(crate) fn fail_links(ctx: &Ctx, first: ReqPtr, mode: Mode, quiet: bool) {
    let mut cur = Some(first);
    while let Some(req) = cur {
        // SAFETY: the chain's members belong to whoever owns its head.
        let r = unsafe { req.get() };
        cur = r.link.take();
        let res = if r.flags & rf::FAIL != 0 { r.res } else { -libc::ECANCELED };
        r.flags |= rf::FAIL | if quiet { rf::QUIET } else { 0 };
        complete(ctx, req, res, 0, mode);
    }
}

/// Completes a chain that failed as a whole (at submission, or at ring
/// teardown): the head with its error, then the rest as `fail_links` does.
/// Hard links do not keep such a chain going.
pub(crate) fn fail_chain(ctx: &Ctx, head: ReqPtr, mode: Mode) {
    // SAFETY: the caller owns the chain.
    let r = unsafe { head.get() };
    let res = if r.flags & rf::FAIL != 0 { r.res } else { -libc::ECANCELED };
    r.flags |= rf::FAIL;
    r.sqe.flags &= !IOSQE_IO_HARDLINK;
    // Without a hard link nothing comes next, but freeing the chain may
    // let a drain start: `complete` looks.
    complete(ctx, head, res, 0, mode);
}

/// Issues `req` from a thread in `mode`; it completes now, or moves on to
/// the reactor or a worker. Members of its chain that can go at once
/// follow in the same loop.
pub(crate) fn issue(ctx: &Ctx, req: ReqPtr, mode: Mode) {
    issue_chain(ctx, req, mode);
    if ctx.has_deferred() {
        run_deferred(ctx, mode);
    }
}

fn issue_chain(ctx: &Ctx, req: ReqPtr, mode: Mode) {
    let mut cur = Some(req);
    while let Some(req) = cur {
        // A worker runs only the request it took from the queue (RUNNING):
        // the rest go back to the queue, which this worker reads next, so
        // that a cancel or the ring's exit finds them and can interrupt
        // their calls, as io-wq's do.
        if mode == Mode::Worker && req.state().load(Ordering::Acquire) != st::RUNNING {
            io_wq::requeue(ctx, req);
            return;
        }
        cur = issue_step(ctx, req, mode);
        if mode == Mode::Worker {
            if let Some(next) = cur.take() {
                io_wq::requeue_linked(ctx, next);
            }
        }
    }
}

/// Issues one request; returns the next chain member if this one
/// completed at once and its chain goes on.
fn issue_step(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Option<ReqPtr> {
    // SAFETY: the caller owns the request.
    let r = unsafe { req.get() };
    if r.flags & rf::FAIL != 0 {
        fail_chain(ctx, req, mode);
        return None;
    }
    let def = opdef::get(r.sqe.opcode);
    let first = r.flags & rf::ISSUED == 0;
    let mut lt = None;
    if first {
        r.flags |= rf::ISSUED;
        if let Some(n) = r.link {
            // SAFETY: chain members belong to the head's owner.
            let nr = unsafe { n.get() };
            if let Some(g) = opdef::get(nr.sqe.opcode).guard {
                r.link = nr.link.take();
                r.ltimeout = Some(n);
                lt = Some(n);
                (g.bind)(n, r.id);
            }
        }
    }
    let out = if ctx.dying.load(Ordering::Relaxed) {
        Issued::Done(-libc::ECANCELED, 0)
    } else if mode != Mode::Worker && (def.force_async || (first && r.sqe.has(IOSQE_ASYNC))) {
        Issued::Again
    } else if mode != Mode::Worker && def.creds && r.creds.as_ref().is_some_and(|c| super::creds::differ(c)) {
        // Only a worker takes on other credentials (see creds.rs).
        Issued::Blocking
    } else {
        match resolve_file(ctx, r, def) {
            Ok(()) => match issue_as(ctx, req, mode, def) {
                Issued::Done(res, f) if res < 0 && !def.error_fails => {
                    r.flags |= rf::NOFAIL;
                    Issued::Done(res, f)
                }
                out => out,
            },
            Err(e) => Issued::Done(e, 0),
        }
    };
    // A ring being torn down takes nothing new to wait on.
    let out = match out {
        Issued::Again | Issued::Blocking if ctx.dying.load(Ordering::SeqCst) => Issued::Done(-libc::ECANCELED, 0),
        out => out,
    };
    let next = match out {
        Issued::Done(res, cflags) => complete_step(ctx, req, res, cflags, mode),
        Issued::Again => {
            punt(ctx, req, mode);
            None
        }
        Issued::Blocking => {
            // Only the submitter's own thread has its credentials for io_submit.
            if detach(ctx, req, mode) && !(mode == Mode::Inline && super::aio::submit(ctx, req)) {
                io_wq::enqueue(ctx, req);
            }
            None
        }
        Issued::Queued => {
            // The op waits elsewhere; the rest of its chain goes with it.
            if mode == Mode::Inline {
                if let Some(n) = r.link {
                    super::creds::capture_chain(n);
                }
            }
            None
        }
    };
    if let Some(lt) = lt {
        (guard(lt).arm)(ctx, lt);
    }
    if mode == Mode::Worker {
        io_wq::op_returned();
    }
    next
}

/// Runs the op, with the request's credentials if it has any (a worker).
fn issue_as(ctx: &Ctx, req: ReqPtr, mode: Mode, def: &opdef::OpDef) -> Issued {
    // SAFETY: the caller owns the request.
    let r = unsafe { req.get() };
    match r.creds.clone().filter(|_| def.creds) {
        None => {
            // An op without credentials may wait as long as it likes.
            if mode == Mode::Worker {
                super::creds::end_streak();
            }
            (def.issue)(ctx, req, mode)
        }
        Some(c) => {
            // Sync, path and xattr ops never wait on a pipe, socket or tty.
            let hold = r.file < 0
                || r.flags & rf::REG != 0
                || (def.force_async && !def.unbounded)
                || !matches!(os::file_type(r.file), libc::S_IFIFO | libc::S_IFSOCK | libc::S_IFCHR);
            super::creds::with(&c, hold, || (def.issue)(ctx, req, mode)).unwrap_or_else(|e| Issued::Done(e, 0))
        }
    }
}

/// Finds the fd an op works on: a registered file or the SQE's fd.
fn resolve_file(ctx: &Ctx, r: &mut Req, def: &opdef::OpDef) -> Result<(), i32> {
    if !def.needs_file || r.file >= 0 {
        return Ok(());
    }
    if r.sqe.has(IOSQE_FIXED_FILE) {
        r.file = ctx.rsrc.lock().file(r.sqe.fd as u32).ok_or(-libc::EBADF)?;
    } else {
        if r.sqe.fd < 0 {
            return Err(-libc::EBADF);
        }
        r.file = r.sqe.fd;
    }
    Ok(())
}

/// Readies a request to run after the submitting call returns: copies
/// what the kernel reads at submission (iovecs, say) and takes its own
/// reference to the file, as the application may reuse the one and close
/// the other meanwhile. False if that failed (the request is completed).
fn detach(ctx: &Ctx, req: ReqPtr, mode: Mode) -> bool {
    // SAFETY: the caller owns the request.
    let r = unsafe { req.get() };
    if mode == Mode::Inline {
        super::creds::capture_chain(req);
    }
    if mode == Mode::Inline && r.flags & rf::STABLE == 0 {
        r.flags |= rf::STABLE;
        if let Err(e) = (opdef::get(r.sqe.opcode).stabilize)(r) {
            complete(ctx, req, e, 0, mode);
            return false;
        }
    }
    if r.file >= 0 && r.flags & rf::OWN_FILE == 0 && mode == Mode::Inline && shares_file(r) {
        match ctx.submit_file(r.file) {
            Ok(s) => {
                r.file = s.fd;
                super::rw::set_shared(r, s);
                r.flags |= rf::OWN_FILE;
                return true;
            }
            Err(e) => {
                complete(ctx, req, e, 0, mode);
                return false;
            }
        }
    }
    if let Err(e) = take_file(r) {
        complete(ctx, req, e, 0, mode);
        return false;
    }
    true
}

/// Gives the request a reference of its own to its file (`rf::OWN_FILE`),
/// as the kernel takes one: the application may close its fd meanwhile.
pub(crate) fn take_file(r: &mut Req) -> Result<(), i32> {
    if r.file >= 0 && r.flags & rf::OWN_FILE == 0 {
        let d = super::fileref::dup_file(r.file);
        if d < 0 {
            return Err(d);
        }
        r.file = d;
        r.flags |= rf::OWN_FILE;
    }
    Ok(())
}

/// Whether a request going to a worker may share its dup with the rest of
/// its submit call: reads and writes of a program's regular file (never
/// armed on the readiness set, which registers fds by number).
fn shares_file(r: &Req) -> bool {
    r.sqe.fd == r.file && !r.sqe.has(IOSQE_FIXED_FILE) && super::rw::shareable(r)
}

/// Sends a request that would block to where it can wait: the reactor for
/// pollable files, otherwise the worker pool.
fn punt(ctx: &Ctx, req: ReqPtr, mode: Mode) {
    if !detach(ctx, req, mode) {
        return;
    }
    // SAFETY: the caller owns the request.
    let r = unsafe { req.get() };
    let def = opdef::get(r.sqe.opcode);
    let mask = (def.poll_mask)(r);
    if mask != 0 && r.file >= 0 {
        match super::readiness::arm_io(ctx, req, mask) {
            Ok(()) => return,
            Err(e) if e != -libc::EPERM => return complete(ctx, req, e, 0, mode),
            Err(_) => {}
        }
    }
    io_wq::enqueue(ctx, req);
}

/// Queues a chain behind a drain barrier, or issues it. As in the kernel,
/// once a drain was seen every request goes through the drain queue (the
/// first entry waiting for whatever is in flight) until one passes through
/// it straight away.
pub(crate) fn queue_chain(ctx: &Ctx, head: ReqPtr, drain: bool, members: u32, mode: Mode) {
    {
        let mut inner = ctx.inner.lock();
        if drain || inner.drain_active {
            inner.drain_active = true;
            if drain {
                // SAFETY: we own the chain until it is queued.
                unsafe { head.get() }.flags |= rf::DRAIN;
            }
            if mode == Mode::Inline {
                super::creds::capture_chain(head);
            }
            inner.defer.push(head);
            inner.nr_deferred += members;
            ctx.deferred_pending.store(true, Ordering::Release);
            drop(inner);
            run_deferred(ctx, mode);
            if !drain {
                let mut inner = ctx.inner.lock();
                if inner.defer.is_empty() {
                    inner.drain_active = false;
                }
            }
            return;
        }
    }
    issue(ctx, head, mode);
}

/// Starts deferred chains whose drain condition holds: the first one, and
/// any after a drain, wait until no other request is alive.
pub(crate) fn run_deferred(ctx: &Ctx, mode: Mode) {
    loop {
        let head = {
            let mut inner = ctx.inner.lock();
            let Some(front) = inner.defer.front() else {
                ctx.deferred_pending.store(false, Ordering::Release);
                return;
            };
            let alive = ctx.users.load(Ordering::Acquire).wrapping_sub(inner.nr_deferred);
            if alive != 0 {
                return;
            }
            inner.defer.pop();
            inner.nr_deferred -= chain_len(front);
            // Entries after a non-drain head start together with it; after
            // a drain nothing starts until it completed, as in the kernel's
            // io_queue_deferred.
            // SAFETY: queued chains are owned by the queue (we hold it).
            let drains = unsafe { front.get() }.flags & rf::DRAIN != 0;
            let mut batch = alloc::vec![front];
            while let Some(f) = inner.defer.front().filter(|_| !drains) {
                // SAFETY: queued chains are owned by the queue (we hold it).
                if unsafe { f.get() }.flags & rf::DRAIN != 0 {
                    break;
                }
                inner.defer.pop();
                inner.nr_deferred -= chain_len(f);
                batch.push(f);
            }
            if inner.defer.is_empty() {
                ctx.deferred_pending.store(false, Ordering::Release);
            }
            batch
        };
        if mode == Mode::Worker {
            // Back to the queue's head, last first, so that they keep
            // their order there (see `issue_chain`).
            for h in head.into_iter().rev() {
                io_wq::requeue(ctx, h);
            }
        } else {
            for h in head {
                issue_chain(ctx, h, mode);
            }
        }
    }
}

/// Counts the members of a chain.
pub(crate) fn chain_len(head: ReqPtr) -> u32 {
    let mut n = 0;
    let mut cur = Some(head);
    while let Some(m) = cur {
        n += 1;
        // SAFETY: the caller owns the chain.
        cur = unsafe { m.get() }.link;
    }
    n
}

/// Whether an SQE continues a chain.
pub(crate) fn links(sqe: &Sqe) -> bool {
    sqe.flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK) != 0
}

/// A FIFO of requests through `qnext`.
pub(crate) struct Fifo {
    head: Option<ReqPtr>,
    tail: Option<ReqPtr>,
}

impl Fifo {
    pub(crate) const fn new() -> Fifo {
        Fifo { head: None, tail: None }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    pub(crate) fn front(&self) -> Option<ReqPtr> {
        self.head
    }

    pub(crate) fn push(&mut self, req: ReqPtr) {
        // SAFETY: the list owns its members' `qnext` links.
        unsafe { req.get() }.qnext = None;
        match self.tail {
            // SAFETY: as above.
            Some(t) => unsafe { t.get() }.qnext = Some(req),
            None => self.head = Some(req),
        }
        self.tail = Some(req);
    }

    /// Puts `req` at the head: the next request a worker takes.
    pub(crate) fn push_front(&mut self, req: ReqPtr) {
        // SAFETY: as above.
        unsafe { req.get() }.qnext = self.head;
        if self.head.is_none() {
            self.tail = Some(req);
        }
        self.head = Some(req);
    }

    /// The members, head first (callers hold the list's lock).
    pub(crate) fn iter(&self) -> impl Iterator<Item = ReqPtr> + '_ {
        let mut cur = self.head;
        core::iter::from_fn(move || {
            let c = cur?;
            // SAFETY: as above.
            cur = unsafe { c.get() }.qnext;
            Some(c)
        })
    }

    pub(crate) fn pop(&mut self) -> Option<ReqPtr> {
        let h = self.head?;
        // SAFETY: as above.
        self.head = unsafe { h.get() }.qnext.take();
        if self.head.is_none() {
            self.tail = None;
        }
        Some(h)
    }

    /// Unlinks `req` if present; returns whether it was.
    pub(crate) fn remove(&mut self, req: ReqPtr) -> bool {
        let mut prev: Option<ReqPtr> = None;
        let mut cur = self.head;
        while let Some(c) = cur {
            // SAFETY: as above.
            let next = unsafe { c.get() }.qnext;
            if c == req {
                match prev {
                    // SAFETY: as above.
                    Some(p) => unsafe { p.get() }.qnext = next,
                    None => self.head = next,
                }
                if self.tail == Some(req) {
                    self.tail = prev;
                }
                // SAFETY: as above.
                unsafe { req.get() }.qnext = None;
                return true;
            }
            prev = cur;
            cur = next;
        }
        false
    }
}

/// The ring's findable requests, doubly linked through `anext`/`aprev`.
pub(crate) struct ArmedList {
    head: Option<ReqPtr>,
}

impl ArmedList {
    pub(crate) const fn new() -> ArmedList {
        ArmedList { head: None }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    pub(crate) fn push(&mut self, req: ReqPtr) {
        // SAFETY: the list (under the ring's inner lock) owns these links.
        let r = unsafe { req.get() };
        r.aprev = None;
        r.anext = self.head;
        if let Some(h) = self.head {
            // SAFETY: as above.
            unsafe { h.get() }.aprev = Some(req);
        }
        self.head = Some(req);
    }

    pub(crate) fn remove(&mut self, req: ReqPtr) {
        // SAFETY: as above.
        let r = unsafe { req.get() };
        match r.aprev {
            // SAFETY: as above.
            Some(p) => unsafe { p.get() }.anext = r.anext,
            None => self.head = r.anext,
        }
        if let Some(n) = r.anext {
            // SAFETY: as above.
            unsafe { n.get() }.aprev = r.aprev;
        }
        r.anext = None;
        r.aprev = None;
    }

    /// Every listed request (callers hold the ring's inner lock).
    pub(crate) fn iter(&self) -> impl Iterator<Item = ReqPtr> + '_ {
        let mut cur = self.head;
        core::iter::from_fn(move || {
            let c = cur?;
            // SAFETY: listed requests stay alive while the lock is held.
            cur = unsafe { c.get() }.anext;
            Some(c)
        })
    }
}

#[cfg(test)]
#[path = "req_tests.rs"]
mod tests;
