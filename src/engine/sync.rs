//! FSYNC, SYNC_FILE_RANGE, FALLOCATE, FTRUNCATE: always on a worker.

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::os;
use super::req::{Issued, Mode, Req, ReqPtr};
use crate::sys::*;

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    let bad = s.buf_index != 0
        || s.file_index != 0
        || match s.opcode {
            IORING_OP_FSYNC => s.addr != 0 || s.op_flags & !IORING_FSYNC_DATASYNC != 0,
            IORING_OP_SYNC_FILE_RANGE => s.addr != 0,
            IORING_OP_FALLOCATE => s.op_flags != 0,
            _ => s.op_flags != 0 || s.addr != 0 || s.len != 0 || s.addr3 != 0,
        };
    if bad {
        Err(-libc::EINVAL)
    } else {
        Ok(())
    }
}

fn issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let (s, fd) = (r.sqe, r.file);
    // SAFETY (every call): plain system calls on the request's fd.
    let ret = unsafe {
        match s.opcode {
            IORING_OP_FSYNC if s.op_flags & IORING_FSYNC_DATASYNC != 0 => libc::fdatasync(fd),
            IORING_OP_FSYNC => libc::fsync(fd),
            IORING_OP_SYNC_FILE_RANGE => libc::sync_file_range(fd, s.off as i64, s.len as i64, s.op_flags),
            IORING_OP_FALLOCATE => libc::fallocate(fd, s.len as i32, s.off as i64, s.addr as i64),
            _ => libc::ftruncate(fd, s.off as i64),
        }
    };
    Issued::Done(os::cvt32(ret), 0)
}

pub(crate) const SYNC: OpDef = OpDef { prep, issue, needs_file: true, force_async: true, error_fails: false, ..BASE };
