//! A futex mutex and futex waits: the engine's only blocking primitives.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

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
    // What it waits for may wait for glibc's set*id() broadcast itself.
    super::creds::end_streak();
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

/// Engine threads (workers, the reactor, futex watchers) that have left
/// every list they are counted in, for teardown to wait on rather than
/// poll: an exit is seen as soon as it happens, not at the next tick of a
/// sleep.
static ENDED: AtomicU32 = AtomicU32::new(0);

/// Called by an engine thread once nothing counts it as running.
pub(crate) fn thread_ended() {
    ENDED.fetch_add(1, Ordering::SeqCst);
    futex_wake(&ENDED, i32::MAX);
}

/// Waits until `done` holds, asking again each time an engine thread ends;
/// gives up after a second (a thread stuck elsewhere must not hang the
/// teardown that waits for it).
pub(crate) fn wait_threads_ended(mut done: impl FnMut() -> bool) {
    let deadline = super::os::now_ns() + 1_000_000_000;
    loop {
        let seen = ENDED.load(Ordering::SeqCst);
        if done() || super::os::now_ns() >= deadline {
            return;
        }
        futex_wait(&ENDED, seen, Some(deadline));
    }
}

/// `futex_wake` of sleepers in any process sharing `word`'s memory.
pub(crate) fn futex_wake_shared(word: &AtomicU32, n: i32) {
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, n) };
}

/// The CQ lock of a ring shared with other processes through fork(): a
/// robust, process-shared pthread mutex in a MAP_SHARED page of its own
/// (the rings region has no 40 bytes to spare), made at the ring's first
/// fork, so that rings never forked pay nothing for it. glibc keeps the
/// mutexes a thread holds on the thread's robust futex list
/// (set_robust_list(2)), so when a holder dies, even by SIGKILL and before
/// anyone reaps it, in whatever PID namespace, the kernel marks the word
/// FUTEX_OWNER_DIED and wakes a waiter, which gets EOWNERDEAD and carries
/// on. (Where set_robust_list(2) is refused, glibc 2.36 still makes the
/// mutex; only that hand-over is lost.)
pub(crate) struct SharedLock {
    /// Null until `make`.
    m: AtomicPtr<libc::pthread_mutex_t>,
}

impl SharedLock {
    pub(crate) const fn new() -> SharedLock {
        SharedLock { m: AtomicPtr::new(core::ptr::null_mut()) }
    }

    /// Makes the lock if it does not exist yet; false if it cannot be
    /// (no memory). Publish it to other threads with a Release store
    /// after this (see `Ctx::forked`).
    pub(crate) fn make(&self) -> bool {
        if !self.m.load(Ordering::Relaxed).is_null() {
            return true;
        }
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a fresh shared mapping touches no existing memory.
        let Ok(p) = (unsafe {
            crate::sys::mmap(
                core::ptr::null_mut(),
                crate::sys::mem::page_size(),
                rw,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        }) else {
            return false;
        };
        let m = p as *mut libc::pthread_mutex_t;
        // SAFETY: the attribute object is initialised before use and
        // destroyed after; the mutex lies in the page just mapped, which
        // nobody else sees yet.
        unsafe {
            let mut a: libc::pthread_mutexattr_t = core::mem::zeroed();
            libc::pthread_mutexattr_init(&mut a);
            libc::pthread_mutexattr_setpshared(&mut a, libc::PTHREAD_PROCESS_SHARED);
            libc::pthread_mutexattr_setrobust(&mut a, libc::PTHREAD_MUTEX_ROBUST);
            let r = libc::pthread_mutex_init(m, &a);
            libc::pthread_mutexattr_destroy(&mut a);
            if r != 0 {
                crate::sys::munmap(p, crate::sys::mem::page_size());
                return false;
            }
        }
        self.m.store(m, Ordering::Relaxed);
        true
    }

    pub(crate) fn exists(&self) -> bool {
        !self.m.load(Ordering::Relaxed).is_null()
    }

    /// Takes the lock, which `make` made and published. A holder that died
    /// left what it guarded as it was when it died; the caller must not
    /// trust anything but what holders publish before they let go (see
    /// `Ctx::lock_cq`). Returns true if the last holder died holding it.
    #[inline]
    pub(crate) fn lock(&self) -> bool {
        let m = self.m.load(Ordering::Relaxed);
        // SAFETY: an initialised process-shared mutex in a live mapping.
        let mut r = unsafe { libc::pthread_mutex_trylock(m) };
        if r == libc::EBUSY {
            // A wait: as `futex_wait`'s.
            super::creds::end_streak();
            // SAFETY: as above.
            r = unsafe { libc::pthread_mutex_lock(m) };
        }
        if r == libc::EOWNERDEAD {
            // SAFETY: we hold it (EOWNERDEAD hands it over).
            unsafe { libc::pthread_mutex_consistent(m) };
            return true;
        }
        // Every locker marks the mutex consistent, so it never becomes
        // ENOTRECOVERABLE; a normal (not error-checking) mutex has no
        // other failure.
        debug_assert_eq!(r, 0);
        false
    }

    #[inline]
    pub(crate) fn unlock(&self) {
        // SAFETY: the calling thread holds it (`lock`).
        unsafe { libc::pthread_mutex_unlock(self.m.load(Ordering::Relaxed)) };
    }

    /// Unmaps this process's view of the lock, if made.
    ///
    /// # Safety
    /// Nobody in this process uses the lock any more.
    pub(crate) unsafe fn unmap(&self) {
        let m = self.m.swap(core::ptr::null_mut(), Ordering::Relaxed);
        if !m.is_null() {
            // SAFETY: the page `make` mapped; per the contract it is unused.
            unsafe { crate::sys::munmap(m as *mut core::ffi::c_void, crate::sys::mem::page_size()) };
        }
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

    /// Takes the lock if it is free.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<Guard<'_, T>> {
        self.state.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).ok().map(|_| Guard { m: self })
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
