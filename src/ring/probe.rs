//! Opcode probes: `io_uring_get_probe_ring`, `io_uring_get_probe`.

use core::mem::size_of;

use super::setup::{queue_exit, queue_init};
use super::types::{IoUring, Ring};
use crate::sys::{io_uring_probe, io_uring_probe_op};

/// Room for every opcode number a u8 can name.
const PROBE_OPS: u32 = 256;

/// A probe allocated with `malloc`, as liburing's callers free it with
/// `io_uring_free_probe` (or, in old code, with `free`). Null on failure.
pub fn get_probe_ring(ring: Ring) -> *mut io_uring_probe {
    let len = size_of::<io_uring_probe>() + PROBE_OPS as usize * size_of::<io_uring_probe_op>();
    // SAFETY: calloc returns zeroed memory of `len` bytes or null.
    let probe = unsafe { libc::calloc(1, len) } as *mut io_uring_probe;
    if probe.is_null() {
        return probe;
    }
    // SAFETY: the probe has room for PROBE_OPS entries, as the call says.
    if unsafe { super::register::register_probe(ring, probe, PROBE_OPS) } < 0 {
        // SAFETY: allocated above and not shared.
        unsafe { libc::free(probe.cast()) };
        return core::ptr::null_mut();
    }
    probe
}

/// Probes with a short-lived ring of its own.
pub fn get_probe() -> *mut io_uring_probe {
    let mut ring = IoUring::dead();
    let ring = Ring::from_mut(&mut ring);
    if queue_init(2, ring, 0) < 0 {
        return core::ptr::null_mut();
    }
    let probe = get_probe_ring(ring);
    queue_exit(ring);
    probe
}

/// `io_uring_free_probe`; null is accepted, like `free`.
pub fn free_probe(probe: *mut io_uring_probe) {
    // SAFETY: probes come from get_probe_ring's calloc; free(NULL) is a no-op.
    unsafe { libc::free(probe.cast()) };
}
