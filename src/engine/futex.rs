//! IORING_OP_FUTEX_WAIT, _WAKE and _WAITV (futex2 semantics: a 32-bit
//! word, FUTEX2_PRIVATE and FUTEX2_MPOL accepted, every other size and
//! FUTEX2_NUMA refused with -EINVAL, as the 6.18 kernel does).
//!
//! A waiting request must hear of wakes made by any thread with a plain
//! futex(2) call, so the kernel has to see a real waiter on the word. The
//! engine keeps one registry of waiting entries (a FUTEX_WAITV request has
//! one per futex) and "watcher" threads, each sleeping in one futex_waitv(2)
//! over up to 127 entries plus a control word of its own: one thread per
//! 127 waiting futexes, not one per waiter, and none while nothing waits.
//!
//! - A wake by a FUTEX_WAKE request of an engine ring first ends the
//!   registry's matching waiters itself (in order, honouring the bitset,
//!   counted exactly), then wakes the rest with the system call.
//! - A watcher woken on entry i learns from futex_waitv only the highest
//!   woken index; its entries on the same word were queued in order, so the
//!   woken ones on that word are exactly those up to i. An entry on another
//!   word that was woken meanwhile is found when the watcher re-arms: the
//!   kernel compares every word with its expected value (-EAGAIN), and each
//!   entry whose word changed ends. A wake that reached an entry whose
//!   request had already ended is passed on with a new wake of one.
//! - Adding or removing entries bumps the control word, and the watcher
//!   re-arms with the new set. A FUTEX_WAKE whose count the registry did
//!   not use up waits (one thread switch) until every watcher re-armed
//!   without the entries that left it before it makes its system call, so
//!   that the kernel counts no ended request.
//! - futex_waitv has no bitsets (its entries match any), so FUTEX_WAITs
//!   with a bitset other than FUTEX_BITSET_MATCH_ANY are grouped by word,
//!   expected value, bitset and flags; each group gets a "solo" watcher
//!   that sleeps in FUTEX_WAIT_BITSET and, when woken, ends every wait of
//!   its group (the kernel counts the group as one waiter, so a wake of
//!   one may end several: spurious wake-ups, never lost ones). It wakes
//!   every 20 ms to see whether its group emptied; the last wait leaving
//!   also wakes its word with its bitset, which may wake other waiters of
//!   that bitset spuriously. At most `solo_max()` groups get a thread;
//!   beyond that, bitset waits join the shared watchers, where any wake of
//!   their word from outside the engine ends them, whatever its bitset
//!   (engine FUTEX_WAKEs still honour it).
//!
//! Cost and limits: one wake-up of the watcher (and one re-arm system call)
//! per wake, and per change of its set. The guarantee is that of a thread
//! looping on futex_wait(2): a wake that follows a change of the word (the
//! futex protocol) is never lost; a bare wake of an unchanged word that
//! comes from outside the engine while a watcher re-arms can be missed.
//! Threads: one per 127 waiting futexes, plus at most `solo_max()` for
//! bitset groups, however many waits there are.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::sync::atomic::{AtomicU32, Ordering};

use super::ctx::Ctx;
use super::lock::Mutex;
use super::opdef::{OpDef, BASE};
use super::req::{self, st, Issued, Mode, OpData, Req, ReqPtr};
use super::{os, table};

const SIZE_MASK: u32 = 0x03;
const SIZE_U32: u32 = 0x02;
const NUMA: u32 = 0x04;
const MPOL: u32 = 0x08;
const PRIVATE: u32 = 0x80;
const MATCH_ANY: u32 = u32::MAX;
const WAITV_MAX: u32 = 128;
/// Entries per watcher: futex_waitv takes 128, one is the control word.
const PER_WATCHER: u32 = WAITV_MAX - 1;
const SYS_FUTEX_WAKE: libc::c_long = 454;

/// How many solo watchers (bitset groups) may run at once: the CPUs, at
/// least 2.
fn solo_max() -> usize {
    os::cpus().max(2) as usize
}

/// struct futex_waitv.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct WaitV {
    val: u64,
    uaddr: u64,
    flags: u32,
    reserved: u32,
}

/// What a futex request waits for or wakes (`OpData::Futex`).
pub(crate) enum FutexData {
    /// FUTEX_WAIT (val: expected value) or FUTEX_WAKE (val: how many).
    One { addr: u64, val: u32, mask: u32, flags: u32 },
    /// FUTEX_WAITV's copied vector.
    Vec(Box<[WaitV]>),
}

/// The flags futex2 accepts (32-bit words only; no NUMA word).
fn valid_flags(f: u32) -> bool {
    f & !(SIZE_MASK | NUMA | MPOL | PRIVATE) == 0 && f & SIZE_MASK == SIZE_U32 && f & NUMA == 0
}

fn fits(v: u64) -> bool {
    v <= u32::MAX as u64
}

fn prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.len != 0 || s.op_flags != 0 || s.buf_index != 0 || s.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    let flags = s.fd as u32;
    if !valid_flags(flags) || !fits(s.off) || !fits(s.addr3) {
        return Err(-libc::EINVAL);
    }
    r.io = OpData::Futex(FutexData::One { addr: s.addr, val: s.off as u32, mask: s.addr3 as u32, flags });
    Ok(())
}

fn prep_waitv(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.fd != 0 || s.buf_index != 0 || s.file_index != 0 || s.off != 0 || s.op_flags != 0 || s.addr3 != 0 {
        return Err(-libc::EINVAL);
    }
    if s.len == 0 || s.len > WAITV_MAX {
        return Err(-libc::EINVAL);
    }
    let mut v: Box<[WaitV]> = (0..s.len).map(|_| WaitV::default()).collect();
    os::copy_from_user(v.as_mut_ptr() as *mut u8, s.addr, v.len() * core::mem::size_of::<WaitV>())?;
    if v.iter().any(|w| !valid_flags(w.flags) || w.reserved != 0 || !fits(w.val) || w.uaddr % 4 != 0) {
        return Err(-libc::EINVAL);
    }
    r.io = OpData::Futex(FutexData::Vec(v));
    Ok(())
}

/// The 32-bit word at `addr`, or -EFAULT.
fn read_word(addr: u64) -> Result<u32, i32> {
    let mut v = 0u32;
    os::copy_from_user(&mut v as *mut u32 as *mut u8, addr, 4)?;
    Ok(v)
}

/// One waiting entry.
struct Slot {
    /// Names the waiting request (all its entries share it).
    serial: u64,
    req: ReqPtr,
    ctx: *const Ctx,
    /// Index in a FUTEX_WAITV vector, the result it completes with (0 for
    /// FUTEX_WAIT).
    entry: u32,
    addr: u64,
    val: u32,
    mask: u32,
    flags: u32,
    watcher: usize,
}

struct Watcher {
    /// The control word the thread also waits on (never freed).
    ctrl: &'static AtomicU32,
    /// The control value of the set the thread last armed: once it has
    /// reached a value, no older entry is queued in the kernel any more.
    armed: &'static AtomicU32,
    /// The thread's id (it never waits for itself).
    tid: i32,
    /// The group of bitset FUTEX_WAITs a "solo" watcher serves; None for
    /// a shared one (futex_waitv has no bitsets).
    solo: Option<Key>,
    entries: u32,
    running: bool,
}

/// What every wait of a solo watcher's group waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    addr: u64,
    val: u32,
    mask: u32,
    flags: u32,
}

struct Registry {
    /// In the order the entries were added (the order wakes follow).
    slots: Vec<Slot>,
    watchers: Vec<Watcher>,
    next_serial: u64,
}

// SAFETY: the raw pointers name requests and rings that stay alive while
// their entries are in the registry (they are removed before completion).
unsafe impl Send for Registry {}

static REG: Mutex<Registry> = Mutex::new(Registry { slots: Vec::new(), watchers: Vec::new(), next_serial: 1 });

/// Makes watcher `w` re-arm with its current entries.
fn kick(w: &Watcher) {
    w.ctrl.fetch_add(1, Ordering::SeqCst);
    super::lock::futex_wake(w.ctrl, 1);
}

impl Registry {
    /// A watcher for one more entry, started if need be: the solo watcher
    /// of its group for a wait with a bitset (while there are fewer than
    /// `solo_max()` groups), else a shared one with room.
    fn watcher_for(&mut self, k: Key) -> Result<usize, i32> {
        let solo = k.mask != MATCH_ANY && {
            if let Some(i) = self.watchers.iter().position(|w| w.running && w.solo == Some(k)) {
                return Ok(i);
            }
            self.watchers.iter().filter(|w| w.running && w.solo.is_some()).count() < solo_max()
        };
        if !solo {
            if let Some(i) = self.watchers.iter().position(|w| w.running && w.solo.is_none() && w.entries < PER_WATCHER)
            {
                return Ok(i);
            }
        }
        let i = match self.watchers.iter().position(|w| !w.running) {
            Some(i) => i,
            None => {
                let ctrl: &'static AtomicU32 = Box::leak(Box::new(AtomicU32::new(0)));
                let armed: &'static AtomicU32 = Box::leak(Box::new(AtomicU32::new(0)));
                self.watchers.push(Watcher { ctrl, armed, tid: 0, solo: None, entries: 0, running: false });
                self.watchers.len() - 1
            }
        };
        self.watchers[i].solo = solo.then_some(k);
        self.watchers[i].tid = 0;
        os::spawn(watch, i as *mut c_void)?;
        self.watchers[i].running = true;
        Ok(i)
    }

    /// Removes every entry of the request `pick` names; kicks the watchers
    /// that held them.
    fn remove(&mut self, mut pick: impl FnMut(&Slot) -> bool) {
        let mut i = 0;
        while i < self.slots.len() {
            if pick(&self.slots[i]) {
                let s = self.slots.remove(i);
                let w = &mut self.watchers[s.watcher];
                w.entries -= 1;
                match w.solo {
                    None => kick(w),
                    // The rest of a group still waits for the same wake:
                    // the watcher's sleep stays as it is.
                    Some(_) if w.entries != 0 => {}
                    Some(k) => {
                        kick(w);
                        // A solo watcher sleeps on the word itself.
                        // SAFETY: as in `wake`.
                        unsafe { libc::syscall(SYS_FUTEX_WAKE, k.addr, k.mask as u64, i32::MAX as u64, k.flags) };
                    }
                }
            } else {
                i += 1;
            }
        }
    }

    /// Takes the request behind entry `idx` from its waiting state; None if
    /// a canceller owns it. Its entries leave the registry either way only
    /// when it is ours.
    fn claim(&mut self, idx: usize) -> Option<(ReqPtr, *const Ctx, i32)> {
        let s = &self.slots[idx];
        let (serial, req, ctx, entry) = (s.serial, s.req, s.ctx, s.entry);
        // SAFETY: the entry is in the registry, so its ring is alive.
        if !unsafe { &*ctx }.claim(req, st::ARMED, st::IDLE) {
            return None;
        }
        self.remove(|s| s.serial == serial);
        Some((req, ctx, entry as i32))
    }
}

/// Completes requests taken from the registry (as wake-ups, like the
/// kernel's task work).
fn finish(done: Vec<(ReqPtr, *const Ctx, i32)>) {
    for (req, ctx, res) in done {
        // SAFETY: a claimed request keeps its ring alive.
        let ctx = unsafe { &*ctx };
        let _ring = table::hold(ctx);
        req::complete(ctx, req, res, 0, Mode::Reactor);
    }
}

fn wait(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let one;
    let (entries, mask): (&[WaitV], u32) = match &r.io {
        OpData::Futex(FutexData::One { addr, val, mask, flags }) => {
            if *mask == 0 {
                return Issued::Done(-libc::EINVAL, 0);
            }
            one = [WaitV { val: *val as u64, uaddr: *addr, flags: *flags, reserved: 0 }];
            (&one, *mask)
        }
        OpData::Futex(FutexData::Vec(v)) => (v, MATCH_ANY),
        _ => unreachable!(),
    };
    if entries.iter().any(|w| w.uaddr % 4 != 0) {
        return Issued::Done(-libc::EINVAL, 0);
    }
    // The words are compared and the entries added under the registry
    // lock, which engine wakes take too; outside wakes are caught by the
    // watcher's own comparison when it arms.
    let mut reg = REG.lock();
    for w in entries {
        match read_word(w.uaddr) {
            Err(e) => return Issued::Done(e, 0),
            Ok(v) if v as u64 != w.val => return Issued::Done(-libc::EAGAIN, 0),
            Ok(_) => {}
        }
    }
    let serial = reg.next_serial;
    reg.next_serial += 1;
    for (i, w) in entries.iter().enumerate() {
        let key = Key { addr: w.uaddr, val: w.val as u32, mask, flags: w.flags };
        let watcher = match reg.watcher_for(key) {
            Ok(x) => x,
            Err(e) => {
                reg.remove(|s| s.serial == serial);
                return Issued::Done(e, 0);
            }
        };
        reg.slots.push(Slot {
            serial,
            req,
            ctx,
            entry: i as u32,
            addr: w.uaddr,
            val: w.val as u32,
            mask,
            flags: w.flags,
            watcher,
        });
        reg.watchers[watcher].entries += 1;
        if reg.watchers[watcher].solo.is_none() {
            kick(&reg.watchers[watcher]);
        }
    }
    // Listed while the registry is held: a canceller that finds it waits
    // for the lock (in `forget`) and sees the entries. The request is not
    // ours to touch once the lock is dropped.
    ctx.list(req, st::ARMED);
    drop(reg);
    Issued::Queued
}

fn wake(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let OpData::Futex(FutexData::One { addr, val: nr, mask, flags }) = unsafe { req.get() }.io else { unreachable!() };
    if addr % 4 != 0 || mask == 0 {
        return Issued::Done(-libc::EINVAL, 0);
    }
    let mut done = Vec::new();
    let mut stale = Vec::new();
    {
        let mut reg = REG.lock();
        let mut i = 0;
        while i < reg.slots.len() && (done.len() as u32) < nr {
            let s = &reg.slots[i];
            if s.addr == addr && s.mask & mask != 0 {
                if let Some(c) = reg.claim(i) {
                    done.push(c);
                    // Its entries are gone: look at the same index again.
                    continue;
                }
            }
            i += 1;
        }
        // Watchers that have not re-armed since entries left them.
        let me = gettid();
        for w in reg.watchers.iter().filter(|w| w.running && w.tid != me) {
            let want = w.ctrl.load(Ordering::SeqCst);
            if w.armed.load(Ordering::SeqCst) != want {
                stale.push((w.armed, want));
            }
        }
    }
    let k = done.len() as i64;
    finish(done);
    if k == nr as i64 && k != 0 {
        // All woken here: the address was valid, no system call needed.
        return Issued::Done(k as i32, 0);
    }
    // Ended requests may still be queued in the kernel by watchers that
    // have not re-armed, where the system call below would count them:
    // wait until they have (a thread switch; never on a watcher, which has
    // nothing queued while it runs and must not wait for another).
    if !on_watcher() {
        for (armed, want) in stale {
            settle(armed, want);
        }
    }
    // SAFETY: futex_wake(2) uses the address as a key and fails with
    // EFAULT or EINVAL on a bad one.
    let m = unsafe { libc::syscall(SYS_FUTEX_WAKE, addr, mask as u64, (nr as i64 - k) as u64, flags) };
    let res = if m < 0 && k == 0 { os::errno() as i64 } else { k + m.max(0) };
    Issued::Done(res as i32, 0)
}

fn gettid() -> i32 {
    // SAFETY: no arguments.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Whether the calling thread is a watcher.
fn on_watcher() -> bool {
    let me = gettid();
    REG.lock().watchers.iter().any(|w| w.running && w.tid == me)
}

/// Waits until a watcher has armed a set at least as new as `want` (or has
/// exited, which leaves its control value behind for good: bounded wait).
fn settle(armed: &AtomicU32, want: u32) {
    let deadline = os::now_ns() + 100_000_000;
    loop {
        let cur = armed.load(Ordering::SeqCst);
        if cur.wrapping_sub(want) as i32 >= 0 || os::now_ns() >= deadline {
            return;
        }
        super::lock::futex_wait(armed, cur, Some(os::now_ns() + 1_000_000));
    }
}

/// Cancellation took a waiting request: its entries leave the registry.
fn forget(req: ReqPtr) {
    REG.lock().remove(|s| s.req == req);
}

/// A watcher thread: waits on its entries, ends the requests woken.
extern "C" fn watch(arg: *mut c_void) -> *mut c_void {
    os::name_thread("uring-rs-futex", false);
    let me = arg as usize;
    let mut v: Vec<WaitV> = Vec::new();
    let mut serials: Vec<u64> = Vec::new();
    let mut solo;
    loop {
        let armed = {
            let mut reg = REG.lock();
            let w = &mut reg.watchers[me];
            if w.tid == 0 {
                w.tid = gettid();
            }
            if w.entries == 0 {
                w.running = false;
                w.armed.store(w.ctrl.load(Ordering::SeqCst), Ordering::SeqCst);
                super::lock::futex_wake(w.armed, i32::MAX);
                drop(reg);
                super::lock::thread_ended();
                return core::ptr::null_mut();
            }
            let (ctrl, armed) = (w.ctrl, w.armed);
            solo = w.solo;
            v.clear();
            serials.clear();
            v.push(WaitV {
                val: ctrl.load(Ordering::SeqCst) as u64,
                uaddr: ctrl.as_ptr() as u64,
                flags: SIZE_U32 | PRIVATE,
                reserved: 0,
            });
            for s in reg.slots.iter().filter(|s| s.watcher == me) {
                v.push(WaitV { val: s.val as u64, uaddr: s.addr, flags: s.flags, reserved: 0 });
                serials.push(s.serial);
            }
            armed.store(v[0].val as u32, Ordering::SeqCst);
            armed
        };
        super::lock::futex_wake(armed, i32::MAX);
        let ret = match solo {
            Some(k) => sleep_solo(k),
            None => sleep(&v),
        };
        let mut done = Vec::new();
        let mut pass_on = Vec::new();
        {
            let mut reg = REG.lock();
            if let (Some(k), 1) = (solo, ret) {
                // The group is one waiter to the kernel: end all of it,
                // the waits that joined since it armed too.
                let group: Vec<u64> = reg.slots.iter().filter(|s| s.watcher == me).map(|s| s.serial).collect();
                if group.is_empty() {
                    pass_on.push((k.addr, k.flags, k.mask));
                }
                for serial in group {
                    if let Some(c) = find(&reg, serial, k.addr).and_then(|idx| reg.claim(idx)) {
                        done.push(c);
                    }
                }
            } else if ret >= 1 {
                // Entries on the woken word up to the one reported.
                let i = ret as usize;
                let word = v[i].uaddr;
                for j in 1..=i {
                    if v[j].uaddr != word {
                        continue;
                    }
                    match find(&reg, serials[j - 1], v[j].uaddr) {
                        Some(idx) => {
                            if let Some(c) = reg.claim(idx) {
                                done.push(c);
                            }
                        }
                        None => pass_on.push((v[j].uaddr, v[j].flags, MATCH_ANY)),
                    }
                }
            } else if ret < 0 {
                // A word changed (or went away): end those entries.
                for j in 1..v.len() {
                    let Some(idx) = find(&reg, serials[j - 1], v[j].uaddr) else { continue };
                    let res = match read_word(v[j].uaddr) {
                        Ok(w) if w as u64 == v[j].val => continue,
                        Ok(_) => None,
                        Err(e) => Some(e),
                    };
                    if let Some((req, ctx, entry)) = reg.claim(idx) {
                        done.push((req, ctx, res.unwrap_or(entry)));
                    }
                }
            }
        }
        for (addr, flags, mask) in pass_on {
            // SAFETY: as in `wake`; the word was a valid futex when armed.
            unsafe { libc::syscall(SYS_FUTEX_WAKE, addr, mask as u64, 1u64, flags) };
        }
        if done.is_empty() && ret < 0 && ret != -(libc::EAGAIN as i64) {
            // Nothing to end (a canceller is about to remove it): let it.
            // SAFETY: no preconditions.
            unsafe { libc::sched_yield() };
        }
        finish(done);
    }
}

/// futex_waitv over `v`: the index woken, or -errno.
fn sleep(v: &[WaitV]) -> i64 {
    // SAFETY: a live vector of `v.len()` (<= 128) futex_waitv entries, no
    // timeout.
    let ret = unsafe { libc::syscall(libc::SYS_futex_waitv, v.as_ptr(), v.len() as u32, 0u32, 0usize, 0usize) };
    if ret < 0 {
        os::errno() as i64
    } else {
        ret
    }
}

/// A solo watcher's bitset wait for its group, answered as `sleep` would
/// (1: woken). It wakes every 20 ms to look at its set again: its control
/// word is not part of the wait.
fn sleep_solo(k: Key) -> i64 {
    let private = if k.flags & PRIVATE != 0 { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    let ts = os::ns_to_timespec(os::now_ns() + 20_000_000);
    // SAFETY: FUTEX_WAIT_BITSET reads the word (failing with EFAULT if it
    // cannot) and the absolute timespec.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_futex,
            k.addr,
            libc::FUTEX_WAIT_BITSET | private,
            k.val,
            &ts as *const libc::timespec,
            0usize,
            k.mask,
        )
    };
    match ret {
        0 => 1,
        _ if os::errno() == -libc::ETIMEDOUT => 0,
        _ => os::errno() as i64,
    }
}

/// The registry index of the entry `serial` has on `addr`, if still there.
fn find(reg: &Registry, serial: u64, addr: u64) -> Option<usize> {
    reg.slots.iter().position(|s| s.serial == serial && s.addr == addr)
}

/// After the last ring's teardown: lets the watchers, which exit once they
/// have no entries, finish, so no engine thread outlives the rings.
pub(crate) fn maybe_stop() {
    super::lock::wait_threads_ended(|| !REG.lock().watchers.iter().any(|w| w.running));
}

/// In a forked child: the watchers did not come along, and the parent's
/// waiting requests are not the child's to touch.
///
/// # Safety
/// Only from the atfork child handler.
pub(crate) unsafe fn after_fork_child() {
    // SAFETY: forwarded contract: no other thread exists.
    unsafe { REG.reset_after_fork() };
    let mut reg = REG.lock();
    super::fork::keep(core::mem::take(&mut reg.slots));
    for w in reg.watchers.iter_mut() {
        w.entries = 0;
        w.running = false;
    }
}

pub(crate) const FUTEX_WAIT: OpDef =
    OpDef { prep, issue: wait, creds: false, disarm: forget, cancel_count: true, cancel_fd: false, ..BASE };
pub(crate) const FUTEX_WAITV: OpDef = OpDef { prep: prep_waitv, ..FUTEX_WAIT };
pub(crate) const FUTEX_WAKE: OpDef = OpDef { prep, issue: wake, creds: false, ..BASE };
