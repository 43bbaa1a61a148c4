//! Which file descriptors are engine rings, and in which process.
//!
//! Rings are found by fd from the raw system-call layer, so lookups must be
//! lock-free and safe against a concurrent teardown. Each live ring sits in
//! one of a fixed set of handles (type-stable: never freed), and an fd map
//! points at the handle. A lookup takes a reference on the handle only if
//! it is still non-zero, then checks that the map still points there; the
//! ring itself is released once the last reference is gone.

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};

use super::ctx::Ctx;
use super::lock::Mutex;

/// Engine rings live at once in one process.
pub(crate) const MAX_RINGS: usize = 4096;
/// First index handed out by IORING_REGISTER_RING_FDS on an engine ring;
/// the kernel's own indexes are below 16, so the two never collide.
pub(crate) const REG_BASE: u32 = 16;
const REG_SLOTS: usize = 64;

/// Rings currently registered; the raw system calls look at nothing else
/// while this is zero.
pub(crate) static LIVE: AtomicU32 = AtomicU32::new(0);

/// Bumped in a forked child: rings created before belong to the parent.
pub(crate) static FORK_GEN: AtomicU32 = AtomicU32::new(0);

pub(crate) struct Handle {
    /// References: one for the fd map while registered, one per lookup in
    /// progress. Zero means free.
    refs: AtomicU32,
    ctx: AtomicPtr<Ctx>,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Handle = Handle { refs: AtomicU32::new(0), ctx: AtomicPtr::new(core::ptr::null_mut()) };
static HANDLES: [Handle; MAX_RINGS] = [FREE; MAX_RINGS];

/// fd -> handle index + 1, in pages of 1024 fds allocated on first use.
const PAGE: usize = 1024;
const PAGES: usize = 1024;
type FdPage = [AtomicU32; PAGE];
#[allow(clippy::declare_interior_mutable_const)]
const NO_PAGE: AtomicPtr<FdPage> = AtomicPtr::new(core::ptr::null_mut());
static FD_MAP: [AtomicPtr<FdPage>; PAGES] = [NO_PAGE; PAGES];
#[allow(clippy::declare_interior_mutable_const)]
const NO_REG: AtomicU32 = AtomicU32::new(0);
/// Registered ring index - REG_BASE -> handle index + 1.
static REG_MAP: [AtomicU32; REG_SLOTS] = [NO_REG; REG_SLOTS];

/// Serialises registration changes (lookups never take it).
static REGISTRY: Mutex<()> = Mutex::new(());

fn fd_slot(fd: i32, create: bool) -> Option<&'static AtomicU32> {
    if fd < 0 || fd as usize >= PAGE * PAGES {
        return None;
    }
    let (page, off) = (fd as usize / PAGE, fd as usize % PAGE);
    let mut p = FD_MAP[page].load(Ordering::Acquire);
    if p.is_null() {
        if !create {
            return None;
        }
        // An all-zero page of atomics is a valid FdPage.
        let fresh = alloc::boxed::Box::into_raw(alloc::boxed::Box::new([0u32; PAGE])) as *mut FdPage;
        // Only callers holding REGISTRY create pages, so a plain store is enough.
        FD_MAP[page].store(fresh, Ordering::Release);
        p = fresh;
    }
    // SAFETY: pages are never freed once published.
    Some(unsafe { &(*p)[off] })
}

/// A counted reference to a live ring; dropping it may release the ring.
pub(crate) struct RingRef {
    idx: usize,
}

impl RingRef {
    pub(crate) fn ctx(&self) -> &Ctx {
        // SAFETY: our reference keeps the handle's ring alive.
        unsafe { &*HANDLES[self.idx].ctx.load(Ordering::Acquire) }
    }
}

impl Clone for RingRef {
    fn clone(&self) -> Self {
        HANDLES[self.idx].refs.fetch_add(1, Ordering::Relaxed);
        RingRef { idx: self.idx }
    }
}

impl Drop for RingRef {
    fn drop(&mut self) {
        put(self.idx);
    }
}

fn put(idx: usize) {
    let h = &HANDLES[idx];
    if h.refs.fetch_sub(1, Ordering::AcqRel) == 1 {
        let ctx = h.ctx.swap(core::ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: the last reference is gone; the ring was leaked into the
        // handle by `register` and nobody can reach it any more.
        unsafe { Ctx::release(ctx) };
    }
}

fn get_idx(idx: usize) -> Option<RingRef> {
    let h = &HANDLES[idx];
    let mut r = h.refs.load(Ordering::Relaxed);
    loop {
        if r == 0 {
            return None;
        }
        match h.refs.compare_exchange_weak(r, r + 1, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => return Some(RingRef { idx }),
            Err(v) => r = v,
        }
    }
}

fn lookup_slot(slot: &AtomicU32) -> Option<RingRef> {
    let v = slot.load(Ordering::Acquire);
    if v == 0 {
        return None;
    }
    let r = get_idx(v as usize - 1)?;
    // The handle may have been freed and reused for another fd meanwhile.
    if slot.load(Ordering::Acquire) != v {
        return None;
    }
    Some(r)
}

/// The engine ring behind `fd`, if it is one.
pub(crate) fn lookup(fd: i32) -> Option<RingRef> {
    lookup_slot(fd_slot(fd, false)?)
}

/// The engine ring behind registered ring index `idx`, if it is one.
pub(crate) fn lookup_registered(idx: u32) -> Option<RingRef> {
    let i = idx.checked_sub(REG_BASE)? as usize;
    lookup_slot(REG_MAP.get(i)?)
}

/// The ring in handle `idx` (for the reactor, which names rings by index).
pub(crate) fn lookup_index(idx: usize) -> Option<RingRef> {
    get_idx(idx)
}

/// A further reference to a ring that is known to be referenced already
/// (a live request keeps its ring's teardown waiting, and so its handle).
pub(crate) fn hold(ctx: &Ctx) -> RingRef {
    let idx = ctx.handle.load(Ordering::Relaxed) as usize;
    HANDLES[idx].refs.fetch_add(1, Ordering::Relaxed);
    RingRef { idx }
}

/// Waits until `r` is the only reference left to its ring.
pub(crate) fn wait_sole(r: &RingRef) {
    while HANDLES[r.idx].refs.load(Ordering::Acquire) > 1 {
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
    }
}

/// Makes `ctx` reachable through its fd; returns its handle index.
pub(crate) fn register(ctx: alloc::boxed::Box<Ctx>) -> Result<usize, (alloc::boxed::Box<Ctx>, i32)> {
    let _g = REGISTRY.lock();
    let Some(slot) = fd_slot(ctx.fd(), true) else { return Err((ctx, -libc::EMFILE)) };
    let Some(idx) = (0..MAX_RINGS)
        .find(|&i| HANDLES[i].refs.load(Ordering::Acquire) == 0 && HANDLES[i].ctx.load(Ordering::Acquire).is_null())
    else {
        return Err((ctx, -libc::EMFILE));
    };
    let raw = alloc::boxed::Box::into_raw(ctx);
    HANDLES[idx].ctx.store(raw, Ordering::Release);
    HANDLES[idx].refs.store(1, Ordering::Release);
    // SAFETY: raw was just leaked and is owned by the handle now.
    unsafe { (*raw).handle.store(idx as u32, Ordering::Relaxed) };
    slot.store(idx as u32 + 1, Ordering::Release);
    LIVE.fetch_add(1, Ordering::Release);
    Ok(idx)
}

/// Makes the ring unreachable by fd (and by registered index) and drops
/// the map's reference. Returns a reference the caller tears down with.
pub(crate) fn unregister(fd: i32) -> Option<RingRef> {
    let _g = REGISTRY.lock();
    let slot = fd_slot(fd, false)?;
    let v = slot.load(Ordering::Acquire);
    if v == 0 {
        return None;
    }
    let idx = v as usize - 1;
    let r = get_idx(idx)?;
    slot.store(0, Ordering::Release);
    for reg in REG_MAP.iter() {
        let _ = reg.compare_exchange(v, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
    LIVE.fetch_sub(1, Ordering::Release);
    put(idx);
    Some(r)
}

/// Finds ring `r` by fd `new` from now on instead of its old number (a
/// dup of its fd, `engine::adopt_dup`); false if `new` already leads to a
/// ring or `r`'s old number no longer leads to it.
pub(crate) fn rekey(r: &RingRef, new: i32) -> bool {
    let _g = REGISTRY.lock();
    let v = r.idx as u32 + 1;
    let ctx = r.ctx();
    let Some(to) = fd_slot(new, true) else { return false };
    if to.load(Ordering::Acquire) != 0 {
        return false;
    }
    let Some(from) = fd_slot(ctx.fd(), false).filter(|s| s.load(Ordering::Acquire) == v) else { return false };
    to.store(v, Ordering::Release);
    ctx.fd.store(new, Ordering::Release);
    from.store(0, Ordering::Release);
    ctx.fd_lost.store(false, Ordering::Relaxed);
    true
}

/// Calls `f` on every live ring, holding a reference to it (so no lock
/// below `reactor::R` may be held by the caller).
pub(crate) fn each(mut f: impl FnMut(&Ctx)) {
    for r in (0..MAX_RINGS).filter_map(get_idx) {
        f(r.ctx());
    }
}

/// The first live ring `pick` accepts.
pub(crate) fn find(pick: impl Fn(&Ctx) -> bool) -> Option<RingRef> {
    (0..MAX_RINGS).filter_map(get_idx).find(|r| pick(r.ctx()))
}

/// Gives ring `r` a registered index (`want` = exact index or u32::MAX for
/// any free one).
pub(crate) fn register_index(r: &RingRef, want: u32) -> Result<u32, i32> {
    let _g = REGISTRY.lock();
    let v = r.idx as u32 + 1;
    let pick = |i: usize| REG_MAP[i].compare_exchange(0, v, Ordering::AcqRel, Ordering::Relaxed).is_ok();
    if want == u32::MAX {
        (0..REG_SLOTS).find(|&i| pick(i)).map(|i| i as u32 + REG_BASE).ok_or(-libc::EBUSY)
    } else {
        let i = want.checked_sub(REG_BASE).filter(|&i| (i as usize) < REG_SLOTS).ok_or(-libc::EINVAL)?;
        if pick(i as usize) {
            Ok(want)
        } else {
            Err(-libc::EBUSY)
        }
    }
}

/// Frees registered ring index `idx`. A ring whose fd was closed
/// (`unmap_fd`) lives on its registered indexes alone: when its last one
/// goes, it is returned for the caller to tear down (see `unregister`).
pub(crate) fn unregister_index(idx: u32) -> Result<Option<RingRef>, i32> {
    let _g = REGISTRY.lock();
    let i = idx.checked_sub(REG_BASE).filter(|&i| (i as usize) < REG_SLOTS).ok_or(-libc::EINVAL)? as usize;
    let v = REG_MAP[i].swap(0, Ordering::AcqRel);
    if v == 0 {
        return Err(-libc::EINVAL);
    }
    let h = v as usize - 1;
    let Some(r) = get_idx(h) else { return Ok(None) };
    if reachable(h, r.ctx().fd()) {
        return Ok(None);
    }
    LIVE.fetch_sub(1, Ordering::Release);
    put(h);
    Ok(Some(r))
}

/// io_uring_close_ring_fd, and IORING_SETUP_REGISTERED_FD_ONLY: the ring
/// is no longer found by its fd, only by its registered indexes (it must
/// have one).
pub(crate) fn unmap_fd(fd: i32) -> Result<(), i32> {
    let _g = REGISTRY.lock();
    let slot = fd_slot(fd, false).ok_or(-libc::EBADF)?;
    let v = slot.load(Ordering::Acquire);
    if v == 0 {
        return Err(-libc::EBADF);
    }
    if !REG_MAP.iter().any(|s| s.load(Ordering::Acquire) == v) {
        return Err(-libc::EINVAL);
    }
    let Some(r) = get_idx(v as usize - 1) else { return Err(-libc::EBADF) };
    let ctx = r.ctx();
    slot.store(0, Ordering::Release);
    ctx.fd.store(-1, Ordering::Release);
    // The engine's own dup (`Ctx::efd`) keeps the file; the number is
    // closed, as liburing closes a kernel ring's, unless it holds another
    // file by now.
    if super::os::same_file(fd, ctx.efd) == Ok(true) {
        super::os::close(fd);
    }
    Ok(())
}

/// Whether handle `idx` (whose ring's fd is `fd`) is found by its fd or a
/// registered index.
fn reachable(idx: usize, fd: i32) -> bool {
    let v = idx as u32 + 1;
    fd_slot(fd, false).is_some_and(|s| s.load(Ordering::Acquire) == v)
        || REG_MAP.iter().any(|s| s.load(Ordering::Acquire) == v)
}

#[allow(clippy::declare_interior_mutable_const)]
const NOT_HELD: AtomicBool = AtomicBool::new(false);
/// Rings referenced across fork() by `hold_for_fork`.
static FORK_HELD: [AtomicBool; MAX_RINGS] = [NOT_HELD; MAX_RINGS];

/// Ahead of fork(): takes the registry (no ring is added or unregistered
/// until `unhold_after_fork`) and a reference on every ring `keep` picks,
/// so that none is freed across the fork.
pub(crate) fn hold_for_fork(keep: impl Fn(&Ctx) -> bool) {
    REGISTRY.hold();
    for (idx, held) in FORK_HELD.iter().enumerate() {
        if let Some(r) = get_idx(idx) {
            if keep(r.ctx()) {
                core::mem::forget(r);
                held.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// Calls `f` on every ring `hold_for_fork` holds, with whether its fd
/// still leads to it.
pub(crate) fn each_held(mut f: impl FnMut(&Ctx, bool)) {
    for (idx, held) in FORK_HELD.iter().enumerate() {
        if !held.load(Ordering::Relaxed) {
            continue;
        }
        // SAFETY: the reference taken by `hold_for_fork` keeps it alive.
        let ctx = unsafe { &*HANDLES[idx].ctx.load(Ordering::Acquire) };
        f(ctx, reachable(idx, ctx.fd()));
    }
}

/// Ends `hold_for_fork` in the parent.
///
/// # Safety
/// The calling thread called `hold_for_fork` and not this since.
pub(crate) unsafe fn unhold_after_fork() {
    for (idx, held) in FORK_HELD.iter().enumerate() {
        if held.swap(false, Ordering::Relaxed) {
            put(idx);
        }
    }
    // SAFETY: forwarded contract.
    unsafe { REGISTRY.unhold() };
}

/// In a forked child: a new generation of rings begins (rings the child
/// does not take over stay in the old one), the registry lock is free, and
/// only the fd map holds references (the parent's threads that held the
/// others did not come along).
///
/// # Safety
/// Only from the pthread_atfork child handler.
pub(crate) unsafe fn after_fork_child() {
    FORK_GEN.fetch_add(1, Ordering::Relaxed);
    // SAFETY: forwarded contract.
    unsafe { REGISTRY.reset_after_fork() };
    for (idx, h) in HANDLES.iter().enumerate() {
        let p = h.ctx.load(Ordering::Relaxed);
        if p.is_null() {
            continue;
        }
        // SAFETY: nothing frees rings in the child before this returns.
        let fd = unsafe { (*p).fd() };
        // A ring the parent was tearing down stays allocated (its memory
        // is the parent's copy) but unreachable.
        h.refs.store(reachable(idx, fd) as u32, Ordering::Relaxed);
    }
}

/// Ends `hold_for_fork` in the child: the references went with the reset
/// above, the marks stay for `each_held` until the child handler is done.
pub(crate) fn forget_fork_hold() {
    for held in FORK_HELD.iter() {
        held.store(false, Ordering::Relaxed);
    }
}
