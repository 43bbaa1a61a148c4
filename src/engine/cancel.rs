//! Cancellation: finding in-flight requests and taking them back from the
//! worker queue or the reactor.

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::ctx::Ctx;
use super::io_wq;
use super::opdef::{self, OpDef, BASE};
use super::req::{self, fail_chain, rf, st, Issued, Mode, OpData, Req, ReqPtr};
use crate::sys::*;

const CANCEL_FLAGS: u32 = IORING_ASYNC_CANCEL_ALL
    | IORING_ASYNC_CANCEL_FD
    | IORING_ASYNC_CANCEL_ANY
    | IORING_ASYNC_CANCEL_FD_FIXED
    | IORING_ASYNC_CANCEL_USERDATA
    | IORING_ASYNC_CANCEL_OP;

/// What an ASYNC_CANCEL (or a sync cancel) looks for.
#[derive(Clone, Copy)]
pub(crate) struct CancelData {
    flags: u32,
    user_data: u64,
    /// (fixed, fd) of the file, for IORING_ASYNC_CANCEL_FD.
    file: (bool, i32),
    opcode: u8,
}

impl CancelData {
    /// The kernel's io_cancel_req_match.
    fn matches(&self, r: &Req) -> bool {
        let f = self.flags;
        if f & IORING_ASYNC_CANCEL_ANY != 0 {
            return true;
        }
        if f & IORING_ASYNC_CANCEL_FD != 0
            && (!opdef::get(r.sqe.opcode).cancel_fd || (r.sqe.has(IOSQE_FIXED_FILE), r.sqe.fd) != self.file)
        {
            return false;
        }
        if f & IORING_ASYNC_CANCEL_OP != 0 && r.sqe.opcode != self.opcode {
            return false;
        }
        let by_data =
            f & IORING_ASYNC_CANCEL_USERDATA != 0 || f & (IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_OP) == 0;
        !by_data || r.sqe.user_data == self.user_data
    }
}

/// Ops whose cancellation answers with a count (`OpDef::cancel_count`).
fn counted(opcode: u8) -> bool {
    opdef::get(opcode).cancel_count
}

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.off != 0 || s.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    let f = s.op_flags;
    if f & !CANCEL_FLAGS != 0 {
        return Err(-libc::EINVAL);
    }
    if f & IORING_ASYNC_CANCEL_ANY != 0 && f & (IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_OP) != 0 {
        return Err(-libc::EINVAL);
    }
    let fixed = s.has(IOSQE_FIXED_FILE) || f & IORING_ASYNC_CANCEL_FD_FIXED != 0;
    r.io = OpData::Cancel(CancelData { flags: f, user_data: s.addr, file: (fixed, s.fd), opcode: s.len as u8 });
    Ok(())
}

/// Cancels what `cd` names: the count for ALL/ANY, else 0, -EALREADY or
/// -ENOENT. A named fd must exist.
pub(crate) fn cancel(ctx: &Ctx, cd: &CancelData, mode: Mode) -> i32 {
    if cd.flags & IORING_ASYNC_CANCEL_FD != 0 {
        let (fixed, fd) = cd.file;
        // SAFETY: F_GETFD only inspects the descriptor table.
        let ok = if fixed {
            ctx.rsrc.lock().file(fd as u32).is_some()
        } else {
            fd >= 0 && unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0
        };
        if !ok {
            return -libc::EBADF;
        }
    }
    let all = cd.flags & (IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_ANY) != 0;
    let mut count = false;
    let (done, running) = cancel_where(
        ctx,
        |r| {
            let m = cd.matches(r);
            count = m && counted(r.sqe.opcode);
            m
        },
        all,
        mode,
    );
    match (all, done, running) {
        (true, d, r) => (d + r) as i32,
        (false, 1.., _) if count => 1,
        (false, 1.., _) => 0,
        (false, 0, 1..) => -libc::EALREADY,
        _ => -libc::ENOENT,
    }
}

fn issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let OpData::Cancel(cd) = unsafe { req.get() }.io else { unreachable!() };
    Issued::Done(cancel(ctx, &cd, mode), 0)
}

pub(crate) const ASYNC_CANCEL: OpDef = OpDef { prep, issue, creds: false, ..BASE };

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
        super::readiness::disarm(r);
    } else {
        (opdef::get(r.sqe.opcode).disarm)(req);
    }
}

/// Requests that run on a worker only where the kernel's would wait in a
/// poll (`OpDef::poll_like`; reads and writes of ttys, see rw.rs):
/// interrupted, they end with -ECANCELED, so a cancel counts them as
/// cancelled, as the kernel's poll removal does. The caller owns the
/// request.
pub(crate) fn waits_like_poll(r: &Req) -> bool {
    opdef::get(r.sqe.opcode).poll_like || r.flags & rf::UNBOUND != 0
}

/// How often a cancel looks again for a request its owner is busy with
/// (bounded: the owner may be the cancelling thread itself).
const BUSY_ROUNDS: u32 = 20000;

/// Cancels the requests `pick` selects among the findable ones; returns
/// (cancelled, found running). Requests counted as cancelled while their
/// worker is interrupted are completed by that worker.
fn cancel_where(ctx: &Ctx, mut pick: impl FnMut(&req::Req) -> bool, all: bool, mode: Mode) -> (u32, u32) {
    let mut won: Vec<(ReqPtr, bool)> = Vec::new();
    let (mut running, mut interrupted) = (0, 0);
    for round in 0.. {
        // Listed but owned by a thread that is between two attempts (a
        // multishot posting, a retry after readiness): it is about to wait
        // again, where this finds it, as the kernel always finds it.
        let mut busy = 0;
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
            } else {
                match q.state().load(Ordering::Acquire) {
                    // As io-wq does: too late to take it back, but its
                    // worker's blocking call is interrupted. Ops the
                    // kernel would have waiting in a poll end as
                    // cancelled there (see `waits_like_poll`).
                    st::RUNNING if io_wq::interrupt(q) => interrupted += 1,
                    st::RUNNING => running += 1,
                    st::IDLE => {
                        busy += 1;
                        continue;
                    }
                    _ => continue,
                }
            }
            if !all {
                break;
            }
        }
        drop(inner);
        if busy == 0 || running != 0 || (!all && (!won.is_empty() || interrupted != 0)) || round == BUSY_ROUNDS {
            break;
        }
        // SAFETY: plain yield.
        unsafe { libc::sched_yield() };
    }
    let n = won.len() as u32 + interrupted;
    for (q, queued) in won {
        detach(q, queued);
        req::complete(ctx, q, -libc::ECANCELED, 0, mode);
    }
    (n, running)
}

/// Cancels the request with `Req::id` == `id` (a link timeout's target):
/// 0 (1 for the ops `counted` names, as the kernel answers), -EALREADY
/// (running) or -ENOENT.
pub(crate) fn cancel_id(ctx: &Ctx, id: u64, mode: Mode) -> i32 {
    let mut count = false;
    let pick = |r: &req::Req| {
        let m = r.id == id;
        count |= m && counted(r.sqe.opcode);
        m
    };
    match cancel_where(ctx, pick, false, mode) {
        (1.., _) if count => 1,
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

/// IORING_REGISTER_SYNC_CANCEL: cancels like ASYNC_CANCEL, and while the
/// match is still running waits for completions (up to the timeout) and
/// tries again.
pub(crate) fn sync_cancel(ctx: &Ctx, arg: u64) -> i32 {
    let mut sc = core::mem::MaybeUninit::<io_uring_sync_cancel_reg>::uninit();
    if let Err(e) =
        super::os::copy_from_user(sc.as_mut_ptr() as *mut u8, arg, core::mem::size_of::<io_uring_sync_cancel_reg>())
    {
        return e;
    }
    // SAFETY: fully written by the copy; plain data.
    let sc = unsafe { sc.assume_init() };
    if sc.flags & !CANCEL_FLAGS != 0 || sc.pad != [0; 7] || sc.pad2 != [0; 3] {
        return -libc::EINVAL;
    }
    let cd = CancelData {
        flags: sc.flags,
        user_data: sc.addr,
        file: (sc.flags & IORING_ASYNC_CANCEL_FD_FIXED != 0, sc.fd),
        opcode: sc.opcode,
    };
    let mut ret = cancel(ctx, &cd, Mode::Inline);
    if ret != -libc::EALREADY {
        return ret;
    }
    let t = sc.timeout;
    let deadline = if t.tv_sec == -1 && t.tv_nsec == -1 {
        None
    } else {
        super::os::ktime_ns(t.tv_sec, t.tv_nsec).map(|ns| super::os::now_ns().saturating_add(ns))
    };
    let mut waiter = super::waiter::Waiter::new(ctx, None, false);
    loop {
        let seq = waiter.prepare();
        ret = cancel(ctx, &cd, Mode::Inline);
        if ret != -libc::EALREADY {
            break;
        }
        if deadline.is_some_and(|d| super::os::now_ns() >= d) {
            ret = -libc::ETIME;
            break;
        }
        if waiter.sleep(seq, deadline, None) == -libc::EINTR {
            ret = -libc::EINTR;
            break;
        }
    }
    if ret == -libc::ENOENT || ret > 0 {
        0
    } else {
        ret
    }
}
