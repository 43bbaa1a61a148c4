//! Reads and writes: READ, WRITE, READV, WRITEV, READ_FIXED, WRITE_FIXED.
//!
//! Each is first tried without blocking (RWF_NOWAIT) in the issuing thread:
//! a page-cache hit, a pipe with data, /dev/null complete at once. What
//! would block waits for readiness on the reactor (pollable files) or runs
//! blocking on a worker (regular files). A short non-blocking transfer on a
//! regular file carries on in a worker for the rest, as in the kernel.

use alloc::boxed::Box;

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::req::{rf, Issued, Mode, OpData, Req, ReqPtr};
use super::os;
use crate::sys::{IORING_OP_READV, IORING_OP_READ_FIXED, IORING_OP_WRITEV, IORING_OP_WRITE_FIXED, IOSQE_BUFFER_SELECT};

/// Kernel limit on iovecs per request.
const UIO_MAXIOV: u32 = 1024;

pub(crate) struct RwData {
    /// The caller's iovecs, copied when the request left the submitting
    /// call (vectored ops only).
    iov: Option<Box<[libc::iovec]>>,
    /// Bytes transferred by earlier partial attempts.
    done: usize,
    /// The file turned out to be a stream: offsets do not apply.
    stream: bool,
}

// SAFETY: the iovecs describe caller memory the request is allowed to
// access from any thread, as the kernel's workers would.
unsafe impl Send for RwData {}

fn read_op(opcode: u8) -> bool {
    matches!(opcode, crate::sys::IORING_OP_READ | IORING_OP_READV | IORING_OP_READ_FIXED)
}

fn vectored(opcode: u8) -> bool {
    matches!(opcode, IORING_OP_READV | IORING_OP_WRITEV)
}

fn fixed(opcode: u8) -> bool {
    matches!(opcode, IORING_OP_READ_FIXED | IORING_OP_WRITE_FIXED)
}

fn data(r: &mut Req) -> &mut RwData {
    match &mut r.io {
        OpData::Rw(d) => d,
        _ => unreachable!(),
    }
}

/// The kernel's ioprio_check_cap, less the capability test.
pub(crate) fn check_ioprio(ioprio: u16) -> Result<(), i32> {
    let class = ioprio >> 13;
    let level = ioprio & 7;
    match class {
        0 if level != 0 => Err(-libc::EINVAL),
        0..=3 => Ok(()),
        _ => Err(-libc::EINVAL),
    }
}

fn prep(ctx: &Ctx, r: &mut Req) -> Result<(), i32> {
    check_ioprio(r.sqe.ioprio)?;
    let op = r.sqe.opcode;
    if fixed(op) {
        let (base, len) = ctx.rsrc.lock().buffer(r.sqe.buf_index).ok_or(-libc::EFAULT)?;
        let end = r.sqe.addr.checked_add(r.sqe.len as u64).ok_or(-libc::EFAULT)?;
        if r.sqe.addr < base || end > base + len {
            return Err(-libc::EFAULT);
        }
    }
    if vectored(op) && r.sqe.flags & IOSQE_BUFFER_SELECT == 0 && r.sqe.len > UIO_MAXIOV {
        return Err(-libc::EINVAL);
    }
    r.io = OpData::Rw(RwData { iov: None, done: 0, stream: false });
    Ok(())
}

/// Copies a vectored request's iovecs out of caller memory.
fn stabilize(r: &mut Req) -> Result<(), i32> {
    if !vectored(r.sqe.opcode) || r.sqe.flags & IOSQE_BUFFER_SELECT != 0 || data(r).iov.is_some() {
        return Ok(());
    }
    let n = r.sqe.len as usize;
    let mut v: Box<[libc::iovec]> = (0..n).map(|_| libc::iovec { iov_base: core::ptr::null_mut(), iov_len: 0 }).collect();
    os::copy_from_user(v.as_mut_ptr() as *mut u8, r.sqe.addr, n * core::mem::size_of::<libc::iovec>())?;
    data(r).iov = Some(v);
    Ok(())
}

fn poll_mask(r: &Req) -> u32 {
    if read_op(r.sqe.opcode) {
        libc::EPOLLIN as u32
    } else {
        libc::EPOLLOUT as u32
    }
}

pub(crate) const RW: OpDef = OpDef { prep, issue, stabilize, poll_mask, needs_file: true, ioprio: true, ..BASE };
pub(crate) const RW_BUFSEL: OpDef = OpDef { buffer_select: true, ..RW };

/// The file's type bits (S_IFMT), or 0 if fstat fails.
fn file_type(fd: i32) -> u32 {
    // SAFETY: an all-zero stat is valid; fstat fills it.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: live stat buffer.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return 0;
    }
    st.st_mode & libc::S_IFMT
}

/// Regular files and block devices, whose short transfers mean "not all
/// cached yet" rather than "that is all there is".
fn complete_io(fd: i32) -> bool {
    matches!(file_type(fd), libc::S_IFREG | libc::S_IFBLK)
}

/// One preadv2/pwritev2 over what is left of the request.
fn transfer(r: &mut Req, nowait: bool) -> isize {
    let write = !read_op(r.sqe.opcode);
    let flags = r.sqe.op_flags as i32 | if nowait { libc::RWF_NOWAIT } else { 0 };
    let (fd, off0, addr, len, opcode) = (r.file, r.sqe.off as i64, r.sqe.addr, r.sqe.len, r.sqe.opcode);
    let d = data(r);
    let off = if off0 == -1 || d.stream { -1 } else { off0.wrapping_add(d.done as i64) };
    let mut single = libc::iovec { iov_base: core::ptr::null_mut(), iov_len: 0 };
    let (iov, cnt): (*const libc::iovec, i32) = match (&d.iov, vectored(opcode)) {
        (Some(v), _) => (v.as_ptr(), v.len() as i32),
        (None, true) => (addr as *const libc::iovec, len as i32),
        (None, false) => {
            single = libc::iovec { iov_base: (addr as usize + d.done) as *mut libc::c_void, iov_len: len as usize - d.done };
            (&single, 1)
        }
    };
    let call = |off: i64| {
        // SAFETY: the iovecs describe caller buffers (the kernel checks
        // them and fails with EFAULT); `single` lives across the call.
        os::cvt(unsafe {
            if write {
                libc::pwritev2(fd, iov, cnt, off, flags)
            } else {
                libc::preadv2(fd, iov, cnt, off, flags)
            }
        })
    };
    let mut ret = call(off);
    if ret == -(libc::ESPIPE as isize) && off != -1 {
        // Pipes and sockets have no offset; the kernel ignores it there.
        d.stream = true;
        ret = call(-1);
    }
    let _ = &single;
    ret
}

/// Bytes the request asks for in total.
fn wanted(r: &mut Req) -> usize {
    let len = r.sqe.len as usize;
    if !vectored(r.sqe.opcode) {
        return len;
    }
    match &data(r).iov {
        Some(v) => v.iter().map(|i| i.iov_len).sum(),
        None => {
            let mut v = alloc::vec![libc::iovec { iov_base: core::ptr::null_mut(), iov_len: 0 }; len];
            match os::copy_from_user(v.as_mut_ptr() as *mut u8, r.sqe.addr, len * core::mem::size_of::<libc::iovec>()) {
                Ok(()) => v.iter().map(|i| i.iov_len).sum(),
                Err(_) => 0,
            }
        }
    }
}

/// Drops the first `n` bytes from the copied iovecs.
fn advance(d: &mut RwData, mut n: usize) {
    if let Some(v) = &mut d.iov {
        for i in v.iter_mut() {
            let k = n.min(i.iov_len);
            i.iov_base = (i.iov_base as usize + k) as *mut libc::c_void;
            i.iov_len -= k;
            n -= k;
        }
    }
}

fn issue(_: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    if r.sqe.flags & IOSQE_BUFFER_SELECT != 0 {
        // No provided buffers exist on an engine ring.
        return Issued::Done(-libc::ENOBUFS, 0);
    }
    let user_nowait = r.sqe.op_flags as i32 & libc::RWF_NOWAIT != 0;
    let blocking = mode == Mode::Worker && !user_nowait && !matches!(file_type(r.file), libc::S_IFIFO | libc::S_IFSOCK | libc::S_IFCHR);
    let ret = transfer(r, !blocking);
    if !blocking && !user_nowait {
        if ret == -(libc::EAGAIN as isize) {
            return Issued::Again;
        }
        if ret == -(libc::EOPNOTSUPP as isize) {
            // The file cannot do non-blocking I/O: a worker does it.
            if mode != Mode::Worker {
                return Issued::Blocking;
            }
            let ret = transfer(r, false);
            return finish(r, ret);
        }
        if ret > 0 && mode != Mode::Worker && complete_io(r.file) {
            let want = wanted(r);
            if data(r).done + (ret as usize) < want {
                if let Err(e) = stabilize(r) {
                    return Issued::Done(e, 0);
                }
                r.flags |= rf::STABLE;
                let d = data(r);
                d.done += ret as usize;
                advance(d, ret as usize);
                return Issued::Blocking;
            }
        }
    }
    finish(r, ret)
}

/// The CQE result: all bytes so far, or the error if nothing moved. A
/// short transfer fails the chain, as in the kernel.
fn finish(r: &mut Req, ret: isize) -> Issued {
    let done = data(r).done;
    let res = if ret < 0 { if done > 0 { done as isize } else { ret } } else { done as isize + ret };
    // Only a chain or a skipped success can tell a short transfer apart.
    if res >= 0 && (r.link.is_some() || r.sqe.has(crate::sys::IOSQE_CQE_SKIP_SUCCESS)) && res as usize != wanted(r) {
        r.flags |= rf::FAIL;
    }
    Issued::Done(res.min(i32::MAX as isize) as i32, 0)
}
