//! Creating and destroying engine rings.

use alloc::boxed::Box;
use core::sync::atomic::Ordering;

use super::ctx::{off, Ctx, Memory};
use super::os;
use super::table::{self, RingRef};
use crate::sys::*;

const MAX_ENTRIES: u32 = 32768;
const MAX_CQ_ENTRIES: u32 = 2 * MAX_ENTRIES;
/// Every IORING_SETUP_* bit liburing 2.15 knows (SQE_MIXED and SQ_REWIND
/// are newer than Linux 6.18; the engine has them all).
pub(crate) const KNOWN_FLAGS: u32 = (1 << 21) - 1;

/// What the engine honours (params->features).
pub(crate) const FEATURES: u32 = IORING_FEAT_SINGLE_MMAP
    | IORING_FEAT_RECVSEND_BUNDLE
    | IORING_FEAT_NODROP
    | IORING_FEAT_SUBMIT_STABLE
    | IORING_FEAT_RW_CUR_POS
    // Each request runs with its submitter's credentials (see creds.rs).
    | IORING_FEAT_CUR_PERSONALITY
    | IORING_FEAT_FAST_POLL
    | IORING_FEAT_POLL_32BITS
    | IORING_FEAT_EXT_ARG
    | IORING_FEAT_SQPOLL_NONFIXED
    | IORING_FEAT_NATIVE_WORKERS
    | IORING_FEAT_RSRC_TAGS
    | IORING_FEAT_CQE_SKIP
    | IORING_FEAT_LINKED_FILE
    | IORING_FEAT_MIN_TIMEOUT
    | IORING_FEAT_NO_IOWAIT
    | IORING_FEAT_REG_REG_RING;

fn check_flags(f: u32) -> Result<(), i32> {
    let bad = f & !KNOWN_FLAGS != 0
        || (f & IORING_SETUP_TASKRUN_FLAG != 0 && f & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN) == 0)
        || (f & IORING_SETUP_DEFER_TASKRUN != 0 && f & IORING_SETUP_SINGLE_ISSUER == 0)
        || (f & IORING_SETUP_HYBRID_IOPOLL != 0 && f & IORING_SETUP_IOPOLL == 0)
        // Task-run notification flags mean nothing to a ring whose SQ thread
        // runs its completions: the kernel refuses them together.
        || (f & IORING_SETUP_SQPOLL != 0
            && f & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_DEFER_TASKRUN) != 0)
        || (f & IORING_SETUP_CQE32 != 0 && f & IORING_SETUP_CQE_MIXED != 0)
        || (f & IORING_SETUP_SQE128 != 0 && f & IORING_SETUP_SQE_MIXED != 0)
        // A queue that starts over at slot 0 has no SQ array to index, and
        // no head for an SQ thread to follow.
        || (f & IORING_SETUP_SQ_REWIND != 0 && (f & IORING_SETUP_NO_SQARRAY == 0 || f & IORING_SETUP_SQPOLL != 0))
        // No fd to map the rings through.
        || (f & IORING_SETUP_REGISTERED_FD_ONLY != 0 && f & IORING_SETUP_NO_MMAP == 0);
    if bad {
        Err(-libc::EINVAL)
    } else {
        Ok(())
    }
}

/// The SQ and CQ sizes for `entries` and `p`, as the kernel picks them.
fn sizes(entries: u32, p: &io_uring_params) -> Result<(u32, u32), i32> {
    let clamp = p.flags & IORING_SETUP_CLAMP != 0;
    let fit = |n: u32, max: u32| match n {
        0 => Err(-libc::EINVAL),
        n if n > max && !clamp => Err(-libc::EINVAL),
        n => Ok(n.min(max).next_power_of_two()),
    };
    let sq = fit(entries, MAX_ENTRIES)?;
    let cq = if p.flags & IORING_SETUP_CQSIZE != 0 { fit(p.cq_entries, MAX_CQ_ENTRIES)? } else { 2 * sq };
    if cq < sq {
        return Err(-libc::EINVAL);
    }
    Ok((sq, cq))
}

/// Bytes of the rings region (header, CQEs, SQ array) and of the SQEs.
fn layout(flags: u32, sq: u32, cq: u32) -> (usize, usize, usize) {
    let cqe = 16usize << (flags & IORING_SETUP_CQE32 != 0) as u32;
    let sqe = 64usize << (flags & IORING_SETUP_SQE128 != 0) as u32;
    let mut rings = (off::CQES + cq as usize * cqe + 63) & !63;
    let array = rings;
    if flags & IORING_SETUP_NO_SQARRAY == 0 {
        rings += sq as usize * 4;
    }
    (rings, array, sq as usize * sqe)
}

fn page_align(n: usize) -> usize {
    let page = crate::sys::mem::page_size();
    (n + page - 1) & !(page - 1)
}

/// Finds or maps the ring memory (`trapped`: see `create`).
fn memory(p: &io_uring_params, rings_len: usize, sqes_len: usize, trapped: bool) -> Result<Memory, i32> {
    if p.flags & IORING_SETUP_NO_MMAP != 0 {
        let (r, s) = (p.cq_off.user_addr, p.sq_off.user_addr);
        if r == 0 || s == 0 {
            return Err(-libc::EFAULT);
        }
        let page = crate::sys::mem::page_size() as u64;
        if r % page != 0 || s % page != 0 {
            return Err(-libc::EINVAL);
        }
        // The kernel pins both for writing: EFAULT where it cannot (and
        // io_uring_queue_init_mem leaves such memory for this to refuse).
        if !crate::sys::mem::writable(r, rings_len) || !crate::sys::mem::writable(s, sqes_len) {
            return Err(-libc::EFAULT);
        }
        let mem = Memory {
            rings: r as *mut u8,
            rings_len,
            sqes: s as *mut io_uring_sqe,
            sqes_len,
            owned: false,
            memfd: -1,
            app_rings: 0,
            app_sqes: 0,
        };
        let (rl, sl) = (page_align(rings_len) as u64, page_align(sqes_len) as u64);
        if !trapped || r < s + sl && s < r + rl || !alias_by_mremap() {
            return Ok(mem);
        }
        let Some(pr) = pin(r, rl as usize) else { return Ok(mem) };
        let Some(ps) = pin(s, sl as usize) else {
            unpin(pr, r, rl as usize);
            return Ok(mem);
        };
        return Ok(Memory { rings: pr, sqes: ps as *mut io_uring_sqe, app_rings: r, app_sqes: s, ..mem });
    }
    let (rl, sl) = (page_align(rings_len), page_align(sqes_len));
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    let memfd = if alias_by_mremap() {
        -1
    } else {
        // SAFETY: NUL-terminated name; flags known to the kernel.
        let fd = os::high(unsafe { libc::memfd_create(c"liburing-rs-ring".as_ptr(), libc::MFD_CLOEXEC) });
        if fd < 0 {
            return Err(os::errno());
        }
        // SAFETY: an fd just created.
        if unsafe { libc::ftruncate(fd, (rl + sl) as libc::off_t) } < 0 {
            let e = os::errno();
            os::close(fd);
            return Err(e);
        }
        fd
    };
    let (flags, fd) = if memfd >= 0 { (libc::MAP_SHARED, memfd) } else { (libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1) };
    // SAFETY: a fresh shared mapping touches no existing memory.
    let base = match unsafe { crate::sys::mmap(core::ptr::null_mut(), rl + sl, rw, flags, fd, 0) } {
        Ok(b) => b as *mut u8,
        Err(e) => {
            os::close(memfd);
            return Err(e);
        }
    };
    // SAFETY: rl < rl + sl bytes mapped above.
    let sqes = unsafe { base.add(rl) } as *mut io_uring_sqe;
    Ok(Memory { rings: base, rings_len: rl, sqes, sqes_len: sl, owned: true, memfd, app_rings: 0, app_sqes: 0 })
}

/// The kernel pins IORING_SETUP_NO_MMAP memory, so a program that unmaps
/// it before the ring goes (liburing's io_uring_queue_exit does, for
/// memory it allocated) leaves the kernel's pages in place. The engine's
/// equivalent, for the `len` bytes at page-aligned `app`: shared pages
/// with the program's contents, mapped once for the engine (returned) and
/// once in place of the program's, so that the program's munmap takes its
/// view only. None, and the program's memory untouched, where that cannot
/// be done (huge pages, say).
fn pin(app: u64, len: usize) -> Option<*mut u8> {
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: a fresh shared mapping touches no existing memory.
    let m = unsafe { crate::sys::mmap(core::ptr::null_mut(), len, rw, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0) }
        .ok()? as *mut u8;
    // SAFETY: `memory` checked that the program's `len` bytes at `app` are
    // mapped writable; `m` is ours and as long. Then mremap (old size 0)
    // maps the same shared pages at `app`, in place of what was there
    // (nothing else of the program's is touched: `app` and `len` are
    // page-aligned), or fails and changes nothing.
    unsafe {
        core::ptr::copy_nonoverlapping(app as *const u8, m, len);
        let fixed = libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED;
        if libc::mremap(m as *mut core::ffi::c_void, 0, len, fixed, app as *mut core::ffi::c_void) as u64 != app {
            crate::sys::munmap(m as *mut core::ffi::c_void, len);
            return None;
        }
    }
    Some(m)
}

/// Ends `pin`: where the program still sees the pinned pages at `app`,
/// a private copy takes their place (its memory is then as before, and a
/// child it forks gets its own copy), and the engine's mapping goes.
fn unpin(m: *mut u8, app: u64, len: usize) {
    let word = m as *mut u64;
    let marker = m as u64 ^ 0x6c69_6275_7269_6e67;
    let mut seen = 0u64;
    // SAFETY: `m` is the engine's live mapping of `len` >= 8 bytes.
    let first = unsafe { word.read_volatile() };
    // SAFETY: as above.
    unsafe { word.write_volatile(marker) };
    let ours = os::copy_from_user(&mut seen as *mut u64 as *mut u8, app, 8).is_ok() && seen == marker;
    // SAFETY: as above.
    unsafe { word.write_volatile(first) };
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    if ours {
        // SAFETY: a fresh private mapping, filled from `m`, then moved over
        // `app`, which maps the pinned pages (the marker showed it).
        unsafe {
            if let Ok(tmp) =
                crate::sys::mmap(core::ptr::null_mut(), len, rw, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
            {
                core::ptr::copy_nonoverlapping(m, tmp as *mut u8, len);
                let fixed = libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED;
                if libc::mremap(tmp, len, len, fixed, app as *mut core::ffi::c_void) as u64 != app {
                    crate::sys::munmap(tmp, len);
                }
            }
        }
    }
    // SAFETY: the engine's own mapping, used by nobody any more.
    unsafe { crate::sys::munmap(m as *mut core::ffi::c_void, len) };
}

/// Whether mremap(old_size 0) can alias shared anonymous memory here
/// (Linux can; valgrind refuses it): probed once per process.
pub(crate) fn alias_by_mremap() -> bool {
    use core::sync::atomic::{AtomicU8, Ordering};
    static STATE: AtomicU8 = AtomicU8::new(0);
    match STATE.load(Ordering::Relaxed) {
        1 => return true,
        2 => return false,
        _ => {}
    }
    let page = crate::sys::mem::page_size();
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    let ok = match unsafe {
        // SAFETY: a fresh anonymous mapping, unmapped below.
        crate::sys::mmap(core::ptr::null_mut(), page, rw, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0)
    } {
        Ok(base) => {
            // SAFETY: aliasing and unmapping the probe page only.
            unsafe {
                let alias = libc::mremap(base, 0, page, libc::MREMAP_MAYMOVE);
                let ok = alias != libc::MAP_FAILED;
                if ok {
                    crate::sys::munmap(alias, page);
                }
                crate::sys::munmap(base, page);
                ok
            }
        }
        Err(_) => false,
    };
    STATE.store(if ok { 1 } else { 2 }, Ordering::Relaxed);
    ok
}

/// Creates an engine ring as io_uring_setup(2) would: fills `p` and
/// returns the ring fd, or `-errno`. With `trapped` (a program's own
/// io_uring_setup, through interception), the fd is one whose close()
/// interception sees, where one is free.
pub(crate) fn create(entries: u32, p: &mut io_uring_params, trapped: bool) -> i32 {
    match try_create(entries, p, trapped) {
        Ok(fd) => fd,
        Err(e) => e,
    }
}

fn try_create(entries: u32, p: &mut io_uring_params, trapped: bool) -> Result<i32, i32> {
    if p.resv != [0; 3] {
        return Err(-libc::EINVAL);
    }
    check_flags(p.flags)?;
    let (sq, cq) = sizes(entries, p)?;
    let (rings_len, array_off, sqes_len) = layout(p.flags, sq, cq);
    let sqd = super::sqpoll::prepare(p)?;
    let fail = |e: i32| {
        if let Some(s) = &sqd {
            super::sqpoll::abandon(s);
        }
        e
    };
    let mem = memory(p, rings_len, sqes_len, trapped).map_err(fail)?;
    let fd = if trapped {
        use crate::sys::seccomp::{RING_FD_END, RING_FD_FIRST};
        os::app_eventfd_in(RING_FD_FIRST as i32, RING_FD_END as i32)
    } else {
        os::app_eventfd()
    };
    let efd = if fd < 0 { fd } else { os::dup(fd) };
    if efd < 0 {
        os::close(fd);
        release_memory(&mem, false);
        return Err(fail(efd));
    }
    super::fork::install();
    super::creds::note_setup();
    // SAFETY: the rings region is writable and nobody else uses it yet.
    unsafe { init_header(mem.rings, sq, cq) };
    let sq_array = if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
        // SAFETY: the array lies inside the rings region (see `layout`).
        unsafe { mem.rings.add(array_off) as *const u32 }
    } else {
        core::ptr::null()
    };
    let ctx = Box::new(Ctx::new(fd, efd, p.flags, mem, (sq, cq), sq_array, sqd));
    if p.flags & IORING_SETUP_R_DISABLED == 0 {
        super::wait::claim_issuer(&ctx);
    }
    let idx = match table::register(ctx) {
        Ok(idx) => idx,
        Err((ctx, e)) => {
            super::sqpoll::detach(&ctx);
            // SAFETY: never registered, so nobody else can see it.
            unsafe { Ctx::release(Box::into_raw(ctx)) };
            return Err(e);
        }
    };
    // With REGISTERED_FD_ONLY the caller gets a registered index instead
    // of the fd, which stays the engine's own.
    let handle = if p.flags & IORING_SETUP_REGISTERED_FD_ONLY != 0 {
        let reg = table::lookup_index(idx).ok_or(-libc::EBADF).and_then(|r| table::register_index(&r, u32::MAX));
        match reg.and_then(|i| table::unmap_fd(fd).map(|()| i)) {
            Ok(i) => i as i32,
            Err(e) => {
                if let Some(r) = table::unregister(fd) {
                    shutdown(r);
                }
                return Err(e);
            }
        }
    } else {
        fd
    };
    if let Some(r) = table::lookup_index(idx) {
        super::sqpoll::attach(r, p.sq_thread_idle);
    }
    p.sq_entries = sq;
    p.cq_entries = cq;
    p.features = FEATURES;
    fill_offsets(p);
    p.sq_off.array = if sq_array.is_null() { 0 } else { array_off as u32 };
    Ok(handle)
}

/// The offsets of `p` but the SQ array's, as setup and resize give them.
fn fill_offsets(p: &mut io_uring_params) {
    let no_mmap = p.flags & IORING_SETUP_NO_MMAP != 0;
    p.sq_off = io_sqring_offsets {
        head: off::SQ_HEAD as u32,
        tail: off::SQ_TAIL as u32,
        ring_mask: off::SQ_MASK as u32,
        ring_entries: off::SQ_ENTRIES as u32,
        flags: off::SQ_FLAGS as u32,
        dropped: off::SQ_DROPPED as u32,
        array: p.sq_off.array,
        resv1: 0,
        user_addr: if no_mmap { p.sq_off.user_addr } else { 0 },
    };
    p.cq_off = io_cqring_offsets {
        head: off::CQ_HEAD as u32,
        tail: off::CQ_TAIL as u32,
        ring_mask: off::CQ_MASK as u32,
        ring_entries: off::CQ_ENTRIES as u32,
        overflow: off::CQ_OVERFLOW as u32,
        cqes: off::CQES as u32,
        flags: off::CQ_FLAGS as u32,
        resv1: 0,
        user_addr: if no_mmap { p.cq_off.user_addr } else { 0 },
    };
}

/// Zeroes a new rings region's header and writes its masks and sizes.
///
/// # Safety
/// `rings` is a writable rings region nobody else uses yet.
unsafe fn init_header(rings: *mut u8, sq: u32, cq: u32) {
    // SAFETY: per the contract (the region is at least `off::CQES` bytes).
    unsafe {
        core::ptr::write_bytes(rings, 0, off::CQES);
        let w = |o: usize, v: u32| core::ptr::write(rings.add(o) as *mut u32, v);
        w(off::SQ_MASK, sq - 1);
        w(off::CQ_MASK, cq - 1);
        w(off::SQ_ENTRIES, sq);
        w(off::CQ_ENTRIES, cq);
    }
}

/// Setup flags a resize takes from its caller, and those it keeps from
/// the ring (the kernel's RESIZE_FLAGS and COPY_FLAGS).
const RESIZE_FLAGS: u32 = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP;
const COPY_FLAGS: u32 = IORING_SETUP_NO_SQARRAY
    | IORING_SETUP_SQE128
    | IORING_SETUP_CQE32
    | IORING_SETUP_NO_MMAP
    | IORING_SETUP_CQE_MIXED
    | IORING_SETUP_SQE_MIXED;

/// IORING_REGISTER_RESIZE_RINGS, as the kernel does it: on DEFER_TASKRUN
/// rings only (their rings are used by the submitter alone, which is the
/// caller), new memory with the SQEs and CQEs not yet consumed moved to
/// the same positions, `arg` written back with the new sizes and offsets
/// (the SQ array's excepted, as the kernel leaves it). The application's
/// old mappings stay, no longer the ring's; mmap of the ring fd maps the
/// new memory from now on.
pub(crate) fn resize_rings(ctx: &Ctx, arg: u64) -> i32 {
    match try_resize(ctx, arg) {
        Ok(()) => 0,
        Err(e) => e,
    }
}

fn try_resize(ctx: &Ctx, arg: u64) -> Result<(), i32> {
    if ctx.flags & IORING_SETUP_DEFER_TASKRUN == 0 {
        return Err(-libc::EINVAL);
    }
    let mut p = io_uring_params::default();
    let size = core::mem::size_of::<io_uring_params>();
    os::copy_from_user(&mut p as *mut io_uring_params as *mut u8, arg, size)?;
    if p.flags & !RESIZE_FLAGS != 0 {
        return Err(-libc::EINVAL);
    }
    p.flags |= ctx.flags & COPY_FLAGS;
    let (sq, cq) = sizes(p.sq_entries, &p)?;
    p.sq_entries = sq;
    p.cq_entries = cq;
    fill_offsets(&mut p);
    let (rings_len, array_off, sqes_len) = layout(p.flags, sq, cq);
    let mut st = ctx.submit.lock();
    let mem = memory(&p, rings_len, sqes_len, st.mem.app_rings != 0)?;
    // SAFETY: fresh memory (or the application's, handed over for it).
    unsafe { init_header(mem.rings, sq, cq) };
    if let Err(e) = os::copy_to_user(arg, &p as *const io_uring_params as *const u8, size) {
        release_memory(&mem, false);
        return Err(e);
    }
    let old_sqes = ctx.sqes.load(Ordering::Relaxed) as *const u8;
    {
        let inner = ctx.lock_cq();
        let word = |o: usize| ctx.word(o).load(Ordering::Acquire);
        // The engine's own heads and tail where it has them: the
        // application's words could say anything.
        let (sq_head, sq_tail) = (st.sq_head, word(off::SQ_TAIL));
        let (cq_head, cq_tail) = (word(off::CQ_HEAD), inner.cq_tail());
        if sq_tail.wrapping_sub(sq_head) > sq || cq_tail.wrapping_sub(cq_head) > cq {
            drop(inner);
            release_memory(&mem, false);
            return Err(-libc::EOVERFLOW);
        }
        let sqe = 64usize << (ctx.flags & IORING_SETUP_SQE128 != 0) as u32;
        let cqe = 16usize << (ctx.flags & IORING_SETUP_CQE32 != 0) as u32;
        let old_rings = ctx.rings.load(Ordering::Relaxed);
        let (old_sq, old_cq) = (ctx.sq_mask(), ctx.cq_mask());
        // SAFETY: every slot is masked into its array, old and new; the
        // new memory is nobody's yet, the old one the engine's under both
        // locks, and the application does not touch slots beyond its tails.
        unsafe {
            let mut i = sq_head;
            while i != sq_tail {
                let (from, to) = ((i & old_sq) as usize * sqe, (i & (sq - 1)) as usize * sqe);
                core::ptr::copy_nonoverlapping(old_sqes.add(from), (mem.sqes as *mut u8).add(to), sqe);
                i = i.wrapping_add(1);
            }
            let mut i = cq_head;
            while i != cq_tail {
                let (from, to) = ((i & old_cq) as usize * cqe, (i & (cq - 1)) as usize * cqe);
                core::ptr::copy_nonoverlapping(old_rings.add(off::CQES + from), mem.rings.add(off::CQES + to), cqe);
                i = i.wrapping_add(1);
            }
            let w = |o: usize, v: u32| {
                (*(mem.rings.add(o) as *const core::sync::atomic::AtomicU32)).store(v, Ordering::Relaxed)
            };
            w(off::SQ_HEAD, sq_head);
            w(off::SQ_TAIL, sq_tail);
            w(off::CQ_HEAD, cq_head);
            w(off::CQ_TAIL, cq_tail);
            for o in [
                off::SQ_DROPPED,
                off::SQ_FLAGS,
                off::CQ_FLAGS,
                off::CQ_OVERFLOW,
                off::X_SEQ,
                off::X_WAITERS,
                off::X_PEERS,
            ] {
                w(o, word(o));
            }
        }
        let array = if p.flags & IORING_SETUP_NO_SQARRAY == 0 {
            // SAFETY: the array lies inside the new rings region (`layout`).
            unsafe { mem.rings.add(array_off) as *mut u32 }
        } else {
            core::ptr::null_mut()
        };
        ctx.sq_array.store(array, Ordering::Relaxed);
        ctx.sqes.store(mem.sqes, Ordering::Relaxed);
        ctx.sq_entries.store(sq, Ordering::Relaxed);
        ctx.cq_entries.store(cq, Ordering::Relaxed);
        // SeqCst: see `Ctx::pin_rings`.
        ctx.rings.store(mem.rings, Ordering::SeqCst);
    }
    let old = core::mem::replace(&mut st.mem, mem);
    drop(st);
    while ctx.rings_users.load(Ordering::SeqCst) != 0 {
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
    }
    release_memory(&old, false);
    Ok(())
}

/// Unmaps the ring memory, and closes its memfd unless `lost` (see `Ctx::lost`).
fn release_memory(mem: &Memory, lost: bool) {
    if mem.app_rings != 0 {
        unpin(mem.rings, mem.app_rings, page_align(mem.rings_len));
        unpin(mem.sqes as *mut u8, mem.app_sqes, page_align(mem.sqes_len));
    }
    if mem.owned {
        // SAFETY: the engine mapped rings and SQEs as one block at `rings`.
        unsafe { crate::sys::munmap(mem.rings as *mut core::ffi::c_void, mem.rings_len + mem.sqes_len) };
    }
    if !lost {
        os::close(mem.memfd);
    }
}

impl Ctx {
    /// Maps ring memory for the application, as mmap(2) of a kernel ring fd
    /// at IORING_OFF_SQ_RING / _CQ_RING / _SQES would: a second mapping of
    /// the same pages, so either side can unmap its own. As the kernel,
    /// it refuses to place it at an address of the caller's (`addr`).
    pub(crate) fn map_for_app(
        &self,
        addr: *mut core::ffi::c_void,
        off: u64,
        len: usize,
    ) -> Result<*mut core::ffi::c_void, i32> {
        if !addr.is_null() {
            return Err(-libc::EINVAL);
        }
        if off & IORING_OFF_MMAP_MASK == IORING_OFF_PBUF_RING {
            return super::kbuf::map_for_app(self, off, len);
        }
        // Under the submit lock, which a resize holds as it swaps the memory.
        let st = self.submit.lock();
        let mem = &st.mem;
        // As the kernel: the offset's high bits name the region (the rest
        // is ignored); no region there is ENOMEM.
        let (base, size) = match off & IORING_OFF_MMAP_MASK {
            IORING_OFF_SQ_RING | IORING_OFF_CQ_RING => (mem.rings, mem.rings_len),
            IORING_OFF_SQES => (mem.sqes as *mut u8, mem.sqes_len),
            _ => return Err(-libc::ENOMEM),
        };
        if !mem.owned || len == 0 || len > size {
            return Err(-libc::EINVAL);
        }
        let p = if mem.memfd >= 0 {
            let at = base as usize - mem.rings as usize;
            let rw = libc::PROT_READ | libc::PROT_WRITE;
            // SAFETY: a new mapping of the ring's memfd, touching nothing else.
            return unsafe {
                crate::sys::mmap(core::ptr::null_mut(), len, rw, libc::MAP_SHARED, mem.memfd, at as libc::off_t)
            };
        } else {
            // SAFETY: mremap with old_size 0 creates a new mapping of the
            // same shared pages and leaves the original in place.
            unsafe { libc::mremap(base as *mut core::ffi::c_void, 0, len, libc::MREMAP_MAYMOVE) }
        };
        if p == libc::MAP_FAILED {
            return Err(os::errno());
        }
        Ok(p)
    }

    /// Frees a ring nobody refers to any more.
    ///
    /// # Safety
    /// `ctx` came from `Box::into_raw` and this is the last use of it.
    pub(crate) unsafe fn release(ctx: *mut Ctx) {
        // SAFETY: per the contract.
        let c = unsafe { Box::from_raw(ctx) };
        // A lost ring's numbers may hold the application's files by now:
        // they are left as they are.
        let lost = c.is_lost();
        c.ready.close(lost);
        release_memory(&c.submit.lock().mem, lost);
        // SAFETY: per the contract, the ring is unused.
        unsafe {
            c.cq_xlock.unmap();
            c.xrec.unmap();
        }
        // The application's number is closed as liburing closes a kernel
        // ring's, unless it holds another file by now.
        let fd = c.fd();
        if fd >= 0 && !lost && os::same_file(fd, c.efd) == Ok(true) {
            os::close(fd);
        }
        if !lost {
            os::close(c.efd);
            let ev = c.evfd.load(Ordering::Acquire);
            if ev & super::ctx::EVFD_PRESENT != 0 {
                os::close(ev as u32 as i32);
            }
        }
        drop(c);
        // Its requests and files have let go of their dups by now.
        super::fileref::sweep();
    }
}

/// Tears a ring down after its fd left the registry: cancels what can be
/// cancelled, waits for the rest, and frees it before returning.
pub(crate) fn shutdown(r: RingRef) {
    let ctx = r.ctx();
    if !super::fork::ours(ctx) {
        // The parent's ring, in a child: its threads are not here and its
        // locks may be held. Give back this process's fds and mapping only.
        os::close(ctx.fd());
        os::close(ctx.efd);
        release_memory(&ctx.submit.lock().mem, false);
        // SAFETY: this process's threads never post to the ring any more
        // (it is not its own).
        unsafe {
            ctx.cq_xlock.unmap();
            ctx.xrec.unmap();
        }
        core::mem::forget(r);
        return;
    }
    ctx.dying.store(true, Ordering::SeqCst);
    super::sqpoll::detach(ctx);
    super::reactor::unwatch_ring(ctx);
    super::cancel::cancel_all(ctx);
    loop {
        ctx.run_task_work();
        let n = ctx.users.load(Ordering::Acquire);
        if n == 0 {
            break;
        }
        if super::lock::futex_wait(&ctx.users, n, Some(os::now_ns() + 10_000_000)) == -libc::ETIMEDOUT {
            // A worker's op that the interrupt missed may have gone back
            // to wait for readiness meanwhile: take it again.
            super::cancel::cancel_all(ctx);
        }
    }
    table::wait_sole(&r);
    drop(r);
    if table::LIVE.load(Ordering::Acquire) == 0 {
        // Every engine thread is told to go first, then waited for: their
        // exits overlap rather than follow one another.
        super::io_wq::idle_exit();
        let nursery = super::creds::stop_nursery();
        super::aio::maybe_stop();
        let reactor = super::reactor::maybe_stop();
        super::io_wq::wait_idle_exit();
        super::creds::join_nursery(nursery);
        super::reactor::wait_stopped(reactor);
        super::futex::maybe_stop();
    }
}
