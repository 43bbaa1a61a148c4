//! liburing-rs's own export about the userspace engine.

use core::ffi::c_int;

use super::EINVAL;
use crate::ring::{int_flags, IoUring};

#[no_mangle]
pub unsafe extern "C" fn liburing_rs_ring_engine(ring: *const IoUring) -> c_int {
    let ring = ring!(ring as *mut IoUring, EINVAL);
    let registered = ring.int_flags() & int_flags::REG_RING != 0;
    let fd = if registered { ring.enter_ring_fd() } else { ring.ring_fd() };
    crate::engine::ring_engine(fd, registered)
}
