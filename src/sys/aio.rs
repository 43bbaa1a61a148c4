//! The kernel's native AIO (io_setup(2) and friends): the ABI of
//! `<linux/aio_abi.h>` and the system calls, each returning `-errno`.
//! The engine uses it to have O_DIRECT reads and writes in flight without
//! a thread each, as the kernel's io_uring has them.

use super::syscall::syscall6;

/// `aio_context_t`: the address of the context's completion ring.
pub type AioContext = libc::c_ulong;

pub const IOCB_CMD_PREAD: u16 = 0;
pub const IOCB_CMD_PWRITE: u16 = 1;
pub const IOCB_CMD_PREADV: u16 = 7;
pub const IOCB_CMD_PWRITEV: u16 = 8;

/// `aio_resfd` is an eventfd to signal at completion.
pub const IOCB_FLAG_RESFD: u32 = 1 << 0;
/// `aio_reqprio` is an I/O priority (`ioprio_value`).
pub const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// `struct iocb`, as on a little-endian machine (`aio_key` before
/// `aio_rw_flags`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Iocb {
    pub aio_data: u64,
    pub aio_key: u32,
    pub aio_rw_flags: i32,
    pub aio_lio_opcode: u16,
    pub aio_reqprio: i16,
    pub aio_fildes: u32,
    pub aio_buf: u64,
    pub aio_nbytes: u64,
    pub aio_offset: i64,
    pub aio_reserved2: u64,
    pub aio_flags: u32,
    pub aio_resfd: u32,
}

#[cfg(target_endian = "big")]
compile_error!("struct iocb swaps aio_key and aio_rw_flags on big-endian machines");

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct IoEvent {
    pub data: u64,
    pub obj: u64,
    pub res: i64,
    pub res2: i64,
}

const _: () = assert!(core::mem::size_of::<Iocb>() == 64);
const _: () = assert!(core::mem::size_of::<IoEvent>() == 32);

/// `io_setup(2)`: a context for `nr` requests in flight.
pub fn io_setup(nr: u32, ctx: &mut AioContext) -> i32 {
    // SAFETY: the kernel writes the context id into a live variable.
    unsafe { syscall6(libc::SYS_io_setup, nr as usize, ctx as *mut AioContext as usize, 0, 0, 0, 0) as i32 }
}

/// `io_destroy(2)`: waits for the context's requests, then frees it.
pub fn io_destroy(ctx: AioContext) -> i32 {
    // SAFETY: takes a context id only; a stale one is refused (EINVAL).
    unsafe { syscall6(libc::SYS_io_destroy, ctx as usize, 0, 0, 0, 0, 0) as i32 }
}

/// `io_submit(2)`: the number of iocbs taken, or `-errno` if none was.
///
/// # Safety
/// Every iocb is readable, and the memory it names (buffers, iovecs) is
/// the caller's to give to the kernel until its event is reaped.
pub unsafe fn io_submit(ctx: AioContext, iocbs: &[*mut Iocb]) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { syscall6(libc::SYS_io_submit, ctx as usize, iocbs.len(), iocbs.as_ptr() as usize, 0, 0, 0) as i32 }
}

/// `io_getevents(2)` without waiting: takes up to `evs.len()` completed
/// events; returns how many, or `-errno`.
pub fn io_getevents_now(ctx: AioContext, evs: &mut [IoEvent]) -> i32 {
    let ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: the kernel writes at most evs.len() events into live memory.
    unsafe {
        syscall6(
            libc::SYS_io_getevents,
            ctx as usize,
            0,
            evs.len(),
            evs.as_mut_ptr() as usize,
            &ts as *const libc::timespec as usize,
            0,
        ) as i32
    }
}

/// `AIO_RING_MAGIC`: the header of a completion ring user space may read.
pub const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

/// The header of a context's completion ring (`struct aio_ring` of
/// fs/aio.c), mapped at the context id's address; `io_event`s follow it.
/// The kernel writes events and then `tail`; whoever reaps reads them and
/// then writes `head`, which is why one reaper at a time may use it.
#[repr(C)]
pub struct AioRing {
    pub id: u32,
    pub nr: u32,
    pub head: u32,
    pub tail: u32,
    pub magic: u32,
    pub compat_features: u32,
    pub incompat_features: u32,
    pub header_length: u32,
}

const _: () = assert!(core::mem::size_of::<AioRing>() == 32);

/// Takes up to `evs.len()` completed events straight from the context's
/// ring, without a system call, as libaio does; None when the ring is not
/// one to read this way (a header it does not recognise), and the caller
/// uses `io_getevents_now`.
///
/// # Safety
/// `ctx` is a live context whose ring stays mapped across the call, and
/// no one else reaps it meanwhile (neither here nor with io_getevents).
pub unsafe fn ring_take(ctx: AioContext, evs: &mut [IoEvent]) -> Option<usize> {
    use core::sync::atomic::{AtomicU32, Ordering};
    let ring = ctx as *mut AioRing;
    // SAFETY: the header is mapped (contract); the kernel writes only
    // `tail` (and `head` inside io_getevents, which nobody runs now).
    let (nr, magic, incompat, len) = unsafe {
        (
            core::ptr::addr_of!((*ring).nr).read_volatile(),
            core::ptr::addr_of!((*ring).magic).read_volatile(),
            core::ptr::addr_of!((*ring).incompat_features).read_volatile(),
            core::ptr::addr_of!((*ring).header_length).read_volatile(),
        )
    };
    if magic != AIO_RING_MAGIC || incompat != 0 || len as usize != core::mem::size_of::<AioRing>() || nr == 0 {
        return None;
    }
    // SAFETY: aligned u32 fields of the live header, shared with the kernel.
    let (head_w, tail_w) = unsafe {
        (
            AtomicU32::from_ptr(core::ptr::addr_of_mut!((*ring).head)),
            AtomicU32::from_ptr(core::ptr::addr_of_mut!((*ring).tail)),
        )
    };
    let tail = tail_w.load(Ordering::Acquire);
    let mut head = head_w.load(Ordering::Relaxed);
    if head >= nr || tail >= nr {
        return None;
    }
    // SAFETY: `nr` events follow the header in the mapping.
    let events = unsafe { (ring as *const u8).add(core::mem::size_of::<AioRing>()) as *const IoEvent };
    let mut n = 0;
    while head != tail && n < evs.len() {
        // SAFETY: head < nr; the event was written before `tail` moved past it.
        evs[n] = unsafe { events.add(head as usize).read_volatile() };
        head = (head + 1) % nr;
        n += 1;
    }
    if n != 0 {
        // The slots are the kernel's to fill again only once this is seen.
        head_w.store(head, Ordering::Release);
    }
    Some(n)
}
