//! Personalities (IORING_REGISTER_PERSONALITY): a ring keeps the
//! credentials of the thread that registered them under an id, and a
//! request naming that id in `sqe->personality` runs with them.
//!
//! Linux keeps credentials per thread; glibc's set*id() calls change every
//! thread of the process, the raw system calls only the caller. A request
//! whose credentials differ from the running thread's goes to a worker,
//! which takes them on with the raw calls around the operation and then
//! goes back to its own.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::ctx::Ctx;
use super::os;

/// Supplementary groups kept per personality (the kernel's NGROUPS_MAX).
const NGROUPS_MAX: usize = 65536;

/// User and group ids (real, effective, saved) and supplementary groups.
#[derive(PartialEq, Eq)]
pub(crate) struct Creds {
    uids: [u32; 3],
    gids: [u32; 3],
    groups: Vec<u32>,
}

impl Creds {
    /// The calling thread's credentials.
    fn current() -> Result<Creds, i32> {
        let (mut u, mut g) = ([0u32; 3], [0u32; 3]);
        let (up, gp) = (u.as_mut_ptr(), g.as_mut_ptr());
        // SAFETY: each call writes three ids into a live local array.
        let ok = unsafe {
            libc::syscall(libc::SYS_getresuid, up, up.add(1), up.add(2)) == 0
                && libc::syscall(libc::SYS_getresgid, gp, gp.add(1), gp.add(2)) == 0
        };
        if !ok {
            return Err(os::errno());
        }
        // SAFETY: a size query writes nothing.
        let n = unsafe { libc::syscall(libc::SYS_getgroups, 0, core::ptr::null_mut::<u32>()) };
        if n < 0 {
            return Err(os::errno());
        }
        let mut groups = alloc::vec![0u32; (n as usize).min(NGROUPS_MAX)];
        // SAFETY: room for `groups.len()` ids.
        let n = unsafe { libc::syscall(libc::SYS_getgroups, groups.len(), groups.as_mut_ptr()) };
        if n < 0 {
            return Err(os::errno());
        }
        groups.truncate(n as usize);
        Ok(Creds { uids: u, gids: g, groups })
    }

    /// Makes the calling thread run with `self`, from `from` (its current
    /// credentials); returns what it set. A thread with effective uid 0
    /// keeps 0 as its saved uid, so that it can come back: the access
    /// checks go by the effective (and fs) ids. Groups need privilege: a
    /// privileged thread sets them before giving up its uids, one without
    /// first takes the target's uids.
    fn switch(&self, from: &Creds) -> Result<Creds, i32> {
        let mut to = Creds { uids: self.uids, gids: self.gids, groups: self.groups.clone() };
        if from.uids[1] == 0 {
            to.uids[2] = 0;
        }
        let ids = |nr: libc::c_long, v: &[u32; 3]| {
            // SAFETY: setres[ug]id takes three ids by value.
            os::cvt32(unsafe { libc::syscall(nr, v[0], v[1], v[2]) } as i32)
        };
        let uids = || if to.uids != from.uids { ids(libc::SYS_setresuid, &to.uids) } else { 0 };
        let rest = || {
            if to.groups != from.groups {
                // SAFETY: a live array of the length given.
                let r = os::cvt32(unsafe { libc::syscall(libc::SYS_setgroups, to.groups.len(), to.groups.as_ptr()) } as i32);
                if r < 0 {
                    return r;
                }
            }
            if to.gids != from.gids {
                ids(libc::SYS_setresgid, &to.gids)
            } else {
                0
            }
        };
        let r = if from.uids[1] == 0 {
            match rest() {
                0 => uids(),
                e => e,
            }
        } else {
            match uids() {
                0 => rest(),
                e => e,
            }
        };
        if r < 0 {
            Err(r)
        } else {
            Ok(to)
        }
    }
}

/// A ring's registered personalities, and the credentials of requests
/// in flight (by request id: taken at submission, as the kernel takes its
/// reference, so that unregistering does not change them).
pub(crate) struct Personalities {
    map: BTreeMap<u16, Arc<Creds>>,
    /// Where the search for a free id starts: ids are handed out
    /// cyclically from 1, as the kernel does.
    next: u16,
    inflight: BTreeMap<u64, Arc<Creds>>,
}

impl Personalities {
    pub(crate) const fn new() -> Personalities {
        Personalities { map: BTreeMap::new(), next: 1, inflight: BTreeMap::new() }
    }

    /// In a forked child: the parent's requests stay the parent's.
    pub(crate) fn forget_inflight(&mut self) {
        super::fork::keep(core::mem::take(&mut self.inflight));
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

/// At submission: request `req_id` runs with personality `id` (-EINVAL:
/// no such personality).
pub(crate) fn take(ctx: &Ctx, id: u16, req_id: u64) -> Result<(), i32> {
    let mut p = ctx.personalities.lock();
    let c = p.map.get(&id).cloned().ok_or(-libc::EINVAL)?;
    p.inflight.insert(req_id, c);
    Ok(())
}

/// Request `req_id` is freed.
pub(crate) fn release(ctx: &Ctx, req_id: u64) {
    let c = ctx.personalities.lock().inflight.remove(&req_id);
    drop(c);
}

fn of(ctx: &Ctx, req_id: u64) -> Option<Arc<Creds>> {
    ctx.personalities.lock().inflight.get(&req_id).cloned()
}

/// Whether the calling thread runs with other credentials than request
/// `req_id`'s.
pub(crate) fn differ(ctx: &Ctx, req_id: u64) -> bool {
    match (of(ctx, req_id), Creds::current()) {
        (Some(c), Ok(cur)) => *c != cur,
        _ => true,
    }
}

/// Runs `f` with request `req_id`'s credentials (on a worker: see the
/// module comment); -EPERM or the like if the thread cannot take them on.
pub(crate) fn with<T>(ctx: &Ctx, req_id: u64, f: impl FnOnce() -> T) -> Result<T, i32> {
    let c = of(ctx, req_id).ok_or(-libc::EINVAL)?;
    let own = Creds::current()?;
    if own == *c {
        return Ok(f());
    }
    let now = match c.switch(&own) {
        Ok(now) => now,
        Err(e) => {
            // Part of the switch may have happened: undo it.
            match Creds::current() {
                Ok(cur) if cur == own => {}
                Ok(cur) if own.switch(&cur).is_ok() => {}
                // SAFETY: abort has no preconditions.
                _ => unsafe { libc::abort() },
            }
            return Err(e);
        }
    };
    let out = f();
    // Going back cannot fail (`switch` keeps the way back); were it to, a
    // worker must not go on with foreign credentials.
    if own.switch(&now).is_err() {
        // SAFETY: abort has no preconditions.
        unsafe { libc::abort() };
    }
    Ok(out)
}
