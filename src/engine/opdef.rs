//! One row per opcode the engine implements: how to prepare and issue it,
//! whether it needs a file, whether it may run inline, and what readiness
//! it waits for on a pollable file. Opcodes without a row complete with
//! -EINVAL, exactly as on a kernel that predates them, and the probe
//! reports the rows and nothing else.
//!
//! A row also carries its family's cold hooks, as the kernel's
//! `io_cold_def` does: what the core calls when a request leaves its op's
//! own path (failed or cancelled from outside, a timer fired, taken back
//! by a cancel). The core calls the row, never a family by name.

use super::ctx::{Cqe, Ctx};
use super::req::{Issued, Mode, Req, ReqPtr};
use crate::sys::*;

#[derive(Clone, Copy)]
pub(crate) struct OpDef {
    /// Checks the SQE and records what the op needs (at submission).
    pub prep: fn(&Ctx, &mut Req) -> Result<(), i32>,
    /// Does the work; see [`Issued`].
    pub issue: fn(&Ctx, ReqPtr, Mode) -> Issued,
    /// Copies user memory the op reads later (iovecs, paths) before the
    /// request leaves the submitting call.
    pub stabilize: fn(&mut Req) -> Result<(), i32>,
    /// Readiness (EPOLLIN/EPOLLOUT) to wait for when the file is pollable;
    /// 0 sends blocked work to the worker pool instead.
    pub poll_mask: fn(&Req) -> u32,
    /// The SQE's fd (or fixed file) is resolved before issue.
    pub needs_file: bool,
    /// Never attempted inline: always a worker (ops that block in the
    /// kernel too, e.g. fsync).
    pub force_async: bool,
    /// Accepts a non-zero `ioprio`.
    pub ioprio: bool,
    /// Allowed on an IORING_SETUP_IOPOLL ring (others get -EINVAL there).
    pub iopoll: bool,
    /// Accepts IOSQE_BUFFER_SELECT.
    pub buffer_select: bool,
    /// May block indefinitely (pipes): counted against the unbounded worker
    /// cap rather than the bounded one.
    pub unbounded: bool,
    /// An error the op itself reports fails the request's chain (and shows
    /// despite IOSQE_CQE_SKIP_SUCCESS). The kernel's path, sync and xattr
    /// ops do not: their errors are just results.
    pub error_fails: bool,
    /// A 128-byte SQE: only on SQE128 rings, or on SQE_MIXED rings where
    /// it takes two SQ slots.
    pub is_128: bool,
    /// The op checks its caller's credentials (paths, permissions,
    /// capabilities, socket ownership and credentials passed on, the
    /// privilege bits a write clears): run elsewhere, it takes the
    /// submitter's along (see creds.rs).
    pub creds: bool,
    /// The op may post a CQE or re-arm before its final completion (a
    /// zerocopy send's notification, a transfer that moved part): it
    /// leaves the armed list before it settles, not with its CQE.
    pub early_unlist: bool,

    /// The key io-wq serialises the request by, if any (the kernel's
    /// hash_reg_file: buffered writes to one regular file).
    pub hash: Option<fn(&mut Req) -> Option<u64>>,

    // Cold hooks and the facts cancellation needs.
    /// Settles a completion that may come from outside the op's issue
    /// (cancelled, failed in a chain, torn down): returns the result and
    /// CQE flags to post (what a transfer moved already, the provided
    /// buffer it still holds). The kernel's `fail` hook and buffer put.
    pub fail: Option<FailFn>,
    /// A reactor timer the op armed fired (the reactor owns the request).
    /// Only rows with this hook arm timers.
    pub timer: Option<fn(&Ctx, ReqPtr)>,
    /// Takes a request a cancel won back from where the op parked it
    /// outside the worker queue and the readiness set (by default its
    /// reactor timer).
    pub disarm: fn(ReqPtr),
    /// Its file reported ready in the readiness set (the owner holds the
    /// request); without it the request is issued again.
    pub ready: Option<fn(&Ctx, ReqPtr, u32)>,
    /// Guards the request before it in a chain (LINK_TIMEOUT).
    pub guard: Option<Guard>,
    /// Listed, it is also found by user_data in the ring's poll index
    /// (POLL_REMOVE looks there).
    pub indexed: bool,
    /// A cancel that finds it answers with a count even when one request
    /// was asked for (the kernel's futex and waitid lists answer so).
    pub cancel_count: bool,
    /// IORING_ASYNC_CANCEL_FD may find it (ops with a file of their own).
    pub cancel_fd: bool,
    /// Run by a worker only where the kernel's would wait in a poll: an
    /// interrupted call ends as cancelled, as the kernel's poll removal.
    pub poll_like: bool,
}

/// `OpDef::fail`: (result, CQE flags) in, the ones to post out.
pub(crate) type FailFn = fn(&Ctx, &mut Req, i32, u32, Mode) -> (i32, u32);

/// The hooks of a request that guards the one before it in its chain.
#[derive(Clone, Copy)]
pub(crate) struct Guard {
    /// Binds it to the request it guards (`Req::id`), at that one's issue.
    pub bind: fn(ReqPtr, u64),
    /// Starts it after the guarded request's first issue.
    pub arm: fn(&Ctx, ReqPtr),
    /// The guarded request completed: settles it, returning its CQE if
    /// one is due now.
    pub disarm: fn(&Ctx, ReqPtr) -> Option<Cqe>,
}

pub(crate) fn stable(_: &mut Req) -> Result<(), i32> {
    Ok(())
}

pub(crate) fn no_poll(_: &Req) -> u32 {
    0
}

pub(crate) const BASE: OpDef = OpDef {
    prep: |_, _| Ok(()),
    issue: |_, _, _| Issued::Done(-libc::EINVAL, 0),
    stabilize: stable,
    poll_mask: no_poll,
    needs_file: false,
    force_async: false,
    ioprio: false,
    iopoll: false,
    buffer_select: false,
    unbounded: false,
    error_fails: true,
    is_128: false,
    creds: true,
    early_unlist: false,
    hash: None,
    fail: None,
    timer: None,
    disarm: |r| {
        super::reactor::del_timer(r);
    },
    ready: None,
    guard: None,
    indexed: false,
    cancel_count: false,
    cancel_fd: true,
    poll_like: false,
};

const N: usize = IORING_OP_LAST as usize;

static TABLE: [Option<OpDef>; N] = {
    let mut t: [Option<OpDef>; N] = [None; N];
    t[IORING_OP_NOP as usize] = Some(super::nop::NOP);
    t[IORING_OP_READ as usize] = Some(super::rw::RW_BUFSEL);
    t[IORING_OP_READV as usize] = Some(super::rw::RW_BUFSEL);
    t[IORING_OP_WRITE as usize] = Some(super::rw::RW);
    t[IORING_OP_WRITEV as usize] = Some(super::rw::RW);
    t[IORING_OP_READ_FIXED as usize] = Some(super::rw::RW);
    t[IORING_OP_WRITE_FIXED as usize] = Some(super::rw::RW);
    t[IORING_OP_READV_FIXED as usize] = Some(super::rw::RW);
    t[IORING_OP_WRITEV_FIXED as usize] = Some(super::rw::RW);
    t[IORING_OP_FSYNC as usize] = Some(super::sync::SYNC);
    t[IORING_OP_SYNC_FILE_RANGE as usize] = Some(super::sync::SYNC);
    t[IORING_OP_FALLOCATE as usize] = Some(super::sync::SYNC);
    t[IORING_OP_FTRUNCATE as usize] = Some(super::sync::SYNC);
    t[IORING_OP_FADVISE as usize] = Some(super::advise::FADVISE);
    t[IORING_OP_MADVISE as usize] = Some(super::advise::MADVISE);
    t[IORING_OP_OPENAT as usize] = Some(super::openclose::OPEN);
    t[IORING_OP_OPENAT2 as usize] = Some(super::openclose::OPEN);
    t[IORING_OP_CLOSE as usize] = Some(super::openclose::CLOSE);
    t[IORING_OP_PIPE as usize] = Some(super::openclose::PIPE);
    t[IORING_OP_STATX as usize] = Some(super::fs::PATH_OP);
    t[IORING_OP_RENAMEAT as usize] = Some(super::fs::PATH_OP);
    t[IORING_OP_UNLINKAT as usize] = Some(super::fs::PATH_OP);
    t[IORING_OP_MKDIRAT as usize] = Some(super::fs::PATH_OP);
    t[IORING_OP_SYMLINKAT as usize] = Some(super::fs::PATH_OP);
    t[IORING_OP_LINKAT as usize] = Some(super::fs::PATH_OP);
    t[IORING_OP_GETXATTR as usize] = Some(super::xattr::XATTR);
    t[IORING_OP_SETXATTR as usize] = Some(super::xattr::XATTR);
    t[IORING_OP_FGETXATTR as usize] = Some(super::xattr::FXATTR);
    t[IORING_OP_FSETXATTR as usize] = Some(super::xattr::FXATTR);
    t[IORING_OP_SPLICE as usize] = Some(super::splice::SPLICE);
    t[IORING_OP_TEE as usize] = Some(super::splice::SPLICE);
    t[IORING_OP_ASYNC_CANCEL as usize] = Some(super::cancel::ASYNC_CANCEL);
    t[IORING_OP_FILES_UPDATE as usize] = Some(super::rsrc::FILES_UPDATE);
    t[IORING_OP_EPOLL_CTL as usize] = Some(super::epoll::EPOLL_CTL);
    t[IORING_OP_EPOLL_WAIT as usize] = Some(super::epoll::EPOLL_WAIT);
    t[IORING_OP_POLL_ADD as usize] = Some(super::poll::POLL_ADD);
    t[IORING_OP_POLL_REMOVE as usize] = Some(super::poll::POLL_REMOVE);
    t[IORING_OP_TIMEOUT as usize] = Some(super::timeout::TIMEOUT);
    t[IORING_OP_TIMEOUT_REMOVE as usize] = Some(super::timeout::TIMEOUT_REMOVE);
    t[IORING_OP_LINK_TIMEOUT as usize] = Some(super::timeout::LINK_TIMEOUT);
    t[IORING_OP_PROVIDE_BUFFERS as usize] = Some(super::kbuf::PROVIDE_BUFFERS);
    t[IORING_OP_REMOVE_BUFFERS as usize] = Some(super::kbuf::REMOVE_BUFFERS);
    t[IORING_OP_READ_MULTISHOT as usize] = Some(super::rw::READ_MULTISHOT);
    t[IORING_OP_SEND as usize] = Some(super::netbuf::SEND);
    t[IORING_OP_SENDMSG as usize] = Some(super::net::SEND);
    t[IORING_OP_RECV as usize] = Some(super::netbuf::RECV);
    t[IORING_OP_RECVMSG as usize] = Some(super::netbuf::RECV);
    t[IORING_OP_SEND_ZC as usize] = Some(super::net::SEND_ZC);
    t[IORING_OP_SENDMSG_ZC as usize] = Some(super::net::SEND_ZC);
    t[IORING_OP_SOCKET as usize] = Some(super::sock::SOCKET);
    t[IORING_OP_BIND as usize] = Some(super::sock::BIND);
    t[IORING_OP_LISTEN as usize] = Some(super::sock::LISTEN);
    t[IORING_OP_CONNECT as usize] = Some(super::sock::CONNECT);
    t[IORING_OP_SHUTDOWN as usize] = Some(super::sock::SHUTDOWN);
    t[IORING_OP_ACCEPT as usize] = Some(super::sock::ACCEPT);
    t[IORING_OP_URING_CMD as usize] = Some(super::sock::URING_CMD);
    t[IORING_OP_URING_CMD128 as usize] = Some(OpDef { is_128: true, ..super::sock::URING_CMD });
    t[IORING_OP_NOP128 as usize] = Some(OpDef { is_128: true, ..super::nop::NOP });
    t[IORING_OP_MSG_RING as usize] = Some(super::msg_ring::MSG_RING);
    t[IORING_OP_FIXED_FD_INSTALL as usize] = Some(super::fixed_fd::FIXED_FD_INSTALL);
    t[IORING_OP_WAITID as usize] = Some(super::waitid::WAITID);
    t[IORING_OP_FUTEX_WAIT as usize] = Some(super::futex::FUTEX_WAIT);
    t[IORING_OP_FUTEX_WAKE as usize] = Some(super::futex::FUTEX_WAKE);
    t[IORING_OP_FUTEX_WAITV as usize] = Some(super::futex::FUTEX_WAITV);
    t
};

/// The row for `opcode`, if the engine implements it.
#[inline]
pub(crate) fn lookup(opcode: u8) -> Option<&'static OpDef> {
    TABLE.get(opcode as usize).and_then(|d| d.as_ref())
}

/// The row of an opcode already accepted at submission.
#[inline]
pub(crate) fn get(opcode: u8) -> &'static OpDef {
    lookup(opcode).unwrap_or(&BASE)
}

/// Whether the engine implements `opcode` (the probe's answer).
pub(crate) fn supported(opcode: u32) -> bool {
    opcode < N as u32 && TABLE[opcode as usize].is_some()
}
