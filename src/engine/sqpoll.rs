//! IORING_SETUP_SQPOLL (the kernel's sqpoll.c): an engine thread consumes
//! the SQ of its rings without any call from the program. While work keeps
//! coming it polls the SQ tails; once none came for `sq_thread_idle` ms it
//! sets IORING_SQ_NEED_WAKEUP on its rings and sleeps on a futex until an
//! io_uring_enter with IORING_ENTER_SQ_WAKEUP, a ring joining or leaving,
//! or an enable wakes it. Rings set up with IORING_SETUP_ATTACH_WQ naming
//! an SQPOLL engine ring share that ring's thread. The futex words that
//! wake the thread and SQ_WAIT callers live in a page of their own shared
//! across fork(), so a forked child's submissions reach the parent's
//! thread, which runs them (as the kernel's SQ thread runs a child's SQEs
//! with its creator's files).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::sync::atomic::{fence, AtomicU32, AtomicUsize, Ordering};

use super::ctx::{off, Ctx};
use super::lock::{futex_wait_shared, futex_wake_shared, Mutex};
use super::table::{self, RingRef};
use super::{fork, os};
use crate::sys::{
    io_uring_params, IORING_SETUP_ATTACH_WQ, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF, IORING_SQ_NEED_WAKEUP,
};

/// With several rings, each gets at most this many SQEs per pass, so one
/// busy ring cannot starve the others (the kernel's cap, too).
const CAP_ENTRIES: u32 = 8;
/// `sq_thread_idle` of 0 means one second, as in the kernel (HZ jiffies).
const DEFAULT_IDLE_MS: u32 = 1000;
/// Polls of an idle SQ with a pause instruction before yielding the CPU.
const SPINS: u32 = 64;

struct State {
    /// Rings served, each with its idle time in ns (the thread uses the
    /// longest).
    rings: Vec<(RingRef, u64)>,
    /// Rings set up on this thread and not yet torn down (including one
    /// still being created).
    users: u32,
    /// The last user left: the thread exits and nobody may attach.
    stop: bool,
}

/// One SQPOLL thread and what it serves (the kernel's io_sq_data).
pub(crate) struct Sqd {
    state: Mutex<State>,
    /// Futex words in a MAP_SHARED page (see `Words`).
    words: *const Words,
    /// The `table::FORK_GEN` of the process that runs the thread.
    gen: u32,
    /// The thread (a pthread_t), joined by whoever stops it.
    thread: AtomicUsize,
    /// CPU to pin the thread to (IORING_SETUP_SQ_AFF), or -1.
    cpu: i32,
}

/// The thread's futex words.
struct Words {
    /// Bumped by every wake-up; the sleeping thread waits on it.
    wake: AtomicU32,
    /// Bumped when SQ space was freed while someone waits for it.
    space: AtomicU32,
    space_waiters: AtomicU32,
}

// SAFETY: `words` is a mapping owned by the Sqd, only reached atomically.
unsafe impl Send for Sqd {}
// SAFETY: as above.
unsafe impl Sync for Sqd {}

impl Drop for Sqd {
    fn drop(&mut self) {
        // SAFETY: the page was mapped in `prepare` and nothing uses it now.
        unsafe { crate::sys::munmap(self.words as *mut c_void, crate::sys::mem::page_size()) };
    }
}

impl Sqd {
    fn w(&self) -> &Words {
        // SAFETY: mapped for the Sqd's whole life; all-zero is a valid Words.
        unsafe { &*self.words }
    }

    fn kick(&self) {
        self.w().wake.fetch_add(1, Ordering::SeqCst);
        futex_wake_shared(&self.w().wake, 1);
    }

    /// Whether this process runs the thread (not the parent of a fork).
    fn local(&self) -> bool {
        self.gen == table::FORK_GEN.load(Ordering::Relaxed)
    }

    /// Wakes IORING_ENTER_SQ_WAIT callers after the SQ head moved (the
    /// head store comes before the fence).
    fn space_freed(&self) {
        fence(Ordering::SeqCst);
        if self.w().space_waiters.load(Ordering::Relaxed) != 0 {
            self.w().space.fetch_add(1, Ordering::SeqCst);
            futex_wake_shared(&self.w().space, i32::MAX);
        }
    }

    /// One round over the rings: submits what each has queued. Returns
    /// whether anything was submitted, the idle time, and whether to stop.
    fn pass(&self) -> (bool, u64, bool) {
        let s = self.state.lock();
        let cap = if s.rings.len() > 1 { CAP_ENTRIES } else { u32::MAX };
        let mut busy = false;
        let mut idle = 0;
        for (r, i) in s.rings.iter() {
            idle = idle.max(*i);
            let ctx = r.ctx();
            if queued(ctx) != 0 && super::submit::submit(ctx, cap) > 0 {
                busy = true;
            }
        }
        let stop = s.stop;
        drop(s);
        if busy {
            self.space_freed();
        }
        (busy, idle, stop)
    }

    /// Goes to sleep with IORING_SQ_NEED_WAKEUP set, unless an SQE came in
    /// meanwhile. The program stores its tail, then (full barrier) reads
    /// the flag; here the flag is set, then (full barrier) the tails are
    /// read: one side always sees the other, so no SQE is left behind.
    fn sleep(&self) {
        let seq = self.w().wake.load(Ordering::SeqCst);
        let s = self.state.lock();
        for (r, _) in s.rings.iter() {
            r.ctx().set_sq_flag(IORING_SQ_NEED_WAKEUP, true);
        }
        fence(Ordering::SeqCst);
        let work = s.stop || s.rings.iter().any(|(r, _)| queued(r.ctx()) != 0);
        drop(s);
        if !work {
            // Never sleep holding the lock: rings joining or leaving take
            // it, then bump `wake`.
            futex_wait_shared(&self.w().wake, seq, None);
        }
        for (r, _) in self.state.lock().rings.iter() {
            r.ctx().set_sq_flag(IORING_SQ_NEED_WAKEUP, false);
        }
    }
}

/// SQEs the program queued on `ctx` that the thread may take now.
fn queued(ctx: &Ctx) -> u32 {
    if ctx.disabled.load(Ordering::Acquire) || ctx.dying.load(Ordering::Acquire) {
        return 0;
    }
    // Only this thread moves the head of an SQPOLL ring.
    let head = ctx.word(off::SQ_HEAD).load(Ordering::Relaxed);
    ctx.word(off::SQ_TAIL).load(Ordering::Acquire).wrapping_sub(head)
}

extern "C" fn thread_main(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `prepare` leaked one reference for this thread.
    let sqd = unsafe { Arc::from_raw(arg as *const Sqd) };
    os::name_thread("iou-sqp-", true);
    if sqd.cpu >= 0 {
        pin(sqd.cpu as usize);
    }
    let mut last_work = os::now_ns();
    let mut spins = 0;
    loop {
        let (busy, idle, stop) = sqd.pass();
        if stop {
            break;
        }
        let now = os::now_ns();
        if busy {
            last_work = now;
            spins = 0;
        } else if now.saturating_sub(last_work) < idle {
            if spins < SPINS {
                spins += 1;
                core::hint::spin_loop();
            } else {
                // SAFETY: sched_yield has no preconditions.
                unsafe { libc::sched_yield() };
            }
        } else {
            sqd.sleep();
            last_work = os::now_ns();
            spins = 0;
        }
    }
    core::ptr::null_mut()
}

fn pin(cpu: usize) {
    // SAFETY: an all-zero cpu_set_t is empty; CPU_SET stays inside it
    // (cpu < CPU_SETSIZE, checked at setup); the calls read live sets.
    unsafe {
        let mut set: libc::cpu_set_t = core::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::pthread_setaffinity_np(libc::pthread_self(), core::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Whether the calling thread may run on `cpu` (the kernel refuses an SQ
/// thread CPU that is offline or outside the caller's allowed set).
fn cpu_allowed(cpu: u32) -> bool {
    if cpu as usize >= 8 * core::mem::size_of::<libc::cpu_set_t>() {
        return false;
    }
    // SAFETY: an all-zero cpu_set_t is empty; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = core::mem::zeroed();
        libc::sched_getaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0
            && libc::CPU_ISSET(cpu as usize, &set)
    }
}

/// Setup, before the ring exists: the SQPOLL thread the new ring will use
/// (a new one, or the one of the ring named by `wq_fd` with ATTACH_WQ),
/// counted as a user. None for rings without SQPOLL. Errors as the
/// kernel's: -ENXIO for a `wq_fd` that is no open fd (or names a ring
/// whose thread is stopping), -EINVAL for one that is no SQPOLL engine
/// ring or for a bad `sq_thread_cpu`.
pub(crate) fn prepare(p: &io_uring_params) -> Result<Option<Arc<Sqd>>, i32> {
    let attach = p.flags & IORING_SETUP_ATTACH_WQ != 0;
    if p.flags & IORING_SETUP_SQPOLL == 0 {
        if p.flags & IORING_SETUP_SQ_AFF != 0 {
            return Err(-libc::EINVAL);
        }
        if attach {
            // Only checked: engine work queues are shared by the process.
            wq_ring(p.wq_fd as i32)?;
        }
        return Ok(None);
    }
    if attach {
        let r = wq_ring(p.wq_fd as i32)?.ok_or(-libc::EINVAL)?;
        // A ring inherited through fork() is served by the parent's thread:
        // like the kernel across processes, the new ring gets its own.
        let sqd = r.ctx().sqd.clone().ok_or(-libc::EINVAL)?;
        if fork::ours(r.ctx()) && sqd.local() {
            let mut s = sqd.state.lock();
            if s.stop {
                return Err(-libc::ENXIO);
            }
            s.users += 1;
            drop(s);
            return Ok(Some(sqd));
        }
    }
    let cpu = if p.flags & IORING_SETUP_SQ_AFF != 0 {
        if !cpu_allowed(p.sq_thread_cpu) {
            return Err(-libc::EINVAL);
        }
        p.sq_thread_cpu as i32
    } else {
        -1
    };
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: a fresh anonymous mapping, zero-filled.
    let words = unsafe {
        crate::sys::mmap(
            core::ptr::null_mut(),
            crate::sys::mem::page_size(),
            rw,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    }?;
    let sqd = Arc::new(Sqd {
        state: Mutex::new(State { rings: Vec::new(), users: 1, stop: false }),
        words: words as *const Words,
        gen: table::FORK_GEN.load(Ordering::Relaxed),
        thread: AtomicUsize::new(0),
        cpu,
    });
    let arg = Arc::into_raw(sqd.clone()) as *mut c_void;
    match os::spawn_joinable(thread_main, arg) {
        Ok(tid) => sqd.thread.store(tid as usize, Ordering::Release),
        Err(e) => {
            // SAFETY: the thread never started; take back its reference.
            drop(unsafe { Arc::from_raw(arg as *const Sqd) });
            return Err(e);
        }
    }
    Ok(Some(sqd))
}

/// The engine ring behind `wq_fd`: Ok(None) for a kernel ring, -ENXIO for
/// no open fd, -EINVAL for an fd that is no ring.
fn wq_ring(fd: i32) -> Result<Option<RingRef>, i32> {
    if let Some(r) = table::lookup(fd) {
        return Ok(Some(r));
    }
    // SAFETY: F_GETFD reads no memory.
    if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(-libc::ENXIO);
    }
    if is_kernel_ring(fd) {
        Ok(None)
    } else {
        Err(-libc::EINVAL)
    }
}

/// Whether `fd` is an io_uring instance of the kernel, by the name of its
/// file (io_uring_enter cannot tell where seccomp blocks it).
fn is_kernel_ring(fd: i32) -> bool {
    os::fd_link(fd, &mut [0u8; 32]) == Some(b"anon_inode:[io_uring]")
}

/// Setup, once the ring is registered: the thread starts serving it.
pub(crate) fn attach(r: RingRef, idle_ms: u32) {
    let Some(sqd) = r.ctx().sqd.clone() else { return };
    let idle_ns = if idle_ms == 0 { DEFAULT_IDLE_MS } else { idle_ms } as u64 * 1_000_000;
    sqd.state.lock().rings.push((r, idle_ns));
    sqd.kick();
}

/// Teardown: the ring leaves its thread, which exits and is joined when
/// it was the last. After this the thread no longer touches the ring.
pub(crate) fn detach(ctx: &Ctx) {
    // In a forked child the thread and its state stay the parent's.
    if let Some(sqd) = ctx.sqd.clone().filter(|s| s.local()) {
        leave(&sqd, Some(ctx));
    }
}

/// Failed setup after `prepare`: gives the user count back.
pub(crate) fn abandon(sqd: &Arc<Sqd>) {
    leave(sqd, None);
}

fn leave(sqd: &Sqd, ctx: Option<&Ctx>) {
    let (gone, stop) = {
        let mut s = sqd.state.lock();
        let at = ctx.and_then(|c| s.rings.iter().position(|(r, _)| core::ptr::eq(r.ctx(), c)));
        let gone = at.map(|i| s.rings.swap_remove(i));
        s.users -= 1;
        s.stop = s.users == 0;
        (gone, s.stop)
    };
    // Dropped outside the lock, as any ring reference may be the last.
    drop(gone);
    // SQ_WAIT callers of a ring going away stop waiting.
    sqd.w().space.fetch_add(1, Ordering::SeqCst);
    futex_wake_shared(&sqd.w().space, i32::MAX);
    if stop {
        sqd.kick();
        // Joined once: only the caller that saw the last user leave gets here.
        os::join(sqd.thread.load(Ordering::Acquire) as libc::pthread_t);
    }
}

/// IORING_ENTER_SQ_WAKEUP, and a disabled ring being enabled.
pub(crate) fn wake(ctx: &Ctx) {
    if let Some(sqd) = ctx.sqd.as_ref() {
        sqd.kick();
    }
}

/// IORING_ENTER_SQ_WAIT: returns once the SQ is not full (or on a signal,
/// or when the ring is torn down).
pub(crate) fn wait_sq(ctx: &Ctx) {
    let Some(sqd) = ctx.sqd.as_ref() else { return };
    let full = || {
        let head = ctx.word(off::SQ_HEAD).load(Ordering::Acquire);
        ctx.word(off::SQ_TAIL).load(Ordering::Acquire).wrapping_sub(head) == ctx.sq_entries()
    };
    if !full() {
        return;
    }
    sqd.w().space_waiters.fetch_add(1, Ordering::SeqCst);
    loop {
        let seq = sqd.w().space.load(Ordering::SeqCst);
        if !full() || ctx.dying.load(Ordering::Acquire) {
            break;
        }
        if futex_wait_shared(&sqd.w().space, seq, None) == -libc::EINTR {
            break;
        }
    }
    sqd.w().space_waiters.fetch_sub(1, Ordering::SeqCst);
}
