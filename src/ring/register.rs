//! Registration: everything that goes through `io_uring_register(2)`.
//!
//! Functions that take raw pointers are `unsafe`: the pointers go to the
//! kernel as they are, so they must be valid for whatever the opcode reads
//! or writes, for the duration of the call (what liburing's man pages ask
//! of C callers). The kernel itself turns bad addresses into `-EFAULT`.

use core::ffi::c_void;

use super::setup::{identity_map_sq_array, kill, mmap_rings, release_memory, sq_cq_entries, Reservation};
use super::types::{int_flags, IoUring, IoUringCq, IoUringSq, Ring};
use core::mem::size_of;
use core::ptr;

use crate::sys::{
    io_uring_bpf, io_uring_buf_reg, io_uring_buf_status, io_uring_clock_register, io_uring_clone_buffers,
    io_uring_file_index_range, io_uring_mem_region_reg, io_uring_napi, io_uring_params, io_uring_probe,
    io_uring_query_hdr, io_uring_reg_wait, io_uring_region_desc, io_uring_restriction, io_uring_rsrc_register,
    io_uring_rsrc_update, io_uring_rsrc_update2, io_uring_sqe, io_uring_sync_cancel_reg, io_uring_zcrx_ifq_reg,
    zcrx_ctrl, IORING_FEAT_NO_IOWAIT, IORING_FEAT_REG_REG_RING, IORING_MEM_REGION_REG_WAIT_ARG,
    IORING_MEM_REGION_TYPE_USER, IORING_REGISTER_BPF_FILTER, IORING_REGISTER_BUFFERS, IORING_REGISTER_BUFFERS2,
    IORING_REGISTER_BUFFERS_UPDATE, IORING_REGISTER_CLOCK, IORING_REGISTER_CLONE_BUFFERS, IORING_REGISTER_ENABLE_RINGS,
    IORING_REGISTER_EVENTFD, IORING_REGISTER_EVENTFD_ASYNC, IORING_REGISTER_FILES, IORING_REGISTER_FILES2,
    IORING_REGISTER_FILES_UPDATE, IORING_REGISTER_FILES_UPDATE2, IORING_REGISTER_FILE_ALLOC_RANGE,
    IORING_REGISTER_IOWQ_AFF, IORING_REGISTER_IOWQ_MAX_WORKERS, IORING_REGISTER_MEM_REGION, IORING_REGISTER_NAPI,
    IORING_REGISTER_PBUF_RING, IORING_REGISTER_PBUF_STATUS, IORING_REGISTER_PERSONALITY, IORING_REGISTER_PROBE,
    IORING_REGISTER_QUERY, IORING_REGISTER_RESIZE_RINGS, IORING_REGISTER_RESTRICTIONS, IORING_REGISTER_RING_FDS,
    IORING_REGISTER_SEND_MSG_RING, IORING_REGISTER_SRC_REGISTERED, IORING_REGISTER_SYNC_CANCEL,
    IORING_REGISTER_USE_REGISTERED_RING, IORING_REGISTER_ZCRX_CTRL, IORING_REGISTER_ZCRX_IFQ,
    IORING_RSRC_REGISTER_SPARSE, IORING_SETUP_CLAMP, IORING_SETUP_CQSIZE, IORING_SETUP_NO_MMAP,
    IORING_UNREGISTER_BUFFERS, IORING_UNREGISTER_EVENTFD, IORING_UNREGISTER_FILES, IORING_UNREGISTER_IOWQ_AFF,
    IORING_UNREGISTER_NAPI, IORING_UNREGISTER_PBUF_RING, IORING_UNREGISTER_PERSONALITY, IORING_UNREGISTER_RING_FDS,
};

/// Issues one register opcode, through the registered ring index when the
/// kernel allows it (saves a file lookup). Not inlined: one copy of the
/// diagnostics hook serves every register call.
///
/// # Safety
/// `arg` is null or valid for what `opcode` reads and writes with `nr_args`
/// elements, during the call.
#[inline(never)]
pub unsafe fn do_register(ring: Ring, opcode: u32, arg: *const c_void, nr_args: u32) -> i32 {
    let (fd, opcode) = if ring.int_flags() & int_flags::REG_REG_RING != 0 {
        (ring.enter_ring_fd(), opcode | IORING_REGISTER_USE_REGISTERED_RING)
    } else {
        (ring.ring_fd(), opcode)
    };
    // fd -1 would make a ring-less ("blind") register call, which acts on
    // the whole task: a dead or fd-less ring must never reach the kernel.
    let ret = if fd < 0 {
        -libc::EBADF
    } else {
        // SAFETY: the kernel validates `arg` against `opcode` and `nr_args`;
        // callers pass memory that lives for the duration of the call.
        unsafe { super::syscall::io_uring_register(fd, opcode, arg, nr_args) }
    };
    if crate::diag::on() {
        crate::diag::register(ring.as_ptr(), opcode, arg, nr_args, ret);
    }
    ret
}

/// `io_uring_register_probe`.
///
/// # Safety
/// `p` is null or points to a writable `io_uring_probe` with room for
/// `nr_ops` entries in its `ops`, for the call.
pub unsafe fn register_probe(ring: Ring, p: *mut io_uring_probe, nr_ops: u32) -> i32 {
    do_register(ring, IORING_REGISTER_PROBE, p as *const c_void, nr_ops)
}

/// `io_uring_enable_rings`: starts a ring created with IORING_SETUP_R_DISABLED.
pub fn enable_rings(ring: Ring) -> i32 {
    register_null(ring, IORING_REGISTER_ENABLE_RINGS, 0)
}

/// `io_uring_register_ring_fd`: returns 1 on success, as the kernel does.
pub fn register_ring_fd(ring: Ring) -> i32 {
    if ring.int_flags() & int_flags::REG_RING != 0 {
        return -libc::EEXIST;
    }
    let mut up = io_uring_rsrc_update { offset: u32::MAX, resv: 0, data: ring.ring_fd() as u64 };
    let ret = register_val(ring, IORING_REGISTER_RING_FDS, &mut up, 1);
    if ret == 1 {
        let mut f = ring.int_flags() | int_flags::REG_RING;
        if ring.has_feature(IORING_FEAT_REG_REG_RING) {
            f |= int_flags::REG_REG_RING;
        }
        ring.set_enter_ring_fd(up.offset as i32);
        ring.set_int_flags(f);
    }
    ret
}

/// `io_uring_unregister_ring_fd`.
pub fn unregister_ring_fd(ring: Ring) -> i32 {
    if ring.is_dead() {
        return -libc::EBADF;
    }
    if ring.int_flags() & int_flags::REG_RING == 0 {
        return -libc::EINVAL;
    }
    let mut up = io_uring_rsrc_update { offset: ring.enter_ring_fd() as u32, resv: 0, data: 0 };
    let ret = register_val(ring, IORING_UNREGISTER_RING_FDS, &mut up, 1);
    if ret == 1 {
        ring.set_enter_ring_fd(ring.ring_fd());
        ring.set_int_flags(ring.int_flags() & !(int_flags::REG_RING | int_flags::REG_REG_RING));
    }
    ret
}

/// `io_uring_close_ring_fd`: drops the plain fd once the ring is reachable
/// through its registered index alone.
pub fn close_ring_fd(ring: Ring) -> i32 {
    if ring.is_dead() {
        return -libc::EBADF;
    }
    if ring.features() & IORING_FEAT_REG_REG_RING == 0 {
        return -libc::EOPNOTSUPP;
    }
    if ring.int_flags() & int_flags::REG_RING == 0 {
        return -libc::EINVAL;
    }
    if ring.ring_fd() == -1 {
        return -libc::EBADF;
    }
    let ret = super::syscall::close_ring_fd(ring.ring_fd());
    if ret < 0 {
        return ret;
    }
    ring.set_ring_fd(-1);
    1
}

/// `io_uring_resize_rings`: an exclusive call (see [`Ring`]). Nothing is
/// lost and nothing is left half-done:
/// - address space for the new rings is reserved before the kernel is asked,
///   so once it has switched, mapping them cannot run short of it; if it
///   fails anyway, the ring is torn down cleanly (dead), since the old
///   mappings no longer reach the kernel's rings;
/// - SQEs prepared but not yet submitted move to the new SQE array at the
///   same distance from the head (the kernel carries over only those it has
///   already seen).
pub fn resize_rings(ring: Ring, p: &mut io_uring_params) -> i32 {
    let ret = resize_inner(ring, p);
    // The kernel reads p.flags as resize flags; leave it clean for reuse.
    p.flags = 0;
    ret
}

fn resize_inner(ring: Ring, p: &mut io_uring_params) -> i32 {
    if ring.is_dead() {
        return -libc::EBADF;
    }
    let mut r = ring.load();
    if r.flags & IORING_SETUP_NO_MMAP != 0 {
        return -libc::EINVAL;
    }
    if r.ring_fd < 0 {
        // Closed with io_uring_close_ring_fd: nothing to map the rings from.
        return -libc::EBADF;
    }
    // The new shape: the ring's own setup flags, the caller's sizes.
    let shape = io_uring_params {
        flags: r.flags | (p.flags & (IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP)),
        cq_entries: p.cq_entries,
        ..Default::default()
    };
    let (sq_entries, cq_entries) = match sq_cq_entries(p.sq_entries, &shape) {
        Ok(v) => v,
        Err(e) => return e,
    };
    // SAFETY: khead points into the live SQ ring.
    let head = unsafe { super::load_acquire(r.sq.khead) };
    if r.sq.sqe_tail.wrapping_sub(head) > sq_entries {
        return -libc::EOVERFLOW;
    }
    let mut reservation = match Reservation::new(r.flags, sq_entries, cq_entries) {
        Ok(v) => v,
        Err(e) => return e,
    };

    p.sq_off = Default::default();
    p.cq_off = Default::default();
    let ret = register_val(ring, IORING_REGISTER_RESIZE_RINGS, p, 1);
    if ret < 0 {
        return ret;
    }
    let mut sq = IoUringSq::zeroed();
    let mut cq = IoUringCq::zeroed();
    let mut err = mmap_rings(r.ring_fd, p, &mut sq, &mut cq, Some(&mut reservation));
    if err != 0 {
        err = mmap_rings(r.ring_fd, p, &mut sq, &mut cq, None);
    }
    drop(reservation);
    if err != 0 {
        kill(ring, &r);
        return err;
    }
    move_unsubmitted(&r, &sq);
    sq.sqe_head = r.sq.sqe_head;
    sq.sqe_tail = r.sq.sqe_tail;
    release_memory(&r);
    r.sq = sq;
    r.cq = cq;
    identity_map_sq_array(&mut r.sq);
    ring.store(r);
    ret
}

/// Copies the SQEs filled since the last submit, `[sqe_head, sqe_tail)`,
/// from the old SQE array to the new one, each to its index's new slot.
fn move_unsubmitted(old: &IoUring, new: &IoUringSq) {
    let shift = super::sqe_shift(old.flags);
    let mut i = old.sq.sqe_head;
    while i != old.sq.sqe_tail {
        let from = ((i & old.sq.ring_mask) << shift) as usize;
        let to = ((i & new.ring_mask) << shift) as usize;
        // SAFETY: both indexes are inside their SQE arrays (masked slots,
        // times the entry size), the arrays are distinct mappings, and the
        // kernel reads neither slot before the next submit.
        unsafe { ptr::copy_nonoverlapping(old.sq.sqes.add(from), new.sqes.add(to), 1 << shift) };
        i = i.wrapping_add(1);
    }
}

// ---------------------------------------------------------------------------
// Buffers and files
// ---------------------------------------------------------------------------

#[inline]
/// A register call whose argument is a Rust value the kernel reads or fills.
fn register_val<T>(ring: Ring, opcode: u32, arg: &mut T, nr_args: u32) -> i32 {
    // SAFETY: `arg` is a live, exclusive borrow for the whole call.
    unsafe { do_register(ring, opcode, arg as *mut T as *const c_void, nr_args) }
}

/// A register call that takes no argument memory.
fn register_null(ring: Ring, opcode: u32, nr_args: u32) -> i32 {
    // SAFETY: a null argument gives the kernel nothing to access.
    unsafe { do_register(ring, opcode, core::ptr::null(), nr_args) }
}

/// `io_uring_register_buffers`.
///
/// # Safety
/// `iovecs` is null or points to `nr` readable `libc::iovec`s, as the kernel
/// accesses them, for the call.
pub unsafe fn register_buffers(ring: Ring, iovecs: *const libc::iovec, nr: u32) -> i32 {
    do_register(ring, IORING_REGISTER_BUFFERS, iovecs as *const c_void, nr)
}

/// `io_uring_register_buffers_tags`.
///
/// # Safety
/// `iovecs` is null or points to `nr` readable `libc::iovec`s, as the kernel
/// accesses them, for the call.
/// `tags` is null or points to `nr` readable `u64`s, as the kernel accesses
/// them, for the call.
pub unsafe fn register_buffers_tags(ring: Ring, iovecs: *const libc::iovec, tags: *const u64, nr: u32) -> i32 {
    let mut reg = io_uring_rsrc_register { nr, data: iovecs as u64, tags: tags as u64, ..Default::default() };
    register_val(ring, IORING_REGISTER_BUFFERS2, &mut reg, size_of::<io_uring_rsrc_register>() as u32)
}

/// `io_uring_register_buffers_sparse`.
pub fn register_buffers_sparse(ring: Ring, nr: u32) -> i32 {
    let mut reg = io_uring_rsrc_register { nr, flags: IORING_RSRC_REGISTER_SPARSE, ..Default::default() };
    register_val(ring, IORING_REGISTER_BUFFERS2, &mut reg, size_of::<io_uring_rsrc_register>() as u32)
}

/// `io_uring_register_buffers_update_tag`.
///
/// # Safety
/// `iovecs` is null or points to `nr` readable `libc::iovec`s, as the kernel
/// accesses them, for the call.
/// `tags` is null or points to `nr` readable `u64`s, as the kernel accesses
/// them, for the call.
pub unsafe fn register_buffers_update_tag(
    ring: Ring,
    off: u32,
    iovecs: *const libc::iovec,
    tags: *const u64,
    nr: u32,
) -> i32 {
    let mut up =
        io_uring_rsrc_update2 { offset: off, data: iovecs as u64, tags: tags as u64, nr, ..Default::default() };
    register_val(ring, IORING_REGISTER_BUFFERS_UPDATE, &mut up, size_of::<io_uring_rsrc_update2>() as u32)
}

/// `io_uring_unregister_buffers`.
pub fn unregister_buffers(ring: Ring) -> i32 {
    register_null(ring, IORING_UNREGISTER_BUFFERS, 0)
}

/// Raises the soft RLIMIT_NOFILE by `nr` when it is below `nr`, as liburing
/// does before retrying a file registration that failed with -EMFILE.
/// A failing setrlimit is ignored: the retry then reports the real error.
fn bump_nofile(nr: u32) {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: rl is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } < 0 {
        return;
    }
    if rl.rlim_cur < nr as libc::rlim_t {
        rl.rlim_cur = rl.rlim_cur.saturating_add(nr as libc::rlim_t);
        // SAFETY: rl is a valid rlimit; only this process's limit changes.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) };
    }
}

/// Runs a file registration, retrying once with a raised fd limit when the
/// kernel says the table would exceed RLIMIT_NOFILE.
fn with_nofile_retry(nr: u32, mut f: impl FnMut() -> i32) -> i32 {
    let ret = f();
    if ret != -libc::EMFILE {
        return ret;
    }
    bump_nofile(nr);
    f()
}

/// `io_uring_register_files`.
///
/// # Safety
/// `files` is null or points to `nr` readable `i32`s, as the kernel accesses
/// them, for the call.
pub unsafe fn register_files(ring: Ring, files: *const i32, nr: u32) -> i32 {
    with_nofile_retry(nr, || do_register(ring, IORING_REGISTER_FILES, files as *const c_void, nr))
}

/// `io_uring_register_files_tags`.
///
/// # Safety
/// `files` is null or points to `nr` readable `i32`s, as the kernel accesses
/// them, for the call.
/// `tags` is null or points to `nr` readable `u64`s, as the kernel accesses
/// them, for the call.
pub unsafe fn register_files_tags(ring: Ring, files: *const i32, tags: *const u64, nr: u32) -> i32 {
    let mut reg = io_uring_rsrc_register { nr, data: files as u64, tags: tags as u64, ..Default::default() };
    with_nofile_retry(nr, || {
        register_val(ring, IORING_REGISTER_FILES2, &mut reg, size_of::<io_uring_rsrc_register>() as u32)
    })
}

/// `io_uring_register_files_sparse`.
pub fn register_files_sparse(ring: Ring, nr: u32) -> i32 {
    let mut reg = io_uring_rsrc_register { nr, flags: IORING_RSRC_REGISTER_SPARSE, ..Default::default() };
    with_nofile_retry(nr, || {
        register_val(ring, IORING_REGISTER_FILES2, &mut reg, size_of::<io_uring_rsrc_register>() as u32)
    })
}

/// `io_uring_register_files_update`: returns how many slots were updated.
///
/// # Safety
/// `files` is null or points to `nr` readable `i32`s, as the kernel accesses
/// them, for the call.
pub unsafe fn register_files_update(ring: Ring, off: u32, files: *const i32, nr: u32) -> i32 {
    let mut up = io_uring_rsrc_update { offset: off, resv: 0, data: files as u64 };
    register_val(ring, IORING_REGISTER_FILES_UPDATE, &mut up, nr)
}

/// `io_uring_register_files_update_tag`.
///
/// # Safety
/// `files` is null or points to `nr` readable `i32`s, as the kernel accesses
/// them, for the call.
/// `tags` is null or points to `nr` readable `u64`s, as the kernel accesses
/// them, for the call.
pub unsafe fn register_files_update_tag(ring: Ring, off: u32, files: *const i32, tags: *const u64, nr: u32) -> i32 {
    let mut up = io_uring_rsrc_update2 { offset: off, data: files as u64, tags: tags as u64, nr, ..Default::default() };
    register_val(ring, IORING_REGISTER_FILES_UPDATE2, &mut up, size_of::<io_uring_rsrc_update2>() as u32)
}

/// `io_uring_unregister_files`.
pub fn unregister_files(ring: Ring) -> i32 {
    register_null(ring, IORING_UNREGISTER_FILES, 0)
}

/// `io_uring_register_file_alloc_range`: the range goes in `arg`, `nr_args` is 0.
pub fn register_file_alloc_range(ring: Ring, off: u32, len: u32) -> i32 {
    let mut range = io_uring_file_index_range { off, len, resv: 0 };
    register_val(ring, IORING_REGISTER_FILE_ALLOC_RANGE, &mut range, 0)
}

/// `__io_uring_clone_buffers_offset`: `src` is named by its registered index
/// only when asked to and when the kernel can resolve it that way.
pub fn clone_buffers_offset(dst: Ring, src: Ring, dst_off: u32, src_off: u32, nr: u32, flags: u32) -> i32 {
    let mut buf = io_uring_clone_buffers { flags, src_off, dst_off, nr, ..Default::default() };
    if flags & IORING_REGISTER_SRC_REGISTERED != 0 && src.int_flags() & int_flags::REG_REG_RING != 0 {
        buf.src_fd = src.enter_ring_fd() as u32;
    } else {
        buf.src_fd = src.ring_fd() as u32;
        buf.flags &= !IORING_REGISTER_SRC_REGISTERED;
    }
    register_val(dst, IORING_REGISTER_CLONE_BUFFERS, &mut buf, 1)
}

// ---------------------------------------------------------------------------
// Notification, credentials, io-wq, misc ring settings
// ---------------------------------------------------------------------------

/// `io_uring_register_eventfd`.
pub fn register_eventfd(ring: Ring, mut fd: i32) -> i32 {
    register_val(ring, IORING_REGISTER_EVENTFD, &mut fd, 1)
}

/// `io_uring_register_eventfd_async`.
pub fn register_eventfd_async(ring: Ring, mut fd: i32) -> i32 {
    register_val(ring, IORING_REGISTER_EVENTFD_ASYNC, &mut fd, 1)
}

/// `io_uring_unregister_eventfd`.
pub fn unregister_eventfd(ring: Ring) -> i32 {
    register_null(ring, IORING_UNREGISTER_EVENTFD, 0)
}

/// `io_uring_register_personality`: returns the new personality id.
pub fn register_personality(ring: Ring) -> i32 {
    register_null(ring, IORING_REGISTER_PERSONALITY, 0)
}

/// `io_uring_unregister_personality`: the id travels in `nr_args`.
pub fn unregister_personality(ring: Ring, id: i32) -> i32 {
    register_null(ring, IORING_UNREGISTER_PERSONALITY, id as u32)
}

/// `io_uring_register_restrictions`.
///
/// # Safety
/// `res` is null or points to `nr` readable and writable
/// `io_uring_restriction`s, as the kernel accesses them, for the call.
pub unsafe fn register_restrictions(ring: Ring, res: *mut io_uring_restriction, nr: u32) -> i32 {
    do_register(ring, IORING_REGISTER_RESTRICTIONS, res as *const c_void, nr)
}

/// `io_uring_register_iowq_aff`: the kernel takes the mask size in an
/// int-sized argument, so sizes that do not fit are refused up front.
///
/// # Safety
/// `mask` is null or points to `cpusz` readable bytes of CPU mask, for the
/// call.
pub unsafe fn register_iowq_aff(ring: Ring, cpusz: usize, mask: *const libc::cpu_set_t) -> i32 {
    if cpusz >= 1usize << 31 {
        return -libc::EINVAL;
    }
    do_register(ring, IORING_REGISTER_IOWQ_AFF, mask as *const c_void, cpusz as u32)
}

/// `io_uring_unregister_iowq_aff`.
pub fn unregister_iowq_aff(ring: Ring) -> i32 {
    register_null(ring, IORING_UNREGISTER_IOWQ_AFF, 0)
}

/// `io_uring_register_iowq_max_workers`: `val` is `[bounded, unbounded]`,
/// in and out.
///
/// # Safety
/// `val` is null or points to two readable and writable `u32`s (the bounded
/// and unbounded caps), for the call.
pub unsafe fn register_iowq_max_workers(ring: Ring, val: *mut u32) -> i32 {
    do_register(ring, IORING_REGISTER_IOWQ_MAX_WORKERS, val as *const c_void, 2)
}

/// `io_uring_register_sync_cancel`.
///
/// # Safety
/// `reg` is null or points to a readable and writable
/// `io_uring_sync_cancel_reg`, and what it points to in turn, valid for what
/// the opcode accesses during the call.
pub unsafe fn register_sync_cancel(ring: Ring, reg: *mut io_uring_sync_cancel_reg) -> i32 {
    do_register(ring, IORING_REGISTER_SYNC_CANCEL, reg as *const c_void, 1)
}

/// `io_uring_register_sync_msg`: a ring-less call, so fd is -1.
///
/// # Safety
/// `sqe` is null or points to a readable and writable `io_uring_sqe`, and what
/// it points to in turn, valid for what the opcode accesses during the call.
pub unsafe fn register_sync_msg(sqe: *mut io_uring_sqe) -> i32 {
    // SAFETY: the kernel reads one SQE from `sqe`, which the caller owns.
    unsafe { super::syscall::io_uring_register(-1, IORING_REGISTER_SEND_MSG_RING, sqe as *const c_void, 1) }
}

/// `io_uring_register_napi`.
///
/// # Safety
/// `napi` is null or points to a readable and writable `io_uring_napi`, and
/// what it points to in turn, valid for what the opcode accesses during the
/// call.
pub unsafe fn register_napi(ring: Ring, napi: *mut io_uring_napi) -> i32 {
    do_register(ring, IORING_REGISTER_NAPI, napi as *const c_void, 1)
}

/// `io_uring_unregister_napi`: the kernel writes the old settings to `napi`
/// when it is non-null.
///
/// # Safety
/// `napi` is null or points to a readable and writable `io_uring_napi`, and
/// what it points to in turn, valid for what the opcode accesses during the
/// call.
pub unsafe fn unregister_napi(ring: Ring, napi: *mut io_uring_napi) -> i32 {
    do_register(ring, IORING_UNREGISTER_NAPI, napi as *const c_void, 1)
}

/// `io_uring_register_clock`.
///
/// # Safety
/// `arg` is null or points to a readable and writable
/// `io_uring_clock_register`, and what it points to in turn, valid for what the
/// opcode accesses during the call.
pub unsafe fn register_clock(ring: Ring, arg: *mut io_uring_clock_register) -> i32 {
    do_register(ring, IORING_REGISTER_CLOCK, arg as *const c_void, 0)
}

/// `io_uring_set_iowait`: a purely local flag, honoured by later waits.
pub fn set_iowait(ring: Ring, enable: bool) -> i32 {
    if ring.is_dead() {
        return -libc::EBADF;
    }
    if ring.features() & IORING_FEAT_NO_IOWAIT == 0 {
        return -libc::EOPNOTSUPP;
    }
    let f = ring.int_flags();
    ring.set_int_flags(if enable { f & !int_flags::NO_IOWAIT } else { f | int_flags::NO_IOWAIT });
    0
}

// ---------------------------------------------------------------------------
// Memory regions, zero-copy rx, filters, queries
// ---------------------------------------------------------------------------

/// `io_uring_register_region`.
///
/// # Safety
/// `reg` is null or points to a readable and writable
/// `io_uring_mem_region_reg`, and what it points to in turn, valid for what the
/// opcode accesses during the call.
pub unsafe fn register_region(ring: Ring, reg: *mut io_uring_mem_region_reg) -> i32 {
    do_register(ring, IORING_REGISTER_MEM_REGION, reg as *const c_void, 1)
}

/// `io_uring_register_wait_reg`: makes the `nr` slots at `reg` the ring's
/// wait-argument region, for `io_uring_submit_and_wait_reg`. liburing 2.15
/// only answers -EINVAL here; this does what its man page describes, through
/// a user-memory region. As the kernel requires, `reg` is page-aligned and
/// the ring still disabled (IORING_SETUP_R_DISABLED).
///
/// # Safety
/// `reg` is null or points to `nr` readable and writable `io_uring_reg_wait`s,
/// as the kernel accesses them, for the call.
pub unsafe fn register_wait_reg(ring: Ring, reg: *mut io_uring_reg_wait, nr: i32) -> i32 {
    let page = super::page_size();
    if reg.is_null() || nr <= 0 || reg as usize % page != 0 {
        return -libc::EINVAL;
    }
    let Some(bytes) = (nr as usize).checked_mul(size_of::<io_uring_reg_wait>()) else {
        return -libc::EINVAL;
    };
    let mut desc = io_uring_region_desc {
        user_addr: reg as u64,
        size: super::align_up(bytes, page) as u64,
        flags: IORING_MEM_REGION_TYPE_USER,
        ..Default::default()
    };
    let mut mr = io_uring_mem_region_reg {
        region_uptr: &mut desc as *mut io_uring_region_desc as u64,
        flags: IORING_MEM_REGION_REG_WAIT_ARG,
        ..Default::default()
    };
    register_val(ring, IORING_REGISTER_MEM_REGION, &mut mr, 1)
}

/// `io_uring_register_ifq`.
///
/// # Safety
/// `reg` is null or points to a readable and writable `io_uring_zcrx_ifq_reg`,
/// and what it points to in turn, valid for what the opcode accesses during the
/// call.
pub unsafe fn register_ifq(ring: Ring, reg: *mut io_uring_zcrx_ifq_reg) -> i32 {
    do_register(ring, IORING_REGISTER_ZCRX_IFQ, reg as *const c_void, 1)
}

/// `io_uring_register_zcrx_ctrl`.
///
/// # Safety
/// `ctrl` is null or points to a readable and writable `zcrx_ctrl`, and what it
/// points to in turn, valid for what the opcode accesses during the call.
pub unsafe fn register_zcrx_ctrl(ring: Ring, ctrl: *mut zcrx_ctrl) -> i32 {
    do_register(ring, IORING_REGISTER_ZCRX_CTRL, ctrl as *const c_void, 0)
}

/// `io_uring_register_bpf_filter`.
///
/// # Safety
/// `bpf` is null or points to a readable and writable `io_uring_bpf`, and what
/// it points to in turn, valid for what the opcode accesses during the call.
pub unsafe fn register_bpf_filter(ring: Ring, bpf: *mut io_uring_bpf) -> i32 {
    do_register(ring, IORING_REGISTER_BPF_FILTER, bpf as *const c_void, 1)
}

/// `io_uring_register_bpf_filter_task`: applies to the calling task, no ring.
///
/// # Safety
/// `bpf` is null or points to a readable and writable `io_uring_bpf`, and what
/// it points to in turn, valid for what the opcode accesses during the call.
pub unsafe fn register_bpf_filter_task(bpf: *mut io_uring_bpf) -> i32 {
    // SAFETY: the kernel reads one io_uring_bpf from `bpf`.
    unsafe { super::syscall::io_uring_register(-1, IORING_REGISTER_BPF_FILTER, bpf as *const c_void, 1) }
}

/// `io_uring_register_query`: a ring-less call walking a chain of headers.
///
/// # Safety
/// `query` is null or points to a readable and writable `io_uring_query_hdr`,
/// and what it points to in turn, valid for what the opcode accesses during the
/// call.
pub unsafe fn register_query(query: *mut io_uring_query_hdr) -> i32 {
    // SAFETY: the kernel follows the caller's header chain, checking each
    // entry's size and address.
    unsafe { super::syscall::io_uring_register(-1, IORING_REGISTER_QUERY, query as *const c_void, 0) }
}

// ---------------------------------------------------------------------------
// Provided-buffer rings (registration only; setup/free live in buf_ring.rs)
// ---------------------------------------------------------------------------

/// `io_uring_register_buf_ring`: `flags` are merged into `reg.flags`, which
/// the caller sees afterwards, as in liburing.
pub fn register_buf_ring(ring: Ring, reg: &mut io_uring_buf_reg, flags: u32) -> i32 {
    reg.flags |= flags as u16;
    register_val(ring, IORING_REGISTER_PBUF_RING, reg, 1)
}

/// `io_uring_unregister_buf_ring`.
pub fn unregister_buf_ring(ring: Ring, bgid: i32) -> i32 {
    let mut reg = io_uring_buf_reg { bgid: bgid as u16, ..Default::default() };
    register_val(ring, IORING_UNREGISTER_PBUF_RING, &mut reg, 1)
}

/// `io_uring_buf_ring_head`: the kernel's consumer head of group `bgid`.
pub fn buf_ring_head(ring: Ring, bgid: i32, head: &mut u16) -> i32 {
    let mut st = io_uring_buf_status { buf_group: bgid as u32, ..Default::default() };
    let ret = register_val(ring, IORING_REGISTER_PBUF_STATUS, &mut st, 1);
    if ret != 0 {
        return ret;
    }
    *head = st.head as u16;
    0
}
