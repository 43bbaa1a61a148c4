//! The completion side on a ring in ordinary memory, with the test as the
//! application: CQ slots and the u32 wraparound of head and tail, the
//! overflow list that keeps every CQE (IORING_FEAT_NODROP) in order, and
//! the slot rules of CQE32 and CQE_MIXED rings. No system call is made
//! (the ring fd counts as signalled already), so the tests run under Miri
//! (`scripts/check-miri.sh`).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::boxed::Box;
use std::vec::Vec;

use super::*;

const STEPS: usize = if cfg!(miri) { 400 } else { 50_000 };

/// An engine ring with no fds and no SQ, over memory of its own.
pub(crate) struct TestRing {
    pub ctx: Box<Ctx>,
    layout: Layout,
}

impl TestRing {
    pub(crate) fn new(cq: u32, flags: u32) -> TestRing {
        assert!(cq.is_power_of_two());
        let cqe = if flags & IORING_SETUP_CQE32 != 0 { 32 } else { 16 };
        let layout = Layout::from_size_align(off::CQES + cq as usize * cqe, 64).unwrap();
        // SAFETY: a non-zero size.
        let rings = unsafe { alloc_zeroed(layout) };
        assert!(!rings.is_null());
        let mem = Memory {
            rings,
            rings_len: layout.size(),
            sqes: core::ptr::null_mut(),
            sqes_len: 0,
            owned: false,
            memfd: -1,
            app_rings: 0,
            app_sqes: 0,
        };
        let ctx = Box::new(Ctx::new(-1, -1, flags, mem, (1, cq), core::ptr::null(), None));
        // Set, so that posting never signals the (absent) ring fd.
        ctx.fd_signalled.store(true, Ordering::Relaxed);
        ctx.word(off::CQ_MASK).store(cq - 1, Ordering::Relaxed);
        ctx.word(off::CQ_ENTRIES).store(cq, Ordering::Relaxed);
        TestRing { ctx, layout }
    }

    /// Puts head and tail at `at`, as after `at` CQEs posted and reaped.
    fn start_at(&self, at: u32) {
        self.ctx.inner.lock().cq_tail = at;
        self.ctx.word(off::CQ_TAIL).store(at, Ordering::Relaxed);
        self.set_head(at);
    }

    fn head(&self) -> u32 {
        self.ctx.word(off::CQ_HEAD).load(Ordering::Relaxed)
    }

    fn set_head(&self, v: u32) {
        self.ctx.word(off::CQ_HEAD).store(v, Ordering::Release);
    }

    /// The published tail, as the application reads it.
    fn tail(&self) -> u32 {
        self.ctx.word(off::CQ_TAIL).load(Ordering::Acquire)
    }

    /// The 16-byte CQE at index `idx` (masked, scaled for CQE32).
    fn cqe(&self, idx: u32) -> (u64, i32, u32) {
        let shift = (self.ctx.flags & IORING_SETUP_CQE32 != 0) as usize;
        let slot = ((idx & self.ctx.cq_mask()) as usize) << shift;
        // SAFETY: inside the CQE array; the engine wrote it before the
        // tail the caller read.
        let c = unsafe { core::ptr::read_volatile(self.ctx.cqes_ptr().add(slot)) };
        (c.user_data, c.res, c.flags)
    }

    /// The second half of a big CQE at index `idx`.
    fn big(&self, idx: u32) -> [u64; 2] {
        let shift = (self.ctx.flags & IORING_SETUP_CQE32 != 0) as usize;
        let slot = ((idx & self.ctx.cq_mask()) as usize) << shift;
        // SAFETY: as above; a big CQE's extra words follow its first 16 bytes.
        unsafe {
            let p = self.ctx.cqes_ptr().add(slot + 1) as *const u64;
            [core::ptr::read_volatile(p), core::ptr::read_volatile(p.add(1))]
        }
    }

    /// Reaps every visible CQE, as `io_uring_for_each_cqe` and
    /// `io_uring_cq_advance` would; returns their user_data.
    fn reap(&self, max: u32) -> Vec<u64> {
        let (mut head, tail) = (self.head(), self.tail());
        let mut out = Vec::new();
        while head != tail && (out.len() as u32) < max {
            out.push(self.cqe(head).0);
            head = head.wrapping_add(1);
        }
        self.set_head(head);
        out
    }

    fn held(&self) -> usize {
        self.ctx.inner.lock().overflow.len()
    }
}

impl Drop for TestRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout; the ring is done.
        unsafe { dealloc(self.ctx.rings.load(Ordering::Relaxed), self.layout) };
    }
}

fn post(t: &TestRing, user_data: u64) {
    t.ctx.post_all(&[Cqe::new(user_data, user_data as i32, 0)], Mode::Inline);
}

#[test]
fn slots_and_wraparound() {
    let t = TestRing::new(4, 0);
    let start = u32::MAX - 1;
    t.start_at(start);
    for u in 0..4 {
        post(&t, 100 + u);
    }
    // The tail wrapped past u32::MAX; the slots follow the index's low bits.
    assert_eq!(t.tail(), start.wrapping_add(4));
    assert_eq!(t.tail(), 2);
    assert_eq!(t.ctx.cq_ready(), 4);
    for (i, u) in (0..4).zip(100..) {
        assert_eq!(t.cqe(start.wrapping_add(i)), (u, u as i32, 0));
    }
    assert!(!t.ctx.overflow_pending());
    // Full: the fifth is held back, not written over the first.
    post(&t, 104);
    assert_eq!(t.tail(), 2);
    assert_eq!(t.held(), 1);
    assert!(t.ctx.overflow_pending(), "IORING_SQ_CQ_OVERFLOW while a CQE is held");
    assert!(t.ctx.overflow_held.load(Ordering::Relaxed));
    assert_eq!(t.cqe(start), (100, 100, 0));
    assert_eq!(t.reap(2), [100, 101]);
    t.ctx.flush_overflow();
    assert_eq!(t.held(), 0);
    assert!(!t.ctx.overflow_pending());
    assert!(!t.ctx.overflow_held.load(Ordering::Relaxed));
    assert_eq!(t.ctx.cq_ready(), 3);
    assert_eq!(t.reap(u32::MAX), [102, 103, 104]);
    assert_eq!(t.head(), 3);
    assert_eq!(t.ctx.inner.lock().cq_events, 5);
}

#[test]
fn fill_waits_for_commit() {
    let t = TestRing::new(8, 0);
    t.start_at(u32::MAX);
    let mut g = t.ctx.lock_cq();
    t.ctx.fill(&mut g, &Cqe::new(1, 0, 0));
    t.ctx.fill(&mut g, &Cqe::new(2, 0, 0));
    // Written, not yet visible.
    assert_eq!(t.tail(), u32::MAX);
    assert_eq!(t.ctx.commit(&mut g, Mode::Inline), 2);
    assert_eq!(t.tail(), 1);
    assert_eq!(t.ctx.commit(&mut g, Mode::Inline), 0, "nothing new to publish");
    drop(g);
    assert_eq!(t.reap(u32::MAX), [1, 2]);
}

/// Random posts and reaps: the application sees every CQE once, in the
/// order posted; the CQ never holds more than its entries; the overflow
/// flag is up exactly while CQEs are held back.
#[test]
fn overflow_keeps_order() {
    let t = TestRing::new(8, 0);
    t.start_at(u32::MAX - 40);
    let (mut next, mut seen) = (0u64, Vec::new());
    let mut rng = 0x853c_49e6_748f_ea9bu64;
    for _ in 0..STEPS {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        match rng % 8 {
            0..=3 => {
                post(&t, next);
                next += 1;
            }
            4 => {
                // A batch through one lock, as a completion run posts.
                let c: Vec<Cqe> = (next..next + 3).map(|u| Cqe::new(u, 0, 0)).collect();
                t.ctx.post_all(&c, Mode::Inline);
                next += 3;
            }
            5 => t.ctx.flush_overflow(),
            _ => seen.extend(t.reap((rng >> 8) as u32 % 6)),
        }
        assert!(t.ctx.cq_ready() <= 8);
        let held = t.held();
        assert_eq!(t.ctx.overflow_pending(), held != 0);
        assert_eq!(seen.len() as u64 + t.ctx.cq_ready() as u64 + held as u64, next, "a CQE went missing");
    }
    assert_eq!(t.ctx.inner.lock().cq_events, next as u32);
    while t.held() != 0 || t.ctx.cq_ready() != 0 {
        seen.extend(t.reap(u32::MAX));
        t.ctx.flush_overflow();
    }
    assert!(!t.ctx.overflow_pending());
    assert_eq!(seen, (0..next).collect::<Vec<_>>());
}

#[test]
fn try_post_never_overflows() {
    let t = TestRing::new(2, 0);
    t.start_at(u32::MAX);
    assert!(t.ctx.try_post(&Cqe::new(1, 0, 0), Mode::Inline));
    assert!(t.ctx.try_post(&Cqe::new(2, 0, 0), Mode::Inline));
    assert!(!t.ctx.try_post(&Cqe::new(3, 0, 0), Mode::Inline), "full");
    assert_eq!(t.held(), 0);
    post(&t, 4);
    assert_eq!(t.reap(1), [1]);
    // Room again, but a CQE is held back: a multishot CQE must not pass it.
    assert!(!t.ctx.try_post(&Cqe::new(5, 0, 0), Mode::Inline));
    t.ctx.flush_overflow();
    assert_eq!(t.reap(u32::MAX), [2, 4]);
    assert!(t.ctx.try_post(&Cqe::new(6, 0, 0), Mode::Inline));
    assert_eq!(t.reap(u32::MAX), [6]);
}

#[test]
fn cqe32_slots() {
    let t = TestRing::new(4, IORING_SETUP_CQE32);
    t.start_at(u32::MAX - 1);
    for u in 0..4u64 {
        let mut c = Cqe::new(u, -(u as i32), 7);
        c.big = [u << 32 | 0xaa, u << 32 | 0xbb];
        t.ctx.post_all(&[c], Mode::Inline);
    }
    for u in 0..4u32 {
        let idx = (u32::MAX - 1).wrapping_add(u);
        assert_eq!(t.cqe(idx), (u as u64, -(u as i32), 7));
        assert_eq!(t.big(idx), [(u as u64) << 32 | 0xaa, (u as u64) << 32 | 0xbb]);
    }
    assert_eq!(t.tail(), 2);
}

#[test]
fn mixed_big_cqe_never_wraps() {
    let t = TestRing::new(4, IORING_SETUP_CQE_MIXED);
    let big = |u: u64| {
        let mut c = Cqe::new(u, 0, IORING_CQE_F_32);
        c.big = [u + 1000, u + 2000];
        c
    };
    t.start_at(u32::MAX - 4);
    // The tail sits on the last slot (index 3 of 4).
    assert_eq!(t.tail() & 3, 3);
    // A small CQE fits there; then, on slot 0, a big one takes slots 0-1.
    post(&t, 1);
    t.ctx.post_all(&[big(2)], Mode::Inline);
    assert_eq!(t.tail(), (u32::MAX - 4).wrapping_add(3));
    assert_eq!(t.cqe(u32::MAX - 3), (2, 0, IORING_CQE_F_32));
    assert_eq!(t.big(u32::MAX - 3), [1002, 2002]);

    let t = TestRing::new(4, IORING_SETUP_CQE_MIXED);
    t.start_at(u32::MAX - 2);
    post(&t, 1);
    post(&t, 2);
    let tail = t.tail();
    assert_eq!(tail & 3, 3);
    // Two slots free at the last slot: a big CQE needs three (a padding
    // entry and its own two), so it is held back, and a small one queues
    // behind it although a slot is free.
    t.ctx.post_all(&[big(3)], Mode::Inline);
    assert_eq!((t.tail(), t.held()), (tail, 1));
    post(&t, 4);
    assert_eq!((t.tail(), t.held()), (tail, 2));
    // A third free slot lets it in, behind a padding entry at the end;
    // then the CQ is full again.
    assert_eq!(t.reap(1), [1]);
    t.ctx.flush_overflow();
    assert_eq!((t.tail(), t.held()), (tail.wrapping_add(3), 1));
    assert_eq!(t.cqe(tail), (0, 0, IORING_CQE_F_SKIP));
    assert_eq!(t.cqe(tail.wrapping_add(1)), (3, 0, IORING_CQE_F_32));
    assert_eq!(t.big(tail.wrapping_add(1)), [1003, 2003]);
    t.set_head(t.tail());
    t.ctx.flush_overflow();
    assert_eq!((t.tail(), t.held()), (tail.wrapping_add(4), 0));
    assert_eq!(t.cqe(tail.wrapping_add(3)), (4, 4, 0));
}

/// `post_words` hands out free slots in runs that stop at the end of the
/// CQE array, and queues what found no room behind them, in order.
#[test]
fn post_words_runs() {
    let t = TestRing::new(8, 0);
    t.start_at(u32::MAX - 2);
    let mut runs = Vec::new();
    let mut u = 0u64;
    let n = t.ctx.post_words(11, |p, run| {
        runs.push(run);
        for i in 0..run as usize {
            // SAFETY: `run` slots of two words each from `p`.
            unsafe {
                *p.add(2 * i) = u;
                *p.add(2 * i + 1) = u;
            }
            u += 1;
        }
        run
    });
    assert_eq!(n, 11);
    // Slots 5, 6, 7, then 0..4; then three one at a time through a bounce
    // slot into the overflow list.
    assert_eq!(runs, [3, 5, 1, 1, 1]);
    assert_eq!(t.tail(), (u32::MAX - 2).wrapping_add(8));
    assert_eq!(t.held(), 3);
    assert_eq!(t.ctx.inner.lock().cq_events, 11);
    let mut seen = t.reap(u32::MAX);
    t.ctx.flush_overflow();
    seen.extend(t.reap(u32::MAX));
    assert_eq!(seen, (0..11).collect::<Vec<_>>());
    // A producer that runs dry early ends the call there.
    let n = t.ctx.post_words(4, |p, _| {
        // SAFETY: at least one slot from `p`.
        unsafe { *p = 99 };
        1
    });
    assert_eq!(n, 1);
    assert_eq!(t.ctx.post_words(4, |_, _| 0), 0);
    assert_eq!(t.reap(u32::MAX), [99]);
}
