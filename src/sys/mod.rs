//! The kernel-interface room: `#[repr(C)]` mirrors of the io_uring UAPI
//! structs, every UAPI constant, and the raw system calls. No policy here.
//!
//! Everything is re-exported flat, so `sys::io_uring_sqe`,
//! `sys::IORING_SETUP_SQPOLL` and `sys::io_uring_enter` all work. See
//! [`types`] for how anonymous C unions are named.
#![allow(non_camel_case_types)]
#![allow(non_upper_case_globals)]

pub mod aio;
pub mod consts;
pub mod env;
pub mod flat_sqe;
mod layout_asserts;
pub mod liburing;
pub mod mem;
pub mod seccomp;
pub mod syscall;
pub mod types;

pub use consts::*;
pub use syscall::*;
pub use types::*;

#[cfg(test)]
mod tests;
