//! Registration: everything that goes through `io_uring_register(2)`.

use core::ffi::c_void;

use super::setup::{mmap_rings, unmap_rings};
use super::types::{int_flags, IoUring, IoUringCq, IoUringSq};
use crate::sys::{
    self, io_uring_params, io_uring_probe, io_uring_rsrc_update, IORING_FEAT_REG_REG_RING,
    IORING_REGISTER_ENABLE_RINGS, IORING_REGISTER_PROBE, IORING_REGISTER_RESIZE_RINGS,
    IORING_REGISTER_RING_FDS, IORING_REGISTER_USE_REGISTERED_RING, IORING_SETUP_NO_MMAP,
    IORING_SETUP_NO_SQARRAY, IORING_UNREGISTER_RING_FDS,
};

/// Issues one register opcode, through the registered ring index when the
/// kernel allows it (saves a file lookup).
pub fn do_register(ring: &IoUring, opcode: u32, arg: *const c_void, nr_args: u32) -> i32 {
    let (fd, opcode) = if ring.int_flags & int_flags::REG_REG_RING != 0 {
        (ring.enter_ring_fd, opcode | IORING_REGISTER_USE_REGISTERED_RING)
    } else {
        (ring.ring_fd, opcode)
    };
    // SAFETY: the kernel validates `arg` against `opcode` and `nr_args`;
    // callers pass memory that lives for the duration of the call.
    unsafe { sys::io_uring_register(fd, opcode, arg, nr_args) }
}

/// `io_uring_register_probe`.
pub fn register_probe(ring: &IoUring, p: *mut io_uring_probe, nr_ops: u32) -> i32 {
    do_register(ring, IORING_REGISTER_PROBE, p as *const c_void, nr_ops)
}

/// `io_uring_enable_rings`: starts a ring created with IORING_SETUP_R_DISABLED.
pub fn enable_rings(ring: &IoUring) -> i32 {
    do_register(ring, IORING_REGISTER_ENABLE_RINGS, core::ptr::null(), 0)
}

/// `io_uring_register_ring_fd`: returns 1 on success, as the kernel does.
pub fn register_ring_fd(ring: &mut IoUring) -> i32 {
    if ring.int_flags & int_flags::REG_RING != 0 {
        return -libc::EEXIST;
    }
    let mut up = io_uring_rsrc_update { offset: u32::MAX, resv: 0, data: ring.ring_fd as u64 };
    let ret = do_register(ring, IORING_REGISTER_RING_FDS, &mut up as *mut _ as *const c_void, 1);
    if ret == 1 {
        ring.enter_ring_fd = up.offset as i32;
        ring.int_flags |= int_flags::REG_RING;
        if ring.features & IORING_FEAT_REG_REG_RING != 0 {
            ring.int_flags |= int_flags::REG_REG_RING;
        }
    }
    ret
}

/// `io_uring_unregister_ring_fd`.
pub fn unregister_ring_fd(ring: &mut IoUring) -> i32 {
    if ring.int_flags & int_flags::REG_RING == 0 {
        return -libc::EINVAL;
    }
    let up = io_uring_rsrc_update { offset: ring.enter_ring_fd as u32, resv: 0, data: 0 };
    let ret = do_register(ring, IORING_UNREGISTER_RING_FDS, &up as *const _ as *const c_void, 1);
    if ret == 1 {
        ring.enter_ring_fd = ring.ring_fd;
        ring.int_flags &= !(int_flags::REG_RING | int_flags::REG_REG_RING);
    }
    ret
}

/// `io_uring_close_ring_fd`: drops the plain fd once the ring is reachable
/// through its registered index alone.
pub fn close_ring_fd(ring: &mut IoUring) -> i32 {
    if ring.features & IORING_FEAT_REG_REG_RING == 0 {
        return -libc::EOPNOTSUPP;
    }
    if ring.int_flags & int_flags::REG_RING == 0 {
        return -libc::EINVAL;
    }
    if ring.ring_fd == -1 {
        return -libc::EBADF;
    }
    // SAFETY: the ring owns ring_fd and forgets it right after.
    unsafe { sys::close(ring.ring_fd) };
    ring.ring_fd = -1;
    1
}

/// `io_uring_resize_rings`: asks the kernel for new ring sizes, then maps the
/// new rings and carries the local SQ indices over.
pub fn resize_rings(ring: &mut IoUring, p: &mut io_uring_params) -> i32 {
    if ring.flags & IORING_SETUP_NO_MMAP != 0 {
        return -libc::EINVAL;
    }
    p.sq_off = Default::default();
    p.cq_off = Default::default();
    let mut ret = do_register(ring, IORING_REGISTER_RESIZE_RINGS, p as *mut _ as *const c_void, 1);
    if ret >= 0 {
        let mut sq = IoUringSq::zeroed();
        let mut cq = IoUringCq::zeroed();
        ret = mmap_rings(ring.ring_fd, p, &mut sq, &mut cq);
        if ret == 0 {
            sq.sqe_head = ring.sq.sqe_head;
            sq.sqe_tail = ring.sq.sqe_tail;
            // SAFETY: the old SQE array is ours and no longer used.
            unsafe { sys::munmap(ring.sq.sqes as *mut c_void, ring.sq.sqes_sz as usize) };
            unmap_rings(&ring.sq, &ring.cq);
            ring.sq = sq;
            ring.cq = cq;
            if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
                for i in 0..p.sq_entries {
                    // SAFETY: the new array has sq_entries slots.
                    unsafe { *ring.sq.array.add(i as usize) = i };
                }
            }
        }
    }
    // The kernel reads p.flags as resize flags; leave it clean for reuse.
    p.flags = 0;
    ret
}
