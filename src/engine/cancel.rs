//! Cancellation: finding in-flight requests and taking them back from the
//! worker queue or the reactor.

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::ctx::Ctx;
use super::req::{self, fail_chain, rf, st, Mode, ReqPtr};
use super::{io_wq, reactor};

/// Takes a matched request from wherever it waits; true if we now own it.
fn take(req: ReqPtr) -> bool {
    req.state().compare_exchange(st::QUEUED, st::CANCELED, Ordering::AcqRel, Ordering::Acquire).is_ok()
        || req.state().compare_exchange(st::ARMED, st::CANCELED, Ordering::AcqRel, Ordering::Acquire).is_ok()
}

/// After `take`: detach the request from its queue, epoll or timer.
fn detach(req: ReqPtr, was_queued: bool) {
    if was_queued {
        io_wq::dequeue(req);
        return;
    }
    // SAFETY: we won the request's state: it is ours.
    let r = unsafe { req.get() };
    if r.flags & rf::EPOLLED != 0 {
        reactor::disarm_fd(r);
    } else {
        reactor::del_timer(req);
    }
}

/// Cancels the requests `pick` selects among the findable ones; returns
/// (cancelled, found running).
fn cancel_where(ctx: &Ctx, mut pick: impl FnMut(&req::Req) -> bool, all: bool, mode: Mode) -> (u32, u32) {
    let mut won: Vec<(ReqPtr, bool)> = Vec::new();
    let mut running = 0;
    {
        let inner = ctx.inner.lock();
        for q in inner.armed.iter() {
            // SAFETY: listed requests are alive while the lock is held;
            // only their SQE copy is read here.
            if !pick(unsafe { q.get() }) {
                continue;
            }
            let queued = q.state().load(Ordering::Acquire) == st::QUEUED;
            if take(q) {
                won.push((q, queued));
            } else if q.state().load(Ordering::Acquire) == st::RUNNING {
                running += 1;
            } else {
                continue;
            }
            if !all {
                break;
            }
        }
    }
    let n = won.len() as u32;
    for (q, queued) in won {
        detach(q, queued);
        req::complete(ctx, q, -libc::ECANCELED, 0, mode);
    }
    (n, running)
}

/// Cancels the request with `Req::id` == `id` (a link timeout's target):
/// 0, -EALREADY (running) or -ENOENT.
pub(crate) fn cancel_id(ctx: &Ctx, id: u64, mode: Mode) -> i32 {
    match cancel_where(ctx, |r| r.id == id, false, mode) {
        (1.., _) => 0,
        (0, 1..) => -libc::EALREADY,
        _ => -libc::ENOENT,
    }
}

/// Ring teardown: cancels everything that can be, including chains
/// waiting behind a drain.
pub(crate) fn cancel_all(ctx: &Ctx) {
    cancel_where(ctx, |_| true, true, Mode::Inline);
    loop {
        let head = {
            let mut inner = ctx.inner.lock();
            let h = inner.defer.pop();
            if let Some(h) = h {
                inner.nr_deferred -= req::chain_len(h);
            }
            h
        };
        match head {
            Some(h) => fail_chain(ctx, h, Mode::Inline),
            None => break,
        }
    }
}
