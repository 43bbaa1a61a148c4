//! A futex mutex and futex waits: the engine's only blocking primitives.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicU32, Ordering};

/// Sleeps while `*word == expected`, until woken or until the absolute
/// CLOCK_MONOTONIC `deadline_ns` (if any). Returns 0, `-ETIMEDOUT`,
/// `-EINTR` or `-EAGAIN` (the word had already changed).
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, deadline_ns: Option<u64>) -> i32 {
    futex_wait_op(word, expected, deadline_ns, libc::FUTEX_PRIVATE_FLAG)
}

/// `futex_wait` on a word in memory shared with other processes.
pub(crate) fn futex_wait_shared(word: &AtomicU32, expected: u32, deadline_ns: Option<u64>) -> i32 {
    futex_wait_op(word, expected, deadline_ns, 0)
}

fn futex_wait_op(word: &AtomicU32, expected: u32, deadline_ns: Option<u64>, private: i32) -> i32 {
    let ts = deadline_ns.map(super::os::ns_to_timespec);
    let tsp = ts.as_ref().map_or(core::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: the futex word is a live AtomicU32; FUTEX_WAIT_BITSET reads
    // it and an optional absolute timespec, nothing else.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT_BITSET | private,
            expected,
            tsp,
            core::ptr::null::<u32>(),
            libc::FUTEX_BITSET_MATCH_ANY,
        )
    };
    if r < 0 {
        super::os::errno()
    } else {
        0
    }
}

/// Wakes up to `n` threads sleeping on `word`.
pub(crate) fn futex_wake(word: &AtomicU32, n: i32) {
    // SAFETY: FUTEX_WAKE only uses the address as a key.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, n) };
}

/// `futex_wake` of sleepers in any process sharing `word`'s memory.
pub(crate) fn futex_wake_shared(word: &AtomicU32, n: i32) {
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, n) };
}

/// The process id, for `lock_shared` (reset in a forked child).
static PID: AtomicU32 = AtomicU32::new(0);
/// Set in a `lock_shared` word whose holder has sleepers to wake.
const SLEEPERS: u32 = 1 << 31;
/// How long a `lock_shared` waiter sleeps before it checks that the holder
/// still lives.
const HOLDER_CHECK_NS: u64 = 10_000_000;

/// Forgets the cached pid (in a forked child).
pub(crate) fn forget_pid() {
    PID.store(0, Ordering::Relaxed);
}

/// This process's id, cached.
pub(crate) fn pid() -> u32 {
    let p = PID.load(Ordering::Relaxed);
    if p != 0 {
        return p;
    }
    // SAFETY: getpid has no preconditions.
    let p = unsafe { libc::getpid() } as u32;
    PID.store(p, Ordering::Relaxed);
    p
}

/// Takes a lock word that lives in memory shared between processes: 0
/// free, else the holder's pid (| SLEEPERS). A process killed while
/// holding it must not block the others forever, so a waiter that slept
/// for a while checks the holder and takes the lock from a dead one.
pub(crate) fn lock_shared(w: &AtomicU32) {
    let me = pid();
    if w.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed).is_ok() {
        return;
    }
    loop {
        let cur = w.load(Ordering::Relaxed);
        if cur == 0 {
            // Taken after a wait: others may sleep still, so the unlock
            // must wake one.
            if w.compare_exchange(0, me | SLEEPERS, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return;
            }
            continue;
        }
        if cur & SLEEPERS == 0 && w.compare_exchange(cur, cur | SLEEPERS, Ordering::Relaxed, Ordering::Relaxed).is_err() {
            continue;
        }
        let r = futex_wait_shared(w, cur | SLEEPERS, Some(super::os::now_ns() + HOLDER_CHECK_NS));
        // SAFETY: kill with signal 0 only checks that the process exists.
        let gone = r == -libc::ETIMEDOUT && unsafe { libc::kill((cur & !SLEEPERS) as i32, 0) } < 0 && super::os::errno() == -libc::ESRCH;
        if gone && w.compare_exchange(cur | SLEEPERS, me | SLEEPERS, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            return;
        }
    }
}

/// Drops a lock taken with `lock_shared`.
pub(crate) fn unlock_shared(w: &AtomicU32) {
    if w.swap(0, Ordering::Release) & SLEEPERS != 0 {
        futex_wake_shared(w, 1);
    }
}

/// A mutual-exclusion lock on a futex word: 0 free, 1 held, 2 held with
/// sleepers.
pub(crate) struct Mutex<T> {
    state: AtomicU32,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands out access to `data` to one thread at a time.
unsafe impl<T: Send> Sync for Mutex<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Mutex<T> {}

impl<T> Mutex<T> {
    pub(crate) const fn new(v: T) -> Self {
        Mutex { state: AtomicU32::new(0), data: UnsafeCell::new(v) }
    }

    #[inline]
    pub(crate) fn lock(&self) -> Guard<'_, T> {
        if self.state.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            self.lock_slow();
        }
        Guard { m: self }
    }

    #[cold]
    fn lock_slow(&self) {
        for _ in 0..64 {
            if self.state.load(Ordering::Relaxed) == 0
                && self.state.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok()
            {
                return;
            }
            core::hint::spin_loop();
        }
        while self.state.swap(2, Ordering::Acquire) != 0 {
            futex_wait(&self.state, 2, None);
        }
    }

    /// Takes the lock with no guard, to keep it across fork() (see
    /// `fork.rs`); `unhold` gives it back.
    pub(crate) fn hold(&self) {
        core::mem::forget(self.lock());
    }

    /// Gives back a lock taken with `hold`.
    ///
    /// # Safety
    /// The calling thread took it with `hold` and has not given it back.
    pub(crate) unsafe fn unhold(&self) {
        drop(Guard { m: self });
    }

    /// Forgets a lock state inherited through fork() from a thread that no
    /// longer exists in this process.
    ///
    /// # Safety
    /// Only in a freshly forked child, before any other thread exists.
    pub(crate) unsafe fn reset_after_fork(&self) {
        self.state.store(0, Ordering::Relaxed);
    }
}

pub(crate) struct Guard<'a, T> {
    m: &'a Mutex<T>,
}

impl<T> Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves the lock is held.
        unsafe { &*self.m.data.get() }
    }
}

impl<T> DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves the lock is held, and is borrowed mutably.
        unsafe { &mut *self.m.data.get() }
    }
}

impl<T> Drop for Guard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        if self.m.state.swap(0, Ordering::Release) == 2 {
            futex_wake(&self.m.state, 1);
        }
    }
}
