//! IORING_OP_NOP: completes at once, optionally with an injected result or
//! after checking a file or a registered buffer.

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::req::{Issued, Mode, OpData, Req, ReqPtr};
use crate::sys::{
    IORING_CQE_F_32, IORING_NOP_CQE32, IORING_NOP_INJECT_RESULT, IORING_SETUP_CQE32, IORING_SETUP_CQE_MIXED,
    IOSQE_FIXED_FILE,
};

// nop_flags bits beyond the two liburing 2.15's header names.
const NOP_FILE: u32 = 1 << 1;
const NOP_FIXED_FILE: u32 = 1 << 2;
const NOP_FIXED_BUFFER: u32 = 1 << 3;
const NOP_TW: u32 = 1 << 4;
const NOP_FLAGS: u32 =
    IORING_NOP_INJECT_RESULT | NOP_FILE | NOP_FIXED_FILE | NOP_FIXED_BUFFER | NOP_TW | IORING_NOP_CQE32;

pub(crate) const NOP: OpDef = OpDef { prep, issue, iopoll: true, creds: false, ..BASE };

fn prep(ctx: &Ctx, r: &mut Req) -> Result<(), i32> {
    let f = r.sqe.op_flags;
    if f & !NOP_FLAGS != 0 {
        return Err(-libc::EINVAL);
    }
    if f & IORING_NOP_CQE32 != 0 {
        if ctx.flags & (IORING_SETUP_CQE32 | IORING_SETUP_CQE_MIXED) == 0 {
            return Err(-libc::EINVAL);
        }
        r.io = OpData::Big([r.sqe.off, r.sqe.addr]);
    }
    Ok(())
}

fn issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let f = r.sqe.op_flags;
    let mut res = if f & IORING_NOP_INJECT_RESULT != 0 { r.sqe.len as i32 } else { 0 };
    if f & NOP_FILE != 0 {
        // IOSQE_FIXED_FILE names a fixed file here too (the kernel's
        // answer for a bad one is -EBADF either way).
        let ok = if f & NOP_FIXED_FILE != 0 || r.sqe.has(IOSQE_FIXED_FILE) {
            ctx.rsrc.lock().file(r.sqe.fd as u32).is_some()
        } else {
            // SAFETY: F_GETFD only inspects the descriptor table.
            r.sqe.fd >= 0 && unsafe { libc::fcntl(r.sqe.fd, libc::F_GETFD) } >= 0
        };
        if !ok {
            res = -libc::EBADF;
        }
    }
    if f & NOP_FIXED_BUFFER != 0 && ctx.rsrc.lock().buffer(r.sqe.buf_index).is_none() {
        res = -libc::EFAULT;
    }
    // A CQE_MIXED ring marks the 32-byte entry it posts.
    let big = f & IORING_NOP_CQE32 != 0 && ctx.flags & IORING_SETUP_CQE_MIXED != 0;
    let cflags = if big { IORING_CQE_F_32 } else { 0 };
    if f & NOP_TW != 0 {
        // Completed as task work: a DEFER_TASKRUN ring shows the CQE only
        // once its submitter asks for events, as the kernel's does.
        super::req::complete(ctx, req, res, cflags, Mode::Reactor);
        return Issued::Queued;
    }
    Issued::Done(res, cflags)
}
