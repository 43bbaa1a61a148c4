//! Raw system calls. Every wrapper reports failure as `-errno`.
//!
//! On x86_64 the `syscall` instruction is issued directly: the kernel already
//! returns `-errno`, so there is no round trip through the thread-local
//! `errno`. Other architectures go through `libc::syscall`.

use core::ffi::c_void;

use super::types::io_uring_params;

#[cfg(target_arch = "x86_64")]
mod raw {
    use core::arch::asm;

    /// Issue syscall `nr` with up to six arguments; returns the kernel's raw
    /// result (`-4095..=-1` is `-errno`).
    ///
    /// # Safety
    /// The arguments are valid for system call `nr`: memory it reads or
    /// writes is the caller's to give, and its effects (on mappings, fds)
    /// are the caller's to want.
    #[inline(always)]
    pub unsafe fn syscall6(
        nr: libc::c_long,
        a1: usize,
        a2: usize,
        a3: usize,
        a4: usize,
        a5: usize,
        a6: usize,
    ) -> isize {
        let ret: isize;
        // SAFETY: the caller guarantees the arguments are valid for `nr`.
        // The kernel clobbers only rcx and r11 (declared) besides rax.
        unsafe {
            asm!(
                "syscall",
                inlateout("rax") nr as isize => ret,
                in("rdi") a1,
                in("rsi") a2,
                in("rdx") a3,
                in("r10") a4,
                in("r8") a5,
                in("r9") a6,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack, preserves_flags),
            );
        }
        ret
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod raw {
    /// Issue syscall `nr` through libc, folding errno back into the result.
    ///
    /// # Safety
    /// As for the x86_64 `syscall6`.
    #[inline]
    pub unsafe fn syscall6(
        nr: libc::c_long,
        a1: usize,
        a2: usize,
        a3: usize,
        a4: usize,
        a5: usize,
        a6: usize,
    ) -> isize {
        // SAFETY: the caller guarantees the arguments are valid for `nr`.
        let ret = unsafe { libc::syscall(nr, a1, a2, a3, a4, a5, a6) };
        if ret == -1 {
            // SAFETY: errno's location is valid for the calling thread.
            -(unsafe { *libc::__errno_location() } as isize)
        } else {
            ret as isize
        }
    }
}

pub(crate) use raw::syscall6;

/// The address of the interception stub (`syscall; ret`, mapped at
/// `seccomp::STUB_ADDR` by `crate::intercept`), or 0 while interception is
/// off. The interception filter lets io_uring and ring `mmap` calls made
/// from the stub through; every other site traps.
pub static STUB: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// [`syscall6`] for the calls the interception filter traps (the three
/// io_uring calls, `mmap` and `close`): issued from the stub once it exists, so the
/// library's own calls never trap.
///
/// # Safety
/// As for [`syscall6`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn syscall6_exempt(
    nr: libc::c_long,
    a1: usize,
    a2: usize,
    a3: usize,
    a4: usize,
    a5: usize,
    a6: usize,
) -> isize {
    let stub = STUB.load(core::sync::atomic::Ordering::Relaxed);
    if stub == 0 {
        // SAFETY: forwarded contract.
        return unsafe { syscall6(nr, a1, a2, a3, a4, a5, a6) };
    }
    let ret: isize;
    // SAFETY: the caller guarantees the arguments are valid for `nr`; the
    // stub clobbers rax, rcx and r11 only, and returns with `ret` (the
    // asm may push below the stack pointer: no `nostack`).
    unsafe {
        core::arch::asm!(
            "call {stub}",
            stub = in(reg) stub,
            inlateout("rax") nr as isize => ret,
            in("rdi") a1,
            in("rsi") a2,
            in("rdx") a3,
            in("r10") a4,
            in("r8") a5,
            in("r9") a6,
            lateout("rcx") _,
            lateout("r11") _,
        );
    }
    ret
}

#[cfg(not(target_arch = "x86_64"))]
pub use raw::syscall6 as syscall6_exempt;

/// Set once this process made a kernel ring through us. Such a ring's task
/// work interrupts a thread's epoll_wait with EINTR, though no signal came
/// (TIF_NOTIFY_SIGNAL); the engine then sleeps where that is restarted.
pub static KERNEL_RING_MADE: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// `io_uring_setup(2)`: returns the new ring fd, or `-errno`.
///
/// # Safety
/// `p` must point to a writable `io_uring_params`.
#[inline]
pub unsafe fn io_uring_setup(entries: u32, p: *mut io_uring_params) -> i32 {
    // SAFETY: p is valid per the caller's contract; the kernel reads and
    // writes only that struct.
    let fd = unsafe { syscall6_exempt(libc::SYS_io_uring_setup, entries as usize, p as usize, 0, 0, 0, 0) as i32 };
    if fd >= 0 {
        KERNEL_RING_MADE.store(true, core::sync::atomic::Ordering::Relaxed);
    }
    fd
}

/// `io_uring_enter(2)`: returns the number of SQEs consumed, or `-errno`.
/// Always the kernel's: `ring::syscall` decides what goes to the engine.
///
/// # Safety
/// `arg` must be null or point to `argsz` readable bytes of the kind that
/// `flags` selects (a sigset, an `io_uring_getevents_arg`, ...).
#[inline]
pub unsafe fn io_uring_enter(
    fd: i32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: *const c_void,
    argsz: usize,
) -> i32 {
    // SAFETY: arg/argsz are valid per the caller's contract.
    unsafe {
        syscall6_exempt(
            libc::SYS_io_uring_enter,
            fd as u32 as usize,
            to_submit as usize,
            min_complete as usize,
            flags as usize,
            arg as usize,
            argsz,
        ) as i32
    }
}

/// `io_uring_register(2)`: returns the opcode's result, or `-errno`.
/// Always the kernel's, as [`io_uring_enter`].
///
/// # Safety
/// `arg` must be null or valid for what `opcode` reads and writes with
/// `nr_args` elements.
#[inline]
pub unsafe fn io_uring_register(fd: i32, opcode: u32, arg: *const c_void, nr_args: u32) -> i32 {
    // SAFETY: arg/nr_args are valid for opcode per the caller's contract.
    unsafe {
        syscall6_exempt(
            libc::SYS_io_uring_register,
            fd as u32 as usize,
            opcode as usize,
            arg as usize,
            nr_args as usize,
            0,
            0,
        ) as i32
    }
}

/// `mmap(2)`: the mapping, or `Err(-errno)`.
///
/// # Safety
/// As for `mmap(2)`: a fixed `addr` may replace existing mappings.
#[inline]
pub unsafe fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: i32,
    flags: i32,
    fd: i32,
    offset: i64,
) -> Result<*mut c_void, i32> {
    // SAFETY: forwarded contract; mmap never touches memory unless MAP_FIXED.
    let ret = unsafe {
        syscall6_exempt(
            libc::SYS_mmap,
            addr as usize,
            len,
            prot as u32 as usize,
            flags as u32 as usize,
            fd as u32 as usize,
            offset as usize,
        )
    };
    // Only -4095..-1 are errors; large addresses can look negative.
    if (-4095..0).contains(&ret) {
        Err(ret as i32)
    } else {
        Ok(ret as *mut c_void)
    }
}

/// `munmap(2)`: 0 or `-errno`.
///
/// # Safety
/// Nothing may use the range afterwards.
#[inline]
pub unsafe fn munmap(addr: *mut c_void, len: usize) -> i32 {
    // SAFETY: the caller owns the range and drops all uses of it.
    unsafe { syscall6(libc::SYS_munmap, addr as usize, len, 0, 0, 0, 0) as i32 }
}

/// `madvise(2)`: 0 or `-errno`.
///
/// # Safety
/// Advice such as `MADV_DONTNEED` discards contents of the range.
#[inline]
pub unsafe fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32 {
    // SAFETY: the caller accepts the advice's effect on the range.
    unsafe { syscall6(libc::SYS_madvise, addr as usize, len, advice as u32 as usize, 0, 0, 0) as i32 }
}

/// `close(2)`: 0 or `-errno`. From the stub: the interception filter
/// traps close() of ring fd numbers made anywhere else.
///
/// # Safety
/// The caller must own `fd`; nothing may use it afterwards.
#[inline]
pub unsafe fn close(fd: i32) -> i32 {
    // SAFETY: fd ownership is the caller's; close touches no memory.
    unsafe { syscall6_exempt(libc::SYS_close, fd as u32 as usize, 0, 0, 0, 0, 0) as i32 }
}

/// The `(soft, hard)` limits of `resource` (an `RLIMIT_*` value), or
/// `Err(-errno)`. Uses `prlimit64` so the result is 64-bit everywhere.
pub fn getrlimit(resource: u32) -> Result<(u64, u64), i32> {
    let mut rl = [0u64; 2];
    // SAFETY: rl is a live, writable `struct rlimit64` (two u64s); a null
    // new-limit makes this a pure query of the calling process.
    let ret = unsafe { syscall6(libc::SYS_prlimit64, 0, resource as usize, 0, rl.as_mut_ptr() as usize, 0, 0) };
    if ret < 0 {
        Err(ret as i32)
    } else {
        Ok((rl[0], rl[1]))
    }
}
