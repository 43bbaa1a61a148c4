//! Reads and writes: READ, WRITE, READV, WRITEV, READ_FIXED, WRITE_FIXED,
//! READV_FIXED, WRITEV_FIXED.
//!
//! Each is first tried without blocking (RWF_NOWAIT) in the issuing thread:
//! a page-cache hit, a pipe with data, /dev/null complete at once. What
//! would block waits for readiness on the reactor (pollable files) or runs
//! blocking on a worker (regular files). A short non-blocking transfer on a
//! regular file carries on in a worker for the rest, as in the kernel.
//!
//! With IOSQE_BUFFER_SELECT the buffer comes from a provided-buffer group
//! (see `kbuf`); READ_MULTISHOT reads a pollable file into one provided
//! buffer after another, a CQE with IORING_CQE_F_MORE for each.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::ctx::{Cqe, Ctx};
use super::kbuf::{self, Hold, Pick};
use super::opdef::{OpDef, BASE};
use super::os;
use super::req::{rf, Issued, Mode, OpData, Req, ReqPtr};
use super::rsrc;
use crate::sys::{
    IORING_CQE_F_MORE, IORING_OP_READV, IORING_OP_READV_FIXED, IORING_OP_READ_FIXED, IORING_OP_READ_MULTISHOT,
    IORING_OP_WRITEV, IORING_OP_WRITEV_FIXED, IORING_OP_WRITE_FIXED, IORING_SETUP_IOPOLL, IOSQE_BUFFER_SELECT,
    IOSQE_FIXED_FILE,
};

/// Kernel limit on iovecs per request.
const UIO_MAXIOV: u32 = 1024;

pub(crate) struct RwData {
    /// The caller's iovecs, copied when the request left the submitting
    /// call (vectored ops only).
    iov: Option<Box<Vec<libc::iovec>>>,
    /// Bytes transferred by earlier partial attempts (a request moves
    /// less than 2 GiB, as the kernel's MAX_RW_COUNT).
    done: u32,
    /// The file turned out to be a stream: offsets do not apply.
    stream: bool,
    /// The provided buffer the request reads into (IOSQE_BUFFER_SELECT).
    sel: Option<Pick>,
    /// The dup in `file` when the requests of its submit call that name
    /// the same fd share it (`req::SharedFile`).
    shared: Option<alloc::sync::Arc<super::req::SharedFile>>,
}

// SAFETY: the iovecs describe caller memory the request is allowed to
// access from any thread, as the kernel's workers would.
unsafe impl Send for RwData {}

/// Names the provided buffer a request kept across a wait, if any, in a
/// completion from outside its issue (see `kbuf::held_flags`).
fn fail(_: &Ctx, r: &mut Req, res: i32, cflags: u32, _: Mode) -> (i32, u32) {
    let OpData::Rw(d) = &mut r.io else { return (res, cflags) };
    (res, cflags | super::kbuf::held_flags(d.sel.take().map(|p| p.bid)))
}

fn read_op(opcode: u8) -> bool {
    matches!(
        opcode,
        crate::sys::IORING_OP_READ
            | IORING_OP_READV
            | IORING_OP_READ_FIXED
            | IORING_OP_READV_FIXED
            | IORING_OP_READ_MULTISHOT
    )
}

fn vectored(opcode: u8) -> bool {
    matches!(opcode, IORING_OP_READV | IORING_OP_WRITEV | IORING_OP_READV_FIXED | IORING_OP_WRITEV_FIXED)
}

/// Whether the request's memory is an iovec array: a READV with buffer
/// select reads into one provided buffer instead.
fn vec_io(r: &Req) -> bool {
    vectored(r.sqe.opcode) && !r.sqe.has(IOSQE_BUFFER_SELECT)
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
        rsrc::fixed_span(ctx, r.sqe.buf_index, r.sqe.addr, r.sqe.len as u64)?;
        rsrc::hold_buffer(ctx, r);
    }
    if vec_io(r) && r.sqe.len > UIO_MAXIOV {
        return Err(-libc::EINVAL);
    }
    if vectored(op) && r.sqe.has(IOSQE_BUFFER_SELECT) {
        // One iovec, whose length is how much to read into the buffer.
        if r.sqe.len != 1 {
            return Err(-libc::EINVAL);
        }
        let mut iov = libc::iovec { iov_base: core::ptr::null_mut(), iov_len: 0 };
        os::copy_from_user(&mut iov as *mut libc::iovec as *mut u8, r.sqe.addr, core::mem::size_of::<libc::iovec>())?;
        r.sqe.len = iov.iov_len as u32;
    }
    r.io = OpData::Rw(RwData { iov: None, done: 0, stream: false, sel: None, shared: None });
    if matches!(op, IORING_OP_READV_FIXED | IORING_OP_WRITEV_FIXED) {
        r.flags |= rf::STABLE;
        stabilize(r)?;
        let idx = r.sqe.buf_index;
        rsrc::fixed_iovecs(ctx, idx, data(r).iov.as_deref().map_or(&[][..], |v| v.as_slice()))?;
        rsrc::hold_buffer(ctx, r);
    }
    Ok(())
}

/// Copies a vectored request's iovecs out of caller memory.
fn stabilize(r: &mut Req) -> Result<(), i32> {
    if !vec_io(r) || data(r).iov.is_some() {
        return Ok(());
    }
    let n = r.sqe.len as usize;
    let mut v: Vec<libc::iovec> = (0..n).map(|_| libc::iovec { iov_base: core::ptr::null_mut(), iov_len: 0 }).collect();
    os::copy_from_user(v.as_mut_ptr() as *mut u8, r.sqe.addr, n * core::mem::size_of::<libc::iovec>())?;
    data(r).iov = Some(Box::new(v));
    Ok(())
}

fn poll_mask(r: &Req) -> u32 {
    if read_op(r.sqe.opcode) {
        libc::EPOLLIN as u32
    } else {
        libc::EPOLLOUT as u32
    }
}

pub(crate) const RW: OpDef = OpDef {
    prep,
    issue: issue_polled,
    stabilize,
    poll_mask,
    needs_file: true,
    ioprio: true,
    iopoll: true,
    fail: Some(fail),
    hash: Some(hash_key),
    ..BASE
};
pub(crate) const RW_BUFSEL: OpDef = OpDef { buffer_select: true, creds: false, ..RW };

/// What `file_kind` learned of an fd: the fd number (high half), uses
/// left before it looks again (bits 5..32), native AIO refused it (bit 4),
/// buffered writes refuse RWF_NOWAIT (bit 3: ext4's do), a regular file
/// or block device (bit 2), O_DIRECT (bit 1), known (bit 0). Indexed by
/// the fd's low bits.
static FILES: [AtomicU64; 1024] = [const { AtomicU64::new(0) }; 1024];
/// Uses of a learned answer before the file is looked at again.
const RECHECK: u64 = 128;
const K_DIRECT: u64 = 2;
const K_REG: u64 = 4;
const K_NOWAIT_WRITE_REFUSED: u64 = 8;
const K_AIO_REFUSED: u64 = 16;

/// What is known of `fd` (K_* bits). Cached per fd number and looked up
/// again every so often. Only routing goes by it: a stale answer (the fd
/// closed and reused, or F_SETFL) sends a request the slower way, never a
/// wrong one, as whoever then issues it looks at the file itself.
fn file_kind(fd: i32) -> u64 {
    let slot = &FILES[fd as usize % FILES.len()];
    let e = slot.load(Ordering::Relaxed);
    if e & 1 != 0 && (e >> 32) as i32 == fd && (e >> 5) & 0x07ff_ffff != 0 {
        slot.store(e - 32, Ordering::Relaxed);
        return e;
    }
    let reg = complete_io(fd);
    // SAFETY: F_GETFL only reads the file's status flags.
    let d = reg && unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_DIRECT != 0;
    let e = (fd as u32 as u64) << 32 | RECHECK << 5 | if reg { K_REG } else { 0 } | if d { K_DIRECT } else { 0 } | 1;
    slot.store(e, Ordering::Relaxed);
    e
}

/// Notes `bit` (K_*) of what is known of `fd`.
fn note(fd: i32, bit: u64) {
    let slot = &FILES[fd as usize % FILES.len()];
    let e = slot.load(Ordering::Relaxed);
    if e & 1 != 0 && (e >> 32) as i32 == fd {
        slot.store(e | bit, Ordering::Relaxed);
    }
}

/// Notes that a buffered write to regular file `fd` refused RWF_NOWAIT.
fn note_nowait_write_refused(fd: i32) {
    note(fd, K_NOWAIT_WRITE_REFUSED);
}

/// Notes that native AIO refused O_DIRECT I/O on `fd` (a file system
/// without non-blocking AIO, a write that must allocate): its requests go
/// to workers until the file is looked at again.
pub(crate) fn note_aio_refused(fd: i32) {
    note(fd, K_AIO_REFUSED);
}

/// The iocb that has native AIO do request `r` (see aio.rs), detached on
/// a dup of its own; None for what AIO cannot do as the kernel's io_uring
/// would: the file position (offset -1), a selected buffer, the rest of a
/// partial transfer, or a file AIO refused before (`rf::AIO` unset).
pub(crate) fn aio_iocb(r: &mut Req) -> Option<crate::sys::aio::Iocb> {
    use crate::sys::aio::*;
    if r.sqe.off == u64::MAX
        || r.sqe.has(IOSQE_BUFFER_SELECT)
        || r.flags & rf::AIO == 0
        || data(r).done != 0
        || !dup_direct(r)
    {
        return None;
    }
    let read = read_op(r.sqe.opcode);
    let (op, buf, n) = if vec_io(r) {
        let (buf, n) = match &data(r).iov {
            Some(v) => (v.as_ptr() as u64, v.len() as u64),
            None => (r.sqe.addr, r.sqe.len as u64),
        };
        (if read { IOCB_CMD_PREADV } else { IOCB_CMD_PWRITEV }, buf, n)
    } else {
        (if read { IOCB_CMD_PREAD } else { IOCB_CMD_PWRITE }, r.sqe.addr, r.sqe.len as u64)
    };
    let mut cb = Iocb {
        aio_rw_flags: r.sqe.op_flags as i32 | libc::RWF_NOWAIT,
        aio_lio_opcode: op,
        aio_fildes: r.file as u32,
        aio_buf: buf,
        aio_nbytes: n,
        aio_offset: r.sqe.off as i64,
        ..Iocb::default()
    };
    if r.sqe.ioprio != 0 {
        cb.aio_flags = IOCB_FLAG_IOPRIO;
        cb.aio_reqprio = r.sqe.ioprio as i16;
    }
    Some(cb)
}

/// Whether the request's own dup is open O_DIRECT. `rf::AIO` comes from a
/// hint about the program's fd number (`file_kind`), which may be stale;
/// only O_DIRECT I/O behaves on AIO as on io_uring (a buffered read may
/// come back short where io_uring would carry on).
fn dup_direct(r: &Req) -> bool {
    match &r.io {
        // `file_hash` looked at a regular file's flags when it was made.
        OpData::Rw(RwData { shared: Some(s), .. }) if s.fd == r.file && s.kind & HASH_REG != 0 => s.kind & HASHED == 0,
        // SAFETY: F_GETFL only reads the file's status flags.
        _ => (unsafe { libc::fcntl(r.file, libc::F_GETFL) } & libc::O_DIRECT) != 0,
    }
}

/// The CQE words for an AIO completion of `r` with `res`.
pub(crate) fn aio_result(r: &mut Req, res: i64) -> (i32, u32) {
    match finish(r, res as isize) {
        Issued::Done(res, f) => (res, f),
        _ => unreachable!(),
    }
}

/// Whether a non-blocking attempt at this transfer is known to be futile:
/// O_DIRECT I/O, whose RWF_NOWAIT still waits for the device where the
/// kernel's would return with it in flight (so a submit call never waits
/// for one: a program such as QEMU submits one request at a time and
/// counts on the call returning at once), or a buffered write to a file
/// whose writes refuse RWF_NOWAIT.
fn skip_nowait(fd: i32, write: bool) -> bool {
    let k = file_kind(fd);
    k & K_DIRECT != 0 || (write && k & K_NOWAIT_WRITE_REFUSED != 0)
}

fn write_op(opcode: u8) -> bool {
    matches!(opcode, crate::sys::IORING_OP_WRITE | IORING_OP_WRITEV | IORING_OP_WRITE_FIXED | IORING_OP_WRITEV_FIXED)
}

/// The key io-wq serialises a request by: the inode of a regular file a
/// buffered write goes to (the kernel's hash_reg_file). O_DIRECT writes,
/// which the kernel issues in parallel, and everything else have none.
/// Marks a request whose own dup it found regular (`rf::REG`).
pub(crate) fn hash_key(r: &mut Req) -> Option<u64> {
    if r.flags & rf::DIRECT != 0 {
        // `direct` found a regular file or block device.
        if r.flags & rf::OWN_FILE != 0 {
            r.flags |= rf::REG;
        }
        return None;
    }
    if !write_op(r.sqe.opcode) {
        return None;
    }
    // A request sent off before its first issue (IOSQE_ASYNC) has not
    // looked up its file yet; the kernel's has, and hashes it too.
    let fd = match r.file {
        -1 if r.sqe.has(IOSQE_FIXED_FILE) => r.ctx().rsrc.lock().file(r.sqe.fd as u32)?,
        -1 => r.sqe.fd,
        fd => fd,
    };
    // A dup shared within a submit call was looked at when it was made.
    let (kind, key) = match &r.io {
        OpData::Rw(RwData { shared: Some(s), .. }) if s.fd == fd => (s.kind, s.key),
        _ => file_hash(fd),
    };
    // Only a dup stays the same file until the worker runs the request.
    if kind & HASH_REG != 0 && r.flags & rf::OWN_FILE != 0 {
        r.flags |= rf::REG;
    }
    (kind & HASHED != 0).then_some(key)
}

/// `file_hash` bits: a regular file, a buffered one (hashed).
pub(crate) const HASH_REG: u32 = 1;
pub(crate) const HASHED: u32 = 2;

/// What `hash_key` needs of `fd`: `HASH_*` bits and the inode key.
pub(crate) fn file_hash(fd: i32) -> (u32, u64) {
    let Ok(id) = os::ident_of(fd) else { return (0, 0) };
    if id.kind != libc::S_IFREG {
        return (0, 0);
    }
    // SAFETY: F_GETFL only reads the file's status flags.
    if unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_DIRECT != 0 {
        return (HASH_REG, 0);
    }
    (HASH_REG | HASHED, id.ino ^ id.dev.rotate_left(40))
}

/// Whether a read or write may share a dup of its file (`set_shared`):
/// one of a regular file or block device (a hint, see `file_kind`;
/// `Ctx::submit_file` looks for itself).
pub(crate) fn shareable(r: &Req) -> bool {
    matches!(r.io, OpData::Rw(_)) && file_kind(r.file) & K_REG != 0
}

/// Gives the request (`shareable`) its hold of a shared dup.
pub(crate) fn set_shared(r: &mut Req, s: alloc::sync::Arc<super::req::SharedFile>) {
    data(r).shared = Some(s);
}

/// Takes the request's hold of a shared dup, if it has one.
pub(crate) fn take_shared(r: &mut Req) -> Option<alloc::sync::Arc<super::req::SharedFile>> {
    match &mut r.io {
        OpData::Rw(d) => d.shared.take(),
        _ => None,
    }
}

/// Regular files and block devices, whose short transfers mean "not all
/// cached yet" rather than "that is all there is".
fn complete_io(fd: i32) -> bool {
    matches!(os::file_type(fd), libc::S_IFREG | libc::S_IFBLK)
}

/// One preadv2/pwritev2 over what is left of the request.
fn transfer(r: &mut Req, nowait: bool) -> isize {
    let write = !read_op(r.sqe.opcode);
    let flags = r.sqe.op_flags as i32 | if nowait { libc::RWF_NOWAIT } else { 0 };
    let (fd, off0, addr, len, vec) = (r.file, r.sqe.off as i64, r.sqe.addr, r.sqe.len, vec_io(r));
    let d = data(r);
    let off = if off0 == -1 || d.stream { -1 } else { off0.wrapping_add(d.done as i64) };
    let mut single = libc::iovec { iov_base: core::ptr::null_mut(), iov_len: 0 };
    let (iov, cnt): (*const libc::iovec, i32) = match (&d.iov, vec) {
        (Some(v), _) => (v.as_ptr(), v.len() as i32),
        (None, true) => (addr as *const libc::iovec, len as i32),
        (None, false) => {
            single = libc::iovec {
                iov_base: (addr as usize + d.done as usize) as *mut libc::c_void,
                iov_len: len as usize - d.done as usize,
            };
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
    if !vec_io(r) {
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

/// On an IOPOLL ring only O_DIRECT files can be read or written, as the
/// kernel polls nothing else: the rest get -EOPNOTSUPP.
fn issue_polled(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    if ctx.flags & IORING_SETUP_IOPOLL != 0 {
        // SAFETY: issue functions own their request.
        let fd = unsafe { req.get() }.file;
        // SAFETY: F_GETFL only reads the file's status flags.
        if unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_DIRECT == 0 {
            return Issued::Done(-libc::EOPNOTSUPP, 0);
        }
    }
    issue(ctx, req, mode)
}

fn issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    if !r.sqe.has(IOSQE_BUFFER_SELECT) {
        return issue_rw(r, mode);
    }
    // A ring buffer not consumed at selection keeps the group lock held
    // until the attempt is settled: it is consumed only if the read used
    // it. A buffer taken for good needs no lock meanwhile (a blocking read
    // must not hold up the ring's other selections).
    let mut g = Some(kbuf::lock(ctx));
    if data(r).sel.is_none() {
        let commit = mode == Mode::Worker || !kbuf::pollable(r.file);
        let sel = g.as_mut().map_or(Err(-libc::ENOBUFS), |g| g.select(r.sqe.buf_index, r.sqe.len, commit));
        let p = match sel {
            Ok(p) => p,
            Err(e) => return Issued::Done(e, 0),
        };
        r.sqe.addr = p.addr;
        r.sqe.len = p.len;
        data(r).sel = Some(p);
    }
    if data(r).sel.is_some_and(|p| p.hold != Hold::Peeked) {
        g = None;
    }
    let out = issue_rw(r, mode);
    let mut g = g.unwrap_or_else(|| kbuf::lock(ctx));
    let d = data(r);
    let Some(p) = d.sel else { return out };
    match out {
        Issued::Done(res, f) => {
            d.sel = None;
            Issued::Done(res, f | g.settle(&p, res))
        }
        // Waiting for readiness: the buffer goes back, as the kernel
        // recycles it before it arms its poll.
        Issued::Again if p.hold != Hold::Committed => {
            g.recycle(&p);
            d.sel = None;
            out
        }
        Issued::Blocking if p.hold == Hold::Peeked => {
            d.sel = None;
            out
        }
        out => out,
    }
}

fn issue_rw(r: &mut Req, mode: Mode) -> Issued {
    let user_nowait = r.sqe.op_flags as i32 & libc::RWF_NOWAIT != 0;
    if mode != Mode::Worker && !user_nowait {
        if skip_nowait(r.file, !read_op(r.sqe.opcode)) {
            let k = file_kind(r.file);
            if k & K_DIRECT != 0 {
                r.flags |= rf::DIRECT | if k & K_AIO_REFUSED == 0 { rf::AIO } else { 0 };
            }
            return Issued::Blocking;
        }
    }
    let blocking = mode == Mode::Worker
        && !user_nowait
        && (r.flags & rf::REG != 0 || !matches!(os::file_type(r.file), libc::S_IFIFO | libc::S_IFSOCK | libc::S_IFCHR));
    let ret = transfer(r, !blocking);
    if !blocking && !user_nowait {
        if ret == -(libc::EAGAIN as isize) {
            // A regular file has no readiness to wait for: straight to a
            // worker (which looks at the file again).
            if mode != Mode::Worker && file_kind(r.file) & K_REG != 0 {
                return Issued::Blocking;
            }
            return Issued::Again;
        }
        if ret == -(libc::EOPNOTSUPP as isize) {
            let ty = os::file_type(r.file);
            if matches!(ty, libc::S_IFIFO | libc::S_IFSOCK | libc::S_IFCHR) {
                // A pollable file without non-blocking support (ttys and
                // other character devices; pipes splice used): as the
                // kernel does, ask poll; not ready waits on the reactor.
                // Ready is no promise: another reader may take the data
                // first, and a tty reads as its file flags say. A pipe is
                // reopened non-blocking; the rest (or a pipe that cannot
                // be reopened) go to a worker, which may block (an
                // interrupt ends it).
                if !ready(r.file, poll_mask(r)) {
                    return Issued::Again;
                }
                let ret = match if ty == libc::S_IFIFO { pipe_transfer(r) } else { None } {
                    Some(ret) => ret,
                    None if mode != Mode::Worker => {
                        r.flags |= rf::UNBOUND;
                        return Issued::Blocking;
                    }
                    // Only a cancel interrupts a worker (see
                    // cancel::waits_like_poll).
                    None => match transfer(r, false) {
                        e if e == -(libc::EINTR as isize) && r.flags & rf::UNBOUND != 0 => -(libc::ECANCELED as isize),
                        ret => ret,
                    },
                };
                if ret == -(libc::EAGAIN as isize) {
                    return Issued::Again;
                }
                return finish(r, ret);
            }
            // The file cannot do non-blocking I/O: a worker does it.
            if mode != Mode::Worker {
                if !read_op(r.sqe.opcode) {
                    note_nowait_write_refused(r.file);
                }
                return Issued::Blocking;
            }
            let ret = transfer(r, false);
            return finish(r, ret);
        }
        if ret > 0 && mode != Mode::Worker {
            let want = wanted(r);
            if data(r).done as usize + (ret as usize) < want && complete_io(r.file) {
                if let Err(e) = stabilize(r) {
                    return Issued::Done(e, 0);
                }
                r.flags |= rf::STABLE;
                let d = data(r);
                d.done += ret as u32;
                advance(d, ret as usize);
                return Issued::Blocking;
            }
        }
    }
    finish(r, ret)
}

/// The fast path of a plain READ or WRITE at submission: no SQE flags,
/// no ioprio, rw_flags, buffer index, personality or extension fields, an
/// explicit offset. Tried once without blocking; if the whole length moved
/// it is done, and the CQE words (user_data; res, flags 0) are returned
/// without any request state. Anything else returns None and the SQE
/// takes the general path from scratch: a failed attempt changed nothing,
/// and repeating a partial one at the same explicit offset moves the same
/// bytes again. O_DIRECT files are never tried (see `skip_nowait`).
///
/// # Safety
/// `p` is an SQE slot the engine owns for the moment.
#[inline(always)]
pub(crate) unsafe fn inline_simple(p: *const crate::sys::io_uring_sqe) -> Option<[u64; 2]> {
    use crate::sys::{IORING_OP_READ, IORING_OP_WRITE};
    use core::ptr::read_volatile as rd;
    // SAFETY: per the contract; plain aligned fields of the slot.
    let (head, fd, off, addr, len, rw_flags, user_data, idx, ext) = unsafe {
        let w = p as *const u64;
        (
            rd(p as *const u32),
            rd(&(*p).fd),
            rd(w.add(1)),
            rd(w.add(2)),
            rd(&(*p).len),
            rd(&(*p).rw_flags_u.fsync_flags),
            rd(w.add(4)),
            rd(w.add(5)),
            rd(w.add(6)) | rd(w.add(7)),
        )
    };
    // The first word is opcode, flags (0) and ioprio (0).
    let write = match head {
        h if h == IORING_OP_READ as u32 => false,
        h if h == IORING_OP_WRITE as u32 => true,
        _ => return None,
    };
    if fd < 0
        || off == u64::MAX
        || rw_flags != 0
        || idx != 0
        || ext != 0
        || off > i64::MAX as u64
        || skip_nowait(fd, write)
    {
        return None;
    }
    let iov = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: len as usize };
    let nr = if write { libc::SYS_pwritev2 } else { libc::SYS_preadv2 };
    // SAFETY: one iovec describing the caller's buffer, which the kernel
    // checks (EFAULT); the offset in one word (64-bit), no high half.
    let ret = unsafe {
        crate::sys::syscall6(
            nr,
            fd as usize,
            &iov as *const libc::iovec as usize,
            1,
            off as usize,
            0,
            libc::RWF_NOWAIT as usize,
        )
    };
    if ret != len as isize {
        return None;
    }
    Some([user_data, len as u64])
}

/// Whether the file is ready for `mask` (or in error) right now.
fn ready(fd: i32, mask: u32) -> bool {
    let mut p = libc::pollfd { fd, events: mask as i16, revents: 0 };
    // SAFETY: one live pollfd, zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n != 0 && (n < 0 || p.revents != 0)
}

/// A transfer on a pipe that lost RWF_NOWAIT (splice clears it) that still
/// must not block: done through a second, O_NONBLOCK open of the same pipe
/// (via /proc/self/fd), so a write larger than the free room or a read
/// racing another reader returns short or EAGAIN instead of waiting.
/// None if that open failed (no /proc): only a worker may then go ahead.
fn pipe_transfer(r: &mut Req) -> Option<isize> {
    let write = !read_op(r.sqe.opcode);
    let mode = if write { libc::O_WRONLY } else { libc::O_RDONLY };
    let path = os::proc_fd_path(r.file);
    // SAFETY: NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr() as *const libc::c_char, mode | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let orig = r.file;
    r.file = fd;
    let ret = transfer(r, false);
    r.file = orig;
    super::fileref::close_file(fd);
    Some(ret)
}

/// The CQE result: all bytes so far, or the error if nothing moved. A
/// short transfer fails the chain, as in the kernel.
fn finish(r: &mut Req, ret: isize) -> Issued {
    let done = data(r).done;
    let res = if ret < 0 {
        if done > 0 {
            done as isize
        } else {
            ret
        }
    } else {
        done as isize + ret
    };
    // Only a chain or a skipped success can tell a short transfer apart.
    if res >= 0 && (r.link.is_some() || r.sqe.has(crate::sys::IOSQE_CQE_SKIP_SUCCESS)) && res as usize != wanted(r) {
        r.flags |= rf::FAIL;
    }
    Issued::Done(res.min(i32::MAX as isize) as i32, 0)
}

/// The kernel's cap on back-to-back multishot attempts before it lets
/// others run (MULTISHOT_MAX_RETRY).
const MULTISHOT_MAX_RETRY: u32 = 32;

fn mshot_prep(ctx: &Ctx, r: &mut Req) -> Result<(), i32> {
    if !r.sqe.has(IOSQE_BUFFER_SELECT) {
        return Err(-libc::EINVAL);
    }
    prep(ctx, r)?;
    if r.sqe.addr != 0 || r.sqe.len != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

/// READ_MULTISHOT: reads until the file has nothing more, one provided
/// buffer and one CQE (with IORING_CQE_F_MORE) per read, then waits for
/// readiness again. Ends on EOF, an error or an empty group.
fn mshot_issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    if !kbuf::pollable(r.file) {
        return Issued::Done(-libc::EBADFD, 0);
    }
    for _ in 0..MULTISHOT_MAX_RETRY {
        let mut g = kbuf::lock(ctx);
        let p = match g.select(r.sqe.buf_index, 0, false) {
            Ok(p) => p,
            Err(e) => return Issued::Done(e, 0),
        };
        r.sqe.addr = p.addr;
        r.sqe.len = p.len;
        let ret = transfer(r, true);
        if ret <= 0 {
            g.recycle(&p);
            if ret == -(libc::EAGAIN as isize) {
                return Issued::Again;
            }
            return Issued::Done(ret as i32, 0);
        }
        let f = g.settle(&p, ret as i32);
        drop(g);
        if !ctx.try_post_more(Cqe::new(r.sqe.user_data, ret as i32, f | IORING_CQE_F_MORE), mode) {
            // A full CQ ends it: this CQE is the last, without F_MORE.
            return Issued::Done(ret as i32, f);
        }
        // The kernel reads again (and takes a buffer) only once the file
        // polls readable.
        if !ready(r.file, libc::EPOLLIN as u32) {
            return Issued::Again;
        }
    }
    Issued::Again
}

pub(crate) const READ_MULTISHOT: OpDef =
    OpDef { prep: mshot_prep, issue: mshot_issue, buffer_select: true, iopoll: false, creds: false, ..RW };
