//! The ring logic driven from several threads at once, on a ring that lives
//! in ordinary memory with a thread standing in for the kernel, so that it
//! runs under Miri (`scripts/check-miri.sh`), whose data-race detector and
//! borrow tracker see any reference two threads hold to one struct. Natively
//! it is a plain (short) unit test.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread;

use super::queue::{flush_sq, get_sqe, peek_batch_cqe};
use super::types::{IoUring, Ring};
use crate::sys::{io_uring_cqe, io_uring_sqe, IORING_SETUP_SQPOLL};

const SQ: u32 = 4;
const CQ: u32 = 8;
const OPS: u64 = if cfg!(miri) { 60 } else { 20_000 };

/// The words and arrays the kernel would own: SQ head/tail/flags/mask/
/// entries, then the same for the CQ.
struct FakeKernel {
    words: [AtomicU32; 10],
    sqes: Vec<io_uring_sqe>,
    cqes: Vec<io_uring_cqe>,
}

const SQ_HEAD: usize = 0;
const SQ_TAIL: usize = 1;
const CQ_HEAD: usize = 5;
const CQ_TAIL: usize = 6;

/// A `Ring` handed to another thread, as a C program hands its pointer.
#[derive(Clone, Copy)]
struct Shared(*mut IoUring);
// SAFETY: the threads below keep the ownership rules documented on Ring.
unsafe impl Send for Shared {}

impl Shared {
    fn ptr<T>(self) -> *mut T {
        self.0.cast()
    }

    fn ring(self) -> Ring<'static> {
        // SAFETY: the struct outlives every thread (joined before it drops).
        unsafe { Ring::new(self.0) }.unwrap()
    }
}

fn word(k: &FakeKernel, i: usize) -> *mut u32 {
    k.words[i].as_ptr()
}

#[test]
fn submitter_reaper_and_kernel_threads_share_one_ring() {
    let mut k = Box::new(FakeKernel {
        words: Default::default(),
        // SAFETY: all-zero SQEs and CQEs are valid (plain integers and unions).
        sqes: (0..SQ).map(|_| unsafe { core::mem::zeroed() }).collect(),
        cqes: (0..CQ).map(|_| unsafe { core::mem::zeroed() }).collect(),
    });
    k.words[3].store(SQ - 1, Ordering::Relaxed);
    k.words[4].store(SQ, Ordering::Relaxed);
    k.words[8].store(CQ - 1, Ordering::Relaxed);
    k.words[9].store(CQ, Ordering::Relaxed);
    let mut r = Box::new(IoUring::empty());
    r.sq.khead = word(&k, SQ_HEAD);
    r.sq.ktail = word(&k, SQ_TAIL);
    r.sq.kflags = word(&k, 2);
    r.sq.kring_mask = word(&k, 3);
    r.sq.kring_entries = word(&k, 4);
    r.sq.sqes = k.sqes.as_mut_ptr();
    r.sq.ring_mask = SQ - 1;
    r.sq.ring_entries = SQ;
    r.cq.khead = word(&k, CQ_HEAD);
    r.cq.ktail = word(&k, CQ_TAIL);
    r.cq.kring_mask = word(&k, 8);
    r.cq.kring_entries = word(&k, 9);
    r.cq.cqes = k.cqes.as_mut_ptr();
    r.cq.ring_mask = CQ - 1;
    r.cq.ring_entries = CQ;
    // Like an SQ thread, the fake kernel consumes SQEs while we fill more.
    r.flags = IORING_SETUP_SQPOLL;
    r.ring_fd = 100;
    r.enter_ring_fd = 100;
    let shared = Shared(&mut *r);
    let (sqes, cqes) = (Shared(k.sqes.as_mut_ptr().cast()), Shared(k.cqes.as_mut_ptr().cast()));
    let words: &FakeKernel = &k;
    let done = &AtomicBool::new(false);

    thread::scope(|s| {
        // The submitting thread: get_sqe and flush_sq only.
        s.spawn(move || {
            let ring = shared.ring();
            for ud in 0..OPS {
                let sqe = loop {
                    let sqe = get_sqe(ring);
                    if !sqe.is_null() {
                        break sqe;
                    }
                    thread::yield_now();
                };
                // SAFETY: get_sqe handed us this slot until the next flush.
                unsafe { (*sqe).user_data = ud };
                flush_sq(ring);
            }
        });
        // The kernel: consumes SQEs, posts one CQE for each.
        s.spawn(move || {
            let (sqes, cqes) = (sqes.ptr::<io_uring_sqe>(), cqes.ptr::<io_uring_cqe>());
            let mut posted = 0;
            while posted < OPS {
                let head = words.words[SQ_HEAD].load(Ordering::Relaxed);
                let tail = words.words[SQ_TAIL].load(Ordering::Acquire);
                let ctail = words.words[CQ_TAIL].load(Ordering::Relaxed);
                let chead = words.words[CQ_HEAD].load(Ordering::Acquire);
                if head == tail || ctail.wrapping_sub(chead) == CQ {
                    thread::yield_now();
                    continue;
                }
                // SAFETY: the slot is published (below tail) and unconsumed.
                let ud = unsafe { (*sqes.add((head & (SQ - 1)) as usize)).user_data };
                words.words[SQ_HEAD].store(head.wrapping_add(1), Ordering::Release);
                // SAFETY: the CQ slot is free (tail - head < CQ).
                unsafe {
                    let c = cqes.add((ctail & (CQ - 1)) as usize);
                    (*c).user_data = ud;
                    (*c).res = 0;
                    (*c).flags = 0;
                }
                words.words[CQ_TAIL].store(ctail.wrapping_add(1), Ordering::Release);
                posted += 1;
            }
        });
        // The reaping thread: peek_batch_cqe, then the header's cq_advance.
        s.spawn(move || {
            let ring = shared.ring();
            let mut next = 0;
            let mut out = [core::ptr::null_mut::<io_uring_cqe>(); 3];
            while next < OPS {
                // SAFETY: `out` has room for 3 pointers.
                let n = unsafe { peek_batch_cqe(ring, out.as_mut_ptr(), 3) };
                if n == 0 {
                    thread::yield_now();
                    continue;
                }
                for c in &out[..n as usize] {
                    // SAFETY: the CQE is below the tail and not yet consumed.
                    assert_eq!(unsafe { (**c).user_data }, next);
                    next += 1;
                }
                let h = words.words[CQ_HEAD].load(Ordering::Relaxed);
                words.words[CQ_HEAD].store(h.wrapping_add(n), Ordering::Release);
            }
            done.store(true, Ordering::Relaxed);
        });
    });
    assert!(done.load(Ordering::Relaxed));
    drop(r);
    drop(k);
}
