//! liburing-rs: liburing 2.15 in Rust, behind liburing's exact C ABI.
//!
//! The crate is split into three rooms (see `docs/ARCHITECTURE.md`):
//! - [`sys`]: the kernel interface (structs, constants, raw syscalls);
//! - [`ring`]: the ring logic (setup, submission, completion, registration);
//! - [`capi`]: the exported C surface, thin shims over [`ring`].
#![cfg_attr(not(test), no_std)]
#![allow(clippy::missing_safety_doc)]

// The Makefile builds the shipped libraries with `--features c-abi`; test
// harnesses unwind, so the guard only applies to that build.
#[cfg(all(feature = "c-abi", not(panic = "abort")))]
compile_error!("liburing-rs must be built with panic = \"abort\": unwinding must never cross the C ABI");

pub mod sys;
pub mod ring;
pub mod capi;

/// The shipped libraries never unwind and never print: a panic (which would
/// be a bug) ends the process at once.
#[cfg(all(feature = "c-abi", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: abort has no preconditions.
    unsafe { libc::abort() }
}
