//! How a thread sleeps until a ring posts something.
//!
//! A thread that serves the ring's readiness set sleeps in epoll_wait on
//! it, running ready requests as they come (see `readiness.rs`). Other
//! plain waits sleep on the ring's `cq_seq` futex. Other waits with a
//! signal mask need the mask swapped atomically with the sleep, which a
//! futex cannot do: they sleep in ppoll() on an eventfd of their own (one
//! per thread, kept for the thread's life) that posters signal.

use core::sync::atomic::{AtomicU32, Ordering};

use super::ctx::{off, Ctx};
use super::lock::{futex_wait, futex_wait_shared};
use super::os;

extern "C" fn close_thread_fd(v: *mut core::ffi::c_void) {
    let fd = v as usize as i32 - 1;
    // Not if closed behind the engine's back: the number may be another's.
    if os::anon_ok(fd) {
        os::close(fd);
    }
}

/// The calling thread's wake eventfd (value: fd + 1).
static THREAD_FD: os::ThreadKey = os::ThreadKey::new(close_thread_fd);

/// The calling thread's wake eventfd, created on first use.
fn thread_fd() -> Result<i32, i32> {
    let v = THREAD_FD.get() as usize;
    if v != 0 {
        return Ok(v as i32 - 1);
    }
    let fd = os::eventfd();
    if fd < 0 {
        return Err(fd);
    }
    // The value is an integer, not a pointer.
    if !THREAD_FD.set((fd as usize + 1) as *mut core::ffi::c_void) {
        os::close(fd);
        return Err(-libc::ENOMEM);
    }
    Ok(fd)
}

/// Forgets the calling thread's wake eventfd, found closed behind the
/// engine's back: its number may be another file's by now.
fn forget_thread_fd() {
    // Clearing the value runs no destructor.
    THREAD_FD.set(core::ptr::null_mut());
}

/// In a forked child: the inherited wake fd shares its eventfd with the
/// parent's thread; drop it.
///
/// # Safety
/// Only from the atfork child handler.
pub(crate) unsafe fn after_fork_child() {
    if THREAD_FD.made() {
        let v = THREAD_FD.get() as usize;
        if v != 0 {
            os::close(v as i32 - 1);
            THREAD_FD.set(core::ptr::null_mut());
        }
    }
}

/// How long a signal-mask wait on a forked ring sleeps at most: posters
/// in other processes cannot reach its eventfd.
const FORKED_SIG_NAP_NS: u64 = 1_000_000;
/// How long any other wait sleeps at most (see `sleep`).
const NAP_NS: u64 = 1_000_000_000;

/// A thread registered as waiting on a ring.
pub(crate) struct Waiter<'a> {
    ctx: &'a Ctx,
    sig: Option<(libc::sigset_t, i32)>,
    /// Counted in the forked ring's `off::X_WAITERS`: sleeps on `off::X_SEQ`.
    shared: bool,
    /// Serves the ring's readiness set (the caller claimed it): sleeps in
    /// its epoll_wait with `mask` as the signal mask.
    serving: Option<Option<libc::sigset_t>>,
}

impl<'a> Waiter<'a> {
    pub(crate) fn new(ctx: &'a Ctx, sig: Option<&libc::sigset_t>, serving: bool) -> Waiter<'a> {
        if serving {
            return Waiter { ctx, sig: None, shared: false, serving: Some(sig.copied()) };
        }
        ctx.cq_waiters.fetch_add(1, Ordering::SeqCst);
        // Pairs with the fence in `Ctx::wake_waiters`: the count is
        // visible before this thread looks at the ring.
        core::sync::atomic::fence(Ordering::SeqCst);
        let sig = sig.and_then(|s| {
            let fd = thread_fd().ok()?;
            ctx.sig_waiters.lock().push(fd);
            ctx.nr_sig_waiters.fetch_add(1, Ordering::SeqCst);
            Some((*s, fd))
        });
        Waiter { ctx, sig, shared: false, serving: None }
    }

    /// Becomes the server of the ring's readiness set if it has one and
    /// nobody serves it (a reactor batch, say, has ended). True if so: the
    /// caller then owes a `Readiness::release`.
    pub(crate) fn try_serve(&mut self) -> bool {
        if self.serving.is_some() || !self.ctx.ready.claim() {
            return false;
        }
        let mask = self.sig.map(|(s, _)| s);
        self.leave();
        self.sig = None;
        self.serving = Some(mask);
        true
    }

    /// Stops counting as a futex or signal-mask waiter.
    fn leave(&mut self) {
        if let Some((_, fd)) = self.sig {
            let mut w = self.ctx.sig_waiters.lock();
            if let Some(i) = w.iter().position(|&f| f == fd) {
                w.swap_remove(i);
            }
            self.ctx.nr_sig_waiters.fetch_sub(1, Ordering::SeqCst);
        }
        self.ctx.cq_waiters.fetch_sub(1, Ordering::SeqCst);
        if self.shared {
            self.shared = false;
            self.ctx.word(off::X_WAITERS).fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The wake eventfd `old` was closed behind the engine's back, or is
    /// of an older epoch: the thread takes a fresh one.
    #[cold]
    fn replace_fd(&mut self, old: i32) -> i32 {
        if !os::stale(old) {
            os::numbers_lost();
        }
        forget_thread_fd();
        let Ok(new) = thread_fd() else {
            self.ctx.lose();
            return 0;
        };
        let mut w = self.ctx.sig_waiters.lock();
        if let Some(f) = w.iter_mut().find(|f| **f == old) {
            *f = new;
        }
        drop(w);
        if let Some((_, fd)) = &mut self.sig {
            *fd = new;
        }
        0
    }

    /// Called before each look at the ring: returns the `cq_seq` to pass
    /// to `sleep`. A server announces itself first, so that whatever
    /// changes the ring after its look signals it.
    pub(crate) fn prepare(&mut self) -> u32 {
        if self.serving.is_some() {
            self.ctx.ready.announce();
        } else if !self.shared && self.ctx.forked.load(Ordering::SeqCst) {
            // Pairs with the fence in `Ctx::wake_waiters`, in any process.
            self.ctx.word(off::X_WAITERS).fetch_add(1, Ordering::SeqCst);
            core::sync::atomic::fence(Ordering::SeqCst);
            self.shared = true;
        }
        self.seq_word().load(Ordering::SeqCst)
    }

    fn seq_word(&self) -> &AtomicU32 {
        if self.shared {
            self.ctx.word(off::X_SEQ)
        } else {
            &self.ctx.cq_seq
        }
    }

    /// Counts the caller in `Ctx::cq_sleep`, its target lowering the
    /// sleepers' (stale targets of sleepers gone only wake them early).
    fn count_sleeper(&self, want: u32) {
        let _ = self.ctx.cq_sleep.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |cur| {
            let (n, low) = (cur >> 32, cur as u32);
            let t = if n == 0 || (want.wrapping_sub(low) as i32) < 0 { want } else { low };
            Some(((n + 1).min(u32::MAX as u64) << 32) | t as u64)
        });
    }

    /// Sleeps until the ring's `cq_seq` moves past `seq`, the absolute
    /// CLOCK_MONOTONIC `until`, or a signal. Returns 0 or -EINTR. A futex
    /// sleeper is woken by posts only once the CQ tail reaches `want`
    /// (any post if None), or after a timeout fired; other wake-ups (task
    /// work, exit) reach it regardless.
    pub(crate) fn sleep(&mut self, seq: u32, until: Option<u64>, want: Option<u32>) -> i32 {
        if let Some(mask) = &self.serving {
            let r = self.ctx.ready.serve(self.ctx, until, mask.as_ref());
            return if r == -libc::EINTR { r } else { 0 };
        }
        match &self.sig {
            None => {
                // At most a nap: a ring of an epoch that ended (see
                // `Ctx::epoch`) may not wake its waiters.
                let nap = os::now_ns() + NAP_NS;
                let until = Some(until.map_or(nap, |u| u.min(nap)));
                let r = if self.shared {
                    futex_wait_shared(self.seq_word(), seq, until)
                } else {
                    // Seen by `Ctx::wake_fenced` after its bump, or it
                    // bumped before this and the futex sees the change.
                    // A post after `seq` was read bumps it too, so one
                    // that `want` leaves out cannot be slept through.
                    let want =
                        want.unwrap_or_else(|| self.ctx.word(off::CQ_TAIL).load(Ordering::Acquire).wrapping_add(1));
                    self.count_sleeper(want);
                    futex_wait(&self.ctx.cq_seq, seq, until)
                };
                if r == -libc::EINTR {
                    -libc::EINTR
                } else {
                    0
                }
            }
            Some((set, fd)) => {
                if self.seq_word().load(Ordering::SeqCst) != seq {
                    return 0;
                }
                // A nap at most: its eventfd closed behind the engine's
                // back would wake nobody.
                let now = os::now_ns();
                let nap = now + if self.shared { FORKED_SIG_NAP_NS } else { NAP_NS };
                let ts = os::ns_to_timespec(until.map_or(nap, |u| u.min(nap)).saturating_sub(now));
                let fd = *fd;
                if os::stale(fd) {
                    return self.replace_fd(fd);
                }
                let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
                // SAFETY: live pollfd, timespec and sigset.
                let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, set) };
                if r < 0 && os::errno() == -libc::EINTR {
                    return -libc::EINTR;
                }
                if r > 0 {
                    if pfd.revents & libc::POLLNVAL != 0 || !os::anon_ok(fd) {
                        return self.replace_fd(fd);
                    }
                    os::eventfd_drain(fd);
                }
                0
            }
        }
    }
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        if self.serving.is_some() {
            self.ctx.ready.quiet();
        } else {
            self.leave();
        }
    }
}
