//! Submission and completion: flushing the SQ, entering the kernel, and
//! finding completions.

use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::{fence, Ordering};

use super::syscall::{enter, enter_kernel};
use super::types::{int_flags, IoUring, Ring, RING_SLOW};
use super::{cqe_shift, load_acquire, load_relaxed, sqe_shift, store_release};
use crate::sys::{
    __kernel_timespec, io_uring_cqe, io_uring_getevents_arg, io_uring_reg_wait, io_uring_sqe, IORING_CQE_F_32,
    IORING_CQE_F_SKIP, IORING_ENTER_EXT_ARG, IORING_ENTER_EXT_ARG_REG, IORING_ENTER_GETEVENTS, IORING_ENTER_SQ_WAIT,
    IORING_ENTER_SQ_WAKEUP, IORING_FEAT_EXT_ARG, IORING_FEAT_MIN_TIMEOUT, IORING_OP_TIMEOUT, IORING_SETUP_CQE_MIXED,
    IORING_SETUP_SQPOLL, IORING_SETUP_SQ_REWIND, IORING_SQ_CQ_OVERFLOW, IORING_SQ_NEED_WAKEUP, IORING_SQ_TASKRUN,
};

pub use crate::sys::liburing::LIBURING_UDATA_TIMEOUT;
/// Size of the kernel's sigset, which `io_uring_enter` wants alongside it.
pub const NSIG_BYTES: usize = 65 / 8;

// ---------------------------------------------------------------- submission

/// Next free SQE, initialised as liburing's header does, or null when full.
#[inline]
pub fn get_sqe(ring: Ring) -> *mut io_uring_sqe {
    let head = sq_head(ring);
    let tail = ring.sq_sqe_tail();
    // A dead ring has no entries, so it never gets past this test.
    if tail.wrapping_sub(head) >= ring.sq_ring_entries() {
        return ptr::null_mut();
    }
    let idx = ((tail & ring.sq_ring_mask()) << sqe_shift(ring.flags())) as usize;
    ring.set_sq_sqe_tail(tail.wrapping_add(1));
    // SAFETY: idx is inside the SQE array of this live ring, and the slot is
    // ours: the kernel has consumed it (tail - head < entries).
    unsafe {
        let sqe = ring.sq_sqes().add(idx);
        // Clear what the prep helpers do not always set.
        (*sqe).flags = 0;
        (*sqe).ioprio = 0;
        (*sqe).rw_flags_u.rw_flags = 0;
        (*sqe).buf_index_u.buf_index = 0;
        (*sqe).personality = 0;
        (*sqe).splice_fd_in_u.file_index = 0;
        (*sqe).addr3_u.addr3_s = crate::sys::io_uring_sqe_addr3_s { addr3: 0, __pad2: [0] };
        sqe
    }
}

/// The kernel's SQ head; SQPOLL consumes concurrently, hence the acquire.
#[inline(always)]
fn sq_head(ring: Ring) -> u32 {
    // SAFETY: khead points into the live SQ ring (or the dead ring's words).
    unsafe {
        if ring.flags() & IORING_SETUP_SQPOLL != 0 {
            load_acquire(ring.sq_khead())
        } else {
            load_relaxed(ring.sq_khead())
        }
    }
}

#[inline(always)]
fn sq_flags(ring: Ring) -> u32 {
    // SAFETY: kflags points into the live SQ ring (or the dead ring's words).
    unsafe { load_relaxed(ring.sq_kflags()) }
}

/// Publishes SQEs filled since the last flush; returns how many the kernel
/// has yet to consume.
#[inline]
pub fn flush_sq(ring: Ring) -> u32 {
    let tail = ring.sq_sqe_tail();
    if ring.flags() & IORING_SETUP_SQ_REWIND != 0 {
        // The kernel reads from slot 0 each time; only the count matters.
        ring.set_sq_sqe_tail(0);
        return tail;
    }
    if ring.sq_sqe_head() != tail {
        ring.set_sq_sqe_head(tail);
        // SAFETY: ktail points into the live SQ ring (a dead ring never gets
        // here: its sqe_head and sqe_tail are both 0). Release orders the SQE
        // stores before the tail becomes visible.
        unsafe { store_release(ring.sq_ktail(), tail) };
    }
    // SAFETY: khead points into the live SQ ring.
    tail.wrapping_sub(unsafe { load_relaxed(ring.sq_khead()) })
}

/// Whether submitting `submit` entries needs a syscall; sets SQ_WAKEUP when
/// a sleeping SQPOLL thread must be woken.
#[inline(always)]
fn sq_needs_enter(ring: Ring, submit: u32, flags: &mut u32) -> bool {
    if submit == 0 {
        return false;
    }
    if ring.flags() & IORING_SETUP_SQPOLL == 0 {
        return true;
    }
    // The tail store must be visible before we sample NEED_WAKEUP, or the
    // thread could go to sleep having missed our entries.
    fence(Ordering::SeqCst);
    if sq_flags(ring) & IORING_SQ_NEED_WAKEUP != 0 {
        *flags |= IORING_ENTER_SQ_WAKEUP;
        return true;
    }
    false
}

#[inline(always)]
fn cq_needs_flush(ring: Ring) -> bool {
    sq_flags(ring) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN) != 0
}

#[inline(always)]
fn cq_needs_enter(ring: Ring) -> bool {
    ring.int_flags() & int_flags::CQ_ENTER != 0 || cq_needs_flush(ring)
}

/// What a wait or peek call does besides waiting or peeking.
pub use crate::diag::Call;

/// Hook (diagnostics) of the wait and peek calls: runs `f` on the caller's
/// `ring`, or returns `err` for a null pointer, through the diagnostics
/// when they are on. One comparison covers both, so the hot path pays
/// nothing for them: the gate is 1 (only NULL lies below it) unless
/// tracing or checking is on. (The submits reach the diagnostics through
/// RING_SLOW instead, in [`submit_general`].)
///
/// # Safety
/// A non-null `ring` is valid as [`Ring::new`] requires.
#[inline(always)]
pub unsafe fn call<R>(ring: *mut IoUring, err: R, kind: Call, f: impl FnOnce(Ring) -> R) -> R {
    if (ring as usize) < crate::diag::gate() {
        if ring.is_null() {
            return err;
        }
        return crate::diag::call(ring, kind, move || {
            // SAFETY: non-null; valid per the contract. The diagnostics
            // only read it.
            f(unsafe { Ring::new_unchecked(ring) })
        });
    }
    // SAFETY: non-null; valid per the contract.
    f(unsafe { Ring::new_unchecked(ring) })
}

/// The general submit: any ring, including SQPOLL and SQ_REWIND ones, and
/// those marked RING_SLOW (dead, or watched by the diagnostics).
#[cold]
#[inline(never)]
fn submit_general(ring: Ring, wait_nr: u32, getevents: bool) -> i32 {
    if crate::diag::on() {
        let call = crate::diag::Call::Submit;
        return crate::diag::call(ring.as_ptr(), call, || submit_checked(ring, wait_nr, getevents));
    }
    submit_checked(ring, wait_nr, getevents)
}

fn submit_checked(ring: Ring, wait_nr: u32, getevents: bool) -> i32 {
    if ring.is_dead() {
        return -libc::EBADF;
    }
    let submitted = flush_sq(ring);
    let cq_enter = getevents || wait_nr != 0 || cq_needs_enter(ring);
    let mut flags = 0;
    if sq_needs_enter(ring, submitted, &mut flags) || cq_enter {
        if cq_enter {
            flags |= IORING_ENTER_GETEVENTS;
        }
        enter(ring, submitted, wait_nr, flags, ptr::null(), NSIG_BYTES)
    } else {
        submitted as i32
    }
}

/// Submit (and wait for `wait_nr`). Rings without an SQ thread or SQ rewind
/// take a straight path: only a syscall submits there, so the decision is
/// just whether there is anything to submit or reap.
#[inline(always)]
fn submit_inner(ring: Ring, wait_nr: u32, getevents: bool) -> i32 {
    if ring.flags() & (IORING_SETUP_SQPOLL | IORING_SETUP_SQ_REWIND | RING_SLOW) != 0 {
        return submit_general(ring, wait_nr, getevents);
    }
    let tail = ring.sq_sqe_tail();
    // Without an SQ thread the kernel reads the tail only inside our own
    // io_uring_enter, so storing an unchanged value is harmless and cheaper
    // than testing for it.
    ring.set_sq_sqe_head(tail);
    // SAFETY: ktail points into the live SQ ring (not the dead ring's
    // read-only words: RING_SLOW took the general path). Release orders the
    // SQE stores before the tail becomes visible.
    unsafe { store_release(ring.sq_ktail(), tail) };
    // SAFETY: khead points into the live SQ ring.
    let submitted = tail.wrapping_sub(unsafe { load_relaxed(ring.sq_khead()) });
    if wait_nr != 0 || getevents {
        return enter_kernel(ring, submitted, wait_nr, IORING_ENTER_GETEVENTS, ptr::null(), NSIG_BYTES);
    }
    submit_no_wait(ring, submitted)
}

/// Submit without waiting: reap only if overflow or task work is pending.
#[inline(always)]
fn submit_no_wait(ring: Ring, submitted: u32) -> i32 {
    if cq_needs_enter(ring) {
        enter_kernel(ring, submitted, 0, IORING_ENTER_GETEVENTS, ptr::null(), NSIG_BYTES)
    } else if submitted != 0 {
        enter_kernel(ring, submitted, 0, 0, ptr::null(), NSIG_BYTES)
    } else {
        0
    }
}

/// `io_uring_submit`.
#[inline(always)]
pub fn submit(ring: Ring) -> i32 {
    submit_inner(ring, 0, false)
}

/// `io_uring_submit_and_wait`.
#[inline(always)]
pub fn submit_and_wait(ring: Ring, wait_nr: u32) -> i32 {
    submit_inner(ring, wait_nr, false)
}

/// `io_uring_submit_and_get_events`.
#[inline(always)]
pub fn submit_and_get_events(ring: Ring) -> i32 {
    submit_inner(ring, 0, true)
}

/// `io_uring_get_events`: runs pending task work and flushes overflow.
pub fn get_events(ring: Ring) -> i32 {
    if ring.is_dead() {
        return -libc::EBADF;
    }
    enter(ring, 0, 0, IORING_ENTER_GETEVENTS, ptr::null(), NSIG_BYTES)
}

/// `__io_uring_sqring_wait`: sleeps until the SQPOLL thread frees SQ space.
pub fn sqring_wait(ring: Ring) -> i32 {
    if ring.is_dead() {
        return -libc::EBADF;
    }
    enter(ring, 0, 0, IORING_ENTER_SQ_WAIT, ptr::null(), NSIG_BYTES)
}

// ---------------------------------------------------------------- completion

#[inline(always)]
fn cqe_slots(cqe: &io_uring_cqe) -> u32 {
    if cqe.flags & IORING_CQE_F_32 != 0 {
        2
    } else {
        1
    }
}

#[inline(always)]
fn cq_advance(ring: Ring, nr: u32) {
    let khead = ring.cq_khead();
    // SAFETY: khead points into the live CQ ring, written only by the
    // reaping thread (this one). Release keeps our reads of the consumed
    // CQEs before the kernel may reuse their slots.
    unsafe { store_release(khead, load_relaxed(khead).wrapping_add(nr)) };
}

/// The first CQE meant for the application, consuming the ring's own
/// padding and internal-timeout entries on the way. Returns the CQE (or
/// null) and how many entries were available, or the error an internal
/// timeout reported.
fn peek_cqe(ring: Ring) -> (Result<*mut io_uring_cqe, i32>, u32) {
    let mask = ring.cq_ring_mask();
    let shift = cqe_shift(ring.flags());
    loop {
        // SAFETY: ktail/khead point into the live CQ ring; acquire on the
        // tail makes the CQEs before it readable.
        let (tail, head) = unsafe { (load_acquire(ring.cq_ktail()), load_relaxed(ring.cq_khead())) };
        let available = tail.wrapping_sub(head);
        if available == 0 {
            return (Ok(ptr::null_mut()), 0);
        }
        // SAFETY: head is inside [head, tail), so the slot holds a CQE.
        let cqe = unsafe { ring.cq_cqes().add(((head & mask) << shift) as usize) };
        // SAFETY: as above.
        let c = unsafe { &*cqe };
        let internal_timeout = ring.features() & IORING_FEAT_EXT_ARG == 0 && c.user_data == LIBURING_UDATA_TIMEOUT;
        if c.flags & IORING_CQE_F_SKIP == 0 && !internal_timeout {
            return (Ok(cqe), available);
        }
        let res = c.res;
        let nr = cqe_slots(c);
        cq_advance(ring, nr);
        if internal_timeout && res < 0 {
            return (Err(res), available);
        }
    }
}

/// Parameters of one trip through [`get_cqe_inner`].
struct Wait {
    submit: u32,
    wait_nr: u32,
    get_flags: u32,
    arg: *const c_void,
    arg_sz: usize,
    /// A timeout is in force: give up after one unsuccessful enter.
    has_ts: bool,
}

fn get_cqe_inner(ring: Ring, cqe_ptr: &mut *mut io_uring_cqe, w: &mut Wait) -> i32 {
    if ring.is_dead() {
        *cqe_ptr = ptr::null_mut();
        return -libc::EBADF;
    }
    let mut cqe: *mut io_uring_cqe;
    let mut looped = false;
    let mut err = 0;
    loop {
        let mut flags = 0;
        let mut need_enter = false;
        let (found, available) = peek_cqe(ring);
        match found {
            Ok(c) => cqe = c,
            Err(e) => {
                if err == 0 {
                    err = e;
                }
                cqe = ptr::null_mut();
                break;
            }
        }
        if cqe.is_null() && w.wait_nr == 0 && w.submit == 0 {
            // Nothing to wait for: only enter to flush overflow or task work,
            // and only once.
            if looped || !cq_needs_enter(ring) {
                if err == 0 {
                    err = -libc::EAGAIN;
                }
                break;
            }
            need_enter = true;
        }
        if w.wait_nr > available || need_enter {
            flags |= IORING_ENTER_GETEVENTS | w.get_flags;
            need_enter = true;
        }
        if sq_needs_enter(ring, w.submit, &mut flags) {
            need_enter = true;
        }
        if !need_enter {
            break;
        }
        if looped && w.has_ts {
            // The kernel already waited out the timeout once.
            let timed = if w.get_flags & IORING_ENTER_EXT_ARG_REG != 0 {
                true
            } else {
                // SAFETY: without EXT_ARG_REG, has_ts implies arg is our
                // io_uring_getevents_arg.
                unsafe { (*(w.arg as *const io_uring_getevents_arg)).ts != 0 }
            };
            if cqe.is_null() && timed && err == 0 {
                err = -libc::ETIME;
            }
            break;
        }
        let ret = enter(ring, w.submit, w.wait_nr, flags, w.arg, w.arg_sz);
        if ret < 0 {
            if err == 0 {
                err = ret;
            }
            break;
        }
        w.submit = w.submit.saturating_sub(ret as u32);
        if !cqe.is_null() {
            break;
        }
        if !looped {
            looped = true;
            err = ret;
        }
    }
    *cqe_ptr = cqe;
    err
}

/// `__io_uring_get_cqe`.
pub fn get_cqe(
    ring: Ring,
    cqe_ptr: &mut *mut io_uring_cqe,
    submit: u32,
    wait_nr: u32,
    sigmask: *const libc::sigset_t,
) -> i32 {
    let mut w =
        Wait { submit, wait_nr, get_flags: 0, arg: sigmask as *const c_void, arg_sz: NSIG_BYTES, has_ts: false };
    get_cqe_inner(ring, cqe_ptr, &mut w)
}

fn getevents_arg(
    sigmask: *const libc::sigset_t,
    ts: *const __kernel_timespec,
    min_wait_usec: u32,
) -> io_uring_getevents_arg {
    io_uring_getevents_arg { sigmask: sigmask as u64, sigmask_sz: NSIG_BYTES as u32, min_wait_usec, ts: ts as u64 }
}

/// Waits with an EXT_ARG argument: timeout and sigmask go to the kernel
/// directly, without a timeout SQE.
fn wait_ext_arg(
    ring: Ring,
    cqe_ptr: &mut *mut io_uring_cqe,
    submit: u32,
    wait_nr: u32,
    ts: *const __kernel_timespec,
    min_wait_usec: u32,
    sigmask: *const libc::sigset_t,
) -> i32 {
    let min = if ring.has_feature(IORING_FEAT_MIN_TIMEOUT) { min_wait_usec } else { 0 };
    let arg = getevents_arg(sigmask, ts, min);
    let mut w = Wait {
        submit,
        wait_nr,
        get_flags: IORING_ENTER_EXT_ARG,
        arg: &arg as *const _ as *const c_void,
        arg_sz: core::mem::size_of::<io_uring_getevents_arg>(),
        has_ts: !ts.is_null(),
    };
    get_cqe_inner(ring, cqe_ptr, &mut w)
}

/// Queues an internal IORING_OP_TIMEOUT for kernels without EXT_ARG and
/// flushes it; returns the number of entries to submit.
fn queue_internal_timeout(ring: Ring, wait_nr: u32, ts: *const __kernel_timespec) -> i32 {
    let mut sqe = get_sqe(ring);
    if sqe.is_null() {
        let ret = submit(ring);
        if ret < 0 {
            return ret;
        }
        sqe = get_sqe(ring);
        if sqe.is_null() {
            return -libc::EAGAIN;
        }
    }
    // SAFETY: get_sqe returned a slot we own.
    unsafe {
        let s = &mut *sqe;
        s.opcode = IORING_OP_TIMEOUT;
        s.fd = -1;
        s.off_u.off = wait_nr as u64;
        s.addr_u.addr = ts as u64;
        s.len = 1;
        s.rw_flags_u.timeout_flags = 0;
        s.user_data = LIBURING_UDATA_TIMEOUT;
    }
    flush_sq(ring) as i32
}

/// Waits for `wait_nr` CQEs, for at most `ts` if given; with `submit`,
/// pending SQEs go to the kernel in the same call. Kernels without EXT_ARG
/// get an internal timeout SQE instead of a timeout argument.
fn timed_wait(
    ring: Ring,
    cqe_ptr: &mut *mut io_uring_cqe,
    wait_nr: u32,
    ts: *const __kernel_timespec,
    min_wait_usec: u32,
    sigmask: *const libc::sigset_t,
    submit: bool,
) -> i32 {
    if ring.is_dead() {
        return -libc::EBADF;
    }
    if !ts.is_null() && !ring.has_feature(IORING_FEAT_EXT_ARG) {
        let ret = queue_internal_timeout(ring, wait_nr, ts);
        if ret < 0 {
            return ret;
        }
        return get_cqe(ring, cqe_ptr, ret as u32, wait_nr, sigmask);
    }
    let to_submit = if submit { flush_sq(ring) } else { 0 };
    if ts.is_null() {
        get_cqe(ring, cqe_ptr, to_submit, wait_nr, sigmask)
    } else {
        wait_ext_arg(ring, cqe_ptr, to_submit, wait_nr, ts, min_wait_usec, sigmask)
    }
}

/// Checks that a wait which needs kernel `feature` can be made: -EBADF
/// on a dead ring, -EINVAL without the feature.
fn live_with(ring: Ring, feature: u32) -> Result<(), i32> {
    if ring.is_dead() {
        return Err(-libc::EBADF);
    }
    if !ring.has_feature(feature) {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

/// `io_uring_wait_cqes`.
pub fn wait_cqes(
    ring: Ring,
    cqe_ptr: &mut *mut io_uring_cqe,
    wait_nr: u32,
    ts: *const __kernel_timespec,
    sigmask: *const libc::sigset_t,
) -> i32 {
    timed_wait(ring, cqe_ptr, wait_nr, ts, 0, sigmask, false)
}

/// `io_uring_wait_cqes_min_timeout`.
pub fn wait_cqes_min_timeout(
    ring: Ring,
    cqe_ptr: &mut *mut io_uring_cqe,
    wait_nr: u32,
    ts: *const __kernel_timespec,
    min_wait_usec: u32,
    sigmask: *const libc::sigset_t,
) -> i32 {
    if let Err(e) = live_with(ring, IORING_FEAT_MIN_TIMEOUT) {
        return e;
    }
    wait_ext_arg(ring, cqe_ptr, 0, wait_nr, ts, min_wait_usec, sigmask)
}

/// `io_uring_submit_and_wait_timeout`.
pub fn submit_and_wait_timeout(
    ring: Ring,
    cqe_ptr: &mut *mut io_uring_cqe,
    wait_nr: u32,
    ts: *const __kernel_timespec,
    sigmask: *const libc::sigset_t,
) -> i32 {
    timed_wait(ring, cqe_ptr, wait_nr, ts, 0, sigmask, true)
}

/// `io_uring_submit_and_wait_min_timeout`.
pub fn submit_and_wait_min_timeout(
    ring: Ring,
    cqe_ptr: &mut *mut io_uring_cqe,
    wait_nr: u32,
    ts: *const __kernel_timespec,
    min_wait_usec: u32,
    sigmask: *const libc::sigset_t,
) -> i32 {
    if let Err(e) = live_with(ring, IORING_FEAT_MIN_TIMEOUT) {
        return e;
    }
    timed_wait(ring, cqe_ptr, wait_nr, ts, min_wait_usec, sigmask, true)
}

/// `io_uring_submit_and_wait_reg`: waits with the parameters of registered
/// wait region slot `reg_index`.
pub fn submit_and_wait_reg(ring: Ring, cqe_ptr: &mut *mut io_uring_cqe, wait_nr: u32, reg_index: i32) -> i32 {
    if let Err(e) = live_with(ring, IORING_FEAT_EXT_ARG) {
        return e;
    }
    // The kernel takes the slot's byte offset in place of a pointer.
    let offset = (reg_index as isize as usize).wrapping_mul(core::mem::size_of::<io_uring_reg_wait>());
    let submit = flush_sq(ring);
    let mut w = Wait {
        submit,
        wait_nr,
        get_flags: IORING_ENTER_EXT_ARG | IORING_ENTER_EXT_ARG_REG,
        arg: offset as *const c_void,
        arg_sz: core::mem::size_of::<io_uring_reg_wait>(),
        has_ts: true,
    };
    get_cqe_inner(ring, cqe_ptr, &mut w)
}

fn cq_ready(ring: Ring) -> u32 {
    // SAFETY: ktail/khead point into the live CQ ring.
    unsafe { load_acquire(ring.cq_ktail()).wrapping_sub(load_relaxed(ring.cq_khead())) }
}

/// Stores up to `count` CQE pointers at `out` without consuming them;
/// returns how many. Each goes through the raw pointer on its own, so no
/// slice of the caller's array is ever claimed.
///
/// # Safety
/// `out` is valid for `count` pointer writes.
unsafe fn peek_batch(ring: Ring, out: *mut *mut io_uring_cqe, count: u32) -> u32 {
    let ready = cq_ready(ring);
    if ready == 0 {
        return 0;
    }
    let mask = ring.cq_ring_mask();
    let cqes = ring.cq_cqes();
    // SAFETY: khead points into the live CQ ring.
    let mut head = unsafe { load_relaxed(ring.cq_khead()) };
    if ring.flags() & IORING_SETUP_CQE_MIXED == 0 {
        let shift = cqe_shift(ring.flags());
        let n = ready.min(count);
        for i in 0..n {
            let idx = (head.wrapping_add(i) & mask) << shift;
            // SAFETY: the index is inside [head, tail) of the CQ array, and
            // i < count keeps the store inside the caller's array.
            unsafe { out.add(i as usize).write(cqes.add(idx as usize)) };
        }
        return n;
    }
    // Mixed rings: entries take one or two slots, and padding entries
    // (F_SKIP) are consumed only when they sit at the head.
    let last = head.wrapping_add(ready);
    let mut n = 0u32;
    while head != last && n < count {
        // SAFETY: head is inside [head, tail).
        let cqe = unsafe { cqes.add((head & mask) as usize) };
        // SAFETY: as above.
        let c = unsafe { &*cqe };
        if c.flags & IORING_CQE_F_SKIP != 0 {
            if n != 0 {
                break;
            }
            cq_advance(ring, 1);
            head = head.wrapping_add(1);
            continue;
        }
        head = head.wrapping_add(cqe_slots(c));
        // SAFETY: n < count.
        unsafe { out.add(n as usize).write(cqe) };
        n += 1;
    }
    n
}

/// `io_uring_peek_batch_cqe`.
///
/// # Safety
/// `out` is valid for `count` pointer writes.
pub unsafe fn peek_batch_cqe(ring: Ring, out: *mut *mut io_uring_cqe, count: u32) -> u32 {
    // SAFETY: per this function's contract.
    let n = unsafe { peek_batch(ring, out, count) };
    if n != 0 || ring.is_dead() || !cq_needs_flush(ring) {
        return n;
    }
    get_events(ring);
    // SAFETY: as above.
    unsafe { peek_batch(ring, out, count) }
}
