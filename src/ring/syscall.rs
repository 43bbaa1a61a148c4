//! Kernel or engine: the one place in the ring logic that hands a ring
//! over to the userspace engine (setup, mapping, enter, register, closing
//! the fd), for the library's calls and the raw system call exports alike.
//! `sys` issues the system calls to the kernel only; the engine decides
//! nothing about rings that are not its own.

use core::ffi::c_void;

use super::types::{int_flags, Ring};
use crate::sys::io_uring_params;
use crate::{diag, engine, sys};

/// `io_uring_enter(2)` on `fd`: once any engine ring exists, an fd (or
/// registered index) of one is served by the engine, everything else by
/// the kernel.
///
/// # Safety
/// As for [`sys::io_uring_enter`].
#[inline]
pub unsafe fn io_uring_enter(
    fd: i32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: *const c_void,
    argsz: usize,
) -> i32 {
    if engine::active() {
        // SAFETY: forwarded contract.
        return unsafe { engine::enter(fd, to_submit, min_complete, flags, arg, argsz) };
    }
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_enter(fd, to_submit, min_complete, flags, arg, argsz) }
}

/// `io_uring_register(2)` on `fd`, routed as [`io_uring_enter`] (ring-less
/// calls, fd -1, too: a MSG_RING may target an engine ring). A ring-less
/// IORING_REGISTER_QUERY goes to the engine even before any engine ring
/// exists: it answers for the rings setup would make.
///
/// # Safety
/// As for [`sys::io_uring_register`].
#[inline]
pub unsafe fn io_uring_register(fd: i32, opcode: u32, arg: *const c_void, nr_args: u32) -> i32 {
    if engine::active()
        || (fd == -1 && opcode & !sys::IORING_REGISTER_USE_REGISTERED_RING == sys::IORING_REGISTER_QUERY)
    {
        // SAFETY: forwarded contract.
        return unsafe { engine::register(fd, opcode, arg, nr_args) };
    }
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_register(fd, opcode, arg, nr_args) }
}

/// `io_uring_enter` on `ring`, with the ring's own enter flags (its
/// registered index, iowait) added to `flags`: rings marked at setup as
/// the engine's (`int_flags::ENGINE`) go to the engine, which needs no
/// look-up for the rest.
#[inline(always)]
pub(crate) fn enter(ring: Ring, submit: u32, wait_nr: u32, flags: u32, arg: *const c_void, sz: usize) -> i32 {
    if ring.int_flags() & int_flags::ENGINE != 0 {
        let flags = flags | ring.enter_flags();
        // SAFETY: as for enter_kernel below.
        return unsafe { engine::enter(ring.enter_ring_fd(), submit, wait_nr, flags, arg, sz) };
    }
    enter_kernel(ring, submit, wait_nr, flags, arg, sz)
}

/// [`enter`] for a ring known to be the kernel's: the submit fast path,
/// which engine rings never take (they carry RING_SLOW).
#[inline(always)]
pub(crate) fn enter_kernel(ring: Ring, submit: u32, wait_nr: u32, flags: u32, arg: *const c_void, sz: usize) -> i32 {
    let flags = flags | ring.enter_flags();
    // SAFETY: arg/sz are either null/NSIG_BYTES, a sigset, or an argument
    // struct of size `sz` that outlives the call.
    unsafe { sys::io_uring_enter(ring.enter_ring_fd(), submit, wait_nr, flags, arg, sz) }
}

/// `io_uring_setup(2)`: in the kernel, or in the engine as
/// LIBURING_RS_ENGINE says (`auto`: only when the kernel refuses io_uring
/// itself). `-errno` on failure.
///
/// # Safety
/// `p` is a valid, writable io_uring_params.
#[inline]
pub unsafe fn io_uring_setup(entries: u32, p: *mut io_uring_params) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { engine::io_uring_setup(entries, p) }
}

/// `mmap(2)` of ring fd `fd` at one of the IORING_OFF_* offsets; an engine
/// ring hands out its own memory.
///
/// # Safety
/// As for [`sys::mmap`].
#[inline]
pub unsafe fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: i32,
    flags: i32,
    fd: i32,
    off: i64,
) -> Result<*mut c_void, i32> {
    // SAFETY: forwarded contract.
    unsafe { engine::mmap(addr, len, prot, flags, fd, off) }
}

/// Closes ring fd `fd` at teardown; an engine ring is torn down first.
#[inline]
pub fn close(fd: i32) -> i32 {
    engine::close(fd)
}

/// `io_uring_close_ring_fd`'s close: an engine ring stays reachable
/// through its registered index alone.
#[inline]
pub fn close_ring_fd(fd: i32) -> i32 {
    engine::close_ring_fd(fd)
}

/// The `int_flags` bit that marks the ring behind `fd` (a registered index
/// with `registered`) as the engine's, or 0.
#[inline]
pub fn engine_flag(fd: i32, registered: bool) -> u8 {
    engine::int_flag(fd, registered)
}

/// `liburing_rs_ring_engine()`: which engine serves `ring`.
pub fn ring_engine(ring: Ring) -> i32 {
    let registered = ring.int_flags() & int_flags::REG_RING != 0;
    let fd = if registered { ring.enter_ring_fd() } else { ring.ring_fd() };
    engine::ring_engine(fd, registered)
}

/// What the library lends the diagnostics (`diag::setup`): their own copy
/// of the crate knows no engine ring, so they register through this.
pub static DIAG_LIB: diag::Lib = diag::Lib { register: diag_register };

/// # Safety
/// As for [`io_uring_register`].
unsafe extern "C" fn diag_register(fd: i32, opcode: u32, arg: *const c_void, nr: u32) -> i32 {
    // SAFETY: the diagnostics pass an argument valid for `opcode`.
    unsafe { io_uring_register(fd, opcode, arg, nr) }
}
