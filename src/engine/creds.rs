//! Credentials: every request runs with those of the thread that submitted
//! it, as the kernel's io_uring does (it issues inline in the submitting
//! task, and `io_prep_async_work` hands io-wq the submitter's `cred`), or
//! with a personality's (IORING_REGISTER_PERSONALITY).
//!
//! Linux keeps credentials per thread, so a request run on another thread
//! (a worker, the reactor, a thread serving the readiness set, or behind a
//! link) must carry them along:
//! - A request whose op checks them (`OpDef::creds`) takes a snapshot of
//!   its submitter's when it leaves the submitting call ([`capture_chain`]).
//!   Requests that complete inline never take one.
//! - A thread other than a worker runs such a request only when its own
//!   credentials are the same ([`differ`]); otherwise a worker does.
//! - A worker takes them on around the op ([`with`]) and then goes back to
//!   its own. Workers are started by one thread kept for that ([`spawn`]),
//!   which has the credentials of the thread that set up the process's
//!   first engine ring, so a worker never inherits a thread's lowered ones.
//!
//! glibc applies set*id() to every thread through a signal (SIGSETXID)
//! and aborts the process when the threads' results differ. A worker keeps
//! that signal blocked from its credential check to the op's end, so the
//! process's change lands on the worker's own ones once the op is over: a
//! privilege drop is final on engine threads too, a raise never reaches an
//! op submitted before it, and the process is never aborted.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};

use super::ctx::Ctx;
use super::lock::{futex_wait, futex_wake, Mutex};
use super::os;

/// Supplementary groups kept per personality (the kernel's NGROUPS_MAX).
const NGROUPS_MAX: usize = 65536;
/// glibc's signal for applying set*id() to each thread (__SIGRTMIN + 1).
const SIGSETXID: usize = 33;
const SECBIT_NO_SETUID_FIXUP: u32 = 1 << 2;
const CAP_SETGID: u64 = 1 << 6;
const CAP_SETUID: u64 = 1 << 7;
const CAP_SETPCAP: u64 = 1 << 8;
/// What a worker needs to take on any credentials and come back.
const SWITCH_CAPS: u64 = CAP_SETGID | CAP_SETUID | CAP_SETPCAP;
const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const EFF: usize = 0;
const PRM: usize = 1;
const INH: usize = 2;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// A thread's credentials: user and group ids (real, effective, saved,
/// fs), capability sets, securebits and supplementary groups. Ambient and
/// bounding capabilities are left out: they act only at execve, which no
/// operation makes.
#[derive(PartialEq, Eq)]
pub(crate) struct Creds {
    uid: [u32; 4],
    gid: [u32; 4],
    cap: [u64; 3],
    securebits: u32,
    groups: Vec<u32>,
}

#[cfg(test)]
impl Creds {
    /// Credentials that own heap memory, for tests of what holds them.
    pub(crate) fn for_test() -> Creds {
        Creds { uid: [0; 4], gid: [0; 4], cap: [0; 3], securebits: 0, groups: alloc::vec![1, 2, 3] }
    }
}

fn ok(r: libc::c_long) -> Result<(), i32> {
    if r < 0 {
        Err(os::errno())
    } else {
        Ok(())
    }
}

fn capget() -> Result<[u64; 3], i32> {
    let mut h = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let mut d = [CapData::default(); 2];
    // SAFETY: a v3 header and the two data words v3 fills.
    ok(unsafe { libc::syscall(libc::SYS_capget, &mut h, d.as_mut_ptr()) })?;
    let join = |f: fn(&CapData) -> u32| f(&d[0]) as u64 | (f(&d[1]) as u64) << 32;
    Ok([join(|c| c.effective), join(|c| c.permitted), join(|c| c.inheritable)])
}

fn capset(cap: [u64; 3]) -> Result<(), i32> {
    let mut h = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let half = |i: u32| CapData {
        effective: (cap[EFF] >> i) as u32,
        permitted: (cap[PRM] >> i) as u32,
        inheritable: (cap[INH] >> i) as u32,
    };
    let d = [half(0), half(32)];
    // SAFETY: a v3 header and two data words, only read.
    ok(unsafe { libc::syscall(libc::SYS_capset, &mut h, d.as_ptr()) })
}

/// setres[ug]id (`nr`) of the first three ids, then setfs[ug]id (`fs`).
fn set_ids(nr: libc::c_long, fs: libc::c_long, v: &[u32; 4]) -> Result<(), i32> {
    // SAFETY: plain ids by value; these calls change the calling thread only.
    ok(unsafe { libc::syscall(nr, v[0], v[1], v[2]) })?;
    // SAFETY: as above. setfs[ug]id reports no error: check the result.
    unsafe { libc::syscall(fs, v[3]) };
    // SAFETY: -1 is no id, so this only reads the current one back.
    if unsafe { libc::syscall(fs, u32::MAX) } as u32 != v[3] {
        return Err(-libc::EPERM);
    }
    Ok(())
}

fn set_groups(g: &[u32]) -> Result<(), i32> {
    // SAFETY: a live array of the length given.
    ok(unsafe { libc::syscall(libc::SYS_setgroups, g.len(), g.as_ptr()) })
}

fn set_securebits(bits: u32) -> Result<(), i32> {
    // SAFETY: PR_SET_SECUREBITS takes the bits by value.
    ok(unsafe { libc::prctl(libc::PR_SET_SECUREBITS, bits as libc::c_ulong) } as libc::c_long)
}

/// The real, effective and saved user ids and group ids, in the first
/// three places of each array.
fn res_ids() -> Result<([u32; 4], [u32; 4]), i32> {
    let (mut uid, mut gid) = ([0u32; 4], [0u32; 4]);
    let (u, g) = (uid.as_mut_ptr(), gid.as_mut_ptr());
    // SAFETY: each call writes three ids into a live local array.
    unsafe {
        ok(libc::syscall(libc::SYS_getresuid, u, u.add(1), u.add(2)))?;
        ok(libc::syscall(libc::SYS_getresgid, g, g.add(1), g.add(2)))?;
    }
    Ok((uid, gid))
}

/// The real, effective and saved user and group ids, and the groups.
fn ids() -> Result<([u32; 4], [u32; 4], Vec<u32>), i32> {
    let (uid, gid) = res_ids()?;
    let mut groups = alloc::vec![0u32; 32];
    loop {
        // SAFETY: room for `groups.len()` ids.
        let n = unsafe { libc::syscall(libc::SYS_getgroups, groups.len(), groups.as_mut_ptr()) };
        if n >= 0 {
            groups.truncate(n as usize);
            return Ok((uid, gid, groups));
        }
        // SAFETY: a size query writes nothing.
        let n = unsafe { libc::syscall(libc::SYS_getgroups, 0, core::ptr::null_mut::<u32>()) };
        ok(n)?;
        groups.resize((n as usize).min(NGROUPS_MAX), 0);
    }
}

impl Creds {
    /// The calling thread's credentials.
    pub(crate) fn current() -> Result<Creds, i32> {
        let (mut uid, mut gid, groups) = ids()?;
        // SAFETY: -1 is no id: these change nothing and return the fs ids.
        unsafe {
            uid[3] = libc::syscall(libc::SYS_setfsuid, u32::MAX) as u32;
            gid[3] = libc::syscall(libc::SYS_setfsgid, u32::MAX) as u32;
        }
        let cap = capget()?;
        // SAFETY: PR_GET_SECUREBITS takes no pointer.
        let securebits = unsafe { libc::prctl(libc::PR_GET_SECUREBITS) };
        ok(securebits as libc::c_long)?;
        Ok(Creds { uid, gid, cap, securebits: securebits as u32, groups })
    }

    /// Makes the calling thread, whose credentials are `self`, run with
    /// `to`. With CAP_SET[UG]ID and CAP_SETPCAP permitted it keeps its
    /// permitted set (unused by access checks, which go by the effective
    /// one) and NO_SETUID_FIXUP, so that it can come back; without them it
    /// can only move between ids it holds either way.
    fn assume(&self, to: &Creds) -> Result<(), i32> {
        if self.cap[PRM] & SWITCH_CAPS != SWITCH_CAPS {
            return self.assume_ids(to);
        }
        if to.cap[EFF] & !self.cap[PRM] != 0 {
            return Err(-libc::EPERM);
        }
        capset([self.cap[PRM], self.cap[PRM], self.cap[INH]])?;
        if self.securebits & SECBIT_NO_SETUID_FIXUP == 0 {
            set_securebits(self.securebits | SECBIT_NO_SETUID_FIXUP)?;
        }
        set_groups(&to.groups)?;
        set_ids(libc::SYS_setresgid, libc::SYS_setfsgid, &to.gid)?;
        set_ids(libc::SYS_setresuid, libc::SYS_setfsuid, &to.uid)?;
        capset([to.cap[EFF], self.cap[PRM], to.cap[INH]])
    }

    /// Comes back to `self` from whatever `assume(to)` got to.
    fn restore(&self) -> Result<(), i32> {
        if self.cap[PRM] & SWITCH_CAPS != SWITCH_CAPS {
            set_ids(libc::SYS_setresuid, libc::SYS_setfsuid, &self.uid)?;
            return set_ids(libc::SYS_setresgid, libc::SYS_setfsgid, &self.gid);
        }
        capset([self.cap[PRM], self.cap[PRM], self.cap[INH]])?;
        set_groups(&self.groups)?;
        set_ids(libc::SYS_setresgid, libc::SYS_setfsgid, &self.gid)?;
        set_ids(libc::SYS_setresuid, libc::SYS_setfsuid, &self.uid)?;
        set_securebits(self.securebits)?;
        capset(self.cap)
    }

    /// The unprivileged switch: capabilities and groups must already be
    /// the same, and every id must be one the thread may take both ways.
    fn assume_ids(&self, to: &Creds) -> Result<(), i32> {
        let both = |a: &[u32; 4], b: &[u32; 4]| a.iter().all(|x| b.contains(x)) && b.iter().all(|x| a.contains(x));
        let same_caps = self.cap == to.cap && (self.cap == [0; 3] || self.uid == to.uid);
        if !same_caps || self.groups != to.groups || !both(&self.uid, &to.uid) || !both(&self.gid, &to.gid) {
            return Err(-libc::EPERM);
        }
        set_ids(libc::SYS_setresgid, libc::SYS_setfsgid, &to.gid)?;
        set_ids(libc::SYS_setresuid, libc::SYS_setfsuid, &to.uid)
    }
}

/// Blocks SIGSETXID in the calling thread while it lives, with the raw
/// system call: glibc's own mask calls leave that signal alone.
struct SetxidBlock(u64);

impl SetxidBlock {
    fn new() -> SetxidBlock {
        let set: u64 = 1 << (SIGSETXID - 1);
        let mut old: u64 = 0;
        // SAFETY: kernel sigsets of 8 bytes, live locals.
        unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_BLOCK, &set, &mut old, 8) };
        SetxidBlock(old)
    }
}

impl Drop for SetxidBlock {
    fn drop(&mut self) {
        // SAFETY: as above; puts back the mask found.
        unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &self.0, core::ptr::null_mut::<u64>(), 8) };
    }
}

/// Whether the calling thread's credentials differ from `c` (so that only
/// a worker may run the request).
pub(crate) fn differ(c: &Creds) -> bool {
    !own_is(c).unwrap_or(false)
}

extern "C" fn drop_own(v: *mut libc::c_void) {
    // SAFETY: only `own` stores values, each a leaked Box<Creds>.
    drop(unsafe { alloc::boxed::Box::from_raw(v as *mut Creds) });
}

/// An engine thread's own credentials, kept between requests.
static OWN: os::ThreadKey = os::ThreadKey::new(drop_own);

/// Whether the calling thread's own credentials are `c`. An engine
/// thread's credentials change between requests only through glibc's
/// set*id() broadcast (`with` undoes its own switches), which always changes the
/// ids or the groups, so a kept copy is checked with three calls rather
/// than read anew with seven. A program's thread (one waiting in enter
/// that runs completions, its own ring's or any ring's) may change its
/// capabilities alone, which a kept copy would miss: it is read anew.
fn own_is(c: &Creds) -> Result<bool, i32> {
    if !os::is_engine_thread() {
        return Ok(Creds::current()? == *c);
    }
    let kept = OWN.get() as *mut Creds;
    // SAFETY: a Box<Creds> this thread stored and only it reads.
    if let Some(k) = unsafe { kept.as_ref() } {
        if ids_are(k)? {
            return Ok(*k == *c);
        }
    }
    let fresh = alloc::boxed::Box::new(Creds::current()?);
    let same = *fresh == *c;
    let raw = alloc::boxed::Box::into_raw(fresh) as *mut libc::c_void;
    match OWN.set(raw) {
        true if !kept.is_null() => drop_own(kept as *mut libc::c_void),
        true => {}
        false => drop_own(raw),
    }
    Ok(same)
}

/// Whether the calling thread's real, effective and saved ids and its
/// groups are still `k`'s. Reads them without allocating (a worker asks
/// before each op); false also when it has too many groups to read here.
fn ids_are(k: &Creds) -> Result<bool, i32> {
    let (uid, gid) = res_ids()?;
    if k.uid[..3] != uid[..3] || k.gid[..3] != gid[..3] {
        return Ok(false);
    }
    let mut groups = [0u32; 64];
    // SAFETY: room for `groups.len()` ids.
    let n = unsafe { libc::syscall(libc::SYS_getgroups, groups.len(), groups.as_mut_ptr()) };
    Ok(n >= 0 && groups[..n as usize] == k.groups[..])
}

/// Runs `f` with credentials `c`, on a worker; -EPERM or the like if the
/// worker cannot take them on. With `hold`, SIGSETXID stays blocked from
/// the check to the end of `f` even when no switch is needed: a set*id()
/// of the program's landing in between would otherwise run the op with
/// the program's new credentials (raised ones included), not its
/// submitter's. Without it (an op that may wait on a pipe, socket or
/// terminal for as long as it likes, holding up the program's set*id()
/// that long) it is blocked only while other credentials are worn.
pub(crate) fn with<T>(c: &Creds, hold: bool, f: impl FnOnce() -> T) -> Result<T, i32> {
    match STREAK.get() as usize {
        NOT_WORKER => {}
        s if hold => return with_streak(c, s == HELD, f),
        _ => end_streak(),
    }
    let _held = hold.then(SetxidBlock::new);
    if own_is(c)? {
        return Ok(f());
    }
    switched(c, f)
}

/// Runs `f` with `c` worn instead of the calling thread's own ones.
fn switched<T>(c: &Creds, f: impl FnOnce() -> T) -> Result<T, i32> {
    let _block = SetxidBlock::new();
    let own = Creds::current()?;
    if own == *c {
        return Ok(f());
    }
    if let Err(e) = own.assume(c) {
        if own.restore().is_err() {
            // A worker must not go on with foreign credentials.
            // SAFETY: abort has no preconditions.
            unsafe { libc::abort() };
        }
        return Err(e);
    }
    let out = f();
    if own.restore().is_err() {
        // SAFETY: as above.
        unsafe { libc::abort() };
    }
    Ok(out)
}

/// A worker's streak (`STREAK`): SIGSETXID stays blocked from one held
/// request to the next, so the worker's credentials cannot have changed
/// since they were last read unless the signal is now pending, which one
/// rt_sigpending call tells. A request in a streak then costs that one
/// call, not a check of three and two mask changes. The streak ends,
/// letting a pending set*id() of the program's land, when the signal is
/// found pending, before an op that does not hold it, when the worker
/// runs out of work, and before any wait of the engine's (a futex, making
/// or joining a thread): glibc's broadcast holds its thread-stack lock
/// until every thread has taken the change, so a thread with the signal
/// blocked must never wait for one that may be after that lock (one
/// inside pthread_create, or holding a lock another waits for). The
/// program waits for one op at most, as without. While the op itself runs
/// nothing ends it: the op keeps the signal blocked from its check to its
/// end, as a held op off a streak does.
static STREAK: os::ThreadKey = os::ThreadKey::new(no_drop);
const NOT_WORKER: usize = 0;
const WORKER: usize = 1;
const HELD: usize = 2;
/// HELD, and inside the op.
const IN_OP: usize = 3;

extern "C" fn no_drop(_: *mut libc::c_void) {}

/// Marks the calling thread as a worker, which may keep streaks.
pub(crate) fn worker_start() {
    STREAK.set(WORKER as *mut libc::c_void);
}

/// Ends the calling worker's streak, if it has one.
pub(crate) fn end_streak() {
    if STREAK.get() as usize == HELD {
        STREAK.set(WORKER as *mut libc::c_void);
        setxid_mask(libc::SIG_UNBLOCK);
    }
}

fn setxid_mask(how: i32) {
    let set: u64 = 1 << (SIGSETXID - 1);
    // SAFETY: a kernel sigset of 8 bytes, a live local; no old mask asked.
    unsafe { libc::syscall(libc::SYS_rt_sigprocmask, how, &set, core::ptr::null_mut::<u64>(), 8) };
}

/// Whether a SIGSETXID waits for the calling thread.
fn setxid_pending() -> bool {
    let mut set: u64 = 0;
    // SAFETY: writes 8 bytes of pending signals into a live local.
    unsafe { libc::syscall(libc::SYS_rt_sigpending, &mut set, 8) };
    set & 1 << (SIGSETXID - 1) != 0
}

/// `with` for a held request on a worker (`held`: in a streak already).
fn with_streak<T>(c: &Creds, held: bool, f: impl FnOnce() -> T) -> Result<T, i32> {
    let mut known = held;
    if !held {
        setxid_mask(libc::SIG_BLOCK);
        STREAK.set(HELD as *mut libc::c_void);
    } else if setxid_pending() {
        // Let the program's set*id() land now, then read what it made.
        setxid_mask(libc::SIG_UNBLOCK);
        setxid_mask(libc::SIG_BLOCK);
        known = false;
    }
    let kept = OWN.get() as *const Creds;
    // SAFETY: a Box<Creds> this thread stored and only it reads or frees.
    let same = match unsafe { kept.as_ref() } {
        Some(k) if known => *k == *c,
        _ => match own_is(c) {
            Ok(same) => same,
            Err(e) => {
                end_streak();
                return Err(e);
            }
        },
    };
    STREAK.set(IN_OP as *mut libc::c_void);
    let out = if same { Ok(f()) } else { switched(c, f) };
    STREAK.set(HELD as *mut libc::c_void);
    out
}

/// Gives every member of the chain from `req` whose op checks credentials
/// a snapshot of the calling thread's (the submitter's), as the chain is
/// about to leave it. Errors (out of memory aside, none can happen) leave
/// the request without one, to run with the thread that issues it.
pub(crate) fn capture_chain(req: super::req::ReqPtr) {
    let mut snap: Option<Arc<Creds>> = None;
    let mut cur = Some(req);
    while let Some(m) = cur {
        // SAFETY: the caller owns the chain.
        let r = unsafe { m.get() };
        if r.creds.is_none() && super::opdef::get(r.sqe.opcode).creds {
            if snap.is_none() {
                snap = snapshot(r.ctx());
            }
            r.creds = snap.clone();
        }
        cur = r.link;
    }
}

/// The calling thread's credentials, read once per submit call (see
/// `Batch`) when the request's ring is being submitted to by this thread.
/// A thread inside the kernel's io_uring_enter cannot change its
/// credentials: glibc applies set*id() to each thread from a signal
/// handler, and a signal reaches the thread only once the call returns.
/// Every request of one call thus goes with the credentials the call
/// started with, as here.
fn snapshot(ctx: &Ctx) -> Option<Arc<Creds>> {
    if !ctx.on_submit_thread() {
        return Creds::current().ok().map(Arc::new);
    }
    let mut snap = ctx.submit_creds.lock();
    if snap.is_none() {
        *snap = Some(Arc::new(Creds::current().ok()?));
        ctx.submit_creds_used.store(true, Ordering::Relaxed);
    }
    snap.clone()
}

/// Marks the calling thread as inside a submit call to `ctx` (it holds
/// the ring's submit lock) while it lives; the credentials read meanwhile
/// are dropped at the end.
pub(crate) struct Batch<'a>(&'a Ctx);

impl<'a> Batch<'a> {
    pub(crate) fn begin(ctx: &'a Ctx) -> Batch<'a> {
        // SAFETY: pthread_self has no preconditions.
        ctx.in_submit.store(unsafe { libc::pthread_self() } as usize, Ordering::Relaxed);
        Batch(ctx)
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.0.in_submit.store(0, Ordering::Relaxed);
        self.0.forget_submit_files();
        if self.0.submit_creds_used.load(Ordering::Relaxed) {
            self.0.submit_creds_used.store(false, Ordering::Relaxed);
            self.0.submit_creds.lock().take();
        }
    }
}

/// A ring's registered personalities.
pub(crate) struct Personalities {
    map: BTreeMap<u16, Arc<Creds>>,
    /// Where the search for a free id starts: ids are handed out
    /// cyclically from 1, as the kernel does.
    next: u16,
}

impl Personalities {
    pub(crate) const fn new() -> Personalities {
        Personalities { map: BTreeMap::new(), next: 1 }
    }
}

/// IORING_REGISTER_PERSONALITY: returns the new id.
pub(crate) fn register(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if arg != 0 || nr != 0 {
        return -libc::EINVAL;
    }
    let c = match Creds::current() {
        Ok(c) => Arc::new(c),
        Err(e) => return e,
    };
    let mut p = ctx.personalities.lock();
    let start = p.next;
    let mut id = start;
    while p.map.contains_key(&id) {
        id = if id == u16::MAX { 1 } else { id + 1 };
        if id == start {
            return -libc::EBUSY;
        }
    }
    p.map.insert(id, c);
    p.next = if id == u16::MAX { 1 } else { id + 1 };
    id as i32
}

/// IORING_UNREGISTER_PERSONALITY of id `nr`.
pub(crate) fn unregister(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if arg != 0 {
        return -libc::EINVAL;
    }
    match u16::try_from(nr).ok().and_then(|id| ctx.personalities.lock().map.remove(&id)) {
        Some(_) => 0,
        None => -libc::EINVAL,
    }
}

/// At submission: the credentials of personality `id` (-EINVAL: none
/// such). The request keeps them if the id is unregistered meanwhile.
pub(crate) fn personality(ctx: &Ctx, id: u16) -> Result<Arc<Creds>, i32> {
    ctx.personalities.lock().map.get(&id).cloned().ok_or(-libc::EINVAL)
}

/// A thread for the nursery to start: what it runs, and what to call (on
/// the nursery) if it cannot be started.
type Job = (extern "C" fn(*mut libc::c_void) -> *mut libc::c_void, usize, fn());

/// The thread that starts workers, so that they all have its credentials.
/// Starting one is asynchronous: the caller queues a job and goes on, so
/// a submit call that needs eight workers does not wait for eight thread
/// creations, each a round trip to the nursery.
struct Nursery {
    /// The process it lives in (0: none); a forked child has none.
    pid: u32,
    thread: Option<libc::pthread_t>,
    /// The credentials of the thread that set up this process's first
    /// engine ring: the one to start the nursery must have them.
    base: Option<Creds>,
    base_pid: u32,
    jobs: Vec<Job>,
    /// Each nursery started has the next generation; those up to
    /// `stopped` end once no job is left. So a nursery being stopped (and
    /// joined) ends even if the next is started meanwhile.
    gen: u32,
    stopped: u32,
}

static NURSERY: Mutex<Nursery> =
    Mutex::new(Nursery { pid: 0, thread: None, base: None, base_pid: 0, jobs: Vec::new(), gen: 0, stopped: 0 });
/// Bumped when jobs or a stop are posted.
static NURSERY_SEQ: AtomicU32 = AtomicU32::new(0);
/// One thread at a time starts threads or a nursery in `spawn`.
static SPAWNING: Mutex<()> = Mutex::new(());

fn pid() -> u32 {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() as u32 }
}

fn post() {
    NURSERY_SEQ.fetch_add(1, Ordering::SeqCst);
    // Mostly one nursery; two while one being stopped is not yet gone.
    futex_wake(&NURSERY_SEQ, i32::MAX);
}

extern "C" fn nursery_main(gen: *mut libc::c_void) -> *mut libc::c_void {
    let gen = gen as usize as u32;
    os::name_thread("uring-rs-spawn", false);
    loop {
        let seq = NURSERY_SEQ.load(Ordering::SeqCst);
        let job = {
            let mut n = NURSERY.lock();
            match n.jobs.pop() {
                Some(j) => Some(j),
                None if n.stopped.wrapping_sub(gen) as i32 >= 0 => return core::ptr::null_mut(),
                None => None,
            }
        };
        match job {
            Some((f, arg, failed)) => {
                if os::spawn(f, arg as *mut libc::c_void).is_err() {
                    failed();
                }
            }
            None => {
                futex_wait(&NURSERY_SEQ, seq, None);
            }
        }
    }
}

/// At engine ring setup: the first ring of the process records its
/// setup thread's credentials for the nursery.
pub(crate) fn note_setup() {
    let pid = pid();
    let mut n = NURSERY.lock();
    if n.base_pid != pid {
        n.base = Creds::current().ok();
        n.base_pid = pid;
    }
}

/// When no engine ring is left: the nursery is told to end, once it has
/// started the threads asked of it. Returns it, for `join_nursery`.
pub(crate) fn stop_nursery() -> Option<libc::pthread_t> {
    let t = {
        let mut n = NURSERY.lock();
        if n.pid != pid() {
            return None;
        }
        n.pid = 0;
        n.stopped = n.gen;
        n.thread.take()
    };
    post();
    t
}

/// Waits for a nursery `stop_nursery` stopped to end.
pub(crate) fn join_nursery(t: Option<libc::pthread_t>) {
    if let Some(t) = t {
        os::join(t);
    }
}

/// Has `n` threads running `f(arg)` started by the nursery, without
/// waiting for them; `failed` runs on the nursery for each that could not
/// be. Returns how many the calling thread tried to start itself and could
/// not; the caller runs `failed` for those.
///
/// With no nursery yet, a thread with the setup thread's credentials
/// starts the first thread itself (one clone, rather than one for the
/// nursery and then a wait for the nursery's), and the nursery only if
/// more are asked for. A thread with other credentials starts them all
/// itself, as does any thread when the nursery cannot be had.
pub(crate) fn spawn(
    f: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    arg: *mut libc::c_void,
    n: u32,
    failed: fn(),
) -> u32 {
    let direct = |k: u32| (0..k).filter(|_| os::spawn(f, arg).is_err()).count() as u32;
    let _one = SPAWNING.lock();
    let pid = pid();
    let mut nu = NURSERY.lock();
    let mut lost = 0;
    let mut n = n;
    if nu.pid != pid {
        let fit = nu.base_pid != pid || nu.base.as_ref().is_none_or(|b| Creds::current().is_ok_and(|c| c == *b));
        drop(nu);
        if !fit {
            return direct(n);
        }
        lost = direct(1);
        n -= 1;
        if n == 0 {
            return lost;
        }
        nu = NURSERY.lock();
        let gen = nu.gen.wrapping_add(1);
        match os::spawn_joinable(nursery_main, gen as usize as *mut libc::c_void) {
            Ok(t) => {
                nu.gen = gen;
                nu.pid = pid;
                nu.thread = Some(t);
            }
            Err(_) => {
                drop(nu);
                return lost + direct(n);
            }
        }
    }
    for _ in 0..n {
        nu.jobs.push((f, arg as usize, failed));
    }
    drop(nu);
    post();
    lost
}

/// In a forked child: the nursery stayed behind in the parent.
///
/// # Safety
/// Only from the atfork child handler.
pub(crate) unsafe fn after_fork_child() {
    // SAFETY: forwarded contract.
    unsafe {
        NURSERY.reset_after_fork();
        SPAWNING.reset_after_fork();
    }
    let mut n = NURSERY.lock();
    n.pid = 0;
    n.thread = None;
    n.base = None;
    n.base_pid = 0;
    n.jobs = Vec::new();
}
