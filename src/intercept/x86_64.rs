//! Interception on x86_64: the stub, the filter's installation, and the
//! SIGSYS handler.
//!
//! Why the handler may run engine code: SECCOMP_RET_TRAP stops the thread
//! at the program's own `syscall` instruction, a system call boundary. The
//! library's calls never trap (they come from the stub), so the thread is
//! never inside the engine's locks, nor inside the allocator (malloc makes
//! no io_uring call, and maps memory private or anonymous, which the
//! filter lets through). The handler thus runs as the same call made
//! through liburing would, from the program's thread.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};

use crate::engine;
use crate::sys::seccomp::{
    sock_fprog, AUDIT_ARCH_X86_64, FILTER, SECCOMP_FILTER_FLAG_TSYNC, SECCOMP_SET_MODE_FILTER, STUB_ADDR, STUB_LEN,
    SYS_SECCOMP, TRAP_DATA,
};
use crate::sys::{self, env, IORING_ENTER_REGISTERED_RING, IORING_REGISTER_LAST, IORING_REGISTER_USE_REGISTERED_RING};

/// The stub page: `syscall; ret` at 0, and at `RESTORER` the signal
/// return trampoline our SIGSYS action names (`mov $15, %rax; syscall`,
/// rt_sigreturn, the pattern debuggers know).
const STUB_CODE: [u8; 3] = [0x0f, 0x05, 0xc3];
const RESTORER: usize = 16;
const RESTORER_CODE: [u8; 9] = [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05];
const SA_RESTORER: u64 = 0x0400_0000;

/// The kernel's `struct sigaction` (x86_64).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct KSigaction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// The SIGSYS action the program had before ours, and any it set since
/// (its rt_sigaction(SIGSYS) calls that set and read trap, and land here):
/// what a SIGSYS that is not ours goes to.
static OLD_HANDLER: AtomicUsize = AtomicUsize::new(0);
static OLD_FLAGS: AtomicU64 = AtomicU64::new(0);
static OLD_RESTORER: AtomicUsize = AtomicUsize::new(0);
static OLD_MASK: AtomicU64 = AtomicU64::new(0);

fn old() -> KSigaction {
    KSigaction {
        handler: OLD_HANDLER.load(Ordering::Acquire),
        flags: OLD_FLAGS.load(Ordering::Acquire),
        restorer: OLD_RESTORER.load(Ordering::Acquire),
        mask: OLD_MASK.load(Ordering::Acquire),
    }
}

fn set_old(a: &KSigaction) {
    OLD_FLAGS.store(a.flags, Ordering::Release);
    OLD_RESTORER.store(a.restorer, Ordering::Release);
    OLD_MASK.store(a.mask, Ordering::Release);
    OLD_HANDLER.store(a.handler, Ordering::Release);
}

/// rt_sigaction(SIGSYS) from the stub, which the filter lets through.
fn sigaction_sigsys(act: Option<&KSigaction>, oact: Option<&mut KSigaction>) -> i32 {
    let act = act.map_or(0, |a| a as *const KSigaction as usize);
    let oact = oact.map_or(0, |a| a as *mut KSigaction as usize);
    // SAFETY: both pointers are null or live KSigactions.
    unsafe { sys::syscall6_exempt(libc::SYS_rt_sigaction, libc::SIGSYS as usize, act, oact, 8, 0, 0) as i32 }
}

/// The filter is in place and this copy's handler serves it.
pub(super) static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The probe for a filter inherited across execve is under way / trapped.
static PROBING: AtomicBool = AtomicBool::new(false);
static PROBE_TRAPPED: AtomicBool = AtomicBool::new(false);

/// The load-time constructor: interception when asked for (ignored under
/// AT_SECURE, as every LIBURING_RS_* setting is).
pub(super) extern "C" fn init() {
    if env::get(c"LIBURING_RS_INTERCEPT") != Some(b"1") {
        return;
    }
    if let Err((what, e)) = start() {
        say(what, e);
    }
}

fn start() -> Result<(), (&'static str, i32)> {
    let fresh = map_stub().map_err(|e| ("cannot map the system call stub", e))?;
    sys::STUB.store(STUB_ADDR, Ordering::Relaxed);
    if !fresh {
        // Another copy of the library in this process (liburing-ffi, the
        // diagnostics object) set interception up; its handler serves.
        return Ok(());
    }
    set_handler()?;
    // A filter inherited across execve traps this call from here, and the
    // handler now serves it: it is in place, and the engine must serve.
    PROBING.store(true, Ordering::SeqCst);
    // SAFETY: io_uring_setup with no params fails without touching memory.
    unsafe { libc::syscall(libc::SYS_io_uring_setup, 0usize, 0usize) };
    PROBING.store(false, Ordering::SeqCst);
    if !PROBE_TRAPPED.load(Ordering::SeqCst) {
        if !engine_serves() {
            restore_handler();
            return Ok(());
        }
        install_filter().inspect_err(|_| restore_handler())?;
    }
    ACTIVE.store(true, Ordering::Relaxed);
    Ok(())
}

/// Whether the engine serves rings here: asked for, or the kernel refuses
/// io_uring (an io_uring_setup with no params fails with EFAULT where it
/// is allowed, before any ring is made).
fn engine_serves() -> bool {
    match env::get(c"LIBURING_RS_ENGINE") {
        Some(b"user") => true,
        None | Some(b"" | b"auto") => {
            // SAFETY: no params: the kernel reads no memory.
            let r = unsafe { sys::io_uring_setup(1, core::ptr::null_mut()) };
            r == -libc::EPERM || r == -libc::ENOSYS || r == -libc::EACCES
        }
        _ => false,
    }
}

/// Maps the stub at its fixed address (true), or finds it there (false:
/// another copy of the library in this process mapped it).
fn map_stub() -> Result<bool, i32> {
    let want = STUB_ADDR as *mut c_void;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE;
    // SAFETY: FIXED_NOREPLACE never replaces a mapping.
    let p = unsafe { libc::mmap(want, STUB_LEN, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0) };
    if p == want {
        // SAFETY: the page is ours, writable, and holds both pieces.
        unsafe {
            core::ptr::copy_nonoverlapping(STUB_CODE.as_ptr(), p as *mut u8, STUB_CODE.len());
            core::ptr::copy_nonoverlapping(RESTORER_CODE.as_ptr(), (p as *mut u8).add(RESTORER), RESTORER_CODE.len());
        }
        // SAFETY: our own page.
        if unsafe { libc::mprotect(p, STUB_LEN, libc::PROT_READ | libc::PROT_EXEC) } != 0 {
            return Err(errno());
        }
        return Ok(true);
    }
    if p != libc::MAP_FAILED {
        // A kernel before 4.17 took the address as a hint.
        // SAFETY: the mapping just made, used by nobody.
        unsafe { libc::munmap(p, STUB_LEN) };
        return Err(-libc::EEXIST);
    }
    let e = errno();
    let mut code = [0u8; RESTORER + RESTORER_CODE.len()];
    if e == -libc::EEXIST
        && engine::copy_in(code.as_mut_ptr(), STUB_ADDR as u64, code.len()).is_ok()
        && code[..3] == STUB_CODE
        && code[RESTORER..] == RESTORER_CODE
    {
        return Ok(false);
    }
    Err(e)
}

fn set_handler() -> Result<(), (&'static str, i32)> {
    // NODEFER: SIGSYS must never be blocked when a call traps, or the
    // kernel kills the process. Set through the stub: a filter inherited
    // across execve traps rt_sigaction(SIGSYS) from anywhere else.
    let sa = KSigaction {
        handler: on_sigsys as *const () as usize,
        flags: (libc::SA_SIGINFO | libc::SA_NODEFER) as u64 | SA_RESTORER,
        restorer: STUB_ADDR + RESTORER,
        mask: 0,
    };
    let mut prev = KSigaction::default();
    let r = sigaction_sigsys(Some(&sa), Some(&mut prev));
    if r != 0 {
        return Err(("cannot set the SIGSYS handler", r));
    }
    set_old(&prev);
    Ok(())
}

fn restore_handler() {
    sigaction_sigsys(Some(&old()), None);
}

/// Installs the filter on every thread. no_new_privs is set only when the
/// kernel requires it (a caller without CAP_SYS_ADMIN gets EACCES).
fn install_filter() -> Result<(), (&'static str, i32)> {
    let prog = sock_fprog { len: FILTER.len() as u16, filter: FILTER.as_ptr() };
    let load = || {
        // SAFETY: `prog` points at a valid program for the call.
        unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                SECCOMP_SET_MODE_FILTER,
                SECCOMP_FILTER_FLAG_TSYNC,
                &prog as *const sock_fprog,
            )
        }
    };
    let mut r = load();
    if r < 0 && errno() == -libc::EACCES {
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(("cannot set no_new_privs", errno()));
        }
        r = load();
    }
    match r {
        0 => Ok(()),
        r if r > 0 => Err(("cannot synchronise the seccomp filter to thread", r as i32)),
        _ => Err(("cannot install the seccomp filter", errno())),
    }
}

fn errno() -> i32 {
    // SAFETY: errno's location is valid for the calling thread.
    -unsafe { *libc::__errno_location() }
}

/// One line on stderr: the mode was asked for and cannot be had.
fn say(what: &str, e: i32) {
    let mut buf = [0u8; 160];
    let mut n = 0;
    let mut put = |b: &[u8]| {
        let k = b.len().min(buf.len() - n);
        buf[n..n + k].copy_from_slice(&b[..k]);
        n += k;
    };
    put(b"liburing-rs: LIBURING_RS_INTERCEPT=1: ");
    put(what.as_bytes());
    put(b" (");
    let mut digits = [0u8; 12];
    let mut i = digits.len();
    let mut v = e.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    put(if e < 0 { b"-" } else { b"" });
    put(&digits[i..]);
    put(b"); io_uring calls are not intercepted\n");
    // SAFETY: writes `n` initialised bytes of `buf`.
    unsafe { libc::write(2, buf.as_ptr() as *const c_void, n) };
}

extern "C" fn on_sigsys(sig: c_int, info: *mut libc::siginfo_t, uc: *mut c_void) {
    // SAFETY: the kernel hands an SA_SIGINFO handler a valid siginfo_t;
    // for SIGSYS, si_errno/si_code sit at 4/8 and _syscall/_arch at 24/28.
    let (si_errno, si_code, nr, arch) = unsafe {
        let p = info as *const u8;
        (*(p.add(4) as *const i32), *(p.add(8) as *const i32), *(p.add(24) as *const i32), *(p.add(28) as *const u32))
    };
    if si_code != SYS_SECCOMP || si_errno != TRAP_DATA as i32 || arch != AUDIT_ARCH_X86_64 {
        chain(sig, info, uc, si_code);
        return;
    }
    // SAFETY: an SA_SIGINFO handler's third argument is the thread's
    // ucontext_t, ours alone until the handler returns.
    let gregs = unsafe { &mut (*(uc as *mut libc::ucontext_t)).uc_mcontext.gregs };
    let a = [libc::REG_RDI, libc::REG_RSI, libc::REG_RDX, libc::REG_R10, libc::REG_R8, libc::REG_R9]
        .map(|r| gregs[r as usize] as u64);
    // SAFETY: errno's location is valid for the calling thread; the
    // interrupted code must find it as it left it.
    let saved = unsafe { *libc::__errno_location() };
    let ret = serve(nr as i64, a);
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved };
    gregs[libc::REG_RAX as usize] = ret;
}

/// A SIGSYS that is not ours goes to the action the program set.
fn chain(sig: c_int, info: *mut libc::siginfo_t, uc: *mut c_void, si_code: i32) {
    let old = old();
    match old.handler {
        libc::SIG_IGN if si_code != SYS_SECCOMP => {}
        libc::SIG_DFL | libc::SIG_IGN => {
            // What the kernel does for a seccomp trap nobody handles, and
            // the default action for any other: the process ends.
            sigaction_sigsys(Some(&KSigaction::default()), None);
            // SAFETY: raise has no preconditions; SIGSYS is not blocked
            // here (NODEFER).
            unsafe { libc::raise(libc::SIGSYS) };
        }
        f if old.flags & libc::SA_SIGINFO as u64 != 0 => {
            // SAFETY: the program set `f` as an SA_SIGINFO handler.
            let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) = unsafe { core::mem::transmute(f) };
            f(sig, info, uc)
        }
        f => {
            // SAFETY: the program set `f` as a plain handler.
            let f: extern "C" fn(c_int) = unsafe { core::mem::transmute(f) };
            f(sig)
        }
    }
}

/// The program's rt_sigaction(SIGSYS, act, oact, sigsetsize): its action
/// is remembered for what is not ours, and ours stays; in the kernel's
/// order (act read, then oact written).
fn program_sigaction(act: u64, oact: u64, size: u64) -> i64 {
    if size != 8 {
        return -libc::EINVAL as i64;
    }
    let len = core::mem::size_of::<KSigaction>();
    let mut new = KSigaction::default();
    if act != 0 {
        if let Err(e) = engine::copy_in(&mut new as *mut KSigaction as *mut u8, act, len) {
            return e as i64;
        }
    }
    let prev = old();
    if act != 0 {
        set_old(&new);
    }
    if oact != 0 && engine::copy_out(oact, &prev as *const KSigaction as *const u8, len).is_err() {
        return -libc::EFAULT as i64;
    }
    0
}

/// Serves trapped call `nr` with arguments `a`; returns what rax gets.
fn serve(nr: i64, a: [u64; 6]) -> i64 {
    match nr {
        libc::SYS_io_uring_setup if PROBING.load(Ordering::SeqCst) && a[0] == 0 && a[1] == 0 => {
            PROBE_TRAPPED.store(true, Ordering::SeqCst);
            -libc::EINVAL as i64
        }
        libc::SYS_mmap => {
            let fd = a[4] as i32;
            if let Some(key) = engine::ring_key(fd) {
                if !alive(fd) {
                    forget(fd, key);
                }
            }
            // SAFETY: a ring fd's mapping is the engine's; any other goes
            // to the kernel as the program asked.
            match unsafe { engine::mmap(a[0] as *mut c_void, a[1] as usize, a[2] as i32, a[3] as i32, fd, a[5] as i64) }
            {
                Ok(p) => p as i64,
                Err(e) => e as i64,
            }
        }
        libc::SYS_close => close(a[0] as i32) as i64,
        libc::SYS_rt_sigaction => program_sigaction(a[1], a[2], a[3]),
        _ => io_uring_call(nr, a).map_or(-libc::ENOSYS as i64, i64::from),
    }
}

/// io_uring_setup/enter/register `nr` with arguments `a`, trapped or from
/// the syscall(3) preload object; None for any other number.
pub fn io_uring_call(nr: i64, a: [u64; 6]) -> Option<i32> {
    Some(match nr {
        libc::SYS_io_uring_setup => setup(a[0] as u32, a[1]),
        libc::SYS_io_uring_enter => {
            enter(a[0] as i32, a[1] as u32, a[2] as u32, a[3] as u32, a[4] as *const c_void, a[5] as usize)
        }
        libc::SYS_io_uring_register => register(a[0] as i32, a[1] as u32, a[2] as *const c_void, a[3] as u32),
        _ => return None,
    })
}

/// io_uring_setup(2) from the program: rings it closed are swept first.
pub fn setup(entries: u32, p: u64) -> i32 {
    sweep();
    let (fd, is_fd) = engine::setup_trapped(entries, p);
    if is_fd {
        remember(fd);
    }
    fd
}

/// close(2) from the program, of a number rings made by trapped setups
/// get (`seccomp::RING_FD_FIRST`).
fn close(fd: i32) -> i32 {
    let key = engine::ring_key(fd);
    let r = engine::close_trapped(fd);
    // A ring still behind the number (in use by another thread) is left
    // for the sweep.
    if let Some(key) = key.filter(|&k| engine::ring_key(fd) != Some(k)) {
        for (f, k) in FDS.iter().zip(KEYS.iter()) {
            if f.load(Ordering::Acquire) == fd + 1
                && k.load(Ordering::Acquire) == key
                && f.compare_exchange(fd + 1, 0, Ordering::AcqRel, Ordering::Relaxed).is_ok()
            {
                k.store(0, Ordering::Release);
            }
        }
    }
    r
}

/// io_uring_enter(2) from the program.
pub fn enter(fd: i32, to_submit: u32, min_complete: u32, flags: u32, arg: *const c_void, argsz: usize) -> i32 {
    let registered = flags & IORING_ENTER_REGISTERED_RING != 0;
    if engine::is_ring(fd, registered) || (!registered && adopt(fd)) {
        // SAFETY: the engine checks every argument, and reaches program
        // memory only by fault-safe copies or system calls.
        return unsafe { engine::enter(fd, to_submit, min_complete, flags, arg, argsz) };
    }
    // SAFETY: the kernel checks every argument.
    let r = unsafe { sys::io_uring_enter(fd, to_submit, min_complete, flags, arg, argsz) };
    if !refused(r) {
        r
    } else if flags & !0xff != 0 || registered {
        // The kernel's answers for what is no ring.
        -libc::EINVAL
    } else {
        not_ring(fd)
    }
}

/// io_uring_register(2) from the program.
pub fn register(fd: i32, opcode: u32, arg: *const c_void, nr_args: u32) -> i32 {
    let registered = opcode & IORING_REGISTER_USE_REGISTERED_RING != 0;
    // SAFETY: as for enter: the engine, or else the kernel, checks every
    // argument.
    let r = unsafe {
        if fd == -1 || engine::is_ring(fd, registered) || (!registered && adopt(fd)) {
            engine::register(fd, opcode, arg, nr_args)
        } else {
            sys::io_uring_register(fd, opcode, arg, nr_args)
        }
    };
    if !refused(r) || (fd != -1 && engine::is_ring(fd, registered)) {
        r
    } else if opcode & !IORING_REGISTER_USE_REGISTERED_RING >= IORING_REGISTER_LAST || fd == -1 || registered {
        -libc::EINVAL
    } else {
        not_ring(fd)
    }
}

/// A dup of a ring's fd, first used: the ring is found by it from now on
/// (and its close seen by the sweep).
fn adopt(fd: i32) -> bool {
    if !engine::adopt_dup(fd) {
        return false;
    }
    remember(fd);
    true
}

/// The kernel's io_uring refused the call itself (as a container's filter
/// or the sysctl makes it).
fn refused(r: i32) -> bool {
    r == -libc::EPERM || r == -libc::ENOSYS || r == -libc::EACCES
}

/// The kernel's answer for an fd that is not a ring: EBADF if nothing is
/// open there, else EOPNOTSUPP.
fn not_ring(fd: i32) -> i32 {
    // SAFETY: F_GETFD only reads the descriptor's flags.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        -libc::EBADF
    } else {
        -libc::EOPNOTSUPP
    }
}

// Rings made by trapped setups, so that one whose fd the program closed
// unseen (a number outside the trapped range, dup2 onto it, close_range)
// is torn down: each setup first sweeps the list. An epoll set holds each
// ring's (file, fd) pair; EPOLL_CTL_MOD on the number fails once it no
// longer names that file.
const SLOTS: usize = 1024;
#[allow(clippy::declare_interior_mutable_const)]
const NO_FD: AtomicI32 = AtomicI32::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const NO_KEY: AtomicUsize = AtomicUsize::new(0);
/// fd + 1, or 0.
static FDS: [AtomicI32; SLOTS] = [NO_FD; SLOTS];
static KEYS: [AtomicUsize; SLOTS] = [NO_KEY; SLOTS];
/// The epoll set, + 1 (0: not made yet).
static EPFD: AtomicI32 = AtomicI32::new(0);

fn epfd() -> i32 {
    let v = EPFD.load(Ordering::Acquire);
    if v != 0 {
        return v - 1;
    }
    // SAFETY: no memory involved.
    let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if fd < 0 {
        return -1;
    }
    match EPFD.compare_exchange(0, fd + 1, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => fd,
        Err(v) => {
            // SAFETY: our own fd, never published.
            unsafe { libc::close(fd) };
            v - 1
        }
    }
}

fn ctl(op: c_int, fd: i32) -> i32 {
    let mut ev = libc::epoll_event { events: 0, u64: fd as u64 };
    // SAFETY: `ev` is a live epoll_event.
    unsafe { libc::epoll_ctl(epfd(), op, fd, &mut ev) }
}

fn remember(fd: i32) {
    let Some(key) = engine::ring_key(fd) else { return };
    if ctl(libc::EPOLL_CTL_ADD, fd) != 0 && errno() != -libc::EEXIST {
        return;
    }
    for (f, k) in FDS.iter().zip(KEYS.iter()) {
        if f.compare_exchange(0, fd + 1, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            k.store(key, Ordering::Release);
            return;
        }
    }
}

/// Whether `fd` still names the file it named when remembered (true for
/// numbers never remembered).
fn alive(fd: i32) -> bool {
    ctl(libc::EPOLL_CTL_MOD, fd) == 0 || !FDS.iter().any(|f| f.load(Ordering::Acquire) == fd + 1)
}

fn sweep() {
    for (f, k) in FDS.iter().zip(KEYS.iter()) {
        let v = f.load(Ordering::Acquire);
        let key = k.load(Ordering::Acquire);
        if v == 0 || key == 0 || ctl(libc::EPOLL_CTL_MOD, v - 1) == 0 {
            continue;
        }
        if engine::forget_closed(v - 1, key) && f.compare_exchange(v, 0, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            k.store(0, Ordering::Release);
        }
    }
}

fn forget(fd: i32, key: usize) {
    for (f, k) in FDS.iter().zip(KEYS.iter()) {
        if f.load(Ordering::Acquire) == fd + 1
            && k.load(Ordering::Acquire) == key
            && engine::forget_closed(fd, key)
            && f.compare_exchange(fd + 1, 0, Ordering::AcqRel, Ordering::Relaxed).is_ok()
        {
            k.store(0, Ordering::Release);
        }
    }
}
