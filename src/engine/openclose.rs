//! OPENAT, OPENAT2, CLOSE and PIPE, including the fixed-file variants.
//!
//! An open is first tried in the issuing thread with RESOLVE_CACHED (it
//! fails rather than block on a lookup) and O_NONBLOCK (a FIFO does not
//! wait for its peer); opens that create or truncate always go to a
//! worker, as in the kernel.

use super::ctx::Ctx;
use super::opdef::{OpDef, BASE};
use super::path::{self, Path};
use super::req::{Issued, Mode, OpData, Req, ReqPtr};
use super::{os, rsrc, table};
use crate::sys::{IORING_FILE_INDEX_ALLOC, IORING_OP_OPENAT2, IOSQE_FIXED_FILE};

/// `struct open_how`.
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub(crate) struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

const OPEN_HOW_SIZE: usize = 24;
const O_TMPFILE_BIT: u64 = 0o20000000;
/// The open(2) flags the kernel knows (VALID_OPEN_FLAGS).
const VALID_OPEN_FLAGS: u64 = 0o37777703;

pub(crate) struct OpenData {
    path: Path,
    how: OpenHow,
}

fn data(r: &Req) -> &OpenData {
    match &r.io {
        OpData::Open(d) => d,
        _ => unreachable!(),
    }
}

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    if r.sqe.buf_index != 0 {
        return Err(-libc::EINVAL);
    }
    if r.sqe.has(IOSQE_FIXED_FILE) {
        return Err(-libc::EBADF);
    }
    let mut how = OpenHow::default();
    if r.sqe.opcode == IORING_OP_OPENAT2 {
        let len = r.sqe.len as usize;
        if len < OPEN_HOW_SIZE {
            return Err(-libc::EINVAL);
        }
        let mut buf = alloc::vec![0u8; len.min(4096)];
        os::copy_from_user(buf.as_mut_ptr(), r.sqe.off, buf.len())?;
        if len > buf.len() || buf[OPEN_HOW_SIZE..].iter().any(|&b| b != 0) {
            return Err(-libc::E2BIG);
        }
        // SAFETY: buf holds at least OPEN_HOW_SIZE bytes; unaligned read.
        how = unsafe { core::ptr::read_unaligned(buf.as_ptr() as *const OpenHow) };
    } else {
        let flags = r.sqe.op_flags as u64 & VALID_OPEN_FLAGS;
        let creates = flags & (libc::O_CREAT as u64 | O_TMPFILE_BIT) != 0;
        how.flags = flags;
        how.mode = if creates { r.sqe.len as u64 & 0o7777 } else { 0 };
    }
    if how.flags & libc::O_PATH as u64 == 0 {
        how.flags |= libc::O_LARGEFILE as u64;
    }
    let path = path::get(r.sqe.addr, false)?;
    if r.sqe.file_index != 0 && how.flags & libc::O_CLOEXEC as u64 != 0 {
        return Err(-libc::EINVAL);
    }
    r.io = OpData::Open(OpenData { path, how });
    Ok(())
}

fn openat2(dfd: i32, path: &Path, how: &OpenHow) -> i32 {
    // SAFETY: a NUL-terminated path and a live open_how of the size given.
    os::cvt(unsafe { libc::syscall(libc::SYS_openat2, dfd, path::ptr(path), how as *const OpenHow, OPEN_HOW_SIZE) }
        as isize) as i32
}

fn issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let d = data(r);
    let fixed = r.sqe.file_index != 0;
    let mut how = d.how;
    if fixed {
        // The table's copy must not leak into exec'd programs.
        how.flags |= libc::O_CLOEXEC as u64;
    }
    let fd = if mode == Mode::Worker {
        let fd = openat2(r.sqe.fd, &d.path, &how);
        os::restart_code(if fd == -libc::ENOSYS {
            // SAFETY: NUL-terminated path; flags and mode as the kernel got them.
            os::cvt32(unsafe { libc::openat(r.sqe.fd, path::ptr(&d.path), how.flags as i32, how.mode as libc::c_uint) })
        } else {
            fd
        })
    } else {
        if how.flags & (libc::O_TRUNC as u64 | libc::O_CREAT as u64 | O_TMPFILE_BIT) != 0 {
            return Issued::Again;
        }
        let user_cached = how.resolve & libc::RESOLVE_CACHED != 0;
        let mut h = how;
        h.flags |= libc::O_NONBLOCK as u64;
        h.resolve |= libc::RESOLVE_CACHED;
        let fd = openat2(r.sqe.fd, &d.path, &h);
        if fd == -libc::ENOSYS || (fd == -libc::EAGAIN && !user_cached) {
            return Issued::Again;
        }
        if fd >= 0 && how.flags & libc::O_NONBLOCK as u64 == 0 {
            // SAFETY: fcntl on the fd just opened.
            unsafe { libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) & !libc::O_NONBLOCK) };
        }
        fd
    };
    if fd < 0 || !fixed {
        return Issued::Done(fd, 0);
    }
    let slot = if r.sqe.file_index == IORING_FILE_INDEX_ALLOC { IORING_FILE_INDEX_ALLOC } else { r.sqe.file_index - 1 };
    Issued::Done(rsrc::install_fixed(ctx, fd, slot), 0)
}

pub(crate) const OPEN: OpDef = OpDef { prep, issue, ..BASE };

fn close_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.off != 0 || s.addr != 0 || s.len != 0 || s.op_flags != 0 || s.buf_index != 0 {
        return Err(-libc::EINVAL);
    }
    if s.has(IOSQE_FIXED_FILE) {
        return Err(-libc::EBADF);
    }
    if s.file_index != 0 && s.fd != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

fn close_issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    if r.sqe.file_index != 0 {
        return Issued::Done(rsrc::close_fixed(ctx, r.sqe.file_index - 1), 0);
    }
    // Ring fds are not closed this way, as in the kernel.
    if table::lookup(r.sqe.fd).is_some() {
        return Issued::Done(-libc::EBADF, 0);
    }
    // SAFETY: closing an fd the application asked to close.
    Issued::Done(unsafe { crate::sys::close(r.sqe.fd) }, 0)
}

pub(crate) const CLOSE: OpDef = OpDef { prep: close_prep, issue: close_issue, creds: false, ..BASE };

/// The pipe2(2) flags PIPE takes (O_EXCL is O_NOTIFICATION_PIPE).
const PIPE_FLAGS: u32 = (libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_DIRECT | libc::O_EXCL) as u32;

fn pipe_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.fd != 0 || s.off != 0 || s.addr3 != 0 || s.op_flags & !PIPE_FLAGS != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

/// Creates the pipe, then hands its ends out as plain fds or, with a
/// file index, as direct descriptors; the two numbers go to `addr`.
fn pipe_issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let s = &unsafe { req.get() }.sqe;
    let fixed = s.file_index != 0;
    // The table's copies must not leak into exec'd programs.
    let cloexec = if fixed { libc::O_CLOEXEC as u32 } else { 0 };
    let mut ends = [-1i32; 2];
    // SAFETY: room for the two fds.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), (s.op_flags | cloexec) as i32) } < 0 {
        return Issued::Done(os::errno(), 0);
    }
    let res = if fixed { pipe_fixed(ctx, ends, s.op_flags, s.file_index, s.addr) } else { pipe_fds(ends, s.addr) };
    Issued::Done(res, 0)
}

fn pipe_fds(ends: [i32; 2], addr: u64) -> i32 {
    match os::copy_to_user(addr, ends.as_ptr() as *const u8, core::mem::size_of_val(&ends)) {
        Ok(()) => 0,
        Err(e) => {
            ends.iter().for_each(|&fd| os::close(fd));
            e
        }
    }
}

/// The ends go to slot `file_index - 1` and the one after, or to free
/// slots (IORING_FILE_INDEX_ALLOC); the two slots are written back.
fn pipe_fixed(ctx: &Ctx, ends: [i32; 2], flags: u32, file_index: u32, addr: u64) -> i32 {
    if flags & libc::O_CLOEXEC as u32 != 0 {
        ends.iter().for_each(|&fd| os::close(fd));
        return -libc::EINVAL;
    }
    let mut out = [-1i32; 2];
    let mut index = file_index;
    for (i, &fd) in ends.iter().enumerate() {
        let slot = if index == IORING_FILE_INDEX_ALLOC { index } else { index - 1 };
        // Closes `fd` if it fails.
        let ret = rsrc::install_fixed(ctx, fd, slot);
        if ret < 0 {
            ends[i + 1..].iter().for_each(|&fd| os::close(fd));
            return undo_fixed(ctx, out, ret);
        }
        out[i] = if index == IORING_FILE_INDEX_ALLOC { ret } else { slot as i32 };
        if index != IORING_FILE_INDEX_ALLOC {
            index = index.wrapping_add(1);
        }
    }
    match os::copy_to_user(addr, out.as_ptr() as *const u8, core::mem::size_of_val(&out)) {
        Ok(()) => 0,
        Err(e) => undo_fixed(ctx, out, e),
    }
}

fn undo_fixed(ctx: &Ctx, out: [i32; 2], err: i32) -> i32 {
    for &slot in out.iter().filter(|&&s| s != -1) {
        rsrc::close_fixed(ctx, slot as u32);
    }
    err
}

pub(crate) const PIPE: OpDef = OpDef { prep: pipe_prep, issue: pipe_issue, ..BASE };
