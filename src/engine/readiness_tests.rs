//! The readiness set's state machine, without its epoll set: who serves
//! the set, when its cover is armed or left to the reactor's tick or to a
//! submission, and when a buried request's memory goes. The set's fd is
//! a stand-in that never reaches a system call: the ring counts as lost
//! (see `Ctx::epoch`), so `serve` and `disarm` leave the set alone, and no
//! test arms a cover. So the tests run under Miri (`scripts/check-miri.sh`),
//! whose data-race detector and weak memory model check the submission
//! hand-over across threads.

use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;

use super::super::ctx::tests::TestRing;
use super::super::req::{self, rf, st};
use super::*;
use crate::sys::flat_sqe::Sqe;

/// A number that stands for the set's epoll fd.
const FAKE_EPFD: i32 = 1 << 20;

fn ring() -> TestRing {
    let mut t = TestRing::new(4, 0);
    t.ctx.epoch = os::epoch().wrapping_add(1);
    assert!(t.ctx.is_lost());
    t.ctx.ready.epfd.store(FAKE_EPFD, Ordering::Relaxed);
    t
}

fn state(rd: &Readiness) -> (bool, bool, bool, u32) {
    let s = rd.state.lock();
    (s.serving, s.covered, s.lazy, s.armed)
}

#[test]
fn one_server_at_a_time() {
    let t = TestRing::new(4, 0);
    assert!(!t.ctx.ready.claim(), "no set yet: nothing to serve");
    let t = ring();
    let rd = &t.ctx.ready;
    assert!(rd.claim());
    assert!(!rd.claim(), "a second server");
    rd.release(&t.ctx);
    assert_eq!(state(rd), (false, false, false, 0));
    assert!(rd.claim(), "the set is free again");
    rd.release(&t.ctx);
}

#[test]
fn release_leaves_the_cover_to_the_tick() {
    let t = ring();
    let rd = &t.ctx.ready;
    // Requests left in a set that is still covered: nothing to arm.
    rd.state.lock().armed = 2;
    rd.state.lock().covered = true;
    assert!(rd.claim());
    rd.release(&t.ctx);
    assert_eq!(state(rd), (false, true, false, 2));
    // Uncovered, and the ring fd is signalled (watched, so the reactor
    // ticks soon): the cover waits for that tick.
    rd.state.lock().covered = false;
    assert!(t.ctx.fd_signalled.load(Ordering::Relaxed));
    assert!(rd.claim());
    rd.release(&t.ctx);
    assert_eq!(state(rd), (false, false, true, 2));
    // A server that comes back first takes the set: the tick then has
    // nothing to cover.
    assert!(rd.claim());
    rd.tick(&t.ctx);
    assert_eq!(state(rd), (true, false, false, 2));
    rd.state.lock().armed = 0;
    rd.release(&t.ctx);
    assert_eq!(state(rd), (false, false, false, 0));
}

/// A request freed while its set is served stays allocated until the
/// server lets go: the batch in hand may still name it. (Miri reports a
/// use after free, or a leak, if either side gets it wrong.)
#[test]
fn buried_requests_wait_for_the_server() {
    let t = ring();
    let ctx = &*t.ctx;
    let rd = &ctx.ready;
    let sqe = Sqe::default();
    let a = req::alloc(ctx, &mut ctx.submit.lock().cache, &sqe, 1);
    let b = req::alloc(ctx, &mut ctx.submit.lock().cache, &sqe, 2);
    for r in [a, b] {
        // SAFETY: the test owns both requests.
        unsafe { r.get() }.flags |= rf::EPOLLED;
    }
    rd.state.lock().armed = 2;
    rd.state.lock().covered = true;
    assert!(rd.claim());
    req::free(ctx, a);
    assert_eq!(rd.state.lock().graves.len(), 1);
    assert_eq!(state(rd).3, 1);
    assert_eq!(ctx.users.load(Ordering::Relaxed), 1);
    // SAFETY: buried, not freed: the server may still read it.
    assert_eq!(unsafe { a.get() }.id, 1);
    rd.release(ctx);
    assert!(rd.state.lock().graves.is_empty());
    // Nobody serves: freed at once.
    req::free(ctx, b);
    assert!(rd.state.lock().graves.is_empty());
    assert_eq!(state(rd).3, 0);
    assert_eq!(ctx.users.load(Ordering::Relaxed), 0);
}

/// An event for a request a canceller took first is dropped: the
/// canceller completes it.
#[test]
fn ready_skips_a_taken_request() {
    let t = TestRing::new(4, 0);
    let ctx = &*t.ctx;
    let r = req::alloc(ctx, &mut ctx.submit.lock().cache, &Sqe::default(), 1);
    r.state().store(st::CANCELED, Ordering::Relaxed);
    ready(ctx, r, libc::EPOLLIN as u32);
    assert_eq!(r.state().load(Ordering::Relaxed), st::CANCELED);
    r.state().store(st::IDLE, Ordering::Relaxed);
    req::free(ctx, r);
    assert_eq!(ctx.users.load(Ordering::Relaxed), 0);
}

#[test]
fn submission_takes_over_the_cover() {
    let t = TestRing::new(4, 0);
    let rd = &t.ctx.ready;
    assert!(!rd.left_to_submission(), "no submission under way");
    assert!(!rd.cover_due.load(Ordering::Relaxed));
    rd.begin_submit();
    assert!(rd.left_to_submission());
    assert!(rd.cover_due.load(Ordering::Relaxed));
    rd.end_submit(&t.ctx);
    assert!(!rd.cover_due.load(Ordering::Relaxed), "the submission's end armed it");
    assert!(!rd.submitting.load(Ordering::Relaxed));
}

/// A submission ending on one thread while another arms a request: if
/// the arm left the cover to the submission, the submission's end saw it
/// and armed it. (Both store, then load the other's flag, SeqCst.)
#[test]
fn cover_hand_over_races() {
    let rounds = if cfg!(miri) { 150 } else { 2_000 };
    let t = TestRing::new(4, 0);
    let (ctx, rd) = (&*t.ctx, &t.ctx.ready);
    for _ in 0..rounds {
        rd.cover_due.store(false, Ordering::SeqCst);
        rd.begin_submit();
        // Both sides start together, so that their steps interleave.
        let arrived = AtomicU32::new(0);
        let start = || {
            arrived.fetch_add(1, Ordering::SeqCst);
            while arrived.load(Ordering::SeqCst) < 2 {
                std::hint::spin_loop();
            }
        };
        let got = thread::scope(|s| {
            s.spawn(|| {
                start();
                rd.end_submit(ctx)
            });
            start();
            rd.left_to_submission()
        });
        // Which side wins is the scheduler's choice; the outcome is not.
        if got {
            assert!(!rd.cover_due.load(Ordering::SeqCst), "a cover left to a submission that had ended");
        }
    }
}
