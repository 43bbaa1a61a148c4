//! The request lists, on requests that belong to no ring: the io-wq and
//! drain FIFO (`Fifo`) and the ring's armed list (`ArmedList`). Each list
//! is checked against a plain model through a seeded run of pushes and
//! removals; under Miri (`scripts/check-miri.sh`) the borrow tracker also
//! sees every link the lists follow and every request freed after them.
//! Then `Returned`, the list freed requests go back to their ring on: given
//! to from several threads while taken, capped, freed with its ring, and
//! reused by `alloc`.

use std::collections::VecDeque;
use std::vec::Vec;

use super::*;

const STEPS: usize = if cfg!(miri) { 300 } else { 20_000 };

fn mk(id: u64) -> ReqPtr {
    boxed(Sqe::default(), core::ptr::null(), id)
}

fn mk_all(n: u64) -> Vec<ReqPtr> {
    (0..n).map(mk).collect()
}

fn free_all(v: Vec<ReqPtr>) {
    for r in v {
        // SAFETY: made by `mk`, on no list any more.
        unsafe { free_buried(r) };
    }
}

fn id(r: ReqPtr) -> u64 {
    // SAFETY: the test owns every request.
    unsafe { r.get() }.id
}

fn fifo_ids(f: &Fifo) -> Vec<u64> {
    f.iter().map(id).collect()
}

fn armed_ids(a: &ArmedList) -> Vec<u64> {
    a.iter().map(id).collect()
}

/// A small deterministic generator (xorshift), so a failure repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn fifo_empty() {
    let mut f = Fifo::new();
    let r = mk_all(1);
    assert!(f.is_empty());
    assert_eq!(f.front(), None);
    assert_eq!(f.pop(), None);
    assert!(!f.remove(r[0]), "removing from an empty list");
    assert_eq!(f.iter().count(), 0);
    free_all(r);
}

#[test]
fn fifo_order_and_refill() {
    let mut f = Fifo::new();
    let r = mk_all(4);
    for &x in &r[..3] {
        f.push(x);
    }
    assert_eq!(fifo_ids(&f), [0, 1, 2]);
    assert_eq!(f.front(), Some(r[0]));
    assert_eq!(f.pop(), Some(r[0]));
    assert_eq!(f.pop(), Some(r[1]));
    assert_eq!(f.pop(), Some(r[2]));
    assert!(f.is_empty());
    assert_eq!(f.pop(), None);
    // The tail went with the last member: a push starts a fresh list.
    f.push(r[3]);
    f.push(r[0]);
    assert_eq!(fifo_ids(&f), [3, 0]);
    assert_eq!(f.pop(), Some(r[3]));
    assert_eq!(f.pop(), Some(r[0]));
    assert!(f.is_empty());
    free_all(r);
}

#[test]
fn fifo_push_front() {
    let mut f = Fifo::new();
    let r = mk_all(4);
    // On an empty list the pushed-front member is the tail too.
    f.push_front(r[1]);
    f.push(r[2]);
    assert_eq!(fifo_ids(&f), [1, 2]);
    f.push_front(r[0]);
    f.push(r[3]);
    assert_eq!(fifo_ids(&f), [0, 1, 2, 3]);
    for x in &r {
        assert_eq!(f.pop(), Some(*x));
    }
    assert!(f.is_empty());
    free_all(r);
}

#[test]
fn fifo_remove() {
    let mut f = Fifo::new();
    let r = mk_all(6);
    for &x in &r[..5] {
        f.push(x);
    }
    assert!(f.remove(r[2]), "middle");
    assert_eq!(fifo_ids(&f), [0, 1, 3, 4]);
    // SAFETY: the test owns every request.
    assert_eq!(unsafe { r[2].get() }.qnext, None, "a removed member keeps no link");
    assert!(!f.remove(r[2]), "a member removed twice");
    assert!(!f.remove(r[5]), "never a member");
    assert!(f.remove(r[4]), "tail");
    // The tail moved back: a push lands behind 3, not behind the removed 4.
    f.push(r[5]);
    assert_eq!(fifo_ids(&f), [0, 1, 3, 5]);
    assert!(f.remove(r[0]), "head");
    assert_eq!(f.front(), Some(r[1]));
    for x in [r[1], r[3], r[5]] {
        assert!(f.remove(x));
    }
    assert!(f.is_empty());
    assert_eq!(f.front(), None);
    f.push(r[2]);
    assert_eq!(fifo_ids(&f), [2]);
    assert_eq!(f.pop(), Some(r[2]));
    free_all(r);
}

#[test]
fn fifo_against_model() {
    const N: u64 = 12;
    let r = mk_all(N);
    let mut f = Fifo::new();
    let mut model: VecDeque<u64> = VecDeque::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..STEPS {
        let x = rng.next(N as usize);
        let member = model.contains(&(x as u64));
        match rng.next(4) {
            0 if !member => {
                f.push(r[x]);
                model.push_back(x as u64);
            }
            1 if !member => {
                f.push_front(r[x]);
                model.push_front(x as u64);
            }
            2 => assert_eq!(f.pop().map(id), model.pop_front()),
            _ => {
                assert_eq!(f.remove(r[x]), member);
                model.retain(|&m| m != x as u64);
            }
        }
        assert_eq!(fifo_ids(&f), model.iter().copied().collect::<Vec<_>>());
        assert_eq!(f.is_empty(), model.is_empty());
        assert_eq!(f.front().map(id), model.front().copied());
    }
    while f.pop().is_some() {}
    free_all(r);
}

/// Every member's `aprev` names the member before it.
fn armed_links_ok(a: &ArmedList) {
    let mut prev = None;
    for m in a.iter() {
        // SAFETY: the test owns every request.
        assert_eq!(unsafe { m.get() }.aprev, prev);
        prev = Some(m);
    }
}

#[test]
fn armed_push_and_remove() {
    let mut a = ArmedList::new();
    let r = mk_all(5);
    assert_eq!(a.iter().count(), 0);
    for &x in &r {
        a.push(x);
    }
    // Pushed at the head: newest first.
    assert_eq!(armed_ids(&a), [4, 3, 2, 1, 0]);
    armed_links_ok(&a);
    a.remove(r[2]);
    assert_eq!(armed_ids(&a), [4, 3, 1, 0]);
    armed_links_ok(&a);
    // SAFETY: the test owns every request.
    let q = unsafe { r[2].get() };
    assert!(q.anext.is_none() && q.aprev.is_none(), "a removed member keeps no links");
    a.remove(r[4]);
    assert_eq!(armed_ids(&a), [3, 1, 0]);
    armed_links_ok(&a);
    a.remove(r[0]);
    assert_eq!(armed_ids(&a), [3, 1]);
    armed_links_ok(&a);
    a.remove(r[3]);
    a.remove(r[1]);
    assert_eq!(a.iter().count(), 0);
    // A removed request can be listed again.
    a.push(r[2]);
    a.push(r[0]);
    assert_eq!(armed_ids(&a), [0, 2]);
    armed_links_ok(&a);
    a.remove(r[0]);
    a.remove(r[2]);
    assert_eq!(a.iter().count(), 0);
    free_all(r);
}

#[test]
fn armed_against_model() {
    const N: u64 = 12;
    let r = mk_all(N);
    let mut a = ArmedList::new();
    // Head first, as `iter` walks.
    let mut model: VecDeque<u64> = VecDeque::new();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..STEPS {
        let x = rng.next(N as usize) as u64;
        if model.contains(&x) {
            a.remove(r[x as usize]);
            model.retain(|&m| m != x);
        } else {
            a.push(r[x as usize]);
            model.push_front(x);
        }
        assert_eq!(armed_ids(&a), model.iter().copied().collect::<Vec<_>>());
        armed_links_ok(&a);
    }
    for x in model {
        a.remove(r[x as usize]);
    }
    assert_eq!(a.iter().count(), 0);
    free_all(r);
}

/// `Returned` from several threads at once, as workers free requests
/// while the submitter takes them: every request given comes out of
/// `take_all` exactly once, whole. Under Miri the data-race detector
/// checks that a taker sees each giver's writes (the release/acquire
/// pair), and the leak check that nothing given is lost.
#[test]
fn returned_from_many_threads() {
    const THREADS: u64 = 3;
    // Under the cap, so that no give frees its request instead.
    const PER: u64 = if cfg!(miri) { 15 } else { 80 };
    let ret = Returned::new();
    let mut seen = Vec::new();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let ret = &ret;
            s.spawn(move || {
                for i in 0..PER {
                    let r = mk(t * PER + i);
                    // A write the taker must see.
                    // SAFETY: ours until given.
                    unsafe { r.get() }.res = (t * PER + i) as i32;
                    ret.give(r);
                }
            });
        }
        while (seen.len() as u64) < THREADS * PER {
            let mut at = ret.take_all();
            while let Some(p) = at {
                // SAFETY: taken whole: ours now.
                let r = unsafe { p.get() };
                at = r.qnext.take();
                assert_eq!(r.res as u64, r.id);
                seen.push(r.id);
                ret.len.fetch_sub(1, Ordering::Relaxed);
                // SAFETY: made by `mk`, on no list any more.
                unsafe { free_buried(p) };
            }
            std::thread::yield_now();
        }
    });
    seen.sort_unstable();
    assert_eq!(seen, (0..THREADS * PER).collect::<Vec<_>>());
    assert_eq!(ret.len.load(Ordering::Relaxed), 0);
}

/// Past the cap a given request is freed at once; the rest are freed with
/// the list, with what each still held (Miri's leak check sees both).
#[test]
fn returned_cap_and_drop() {
    let ret = Returned::new();
    for i in 0..RETURNED_MAX as u64 + 5 {
        let r = mk(i);
        // SAFETY: ours until given.
        unsafe { r.get() }.creds = Some(alloc::sync::Arc::new(super::super::creds::Creds::for_test()));
        ret.give(r);
    }
    assert_eq!(ret.len.load(Ordering::Relaxed), RETURNED_MAX);
    drop(ret);
}

/// A request freed on its ring comes back from the next `alloc` as a
/// fresh one, what it held dropped.
#[test]
fn alloc_reuses_a_freed_request() {
    let t = super::super::ctx::tests::TestRing::new(4, 0);
    let ctx = &*t.ctx;
    let sqe = Sqe::default();
    let a = alloc(ctx, &mut ctx.submit.lock().cache, &sqe, 1);
    // SAFETY: ours.
    unsafe { a.get() }.creds = Some(alloc::sync::Arc::new(super::super::creds::Creds::for_test()));
    free(ctx, a);
    assert_eq!(ctx.users.load(Ordering::Relaxed), 0);
    let b = alloc(ctx, &mut ctx.submit.lock().cache, &sqe, 2);
    assert_eq!(a.addr(), b.addr());
    // SAFETY: ours.
    let r = unsafe { b.get() };
    assert!(r.creds.is_none());
    assert_eq!((r.id, r.flags, r.file), (2, 0, -1));
    assert_eq!(b.state().load(Ordering::Relaxed), st::IDLE);
    free(ctx, b);
    assert_eq!(ctx.users.load(Ordering::Relaxed), 0);
}
