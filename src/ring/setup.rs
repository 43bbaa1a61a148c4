//! Ring setup and teardown: `io_uring_queue_init*`, `io_uring_queue_mmap`,
//! `io_uring_queue_exit` and the sizing helpers.

use core::ffi::c_void;
use core::ptr;

use super::types::{int_flags, IoUring, IoUringCq, IoUringSq, Ring};
use super::{align_up, cqe_shift, page_size, sqe_shift};
use crate::sys::{
    self, io_uring_cqe, io_uring_params, io_uring_sqe, IORING_FEAT_NATIVE_WORKERS, IORING_FEAT_SINGLE_MMAP,
    IORING_OFF_CQ_RING, IORING_OFF_SQES, IORING_OFF_SQ_RING, IORING_SETUP_CLAMP, IORING_SETUP_CQSIZE,
    IORING_SETUP_IOPOLL, IORING_SETUP_NO_MMAP, IORING_SETUP_NO_SQARRAY, IORING_SETUP_REGISTERED_FD_ONLY,
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
pub(crate) fn sq_cq_entries(entries: u32, p: &io_uring_params) -> Result<(u32, u32), i32> {
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
        // Memory reused from an earlier ring still holds its heads and
        // tails, and some kernels (6.12 does) take the ring words as they
        // find them: start from zero, as a fresh mapping would. Memory that
        // cannot be written is left as it is, for the kernel (or engine) to
        // refuse in its own order of checks: -EFAULT where it supports
        // NO_MMAP, as it cannot pin it for writing.
        if crate::sys::mem::writable(buf as u64, used) {
            // SAFETY: `used` bytes from `buf` are mapped writable (just
            // checked; unmapping them meanwhile is the caller's race).
            unsafe { ptr::write_bytes(buf as *mut u8, 0, used) };
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

/// Address space reserved (PROT_NONE) before asking the kernel for new
/// rings, so that mapping them afterwards cannot fail for want of it: the
/// rings go at `base`, the SQE array at `base + rings_room`. Dropping it
/// releases whatever part was not claimed by [`Reservation::claim`].
pub(crate) struct Reservation {
    base: *mut u8,
    rings_room: usize,
    len: usize,
    /// Bytes from `base` and from `base + rings_room` now holding real
    /// mappings, which drop must leave alone once claimed.
    claimed: Option<(usize, usize)>,
}

impl Reservation {
    /// Reserves room for rings of `sq`/`cq` entries with setup `flags`.
    pub(crate) fn new(flags: u32, sq: u32, cq: u32) -> Result<Self, i32> {
        let shape = io_uring_params { flags, ..Default::default() };
        let (sqes_room, rings_room) = no_mmap_sizes(&shape, sq, cq);
        let len = sqes_room + rings_room;
        // SAFETY: a fresh inaccessible mapping at no fixed address.
        let base = unsafe {
            sys::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        }?;
        Ok(Reservation { base: base as *mut u8, rings_room, len, claimed: None })
    }

    /// Where a mapping of `len` bytes at ring offset `off` goes, if it fits.
    fn slot(&self, off: u64, len: usize) -> Option<*mut c_void> {
        let (at, room) = if off == IORING_OFF_SQES {
            // SAFETY: rings_room < self.len, inside the reservation.
            (unsafe { self.base.add(self.rings_room) }, self.len - self.rings_room)
        } else {
            (self.base, self.rings_room)
        };
        (len <= room).then_some(at as *mut c_void)
    }

    /// Keeps the mappings just made (`rings` bytes at the base, `sqes` bytes
    /// after the rings' room) and gives back the rest of the reservation.
    fn claim(&mut self, rings: usize, sqes: usize) {
        self.claimed = Some((align_up(rings, page_size()), align_up(sqes, page_size())));
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let (rings, sqes) = self.claimed.unwrap_or((0, 0));
        let sqes_room = self.len - self.rings_room;
        // SAFETY (both calls): the ranges are the unclaimed parts of our own
        // PROT_NONE reservation; nothing refers to them.
        unsafe {
            if rings < self.rings_room {
                sys::munmap(self.base.add(rings) as *mut c_void, self.rings_room - rings);
            }
            if sqes < sqes_room {
                sys::munmap(self.base.add(self.rings_room + sqes) as *mut c_void, sqes_room - sqes);
            }
        }
    }
}

/// Maps the SQ ring, CQ ring and SQE array of ring `fd` (one mapping for
/// both rings where the kernel allows it), into `place` when given. On
/// failure nothing stays mapped.
pub(crate) fn mmap_rings(
    fd: i32,
    p: &io_uring_params,
    sq: &mut IoUringSq,
    cq: &mut IoUringCq,
    place: Option<&mut Reservation>,
) -> i32 {
    let cq_sz = p.cq_off.cqes as usize + cqes_bytes(p.flags, p.cq_entries);
    let sq_sz = if p.flags & IORING_SETUP_NO_SQARRAY != 0 {
        cq_sz
    } else {
        p.sq_off.array as usize + p.sq_entries as usize * 4
    };
    let single = p.features & IORING_FEAT_SINGLE_MMAP != 0;
    sq.ring_sz = if single { sq_sz.max(cq_sz) } else { sq_sz };
    cq.ring_sz = if single { sq.ring_sz } else { cq_sz };
    let sqes_sz = sqes_bytes(p.flags, p.sq_entries);
    let Ok(sqes_sz32) = u32::try_from(sqes_sz) else {
        *sq = IoUringSq::zeroed();
        *cq = IoUringCq::zeroed();
        return -libc::EINVAL;
    };

    // Reserved slots, where the reservation has room for them.
    let (rings_at, sqes_at) = match &place {
        Some(r) => (r.slot(IORING_OFF_SQ_RING, sq.ring_sz), r.slot(IORING_OFF_SQES, sqes_sz)),
        None => (None, None),
    };
    let map = |len: usize, off: u64, at: Option<*mut c_void>| {
        let fixed = if at.is_some() { libc::MAP_FIXED } else { 0 };
        // SAFETY: a shared mapping of the ring fd at a kernel-defined offset,
        // anywhere, or with MAP_FIXED over our own PROT_NONE reservation
        // where Reservation::slot found room: no live memory is replaced.
        unsafe {
            super::syscall::mmap(
                at.unwrap_or(ptr::null_mut()),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE | fixed,
                fd,
                off as i64,
            )
        }
    };
    let fail = |sq: &mut IoUringSq, cq: &mut IoUringCq, e: i32| {
        if rings_at.is_some() {
            // Inside the reservation, whose drop releases it: unmapping it
            // here would open a hole another thread's mmap could take.
            sq.ring_sz = 0;
        }
        unmap_rings(sq, cq);
        *sq = IoUringSq::zeroed();
        *cq = IoUringCq::zeroed();
        e
    };

    sq.ring_ptr = match map(sq.ring_sz, IORING_OFF_SQ_RING, rings_at) {
        Ok(m) => m,
        Err(e) => return fail(sq, cq, e),
    };
    if single {
        cq.ring_ptr = sq.ring_ptr;
    } else {
        match map(cq.ring_sz, IORING_OFF_CQ_RING, None) {
            Ok(m) => cq.ring_ptr = m,
            Err(e) => return fail(sq, cq, e),
        }
    }
    match map(sqes_sz, IORING_OFF_SQES, sqes_at) {
        Ok(m) => sq.sqes = m as *mut io_uring_sqe,
        Err(e) => return fail(sq, cq, e),
    }
    sq.sqes_sz = sqes_sz32;
    if let Some(r) = place {
        r.claim(if rings_at.is_some() { sq.ring_sz } else { 0 }, if sqes_at.is_some() { sqes_sz } else { 0 });
    }
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

/// Marks a ring the userspace engine runs: `int_flags` tells the enter and
/// register paths, and RING_SLOW keeps its submits off the kernel's fast
/// path, which then needs no test for it.
fn mark_engine(r: &mut IoUring, fd: i32) {
    let f = super::syscall::engine_flag(fd, r.flags & IORING_SETUP_REGISTERED_FD_ONLY != 0);
    if f != 0 {
        r.int_flags |= f;
        r.flags |= super::types::RING_SLOW;
    }
}

/// `io_uring_queue_mmap`: maps the rings of an fd from `io_uring_setup`.
/// An exclusive call (see [`Ring`]); on failure the ring is dead.
pub fn queue_mmap(fd: i32, p: &io_uring_params, ring: Ring) -> i32 {
    let mut r = IoUring::dead();
    let ret = mmap_rings(fd, p, &mut r.sq, &mut r.cq, None);
    if ret == 0 {
        r.flags = p.flags;
        r.features = p.features;
        r.ring_fd = fd;
        r.enter_ring_fd = fd;
        mark_engine(&mut r, fd);
    } else {
        r = IoUring::dead();
    }
    ring.store(r);
    ret
}

/// `__io_uring_queue_init_params`: one attempt at creating a ring with
/// exactly `p.flags`. Returns the bytes of caller/owned memory used for a
/// NO_MMAP ring, 0 for a mapped ring, or `-errno`. An exclusive call (see
/// [`Ring`]); on failure the ring is dead, so `io_uring_queue_exit` on it is
/// harmless and every other call gets `-EBADF`.
pub fn queue_init_params_raw(
    entries: u32,
    ring: Ring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    let mut r = IoUring::dead();
    let ret = init_local(entries, &mut r, p, buf, buf_size, false);
    ring.store(if ret < 0 { IoUring::dead() } else { r });
    ret
}

/// [`queue_init_params_raw`] on the kernel alone, whatever
/// LIBURING_RS_ENGINE says: for the diagnostics' questions to the kernel.
pub fn queue_init_params_kernel(entries: u32, ring: Ring, p: &mut io_uring_params) -> i32 {
    let mut r = IoUring::dead();
    let ret = init_local(entries, &mut r, p, ptr::null_mut(), 0, true);
    ring.store(if ret < 0 { IoUring::dead() } else { r });
    ret
}

/// Sets up a ring in `ring`, a value of our own until it is published; on
/// the kernel alone with `kernel_only`, else as LIBURING_RS_ENGINE picks.
fn init_local(
    entries: u32,
    ring: &mut IoUring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
    kernel_only: bool,
) -> i32 {
    let no_mmap = p.flags & IORING_SETUP_NO_MMAP != 0;
    if p.flags & IORING_SETUP_REGISTERED_FD_ONLY != 0 && !no_mmap {
        return -libc::EINVAL;
    }

    let mut used = 0usize;
    if no_mmap {
        match place_no_mmap_ring(entries, p, ring, buf, buf_size) {
            Ok(n) => used = n,
            Err(e) => return e,
        }
        if !buf.is_null() {
            ring.int_flags |= int_flags::APP_MEM;
        }
    }

    // SAFETY: `p` is a valid, exclusively borrowed io_uring_params.
    let fd = unsafe {
        if kernel_only {
            sys::io_uring_setup(entries, p)
        } else {
            super::syscall::io_uring_setup(entries, p)
        }
    };
    if fd < 0 {
        release_memory(ring);
        return fd;
    }

    if no_mmap {
        setup_ring_pointers(p, &mut ring.sq, &mut ring.cq);
    } else {
        let ret = mmap_rings(fd, p, &mut ring.sq, &mut ring.cq, None);
        if ret != 0 {
            super::syscall::close(fd);
            return ret;
        }
    }

    identity_map_sq_array(&mut ring.sq);

    ring.features = p.features;
    ring.flags = p.flags;
    mark_engine(ring, fd);
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
    ring: Ring,
    p: &mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    let asked = p.flags;
    p.flags |= IORING_SETUP_NO_SQARRAY;
    let mut ret = queue_init_params_raw(entries, ring, p, buf, buf_size);
    if ret == -libc::EINVAL && asked & IORING_SETUP_NO_SQARRAY == 0 {
        p.flags = asked;
        ret = queue_init_params_raw(entries, ring, p, buf, buf_size);
    }
    if ret < 0 {
        setup_failed(ret, entries, asked, p, (!buf.is_null()).then_some(buf_size));
    }
    ret
}

/// Hands a failed setup to the diagnostics, with the facts only the ring
/// logic can find: which of the `asked` flags the kernel does not know
/// (for EINVAL), and the ring memory the last attempt (`p.flags`) needed.
#[cold]
#[inline(never)]
fn setup_failed(ret: i32, entries: u32, asked: u32, p: &io_uring_params, user_mem: Option<usize>) {
    let unknown = if ret == -libc::EINVAL && asked != 0 { super::ask::unknown_setup_flags(asked) } else { 0 };
    let bytes = memory_size_params(entries, p).max(0) as u64;
    crate::diag::setup::setup_failed(ret, entries, asked, p, user_mem, unknown, bytes);
}

/// `io_uring_queue_init_params`.
pub fn queue_init_params(entries: u32, ring: Ring, p: &mut io_uring_params) -> i32 {
    init_preferring_no_sqarray(entries, ring, p, ptr::null_mut(), 0).min(0)
}

/// `io_uring_queue_init`.
pub fn queue_init(entries: u32, ring: Ring, flags: u32) -> i32 {
    let mut p = io_uring_params { flags, ..Default::default() };
    queue_init_params(entries, ring, &mut p)
}

/// `io_uring_queue_init_mem`: the rings live in `buf`; returns the bytes used.
pub fn queue_init_mem(entries: u32, ring: Ring, p: &mut io_uring_params, buf: *mut c_void, buf_size: usize) -> i32 {
    p.flags |= IORING_SETUP_NO_MMAP;
    init_preferring_no_sqarray(entries, ring, p, buf, buf_size)
}

/// Hook (diagnostics) after a setup the program asked for, which returned
/// `ret` (`flags` as asked, read before the setup wrote the params back;
/// the first setup is where the environment is read). A watched ring's
/// submits then take the general path, where the diagnostics see them (see
/// [`super::types::RING_SLOW`]), set while the setup is still exclusive.
pub fn setup_done(ring: Ring, entries: u32, flags: u32, ret: i32) -> i32 {
    crate::diag::setup(ring.as_ptr(), entries, flags, ret, &super::syscall::DIAG_LIB);
    if ret >= 0 && crate::diag::on() {
        ring.set_flags(ring.flags() | super::types::RING_SLOW);
    }
    ret
}

/// `io_uring_queue_exit` as the program calls it: the diagnostics (when
/// on) see the ring before it goes.
pub fn queue_exit_app(ring: Ring) {
    if crate::diag::on() {
        crate::diag::exit(ring.as_ptr());
    }
    queue_exit(ring)
}

/// `io_uring_queue_exit`: unmaps, unregisters and closes whatever the ring
/// owns, and leaves it dead. An exclusive call (see [`Ring`]).
pub fn queue_exit(ring: Ring) {
    let r = ring.load();
    if !r.owns_memory() {
        // Never set up, already torn down, or a failed init.
        return;
    }
    kill(ring, &r);
}

/// Releases everything `r` (the current contents of `ring`) owns and leaves
/// `ring` dead.
pub(crate) fn kill(ring: Ring, r: &IoUring) {
    if r.int_flags & int_flags::REG_RING != 0 {
        super::register::unregister_ring_fd(ring);
    }
    // The fd first: an engine ring's threads read ring memory until it is
    // torn down, and NO_MMAP memory is the library's to free (the kernel
    // pins such pages; the engine cannot).
    if r.ring_fd >= 0 {
        super::syscall::close(r.ring_fd);
    }
    release_memory(r);
    ring.store(IoUring::dead());
}

/// `io_uring_ring_dontfork`: keeps the ring mappings out of forked children.
pub fn ring_dontfork(ring: Ring) -> i32 {
    let (sqes, ring_ptr, cq_ptr) = (ring.sq_sqes() as *mut c_void, ring.sq_ring_ptr(), ring.cq_ring_ptr());
    if ring.is_dead() {
        return -libc::EBADF;
    }
    if sqes.is_null() || ring_ptr.is_null() || cq_ptr.is_null() {
        return -libc::EINVAL;
    }
    let flags = ring.flags();
    let regions = if flags & IORING_SETUP_NO_MMAP != 0 {
        // One block: the SQE array, then the rings (see place_no_mmap_ring).
        let p = io_uring_params { flags, ..Default::default() };
        let (sqes_mem, rings_mem) = no_mmap_sizes(&p, ring.sq_ring_entries(), ring.cq_ring_entries());
        [(sqes, sqes_mem + rings_mem), (ptr::null_mut(), 0), (ptr::null_mut(), 0)]
    } else {
        let cq_len = if cq_ptr == ring_ptr { 0 } else { ring.cq_ring_sz() };
        [(sqes, ring.sq_sqes_sz() as usize), (ring_ptr, ring.sq_ring_sz()), (cq_ptr, cq_len)]
    };
    for (addr, len) in regions {
        if len == 0 {
            continue;
        }
        // SAFETY: advising memory the ring owns changes none of its contents.
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
    let mut probe_ring = IoUring::dead();
    let probe_ring = Ring::from_mut(&mut probe_ring);
    let mut lp = io_uring_params::default();
    if queue_init_params(entries, probe_ring, &mut lp) == 0 {
        queue_exit(probe_ring);
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
        let r = Ring::from_mut(&mut ring);
        assert_eq!(queue_init(8, r, 0), 0);
        assert!(r.ring_fd() >= 0);
        assert_eq!(r.sq_ring_entries(), 8);
        assert_eq!(r.cq_ring_entries(), 16);
        queue_exit(r);
        assert!(r.is_dead());
        assert_eq!(r.ring_fd(), -1);
        // A second exit, or an exit after a failed init, does nothing.
        queue_exit(r);
        assert_eq!(queue_init(0, r, 0), -libc::EINVAL);
        assert!(r.is_dead());
        queue_exit(r);
    }
}
