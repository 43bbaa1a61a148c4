//! SPLICE and TEE: on a worker (they may block on either pipe end), like
//! the kernel's unbounded io-wq work.

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::os;
use super::req::{rf, Issued, Mode, Req, ReqPtr};
use crate::sys::{IORING_OP_TEE, SPLICE_F_FD_IN_FIXED};

/// SPLICE_F_MOVE | NONBLOCK | MORE | GIFT.
const SPLICE_F_ALL: u32 = 0xf;

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.opcode == IORING_OP_TEE && (s.addr != 0 || s.off != 0) {
        return Err(-libc::EINVAL);
    }
    if s.op_flags & !(SPLICE_F_FD_IN_FIXED | SPLICE_F_ALL) != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

fn issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let s = r.sqe;
    let fd_in = if s.op_flags & SPLICE_F_FD_IN_FIXED != 0 {
        match ctx.rsrc.lock().file(s.file_index) {
            Some(fd) => fd,
            None => return Issued::Done(-libc::EBADF, 0),
        }
    } else {
        s.file_index as i32
    };
    let flags = s.op_flags & !SPLICE_F_FD_IN_FIXED;
    let mut off_in = s.addr as i64;
    let mut off_out = s.off as i64;
    let ret = if s.len == 0 {
        0
    } else if s.opcode == IORING_OP_TEE {
        // SAFETY: a plain system call on two fds.
        os::cvt(unsafe { libc::tee(fd_in, r.file, s.len as usize, flags) })
    } else {
        let pin: *mut i64 = if off_in == -1 { core::ptr::null_mut() } else { &mut off_in };
        let pout: *mut i64 = if off_out == -1 { core::ptr::null_mut() } else { &mut off_out };
        // SAFETY: the offsets point at locals (or are null).
        os::cvt(unsafe { libc::splice(fd_in, pin, r.file, pout, s.len as usize, flags) })
    };
    let ret = os::restart_code(ret as i32) as isize;
    if ret != s.len as isize {
        r.flags |= rf::FAIL;
    }
    Issued::Done(ret as i32, 0)
}

pub(crate) const SPLICE: OpDef = OpDef { prep, issue, needs_file: true, force_async: true, unbounded: true, ..BASE };
