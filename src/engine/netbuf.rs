//! Socket transfers with provided buffers: RECV and RECVMSG with buffer
//! select (one-shot, multishot with IORING_RECV_MULTISHOT, and RECV
//! bundles), SEND with buffer select (and bundles). The plain transfers
//! are `net`'s; this file picks the buffers and writes the CQEs the kernel
//! writes for them.
//!
//! Multishot receives read until the socket has nothing more (at most
//! 1 + MULTISHOT_MAX_RETRY at a time, a bundle only until it fills its
//! cap), one CQE with IORING_CQE_F_MORE per receive, then wait on the
//! reactor again. They end, F_MORE cleared, on EOF, an error, an empty or
//! missing group (-ENOBUFS; -ENOENT for a bundle's missing group), a full
//! CQ, or RECV's byte limit (optlen).

use alloc::boxed::Box;

use super::ctx::{Cqe, Ctx};
use super::kbuf::{self, Bundle, Hold, Pick};
use super::net::{self, NetData};
use super::opdef::OpDef;
use super::os;
use super::req::{rf, Issued, Mode, Req, ReqPtr};
use crate::sys::*;

const MULTISHOT_MAX_RETRY: u32 = 32;
/// sizeof(struct io_uring_recvmsg_out).
const OUT_HDR: usize = 16;
/// The CQE flags a bundle's later receives may change.
const CQE_F_MASK: u32 = IORING_CQE_F_SOCK_NONEMPTY | IORING_CQE_F_MORE;

pub(crate) struct BufState {
    /// A receive buffer kept across waits (a partial MSG_WAITALL).
    pick: Option<Pick>,
    /// Send buffers, consumed at selection, kept until the send is done.
    send: Option<Box<Bundle>>,
    /// Bytes the socket held unread after the last receive (-1: unknown).
    inq: i32,
    /// How many buffers a peek may map (the kernel's iovec array, grown
    /// by bundles and kept for the request's life).
    slots: usize,
    /// Multishot: the cap on each receive after the first (RECV's len; 0
    /// for RECVMSG) and what is left of RECV's total (optlen), if given.
    mshot_len: u32,
    total: Option<u32>,
    /// Multishot RECVMSG: room at the start of each buffer for the
    /// source address and the control data (from the caller's msghdr).
    namelen: u32,
    controllen: u32,
}

impl BufState {
    pub(crate) const fn new() -> BufState {
        BufState { pick: None, send: None, inq: -1, slots: 1, mshot_len: 0, total: None, namelen: 0, controllen: 0 }
    }
}

impl BufState {
    /// The buffer the request kept across a wait, if any (see
    /// `kbuf::held_flags`).
    pub(crate) fn take_held(&mut self) -> Option<u16> {
        self.pick.take().map(|p| p.bid).or_else(|| self.send.take().map(|b| b.bid))
    }
}

fn selects(r: &Req) -> bool {
    r.sqe.has(IOSQE_BUFFER_SELECT)
}

fn recv_prep(ctx: &Ctx, r: &mut Req) -> Result<(), i32> {
    (net::RECV.prep)(ctx, r)?;
    if !selects(r) {
        return Ok(());
    }
    let multishot = r.sqe.ioprio & IORING_RECV_MULTISHOT != 0;
    if r.sqe.opcode == IORING_OP_RECVMSG {
        // The raw msghdr: at most one iovec, whose length caps the
        // receive; name and control room as the caller sized them.
        let mut h = [0u8; 56];
        os::copy_from_user(h.as_mut_ptr(), r.sqe.addr, h.len())?;
        let word = |o: usize| u64::from_ne_bytes(h[o..o + 8].try_into().unwrap_or_default());
        let namelen = i32::from_ne_bytes(h[8..12].try_into().unwrap_or_default());
        if word(24) > 1 {
            return Err(-libc::EINVAL);
        }
        let d = net::data(r);
        let len = d.msg.as_ref().and_then(|m| m.iov.first()).map_or(0, |v| v.iov_len as u32);
        if multishot {
            // Each receive is capped by the iovec's length, as RECV's by len.
            d.buf.mshot_len = len;
            let controllen = word(40);
            if namelen < 0
                || (OUT_HDR as u64 + namelen as u64).checked_add(controllen).is_none_or(|t| t > i32::MAX as u64)
            {
                return Err(-libc::EOVERFLOW);
            }
            d.buf.namelen = namelen as u32;
            d.buf.controllen = controllen as u32;
        }
        r.sqe.len = len;
    } else if multishot {
        let (len, total) = (r.sqe.len, r.sqe.file_index);
        let d = net::data(r);
        d.buf.mshot_len = len;
        d.buf.total = (total != 0).then_some(total);
    }
    Ok(())
}

/// One non-blocking recvmsg(2) into `iov`: (count, msg_flags).
fn recv_iov(fd: i32, d: &NetData, iov: &mut [libc::iovec]) -> (isize, i32) {
    // SAFETY: an all-zero msghdr is valid.
    let mut m: libc::msghdr = unsafe { core::mem::zeroed() };
    m.msg_iov = iov.as_mut_ptr();
    m.msg_iovlen = iov.len();
    // SAFETY: the iovecs describe provided buffers; the kernel checks them.
    let ret = os::cvt(unsafe { libc::recvmsg(fd, &mut m, d.msg_flags | libc::MSG_DONTWAIT) });
    (ret, m.msg_flags)
}

/// A multishot RECVMSG receive into one buffer laid out as the kernel
/// does: `struct io_uring_recvmsg_out`, the source address (namelen bytes
/// of room), the control data (controllen), then the payload. Returns the
/// CQE result (header and room included) and whether this receive ends
/// the request (nothing received: EOF or an empty datagram).
fn recvmsg_out(fd: i32, d: &NetData, buf: u64, len: usize) -> (isize, bool) {
    let (namelen, controllen) = (d.buf.namelen as usize, d.buf.controllen as usize);
    let hdr = OUT_HDR + namelen + controllen;
    if len < hdr {
        return (-(libc::EFAULT as isize), true);
    }
    let mut name = [0u8; net::ADDR_MAX];
    let mut iov = libc::iovec { iov_base: (buf as usize + hdr) as *mut libc::c_void, iov_len: len - hdr };
    // SAFETY: an all-zero msghdr is valid.
    let mut m: libc::msghdr = unsafe { core::mem::zeroed() };
    m.msg_iov = &mut iov;
    m.msg_iovlen = 1;
    if namelen != 0 {
        m.msg_name = name.as_mut_ptr() as *mut libc::c_void;
        m.msg_namelen = name.len() as u32;
    }
    if controllen != 0 {
        m.msg_control = (buf as usize + OUT_HDR + namelen) as *mut libc::c_void;
        m.msg_controllen = controllen;
    }
    // SAFETY: name is a live local buffer; payload and control lie in the
    // provided buffer, which the kernel checks.
    let ret = os::cvt(unsafe { libc::recvmsg(fd, &mut m, d.msg_flags | libc::MSG_DONTWAIT) });
    if ret < 0 {
        return (ret, true);
    }
    let got_name = if namelen != 0 { m.msg_namelen } else { 0 };
    let mut out = [0u8; OUT_HDR + net::ADDR_MAX];
    out[0..4].copy_from_slice(&got_name.to_ne_bytes());
    out[4..8].copy_from_slice(&(m.msg_controllen as u32).to_ne_bytes());
    out[8..12].copy_from_slice(&(ret as u32).to_ne_bytes());
    out[12..16].copy_from_slice(&(m.msg_flags as u32).to_ne_bytes());
    let copy = (got_name as usize).min(namelen);
    out[OUT_HDR..OUT_HDR + copy].copy_from_slice(&name[..copy]);
    if let Err(e) = os::copy_to_user(buf, out.as_ptr(), OUT_HDR + copy) {
        return (e as isize, true);
    }
    ((hdr + (ret as usize).min(len - hdr)) as isize, ret == 0)
}

/// Remembers how much the socket still holds (the kernel's msg_inq).
fn note_inq(fd: i32, d: &mut NetData) {
    let mut n: i32 = -1;
    // SAFETY: FIONREAD writes one int.
    if net::kind(fd, d).ty != libc::SOCK_STREAM || unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) } < 0 {
        n = -1;
    }
    d.buf.inq = n;
}

/// A one-shot receive into one selected buffer: `net`'s receive, with the
/// buffer kept across a partial MSG_WAITALL.
fn recv_one(ctx: &Ctx, r: &mut Req) -> Issued {
    let mut g = kbuf::lock(ctx);
    let (bgid, len) = (r.sqe.buf_index, r.sqe.len);
    let p = match net::data(r).buf.pick.take() {
        Some(p) => p,
        None => match g.select(bgid, len, false) {
            Ok(p) => p,
            Err(e) => return Issued::Done(e, 0),
        },
    };
    let out = if r.sqe.opcode == IORING_OP_RECVMSG {
        let d = net::data(r);
        let done = d.done;
        if let Some(m) = &mut d.msg {
            m.iov = Box::new([libc::iovec {
                iov_base: (p.addr as usize + done) as *mut libc::c_void,
                iov_len: p.len as usize - done,
            }]);
        }
        net::recv_into(r, 0, 0)
    } else {
        net::recv_into(r, p.addr, p.len as usize)
    };
    let d = net::data(r);
    match out {
        Issued::Done(res, f) if res > 0 => Issued::Done(res, f | g.settle(&p, res)),
        Issued::Again if d.done > 0 => {
            // Part of a MSG_WAITALL landed: the buffer is ours until the rest.
            let mut p = p;
            if p.hold == Hold::Peeked {
                p.more = g.settle(&p, d.done as i32) & IORING_CQE_F_BUF_MORE != 0;
                p.hold = Hold::Committed;
            }
            d.buf.pick = Some(p);
            Issued::Again
        }
        out => {
            g.recycle(&p);
            out
        }
    }
}

/// Multishot receives, and one-shot RECV bundles (which may go on into
/// the same CQE while the socket has more).
fn recv_many(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    let fd = r.file;
    let (bgid, ud) = (r.sqe.buf_index, r.sqe.user_data);
    let multishot = r.sqe.ioprio & IORING_RECV_MULTISHOT != 0;
    let bundle = r.sqe.ioprio & IORING_RECVSEND_BUNDLE != 0;
    let recvmsg = r.sqe.opcode == IORING_OP_RECVMSG;
    // What caps the next receive: RECV's len (every time, multishot or
    // not); RECVMSG's iovec length for its first receive only, as in the
    // kernel, which resets it to the (zero) multishot cap afterwards.
    let mshot_len = net::data(r).buf.mshot_len;
    // A bundle going on into the CQE of its first part: (bytes, flags).
    let mut acc: Option<(i32, u32)> = None;
    let mut loops = 0;
    loop {
        let mut g = kbuf::lock(ctx);
        let len = r.sqe.len;
        let d = net::data(r);
        let sel = if bundle {
            let max = match acc {
                Some(_) => d.buf.inq.max(0) as u32,
                None if len != 0 => len,
                None if d.buf.inq > 1 => d.buf.inq as u32,
                None => 0,
            };
            g.peek(bgid, max, false, true, &mut d.buf.slots)
        } else {
            g.select(bgid, len, false).map(|p| Bundle {
                iov: alloc::vec![libc::iovec { iov_base: p.addr as *mut libc::c_void, iov_len: p.len as usize }],
                bid: p.bid,
                bgid,
                hold: p.hold,
                empty: false,
                partial: false,
                more: false,
            })
        };
        let mut b = match sel {
            Ok(b) => b,
            Err(e) => {
                drop(g);
                return match acc {
                    Some((n, f)) => Issued::Done(n, f),
                    None => Issued::Done(e, 0),
                };
            }
        };
        let (ret, ended) = if recvmsg {
            let v = b.iov[0];
            recvmsg_out(fd, d, v.iov_base as u64, v.iov_len)
        } else {
            let (n, _) = recv_iov(fd, d, &mut b.iov);
            (n, n <= 0)
        };
        if ret <= 0 {
            g.recycle_bundle(&b);
            drop(g);
            if let Some((n, f)) = acc {
                return Issued::Done(n, f);
            }
            if ret == -(libc::EAGAIN as isize) && !net::nowait(d) {
                return Issued::Again;
            }
            let f = if ret == 0 { net::nonempty(fd, d) } else { 0 };
            if ret < 0 {
                r.flags |= rf::FAIL;
            }
            return Issued::Done(ret as i32, f);
        }
        let res = ret as i32;
        let mapped: usize = b.iov.iter().map(|v| v.iov_len).sum();
        let mut f = g.settle_bundle(&b, res);
        drop(g);
        note_inq(fd, d);
        f |= net::nonempty(fd, d);
        let (res, f) = match acc {
            Some((n, first)) => (n + res, first | (f & CQE_F_MASK)),
            None => (res, f),
        };
        // A multishot bundle that filled its cap (RECV's len) yields to the
        // ring's other requests, as the kernel requeues it.
        let capped = bundle && mshot_len != 0 && res as u32 >= mshot_len;
        let mut finished = ended || !multishot;
        if let Some(t) = &mut d.buf.total {
            *t -= (*t).min(res as u32);
            if *t == 0 {
                finished = true;
            }
        }
        if bundle {
            if b.empty {
                return Issued::Done(res, f);
            }
            // All mapped room filled and more waiting: go on once into
            // this CQE (not when a multishot receive reached its cap, nor
            // after a buffer was cut).
            let inq = d.buf.inq;
            if acc.is_none() && !capped && !b.partial && inq > 1 && ret as usize == mapped {
                r.sqe.len = inq as u32;
                acc = Some((res, f & !CQE_F_MASK));
                continue;
            }
        }
        acc = None;
        let inq_known = d.buf.inq >= 0;
        r.sqe.len = mshot_len;
        if finished || !ctx.try_post_more(Cqe::new(ud, res, f | IORING_CQE_F_MORE), mode) {
            return Issued::Done(res, f);
        }
        // On at once only while the socket says it has more (or cannot
        // tell), and for at most MULTISHOT_MAX_RETRY receives after the
        // first; otherwise wait until it is readable, as the kernel does.
        if loops == MULTISHOT_MAX_RETRY || capped || (f & IORING_CQE_F_SOCK_NONEMPTY == 0 && inq_known) {
            return Issued::Again;
        }
        loops += 1;
    }
}

fn recv_issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    if !selects(r) {
        let (buf, len) = (r.sqe.addr, r.sqe.len as usize);
        return net::recv_into(r, buf, len);
    }
    let d = net::data(r);
    if d.flags & IORING_RECVSEND_POLL_FIRST != 0 && !d.polled {
        d.polled = true;
        return Issued::Again;
    }
    if r.sqe.ioprio & (IORING_RECV_MULTISHOT | IORING_RECVSEND_BUNDLE) != 0 {
        return recv_many(ctx, req, mode);
    }
    recv_one(ctx, r)
}

/// SEND with buffer select: the buffers (a run of them for a bundle) are
/// consumed at selection and sent in full on a stream; a bundle then goes
/// on with what the group holds next, a CQE with F_MORE for each part.
fn send_issue(ctx: &Ctx, req: ReqPtr, mode: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let r = unsafe { req.get() };
    if !selects(r) {
        return (net::SEND.issue)(ctx, req, mode);
    }
    let fd = r.file;
    let (bgid, ud) = (r.sqe.buf_index, r.sqe.user_data);
    let bundle = r.sqe.ioprio & IORING_RECVSEND_BUNDLE != 0;
    loop {
        let len = r.sqe.len;
        let d = net::data(r);
        if d.flags & IORING_RECVSEND_POLL_FIRST != 0 && !d.polled {
            d.polled = true;
            return Issued::Again;
        }
        if d.buf.send.is_none() {
            let mut g = kbuf::lock(ctx);
            // One buffer unless bundled; a bundle takes what it finds.
            let max = if len != 0 { len } else { i32::MAX as u32 };
            let mut one = 1;
            let slots = if bundle { &mut d.buf.slots } else { &mut one };
            let b = match g.peek(bgid, max, true, bundle, slots) {
                Ok(b) => b,
                Err(e) => return Issued::Done(e, 0),
            };
            d.buf.send = Some(Box::new(b));
            d.done = 0;
        }
        let Some(b) = d.buf.send.as_mut() else { return Issued::Done(-libc::EINVAL, 0) };
        let want: usize = b.iov.iter().map(|v| v.iov_len).sum();
        let done = d.done;
        let mut iov: alloc::vec::Vec<libc::iovec> = b.iov.clone();
        skip(&mut iov, done);
        let ret = net::send_once(fd, iov.as_mut_ptr(), iov.len(), d);
        let (b, empty, more) = d.buf.send.as_ref().map_or((0, false, false), |b| (b.bid, b.empty, b.more));
        if ret == -(libc::EAGAIN as isize) && !net::nowait(d) {
            return Issued::Again;
        }
        let must = bundle || d.msg_flags & libc::MSG_WAITALL != 0;
        if ret > 0 && must && done + (ret as usize) < want && net::kind(fd, d).retries() && !net::nowait(d) {
            d.done += ret as usize;
            return Issued::Again;
        }
        let short = ret >= 0 && must && done + (ret as usize) < want;
        let res = if ret >= 0 {
            (done + ret as usize) as i32
        } else if done > 0 {
            done as i32
        } else {
            ret as i32
        };
        d.buf.send = None;
        d.done = 0;
        let mut f = IORING_CQE_F_BUFFER | (b as u32) << IORING_CQE_BUFFER_SHIFT;
        if more {
            f |= IORING_CQE_F_BUF_MORE;
        }
        if ret < 0 || short {
            r.flags |= rf::FAIL;
        }
        if !bundle || res <= 0 || short || empty || !ctx.try_post_more(Cqe::new(ud, res, f | IORING_CQE_F_MORE), mode) {
            return Issued::Done(res, f);
        }
        // The SQE's length bounds the first part only, as in the kernel.
        r.sqe.len = 0;
    }
}

/// Drops the first `n` bytes from `iov`.
fn skip(iov: &mut alloc::vec::Vec<libc::iovec>, mut n: usize) {
    while n > 0 && !iov.is_empty() {
        let k = n.min(iov[0].iov_len);
        iov[0].iov_base = (iov[0].iov_base as usize + k) as *mut libc::c_void;
        iov[0].iov_len -= k;
        n -= k;
        if iov[0].iov_len == 0 {
            iov.remove(0);
        }
    }
}

pub(crate) const RECV: OpDef = OpDef { prep: recv_prep, issue: recv_issue, buffer_select: true, ..net::RECV };
pub(crate) const SEND: OpDef = OpDef { issue: send_issue, buffer_select: true, ..net::SEND };
