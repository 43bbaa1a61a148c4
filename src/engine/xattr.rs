//! GETXATTR, SETXATTR, FGETXATTR, FSETXATTR: name (and value, for set)
//! copied at submission, the call made on a worker.

use alloc::boxed::Box;

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::os;
use super::path::{self, Path};
use super::req::{Issued, Mode, OpData, Req, ReqPtr};
use crate::sys::*;

const XATTR_NAME_MAX: usize = 255;
const XATTR_SIZE_MAX: u32 = 65536;

pub(crate) struct XattrData {
    name: Box<[u8]>,
    path: Option<Path>,
    value: Option<Box<[u8]>>,
}

fn is_set(op: u8) -> bool {
    matches!(op, IORING_OP_SETXATTR | IORING_OP_FSETXATTR)
}

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = r.sqe;
    // The fd variants may name a fixed file; the path variants have none.
    if s.has(IOSQE_FIXED_FILE) && matches!(s.opcode, IORING_OP_GETXATTR | IORING_OP_SETXATTR) {
        return Err(-libc::EBADF);
    }
    let set = is_set(s.opcode);
    if !set && s.op_flags != 0 {
        return Err(-libc::EINVAL);
    }
    if set && s.op_flags & !(libc::XATTR_CREATE | libc::XATTR_REPLACE) as u32 != 0 {
        return Err(-libc::EINVAL);
    }
    let name = match os::copy_str_from_user(s.addr, XATTR_NAME_MAX + 1) {
        Ok(n) if n.len() > 1 => n,
        Err(e) if e != -libc::ENAMETOOLONG => return Err(e),
        _ => return Err(-libc::ERANGE),
    };
    let mut value = None;
    if set {
        if s.len > XATTR_SIZE_MAX {
            return Err(-libc::E2BIG);
        }
        if s.len != 0 {
            let mut v = alloc::vec![0u8; s.len as usize];
            os::copy_from_user(v.as_mut_ptr(), s.off, v.len())?;
            value = Some(v.into_boxed_slice());
        }
    }
    let path = match s.opcode {
        IORING_OP_GETXATTR | IORING_OP_SETXATTR => Some(path::get(s.addr3, false)?),
        _ => None,
    };
    r.io = OpData::Xattr(Box::new(XattrData { name, path, value }));
    Ok(())
}

fn issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let s = r.sqe;
    let OpData::Xattr(d) = &r.io else { unreachable!() };
    let name = d.name.as_ptr() as *const libc::c_char;
    let (val, vlen) = d.value.as_ref().map_or((core::ptr::null(), 0), |v| (v.as_ptr(), v.len()));
    let p = d.path.as_ref().map_or(core::ptr::null(), path::ptr);
    let buf = s.off as *mut libc::c_void;
    // SAFETY (every call): NUL-terminated name and path copied at prep; the
    // get buffer is the caller's, checked by the kernel.
    let ret = unsafe {
        match s.opcode {
            IORING_OP_FGETXATTR => libc::fgetxattr(r.file, name, buf, s.len as usize),
            IORING_OP_GETXATTR => libc::getxattr(p, name, buf, s.len as usize),
            IORING_OP_FSETXATTR => {
                libc::fsetxattr(r.file, name, val as *const libc::c_void, vlen, s.op_flags as i32) as isize
            }
            _ => libc::setxattr(p, name, val as *const libc::c_void, vlen, s.op_flags as i32) as isize,
        }
    };
    Issued::Done(os::cvt(ret) as i32, 0)
}

pub(crate) const XATTR: OpDef = OpDef { prep, issue, force_async: true, error_fails: false, ..BASE };
pub(crate) const FXATTR: OpDef = OpDef { needs_file: true, ..XATTR };
