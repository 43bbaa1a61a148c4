//! The checker: judges each SQE before the kernel sees it, and the ring's
//! state at each library call, and explains every problem on one line.
//!
//! The rules are the kernel's own (what makes it fail a request with
//! -EINVAL, -EBADF, -EOPNOTSUPP, -EFAULT or -ENOBUFS), applied where the
//! library knows enough: registrations made through raw syscalls are
//! invisible to it, so those checks stay silent for such rings.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::decode;
use super::out::Out;
use super::state::{Flight, Ring};
use super::trace::{uses_fixed_buffer, RingName};
use super::view::Sqe;
use crate::sys::*;

/// Opcodes the running kernel supports, probed once; unknown until PROBED.
static SUPPORTED: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static PROBED: AtomicBool = AtomicBool::new(false);

/// Asks the kernel which opcodes it supports, with a ring of our own that
/// lives only for the question.
pub fn probe_kernel() {
    let mut p = io_uring_params::default();
    // SAFETY: p is a valid params block for the kernel to fill.
    let fd = unsafe { io_uring_setup(1, &mut p) };
    if fd < 0 {
        return;
    }
    #[repr(C)]
    struct Probe {
        head: io_uring_probe,
        ops: [io_uring_probe_op; 256],
    }
    // SAFETY: all-zero bytes are a valid Probe (plain integers).
    let mut probe: Probe = unsafe { core::mem::zeroed() };
    // SAFETY: the buffer has room for the 256 entries we announce.
    let ret = unsafe { io_uring_register(fd, IORING_REGISTER_PROBE, (&mut probe as *mut Probe).cast(), 256) };
    // SAFETY: fd is the ring made above, used by nobody else.
    unsafe { close(fd) };
    if ret < 0 {
        return;
    }
    let n = probe.head.ops_len as usize;
    for op in probe.ops.iter().take(n).filter(|o| o.flags & IO_URING_OP_SUPPORTED != 0) {
        if let Some(word) = SUPPORTED.get(op.op as usize / 64) {
            word.fetch_or(1 << (op.op % 64), Ordering::Relaxed);
        }
    }
    PROBED.store(true, Ordering::Release);
}

/// Whether the kernel runs opcode `op`; before (or without) a probe, only
/// the opcodes we know of count.
fn supported(op: u8) -> bool {
    if !PROBED.load(Ordering::Acquire) {
        return op < IORING_OP_LAST;
    }
    SUPPORTED.get(op as usize / 64).is_some_and(|w| w.load(Ordering::Relaxed) & (1 << (op % 64)) != 0)
}

/// A set of opcodes.
struct Ops(u128);

impl Ops {
    const fn of(ops: &[u8]) -> Ops {
        let mut m = 0u128;
        let mut i = 0;
        while i < ops.len() {
            m |= 1 << ops[i];
            i += 1;
        }
        Ops(m)
    }

    fn has(&self, op: u8) -> bool {
        op < 128 && self.0 & (1 << op) != 0
    }
}

/// Requests that act on `fd` (the kernel resolves it before preparing them).
const NEEDS_FILE: Ops = Ops::of(&[
    IORING_OP_READV,
    IORING_OP_WRITEV,
    IORING_OP_FSYNC,
    IORING_OP_READ_FIXED,
    IORING_OP_WRITE_FIXED,
    IORING_OP_POLL_ADD,
    IORING_OP_SYNC_FILE_RANGE,
    IORING_OP_SENDMSG,
    IORING_OP_RECVMSG,
    IORING_OP_ACCEPT,
    IORING_OP_CONNECT,
    IORING_OP_FALLOCATE,
    IORING_OP_READ,
    IORING_OP_WRITE,
    IORING_OP_FADVISE,
    IORING_OP_SEND,
    IORING_OP_RECV,
    IORING_OP_SPLICE,
    IORING_OP_TEE,
    IORING_OP_SHUTDOWN,
    IORING_OP_MSG_RING,
    IORING_OP_FSETXATTR,
    IORING_OP_FGETXATTR,
    IORING_OP_URING_CMD,
    IORING_OP_SEND_ZC,
    IORING_OP_SENDMSG_ZC,
    IORING_OP_READ_MULTISHOT,
    IORING_OP_FIXED_FD_INSTALL,
    IORING_OP_FTRUNCATE,
    IORING_OP_BIND,
    IORING_OP_LISTEN,
    IORING_OP_RECV_ZC,
    IORING_OP_EPOLL_WAIT,
    IORING_OP_READV_FIXED,
    IORING_OP_WRITEV_FIXED,
    IORING_OP_URING_CMD128,
]);

/// Requests that may pick a provided buffer (IOSQE_BUFFER_SELECT).
const BUFFER_SELECT: Ops = Ops::of(&[
    IORING_OP_READV,
    IORING_OP_RECVMSG,
    IORING_OP_READ,
    IORING_OP_SEND,
    IORING_OP_RECV,
    IORING_OP_READ_MULTISHOT,
    IORING_OP_URING_CMD,
    IORING_OP_URING_CMD128,
]);

/// Requests whose `ioprio` means something (a priority or command flags).
const IOPRIO: Ops = Ops::of(&[
    IORING_OP_READV,
    IORING_OP_WRITEV,
    IORING_OP_READ_FIXED,
    IORING_OP_WRITE_FIXED,
    IORING_OP_SENDMSG,
    IORING_OP_RECVMSG,
    IORING_OP_ACCEPT,
    IORING_OP_READ,
    IORING_OP_WRITE,
    IORING_OP_SEND,
    IORING_OP_RECV,
    IORING_OP_SEND_ZC,
    IORING_OP_SENDMSG_ZC,
    IORING_OP_READ_MULTISHOT,
    IORING_OP_RECV_ZC,
    IORING_OP_READV_FIXED,
    IORING_OP_WRITEV_FIXED,
    IORING_OP_URING_CMD,
    IORING_OP_URING_CMD128,
]);

/// Requests an IORING_SETUP_IOPOLL ring accepts.
const IOPOLL: Ops = Ops::of(&[
    IORING_OP_NOP,
    IORING_OP_READV,
    IORING_OP_WRITEV,
    IORING_OP_READ_FIXED,
    IORING_OP_WRITE_FIXED,
    IORING_OP_FILES_UPDATE,
    IORING_OP_READ,
    IORING_OP_WRITE,
    IORING_OP_PROVIDE_BUFFERS,
    IORING_OP_REMOVE_BUFFERS,
    IORING_OP_MSG_RING,
    IORING_OP_URING_CMD,
    IORING_OP_READV_FIXED,
    IORING_OP_WRITEV_FIXED,
    IORING_OP_NOP128,
    IORING_OP_URING_CMD128,
]);

/// Requests that take a path or a dirfd and refuse IOSQE_FIXED_FILE.
const NO_FIXED_FILE: Ops = Ops::of(&[
    IORING_OP_OPENAT,
    IORING_OP_OPENAT2,
    IORING_OP_CLOSE,
    IORING_OP_STATX,
    IORING_OP_RENAMEAT,
    IORING_OP_UNLINKAT,
    IORING_OP_MKDIRAT,
    IORING_OP_SYMLINKAT,
    IORING_OP_LINKAT,
]);

/// Requests that move `len` bytes at `addr` (or `len` iovecs), and fault on
/// a NULL `addr` unless a provided buffer is selected.
const ADDR_LEN: Ops = Ops::of(&[
    IORING_OP_READV,
    IORING_OP_WRITEV,
    IORING_OP_READ_FIXED,
    IORING_OP_WRITE_FIXED,
    IORING_OP_READ,
    IORING_OP_WRITE,
    IORING_OP_SEND,
    IORING_OP_RECV,
    IORING_OP_SEND_ZC,
    IORING_OP_READV_FIXED,
    IORING_OP_WRITEV_FIXED,
]);

/// Fields a request must leave zero, as the kernel's prep checks them.
#[derive(Clone, Copy)]
enum Field {
    Off,
    Addr,
    Len,
    OpFlags,
    BufIndex,
    FileIndex,
    Addr3,
}

fn reserved(op: u8) -> &'static [Field] {
    use Field::*;
    match op {
        IORING_OP_FSYNC | IORING_OP_SYNC_FILE_RANGE => &[Addr, BufIndex, FileIndex],
        IORING_OP_FALLOCATE => &[BufIndex, OpFlags, FileIndex],
        IORING_OP_TIMEOUT => &[BufIndex, FileIndex],
        IORING_OP_LINK_TIMEOUT => &[BufIndex, FileIndex, Off],
        IORING_OP_OPENAT | IORING_OP_OPENAT2 => &[BufIndex],
        IORING_OP_CLOSE => &[Off, Addr, Len, OpFlags, BufIndex],
        IORING_OP_STATX | IORING_OP_RENAMEAT | IORING_OP_UNLINKAT | IORING_OP_MKDIRAT | IORING_OP_SYMLINKAT
        | IORING_OP_LINKAT => &[BufIndex, FileIndex],
        IORING_OP_FIXED_FD_INSTALL => &[Off, Addr, Len, BufIndex, FileIndex, Addr3],
        IORING_OP_PIPE => &[Off, Addr3],
        IORING_OP_EPOLL_WAIT => &[Off, OpFlags, BufIndex, FileIndex],
        _ => &[],
    }
}

fn field_value(s: &Sqe, f: Field) -> (&'static str, u64) {
    match f {
        Field::Off => ("off", s.off),
        Field::Addr => ("addr", s.addr),
        Field::Len => ("len", s.len as u64),
        Field::OpFlags => ("op_flags", s.op_flags as u64),
        Field::BufIndex => ("buf_index", s.buf_index as u64),
        Field::FileIndex => ("file_index", s.file_index as u64),
        Field::Addr3 => ("addr3", s.addr3),
    }
}

/// Where the checker writes, about which ring.
pub struct Report<'a> {
    pub out: &'a mut Out,
    pub ring: RingName,
}

impl Report<'_> {
    /// Starts a line about the ring as a whole.
    pub fn ring_line(&mut self, warning: bool) -> &mut Out {
        self.out.begin().s("liburing-rs check: ");
        if warning {
            self.out.s("warning: ");
        }
        self.out.s("ring ");
        if self.ring.is_index {
            self.out.s("reg:");
        }
        self.out.i(self.ring.fd as i64).s(": ")
    }

    /// Starts a line about one request: which one, then which field.
    fn sqe_line(&mut self, warning: bool, idx: u32, s: &Sqe, field: &str) -> &mut Out {
        self.ring_line(warning).s("sqe ").u(idx as u64).s(" (");
        match decode::opcode(s.opcode) {
            Some(n) => self.out.s(n),
            None => self.out.s("opcode ").u(s.opcode as u64),
        };
        self.out.s(" user_data=").hex(s.user_data).s("): ").s(field).s(": ")
    }
}

/// What the checker carries from one SQE of a submission to the next.
#[derive(Default)]
pub struct Batch {
    /// The previous SQE asked to be linked to this one.
    linked: bool,
    prev_op: u8,
    /// Index and SQE that last set IOSQE_IO_LINK/HARDLINK.
    last: (u32, Sqe),
}

/// Judges one SQE (counter index `idx`) of ring `r`, whose setup flags are
/// `flags`. `earlier` is a request with the same user_data still in
/// flight, `now` the submission time.
#[allow(clippy::too_many_arguments)]
pub fn sqe(
    rep: &mut Report,
    r: &mut Ring,
    flags: u32,
    b: &mut Batch,
    idx: u32,
    s: &Sqe,
    earlier: Option<Flight>,
    now: u64,
) {
    let op = s.opcode;
    let name = decode::opcode(op);
    // The ring's own answer (kernel or engine), else the kernel's.
    if !r.runs(op).unwrap_or_else(|| supported(op)) {
        let by = if r.engine { "the userspace engine" } else { "this kernel" };
        let line = rep.sqe_line(false, idx, s, "opcode");
        match name {
            Some(n) => line.s(n).s(" is not supported by ").s(by),
            None => line.u(op as u64).s(" is no opcode this kernel supports"),
        };
        line.end();
        // The kernel refuses the request whatever its fields hold: one line
        // says it all.
        return;
    }
    // Opcodes newer than this library: nothing more we can judge.
    let Some(name) = name else { return };
    if matches!(op, IORING_OP_NOP128 | IORING_OP_URING_CMD128)
        && flags & (IORING_SETUP_SQE128 | IORING_SETUP_SQE_MIXED) == 0
    {
        rep.sqe_line(false, idx, s, "opcode")
            .s(name)
            .s(" takes a 128-byte SQE; the ring has neither IORING_SETUP_SQE128 nor IORING_SETUP_SQE_MIXED")
            .end();
    }
    if flags & IORING_SETUP_IOPOLL != 0 && !IOPOLL.has(op) {
        rep.sqe_line(false, idx, s, "opcode").s(name).s(" cannot run on an IORING_SETUP_IOPOLL ring").end();
    }
    sqe_flags(rep, r, idx, s, name);
    if s.ioprio != 0 && !IOPRIO.has(op) {
        rep.sqe_line(false, idx, s, "ioprio").u(s.ioprio as u64).s(" must be 0 for ").s(name).end();
    }
    for &f in reserved(op) {
        let (field, v) = field_value(s, f);
        if v != 0 {
            rep.sqe_line(false, idx, s, field).s("unused by ").s(name).s(" and must be 0 (it is ").hex(v).s(")").end();
        }
    }
    if matches!(op, IORING_OP_TIMEOUT | IORING_OP_LINK_TIMEOUT) && s.len != 1 {
        rep.sqe_line(false, idx, s, "len")
            .s("must be 1 (one timespec) for ")
            .s(name)
            .s(", it is ")
            .u(s.len as u64)
            .end();
    }
    files(rep, r, idx, s);
    buffers(rep, r, idx, s);
    if ADDR_LEN.has(op) && s.flags & IOSQE_BUFFER_SELECT == 0 && s.addr == 0 && s.len != 0 {
        rep.sqe_line(false, idx, s, "addr").s("NULL with len ").u(s.len as u64).end();
    }
    if op == IORING_OP_PROVIDE_BUFFERS {
        r.add_group(s.buf_index);
    }
    if s.flags & IOSQE_BUFFER_SELECT != 0 && BUFFER_SELECT.has(op) && !r.has_group(s.buf_index) {
        rep.sqe_line(false, idx, s, "buf_group")
            .s("IOSQE_BUFFER_SELECT from group ")
            .u(s.buf_index as u64)
            .s(", which has no buffers registered (no IORING_REGISTER_PBUF_RING or PROVIDE_BUFFERS seen)")
            .end();
    }
    if op == IORING_OP_LINK_TIMEOUT {
        if !b.linked {
            rep.sqe_line(false, idx, s, "opcode")
                .s("LINK_TIMEOUT must directly follow a request that has IOSQE_IO_LINK set")
                .end();
        } else if b.prev_op == IORING_OP_LINK_TIMEOUT {
            rep.sqe_line(false, idx, s, "opcode").s("LINK_TIMEOUT cannot follow another LINK_TIMEOUT").end();
        }
    }
    b.linked = s.flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK) != 0;
    b.prev_op = op;
    if b.linked {
        b.last = (idx, *s);
    }
    // Requests of one submission that share a user_data are a tag, not a
    // slip (linked chains often do it); 0 usually means "unused".
    if let Some(f) = earlier {
        if f.epoch == r.epoch && f.t != now && s.user_data != 0 {
            let prev = decode::opcode(f.opcode).unwrap_or("?");
            rep.sqe_line(true, idx, s, "user_data")
                .hex(s.user_data)
                .s(" is already in flight (")
                .s(prev)
                .s(" submitted ")
                .dur(now.saturating_sub(f.t))
                .s(" ago, no completion seen)")
                .end();
        }
    }
}

fn sqe_flags(rep: &mut Report, r: &mut Ring, idx: u32, s: &Sqe, name: &str) {
    let op = s.opcode;
    let unknown = s.flags & !(IOSQE_CQE_SKIP_SUCCESS * 2 - 1);
    if unknown != 0 {
        rep.sqe_line(false, idx, s, "flags").s("unknown bit ").hex(unknown as u64).end();
    }
    if s.flags & IOSQE_BUFFER_SELECT != 0 && !BUFFER_SELECT.has(op) {
        rep.sqe_line(false, idx, s, "flags").s("IOSQE_BUFFER_SELECT is not accepted by ").s(name).end();
    }
    if s.flags & IOSQE_FIXED_FILE != 0 && NO_FIXED_FILE.has(op) {
        rep.sqe_line(false, idx, s, "flags")
            .s("IOSQE_FIXED_FILE is not accepted by ")
            .s(name)
            .s(" (direct descriptors go in file_index)")
            .end();
    }
    if op == IORING_OP_FIXED_FD_INSTALL && s.flags & IOSQE_FIXED_FILE == 0 {
        rep.sqe_line(false, idx, s, "flags").s("FIXED_FD_INSTALL needs IOSQE_FIXED_FILE").end();
    }
    if s.flags & IOSQE_CQE_SKIP_SUCCESS != 0 {
        r.skip_used = true;
    }
    if s.flags & IOSQE_IO_DRAIN != 0 && r.skip_used {
        rep.sqe_line(false, idx, s, "flags")
            .s("IOSQE_IO_DRAIN is refused once IOSQE_CQE_SKIP_SUCCESS has been used on the ring")
            .end();
    }
}

fn files(rep: &mut Report, r: &Ring, idx: u32, s: &Sqe) {
    if !NEEDS_FILE.has(s.opcode) {
        return;
    }
    if s.flags & IOSQE_FIXED_FILE == 0 {
        if s.fd < 0 {
            rep.sqe_line(false, idx, s, "fd").i(s.fd as i64).s(" is negative and IOSQE_FIXED_FILE is not set").end();
        }
        return;
    }
    if r.files >= 0 && (s.fd < 0 || s.fd as i64 >= r.files) {
        let line = rep.sqe_line(false, idx, s, "fd");
        line.s("fixed file ").i(s.fd as i64);
        if r.files == 0 {
            line.s(" but no files are registered");
        } else {
            line.s(" is beyond the ").u(r.files as u64).s(" registered files");
        }
        line.end();
    }
}

fn buffers(rep: &mut Report, r: &Ring, idx: u32, s: &Sqe) {
    if !uses_fixed_buffer(s) || r.bufs.count < 0 {
        return;
    }
    let i = s.buf_index as u32;
    if i as i64 >= r.bufs.count {
        let line = rep.sqe_line(false, idx, s, "buf_index");
        line.s("fixed buffer ").u(i as u64);
        if r.bufs.count == 0 {
            line.s(" but no buffers are registered");
        } else {
            line.s(" is beyond the ").u(r.bufs.count as u64).s(" registered buffers");
        }
        line.end();
        return;
    }
    let Some((base, len)) = r.bufs.range(i) else { return };
    if base == 0 && len == 0 {
        rep.sqe_line(false, idx, s, "buf_index").s("fixed buffer ").u(i as u64).s(" is an empty slot").end();
        return;
    }
    let vectored = matches!(s.opcode, IORING_OP_READV_FIXED | IORING_OP_WRITEV_FIXED | IORING_OP_SENDMSG_ZC);
    let end = s.addr.checked_add(s.len as u64);
    if !vectored && (s.addr < base || end.is_none_or(|e| e > base + len)) {
        rep.sqe_line(false, idx, s, "addr")
            .hex(s.addr)
            .s("+")
            .u(s.len as u64)
            .s(" is outside registered buffer ")
            .u(i as u64)
            .s(" (")
            .hex(base)
            .s("+")
            .u(len)
            .s(")")
            .end();
    }
}

/// After the last SQE of a submission: a chain must not stay open.
pub fn end_of_batch(rep: &mut Report, b: &Batch) {
    if b.linked {
        let (idx, s) = b.last;
        rep.sqe_line(false, idx, &s, "flags")
            .s("IOSQE_IO_LINK on the last request of the submission leaves the chain open")
            .end();
    }
}

/// Another thread is inside a submit on the same ring.
pub fn concurrent_submit(rep: &mut Report) {
    rep.ring_line(true).s("submit while another thread is inside a submit on this ring").end();
}

/// The CQ head as the application left it, against the kernel's tail and
/// the head we saw last time. Returns whether the head is usable.
pub fn cq_head(rep: &mut Report, r: &mut Ring, head: u32, tail: u32) -> bool {
    let ahead = head.wrapping_sub(tail) as i32;
    if ahead > 0 {
        if r.bad_head != Some(head) {
            r.bad_head = Some(head);
            rep.ring_line(false)
                .s("CQ head ")
                .u(head as u64)
                .s(" is past the kernel's tail ")
                .u(tail as u64)
                .s(": io_uring_cqe_seen/io_uring_cq_advance consumed ")
                .u(ahead as u64)
                .s(" completion(s) that were never posted")
                .end();
        }
        return false;
    }
    let back = r.cq_head.wrapping_sub(head) as i32;
    if back > 0 {
        rep.ring_line(false)
            .s("CQ head moved backwards from ")
            .u(r.cq_head as u64)
            .s(" to ")
            .u(head as u64)
            .s(": only io_uring_cqe_seen/io_uring_cq_advance may move it, forwards")
            .end();
    }
    r.bad_head = None;
    true
}

/// Why a call on the `struct io_uring` at `addr` cannot work.
pub enum Dead {
    Exited,
    NeverSetUp,
    NoFd,
}

/// A call on a `struct io_uring` that holds no usable ring.
pub fn dead_ring(out: &mut Out, addr: usize, why: Dead) {
    out.begin()
        .s("liburing-rs check: ring at ")
        .hex(addr as u64)
        .s(": ")
        .s(match why {
            Dead::Exited => "used after io_uring_queue_exit (the call fails with -EBADF)",
            Dead::NeverSetUp => "not set up (never initialised, or its setup failed)",
            Dead::NoFd => "no descriptor left to enter it with (its fd was closed and unregistered)",
        })
        .end();
}
