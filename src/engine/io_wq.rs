//! The worker pool (the kernel's io-wq): threads of this process that run
//! work which would block. Created on demand, one per request in flight up
//! to a cap per kind of work, and an idle worker exits after a few
//! seconds, or at once when no engine ring is left.
//!
//! Caps, for the whole process (the pool is shared by every engine ring,
//! as the kernel's io-wq is shared by the rings of one task):
//! - bounded work (regular files, fsync, opens): four per CPU, the
//!   kernel's default less its min with sq_entries (one pool, many rings);
//! - O_DIRECT reads and writes: the kernel issues them without any thread,
//!   so as many can be in flight as are submitted; here a worker each, up
//!   to 64 (QEMU's thread pool size, enough for the QD32 that block devices
//!   and virtual disks serve in parallel);
//! - unbounded work (pipes, ttys): 64 more.
//! IORING_REGISTER_IOWQ_MAX_WORKERS sets the bounded cap (then also the
//! one for O_DIRECT I/O) and the unbounded one: never more workers than
//! that run work of that kind at once, whichever ring it came from.
//!
//! Buffered writes to one regular file run one at a time and in order, as
//! io-wq hashes them by inode (they would only contend on the inode lock);
//! other work on that file, and O_DIRECT writes, run in parallel.
//!
//! A request a worker is running can be interrupted (cancellation, ring
//! exit), as io-wq does with a notify signal: the worker's thread gets a
//! real-time signal whose handler does nothing and has no SA_RESTART, so
//! the blocking system call fails with EINTR. The signal comes from a
//! POSIX timer aimed at the thread (SIGEV_THREAD_ID) that fires at once
//! and then every few ms until the op returns, so a signal that lands just
//! before the call starts is followed by another. Workers keep only that
//! signal unblocked.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

use super::ctx::Ctx;
use super::lock::{futex_wait, futex_wake, Guard, Mutex};
use super::req::{self, rf, st, Fifo, Mode, ReqPtr};
use super::{os, table};

const IDLE_NS: u64 = 3_000_000_000;
/// Default cap for O_DIRECT I/O (see the module documentation).
const DIRECT_MAX: u32 = 64;
/// Default extra room for unbounded work.
const UNBOUNDED_MAX: u32 = 64;

/// Kinds of work, each with its cap.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Bounded,
    Direct,
    Unbounded,
}

struct Pool {
    queue: Fifo,
    /// Requests in `queue`, and of each class (so that a submit call's
    /// kicks need not walk a long queue under the lock).
    queued: u32,
    by_class: [u32; 3],
    /// Hash keys of queued buffered writes (see `OpDef::hash`), in queue
    /// order: the request a worker takes is found near the front.
    keys: VecDeque<(ReqPtr, u64)>,
    /// The distinct keys in `keys`, each with how many requests have it.
    hashed: Vec<(u64, u32)>,
    workers: u32,
    idle: u32,
    /// Idle workers woken, and workers spawned, that have not yet looked
    /// for work: each will take a request.
    woken: u32,
    starting: u32,
    /// Caps for bounded (file) and unbounded work; 0 = default.
    max: [u32; 2],
    /// What each busy worker runs, for `interrupt`.
    running: Vec<Running>,
}

/// A worker and the request it took from the queue.
struct Running {
    req: ReqPtr,
    class: Class,
    /// The hash key it holds: no other worker runs work with that key.
    key: Option<u64>,
    /// The request waits here only where the kernel's would wait in a poll
    /// (see `cancel::waits_like_poll`).
    poll_like: bool,
    thread: libc::pthread_t,
    tid: i32,
    /// The kernel id of the timer signalling the worker, once interrupted.
    timer: Option<i32>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    queue: Fifo::new(),
    queued: 0,
    by_class: [0; 3],
    keys: VecDeque::new(),
    hashed: Vec::new(),
    workers: 0,
    idle: 0,
    woken: 0,
    starting: 0,
    max: [0, 0],
    running: Vec::new(),
});
/// How many workers have an interrupt timer running (see `op_returned`).
static TIMERS: AtomicU32 = AtomicU32::new(0);
/// The interrupt signal, once chosen (-1: none could be had).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static SIGNAL_LOCK: Mutex<()> = Mutex::new(());
/// Period of the interrupt timer after its first shot.
const INTERRUPT_PERIOD_NS: i64 = 5_000_000;
/// Worker CPU affinity (IORING_REGISTER_IOWQ_AFF): a generation and the
/// mask; None restores the process's own.
static AFFINITY: Mutex<(u32, Option<libc::cpu_set_t>)> = Mutex::new((0, None));
static AFFINITY_USED: AtomicBool = AtomicBool::new(false);
/// Requests queued or running on workers (`queued` + `running`), for
/// `idle` to read without the lock.
static ACTIVE: AtomicU32 = AtomicU32::new(0);
/// Idle workers woken, and workers spawned, that have not yet looked for
/// work (`woken` + `starting`), for `working` to read without the lock.
static COMING: AtomicU32 = AtomicU32::new(0);
/// Bumped to wake idle workers.
static WAKE: AtomicU32 = AtomicU32::new(0);
/// Set when idle workers should leave now.
static LEAVE: AtomicBool = AtomicBool::new(false);

/// The default bounded cap, once known (sysconf reads a file each time).
static BOUNDED_DEFAULT: AtomicU32 = AtomicU32::new(0);

/// Default caps: bounded and unbounded work.
fn defaults() -> [u32; 2] {
    let mut b = BOUNDED_DEFAULT.load(Ordering::Relaxed);
    if b == 0 {
        b = 4 * os::cpus();
        BOUNDED_DEFAULT.store(b, Ordering::Relaxed);
    }
    [b, UNBOUNDED_MAX]
}

fn class(r: ReqPtr) -> Class {
    // SAFETY: the pool (or the caller) owns queued requests; flags and
    // opcode are only read.
    let r = unsafe { r.get() };
    if super::opdef::get(r.sqe.opcode).unbounded || r.flags & rf::UNBOUND != 0 {
        Class::Unbounded
    } else if r.flags & rf::DIRECT != 0 {
        Class::Direct
    } else {
        Class::Bounded
    }
}

/// How many workers may run work of this class at once.
fn cap(p: &Pool, c: Class) -> u32 {
    let d = defaults();
    match c {
        Class::Bounded if p.max[0] != 0 => p.max[0],
        Class::Bounded => d[0],
        Class::Direct if p.max[0] != 0 => p.max[0],
        Class::Direct => d[0].max(DIRECT_MAX),
        Class::Unbounded if p.max[1] != 0 => p.max[1],
        Class::Unbounded => d[1],
    }
}

/// Workers running work that counts against the cap of class `c`: O_DIRECT
/// I/O and other bounded work share the bounded cap once it is set.
fn busy(p: &Pool, c: Class) -> u32 {
    let shared = p.max[0] != 0 && c != Class::Unbounded;
    p.running.iter().filter(|w| w.class == c || (shared && w.class != Class::Unbounded)).count() as u32
}

/// The most workers that may exist at once.
fn total_cap(p: &Pool) -> u32 {
    let bounded = if p.max[0] != 0 { p.max[0] } else { cap(p, Class::Bounded) + cap(p, Class::Direct) };
    bounded + cap(p, Class::Unbounded)
}

/// What a caller must do, once the pool lock is dropped, so that queued
/// work of class `c` finds a worker.
enum Kick {
    None,
    Wake,
    Spawn,
}

/// Queued requests a worker could take now: all but those waiting behind
/// another of their hash key (queued before them, or running).
fn runnable(p: &Pool) -> u32 {
    let free = p.hashed.iter().filter(|&&(k, _)| !p.running.iter().any(|w| w.key == Some(k))).count();
    p.queued - p.keys.len() as u32 + free as u32
}

/// One more worker for the queue if it has more requests a worker could
/// take than workers are on their way, and `c`'s cap leaves room.
fn kick(p: &mut Pool, c: Class) -> Kick {
    let coming = p.woken + p.starting;
    if busy(p, c) + coming >= cap(p, c) || coming >= runnable(p) {
        return Kick::None;
    }
    if p.idle > p.woken {
        p.woken += 1;
        publish_coming(p);
        Kick::Wake
    } else if p.workers < total_cap(p) {
        p.workers += 1;
        p.starting += 1;
        publish_coming(p);
        Kick::Spawn
    } else {
        Kick::None
    }
}

fn do_kick(k: Kick) {
    match k {
        Kick::None => {}
        Kick::Wake => wake_idle(1),
        Kick::Spawn => spawn(1),
    }
}

/// Has `n` workers started, each already counted in `workers` and
/// `starting`.
fn spawn(n: u32) {
    for _ in 0..super::creds::spawn(worker_main, core::ptr::null_mut(), n, spawn_failed) {
        spawn_failed();
    }
}

/// A worker counted as starting could not be: uncounts it. With no worker
/// at all, runs the queue right here (on the thread that asked, or on the
/// nursery) rather than lose the work.
fn spawn_failed() {
    let mut p = POOL.lock();
    p.workers -= 1;
    p.starting -= 1;
    publish_coming(&p);
    if p.workers == 0 {
        drop(p);
        // A teardown may be waiting for the count to reach 0.
        super::lock::thread_ended();
        run_here();
    }
}

/// Wakes up to `n` idle workers (each woken one was claimed in `woken`,
/// or all of them are leaving).
fn wake_idle(n: i32) {
    WAKE.fetch_add(1, Ordering::SeqCst);
    futex_wake(&WAKE, n);
}

/// The key a request is serialised by (`OpDef::hash`).
fn hash(r: &mut req::Req) -> Option<u64> {
    super::opdef::get(r.sqe.opcode).hash.and_then(|h| h(r))
}

/// Queues `req` for a worker. The request becomes findable (state QUEUED)
/// before any worker can see it.
///
/// Inside a submit call, on its thread, no worker is woken yet: the call
/// wakes as many as its requests need at its end (`flush_kicks`), with
/// one system call. Waking one per request, each as it is queued, wakes
/// a worker that runs a short op (a statx) before the next is queued,
/// sleeps again, and is woken again for it.
pub(crate) fn enqueue(ctx: &Ctx, req: ReqPtr) {
    // SAFETY: still ours until it is queued.
    let key = hash(unsafe { req.get() });
    let c = class(req);
    ctx.list(req, st::QUEUED);
    let batched = ctx.on_submit_thread();
    let k = {
        let mut p = POOL.lock();
        push(&mut p, req, key, false);
        if batched {
            Kick::None
        } else {
            kick(&mut p, c)
        }
    };
    if batched {
        ctx.kicks_owed.store(true, Ordering::Relaxed);
    }
    do_kick(k);
}

/// Ends a submit call's batch (see `enqueue`): wakes or starts the workers
/// its queued requests need, as many as `kick` allows.
pub(crate) fn flush_kicks(ctx: &Ctx) {
    if !ctx.kicks_owed.swap(false, Ordering::Relaxed) {
        return;
    }
    let (mut wakes, mut spawns) = (0, 0);
    {
        let mut p = POOL.lock();
        for c in [Class::Bounded, Class::Direct, Class::Unbounded] {
            if p.by_class[c as usize] == 0 {
                continue;
            }
            loop {
                match kick(&mut p, c) {
                    Kick::None => break,
                    Kick::Wake => wakes += 1,
                    Kick::Spawn => spawns += 1,
                }
            }
        }
    }
    if wakes != 0 {
        wake_idle(wakes);
    }
    if spawns != 0 {
        spawn(spawns);
    }
}

fn push(p: &mut Pool, req: ReqPtr, key: Option<u64>, front: bool) {
    if front {
        p.queue.push_front(req);
    } else {
        p.queue.push(req);
    }
    p.queued += 1;
    p.by_class[class(req) as usize] += 1;
    publish(p);
    if let Some(k) = key {
        if front {
            p.keys.push_front((req, k));
        } else {
            p.keys.push_back((req, k));
        }
        match p.hashed.iter_mut().find(|e| e.0 == k) {
            Some(e) => e.1 += 1,
            None => p.hashed.push((k, 1)),
        }
    }
}

fn publish(p: &Pool) {
    ACTIVE.store(p.queued + p.running.len() as u32, Ordering::Relaxed);
}

fn publish_coming(p: &Pool) {
    COMING.store(p.woken + p.starting, Ordering::Relaxed);
}

/// Whether some worker runs or waits for a request and none is being
/// woken or started (a hint: it may change at once). A thread waiting for
/// their CQEs may then spin (`wait::spin`) without keeping a worker it
/// just woke from the CPU.
pub(crate) fn working() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0 && COMING.load(Ordering::Relaxed) == 0
}

/// Queues the rest of a chain from a worker (or the submitter running the
/// queue), at the head: the same thread takes it next, as an io-wq worker
/// runs a request's linked work itself. Nobody else needs waking.
pub(crate) fn requeue(ctx: &Ctx, req: ReqPtr) {
    // SAFETY: still ours until it is queued.
    let key = hash(unsafe { req.get() });
    ctx.list(req, st::QUEUED);
    push(&mut POOL.lock(), req, key, true);
}

/// Queues the next member of a chain whose predecessor the calling worker
/// (or the submitter running the queue) just completed. As io-wq's worker
/// does, one holding a hash key with more work of that key queued goes on
/// with that work and leaves the linked work to another worker (queued
/// at the tail, one woken); otherwise it runs the linked work itself next.
/// So a write+fsync chain costs the writes to one file no hand-off each.
pub(crate) fn requeue_linked(ctx: &Ctx, req: ReqPtr) {
    // SAFETY: still ours until it is queued.
    let key = hash(unsafe { req.get() });
    let c = class(req);
    ctx.list(req, st::QUEUED);
    let k = {
        let mut p = POOL.lock();
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        let held = p.running.iter().find(|w| w.thread == me).and_then(|w| w.key);
        let more = held.is_some_and(|h| p.hashed.iter().any(|e| e.0 == h));
        push(&mut p, req, key, !more);
        if more {
            kick(&mut p, c)
        } else {
            Kick::None
        }
    };
    do_kick(k);
}

/// Drops `req` from the queue's books.
fn unqueue(p: &mut Pool, req: ReqPtr) -> Option<u64> {
    p.queued -= 1;
    p.by_class[class(req) as usize] -= 1;
    publish(p);
    let i = p.keys.iter().position(|e| e.0 == req)?;
    let k = p.keys.remove(i)?.1;
    if let Some(j) = p.hashed.iter().position(|e| e.0 == k) {
        p.hashed[j].1 -= 1;
        if p.hashed[j].1 == 0 {
            p.hashed.swap_remove(j);
        }
    }
    Some(k)
}

/// Takes a queued request out of the queue (cancellation); false if a
/// worker already took it.
pub(crate) fn dequeue(req: ReqPtr) -> bool {
    let mut p = POOL.lock();
    if !p.queue.remove(req) {
        return false;
    }
    unqueue(&mut p, req);
    true
}

/// Takes the next request for the calling thread (`tid`), a worker or a
/// thread standing in for one (`run_here`): the first whose class has
/// room and whose hash key no worker holds. It is listed in `running`, so
/// a cancel or the ring's exit can interrupt it.
fn next_work(p: &mut Pool, tid: i32) -> Option<ReqPtr> {
    loop {
        let room = [Class::Bounded, Class::Direct, Class::Unbounded].map(|c| busy(p, c) < cap(p, c));
        let held = |k: u64| p.running.iter().any(|w| w.key == Some(k));
        // Only while some queued key is held need a request's own be looked up.
        let blocked = p.hashed.iter().any(|&(k, _)| held(k));
        let key_of = |r: ReqPtr| p.keys.iter().find(|e| e.0 == r).map(|e| e.1);
        let r = p.queue.iter().find(|&r| {
            r.state().load(Ordering::Acquire) != st::QUEUED
                || (room[class(r) as usize] && (!blocked || key_of(r).is_none_or(|k| !held(k))))
        })?;
        p.queue.remove(r);
        let key = unqueue(p, r);
        // A canceller that moved it to CANCELED owns it now.
        if r.state().compare_exchange(st::QUEUED, st::RUNNING, Ordering::AcqRel, Ordering::Acquire).is_err() {
            continue;
        }
        // SAFETY: the request is ours now (RUNNING); only read.
        let poll_like = super::cancel::waits_like_poll(unsafe { r.get() });
        // SAFETY: pthread_self has no preconditions.
        let thread = unsafe { libc::pthread_self() };
        p.running.push(Running { req: r, class: class(r), key, poll_like, thread, tid, timer: None });
        publish(p);
        return Some(r);
    }
}

/// Removes the calling worker's entry; its timer, if any, is returned to
/// be deleted once the lock is dropped.
fn leave_running(p: &mut Pool) -> Option<i32> {
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() };
    let i = p.running.iter().position(|w| w.thread == me)?;
    let t = p.running.swap_remove(i).timer;
    publish(p);
    t
}

/// Stops a worker's interrupt timer. A signal it already raised is
/// delivered to the worker (the signal is unblocked there) on the return
/// from this very call, so nothing is left pending for a later op.
fn stop_timer(t: i32) {
    TIMERS.fetch_sub(1, Ordering::SeqCst);
    // SAFETY: deletes a timer this module created.
    unsafe { libc::syscall(libc::SYS_timer_delete, t) };
}

/// Called by a worker after each op it issued has returned (and its
/// request was completed or handed on): an interrupt meant for that op
/// must not reach the next one. Costs one atomic load unless some worker
/// is being interrupted.
pub(crate) fn op_returned() {
    if TIMERS.load(Ordering::SeqCst) == 0 {
        return;
    }
    let t = {
        let mut p = POOL.lock();
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        p.running.iter_mut().find(|w| w.thread == me).and_then(|w| w.timer.take())
    };
    if let Some(t) = t {
        stop_timer(t);
    }
}

/// Whether the calling worker's op is being interrupted: its call may have
/// been cut short, or the signal may have come between calls. One atomic
/// load unless some worker is being interrupted.
pub(crate) fn interrupted() -> bool {
    if TIMERS.load(Ordering::SeqCst) == 0 {
        return false;
    }
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() };
    POOL.lock().running.iter().any(|w| w.thread == me && w.timer.is_some())
}

/// Interrupts the worker running `req` (state RUNNING, seen under the
/// ring's inner lock, which the caller still holds so that the op has not
/// returned yet): its blocking system call fails with EINTR. Returns
/// whether it was interrupted and the op ends as cancelled there (see
/// `cancel::waits_like_poll`); false if no worker thread runs it, no
/// signal could be had, or the op ends with its own result.
pub(crate) fn interrupt(req: ReqPtr) -> bool {
    let sig = signal();
    if sig <= 0 {
        return false;
    }
    let mut p = POOL.lock();
    let Some(w) = p.running.iter_mut().find(|w| w.req == req) else { return false };
    if w.timer.is_some() {
        return w.poll_like;
    }
    // SAFETY: an all-zero sigevent is valid; the fields set aim it at
    // one thread of this process.
    let mut ev: libc::sigevent = unsafe { core::mem::zeroed() };
    ev.sigev_notify = libc::SIGEV_THREAD_ID;
    ev.sigev_signo = sig;
    ev.sigev_notify_thread_id = w.tid;
    let mut id: i32 = 0;
    // SAFETY: live sigevent and timer id out-parameter (the kernel's int).
    if unsafe { libc::syscall(libc::SYS_timer_create, libc::CLOCK_MONOTONIC, &ev, &mut id) } < 0 {
        return false;
    }
    let spec = libc::itimerspec {
        it_interval: libc::timespec { tv_sec: 0, tv_nsec: INTERRUPT_PERIOD_NS },
        it_value: libc::timespec { tv_sec: 0, tv_nsec: 1 },
    };
    TIMERS.fetch_add(1, Ordering::SeqCst);
    // SAFETY: arms the timer just created with a live itimerspec.
    unsafe { libc::syscall(libc::SYS_timer_settime, id, 0, &spec, core::ptr::null_mut::<libc::itimerspec>()) };
    w.timer = Some(id);
    w.poll_like
}

extern "C" fn on_interrupt(_: i32) {}

/// The interrupt signal: SIGRTMAX-4, or the next lower one the program
/// has no handler for (down to SIGRTMAX-12). glibc keeps signals 32 and
/// 33 below SIGRTMIN for itself; programs that use real-time signals
/// mostly take the lowest few, and valgrind the highest. Installed once,
/// without SA_RESTART, before any worker unblocks it.
fn signal() -> i32 {
    let s = SIGNAL.load(Ordering::Acquire);
    if s != 0 {
        return s;
    }
    let _g = SIGNAL_LOCK.lock();
    let s = SIGNAL.load(Ordering::Acquire);
    if s != 0 {
        return s;
    }
    let top = libc::SIGRTMAX();
    let mut chosen = -1;
    for sig in (top - 12..=top - 4).rev() {
        // SAFETY: sigaction with a live out-parameter only reads the
        // current disposition.
        let mut old: libc::sigaction = unsafe { core::mem::zeroed() };
        if unsafe { libc::sigaction(sig, core::ptr::null(), &mut old) } < 0 || old.sa_sigaction != libc::SIG_DFL {
            continue;
        }
        // SAFETY: an all-zero sigaction is valid; the handler is an empty
        // extern "C" function, the mask blocks everything while it runs.
        let mut sa: libc::sigaction = unsafe { core::mem::zeroed() };
        sa.sa_sigaction = on_interrupt as extern "C" fn(i32) as usize;
        // SAFETY: live sigset.
        unsafe { libc::sigfillset(&mut sa.sa_mask) };
        // SAFETY: installs the handler above.
        if unsafe { libc::sigaction(sig, &sa, core::ptr::null_mut()) } == 0 {
            chosen = sig;
            break;
        }
    }
    SIGNAL.store(chosen, Ordering::Release);
    chosen
}

/// Lets the interrupt signal reach the calling thread.
fn unblock_signal() {
    let sig = signal();
    // SAFETY: live sigsets; changes the calling thread's mask only.
    unsafe {
        let mut set: libc::sigset_t = core::mem::zeroed();
        libc::sigemptyset(&mut set);
        if sig > 0 {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, core::ptr::null_mut());
    }
}

/// The mask a thread standing in for a worker runs requests under (the
/// old one is returned): the interrupt signal let through and, on a
/// program's thread, the signals the program catches held back until the
/// op returns. A handler run inside the op would cut it short with EINTR,
/// which the program's signals never do to an io-wq worker, and would run
/// in whatever credentials a personality put on the thread. Signals left
/// to their default action still act at once; those a fault raises are
/// the thread's own and are not held.
fn standin_mask() -> libc::sigset_t {
    // SAFETY: an all-zero sigset_t is a valid set to fill.
    let mut caught: libc::sigset_t = unsafe { core::mem::zeroed() };
    // SAFETY: live sigset.
    unsafe { libc::sigemptyset(&mut caught) };
    let interrupt = signal();
    // Engine threads keep every program signal blocked already.
    if !os::is_engine_thread() {
        const OWN: [i32; 8] = [
            libc::SIGKILL,
            libc::SIGSTOP,
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGILL,
            libc::SIGTRAP,
            libc::SIGSYS,
        ];
        for sig in 1..=libc::SIGRTMAX() {
            if sig == interrupt || OWN.contains(&sig) {
                continue;
            }
            // SAFETY: only reads the disposition into a live local; glibc
            // refuses its own two signals (EINVAL), which are skipped.
            let mut sa: libc::sigaction = unsafe { core::mem::zeroed() };
            if unsafe { libc::sigaction(sig, core::ptr::null(), &mut sa) } == 0
                && sa.sa_sigaction != libc::SIG_DFL
                && sa.sa_sigaction != libc::SIG_IGN
            {
                // SAFETY: live sigset, valid signal number.
                unsafe { libc::sigaddset(&mut caught, sig) };
            }
        }
    }
    // SAFETY: an all-zero sigset_t is a valid out-parameter.
    let mut old: libc::sigset_t = unsafe { core::mem::zeroed() };
    // SAFETY: live sigsets; changes the calling thread's mask only.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &caught, &mut old) };
    unblock_signal();
    old
}

/// Runs `r`, taken by `next_work` on this thread, and then takes the
/// thread off `running`, its interrupt timer (if any) stopped. Returns
/// with the pool locked.
fn run(r: ReqPtr) -> Guard<'static, Pool> {
    {
        // SAFETY: the worker owns the request (state RUNNING).
        let ctx = unsafe { r.get() }.ctx();
        let _ring = table::hold(ctx);
        req::issue(ctx, r, Mode::Worker);
    }
    let mut p = POOL.lock();
    if let Some(t) = leave_running(&mut p) {
        drop(p);
        stop_timer(t);
        p = POOL.lock();
    }
    p
}

/// Runs the queue on the calling thread, which stands in for a worker
/// none could be started for: the program's thread in its submit call, or
/// the nursery. Its ops can be interrupted as a worker's are (else a
/// request that blocks for good, an open of a FIFO nobody writes to,
/// would hold the ring's exit): the interrupt signal is let through
/// meanwhile, the program's handlers kept out (`standin_mask`), and the
/// thread's own mask is put back after, once `run` has stopped any timer
/// aimed at it.
fn run_here() {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    let mask = standin_mask();
    loop {
        let r = next_work(&mut POOL.lock(), tid);
        match r {
            Some(r) => drop(run(r)),
            None => break,
        }
    }
    // SAFETY: puts back the mask read above, on the same thread.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &mask, core::ptr::null_mut()) };
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
    os::name_thread("iou-wrk-", true);
    super::creds::worker_start();
    let mut aff = 0;
    unblock_signal();
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    let mut p = POOL.lock();
    // Spawned for a request: on its way until it looks at the queue.
    let mut starting = true;
    loop {
        if AFFINITY_USED.load(Ordering::Relaxed) {
            drop(p);
            apply_affinity(&mut aff);
            p = POOL.lock();
        }
        let work = next_work(&mut p, tid);
        if starting {
            p.starting -= 1;
            publish_coming(&p);
            starting = false;
        }
        if let Some(r) = work {
            // More queued work than workers on their way: ask for another.
            let k = match p.queue.front() {
                Some(f) => kick(&mut p, class(f)),
                None => Kick::None,
            };
            drop(p);
            do_kick(k);
            p = run(r);
            continue;
        }
        if LEAVE.load(Ordering::Acquire) {
            break;
        }
        p.idle += 1;
        let seq = WAKE.load(Ordering::SeqCst);
        drop(p);
        // Out of work: a set*id() of the program's may land.
        super::creds::end_streak();
        let r = futex_wait(&WAKE, seq, Some(os::now_ns() + IDLE_NS));
        p = POOL.lock();
        p.idle -= 1;
        // Whatever woke it, one claimed wake-up is used up: `woken` never
        // exceeds the idle workers.
        p.woken = p.woken.saturating_sub(1);
        publish_coming(&p);
        if r == -libc::ETIMEDOUT && p.queue.is_empty() {
            break;
        }
    }
    p.workers -= 1;
    // Only the last worker's end is waited for (`wait_idle_exit`): eight
    // workers leaving wake the teardown once, not eight times.
    let last = p.workers == 0;
    drop(p);
    super::creds::end_streak();
    if last {
        super::lock::thread_ended();
    }
    core::ptr::null_mut()
}

/// Sends idle workers away now (no engine ring is left); `wait_idle_exit`
/// waits for them.
pub(crate) fn idle_exit() {
    LEAVE.store(true, Ordering::Release);
    wake_idle(i32::MAX);
}

/// Waits for the workers `idle_exit` sent away, so a caller counting
/// threads sees them gone.
pub(crate) fn wait_idle_exit() {
    super::lock::wait_threads_ended(|| POOL.lock().workers == 0 || table::LIVE.load(Ordering::Acquire) != 0);
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
    unsafe {
        POOL.reset_after_fork();
        SIGNAL_LOCK.reset_after_fork();
        AFFINITY.reset_after_fork();
    }
    let mut p = POOL.lock();
    p.queue = Fifo::new();
    p.queued = 0;
    p.by_class = [0; 3];
    p.keys.clear();
    p.hashed.clear();
    p.workers = 0;
    p.idle = 0;
    p.woken = 0;
    p.starting = 0;
    COMING.store(0, Ordering::Relaxed);
    // The parent's workers and their timers did not come along.
    p.running.clear();
    TIMERS.store(0, Ordering::SeqCst);
}
