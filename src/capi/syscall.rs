//! The raw system call wrappers liburing exports.

use core::ffi::{c_uint, c_void};

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
