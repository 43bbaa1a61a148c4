//! Submission and completion.

use core::ffi::{c_int, c_uint};
use core::ptr;

use super::EINVAL;
use crate::ring::{queue, IoUring};
use crate::sys::{__kernel_timespec, io_uring_cqe, io_uring_sqe};

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_get_sqe(ring: *mut IoUring) -> *mut io_uring_sqe {
    let ring = ring!(ring, ptr::null_mut());
    queue::get_sqe(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit(ring: *mut IoUring) -> i32 {
    // The submits reach the diagnostics through RING_SLOW instead: the
    // fast path then pays nothing for them.
    queue::submit(ring!(ring, EINVAL))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_wait(ring: *mut IoUring, wait_nr: c_uint) -> i32 {
    queue::submit_and_wait(ring!(ring, EINVAL), wait_nr)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_get_events(ring: *mut IoUring) -> i32 {
    queue::submit_and_get_events(ring!(ring, EINVAL))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_get_events(ring: *mut IoUring) -> i32 {
    queue_call!(ring, EINVAL, Reap, |ring| queue::get_events(ring))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn __io_uring_sqring_wait(ring: *mut IoUring) -> i32 {
    queue_call!(ring, EINVAL, Reap, |ring| queue::sqring_wait(ring))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `cqe_ptr` and `sigmask` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn __io_uring_get_cqe(
    ring: *mut IoUring,
    cqe_ptr: *mut *mut io_uring_cqe,
    submit: c_uint,
    wait_nr: c_uint,
    sigmask: *mut libc::sigset_t,
) -> i32 {
    let cqe_ptr = arg!(cqe_ptr, EINVAL);
    queue_call!(ring, EINVAL, Reap, |ring| queue::get_cqe(ring, cqe_ptr, submit, wait_nr, sigmask))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `cqe_ptr`, `ts` and `sigmask` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_wait_cqes(
    ring: *mut IoUring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    ts: *mut __kernel_timespec,
    sigmask: *mut libc::sigset_t,
) -> i32 {
    let cqe_ptr = arg!(cqe_ptr, EINVAL);
    queue_call!(ring, EINVAL, Reap, |ring| queue::wait_cqes(ring, cqe_ptr, wait_nr, ts, sigmask))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `cqe_ptr` and `ts` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_wait_cqe_timeout(
    ring: *mut IoUring,
    cqe_ptr: *mut *mut io_uring_cqe,
    ts: *mut __kernel_timespec,
) -> i32 {
    let cqe_ptr = arg!(cqe_ptr, EINVAL);
    queue_call!(ring, EINVAL, Reap, |ring| queue::wait_cqes(ring, cqe_ptr, 1, ts, ptr::null()))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `cqe_ptr`, `ts` and `sigmask` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_wait_cqes_min_timeout(
    ring: *mut IoUring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    ts: *mut __kernel_timespec,
    min_wait_usec: c_uint,
    sigmask: *mut libc::sigset_t,
) -> i32 {
    let cqe_ptr = arg!(cqe_ptr, EINVAL);
    queue_call!(ring, EINVAL, Reap, |ring| {
        queue::wait_cqes_min_timeout(ring, cqe_ptr, wait_nr, ts, min_wait_usec, sigmask)
    })
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `cqe_ptr`, `ts` and `sigmask` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_wait_timeout(
    ring: *mut IoUring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    ts: *mut __kernel_timespec,
    sigmask: *mut libc::sigset_t,
) -> i32 {
    let cqe_ptr = arg!(cqe_ptr, EINVAL);
    queue_call!(ring, EINVAL, Submit, |ring| queue::submit_and_wait_timeout(ring, cqe_ptr, wait_nr, ts, sigmask))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `cqe_ptr`, `ts` and `sigmask` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_wait_min_timeout(
    ring: *mut IoUring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    ts: *mut __kernel_timespec,
    min_wait: c_uint,
    sigmask: *mut libc::sigset_t,
) -> i32 {
    let cqe_ptr = arg!(cqe_ptr, EINVAL);
    queue_call!(ring, EINVAL, Submit, |ring| {
        queue::submit_and_wait_min_timeout(ring, cqe_ptr, wait_nr, ts, min_wait, sigmask)
    })
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `cqe_ptr` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_submit_and_wait_reg(
    ring: *mut IoUring,
    cqe_ptr: *mut *mut io_uring_cqe,
    wait_nr: c_uint,
    reg_index: c_int,
) -> i32 {
    let cqe_ptr = arg!(cqe_ptr, EINVAL);
    queue_call!(ring, EINVAL, Submit, |ring| queue::submit_and_wait_reg(ring, cqe_ptr, wait_nr, reg_index))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `cqes` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_peek_batch_cqe(
    ring: *mut IoUring,
    cqes: *mut *mut io_uring_cqe,
    count: c_uint,
) -> c_uint {
    if cqes.is_null() || count == 0 {
        return 0;
    }
    // SAFETY: the caller provides an array of `count` CQE pointers.
    queue_call!(ring, 0, Reap, |ring| unsafe { queue::peek_batch_cqe(ring, cqes, count) })
}
