//! The reactor: one thread per process that waits, on epoll, for the
//! readiness sets of rings nobody is waiting on (see `readiness.rs`: poll
//! requests, reads and writes that would block on pipes, sockets, ttys)
//! and, on a timerfd, for timeouts, and for the hang-up of the life pipes
//! of processes sharing rings (`fork.rs`). It also resets ring fds once their CQ
//! is drained. Started on first use; it stops when no engine ring is left
//! and nothing is armed.

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::ctx::Ctx;
use super::lock::Mutex;
use super::req::{st, ReqPtr};
use super::{os, table};

const TAG_WAKE: u64 = 1;
const TAG_TIMER: u64 = 2;
/// A ring's readiness set; the ring's handle index is above the tag bits.
const TAG_SET: u64 = 3;
/// The read end of a sharer's life pipe (`fork.rs`), its fd above the tag bits.
const TAG_DEATH: u64 = 4;
/// The eventfd native AIO signals (`aio.rs`).
const TAG_AIO: u64 = 5;
/// How often drained rings have their fd reset (well under the 1 ms the
/// readiness of an idle ring fd may lag).
const TICK_NS: u64 = 400_000;
/// The longest the reactor sleeps with timers pending, and without: how
/// soon it finds its fds closed behind its back (see `recover`).
const TIMER_CAP_MS: i32 = 100;
const IDLE_CAP_MS: i32 = 1000;

struct State {
    epfd: i32,
    wakefd: i32,
    timerfd: i32,
    running: bool,
    /// The reactor thread, until joined. A stopped one is joined before
    /// the next starts, so that one reuses its stack: repeated starts never
    /// leave two stacks mapped.
    thread: Option<libc::pthread_t>,
    /// Armed timers, soonest first.
    timers: Vec<(u64, ReqPtr)>,
    /// The expiry the timerfd is set to (u64::MAX: none).
    armed_at: u64,
    /// Rings whose fd is signalled (registry indexes).
    watched: Vec<u32>,
    /// Readiness sets registered.
    sets: u32,
    /// Life pipes of processes sharing rings with this one (read end,
    /// token): each hangs up when its process exits or execs.
    deaths: Vec<(i32, u32)>,
    /// The eventfd of `aio.rs`, or -1.
    aio: i32,
    /// The `os::epoch` of the fds above.
    epoch: u32,
}

static R: Mutex<State> = Mutex::new(State {
    epfd: -1,
    wakefd: -1,
    timerfd: -1,
    running: false,
    thread: None,
    timers: Vec::new(),
    armed_at: u64::MAX,
    watched: Vec::new(),
    sets: 0,
    deaths: Vec::new(),
    aio: -1,
    epoch: 0,
});

fn ctl(epfd: i32, op: i32, fd: i32, events: u32, data: u64) -> i32 {
    let mut ev = libc::epoll_event { events, u64: data };
    // SAFETY: a live epoll_event; the kernel checks the fds.
    os::cvt32(unsafe { libc::epoll_ctl(epfd, op, fd, &mut ev) })
}

fn set_timer(s: &mut State, at: u64) {
    if at == s.armed_at {
        return;
    }
    s.armed_at = at;
    let t = if at == u64::MAX { libc::timespec { tv_sec: 0, tv_nsec: 0 } } else { os::ns_to_timespec(at.max(1)) };
    let its = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: t };
    // SAFETY: live itimerspec; the timerfd is ours.
    unsafe { libc::timerfd_settime(s.timerfd, libc::TFD_TIMER_ABSTIME, &its, core::ptr::null_mut()) };
}

fn next_expiry(s: &State) -> u64 {
    let mut at = s.timers.first().map_or(u64::MAX, |t| t.0);
    if !s.watched.is_empty() {
        at = at.min(os::now_ns() + TICK_NS);
    }
    at
}

/// The reactor's epoll set, wake eventfd and timerfd, at engine numbers.
fn open_fds() -> Result<(i32, i32, i32), i32> {
    // SAFETY: plain fd creation.
    let epfd = os::high(os::cvt32(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }));
    if epfd < 0 {
        return Err(epfd);
    }
    let wakefd = os::eventfd();
    // SAFETY: plain fd creation.
    let timerfd = os::high(os::cvt32(unsafe {
        libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC | libc::TFD_NONBLOCK)
    }));
    if wakefd < 0 || timerfd < 0 {
        close_fds(epfd, wakefd, timerfd);
        return Err(if wakefd < 0 { wakefd } else { timerfd });
    }
    ctl(epfd, libc::EPOLL_CTL_ADD, wakefd, libc::EPOLLIN as u32, TAG_WAKE);
    ctl(epfd, libc::EPOLL_CTL_ADD, timerfd, libc::EPOLLIN as u32, TAG_TIMER);
    Ok((epfd, wakefd, timerfd))
}

fn close_fds(epfd: i32, wakefd: i32, timerfd: i32) {
    os::close(epfd);
    os::close(wakefd);
    os::close(timerfd);
}

/// Whether the reactor's fds are still its own (see `os::anon_ok`).
fn fds_ok(s: &State) -> bool {
    os::anon_ok(s.epfd) && os::anon_ok(s.wakefd) && os::anon_ok(s.timerfd)
}

/// Starts the reactor thread if it is not running (with fds of the
/// current epoch).
fn ensure(s: &mut State) -> Result<(), i32> {
    if s.running {
        if s.epoch != os::epoch() {
            recover(s);
        }
        return Ok(());
    }
    if let Some(t) = s.thread.take() {
        // It takes no lock once stopped, so joining under ours is safe.
        os::join(t);
    }
    let (epfd, wakefd, timerfd) = open_fds()?;
    let thread = match os::spawn_joinable(main, core::ptr::null_mut()) {
        Ok(t) => t,
        Err(e) => {
            close_fds(epfd, wakefd, timerfd);
            return Err(e);
        }
    };
    s.epfd = epfd;
    s.wakefd = wakefd;
    s.timerfd = timerfd;
    s.armed_at = u64::MAX;
    s.epoch = os::epoch();
    s.running = true;
    s.thread = Some(thread);
    add_deaths(s);
    add_aio_fd(s);
    Ok(())
}

/// Puts the AIO eventfd (if any) into the reactor's epoll set.
fn add_aio_fd(s: &State) {
    if s.aio >= 0 {
        ctl(s.epfd, libc::EPOLL_CTL_ADD, s.aio, libc::EPOLLIN as u32, TAG_AIO);
    }
}

/// Has the reactor reap native AIO completions signalled on `efd`.
pub(crate) fn add_aio(efd: i32) -> Result<(), i32> {
    let mut s = R.lock();
    ensure(&mut s)?;
    s.aio = efd;
    add_aio_fd(&s);
    Ok(())
}

/// The AIO eventfd is about to be closed.
pub(crate) fn forget_aio(efd: i32) {
    let mut s = R.lock();
    if s.aio == efd {
        if s.running {
            ctl(s.epfd, libc::EPOLL_CTL_DEL, efd, 0, 0);
        }
        s.aio = -1;
    }
}

/// Puts the life pipes into a new epoll set.
fn add_deaths(s: &State) {
    for &(fd, _) in s.deaths.iter() {
        add_death(s, fd);
    }
}

/// Puts life pipe `fd` into the reactor's epoll set.
fn add_death(s: &State, fd: i32) {
    ctl(s.epfd, libc::EPOLL_CTL_ADD, fd, libc::EPOLLIN as u32, TAG_DEATH | (fd as u64) << 3);
}

/// Engine fds were lost (`os::numbers_lost`), the reactor's among them or
/// not: it takes fresh ones, leaving the old numbers alone; timers stay.
/// The rings of the old epoch, whose sets sat in the old set, are dead.
#[cold]
fn recover(s: &mut State) {
    let Ok((epfd, wakefd, timerfd)) = open_fds() else { return };
    s.epfd = epfd;
    s.wakefd = wakefd;
    s.timerfd = timerfd;
    s.armed_at = u64::MAX;
    s.epoch = os::epoch();
    add_deaths(s);
    add_aio_fd(s);
}

extern "C" fn main(_: *mut core::ffi::c_void) -> *mut core::ffi::c_void {
    os::name_thread("uring-rs-react", false);
    let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 64];
    loop {
        let (epfd, cap) = {
            let mut s = R.lock();
            // An AIO context outlives its last ring only when a ring came
            // up as it was being destroyed: its eventfd is ours to watch.
            let aio = super::aio::inflight() != 0;
            if table::LIVE.load(Ordering::Acquire) == 0
                && s.timers.is_empty()
                && s.watched.is_empty()
                && s.sets == 0
                && !aio
                && s.aio < 0
            {
                if fds_ok(&s) {
                    close_fds(s.epfd, s.wakefd, s.timerfd);
                }
                // No ring is left to post to.
                for (fd, _) in core::mem::take(&mut s.deaths) {
                    os::close(fd);
                }
                s.epfd = -1;
                s.running = false;
                drop(s);
                super::lock::thread_ended();
                return core::ptr::null_mut();
            }
            if s.epoch != os::epoch() {
                recover(&mut s);
            }
            // An earlier expiry already set only costs a spare wake-up;
            // resetting the timerfd on every pass would cost a system call.
            let at = next_expiry(&s);
            if at < s.armed_at {
                set_timer(&mut s, at);
            }
            // AIO in flight is looked at now and then without a signal: its
            // eventfd may have been closed behind the engine's back.
            (s.epfd, if s.timers.is_empty() && !aio { IDLE_CAP_MS } else { TIMER_CAP_MS })
        };
        // The wait ends within `cap`: fds closed behind the engine's back
        // wake nobody, and are found when it ends with nothing to do.
        // SAFETY: a live event buffer of evs.len() entries.
        let n = os::cvt32(unsafe { libc::epoll_wait(epfd, evs.as_mut_ptr(), evs.len() as i32, cap) });
        if n == 0 || (n < 0 && n != -libc::EINTR) {
            super::aio::reap();
            let s = R.lock();
            if s.epoch == os::epoch() && !fds_ok(&s) {
                os::numbers_lost();
            }
            continue;
        }
        for ev in evs.iter().take(n.max(0) as usize) {
            let data = ev.u64;
            match data & 7 {
                TAG_WAKE => {
                    os::eventfd_drain(R.lock().wakefd);
                }
                TAG_TIMER => expire(),
                TAG_AIO => super::aio::reap(),
                TAG_DEATH => {
                    let fd = (data >> 3) as i32;
                    let tok = {
                        let mut s = R.lock();
                        let Some(i) = s.deaths.iter().position(|d| d.0 == fd) else { continue };
                        ctl(s.epfd, libc::EPOLL_CTL_DEL, fd, 0, 0);
                        os::close(fd);
                        s.deaths.swap_remove(i).1
                    };
                    // With no lock held: it takes rings' completion locks.
                    super::fork::bury(tok);
                }
                _ => {
                    if let Some(ring) = table::lookup_index((data >> 3) as usize) {
                        super::readiness::reactor_event(ring.ctx());
                    }
                }
            }
        }
    }
}

/// Registers a ring's readiness set (ring handle `idx`), covered; returns
/// the reactor's epoll fd, which stays valid while any set is registered.
pub(crate) fn add_set(set: i32, idx: u32) -> Result<i32, i32> {
    let mut s = R.lock();
    ensure(&mut s)?;
    let add = |s: &State| {
        ctl(s.epfd, libc::EPOLL_CTL_ADD, set, (libc::EPOLLIN | libc::EPOLLONESHOT) as u32, TAG_SET | (idx as u64) << 3)
    };
    let mut r = add(&s);
    if r < 0 && !fds_ok(&s) {
        os::numbers_lost();
        recover(&mut s);
        r = add(&s);
    }
    if r < 0 {
        return Err(r);
    }
    s.sets += 1;
    Ok(s.epfd)
}

/// Re-arms a set's one-shot registration; false if that failed.
pub(crate) fn cover_set(epfd: i32, set: i32, idx: u32) -> bool {
    ctl(epfd, libc::EPOLL_CTL_MOD, set, (libc::EPOLLIN | libc::EPOLLONESHOT) as u32, TAG_SET | (idx as u64) << 3) == 0
}

/// Unregisters a set about to be closed (a forked child may hold it open).
pub(crate) fn forget_set(set: i32) {
    let mut s = R.lock();
    if s.epfd >= 0 {
        ctl(s.epfd, libc::EPOLL_CTL_DEL, set, 0, 0);
    }
    s.sets -= 1;
}

/// Arms a timer for `r` (state ARMED) at CLOCK_MONOTONIC `at`.
pub(crate) fn add_timer(r: ReqPtr, at: u64) -> Result<(), i32> {
    let mut s = R.lock();
    ensure(&mut s)?;
    insert_timer(&mut s, r, at);
    Ok(())
}

fn insert_timer(s: &mut State, r: ReqPtr, at: u64) {
    let i = s.timers.partition_point(|t| t.0 <= at);
    s.timers.insert(i, (at, r));
    if at < s.armed_at {
        set_timer(s, at);
    }
}

/// The timer list, locked (link timeouts change state under it).
pub(crate) struct Timers(super::lock::Guard<'static, State>);

pub(crate) fn lock_timers() -> Timers {
    Timers(R.lock())
}

impl Timers {
    pub(crate) fn insert(&mut self, r: ReqPtr, at: u64) -> Result<(), i32> {
        ensure(&mut self.0)?;
        insert_timer(&mut self.0, r, at);
        Ok(())
    }

    pub(crate) fn remove(&mut self, r: ReqPtr) -> bool {
        remove(&mut self.0, r)
    }

    /// The first armed timer `pick` accepts.
    pub(crate) fn find(&self, mut pick: impl FnMut(ReqPtr) -> bool) -> Option<ReqPtr> {
        self.0.timers.iter().map(|t| t.1).find(|&r| pick(r))
    }
}

fn remove(s: &mut State, r: ReqPtr) -> bool {
    match s.timers.iter().position(|t| t.1 == r) {
        Some(i) => {
            s.timers.remove(i);
            true
        }
        None => false,
    }
}

/// Takes `r` off the timers; false if it already fired.
pub(crate) fn del_timer(r: ReqPtr) -> bool {
    remove(&mut R.lock(), r)
}

/// Fires every timer that is due, and ticks watched rings.
fn expire() {
    let now = os::now_ns();
    let (due, watched) = {
        let mut s = R.lock();
        let mut buf = [0u8; 8];
        // SAFETY: reads the expiration count into a live buffer.
        unsafe { libc::read(s.timerfd, buf.as_mut_ptr() as *mut core::ffi::c_void, 8) };
        s.armed_at = u64::MAX;
        let n = s.timers.partition_point(|t| t.0 <= now);
        let mut due = Vec::new();
        let mut arming = Vec::new();
        for (_, r) in s.timers.drain(..n) {
            // SAFETY: timers in the list are alive while the lock is held.
            let guard = super::opdef::get(unsafe { r.get() }.sqe.opcode).guard.is_some();
            let to = if guard { st::FIRING } else { st::IDLE };
            match r.state().compare_exchange(st::ARMED, to, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => due.push(r),
                // Still being armed by its issuer: fire it on the next tick.
                Err(st::IDLE) => arming.push(r),
                // A canceller owns it.
                Err(_) => {}
            }
        }
        for r in arming {
            insert_timer(&mut s, r, now + TICK_NS);
        }
        (due, s.watched.clone())
    };
    for r in due {
        // SAFETY: we won the state: the request is ours.
        let ctx = unsafe { r.get() }.ctx();
        let _ring = table::hold(ctx);
        // SAFETY: as above.
        let def = super::opdef::get(unsafe { r.get() }.sqe.opcode);
        if let Some(fire) = def.timer {
            fire(ctx, r);
        }
    }
    let mut done = Vec::new();
    for idx in watched {
        if let Some(ring) = table::lookup_index(idx as usize) {
            let ctx = ring.ctx();
            ctx.flush_overflow();
            let keep = {
                let _pin = ctx.pin_rings();
                ctx.reset_fd() || ctx.overflow_pending()
            };
            ctx.ready.tick(ctx);
            if keep {
                continue;
            }
        }
        done.push(idx);
    }
    if done.is_empty() {
        return;
    }
    let mut s = R.lock();
    s.watched.retain(|i| !done.contains(i));
    // A ring signalled again after its reset found itself still listed and
    // did not add itself: put it back.
    for idx in done {
        if let Some(ring) = table::lookup_index(idx as usize) {
            if ring.ctx().fd_signalled.load(Ordering::SeqCst) && !s.watched.contains(&idx) {
                s.watched.push(idx);
            }
        }
    }
}

/// A ring's fd became signalled: reset it once its CQ drains.
pub(crate) fn watch_ring(ctx: &Ctx) {
    let idx = ctx.handle.load(Ordering::Relaxed);
    let mut s = R.lock();
    if ensure(&mut s).is_err() {
        return;
    }
    if !s.watched.contains(&idx) {
        s.watched.push(idx);
        let at = next_expiry(&s);
        if at < s.armed_at {
            set_timer(&mut s, at);
        }
    }
}

/// Watches `fd`, the read end of the life pipe of the process with
/// token `tok` (see `fork.rs`), which it closes once that hangs up.
pub(crate) fn watch_death(fd: i32, tok: u32) {
    let mut s = R.lock();
    s.deaths.push((fd, tok));
    if s.running && s.epoch == os::epoch() {
        add_death(&s, fd);
    } else {
        // Without a reactor the death goes unseen (its fds are kept).
        let _ = ensure(&mut s);
    }
}

/// In a forked child: adds a life pipe to watch once the reactor starts
/// (see `start_for_deaths`).
pub(crate) fn keep_death(fd: i32, tok: u32) {
    R.lock().deaths.push((fd, tok));
}

/// Starts the reactor if it has life pipes to watch.
pub(crate) fn start_for_deaths() {
    let mut s = R.lock();
    if !s.deaths.is_empty() {
        let _ = ensure(&mut s);
    }
}

/// A ring is going away.
pub(crate) fn unwatch_ring(ctx: &Ctx) {
    let idx = ctx.handle.load(Ordering::Relaxed);
    R.lock().watched.retain(|&i| i != idx);
}

/// Wakes the reactor to exit if nothing is left for it; true if it was
/// told, and `wait_stopped` should wait until it has closed its fds, so
/// that the last ring's teardown leaves none.
pub(crate) fn maybe_stop() -> bool {
    let s = R.lock();
    // With its fds gone it finds that itself, within IDLE_CAP_MS.
    s.running && os::anon_ok(s.wakefd) && os::eventfd_signal(s.wakefd) >= 0
}

/// Waits for the reactor `maybe_stop` told to stop (if it did) to end.
pub(crate) fn wait_stopped(told: bool) {
    if !told {
        return;
    }
    super::lock::wait_threads_ended(|| table::LIVE.load(Ordering::Acquire) != 0 || !R.lock().running);
    let mut s = R.lock();
    if table::LIVE.load(Ordering::Acquire) != 0 || s.running {
        return;
    }
    if let Some(t) = s.thread.take() {
        drop(s);
        os::join(t);
    }
}

/// In a forked child: the reactor thread did not come along.
///
/// # Safety
/// Only from the atfork child handler.
pub(crate) unsafe fn after_fork_child() {
    // SAFETY: forwarded contract.
    unsafe { R.reset_after_fork() };
    let mut s = R.lock();
    os::close(s.epfd);
    os::close(s.wakefd);
    os::close(s.timerfd);
    // The parent's requests are not ours to touch: forget them.
    super::fork::keep(core::mem::take(&mut s.timers));
    s.epfd = -1;
    s.wakefd = -1;
    s.timerfd = -1;
    s.running = false;
    s.thread = None;
    s.armed_at = u64::MAX;
    s.watched.clear();
    s.sets = 0;
    s.aio = -1;
}
