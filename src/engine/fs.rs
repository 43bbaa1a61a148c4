//! Path operations: RENAMEAT, UNLINKAT, MKDIRAT, SYMLINKAT, LINKAT and
//! STATX. They may block on the filesystem, so (as in the kernel) they
//! always run on a worker; their paths are copied at submission.

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::os;
use super::path::{self, Path};
use super::req::{Issued, Mode, OpData, Req, ReqPtr};
use crate::sys::*;

pub(crate) struct PathData {
    a: Path,
    b: Option<Path>,
}

fn data(r: &Req) -> &PathData {
    match &r.io {
        OpData::Path(d) => d,
        _ => unreachable!(),
    }
}

/// The kernel's per-op checks of fields that must be zero, then the paths.
fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = r.sqe;
    let bad = s.buf_index != 0
        || s.file_index != 0
        || match s.opcode {
            IORING_OP_UNLINKAT => s.off != 0 || s.len != 0,
            IORING_OP_MKDIRAT => s.off != 0 || s.op_flags != 0,
            IORING_OP_SYMLINKAT => s.len != 0 || s.op_flags != 0,
            _ => false,
        };
    if bad {
        return Err(-libc::EINVAL);
    }
    if s.has(IOSQE_FIXED_FILE) {
        return Err(-libc::EBADF);
    }
    if s.opcode == IORING_OP_UNLINKAT && s.op_flags & !(libc::AT_REMOVEDIR as u32) != 0 {
        return Err(-libc::EINVAL);
    }
    let empty_ok =
        s.op_flags & libc::AT_EMPTY_PATH as u32 != 0 && matches!(s.opcode, IORING_OP_LINKAT | IORING_OP_STATX);
    let a = path::get(s.addr, empty_ok)?;
    let b = match s.opcode {
        IORING_OP_RENAMEAT | IORING_OP_SYMLINKAT | IORING_OP_LINKAT => Some(path::get(s.off, false)?),
        _ => None,
    };
    r.io = OpData::Path(PathData { a, b });
    Ok(())
}

fn issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let s = r.sqe;
    let d = data(r);
    let a = path::ptr(&d.a);
    let b = d.b.as_ref().map_or(core::ptr::null(), path::ptr);
    // SAFETY (every call): NUL-terminated paths copied at prep; the statx
    // buffer is the caller's, checked by the kernel.
    let ret = unsafe {
        match s.opcode {
            IORING_OP_RENAMEAT => libc::syscall(libc::SYS_renameat2, s.fd, a, s.len as i32, b, s.op_flags) as i32,
            IORING_OP_UNLINKAT => libc::unlinkat(s.fd, a, s.op_flags as i32),
            IORING_OP_MKDIRAT => libc::mkdirat(s.fd, a, s.len as libc::mode_t),
            IORING_OP_SYMLINKAT => libc::symlinkat(a, s.fd, b),
            IORING_OP_LINKAT => libc::linkat(s.fd, a, s.len as i32, b, s.op_flags as i32),
            _ => libc::syscall(libc::SYS_statx, s.fd, a, s.op_flags as i32, s.len, s.off as *mut libc::c_void) as i32,
        }
    };
    Issued::Done(os::cvt32(ret), 0)
}

pub(crate) const PATH_OP: OpDef = OpDef { prep, issue, force_async: true, error_fails: false, ..BASE };
