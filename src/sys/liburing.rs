//! liburing's own structs: `struct io_uring`, `io_uring_sq` and `io_uring_cq`,
//! and liburing.h's constants the library shares with programs.
//!
//! Programs compiled against liburing's header read and write these fields
//! from inline code, so the layout and the meaning of every field is ABI.
//! They sit here, beside the kernel's structs, because every floor reads
//! them: the ring logic through `ring::Ring`, the diagnostics as they watch
//! a ring, the engine as it marks one.

use core::ffi::c_void;

use super::{io_uring_cqe, io_uring_sqe, IORING_ENTER_NO_IOWAIT, IORING_ENTER_REGISTERED_RING};

/// `struct io_uring_sq`: the submission side of a ring.
#[repr(C)]
#[derive(Debug)]
pub struct IoUringSq {
    pub khead: *mut u32,
    pub ktail: *mut u32,
    pub kring_mask: *mut u32,
    pub kring_entries: *mut u32,
    pub kflags: *mut u32,
    pub kdropped: *mut u32,
    pub array: *mut u32,
    pub sqes: *mut io_uring_sqe,
    /// Tail last published to the kernel.
    pub sqe_head: u32,
    /// Next slot `io_uring_get_sqe` hands out.
    pub sqe_tail: u32,
    pub ring_sz: usize,
    pub ring_ptr: *mut c_void,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub sqes_sz: u32,
    pub pad: u32,
}

/// `struct io_uring_cq`: the completion side of a ring.
#[repr(C)]
#[derive(Debug)]
pub struct IoUringCq {
    pub khead: *mut u32,
    pub ktail: *mut u32,
    pub kring_mask: *mut u32,
    pub kring_entries: *mut u32,
    pub kflags: *mut u32,
    pub koverflow: *mut u32,
    pub cqes: *mut io_uring_cqe,
    pub ring_sz: usize,
    pub ring_ptr: *mut c_void,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub pad: [u32; 2],
}

/// `struct io_uring`.
#[repr(C)]
#[derive(Debug)]
pub struct IoUring {
    pub sq: IoUringSq,
    pub cq: IoUringCq,
    /// The `IORING_SETUP_*` flags the ring was created with.
    pub flags: u32,
    /// The ring's file descriptor, or -1 once closed or never opened.
    pub ring_fd: i32,
    /// `IORING_FEAT_*` bits reported by the kernel.
    pub features: u32,
    /// What `io_uring_enter` is called with: the fd, or its registered index.
    pub enter_ring_fd: i32,
    /// Library-private state, see [`int_flags`].
    pub int_flags: u8,
    pub pad: [u8; 3],
    pub pad2: u32,
}

/// Bits of `IoUring::int_flags`. The values are liburing's, since its test
/// suite inspects them.
pub mod int_flags {
    use super::*;
    /// `enter_ring_fd` is a registered ring index.
    pub const REG_RING: u8 = IORING_ENTER_REGISTERED_RING as u8;
    /// Waits should not count as iowait.
    pub const NO_IOWAIT: u8 = IORING_ENTER_NO_IOWAIT as u8;
    /// Register calls may use the registered index too.
    pub const REG_REG_RING: u8 = 1;
    /// Ring memory belongs to the application (`io_uring_queue_init_mem`).
    pub const APP_MEM: u8 = 2;
    /// Completions only appear by entering the kernel (IOPOLL without SQPOLL).
    pub const CQ_ENTER: u8 = 4;
    /// The ring is the userspace engine's (a bit liburing leaves free), so
    /// the enter path tests a byte it has loaded anyway.
    pub const ENGINE: u8 = 0x40;
    /// The bits that go straight into `io_uring_enter`'s flags.
    pub const ENTER_MASK: u8 = REG_RING | NO_IOWAIT;
}

impl IoUringSq {
    pub const fn zeroed() -> Self {
        IoUringSq {
            khead: core::ptr::null_mut(),
            ktail: core::ptr::null_mut(),
            kring_mask: core::ptr::null_mut(),
            kring_entries: core::ptr::null_mut(),
            kflags: core::ptr::null_mut(),
            kdropped: core::ptr::null_mut(),
            array: core::ptr::null_mut(),
            sqes: core::ptr::null_mut(),
            sqe_head: 0,
            sqe_tail: 0,
            ring_sz: 0,
            ring_ptr: core::ptr::null_mut(),
            ring_mask: 0,
            ring_entries: 0,
            sqes_sz: 0,
            pad: 0,
        }
    }
}

impl IoUringCq {
    pub const fn zeroed() -> Self {
        IoUringCq {
            khead: core::ptr::null_mut(),
            ktail: core::ptr::null_mut(),
            kring_mask: core::ptr::null_mut(),
            kring_entries: core::ptr::null_mut(),
            kflags: core::ptr::null_mut(),
            koverflow: core::ptr::null_mut(),
            cqes: core::ptr::null_mut(),
            ring_sz: 0,
            ring_ptr: core::ptr::null_mut(),
            ring_mask: 0,
            ring_entries: 0,
            pad: [0; 2],
        }
    }
}

impl IoUring {
    /// Every pointer null, every fd -1: what [`IoUring::dead`] starts from.
    pub const fn empty() -> Self {
        IoUring {
            sq: IoUringSq::zeroed(),
            cq: IoUringCq::zeroed(),
            flags: 0,
            ring_fd: -1,
            features: 0,
            enter_ring_fd: -1,
            int_flags: 0,
            pad: [0; 3],
            pad2: 0,
        }
    }
}

/// The user_data of the timeout SQE used on kernels without EXT_ARG.
pub const LIBURING_UDATA_TIMEOUT: u64 = u64::MAX;
