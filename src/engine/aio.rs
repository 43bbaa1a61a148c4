//! O_DIRECT reads and writes in flight on the kernel's native AIO, as the
//! kernel's io_uring has them in flight: no thread waits for the device.
//!
//! The submitting thread hands the request to io_submit(2) with RWF_NOWAIT,
//! under its own credentials, on the request's dup of the file (see
//! `req::detach`). Its completions are posted by whichever thread looks
//! first: the submitting or waiting thread in its next io_uring_enter, or
//! the reactor, woken by an eventfd of this module's in its epoll set.
//! They read the context's completion ring in memory, as libaio does.
//! What AIO refuses at once, or completes with -EAGAIN or -EOPNOTSUPP (a
//! write that must allocate, a tag the device cannot spare), goes to a
//! worker that blocks on it, as io_uring punts the same requests to
//! io-wq. Only a dup found open O_DIRECT goes to AIO (see
//! `rw::aio_iocb`).
//!
//! AIO posts no fsnotify event (inotify IN_ACCESS/IN_MODIFY, fanotify
//! FAN_ACCESS/FAN_MODIFY) for its reads and writes, where io_uring and a
//! worker's preadv2/pwritev2 do: a limit docs/engine.md names.
//!
//! One AIO context per process, made on first use and destroyed with the
//! last ring. A request on AIO is listed in state INFLIGHT, which no
//! cancel takes (the kernel cannot take back I/O the device has either:
//! a cancel finds nothing, -ENOENT); the ring's exit waits for it.
//!
//! Who touches what: the context id, the eventfd and `INFLIGHT` are
//! atomics; the completion ring's head is written only under `REAP`; the
//! request belongs to the kernel from io_submit's success until its event
//! is taken from the ring, then to the thread that took it.
//!
//! LIBURING_RS_AIO=0 turns it off: O_DIRECT I/O then runs on workers.

use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicU8, Ordering};

use super::ctx::Ctx;
use super::lock::Mutex;
use super::req::{self, rf, st, Mode, ReqPtr};
use super::{io_wq, os, reactor, table};
use crate::sys::aio::{self as sys, AioContext, IoEvent, IOCB_FLAG_RESFD};

/// Requests the context holds in flight; past that, workers take them.
/// Modest, as the kernel counts twice that against the system-wide
/// aio-max-nr (65536) that programs using AIO themselves share.
const NR: u32 = 256;

/// The context id (0: none yet, or none to be had).
static ID: AtomicU64 = AtomicU64::new(0);
/// The eventfd AIO signals at each completion (engine number).
static EFD: AtomicI32 = AtomicI32::new(-1);
/// Requests submitted and not yet reaped.
static INFLIGHT: AtomicU32 = AtomicU32::new(0);
/// 0: not looked at; ON; OFF (LIBURING_RS_AIO=0, or io_setup refused).
static USE: AtomicU8 = AtomicU8::new(0);
const ON: u8 = 1;
const OFF: u8 = 2;
/// The `os::epoch` of `EFD`.
static EPOCH: AtomicU32 = AtomicU32::new(0);
/// Serialises making and destroying the context.
static MAKE: Mutex<()> = Mutex::new(());
/// Held to take events from the completion ring (one reaper at a time,
/// as whoever reaps writes its head) and to destroy the context, which
/// unmaps the ring. Never held while anything else is taken.
static REAP: Mutex<()> = Mutex::new(());
/// Set by a thread that found `REAP` taken (see `reap_all`).
static AGAIN: AtomicBool = AtomicBool::new(false);

/// The context and its eventfd, made on first use; None when AIO is off
/// or cannot be had here (a seccomp filter, aio-max-nr reached).
fn context() -> Option<(AioContext, i32)> {
    let id = ID.load(Ordering::Acquire);
    if id != 0 && EPOCH.load(Ordering::Relaxed) == os::epoch() {
        return Some((id, EFD.load(Ordering::Relaxed)));
    }
    if USE.load(Ordering::Relaxed) == OFF {
        return None;
    }
    make()
}

/// Makes the context (once) and, for the current `os::epoch`, its
/// eventfd: after engine fds were lost the old number may be the
/// program's now, and requests signalling it are found by the reactor's
/// periodic look.
#[cold]
fn make() -> Option<(AioContext, i32)> {
    let _g = MAKE.lock();
    let old = ID.load(Ordering::Acquire);
    if old != 0 && EPOCH.load(Ordering::Relaxed) == os::epoch() {
        return Some((old, EFD.load(Ordering::Relaxed)));
    }
    if USE.load(Ordering::Relaxed) == 0 {
        let on = crate::sys::env::get(c"LIBURING_RS_AIO") != Some(b"0");
        USE.store(if on { ON } else { OFF }, Ordering::Relaxed);
    }
    if USE.load(Ordering::Relaxed) == OFF {
        return None;
    }
    let efd = os::eventfd();
    if efd < 0 {
        return None;
    }
    let mut id = old;
    if id == 0 && sys::io_setup(NR, &mut id) < 0 {
        os::close(efd);
        // Refused for good (ENOSYS, EPERM), or for now (EAGAIN: the
        // system's aio-max-nr): workers serve either way.
        USE.store(OFF, Ordering::Relaxed);
        return None;
    }
    if reactor::add_aio(efd).is_err() {
        if old == 0 {
            sys::io_destroy(id);
        }
        os::close(efd);
        return None;
    }
    EFD.store(efd, Ordering::Relaxed);
    EPOCH.store(os::epoch(), Ordering::Relaxed);
    ID.store(id, Ordering::Release);
    Some((id, efd))
}

/// Requests on AIO now.
pub(crate) fn inflight() -> u32 {
    INFLIGHT.load(Ordering::Acquire)
}

/// Puts `req` (owned, detached, on its own dup) in flight on AIO; false
/// if it cannot go there, and the caller queues it for a worker.
pub(crate) fn submit(ctx: &Ctx, req: ReqPtr) -> bool {
    // SAFETY: the caller owns the request.
    let r = unsafe { req.get() };
    // A forked ring's sharers post for each other; AIO completions reach
    // only the process that submitted.
    if r.flags & rf::AIO == 0 || r.flags & rf::OWN_FILE == 0 || ctx.forked.load(Ordering::Relaxed) {
        return false;
    }
    // The context first: with AIO off, `aio_iocb`'s look at the dup's
    // flags would be wasted.
    let Some((id, efd)) = context() else { return false };
    let Some(mut cb) = super::rw::aio_iocb(r) else { return false };
    if INFLIGHT.fetch_add(1, Ordering::AcqRel) >= NR {
        INFLIGHT.fetch_sub(1, Ordering::AcqRel);
        return false;
    }
    cb.aio_data = req.addr();
    cb.aio_flags |= IOCB_FLAG_RESFD;
    cb.aio_resfd = efd as u32;
    // Noted on the program's fd, which routing looks at.
    let fd = if r.sqe.has(crate::sys::IOSQE_FIXED_FILE) { -1 } else { r.sqe.fd };
    // Listed first: the reactor may reap it before io_submit returns.
    ctx.list(req, st::INFLIGHT);
    let p = &mut cb as *mut sys::Iocb;
    // SAFETY: `cb` lives across the call; the buffers and iovecs it names
    // are the request's to give (the kernel copies the iovecs here).
    let n = unsafe { sys::io_submit(id, core::slice::from_ref(&p)) };
    if n == 1 {
        return true;
    }
    // Refused before it started (a file without non-blocking AIO, a full
    // context): still ours, and a worker does it.
    ctx.unlist(req);
    req.state().store(st::IDLE, Ordering::Release);
    INFLIGHT.fetch_sub(1, Ordering::AcqRel);
    if (n == -libc::EOPNOTSUPP || n == -libc::EINVAL) && fd >= 0 {
        super::rw::note_aio_refused(fd);
    }
    false
}

/// The reactor's part: its eventfd fired, or a periodic look while
/// requests are in flight.
pub(crate) fn reap() {
    if ID.load(Ordering::Acquire) != 0 && EPOCH.load(Ordering::Relaxed) == os::epoch() {
        os::eventfd_drain(EFD.load(Ordering::Relaxed));
    }
    reap_all();
}

/// A submitting or waiting thread's part (see wait.rs): what completed
/// by now is posted before the call returns or sleeps, as the kernel's
/// completions land in the CQ without a hand-off. The reactor's wake-up
/// then finds nothing left.
#[inline]
pub(crate) fn reap_here() {
    if INFLIGHT.load(Ordering::Relaxed) != 0 {
        reap_all();
    }
}

/// Posts every completed request. Any thread that holds no lock may call
/// it; whoever finds `REAP` taken leaves `AGAIN` set for its holder, who
/// looks once more after letting go, so that no event waits for the
/// reactor's periodic look.
fn reap_all() {
    let mut evs = [IoEvent::default(); 64];
    loop {
        AGAIN.store(true, Ordering::SeqCst);
        let Some(g) = REAP.try_lock() else { return };
        AGAIN.store(false, Ordering::SeqCst);
        let id = ID.load(Ordering::Acquire);
        if id == 0 {
            return;
        }
        // SAFETY: the context lives while `REAP` is held (`maybe_stop`
        // destroys it under `REAP`), and only `REAP`'s holder reaps.
        let n = match unsafe { sys::ring_take(id, &mut evs) } {
            Some(n) => n as i32,
            None => sys::io_getevents_now(id, &mut evs),
        };
        drop(g);
        for ev in &evs[..n.max(0) as usize] {
            done(ev);
        }
        if (n.max(0) as usize) < evs.len() && !AGAIN.load(Ordering::SeqCst) {
            return;
        }
    }
}

fn done(ev: &IoEvent) {
    // SAFETY: `aio_data` is the address of a request we submitted, which
    // stayed alive and ours-in-flight until this, its only event.
    let req = unsafe { ReqPtr::from_addr(ev.data) };
    // SAFETY: the request is the reactor's now.
    let ctx = unsafe { req.get() }.ctx();
    // Its ring cannot be freed while we post to it.
    let _ring = table::hold(ctx);
    ctx.unlist(req);
    req.state().store(st::IDLE, Ordering::Release);
    INFLIGHT.fetch_sub(1, Ordering::AcqRel);
    if ev.res == -(libc::EAGAIN as i64) || ev.res == -(libc::EOPNOTSUPP as i64) {
        // Would have blocked, or cannot go without blocking (the kernel's
        // io_write takes EOPNOTSUPP for EAGAIN too): a worker blocks on
        // it, as io-wq would. The file's next requests go straight there
        // for a while: the next write past the end or into a hole would
        // be refused too.
        // SAFETY: as above.
        let r = unsafe { req.get() };
        if !r.sqe.has(crate::sys::IOSQE_FIXED_FILE) {
            super::rw::note_aio_refused(r.sqe.fd);
        }
        io_wq::enqueue(ctx, req);
        return;
    }
    // SAFETY: as above.
    let (res, cflags) = super::rw::aio_result(unsafe { req.get() }, ev.res);
    req::complete(ctx, req, res, cflags, Mode::Reactor);
}

/// The last ring went: the context goes too once nothing is in flight,
/// so an idle process holds neither it nor its eventfd.
pub(crate) fn maybe_stop() {
    let _g = MAKE.lock();
    let id = ID.load(Ordering::Acquire);
    if id == 0 || INFLIGHT.load(Ordering::Acquire) != 0 || table::LIVE.load(Ordering::Acquire) != 0 {
        return;
    }
    ID.store(0, Ordering::Release);
    let efd = EFD.swap(-1, Ordering::Relaxed);
    reactor::forget_aio(efd);
    // A reaper that read the id before it went is done with the ring.
    drop(REAP.lock());
    sys::io_destroy(id);
    os::close(efd);
}

/// In a forked child: the context is the parent's (the child's io_submit
/// would be refused) and so are the requests in flight.
///
/// # Safety
/// Only from the atfork child handler.
pub(crate) unsafe fn after_fork_child() {
    // SAFETY: forwarded contract.
    unsafe {
        MAKE.reset_after_fork();
        REAP.reset_after_fork();
    }
    AGAIN.store(false, Ordering::Relaxed);
    ID.store(0, Ordering::Relaxed);
    INFLIGHT.store(0, Ordering::Relaxed);
    os::close(EFD.swap(-1, Ordering::Relaxed));
}
