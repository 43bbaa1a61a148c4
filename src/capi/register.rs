//! Registration.

use core::ffi::c_uint;

use super::EINVAL;
use crate::ring::{register, IoUring};
use crate::sys::{io_uring_params, io_uring_probe};

#[no_mangle]
pub unsafe extern "C" fn io_uring_register_probe(ring: *mut IoUring, p: *mut io_uring_probe, nr: c_uint) -> i32 {
    let ring = arg!(ring, EINVAL);
    register::register_probe(ring, p, nr)
}

#[no_mangle]
pub unsafe extern "C" fn io_uring_enable_rings(ring: *mut IoUring) -> i32 {
    let ring = arg!(ring, EINVAL);
    register::enable_rings(ring)
}

#[no_mangle]
pub unsafe extern "C" fn io_uring_register_ring_fd(ring: *mut IoUring) -> i32 {
    let ring = arg!(ring, EINVAL);
    register::register_ring_fd(ring)
}

#[no_mangle]
pub unsafe extern "C" fn io_uring_unregister_ring_fd(ring: *mut IoUring) -> i32 {
    let ring = arg!(ring, EINVAL);
    register::unregister_ring_fd(ring)
}

#[no_mangle]
pub unsafe extern "C" fn io_uring_close_ring_fd(ring: *mut IoUring) -> i32 {
    let ring = arg!(ring, EINVAL);
    register::close_ring_fd(ring)
}

#[no_mangle]
pub unsafe extern "C" fn io_uring_resize_rings(ring: *mut IoUring, p: *mut io_uring_params) -> i32 {
    let ring = arg!(ring, EINVAL);
    let p = arg!(p, EINVAL);
    register::resize_rings(ring, p)
}
