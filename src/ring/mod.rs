//! The ring logic: everything liburing does between the C surface and the
//! kernel. Functions take a [`Ring`] (never a reference to the caller's
//! struct: see its documentation for which thread owns which field) and
//! report failure as `-errno`.

pub mod ask;
pub mod buf_ring;
pub mod probe;
pub mod queue;
pub mod register;
pub mod setup;
#[cfg(test)]
mod shared_tests;
pub mod syscall;
pub mod types;
pub mod version;

pub use types::{int_flags, IoUring, IoUringCq, IoUringSq, Ring};

pub(crate) use crate::sys::mem::{load_acquire, load_relaxed, page_size, store_release};

/// log2 of the SQE slots one entry takes (SQE128 rings: two).
#[inline(always)]
pub(crate) fn sqe_shift(setup_flags: u32) -> u32 {
    (setup_flags & crate::sys::IORING_SETUP_SQE128 != 0) as u32
}

/// log2 of the CQE slots one entry takes (CQE32 rings: two).
#[inline(always)]
pub(crate) fn cqe_shift(setup_flags: u32) -> u32 {
    (setup_flags & crate::sys::IORING_SETUP_CQE32 != 0) as u32
}

#[inline]
pub(crate) const fn align_up(v: usize, to: usize) -> usize {
    (v + to - 1) & !(to - 1)
}
