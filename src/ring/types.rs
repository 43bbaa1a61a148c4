//! `Ring`: how the ring logic reaches a caller's `struct io_uring` (the
//! struct itself is in `sys::liburing`).

use core::ffi::c_void;

pub use crate::sys::liburing::{int_flags, IoUring, IoUringCq, IoUringSq};
use crate::sys::{io_uring_cqe, io_uring_sqe};

/// A caller's `struct io_uring`, reached field by field through its pointer.
///
/// liburing lets one thread submit while another reaps and a third
/// registers, so no `&IoUring` or `&mut IoUring` is ever made from a
/// caller's pointer: every access reads or writes one field, unaligned (C
/// callers may embed the struct in a packed one), and the fields fall into
/// groups with one owner each:
///
/// | fields | written by | read by |
/// |---|---|---|
/// | `sq.sqe_head`, `sq.sqe_tail`, SQE slots, `*sq.ktail` | the submitting thread | the submitting thread |
/// | `*cq.khead`, CQE slots (read) | the reaping thread | the reaping thread |
/// | pointers, masks, sizes, `flags`, `features` | setup, exit, resize | any thread |
/// | `ring_fd`, `enter_ring_fd`, `int_flags` | setup, exit, resize, ring-fd (un)registration, `set_iowait` | any thread |
///
/// Writers of the last two rows are *exclusive* calls: as in liburing, the
/// caller runs them while no other call on the same ring is in progress.
/// They may read and write the whole struct ([`Ring::load`], [`Ring::store`]).
/// Words inside the shared ring memory (`*khead`, `*ktail`, `*kflags`...) are
/// touched only with atomics, since the kernel (or an SQ thread) updates them
/// concurrently.
#[derive(Clone, Copy)]
pub struct Ring<'a> {
    ptr: core::ptr::NonNull<IoUring>,
    _shared: core::marker::PhantomData<&'a core::cell::UnsafeCell<IoUring>>,
}

impl<'a> Ring<'a> {
    /// Wraps a caller's pointer; `None` when it is null.
    ///
    /// # Safety
    /// A non-null `p` addresses a `struct io_uring` (any alignment) that
    /// stays allocated for `'a`, and the caller keeps the ownership rules in
    /// the type's documentation.
    #[inline(always)]
    pub unsafe fn new(p: *mut IoUring) -> Option<Self> {
        core::ptr::NonNull::new(p).map(|ptr| Ring { ptr, _shared: core::marker::PhantomData })
    }

    /// [`Ring::new`] for a pointer already known to be non-null.
    ///
    /// # Safety
    /// As for [`Ring::new`], and `p` is not null.
    #[inline(always)]
    pub unsafe fn new_unchecked(p: *mut IoUring) -> Self {
        // SAFETY: non-null per the contract.
        Ring { ptr: unsafe { core::ptr::NonNull::new_unchecked(p) }, _shared: core::marker::PhantomData }
    }

    /// A ring this thread owns outright (a local, or a test's).
    #[inline(always)]
    pub fn from_mut(r: &'a mut IoUring) -> Self {
        Ring { ptr: core::ptr::NonNull::from(r), _shared: core::marker::PhantomData }
    }

    #[inline(always)]
    pub fn as_ptr(self) -> *mut IoUring {
        self.ptr.as_ptr()
    }

    /// A copy of the whole struct. Exclusive calls only (see the type).
    #[inline]
    pub fn load(self) -> IoUring {
        // SAFETY: the pointer addresses a live struct io_uring, and an
        // exclusive call has no concurrent writer.
        unsafe { self.ptr.as_ptr().read_unaligned() }
    }

    /// Replaces the whole struct. Exclusive calls only (see the type).
    #[inline]
    pub fn store(self, v: IoUring) {
        // SAFETY: as for load; no other thread reads the struct meanwhile.
        unsafe { self.ptr.as_ptr().write_unaligned(v) }
    }

    /// Whether the ring was torn down (or never set up): it points at
    /// [`IoUring::dead`]'s words and has no fd to enter with.
    #[inline(always)]
    pub fn is_dead(self) -> bool {
        self.enter_ring_fd() < 0
    }
}

/// Getters for the fields the ring logic reads, each touching that field
/// alone through the raw pointer.
macro_rules! ring_getters {
    ($($get:ident: $ty:ty = $($path:ident).+;)*) => {
        impl Ring<'_> {
            $(
                #[inline(always)]
                pub fn $get(self) -> $ty {
                    // SAFETY: the Ring invariant: a live struct io_uring; the
                    // read makes no reference and needs no alignment.
                    unsafe { core::ptr::addr_of!((*self.ptr.as_ptr()).$($path).+).read_unaligned() }
                }
            )*
        }
    };
}

/// Setters for the fields whose owner group writes them one at a time.
macro_rules! ring_setters {
    ($($set:ident: $ty:ty = $($path:ident).+;)*) => {
        impl Ring<'_> {
            $(
                #[inline(always)]
                pub fn $set(self, v: $ty) {
                    // SAFETY: as for the getters; the caller owns this
                    // field's group (see the type's documentation).
                    unsafe { core::ptr::addr_of_mut!((*self.ptr.as_ptr()).$($path).+).write_unaligned(v) }
                }
            )*
        }
    };
}

ring_getters! {
    sq_khead: *mut u32 = sq.khead;
    sq_ktail: *mut u32 = sq.ktail;
    sq_kflags: *mut u32 = sq.kflags;
    sq_sqes: *mut io_uring_sqe = sq.sqes;
    sq_sqe_head: u32 = sq.sqe_head;
    sq_sqe_tail: u32 = sq.sqe_tail;
    sq_ring_mask: u32 = sq.ring_mask;
    sq_ring_entries: u32 = sq.ring_entries;
    sq_ring_ptr: *mut c_void = sq.ring_ptr;
    sq_ring_sz: usize = sq.ring_sz;
    sq_sqes_sz: u32 = sq.sqes_sz;
    cq_khead: *mut u32 = cq.khead;
    cq_ktail: *mut u32 = cq.ktail;
    cq_cqes: *mut io_uring_cqe = cq.cqes;
    cq_ring_mask: u32 = cq.ring_mask;
    cq_ring_entries: u32 = cq.ring_entries;
    cq_ring_ptr: *mut c_void = cq.ring_ptr;
    cq_ring_sz: usize = cq.ring_sz;
    flags: u32 = flags;
    ring_fd: i32 = ring_fd;
    features: u32 = features;
    enter_ring_fd: i32 = enter_ring_fd;
    int_flags: u8 = int_flags;
}

ring_setters! {
    set_flags: u32 = flags;
    set_sq_sqe_head: u32 = sq.sqe_head;
    set_sq_sqe_tail: u32 = sq.sqe_tail;
    set_ring_fd: i32 = ring_fd;
    set_enter_ring_fd: i32 = enter_ring_fd;
    set_int_flags: u8 = int_flags;
}

impl Ring<'_> {
    /// Flags to OR into every `io_uring_enter` call for this ring.
    #[inline(always)]
    pub fn enter_flags(self) -> u32 {
        (self.int_flags() & int_flags::ENTER_MASK) as u32
    }

    #[inline(always)]
    pub fn has_feature(self, feature: u32) -> bool {
        self.features() & feature != 0
    }
}

/// Zeroed words, in read-only memory, that a dead ring's head, tail, mask
/// and flag pointers address. Entry counts of zero make the header's inline
/// helpers find no free SQE and no CQE, so a program that goes on using a
/// ring after `io_uring_queue_exit` gets NULL and "nothing ready" instead of
/// touching unmapped (or, worse, reused) memory.
#[repr(C, align(64))]
struct DeadWords([u32; 16]);
static DEAD_WORDS: DeadWords = DeadWords([0; 16]);

/// A `flags` bit no kernel flag uses, set on rings whose submits must leave
/// the fast path: the dead ring, and rings the diagnostics watch. The submit
/// fast path already tests `flags` for SQPOLL and SQ_REWIND; this bit rides
/// along in the same test, so those rings cost the others nothing.
pub const RING_SLOW: u32 = 1 << 31;

impl IoUring {
    /// The state of a ring that owns nothing: after `io_uring_queue_exit`,
    /// after a failed setup. Every library call on it returns `-EBADF` (or
    /// null), and tearing it down again is a no-op. `cq.kflags` stays null,
    /// as on kernels without CQ flags, so the header's eventfd toggle
    /// answers -EOPNOTSUPP instead of writing.
    pub fn dead() -> Self {
        let w = DEAD_WORDS.0.as_ptr() as *mut u32;
        let mut r = IoUring::empty();
        r.sq.khead = w;
        r.sq.ktail = w;
        r.sq.kring_mask = w;
        r.sq.kring_entries = w;
        r.sq.kflags = w;
        r.sq.kdropped = w;
        r.cq.khead = w;
        r.cq.ktail = w;
        r.cq.kring_mask = w;
        r.cq.kring_entries = w;
        r.cq.koverflow = w;
        r.cq.cqes = w as *mut io_uring_cqe;
        r.flags = RING_SLOW;
        r
    }

    /// Whether `ring_ptr`/`sqes` are real mappings rather than the dead ring's words.
    pub fn owns_memory(&self) -> bool {
        !self.sq.ring_ptr.is_null() || !self.sq.sqes.is_null()
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
        let table =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/abi/liburing-2.15-layouts.tsv")).unwrap();
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
                "io_uring_sq" => f!(
                    IoUringSq,
                    khead,
                    ktail,
                    kring_mask,
                    kring_entries,
                    kflags,
                    kdropped,
                    array,
                    sqes,
                    sqe_head,
                    sqe_tail,
                    ring_sz,
                    ring_ptr,
                    ring_mask,
                    ring_entries,
                    sqes_sz,
                    pad
                ),
                "io_uring_cq" => f!(
                    IoUringCq,
                    khead,
                    ktail,
                    kring_mask,
                    kring_entries,
                    kflags,
                    koverflow,
                    cqes,
                    ring_sz,
                    ring_ptr,
                    ring_mask,
                    ring_entries,
                    pad
                ),
                "io_uring" => f!(IoUring, sq, cq, flags, ring_fd, features, enter_ring_fd, int_flags, pad, pad2),
                _ => None,
            }
        };
        let mut checked = 0;
        for line in table.lines().skip(1) {
            let cols: Vec<&str> = line.split('\t').collect();
            if !matches!(cols[0], "io_uring" | "io_uring_sq" | "io_uring_cq") {
                continue;
            }
            let got = ours(cols[0], cols[1]).unwrap_or_else(|| panic!("{}.{} has no Rust field", cols[0], cols[1]));
            let want: usize = if cols[1] == "(sizeof)" { cols[3] } else { cols[2] }.parse().unwrap();
            assert_eq!(got, want, "{}.{}", cols[0], cols[1]);
            checked += 1;
        }
        assert_eq!(checked, 17 + 13 + 10);
    }
}
