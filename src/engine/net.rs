//! Data transfer on sockets: SEND (and sendto), RECV, SENDMSG, RECVMSG,
//! SEND_ZC and SENDMSG_ZC.
//!
//! Every attempt is a non-blocking system call (MSG_DONTWAIT), whatever
//! the socket's own O_NONBLOCK flag says, so the program never sees its
//! file change. An attempt that would block returns `Issued::Again` and the
//! request waits on the reactor's epoll for readiness (EPOLLIN for
//! receives, EPOLLOUT for sends), then tries again from the reactor: a
//! pending socket costs an epoll registration, never a thread.
//!
//! MSG_WAITALL behaves as in the kernel: on stream and seqpacket sockets a
//! short transfer is kept and the request waits for the rest; otherwise
//! the short count completes the request and breaks its link.
//!
//! Zero-copy sends are copies here; they post the kernel's two CQEs (the
//! result with IORING_CQE_F_MORE, then the IORING_CQE_F_NOTIF one), and the
//! notification always reports a copy under IORING_SEND_ZC_REPORT_USAGE.

use alloc::boxed::Box;

use super::ctx::{Cqe, Ctx};
use super::opdef::{OpDef, BASE};
use super::os;
use super::req::{rf, Issued, Mode, OpData, Req, ReqPtr};
use super::rsrc;
use crate::sys::*;

/// Kernel limit on iovecs per message.
const UIO_MAXIOV: u64 = 1024;
/// sizeof(struct sockaddr_storage).
pub(crate) const ADDR_MAX: usize = 128;

/// A socket address copied from the caller (move_addr_to_kernel).
pub(crate) struct Addr {
    pub buf: [u8; ADDR_MAX],
    pub len: u32,
}

/// Copies `len` bytes of socket address at `uaddr`, with the kernel's
/// checks.
pub(crate) fn copy_addr(uaddr: u64, len: i64) -> Result<Box<Addr>, i32> {
    if len < 0 || len > ADDR_MAX as i64 {
        return Err(-libc::EINVAL);
    }
    let mut a = Box::new(Addr { buf: [0; ADDR_MAX], len: len as u32 });
    os::copy_from_user(a.buf.as_mut_ptr(), uaddr, len as usize)?;
    Ok(a)
}

/// What a socket is, as far as the kernel's choices depend on it.
#[derive(Clone, Copy, Default)]
pub(crate) struct Kind {
    pub ty: i32,
    pub domain: i32,
}

impl Kind {
    /// Reads the socket's type and domain; Err(-ENOTSOCK) for other files.
    pub(crate) fn of(fd: i32) -> Result<Kind, i32> {
        Ok(Kind { ty: sockopt_int(fd, libc::SO_TYPE)?, domain: sockopt_int(fd, libc::SO_DOMAIN)? })
    }

    pub(crate) fn inet(&self) -> bool {
        self.domain == libc::AF_INET || self.domain == libc::AF_INET6
    }

    /// Partial MSG_WAITALL transfers carry on (the kernel's io_net_retry).
    pub(crate) fn retries(&self) -> bool {
        self.ty == libc::SOCK_STREAM || self.ty == libc::SOCK_SEQPACKET
    }
}

/// An int-valued SOL_SOCKET option.
pub(crate) fn sockopt_int(fd: i32, name: i32) -> Result<i32, i32> {
    let mut v: i32 = 0;
    let mut l = core::mem::size_of::<i32>() as libc::socklen_t;
    // SAFETY: a live int and its length.
    let r = unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, name, &mut v as *mut i32 as *mut libc::c_void, &mut l) };
    if r < 0 {
        return Err(os::errno());
    }
    Ok(v)
}

/// A message header copied at submission (SENDMSG, RECVMSG and their
/// zero-copy kin), with its iovecs and, for sends, its address.
pub(crate) struct Msg {
    /// Where the caller's msghdr lives (RECVMSG writes results back).
    umsg: u64,
    name: u64,
    namelen: u32,
    control: u64,
    controllen: usize,
    pub(crate) iov: Box<[libc::iovec]>,
    addr: Option<Box<Addr>>,
}

/// Byte offsets inside `struct msghdr` (64-bit).
const MSG_NAMELEN_OFF: u64 = 8;
const MSG_CONTROLLEN_OFF: u64 = 40;
const MSG_FLAGS_OFF: u64 = 48;

/// Copies and checks the caller's msghdr at `umsg` as the kernel's
/// __copy_msghdr does; a send also copies the destination address.
fn copy_msg(umsg: u64, send: bool) -> Result<Box<Msg>, i32> {
    let mut h = core::mem::MaybeUninit::<libc::msghdr>::zeroed();
    os::copy_from_user(h.as_mut_ptr() as *mut u8, umsg, core::mem::size_of::<libc::msghdr>())?;
    // SAFETY: zero-initialised and then filled with plain data.
    let h = unsafe { h.assume_init() };
    let mut namelen = h.msg_namelen as i32;
    if h.msg_name.is_null() {
        namelen = 0;
    }
    if namelen < 0 {
        return Err(-libc::EINVAL);
    }
    let namelen = (namelen as u32).min(ADDR_MAX as u32);
    let addr = if send && namelen != 0 { Some(copy_addr(h.msg_name as u64, namelen as i64)?) } else { None };
    if h.msg_iovlen as u64 > UIO_MAXIOV {
        return Err(-libc::EMSGSIZE);
    }
    let iov = copy_iov(h.msg_iov as u64, h.msg_iovlen)?;
    Ok(Box::new(Msg {
        umsg,
        name: if namelen != 0 { h.msg_name as u64 } else { 0 },
        namelen,
        control: h.msg_control as u64,
        controllen: h.msg_controllen,
        iov,
        addr,
    }))
}

/// Copies `n` iovecs from caller memory (import_iovec's checks, less the
/// count, which callers check with their own errno).
fn copy_iov(uiov: u64, n: usize) -> Result<Box<[libc::iovec]>, i32> {
    let mut iov: Box<[libc::iovec]> =
        (0..n).map(|_| libc::iovec { iov_base: core::ptr::null_mut(), iov_len: 0 }).collect();
    os::copy_from_user(iov.as_mut_ptr() as *mut u8, uiov, n * core::mem::size_of::<libc::iovec>())?;
    if iov.iter().any(|v| (v.iov_len as isize) < 0) {
        return Err(-libc::EINVAL);
    }
    Ok(iov)
}

/// Drops the first `n` bytes from `iov`.
fn advance(iov: &mut [libc::iovec], mut n: usize) {
    for i in iov.iter_mut() {
        let k = n.min(i.iov_len);
        i.iov_base = (i.iov_base as usize + k) as *mut libc::c_void;
        i.iov_len -= k;
        n -= k;
    }
}

pub(crate) struct NetData {
    /// The ioprio word's IORING_RECVSEND_* flags.
    pub(crate) flags: u16,
    /// The SQE's msg_flags (sends add MSG_NOSIGNAL, as the kernel does).
    pub(crate) msg_flags: i32,
    /// Bytes moved by earlier partial attempts (MSG_WAITALL).
    pub(crate) done: usize,
    /// The request already waited for readiness (IORING_RECVSEND_POLL_FIRST
    /// is satisfied).
    pub(crate) polled: bool,
    /// The socket's kind, read once when first needed.
    kind: Option<Kind>,
    /// Zero-copy sends: an error found at submission, reported at issue
    /// together with the notification, as the kernel does.
    err: i32,
    /// Zero-copy sends: the notification reports its usage.
    report: bool,
    /// SEND's destination address (sendto).
    addr: Option<Box<Addr>>,
    /// The message of SENDMSG/RECVMSG.
    pub(crate) msg: Option<Box<Msg>>,
    /// Provided-buffer state (see `netbuf`).
    pub(crate) buf: super::netbuf::BufState,
}

pub(crate) fn data(r: &mut Req) -> &mut NetData {
    match &mut r.io {
        OpData::Net(d) => d,
        _ => unreachable!(),
    }
}

fn new_data(r: &Req, msg_flags: i32) -> Box<NetData> {
    Box::new(NetData {
        flags: r.sqe.ioprio,
        msg_flags,
        done: 0,
        polled: false,
        kind: None,
        err: 0,
        report: false,
        addr: None,
        msg: None,
        buf: super::netbuf::BufState::new(),
    })
}

/// The sendto address of SEND and SEND_ZC (`addr_len` is the low half of
/// the file_index word, whose high half must be zero), and with
/// IORING_SEND_VECTORIZED (Linux 6.17) the iovec array at addr, `len` long.
fn send_setup(r: &Req, d: &mut NetData) -> Result<(), i32> {
    if r.sqe.file_index >> 16 != 0 {
        return Err(-libc::EINVAL);
    }
    if r.sqe.off != 0 {
        d.addr = Some(copy_addr(r.sqe.off, (r.sqe.file_index & 0xffff) as i64)?);
    }
    if d.flags & IORING_SEND_VECTORIZED != 0 && !r.sqe.has(IOSQE_BUFFER_SELECT) {
        if r.sqe.len as u64 > UIO_MAXIOV {
            return Err(-libc::EINVAL);
        }
        let iov = copy_iov(r.sqe.addr, r.sqe.len as usize)?;
        d.msg =
            Some(Box::new(Msg { umsg: 0, name: 0, namelen: 0, control: 0, controllen: 0, iov, addr: d.addr.take() }));
    }
    Ok(())
}

fn send_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let op = r.sqe.opcode;
    if op != IORING_OP_SEND && (r.sqe.off != 0 || r.sqe.file_index != 0) {
        return Err(-libc::EINVAL);
    }
    let flags = r.sqe.ioprio;
    if flags & !(IORING_RECVSEND_POLL_FIRST | IORING_RECVSEND_BUNDLE | IORING_SEND_VECTORIZED) != 0 {
        return Err(-libc::EINVAL);
    }
    if flags & IORING_RECVSEND_BUNDLE != 0 && (op == IORING_OP_SENDMSG || !r.sqe.has(IOSQE_BUFFER_SELECT)) {
        return Err(-libc::EINVAL);
    }
    let mut d = new_data(r, r.sqe.op_flags as i32 | libc::MSG_NOSIGNAL);
    if op == IORING_OP_SENDMSG {
        d.msg = Some(copy_msg(r.sqe.addr, true)?);
    } else {
        send_setup(r, &mut d)?;
    }
    r.io = OpData::Net(d);
    Ok(())
}

fn recv_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    let op = r.sqe.opcode;
    if r.sqe.off != 0 {
        return Err(-libc::EINVAL);
    }
    let flags = r.sqe.ioprio;
    if flags & !(IORING_RECVSEND_POLL_FIRST | IORING_RECV_MULTISHOT | IORING_RECVSEND_BUNDLE) != 0 {
        return Err(-libc::EINVAL);
    }
    let msg_flags = r.sqe.op_flags as i32;
    let multishot = flags & IORING_RECV_MULTISHOT != 0;
    if multishot && (!r.sqe.has(IOSQE_BUFFER_SELECT) || msg_flags & libc::MSG_WAITALL != 0) {
        return Err(-libc::EINVAL);
    }
    // optlen (the file_index word): a multishot RECV's byte limit.
    if r.sqe.file_index != 0 && !(multishot && op == IORING_OP_RECV) {
        return Err(-libc::EINVAL);
    }
    if flags & IORING_RECVSEND_BUNDLE != 0 && op == IORING_OP_RECVMSG {
        return Err(-libc::EINVAL);
    }
    let mut d = new_data(r, msg_flags);
    if op == IORING_OP_RECVMSG {
        d.msg = Some(copy_msg(r.sqe.addr, false)?);
    }
    r.io = OpData::Net(d);
    Ok(())
}

fn zc_prep(ctx: &Ctx, r: &mut Req) -> Result<(), i32> {
    if r.sqe.pad2 != 0 || r.sqe.addr3 != 0 || r.sqe.has(IOSQE_CQE_SKIP_SUCCESS) {
        return Err(-libc::EINVAL);
    }
    let mut d = new_data(r, r.sqe.op_flags as i32 | libc::MSG_NOSIGNAL);
    // From here on the kernel has a notification to post, even for errors.
    d.err = zc_check(ctx, r, &mut d).err().unwrap_or(0);
    r.io = OpData::Net(d);
    Ok(())
}

fn zc_check(_: &Ctx, r: &Req, d: &mut NetData) -> Result<(), i32> {
    let valid = IORING_RECVSEND_POLL_FIRST | IORING_RECVSEND_FIXED_BUF | IORING_SEND_VECTORIZED;
    if d.flags & !valid != 0 {
        if d.flags & !(valid | IORING_SEND_ZC_REPORT_USAGE) != 0 {
            return Err(-libc::EINVAL);
        }
        d.report = true;
    }
    if r.sqe.opcode == IORING_OP_SENDMSG_ZC {
        // With IORING_RECVSEND_FIXED_BUF (Linux 6.15) the iovecs point
        // into registered buffer buf_index; `zc_issue` checks them.
        if r.sqe.off != 0 || r.sqe.file_index != 0 {
            return Err(-libc::EINVAL);
        }
        d.msg = Some(copy_msg(r.sqe.addr, true)?);
        return Ok(());
    }
    // Vectors of registered buffers are refused on Linux 6.18.
    if d.flags & IORING_SEND_VECTORIZED != 0 && d.flags & IORING_RECVSEND_FIXED_BUF != 0 {
        return Err(-libc::EINVAL);
    }
    send_setup(r, d)
}

/// Whether the caller asked never to wait (MSG_DONTWAIT): an attempt that
/// would block then completes with -EAGAIN (REQ_F_NOWAIT in the kernel).
pub(crate) fn nowait(d: &NetData) -> bool {
    d.msg_flags & libc::MSG_DONTWAIT != 0
}

/// One non-blocking sendmsg(2) of the `n` iovecs at `iov` on `fd`.
pub(crate) fn send_once(fd: i32, iov: *mut libc::iovec, n: usize, d: &NetData) -> isize {
    // SAFETY: an all-zero msghdr is valid.
    let mut m: libc::msghdr = unsafe { core::mem::zeroed() };
    m.msg_iov = iov;
    m.msg_iovlen = n;
    let addr = d.msg.as_ref().and_then(|m| m.addr.as_ref()).or(d.addr.as_ref());
    if let Some(a) = addr {
        m.msg_name = a.buf.as_ptr() as *mut libc::c_void;
        m.msg_namelen = a.len;
    }
    if let Some(msg) = &d.msg {
        // Control data goes with the first attempt only, as in the kernel.
        if d.done == 0 {
            m.msg_control = msg.control as *mut libc::c_void;
            m.msg_controllen = msg.controllen;
        }
    }
    let flags = (d.msg_flags | libc::MSG_DONTWAIT) & !(libc::MSG_WAITALL | libc::MSG_ZEROCOPY);
    // SAFETY: the iovecs describe caller buffers the kernel checks (EFAULT);
    // name and control point to live copies or caller memory likewise.
    os::cvt(unsafe { libc::sendmsg(fd, &m, flags) })
}

/// One non-blocking recvmsg(2) into the `n` iovecs at `iov` on `fd`;
/// returns the count and the message flags (MSG_TRUNC, ...). RECVMSG's
/// results are written back to the caller's msghdr.
pub(crate) fn recv_once(fd: i32, iov: *mut libc::iovec, n: usize, d: &NetData) -> (isize, i32) {
    // SAFETY: an all-zero msghdr is valid.
    let mut m: libc::msghdr = unsafe { core::mem::zeroed() };
    m.msg_iov = iov;
    m.msg_iovlen = n;
    if let Some(msg) = &d.msg {
        m.msg_name = msg.name as *mut libc::c_void;
        m.msg_namelen = msg.namelen;
        m.msg_control = msg.control as *mut libc::c_void;
        m.msg_controllen = msg.controllen;
    }
    let flags = d.msg_flags | libc::MSG_DONTWAIT;
    // SAFETY: as in send_once; the kernel writes into caller buffers.
    let ret = os::cvt(unsafe { libc::recvmsg(fd, &mut m, flags) });
    if ret < 0 {
        return (ret, 0);
    }
    if let Some(msg) = &d.msg {
        let put = |off: u64, p: *const u8, n: usize| os::copy_to_user(msg.umsg + off, p, n);
        let back = (|| {
            if msg.name != 0 {
                put(MSG_NAMELEN_OFF, &m.msg_namelen as *const u32 as *const u8, 4)?;
            }
            put(MSG_CONTROLLEN_OFF, &m.msg_controllen as *const usize as *const u8, 8)?;
            put(MSG_FLAGS_OFF, &m.msg_flags as *const i32 as *const u8, 4)
        })();
        if let Err(e) = back {
            return (e as isize, 0);
        }
    }
    (ret, m.msg_flags)
}

/// The socket's kind, read on first use.
pub(crate) fn kind(fd: i32, d: &mut NetData) -> Kind {
    if d.kind.is_none() {
        d.kind = Some(Kind::of(fd).unwrap_or_default());
    }
    d.kind.unwrap_or_default()
}

/// IORING_CQE_F_SOCK_NONEMPTY after a receive: set where the kernel's
/// protocol reports unread bytes (TCP and unix streams; a TCP stream that
/// saw the peer's FIN counts as non-empty, as tcp_inq_hint has it).
pub(crate) fn nonempty(fd: i32, d: &mut NetData) -> u32 {
    let mut p = libc::pollfd { fd, events: libc::POLLIN | libc::POLLRDHUP, revents: 0 };
    // SAFETY: one live pollfd, zero timeout.
    if unsafe { libc::poll(&mut p, 1, 0) } <= 0 || p.revents == 0 {
        return 0;
    }
    let k = kind(fd, d);
    if k.ty != libc::SOCK_STREAM {
        return 0;
    }
    let mut n: i32 = 0;
    // SAFETY: FIONREAD writes one int.
    let inq = if unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) } < 0 { 0 } else { n };
    if inq > 0 || (k.inet() && p.revents & libc::POLLRDHUP != 0) {
        IORING_CQE_F_SOCK_NONEMPTY
    } else {
        0
    }
}

/// The outcome of one attempt moving `ret` of `want` bytes, per the
/// kernel's rules for short transfers and MSG_WAITALL.
enum Step {
    /// Wait for readiness and try again (the `done` count is kept).
    Again,
    /// Complete with this result; `fail` breaks the link.
    Done(i32, bool),
}

fn step(fd: i32, d: &mut NetData, ret: isize, want: usize, waitall: bool, trunc: bool) -> Step {
    let min = if waitall { want } else { 0 };
    let mut fail = false;
    if ret < min as isize {
        if ret == -(libc::EAGAIN as isize) {
            if !nowait(d) {
                return Step::Again;
            }
        } else if ret > 0 && kind(fd, d).retries() {
            d.done += ret as usize;
            if !nowait(d) {
                return Step::Again;
            }
        }
        fail = true;
    } else if waitall && trunc {
        fail = true;
    }
    let res = if ret > 0 && !fail {
        ret + d.done as isize
    } else if d.done > 0 {
        d.done as isize
    } else {
        ret
    };
    Step::Done(res.min(i32::MAX as isize) as i32, fail)
}

/// Ready-made single iovec over `buf`/`len`, past what was done.
fn one_iov(buf: u64, len: usize, done: usize) -> [libc::iovec; 1] {
    [libc::iovec { iov_base: (buf as usize + done) as *mut libc::c_void, iov_len: len.saturating_sub(done) }]
}

/// The target of a transfer, the message's iovecs or one buffer, as
/// (iovecs, count, total bytes).
fn target(d: &mut NetData, single: &mut [libc::iovec; 1]) -> (*mut libc::iovec, usize, usize) {
    let v: &mut [libc::iovec] = match &mut d.msg {
        Some(m) => &mut m.iov,
        None => single,
    };
    (v.as_mut_ptr(), v.len(), v.iter().map(|i| i.iov_len).sum())
}

/// One receive attempt into `buf`/`len` (RECV) or the message's iovecs
/// (RECVMSG), with the kernel's completion rules. Provided-buffer selection
/// picks `buf`/`len` before calling this.
pub(crate) fn recv_into(r: &mut Req, buf: u64, len: usize) -> Issued {
    let fd = r.file;
    let d = data(r);
    if d.flags & IORING_RECVSEND_POLL_FIRST != 0 && !d.polled {
        d.polled = true;
        return Issued::Again;
    }
    let mut single = one_iov(buf, len, d.done);
    let (iov, n, want) = target(d, &mut single);
    let (ret, mflags) = recv_once(fd, iov, n, d);
    if ret > 0 {
        if let Some(m) = &mut d.msg {
            advance(&mut m.iov, ret as usize);
        }
    }
    let waitall = d.msg_flags & libc::MSG_WAITALL != 0;
    // A message with control data is never continued (the kernel's rule).
    let waitall_retry = waitall && d.msg.as_ref().is_none_or(|m| m.controllen == 0);
    let trunc = mflags & (libc::MSG_TRUNC | libc::MSG_CTRUNC) != 0;
    match step(fd, d, ret, want, waitall_retry, waitall && trunc) {
        Step::Again => {
            d.polled = true;
            Issued::Again
        }
        Step::Done(res, fail) => {
            let cflags = if ret >= 0 { nonempty(fd, d) } else { 0 };
            if fail {
                r.flags |= rf::FAIL;
            }
            Issued::Done(res, cflags)
        }
    }
}

/// One send attempt from `buf`/`len` (SEND) or the message's iovecs
/// (SENDMSG): Ok(result, fail) when finished.
pub(crate) fn send_from(r: &mut Req, buf: u64, len: usize) -> Result<(i32, bool), ()> {
    let fd = r.file;
    let d = data(r);
    if d.flags & IORING_RECVSEND_POLL_FIRST != 0 && !d.polled {
        d.polled = true;
        return Err(());
    }
    let mut single = one_iov(buf, len, d.done);
    let (iov, n, want) = target(d, &mut single);
    let ret = send_once(fd, iov, n, d);
    if ret > 0 {
        if let Some(m) = &mut d.msg {
            advance(&mut m.iov, ret as usize);
        }
    }
    let waitall = d.msg_flags & libc::MSG_WAITALL != 0;
    match step(fd, d, ret, want, waitall, false) {
        Step::Again => {
            d.polled = true;
            Err(())
        }
        Step::Done(res, fail) => Ok((res, fail)),
    }
}

fn recv_issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let (buf, len) = (r.sqe.addr, r.sqe.len as usize);
    recv_into(r, buf, len)
}

fn send_issue(_: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let (buf, len) = (r.sqe.addr, r.sqe.len as usize);
    match send_from(r, buf, len) {
        Err(()) => Issued::Again,
        Ok((res, fail)) => {
            if fail {
                r.flags |= rf::FAIL;
            }
            Issued::Done(res, 0)
        }
    }
}

/// Whether the kernel would send zero-copy on this socket at all
/// (SOCK_SUPPORT_ZC: TCP and UDP).
fn zc_capable(fd: i32, d: &mut NetData) -> Result<(), i32> {
    let k = Kind::of(fd)?;
    d.kind = Some(k);
    let proto = sockopt_int(fd, libc::SO_PROTOCOL)?;
    if k.inet() && (proto == libc::IPPROTO_TCP || proto == libc::IPPROTO_UDP) {
        Ok(())
    } else {
        Err(-libc::EOPNOTSUPP)
    }
}

/// Whether a IORING_RECVSEND_FIXED_BUF send reads only registered buffer
/// memory: SEND_ZC's range, or each iovec of SENDMSG_ZC's message.
fn fixed_source(ctx: &Ctx, r: &mut Req) -> Result<(), i32> {
    let (op, idx, addr, len) = (r.sqe.opcode, r.sqe.buf_index, r.sqe.addr, r.sqe.len as u64);
    match &data(r).msg {
        Some(m) if op == IORING_OP_SENDMSG_ZC => rsrc::fixed_iovecs(ctx, idx, &m.iov),
        _ => rsrc::fixed_span(ctx, idx, addr, len),
    }?;
    if r.flags & rf::BUF_HELD == 0 {
        rsrc::hold_buffer(ctx, r);
    }
    Ok(())
}

fn zc_issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    if r.file < 0 {
        // Resolved here rather than by the row, so that a bad file still
        // gets its notification, as in the kernel.
        let f = if r.sqe.has(IOSQE_FIXED_FILE) {
            ctx.rsrc.lock().file(r.sqe.fd as u32)
        } else {
            Some(r.sqe.fd).filter(|&f| f >= 0)
        };
        match f {
            Some(f) => r.file = f,
            None => {
                let (n, f) = zc_finish(ctx, r, -libc::EBADF, true, mode);
                return Issued::Done(n, f);
            }
        }
    }
    let fd = r.file;
    let (buf, len) = (r.sqe.addr, r.sqe.len as usize);
    let d = data(r);
    let first = d.done == 0 && !d.polled;
    let mut res = d.err;
    if res == 0 && first {
        res = zc_capable(fd, d).err().unwrap_or(0);
        if res == 0 && d.flags & IORING_RECVSEND_FIXED_BUF != 0 {
            res = fixed_source(ctx, r).err().unwrap_or(0);
        }
    }
    let mut fail = res < 0;
    if res == 0 {
        match send_from(r, buf, len) {
            Err(()) => return Issued::Again,
            Ok((n, f)) => {
                res = n;
                fail = f || n < 0;
            }
        }
    }
    let (n, f) = zc_finish(ctx, r, res, fail, mode);
    Issued::Done(n, f)
}

/// Posts a zero-copy send's result (with F_MORE); returns the notification
/// the request completes with.
fn zc_finish(ctx: &Ctx, r: &mut Req, res: i32, fail: bool, mode: Mode) -> (i32, u32) {
    ctx.post_more(Cqe::new(r.sqe.user_data, res, IORING_CQE_F_MORE), mode);
    let report = data(r).report;
    r.flags |= rf::NOFAIL | if fail { rf::FAIL } else { 0 };
    let notif = if report { IORING_NOTIF_USAGE_ZC_COPIED as i32 } else { 0 };
    (notif, IORING_CQE_F_NOTIF)
}

/// A transfer ended from outside (cancelled, failed with its chain, or
/// caught by ring teardown) as the kernel's fail hook has it: what moved
/// already is the result, and a zero-copy send still posts both CQEs (its
/// result with F_MORE here, the notification as the returned completion).
/// The buffer a request still holds is named in its CQE (see
/// `kbuf::held_flags`).
fn fail(ctx: &Ctx, r: &mut Req, res: i32, cflags: u32, mode: Mode) -> (i32, u32) {
    let (res, cflags) = unfinished(ctx, r, res, cflags, mode).unwrap_or((res, cflags));
    let OpData::Net(d) = &mut r.io else { return (res, cflags) };
    (res, cflags | super::kbuf::held_flags(d.buf.take_held()))
}

fn unfinished(ctx: &Ctx, r: &mut Req, res: i32, cflags: u32, mode: Mode) -> Option<(i32, u32)> {
    let OpData::Net(d) = &r.io else { return None };
    let zc = matches!(r.sqe.opcode, IORING_OP_SEND_ZC | IORING_OP_SENDMSG_ZC) && cflags & IORING_CQE_F_NOTIF == 0;
    let fail = res < 0 || r.flags & rf::FAIL != 0;
    let moved = res < 0 && d.done > 0;
    let res = if moved { d.done.min(i32::MAX as usize) as i32 } else { res };
    if zc {
        return Some(zc_finish(ctx, r, res, fail, mode));
    }
    if moved {
        r.flags |= rf::FAIL;
        return Some((res, cflags));
    }
    None
}

fn recv_mask(_: &Req) -> u32 {
    libc::EPOLLIN as u32
}

fn send_mask(_: &Req) -> u32 {
    libc::EPOLLOUT as u32
}

const NET: OpDef =
    OpDef { needs_file: true, ioprio: true, unbounded: true, early_unlist: true, fail: Some(fail), ..BASE };
pub(crate) const SEND: OpDef = OpDef { prep: send_prep, issue: send_issue, poll_mask: send_mask, ..NET };
pub(crate) const RECV: OpDef = OpDef { prep: recv_prep, issue: recv_issue, poll_mask: recv_mask, creds: false, ..NET };
pub(crate) const SEND_ZC: OpDef =
    OpDef { prep: zc_prep, issue: zc_issue, poll_mask: send_mask, needs_file: false, ..NET };
