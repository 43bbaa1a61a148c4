//! Timeouts: TIMEOUT (relative, absolute on any of the three clocks,
//! count-based, multishot), TIMEOUT_REMOVE (remove or update, including
//! link timeouts) and LINK_TIMEOUT.
//!
//! Timers live on the reactor. A TIMEOUT may also complete once `off`
//! other CQEs were posted; the ring keeps those in `Inner::seq_timeouts`
//! and the CQ posting path completes them. Whoever moves a timeout out of
//! ARMED (timer, count, canceller) owns it.

use core::sync::atomic::Ordering;

use super::ctx::{Cqe, Ctx, Inner};
use super::opdef::{Guard, OpDef, BASE};
use super::req::{self, rf, st, Issued, Mode, OpData, Req, ReqPtr};
use super::{os, reactor};
use crate::sys::*;

#[derive(Clone, Copy)]
pub(crate) struct TimeoutData {
    /// The timespec, in nanoseconds (a duration, or a time with ABS).
    pub ns: u64,
    pub flags: u32,
    /// Completion count (TIMEOUT) or repeats left (multishot).
    pub off: u32,
    /// The CQ sequence a count-based timeout waits for, and the one it
    /// was armed at: the count is measured from there, unsigned, so that
    /// a count of 2^32 - 1 means "practically never" as in the kernel.
    pub target_seq: u32,
    pub base_seq: u32,
    /// LINK_TIMEOUT: `Req::id` of the request it guards.
    pub target: u64,
}

fn data(r: &mut Req) -> &mut TimeoutData {
    match &mut r.io {
        OpData::Timeout(t) => t,
        _ => unreachable!(),
    }
}

fn read_ts(addr: u64) -> Result<u64, i32> {
    let mut ts = [0i64; 2];
    os::copy_from_user(ts.as_mut_ptr() as *mut u8, addr, 16)?;
    if ts[0] < 0 || ts[1] < 0 {
        return Err(-libc::EINVAL);
    }
    Ok((ts[0] as u64).saturating_mul(1_000_000_000).saturating_add(ts[1] as u64))
}

fn two_clocks(flags: u32) -> bool {
    (flags & IORING_TIMEOUT_CLOCK_MASK).count_ones() > 1
}

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = r.sqe;
    let link = s.opcode == IORING_OP_LINK_TIMEOUT;
    if s.buf_index != 0 || s.len != 1 || s.file_index != 0 || (link && s.off != 0) {
        return Err(-libc::EINVAL);
    }
    let f = s.op_flags;
    let known =
        IORING_TIMEOUT_ABS | IORING_TIMEOUT_CLOCK_MASK | IORING_TIMEOUT_ETIME_SUCCESS | IORING_TIMEOUT_MULTISHOT;
    if f & !known != 0
        || two_clocks(f)
        || f & (IORING_TIMEOUT_MULTISHOT | IORING_TIMEOUT_ABS) == IORING_TIMEOUT_MULTISHOT | IORING_TIMEOUT_ABS
    {
        return Err(-libc::EINVAL);
    }
    let ns = read_ts(s.addr)?;
    r.io = OpData::Timeout(TimeoutData { ns, flags: f, off: s.off as u32, target_seq: 0, base_seq: 0, target: 0 });
    if f & IORING_TIMEOUT_ETIME_SUCCESS != 0 {
        r.flags |= rf::ETIME_OK;
    }
    Ok(())
}

/// When the timer fires, in CLOCK_MONOTONIC nanoseconds.
fn deadline(d: &TimeoutData) -> u64 {
    let now = os::now_ns();
    if d.flags & IORING_TIMEOUT_ABS == 0 {
        return now.saturating_add(d.ns);
    }
    let clock = match d.flags & IORING_TIMEOUT_CLOCK_MASK {
        IORING_TIMEOUT_BOOTTIME => libc::CLOCK_BOOTTIME,
        IORING_TIMEOUT_REALTIME => libc::CLOCK_REALTIME,
        _ => libc::CLOCK_MONOTONIC,
    };
    now.saturating_add(d.ns.saturating_sub(os::clock_ns(clock)))
}

/// Count-based: not multishot and a non-zero count.
fn counted(d: &TimeoutData) -> bool {
    d.off != 0 && d.flags & IORING_TIMEOUT_MULTISHOT == 0
}

/// The CQ sequence count-based timeouts compare against: CQEs posted,
/// less those of timeouts.
fn cq_seq(ctx: &Ctx, inner: &Inner) -> u32 {
    inner.cq_events.wrapping_sub(ctx.timeouts_fired.load(Ordering::Relaxed))
}

fn reached(seq: u32, d: &TimeoutData) -> bool {
    seq.wrapping_sub(d.base_seq) >= d.target_seq.wrapping_sub(d.base_seq)
}

/// Arms a TIMEOUT the caller owns (state IDLE): timer first, then the count
/// list, then ARMED; a timer that expires meanwhile is kept (see reactor).
fn arm(ctx: &Ctx, req: ReqPtr) -> Result<(), i32> {
    // SAFETY: the caller owns the request.
    let r = unsafe { req.get() };
    let d = *data(r);
    reactor::add_timer(req, deadline(&d))?;
    {
        let mut inner = ctx.inner.lock();
        if counted(&d) {
            let seq = cq_seq(ctx, &inner);
            let target = seq.wrapping_add(d.off);
            data(r).target_seq = target;
            data(r).base_seq = seq;
            let at = inner.seq_timeouts.partition_point(|t| {
                // SAFETY: listed timeouts are alive under the lock.
                let o = data(unsafe { t.get() }).target_seq;
                o.wrapping_sub(seq) <= target.wrapping_sub(seq)
            });
            inner.seq_timeouts.insert(at, req);
        }
        ctx.list_locked(&mut inner, req, st::ARMED);
    }
    if counted(&d) {
        ctx.flush_seq_timeouts();
    }
    Ok(())
}

fn issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    match arm(ctx, req) {
        Ok(()) => Issued::Queued,
        Err(e) => Issued::Done(e, 0),
    }
}

/// A cancel took a timeout back: from its timer and the count list.
fn disarm(req: ReqPtr) {
    reactor::del_timer(req);
    // SAFETY: the canceller won the request's state: it is ours.
    unlist_seq(unsafe { req.get() }.ctx(), req);
}

const TIMEOUTS: OpDef = OpDef { prep, creds: false, disarm, cancel_fd: false, ..BASE };
pub(crate) const TIMEOUT: OpDef = OpDef { issue, timer: Some(fire), ..TIMEOUTS };
pub(crate) const LINK_TIMEOUT: OpDef = OpDef {
    timer: Some(fire_linked),
    guard: Some(Guard { bind: prepare_linked, arm: arm_linked, disarm: disarm_linked }),
    ..TIMEOUTS
};

impl Ctx {
    /// Count-based timeouts whose count was reached move to `fired`; the
    /// caller holds `inner` and runs `run_fired` once it dropped it.
    pub(crate) fn collect_seq_timeouts(&self, inner: &mut Inner) {
        let seq = cq_seq(self, inner);
        let mut i = 0;
        while i < inner.seq_timeouts.len() {
            let t = inner.seq_timeouts[i];
            // SAFETY: listed timeouts are alive under the lock.
            if !reached(seq, data(unsafe { t.get() })) {
                break;
            }
            if t.state().compare_exchange(st::ARMED, st::IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                inner.seq_timeouts.remove(i);
                inner.fired.push(t);
                self.fired_pending.store(true, Ordering::Release);
            } else {
                i += 1;
            }
        }
    }

    /// Re-checks the count-based timeouts (after one was armed).
    fn flush_seq_timeouts(&self) {
        self.collect_seq_timeouts(&mut self.inner.lock());
        self.run_fired(Mode::Inline);
    }

    /// Completes count-based timeouts whose count was reached.
    pub(crate) fn run_fired(&self, mode: Mode) {
        if !self.fired_pending.load(Ordering::Acquire) {
            return;
        }
        let fired = {
            let mut inner = self.inner.lock();
            self.fired_pending.store(false, Ordering::Release);
            core::mem::take(&mut inner.fired)
        };
        for t in fired {
            reactor::del_timer(t);
            self.timeouts_fired.fetch_add(1, Ordering::AcqRel);
            req::complete(self, t, 0, 0, mode);
        }
    }
}

/// Removes a TIMEOUT its owner took from the count list (if there).
fn unlist_seq(ctx: &Ctx, req: ReqPtr) {
    let mut inner = ctx.inner.lock();
    if let Some(i) = inner.seq_timeouts.iter().position(|&t| t == req) {
        inner.seq_timeouts.remove(i);
    }
}

/// A timer fired (the reactor owns `r`).
fn fire(ctx: &Ctx, req: ReqPtr) {
    // SAFETY: the reactor won the state: the request is ours.
    let r = unsafe { req.get() };
    unlist_seq(ctx, req);
    ctx.timeouts_fired.fetch_add(1, Ordering::AcqRel);
    let d = data(r);
    let more = d.flags & IORING_TIMEOUT_MULTISHOT != 0 && (d.off == 0 || d.off > 1);
    if more {
        if d.off > 1 {
            d.off -= 1;
        }
        ctx.post_more(Cqe::new(r.sqe.user_data, -libc::ETIME, IORING_CQE_F_MORE), Mode::Reactor);
        if arm(ctx, req).is_ok() {
            return;
        }
    }
    req::complete(ctx, req, -libc::ETIME, 0, Mode::Reactor);
}

// ------------------------------------------------------------ link timeouts

/// Binds a link timeout to the request it guards (at that request's issue).
fn prepare_linked(lt: ReqPtr, target: u64) {
    // SAFETY: the link timeout belongs to its target's owner until armed.
    data(unsafe { lt.get() }).target = target;
}

/// Arms the link timeout after its request's first issue; if the request
/// already completed (and settled the timeout), frees it instead.
fn arm_linked(ctx: &Ctx, lt: ReqPtr) {
    let mut timers = reactor::lock_timers();
    if lt.state().compare_exchange(st::IDLE, st::ARMED, Ordering::AcqRel, Ordering::Acquire).is_err() {
        drop(timers);
        req::free(ctx, lt);
        return;
    }
    // SAFETY: armed under the timer lock, which every other party takes.
    let at = deadline(data(unsafe { lt.get() }));
    // Without a reactor the timer cannot fire: the timeout then stays
    // armed until its request completes.
    let _ = timers.insert(lt, at);
}

/// Settles the link timeout of a completing request: returns its
/// -ECANCELED CQE unless it already fired (or skips success).
fn disarm_linked(ctx: &Ctx, lt: ReqPtr) -> Option<Cqe> {
    let mut timers = reactor::lock_timers();
    // SAFETY: the timer lock orders us with arming and firing.
    let l = unsafe { lt.get() };
    // Disarmed is not failed: IOSQE_CQE_SKIP_SUCCESS hides the CQE.
    let cqe = (!l.sqe.has(IOSQE_CQE_SKIP_SUCCESS)).then(|| Cqe::new(l.sqe.user_data, -libc::ECANCELED, 0));
    if lt.state().compare_exchange(st::IDLE, st::CANCELED, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        // Not armed yet: its issuer frees it when it tries to arm it.
        return cqe;
    }
    if lt.state().compare_exchange(st::ARMED, st::CANCELED, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        timers.remove(lt);
        drop(timers);
        req::free(ctx, lt);
        return cqe;
    }
    None
}

/// A link timeout fired: cancel its request; -ETIME unless that request was
/// already running.
fn fire_linked(ctx: &Ctx, lt: ReqPtr) {
    // SAFETY: the reactor owns the fired timeout.
    let target = data(unsafe { lt.get() }).target;
    let res = match super::cancel::cancel_id(ctx, target, Mode::Reactor) {
        0 | -2 => -libc::ETIME,
        e => e,
    };
    // Not a failure: IOSQE_CQE_SKIP_SUCCESS hides this CQE, as the kernel's.
    // SAFETY: as above.
    unsafe { lt.get() }.flags |= rf::NOFAIL;
    req::complete(ctx, lt, res, 0, Mode::Reactor);
}

// ------------------------------------------------------------ TIMEOUT_REMOVE

#[derive(Clone, Copy)]
pub(crate) struct TimeoutRemove {
    user_data: u64,
    flags: u32,
    ns: u64,
}

fn remove_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = r.sqe;
    if s.has(IOSQE_FIXED_FILE) || s.has(IOSQE_BUFFER_SELECT) || s.buf_index != 0 || s.len != 0 || s.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    let f = s.op_flags;
    let mut ns = 0;
    if f & IORING_TIMEOUT_UPDATE_MASK != 0 {
        if two_clocks(f) || f & !(IORING_TIMEOUT_UPDATE_MASK | IORING_TIMEOUT_ABS) != 0 {
            return Err(-libc::EINVAL);
        }
        ns = read_ts(s.off)?;
    } else if f != 0 {
        return Err(-libc::EINVAL);
    }
    r.io = OpData::TimeoutRemove(TimeoutRemove { user_data: s.addr, flags: f, ns });
    Ok(())
}

/// Takes the armed TIMEOUT with `user_data` to `to`: Err(-EALREADY) if it
/// is firing, Err(-ENOENT) if there is none.
fn take(ctx: &Ctx, user_data: u64, to: u32) -> Result<ReqPtr, i32> {
    let inner = ctx.inner.lock();
    for q in inner.armed.iter() {
        // SAFETY: listed requests are alive while the lock is held; only
        // their SQE copy is read.
        let r = unsafe { q.get() };
        if r.sqe.opcode != IORING_OP_TIMEOUT || r.sqe.user_data != user_data {
            continue;
        }
        if q.state().compare_exchange(st::ARMED, to, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            return Ok(q);
        }
        return Err(-libc::EALREADY);
    }
    Err(-libc::ENOENT)
}

fn remove_issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let OpData::TimeoutRemove(tr) = unsafe { req.get() }.io else { unreachable!() };
    if tr.flags & IORING_LINK_TIMEOUT_UPDATE != 0 {
        return Issued::Done(update_linked(ctx, &tr), 0);
    }
    let update = tr.flags & IORING_TIMEOUT_UPDATE != 0;
    let t = match take(ctx, tr.user_data, if update { st::IDLE } else { st::CANCELED }) {
        Ok(t) => t,
        Err(e) => return Issued::Done(e, 0),
    };
    reactor::del_timer(t);
    unlist_seq(ctx, t);
    if !update {
        // The kernel posts the remove's CQE with its submit batch and the
        // cancelled timeout's from task work, after it.
        // SAFETY: issue functions own their request.
        let r = unsafe { req.get() };
        if !r.sqe.has(IOSQE_CQE_SKIP_SUCCESS) {
            ctx.post_all(&[Cqe::new(r.sqe.user_data, 0, 0)], mode);
        }
        r.flags |= rf::QUIET;
        req::complete(ctx, t, -libc::ECANCELED, 0, mode);
        return Issued::Done(0, 0);
    }
    // SAFETY: `take` made us its owner.
    let d = data(unsafe { t.get() });
    // An updated timeout no longer counts completions.
    d.off = 0;
    d.ns = tr.ns;
    d.flags = d.flags & !IORING_TIMEOUT_ABS | tr.flags & IORING_TIMEOUT_ABS;
    if let Err(e) = arm(ctx, t) {
        req::complete(ctx, t, e, 0, mode);
    }
    Issued::Done(0, 0)
}

/// IORING_LINK_TIMEOUT_UPDATE: re-times an armed link timeout.
fn update_linked(ctx: &Ctx, tr: &TimeoutRemove) -> i32 {
    let mut timers = reactor::lock_timers();
    let found = timers.find(|lt| {
        // SAFETY: armed link timeouts are alive under the timer lock.
        let r = unsafe { lt.get() };
        r.sqe.opcode == IORING_OP_LINK_TIMEOUT && core::ptr::eq(r.ctx, ctx) && r.sqe.user_data == tr.user_data
    });
    let Some(lt) = found else { return -libc::ENOENT };
    if lt.state().load(Ordering::Acquire) != st::ARMED {
        return -libc::EALREADY;
    }
    timers.remove(lt);
    // SAFETY: as above; the timer lock keeps everyone else out.
    let d = data(unsafe { lt.get() });
    d.ns = tr.ns;
    d.flags = d.flags & !IORING_TIMEOUT_ABS | tr.flags & IORING_TIMEOUT_ABS;
    let at = deadline(d);
    match timers.insert(lt, at) {
        Ok(()) => 0,
        Err(e) => e,
    }
}

pub(crate) const TIMEOUT_REMOVE: OpDef = OpDef { prep: remove_prep, issue: remove_issue, creds: false, ..BASE };
