//! The request lists, on requests that belong to no ring: the io-wq and
//! drain FIFO (`Fifo`) and the ring's armed list (`ArmedList`). Each list
//! is checked against a plain model through a seeded run of pushes and
//! removals; under Miri (`scripts/check-miri.sh`) the borrow tracker also
//! sees every link the lists follow and every request freed after them.

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
