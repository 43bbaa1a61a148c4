//! What the diagnostics remember between library calls, in fixed-size
//! tables behind one process-wide mutex.
//!
//! Threads: every hook takes [`STATE`]'s lock for the whole of its work on
//! the tables and its writes, so lines from different threads never
//! interleave and the tables need no atomics. Nothing here is touched when
//! diagnostics are off.

use core::cell::UnsafeCell;
use core::ptr;

/// Rings remembered at once; further rings are traced without latency or
/// registration checks until a slot frees up.
pub const MAX_RINGS: usize = 64;
/// Requests remembered between submission and completion.
pub const FLIGHTS: usize = 4096;
/// Slots searched for a request; beyond that the oldest is forgotten.
const PROBE: usize = 8;
/// Provided-buffer groups remembered per ring.
const GROUPS: usize = 32;
/// Addresses of rings recently torn down, to name use-after-exit.
const EXITED: usize = 16;
/// Submitting threads per ring that get timeline tracks of their own.
const TRACKS: usize = 8;
/// Lanes per track: requests in flight together go side by side, since a
/// timeline track holds only slices that nest.
pub const LANES: usize = 32;

// Table indices below are reduced modulo the table size even where they
// are known to be in range: that spares the code its panic paths.

/// A mutex from libc around `T`.
pub struct Locked<T> {
    lock: UnsafeCell<libc::pthread_mutex_t>,
    data: UnsafeCell<T>,
}

// SAFETY: `data` is only reached through `with`, which holds the mutex.
unsafe impl<T: Send> Sync for Locked<T> {}

impl<T> Locked<T> {
    pub const fn new(v: T) -> Self {
        Locked { lock: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER), data: UnsafeCell::new(v) }
    }

    /// Runs `f` on the data with the lock held.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.lock();
        // SAFETY: the mutex is held, so this is the only reference.
        let r = f(unsafe { &mut *self.data.get() });
        self.unlock();
        r
    }

    /// Also used around `fork` (see `back::init`), so that a child never
    /// inherits the lock taken by a thread it does not have.
    pub fn lock(&self) {
        // SAFETY: a statically initialised default mutex; every lock is
        // paired with an unlock on the same thread (a panic aborts).
        unsafe { libc::pthread_mutex_lock(self.lock.get()) };
    }

    pub fn unlock(&self) {
        // SAFETY: called after `lock` on this thread (in a forked child,
        // the forking thread is the one that locked).
        unsafe { libc::pthread_mutex_unlock(self.lock.get()) };
    }
}

/// Registered buffers: a count, and their ranges when we saw them.
pub struct Buffers {
    /// Number of table slots, or -1 when unknown (see `Ring::files`).
    pub count: i64,
    /// `count` (base, len) pairs in an anonymous mapping, or null when the
    /// ranges are unknown.
    ranges: *mut [u64; 2],
    mapped: usize,
}

impl Buffers {
    const fn none() -> Buffers {
        Buffers { count: 0, ranges: ptr::null_mut(), mapped: 0 }
    }

    /// The (base, len) of slot `i`, if known.
    pub fn range(&self, i: u32) -> Option<(u64, u64)> {
        if self.ranges.is_null() || i as i64 >= self.count {
            return None;
        }
        // SAFETY: ranges holds count entries, i < count.
        let r = unsafe { *self.ranges.add(i as usize) };
        Some((r[0], r[1]))
    }

    /// Forgets everything; `count` becomes `n` (-1: unknown) with no ranges.
    pub fn reset(&mut self, n: i64) {
        if !self.ranges.is_null() {
            // SAFETY: ranges/mapped describe our own mapping.
            unsafe { libc::munmap(self.ranges.cast(), self.mapped) };
        }
        *self = Buffers { count: n, ..Buffers::none() };
    }

    /// A table of `n` empty slots whose ranges we will learn.
    pub fn table(&mut self, n: u32) {
        self.reset(n as i64);
        let bytes = n as usize * 16;
        if bytes == 0 {
            return;
        }
        // SAFETY: a fresh private anonymous mapping; zeroed by the kernel.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            self.ranges = p.cast();
            self.mapped = bytes;
        }
    }

    /// Records slot `i` as (base, len).
    pub fn set(&mut self, i: u32, base: u64, len: u64) {
        if !self.ranges.is_null() && (i as i64) < self.count {
            // SAFETY: i < count, the mapping's length in entries.
            unsafe { *self.ranges.add(i as usize) = [base, len] };
        }
    }
}

/// One ring the diagnostics follow.
pub struct Ring {
    /// Address of the application's `struct io_uring`; 0 for a free slot.
    pub addr: usize,
    /// Unique id; requests in flight refer to their ring by it.
    pub id: u32,
    /// What `ring=` prints: the fd, or the registered index of a
    /// REGISTERED_FD_ONLY ring.
    pub fd: i32,
    pub fd_is_index: bool,
    /// Next CQ index to trace.
    pub cq_next: u32,
    /// CQ head seen at the last call, to notice it going backwards.
    pub cq_head: u32,
    /// A head already reported as past the tail (reported once).
    pub bad_head: Option<u32>,
    /// Bumped when completions were consumed before we saw them: earlier
    /// requests may have completed unseen, so they no longer count as in
    /// flight for the user_data check.
    pub epoch: u32,
    /// Registered file table size, or -1 when unknown. A new ring starts
    /// unknown: programs (liburing's own tests among them) also register
    /// through raw io_uring_register(2), which we cannot see; from the first
    /// registration or unregistration we do see, we know.
    pub files: i64,
    pub bufs: Buffers,
    groups: [u16; GROUPS],
    ngroups: usize,
    /// More groups than we can hold: stop judging.
    groups_unknown: bool,
    /// Submits in progress on this ring, from any thread.
    pub in_submit: u32,
    /// Some request used IOSQE_CQE_SKIP_SUCCESS: the kernel refuses DRAIN.
    pub skip_used: bool,
    pub submitted: u64,
    pub traced: u64,
    pub lost: u64,
    /// Requests submitted and not yet completed for good, and the most seen.
    pub in_flight: u32,
    pub peak: u32,
    /// CQEs posted and not yet consumed, at the last look.
    pub cq_waiting: u32,
    /// The counter values last written to a JSON trace.
    pub shown: Option<(u32, u32)>,
    /// Time spent in the library's submit and wait calls, ns.
    pub waited: u64,
    /// Opcodes the ring runs (a bit each), when asked at setup (`probed`).
    pub ops: [u64; 4],
    pub probed: bool,
    /// Served by the userspace engine.
    pub engine: bool,
    pub tracks: [Track; TRACKS],
}

/// A submitting thread's timeline track on one ring, in lanes.
#[derive(Clone, Copy)]
pub struct Track {
    /// The thread; 0 for a free slot.
    pub tid: i32,
    /// Each lane's id in the JSON trace (0: not named yet) and the end of
    /// its last slice.
    pub ids: [u32; LANES],
    pub ends: [u64; LANES],
    /// The lane of the thread's library calls (0: not named yet).
    pub calls: u32,
}

impl Track {
    const FREE: Track = Track { tid: 0, ids: [0; LANES], ends: [0; LANES], calls: 0 };
}

impl Ring {
    const fn free() -> Ring {
        Ring {
            addr: 0,
            id: 0,
            fd: 0,
            fd_is_index: false,
            cq_next: 0,
            cq_head: 0,
            bad_head: None,
            epoch: 0,
            files: 0,
            bufs: Buffers::none(),
            groups: [0; GROUPS],
            ngroups: 0,
            groups_unknown: false,
            in_submit: 0,
            skip_used: false,
            submitted: 0,
            traced: 0,
            lost: 0,
            in_flight: 0,
            peak: 0,
            cq_waiting: 0,
            shown: None,
            waited: 0,
            ops: [0; 4],
            probed: false,
            engine: false,
            tracks: [Track::FREE; TRACKS],
        }
    }

    /// The track of thread `tid` (taking over the oldest-numbered slot when
    /// all are used: its lanes get new names).
    pub fn track(&mut self, tid: i32) -> &mut Track {
        let k = self
            .tracks
            .iter()
            .position(|t| t.tid == tid)
            .or_else(|| self.tracks.iter().position(|t| t.tid == 0))
            .unwrap_or(tid.unsigned_abs() as usize % TRACKS);
        let t = &mut self.tracks[k % TRACKS];
        if t.tid != tid {
            *t = Track { tid, ..Track::FREE };
        }
        t
    }

    /// Forgets the timeline lanes (a forked child names its own).
    fn forget_lanes(&mut self) {
        self.tracks = [Track::FREE; TRACKS];
    }

    /// Whether the ring runs opcode `op`; None when it was not asked.
    pub fn runs(&self, op: u8) -> Option<bool> {
        self.probed.then(|| self.ops[(op / 64) as usize % 4] & (1 << (op % 64)) != 0)
    }

    pub fn add_group(&mut self, g: u16) {
        if self.has_group(g) {
            return;
        }
        match self.groups.get_mut(self.ngroups) {
            Some(slot) => {
                *slot = g;
                self.ngroups += 1;
            }
            None => self.groups_unknown = true,
        }
    }

    pub fn remove_group(&mut self, g: u16) {
        if let Some(i) = self.groups().iter().position(|&x| x == g) {
            self.ngroups -= 1;
            self.groups[i % GROUPS] = self.groups[self.ngroups % GROUPS];
        }
    }

    /// Whether group `g` may exist (true when we cannot tell).
    pub fn has_group(&self, g: u16) -> bool {
        self.groups_unknown || self.groups().contains(&g)
    }

    fn groups(&self) -> &[u16] {
        self.groups.get(..self.ngroups).unwrap_or(&[])
    }

    /// A ring set up before we watched: its provided-buffer groups are
    /// unknown too.
    pub fn forget_groups(&mut self) {
        self.groups_unknown = true;
    }
}

/// A request between submission and completion.
#[derive(Clone, Copy)]
pub struct Flight {
    /// Ring id; 0 marks a free slot.
    pub ring: u32,
    pub epoch: u32,
    pub user_data: u64,
    /// Submission time, CLOCK_MONOTONIC ns.
    pub t: u64,
    pub opcode: u8,
    pub sqe_flags: u8,
    /// The submitting thread.
    pub tid: i32,
    pub fd: i32,
    pub len: u32,
    /// This request's number in the JSON trace, and that of the request
    /// linked to it (0: none), which names the flow between the two.
    pub seq: u32,
    pub link_in: u32,
}

impl Flight {
    pub const FREE: Flight = Flight {
        ring: 0,
        epoch: 0,
        user_data: 0,
        t: 0,
        opcode: 0,
        sqe_flags: 0,
        tid: 0,
        fd: 0,
        len: 0,
        seq: 0,
        link_in: 0,
    };
}

pub struct State {
    pub rings: [Ring; MAX_RINGS],
    flights: [Flight; FLIGHTS],
    exited: [usize; EXITED],
    exited_next: usize,
    last_id: u32,
    /// Numbers handed out for requests and timeline lanes (JSON trace).
    pub last_seq: u32,
    pub last_lane: u32,
}

pub static STATE: Locked<State> = Locked::new(State::new());

// SAFETY: the raw pointer inside Buffers is our own mapping, used only under
// the lock.
unsafe impl Send for State {}

impl State {
    const fn new() -> State {
        State {
            rings: [const { Ring::free() }; MAX_RINGS],
            flights: [Flight::FREE; FLIGHTS],
            exited: [0; EXITED],
            exited_next: 0,
            last_id: 0,
            last_seq: 0,
            last_lane: 0,
        }
    }

    /// Ring `i` of the table. Indices come from [`State::find`] and
    /// [`State::open`]; the modulo only spares the code a panic path.
    pub fn ring(&mut self, i: usize) -> &mut Ring {
        &mut self.rings[i % MAX_RINGS]
    }

    pub fn find(&self, addr: usize) -> Option<usize> {
        self.rings.iter().position(|r| r.addr == addr)
    }

    /// A fresh record for the ring at `addr` (replacing any old one there),
    /// or None when every slot is taken.
    pub fn open(&mut self, addr: usize) -> Option<usize> {
        self.forget_exit(addr);
        let i = match self.find(addr) {
            Some(i) => {
                self.close(i);
                i
            }
            None => self.find(0)?,
        };
        // Ids start at 1 (0 marks free flight slots); the whole State is
        // zero-initialised so that it costs no file space.
        self.last_id = self.last_id.wrapping_add(1).max(1);
        let mut r = Ring { addr, id: self.last_id, files: -1, ..Ring::free() };
        r.bufs.count = -1;
        *self.ring(i) = r;
        Some(i)
    }

    /// Drops ring `i` and every request of it still in flight.
    pub fn close(&mut self, i: usize) {
        let id = self.ring(i).id;
        for f in self.flights.iter_mut().filter(|f| f.ring == id) {
            *f = Flight::FREE;
        }
        self.ring(i).bufs.reset(0);
        *self.ring(i) = Ring::free();
    }

    /// Every ring's timeline lanes are to be named anew.
    pub fn forget_lanes(&mut self) {
        self.rings.iter_mut().for_each(Ring::forget_lanes);
    }

    pub fn note_exit(&mut self, addr: usize) {
        self.exited[self.exited_next % EXITED] = addr;
        self.exited_next = (self.exited_next + 1) % EXITED;
    }

    pub fn forget_exit(&mut self, addr: usize) {
        for a in self.exited.iter_mut().filter(|a| **a == addr) {
            *a = 0;
        }
    }

    pub fn was_exited(&self, addr: usize) -> bool {
        addr != 0 && self.exited.contains(&addr)
    }

    fn home(ring: u32, user_data: u64) -> usize {
        let h = (user_data ^ ((ring as u64) << 48)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 52) as usize % FLIGHTS
    }

    fn slot(&self, ring: u32, user_data: u64) -> Option<usize> {
        let h = Self::home(ring, user_data);
        (0..PROBE)
            .map(|k| (h + k) % FLIGHTS)
            .find(|&s| self.flights[s % FLIGHTS].ring == ring && self.flights[s % FLIGHTS].user_data == user_data)
    }

    pub fn flight(&self, ring: u32, user_data: u64) -> Option<Flight> {
        self.slot(ring, user_data).map(|s| self.flights[s % FLIGHTS])
    }

    /// Remembers a submission, replacing an earlier one with the same
    /// user_data, else taking a free slot, else the oldest nearby; the
    /// rings' in-flight counts follow. Returns the request it displaced.
    pub fn depart(&mut self, f: Flight) -> Option<Flight> {
        let s = self.slot(f.ring, f.user_data).unwrap_or_else(|| {
            let h = Self::home(f.ring, f.user_data);
            let near = (0..PROBE).map(|k| (h + k) % FLIGHTS);
            near.clone()
                .find(|&s| self.flights[s % FLIGHTS].ring == 0)
                .unwrap_or_else(|| near.min_by_key(|&s| self.flights[s % FLIGHTS].t).unwrap_or(h))
        });
        let old = self.flights[s % FLIGHTS];
        self.count(old.ring, false);
        self.flights[s % FLIGHTS] = f;
        self.count(f.ring, true);
        (old.ring != 0).then_some(old)
    }

    /// The table index of the ring with id `id`.
    pub fn index_of(&self, id: u32) -> Option<usize> {
        self.rings.iter().position(|r| id != 0 && r.id == id)
    }

    /// Slot `k` of the table of requests in flight (ring 0: free).
    pub fn flight_at(&self, k: usize) -> Flight {
        self.flights[k % FLIGHTS]
    }

    /// Forgets a request that completed for good.
    pub fn arrive(&mut self, ring: u32, user_data: u64) {
        if let Some(s) = self.slot(ring, user_data) {
            self.flights[s % FLIGHTS] = Flight::FREE;
            self.count(ring, false);
        }
    }

    fn count(&mut self, id: u32, up: bool) {
        if let Some(r) = self.rings.iter_mut().find(|r| id != 0 && r.id == id) {
            if up {
                r.in_flight += 1;
                r.peak = r.peak.max(r.in_flight);
            } else {
                r.in_flight = r.in_flight.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flight(ring: u32, user_data: u64, t: u64) -> Flight {
        Flight { ring, user_data, t, opcode: 1, ..Flight::FREE }
    }

    #[test]
    fn flights_are_found_replaced_and_bounded() {
        let mut st = Box::new(State::new());
        {
            st.depart(flight(7, 42, 1));
            assert_eq!(st.flight(7, 42).unwrap().t, 1);
            assert!(st.flight(8, 42).is_none());
            st.depart(flight(7, 42, 2));
            assert_eq!(st.flight(7, 42).unwrap().t, 2);
            st.arrive(7, 42);
            assert!(st.flight(7, 42).is_none());
            // Far more requests than slots: the table stays consistent and
            // keeps the newest.
            for i in 0..(FLIGHTS as u64 * 4) {
                st.depart(flight(9, i, i + 10));
            }
            let last = FLIGHTS as u64 * 4 - 1;
            assert_eq!(st.flight(9, last).unwrap().t, last + 10);
        }
    }

    #[test]
    fn buffer_ranges() {
        let mut b = Buffers::none();
        b.table(4);
        b.set(2, 0x1000, 64);
        assert_eq!(b.range(2), Some((0x1000, 64)));
        assert_eq!(b.range(0), Some((0, 0)));
        assert_eq!(b.range(4), None);
        b.reset(-1);
        assert_eq!(b.range(0), None);
    }

    #[test]
    fn groups() {
        let mut r = Ring::free();
        assert!(!r.has_group(3));
        r.add_group(3);
        assert!(r.has_group(3));
        r.remove_group(3);
        assert!(!r.has_group(3));
        for g in 0..=GROUPS as u16 {
            r.add_group(g);
        }
        assert!(r.has_group(999));
    }
}
