//! EPOLL_CTL: epoll_ctl(2) with the event copied at submission.
//! EPOLL_WAIT: collects the epoll file's ready events without blocking;
//! with none ready it waits for the epoll file to turn readable, as the
//! kernel's poll arm on it does, and collects again.

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::os;
use super::req::{Issued, Mode, OpData, Req, ReqPtr};

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    if r.sqe.buf_index != 0 || r.sqe.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    let mut ev = [0u8; core::mem::size_of::<libc::epoll_event>()];
    if r.sqe.len as i32 != libc::EPOLL_CTL_DEL {
        os::copy_from_user(ev.as_mut_ptr(), r.sqe.addr, ev.len())?;
    }
    let mut big = [0u64; 2];
    // SAFETY: epoll_event (12 bytes) fits in the 16 bytes of `big`.
    unsafe { core::ptr::copy_nonoverlapping(ev.as_ptr(), big.as_mut_ptr() as *mut u8, ev.len()) };
    r.io = OpData::Event(big);
    Ok(())
}

fn issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let OpData::Event(mut ev) = r.io else { unreachable!() };
    // SAFETY: `ev` holds the caller's epoll_event; epfd and fd are checked
    // by the kernel.
    let ret = unsafe {
        libc::epoll_ctl(r.sqe.fd, r.sqe.len as i32, r.sqe.off as i32, ev.as_mut_ptr() as *mut libc::epoll_event)
    };
    Issued::Done(os::cvt32(ret), 0)
}

pub(crate) const EPOLL_CTL: OpDef = OpDef { prep, issue, creds: false, ..BASE };

fn wait_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.off != 0 || s.op_flags != 0 || s.buf_index != 0 || s.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

fn wait_issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    // A zero timeout never sleeps; the kernel checks maxevents, the events
    // array and that the file is an epoll instance, and copies the events
    // out itself (EFAULT only when some were ready, as the kernel's).
    // SAFETY: the kernel validates the caller's array and the fd.
    let ret = unsafe { libc::epoll_wait(r.file, r.sqe.addr as *mut libc::epoll_event, r.sqe.len as i32, 0) };
    match os::cvt32(ret) {
        0 => Issued::Again,
        n => Issued::Done(n, 0),
    }
}

fn wait_mask(_: &Req) -> u32 {
    libc::EPOLLIN as u32
}

pub(crate) const EPOLL_WAIT: OpDef =
    OpDef { prep: wait_prep, issue: wait_issue, poll_mask: wait_mask, needs_file: true, creds: false, ..BASE };
