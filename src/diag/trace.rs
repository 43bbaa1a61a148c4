//! The trace lines: one per submitted request, per completion, and per
//! setup, register and teardown call.

use super::decode::{self, Names};
use super::out::Out;
use super::view::{peek_str, peek_user, Cqe, RingView, Sqe};
use crate::sys::*;

/// Who is writing and when, taken once per hook call.
pub struct Stamp {
    pub pid: i32,
    pub tid: i32,
    /// CLOCK_REALTIME, for the line's time of day (UTC).
    wall_s: u64,
    wall_us: u64,
    /// CLOCK_MONOTONIC ns, for latencies.
    pub mono: u64,
}

fn clock(id: libc::clockid_t) -> libc::timespec {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec to fill.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts
}

/// CLOCK_MONOTONIC in ns.
pub fn mono_now() -> u64 {
    let m = clock(libc::CLOCK_MONOTONIC);
    m.tv_sec as u64 * 1_000_000_000 + m.tv_nsec as u64
}

impl Stamp {
    pub fn now() -> Stamp {
        let w = clock(libc::CLOCK_REALTIME);
        let m = clock(libc::CLOCK_MONOTONIC);
        Stamp {
            // SAFETY: neither call has preconditions.
            pid: unsafe { libc::getpid() },
            tid: unsafe { libc::gettid() },
            wall_s: w.tv_sec as u64,
            wall_us: w.tv_nsec as u64 / 1000,
            mono: m.tv_sec as u64 * 1_000_000_000 + m.tv_nsec as u64,
        }
    }
}

/// What `ring=` says.
#[derive(Clone, Copy)]
pub struct RingName {
    pub fd: i32,
    pub is_index: bool,
}

/// Starts a trace line: `HH:MM:SS.uuuuuu pid=P tid=T ring=FD `.
pub fn head<'a>(out: &'a mut Out, st: &Stamp, ring: RingName) -> &'a mut Out {
    let day = st.wall_s % 86_400;
    out.begin()
        .u_pad(day / 3600, 2)
        .s(":")
        .u_pad(day / 60 % 60, 2)
        .s(":")
        .u_pad(day % 60, 2)
        .s(".")
        .u_pad(st.wall_us, 6)
        .s(" pid=")
        .i(st.pid as i64)
        .s(" tid=")
        .i(st.tid as i64)
        .s(" ring=");
    if ring.is_index {
        out.s("reg:");
    }
    out.i(ring.fd as i64).s(" ")
}

fn op_name(out: &mut Out, op: u8) -> &mut Out {
    match decode::opcode(op) {
        Some(n) => out.s(n),
        None => out.s("OP_").u(op as u64),
    }
}

const IMMEDIATE_TIMEOUT: u32 = IORING_TIMEOUT_IMMEDIATE_ARG;

/// The request line: the SQE's common fields, then the ones its opcode gives
/// meaning to.
pub fn submit(out: &mut Out, st: &Stamp, ring: RingName, s: &Sqe) {
    head(out, st, ring).s("submit ");
    op_name(out, s.opcode).s(" fd=");
    fd(out, s.fd, s.flags & IOSQE_FIXED_FILE != 0);
    out.s(" off=")
        .u(s.off)
        .s(" len=")
        .u(s.len as u64)
        .s(" addr=")
        .hex(s.addr)
        .s(" flags=")
        .flags(s.flags as u64, &decode::SQE_FLAGS);
    if s.flags & IOSQE_BUFFER_SELECT != 0 {
        out.s(" buf_group=").u(s.buf_index as u64);
    } else if s.buf_index != 0 || uses_fixed_buffer(s) {
        out.s(" buf_index=").u(s.buf_index as u64);
    }
    out.s(" user_data=").hex(s.user_data);
    if s.personality != 0 {
        out.s(" personality=").u(s.personality as u64);
    }
    details(out, s);
    out.end();
}

fn fd(out: &mut Out, fd: i32, fixed: bool) {
    if fixed {
        out.s("fixed:");
    }
    if fd == libc::AT_FDCWD && !fixed {
        out.s("AT_FDCWD");
    } else {
        out.i(fd as i64);
    }
}

/// Whether `s` names a registered buffer through `buf_index`.
pub fn uses_fixed_buffer(s: &Sqe) -> bool {
    match s.opcode {
        IORING_OP_READ_FIXED | IORING_OP_WRITE_FIXED | IORING_OP_READV_FIXED | IORING_OP_WRITEV_FIXED => true,
        IORING_OP_SEND | IORING_OP_SEND_ZC | IORING_OP_SENDMSG_ZC => s.ioprio & IORING_RECVSEND_FIXED_BUF != 0,
        IORING_OP_URING_CMD | IORING_OP_URING_CMD128 => s.op_flags & IORING_URING_CMD_FIXED != 0,
        _ => false,
    }
}

fn flag_field(out: &mut Out, name: &str, v: u64, names: &Names) {
    if v != 0 {
        out.s(" ").s(name).s("=").flags(v, names);
    }
}

fn path(out: &mut Out, name: &str, addr: u64) {
    let mut buf = [0u8; 256];
    out.s(" ").s(name).s("=");
    match peek_str(addr, &mut buf) {
        Some(p) => {
            out.quoted(p);
        }
        None => {
            out.s("?").hex(addr);
        }
    }
}

fn timespec(out: &mut Out, name: &str, addr: u64) {
    let mut b = [0u8; 16];
    out.s(" ").s(name).s("=");
    if peek_user(addr, &mut b) == Some(16) {
        let sec = i64::from_ne_bytes(b[..8].try_into().unwrap_or([0; 8]));
        let nsec = i64::from_ne_bytes(b[8..].try_into().unwrap_or([0; 8]));
        out.ts(sec, nsec);
    } else {
        out.s("?").hex(addr);
    }
}

fn details(out: &mut Out, s: &Sqe) {
    let f = s.op_flags;
    match s.opcode {
        IORING_OP_READ
        | IORING_OP_WRITE
        | IORING_OP_READV
        | IORING_OP_WRITEV
        | IORING_OP_READ_FIXED
        | IORING_OP_WRITE_FIXED
        | IORING_OP_READV_FIXED
        | IORING_OP_WRITEV_FIXED
        | IORING_OP_READ_MULTISHOT => {
            flag_field(out, "rw_flags", f as u64, &decode::RW_FLAGS);
        }
        IORING_OP_SEND | IORING_OP_RECV | IORING_OP_SENDMSG | IORING_OP_RECVMSG | IORING_OP_SEND_ZC
        | IORING_OP_SENDMSG_ZC => {
            flag_field(out, "msg_flags", f as u64, &decode::MSG_FLAGS);
            flag_field(out, "ioprio", s.ioprio as u64, &decode::NET_IOPRIO);
        }
        IORING_OP_ACCEPT => {
            flag_field(out, "accept_flags", f as u64, &decode::SOCK_FLAGS);
            flag_field(out, "ioprio", s.ioprio as u64, &decode::ACCEPT_IOPRIO);
        }
        IORING_OP_POLL_ADD => {
            out.s(" events=").flags(f as u64, &decode::POLL_EVENTS);
            flag_field(out, "poll_flags", s.len as u64, &decode::POLL_CMD);
        }
        IORING_OP_POLL_REMOVE => {
            out.s(" target=").hex(s.addr);
            flag_field(out, "poll_flags", s.len as u64, &decode::POLL_CMD);
            if s.len & IORING_POLL_UPDATE_EVENTS != 0 {
                out.s(" events=").flags(f as u64, &decode::POLL_EVENTS);
            }
        }
        IORING_OP_TIMEOUT | IORING_OP_LINK_TIMEOUT => {
            if f & IMMEDIATE_TIMEOUT != 0 {
                out.s(" timeout=").dur(s.addr);
            } else {
                timespec(out, "timeout", s.addr);
            }
            if s.opcode == IORING_OP_TIMEOUT && s.off != 0 {
                out.s(" count=").u(s.off);
            }
            flag_field(out, "timeout_flags", f as u64, &decode::TIMEOUT_FLAGS);
        }
        IORING_OP_TIMEOUT_REMOVE => {
            out.s(" target=").hex(s.addr);
            flag_field(out, "timeout_flags", f as u64, &decode::TIMEOUT_FLAGS);
            if f & IORING_TIMEOUT_UPDATE_MASK != 0 {
                timespec(out, "timeout", s.off);
            }
        }
        IORING_OP_ASYNC_CANCEL => {
            out.s(" target=").hex(s.addr);
            flag_field(out, "cancel_flags", f as u64, &decode::CANCEL_FLAGS);
        }
        IORING_OP_OPENAT => {
            path(out, "path", s.addr);
            out.s(" open_flags=").s(decode::open_mode(f));
            let rest = f & !(libc::O_ACCMODE as u32);
            if rest != 0 {
                out.s("|").flags(rest as u64, &decode::OPEN_FLAGS);
            }
            out.s(" mode=").oct(s.len);
            if s.file_index != 0 {
                out.s(" file_index=").u(s.file_index as u64);
            }
        }
        IORING_OP_OPENAT2 => {
            path(out, "path", s.addr);
            out.s(" how=").hex(s.off);
        }
        IORING_OP_STATX => {
            path(out, "path", s.addr);
            flag_field(out, "at_flags", f as u64, &decode::AT_FLAGS);
            out.s(" mask=").hex(s.len as u64);
        }
        IORING_OP_UNLINKAT => {
            path(out, "path", s.addr);
            flag_field(out, "at_flags", f as u64, &decode::AT_FLAGS);
        }
        IORING_OP_MKDIRAT => {
            path(out, "path", s.addr);
            out.s(" mode=").oct(s.len);
        }
        IORING_OP_RENAMEAT | IORING_OP_LINKAT => {
            path(out, "old", s.addr);
            out.s(" new_dirfd=");
            fd(out, s.len as i32, false);
            path(out, "new", s.off);
            if f != 0 {
                out.s(" flags=").hex(f as u64);
            }
        }
        IORING_OP_SYMLINKAT => {
            path(out, "target", s.addr);
            path(out, "link", s.off);
        }
        IORING_OP_GETXATTR | IORING_OP_SETXATTR => {
            path(out, "name", s.addr);
            path(out, "path", s.addr3);
        }
        IORING_OP_FGETXATTR | IORING_OP_FSETXATTR => path(out, "name", s.addr),
        IORING_OP_FSYNC => flag_field(out, "fsync_flags", f as u64, &decode::FSYNC_FLAGS),
        IORING_OP_CLOSE if s.file_index != 0 => {
            out.s(" file_index=").u(s.file_index as u64);
        }
        IORING_OP_MSG_RING => {
            out.s(if s.addr == IORING_MSG_SEND_FD { " cmd=SEND_FD" } else { " cmd=DATA" })
                .s(" target_user_data=")
                .hex(s.off);
            flag_field(out, "msg_ring_flags", f as u64, &decode::MSG_RING_FLAGS);
        }
        IORING_OP_PROVIDE_BUFFERS | IORING_OP_REMOVE_BUFFERS => {
            out.s(" nbufs=").i(s.fd as i64).s(" group=").u(s.buf_index as u64);
            if s.opcode == IORING_OP_PROVIDE_BUFFERS {
                out.s(" first_bid=").u(s.off);
            }
        }
        IORING_OP_SOCKET => {
            out.s(" domain=").i(s.fd as i64).s(" type=").u(s.off).s(" protocol=").u(s.len as u64);
        }
        _ => {}
    }
}

/// The completion line. `op` and `latency` come from the matching
/// submission when it was seen.
pub fn complete(out: &mut Out, st: &Stamp, ring: RingName, c: &Cqe, op: Option<u8>, latency: Option<u64>) {
    head(out, st, ring)
        .s("complete user_data=")
        .hex(c.user_data)
        .s(" res=")
        .res(c.res)
        .s(" flags=")
        .cqe_flags(c.flags)
        .s(" op=");
    match op {
        Some(op) => op_name(out, op),
        None => out.s("?"),
    };
    if let Some(ns) = latency {
        out.s(" latency=").dur(ns);
    }
    if let Some([a, b]) = c.big {
        out.s(" big=").hex(a).s(",").hex(b);
    }
    out.end();
}

pub fn lost(out: &mut Out, st: &Stamp, ring: RingName, n: u32) {
    head(out, st, ring).u(n as u64).s(" completions reaped before they could be traced").end();
}

/// A setup call: what was asked, then the ring made (`v`) or the error.
pub fn setup(out: &mut Out, st: &Stamp, ring: RingName, entries: u32, asked: u32, v: &RingView, ret: i32) {
    head(out, st, ring)
        .s("setup entries=")
        .u(entries as u64)
        .s(" flags=")
        .flags(asked as u64, &decode::SETUP_FLAGS)
        .s(" -> ");
    if ret < 0 {
        out.res(ret);
    } else {
        out.s("flags=")
            .flags(v.flags as u64, &decode::SETUP_FLAGS)
            .s(" sq_entries=")
            .u(v.sq_entries as u64)
            .s(" cq_entries=")
            .u(v.cq_entries as u64)
            .s(" features=")
            .flags(v.features as u64, &decode::FEATURES);
    }
    out.end();
}

/// An `io_uring_register` call with what its argument said.
pub fn register(out: &mut Out, st: &Stamp, ring: RingName, opcode: u32, detail: &RegDetail, ret: i32) {
    head(out, st, ring).s("register ");
    match decode::register_op(opcode) {
        Some(n) => out.s(n),
        None => out.s("op ").u(opcode as u64),
    };
    match *detail {
        RegDetail::Count(n) => {
            out.s(" nr=").u(n as u64);
        }
        RegDetail::Table { nr, sparse } => {
            out.s(" nr=").u(nr as u64);
            if sparse {
                out.s(" sparse");
            }
        }
        RegDetail::Update { off, nr } => {
            out.s(" off=").u(off as u64).s(" nr=").u(nr as u64);
        }
        RegDetail::Group { bgid, entries } => {
            out.s(" bgid=").u(bgid as u64);
            if entries != 0 {
                out.s(" entries=").u(entries as u64);
            }
        }
        RegDetail::Fd(fd) => {
            out.s(" fd=").i(fd as i64);
        }
        RegDetail::None => {}
    }
    out.s(" -> ").res(ret).end();
}

/// The argument of a register call, as far as the trace names it.
pub enum RegDetail {
    None,
    Count(u32),
    Table { nr: u32, sparse: bool },
    Update { off: u32, nr: u32 },
    Group { bgid: u16, entries: u32 },
    Fd(i32),
}

/// What the exit line reports about a ring's life.
pub struct Exit {
    pub submitted: u64,
    pub traced: u64,
    pub lost: u64,
    /// Most requests in flight at once.
    pub peak: u32,
    /// The CQ's overflow counter.
    pub overflow: u32,
    /// Time in the library's submit and wait calls, ns.
    pub waited: u64,
}

pub fn exit(out: &mut Out, st: &Stamp, ring: RingName, e: &Exit) {
    head(out, st, ring)
        .s("exit submitted=")
        .u(e.submitted)
        .s(" completions_traced=")
        .u(e.traced)
        .s(" completions_unseen=")
        .u(e.lost)
        .s(" peak_in_flight=")
        .u(e.peak as u64)
        .s(" cq_overflow=")
        .u(e.overflow as u64)
        .s(" waited=")
        .dur(e.waited)
        .end();
}
