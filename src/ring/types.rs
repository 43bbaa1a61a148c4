//! liburing's own structs: `struct io_uring`, `io_uring_sq` and `io_uring_cq`.
//!
//! Programs compiled against liburing's header read and write these fields
//! from inline code, so the layout and the meaning of every field is ABI.

use core::ffi::c_void;

use crate::sys::{io_uring_cqe, io_uring_sqe, IORING_ENTER_NO_IOWAIT, IORING_ENTER_REGISTERED_RING};

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
    /// A ring that owns nothing: tearing it down is a no-op.
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

    /// Flags to OR into every `io_uring_enter` call for this ring.
    #[inline(always)]
    pub fn enter_flags(&self) -> u32 {
        (self.int_flags & int_flags::ENTER_MASK) as u32
    }

    #[inline(always)]
    pub fn has_flag(&self, setup_flag: u32) -> bool {
        self.flags & setup_flag != 0
    }

    #[inline(always)]
    pub fn has_feature(&self, feature: u32) -> bool {
        self.features & feature != 0
    }
}

// Layout, checked against abi/liburing-2.15-layouts.tsv (rows io_uring_sq,
// io_uring_cq, io_uring). c-tests/layout.c checks the C side.
macro_rules! assert_layout {
    ($t:ty, size $size:expr; $($field:ident @ $off:expr),* $(,)?) => {
        const _: () = assert!(core::mem::size_of::<$t>() == $size);
        $(const _: () = assert!(core::mem::offset_of!($t, $field) == $off);)*
    };
}

#[cfg(target_pointer_width = "64")]
assert_layout!(IoUringSq, size 104;
    khead @ 0, ktail @ 8, kring_mask @ 16, kring_entries @ 24, kflags @ 32,
    kdropped @ 40, array @ 48, sqes @ 56, sqe_head @ 64, sqe_tail @ 68,
    ring_sz @ 72, ring_ptr @ 80, ring_mask @ 88, ring_entries @ 92,
    sqes_sz @ 96, pad @ 100);
#[cfg(target_pointer_width = "64")]
assert_layout!(IoUringCq, size 88;
    khead @ 0, ktail @ 8, kring_mask @ 16, kring_entries @ 24, kflags @ 32,
    koverflow @ 40, cqes @ 48, ring_sz @ 56, ring_ptr @ 64, ring_mask @ 72,
    ring_entries @ 76, pad @ 80);
#[cfg(target_pointer_width = "64")]
assert_layout!(IoUring, size 216;
    sq @ 0, cq @ 104, flags @ 192, ring_fd @ 196, features @ 200,
    enter_ring_fd @ 204, int_flags @ 208, pad @ 209, pad2 @ 212);

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{offset_of, size_of};

    /// The compile-time asserts above, cross-checked row by row against the
    /// ABI table so that neither can drift without the other.
    #[test]
    fn layout_matches_abi_table() {
        let table = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/abi/liburing-2.15-layouts.tsv"
        ))
        .unwrap();
        let ours = |ty: &str, field: &str| -> Option<usize> {
            let field = field.split('[').next().unwrap();
            macro_rules! f {
                ($t:ty, $($name:ident),*) => {
                    match field {
                        "(sizeof)" => Some(size_of::<$t>()),
                        $(stringify!($name) => Some(offset_of!($t, $name)),)*
                        _ => None,
                    }
                };
            }
            match ty {
                "io_uring_sq" => f!(IoUringSq, khead, ktail, kring_mask, kring_entries, kflags,
                    kdropped, array, sqes, sqe_head, sqe_tail, ring_sz, ring_ptr, ring_mask,
                    ring_entries, sqes_sz, pad),
                "io_uring_cq" => f!(IoUringCq, khead, ktail, kring_mask, kring_entries, kflags,
                    koverflow, cqes, ring_sz, ring_ptr, ring_mask, ring_entries, pad),
                "io_uring" => f!(IoUring, sq, cq, flags, ring_fd, features, enter_ring_fd,
                    int_flags, pad, pad2),
                _ => None,
            }
        };
        let mut checked = 0;
        for line in table.lines().skip(1) {
            let cols: Vec<&str> = line.split('\t').collect();
            if !matches!(cols[0], "io_uring" | "io_uring_sq" | "io_uring_cq") {
                continue;
            }
            let got = ours(cols[0], cols[1])
                .unwrap_or_else(|| panic!("{}.{} has no Rust field", cols[0], cols[1]));
            let want: usize = if cols[1] == "(sizeof)" { cols[3] } else { cols[2] }.parse().unwrap();
            assert_eq!(got, want, "{}.{}", cols[0], cols[1]);
            checked += 1;
        }
        assert_eq!(checked, 17 + 13 + 10);
    }
}
