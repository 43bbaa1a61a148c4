//! Timeouts. This part: IORING_OP_LINK_TIMEOUT, which guards the request
//! linked before it. It is armed when that request is first issued and
//! settled when it completes; all its state changes happen under the
//! reactor's timer lock.

use core::sync::atomic::Ordering;

use super::ctx::{Cqe, Ctx};
use super::req::{self, st, Mode, OpData, ReqPtr};
use super::{os, reactor};

pub(crate) struct TimeoutData {
    /// Duration (relative) or deadline (absolute), nanoseconds.
    pub ns: u64,
    pub flags: u32,
    /// LINK_TIMEOUT: `Req::id` of the request it guards.
    pub target: u64,
}

fn data(r: &req::Req) -> &TimeoutData {
    match &r.io {
        OpData::Timeout(t) => t,
        _ => unreachable!("timeout request without timeout data"),
    }
}

/// Binds a link timeout to the request it guards (at that request's issue).
pub(crate) fn prepare_linked(lt: ReqPtr, target: u64) {
    // SAFETY: the link timeout belongs to its target's owner until armed.
    if let OpData::Timeout(t) = &mut unsafe { lt.get() }.io {
        t.target = target;
    }
}

/// Arms the link timeout after its request's first issue; if the request
/// already completed (and settled the timeout), frees it instead.
pub(crate) fn arm_linked(ctx: &Ctx, lt: ReqPtr) {
    let mut timers = reactor::lock_timers();
    if lt.state().compare_exchange(st::IDLE, st::ARMED, Ordering::AcqRel, Ordering::Acquire).is_err() {
        drop(timers);
        req::free(ctx, lt);
        return;
    }
    // SAFETY: armed under the timer lock, which every other party takes.
    let at = os::now_ns().saturating_add(data(unsafe { lt.get() }).ns);
    if timers.insert(lt, at).is_err() {
        // Without a reactor the timeout cannot fire: it stays armed until
        // its request completes.
    }
}

/// Settles the link timeout of a completing request: returns its
/// -ECANCELED CQE unless it already fired.
pub(crate) fn disarm_linked(ctx: &Ctx, lt: ReqPtr) -> Option<Cqe> {
    let mut timers = reactor::lock_timers();
    // SAFETY: the timer lock orders us with arming and firing.
    let ud = unsafe { lt.get() }.sqe.user_data;
    if lt.state().compare_exchange(st::IDLE, st::CANCELED, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        // Not armed yet: its issuer frees it when it tries to arm it.
        return Some(Cqe::new(ud, -libc::ECANCELED, 0));
    }
    if lt.state().compare_exchange(st::ARMED, st::CANCELED, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        timers.remove(lt);
        drop(timers);
        req::free(ctx, lt);
        return Some(Cqe::new(ud, -libc::ECANCELED, 0));
    }
    None
}

/// A timer fired (the reactor owns `r`).
pub(crate) fn fire(ctx: &Ctx, r: ReqPtr) {
    // SAFETY: the reactor won the state: the request is ours.
    let target = data(unsafe { r.get() }).target;
    let res = match super::cancel::cancel_id(ctx, target, Mode::Reactor) {
        0 => -libc::ETIME,
        e => e,
    };
    let res = if res == -libc::ENOENT { -libc::ETIME } else { res };
    req::complete(ctx, r, res, 0, Mode::Reactor);
}
