//! POLL_ADD (one-shot and multishot) and POLL_REMOVE (remove or update).
//!
//! A poll whose file is ready already completes inline; otherwise the
//! request's own dup of the file goes into the ring's readiness set:
//! one-shot with EPOLLONESHOT, multishot edge-triggered (each wake-up posts
//! a CQE with IORING_CQE_F_MORE) unless IORING_POLL_ADD_LEVEL.

use core::sync::atomic::Ordering;

use super::ctx::{Cqe, Ctx};
use super::opdef::{OpDef, BASE};
use super::req::{self, st, Issued, Mode, OpData, Req, ReqPtr};
use crate::sys::*;

/// Reported whatever was asked for, as in the kernel.
const ALWAYS: u32 = (libc::EPOLLERR | libc::EPOLLHUP | libc::EPOLLRDHUP) as u32 | libc::POLLNVAL as u32;
const BEHAVIOUR: u32 = (libc::EPOLLEXCLUSIVE | libc::EPOLLONESHOT | libc::EPOLLET) as u32;

/// The epoll mask from an SQE's poll32_events and add flags.
fn parse_events(events: u32, flags: u32) -> u32 {
    let mut e = events & (0xffff | libc::EPOLLEXCLUSIVE as u32);
    if flags & IORING_POLL_ADD_MULTI == 0 {
        e |= libc::EPOLLONESHOT as u32;
    }
    if flags & IORING_POLL_ADD_LEVEL == 0 {
        e |= libc::EPOLLET as u32;
    }
    e
}

fn events(r: &Req) -> u32 {
    match r.io {
        OpData::Poll(e) => e,
        _ => unreachable!(),
    }
}

fn add_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.buf_index != 0 || s.off != 0 || s.addr != 0 {
        return Err(-libc::EINVAL);
    }
    if s.len & !(IORING_POLL_ADD_MULTI | IORING_POLL_ADD_LEVEL) != 0 {
        return Err(-libc::EINVAL);
    }
    if s.len & IORING_POLL_ADD_MULTI != 0 && s.has(IOSQE_CQE_SKIP_SUCCESS) {
        return Err(-libc::EINVAL);
    }
    r.io = OpData::Poll(parse_events(s.op_flags, s.len));
    Ok(())
}

/// What is ready among what the request waits for (0: nothing yet).
fn ready_now(fd: i32, ev: u32) -> u32 {
    let mut p = libc::pollfd { fd, events: (ev & 0xffff) as i16, revents: 0 };
    // SAFETY: a live pollfd; zero timeout.
    if unsafe { libc::poll(&mut p, 1, 0) } <= 0 {
        return 0;
    }
    p.revents as u16 as u32 & (ev | ALWAYS)
}

fn multishot(ev: u32) -> bool {
    ev & libc::EPOLLONESHOT as u32 == 0
}

/// Completes at once if the file is ready, else arms the request on the
/// reactor. Multishot requests post each ready mask and stay armed.
fn arm(ctx: &Ctx, req: ReqPtr) -> Issued {
    // SAFETY: the caller owns the request.
    let r = unsafe { req.get() };
    let ev = events(r);
    let mask = ready_now(r.file, ev);
    if mask != 0 {
        if !multishot(ev) {
            return Issued::Done(mask as i32, 0);
        }
        // The kernel posts this first multishot CQE from task work too, so
        // a DEFER_TASKRUN ring shows it (with any wake-ups after it) only
        // when the submitter waits for events.
        ctx.post_more(Cqe::new(r.sqe.user_data, mask as i32, IORING_CQE_F_MORE), Mode::Reactor);
    }
    if let Err(e) = req::take_file(r) {
        return Issued::Done(e, 0);
    }
    match super::readiness::arm(ctx, req, ev | ALWAYS) {
        Ok(()) => Issued::Queued,
        // A file epoll cannot watch is always ready, as poll(2) says.
        Err(e) if e == -libc::EPERM => {
            Issued::Done((ev & (libc::EPOLLIN | libc::EPOLLOUT) as u32 | libc::EPOLLRDNORM as u32 & ev) as i32, 0)
        }
        Err(e) => Issued::Done(e, 0),
    }
}

fn add_issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    arm(ctx, req)
}

/// A server of the ring's set saw `revents` on a poll request it now owns.
fn event(ctx: &Ctx, req: ReqPtr, revents: u32) {
    // SAFETY: the server won the request's state: it is ours.
    let r = unsafe { req.get() };
    let ev = events(r);
    let mask = (revents & (ev | ALWAYS) & !BEHAVIOUR) as i32;
    if !multishot(ev) {
        return req::complete(ctx, req, mask, 0, Mode::Reactor);
    }
    let c = Cqe::new(r.sqe.user_data, mask, IORING_CQE_F_MORE);
    // Back to armed before posting, so a cancel in between finds it.
    ctx.list(req, st::ARMED);
    ctx.post_more(c, Mode::Reactor);
}

pub(crate) const POLL_ADD: OpDef = OpDef {
    prep: add_prep,
    issue: add_issue,
    needs_file: true,
    creds: false,
    ready: Some(event),
    indexed: true,
    ..BASE
};

/// POLL_REMOVE's arguments.
#[derive(Clone, Copy)]
pub(crate) struct PollUpdate {
    old: u64,
    new: Option<u64>,
    events: Option<u32>,
}

fn remove_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.buf_index != 0 || s.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    let f = s.len;
    if f & !(IORING_POLL_UPDATE_EVENTS | IORING_POLL_UPDATE_USER_DATA | IORING_POLL_ADD_MULTI) != 0
        || f == IORING_POLL_ADD_MULTI
    {
        return Err(-libc::EINVAL);
    }
    if f & IORING_POLL_UPDATE_USER_DATA == 0 && s.off != 0 {
        return Err(-libc::EINVAL);
    }
    if f & IORING_POLL_UPDATE_EVENTS == 0 && s.op_flags != 0 {
        return Err(-libc::EINVAL);
    }
    r.io = OpData::PollUpdate(PollUpdate {
        old: s.addr,
        new: (f & IORING_POLL_UPDATE_USER_DATA != 0).then_some(s.off),
        events: (f & IORING_POLL_UPDATE_EVENTS != 0).then_some(parse_events(s.op_flags, f)),
    });
    Ok(())
}

/// Finds the armed poll with `user_data` and takes it: Ok(poll) if taken,
/// Err(-EALREADY) if it is completing, Err(-ENOENT) if there is none.
fn take(ctx: &Ctx, user_data: u64) -> Result<ReqPtr, i32> {
    let inner = ctx.inner.lock();
    let Some(&(_, addr)) = inner.polls.range((user_data, 0)..=(user_data, usize::MAX)).next() else {
        return Err(-libc::ENOENT);
    };
    // SAFETY: indexed polls are listed, so alive while the lock is held.
    let q = unsafe { ReqPtr::from_addr(addr as u64) };
    if q.state().compare_exchange(st::ARMED, st::IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        return Ok(q);
    }
    Err(-libc::EALREADY)
}

fn remove_issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let OpData::PollUpdate(u) = unsafe { req.get() }.io else { unreachable!() };
    let target = match take(ctx, u.old) {
        Ok(t) => t,
        Err(e) => return Issued::Done(e, 0),
    };
    // SAFETY: `take` made us the poll's owner.
    let t = unsafe { target.get() };
    if u.new.is_none() && u.events.is_none() {
        super::readiness::disarm(t);
        req::complete(ctx, target, -libc::ECANCELED, 0, mode);
        return Issued::Done(0, 0);
    }
    if let Some(ud) = u.new {
        let mut inner = ctx.inner.lock();
        let addr = target.addr() as usize;
        if inner.polls.remove(&(t.sqe.user_data, addr)) {
            inner.polls.insert((ud, addr));
        }
        t.sqe.user_data = ud;
    }
    if let Some(e) = u.events {
        let old = events(t);
        t.io = OpData::Poll(old & !0xffff | e & 0xffff);
    }
    match arm(ctx, target) {
        Issued::Queued => {}
        Issued::Done(res, f) => req::complete(ctx, target, res, f, mode),
        Issued::Again | Issued::Blocking => unreachable!(),
    }
    Issued::Done(0, 0)
}

pub(crate) const POLL_REMOVE: OpDef = OpDef { prep: remove_prep, issue: remove_issue, creds: false, ..BASE };
