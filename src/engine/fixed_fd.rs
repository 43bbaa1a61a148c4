//! IORING_OP_FIXED_FD_INSTALL: a registered file becomes a plain fd of
//! the process again (O_CLOEXEC unless IORING_FIXED_FD_NO_CLOEXEC).

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::os;
use super::req::{Issued, Mode, Req, ReqPtr};
use crate::sys::{IORING_FIXED_FD_NO_CLOEXEC, IOSQE_FIXED_FILE};

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.off != 0 || s.addr != 0 || s.len != 0 || s.buf_index != 0 || s.file_index != 0 || s.addr3 != 0 {
        return Err(-libc::EINVAL);
    }
    // Only a fixed file can be installed.
    if !s.has(IOSQE_FIXED_FILE) {
        return Err(-libc::EBADF);
    }
    if s.op_flags & !IORING_FIXED_FD_NO_CLOEXEC != 0 {
        return Err(-libc::EINVAL);
    }
    // The fd goes to the submitter's table, with the submitter's rights.
    if r.creds.is_some() {
        return Err(-libc::EPERM);
    }
    Ok(())
}

fn issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let cmd = if r.sqe.op_flags & IORING_FIXED_FD_NO_CLOEXEC != 0 { libc::F_DUPFD } else { libc::F_DUPFD_CLOEXEC };
    // SAFETY: no memory is involved; the table's fd stays open meanwhile
    // (its lock is not needed: the dup is atomic in the kernel).
    Issued::Done(os::cvt32(unsafe { libc::fcntl(r.file, cmd, 0) }), 0)
}

pub(crate) const FIXED_FD_INSTALL: OpDef = OpDef { prep, issue, needs_file: true, creds: false, ..BASE };
