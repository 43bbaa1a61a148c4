//! Each ring's readiness set: an epoll instance holding the requests the
//! ring waits on files for (I/O that would block, poll requests).
//!
//! The kernel runs a ready request's task work on the task that submitted
//! it. The nearest thing here is a thread waiting in `io_uring_enter` on
//! the ring: it sleeps in epoll_wait on the set and runs what became ready
//! itself, with no hand-off to another thread. When nobody waits there,
//! the reactor serves the set: the set sits in the reactor's epoll under a
//! one-shot registration (the "cover"), re-armed only while the set holds
//! requests and no other thread serves it. A waiting thread that stops
//! serving usually comes back within microseconds, so if the ring's fd is
//! being watched (the reactor then ticks within 0.4 ms anyway) the cover
//! waits for that tick instead of costing a system call and stealing the
//! next events.
//!
//! One thread at a time serves a set (`State::serving`), and only it
//! fetches events. A request freed while its set is being served may still
//! be named in the batch in hand, so its memory waits in `graves` until the
//! server lets go.

use alloc::vec::Vec;
use core::sync::atomic::{fence, AtomicBool, AtomicI32, AtomicU64, Ordering};

use super::ctx::Ctx;
use super::lock::Mutex;
use super::req::{self, rf, st, Mode, ReqPtr};
use super::{os, reactor};

/// Epoll data of the set's wake eventfd, and of the ring fd on a forked
/// ring (requests are 8-byte aligned addresses, so never 1).
const TAG_WAKE: u64 = 1;
const BATCH: usize = 32;
/// A server that lets go without having fetched events for this long
/// fetches once first: a program that enters over and over without ever
/// sleeping (CQEs always ready, or a failing wait) would otherwise keep
/// the set from everybody.
const FETCH_GAP_NS: u64 = 50_000;
/// The longest a server sleeps in one go (see `serve`).
const SLEEP_CAP_NS: u64 = 1_000_000_000;

pub(crate) struct Readiness {
    /// The set's epoll fd; -1 until the ring first arms a request.
    epfd: AtomicI32,
    /// An edge-triggered eventfd in the set that wakes a sleeping server.
    wakefd: AtomicI32,
    /// A thread serving the set sleeps (or is about to) and wants the
    /// eventfd signalled when the ring changes.
    sleeping: AtomicBool,
    /// CLOCK_MONOTONIC of the last fetch of events.
    fetched: AtomicU64,
    /// A submission is under way: requests it arms are covered only when
    /// it ends, as the kernel runs no task work before the submitting
    /// call returns. (Arms made meanwhile by other threads wait too, a
    /// few microseconds.)
    submitting: AtomicBool,
    /// A cover was left to the end of the submission.
    cover_due: AtomicBool,
    state: Mutex<State>,
}

struct State {
    serving: bool,
    /// The server only takes what is ready (the reactor, a get_events
    /// look), where a waiter's serve may sleep in the set.
    quick: bool,
    /// The cover (the set's registration in the reactor's epoll) is armed.
    covered: bool,
    /// The cover is left to the reactor's next tick.
    lazy: bool,
    /// Requests registered in the set.
    armed: u32,
    graves: Vec<ReqPtr>,
    /// The reactor's epoll fd the set is registered in.
    reactor: i32,
}

impl State {
    const fn new() -> State {
        State { serving: false, quick: false, covered: false, lazy: false, armed: 0, graves: Vec::new(), reactor: -1 }
    }
}

fn ctl(epfd: i32, op: i32, fd: i32, events: u32, data: u64) -> i32 {
    let mut ev = libc::epoll_event { events, u64: data };
    // SAFETY: a live epoll_event; the kernel checks the fds.
    os::cvt32(unsafe { libc::epoll_ctl(epfd, op, fd, &mut ev) })
}

impl Readiness {
    pub(crate) const fn new() -> Readiness {
        Readiness {
            epfd: AtomicI32::new(-1),
            wakefd: AtomicI32::new(-1),
            sleeping: AtomicBool::new(false),
            fetched: AtomicU64::new(0),
            submitting: AtomicBool::new(false),
            cover_due: AtomicBool::new(false),
            state: Mutex::new(State::new()),
        }
    }

    /// The set's epoll fd, created (and covered by the reactor) on first use.
    fn open(&self, ctx: &Ctx, s: &mut State) -> Result<i32, i32> {
        let e = self.epfd.load(Ordering::Relaxed);
        if e >= 0 {
            return Ok(e);
        }
        // SAFETY: plain fd creation.
        let epfd = os::high(os::cvt32(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }));
        if epfd < 0 {
            return Err(epfd);
        }
        let wake = os::eventfd();
        let r = if wake < 0 {
            wake
        } else {
            ctl(epfd, libc::EPOLL_CTL_ADD, wake, (libc::EPOLLIN | libc::EPOLLET) as u32, TAG_WAKE)
        };
        let r = if r < 0 || !ctx.forked.load(Ordering::SeqCst) { r } else { watch_ring_fd(epfd, ctx) };
        let r = if r < 0 { Err(r) } else { reactor::add_set(epfd, ctx.handle.load(Ordering::Relaxed)) };
        match r {
            Ok(reactor_epfd) => {
                s.reactor = reactor_epfd;
                s.covered = true;
                self.wakefd.store(wake, Ordering::Relaxed);
                self.epfd.store(epfd, Ordering::Release);
                Ok(epfd)
            }
            Err(e) => {
                os::close(wake);
                os::close(epfd);
                Err(e)
            }
        }
    }

    /// Arms the cover if nobody serves the set and it holds requests.
    fn cover(&self, ctx: &Ctx, s: &mut State) {
        s.lazy = false;
        if !s.serving && !s.covered && s.armed != 0 {
            s.covered =
                reactor::cover_set(s.reactor, self.epfd.load(Ordering::Relaxed), ctx.handle.load(Ordering::Relaxed));
        }
    }

    /// Serves what is ready in the set now, for an enter that waits for
    /// nothing (`io_uring_get_events`): its completions are posted by the
    /// time this returns. If a quick server (the reactor) is at it, waits
    /// for it to finish, up to 20 ms; a waiter serving the set takes
    /// events as they come, so it is left to it.
    pub(crate) fn look(&self, ctx: &Ctx) {
        if self.epfd.load(Ordering::Acquire) < 0 {
            return;
        }
        let deadline = os::now_ns() + 20_000_000;
        loop {
            {
                let mut s = self.state.lock();
                if s.armed == 0 || (s.serving && !s.quick) {
                    return;
                }
                if !s.serving {
                    s.serving = true;
                    s.quick = true;
                    break;
                }
            }
            if os::now_ns() > deadline {
                return;
            }
            // SAFETY: sched_yield has no preconditions.
            unsafe { libc::sched_yield() };
        }
        self.serve(ctx, Some(0), None);
        self.release(ctx);
    }

    /// Makes the calling thread the set's server; false if the set does not
    /// exist yet or another thread serves it.
    pub(crate) fn claim(&self) -> bool {
        if self.epfd.load(Ordering::Acquire) < 0 {
            return false;
        }
        let mut s = self.state.lock();
        if s.serving {
            return false;
        }
        s.serving = true;
        s.quick = false;
        true
    }

    /// Ends a `claim`: frees the graves, and hands the set to the reactor
    /// if requests are left in it.
    pub(crate) fn release(&self, ctx: &Ctx) {
        if os::now_ns().wrapping_sub(self.fetched.load(Ordering::Relaxed)) > FETCH_GAP_NS {
            while self.serve(ctx, Some(0), None) == BATCH as i32 {}
        }
        let graves = {
            let mut s = self.state.lock();
            s.serving = false;
            // Pairs with `Ctx::reset_fd`: a fd seen signalled here is reset
            // by a tick that runs `tick` after it.
            if s.armed != 0 && !s.covered && ctx.fd_signalled.load(Ordering::SeqCst) {
                s.lazy = true;
            } else {
                self.cover(ctx, &mut s);
            }
            core::mem::take(&mut s.graves)
        };
        for g in graves {
            // SAFETY: buried while we served; our batches are all run.
            unsafe { req::free_buried(g) };
        }
    }

    /// A submission starts (see `submitting`).
    #[inline]
    pub(crate) fn begin_submit(&self) {
        self.submitting.store(true, Ordering::SeqCst);
    }

    /// A submission ended: arms the cover it put off.
    #[inline]
    pub(crate) fn end_submit(&self, ctx: &Ctx) {
        self.submitting.store(false, Ordering::SeqCst);
        if self.cover_due.load(Ordering::SeqCst) && self.cover_due.swap(false, Ordering::SeqCst) {
            self.cover(ctx, &mut self.state.lock());
        }
    }

    /// Whether a submission under way takes over the cover (its end arms
    /// it). Both sides store, then look at the other's flag (SeqCst), so
    /// that one of them covers.
    fn left_to_submission(&self) -> bool {
        if !self.submitting.load(Ordering::SeqCst) {
            return false;
        }
        self.cover_due.store(true, Ordering::SeqCst);
        self.submitting.load(Ordering::SeqCst)
    }

    /// Arms the cover after an arm, unless the submission under way will.
    fn cover_after_arm(&self, ctx: &Ctx) {
        if !self.left_to_submission() {
            self.cover(ctx, &mut self.state.lock());
        }
    }

    /// Whether no request is armed in the set.
    pub(crate) fn is_idle(&self) -> bool {
        self.state.lock().armed == 0
    }

    /// The reactor's tick for a watched ring: arms a cover left to it.
    pub(crate) fn tick(&self, ctx: &Ctx) {
        let mut s = self.state.lock();
        if s.lazy {
            self.cover(ctx, &mut s);
        }
    }

    /// The server is about to look at the ring before sleeping: from here
    /// on, whoever changes the ring signals the eventfd (see `kick`).
    pub(crate) fn announce(&self) {
        self.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    pub(crate) fn quiet(&self) {
        self.sleeping.store(false, Ordering::Relaxed);
    }

    /// Wakes a sleeping server (called after a SeqCst fence that orders
    /// the ring change before this load).
    #[inline]
    pub(crate) fn kick(&self, ctx: &Ctx) {
        if self.sleeping.load(Ordering::Relaxed)
            && self.sleeping.swap(false, Ordering::SeqCst)
            && !ctx.is_lost()
            && os::eventfd_signal(self.wakefd.load(Ordering::Relaxed)) < 0
        {
            // Closed behind the engine's back.
            ctx.lose();
        }
    }

    /// One round of serving (the caller claimed the set): waits for events
    /// until the absolute CLOCK_MONOTONIC `until` (None: no limit, Some(0):
    /// no wait) with `sig` as the signal mask, then runs the ready
    /// requests. Returns the number of events, or -EINTR.
    pub(crate) fn serve(&self, ctx: &Ctx, until: Option<u64>, sig: Option<&libc::sigset_t>) -> i32 {
        if ctx.is_lost() {
            return 0;
        }
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; BATCH];
        let n = wait(self.epfd.load(Ordering::Relaxed), &mut evs, until, sig);
        self.quiet();
        self.fetched.store(os::now_ns(), Ordering::Relaxed);
        if n < 0 {
            if n == -libc::EBADF || n == -libc::EINVAL {
                ctx.lose();
            }
            return if n == -libc::EINTR { n } else { 0 };
        }
        for ev in &evs[..n as usize] {
            let (events, data) = (ev.events, ev.u64);
            if data != TAG_WAKE {
                // SAFETY: requests in the set are freed only through
                // `bury`, which keeps them while we serve.
                ready(ctx, unsafe { ReqPtr::from_addr(data) }, events);
            }
        }
        n
    }

    /// The ring just became forked: a sleeping server must now also wake
    /// for other processes' CQEs, which signal the ring fd.
    pub(crate) fn on_fork(&self, ctx: &Ctx) {
        let _s = self.state.lock();
        let epfd = self.epfd.load(Ordering::Relaxed);
        if epfd >= 0 {
            watch_ring_fd(epfd, ctx);
        }
    }

    /// In a forked child: the set and its eventfd are the parent's (the
    /// fds are copies), and so are the requests in it. Start afresh.
    ///
    /// # Safety
    /// Only from the atfork child handler.
    pub(crate) unsafe fn after_fork_child(&self) {
        // SAFETY: forwarded contract.
        unsafe { self.state.reset_after_fork() };
        let mut s = self.state.lock();
        super::fork::keep(core::mem::take(&mut s.graves));
        *s = State::new();
        os::close(self.epfd.swap(-1, Ordering::Relaxed));
        os::close(self.wakefd.swap(-1, Ordering::Relaxed));
        self.sleeping.store(false, Ordering::Relaxed);
        self.submitting.store(false, Ordering::Relaxed);
        self.cover_due.store(false, Ordering::Relaxed);
    }

    /// Closes the set (the ring is being freed); a `lost` ring's numbers
    /// are left alone.
    pub(crate) fn close(&self, lost: bool) {
        let epfd = self.epfd.swap(-1, Ordering::AcqRel);
        if epfd >= 0 {
            reactor::forget_set(epfd);
            let wake = self.wakefd.swap(-1, Ordering::Relaxed);
            if !lost {
                os::close(epfd);
                os::close(wake);
            }
        }
        for g in core::mem::take(&mut self.state.lock().graves) {
            // SAFETY: nothing serves a ring being freed.
            unsafe { req::free_buried(g) };
        }
    }
}

/// Puts a forked ring's fd in set `epfd`, edge-triggered: each post from
/// any process signals it (see `Ctx::wake_other_processes`).
fn watch_ring_fd(epfd: i32, ctx: &Ctx) -> i32 {
    match ctl(epfd, libc::EPOLL_CTL_ADD, ctx.efd, (libc::EPOLLIN | libc::EPOLLET) as u32, TAG_WAKE) {
        e if e == -libc::EEXIST => 0,
        r => r,
    }
}

/// Waits for events of the set `epfd` until `until` (see `serve`).
///
/// epoll_wait is never restarted: it fails with EINTR for a signal whose
/// handler ran, but also for a kernel ring's task work. Where a kernel ring
/// exists the sleep itself is a ppoll on the set, which the kernel restarts
/// unless a handler ran, and the events are fetched after it.
fn wait(epfd: i32, evs: &mut [libc::epoll_event], until: Option<u64>, sig: Option<&libc::sigset_t>) -> i32 {
    let sigp = sig.map_or(core::ptr::null(), |s| s as *const libc::sigset_t);
    // A sleep ends within SLEEP_CAP_NS, so that a set closed behind the
    // engine's back (which wakes nobody) is found by the next call.
    let rel =
        Some(until.map_or(SLEEP_CAP_NS, |u| if u == 0 { 0 } else { u.saturating_sub(os::now_ns()).min(SLEEP_CAP_NS) }));
    if rel != Some(0) && crate::sys::KERNEL_RING_MADE.load(Ordering::Relaxed) {
        let ts = rel.map(os::ns_to_timespec);
        let tsp = ts.as_ref().map_or(core::ptr::null(), |t| t as *const libc::timespec);
        let mut p = libc::pollfd { fd: epfd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one live pollfd, optional timespec and sigset.
        if unsafe { libc::ppoll(&mut p, 1, tsp, sigp) } < 0 {
            return os::errno();
        }
        return pwait2(epfd, evs, Some(0), core::ptr::null());
    }
    pwait2(epfd, evs, rel, sigp)
}

/// epoll_pwait2 for `rel` ns (None: no limit), or epoll_pwait with the
/// wait rounded up to milliseconds where the kernel or a seccomp profile
/// lacks it.
fn pwait2(epfd: i32, evs: &mut [libc::epoll_event], rel: Option<u64>, sigp: *const libc::sigset_t) -> i32 {
    static NO_PWAIT2: AtomicBool = AtomicBool::new(false);
    if !NO_PWAIT2.load(Ordering::Relaxed) {
        let ts = rel.map(os::ns_to_timespec);
        let tsp = ts.as_ref().map_or(core::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: a live event buffer, optional timespec and sigset (8
        // bytes, the kernel's sigset size).
        let n = unsafe {
            libc::syscall(libc::SYS_epoll_pwait2, epfd, evs.as_mut_ptr(), evs.len() as i32, tsp, sigp, 8usize)
        };
        if n >= 0 {
            return n as i32;
        }
        let e = os::errno();
        if e != -libc::ENOSYS && e != -libc::EPERM {
            return e;
        }
        NO_PWAIT2.store(true, Ordering::Relaxed);
    }
    let ms = rel.map_or(-1, |ns| ns.div_ceil(1_000_000).min(i32::MAX as u64) as i32);
    // SAFETY: as above.
    let n = unsafe { libc::epoll_pwait(epfd, evs.as_mut_ptr(), evs.len() as i32, ms, sigp) };
    if n < 0 {
        os::errno()
    } else {
        n
    }
}

/// A request's file is ready: run it, if a canceller did not take it.
fn ready(ctx: &Ctx, r: ReqPtr, events: u32) {
    if r.state().compare_exchange(st::ARMED, st::IDLE, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return;
    }
    // SAFETY: we won the request's state: it is ours.
    match super::opdef::get(unsafe { r.get() }.sqe.opcode).ready {
        Some(ready) => ready(ctx, r, events),
        None => req::issue(ctx, r, Mode::Reactor),
    }
}

/// Registers `r` (whose `file` is its own dup) in its ring's set, to run
/// again when the file reports `events` (epoll flags in full). -EPERM: the
/// file cannot be polled.
pub(crate) fn arm(ctx: &Ctx, r: ReqPtr, events: u32) -> Result<(), i32> {
    let rd = &ctx.ready;
    // SAFETY: the caller owns the request until it is armed.
    let q = unsafe { r.get() };
    let first = q.flags & rf::EPOLLED == 0;
    let epfd = {
        let mut s = rd.state.lock();
        let epfd = rd.open(ctx, &mut s)?;
        if first {
            s.armed += 1;
        }
        epfd
    };
    let fd = q.file;
    let poll_like = super::cancel::waits_like_poll(q);
    q.flags |= rf::EPOLLED;
    ctx.list(r, st::ARMED);
    // A worker whose op a cancel interrupted (and counted as cancelled)
    // while the op was on its way back here must not wait again.
    let ret = if ctx.is_lost() {
        -libc::EBADF
    } else if poll_like && super::io_wq::interrupted() {
        -libc::ECANCELED
    } else {
        ctl(epfd, if first { libc::EPOLL_CTL_ADD } else { libc::EPOLL_CTL_MOD }, fd, events, r.addr())
    };
    if ret < 0 {
        if (ret == -libc::EBADF || ret == -libc::EINVAL) && !os::anon_ok(epfd) {
            // The set was closed behind the engine's back.
            ctx.lose();
        }
        if !ctx.claim(r, st::ARMED, st::IDLE) {
            // A canceller took it meanwhile and completes it.
            return Ok(());
        }
        if first {
            q.flags &= !rf::EPOLLED;
            rd.state.lock().armed -= 1;
        }
        return Err(ret);
    }
    // `r` may be running on a server already: only the set is touched.
    rd.cover_after_arm(ctx);
    Ok(())
}

/// Registers a request that retries I/O once its file reports `mask`.
pub(crate) fn arm_io(ctx: &Ctx, r: ReqPtr, mask: u32) -> Result<(), i32> {
    arm(ctx, r, mask | libc::EPOLLONESHOT as u32)
}

/// Stops watching a request's file (its owner is about to complete it).
pub(crate) fn disarm(r: &req::Req) {
    let epfd = r.ctx().ready.epfd.load(Ordering::Acquire);
    if epfd >= 0 && !r.ctx().is_lost() {
        ctl(epfd, libc::EPOLL_CTL_DEL, r.file, 0, 0);
    }
}

/// Frees a request that was registered in its ring's set: unregisters and
/// closes its file now, and frees its memory now or, while the set is
/// being served, when the server lets go.
pub(crate) fn bury(ctx: &Ctx, r: ReqPtr) {
    // SAFETY: the caller owns the request and gives it up here.
    let q = unsafe { r.get() };
    disarm(q);
    req::put_file(ctx, q);
    let mut s = ctx.ready.state.lock();
    s.armed -= 1;
    if s.serving {
        s.graves.push(r);
        return;
    }
    drop(s);
    // SAFETY: unregistered, and no batch is in hand (nobody serves).
    unsafe { req::free_buried(r) };
}

/// The reactor saw the set's cover fire: serve the set unless a waiting
/// thread already does.
pub(crate) fn reactor_event(ctx: &Ctx) {
    let rd = &ctx.ready;
    {
        let mut s = rd.state.lock();
        s.covered = false;
        if s.serving {
            return;
        }
        // Nothing runs while a submission is under way; its end covers
        // the set again.
        if rd.left_to_submission() {
            return;
        }
        s.serving = true;
        s.quick = true;
    }
    while rd.serve(ctx, Some(0), None) == BATCH as i32 {}
    rd.release(ctx);
}

#[cfg(test)]
#[path = "readiness_tests.rs"]
mod tests;
