//! Read-only looks at the application's ring: the `struct io_uring` fields,
//! pending SQEs and posted CQEs.
//!
//! The diagnostics never write to the ring. They read `struct io_uring`
//! through a raw pointer, one field at a time and unaligned, as `ring::Ring`
//! does, because other threads of the application may legitimately be
//! using the ring at the same time.

use core::ptr::{addr_of, read_volatile};
use core::sync::atomic::{AtomicBool, Ordering};

use crate::sys::liburing::IoUring;
use crate::sys::mem::{load_acquire, page_mapped};
use crate::sys::{io_uring_cqe, io_uring_sqe, IORING_SETUP_CQE32, IORING_SETUP_SQE128, IORING_SETUP_SQ_REWIND};

pub use crate::sys::flat_sqe::Sqe;

/// A CQE as read from the ring; `big` holds the extra words of 32-byte CQEs.
#[derive(Clone, Copy)]
pub struct Cqe {
    pub user_data: u64,
    pub res: i32,
    pub flags: u32,
    pub big: Option<[u64; 2]>,
}

/// Set in a forked child (see `RingView::mapped`).
pub static FORKED: AtomicBool = AtomicBool::new(false);

pub struct RingView {
    pub flags: u32,
    pub features: u32,
    pub ring_fd: i32,
    pub enter_fd: i32,
    pub int_flags: u8,
    pub sqe_head: u32,
    pub sqe_tail: u32,
    sq_mask: u32,
    pub sq_entries: u32,
    sqes: *const io_uring_sqe,
    cq_khead: *const u32,
    cq_ktail: *const u32,
    cq_koverflow: *const u32,
    pub cq_mask: u32,
    pub cq_entries: u32,
    cqes: *const io_uring_cqe,
}

macro_rules! field {
    ($ring:expr, $($f:ident).+) => {
        // SAFETY: the caller of RingView::read vouches for the pointer; the
        // struct may sit at any alignment (see ring::Ring), hence unaligned.
        unsafe { addr_of!((*$ring).$($f).+).read_unaligned() }
    };
}

impl RingView {
    /// # Safety
    /// `ring` points to a `struct io_uring` (live, torn down, or never set up).
    pub unsafe fn read(ring: *const IoUring) -> RingView {
        RingView {
            flags: field!(ring, flags),
            features: field!(ring, features),
            ring_fd: field!(ring, ring_fd),
            enter_fd: field!(ring, enter_ring_fd),
            int_flags: field!(ring, int_flags),
            sqe_head: field!(ring, sq.sqe_head),
            sqe_tail: field!(ring, sq.sqe_tail),
            sq_mask: field!(ring, sq.ring_mask),
            sq_entries: field!(ring, sq.ring_entries),
            sqes: field!(ring, sq.sqes).cast_const(),
            cq_khead: field!(ring, cq.khead).cast_const(),
            cq_ktail: field!(ring, cq.ktail).cast_const(),
            cq_koverflow: field!(ring, cq.koverflow).cast_const(),
            cq_mask: field!(ring, cq.ring_mask),
            cq_entries: field!(ring, cq.ring_entries),
            cqes: field!(ring, cq.cqes).cast_const(),
        }
    }

    /// Whether the struct points at ring memory we may read. In a forked
    /// child the parent's rings may have stayed behind
    /// (io_uring_ring_dontfork): there the pages are looked up first.
    pub fn mapped(&self) -> bool {
        if self.cq_khead.is_null() || self.cq_ktail.is_null() || self.sqes.is_null() {
            return false;
        }
        !FORKED.load(Ordering::Relaxed) || (page_mapped(self.cq_khead.cast()) && page_mapped(self.sqes.cast()))
    }

    /// Whether the struct holds a ring the kernel can be entered for.
    pub fn live(&self) -> bool {
        self.enter_fd >= 0 && self.mapped()
    }

    /// (head, tail) of the CQ: head first, so a head seen past the tail
    /// really was past it.
    pub fn cq_head_tail(&self) -> (u32, u32) {
        // SAFETY: mapped() rings have both words in their mapping.
        unsafe { (load_acquire(self.cq_khead), load_acquire(self.cq_ktail)) }
    }

    /// The CQ overflow counter (0 when the ring has none mapped).
    pub fn cq_overflow(&self) -> u32 {
        if self.cq_koverflow.is_null() {
            return 0;
        }
        // SAFETY: mapped() rings have the counter in their mapping.
        unsafe { load_acquire(self.cq_koverflow) }
    }

    /// The SQ slots filled since the last flush, as a counter range.
    pub fn pending(&self) -> (u32, u32) {
        if self.flags & IORING_SETUP_SQ_REWIND != 0 {
            (0, self.sqe_tail)
        } else {
            (self.sqe_head, self.sqe_tail)
        }
    }

    pub fn sqe(&self, idx: u32) -> Sqe {
        let shift = (self.flags & IORING_SETUP_SQE128 != 0) as u32;
        // SAFETY: the slot is inside the SQE array; the application filled
        // it before calling us and does not touch it during the call.
        unsafe { Sqe::read(self.sqes.add(((idx & self.sq_mask) << shift) as usize)) }
    }

    /// The CQE at counter `idx`; `wide` for a 32-byte one.
    pub fn cqe(&self, idx: u32, wide: bool) -> Cqe {
        let shift = (self.flags & IORING_SETUP_CQE32 != 0) as u32;
        // SAFETY: idx is inside [head, tail) of this live CQ, so the slot
        // (and the next one for a 32-byte CQE) holds a posted CQE.
        unsafe {
            let p = self.cqes.add(((idx & self.cq_mask) << shift) as usize);
            let c = read_volatile(p);
            let big = (wide || shift != 0).then(|| read_volatile(p.add(1) as *const [u64; 2]));
            Cqe { user_data: c.user_data, res: c.res, flags: c.flags, big }
        }
    }
}

/// Copies up to `buf.len()` bytes of the caller's memory at `addr` without
/// trusting it: a bad address gives `None` instead of a crash.
pub fn peek_user(addr: u64, buf: &mut [u8]) -> Option<usize> {
    if addr == 0 {
        return None;
    }
    let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: buf.len() };
    // SAFETY: the kernel checks the remote range and writes at most
    // buf.len() bytes into buf; reading our own process needs no rights.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n > 0 {
        return Some(n as usize);
    }
    // The range may end in an unmapped page: retry up to the page end.
    let page_end = (addr | 4095) + 1;
    let short = (page_end - addr) as usize;
    if short >= buf.len() {
        return None;
    }
    let local = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: short };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: short };
    // SAFETY: as above, with a shorter length.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    (n > 0).then_some(n as usize)
}

/// A C string at `addr`, up to `buf.len()` bytes, without its NUL.
pub fn peek_str(addr: u64, buf: &mut [u8]) -> Option<&[u8]> {
    let n = peek_user(addr, buf)?;
    let s = buf.get(..n)?;
    Some(s.split(|&c| c == 0).next().unwrap_or(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_memory_is_read_safely() {
        let msg = b"/tmp/file\0junk";
        let mut buf = [0u8; 64];
        assert_eq!(peek_str(msg.as_ptr() as u64, &mut buf), Some(&b"/tmp/file"[..]));
        assert_eq!(peek_str(0, &mut buf), None);
        assert_eq!(peek_str(8, &mut buf), None);
    }
}
