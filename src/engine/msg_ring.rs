//! IORING_OP_MSG_RING: a CQE (IORING_MSG_DATA) or a fixed file
//! (IORING_MSG_SEND_FD) handed from one engine ring to another.
//!
//! The target is found through the registry, whose counted reference keeps
//! it alive while we post, however its teardown races with us. The engine
//! cannot post into a kernel ring, so a kernel ring named as the target gets
//! what the kernel answers for any file that is no io_uring: -EBADFD (and a
//! kernel ring's MSG_RING naming an engine ring, an eventfd to the kernel,
//! gets the same from the kernel).

use core::sync::atomic::Ordering;

use super::ctx::{Cqe, Ctx};
use super::opdef::{OpDef, BASE};
use super::req::{Issued, Mode, Req, ReqPtr};
use super::{os, rsrc, table};
use crate::sys::flat_sqe::Sqe;
use crate::sys::{
    IORING_FILE_INDEX_ALLOC, IORING_MSG_DATA, IORING_MSG_RING_CQE_SKIP, IORING_MSG_RING_FLAGS_PASS, IORING_MSG_SEND_FD,
};

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    if r.sqe.buf_index != 0 || r.sqe.op_flags & !(IORING_MSG_RING_CQE_SKIP | IORING_MSG_RING_FLAGS_PASS) != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

fn issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let Some(target) = table::lookup(r.file) else {
        // SAFETY: F_GETFD only inspects the descriptor table.
        let open = unsafe { libc::fcntl(r.file, libc::F_GETFD) } >= 0;
        return Issued::Done(if open { -libc::EBADFD } else { -libc::EBADF }, 0);
    };
    let t = target.ctx();
    if !super::fork::ours(t) {
        return Issued::Done(-libc::EBADFD, 0);
    }
    let s = &r.sqe;
    let res = match s.addr {
        IORING_MSG_DATA => send_data(t, s, mode),
        IORING_MSG_SEND_FD => send_fd(ctx, t, r, mode),
        _ => -libc::EINVAL,
    };
    Issued::Done(res, 0)
}

fn send_data(t: &Ctx, s: &Sqe, mode: Mode) -> i32 {
    let pass = s.op_flags & IORING_MSG_RING_FLAGS_PASS != 0;
    if s.addr3 != 0 || s.op_flags & !IORING_MSG_RING_FLAGS_PASS != 0 || (!pass && s.file_index != 0) {
        return -libc::EINVAL;
    }
    if t.disabled.load(Ordering::Acquire) {
        return -libc::EBADFD;
    }
    t.post_remote(Cqe::new(s.off, s.len as i32, if pass { s.file_index } else { 0 }), mode);
    0
}

fn send_fd(ctx: &Ctx, t: &Ctx, r: &Req, mode: Mode) -> i32 {
    let s = &r.sqe;
    if s.len != 0 || core::ptr::eq(ctx, t) {
        return -libc::EINVAL;
    }
    if t.disabled.load(Ordering::Acquire) {
        return -libc::EBADFD;
    }
    let src = u32::try_from(s.addr3).ok().and_then(|i| ctx.rsrc.lock().file(i));
    let Some(src) = src else { return -libc::EBADF };
    let fd = super::fileref::dup_file(src);
    if fd < 0 {
        return fd;
    }
    // The target's table owns the dup from here on (closed on failure).
    // file_index is 1-based unless it asks for allocation.
    let at = if s.file_index == IORING_FILE_INDEX_ALLOC { s.file_index } else { s.file_index.wrapping_sub(1) };
    let slot = rsrc::install_fixed(t, fd, at);
    if slot >= 0 && s.op_flags & IORING_MSG_RING_CQE_SKIP == 0 {
        t.post_remote(Cqe::new(s.off, slot, 0), mode);
    }
    slot
}

pub(crate) const MSG_RING: OpDef = OpDef { prep, issue, needs_file: true, iopoll: true, creds: false, ..BASE };

/// IORING_REGISTER_SEND_MSG_RING (io_uring_register_sync_msg): a data
/// message sent without a ring of one's own. Engine targets are served
/// here, a kernel ring's by the kernel. Where the kernel refuses io_uring
/// altogether no kernel ring exists, and any open target is a file that
/// is no io_uring: -EBADFD.
pub(crate) fn sync_msg(arg: *const core::ffi::c_void, nr: u32) -> i32 {
    let mut raw = core::mem::MaybeUninit::<crate::sys::io_uring_sqe>::uninit();
    if nr != 1 {
        return -libc::EINVAL;
    }
    if let Err(e) =
        os::copy_from_user(raw.as_mut_ptr() as *mut u8, arg as u64, core::mem::size_of::<crate::sys::io_uring_sqe>())
    {
        return e;
    }
    // SAFETY: a local copy, fully written above.
    let sqe = unsafe { Sqe::read(raw.as_ptr()) };
    if sqe.opcode != crate::sys::IORING_OP_MSG_RING || sqe.flags != 0 || sqe.personality != 0 {
        return -libc::EINVAL;
    }
    if sqe.buf_index != 0
        || sqe.op_flags & !(IORING_MSG_RING_CQE_SKIP | IORING_MSG_RING_FLAGS_PASS) != 0
        || sqe.addr != IORING_MSG_DATA
    {
        return -libc::EINVAL;
    }
    match table::lookup(sqe.fd) {
        Some(t) if super::fork::ours(t.ctx()) => send_data(t.ctx(), &sqe, Mode::Inline),
        Some(_) => -libc::EBADFD,
        // SAFETY: F_GETFD only inspects the descriptor table.
        None if unsafe { libc::fcntl(sqe.fd, libc::F_GETFD) } < 0 => -libc::EBADF,
        None => {
            // SAFETY: forwarded caller contract (one SQE at arg).
            let k = unsafe { crate::sys::io_uring_register(-1, crate::sys::IORING_REGISTER_SEND_MSG_RING, arg, nr) };
            if k == -libc::ENOSYS || k == -libc::EPERM || k == -libc::EACCES {
                -libc::EBADFD
            } else {
                k
            }
        }
    }
}
