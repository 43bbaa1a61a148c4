//! The worker pool (the kernel's io-wq): threads of this process that run
//! work which would block. Created on demand up to a cap (twice the CPUs
//! by default, IORING_REGISTER_IOWQ_MAX_WORKERS changes it), and an idle
//! worker exits after a few seconds, or at once when no engine ring is
//! left.

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::ctx::Ctx;
use super::req::{self, st, Fifo, Mode, ReqPtr};
use super::lock::{futex_wait, futex_wake, Mutex};
use super::{os, table};

const IDLE_NS: u64 = 3_000_000_000;

struct Pool {
    queue: Fifo,
    workers: u32,
    idle: u32,
    /// Caps for bounded (file) and unbounded work; 0 = default.
    max: [u32; 2],
}

static POOL: Mutex<Pool> = Mutex::new(Pool { queue: Fifo::new(), workers: 0, idle: 0, max: [0, 0] });
/// Worker CPU affinity (IORING_REGISTER_IOWQ_AFF): a generation and the
/// mask; None restores the process's own.
static AFFINITY: Mutex<(u32, Option<libc::cpu_set_t>)> = Mutex::new((0, None));
static AFFINITY_USED: AtomicBool = AtomicBool::new(false);
/// Bumped to wake idle workers.
static WAKE: AtomicU32 = AtomicU32::new(0);
/// Set when idle workers should leave now.
static LEAVE: AtomicBool = AtomicBool::new(false);

/// Default caps: bounded (file) work twice the CPUs; work that may block
/// for good (pipes) gets more room on top.
fn defaults() -> [u32; 2] {
    let n = 2 * os::cpus();
    [n, n.max(64)]
}

/// How many workers may exist to serve a request of this kind.
fn cap(p: &Pool, unbounded: bool) -> u32 {
    let d = defaults();
    let b = if p.max[0] != 0 { p.max[0] } else { d[0] };
    let u = if p.max[1] != 0 { p.max[1] } else { d[1] };
    if unbounded {
        b + u
    } else {
        b
    }
}

/// Queues `req` for a worker. The request becomes findable (state QUEUED)
/// before any worker can see it.
pub(crate) fn enqueue(ctx: &Ctx, req: ReqPtr) {
    // SAFETY: still ours until it is queued.
    let unbounded = super::opdef::get(unsafe { req.get() }.sqe.opcode).unbounded;
    ctx.list(req, st::QUEUED);
    let (wake, spawn) = {
        let mut p = POOL.lock();
        p.queue.push(req);
        if p.idle > 0 {
            (true, false)
        } else if p.workers < cap(&p, unbounded) {
            p.workers += 1;
            (false, true)
        } else {
            (false, false)
        }
    };
    if wake {
        WAKE.fetch_add(1, Ordering::SeqCst);
        futex_wake(&WAKE, 1);
    }
    if spawn && super::creds::spawn(worker_main, core::ptr::null_mut()).is_err() {
        let mut p = POOL.lock();
        p.workers -= 1;
        if p.workers == 0 {
            // No thread at all can be had: run the queue right here rather
            // than lose the work.
            drop(p);
            run_here();
        }
    }
}

/// Takes a queued request out of the queue (cancellation); false if a
/// worker already took it.
pub(crate) fn dequeue(req: ReqPtr) -> bool {
    POOL.lock().queue.remove(req)
}

fn next_work(p: &mut Pool) -> Option<ReqPtr> {
    while let Some(r) = p.queue.pop() {
        // A canceller that moved it to CANCELED owns it now.
        if r.state().compare_exchange(st::QUEUED, st::RUNNING, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            return Some(r);
        }
    }
    None
}

fn run(r: ReqPtr) {
    // SAFETY: the worker owns the request (state RUNNING).
    let ctx = unsafe { r.get() }.ctx();
    let _ring = table::hold(ctx);
    req::issue(ctx, r, Mode::Worker);
}

fn run_here() {
    loop {
        let r = next_work(&mut POOL.lock());
        match r {
            Some(r) => run(r),
            None => return,
        }
    }
}

/// Applies the registered affinity to the calling worker if it changed.
fn apply_affinity(seen: &mut u32) {
    let (gen, mask) = *AFFINITY.lock();
    if gen == *seen {
        return;
    }
    *seen = gen;
    let set = match mask {
        Some(m) => m,
        None => {
            // SAFETY: an all-zero cpu_set_t is empty; sched_getaffinity
            // fills it for the whole process's allowed CPUs.
            let mut m: libc::cpu_set_t = unsafe { core::mem::zeroed() };
            // SAFETY: live cpu_set_t of the size given.
            unsafe { libc::sched_getaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &mut m) };
            m
        }
    };
    // SAFETY: live cpu_set_t for the calling thread.
    unsafe { libc::pthread_setaffinity_np(libc::pthread_self(), core::mem::size_of::<libc::cpu_set_t>(), &set) };
}

/// IORING_REGISTER_IOWQ_AFF: `len` bytes of CPU mask at `arg`.
pub(crate) fn set_affinity(arg: u64, len: u32) -> i32 {
    if arg == 0 || len == 0 {
        return -libc::EINVAL;
    }
    // SAFETY: all-zero is the empty set.
    let mut m: libc::cpu_set_t = unsafe { core::mem::zeroed() };
    let n = (len as usize).min(core::mem::size_of::<libc::cpu_set_t>());
    if let Err(e) = os::copy_from_user(&mut m as *mut libc::cpu_set_t as *mut u8, arg, n) {
        return e;
    }
    // SAFETY: zeroed, then filled by the kernel for this process.
    let mut allowed: libc::cpu_set_t = unsafe { core::mem::zeroed() };
    // SAFETY: live cpu_set_t.
    unsafe { libc::sched_getaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &mut allowed) };
    let mut any = false;
    for cpu in 0..libc::CPU_SETSIZE as usize {
        // SAFETY: cpu < CPU_SETSIZE indexes inside the sets.
        if unsafe { libc::CPU_ISSET(cpu, &m) } {
            // SAFETY: as above.
            if !unsafe { libc::CPU_ISSET(cpu, &allowed) } {
                return -libc::EINVAL;
            }
            any = true;
        }
    }
    if !any {
        return -libc::EINVAL;
    }
    let mut a = AFFINITY.lock();
    *a = (a.0 + 1, Some(m));
    AFFINITY_USED.store(true, Ordering::Relaxed);
    0
}

/// IORING_UNREGISTER_IOWQ_AFF.
pub(crate) fn clear_affinity() -> i32 {
    let mut a = AFFINITY.lock();
    *a = (a.0 + 1, None);
    0
}

extern "C" fn worker_main(_: *mut core::ffi::c_void) -> *mut core::ffi::c_void {
    let mut aff = 0;
    let mut p = POOL.lock();
    loop {
        if AFFINITY_USED.load(Ordering::Relaxed) {
            drop(p);
            apply_affinity(&mut aff);
            p = POOL.lock();
        }
        if let Some(r) = next_work(&mut p) {
            drop(p);
            run(r);
            p = POOL.lock();
            continue;
        }
        if LEAVE.load(Ordering::Acquire) {
            break;
        }
        p.idle += 1;
        let seq = WAKE.load(Ordering::SeqCst);
        drop(p);
        let r = futex_wait(&WAKE, seq, Some(os::now_ns() + IDLE_NS));
        p = POOL.lock();
        p.idle -= 1;
        if r == -libc::ETIMEDOUT && p.queue.is_empty() {
            break;
        }
    }
    p.workers -= 1;
    core::ptr::null_mut()
}

/// Sends idle workers away now (no engine ring is left).
pub(crate) fn idle_exit() {
    LEAVE.store(true, Ordering::Release);
    WAKE.fetch_add(1, Ordering::SeqCst);
    futex_wake(&WAKE, i32::MAX);
    // Wait (briefly) for them, so a caller counting threads sees them gone.
    for _ in 0..2000 {
        if POOL.lock().workers == 0 || table::LIVE.load(Ordering::Acquire) != 0 {
            break;
        }
        // SAFETY: plain sleep.
        unsafe { libc::usleep(500) };
    }
    LEAVE.store(false, Ordering::Release);
}

/// IORING_REGISTER_IOWQ_MAX_WORKERS: sets the caps that are non-zero and
/// returns the previous ones in `vals`.
pub(crate) fn set_max(vals: &mut [u32; 2]) {
    let mut p = POOL.lock();
    let d = defaults();
    let old = [if p.max[0] != 0 { p.max[0] } else { d[0] }, if p.max[1] != 0 { p.max[1] } else { d[1] }];
    for (m, &v) in p.max.iter_mut().zip(vals.iter()) {
        if v != 0 {
            *m = v;
        }
    }
    *vals = old;
}

/// In a forked child: no worker came along.
///
/// # Safety
/// Only from the atfork child handler.
pub(crate) unsafe fn after_fork_child() {
    // SAFETY: forwarded contract.
    unsafe { POOL.reset_after_fork() };
    let mut p = POOL.lock();
    p.queue = Fifo::new();
    p.workers = 0;
    p.idle = 0;
}
