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
//! When a sharer exits or execs, the others post the CQEs the kernel's
//! task cancellation would for the requests it had in flight
//! (`Records`, `bury`): each process that shares a ring records its
//! requests in a shared table, and holds the only write end of a
//! close-on-exec "life pipe" whose hang-up the others' reactors watch.
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

use core::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};

use super::ctx::{Cqe, Ctx};
use super::req::Mode;
use super::{os, table};
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
    let mut shared = false;
    table::each_held(|ctx, _| {
        // Without its shared CQ lock the ring is not the child's (see
        // `child`), and this process stays its only poster.
        if !ctx.cq_xlock.make() {
            return;
        }
        // Without records, the sharers' exits post nothing for it.
        ctx.xrec.make();
        shared = true;
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
    if shared {
        life_for_child();
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
    // The child's life pipe: its write end is the child's alone.
    let (tok, rd, wr) = take_next();
    if tok != 0 {
        os::close(wr);
        super::reactor::watch_death(rd, tok);
    }
}

extern "C" fn child() {
    // SAFETY: we are the atfork child handler: the only thread.
    unsafe {
        table::after_fork_child();
        super::io_wq::after_fork_child();
        super::reactor::after_fork_child();
        super::aio::after_fork_child();
        super::waiter::after_fork_child();
        super::futex::after_fork_child();
        super::creds::after_fork_child();
        super::fileref::after_fork_child();
    }
    let (tok, rd, wr) = take_next();
    if tok != 0 {
        // The parent's life pipe: its write end stays the parent's alone,
        // its hang-up is the parent's exit or exec. The new pipe is ours.
        os::close(MY_WR.swap(wr, Ordering::Relaxed));
        super::reactor::keep_death(MY_RD.swap(rd, Ordering::Relaxed), ME.swap(tok, Ordering::Relaxed));
    } else {
        // Shares no ring with the parent: not the parent, so none of its
        // token and life pipe (`life_for_child` makes its own if it forks
        // a ring later).
        os::close(MY_WR.swap(-1, Ordering::Relaxed));
        os::close(MY_RD.swap(-1, Ordering::Relaxed));
        ME.store(0, Ordering::Relaxed);
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
        ctx.recent_files.reset_after_fork();
    }
    // The parent's requests hold those dups, not ours.
    ctx.recent_files.lock().clear();
    ctx.sig_waiters.lock().clear();
    ctx.users.store(0, Ordering::Relaxed);
    ctx.cq_waiters.store(0, Ordering::Relaxed);
    ctx.cq_sleep.store(0, Ordering::Relaxed);
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
        // The sharers' exits this process watches (see `child`).
        super::reactor::start_for_deaths();
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

/// This process's token in its records (0: it never shared a ring), and
/// its life pipe: the write end, close-on-exec, is held by this process
/// only, so the read end, which the other sharers watch, hangs up when it
/// exits or execs (a pidfd tells of exit only).
static ME: AtomicU32 = AtomicU32::new(0);
static MY_RD: AtomicI32 = AtomicI32::new(-1);
static MY_WR: AtomicI32 = AtomicI32::new(-1);
/// The token and life pipe made for the child of the fork under way
/// (from `prepare` to the parent and child handlers).
static NEXT: [AtomicI32; 3] = [AtomicI32::new(0), AtomicI32::new(-1), AtomicI32::new(-1)];
/// The token counter, in a page shared by every process forked from the
/// one that made it, so that tokens are unique among a ring's sharers.
static FAMILY: AtomicPtr<AtomicU32> = AtomicPtr::new(core::ptr::null_mut());

fn take_next() -> (u32, i32, i32) {
    (
        NEXT[0].swap(0, Ordering::Relaxed) as u32,
        NEXT[1].swap(-1, Ordering::Relaxed),
        NEXT[2].swap(-1, Ordering::Relaxed),
    )
}

/// A new token of the family, or 0 if its page cannot be made.
fn new_token() -> u32 {
    let mut f = FAMILY.load(Ordering::Relaxed);
    if f.is_null() {
        // SAFETY: a fresh shared mapping touches no existing memory.
        let Ok(p) = (unsafe {
            crate::sys::mmap(
                core::ptr::null_mut(),
                crate::sys::mem::page_size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        }) else {
            return 0;
        };
        f = p as *mut AtomicU32;
        FAMILY.store(f, Ordering::Relaxed);
    }
    // SAFETY: the page lives as long as the process; zeroed memory is a
    // valid AtomicU32.
    let t = unsafe { &*f }.fetch_add(1, Ordering::Relaxed).wrapping_add(1) & !FILLING;
    t.max(1)
}

/// A close-on-exec pipe at engine numbers: (read end, write end).
fn life_pipe() -> Option<(i32, i32)> {
    let mut p = [-1i32; 2];
    // SAFETY: pipe2 writes two fds into the array.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return None;
    }
    Some((os::high(p[0]), os::high(p[1])))
}

/// In `prepare`: this process's token and life pipe if it has none yet,
/// and the child's.
fn life_for_child() {
    if ME.load(Ordering::Relaxed) == 0 {
        let t = new_token();
        if t == 0 {
            return;
        }
        let Some((rd, wr)) = life_pipe() else { return };
        MY_RD.store(rd, Ordering::Relaxed);
        MY_WR.store(wr, Ordering::Relaxed);
        ME.store(t, Ordering::Relaxed);
    }
    let t = new_token();
    if t == 0 {
        return;
    }
    if let Some((rd, wr)) = life_pipe() {
        NEXT[1].store(rd, Ordering::Relaxed);
        NEXT[2].store(wr, Ordering::Relaxed);
        NEXT[0].store(t as i32, Ordering::Relaxed);
    }
}

/// One request in flight on a forked ring, in the table its sharers
/// share: who submitted it and the CQE a cancel of it posts.
#[repr(C)]
struct Slot {
    /// The submitter's token (`ME`); 0 when free, with `FILLING` while
    /// being written.
    owner: AtomicU32,
    /// Nonzero: a cancel of it posts no CQE (a member of a chain whose
    /// current request has IOSQE_CQE_SKIP_SUCCESS, as the kernel's
    /// REQ_F_SKIP_LINK_CQES).
    quiet: AtomicU32,
    user_data: AtomicU64,
}

const FILLING: u32 = 1 << 31;
const REC_BYTES: usize = 64 * 1024;
const NR_SLOTS: usize = REC_BYTES / core::mem::size_of::<Slot>();
// A slot + 1 fits in the request's flags (`rf::XREC_SHIFT`).
const _: () = assert!(NR_SLOTS < 1 << (32 - super::req::rf::XREC_SHIFT));

/// A forked ring's table of requests in flight (see `Slot`), made at its
/// first fork: rings never forked pay nothing for it. A request is
/// recorded as it is submitted and leaves the table under the CQ lock
/// with its last CQE, so that exactly one of its completion and a
/// survivor's cancel posts for it. A full table records nothing more.
/// Slot 0 is no request's: it names the one leaving with the CQEs the
/// CQ lock's holder is publishing (`retiring`), so that whoever takes
/// the lock from a holder that died tells whether its CQE got out.
pub(crate) struct Records {
    slots: AtomicPtr<Slot>,
    /// Where this process looks for a free slot first.
    hint: AtomicU32,
}

impl Records {
    pub(crate) const fn new() -> Records {
        Records { slots: AtomicPtr::new(core::ptr::null_mut()), hint: AtomicU32::new(0) }
    }

    fn make(&self) {
        if !self.slots.load(Ordering::Relaxed).is_null() {
            return;
        }
        // SAFETY: a fresh shared mapping touches no existing memory.
        if let Ok(p) = unsafe {
            crate::sys::mmap(
                core::ptr::null_mut(),
                REC_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        } {
            // Published to other threads by `Ctx::forked`'s store.
            self.slots.store(p as *mut Slot, Ordering::Relaxed);
        }
    }

    fn slots(&self) -> &[Slot] {
        let p = self.slots.load(Ordering::Acquire);
        if p.is_null() {
            return &[];
        }
        // SAFETY: `make` mapped NR_SLOTS zeroed slots (all atomics, valid
        // at zero), which stay mapped until `unmap`, after the ring's last use.
        unsafe { core::slice::from_raw_parts(p, NR_SLOTS) }
    }

    /// Unmaps this process's view of the table, if made.
    ///
    /// # Safety
    /// Nobody in this process uses the table any more.
    pub(crate) unsafe fn unmap(&self) {
        let p = self.slots.swap(core::ptr::null_mut(), Ordering::Relaxed);
        if !p.is_null() {
            // SAFETY: the mapping `make` made; per the contract it is unused.
            unsafe { crate::sys::munmap(p as *mut core::ffi::c_void, REC_BYTES) };
        }
    }
}

/// Records a request submitted on a forked ring; returns its slot + 1, or
/// 0 if it is not recorded.
#[cold]
pub(crate) fn record(ctx: &Ctx, user_data: u64, quiet: bool) -> u32 {
    let me = ME.load(Ordering::Relaxed);
    let slots = ctx.xrec.slots();
    if me == 0 || slots.is_empty() {
        return 0;
    }
    let start = ctx.xrec.hint.load(Ordering::Relaxed) as usize;
    for k in 0..NR_SLOTS {
        let i = (start + k) % NR_SLOTS;
        if i == 0 {
            continue;
        }
        let s = &slots[i];
        if s.owner.load(Ordering::Relaxed) == 0
            && s.owner.compare_exchange(0, me | FILLING, Ordering::Acquire, Ordering::Relaxed).is_ok()
        {
            s.user_data.store(user_data, Ordering::Relaxed);
            s.quiet.store(quiet as u32, Ordering::Relaxed);
            s.owner.store(me, Ordering::Release);
            ctx.xrec.hint.store(((i + 1) % NR_SLOTS) as u32, Ordering::Relaxed);
            return i as u32 + 1;
        }
    }
    0
}

/// The request recorded in `rec` is done: its last CQE is out (the caller
/// holds the CQ lock) or none is owed.
pub(crate) fn unrecord(ctx: &Ctx, rec: u32) {
    if let Some(s) = ctx.xrec.slots().get(rec as usize - 1) {
        s.owner.store(0, Ordering::Release);
    }
}

/// Under the CQ lock of a forked ring: the request recorded in `rec`
/// leaves the table with CQEs that a CQ tail of `tail` publishes.
pub(crate) fn retiring(ctx: &Ctx, rec: u32, tail: u32) {
    if let Some(h) = ctx.xrec.slots().first() {
        h.user_data.store(tail as u64, Ordering::Relaxed);
        h.owner.store(ME.load(Ordering::Relaxed), Ordering::Relaxed);
        h.quiet.store(rec, Ordering::Relaxed);
    }
}

/// Ends `retiring`, under the same hold of the CQ lock.
pub(crate) fn retired(ctx: &Ctx) {
    if let Some(h) = ctx.xrec.slots().first() {
        h.quiet.store(0, Ordering::Relaxed);
    }
}

/// The CQ lock was taken from a holder that died holding it, with the CQ
/// tail it published at `tail`: if it died retiring a request whose CQE
/// is out, its slot goes, so that no survivor posts for it again; if its
/// CQE is not out, a survivor cancels it.
pub(crate) fn holder_died(ctx: &Ctx, tail: u32) {
    let slots = ctx.xrec.slots();
    let Some(h) = slots.first() else { return };
    let rec = h.quiet.swap(0, Ordering::Relaxed) as usize;
    let Some(s) = rec.checked_sub(1).and_then(|i| slots.get(i)) else { return };
    if tail.wrapping_sub(h.user_data.load(Ordering::Relaxed) as u32) as i32 >= 0 {
        // The slot may be free again, or another's: only the dead
        // holder's goes.
        let dead = h.owner.load(Ordering::Relaxed);
        let _ = s.owner.compare_exchange(dead, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// The request recorded in `rec` became its chain's current one: a cancel
/// now posts its CQE.
pub(crate) fn unquiet(ctx: &Ctx, rec: u32) {
    if let Some(s) = ctx.xrec.slots().get(rec as usize - 1) {
        s.quiet.store(0, Ordering::Relaxed);
    }
}

/// The sharer with token `tok` exited or exec'd: posts, on every ring of
/// this process it shared, -ECANCELED for each request it had in flight,
/// as the kernel's cancellation of a dying task's requests does. Under
/// the CQ lock, so that each is posted once, by whoever comes first.
pub(crate) fn bury(tok: u32) {
    table::each(|ctx| {
        if !ours(ctx) || !ctx.forked.load(Ordering::Acquire) {
            return;
        }
        let slots = ctx.xrec.slots();
        if slots.is_empty() {
            return;
        }
        let n = {
            let mut inner = ctx.lock_cq();
            // Slot 0 is the table's own (see `Records`).
            for s in &slots[1..] {
                let o = s.owner.load(Ordering::Acquire);
                if o & !FILLING != tok {
                    continue;
                }
                // One that died while filling a slot had not issued it.
                if o == tok && s.quiet.load(Ordering::Relaxed) == 0 {
                    let c = Cqe::new(s.user_data.load(Ordering::Relaxed), -libc::ECANCELED, 0);
                    ctx.fill(&mut inner, &c);
                }
                s.owner.store(0, Ordering::Release);
            }
            ctx.commit(&mut inner, Mode::Reactor)
        };
        if n != 0 {
            ctx.notify();
        }
        ctx.run_fired(Mode::Reactor);
    });
}
