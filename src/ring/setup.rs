//! Ring setup and teardown: `io_uring_queue_init*`, `io_uring_queue_mmap`,
//! `io_uring_queue_exit` and the sizing helpers.

use core::ffi::c_void;
use core::ptr;

use super::types::{int_flags, IoUring, IoUringCq, IoUringSq};
use super::{align_up, cqe_shift, page_size, sqe_shift};
use crate::sys::{
    self, io_uring_cqe, io_uring_params, io_uring_sqe, IORING_FEAT_NATIVE_WORKERS,
    IORING_FEAT_SINGLE_MMAP, IORING_OFF_CQ_RING, IORING_OFF_SQES, IORING_OFF_SQ_RING,
    IORING_SETUP_CLAMP, IORING_SETUP_CQSIZE, IORING_SETUP_IOPOLL,
    IORING_SETUP_NO_MMAP, IORING_SETUP_NO_SQARRAY, IORING_SETUP_REGISTERED_FD_ONLY,
    IORING_SETUP_SQPOLL,
};

/// The kernel's limits on SQ and CQ sizes (without IORING_SETUP_CLAMP).
const KERN_MAX_ENTRIES: u32 = 32768;
const KERN_MAX_CQ_ENTRIES: u32 = 2 * KERN_MAX_ENTRIES;
/// Room the kernel's `struct io_rings` header takes before the CQEs.
const KRING_SIZE: usize = 64;

const SQE_SIZE: usize = core::mem::size_of::<io_uring_sqe>();
const CQE_SIZE: usize = core::mem::size_of::<io_uring_cqe>();

fn sqes_bytes(flags: u32, entries: u32) -> usize {
    ((entries as usize) << sqe_shift(flags)) * SQE_SIZE
}

fn cqes_bytes(flags: u32, entries: u32) -> usize {
    ((entries as usize) << cqe_shift(flags)) * CQE_SIZE
}

/// The SQ and CQ sizes the kernel will pick for `entries` and `p`, or
/// `-EINVAL` where it would refuse them.
fn sq_cq_entries(entries: u32, p: &io_uring_params) -> Result<(u32, u32), i32> {
    let clamp = p.flags & IORING_SETUP_CLAMP != 0;
    let limit = |n: u32, max: u32| -> Result<u32, i32> {
        match n {
            0 => Err(-libc::EINVAL),
            n if n > max && !clamp => Err(-libc::EINVAL),
            n => Ok(n.min(max).next_power_of_two()),
        }
    };
    let sq = limit(entries, KERN_MAX_ENTRIES)?;
    let cq = if p.flags & IORING_SETUP_CQSIZE != 0 {
        let cq = limit(p.cq_entries, KERN_MAX_CQ_ENTRIES)?;
        if cq < sq {
            return Err(-libc::EINVAL);
        }
        cq
    } else {
        2 * sq
    };
    Ok((sq, cq))
}

/// Bytes of the rings region (header, CQEs and the SQ index array) and of
/// the SQE array, each rounded to pages, for a NO_MMAP ring.
fn no_mmap_sizes(p: &io_uring_params, sq: u32, cq: u32) -> (usize, usize) {
    let page = page_size();
    let mut rings = KRING_SIZE + cqes_bytes(p.flags, cq);
    if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        rings = align_up(rings, KRING_SIZE) + sq as usize * 4;
    }
    (align_up(sqes_bytes(p.flags, sq), page), align_up(rings, page))
}

/// Lays out a NO_MMAP ring in `buf` (the caller's memory) or in memory
/// allocated here, and tells the kernel where through `p`. Returns the bytes
/// the ring occupies.
fn place_no_mmap_ring(
    entries: u32,
    p: &mut io_uring_params,
    ring: &mut IoUring,
    buf: *mut c_void,
    buf_size: usize,
) -> Result<usize, i32> {
    let (sq, cq) = sq_cq_entries(entries, p)?;
    let (sqes_mem, rings_mem) = no_mmap_sizes(p, sq, cq);
    let used = sqes_mem + rings_mem;

    let base = if buf.is_null() {
        // SAFETY: an anonymous mapping with no address hint touches no
        // existing memory.
        let mem = unsafe {
            sys::mmap(
                ptr::null_mut(),
                used,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        }?;
        // Owned memory: the whole mapping is released through sqes/sqes_sz.
        ring.sq.sqes_sz = used as u32;
        mem
    } else {
        if used > buf_size {
            return Err(-libc::ENOMEM);
        }
        buf
    };

    ring.sq.sqes = base as *mut io_uring_sqe;
    // SAFETY: `used` bytes from `base` are ours, and sqes_mem < used.
    ring.sq.ring_ptr = unsafe { (base as *mut u8).add(sqes_mem) } as *mut c_void;
    ring.cq.ring_ptr = ring.sq.ring_ptr;
    ring.sq.ring_sz = 0;
    ring.cq.ring_sz = 0;
    p.sq_off.user_addr = base as u64;
    p.cq_off.user_addr = ring.sq.ring_ptr as u64;
    Ok(used)
}

/// Points the ring's fields at the kernel's head, tail, mask... words, using
/// the offsets the kernel filled in `p`.
pub fn setup_ring_pointers(p: &io_uring_params, sq: &mut IoUringSq, cq: &mut IoUringCq) {
    let at = |base: *mut c_void, off: u32| -> *mut u32 {
        // SAFETY: the kernel's offsets lie inside the mapping at `base`.
        unsafe { (base as *mut u8).add(off as usize) as *mut u32 }
    };
    let sb = sq.ring_ptr;
    sq.khead = at(sb, p.sq_off.head);
    sq.ktail = at(sb, p.sq_off.tail);
    sq.kring_mask = at(sb, p.sq_off.ring_mask);
    sq.kring_entries = at(sb, p.sq_off.ring_entries);
    sq.kflags = at(sb, p.sq_off.flags);
    sq.kdropped = at(sb, p.sq_off.dropped);
    if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        sq.array = at(sb, p.sq_off.array);
    }

    let cb = cq.ring_ptr;
    cq.khead = at(cb, p.cq_off.head);
    cq.ktail = at(cb, p.cq_off.tail);
    cq.kring_mask = at(cb, p.cq_off.ring_mask);
    cq.kring_entries = at(cb, p.cq_off.ring_entries);
    cq.koverflow = at(cb, p.cq_off.overflow);
    cq.cqes = at(cb, p.cq_off.cqes) as *mut io_uring_cqe;
    if p.cq_off.flags != 0 {
        cq.kflags = at(cb, p.cq_off.flags);
    }

    // SAFETY: the pointers were just derived from a live mapping.
    unsafe {
        sq.ring_mask = *sq.kring_mask;
        sq.ring_entries = *sq.kring_entries;
        cq.ring_mask = *cq.kring_mask;
        cq.ring_entries = *cq.kring_entries;
    }
}

/// Maps the SQ ring, CQ ring and SQE array of ring `fd` (one mapping for
/// both rings where the kernel allows it). On failure nothing stays mapped.
pub fn mmap_rings(fd: i32, p: &io_uring_params, sq: &mut IoUringSq, cq: &mut IoUringCq) -> i32 {
    let cq_sz = p.cq_off.cqes as usize + cqes_bytes(p.flags, p.cq_entries);
    let sq_sz = if p.flags & IORING_SETUP_NO_SQARRAY != 0 {
        cq_sz
    } else {
        p.sq_off.array as usize + p.sq_entries as usize * 4
    };
    let single = p.features & IORING_FEAT_SINGLE_MMAP != 0;
    sq.ring_sz = if single { sq_sz.max(cq_sz) } else { sq_sz };
    cq.ring_sz = if single { sq.ring_sz } else { cq_sz };

    let map = |len: usize, off: u64| {
        // SAFETY: a fresh shared mapping of the ring fd at a kernel-defined
        // offset; no existing memory is touched.
        unsafe {
            crate::engine::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                off as i64,
            )
        }
    };

    sq.ring_ptr = match map(sq.ring_sz, IORING_OFF_SQ_RING) {
        Ok(m) => m,
        Err(e) => {
            sq.ring_sz = 0;
            cq.ring_sz = 0;
            return e;
        }
    };
    let fail = |sq: &mut IoUringSq, cq: &mut IoUringCq, e: i32| {
        unmap_rings(sq, cq);
        *sq = IoUringSq::zeroed();
        *cq = IoUringCq::zeroed();
        e
    };
    if single {
        cq.ring_ptr = sq.ring_ptr;
    } else {
        match map(cq.ring_sz, IORING_OFF_CQ_RING) {
            Ok(m) => cq.ring_ptr = m,
            Err(e) => return fail(sq, cq, e),
        }
    }

    let sqes_sz = sqes_bytes(p.flags, p.sq_entries);
    let Ok(sqes_sz32) = u32::try_from(sqes_sz) else {
        return fail(sq, cq, -libc::EINVAL);
    };
    match map(sqes_sz, IORING_OFF_SQES) {
        Ok(m) => sq.sqes = m as *mut io_uring_sqe,
        Err(e) => return fail(sq, cq, e),
    }
    sq.sqes_sz = sqes_sz32;
    setup_ring_pointers(p, sq, cq);
    0
}

/// Unmaps the ring mappings recorded in `sq` and `cq` (not the SQE array).
pub fn unmap_rings(sq: &IoUringSq, cq: &IoUringCq) {
    // SAFETY (both calls): the pointer/size pairs describe mappings this
    // library made; a zero size means "nothing of ours to unmap".
    if sq.ring_sz != 0 && !sq.ring_ptr.is_null() {
        unsafe { sys::munmap(sq.ring_ptr, sq.ring_sz) };
    }
    if cq.ring_sz != 0 && !cq.ring_ptr.is_null() && cq.ring_ptr != sq.ring_ptr {
        unsafe { sys::munmap(cq.ring_ptr, cq.ring_sz) };
    }
}

/// Points SQ slot i at SQE i once, so submission only moves the tail.
/// Rings without an SQ index array (NO_SQARRAY) have nothing to fill.
pub(crate) fn identity_map_sq_array(sq: &mut IoUringSq) {
    if sq.array.is_null() {
        return;
    }
    for i in 0..sq.ring_entries {
        // SAFETY: the array has ring_entries slots in the live mapping.
        unsafe { *sq.array.add(i as usize) = i };
    }
}

/// Releases the memory a ring owns (mappings, not the fd).
pub(crate) fn release_memory(ring: &IoUring) {
    if ring.int_flags & int_flags::APP_MEM != 0 {
        return;
    }
    if !ring.sq.sqes.is_null() && ring.sq.sqes_sz != 0 {
        // SAFETY: sqes/sqes_sz describe a mapping this library made.
        unsafe { sys::munmap(ring.sq.sqes as *mut c_void, ring.sq.sqes_sz as usize) };
    }
    unmap_rings(&ring.sq, &ring.cq);
}

/// `io_uring_queue_mmap`: maps the rings of an fd from `io_uring_setup`.
pub fn queue_mmap(fd: i32, p: &io_uring_params, ring: &mut IoUring) -> i32 {
    *ring = IoUring::empty();
    let ret = mmap_rings(fd, p, &mut ring.sq, &mut ring.cq);
    if ret == 0 {
        ring.int_flags |= crate::engine::int_flag(fd);
        ring.flags = p.flags;
        ring.features = p.features;
        ring.ring_fd = fd;
        ring.enter_ring_fd = fd;
    }
    ret
}

/// `__io_uring_queue_init_params`: one attempt at creating a ring with
/// exactly `p.flags`. Returns the bytes of caller/owned memory used for a
/// NO_MMAP ring, 0 for a mapped ring, or `-errno`. On failure `ring` owns
/// nothing, so `io_uring_queue_exit` on it is harmless.
pub fn queue_init_params_raw(
    entries: u32,
    ring: &mut IoUring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    *ring = IoUring::empty();
    let no_mmap = p.flags & IORING_SETUP_NO_MMAP != 0;
    if p.flags & IORING_SETUP_REGISTERED_FD_ONLY != 0 && !no_mmap {
        return -libc::EINVAL;
    }

    let mut used = 0usize;
    if no_mmap {
        match place_no_mmap_ring(entries, p, ring, buf, buf_size) {
            Ok(n) => used = n,
            Err(e) => {
                *ring = IoUring::empty();
                return e;
            }
        }
        if !buf.is_null() {
            ring.int_flags |= int_flags::APP_MEM;
        }
    }

    // SAFETY: `p` is a valid, exclusively borrowed io_uring_params.
    let fd = unsafe { crate::engine::io_uring_setup(entries, p) };
    if fd < 0 {
        release_memory(ring);
        *ring = IoUring::empty();
        return fd;
    }

    if no_mmap {
        setup_ring_pointers(p, &mut ring.sq, &mut ring.cq);
    } else {
        let ret = mmap_rings(fd, p, &mut ring.sq, &mut ring.cq);
        if ret != 0 {
            crate::engine::close(fd);
            *ring = IoUring::empty();
            return ret;
        }
    }

    identity_map_sq_array(&mut ring.sq);

    ring.features = p.features;
    ring.flags = p.flags;
    ring.int_flags |= crate::engine::int_flag(fd);
    ring.enter_ring_fd = fd;
    if p.flags & IORING_SETUP_REGISTERED_FD_ONLY != 0 {
        ring.ring_fd = -1;
        ring.int_flags |= int_flags::REG_RING | int_flags::REG_REG_RING;
    } else {
        ring.ring_fd = fd;
    }
    // IOPOLL completions are only reaped by entering the kernel, unless an
    // SQPOLL thread does it for us.
    if p.flags & (IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL) == IORING_SETUP_IOPOLL {
        ring.int_flags |= int_flags::CQ_ENTER;
    }
    used as i32
}

/// Tries with IORING_SETUP_NO_SQARRAY first, and quietly drops it if the
/// kernel refuses, unless the caller asked for it.
fn init_preferring_no_sqarray(
    entries: u32,
    ring: &mut IoUring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    let asked = p.flags;
    p.flags |= IORING_SETUP_NO_SQARRAY;
    let ret = queue_init_params_raw(entries, ring, p, buf, buf_size);
    if ret != -libc::EINVAL || asked & IORING_SETUP_NO_SQARRAY != 0 {
        return ret;
    }
    p.flags = asked;
    queue_init_params_raw(entries, ring, p, buf, buf_size)
}

/// `io_uring_queue_init_params`.
pub fn queue_init_params(entries: u32, ring: &mut IoUring, p: &mut io_uring_params) -> i32 {
    init_preferring_no_sqarray(entries, ring, p, ptr::null_mut(), 0).min(0)
}

/// `io_uring_queue_init`.
pub fn queue_init(entries: u32, ring: &mut IoUring, flags: u32) -> i32 {
    let mut p = io_uring_params { flags, ..Default::default() };
    queue_init_params(entries, ring, &mut p)
}

/// `io_uring_queue_init_mem`: the rings live in `buf`; returns the bytes used.
pub fn queue_init_mem(
    entries: u32,
    ring: &mut IoUring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    p.flags |= IORING_SETUP_NO_MMAP;
    init_preferring_no_sqarray(entries, ring, p, buf, buf_size)
}

/// `io_uring_queue_exit`: unmaps, unregisters and closes whatever the ring
/// owns, and leaves it owning nothing.
pub fn queue_exit(ring: &mut IoUring) {
    if ring.sq.ring_ptr.is_null() && ring.sq.sqes.is_null() {
        // Never set up, already torn down, or a failed init.
        return;
    }
    release_memory(ring);
    if ring.int_flags & int_flags::REG_RING != 0 {
        super::register::unregister_ring_fd(ring);
    }
    if ring.ring_fd >= 0 {
        crate::engine::close(ring.ring_fd);
    }
    *ring = IoUring::empty();
}

/// `io_uring_ring_dontfork`: keeps the ring mappings out of forked children.
pub fn ring_dontfork(ring: &IoUring) -> i32 {
    if ring.sq.ring_ptr.is_null() || ring.sq.sqes.is_null() || ring.cq.ring_ptr.is_null() {
        return -libc::EINVAL;
    }
    let sqes_len = sqes_bytes(ring.flags, ring.sq.ring_entries);
    let mut regions = [
        (ring.sq.sqes as *mut c_void, sqes_len),
        (ring.sq.ring_ptr, ring.sq.ring_sz),
        (ring.cq.ring_ptr, ring.cq.ring_sz),
    ];
    if ring.cq.ring_ptr == ring.sq.ring_ptr {
        regions[2].1 = 0;
    }
    for (addr, len) in regions {
        if len == 0 {
            continue;
        }
        // SAFETY: advising a mapping the ring owns changes no memory.
        let ret = unsafe { sys::madvise(addr, len, libc::MADV_DONTFORK) };
        if ret < 0 {
            return ret;
        }
    }
    0
}

/// `io_uring_memory_size_params`: bytes a NO_MMAP ring of this shape needs.
pub fn memory_size_params(entries: u32, p: &io_uring_params) -> isize {
    match sq_cq_entries(entries, p) {
        Ok((sq, cq)) => {
            let (sqes, rings) = no_mmap_sizes(p, sq, cq);
            (sqes + rings) as isize
        }
        Err(e) => e as isize,
    }
}

/// `io_uring_mlock_size_params`: RLIMIT_MEMLOCK bytes a ring needs. Kernels
/// with native workers account rings to the memory cgroup instead: 0.
pub fn mlock_size_params(entries: u32, p: &io_uring_params) -> isize {
    let mut probe_ring = IoUring::empty();
    let mut lp = io_uring_params::default();
    if queue_init_params(entries, &mut probe_ring, &mut lp) == 0 {
        queue_exit(&mut probe_ring);
    }
    if lp.features & IORING_FEAT_NATIVE_WORKERS != 0 {
        return 0;
    }
    memory_size_params(entries, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_rounded_and_limited() {
        let p = io_uring_params::default();
        assert_eq!(sq_cq_entries(1, &p), Ok((1, 2)));
        assert_eq!(sq_cq_entries(5, &p), Ok((8, 16)));
        assert_eq!(sq_cq_entries(0, &p), Err(-libc::EINVAL));
        assert_eq!(sq_cq_entries(KERN_MAX_ENTRIES + 1, &p), Err(-libc::EINVAL));
        let p = io_uring_params { flags: IORING_SETUP_CLAMP, ..Default::default() };
        assert_eq!(sq_cq_entries(u32::MAX, &p), Ok((KERN_MAX_ENTRIES, 2 * KERN_MAX_ENTRIES)));
        let p = io_uring_params { flags: IORING_SETUP_CQSIZE, cq_entries: 3, ..Default::default() };
        assert_eq!(sq_cq_entries(8, &p), Err(-libc::EINVAL));
        let p = io_uring_params { flags: IORING_SETUP_CQSIZE, cq_entries: 100, ..Default::default() };
        assert_eq!(sq_cq_entries(8, &p), Ok((8, 128)));
    }

    #[test]
    fn init_and_exit_round_trip() {
        let mut ring = IoUring::empty();
        assert_eq!(queue_init(8, &mut ring, 0), 0);
        assert!(ring.ring_fd >= 0);
        assert_eq!(ring.sq.ring_entries, 8);
        assert_eq!(ring.cq.ring_entries, 16);
        queue_exit(&mut ring);
        assert_eq!(ring.ring_fd, -1);
        // A second exit, or an exit after a failed init, does nothing.
        queue_exit(&mut ring);
        assert_eq!(queue_init(0, &mut ring, 0), -libc::EINVAL);
        queue_exit(&mut ring);
    }
}
