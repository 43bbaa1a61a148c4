//! Provided buffers: legacy groups (PROVIDE_BUFFERS / REMOVE_BUFFERS),
//! buffer rings (IORING_REGISTER_PBUF_RING and friends, in application
//! memory or mapped from the ring fd), and the selection that ops with
//! IOSQE_BUFFER_SELECT make from them.
//!
//! A ring's groups sit behind one lock (the kernel's uring_lock). An op on
//! a pollable file keeps it from selection to the end of its non-blocking
//! transfer, so a ring buffer is consumed only once data landed in it, and
//! nobody can tear the group down meanwhile. Ops that may block take their
//! buffer for good at selection (committed), as the kernel does for files
//! that cannot poll and for work on io-wq.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;

use super::ctx::Ctx;
use super::lock::Guard;
use super::opdef::{OpDef, BASE};
use super::os;
use super::req::{Issued, Mode, Req, ReqPtr};
use crate::sys::*;

/// Bytes of one `struct io_uring_buf`; the ring's tail is the u16 at 14.
const ENTRY: usize = 16;
const TAIL_AT: usize = 14;
/// Buffer ids are 16 bits, so a group holds at most this many.
const MAX_BIDS: u64 = 1 << 16;
/// The kernel's MAX_RW_COUNT: no transfer moves more.
const MAX_RW: u32 = 0x7fff_f000;
/// Most buffers one bundle maps (the kernel's PEEK_MAX_IMPORT), and most
/// it looks at (UIO_MAXIOV).
const PEEK_MAX: usize = 256;
const PEEK_AVAIL: u16 = 1024;
/// Highest user address plus one (access_ok's limit).
#[cfg(target_arch = "x86_64")]
const USER_TOP: u64 = 0x7fff_ffff_f000;
#[cfg(not(target_arch = "x86_64"))]
const USER_TOP: u64 = 1 << 48;

/// One legacy buffer.
#[derive(Clone, Copy)]
struct Buf {
    addr: u64,
    len: u32,
    bid: u16,
}

/// A registered buffer ring.
///
/// The kernel pins a ring in application memory; the engine cannot, and
/// the program may unmap it. So such a ring is only read and written
/// through fault-safe copies (`os::copy_from_user`), and to keep that to
/// a system call or two per batch rather than per buffer, the entries
/// published up to the last tail read are copied once into `shadow`.
struct BufRing {
    /// The `io_uring_buf` array (application memory, or `own` below).
    base: *mut u8,
    mask: u32,
    /// Entries consumed so far (the kernel's `bl->head`).
    head: u16,
    /// The tail last read; `shadow` holds the entries from `head` to it.
    tail: u16,
    /// Each slot's entry, as copied when it was published.
    shadow: Vec<io_uring_buf>,
    /// IOU_PBUF_RING_INC: buffers are consumed a piece at a time.
    inc: bool,
    /// The fewest bytes a partly consumed buffer keeps to stay at the head
    /// (`io_uring_buf_reg::min_left`, at least 1); a smaller rest retires it.
    min_left: u32,
    /// IOU_PBUF_RING_MMAP memory: (bytes, memfd or -1); unmapped on drop.
    own: Option<(usize, i32)>,
}

impl Drop for BufRing {
    fn drop(&mut self) {
        if let Some((len, memfd)) = self.own {
            // SAFETY: the engine mapped `len` bytes at `base` for this ring
            // and nothing else refers to them once the group is gone.
            unsafe { crate::sys::munmap(self.base as *mut core::ffi::c_void, len) };
            os::close(memfd);
        }
    }
}

enum Group {
    Legacy(VecDeque<Buf>),
    Ring(BufRing),
}

/// A ring's buffer groups, by group id.
pub(crate) struct Groups {
    map: BTreeMap<u16, Group>,
}

// SAFETY: the raw pointers address ring memory that is only touched under
// the owning Ctx's lock.
unsafe impl Send for Groups {}

impl Groups {
    pub(crate) const fn new() -> Groups {
        Groups { map: BTreeMap::new() }
    }
}

/// How a selected buffer is held.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Hold {
    /// Taken off a legacy list: put back if the op retries, else consumed.
    Legacy,
    /// At the head of a ring, not consumed yet (only while the lock is held).
    Peeked,
    /// Consumed from a ring at selection.
    Committed,
}

/// A buffer an op selected.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pick {
    pub addr: u64,
    pub len: u32,
    pub bid: u16,
    pub bgid: u16,
    pub hold: Hold,
    /// Committed from an incremental ring with room left in the buffer:
    /// its CQE carries IORING_CQE_F_BUF_MORE.
    pub more: bool,
}

impl BufRing {
    fn new(base: *mut u8, entries: u32, inc: bool, min_left: u32, own: Option<(usize, i32)>) -> BufRing {
        let shadow = alloc::vec![io_uring_buf { addr: 0, len: 0, bid: 0, resv: 0 }; entries as usize];
        BufRing { base, mask: entries - 1, head: 0, tail: 0, shadow, inc, min_left: min_left.max(1), own }
    }

    /// Copies `len` bytes of entries at ring offset `off` into `dst`:
    /// straight from the engine's own mapping, fault-safe from application
    /// memory.
    fn fetch(&self, off: usize, dst: *mut u8, len: usize) -> Result<(), i32> {
        if self.own.is_none() {
            return os::copy_from_user(dst, self.base as u64 + off as u64, len);
        }
        // SAFETY: `off + len` lies inside the engine's own mapping, which
        // lives as long as the ring; these entries are published, so the
        // application leaves them alone until they are consumed.
        unsafe { core::ptr::copy_nonoverlapping(self.base.add(off), dst, len) };
        Ok(())
    }

    /// Reads the published tail and copies the entries added since the
    /// last look; -EFAULT if the ring's memory is gone.
    #[cold]
    fn refresh(&mut self) -> Result<(), i32> {
        // A copy could tear the tail (the kernel copies small sizes a byte
        // at a time), so it only proves the page still there; the value
        // comes from one atomic load.
        if self.own.is_none() {
            let mut t = [0u8; 2];
            os::copy_from_user(t.as_mut_ptr(), self.base as u64 + TAIL_AT as u64, 2)?;
        }
        // SAFETY: the tail lies in entry 0, mapped (just checked, or the
        // engine's own); the application publishes it with a release store.
        let tail = unsafe {
            (*(self.base.add(TAIL_AT) as *const core::sync::atomic::AtomicU16))
                .load(core::sync::atomic::Ordering::Acquire)
        };
        let n = self.mask + 1;
        let new = (tail.wrapping_sub(self.tail) as u32).min(n);
        if new == 0 {
            return Ok(());
        }
        // Slots first.. up to the end of the array, then from 0 on.
        let first = (tail.wrapping_sub(new as u16) as u32 & self.mask) as usize;
        let upper = (n as usize - first).min(new as usize);
        let to = self.shadow.as_mut_ptr() as *mut u8;
        // SAFETY: both ranges lie inside `shadow`, which has a plain-data
        // io_uring_buf (ENTRY bytes) per slot.
        self.fetch(first * ENTRY, unsafe { to.add(first * ENTRY) }, upper * ENTRY)?;
        self.fetch(0, to, (new as usize - upper) * ENTRY)?;
        self.tail = tail;
        Ok(())
    }

    /// Entries published and not consumed, reading the tail again when
    /// the copies run out, or always with `fresh`.
    fn avail(&mut self, fresh: bool) -> Result<u16, i32> {
        if fresh || self.tail == self.head {
            self.refresh()?;
        }
        Ok(self.tail.wrapping_sub(self.head))
    }

    /// (addr, len, bid) of the entry at `idx`.
    fn read(&self, idx: u16) -> (u64, u32, u16) {
        let e = &self.shadow[(idx as u32 & self.mask) as usize];
        (e.addr, e.len, e.bid)
    }

    fn write_piece(&mut self, idx: u16, addr: u64, len: u32) {
        let slot = (idx as u32 & self.mask) as usize;
        self.shadow[slot].addr = addr;
        self.shadow[slot].len = len;
        let at = slot * ENTRY;
        if self.own.is_none() {
            let mut e = [0u8; 12];
            e[..8].copy_from_slice(&addr.to_ne_bytes());
            e[8..].copy_from_slice(&len.to_ne_bytes());
            // The kernel writes them for the application to see; memory it
            // unmapped shows nothing, so a failure changes nothing.
            let _ = os::copy_to_user(self.base as u64 + at as u64, e.as_ptr(), e.len());
            return;
        }
        // SAFETY: the entry lies inside the engine's own mapping; the
        // engine owns its addr and len while it sits between head and tail
        // (the kernel writes them too).
        unsafe {
            let e = self.base.add(at);
            core::ptr::write_volatile(e as *mut u64, addr);
            core::ptr::write_volatile(e.add(8) as *mut u32, len);
        }
    }

    /// Consumes `len` bytes of an incremental ring; false if the head
    /// buffer keeps at least `min_left` bytes (IORING_CQE_F_BUF_MORE).
    fn inc_commit(&mut self, mut len: u32) -> bool {
        // Nothing moved (EOF): the buffer stays, untouched and still usable.
        if len == 0 {
            return false;
        }
        while len != 0 {
            let (addr, blen, _) = self.read(self.head);
            let this = len.min(blen);
            let left = blen - this;
            if left >= self.min_left || this == 0 {
                self.write_piece(self.head, addr.wrapping_add(this as u64), left);
                return false;
            }
            self.write_piece(self.head, addr, 0);
            self.head = self.head.wrapping_add(1);
            len -= this;
        }
        true
    }

    /// Consumes what a transfer of `len` bytes used from `nr` buffers;
    /// false when the last one has room left (incremental rings).
    fn commit(&mut self, len: i32, nr: u16) -> bool {
        if len < 0 {
            return true;
        }
        if self.inc {
            return self.inc_commit(len as u32);
        }
        self.head = self.head.wrapping_add(nr);
        true
    }
}

/// Several buffers for one transfer (IORING_RECVSEND_BUNDLE).
pub(crate) struct Bundle {
    pub iov: Vec<libc::iovec>,
    /// The first buffer's id, the one the CQE names.
    pub bid: u16,
    pub bgid: u16,
    pub hold: Hold,
    /// Nothing was left in the group after these (REQ_F_BL_EMPTY).
    pub empty: bool,
    /// A buffer was cut short, or left out for being too long.
    pub partial: bool,
    /// Committed with room left in the last buffer (see `Pick::more`).
    pub more: bool,
}

// SAFETY: the iovecs describe application buffers the request may use
// from any thread.
unsafe impl Send for Bundle {}

impl Bundle {
    /// How many of the buffers `n` transferred bytes touched.
    pub(crate) fn used(&self, n: i32) -> u16 {
        let mut left = n.max(0) as usize;
        let mut k = 0;
        for v in &self.iov {
            if left == 0 {
                break;
            }
            left -= left.min(v.iov_len);
            k += 1;
        }
        k
    }
}

fn cqe_flags(bid: u16) -> u32 {
    IORING_CQE_F_BUFFER | (bid as u32) << IORING_CQE_BUFFER_SHIFT
}

impl Groups {
    /// Takes a buffer of group `bgid` for a transfer of `len` bytes (0: the
    /// whole buffer). `commit` consumes a ring buffer now; otherwise the
    /// caller keeps this lock until it calls `settle`.
    /// -ENOBUFS when there is none; -EFAULT when a ring's memory is gone.
    pub(crate) fn select(&mut self, bgid: u16, len: u32, commit: bool) -> Result<Pick, i32> {
        let clamp = |have: u32| if len == 0 || len > have { have } else { len };
        match self.map.get_mut(&bgid).ok_or(-libc::ENOBUFS)? {
            Group::Legacy(list) => {
                let b = list.pop_front().ok_or(-libc::ENOBUFS)?;
                Ok(Pick { addr: b.addr, len: clamp(b.len), bid: b.bid, bgid, hold: Hold::Legacy, more: false })
            }
            Group::Ring(ring) => {
                if ring.avail(false)? == 0 {
                    return Err(-libc::ENOBUFS);
                }
                let (addr, blen, bid) = ring.read(ring.head);
                let len = clamp(blen);
                let (hold, more) =
                    if commit { (Hold::Committed, !ring.commit(len as i32, 1)) } else { (Hold::Peeked, false) };
                Ok(Pick { addr, len, bid, bgid, hold, more })
            }
        }
    }

    /// Maps buffers of group `bgid` for up to `max_len` bytes (0: as many
    /// as the first one holds), as the kernel's peek does: a missing group
    /// is -ENOENT, an empty one -ENOBUFS. At most `*slots` buffers (the
    /// request's iovec array, which persists from one peek to the next);
    /// with `expand` (a bundle) a larger `max_len` grows it to what was
    /// mapped. `commit` consumes them now.
    pub(crate) fn peek(
        &mut self,
        bgid: u16,
        max_len: u32,
        commit: bool,
        expand: bool,
        slots: &mut usize,
    ) -> Result<Bundle, i32> {
        let ring = match self.map.get_mut(&bgid) {
            None => return Err(-libc::ENOENT),
            Some(Group::Legacy(list)) => {
                let b = list.pop_front().ok_or(-libc::ENOBUFS)?;
                let len = if max_len == 0 || max_len > b.len { b.len } else { max_len };
                let iov = alloc::vec![libc::iovec { iov_base: b.addr as *mut libc::c_void, iov_len: len as usize }];
                return Ok(Bundle {
                    iov,
                    bid: b.bid,
                    bgid,
                    hold: Hold::Legacy,
                    empty: list.is_empty(),
                    partial: false,
                    more: false,
                });
            }
            Some(Group::Ring(ring)) => ring,
        };
        // The entries already copied do unless this peek could take them
        // all: then a fresh tail could change what it takes, or whether it
        // leaves the ring empty.
        let cached = ring.avail(false)?;
        let cap = match ring.read(ring.head).1 {
            _ if cached == 0 => 0,
            first if max_len != 0 && first != 0 => (max_len as usize).div_ceil(first as usize).min(PEEK_MAX),
            _ if max_len != 0 => 0,
            _ => *slots,
        };
        let all = if cached as usize > cap.min(PEEK_AVAIL as usize) { cached } else { ring.avail(true)? };
        let tail = ring.head.wrapping_add(all);
        let mut head = ring.head;
        let mut avail = all.min(PEEK_AVAIL) as usize;
        if avail == 0 {
            return Err(-libc::ENOBUFS);
        }
        let (_, first_len, bid) = ring.read(head);
        if max_len != 0 {
            if first_len == 0 {
                return Err(-libc::ENOBUFS);
            }
            let needed = (max_len as usize).div_ceil(first_len as usize).min(PEEK_MAX);
            avail = avail.min(needed);
        }
        let grow = expand && max_len != 0 && avail > *slots;
        let mut nr = if grow { avail } else { avail.min(*slots) };
        let mut left = if max_len == 0 { i32::MAX as u32 } else { max_len };
        let mut iov = Vec::with_capacity(nr);
        let mut out = 0u32;
        let mut partial = false;
        loop {
            let (addr, mut len, _) = ring.read(head);
            // A buffer longer than what is left is cut in the iovec only:
            // its entry keeps its length, for whoever takes it next when
            // this transfer fails or moves nothing (as 6.18 does).
            if len > left {
                len = left;
                if !ring.inc {
                    partial = true;
                    if !iov.is_empty() {
                        break;
                    }
                }
            }
            iov.push(libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: len as usize });
            out += len;
            left -= len;
            if left == 0 {
                break;
            }
            head = head.wrapping_add(1);
            nr -= 1;
            if nr == 0 {
                break;
            }
        }
        let empty = head == tail;
        if grow {
            *slots = iov.len();
        }
        let (hold, more) =
            if commit { (Hold::Committed, !ring.commit(out as i32, iov.len() as u16)) } else { (Hold::Peeked, false) };
        Ok(Bundle { iov, bid, bgid, hold, empty, partial, more })
    }

    /// Puts back a bundle that moved nothing.
    pub(crate) fn recycle_bundle(&mut self, b: &Bundle) {
        if b.hold == Hold::Legacy {
            let v = b.iov[0];
            self.recycle(&Pick {
                addr: v.iov_base as u64,
                len: v.iov_len as u32,
                bid: b.bid,
                bgid: b.bgid,
                hold: Hold::Legacy,
                more: false,
            });
        }
    }

    /// A bundle moved `res` (> 0) bytes: consumes the buffers that took
    /// them and returns the CQE flags naming the first.
    pub(crate) fn settle_bundle(&mut self, b: &Bundle, res: i32) -> u32 {
        let mut f = cqe_flags(b.bid);
        if b.hold == Hold::Peeked {
            if let Some(Group::Ring(ring)) = self.map.get_mut(&b.bgid) {
                if !ring.commit(res, b.used(res)) {
                    f |= IORING_CQE_F_BUF_MORE;
                }
            }
        }
        f
    }

    /// Puts back a buffer whose op will retry (or ended without using it).
    pub(crate) fn recycle(&mut self, p: &Pick) {
        if p.hold != Hold::Legacy {
            return;
        }
        if let Some(Group::Legacy(list)) = self.map.get_mut(&p.bgid) {
            list.push_front(Buf { addr: p.addr, len: p.len, bid: p.bid });
        }
    }

    /// The op finished with `res`: consumes the buffer and returns the CQE
    /// flags naming it. A ring buffer not yet consumed goes back untouched
    /// on an error (no flags), as the kernel's recycle does.
    pub(crate) fn settle(&mut self, p: &Pick, res: i32) -> u32 {
        match p.hold {
            Hold::Peeked if res < 0 => 0,
            Hold::Peeked => {
                let mut f = cqe_flags(p.bid);
                if let Some(Group::Ring(ring)) = self.map.get_mut(&p.bgid) {
                    if !ring.commit(res, 1) {
                        f |= IORING_CQE_F_BUF_MORE;
                    }
                }
                f
            }
            Hold::Committed if p.more => cqe_flags(p.bid) | IORING_CQE_F_BUF_MORE,
            Hold::Legacy | Hold::Committed => cqe_flags(p.bid),
        }
    }
}

/// The CQE flags naming a provided buffer a request still held when it
/// was completed from outside its issue (cancelled, failed in a chain,
/// torn down): the buffer is consumed, and named, as on any failure.
pub(crate) fn held_flags(bid: Option<u16>) -> u32 {
    bid.map_or(0, cqe_flags)
}

/// The group lock of a ring.
pub(crate) fn lock(ctx: &Ctx) -> Guard<'_, Groups> {
    ctx.kbuf.lock()
}

/// Whether the kernel would poll `fd` (it has a poll method): pipes and
/// sockets do, regular files and directories do not; for anything else
/// epoll, which refuses exactly the files without one, decides.
pub(crate) fn pollable(fd: i32) -> bool {
    let Ok(id) = os::ident_of(fd) else { return false };
    match id.kind {
        libc::S_IFIFO | libc::S_IFSOCK => true,
        libc::S_IFREG | libc::S_IFDIR | libc::S_IFBLK => false,
        _ => {
            // SAFETY: plain fd creation.
            let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
            if ep < 0 {
                return false;
            }
            let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: 0 };
            // SAFETY: a live event; the kernel checks the fds.
            let ok = unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } == 0;
            os::close(ep);
            ok
        }
    }
}

// ---------------------------------------------------------------- legacy ops

fn provide_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.op_flags != 0 || s.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    let nbufs = s.fd as u32 as u64;
    if nbufs == 0 || nbufs > MAX_BIDS {
        return Err(-libc::E2BIG);
    }
    if s.len == 0 {
        return Err(-libc::EINVAL);
    }
    let size = (s.len as u64).checked_mul(nbufs).ok_or(-libc::EOVERFLOW)?;
    let end = s.addr.checked_add(size).ok_or(-libc::EOVERFLOW)?;
    if end > USER_TOP {
        return Err(-libc::EFAULT);
    }
    if s.off > u16::MAX as u64 {
        return Err(-libc::E2BIG);
    }
    if s.off + nbufs > MAX_BIDS {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

fn remove_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.op_flags != 0 || s.addr != 0 || s.len != 0 || s.off != 0 || s.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    let nbufs = s.fd as u32 as u64;
    if nbufs == 0 || nbufs > MAX_BIDS {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

fn manage_issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let s = unsafe { req.get() }.sqe;
    let provide = s.opcode == IORING_OP_PROVIDE_BUFFERS;
    let mut g = lock(ctx);
    let bgid = s.buf_index;
    if !g.map.contains_key(&bgid) {
        if !provide {
            return Issued::Done(-libc::ENOENT, 0);
        }
        g.map.insert(bgid, Group::Legacy(VecDeque::new()));
    }
    let Some(Group::Legacy(list)) = g.map.get_mut(&bgid) else {
        // Provide/remove never touch a ring.
        return Issued::Done(-libc::EINVAL, 0);
    };
    let nbufs = s.fd as u32 as usize;
    if !provide {
        let n = nbufs.min(list.len());
        list.drain(..n);
        return Issued::Done(n as i32, 0);
    }
    let mut added = 0;
    let mut addr = s.addr;
    for i in 0..nbufs {
        if list.len() == u16::MAX as usize {
            break;
        }
        list.push_back(Buf { addr, len: s.len.min(MAX_RW), bid: (s.off as usize + i) as u16 });
        addr = addr.wrapping_add(s.len as u64);
        added += 1;
    }
    Issued::Done(if added != 0 { 0 } else { -libc::EOVERFLOW }, 0)
}

pub(crate) const PROVIDE_BUFFERS: OpDef =
    OpDef { prep: provide_prep, issue: manage_issue, iopoll: true, creds: false, ..BASE };
pub(crate) const REMOVE_BUFFERS: OpDef =
    OpDef { prep: remove_prep, issue: manage_issue, iopoll: true, creds: false, ..BASE };

// ------------------------------------------------------------- registration

fn read<T: Copy>(addr: u64) -> Result<T, i32> {
    let mut v = core::mem::MaybeUninit::<T>::uninit();
    os::copy_from_user(v.as_mut_ptr() as *mut u8, addr, core::mem::size_of::<T>())?;
    // SAFETY: fully written by the copy; T is plain data.
    Ok(unsafe { v.assume_init() })
}

/// The reserved words after `min_left` are zero.
fn reg_resv_zero(reg: &io_uring_buf_reg) -> bool {
    reg.resv.iter().all(|&x| x == 0)
}

fn page_align(n: usize) -> usize {
    let page = crate::sys::mem::page_size();
    (n + page - 1) & !(page - 1)
}

/// Memory for an IOU_PBUF_RING_MMAP ring: (base, memfd or -1).
fn ring_memory(len: usize) -> Result<(*mut u8, i32), i32> {
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    if super::setup::alias_by_mremap() {
        // SAFETY: a fresh shared mapping touches no existing memory.
        let p =
            unsafe { crate::sys::mmap(core::ptr::null_mut(), len, rw, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0) }?;
        return Ok((p as *mut u8, -1));
    }
    // SAFETY: NUL-terminated name; known flags.
    let fd = os::high(unsafe { libc::memfd_create(c"liburing-rs-pbuf".as_ptr(), libc::MFD_CLOEXEC) });
    if fd < 0 {
        return Err(os::errno());
    }
    // SAFETY: an fd just created.
    if unsafe { libc::ftruncate(fd, len as libc::off_t) } < 0 {
        let e = os::errno();
        os::close(fd);
        return Err(e);
    }
    // SAFETY: a fresh shared mapping of our memfd.
    match unsafe { crate::sys::mmap(core::ptr::null_mut(), len, rw, libc::MAP_SHARED, fd, 0) } {
        Ok(p) => Ok((p as *mut u8, fd)),
        Err(e) => {
            os::close(fd);
            Err(e)
        }
    }
}

/// IORING_REGISTER_PBUF_RING.
pub(crate) fn register_ring(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if arg == 0 || nr != 1 {
        return -libc::EINVAL;
    }
    let reg: io_uring_buf_reg = match read(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if !reg_resv_zero(&reg) || reg.flags & !(IOU_PBUF_RING_MMAP | IOU_PBUF_RING_INC) != 0 {
        return -libc::EINVAL;
    }
    let n = reg.ring_entries;
    if !n.is_power_of_two() || n >= 65536 {
        return -libc::EINVAL;
    }
    // A floor for what a partly consumed buffer keeps: incremental rings only.
    if reg.flags & IOU_PBUF_RING_INC == 0 && reg.min_left != 0 {
        return -libc::EINVAL;
    }
    let mut g = lock(ctx);
    match g.map.get(&reg.bgid) {
        Some(Group::Ring(_)) => return -libc::EEXIST,
        Some(Group::Legacy(l)) if !l.is_empty() => return -libc::EEXIST,
        _ => {}
    }
    let size = page_align(n as usize * ENTRY);
    let (base, own) = if reg.flags & IOU_PBUF_RING_MMAP != 0 {
        match ring_memory(size) {
            Ok((p, fd)) => (p, Some((size, fd))),
            Err(e) => return e,
        }
    } else {
        let a = reg.ring_addr;
        if a == 0 {
            return -libc::EFAULT;
        }
        if a % crate::sys::mem::page_size() as u64 != 0 {
            return -libc::EINVAL;
        }
        if a.checked_add(size as u64).is_none() {
            return -libc::EOVERFLOW;
        }
        // The kernel pins the ring for writing.
        if !crate::sys::mem::writable(a, size) {
            return -libc::EFAULT;
        }
        (a as *mut u8, None)
    };
    let ring = BufRing::new(base, n, reg.flags & IOU_PBUF_RING_INC != 0, reg.min_left, own);
    g.map.insert(reg.bgid, Group::Ring(ring));
    0
}

/// IORING_UNREGISTER_PBUF_RING.
pub(crate) fn unregister_ring(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if arg == 0 || nr != 1 {
        return -libc::EINVAL;
    }
    let reg: io_uring_buf_reg = match read(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if !reg_resv_zero(&reg) || reg.flags != 0 {
        return -libc::EINVAL;
    }
    let mut g = lock(ctx);
    match g.map.get(&reg.bgid) {
        None => -libc::ENOENT,
        Some(Group::Legacy(_)) => -libc::EINVAL,
        Some(Group::Ring(_)) => {
            g.map.remove(&reg.bgid);
            0
        }
    }
}

/// IORING_REGISTER_PBUF_STATUS: the kernel's head of a ring.
pub(crate) fn status(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if arg == 0 || nr != 1 {
        return -libc::EINVAL;
    }
    let mut st: io_uring_buf_status = match read(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if st.resv.iter().any(|&x| x != 0) {
        return -libc::EINVAL;
    }
    let head = {
        let g = lock(ctx);
        let Ok(bgid) = u16::try_from(st.buf_group) else { return -libc::ENOENT };
        match g.map.get(&bgid) {
            None => return -libc::ENOENT,
            Some(Group::Legacy(_)) => return -libc::EINVAL,
            Some(Group::Ring(r)) => r.head,
        }
    };
    st.head = head as u32;
    match os::copy_to_user(
        arg,
        &st as *const io_uring_buf_status as *const u8,
        core::mem::size_of::<io_uring_buf_status>(),
    ) {
        Ok(()) => 0,
        Err(e) => e,
    }
}

/// mmap(2) of the ring fd at IORING_OFF_PBUF_RING | bgid << 16: a second
/// mapping of an IOU_PBUF_RING_MMAP ring's pages.
pub(crate) fn map_for_app(ctx: &Ctx, off: u64, len: usize) -> Result<*mut core::ffi::c_void, i32> {
    let bgid = ((off & !IORING_OFF_MMAP_MASK) >> IORING_OFF_PBUF_SHIFT) as u16;
    let g = lock(ctx);
    // No region there: the kernel's ENOMEM.
    let Some(Group::Ring(ring)) = g.map.get(&bgid) else { return Err(-libc::ENOMEM) };
    let Some((size, memfd)) = ring.own else { return Err(-libc::ENOMEM) };
    if len == 0 || len > size {
        return Err(-libc::EINVAL);
    }
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    if memfd >= 0 {
        // SAFETY: a new mapping of the ring's memfd, touching nothing else.
        return unsafe { crate::sys::mmap(core::ptr::null_mut(), len, rw, libc::MAP_SHARED, memfd, 0) };
    }
    // SAFETY: mremap with old size 0 makes a second mapping of the same
    // shared pages and leaves the engine's in place.
    let p = unsafe { libc::mremap(ring.base as *mut core::ffi::c_void, 0, len, libc::MREMAP_MAYMOVE) };
    if p == libc::MAP_FAILED {
        return Err(os::errno());
    }
    Ok(p)
}
