//! Differential fuzzer: the userspace engine against the kernel's io_uring.
//!
//! Each seed generates a request program over the part-1 opcodes: files in
//! a temp dir (plain and fixed fds, fixed buffers), pipes, path operations,
//! NOPs with injected results and the other NOP flags (files, fixed files
//! and buffers, task work, unknown flags), MSG_RING data messages to the
//! ring itself and to non-ring fds, links, hard links, link timeouts, drains,
//! unix stream socketpairs and loopback TCP and UDP pairs (SEND, RECV,
//! SENDMSG, RECVMSG, MSG_WAITALL, truncated datagrams, SHUTDOWN and the
//! end of stream, IORING_CQE_F_SOCK_NONEMPTY), CONNECT and ACCEPT on a
//! loopback listener (accepted fds compared as "an fd"),
//! skipped successes, timeouts, polls and cancels, some of them invalid.
//! The program runs once on a kernel ring and once on an engine ring, in
//! this one process (each ring picks its engine from LIBURING_RS_ENGINE at
//! setup), each in a fresh copy of the same initial directory. Compared:
//! per user_data the CQE results and flags, the bytes every read produced,
//! the statx fields that do not depend on time, and the directory's final
//! contents. Checked on each engine alone: the orderings the kernel
//! guarantees (a chain's CQEs in chain order; a drained request after every
//! request submitted before it).
//!
//! Programs avoid nondeterminism by construction: within one submission no
//! two chains share a file, pipe, name or epoll registration; a read of an
//! empty pipe is always guarded by a link timeout (and not made at all on
//! a pipe splice or tee used: the kernel then never fires that timeout),
//! and a chain ends after a read that comes up short; what a TCP or UDP
//! send puts on loopback is received only from the next submission on
//! (unix sockets deliver at once; loopback may wait for softirq work); a pipe with a poll armed on it is left alone
//! until the poll is cancelled; drains are not used while anything stays
//! armed across submissions; what a chain with skipped CQEs works on is not
//! used again (nothing tells when such a chain is over); chains with a link
//! timeout get no skipped CQEs and no IOSQE_ASYNC (the kernel never arms a
//! link timeout on a request its io-wq runs after an async predecessor);
//! requests cancelled later are not punted with IOSQE_ASYNC (the cancel
//! could overtake them). Between submissions the ring is asked for events,
//! so DEFER_TASKRUN rings move their chains on as a waiting program's do.
//!
//! A second test, `provided_buffers_match_kernel`, runs multishot
//! receivers (READ_MULTISHOT on pipes, RECV multishot on socketpairs,
//! bundled, capped, incremental rings) over buffer rings, step by step,
//! and compares each CQE's result, flags (F_MORE, buffer id, BUF_MORE,
//! SOCK_NONEMPTY) and data.
//!
//! `cargo test` runs a short batch (FUZZ_N programs, default 150, from seed
//! FUZZ_SEED, default 1); `make fuzz N=... SEED=...` runs more. FUZZ_VERBOSE=1
//! (2: whole SQEs) prints each program and its CQEs, FUZZ_TIME=1 the time
//! each run took. The library is build/lib/liburing-ffi.so.2 (or
//! LIBURING_FFI_SO); without it, or where the kernel refuses io_uring, the
//! test says so and passes.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------- the ABI

const SETUP_NO_SQARRAY: u32 = 1 << 16;
const SETUP_SUBMIT_ALL: u32 = 1 << 7;
const SETUP_COOP_TASKRUN: u32 = 1 << 8;
const SETUP_TASKRUN_FLAG: u32 = 1 << 9;
const SETUP_SINGLE_ISSUER: u32 = 1 << 12;
const SETUP_DEFER_TASKRUN: u32 = 1 << 13;
const SETUP_SQPOLL: u32 = 1 << 1;
/// sq_thread_idle of SQPOLL programs (ms): short, so that their SQ threads
/// both poll and go to sleep between submissions.
const SQ_THREAD_IDLE_MS: u32 = 2;

const OP_NOP: u8 = 0;
const OP_READV: u8 = 1;
const OP_WRITEV: u8 = 2;
const OP_FSYNC: u8 = 3;
const OP_READ_FIXED: u8 = 4;
const OP_WRITE_FIXED: u8 = 5;
const OP_POLL_ADD: u8 = 6;
const OP_POLL_REMOVE: u8 = 7;
const OP_SYNC_FILE_RANGE: u8 = 8;
const OP_TIMEOUT: u8 = 11;
const OP_TIMEOUT_REMOVE: u8 = 12;
const OP_ASYNC_CANCEL: u8 = 14;
const OP_LINK_TIMEOUT: u8 = 15;
const OP_FALLOCATE: u8 = 17;
const OP_OPENAT: u8 = 18;
const OP_CLOSE: u8 = 19;
const OP_FILES_UPDATE: u8 = 20;
const OP_STATX: u8 = 21;
const OP_READ: u8 = 22;
const OP_WRITE: u8 = 23;
const OP_FADVISE: u8 = 24;
const OP_OPENAT2: u8 = 28;
const OP_EPOLL_CTL: u8 = 29;
const OP_SPLICE: u8 = 30;
const OP_TEE: u8 = 33;
const OP_RENAMEAT: u8 = 35;
const OP_UNLINKAT: u8 = 36;
const OP_MKDIRAT: u8 = 37;
const OP_SYMLINKAT: u8 = 38;
const OP_LINKAT: u8 = 39;
const OP_FSETXATTR: u8 = 41;
const OP_FGETXATTR: u8 = 43;
const OP_MSG_RING: u8 = 40;
const OP_FTRUNCATE: u8 = 55;
const OP_SENDMSG: u8 = 9;
const OP_RECVMSG: u8 = 10;
const OP_SEND: u8 = 26;
const OP_RECV: u8 = 27;
const OP_ACCEPT: u8 = 13;
const OP_CONNECT: u8 = 16;
const OP_SHUTDOWN: u8 = 34;
const ACCEPT_DONTWAIT: u16 = 1 << 1;

const F_FIXED_FILE: u8 = 1 << 0;
const F_DRAIN: u8 = 1 << 1;
const F_LINK: u8 = 1 << 2;
const F_HARDLINK: u8 = 1 << 3;
const F_ASYNC: u8 = 1 << 4;
const F_SKIP_SUCCESS: u8 = 1 << 6;

const NOP_INJECT_RESULT: u32 = 1;
const NOP_FILE: u32 = 1 << 1;
const NOP_FIXED_FILE: u32 = 1 << 2;
const NOP_FIXED_BUFFER: u32 = 1 << 3;
const NOP_TW: u32 = 1 << 4;
const FSYNC_DATASYNC: u32 = 1;

/// The fields of an SQE the programs use, written at the kernel's offsets.
#[derive(Clone, Default, Debug)]
struct Sqe {
    opcode: u8,
    flags: u8,
    ioprio: u16,
    fd: i32,
    off: u64,
    addr: u64,
    len: u32,
    op_flags: u32,
    user_data: u64,
    buf_index: u16,
    file_index: u32,
}

impl Sqe {
    /// # Safety
    /// `p` is a 64-byte SQE slot from io_uring_get_sqe.
    unsafe fn write(&self, p: *mut u8) {
        unsafe {
            std::ptr::write_bytes(p, 0, 64);
            *p = self.opcode;
            *p.add(1) = self.flags;
            (p.add(2) as *mut u16).write_unaligned(self.ioprio);
            (p.add(4) as *mut i32).write_unaligned(self.fd);
            (p.add(8) as *mut u64).write_unaligned(self.off);
            (p.add(16) as *mut u64).write_unaligned(self.addr);
            (p.add(24) as *mut u32).write_unaligned(self.len);
            (p.add(28) as *mut u32).write_unaligned(self.op_flags);
            (p.add(32) as *mut u64).write_unaligned(self.user_data);
            (p.add(40) as *mut u16).write_unaligned(self.buf_index);
            (p.add(44) as *mut u32).write_unaligned(self.file_index);
        }
    }
}

/// struct io_uring, opaque but for its size.
#[repr(C, align(8))]
struct Ring([u8; 216]);

#[repr(C)]
#[derive(Clone, Copy)]
struct Cqe {
    user_data: u64,
    res: i32,
    flags: u32,
}

#[repr(C)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

struct Lib {
    _handle: *mut c_void,
    queue_init_params: unsafe extern "C" fn(u32, *mut Ring, *mut u8) -> i32,
    queue_exit: unsafe extern "C" fn(*mut Ring),
    get_sqe: unsafe extern "C" fn(*mut Ring) -> *mut u8,
    submit: unsafe extern "C" fn(*mut Ring) -> i32,
    wait_cqe_timeout: unsafe extern "C" fn(*mut Ring, *mut *mut Cqe, *mut KernelTimespec) -> i32,
    cqe_seen: unsafe extern "C" fn(*mut Ring, *mut Cqe),
    get_events: unsafe extern "C" fn(*mut Ring) -> i32,
    register_files: unsafe extern "C" fn(*mut Ring, *const i32, u32) -> i32,
    register_buffers: unsafe extern "C" fn(*mut Ring, *const libc::iovec, u32) -> i32,
    ring_engine: unsafe extern "C" fn(*const Ring) -> i32,
    // For the provided-buffer programs.
    setup_buf_ring: unsafe extern "C" fn(*mut Ring, u32, i32, u32, *mut i32) -> *mut u8,
    free_buf_ring: unsafe extern "C" fn(*mut Ring, *mut u8, u32, i32) -> i32,
    buf_ring_add: unsafe extern "C" fn(*mut u8, *mut c_void, u32, u16, i32, i32),
    buf_ring_advance: unsafe extern "C" fn(*mut u8, i32),
}

impl Lib {
    fn load() -> Result<Lib, String> {
        let path = std::env::var("LIBURING_FFI_SO")
            .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/build/lib/liburing-ffi.so.2").to_string());
        let c = CString::new(path.clone()).unwrap();
        // SAFETY: dlopen of a library path; checked for null below.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(format!("{path} not loadable (run `make lib` first)"));
        }
        macro_rules! sym {
            ($name:literal) => {{
                let n = CString::new($name).unwrap();
                // SAFETY: looking a name up in the library just opened.
                let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
                if p.is_null() {
                    return Err(format!("{} missing from {path}", $name));
                }
                // SAFETY: the symbol has the signature of the field it fills.
                unsafe { std::mem::transmute::<*mut c_void, _>(p) }
            }};
        }
        Ok(Lib {
            _handle: handle,
            queue_init_params: sym!("io_uring_queue_init_params"),
            queue_exit: sym!("io_uring_queue_exit"),
            get_sqe: sym!("io_uring_get_sqe"),
            submit: sym!("io_uring_submit"),
            wait_cqe_timeout: sym!("io_uring_wait_cqe_timeout"),
            cqe_seen: sym!("io_uring_cqe_seen"),
            get_events: sym!("io_uring_get_events"),
            register_files: sym!("io_uring_register_files"),
            register_buffers: sym!("io_uring_register_buffers"),
            ring_engine: sym!("liburing_rs_ring_engine"),
            setup_buf_ring: sym!("io_uring_setup_buf_ring"),
            free_buf_ring: sym!("io_uring_free_buf_ring"),
            buf_ring_add: sym!("io_uring_buf_ring_add"),
            buf_ring_advance: sym!("io_uring_buf_ring_advance"),
        })
    }
}

// ---------------------------------------------------------------- randomness

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
}

// ---------------------------------------------------------------- programs

const FILES: usize = 4;
const PIPES: usize = 3;
const SOCKS: usize = 5;
/// Socket pairs 0 and 1 are unix streams, then a TCP and a UDP pair, and a
/// TCP pair whose ends get shut down.
const TCP: usize = 2;
const UDP: usize = 3;
const TCP_SHUT: usize = 4;
/// Fresh TCP sockets for CONNECT, one each.
const CLIENTS: usize = 6;

fn is_tcp(s: usize) -> bool {
    s == TCP || s == TCP_SHUT
}
const NAMES: usize = 4;
/// Fixed slots 0..FILES hold the files; OPEN_SLOTS are for openat/close.
const OPEN_SLOTS: [u32; 3] = [5, 6, 7];
const FIXED_SLOTS: u32 = 8;
const BUF_SIZE: usize = 4096;

/// What an SQE refers to that differs between the two runs: fds and paths
/// are resolved per run.
#[derive(Clone, Debug)]
enum Arg {
    /// Nothing run-specific.
    None,
    /// File i (fd, or its fixed slot with F_FIXED_FILE).
    File(usize),
    /// Read or write end of pipe i.
    PipeR(usize),
    PipeW(usize),
    /// Name i of the run's directory (in `addr`; `off` too for two-path ops).
    Names(usize, Option<usize>),
    /// The run's epoll fd, on pipe i's read end.
    Epoll(usize),
    /// End e of socketpair i.
    Sock(usize, usize),
    /// The run's TCP listener (address for CONNECT in `addr`).
    Listener,
    /// Fresh client socket i, connecting to the listener.
    Client(usize),
    /// The run's own ring fd.
    Ring,
}

/// Where an op's data lives: indexes into the run's buffers.
#[derive(Clone, Debug)]
enum Data {
    None,
    /// Out-buffer i, `len` bytes at `at` (reads, statx, getxattr).
    Out(usize),
    /// Source pattern seed (writes).
    In(u64),
    /// iovecs over out-buffer i (readv) or pattern (writev): lengths.
    Vec(Vec<usize>, Option<usize>),
    /// Fixed buffer b at offset.
    Fixed(u16, usize),
    /// A timespec of this many nanoseconds.
    Ts(u64),
    /// A value for setxattr.
    Value(u64),
    /// An fd array of one: file i's fd, or -1.
    FdArray(Option<usize>),
    /// An epoll_event for pipe i.
    Event,
    /// A msghdr over iovecs of these lengths: into out-buffer i (recvmsg),
    /// or from a pattern (sendmsg).
    Msg(Vec<usize>, Option<usize>),
}

#[derive(Clone, Debug)]
struct Op {
    sqe: Sqe,
    arg: Arg,
    data: Data,
}

#[derive(Clone, Debug)]
struct Chain {
    ops: Vec<Op>,
}

#[derive(Debug)]
struct Program {
    seed: u64,
    files: Vec<Vec<u8>>,
    batches: Vec<Vec<Chain>>,
    /// user_data of requests that stay armed across submissions.
    pending: Vec<u64>,
    /// user_data of cancels aimed at such a request (two CQEs each).
    cancels: Vec<u64>,
    /// How many out-buffers a run needs.
    outs: usize,
    setup_flags: u32,
}

struct Gen {
    rng: Rng,
    ud: u64,
    outs: usize,
    pipe_bytes: [usize; PIPES],
    /// Bytes waiting to be read at each end of each stream pair.
    sock_bytes: [[usize; 2]; SOCKS],
    /// Bytes sent this submission on the TCP pairs, per receiving end.
    tcp_flight: [[usize; 2]; SOCKS],
    /// TCP_SHUT: the end's peer shut its writing side (seen from the next
    /// submission on), and this submission's shutdowns.
    eof: [bool; 2],
    eof_flight: [bool; 2],
    /// Clients that connected; connections waiting for ACCEPT; connects
    /// made this submission.
    clients_used: usize,
    queued: usize,
    conn_flight: usize,
    /// Datagram sizes queued at each end of the UDP pair, and those sent
    /// this submission.
    udp_queue: [std::collections::VecDeque<usize>; 2],
    udp_flight: [Vec<usize>; 2],
    /// Pipes with a poll armed on them: left alone until it is cancelled.
    pipe_busy: [bool; PIPES],
    /// Pipes a splice or tee used (which clears their RWF_NOWAIT support).
    pipe_spliced: [bool; PIPES],
    /// Armed requests to cancel later: (user_data, kind).
    pending: Vec<(u64, u8)>,
    all_pending: Vec<u64>,
    /// Requests whose end nobody waits for (skipped successes and their chains).
    unsure: Vec<u64>,
    /// A request with IOSQE_CQE_SKIP_SUCCESS was generated.
    skip_seen: bool,
    /// Counts chains: which one is being generated.
    chain_no: usize,
    /// Per fixed buffer, the chain of this submission that uses it.
    fixed_owner: [usize; 2],
    /// Fixed buffers the chain being generated uses.
    fixed_touched: Vec<u16>,
    /// Pipes whose epoll registration this submission changes.
    epoll_used: Vec<usize>,
    /// Resources used by chains with skipped CQEs: not used again.
    tainted: Taint,
    cancels: Vec<u64>,
    /// The first user_data of the submission being generated.
    batch_start: u64,
    /// A drain was used: from then on (as in the kernel) a request may wait
    /// for everything in flight, so nothing may stay armed.
    drained: bool,
    /// Pipes no chain of the current submission uses yet.
    pipes_free: Vec<usize>,
    /// The pipe chain being generated may tee into the other pipe, or
    /// splice into the file of the same number (no other chain uses them).
    tee_ok: bool,
    splice_ok: bool,
}

impl Gen {
    fn ud(&mut self) -> u64 {
        self.ud += 1;
        self.ud
    }

    fn out(&mut self) -> usize {
        self.outs += 1;
        self.outs - 1
    }

    fn op(&mut self, opcode: u8, arg: Arg, data: Data) -> Op {
        let user_data = self.ud();
        Op { sqe: Sqe { opcode, user_data, ..Default::default() }, arg, data }
    }

    /// A fixed buffer no other chain of this submission uses.
    fn fixed_free(&self) -> Option<u16> {
        let ok = |b: u16| {
            !self.tainted.fixed.contains(&b)
                && matches!(self.fixed_owner[b as usize], o if o == usize::MAX || o == self.chain_no)
        };
        [0u16, 1].into_iter().find(|&b| ok(b))
    }

    fn file_op(&mut self, f: usize) -> Op {
        let r = &mut self.rng;
        let off = r.below(8192);
        let len = 1 + r.below(1500) as u32;
        let choice = r.below(15);
        let mut op = match choice {
            0 | 1 => {
                let seed = self.rng.next();
                let mut o = self.op(OP_WRITE, Arg::File(f), Data::In(seed));
                o.sqe.off = off;
                o.sqe.len = len;
                o
            }
            2 | 3 => {
                let b = self.out();
                let mut o = self.op(OP_READ, Arg::File(f), Data::Out(b));
                o.sqe.off = if self.rng.chance(15) { u64::MAX } else { off };
                o.sqe.len = len;
                o
            }
            4 => {
                let n = 1 + self.rng.below(3) as usize;
                let lens = (0..n).map(|_| 1 + self.rng.below(600) as usize).collect();
                let b = self.out();
                let mut o = self.op(OP_READV, Arg::File(f), Data::Vec(lens, Some(b)));
                o.sqe.off = off;
                o
            }
            5 => {
                let n = 1 + self.rng.below(3) as usize;
                let lens = (0..n).map(|_| 1 + self.rng.below(600) as usize).collect();
                let mut o = self.op(OP_WRITEV, Arg::File(f), Data::Vec(lens, None));
                o.sqe.off = off;
                o
            }
            6 | 7 if self.fixed_free().is_some() => {
                // A fixed buffer belongs to one chain per submission.
                let b = self.fixed_free().unwrap();
                self.fixed_owner[b as usize] = self.chain_no;
                self.fixed_touched.push(b);
                let at = self.rng.below(BUF_SIZE as u64 / 2) as usize;
                let opc = if choice == 6 { OP_READ_FIXED } else { OP_WRITE_FIXED };
                let mut o = self.op(opc, Arg::File(f), Data::Fixed(b, at));
                o.sqe.off = off;
                o.sqe.len = self.rng.below(1 + (BUF_SIZE - at) as u64) as u32;
                o.sqe.buf_index = b;
                o
            }
            8 => {
                let mut o = self.op(OP_FSYNC, Arg::File(f), Data::None);
                o.sqe.op_flags = if self.rng.chance(50) { FSYNC_DATASYNC } else { 0 };
                o
            }
            9 => {
                let mut o = self.op(OP_SYNC_FILE_RANGE, Arg::File(f), Data::None);
                o.sqe.off = off;
                o.sqe.len = len;
                o
            }
            10 => {
                let mut o = self.op(OP_FALLOCATE, Arg::File(f), Data::None);
                o.sqe.off = off;
                o.sqe.addr = len as u64;
                o
            }
            11 => {
                let mut o = self.op(OP_FTRUNCATE, Arg::File(f), Data::None);
                o.sqe.off = self.rng.below(9000);
                o
            }
            12 => {
                let mut o = self.op(OP_FADVISE, Arg::File(f), Data::None);
                o.sqe.off = off;
                o.sqe.len = len;
                o.sqe.op_flags = self.rng.pick(&[0, 1, 2, 3, 4]);
                o
            }
            13 => {
                let b = self.out();
                // statx of the fd itself: AT_EMPTY_PATH with "".
                let mut o = self.op(OP_STATX, Arg::File(f), Data::Out(b));
                o.sqe.op_flags = libc::AT_EMPTY_PATH as u32;
                o.sqe.len = libc::STATX_BASIC_STATS;
                o
            }
            _ => {
                if self.rng.chance(50) {
                    let v = self.rng.next();
                    let mut o = self.op(OP_FSETXATTR, Arg::File(f), Data::Value(v));
                    o.sqe.len = 1 + (v % 40) as u32;
                    o
                } else {
                    let b = self.out();
                    let mut o = self.op(OP_FGETXATTR, Arg::File(f), Data::Out(b));
                    o.sqe.len = self.rng.pick(&[0, 8, 64]);
                    o
                }
            }
        };
        if self.rng.chance(40) && !matches!(op.sqe.opcode, OP_STATX) {
            // Through the fixed file table instead of the fd.
            op.sqe.flags |= F_FIXED_FILE;
        }
        op
    }

    /// Ops on pipe p, keeping track of what it holds. A read (or poll) of an
    /// empty pipe comes with a link timeout and ends the chain, since what
    /// follows a cancelled member does not run: returns false then.
    fn pipe_ops(&mut self, p: usize, chain: &mut Vec<Op>) -> bool {
        match self.rng.below(6) {
            0 | 1 => {
                let n = 1 + self.rng.below(700) as usize;
                let seed = self.rng.next();
                let mut o = self.op(OP_WRITE, Arg::PipeW(p), Data::In(seed));
                o.sqe.len = n as u32;
                self.pipe_bytes[p] += n;
                chain.push(o);
                true
            }
            2 | 3 if self.pipe_bytes[p] > 0 || !self.pipe_spliced[p] => {
                // (An empty pipe that splice or tee used is not read: the
                // kernel runs that read blocking in io-wq and never fires
                // its link timeout; the engine does.)
                let b = self.out();
                let mut o = self.op(OP_READ, Arg::PipeR(p), Data::Out(b));
                o.sqe.len = 1 + self.rng.below(900) as u32;
                let empty = self.pipe_bytes[p] == 0;
                // A short read fails the chain: it ends there.
                let short = o.sqe.len as usize > self.pipe_bytes[p];
                self.pipe_bytes[p] -= self.pipe_bytes[p].min(o.sqe.len as usize);
                chain.push(o);
                if empty {
                    chain.push(self.link_timeout());
                }
                !short
            }
            4 => {
                let write_end = self.rng.chance(50);
                let arg = if write_end { Arg::PipeW(p) } else { Arg::PipeR(p) };
                let mut o = self.op(OP_POLL_ADD, arg, Data::None);
                o.sqe.op_flags = if write_end { libc::POLLOUT as u32 } else { libc::POLLIN as u32 };
                let empty = !write_end && self.pipe_bytes[p] == 0;
                chain.push(o);
                if empty {
                    chain.push(self.link_timeout());
                }
                !empty
            }
            _ => {
                // Splice or tee from a pipe that holds data into a file or
                // the other pipe; the length may exceed what is there.
                if self.pipe_bytes[p] == 0 || !(self.tee_ok || self.splice_ok) {
                    return self.pipe_ops(p, chain);
                }
                let len = 1 + self.rng.below(self.pipe_bytes[p] as u64) as u32;
                let other = (p + 1) % PIPES;
                let tee = self.tee_ok && (!self.splice_ok || self.rng.chance(30));
                let opc = if tee { OP_TEE } else { OP_SPLICE };
                let out = if tee { Arg::PipeW(other) } else { Arg::File(p) };
                let mut o = self.op(opc, out, Data::None);
                o.sqe.len = len;
                // splice_fd_in: the pipe's read end, resolved per run.
                o.sqe.file_index = p as u32;
                o.sqe.addr = if tee { 0 } else { u64::MAX };
                o.sqe.off = if tee { 0 } else { self.rng.below(4096) };
                if !tee {
                    self.pipe_bytes[p] -= len as usize;
                } else {
                    self.pipe_bytes[other] += len as usize;
                    self.pipe_spliced[other] = true;
                }
                self.pipe_spliced[p] = true;
                chain.push(o);
                true
            }
        }
    }

    /// Ops on socket pair s: sends, and receives of what is there (a
    /// receive of an empty end comes with a link timeout and ends the
    /// chain). Short receives are results, not failures, on sockets; a
    /// datagram receive takes one datagram, truncated to its length.
    fn sock_ops(&mut self, s: usize, chain: &mut Vec<Op>) -> bool {
        let e = self.rng.below(2) as usize;
        let (have, mut flight) = match s {
            UDP => (self.udp_queue[e].front().copied().unwrap_or(0), !self.udp_flight[e].is_empty()),
            _ if is_tcp(s) => (self.sock_bytes[s][e], self.tcp_flight[s][e] > 0),
            _ => (self.sock_bytes[s][e], false),
        };
        let shut = s == TCP_SHUT;
        // This end's peer shut down: a receive past the data sees the end.
        let eof = shut && self.eof[e];
        flight |= shut && self.eof_flight[e];
        // An end that shut its writing side sends nothing more (EPIPE
        // would end the chain).
        let can_send = !(shut && (self.eof[1 - e] || self.eof_flight[1 - e]));
        if shut && can_send && self.rng.chance(15) {
            let mut o = self.op(OP_SHUTDOWN, Arg::Sock(s, e), Data::None);
            o.sqe.len = libc::SHUT_WR as u32;
            self.eof_flight[1 - e] = true;
            chain.push(o);
            // The kernel runs SHUTDOWN in io-wq, and what follows it there
            // blocking, without arming a link timeout: the chain ends.
            return false;
        }
        // With data on its way to this end, only a receive of less than
        // what is there already is deterministic (result and flags).
        let stream_ok = !flight || s == UDP || have > 1;
        let must_send = (have == 0 && flight && !eof) || !stream_ok;
        if must_send && !can_send {
            return false;
        }
        if must_send || (can_send && self.rng.chance(45)) {
            let n = 1 + self.rng.below(1500) as usize;
            let o = if self.rng.chance(50) {
                let seed = self.rng.next();
                let mut o = self.op(OP_SEND, Arg::Sock(s, e), Data::In(seed));
                o.sqe.len = n as u32;
                o
            } else {
                let lens = vec![n / 2, n - n / 2];
                self.op(OP_SENDMSG, Arg::Sock(s, e), Data::Msg(lens, None))
            };
            match s {
                UDP => self.udp_flight[1 - e].push(n),
                _ if is_tcp(s) => self.tcp_flight[s][1 - e] += n,
                _ => self.sock_bytes[s][1 - e] += n,
            }
            chain.push(o);
            return true;
        }
        let mut len = 1 + self.rng.below(1200) as usize;
        if flight && s != UDP {
            len = 1 + self.rng.below(have as u64 - 1) as usize;
        }
        // MSG_WAITALL only where everything asked for is there (a whole
        // datagram, exactly).
        let waitall = have > 0 && self.rng.chance(40);
        if waitall && s == UDP {
            len = have;
        }
        let b = self.out();
        let mut o = if self.rng.chance(50) {
            let mut o = self.op(OP_RECV, Arg::Sock(s, e), Data::Out(b));
            o.sqe.len = len as u32;
            o
        } else {
            self.op(OP_RECVMSG, Arg::Sock(s, e), Data::Msg(vec![len / 3, len - len / 3], Some(b)))
        };
        if waitall && len <= have {
            o.sqe.op_flags = libc::MSG_WAITALL as u32;
        }
        if s == UDP {
            self.udp_queue[e].pop_front();
        } else {
            self.sock_bytes[s][e] -= have.min(len);
        }
        chain.push(o);
        if have == 0 && !eof {
            chain.push(self.link_timeout());
            return false;
        }
        true
    }

    /// CONNECT of a fresh client to the listener, or ACCEPT of what
    /// earlier submissions connected (IORING_ACCEPT_DONTWAIT on an empty
    /// queue: -EAGAIN).
    fn listener_ops(&mut self, chain: &mut Vec<Op>) -> bool {
        // Once this submission connected, the queue's length depends on
        // timing: no accepts then.
        if self.conn_flight > 0 && self.clients_used == CLIENTS {
            return false;
        }
        if self.clients_used < CLIENTS && (self.conn_flight > 0 || self.queued == 0 || self.rng.chance(40)) {
            let c = self.clients_used;
            self.clients_used += 1;
            self.conn_flight += 1;
            chain.push(self.op(OP_CONNECT, Arg::Client(c), Data::None));
            return true;
        }
        let mut o = self.op(OP_ACCEPT, Arg::Listener, Data::None);
        o.sqe.op_flags = libc::SOCK_CLOEXEC as u32;
        if self.queued == 0 {
            o.sqe.ioprio = ACCEPT_DONTWAIT;
            chain.push(o);
            // -EAGAIN ends the chain.
            return false;
        }
        self.queued -= 1;
        chain.push(o);
        true
    }

    fn link_timeout(&mut self) -> Op {
        let mut o = self.op(OP_LINK_TIMEOUT, Arg::None, Data::Ts(2_000_000));
        o.sqe.len = 1;
        o
    }

    fn name_op(&mut self, names: &[usize], slot: u32) -> Op {
        let a = self.rng.pick(names);
        let b = self.rng.pick(names);
        match self.rng.below(8) {
            0 => {
                let mut o = self.op(OP_MKDIRAT, Arg::Names(a, None), Data::None);
                o.sqe.fd = libc::AT_FDCWD;
                o.sqe.len = 0o755;
                o
            }
            1 => {
                let mut o = self.op(OP_UNLINKAT, Arg::Names(a, None), Data::None);
                o.sqe.fd = libc::AT_FDCWD;
                o.sqe.op_flags = if self.rng.chance(40) { libc::AT_REMOVEDIR as u32 } else { 0 };
                o
            }
            2 => {
                let mut o = self.op(OP_RENAMEAT, Arg::Names(a, Some(b)), Data::None);
                o.sqe.fd = libc::AT_FDCWD;
                o.sqe.len = libc::AT_FDCWD as u32;
                o
            }
            3 => {
                let mut o = self.op(OP_LINKAT, Arg::Names(a, Some(b)), Data::None);
                o.sqe.fd = libc::AT_FDCWD;
                o.sqe.len = libc::AT_FDCWD as u32;
                o
            }
            4 => {
                let mut o = self.op(OP_SYMLINKAT, Arg::Names(a, Some(b)), Data::None);
                o.sqe.fd = libc::AT_FDCWD;
                o
            }
            5 => {
                let opc = if self.rng.chance(50) { OP_OPENAT } else { OP_OPENAT2 };
                let mut o = self.op(opc, Arg::Names(a, None), Data::None);
                o.sqe.fd = libc::AT_FDCWD;
                o.sqe.op_flags = (libc::O_RDWR | if self.rng.chance(60) { libc::O_CREAT } else { 0 }) as u32;
                o.sqe.len = 0o644;
                o.sqe.file_index = slot + 1;
                o
            }
            6 => {
                let mut o = self.op(OP_CLOSE, Arg::None, Data::None);
                o.sqe.file_index = slot + 1;
                o
            }
            _ => {
                let buf = self.out();
                let mut o = self.op(OP_STATX, Arg::Names(a, None), Data::Out(buf));
                o.sqe.fd = libc::AT_FDCWD;
                o.sqe.op_flags = libc::AT_SYMLINK_NOFOLLOW as u32;
                o.sqe.len = libc::STATX_BASIC_STATS;
                o
            }
        }
    }

    /// A request on its own: NOPs, timeouts, cancels, epoll, invalid SQEs.
    fn lone_op(&mut self) -> Vec<Op> {
        match self.rng.below(9) {
            0 | 1 => {
                let mut o = self.op(OP_NOP, Arg::None, Data::None);
                if self.rng.chance(40) {
                    o.sqe.op_flags = NOP_INJECT_RESULT;
                    o.sqe.len = self.rng.pick(&[0u32, 7, (-libc::EIO) as u32, (-libc::ENOENT) as u32]);
                }
                if self.rng.chance(40) {
                    self.nop_flags(&mut o);
                }
                vec![o]
            }
            2 => {
                let ns = 1_000_000 + self.rng.below(2_000_000);
                let mut o = self.op(OP_TIMEOUT, Arg::None, Data::Ts(ns));
                o.sqe.len = 1;
                vec![o]
            }
            3 => {
                // A long timeout or a poll on an idle pipe, cancelled later.
                let free: Vec<usize> = (0..PIPES)
                    .filter(|&p| !self.pipe_busy[p] && self.pipe_bytes[p] == 0 && self.pipes_free.contains(&p))
                    .collect();
                if self.drained {
                    let mut o = self.op(OP_NOP, Arg::None, Data::None);
                    o.sqe.flags |= F_ASYNC;
                    return vec![o];
                }
                if self.rng.chance(50) || free.is_empty() {
                    let mut o = self.op(OP_TIMEOUT, Arg::None, Data::Ts(30_000_000_000));
                    o.sqe.len = 1;
                    self.pending.push((o.sqe.user_data, OP_TIMEOUT));
                    self.all_pending.push(o.sqe.user_data);
                    vec![o]
                } else {
                    let p = self.rng.pick(&free);
                    self.pipe_busy[p] = true;
                    self.pipes_free.retain(|&q| q != p);
                    let mut o = self.op(OP_POLL_ADD, Arg::PipeR(p), Data::None);
                    o.sqe.op_flags = libc::POLLIN as u32;
                    self.pending.push((o.sqe.user_data, OP_POLL_ADD + p as u8 * 16));
                    self.all_pending.push(o.sqe.user_data);
                    vec![o]
                }
            }
            4 => {
                // Cancel something finished in an earlier submission (or
                // never there): -ENOENT, whatever the timing.
                let mut o = self.op(OP_ASYNC_CANCEL, Arg::None, Data::None);
                let mut target = self.rng.below(self.batch_start.max(1));
                if self.all_pending.contains(&target) || self.unsure.contains(&target) {
                    target = 0;
                }
                o.sqe.addr = target;
                vec![o]
            }
            5 => {
                let file = if self.rng.chance(60) { Some(self.rng.below(FILES as u64) as usize) } else { None };
                let mut o = self.op(OP_FILES_UPDATE, Arg::None, Data::FdArray(file));
                o.sqe.off = self.rng.pick(&[4u64, 9]);
                o.sqe.len = 1;
                vec![o]
            }
            6 => {
                // One change per pipe and submission: two would race.
                let p = self.rng.below(PIPES as u64) as usize;
                if self.epoll_used.contains(&p) {
                    return vec![self.op(OP_NOP, Arg::None, Data::None)];
                }
                self.epoll_used.push(p);
                let mut o = self.op(OP_EPOLL_CTL, Arg::Epoll(p), Data::Event);
                o.sqe.len = self.rng.pick(&[libc::EPOLL_CTL_ADD, libc::EPOLL_CTL_DEL]) as u32;
                vec![o]
            }
            7 => {
                // Invalid: an unknown opcode, an unknown flag, a reserved field.
                let mut o = self.op(OP_NOP, Arg::None, Data::None);
                match self.rng.below(3) {
                    0 => o.sqe.opcode = 200,
                    1 => o.sqe.flags = 0x80,
                    _ => {
                        o.sqe.opcode = OP_FSYNC;
                        o.sqe.addr = 1;
                        o.arg = Arg::File(0);
                    }
                }
                vec![o]
            }
            _ => {
                let mut o = self.op(OP_NOP, Arg::None, Data::None);
                o.sqe.flags |= F_ASYNC;
                vec![o]
            }
        }
    }

    /// The NOP flags beyond INJECT_RESULT, and MSG_RING data messages
    /// (to the ring itself: the target CQE comes first; to a pipe or a
    /// closed fd: the kernel's errors).
    fn nop_flags(&mut self, o: &mut Op) {
        match self.rng.below(7) {
            0 => {
                o.sqe.op_flags |= NOP_FILE;
                o.arg = Arg::File(self.rng.below(FILES as u64) as usize);
                if self.rng.chance(50) {
                    o.sqe.op_flags |= NOP_FIXED_FILE;
                    o.sqe.flags |= F_FIXED_FILE;
                }
            }
            1 => {
                // A slot past the table, or an fd that is not open (low
                // numbers may be open in one run and not the other).
                let fixed = self.rng.chance(50);
                o.sqe.op_flags |= NOP_FILE | if fixed { NOP_FIXED_FILE } else { 0 };
                o.sqe.fd = if fixed {
                    self.rng.pick(&[FIXED_SLOTS as i32 + 32, 4000, -1])
                } else {
                    self.rng.pick(&[4000, -1])
                };
            }
            2 => {
                o.sqe.op_flags |= NOP_FIXED_BUFFER;
                o.sqe.buf_index = self.rng.pick(&[0u16, 1, 40]);
            }
            3 => o.sqe.op_flags |= NOP_TW,
            4 => o.sqe.op_flags |= self.rng.pick(&[1u32 << 6, 1 << 9, 1 << 31]),
            5 => {
                o.sqe.opcode = OP_MSG_RING;
                o.arg = Arg::Ring;
                o.sqe.op_flags = 0;
                o.sqe.off = o.sqe.user_data | 1 << 48;
                o.sqe.len = self.rng.below(100) as u32;
            }
            _ => {
                o.sqe.opcode = OP_MSG_RING;
                o.sqe.op_flags = 0;
                o.sqe.off = o.sqe.user_data | 1 << 48;
                if self.rng.chance(50) {
                    o.arg = Arg::PipeW(self.rng.below(PIPES as u64) as usize);
                } else {
                    o.sqe.fd = 4001;
                }
            }
        }
    }

    /// Cancels of armed requests: POLL_REMOVE, TIMEOUT_REMOVE or
    /// ASYNC_CANCEL, whichever fits.
    fn cancel_pending(&mut self) -> Vec<Chain> {
        let pend = std::mem::take(&mut self.pending);
        let mut chains = Vec::new();
        for (ud, kind) in pend {
            let by_cancel = self.rng.chance(50);
            let mut o = if by_cancel {
                self.op(OP_ASYNC_CANCEL, Arg::None, Data::None)
            } else if kind == OP_TIMEOUT {
                self.op(OP_TIMEOUT_REMOVE, Arg::None, Data::None)
            } else {
                self.op(OP_POLL_REMOVE, Arg::None, Data::None)
            };
            o.sqe.addr = ud;
            self.cancels.push(o.sqe.user_data);
            if kind != OP_TIMEOUT {
                self.pipe_busy[((kind - OP_POLL_ADD) / 16) as usize] = false;
            }
            chains.push(Chain { ops: vec![o] });
        }
        chains
    }

    fn chain(&mut self, ops: Vec<Op>) -> Chain {
        let mut ops = ops;
        let n = ops.len();
        // Chains with a link timeout get neither skipped successes (they
        // race the timer) nor IOSQE_ASYNC: the kernel runs the members
        // after an async one blocking in its io-wq worker and never arms
        // their link timeout there (a read of an empty pipe then waits for
        // ever); the engine arms it.
        let skip_ok = !ops.iter().any(|o| {
            o.sqe.opcode == OP_LINK_TIMEOUT || matches!(o.arg, Arg::Sock(..) | Arg::Listener | Arg::Client(_))
        });
        for (i, o) in ops.iter_mut().enumerate() {
            if i + 1 < n {
                o.sqe.flags |= if self.rng.chance(25) { F_HARDLINK } else { F_LINK };
            }
            if o.sqe.opcode != OP_LINK_TIMEOUT {
                // Not on requests cancelled later: a punted one may not be
                // armed yet when its cancel arrives.
                if skip_ok && !self.all_pending.contains(&o.sqe.user_data) && self.rng.chance(12) {
                    o.sqe.flags |= F_ASYNC;
                }
                if skip_ok && self.rng.chance(8) && !matches!(o.sqe.opcode, OP_POLL_ADD) {
                    o.sqe.flags |= F_SKIP_SUCCESS;
                }
            }
        }
        if ops.iter().any(|o| o.sqe.flags & F_SKIP_SUCCESS != 0) {
            // Nobody waits for these: they may still run in later batches.
            self.unsure.extend(ops.iter().map(|o| o.sqe.user_data));
        }
        Chain { ops }
    }
}

/// Files, pipes, names and fixed slots (by index).
#[derive(Default)]
struct Taint {
    files: Vec<usize>,
    pipes: Vec<usize>,
    names: Vec<usize>,
    slots: Vec<u32>,
    fixed: Vec<u16>,
}

fn generate(seed: u64) -> Program {
    let mut g = Gen {
        rng: Rng(seed),
        ud: 0,
        outs: 0,
        pipe_bytes: [0; PIPES],
        sock_bytes: [[0; 2]; SOCKS],
        tcp_flight: [[0; 2]; SOCKS],
        eof: [false; 2],
        eof_flight: [false; 2],
        clients_used: 0,
        queued: 0,
        conn_flight: 0,
        udp_queue: Default::default(),
        udp_flight: Default::default(),
        pipe_busy: [false; PIPES],
        pipe_spliced: [false; PIPES],
        pending: Vec::new(),
        all_pending: Vec::new(),
        unsure: Vec::new(),
        skip_seen: false,
        chain_no: 0,
        fixed_owner: [usize::MAX; 2],
        fixed_touched: Vec::new(),
        epoll_used: Vec::new(),
        tainted: Taint::default(),
        cancels: Vec::new(),
        batch_start: 1,
        drained: false,
        pipes_free: Vec::new(),
        tee_ok: false,
        splice_ok: false,
    };
    let files = (0..FILES)
        .map(|_| {
            let n = g.rng.below(6000) as usize;
            (0..n).map(|_| g.rng.next() as u8).collect()
        })
        .collect();
    let nbatches = 2 + g.rng.below(5);
    let mut batches = Vec::new();
    for b in 0..nbatches {
        g.batch_start = g.ud + 1;
        // Loopback sends of the last submission have arrived by now.
        g.queued += std::mem::take(&mut g.conn_flight);
        for e in 0..2 {
            g.eof[e] |= std::mem::take(&mut g.eof_flight[e]);
            for t in [TCP, TCP_SHUT] {
                g.sock_bytes[t][e] += std::mem::take(&mut g.tcp_flight[t][e]);
            }
            let f = std::mem::take(&mut g.udp_flight[e]);
            g.udp_queue[e].extend(f);
        }
        let mut chains = Vec::new();
        if b > 0 && !g.pending.is_empty() && g.rng.chance(60) {
            chains.extend(g.cancel_pending());
        }
        let mut files_free: Vec<usize> = (0..FILES).filter(|f| !g.tainted.files.contains(f)).collect();
        g.pipes_free = (0..PIPES).filter(|p| !g.pipe_busy[*p] && !g.tainted.pipes.contains(p)).collect();
        let mut socks_free: Vec<usize> = (0..SOCKS).collect();
        let mut listener_free = true;
        let mut names_free: Vec<usize> = (0..NAMES).filter(|n| !g.tainted.names.contains(n)).collect();
        g.epoll_used.clear();
        g.fixed_owner = [usize::MAX; 2];
        let mut slots_free: Vec<u32> = OPEN_SLOTS.iter().copied().filter(|s| !g.tainted.slots.contains(s)).collect();
        let nchains = 1 + g.rng.below(6);
        for _ in 0..nchains {
            let len = 1 + g.rng.below(3) as usize;
            let mut ops = Vec::new();
            // What the chain works on.
            let mut used = Taint::default();
            g.chain_no += 1;
            g.fixed_touched.clear();
            match g.rng.below(6) {
                5 if listener_free => {
                    listener_free = false;
                    while ops.len() < len && g.listener_ops(&mut ops) {}
                }
                4 if !socks_free.is_empty() => {
                    let s = socks_free.swap_remove(g.rng.below(socks_free.len() as u64) as usize);
                    while ops.len() < len && g.sock_ops(s, &mut ops) {}
                }
                0 if !files_free.is_empty() => {
                    let f = files_free.swap_remove(g.rng.below(files_free.len() as u64) as usize);
                    used.files.push(f);
                    for _ in 0..len {
                        ops.push(g.file_op(f));
                    }
                }
                1 if !g.pipes_free.is_empty() => {
                    let i = g.rng.below(g.pipes_free.len() as u64) as usize;
                    let p = g.pipes_free.swap_remove(i);
                    // The other pipe and file p may be written by a splice or tee.
                    g.splice_ok = files_free.contains(&p);
                    g.tee_ok = g.pipes_free.contains(&((p + 1) % PIPES));
                    used.pipes.extend([p, (p + 1) % PIPES]);
                    used.files.push(p);
                    files_free.retain(|&f| f != p);
                    g.pipes_free.retain(|&q| q != (p + 1) % PIPES);
                    while ops.len() < len && g.pipe_ops(p, &mut ops) {}
                }
                2 if names_free.len() >= 2 && !slots_free.is_empty() => {
                    let a = names_free.swap_remove(g.rng.below(names_free.len() as u64) as usize);
                    let b = names_free.swap_remove(g.rng.below(names_free.len() as u64) as usize);
                    let slot = slots_free.pop().unwrap();
                    used.names.extend([a, b]);
                    used.slots.push(slot);
                    for _ in 0..len {
                        ops.push(g.name_op(&[a, b], slot));
                    }
                }
                _ => ops.extend(g.lone_op()),
            }
            if ops.is_empty() {
                continue;
            }
            let mut c = g.chain(ops);
            if c.ops.iter().any(|o| o.sqe.flags & F_SKIP_SUCCESS != 0) {
                // Nothing tells when a chain with skipped CQEs is done (the
                // kernel may run its members late, in io-wq or in deferred
                // task work): later submissions keep off what it uses.
                g.tainted.files.extend(used.files);
                g.tainted.pipes.extend(used.pipes);
                g.tainted.names.extend(used.names);
                g.tainted.slots.extend(used.slots);
                g.tainted.fixed.extend(g.fixed_touched.iter().copied());
            }
            // Drains: only while nothing stays armed, and the kernel refuses
            // them once a skipped success was seen (checked both ways).
            // A refused drain (after a skip) fails its chain: nothing it
            // would do to a pipe happens, which the pipe model cannot
            // follow; such chains get none.
            let skip_seen = g.skip_seen || c.ops[0].sqe.flags & F_SKIP_SUCCESS != 0;
            let piped = c.ops.iter().any(|o| {
                matches!(o.arg, Arg::PipeR(_) | Arg::PipeW(_) | Arg::Sock(..) | Arg::Listener | Arg::Client(_))
            });
            g.skip_seen |= c.ops.iter().any(|o| o.sqe.flags & F_SKIP_SUCCESS != 0);
            if g.pending.is_empty() && !(skip_seen && piped) && g.rng.chance(10) {
                c.ops[0].sqe.flags |= F_DRAIN;
                g.drained = true;
            }
            chains.push(c);
        }
        batches.push(chains);
    }
    let last = g.cancel_pending();
    if !last.is_empty() {
        batches.push(last);
    }
    let taskrun =
        g.rng.pick(&[0, 0, SETUP_COOP_TASKRUN | SETUP_TASKRUN_FLAG, SETUP_SINGLE_ISSUER | SETUP_DEFER_TASKRUN]);
    // One program in six runs on SQPOLL rings (which take no task-run
    // flags), chosen by seed so the others stay as they were.
    let setup_flags = SETUP_NO_SQARRAY
        | if g.rng.chance(30) { SETUP_SUBMIT_ALL } else { 0 }
        | if seed % 6 == 5 { SETUP_SQPOLL } else { taskrun };
    Program { seed, files, batches, pending: g.all_pending, cancels: g.cancels, outs: g.outs, setup_flags }
}

// ---------------------------------------------------------------- running

struct RunResult {
    /// user_data -> (res, flags) of every CQE, in arrival order.
    cqes: Vec<(u64, i32, u32)>,
    /// What each out-buffer holds after the run.
    outs: Vec<Vec<u8>>,
    /// The directory afterwards: name -> description.
    dir: BTreeMap<String, String>,
}

struct Env {
    dir: PathBuf,
    fds: Vec<i32>,
    pipes: Vec<[i32; 2]>,
    socks: Vec<[i32; 2]>,
    listener: i32,
    laddr: Box<libc::sockaddr_in>,
    clients: Vec<i32>,
    epfd: i32,
    /// Set once the run's ring exists.
    ring_fd: i32,
    names: Vec<CString>,
    outs: Vec<Vec<u8>>,
    fixed: Vec<Vec<u8>>,
    /// Buffers that must stay put until the run ends.
    keep: Vec<Vec<u8>>,
    keep_iov: Vec<Vec<libc::iovec>>,
    keep_ts: Vec<Box<KernelTimespec>>,
    keep_fds: Vec<Box<i32>>,
    keep_ev: Vec<Box<libc::epoll_event>>,
    keep_msg: Vec<Box<libc::msghdr>>,
}

fn pattern(seed: u64, n: usize) -> Vec<u8> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.next() as u8).collect()
}

fn setup_dir(prog: &Program, tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("liburing-rs-fuzz-{}-{}-{}", std::process::id(), prog.seed, tag));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    for (i, f) in prog.files.iter().enumerate() {
        std::fs::write(dir.join(format!("f{i}")), f).unwrap();
    }
    dir
}

fn open_env(prog: &Program, dir: &Path) -> Env {
    let fds = (0..FILES)
        .map(|i| {
            let p = CString::new(dir.join(format!("f{i}")).to_str().unwrap()).unwrap();
            // SAFETY: a NUL-terminated path.
            let fd = unsafe { libc::open(p.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
            assert!(fd >= 0);
            fd
        })
        .collect();
    let pipes = (0..PIPES)
        .map(|_| {
            let mut p = [0i32; 2];
            // SAFETY: a live two-int array.
            assert_eq!(unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
            p
        })
        .collect();
    let socks = (0..SOCKS)
        .map(|i| match i {
            TCP | TCP_SHUT => tcp_pair(),
            UDP => udp_pair(),
            _ => {
                let mut p = [0i32; 2];
                // SAFETY: a live two-int array.
                assert_eq!(
                    unsafe {
                        libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, p.as_mut_ptr())
                    },
                    0
                );
                p
            }
        })
        .collect();
    let (listener, laddr) = loopback(libc::SOCK_STREAM);
    // SAFETY: a socket made here.
    assert_eq!(unsafe { libc::listen(listener, CLIENTS as i32) }, 0);
    // SAFETY: plain socket creation.
    let clients = (0..CLIENTS)
        .map(|_| unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) })
        .collect();
    let names = (0..NAMES).map(|i| CString::new(dir.join(format!("n{i}")).to_str().unwrap()).unwrap()).collect();
    Env {
        dir: dir.to_path_buf(),
        fds,
        pipes,
        socks,
        listener,
        laddr: Box::new(laddr),
        clients,
        // SAFETY: plain fd creation.
        epfd: unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) },
        ring_fd: -1,
        names,
        outs: vec![vec![0u8; BUF_SIZE]; prog.outs],
        fixed: vec![pattern(prog.seed ^ 0xf1, BUF_SIZE), pattern(prog.seed ^ 0xf2, BUF_SIZE)],
        keep: Vec::new(),
        keep_iov: Vec::new(),
        keep_ts: Vec::new(),
        keep_fds: Vec::new(),
        keep_ev: Vec::new(),
        keep_msg: Vec::new(),
    }
}

/// A loopback socket of `ty` bound to an ephemeral port, and its address.
fn loopback(ty: i32) -> (i32, libc::sockaddr_in) {
    // SAFETY: plain socket calls on live, local structs.
    unsafe {
        let fd = libc::socket(libc::AF_INET, ty | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let mut a: libc::sockaddr_in = std::mem::zeroed();
        a.sin_family = libc::AF_INET as u16;
        a.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
        let sl = std::mem::size_of::<libc::sockaddr_in>() as u32;
        assert_eq!(libc::bind(fd, &a as *const _ as *const libc::sockaddr, sl), 0);
        let mut l = sl;
        assert_eq!(libc::getsockname(fd, &mut a as *mut _ as *mut libc::sockaddr, &mut l), 0);
        (fd, a)
    }
}

fn connect_to(fd: i32, a: &libc::sockaddr_in) {
    let sl = std::mem::size_of::<libc::sockaddr_in>() as u32;
    // SAFETY: a live address of that length.
    assert_eq!(unsafe { libc::connect(fd, a as *const _ as *const libc::sockaddr, sl) }, 0);
}

/// A connected loopback TCP pair (client, server), Nagle off.
fn tcp_pair() -> [i32; 2] {
    let (l, a) = loopback(libc::SOCK_STREAM);
    // SAFETY: plain socket calls on fds made here.
    unsafe {
        assert_eq!(libc::listen(l, 1), 0);
        let c = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        connect_to(c, &a);
        let s = libc::accept4(l, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC);
        assert!(s >= 0);
        libc::close(l);
        let one = 1i32;
        for fd in [c, s] {
            libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, &one as *const i32 as *const c_void, 4);
        }
        [c, s]
    }
}

/// Two loopback UDP sockets connected to each other.
fn udp_pair() -> [i32; 2] {
    let (x, ax) = loopback(libc::SOCK_DGRAM);
    let (y, ay) = loopback(libc::SOCK_DGRAM);
    connect_to(x, &ay);
    connect_to(y, &ax);
    [x, y]
}

/// Resolves an op against one run's fds, paths and buffers.
fn resolve(env: &mut Env, op: &Op) -> Sqe {
    let mut s = op.sqe.clone();
    match op.arg {
        Arg::None => {}
        Arg::File(i) => s.fd = if s.flags & F_FIXED_FILE != 0 { i as i32 } else { env.fds[i] },
        Arg::PipeR(p) => s.fd = env.pipes[p][0],
        Arg::PipeW(p) => s.fd = env.pipes[p][1],
        Arg::Sock(i, e) => s.fd = env.socks[i][e],
        Arg::Listener => s.fd = env.listener,
        Arg::Client(c) => {
            s.fd = env.clients[c];
            s.addr = &*env.laddr as *const libc::sockaddr_in as u64;
            s.off = std::mem::size_of::<libc::sockaddr_in>() as u64;
        }
        Arg::Names(a, b) => {
            s.addr = env.names[a].as_ptr() as u64;
            if let Some(b) = b {
                s.off = env.names[b].as_ptr() as u64;
            }
        }
        Arg::Epoll(p) => {
            s.fd = env.epfd;
            s.off = env.pipes[p][0] as u64;
        }
        Arg::Ring => s.fd = env.ring_fd,
    }
    if matches!(s.opcode, OP_SPLICE | OP_TEE) {
        s.file_index = env.pipes[s.file_index as usize][0] as u32;
    }
    if s.opcode == OP_STATX && matches!(op.arg, Arg::File(_)) {
        s.addr = c"".as_ptr() as u64;
    }
    match &op.data {
        Data::None => {}
        Data::Out(b) => {
            let p = env.outs[*b].as_mut_ptr() as u64;
            if s.opcode == OP_STATX {
                s.off = p;
            } else if s.opcode == OP_FGETXATTR {
                s.addr = c"user.fuzz".as_ptr() as u64;
                s.off = p;
            } else {
                s.addr = p;
            }
        }
        Data::In(seed) => {
            env.keep.push(pattern(*seed, s.len as usize));
            s.addr = env.keep.last().unwrap().as_ptr() as u64;
        }
        Data::Vec(lens, out) | Data::Msg(lens, out) => {
            let mut iov = Vec::new();
            let mut at = 0;
            for (i, &l) in lens.iter().enumerate() {
                let base = match out {
                    Some(b) => {
                        let p = env.outs[*b][at..].as_mut_ptr();
                        at += l;
                        p
                    }
                    None => {
                        env.keep.push(pattern(s.user_data * 31 + i as u64, l));
                        env.keep.last_mut().unwrap().as_mut_ptr()
                    }
                };
                iov.push(libc::iovec { iov_base: base as *mut c_void, iov_len: l });
            }
            s.addr = iov.as_ptr() as u64;
            s.len = iov.len() as u32;
            if let Data::Msg(..) = &op.data {
                // SAFETY: an all-zero msghdr is valid.
                let mut m: Box<libc::msghdr> = Box::new(unsafe { std::mem::zeroed() });
                m.msg_iov = iov.as_mut_ptr();
                m.msg_iovlen = iov.len();
                s.addr = &*m as *const libc::msghdr as u64;
                s.len = 0;
                env.keep_msg.push(m);
            }
            env.keep_iov.push(iov);
        }
        Data::Fixed(b, at) => s.addr = env.fixed[*b as usize][*at..].as_ptr() as u64,
        Data::Ts(ns) => {
            env.keep_ts.push(Box::new(KernelTimespec {
                tv_sec: (ns / 1_000_000_000) as i64,
                tv_nsec: (ns % 1_000_000_000) as i64,
            }));
            s.addr = &**env.keep_ts.last().unwrap() as *const KernelTimespec as u64;
        }
        Data::Value(v) => {
            env.keep.push(pattern(*v, s.len as usize));
            s.addr = c"user.fuzz".as_ptr() as u64;
            s.off = env.keep.last().unwrap().as_ptr() as u64;
        }
        Data::FdArray(f) => {
            env.keep_fds.push(Box::new(f.map_or(-1, |i| env.fds[i])));
            s.addr = &**env.keep_fds.last().unwrap() as *const i32 as u64;
        }
        Data::Event => {
            env.keep_ev.push(Box::new(libc::epoll_event { events: libc::EPOLLIN as u32, u64: 7 }));
            s.addr = &**env.keep_ev.last().unwrap() as *const libc::epoll_event as u64;
        }
    }
    if s.opcode == OP_OPENAT2 {
        let how = [s.op_flags as u64, if s.op_flags & libc::O_CREAT as u32 != 0 { s.len as u64 } else { 0 }, 0u64];
        env.keep.push(how.iter().flat_map(|v| v.to_ne_bytes()).collect());
        s.off = env.keep.last().unwrap().as_ptr() as u64;
        s.len = 24;
        s.op_flags = 0;
    }
    s
}

fn describe_dir(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        let md = std::fs::symlink_metadata(e.path()).unwrap();
        let d = if md.file_type().is_symlink() {
            format!("symlink -> {:?}", std::fs::read_link(e.path()).unwrap().file_name())
        } else if md.is_dir() {
            "dir".to_string()
        } else {
            let data = std::fs::read(e.path()).unwrap();
            let mut h: u64 = 1469598103934665603;
            for b in &data {
                h = (h ^ *b as u64).wrapping_mul(1099511628211);
            }
            format!("file {} bytes {h:016x} nlink {}", data.len(), std::os::unix::fs::MetadataExt::nlink(&md))
        };
        out.insert(name, d);
    }
    out
}

fn run(lib: &Lib, prog: &Program, engine: &str) -> Result<RunResult, String> {
    let dir = setup_dir(prog, engine);
    let mut env = open_env(prog, &dir);
    std::env::set_var("LIBURING_RS_ENGINE", engine);
    let mut ring = Ring([0; 216]);
    let mut params = [0u8; 120];
    params[8..12].copy_from_slice(&prog.setup_flags.to_ne_bytes());
    params[16..20].copy_from_slice(&SQ_THREAD_IDLE_MS.to_ne_bytes());
    // SAFETY: live ring and params of the sizes the library expects.
    let ret = unsafe { (lib.queue_init_params)(64, &mut ring, params.as_mut_ptr()) };
    if ret < 0 {
        return Err(format!("{engine} ring setup failed: {ret}"));
    }
    // struct io_uring's ring_fd (liburing 2.15's layout).
    env.ring_fd = i32::from_ne_bytes(ring.0[196..200].try_into().unwrap());
    let want = if engine == "user" { 1 } else { 0 };
    // SAFETY: a ring just set up.
    assert_eq!(unsafe { (lib.ring_engine)(&ring) }, want, "engine of the {engine} ring");
    let mut fixed = vec![-1i32; FIXED_SLOTS as usize];
    fixed[..FILES].copy_from_slice(&env.fds);
    let iov: Vec<libc::iovec> = env
        .fixed
        .iter_mut()
        .map(|b| libc::iovec { iov_base: b.as_mut_ptr() as *mut c_void, iov_len: BUF_SIZE })
        .collect();
    // SAFETY: arrays of the counts given, alive for the call.
    unsafe {
        assert_eq!((lib.register_files)(&mut ring, fixed.as_ptr(), FIXED_SLOTS), 0);
        assert_eq!((lib.register_buffers)(&mut ring, iov.as_ptr(), iov.len() as u32), 0);
    }
    let mut cqes = Vec::new();
    for (bi, batch) in prog.batches.iter().enumerate() {
        // What the last submission sent on loopback TCP or UDP has crossed
        // (softirq work may lag behind the send's CQE).
        if bi > 0
            && prog.batches[bi - 1].iter().flat_map(|c| c.ops.iter()).any(|o| matches!(o.arg, Arg::Sock(TCP | UDP, _)))
        {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // The CQEs this submission must produce: every request's but those
        // that may skip theirs and those that stay armed, plus the
        // requests that its cancels take down.
        let mut expect: Vec<u64> = Vec::new();
        let mut n = 0;
        for chain in batch {
            // After a member that may skip its CQE, the rest of the chain
            // may be cancelled silently (if that member fails).
            let mut silent = false;
            for op in &chain.ops {
                let s = resolve(&mut env, op);
                // SAFETY: get_sqe hands out a 64-byte slot of this ring.
                unsafe {
                    let p = (lib.get_sqe)(&mut ring);
                    assert!(!p.is_null(), "SQ full");
                    s.write(p);
                }
                n += 1;
                let armed = prog.pending.contains(&op.sqe.user_data);
                silent |= op.sqe.flags & F_SKIP_SUCCESS != 0;
                if !silent && !armed {
                    expect.push(op.sqe.user_data);
                }
                if prog.cancels.contains(&op.sqe.user_data) {
                    expect.push(op.sqe.addr);
                }
            }
        }
        let mut submitted = 0;
        if prog.setup_flags & SETUP_SQPOLL != 0 {
            // The SQ thread takes the SQEs once the tail moves; submit
            // tells how many it had not taken yet, which may include the
            // last of an earlier batch (one whose CQE is skipped).
            // SAFETY: the ring is live.
            let r = unsafe { (lib.submit)(&mut ring) };
            if r < 0 {
                return Err(format!("{engine}: submit on an SQPOLL ring returned {r} for {n}"));
            }
            submitted = n;
        }
        while submitted < n {
            // SAFETY: the ring is live.
            let r = unsafe { (lib.submit)(&mut ring) };
            if r <= 0 {
                return Err(format!("{engine}: submit returned {r} after {submitted} of {n}"));
            }
            submitted += r;
        }
        // Nothing expected: only a short look for stray CQEs.
        let ms = if expect.is_empty() { 30 } else { 3000 };
        if let Err(e) = collect(lib, &mut ring, &mut cqes, &expect, ms) {
            return Err(format!("{engine}, after {:?}: {e}", cqes));
        }
        // With DEFER_TASKRUN the kernel issues the links that follow a
        // completion only when the ring is asked for events, one link per
        // pass when the completion itself ran as task work (after a
        // drain, say): let that happen before the next submission, as a
        // program waiting for more CQEs would.
        for _ in 0..4 {
            // SAFETY: the ring is live.
            unsafe { (lib.get_events)(&mut ring) };
        }
    }
    // CQEs still owed: left to run, such a request may act on an fd
    // number the next run has reused (a kernel's io-wq or SQPOLL thread
    // resolves plain fds when it issues).
    loop {
        let owed = owed(prog, &cqes);
        if owed.is_empty() {
            break;
        }
        // One CQE at a time: the one that comes may show that the rest of
        // its link was dropped.
        if let Err(r) = next_cqe(lib, &mut ring, &mut cqes, 3000) {
            return Err(format!("{engine}, after {:?}: waiting for CQEs: {r}, still owed {owed:?}", cqes));
        }
    }
    // Stragglers (CQEs of skipped successes that failed, and the like).
    collect(lib, &mut ring, &mut cqes, &[], 30).ok();
    // SAFETY: the ring is live and done with.
    unsafe { (lib.queue_exit)(&mut ring) };
    let ops: HashMap<u64, &Op> =
        prog.batches.iter().flatten().flat_map(|c| c.ops.iter()).map(|o| (o.sqe.user_data, o)).collect();
    // Accepted connections.
    let accepted =
        cqes.iter().filter(|c| c.1 >= 0 && ops.get(&c.0).is_some_and(|o| o.sqe.opcode == OP_ACCEPT)).map(|c| c.1);
    let accepted: Vec<i32> = accepted.collect();
    let sockets = env.socks.iter().flatten().chain(env.clients.iter()).chain([&env.listener]).chain(accepted.iter());
    // A request that skips its CQE on success says nothing when it is done,
    // and may still run: this run's fds stay open (their numbers taken)
    // until the next run ends.
    let now: Vec<i32> =
        env.fds.iter().chain(env.pipes.iter().flatten()).chain(sockets).chain([&env.epfd]).copied().collect();
    let old = std::mem::replace(&mut *LAST_FDS.lock().unwrap_or_else(|e| e.into_inner()), now);
    for fd in old {
        // SAFETY: fds the previous run opened, no longer used by it.
        unsafe { libc::close(fd) };
    }
    let res = RunResult { cqes, outs: std::mem::take(&mut env.outs), dir: describe_dir(&env.dir) };
    let _ = std::fs::remove_dir_all(&env.dir);
    Ok(res)
}

/// The requests whose CQE has not come yet but will: all but those still
/// armed, those that skip theirs on success, and the members that follow a
/// linked skipping member which failed (the kernel drops the rest of that
/// link's CQEs).
fn owed(prog: &Program, cqes: &[(u64, i32, u32)]) -> Vec<u64> {
    let seen: std::collections::HashSet<u64> = cqes.iter().map(|c| c.0).collect();
    let mut owed = Vec::new();
    for chain in prog.batches.iter().flatten() {
        let mut dropped = false;
        let mut linked = false;
        for op in &chain.ops {
            let f = op.sqe.flags;
            let ud = op.sqe.user_data;
            if !linked {
                dropped = false;
            }
            if !dropped && f & F_SKIP_SUCCESS == 0 && !seen.contains(&ud) && !prog.pending.contains(&ud) {
                owed.push(ud);
            }
            linked = f & (F_LINK | F_HARDLINK) != 0;
            // A hard link drops them too when the failure came at submission
            // (the kernel fails such a link as a soft one); not waiting is
            // the safe side.
            dropped |= f & F_SKIP_SUCCESS != 0 && linked && seen.contains(&ud);
        }
    }
    owed
}

/// Collects CQEs until every user_data in `want` has one (with `want`
/// empty: until none comes for `ms`).
fn collect(lib: &Lib, ring: &mut Ring, out: &mut Vec<(u64, i32, u32)>, want: &[u64], ms: i64) -> Result<(), String> {
    let mut missing: std::collections::HashSet<u64> = want.iter().copied().collect();
    loop {
        if !want.is_empty() && missing.is_empty() {
            return Ok(());
        }
        if let Err(r) = next_cqe(lib, ring, out, ms) {
            if want.is_empty() {
                return Ok(());
            }
            return Err(format!("waiting for CQEs: {r}, still missing {missing:?}"));
        }
        missing.remove(&out[out.len() - 1].0);
    }
}

/// Reaps one CQE into `out`, waiting up to `ms`; the wait's error if none
/// came.
fn next_cqe(lib: &Lib, ring: &mut Ring, out: &mut Vec<(u64, i32, u32)>, ms: i64) -> Result<(), i32> {
    let mut ts = KernelTimespec { tv_sec: ms / 1000, tv_nsec: (ms % 1000) * 1_000_000 };
    let mut cqe: *mut Cqe = std::ptr::null_mut();
    // SAFETY: a live ring; the CQE pointer is valid until cqe_seen.
    let r = unsafe { (lib.wait_cqe_timeout)(ring, &mut cqe, &mut ts) };
    if r < 0 {
        return Err(r);
    }
    // SAFETY: as above.
    let c = unsafe { *cqe };
    // SAFETY: as above.
    unsafe { (lib.cqe_seen)(ring, cqe) };
    out.push((c.user_data, c.res, c.flags));
    Ok(())
}

// ---------------------------------------------------------------- checking

/// Statx fields that do not depend on when or where the run happened.
fn statx_digest(b: &[u8]) -> (u32, u16, u32, u64) {
    let mask = u32::from_ne_bytes(b[0..4].try_into().unwrap());
    let nlink = u32::from_ne_bytes(b[16..20].try_into().unwrap());
    let mode = u16::from_ne_bytes(b[28..30].try_into().unwrap());
    let size = u64::from_ne_bytes(b[40..48].try_into().unwrap());
    // A symlink's size is its target's length, and targets name the run's
    // own directory.
    let size = if u32::from(mode) & libc::S_IFMT == libc::S_IFLNK { 0 } else { size };
    (mask & libc::STATX_BASIC_STATS, mode, nlink, size)
}

/// The orderings the kernel guarantees, checked on one run.
fn check_order(prog: &Program, r: &RunResult, engine: &str) -> Result<(), String> {
    let pos: HashMap<u64, usize> = r.cqes.iter().enumerate().map(|(i, c)| (c.0, i)).collect();
    let mut before: Vec<u64> = Vec::new();
    for batch in &prog.batches {
        for chain in batch {
            let head = &chain.ops[0];
            // Only a drained request that ran: one refused at submission
            // completes at once.
            let drained =
                head.sqe.flags & F_DRAIN != 0 && pos.get(&head.sqe.user_data).is_some_and(|&i| r.cqes[i].1 >= 0);
            if drained {
                if let Some(&h) = pos.get(&head.sqe.user_data) {
                    for ud in &before {
                        if let Some(&p) = pos.get(ud) {
                            if p > h {
                                return Err(format!("{engine}: drained {} completed before {ud}", head.sqe.user_data));
                            }
                        }
                    }
                }
            }
            let mut last = None;
            for op in &chain.ops {
                if op.sqe.opcode == OP_LINK_TIMEOUT {
                    continue;
                }
                if let Some(&p) = pos.get(&op.sqe.user_data) {
                    if last.is_some_and(|l| p < l) {
                        return Err(format!(
                            "{engine}: chain member {} completed before the one ahead of it",
                            op.sqe.user_data
                        ));
                    }
                    last = Some(p);
                }
            }
            before.extend(chain.ops.iter().map(|o| o.sqe.user_data));
        }
    }
    Ok(())
}

fn compare(prog: &Program, k: &RunResult, u: &RunResult) -> Result<(), String> {
    check_order(prog, k, "kernel")?;
    check_order(prog, u, "engine")?;
    let ops: HashMap<u64, &Op> =
        prog.batches.iter().flatten().flat_map(|c| c.ops.iter()).map(|o| (o.sqe.user_data, o)).collect();
    let map = |r: &RunResult| {
        let mut m: BTreeMap<u64, Vec<(i32, u32)>> = BTreeMap::new();
        for &(ud, res, flags) in &r.cqes {
            // An accepted fd's number is the run's own: compare "an fd".
            let accept = ops.get(&ud).is_some_and(|o| o.sqe.opcode == OP_ACCEPT);
            let res = if accept && res >= 0 { i32::MAX } else { res };
            m.entry(ud).or_default().push((res, flags));
        }
        m
    };
    let (km, um) = (map(k), map(u));
    for ud in km.keys().chain(um.keys()) {
        let (kv, uv) = (km.get(ud), um.get(ud));
        if kv != uv {
            return Err(format!("user_data {ud} ({:?}): kernel {kv:?}, engine {uv:?}", ops.get(ud).map(|o| &o.sqe)));
        }
        let Some(op) = ops.get(ud) else { continue };
        let res = kv.map_or(-1, |v| v[0].0);
        if let (Data::Out(b), true) = (&op.data, res >= 0) {
            let (kb, ub) = (&k.outs[*b], &u.outs[*b]);
            let same = if op.sqe.opcode == OP_STATX {
                statx_digest(kb) == statx_digest(ub)
            } else {
                kb[..res as usize] == ub[..res as usize]
            };
            if !same {
                return Err(format!("user_data {ud}: data differs ({:?})", op.sqe));
            }
        }
        if let (Data::Vec(_, Some(b)) | Data::Msg(_, Some(b)), true) = (&op.data, res > 0) {
            if k.outs[*b][..res as usize] != u.outs[*b][..res as usize] {
                return Err(format!("user_data {ud}: readv data differs"));
            }
        }
    }
    if k.dir != u.dir {
        return Err(format!("directories differ:\n kernel {:?}\n engine {:?}", k.dir, u.dir));
    }
    Ok(())
}

fn kernel_available() -> bool {
    let mut params = [0u8; 120];
    // SAFETY: a zeroed io_uring_params of the kernel's size.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, params.as_mut_ptr()) };
    if fd >= 0 {
        // SAFETY: the ring just made.
        unsafe { libc::close(fd as i32) };
        return true;
    }
    false
}

/// Both tests switch LIBURING_RS_ENGINE for the whole process: one at a time.
static ENV_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
/// The fds of the last run, closed at the end of the next one.
static LAST_FDS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Checks the seeds FUZZ_SEED (default 1) onwards, FUZZ_N of them (default
/// `default_n`, at most `max_n`), printing each one `check` fails after
/// `prefix`. Gives back how many, the first and the failing seeds, and
/// LIBURING_RS_ENGINE as it was (the runs set it).
fn over_seeds(
    prefix: &str,
    default_n: u64,
    max_n: u64,
    mut check: impl FnMut(u64) -> Result<(), String>,
) -> (u64, u64, Vec<u64>) {
    let n: u64 = std::env::var("FUZZ_N").ok().and_then(|v| v.parse().ok()).map_or(default_n, |v: u64| v.min(max_n));
    let first: u64 = std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let saved = std::env::var("LIBURING_RS_ENGINE").ok();
    let mut failures = Vec::new();
    for seed in first..first + n {
        if let Err(e) = check(seed) {
            eprintln!("{prefix}seed {seed}: {e}");
            failures.push(seed);
        }
    }
    match saved {
        Some(v) => std::env::set_var("LIBURING_RS_ENGINE", v),
        None => std::env::remove_var("LIBURING_RS_ENGINE"),
    }
    (n, first, failures)
}

#[test]
fn engine_matches_kernel() {
    let _env = ENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let lib = match Lib::load() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("engine_differential: not run: {e}");
            return;
        }
    };
    if !kernel_available() {
        eprintln!("engine_differential: not run: the kernel refuses io_uring, nothing to compare with");
        return;
    }
    let mut sqes = 0;
    let (n, first, failures) = over_seeds("", 150, u64::MAX, |seed| {
        let prog = generate(seed);
        sqes += prog.batches.iter().flatten().map(|c| c.ops.len()).sum::<usize>();
        let t0 = std::time::Instant::now();
        let k = run(&lib, &prog, "kernel");
        let t1 = std::time::Instant::now();
        let u = run(&lib, &prog, "user");
        if std::env::var("FUZZ_TIME").is_ok() {
            eprintln!("seed {seed}: kernel {:?} engine {:?}", t1 - t0, t1.elapsed());
        }
        if std::env::var("FUZZ_VERBOSE").is_ok() {
            eprintln!("setup flags {:#x}", prog.setup_flags);
            for (i, b) in prog.batches.iter().enumerate() {
                for c in b {
                    let full = std::env::var("FUZZ_VERBOSE").as_deref() == Ok("2");
                    let ops: Vec<String> = c
                        .ops
                        .iter()
                        .map(|o| match full {
                            true => format!("{:?} {:?} {:?}", o.sqe, o.arg, o.data),
                            false => format!("{}:op{} f{:#x} {:?}", o.sqe.user_data, o.sqe.opcode, o.sqe.flags, o.arg),
                        })
                        .collect();
                    eprintln!("batch {i}: {}", ops.join(" -> "));
                }
            }
            for (name, r) in [("kernel", &k), ("engine", &u)] {
                if let Ok(r) = r {
                    eprintln!("{name}: {:?}", r.cqes);
                }
            }
        }
        match (k, u) {
            (Ok(k), Ok(u)) => compare(&prog, &k, &u),
            (Err(e), _) | (_, Err(e)) => Err(e),
        }
    });
    eprintln!("engine_differential: {n} programs ({sqes} SQEs) from seed {first}, {} differ", failures.len());
    assert!(
        failures.is_empty(),
        "seeds where the engine differs from the kernel: {failures:?} (rerun one with FUZZ_SEED=s FUZZ_N=1)"
    );
}

// ------------------------------------------- multishot with provided buffers

const OP_READ_MULTISHOT: u8 = 49;
const SETUP_CQSIZE: u32 = 1 << 3;
const F_BUFFER_SELECT: u8 = 1 << 5;
const RECV_MULTISHOT: u16 = 1 << 1;
const RECVSEND_BUNDLE: u16 = 1 << 4;
const PBUF_RING_INC: u32 = 2;
const CQE_F_BUFFER: u32 = 1;
const CQE_F_MORE: u32 = 2;
const CQE_F_BUF_MORE: u32 = 1 << 4;

/// One provided-buffer program: a multishot receiver (READ_MULTISHOT on a
/// pipe, or RECV multishot on a unix stream, maybe bundled or capped) fed
/// by a buffer ring, and steps that write chunks, give buffers back and
/// re-arm the receiver once it ended.
#[derive(Debug)]
struct KbProgram {
    pipe: bool,
    entries: u32,
    buf_len: u32,
    inc: bool,
    ioprio: u16,
    cap: u32,
    setup_flags: u32,
    /// Chunk sizes written, one per step (0: close the writer).
    steps: Vec<usize>,
}

fn kb_generate(seed: u64) -> KbProgram {
    let mut r = Rng(seed ^ 0x6b62_7566);
    let pipe = r.chance(40);
    let inc = !pipe && r.chance(25) || pipe && r.chance(30);
    let mut ioprio = 0;
    let mut cap = 0;
    if !pipe {
        ioprio = RECV_MULTISHOT;
        if !inc && r.chance(40) {
            ioprio |= RECVSEND_BUNDLE;
        }
        if r.chance(30) {
            cap = 1 + r.below(40) as u32;
        }
    }
    let setup_flags = r.pick(&[0, SETUP_COOP_TASKRUN | SETUP_TASKRUN_FLAG, SETUP_SINGLE_ISSUER | SETUP_DEFER_TASKRUN]);
    let mut steps: Vec<usize> = (0..3 + r.below(8)).map(|_| 1 + r.below(300) as usize).collect();
    if r.chance(50) {
        steps.push(0);
    }
    KbProgram {
        pipe,
        entries: r.pick(&[2, 4, 8, 16]),
        buf_len: r.pick(&[8, 32, 100, 512]),
        inc,
        ioprio,
        cap,
        setup_flags,
        steps,
    }
}

/// What a run saw: per CQE (res, flags, the bytes it names).
type KbSeen = Vec<(i32, u32, Vec<u8>)>;

fn kb_run(lib: &Lib, p: &KbProgram, engine: &str) -> Result<KbSeen, String> {
    std::env::set_var("LIBURING_RS_ENGINE", engine);
    let mut ring = Ring([0; 216]);
    let mut params = [0u8; 120];
    // A CQ larger than any burst: a kernel ring runs a burst in the
    // waiter's own task, where a full CQ would end the multishot, while
    // the engine's reactor posts as the program reaps.
    params[4..8].copy_from_slice(&1024u32.to_ne_bytes());
    params[8..12].copy_from_slice(&(p.setup_flags | SETUP_CQSIZE).to_ne_bytes());
    // SAFETY: live ring and params of the sizes the library expects.
    if unsafe { (lib.queue_init_params)(64, &mut ring, params.as_mut_ptr()) } < 0 {
        return Err(format!("{engine}: setup failed"));
    }
    let mut fds = [0i32; 2];
    // SAFETY: a two-int array.
    let ok = unsafe {
        if p.pipe {
            libc::pipe(fds.as_mut_ptr())
        } else {
            libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr())
        }
    };
    assert_eq!(ok, 0);
    let mut mem = vec![0u8; (p.entries * p.buf_len) as usize];
    let mut err = 0;
    let flags = if p.inc { PBUF_RING_INC } else { 0 };
    // SAFETY: a live ring; the library returns the ring or null.
    let br = unsafe { (lib.setup_buf_ring)(&mut ring, p.entries, 1, flags, &mut err) };
    if br.is_null() {
        return Err(format!("{engine}: setup_buf_ring {err}"));
    }
    let mask = p.entries as i32 - 1;
    let give = |bid: u16, mem: &mut Vec<u8>| {
        let at = bid as usize * p.buf_len as usize;
        mem[at..at + p.buf_len as usize].fill(0xee);
        // SAFETY: br is a live ring of `entries` entries; the buffer lies in `mem`.
        unsafe {
            (lib.buf_ring_add)(br, mem.as_mut_ptr().add(at) as *mut c_void, p.buf_len, bid, mask, 0);
            (lib.buf_ring_advance)(br, 1);
        }
    };
    for b in 0..p.entries as u16 {
        give(b, &mut mem);
    }
    let rfd = fds[0];
    let arm = |ring: &mut Ring| {
        let s = Sqe {
            opcode: if p.pipe { OP_READ_MULTISHOT } else { OP_RECV },
            flags: F_BUFFER_SELECT,
            fd: rfd,
            len: p.cap,
            user_data: 7,
            buf_index: 1,
            ..Default::default()
        };
        // SAFETY: get_sqe hands out a 64-byte slot of this ring.
        unsafe {
            let slot = (lib.get_sqe)(ring);
            s.write(slot);
            (slot.add(2) as *mut u16).write_unaligned(p.ioprio);
            assert_eq!((lib.submit)(ring), 1);
        }
    };
    arm(&mut ring);
    let mut seen = Vec::new();
    let mut armed = true;
    let mut written = 0usize;
    let mut got = 0usize;
    let mut held: Vec<u16> = Vec::new();
    // Incremental rings: where the next piece of each buffer starts.
    let mut inc_off = vec![0usize; p.entries as usize];
    let bundle = p.ioprio & RECVSEND_BUNDLE != 0;
    for (i, &len) in p.steps.iter().enumerate() {
        // Phase 0 re-arms an ended receiver and lets it take what is still
        // queued (a DEFER_TASKRUN kernel ring reads only once the program
        // waits); phase 1 writes the step's chunk (or closes) and collects.
        for phase in 0..2 {
            if phase == 0 {
                if armed || got >= written {
                    continue;
                }
                arm(&mut ring);
                armed = true;
            } else if len == 0 {
                // SAFETY: our writer end.
                unsafe { libc::close(fds[1]) };
                fds[1] = -1;
            } else {
                if !armed {
                    arm(&mut ring);
                    armed = true;
                }
                let data: Vec<u8> = (0..len).map(|k| (written + k) as u8 ^ 0x5a).collect();
                // SAFETY: a live buffer of `len` bytes.
                assert_eq!(unsafe { libc::write(fds[1], data.as_ptr() as *const c_void, len) }, len as isize);
                written += len;
            }
            // Collect until everything written was received or the
            // receiver ended (EOF, error, empty ring).
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while armed && (got < written || (phase == 1 && len == 0)) {
                if std::time::Instant::now() > deadline {
                    return Err(format!("{engine}: step {i}: stuck at {got} of {written} bytes"));
                }
                let mut cqe: *mut Cqe = std::ptr::null_mut();
                let mut ts = KernelTimespec { tv_sec: 0, tv_nsec: 100_000_000 };
                // SAFETY: live ring, out pointer and timespec.
                if unsafe { (lib.wait_cqe_timeout)(&mut ring, &mut cqe, &mut ts) } != 0 {
                    continue;
                }
                // SAFETY: the CQE stays valid until marked seen.
                let c = unsafe { *cqe };
                // SAFETY: as above.
                unsafe { (lib.cqe_seen)(&mut ring, cqe) };
                let mut bytes = Vec::new();
                if c.flags & CQE_F_BUFFER != 0 && c.res > 0 {
                    let bid = (c.flags >> 16) as u16;
                    let at = bid as usize * p.buf_len as usize;
                    // Incremental buffers fill on from the last piece; of a
                    // bundle only the first buffer is compared.
                    let start = if p.inc { inc_off[bid as usize] } else { 0 };
                    let n = (c.res as usize).min(p.buf_len as usize - start);
                    bytes = mem[at + start..at + start + n].to_vec();
                    got += c.res as usize;
                    if p.inc {
                        inc_off[bid as usize] += c.res as usize;
                    }
                    if c.flags & CQE_F_BUF_MORE == 0 {
                        held.push(bid);
                    }
                }
                if c.flags & CQE_F_MORE == 0 {
                    armed = false;
                }
                seen.push((c.res, c.flags, bytes));
            }
        }
        // Give back what was used every other step, or once the receiver
        // ended. A bundle's CQE names its first buffer only: bundles run
        // their ring dry and end with -ENOBUFS.
        if (i % 2 == 1 || !armed) && !bundle {
            for b in held.drain(..) {
                inc_off[b as usize] = 0;
                give(b, &mut mem);
            }
        }
    }
    // SAFETY: the ring and buffer ring set up above; our fds.
    unsafe {
        (lib.free_buf_ring)(&mut ring, br, p.entries, 1);
        (lib.queue_exit)(&mut ring);
        libc::close(fds[0]);
        if fds[1] >= 0 {
            libc::close(fds[1]);
        }
    }
    Ok(seen)
}

/// Multishot receivers over provided-buffer rings: the engine's CQE
/// sequence (res, F_MORE, buffer ids, data) equals the kernel's.
#[test]
fn provided_buffers_match_kernel() {
    let _env = ENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Ok(lib) = Lib::load() else {
        eprintln!("provided buffers: not run: no library (run `make lib` first)");
        return;
    };
    if !kernel_available() {
        eprintln!("provided buffers: not run: the kernel refuses io_uring");
        return;
    }
    let (n, first, failures) = over_seeds("provided buffers ", 40, 400, |seed| {
        let p = kb_generate(seed);
        let k = kb_run(&lib, &p, "kernel");
        let u = kb_run(&lib, &p, "user");
        match (k, u) {
            (Ok(k), Ok(u)) if k == u => Ok(()),
            (Ok(k), Ok(u)) => {
                let kf: Vec<_> = k.iter().map(|c| (c.0, c.1)).collect();
                let uf: Vec<_> = u.iter().map(|c| (c.0, c.1)).collect();
                Err(format!("{p:?}\n  kernel {kf:x?}\n  engine {uf:x?}"))
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
        }
    });
    eprintln!("provided buffers: {n} programs from seed {first}, {} differ", failures.len());
    assert!(failures.is_empty(), "seeds where the engine differs: {failures:?} (rerun with FUZZ_SEED=s FUZZ_N=1)");
}
