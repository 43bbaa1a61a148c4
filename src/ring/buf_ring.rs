//! Provided-buffer rings: allocation plus registration in one call, and the
//! matching teardown.
//!
//! By default the ring lives in anonymous memory we map and hand to the
//! kernel. With `IOU_PBUF_RING_MMAP` in `flags` the kernel allocates it and
//! we map it from the ring fd instead: handing the kernel user memory
//! together with that flag could never work, so the flag picks the mode.

use core::ffi::c_void;
use core::mem::size_of;
use core::ptr;

use super::register::{register_buf_ring, unregister_buf_ring};
use super::Ring;
use crate::sys::{
    self, io_uring_buf, io_uring_buf_reg, io_uring_buf_ring, IORING_OFF_PBUF_RING, IORING_OFF_PBUF_SHIFT,
    IOU_PBUF_RING_MMAP,
};

/// Bytes spanned by a ring of `nentries` entries.
fn ring_bytes(nentries: u32) -> usize {
    (nentries as usize).saturating_mul(size_of::<io_uring_buf>())
}

/// Maps and registers a kernel-allocated ring.
fn setup_kernel_mem(ring: Ring, nentries: u32, bgid: i32, flags: u32, err: &mut i32) -> *mut io_uring_buf_ring {
    let mut reg = io_uring_buf_reg { ring_entries: nentries, bgid: bgid as u16, ..Default::default() };
    let ret = register_buf_ring(ring, &mut reg, flags);
    if ret != 0 {
        *err = ret;
        return ptr::null_mut();
    }
    let off = IORING_OFF_PBUF_RING | ((bgid as u16 as u64) << IORING_OFF_PBUF_SHIFT);
    // SAFETY: a fresh shared mapping of the kernel's ring at no fixed address
    // (an engine ring's fd is served by the engine).
    let map = unsafe {
        super::syscall::mmap(
            ptr::null_mut(),
            ring_bytes(nentries),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_POPULATE,
            ring.ring_fd(),
            off as i64,
        )
    };
    match map {
        Ok(p) => p as *mut io_uring_buf_ring,
        Err(e) => {
            *err = e;
            unregister_buf_ring(ring, bgid);
            ptr::null_mut()
        }
    }
}

/// Maps anonymous memory and registers it as the ring.
fn setup_user_mem(ring: Ring, nentries: u32, bgid: i32, flags: u32, err: &mut i32) -> *mut io_uring_buf_ring {
    let len = ring_bytes(nentries);
    // SAFETY: a fresh private anonymous mapping at no fixed address.
    let map = unsafe {
        sys::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_ANONYMOUS | libc::MAP_PRIVATE,
            -1,
            0,
        )
    };
    let br = match map {
        Ok(p) => p,
        Err(e) => {
            *err = e;
            return ptr::null_mut();
        }
    };
    let mut reg =
        io_uring_buf_reg { ring_addr: br as u64, ring_entries: nentries, bgid: bgid as u16, ..Default::default() };
    let ret = register_buf_ring(ring, &mut reg, flags);
    if ret != 0 {
        // SAFETY: the mapping is ours and the kernel refused it.
        unsafe { sys::munmap(br, len) };
        *err = ret;
        return ptr::null_mut();
    }
    br as *mut io_uring_buf_ring
}

/// `io_uring_setup_buf_ring`: the ring, with an empty tail, or null and
/// `-errno` in `err`.
pub fn setup_buf_ring(ring: Ring, nentries: u32, bgid: i32, flags: u32, err: &mut i32) -> *mut io_uring_buf_ring {
    *err = 0;
    let br = if flags & IOU_PBUF_RING_MMAP as u32 != 0 {
        setup_kernel_mem(ring, nentries, bgid, flags, err)
    } else {
        setup_user_mem(ring, nentries, bgid, flags, err)
    };
    if !br.is_null() {
        // SAFETY: br maps at least one io_uring_buf; its last u16 is the
        // shared tail. The kernel reads it only after the caller publishes.
        unsafe { ptr::addr_of_mut!((*br).resv1_u.resv1_s.tail).write_volatile(0) };
    }
    br
}

/// `io_uring_free_buf_ring`: unregisters group `bgid`, then unmaps `br`.
pub fn free_buf_ring(ring: Ring, br: *mut io_uring_buf_ring, nentries: u32, bgid: i32) -> i32 {
    let ret = unregister_buf_ring(ring, bgid);
    if ret != 0 {
        return ret;
    }
    // SAFETY: br is the mapping setup_buf_ring returned for `nentries`
    // entries; the kernel no longer references it.
    unsafe { sys::munmap(br as *mut c_void, ring_bytes(nentries)) };
    0
}
