//! Setup, teardown, sizing and probes.

use core::ffi::{c_uint, c_void};
use core::ptr;

use super::EINVAL;
use crate::ring::{probe, setup, IoUring, IoUringCq, IoUringSq, Ring};
use crate::sys::{io_uring_params, io_uring_probe};

/// Runs a setup of `ring` and reports it; `flags` are the ones asked for,
/// read before the setup writes the params back.
fn init(ring: Ring, entries: u32, flags: u32, setup: impl FnOnce() -> i32) -> i32 {
    setup::setup_done(ring, entries, flags, setup())
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_queue_init(entries: c_uint, ring: *mut IoUring, flags: c_uint) -> i32 {
    let ring = ring!(ring, EINVAL);
    init(ring, entries, flags, || setup::queue_init(entries, ring, flags))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `p` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_queue_init_params(
    entries: c_uint,
    ring: *mut IoUring,
    p: *mut io_uring_params,
) -> i32 {
    let ring = ring!(ring, EINVAL);
    let p = arg!(p, EINVAL);
    init(ring, entries, p.flags, || setup::queue_init_params(entries, ring, p))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `p` and `buf` are null or valid for the call as liburing's documentation of
/// this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_queue_init_mem(
    entries: c_uint,
    ring: *mut IoUring,
    p: *mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    let ring = ring!(ring, EINVAL);
    let p = arg!(p, EINVAL);
    init(ring, entries, p.flags, || setup::queue_init_mem(entries, ring, p, buf, buf_size))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `p` and `buf` are null or valid for the call as liburing's documentation of
/// this function asks.
#[no_mangle]
pub unsafe extern "C" fn __io_uring_queue_init_params(
    entries: c_uint,
    ring: *mut IoUring,
    p: *mut io_uring_params,
    buf: *mut c_void,
    buf_size: usize,
) -> i32 {
    let ring = ring!(ring, EINVAL);
    let p = arg!(p, EINVAL);
    init(ring, entries, p.flags, || setup::queue_init_params_raw(entries, ring, p, buf, buf_size))
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `p` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_queue_mmap(fd: i32, p: *mut io_uring_params, ring: *mut IoUring) -> i32 {
    let ring = ring!(ring, EINVAL);
    let p = arg!(p, EINVAL);
    let ret = setup::queue_mmap(fd, p, ring);
    setup::setup_done(ring, p.sq_entries, p.flags, ret)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_queue_exit(ring: *mut IoUring) {
    setup::queue_exit_app(ring!(ring))
}

/// # Safety
/// `sq` and `cq` are null or valid for the call as liburing's documentation of
/// this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_unmap_rings(sq: *mut IoUringSq, cq: *mut IoUringCq) {
    let sq = arg!(sq);
    let cq = arg!(cq);
    setup::unmap_rings(sq, cq)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_ring_dontfork(ring: *mut IoUring) -> i32 {
    let ring = ring!(ring, EINVAL);
    setup::ring_dontfork(ring)
}

/// # Safety
/// None beyond the C ABI: the arguments are plain values.
#[no_mangle]
pub unsafe extern "C" fn io_uring_memory_size(entries: c_uint, flags: c_uint) -> isize {
    let p = io_uring_params { flags, ..Default::default() };
    setup::memory_size_params(entries, &p)
}

/// # Safety
/// `p` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_memory_size_params(entries: c_uint, p: *mut io_uring_params) -> isize {
    let p = arg!(p, EINVAL as isize);
    setup::memory_size_params(entries, p)
}

/// # Safety
/// None beyond the C ABI: the arguments are plain values.
#[no_mangle]
pub unsafe extern "C" fn io_uring_mlock_size(entries: c_uint, flags: c_uint) -> isize {
    let p = io_uring_params { flags, ..Default::default() };
    setup::mlock_size_params(entries, &p)
}

/// # Safety
/// `p` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_mlock_size_params(entries: c_uint, p: *mut io_uring_params) -> isize {
    let p = arg!(p, EINVAL as isize);
    setup::mlock_size_params(entries, p)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_get_probe_ring(ring: *mut IoUring) -> *mut io_uring_probe {
    let ring = ring!(ring, ptr::null_mut());
    probe::get_probe_ring(ring)
}

#[no_mangle]
pub extern "C" fn io_uring_get_probe() -> *mut io_uring_probe {
    probe::get_probe()
}

/// # Safety
/// `p` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_free_probe(p: *mut io_uring_probe) {
    probe::free_probe(p)
}
