//! liburing-rs's own export about the userspace engine.

use core::ffi::c_int;

use super::EINVAL;
use crate::ring::{syscall, IoUring};

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn liburing_rs_ring_engine(ring: *const IoUring) -> c_int {
    syscall::ring_engine(ring!(ring as *mut IoUring, EINVAL))
}
