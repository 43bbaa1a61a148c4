//! Interception: the engine behind the raw io_uring system calls, for
//! programs that make them without liburing (`uring-run`, or
//! `LIBURING_RS_INTERCEPT=1` with the library preloaded).
//!
//! At load, when the mode is asked for and the engine would serve rings
//! (the kernel refuses io_uring, or `LIBURING_RS_ENGINE=user`), the library
//! maps a two-instruction stub (`syscall; ret`) at a fixed address, sends
//! its own io_uring, `mmap` and `close` calls through it, installs a
//! SIGSYS handler and then a seccomp filter (`sys::seccomp::FILTER`, all
//! threads) that traps those calls (`close` only of the numbers ring fds
//! get) when made from anywhere else. SECCOMP_RET_TRAP wins
//! over a container's SECCOMP_RET_ERRNO, so the program's calls reach the
//! handler, which serves them from the engine and writes the result where
//! the kernel would (rax). Every request the engine then performs is an
//! ordinary system call of this process, under the container's filter.
//!
//! x86_64 only: another architecture needs its AUDIT_ARCH, its stub
//! instructions, and its ucontext registers for arguments and result.

#[cfg(target_arch = "x86_64")]
mod x86_64;

/// Whether this process's io_uring system calls are served by
/// interception: liburing's raw `io_uring_setup()` wrapper must then do
/// what the trapped call does.
pub fn active() -> bool {
    #[cfg(target_arch = "x86_64")]
    return x86_64::ACTIVE.load(core::sync::atomic::Ordering::Relaxed);
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// The three io_uring system calls as interception serves them (see
/// `active`, which is never true where these are missing); `io_uring_call`
/// picks one by number.
#[cfg(target_arch = "x86_64")]
pub use x86_64::{enter, io_uring_call, register, setup};

/// The library's load-time constructor. Miri, which has no getauxval, does
/// not run it: no test there intercepts anything.
#[cfg(target_arch = "x86_64")]
#[used]
#[cfg_attr(not(miri), link_section = ".init_array")]
static INIT: extern "C" fn() = x86_64::init;
