//! liburing-rs: liburing 2.15 in Rust, behind liburing's exact C ABI.
//!
//! The crate is split into rooms on floors, every `crate::` path pointing
//! down (`capi` -> `ring`, `intercept` -> `engine`, `diag` -> `sys`, `rt`;
//! see docs/ARCHITECTURE.md, checked by scripts/check-layers.sh):
//! - [`sys`]: the kernel interface (structs, constants, raw syscalls);
//! - [`ring`]: the ring logic (setup, submission, completion, registration),
//!   and the one place that hands rings to the engine or the diagnostics;
//! - [`diag`]: diagnostics: why a setup failed and what the kernel can do
//!   (in the library), and the trace and checker (LIBURING_RS_TRACE/CHECK,
//!   built into their own shared object and loaded only when asked for);
//! - [`capi`]: the exported C surface, thin shims over [`ring`];
//! - [`engine`]: io_uring in userspace, for where the kernel's is blocked;
//! - `intercept`: the engine behind the raw io_uring system calls
//!   (`uring-run`, `LIBURING_RS_INTERCEPT=1`).
//! - `rt`: the runtime of the `no_std` build (allocator, panic handler),
//!   which the binaries use too.
//!
//! The shipped libraries are built with `panic = "abort"` (see Cargo.toml);
//! then the crate needs nothing but `core` and `libc`, never unwinds across
//! the C ABI, and prints only when its diagnostics are asked for. Test
//! harnesses unwind and bring `std`.
#![cfg_attr(panic = "abort", no_std)]

extern crate alloc;

pub mod capi;
pub mod diag;
pub mod engine;
mod intercept;
pub mod ring;
#[cfg(panic = "abort")]
mod rt;
pub mod sys;
