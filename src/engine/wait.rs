//! `io_uring_enter` on an engine ring: submission, then waiting for
//! completions with the kernel's rules (minimum count, timeout, minimum
//! wait, signal mask, registered wait arguments).

use core::ffi::c_void;
use core::sync::atomic::Ordering;

use super::ctx::{off, Ctx};
use super::os;
use crate::sys::{
    io_uring_getevents_arg, io_uring_reg_wait, IORING_ENTER_ABS_TIMER, IORING_ENTER_EXT_ARG, IORING_ENTER_EXT_ARG_REG,
    IORING_ENTER_GETEVENTS, IORING_ENTER_NO_IOWAIT, IORING_ENTER_REGISTERED_RING, IORING_ENTER_SQ_WAIT,
    IORING_ENTER_SQ_WAKEUP, IORING_REG_WAIT_TS, IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_SINGLE_ISSUER,
    IORING_SETUP_SQPOLL,
};

pub(crate) const ENTER_FLAGS: u32 = IORING_ENTER_GETEVENTS
    | IORING_ENTER_SQ_WAKEUP
    | IORING_ENTER_SQ_WAIT
    | IORING_ENTER_EXT_ARG
    | IORING_ENTER_REGISTERED_RING
    | IORING_ENTER_ABS_TIMER
    | IORING_ENTER_EXT_ARG_REG
    | IORING_ENTER_NO_IOWAIT;

/// The size of the kernel's sigset_t.
const SIGSET_BYTES: usize = 8;

/// What a wait was asked for.
#[derive(Default)]
struct WaitArgs {
    sigmask: u64,
    sigmask_sz: usize,
    ts_ns: Option<u64>,
    min_wait_ns: u64,
}

fn this_thread() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

/// Whether the calling thread may submit to (or run completions of) a
/// SINGLE_ISSUER ring.
pub(crate) fn issuer_ok(ctx: &Ctx) -> bool {
    if ctx.flags & IORING_SETUP_SINGLE_ISSUER == 0 {
        return true;
    }
    let s = ctx.submitter.load(Ordering::Relaxed);
    s == 0 || s == this_thread()
}

/// Records the submitter of a SINGLE_ISSUER ring (at setup or enable).
pub(crate) fn claim_issuer(ctx: &Ctx) {
    if ctx.flags & IORING_SETUP_SINGLE_ISSUER != 0 {
        ctx.submitter.store(this_thread(), Ordering::Relaxed);
    }
}

/// `io_uring_enter(2)` on an engine ring.
///
/// # Safety
/// `arg`/`argsz` are what the caller passed to io_uring_enter: they are
/// only read through checked copies.
pub(crate) unsafe fn enter(
    ctx: &Ctx,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: *const c_void,
    argsz: usize,
) -> i32 {
    if flags & !ENTER_FLAGS != 0 {
        return -libc::EINVAL;
    }
    if ctx.disabled.load(Ordering::Acquire) {
        return -libc::EBADFD;
    }
    // The ring fd stays readable until the reactor's next tick sees the CQ
    // drained. An enter that finds it drained while requests run on
    // workers clears it now, so an event loop that polls the ring fd for
    // their completions (QEMU's) does not spin on it meanwhile. Not with
    // nothing in flight: a ring that completes everything inline (NOPs,
    // cached reads) would pay a signal and a reset per enter (NOPs at
    // depth 1 ran at a tenth of their rate). Nor with a poll armed: it may
    // watch the ring fd through another file (an epoll set holding it),
    // and the kernel's fires when the CQE that made the fd readable is
    // posted; here it fires once its set is served, which a reset first
    // would prevent. Nor when the caller is about to wait in this call: it
    // waits for CQEs here, not on the ring fd, and a reset each time costs
    // a drain and the next CQE a signal (four system calls a round).
    let waits_here = flags & IORING_ENTER_GETEVENTS != 0 && min_complete != 0;
    if ctx.fd_signalled.load(Ordering::Relaxed)
        && !waits_here
        && ctx.cq_ready() == 0
        && !ctx.inner.lock().armed.is_empty()
        && ctx.ready.is_idle()
    {
        ctx.reset_fd();
    }
    let mut ret = 0;
    // A thread about to wait serves the ring's readiness set from before
    // it submits, so what it arms is its own to run.
    let mut serving =
        (flags & IORING_ENTER_GETEVENTS != 0 && min_complete != 0 && ctx.ready.claim()).then(|| Serving(ctx));
    if ctx.flags & IORING_SETUP_SQPOLL != 0 {
        // The SQ thread submits; the caller only wakes it or waits for SQ
        // room, and is told `to_submit` as the kernel does.
        if flags & IORING_ENTER_SQ_WAKEUP != 0 {
            super::sqpoll::wake(ctx);
        }
        if flags & IORING_ENTER_SQ_WAIT != 0 {
            super::sqpoll::wait_sq(ctx);
        }
        ret = to_submit as i32;
    } else if to_submit != 0 {
        if !issuer_ok(ctx) {
            return -libc::EEXIST;
        }
        ret = super::submit::submit(ctx, to_submit);
        if ret != to_submit as i32 {
            return ret;
        }
    }
    // O_DIRECT I/O that finished meanwhile is posted now, as the kernel's
    // would be: a program that looks at its CQ after submitting (QEMU
    // does) finds it there without waiting for the reactor.
    super::aio::reap_here();
    if flags & IORING_ENTER_GETEVENTS != 0 {
        let ret2 = match wait_args(ctx, flags, arg, argsz) {
            Ok(w) => wait(ctx, min_complete, flags, &w, &mut serving),
            Err(e) => e,
        };
        if ret == 0 {
            ret = ret2;
        }
    }
    ret
}

/// A claim on the ring's readiness set, given back when dropped.
struct Serving<'a>(&'a Ctx);

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        self.0.ready.release(self.0);
    }
}

/// Decodes the wait argument: a sigset, an io_uring_getevents_arg, or an
/// offset into the registered wait region.
fn wait_args(ctx: &Ctx, flags: u32, arg: *const c_void, argsz: usize) -> Result<WaitArgs, i32> {
    if flags & IORING_ENTER_EXT_ARG == 0 {
        return Ok(WaitArgs { sigmask: arg as u64, sigmask_sz: argsz, ..Default::default() });
    }
    if flags & IORING_ENTER_EXT_ARG_REG != 0 {
        if argsz != core::mem::size_of::<io_uring_reg_wait>() {
            return Err(-libc::EINVAL);
        }
        let offset = arg as usize;
        let (base, size) = *ctx.wait_region.lock();
        let end = offset.checked_add(argsz).ok_or(-libc::EFAULT)?;
        if offset % 8 != 0 || end > size {
            return Err(-libc::EFAULT);
        }
        let mut w = core::mem::MaybeUninit::<io_uring_reg_wait>::uninit();
        os::copy_from_user(w.as_mut_ptr() as *mut u8, base + offset as u64, argsz)?;
        // SAFETY: fully written by the copy.
        let w = unsafe { w.assume_init() };
        if w.flags & !IORING_REG_WAIT_TS != 0 {
            return Err(-libc::EINVAL);
        }
        let ts_ns = if w.flags & IORING_REG_WAIT_TS != 0 { os::ktime_ns(w.ts.tv_sec, w.ts.tv_nsec) } else { None };
        return Ok(WaitArgs {
            sigmask: w.sigmask,
            sigmask_sz: w.sigmask_sz as usize,
            ts_ns,
            min_wait_ns: w.min_wait_usec as u64 * 1000,
        });
    }
    if argsz != core::mem::size_of::<io_uring_getevents_arg>() {
        return Err(-libc::EINVAL);
    }
    let mut a = core::mem::MaybeUninit::<io_uring_getevents_arg>::uninit();
    os::copy_from_user(a.as_mut_ptr() as *mut u8, arg as u64, argsz)?;
    // SAFETY: fully written by the copy.
    let a = unsafe { a.assume_init() };
    let ts_ns = if a.ts != 0 {
        let mut ts = [0i64; 2];
        os::copy_from_user(ts.as_mut_ptr() as *mut u8, a.ts, 16)?;
        os::ktime_ns(ts[0], ts[1])
    } else {
        None
    };
    Ok(WaitArgs {
        sigmask: a.sigmask,
        sigmask_sz: a.sigmask_sz as usize,
        ts_ns,
        min_wait_ns: a.min_wait_usec as u64 * 1000,
    })
}

/// Waits until `min` CQEs are ready (the kernel's io_cqring_wait).
fn wait<'a>(ctx: &'a Ctx, min: u32, flags: u32, w: &WaitArgs, serving: &mut Option<Serving<'a>>) -> i32 {
    let min = min.min(ctx.cq_entries());
    if ctx.flags & IORING_SETUP_DEFER_TASKRUN != 0 && !issuer_ok(ctx) {
        return -libc::EEXIST;
    }
    // The kernel queues task work inside the wake-up and runs it by the
    // time an enter for no CQE (io_uring_get_events) returns, so such an
    // enter sees every wake-up before it. Here the ones the reactor has
    // not looked at yet are still in the readiness set: one look at it
    // turns them into completions (or task work) first.
    if min == 0 && serving.is_none() {
        ctx.ready.look(ctx);
    }
    ctx.run_task_work();
    ctx.flush_overflow();
    if ctx.cq_ready() >= min {
        return 0;
    }
    let mut sig = None;
    if w.sigmask != 0 {
        if w.sigmask_sz != SIGSET_BYTES {
            return -libc::EINVAL;
        }
        let mut set: libc::sigset_t = unsafe_zeroed_sigset();
        if let Err(e) = os::copy_from_user(&mut set as *mut libc::sigset_t as *mut u8, w.sigmask, SIGSET_BYTES) {
            return e;
        }
        sig = Some(set);
    }
    let start = os::now_ns();
    // Reached through the application's number (`Ctx::fd`): it is checked
    // where a wait may sleep, which costs system calls anyway.
    if flags & IORING_ENTER_REGISTERED_RING == 0 {
        if let Err(e) = ctx.check_app_fd_due(ctx.fd(), start) {
            return e;
        }
    }
    let min_deadline = if w.min_wait_ns != 0 { Some(start + w.min_wait_ns) } else { None };
    // The timeout only counts once the minimum wait is over: a shorter
    // one ends the wait at the minimum, with -ETIME, as in the kernel.
    let deadline = w
        .ts_ns
        .map(|t| if flags & IORING_ENTER_ABS_TIMER != 0 { abs_deadline(ctx, t) } else { start.saturating_add(t) })
        .map(|d| min_deadline.map_or(d, |m| d.max(m)));
    let target = ctx.word(off::CQ_HEAD).load(Ordering::Acquire).wrapping_add(min);
    let reached = || (ctx.word(off::CQ_TAIL).load(Ordering::Acquire).wrapping_sub(target) as i32) >= 0;
    if sig.is_none()
        && serving.is_none()
        && ctx.flags & IORING_SETUP_DEFER_TASKRUN == 0
        && spin(ctx, &reached, deadline)
    {
        return 0;
    }
    let start_tail = ctx.word(off::CQ_TAIL).load(Ordering::Acquire);
    let timeouts = ctx.timeouts_fired.load(Ordering::Acquire);
    let mut waiter = super::waiter::Waiter::new(ctx, sig.as_ref(), serving.is_some());
    let mut looked = false;
    let ret = loop {
        if serving.is_none() && waiter.try_serve() {
            *serving = Some(Serving(ctx));
        }
        super::aio::reap_here();
        let seq = waiter.prepare();
        if ctx.is_lost() {
            break -libc::EBADF;
        }
        ctx.run_task_work();
        ctx.flush_overflow();
        let tail = ctx.word(off::CQ_TAIL).load(Ordering::Acquire);
        if (tail.wrapping_sub(target) as i32) >= 0 || ctx.timeouts_fired.load(Ordering::Acquire) != timeouts {
            break 0;
        }
        let now = os::now_ns();
        if let Some(m) = min_deadline {
            if now >= m && (tail != start_tail || ctx.cq_ready() != 0) {
                break 0;
            }
        }
        if deadline.is_some_and(|d| now >= d) {
            // A wait that may not sleep still runs what is ready, as the
            // kernel's runs task work first: one look at the set.
            if !looked && serving.is_some() {
                looked = true;
                ctx.ready.serve(ctx, Some(0), None);
                continue;
            }
            break -libc::ETIME;
        }
        let until = match (deadline, min_deadline.filter(|&m| m > now)) {
            (Some(d), Some(m)) => Some(d.min(m)),
            (d, m) => d.or(m),
        };
        // Past the minimum wait any CQE ends it; before, `min` of them.
        let want = if min_deadline.is_some_and(|m| now >= m) { None } else { Some(target) };
        let slept = os::now_ns();
        let r = waiter.sleep(seq, until, want);
        if r == -libc::EINTR {
            break -libc::EINTR;
        }
        if reached() {
            // Sleeps this short, in a row, make the next wait spin first.
            let c = ctx.wait_spin.load(Ordering::Relaxed);
            let short = os::now_ns() - slept < SPIN_NS;
            ctx.wait_spin.store(if short { (c + 1).min(SPIN_MAX) } else { 0 }, Ordering::Relaxed);
        }
    };
    drop(waiter);
    if ctx.cq_ready() != 0 {
        0
    } else {
        ret
    }
}

/// How long a waiter looks at the CQ before it sleeps, while workers run
/// requests that have been completing that fast: about what a futex sleep
/// and wake-up cost the two threads on this machine.
const SPIN_NS: u64 = 10_000;
/// The spin score (`Ctx::wait_spin`): a short sleep or a spin that found
/// its CQE adds one (up to `SPIN_MAX`), a spin that found none takes
/// `SPIN_MISS`, a longer sleep clears it; waits spin from `SPIN_AFTER`.
const SPIN_AFTER: u32 = 4;
const SPIN_MAX: u32 = 8;
const SPIN_MISS: u32 = 3;

/// Looks at the CQ for up to `SPIN_NS` (not past `deadline`) before the
/// caller sleeps, when workers are at work (none being woken, which the
/// spin could keep off this CPU) and this ring's waits have mostly been
/// shorter than that: a worker then posts without a futex wake, and
/// neither thread pays a context switch (a buffered write's worth of
/// time). True if `reached` came true meanwhile.
fn spin(ctx: &Ctx, reached: &dyn Fn() -> bool, deadline: Option<u64>) -> bool {
    if ctx.wait_spin.load(Ordering::Relaxed) < SPIN_AFTER || !super::io_wq::working() || os::cpus() < 2 {
        return false;
    }
    let end = os::now_ns() + SPIN_NS;
    let end = deadline.map_or(end, |d| d.min(end));
    loop {
        for _ in 0..64 {
            core::hint::spin_loop();
        }
        if reached() {
            let c = ctx.wait_spin.load(Ordering::Relaxed);
            ctx.wait_spin.store((c + 1).min(SPIN_MAX), Ordering::Relaxed);
            return true;
        }
        if os::now_ns() >= end {
            let c = ctx.wait_spin.load(Ordering::Relaxed);
            ctx.wait_spin.store(c.saturating_sub(SPIN_MISS), Ordering::Relaxed);
            return false;
        }
    }
}

/// An absolute timeout in the ring's clock, as CLOCK_MONOTONIC.
fn abs_deadline(ctx: &Ctx, t: u64) -> u64 {
    if !ctx.clock_boottime.load(Ordering::Relaxed) {
        return t;
    }
    // The clocks differ by the time spent suspended, which only grows.
    let mono = os::now_ns();
    t.saturating_sub(os::clock_ns(libc::CLOCK_BOOTTIME).saturating_sub(mono))
}

fn unsafe_zeroed_sigset() -> libc::sigset_t {
    // SAFETY: an all-zero sigset_t is the empty set.
    unsafe { core::mem::zeroed() }
}
