//! The raw system call wrappers liburing exports.

use core::ffi::{c_int, c_long, c_uint, c_void};

use crate::ring::queue::NSIG_BYTES;
use crate::ring::syscall;
use crate::sys::{self, io_uring_params};

/// # Safety
/// `p` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_setup(entries: c_uint, p: *mut io_uring_params) -> i32 {
    // Under interception the system call is the engine's, as a program's
    // own would be.
    #[cfg(target_arch = "x86_64")]
    if crate::intercept::active() {
        return crate::intercept::setup(entries, p as u64);
    }
    // The raw wrapper leaves every check to the kernel (a NULL `p` is its
    // -EFAULT), exactly as liburing's does.
    // SAFETY: the kernel validates `p` before reading or writing it.
    unsafe { sys::io_uring_setup(entries, p) }
}

/// # Safety
/// `sig` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_enter(
    fd: c_uint,
    to_submit: c_uint,
    min_complete: c_uint,
    flags: c_uint,
    sig: *mut libc::sigset_t,
) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if crate::intercept::active() {
        return crate::intercept::enter(fd as i32, to_submit, min_complete, flags, sig as *const c_void, NSIG_BYTES);
    }
    // SAFETY: the kernel validates every argument; `sig` may be null.
    unsafe { syscall::io_uring_enter(fd as i32, to_submit, min_complete, flags, sig as *const c_void, NSIG_BYTES) }
}

/// # Safety
/// `arg` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_enter2(
    fd: c_uint,
    to_submit: c_uint,
    min_complete: c_uint,
    flags: c_uint,
    arg: *mut c_void,
    sz: usize,
) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if crate::intercept::active() {
        return crate::intercept::enter(fd as i32, to_submit, min_complete, flags, arg, sz);
    }
    // SAFETY: the kernel validates every argument against `flags` and `sz`.
    unsafe { syscall::io_uring_enter(fd as i32, to_submit, min_complete, flags, arg, sz) }
}

/// # Safety
/// `arg` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register(fd: c_uint, opcode: c_uint, arg: *const c_void, nr_args: c_uint) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if crate::intercept::active() {
        return crate::intercept::register(fd as i32, opcode, arg, nr_args);
    }
    // SAFETY: the kernel validates `arg` against `opcode` and `nr_args`.
    unsafe { syscall::io_uring_register(fd as i32, opcode, arg, nr_args) }
}

/// `liburing_rs_intercept_syscall()`: the io_uring system call `nr` with
/// the six arguments at `args`, served by interception's engine when this
/// copy of the library serves the process's trapped calls (the syscall(3)
/// preload object calls it, so that most programs' calls never trap).
/// Returns 1 with the call's value or -errno in `*res`; 0 when this copy
/// does not serve (the caller then makes the system call itself, which
/// traps if another copy does).
///
/// # Safety
/// `args` and `res` are null (0 is returned) or valid for six longs and
/// one long; the call's own pointers are checked as the kernel checks them.
#[no_mangle]
pub unsafe extern "C" fn liburing_rs_intercept_syscall(nr: c_long, args: *const c_long, res: *mut c_long) -> c_int {
    #[cfg(target_arch = "x86_64")]
    if crate::intercept::active() && !args.is_null() && !res.is_null() {
        // SAFETY: the caller's promise: six readable longs.
        let a = unsafe { core::ptr::read_unaligned(args as *const [u64; 6]) };
        if let Some(r) = crate::intercept::io_uring_call(nr, a) {
            // SAFETY: the caller's promise: one writable long.
            unsafe { res.write_unaligned(r as c_long) };
            return 1;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (nr, args, res);
    0
}
