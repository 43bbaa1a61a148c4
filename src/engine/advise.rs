//! FADVISE and MADVISE. Advice that only sets a flag (normal, random,
//! sequential) completes inline; the rest may block and goes to a worker.

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::os;
use super::req::{Issued, Mode, Req, ReqPtr};
use crate::sys::IORING_OP_MADVISE;

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    if r.sqe.buf_index != 0 || r.sqe.file_index != 0 {
        Err(-libc::EINVAL)
    } else {
        Ok(())
    }
}

/// The 64-bit length (addr for fadvise, off for madvise), or the 32-bit
/// one older callers put in `len`.
fn length(r: &Req) -> u64 {
    let wide = if r.sqe.opcode == IORING_OP_MADVISE { r.sqe.off } else { r.sqe.addr };
    if wide != 0 {
        wide
    } else {
        r.sqe.len as u64
    }
}

fn issue(_: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let s = r.sqe;
    if s.opcode == IORING_OP_MADVISE {
        if mode != Mode::Worker {
            return Issued::Again;
        }
        // SAFETY: advice on the caller's own mapping, as it asked.
        return Issued::Done(
            os::cvt32(unsafe { libc::madvise(s.addr as *mut libc::c_void, length(r) as usize, s.op_flags as i32) }),
            0,
        );
    }
    let cheap =
        matches!(s.op_flags as i32, libc::POSIX_FADV_NORMAL | libc::POSIX_FADV_RANDOM | libc::POSIX_FADV_SEQUENTIAL);
    if !cheap && mode != Mode::Worker {
        return Issued::Again;
    }
    // SAFETY: a plain system call on the request's fd.
    let ret = unsafe { libc::syscall(libc::SYS_fadvise64, r.file, s.off as i64, length(r) as i64, s.op_flags as i32) };
    Issued::Done(os::cvt(ret as isize) as i32, 0)
}

pub(crate) const FADVISE: OpDef = OpDef { prep, issue, needs_file: true, creds: false, ..BASE };
pub(crate) const MADVISE: OpDef = OpDef { prep, issue, error_fails: false, creds: false, ..BASE };
