//! IORING_OP_WAITID: waitid(2) without blocking a thread.
//!
//! Each attempt is a WNOHANG waitid; what is not there yet waits for an
//! event. A P_PID or P_PIDFD wait for exit alone (WEXITED, the common case)
//! waits on the child's pidfd, readable once it exits, on the reactor: no
//! thread and no polling. Other waits (P_ALL, P_PGID, WSTOPPED,
//! WCONTINUED), which no fd reports, are retried by reactor timers with a
//! backoff from 1 ms to 16 ms: a state change is seen that late at worst,
//! at the cost of one reactor wake-up per period per such request. Only
//! the fields the kernel's io_uring writes are written to the siginfo.

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::os;
use super::reactor;
use super::req::{rf, st, Issued, Mode, OpData, Req, ReqPtr};

const FIRST_NS: u64 = 1_000_000;
const MAX_NS: u64 = 16_000_000;

/// Where the union of a siginfo starts (after signo, errno, code and, on
/// 64-bit, the padding that aligns the union).
const SI_UNION: u64 = if cfg!(target_pointer_width = "64") { 16 } else { 12 };

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.addr != 0 || s.buf_index != 0 || s.addr3 != 0 || s.op_flags != 0 {
        return Err(-libc::EINVAL);
    }
    r.io = OpData::Waitid(0);
    Ok(())
}

/// The period of the next retry (`OpData::Waitid` holds the last one).
fn backoff(r: &mut Req) -> u64 {
    let OpData::Waitid(p) = &mut r.io else { unreachable!() };
    *p = if *p == 0 { FIRST_NS } else { (*p * 2).min(MAX_NS) };
    *p
}

/// Writes what the kernel's io_uring writes of a siginfo: signo, errno and
/// code, then pid, uid and status.
fn copy_si(infop: u64, si: &libc::siginfo_t, found: bool) -> Result<(), i32> {
    if infop == 0 {
        return Ok(());
    }
    let signo = if found { libc::SIGCHLD } else { 0 };
    let head = [signo, 0, si.si_code];
    // SAFETY: the kernel filled a SIGCHLD siginfo (or left it zeroed).
    let tail = unsafe { [si.si_pid(), si.si_uid() as i32, si.si_status()] };
    os::copy_to_user(infop, head.as_ptr() as *const u8, 12)?;
    os::copy_to_user(infop + SI_UNION, tail.as_ptr() as *const u8, 12)
}

fn issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let (which, id, options) = (r.sqe.len, r.sqe.fd, r.sqe.file_index as i32);
    // SAFETY: all-zero is a valid siginfo_t.
    let mut si: libc::siginfo_t = unsafe { core::mem::zeroed() };
    // SAFETY: a live siginfo buffer and no rusage.
    let ret = unsafe {
        libc::syscall(libc::SYS_waitid, which, id, &mut si as *mut libc::siginfo_t, options | libc::WNOHANG, 0usize)
    };
    if ret < 0 {
        return Issued::Done(os::errno(), 0);
    }
    // SAFETY: as in copy_si.
    let found = unsafe { si.si_pid() } != 0;
    if found || options & libc::WNOHANG != 0 {
        return Issued::Done(copy_si(r.sqe.off, &si, found).map_or_else(|e| e, |_| 0), 0);
    }
    if r.file < 0 && options & (libc::WSTOPPED | libc::WCONTINUED) == 0 {
        let fd = match which {
            // SAFETY: pidfd_open takes no memory.
            libc::P_PID => os::high(unsafe { libc::syscall(libc::SYS_pidfd_open, id, 0) as i32 }),
            libc::P_PIDFD => os::dup(id),
            _ => -1,
        };
        if fd >= 0 {
            r.file = fd;
            r.flags |= rf::OWN_FILE;
        }
    }
    if r.file >= 0 {
        // Readiness of the pidfd on the reactor (see `poll_mask`).
        return Issued::Again;
    }
    let at = os::now_ns() + backoff(r);
    if let Err(e) = reactor::add_timer(req, at) {
        return Issued::Done(e, 0);
    }
    ctx.list(req, st::ARMED);
    Issued::Queued
}

/// A retry timer fired (the reactor owns the request).
fn retry(ctx: &Ctx, req: ReqPtr) {
    super::req::issue(ctx, req, Mode::Reactor);
}

fn poll_mask(r: &Req) -> u32 {
    if r.file >= 0 {
        libc::EPOLLIN as u32
    } else {
        0
    }
}

pub(crate) const WAITID: OpDef =
    OpDef { prep, issue, poll_mask, creds: false, timer: Some(retry), cancel_count: true, cancel_fd: false, ..BASE };
