//! Socket set-up and control: SOCKET, BIND, LISTEN, CONNECT, SHUTDOWN,
//! ACCEPT (one-shot and multishot) and URING_CMD's socket commands, with
//! the fixed-file (direct descriptor) variants.
//!
//! As for transfers (`net.rs`), accepts and connects that would wait
//! return `Issued::Again` and wait on the reactor. The calls that only a
//! blocking system call can make (accept on a blocking listener, connect
//! on a blocking socket) run on a worker, never on the reactor or inline.

use alloc::boxed::Box;

use super::ctx::{Cqe, Ctx};
use super::net::{copy_addr, sockopt_int, Addr, Kind};
use super::opdef::{OpDef, BASE};
use super::req::{Issued, Mode, OpData, Req, ReqPtr};
use super::{os, rsrc};
use crate::sys::*;

pub(crate) struct SockData {
    /// ACCEPT's IORING_ACCEPT_* flags.
    flags: u16,
    /// The request already waited for readiness (POLL_FIRST is met).
    polled: bool,
    /// CONNECT: an earlier attempt is in progress / saw ECONNABORTED.
    in_progress: bool,
    aborted: bool,
    /// BIND/CONNECT's address.
    addr: Option<Box<Addr>>,
}

fn data(r: &mut Req) -> &mut SockData {
    match &mut r.io {
        OpData::Sock(d) => d,
        _ => unreachable!(),
    }
}

fn set_data(r: &mut Req, addr: Option<Box<Addr>>) {
    r.io = OpData::Sock(Box::new(SockData {
        flags: r.sqe.ioprio,
        polled: false,
        in_progress: false,
        aborted: false,
        addr,
    }));
}

/// Slot for a direct descriptor: `file_index` is 1-based, or ALLOC.
fn slot(file_index: u32) -> u32 {
    if file_index == IORING_FILE_INDEX_ALLOC {
        IORING_FILE_INDEX_ALLOC
    } else {
        file_index - 1
    }
}

/// A new fd as the op's result, or installed in the fixed table.
fn install(ctx: &Ctx, fd: i32, file_index: u32) -> i32 {
    if fd < 0 || file_index == 0 {
        return fd;
    }
    rsrc::install_fixed(ctx, fd, slot(file_index))
}

const SOCK_FLAGS: i32 = libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;

fn socket_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.addr != 0 || s.op_flags != 0 || s.buf_index != 0 {
        return Err(-libc::EINVAL);
    }
    let flags = s.off as i32 & !0xf;
    if s.file_index != 0 && flags & libc::SOCK_CLOEXEC != 0 {
        return Err(-libc::EINVAL);
    }
    if flags & !SOCK_FLAGS != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

fn socket_issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let s = unsafe { req.get() }.sqe;
    // The fixed table's copy must not leak into exec'd programs.
    let cloexec = if s.file_index != 0 { libc::SOCK_CLOEXEC } else { 0 };
    // SAFETY: plain socket creation.
    let fd = os::cvt32(unsafe { libc::socket(s.fd, s.off as i32 | cloexec, s.len as i32) });
    Issued::Done(install(ctx, fd, s.file_index), 0)
}

pub(crate) const SOCKET: OpDef = OpDef { prep: socket_prep, issue: socket_issue, ..BASE };

/// BIND and CONNECT: the address (addr, length in addr2) is copied now.
fn addr_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.len != 0 || s.buf_index != 0 || s.op_flags != 0 || s.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    let a = copy_addr(s.addr, s.off as i32 as i64)?;
    set_data(r, Some(a));
    Ok(())
}

fn bind_issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let fd = r.file;
    let a = data(r).addr.as_ref().expect("prepared");
    // SAFETY: a live address copy of the given length.
    Issued::Done(os::cvt32(unsafe { libc::bind(fd, a.buf.as_ptr() as *const libc::sockaddr, a.len) }), 0)
}

fn listen_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.addr != 0 || s.buf_index != 0 || s.op_flags != 0 || s.file_index != 0 || s.off != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

fn listen_issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    // SAFETY: plain syscall on the request's file.
    Issued::Done(os::cvt32(unsafe { libc::listen(r.file, r.sqe.len as i32) }), 0)
}

fn shutdown_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.off != 0 || s.addr != 0 || s.op_flags != 0 || s.buf_index != 0 || s.file_index != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

fn shutdown_issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    // SAFETY: plain syscall on the request's file.
    Issued::Done(os::cvt32(unsafe { libc::shutdown(r.file, r.sqe.len as i32) }), 0)
}

const FILE_OP: OpDef = OpDef { needs_file: true, ..BASE };
pub(crate) const BIND: OpDef = OpDef { prep: addr_prep, issue: bind_issue, ..FILE_OP };
pub(crate) const LISTEN: OpDef = OpDef { prep: listen_prep, issue: listen_issue, ..FILE_OP };
pub(crate) const SHUTDOWN: OpDef = OpDef { prep: shutdown_prep, issue: shutdown_issue, creds: false, ..FILE_OP };

/// Whether the file's status flags have O_NONBLOCK (read only: the
/// program's threads share them).
fn nonblocking(fd: i32) -> bool {
    // SAFETY: F_GETFL only reads the file's status flags.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl >= 0 && fl & libc::O_NONBLOCK != 0
}

/// connect(2) has no per-call flag. A non-blocking socket is connected as
/// the kernel does (EINPROGRESS, then wait for writability); a blocking
/// one by a worker, where the call may block (an interrupt ends it), so
/// that the file's flags, which the program's threads share, are never
/// touched.
fn connect_issue(_: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let fd = r.file;
    let blocking = !nonblocking(fd);
    if blocking && mode != Mode::Worker {
        return Issued::Blocking;
    }
    let d = data(r);
    let a = d.addr.as_ref().expect("prepared");
    // SAFETY: a live address copy of the given length.
    let mut ret = os::cvt32(unsafe { libc::connect(fd, a.buf.as_ptr() as *const libc::sockaddr, a.len) });
    match -ret {
        // Interrupted by a cancel (see cancel.rs, waits_like_poll).
        libc::EINTR => ret = -libc::ECANCELED,
        libc::EAGAIN | libc::EINPROGRESS if !blocking => {
            d.in_progress |= ret == -libc::EINPROGRESS;
            return Issued::Again;
        }
        libc::ECONNABORTED if !d.aborted && !blocking => {
            d.aborted = true;
            return Issued::Again;
        }
        // Connected meanwhile: the pending error (0 if none) is the result.
        libc::EBADFD | libc::EISCONN if d.in_progress => {
            ret = sockopt_int(fd, libc::SO_ERROR).map_or_else(|e| e, |e| -e)
        }
        _ => {}
    }
    Issued::Done(ret, 0)
}

fn connect_mask(_: &Req) -> u32 {
    libc::EPOLLOUT as u32
}

pub(crate) const CONNECT: OpDef = OpDef {
    prep: addr_prep,
    issue: connect_issue,
    poll_mask: connect_mask,
    unbounded: true,
    poll_like: true,
    ..FILE_OP
};

fn accept_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.len != 0 || s.buf_index != 0 {
        return Err(-libc::EINVAL);
    }
    let iou = s.ioprio;
    if iou & !(IORING_ACCEPT_MULTISHOT | IORING_ACCEPT_DONTWAIT | IORING_ACCEPT_POLL_FIRST) != 0 {
        return Err(-libc::EINVAL);
    }
    let flags = s.op_flags as i32;
    if s.file_index != 0
        && (flags & libc::SOCK_CLOEXEC != 0
            || (iou & IORING_ACCEPT_MULTISHOT != 0 && s.file_index != IORING_FILE_INDEX_ALLOC))
    {
        return Err(-libc::EINVAL);
    }
    if flags & !SOCK_FLAGS != 0 {
        return Err(-libc::EINVAL);
    }
    set_data(r, None);
    Ok(())
}

/// Whether a poll says `fd` has `ev` now.
fn ready(fd: i32, ev: i16) -> bool {
    let mut p = libc::pollfd { fd, events: ev, revents: 0 };
    // SAFETY: one live pollfd, zero timeout.
    unsafe { libc::poll(&mut p, 1, 0) > 0 && p.revents != 0 }
}

/// One accept without touching the listener's flags: a non-blocking
/// listener is asked directly; a blocking one only once a poll says a
/// connection is queued, and then only on a worker (None: hand it to
/// one), since another thread of the program may take that connection
/// first and leave the call waiting for the next.
fn accept_now(fd: i32, addr: u64, addrlen: u64, flags: i32, mode: Mode) -> Option<i32> {
    let call = || {
        // SAFETY: the address buffers are the caller's; the kernel checks
        // them (EFAULT).
        os::cvt32(unsafe { libc::accept4(fd, addr as *mut libc::sockaddr, addrlen as *mut libc::socklen_t, flags) })
    };
    if nonblocking(fd) {
        return Some(call());
    }
    if !ready(fd, libc::POLLIN) {
        // Not listening at all fails now; an empty queue waits.
        return Some(match sockopt_int(fd, libc::SO_ACCEPTCONN) {
            Ok(1) => -libc::EAGAIN,
            _ => call(),
        });
    }
    if mode != Mode::Worker {
        return None;
    }
    Some(call())
}

fn accept_issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let (fd, s) = (r.file, r.sqe);
    let d = data(r);
    if d.flags & IORING_ACCEPT_POLL_FIRST != 0 && !d.polled {
        d.polled = true;
        return Issued::Again;
    }
    let multishot = d.flags & IORING_ACCEPT_MULTISHOT != 0;
    let cloexec = if s.file_index != 0 { libc::SOCK_CLOEXEC } else { 0 };
    loop {
        let nfd = match accept_now(fd, s.addr, s.off, s.op_flags as i32 | cloexec, mode) {
            None => return Issued::Blocking,
            // Interrupted by a cancel (see cancel.rs, waits_like_poll).
            Some(e) if e == -libc::EINTR => -libc::ECANCELED,
            Some(nfd) => nfd,
        };
        if nfd == -libc::EAGAIN && d.flags & IORING_ACCEPT_DONTWAIT == 0 {
            d.polled = true;
            return Issued::Again;
        }
        let res = install(ctx, nfd, s.file_index);
        // Only TCP-like listeners tell whether more connections wait (the
        // kernel's is_empty); for the rest multishot keeps accepting until
        // the queue is empty.
        let known = nfd >= 0 && Kind::of(fd).is_ok_and(|k| k.inet());
        let more = known && ready(fd, libc::POLLIN);
        let cflags = if more { IORING_CQE_F_SOCK_NONEMPTY } else { 0 };
        if res < 0 || !multishot {
            return Issued::Done(res, cflags);
        }
        ctx.post_more(Cqe::new(s.user_data, res, cflags | IORING_CQE_F_MORE), mode);
        if known && !more {
            d.polled = true;
            return Issued::Again;
        }
    }
}

fn accept_mask(_: &Req) -> u32 {
    libc::EPOLLIN as u32
}

pub(crate) const ACCEPT: OpDef = OpDef {
    prep: accept_prep,
    issue: accept_issue,
    poll_mask: accept_mask,
    ioprio: true,
    unbounded: true,
    poll_like: true,
    ..FILE_OP
};

fn cmd_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let s = &r.sqe;
    if s.off >> 32 != 0 || s.op_flags & !IORING_URING_CMD_MASK != 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

/// URING_CMD on a socket: the SOCKET_URING_OP_* commands of Linux 6.18.
/// Other files have no command handler here (-EOPNOTSUPP).
fn cmd_issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let (fd, s) = (r.file, r.sqe);
    let Ok(kind) = Kind::of(fd) else { return Issued::Done(-libc::EOPNOTSUPP, 0) };
    let (level, optname, optlen, optval) = (s.addr as u32 as i32, (s.addr >> 32) as i32, s.file_index, s.addr3);
    let res = match s.off as u32 {
        op @ (SOCKET_URING_OP_SIOCINQ | SOCKET_URING_OP_SIOCOUTQ) => {
            // Only the inet protocols have the ioctl behind these.
            if !kind.inet() {
                -libc::EOPNOTSUPP
            } else {
                let req = if op == SOCKET_URING_OP_SIOCINQ { libc::FIONREAD } else { libc::TIOCOUTQ };
                let mut v: i32 = 0;
                // SAFETY: both ioctls write one int.
                let e = os::cvt32(unsafe { libc::ioctl(fd, req, &mut v) });
                if e < 0 {
                    e
                } else {
                    v
                }
            }
        }
        SOCKET_URING_OP_GETSOCKOPT if level != libc::SOL_SOCKET => -libc::EOPNOTSUPP,
        SOCKET_URING_OP_GETSOCKOPT => {
            let mut len = optlen as libc::socklen_t;
            // SAFETY: optval is caller memory the kernel checks (EFAULT).
            let e = os::cvt32(unsafe { libc::getsockopt(fd, level, optname, optval as *mut libc::c_void, &mut len) });
            if e < 0 {
                e
            } else {
                len as i32
            }
        }
        // SAFETY: as above.
        SOCKET_URING_OP_SETSOCKOPT => {
            os::cvt32(unsafe { libc::setsockopt(fd, level, optname, optval as *const libc::c_void, optlen) })
        }
        // From Linux 6.19 (liburing 2.15 has its helper): optlen picks
        // the peer's address.
        SOCKET_URING_OP_GETSOCKNAME if s.ioprio != 0 || s.len != 0 || s.op_flags != 0 || optlen > 1 => -libc::EINVAL,
        SOCKET_URING_OP_GETSOCKNAME => {
            let (ua, ul) = (s.addr as *mut libc::sockaddr, s.addr3 as *mut libc::socklen_t);
            // SAFETY: caller memory the kernel checks (EFAULT).
            os::cvt32(unsafe {
                if optlen == 1 {
                    libc::getpeername(fd, ua, ul)
                } else {
                    libc::getsockname(fd, ua, ul)
                }
            })
        }
        // Timestamps need 32-byte CQEs before anything else.
        SOCKET_URING_OP_TX_TIMESTAMP if ctx.flags & (IORING_SETUP_CQE32 | IORING_SETUP_CQE_MIXED) == 0 => -libc::EINVAL,
        SOCKET_URING_OP_TX_TIMESTAMP if !kind.inet() => -libc::EOPNOTSUPP,
        SOCKET_URING_OP_TX_TIMESTAMP => return tx_timestamp(ctx, req),
        _ => -libc::EOPNOTSUPP,
    };
    Issued::Done(res, 0)
}

// asm-generic socket option numbers (x86_64, arm64, riscv64).
const SO_TIMESTAMPING_OLD: i32 = 37;
const SO_TIMESTAMPING_NEW: i32 = 65;
const SO_ZEROCOPY: i32 = 60;

/// An int socket option, 0 where the socket has no such option.
fn opt(fd: i32, level: i32, name: i32) -> i32 {
    let mut v = [0i32; 2];
    let mut l = core::mem::size_of_val(&v) as libc::socklen_t;
    // SAFETY: a live buffer and its length (SO_TIMESTAMPING may write a
    // struct so_timestamping, two ints).
    let r = unsafe { libc::getsockopt(fd, level, name, v.as_mut_ptr() as *mut libc::c_void, &mut l) };
    if r < 0 {
        0
    } else {
        v[0]
    }
}

/// The kernel takes only TX timestamps out of a socket's error queue and
/// leaves the rest for the program; recvmsg(MSG_ERRQUEUE) takes whatever
/// is at the head. So the engine reads the queue only where nothing else
/// can be in it: no IP_RECVERR or IPV6_RECVERR (ICMP and local errors)
/// and no SO_ZEROCOPY (send completions).
fn errqueue_shared(fd: i32) -> bool {
    opt(fd, libc::SOL_IP, libc::IP_RECVERR) != 0
        || opt(fd, libc::SOL_IPV6, libc::IPV6_RECVERR) != 0
        || opt(fd, libc::SOL_SOCKET, SO_ZEROCOPY) != 0
}

/// SOCKET_URING_OP_TX_TIMESTAMP: multishot; each TX timestamp of the
/// socket's error queue becomes a 32-byte CQE with F_MORE (the key in
/// res, the type and the hardware bit in flags, the time in the second
/// half); then it waits, edge-triggered, for the next EPOLLERR wake-up,
/// as the kernel's poll arm does, until cancelled.
fn tx_timestamp(ctx: &Ctx, req: ReqPtr) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    if errqueue_shared(r.file) {
        return Issued::Done(-libc::EOPNOTSUPP, 0);
    }
    // Task work in the kernel: a DEFER_TASKRUN ring shows these CQEs only
    // once the submitter waits (as poll.rs does for its first CQE).
    ts_post(ctx, r);
    if r.flags & super::req::rf::OWN_FILE == 0 {
        let d = os::dup(r.file);
        if d < 0 {
            return Issued::Done(d, 0);
        }
        r.file = d;
        r.flags |= super::req::rf::OWN_FILE;
    }
    match super::readiness::arm(ctx, req, (libc::EPOLLERR | libc::EPOLLET) as u32) {
        Ok(()) => Issued::Queued,
        Err(e) => Issued::Done(e, 0),
    }
}

/// The socket reported EPOLLERR: post what its error queue holds. (Only
/// the timestamp command waits in the set; any other is issued again.)
fn ts_event(ctx: &Ctx, req: ReqPtr, _: u32) {
    // SAFETY: the server won the request's state: it is ours.
    let r = unsafe { req.get() };
    if r.sqe.off as u32 != SOCKET_URING_OP_TX_TIMESTAMP {
        return super::req::issue(ctx, req, Mode::Reactor);
    }
    // Turned on since: the queue is the program's again.
    if errqueue_shared(r.file) {
        return super::req::complete(ctx, req, -libc::EOPNOTSUPP, 0, Mode::Reactor);
    }
    ts_post(ctx, r);
    ctx.list(req, super::req::st::ARMED);
}

/// Reads the TX timestamps off the error queue and posts them, while the
/// CQ has room for them (the kernel leaves the rest queued).
fn ts_post(ctx: &Ctx, r: &Req) {
    let fd = r.file;
    let tsflags = opt(fd, libc::SOL_SOCKET, SO_TIMESTAMPING_OLD) as u32;
    // Without OPT_TSONLY a timestamp carries its packet, and the kernel
    // posts none of those: it leaves the queue alone.
    if tsflags & libc::SOF_TIMESTAMPING_OPT_TSONLY == 0 {
        return;
    }
    let f32 = if ctx.flags & IORING_SETUP_CQE_MIXED != 0 { IORING_CQE_F_32 } else { 0 };
    loop {
        if !ctx.room_for(&Cqe::new(0, 0, f32)) {
            return;
        }
        let mut ctl = [0u64; 128];
        // SAFETY: msghdr is plain data; all-zero is a valid empty header.
        let mut msg: libc::msghdr = unsafe { core::mem::zeroed() };
        msg.msg_control = ctl.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = core::mem::size_of_val(&ctl);
        // SAFETY: a header with no data buffer and a live control buffer.
        let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if n < 0 {
            return;
        }
        if n > 0 || msg.msg_flags & libc::MSG_TRUNC != 0 {
            // A packet queued before OPT_TSONLY was set: dropped where the
            // kernel leaves it (docs/engine.md, limits).
            continue;
        }
        if let Some(c) = ts_cqe(&msg, tsflags, r.sqe.user_data, f32) {
            ctx.post_more(c, Mode::Reactor);
        }
    }
}

/// The CQE for one error-queue entry, if it is a TX timestamp with a time
/// the socket's flags report (software first, then raw hardware).
fn ts_cqe(msg: &libc::msghdr, tsflags: u32, user_data: u64, f32: u32) -> Option<Cqe> {
    let (mut ee, mut ts) = (None, None);
    // SAFETY: `msg` was filled by recvmsg; the CMSG_* walk stays inside
    // its control buffer, and each payload is read unaligned at its size.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            let (level, ty, data) = ((*c).cmsg_level, (*c).cmsg_type, libc::CMSG_DATA(c));
            let len = (*c).cmsg_len as usize - (data as usize - c as usize);
            if (level == libc::SOL_IP && ty == libc::IP_RECVERR || level == libc::SOL_IPV6 && ty == libc::IPV6_RECVERR)
                && len >= core::mem::size_of::<libc::sock_extended_err>()
            {
                ee = Some(core::ptr::read_unaligned(data as *const libc::sock_extended_err));
            } else if level == libc::SOL_SOCKET
                && (ty == SO_TIMESTAMPING_OLD || ty == SO_TIMESTAMPING_NEW)
                && len >= 3 * core::mem::size_of::<[i64; 2]>()
            {
                ts = Some(core::ptr::read_unaligned(data as *const [[i64; 2]; 3]));
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    let (ee, ts) = (ee?, ts?);
    if ee.ee_errno != libc::ENOMSG as u32 || ee.ee_origin != libc::SO_EE_ORIGIN_TIMESTAMPING {
        return None;
    }
    let set = |t: [i64; 2]| t != [0, 0];
    let (t, hw) = if tsflags & libc::SOF_TIMESTAMPING_SOFTWARE != 0 && set(ts[0]) {
        (ts[0], 0)
    } else if tsflags & libc::SOF_TIMESTAMPING_RAW_HARDWARE != 0 && set(ts[2]) {
        (ts[2], IORING_CQE_F_TSTAMP_HW)
    } else {
        return None;
    };
    let flags = IORING_CQE_F_MORE | f32 | hw | ee.ee_info << IORING_TIMESTAMP_TYPE_SHIFT;
    Some(Cqe { user_data, res: ee.ee_data as i32, flags, big: [t[0] as u64, t[1] as u64] })
}

pub(crate) const URING_CMD: OpDef =
    OpDef { prep: cmd_prep, issue: cmd_issue, ioprio: true, ready: Some(ts_event), ..FILE_OP };
