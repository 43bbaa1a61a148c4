//! Consuming the SQ: each SQE becomes a request (or, for a plain NOP, just
//! a CQE), chains are assembled, and failures at submission are reported
//! the way the kernel does.

use core::sync::atomic::Ordering;

use super::ctx::{off, Ctx};
use super::opdef;
use super::req::{self, fail_chain, queue_chain, rf, Mode, ReqPtr};
use crate::sys::flat_sqe::Sqe;
use crate::sys::{
    io_uring_sqe, IORING_OP_LINK_TIMEOUT, IORING_OP_NOP, IORING_SETUP_IOPOLL, IORING_SETUP_SQE128,
    IORING_SETUP_SQE_MIXED, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_REWIND, IORING_SETUP_SUBMIT_ALL, IOSQE_BUFFER_SELECT,
    IOSQE_CQE_SKIP_SUCCESS, IOSQE_IO_DRAIN,
};

/// Every IOSQE_* flag the kernel knows.
pub(crate) const SQE_VALID_FLAGS: u8 = 0x7f;

pub(crate) struct SubmitState {
    /// The engine's SQ head (published at the end of each submission).
    pub sq_head: u32,
    /// Id of the next request (see `Req::id`).
    next_id: u64,
    /// IOSQE_CQE_SKIP_SUCCESS was used: IOSQE_IO_DRAIN is refused from now
    /// on, as in the kernel.
    drain_disabled: bool,
    /// The request after the current chain must drain too.
    drain_next: bool,
    /// A drain was submitted once: plain NOPs take the general path, which
    /// knows whether the drain queue is still in force.
    drain_seen: bool,
    /// The ring memory (see `Ctx::rings`).
    pub mem: super::ctx::Memory,
    /// Freed requests for the next ones (see `req::Returned`).
    pub cache: req::ReqCache,
}

impl SubmitState {
    pub(crate) const fn new(mem: super::ctx::Memory) -> SubmitState {
        SubmitState {
            sq_head: 0,
            next_id: 1,
            drain_disabled: false,
            drain_next: false,
            drain_seen: false,
            mem,
            cache: req::ReqCache::new(),
        }
    }
}

/// A chain being assembled.
struct Chain {
    head: ReqPtr,
    last: ReqPtr,
    members: u32,
    drain: bool,
}

impl Chain {
    fn add(&mut self, req: ReqPtr) {
        // SAFETY: the submitter owns every member until the chain is queued.
        unsafe { self.last.get() }.link = Some(req);
        self.last = req;
        self.members += 1;
    }
}

/// Submits up to `nr` SQEs; returns how many were consumed.
pub(crate) fn submit(ctx: &Ctx, nr: u32) -> i32 {
    let mut st = ctx.submit.lock();
    let _creds = super::creds::Batch::begin(ctx);
    // Dropped first, on every way out: wakes the workers the call queued for.
    let _kicks = Kicks(ctx);
    if ctx.forked.load(Ordering::Relaxed) {
        // Another process may have consumed SQEs since.
        st.sq_head = ctx.word(off::SQ_HEAD).load(Ordering::Acquire);
    }
    // IORING_SETUP_SQ_REWIND: no head or tail, the SQEs start at slot 0
    // every time and `nr` says how many there are.
    let rewind = ctx.flags & IORING_SETUP_SQ_REWIND != 0;
    let (head, n) = if rewind {
        (0, nr.min(ctx.sq_entries()))
    } else {
        let tail = ctx.word(off::SQ_TAIL).load(Ordering::Acquire);
        (st.sq_head, nr.min(tail.wrapping_sub(st.sq_head)).min(ctx.sq_entries()))
    };
    if n == 0 {
        return 0;
    }
    let sq = SqView::new(ctx);
    let polled = ctx.flags & IORING_SETUP_IOPOLL != 0;
    let mixed = ctx.flags & IORING_SETUP_SQE_MIXED != 0;
    // An SQ thread's program may see CQEs at any moment: the head moves
    // past each SQE as soon as it is read, before its CQE can show, so a
    // program that reaped every CQE finds its SQ empty too.
    let eager = ctx.flags & IORING_SETUP_SQPOLL != 0;
    let publish = |to: u32| {
        if eager {
            ctx.word(off::SQ_HEAD).store(to, Ordering::Release);
        }
    };
    let mut chain: Option<Chain> = None;
    let mut batch = Batch::new();
    let mut done = 0;
    // Every SQE of a restricted ring goes through `init`'s checks.
    let fast = !polled && !ctx.restricted.load(Ordering::Acquire);
    ctx.ready.begin_submit();
    while done < n {
        let pos = head.wrapping_add(done);
        let p = sq.at(pos);
        if chain.is_none() && !st.drain_next && !st.drain_seen && fast && !ctx.has_deferred() {
            if let Some(p) = p {
                // SAFETY: slots between head and tail are ours until the
                // head moves.
                if unsafe { plain_nop(p) }.is_some() {
                    // A run of plain NOPs completes in one go.
                    batch.flush(ctx);
                    let mut pos = pos;
                    done += ctx.post_words(n - done, |dst, cnt| {
                        // SAFETY: as above; `dst` has room for `cnt` CQEs.
                        let k = unsafe { sq.copy_plain_nops(pos, dst, cnt) };
                        pos = pos.wrapping_add(k);
                        publish(pos);
                        k
                    });
                    continue;
                }
                // SAFETY: as above. (IOPOLL rings check the file first.)
                if let Some(words) = unsafe { super::rw::inline_simple(p) } {
                    publish(pos.wrapping_add(1));
                    batch.push(ctx, words);
                    done += 1;
                    continue;
                }
            }
        }
        batch.flush(ctx);
        done += 1;
        let Some(p) = p else {
            let d = ctx.word(off::SQ_DROPPED);
            d.store(d.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
            continue;
        };
        // SAFETY: as above.
        let sqe = unsafe { Sqe::read(p) };
        // A 128-byte SQE of a mixed ring takes the next slot too; one in the
        // SQE array's last slot, or in the last entry submitted, cannot and
        // fails alone.
        let wide = mixed && opdef::lookup(sqe.opcode).is_some_and(|d| d.is_128) && done < n && !sq.last_slot(p);
        if wide {
            done += 1;
        }
        publish(pos.wrapping_add(1 + wide as u32));
        if submit_one(ctx, &mut st, &sqe, &mut chain, wide).is_err() && ctx.flags & IORING_SETUP_SUBMIT_ALL == 0 {
            break;
        }
    }
    batch.flush(ctx);
    if let Some(c) = chain.take() {
        queue_chain(ctx, c.head, c.drain, c.members, Mode::Inline);
    }
    if !rewind {
        st.sq_head = head.wrapping_add(done);
        // Release: our reads of the consumed SQEs happen before the
        // application may reuse the slots.
        ctx.word(off::SQ_HEAD).store(st.sq_head, Ordering::Release);
    }
    ctx.ready.end_submit(ctx);
    done as i32
}

/// Wakes, once a submit call ends, the workers it queued requests for
/// (`io_wq::flush_kicks`).
struct Kicks<'a>(&'a Ctx);

impl Drop for Kicks<'_> {
    fn drop(&mut self) {
        super::io_wq::flush_kicks(self.0);
    }
}

/// Ops that neither close nor open an fd, so that the call's shared dups
/// (`Ctx::submit_file`) stay valid across them.
fn fd_neutral(op: u8) -> bool {
    use crate::sys::{IORING_OP_FADVISE, IORING_OP_FALLOCATE, IORING_OP_FSYNC, IORING_OP_SYNC_FILE_RANGE};
    opdef::get(op).hash.is_some()
        || matches!(
            op,
            IORING_OP_NOP | IORING_OP_FSYNC | IORING_OP_FALLOCATE | IORING_OP_SYNC_FILE_RANGE | IORING_OP_FADVISE
        )
}

/// CQEs of requests completed inline without a request (simple reads and
/// writes), posted together: each two words as the CQ holds them.
struct Batch {
    cqes: [core::mem::MaybeUninit<[u64; 2]>; 32],
    n: u32,
}

impl Batch {
    fn new() -> Batch {
        Batch { cqes: [const { core::mem::MaybeUninit::uninit() }; 32], n: 0 }
    }

    #[inline(always)]
    fn push(&mut self, ctx: &Ctx, words: [u64; 2]) {
        self.cqes[self.n as usize].write(words);
        self.n += 1;
        if self.n as usize == self.cqes.len() {
            self.flush(ctx);
        }
    }

    fn flush(&mut self, ctx: &Ctx) {
        if self.n == 0 {
            return;
        }
        let mut from = 0;
        ctx.post_words(self.n, |dst, cnt| {
            // SAFETY: entries below `n` were written by `push`; `dst` has
            // room for `cnt` CQEs.
            unsafe {
                core::ptr::copy_nonoverlapping(self.cqes.as_ptr().add(from) as *const u64, dst, cnt as usize * 2)
            };
            from += cnt as usize;
            cnt
        });
        self.n = 0;
    }
}

/// Where the SQEs are, read once per submission (the loop would reload
/// them from `Ctx` after every write to the CQ otherwise).
#[derive(Clone, Copy)]
struct SqView {
    sqes: *const io_uring_sqe,
    array: *const u32,
    mask: u32,
    entries: u32,
    shift: u32,
}

impl SqView {
    fn new(ctx: &Ctx) -> SqView {
        SqView {
            sqes: ctx.sqes.load(Ordering::Relaxed),
            array: ctx.sq_array.load(Ordering::Relaxed),
            mask: ctx.sq_mask(),
            entries: ctx.sq_entries(),
            shift: (ctx.flags & IORING_SETUP_SQE128 != 0) as u32,
        }
    }

    /// The SQE at SQ position `pos`, through the SQ array if the ring has
    /// one; None if the array names no valid slot (the SQE is dropped).
    #[inline(always)]
    fn at(&self, pos: u32) -> Option<*const io_uring_sqe> {
        let mut idx = pos & self.mask;
        if !self.array.is_null() {
            // SAFETY: the SQ array has sq_entries slots in the rings region.
            idx = unsafe { core::ptr::read_volatile(self.array.add(idx as usize)) };
            if idx >= self.entries {
                return None;
            }
        }
        // SAFETY: idx < sq_entries, so the slot is inside the SQE array.
        Some(unsafe { self.sqes.add((idx << self.shift) as usize) })
    }

    /// Whether `p` (from `at`) is the SQE array's last slot (rings of
    /// 64-byte entries).
    fn last_slot(&self, p: *const io_uring_sqe) -> bool {
        // SAFETY: both point into the one SQE array.
        let slot = unsafe { p.offset_from(self.sqes) };
        slot == self.entries as isize - 1
    }
}

impl SqView {
    /// Writes the CQEs of the plain NOPs from SQ position `pos` on, up to
    /// `cnt` of them, to `dst` (two words each); stops at the first SQE
    /// that is not one. Returns how many it wrote.
    ///
    /// # Safety
    /// The SQEs from `pos` (and `cnt` of them) are the engine's to read;
    /// `dst` has room for `cnt` CQEs.
    #[inline(always)]
    unsafe fn copy_plain_nops(&self, pos: u32, dst: *mut u64, cnt: u32) -> u32 {
        if !self.array.is_null() {
            let mut k = 0;
            while k < cnt {
                // SAFETY: per the contract.
                match self.at(pos.wrapping_add(k)).and_then(|p| unsafe { plain_nop(p) }) {
                    Some(ud) => unsafe {
                        core::ptr::write_volatile(dst.add(k as usize * 2), ud);
                        core::ptr::write_volatile(dst.add(k as usize * 2 + 1), 0);
                    },
                    None => break,
                }
                k += 1;
            }
            return k;
        }
        let stride = 1usize << self.shift;
        let mut k = 0;
        while k < cnt {
            // SQEs are contiguous up to the end of the array.
            let idx = pos.wrapping_add(k) & self.mask;
            let run = (cnt - k).min(self.entries - idx);
            // SAFETY: `run` SQEs from `idx` lie in the array.
            let mut p = unsafe { self.sqes.add((idx as usize) << self.shift) };
            let mut out = unsafe { dst.add(k as usize * 2) };
            for j in 0..run {
                // SAFETY: per the contract; p stays within the run.
                match unsafe { plain_nop(p) } {
                    Some(ud) => unsafe {
                        core::ptr::write_volatile(out, ud);
                        core::ptr::write_volatile(out.add(1), 0);
                        out = out.add(2);
                        p = p.add(stride);
                    },
                    None => return k + j,
                }
            }
            k += run;
        }
        k
    }
}

/// The user_data of a NOP with no flags at all, which needs no request:
/// opcode, flags and ioprio (the first word), nop_flags and personality
/// all zero.
///
/// # Safety
/// `p` is an SQE slot the engine owns.
#[inline(always)]
unsafe fn plain_nop(p: *const io_uring_sqe) -> Option<u64> {
    const _: () = assert!(IORING_OP_NOP == 0);
    // SAFETY: per the contract; volatile reads of plain, aligned fields.
    unsafe {
        if core::ptr::read_volatile(p as *const u32) != 0
            || core::ptr::read_volatile(&(*p).rw_flags_u.fsync_flags) != 0
            || core::ptr::read_volatile(&(*p).personality) != 0
        {
            return None;
        }
        Some(core::ptr::read_volatile(&(*p).user_data))
    }
}

/// Records a request of a forked ring for its sharers (see
/// `fork::Records`). A cancel posts no CQE for a chain member behind one
/// with IOSQE_CQE_SKIP_SUCCESS, as the kernel's, until that one is done;
/// a link timeout's CQE follows its own flag.
#[cold]
fn record(ctx: &Ctx, req: ReqPtr, chain: Option<&Chain>) {
    // SAFETY: the submitter owns the new request and the chain.
    let r = unsafe { req.get() };
    let quiet = if r.sqe.opcode == IORING_OP_LINK_TIMEOUT {
        r.sqe.has(IOSQE_CQE_SKIP_SUCCESS)
    } else {
        chain.is_some_and(|c| {
            // SAFETY: as above.
            let l = unsafe { c.last.get() };
            l.sqe.opcode != IORING_OP_LINK_TIMEOUT && l.sqe.has(IOSQE_CQE_SKIP_SUCCESS)
        })
    };
    r.flags |= super::fork::record(ctx, r.sqe.user_data, quiet) << rf::XREC_SHIFT;
}

/// One SQE: validate, prep, and place it in a chain or queue it.
/// `wide`: a 128-byte SQE of an SQE_MIXED ring that got its second slot.
fn submit_one(ctx: &Ctx, st: &mut SubmitState, sqe: &Sqe, chain: &mut Option<Chain>, wide: bool) -> Result<(), ()> {
    if !fd_neutral(sqe.opcode) {
        ctx.forget_submit_files();
    }
    let id = st.next_id;
    st.next_id += 1;
    let req = req::alloc(ctx, &mut st.cache, sqe, id);
    if ctx.forked.load(Ordering::Relaxed) {
        record(ctx, req, chain.as_ref());
    }
    let mut drain = false;
    let prev = chain.as_ref().map(|c| {
        // SAFETY: the submitter owns the chain being assembled.
        unsafe { c.last.get() }.sqe.opcode
    });
    let ret = init(ctx, st, req, prev, &mut drain, wide);
    if drain {
        match chain {
            Some(c) => {
                c.drain = true;
                st.drain_next = true;
            }
            None => {}
        }
    }
    let linked = req::links(sqe);
    if let Err(e) = ret {
        // SAFETY: the submitter owns the new request.
        let r = unsafe { req.get() };
        r.flags |= rf::FAIL;
        r.res = e;
        if let Some(c) = chain {
            // SAFETY: as above, for the chain head.
            let h = unsafe { c.head.get() };
            if h.flags & rf::FAIL == 0 {
                h.flags |= rf::FAIL;
                h.res = -libc::ECANCELED;
            }
        }
        if linked {
            add_to_chain(chain, req, false);
            return Ok(());
        }
        let head = match chain.take() {
            Some(mut c) => {
                c.add(req);
                c.head
            }
            None => req,
        };
        fail_chain(ctx, head, Mode::Inline);
        return Err(());
    }
    if chain.is_some() || linked {
        add_to_chain(chain, req, drain);
        if linked {
            return Ok(());
        }
        let c = chain.take().expect("chain was just extended");
        queue_chain(ctx, c.head, c.drain, c.members, Mode::Inline);
        return Ok(());
    }
    queue_chain(ctx, req, drain, 1, Mode::Inline);
    Ok(())
}

fn add_to_chain(chain: &mut Option<Chain>, req: ReqPtr, drain: bool) {
    match chain {
        Some(c) => c.add(req),
        None => *chain = Some(Chain { head: req, last: req, members: 1, drain }),
    }
}

/// The kernel's checks at submission, then the op's own prep.
fn init(
    ctx: &Ctx,
    st: &mut SubmitState,
    req: ReqPtr,
    prev: Option<u8>,
    drain: &mut bool,
    wide: bool,
) -> Result<(), i32> {
    // SAFETY: the submitter owns the new request.
    let r = unsafe { req.get() };
    let def = opdef::lookup(r.sqe.opcode).ok_or(-libc::EINVAL)?;
    if def.is_128 && ctx.flags & IORING_SETUP_SQE128 == 0 && !wide {
        return Err(-libc::EINVAL);
    }
    let in_chain = prev.is_some();
    let flags = r.sqe.flags;
    if flags & !SQE_VALID_FLAGS != 0 {
        return Err(-libc::EINVAL);
    }
    if flags & IOSQE_BUFFER_SELECT != 0 && !def.buffer_select {
        return Err(-libc::EOPNOTSUPP);
    }
    if flags & IOSQE_CQE_SKIP_SUCCESS != 0 {
        st.drain_disabled = true;
    }
    if flags & IOSQE_IO_DRAIN != 0 {
        if st.drain_disabled {
            return Err(-libc::EOPNOTSUPP);
        }
        *drain = true;
        st.drain_seen = true;
    }
    if st.drain_next && !in_chain {
        st.drain_next = false;
        *drain = true;
    }
    if ctx.restricted.load(Ordering::Acquire) && !ctx.restrictions.lock().sqe(r.sqe.opcode, flags) {
        return Err(-libc::EACCES);
    }
    if !def.ioprio && r.sqe.ioprio != 0 {
        return Err(-libc::EINVAL);
    }
    if !def.iopoll && ctx.flags & IORING_SETUP_IOPOLL != 0 {
        return Err(-libc::EINVAL);
    }
    if r.sqe.personality != 0 {
        r.creds = Some(super::creds::personality(ctx, r.sqe.personality)?);
    }
    (def.prep)(ctx, r)?;
    // A guard (link timeout) guards the request before it, which must
    // exist and not be a guard itself.
    if def.guard.is_some() && prev.is_none_or(|p| opdef::get(p).guard.is_some()) {
        return Err(-libc::EINVAL);
    }
    Ok(())
}
