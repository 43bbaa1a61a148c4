//! fork(): a ring's memory is MAP_SHARED, so after a fork parent and child
//! see the same SQ and CQ, as with a kernel ring. Each process runs the
//! requests it submits itself, with its own threads and its own fds, and
//! both post to the one CQ:
//!
//! - ahead of the fork, every ring is marked `forked`, and the locks the
//!   child will use are held so that it inherits consistent state;
//! - from then on CQ posting also takes a shared lock (`lock::SharedLock`),
//!   and wake-ups reach sleepers of every process (`Ctx::lock_cq`,
//!   `Ctx::wake_other_processes`);
//! - the child takes each ring over with fresh process-local state: none
//!   of the parent's requests, no reactor or workers until it needs them.
//!
//! An SQPOLL ring keeps its one SQ thread, in the parent: it runs what the
//! child queues too, with the parent's fds, as the kernel's does.
//!
//! Not taken over (every call fails with -EBADFD in the child, which may
//! still close its copy of the fd): rings whose memory the child did not
//! inherit (io_uring_ring_dontfork), and rings whose shared CQ lock could
//! not be made (no memory for its page). Per process after the fork:
//! registered files and buffers, provided buffers, and CQEs held back in
//! overflow.

use core::sync::atomic::{AtomicBool, Ordering};

use super::ctx::Ctx;
use super::table;
use crate::sys::IORING_SETUP_SINGLE_ISSUER;

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The parent's requests and their bookkeeping, as copied into a child:
/// never freed there (their destructors act for the parent), but held
/// here, so that leak checkers see them as kept rather than lost.
static INHERITED: super::lock::Mutex<alloc::vec::Vec<usize>> = super::lock::Mutex::new(alloc::vec::Vec::new());

/// Keeps `x` (the parent's, in a forked child) for good; see `INHERITED`.
pub(crate) fn keep<T>(x: T) {
    let p = alloc::boxed::Box::into_raw(alloc::boxed::Box::new(x)) as usize;
    INHERITED.lock().push(p);
}

/// The locks held across fork(), in the engine's lock order: submission
/// first, the completion side last.
fn locks(ctx: &Ctx) -> [&dyn Held; 4] {
    [&ctx.submit, &ctx.rsrc, &ctx.kbuf, &ctx.inner]
}

/// A lock held across fork().
trait Held {
    fn hold(&self);
    /// # Safety
    /// As `Mutex::unhold`.
    unsafe fn unhold(&self);
    /// # Safety
    /// As `Mutex::reset_after_fork`.
    unsafe fn reset(&self);
}

impl<T> Held for super::lock::Mutex<T> {
    fn hold(&self) {
        super::lock::Mutex::hold(self);
    }
    /// # Safety
    /// As [`Held::unhold`].
    unsafe fn unhold(&self) {
        // SAFETY: forwarded contract.
        unsafe { super::lock::Mutex::unhold(self) };
    }
    /// # Safety
    /// As [`Held::reset`].
    unsafe fn reset(&self) {
        // SAFETY: forwarded contract.
        unsafe { self.reset_after_fork() };
    }
}

extern "C" fn prepare() {
    if !super::active() {
        return;
    }
    // Rings this process only inherited stay as they are.
    table::hold_for_fork(ours);
    table::each_held(|ctx, _| {
        // Without its shared CQ lock the ring is not the child's (see
        // `child`), and this process stays its only poster.
        if !ctx.cq_xlock.make() {
            return;
        }
        // Posters read the flag under `inner`, which is taken below: any
        // that read it unset are done by then.
        ctx.forked.store(true, Ordering::SeqCst);
        ctx.ready.on_fork(ctx);
        // Waiters asleep on the private futex move to the shared one.
        ctx.wake_waiters();
    });
    // Lock by lock over all rings, so that no two rings' locks are ever
    // taken against the order another thread takes them in.
    for class in 0..4 {
        table::each_held(|ctx, _| locks(ctx)[class].hold());
    }
    super::fileref::hold_for_fork();
}

extern "C" fn parent() {
    if !super::active() {
        return;
    }
    // SAFETY: `prepare` held it in this thread.
    unsafe { super::fileref::unhold_after_fork() };
    table::each_held(|ctx, _| {
        for l in locks(ctx).iter().rev() {
            // SAFETY: `prepare` held them in this thread.
            unsafe { l.unhold() };
        }
    });
    // SAFETY: `prepare` held the registry in this thread.
    unsafe { table::unhold_after_fork() };
}

extern "C" fn child() {
    // SAFETY: we are the atfork child handler: the only thread.
    unsafe {
        table::after_fork_child();
        super::io_wq::after_fork_child();
        super::reactor::after_fork_child();
        super::waiter::after_fork_child();
        super::futex::after_fork_child();
        super::creds::after_fork_child();
        super::fileref::after_fork_child();
    }
    table::each_held(|ctx, registered| {
        for l in locks(ctx) {
            // SAFETY: as above.
            unsafe { l.reset() };
        }
        if registered && inherited_memory(ctx) && ctx.cq_xlock.exists() {
            // SAFETY: as above.
            unsafe { take_over(ctx) };
        }
    });
    table::forget_fork_hold();
}

/// Whether the ring's memory came along (io_uring_ring_dontfork keeps it
/// from the child).
fn inherited_memory(ctx: &Ctx) -> bool {
    let (rings, sqes) = (ctx.rings.load(Ordering::Relaxed), ctx.sqes.load(Ordering::Relaxed));
    crate::sys::mem::page_mapped(rings) && crate::sys::mem::page_mapped(sqes as *const u8)
}

/// Makes an inherited ring this process's own.
///
/// # Safety
/// Only from the atfork child handler, with the ring's locks reset.
unsafe fn take_over(ctx: &Ctx) {
    ctx.inner.lock().reset_after_fork(ctx);
    // SAFETY: forwarded contract.
    unsafe {
        ctx.sig_waiters.reset_after_fork();
        ctx.wait_region.reset_after_fork();
        ctx.napi.reset_after_fork();
        ctx.personalities.reset_after_fork();
        ctx.restrictions.reset_after_fork();
        ctx.ready.after_fork_child();
    }
    ctx.sig_waiters.lock().clear();
    ctx.users.store(0, Ordering::Relaxed);
    ctx.cq_waiters.store(0, Ordering::Relaxed);
    ctx.nr_sig_waiters.store(0, Ordering::Relaxed);
    for f in [&ctx.overflow_held, &ctx.tw_pending, &ctx.deferred_pending, &ctx.fired_pending, &ctx.fd_signalled] {
        f.store(false, Ordering::Relaxed);
    }
    // The child is another task: a SINGLE_ISSUER ring refuses it, as the
    // kernel's does (-EEXIST), unless nobody has claimed the ring yet.
    if ctx.flags & IORING_SETUP_SINGLE_ISSUER != 0 && ctx.submitter.load(Ordering::Relaxed) != 0 {
        ctx.submitter.store(u64::MAX, Ordering::Relaxed);
    }
    ctx.fork_child.store(CHILD, Ordering::Relaxed);
    ctx.fork_gen.store(table::FORK_GEN.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// `Ctx::fork_child`: the ring was taken over in a forked child, which
/// has not used it yet, or has.
pub(crate) const CHILD: u8 = 1;
pub(crate) const JOINED: u8 = 2;

/// A child's first call on a ring it took over: from now on the other
/// processes signal the ring fd for it too (see `off::X_PEERS`). A child
/// that only execs costs its parent nothing.
#[inline]
pub(crate) fn join(ctx: &Ctx) {
    if ctx.fork_child.load(Ordering::Relaxed) == CHILD && ctx.fork_child.swap(JOINED, Ordering::SeqCst) == CHILD {
        ctx.word(super::ctx::off::X_PEERS).fetch_add(1, Ordering::SeqCst);
    }
}

/// Registers the fork handlers, once per process.
pub(crate) fn install() {
    if !INSTALLED.swap(true, Ordering::AcqRel) {
        // SAFETY: the handlers are plain extern fns that live as long as
        // the library.
        unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
    }
}

/// Whether `ctx` belongs to this process.
pub(crate) fn ours(ctx: &Ctx) -> bool {
    ctx.fork_gen.load(Ordering::Relaxed) == table::FORK_GEN.load(Ordering::Relaxed)
}
