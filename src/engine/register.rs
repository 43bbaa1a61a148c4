//! `io_uring_register(2)` on an engine ring. Opcodes the engine does not
//! implement answer -EINVAL, as a kernel without them does.

use core::sync::atomic::Ordering;

use super::ctx::{Ctx, EVFD_ASYNC, EVFD_PRESENT};
use super::table::{self, RingRef};
use super::{io_wq, kbuf, napi, opdef, os, rsrc};
use crate::sys::*;

/// Kernel limit on registered ring fds per call.
const MAX_RING_FDS: u32 = 16;

/// Rings whose last registered index went away with their fd closed end
/// up in `orphans`, for the caller to tear down once it let go of `r`.
///
/// # Safety
/// `arg`/`nr` are what the caller passed to io_uring_register; they are
/// only accessed through checked copies.
pub(crate) unsafe fn register(
    r: &RingRef,
    opcode: u32,
    arg: *const core::ffi::c_void,
    nr: u32,
    orphans: &mut alloc::vec::Vec<RingRef>,
) -> i32 {
    let ctx = r.ctx();
    // A SINGLE_ISSUER ring takes registrations from its submitter only,
    // as the kernel's does (with or without an SQ thread).
    if !super::wait::issuer_ok(ctx) {
        return -libc::EEXIST;
    }
    if ctx.restricted.load(Ordering::Acquire) && !ctx.restrictions.lock().register_op(opcode) {
        return -libc::EACCES;
    }
    let arg = arg as u64;
    match opcode {
        IORING_REGISTER_PROBE => probe(arg, nr),
        IORING_REGISTER_ENABLE_RINGS => enable(ctx, arg, nr),
        IORING_REGISTER_FILES => rsrc::register_files(ctx, arg, nr),
        IORING_REGISTER_FILES2 => rsrc::register_rsrc2(ctx, arg, nr, true),
        IORING_REGISTER_BUFFERS2 => rsrc::register_rsrc2(ctx, arg, nr, false),
        IORING_UNREGISTER_FILES => none_arg(arg, nr).unwrap_or_else(|| rsrc::unregister_files(ctx)),
        IORING_REGISTER_FILES_UPDATE => rsrc::register_files_update(ctx, arg, nr),
        IORING_REGISTER_FILES_UPDATE2 => rsrc::register_update2(ctx, arg, nr, true),
        IORING_REGISTER_BUFFERS_UPDATE => rsrc::register_update2(ctx, arg, nr, false),
        IORING_REGISTER_FILE_ALLOC_RANGE => rsrc::register_alloc_range(ctx, arg),
        IORING_REGISTER_BUFFERS => rsrc::register_buffers(ctx, arg, nr),
        IORING_UNREGISTER_BUFFERS => none_arg(arg, nr).unwrap_or_else(|| rsrc::unregister_buffers(ctx)),
        IORING_REGISTER_EVENTFD => eventfd(ctx, arg, nr, false),
        IORING_REGISTER_EVENTFD_ASYNC => eventfd(ctx, arg, nr, true),
        IORING_UNREGISTER_EVENTFD => none_arg(arg, nr).unwrap_or_else(|| unregister_eventfd(ctx)),
        IORING_REGISTER_IOWQ_MAX_WORKERS => max_workers(arg, nr),
        IORING_REGISTER_IOWQ_AFF => io_wq::set_affinity(arg, nr),
        IORING_UNREGISTER_IOWQ_AFF => none_arg(arg, nr).unwrap_or_else(io_wq::clear_affinity),
        IORING_REGISTER_RING_FDS => ring_fds(r, arg, nr, None),
        IORING_UNREGISTER_RING_FDS => ring_fds(r, arg, nr, Some(orphans)),
        IORING_REGISTER_MEM_REGION => mem_region(ctx, arg, nr),
        IORING_REGISTER_PBUF_RING => kbuf::register_ring(ctx, arg, nr),
        IORING_UNREGISTER_PBUF_RING => kbuf::unregister_ring(ctx, arg, nr),
        IORING_REGISTER_PBUF_STATUS => kbuf::status(ctx, arg, nr),
        IORING_REGISTER_PERSONALITY => super::creds::register(ctx, arg, nr),
        IORING_REGISTER_CLOCK => clock(ctx, arg, nr),
        IORING_REGISTER_RESTRICTIONS => restrictions(ctx, arg, nr),
        IORING_REGISTER_CLONE_BUFFERS => clone_buffers(ctx, arg, nr),
        IORING_UNREGISTER_PERSONALITY => super::creds::unregister(ctx, arg, nr),
        IORING_REGISTER_NAPI => napi::register(ctx, arg, nr),
        IORING_UNREGISTER_NAPI => napi::unregister(ctx, arg, nr),
        IORING_REGISTER_SYNC_CANCEL if nr == 1 => super::cancel::sync_cancel(ctx, arg),
        IORING_REGISTER_QUERY => super::query::query(arg, nr),
        IORING_REGISTER_RESIZE_RINGS if arg != 0 && nr == 1 => super::setup::resize_rings(ctx, arg),
        _ => -libc::EINVAL,
    }
}

/// Opcodes that take no argument: anything else is -EINVAL.
fn none_arg(arg: u64, nr: u32) -> Option<i32> {
    if arg != 0 || nr != 0 {
        Some(-libc::EINVAL)
    } else {
        None
    }
}

fn read<T: Copy>(addr: u64) -> Result<T, i32> {
    let mut v = core::mem::MaybeUninit::<T>::uninit();
    os::copy_from_user(v.as_mut_ptr() as *mut u8, addr, core::mem::size_of::<T>())?;
    // SAFETY: fully written by the copy; T is plain data.
    Ok(unsafe { v.assume_init() })
}

fn write<T: Copy>(addr: u64, v: &T) -> Result<(), i32> {
    os::copy_to_user(addr, v as *const T as *const u8, core::mem::size_of::<T>())
}

/// IORING_REGISTER_PROBE: the engine's opcodes, in the kernel's format.
fn probe(arg: u64, nr: u32) -> i32 {
    let nr = nr.min(IORING_OP_LAST as u32) as usize;
    let hdr = core::mem::size_of::<io_uring_probe>();
    let len = hdr + nr * core::mem::size_of::<io_uring_probe_op>();
    let mut buf = alloc::vec![0u8; len];
    if let Err(e) = os::copy_from_user(buf.as_mut_ptr(), arg, len) {
        return e;
    }
    if buf.iter().any(|&b| b != 0) {
        return -libc::EINVAL;
    }
    buf[0] = IORING_OP_LAST - 1;
    buf[1] = nr as u8;
    for i in 0..nr {
        let o = hdr + i * core::mem::size_of::<io_uring_probe_op>();
        buf[o] = i as u8;
        if opdef::supported(i as u32) {
            buf[o + 2..o + 4].copy_from_slice(&IO_URING_OP_SUPPORTED.to_ne_bytes());
        }
    }
    match os::copy_to_user(arg, buf.as_ptr(), len) {
        Ok(()) => 0,
        Err(e) => e,
    }
}

/// IORING_REGISTER_CLOCK: the clock of absolute wait timeouts
/// (IORING_ENTER_ABS_TIMER), CLOCK_MONOTONIC or CLOCK_BOOTTIME.
fn clock(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if arg == 0 || nr != 0 {
        return -libc::EINVAL;
    }
    let reg: crate::sys::io_uring_clock_register = match read(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if reg.__resv != [0; 3] {
        return -libc::EINVAL;
    }
    match reg.clockid as i32 {
        libc::CLOCK_MONOTONIC => ctx.clock_boottime.store(false, Ordering::Relaxed),
        libc::CLOCK_BOOTTIME => ctx.clock_boottime.store(true, Ordering::Relaxed),
        _ => return -libc::EINVAL,
    }
    0
}

/// What a ring set up disabled may be restricted to once enabled
/// (IORING_REGISTER_RESTRICTIONS): register opcodes, SQE opcodes, and SQE
/// flags allowed or required. Anything else is refused with -EACCES.
pub(crate) struct Restrictions {
    register_ops: u64,
    sqe_ops: [u64; 2],
    flags_allowed: u8,
    flags_required: u8,
    pub registered: bool,
}

const _: () = assert!(IORING_REGISTER_LAST <= 64 && IORING_OP_LAST as u32 <= 128);

impl Restrictions {
    pub(crate) const fn new() -> Restrictions {
        Restrictions { register_ops: 0, sqe_ops: [0; 2], flags_allowed: 0, flags_required: 0, registered: false }
    }

    fn register_op(&self, op: u32) -> bool {
        op < 64 && self.register_ops & 1 << op != 0
    }

    /// Whether an SQE with `opcode` and `flags` may go (the kernel's
    /// io_check_restriction).
    pub(crate) fn sqe(&self, opcode: u8, flags: u8) -> bool {
        let op = opcode as usize;
        op < 128
            && self.sqe_ops[op / 64] & 1 << (op % 64) != 0
            && flags & self.flags_required == self.flags_required
            && flags & !(self.flags_allowed | self.flags_required) == 0
    }
}

/// IORING_REGISTER_RESTRICTIONS: once, on a ring still disabled.
fn restrictions(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if !ctx.disabled.load(Ordering::Acquire) {
        return -libc::EBADFD;
    }
    if ctx.restrictions.lock().registered {
        return -libc::EBUSY;
    }
    if arg == 0 || nr > IORING_RESTRICTION_LAST as u32 + IORING_REGISTER_LAST {
        return -libc::EINVAL;
    }
    let mut v = alloc::vec::Vec::with_capacity(nr as usize);
    for i in 0..nr as u64 {
        match read::<io_uring_restriction>(arg + i * core::mem::size_of::<io_uring_restriction>() as u64) {
            Ok(x) => v.push(x),
            Err(e) => return e,
        }
    }
    let mut r = Restrictions::new();
    for x in &v {
        // SAFETY: every member of the union is a u8.
        let b = unsafe { x.register_op_u.register_op };
        match x.opcode {
            IORING_RESTRICTION_REGISTER_OP if (b as u32) < IORING_REGISTER_LAST => r.register_ops |= 1 << b,
            IORING_RESTRICTION_SQE_OP if b < IORING_OP_LAST => r.sqe_ops[b as usize / 64] |= 1 << (b % 64),
            IORING_RESTRICTION_SQE_FLAGS_ALLOWED => r.flags_allowed = b,
            IORING_RESTRICTION_SQE_FLAGS_REQUIRED => r.flags_required = b,
            _ => return -libc::EINVAL,
        }
    }
    r.registered = true;
    *ctx.restrictions.lock() = r;
    0
}

/// IORING_REGISTER_CLONE_BUFFERS: the source must be an engine ring too
/// (-EOPNOTSUPP otherwise, as the kernel answers for a file that is no
/// ring of its own).
fn clone_buffers(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if nr != 1 {
        return -libc::EINVAL;
    }
    let a: io_uring_clone_buffers = match read(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if a.flags & !(IORING_REGISTER_SRC_REGISTERED | IORING_REGISTER_DST_REPLACE) != 0 || a.pad != [0; 3] {
        return -libc::EINVAL;
    }
    if a.flags & IORING_REGISTER_DST_REPLACE == 0 && ctx.rsrc.lock().has_buffers() {
        return -libc::EBUSY;
    }
    let src = if a.flags & IORING_REGISTER_SRC_REGISTERED != 0 {
        table::lookup_registered(a.src_fd)
    } else {
        table::lookup(a.src_fd as i32)
    };
    let Some(src) = src else {
        // SAFETY: F_GETFD only inspects the descriptor table.
        let open = a.flags & IORING_REGISTER_SRC_REGISTERED == 0
            && unsafe { libc::fcntl(a.src_fd as i32, libc::F_GETFD) } >= 0;
        return if open { -libc::EOPNOTSUPP } else { -libc::EBADF };
    };
    if !core::ptr::eq(src.ctx(), ctx) && !super::wait::issuer_ok(src.ctx()) {
        return -libc::EEXIST;
    }
    rsrc::clone_buffers(ctx, src.ctx(), &a)
}

fn enable(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if let Some(e) = none_arg(arg, nr) {
        return e;
    }
    if !ctx.disabled.load(Ordering::Acquire) {
        return -libc::EBADFD;
    }
    super::wait::claim_issuer(ctx);
    if ctx.restrictions.lock().registered {
        ctx.restricted.store(true, Ordering::Release);
    }
    ctx.disabled.store(false, Ordering::Release);
    super::sqpoll::wake(ctx);
    0
}

/// IORING_REGISTER_EVENTFD(_ASYNC): the kernel takes a reference to the
/// eventfd (-EBADF for a closed fd, -EINVAL for a file that is no
/// eventfd); the engine keeps a dup of its own, at an engine number.
fn eventfd(ctx: &Ctx, arg: u64, nr: u32, async_only: bool) -> i32 {
    if nr != 1 {
        return -libc::EINVAL;
    }
    if ctx.evfd.load(Ordering::Acquire) & EVFD_PRESENT != 0 {
        return -libc::EBUSY;
    }
    let fd: i32 = match read(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if let Err(e) = is_eventfd(fd) {
        return e;
    }
    let d = os::dup(fd);
    if d < 0 {
        return d;
    }
    let v = d as u32 as u64 | EVFD_PRESENT | if async_only { EVFD_ASYNC } else { 0 };
    if ctx.evfd.compare_exchange(0, v, Ordering::AcqRel, Ordering::Acquire).is_err() {
        os::close(d);
        return -libc::EBUSY;
    }
    0
}

/// Whether `fd` is an open eventfd: its /proc link names it so. Without
/// /proc, any anonymous-inode file passes (the ring's own eventfd taught
/// `os::anon_ok` what one looks like).
fn is_eventfd(fd: i32) -> Result<(), i32> {
    // -EBADF for a closed fd.
    os::ident(fd)?;
    let ok = match os::fd_link(fd, &mut [0u8; 32]) {
        Some(l) => l == b"anon_inode:[eventfd]",
        None => os::anon_ok(fd),
    };
    if ok {
        Ok(())
    } else {
        Err(-libc::EINVAL)
    }
}

/// IORING_UNREGISTER_EVENTFD: once it returns, no signal reaches the
/// eventfd (nor whatever file its number may hold next).
fn unregister_eventfd(ctx: &Ctx) -> i32 {
    let v = ctx.evfd.swap(0, Ordering::SeqCst);
    if v & EVFD_PRESENT == 0 {
        return -libc::ENXIO;
    }
    // Pairs with `Ctx::signal_eventfd`: a signaller counted before the
    // swap may still write to the dup.
    while ctx.evfd_users.load(Ordering::SeqCst) != 0 {
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
    }
    if !ctx.is_lost() {
        os::close(v as u32 as i32);
    }
    0
}

fn max_workers(arg: u64, nr: u32) -> i32 {
    if nr != 2 {
        return -libc::EINVAL;
    }
    let mut vals: [u32; 2] = match read(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if vals.iter().any(|&v| v > i32::MAX as u32) {
        return -libc::EINVAL;
    }
    // As the kernel, no cap above the caller's process limit.
    if let Ok((nproc, _)) = crate::sys::getrlimit(libc::RLIMIT_NPROC) {
        for v in vals.iter_mut() {
            *v = (*v as u64).min(nproc) as u32;
        }
    }
    io_wq::set_max(&mut vals);
    match write(arg, &vals) {
        Ok(()) => 0,
        Err(e) => e,
    }
}

/// IORING_(UN)REGISTER_RING_FDS (`orphans` when unregistering):
/// registered indexes of engine rings start at `table::REG_BASE`.
fn ring_fds(r: &RingRef, arg: u64, nr: u32, mut orphans: Option<&mut alloc::vec::Vec<RingRef>>) -> i32 {
    let reg = orphans.is_none();
    if nr == 0 || nr > MAX_RING_FDS {
        return -libc::EINVAL;
    }
    let mut done = 0;
    for i in 0..nr as u64 {
        let at = arg + i * core::mem::size_of::<io_uring_rsrc_update>() as u64;
        let mut up: io_uring_rsrc_update = match read(at) {
            Ok(v) => v,
            Err(e) => return if done != 0 { done } else { e },
        };
        // As the kernel: an unregistration names no fd.
        if up.resv != 0 || (!reg && up.data != 0) {
            return if done != 0 { done } else { -libc::EINVAL };
        }
        let ret = if reg {
            let ring = if up.data as i32 == r.ctx().fd() { Some(r.clone()) } else { table::lookup(up.data as i32) };
            match ring {
                None => Err(-libc::EOPNOTSUPP),
                Some(ring) => table::register_index(&ring, up.offset).map(|idx| up.offset = idx),
            }
        } else {
            table::unregister_index(up.offset).map(|o| {
                if let (Some(o), Some(v)) = (o, orphans.as_deref_mut()) {
                    v.push(o);
                }
            })
        };
        if let Err(e) = ret {
            return if done != 0 { done } else { e };
        }
        if reg {
            if let Err(e) = write(at, &up) {
                return if done != 0 { done } else { e };
            }
        }
        done += 1;
    }
    done
}

/// IORING_REGISTER_MEM_REGION: only the registered-wait kind, in user
/// memory, on a ring that is still disabled (as the kernel requires).
fn mem_region(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if nr != 1 {
        return -libc::EINVAL;
    }
    let mr: io_uring_mem_region_reg = match read(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if mr.__resv != [0; 2] || mr.flags != IORING_MEM_REGION_REG_WAIT_ARG {
        return -libc::EINVAL;
    }
    if !ctx.disabled.load(Ordering::Acquire) {
        return -libc::EINVAL;
    }
    let rd: io_uring_region_desc = match read(mr.region_uptr) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let page = crate::sys::mem::page_size() as u64;
    if rd.flags != IORING_MEM_REGION_TYPE_USER || rd.__resv != [0; 4] || rd.id != 0 || rd.mmap_offset != 0 {
        return -libc::EINVAL;
    }
    if rd.user_addr % page != 0 || rd.size == 0 || rd.size % page != 0 {
        return -libc::EINVAL;
    }
    if rd.user_addr.checked_add(rd.size).is_none() {
        return -libc::EOVERFLOW;
    }
    if rd.user_addr == 0 || !crate::sys::mem::writable(rd.user_addr, rd.size as usize) {
        return -libc::EFAULT;
    }
    let mut w = ctx.wait_region.lock();
    if w.1 != 0 {
        return -libc::EBUSY;
    }
    *w = (rd.user_addr, rd.size as usize);
    0
}
