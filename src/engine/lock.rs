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

/// Takes a lock word (0 free, 1 held, 2 held with sleepers) that lives in
/// memory shared between processes.
pub(crate) fn lock_shared(w: &AtomicU32) {
    if w.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok() {
        return;
    }
    while w.swap(2, Ordering::Acquire) != 0 {
        futex_wait_shared(w, 2, None);
    }
}

/// Drops a lock taken with `lock_shared`.
pub(crate) fn unlock_shared(w: &AtomicU32) {
    if w.swap(0, Ordering::Release) == 2 {
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
