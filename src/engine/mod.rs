//! The userspace engine: io_uring implemented inside this process, for
//! where the kernel's is unavailable (seccomp, sysctl, old kernels) or
//! when asked for with `LIBURING_RS_ENGINE=user`.
//!
//! An engine ring has the same memory layout as a kernel ring, so every
//! inline helper of liburing.h works on it unchanged; its fd is an eventfd
//! that is readable while CQEs are pending. The ring logic reaches the
//! engine only through the hooks below (setup, mapping, enter, register,
//! close); everything else lives in this directory, arranged like the
//! kernel's io_uring/:
//!
//! | file | kernel counterpart |
//! |---|---|
//! | `setup.rs`, `ctx.rs` | ring creation, CQ posting, overflow |
//! | `submit.rs`, `req.rs` | SQ consumption, request life, links, drain |
//! | `wait.rs`, `waiter.rs` | io_uring_enter, io_cqring_wait |
//! | `opdef.rs` | opdef.c (one row per opcode) |
//! | `nop.rs` ... | one file per op family |
//! | `register.rs`, `rsrc.rs` | register.c, rsrc.c, filetable.c |
//! | `creds.rs` | personalities (register.c, the creds override in io_uring.c) |
//! | `fork.rs` | (none: a kernel ring is one object, shared across fork() as is) |
//! | `io_wq.rs` | io-wq.c (worker pool) |
//! | `sqpoll.rs` | sqpoll.c (the SQPOLL thread) |
//! | `readiness.rs`, `reactor.rs` | poll.c's wait queues and task work, the timeout hrtimers |

mod advise;
mod aio;
mod cancel;
mod creds;
mod ctx;
mod epoll;
mod fileref;
mod fixed_fd;
mod fork;
mod fs;
mod futex;
mod io_wq;
mod kbuf;
mod lock;
mod msg_ring;
mod napi;
mod net;
mod netbuf;
mod nop;
mod opdef;
mod openclose;
mod os;
mod path;
mod poll;
mod query;
mod reactor;
mod readiness;
mod register;
mod req;
mod rsrc;
mod rw;
mod setup;
mod sock;
mod splice;
mod sqpoll;
mod submit;
mod sync;
mod table;
mod timeout;
mod wait;
mod waiter;
mod waitid;
mod xattr;

use core::ffi::c_void;
use core::sync::atomic::Ordering;

use crate::sys::{self, io_uring_params, IORING_ENTER_REGISTERED_RING, IORING_REGISTER_USE_REGISTERED_RING};

/// Hook (ring setup, after success): the int_flags bit for ring fd `fd`
/// (a registered index with IORING_SETUP_REGISTERED_FD_ONLY).
pub fn int_flag(fd: i32, registered: bool) -> u8 {
    if !active() {
        return 0;
    }
    let r = if registered { table::lookup_registered(fd as u32) } else { table::lookup(fd) };
    if r.is_some() {
        crate::sys::liburing::int_flags::ENGINE
    } else {
        0
    }
}

/// `liburing_rs_ring_engine()` values.
pub const ENGINE_KERNEL: i32 = 0;
pub const ENGINE_USER: i32 = 1;

enum Select {
    Auto,
    Kernel,
    User,
}

/// LIBURING_RS_ENGINE, read at every ring setup (ignored under AT_SECURE:
/// an unprivileged user must not pick the engine of a setuid program).
fn selection() -> Result<Select, i32> {
    match sys::env::get(c"LIBURING_RS_ENGINE") {
        None | Some(b"" | b"auto") => Ok(Select::Auto),
        Some(b"kernel") => Ok(Select::Kernel),
        Some(b"user") => Ok(Select::User),
        Some(_) => Err(-libc::EINVAL),
    }
}

/// Hook (ring setup): creates a ring like io_uring_setup(2), in the kernel
/// or in the engine as LIBURING_RS_ENGINE says. In `auto` mode the engine
/// steps in only when the kernel refuses io_uring itself (ENOSYS, EPERM,
/// EACCES).
///
/// # Safety
/// `p` is a valid, writable io_uring_params.
pub unsafe fn io_uring_setup(entries: u32, p: *mut io_uring_params) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { setup_for(entries, p, false) }
}

/// `io_uring_setup`, for a trapped call with `trapped` (see `setup::create`).
///
/// # Safety
/// As for `io_uring_setup`.
unsafe fn setup_for(entries: u32, p: *mut io_uring_params, trapped: bool) -> i32 {
    match selection() {
        Err(e) => e,
        // SAFETY: forwarded contract.
        Ok(Select::Kernel) => unsafe { sys::io_uring_setup(entries, p) },
        // SAFETY: forwarded contract.
        Ok(Select::User) => setup::create(entries, unsafe { &mut *p }, trapped),
        Ok(Select::Auto) => {
            // SAFETY: forwarded contract.
            let fd = unsafe { sys::io_uring_setup(entries, p) };
            if fd == -libc::ENOSYS || fd == -libc::EPERM || fd == -libc::EACCES {
                // SAFETY: forwarded contract.
                setup::create(entries, unsafe { &mut *p }, trapped)
            } else {
                fd
            }
        }
    }
}

/// Hook (ring mapping): mmap(2) of a ring fd at one of the IORING_OFF_*
/// offsets; engine rings hand out their own memory.
///
/// # Safety
/// As for `sys::mmap`.
pub unsafe fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: i32,
    flags: i32,
    fd: i32,
    off: i64,
) -> Result<*mut c_void, i32> {
    if active() {
        if let Some(r) = table::lookup(fd) {
            if !fork::ours(r.ctx()) {
                return Err(-libc::EBADFD);
            }
            return r.ctx().map_for_app(addr, off as u64, len);
        }
    }
    // SAFETY: forwarded contract.
    unsafe { sys::mmap(addr, len, prot, flags, fd, off) }
}

/// Whether any engine ring exists: while none does, the raw system calls
/// go straight to the kernel (one load and a branch).
#[inline(always)]
pub fn active() -> bool {
    table::LIVE.load(Ordering::Relaxed) != 0
}

/// Hook (enter): io_uring_enter(2) for rings marked with `int_flags::ENGINE`, and
/// for the raw system call once `active()`: engine rings are served here,
/// anything else goes to the kernel.
///
/// # Safety
/// As for `sys::io_uring_enter`.
#[cold]
#[inline(never)]
pub unsafe fn enter(fd: i32, to_submit: u32, min_complete: u32, flags: u32, arg: *const c_void, argsz: usize) -> i32 {
    let registered = flags & IORING_ENTER_REGISTERED_RING != 0;
    let r = if registered { table::lookup_registered(fd as u32) } else { table::lookup(fd) };
    let Some(r) = r else {
        // SAFETY: forwarded contract.
        return unsafe { sys::io_uring_enter(fd, to_submit, min_complete, flags, arg, argsz) };
    };
    let ctx = r.ctx();
    if let Err(e) = usable(ctx, registered, fd) {
        return e;
    }
    fork::join(ctx);
    // SAFETY: forwarded contract.
    unsafe { wait::enter(ctx, to_submit, min_complete, flags, arg, argsz) }
}

/// Whether calls on `ctx`, reached by fd `fd` (or registered index), are
/// served: not on another process's ring (-EBADFD), nor on a dead one
/// (-EBADF, see `Ctx::lost`), nor through a number the application has
/// reused (`Ctx::fd_lost`; checked in full only where cheap enough).
#[inline]
fn usable(ctx: &ctx::Ctx, registered: bool, fd: i32) -> Result<(), i32> {
    if !fork::ours(ctx) {
        return Err(-libc::EBADFD);
    }
    if ctx.is_lost() {
        return Err(-libc::EBADF);
    }
    if !registered && ctx.fd_lost.load(Ordering::Relaxed) {
        return ctx.check_app_fd(fd);
    }
    Ok(())
}

/// Hook (register): io_uring_register(2) once `active()`.
///
/// # Safety
/// As for `sys::io_uring_register`.
#[cold]
#[inline(never)]
pub unsafe fn register(fd: i32, opcode: u32, arg: *const c_void, nr_args: u32) -> i32 {
    if fd == -1 && opcode == sys::IORING_REGISTER_SEND_MSG_RING {
        return msg_ring::sync_msg(arg, nr_args);
    }
    if fd == -1 && opcode & !IORING_REGISTER_USE_REGISTERED_RING == sys::IORING_REGISTER_QUERY {
        // SAFETY: forwarded contract.
        return unsafe { query_ringless(arg, nr_args) };
    }
    let registered = opcode & IORING_REGISTER_USE_REGISTERED_RING != 0;
    let r = if registered { table::lookup_registered(fd as u32) } else { table::lookup(fd) };
    let Some(r) = r else {
        // SAFETY: forwarded contract.
        return unsafe { sys::io_uring_register(fd, opcode, arg, nr_args) };
    };
    if let Err(e) = usable(r.ctx(), registered, fd) {
        return e;
    }
    if !registered {
        if let Err(e) = r.ctx().check_app_fd_due(fd, os::now_ns()) {
            return e;
        }
    }
    fork::join(r.ctx());
    let mut orphans = alloc::vec::Vec::new();
    // SAFETY: forwarded contract.
    let ret =
        unsafe { register::register(&r, opcode & !IORING_REGISTER_USE_REGISTERED_RING, arg, nr_args, &mut orphans) };
    drop(r);
    for o in orphans {
        setup::shutdown(o);
    }
    ret
}

/// IORING_REGISTER_QUERY with no ring: answered by the io_uring a ring set
/// up now would get (`io_uring_setup`'s choice).
///
/// # Safety
/// As for `sys::io_uring_register`.
unsafe fn query_ringless(arg: *const c_void, nr_args: u32) -> i32 {
    let kernel = || {
        // SAFETY: forwarded contract.
        unsafe { sys::io_uring_register(-1, sys::IORING_REGISTER_QUERY, arg, nr_args) }
    };
    match selection() {
        Ok(Select::User) => query::query(arg as u64, nr_args),
        Ok(Select::Auto) => match kernel() {
            r if r == -libc::ENOSYS || r == -libc::EPERM || r == -libc::EACCES => query::query(arg as u64, nr_args),
            r => r,
        },
        _ => kernel(),
    }
}

/// Hook (io_uring_close_ring_fd): an engine ring stays reachable through
/// its registered index only (see `table::unmap_fd`); other fds are
/// closed, with close(2)'s answer ignored as liburing does.
pub fn close_ring_fd(fd: i32) -> i32 {
    if active() && table::lookup(fd).is_some() {
        return table::unmap_fd(fd).map_or_else(|e| e, |()| 0);
    }
    // SAFETY: the caller owns fd.
    unsafe { sys::close(fd) };
    0
}

/// Hook (teardown): closes a ring fd; an engine ring is torn down first
/// (in-flight work cancelled or waited for, threads and fds released).
pub fn close(fd: i32) -> i32 {
    if active() {
        if let Some(r) = table::unregister(fd) {
            setup::shutdown(r);
            return 0;
        }
    }
    // SAFETY: the caller owns fd.
    unsafe { sys::close(fd) }
}

/// Hook (interception): the program's close(2) of ring fd `fd`. As the
/// kernel's close drops the fd's hold on the ring: a ring that has a
/// registered index lives on there; any other is torn down now (what is
/// in flight cancelled and waited for, as at io_uring_queue_exit), before
/// the program can free the memory of an IORING_SETUP_NO_MMAP ring.
pub fn close_trapped(fd: i32) -> i32 {
    if let Some(r) = table::lookup(fd).filter(|_| active()) {
        // A thread waiting in io_uring_enter holds the ring, as the
        // kernel's fdget does: the number goes, and the ring once nobody
        // waits (`forget_closed`).
        if r.ctx().cq_waiters.load(Ordering::SeqCst) != 0 {
            // SAFETY: the program's own close, as it asked.
            return unsafe { sys::close(fd) };
        }
        if table::unmap_fd(fd).is_ok() {
            return 0;
        }
        // A dup of the fd keeps the ring, which is found by it from now on.
        if let Some(d) = os::other_dup(fd, r.ctx().efd) {
            if table::rekey(&r, d) {
                // SAFETY: the program's own close, as it asked.
                return unsafe { sys::close(fd) };
            }
        }
        drop(r);
        return close(fd);
    }
    // SAFETY: the program's own close, as it asked.
    unsafe { sys::close(fd) }
}

/// Hook (interception): `fd` leads to no ring by its number; if it is a
/// dup of a ring's fd (the same open file), the ring is found by `fd` from
/// now on, as the kernel finds a ring by any fd of its file. True if so.
pub fn adopt_dup(fd: i32) -> bool {
    if !active() || fd < 0 || !os::anon_ok(fd) {
        return false;
    }
    let Some(r) = table::find(|c| fork::ours(c) && c.fd() != fd && c.efd != fd && os::same_description(fd, c.efd))
    else {
        return false;
    };
    table::rekey(&r, fd)
}

/// Hook (interception): whether `fd` (a registered index with
/// `registered`) is an engine ring of this process.
pub fn is_ring(fd: i32, registered: bool) -> bool {
    let r = if registered { table::lookup_registered(fd as u32) } else { table::lookup(fd) };
    r.is_some_and(|r| fork::ours(r.ctx()))
}

/// Hook (interception): io_uring_setup(2) as a program made it, with the
/// params at address `p` copied in and back out as the kernel does
/// (-EFAULT, and no ring, when either copy fails). The flag says whether
/// the answer is a ring fd (not an error, nor a registered index).
pub fn setup_trapped(entries: u32, p: u64) -> (i32, bool) {
    let mut params = io_uring_params::default();
    let len = core::mem::size_of::<io_uring_params>();
    if let Err(e) = os::copy_from_user(&mut params as *mut io_uring_params as *mut u8, p, len) {
        return (e, false);
    }
    // SAFETY: `params` is a live local.
    let fd = unsafe { setup_for(entries, &mut params, true) };
    if fd < 0 {
        return (fd, false);
    }
    if os::copy_to_user(p, &params as *const io_uring_params as *const u8, len).is_err() {
        if params.flags & sys::IORING_SETUP_REGISTERED_FD_ONLY == 0 {
            close(fd);
        } else if let Ok(Some(r)) = table::unregister_index(fd as u32) {
            setup::shutdown(r);
        }
        return (-libc::EFAULT, false);
    }
    (fd, params.flags & sys::IORING_SETUP_REGISTERED_FD_ONLY == 0)
}

/// Hook (interception): a fault-safe copy of program memory.
pub fn copy_in(dst: *mut u8, src: u64, len: usize) -> Result<(), i32> {
    os::copy_from_user(dst, src, len)
}

/// Hook (interception): a fault-safe copy into program memory.
pub fn copy_out(dst: u64, src: *const u8, len: usize) -> Result<(), i32> {
    os::copy_to_user(dst, src, len)
}

/// Hook (interception): what identifies the ring behind `fd` for its life.
pub fn ring_key(fd: i32) -> Option<usize> {
    table::lookup(fd).map(|r| r.ctx() as *const ctx::Ctx as usize)
}

/// Hook (interception): the program closed ring fd `fd` itself (the ring
/// was `key`); the ring is torn down, and the number, which may name
/// another file by now, is left alone. False, and nothing done, while a
/// thread waits in io_uring_enter on the ring (ask again later).
pub fn forget_closed(fd: i32, key: usize) -> bool {
    let Some(r) = table::lookup(fd) else { return true };
    if r.ctx() as *const ctx::Ctx as usize != key || !fork::ours(r.ctx()) {
        return true;
    }
    if r.ctx().cq_waiters.load(Ordering::SeqCst) != 0 {
        return false;
    }
    r.ctx().fd.store(-1, Ordering::SeqCst);
    drop(r);
    if let Some(r) = table::unregister(fd) {
        setup::shutdown(r);
    }
    true
}

/// `liburing_rs_ring_engine()`: which engine runs the ring behind `fd`
/// (or registered index, with `registered`). -EBADF: not a live ring fd.
pub fn ring_engine(fd: i32, registered: bool) -> i32 {
    let r = if registered { table::lookup_registered(fd as u32) } else { table::lookup(fd) };
    match r {
        Some(r) if fork::ours(r.ctx()) => ENGINE_USER,
        Some(_) => -libc::EBADFD,
        None if fd < 0 => -libc::EBADF,
        None => {
            // A kernel ring answers an empty io_uring_enter; anything else
            // is not a ring.
            // SAFETY: no submissions, no wait, no argument memory.
            match unsafe {
                sys::io_uring_enter(
                    fd,
                    0,
                    0,
                    if registered { IORING_ENTER_REGISTERED_RING } else { 0 },
                    core::ptr::null(),
                    0,
                )
            } {
                e if e == -libc::EBADF || e == -libc::EOPNOTSUPP || e == -libc::EINVAL => -libc::EBADF,
                _ => ENGINE_KERNEL,
            }
        }
    }
}
