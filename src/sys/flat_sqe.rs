//! A submission entry copied out of the shared SQ, its unions flattened to
//! the names the engine and the diagnostics use.

use super::io_uring_sqe;

/// The fields of an SQE, read once: the application may rewrite the slot as
/// soon as the SQ head moves past it, so the engine's ops and the
/// diagnostics only ever look at this copy.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sqe {
    pub opcode: u8,
    pub flags: u8,
    pub ioprio: u16,
    pub fd: i32,
    /// `off` / `addr2`.
    pub off: u64,
    /// `addr` / `splice_off_in`.
    pub addr: u64,
    pub len: u32,
    /// The per-opcode flag word (`rw_flags`, `poll32_events`, ...).
    pub op_flags: u32,
    pub user_data: u64,
    /// `buf_index` / `buf_group`.
    pub buf_index: u16,
    pub personality: u16,
    /// `splice_fd_in` / `file_index`.
    pub file_index: u32,
    pub addr3: u64,
    /// Unused by every op the engine has; keeps the 64-byte layout.
    pub pad2: u64,
}

const _: () = assert!(core::mem::size_of::<Sqe>() == 64);

impl Sqe {
    /// Copies the SQE at `p`.
    ///
    /// # Safety
    /// `p` points to a slot of a live SQE array that the caller may read
    /// for the duration of the call (the engine: between the SQ head and
    /// tail; the diagnostics: an entry the application filled and submits).
    #[inline(always)]
    pub unsafe fn read(p: *const io_uring_sqe) -> Sqe {
        // SAFETY: per the contract; a volatile copy because the application
        // could (wrongly) still be writing, which must not be UB here.
        let s = unsafe { core::ptr::read_volatile(p) };
        // SAFETY: every union member is plain integer data.
        unsafe {
            Sqe {
                opcode: s.opcode,
                flags: s.flags,
                ioprio: s.ioprio,
                fd: s.fd,
                off: s.off_u.off,
                addr: s.addr_u.addr,
                len: s.len,
                op_flags: s.rw_flags_u.fsync_flags,
                user_data: s.user_data,
                buf_index: s.buf_index_u.buf_index,
                personality: s.personality,
                file_index: s.splice_fd_in_u.file_index,
                addr3: s.addr3_u.addr3_s.addr3,
                pad2: s.addr3_u.addr3_s.__pad2[0],
            }
        }
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}
