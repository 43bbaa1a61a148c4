//! Kernel or engine: the one place that decides where `io_uring_enter(2)`
//! and `io_uring_register(2)` go, for the library's calls and the raw
//! system call exports alike. `sys` issues them to the kernel only.

use core::ffi::c_void;

use super::types::{int_flags, Ring};
use crate::{diag, engine, sys};

/// `io_uring_enter(2)` on `fd`: once any engine ring exists, an fd (or
/// registered index) of one is served by the engine, everything else by
/// the kernel.
///
/// # Safety
/// As for [`sys::io_uring_enter`].
#[inline]
pub unsafe fn io_uring_enter(fd: i32, to_submit: u32, min_complete: u32, flags: u32, arg: *const c_void, argsz: usize) -> i32 {
    if engine::active() {
        // SAFETY: forwarded contract.
        return unsafe { engine::enter(fd, to_submit, min_complete, flags, arg, argsz) };
    }
    // SAFETY: forwarded contract.
    unsafe { sys::io_uring_enter(fd, to_submit, min_complete, flags, arg, argsz) }
}

/// `io_uring_register(2)` on `fd`, routed as [`io_uring_enter`] (ring-less
/// calls, fd -1, too: a MSG_RING may target an engine ring).
///
/// # Safety
/// As for [`sys::io_uring_register`].
#[inline]
pub unsafe fn io_uring_register(fd: i32, opcode: u32, arg: *const c_void, nr_args: u32) -> i32 {
    if engine::active() {
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

/// What the library lends the diagnostics (`diag::setup`): their own copy
/// of the crate knows no engine ring, so they register through this.
pub static DIAG_LIB: diag::Lib = diag::Lib { register: diag_register };

unsafe extern "C" fn diag_register(fd: i32, opcode: u32, arg: *const c_void, nr: u32) -> i32 {
    // SAFETY: the diagnostics pass an argument valid for `opcode`.
    unsafe { io_uring_register(fd, opcode, arg, nr) }
}
