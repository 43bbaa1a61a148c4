//! The diagnostics themselves, built into `liburing-rs-diag.so` and
//! reached through [`liburing_rs_diag_hooks`], which the library looks up
//! when LIBURING_RS_TRACE or LIBURING_RS_CHECK is set (see `super`).
//!
//! Threads: the settings below are written once, by `init`, before the
//! library lets any hook run. Everything else lives in [`STATE`] behind one
//! mutex that each hook holds for its whole visit, including its writes, so
//! lines from different threads come out whole and in order.

use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::{AtomicI32, AtomicPtr, AtomicU8, Ordering};

use super::check::{self, Batch, Dead, Report};
use super::decode;
use super::json;
use super::out::Out;
use super::state::{self, Flight, State, LANES, STATE};
use super::trace::{self, RegDetail, RingName, Stamp};
use super::view::{Cqe, RingView};
use super::{env, Hooks, Lib, HOOKS_VERSION};
use crate::sys::liburing::IoUring;
use crate::sys::*;

static MODE: AtomicU8 = AtomicU8::new(0);
const TRACE: u8 = 1;
const CHECK: u8 = 2;
const ABORT: u8 = 4;
/// The process whose name the JSON trace gave (0: none yet); a forked
/// child names itself at its first event.
static NAMED: AtomicI32 = AtomicI32::new(0);
/// Where trace lines go (stderr or the LIBURING_RS_TRACE file).
static TRACE_FD: AtomicI32 = AtomicI32::new(2);
/// LIBURING_RS_TRACE_FORMAT: text lines, or a JSON timeline.
static FORMAT: AtomicU8 = AtomicU8::new(TEXT);
const TEXT: u8 = 0;
const JSON: u8 = 1;
/// Library calls at least this long (ns) are slices of the JSON trace.
const CALL_SLICE_NS: u64 = 20_000;
/// The library's services (see `super::Lib`).
static LIB: AtomicPtr<Lib> = AtomicPtr::new(ptr::null_mut());

/// The entry points the library looks up with `dlsym`.
#[no_mangle]
pub static liburing_rs_diag_hooks: Hooks = Hooks { version: HOOKS_VERSION, init, setup, before, after, register, exit };

/// Reads the settings; true when tracing or checking is on.
extern "C" fn init(lib: &'static Lib) -> bool {
    LIB.store(lib as *const Lib as *mut Lib, Ordering::Release);
    let mut mode = 0;
    if let Some(v) = env(c"LIBURING_RS_TRACE") {
        mode |= TRACE;
        match env(c"LIBURING_RS_TRACE_FORMAT") {
            None | Some(b"text") => {}
            Some(b"json") => FORMAT.store(JSON, Ordering::Relaxed),
            Some(other) => {
                let mut o = Out::new(2, -1);
                o.begin()
                    .s("liburing-rs: LIBURING_RS_TRACE_FORMAT ")
                    .quoted(other)
                    .s(" is neither text nor json; tracing as text")
                    .end();
                o.flush();
            }
        }
        if v != b"1" {
            TRACE_FD.store(open_trace_file(v), Ordering::Relaxed);
        }
        if FORMAT.load(Ordering::Relaxed) == JSON {
            start_json(TRACE_FD.load(Ordering::Relaxed));
        }
    }
    if let Some(v) = env(c"LIBURING_RS_CHECK") {
        mode |= CHECK;
        if v == b"abort" {
            mode |= ABORT;
        }
        check::probe_kernel();
    }
    MODE.store(mode, Ordering::Relaxed);
    if mode != 0 {
        extern "C" fn take() {
            STATE.lock();
        }
        extern "C" fn give() {
            STATE.unlock();
        }
        extern "C" fn give_in_child() {
            super::view::FORKED.store(true, Ordering::Relaxed);
            STATE.unlock();
        }
        // SAFETY: plain functions with no preconditions; a failure only
        // leaves fork-time locking to chance.
        unsafe { libc::pthread_atfork(Some(take), Some(give), Some(give_in_child)) };
    }
    mode != 0
}

/// Opens the trace file for appending (`%p` becomes the pid), on a high
/// descriptor out of the program's way; falls back to stderr. Never through
/// a symlink, readable by the owner only, and, for a name with the pid in
/// it, only a file of our own making: a privileged program traced to
/// `/tmp/trace.%p` must not write where another user's link points.
fn open_trace_file(pattern: &[u8]) -> i32 {
    // The path is built in an Out (never flushed): it formats the pid and
    // keeps the length bounded. It stays NUL-terminated: Out starts zeroed.
    let mut path = Out::new(-1, -1);
    path.begin();
    let mut rest = pattern;
    while let Some(at) = rest.windows(2).position(|w| w == b"%p") {
        let (before, after) = rest.split_at(at);
        // SAFETY: no preconditions.
        path.put(before).u(unsafe { libc::getpid() } as u64);
        rest = after.get(2..).unwrap_or(&[]);
    }
    path.put(rest);
    let name = path.text();
    let mut flags = libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    if pattern.windows(2).any(|w| w == b"%p") {
        flags |= libc::O_EXCL;
    }
    // SAFETY: name is followed by at least one zero byte in path's buffer
    // (a line holds at most LINE_MAX bytes of a much larger buffer).
    let fd = unsafe { libc::open(name.as_ptr().cast(), flags, 0o600) };
    if fd < 0 {
        let err = errno();
        let mut o = Out::new(2, -1);
        o.begin()
            .s("liburing-rs: cannot open LIBURING_RS_TRACE file ")
            .quoted(name)
            .s(" (")
            .res(-err)
            .s("), tracing to stderr")
            .end();
        o.flush();
        return 2;
    }
    // SAFETY: fd is ours; F_DUPFD_CLOEXEC makes a copy at or above 100.
    let high = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 100) };
    if high < 0 {
        return fd;
    }
    // SAFETY: fd is ours and replaced by `high`.
    unsafe { libc::close(fd) };
    high
}

fn errno() -> i32 {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// Opens the JSON array, unless the file already holds one (a name
/// without `%p` that earlier runs appended to).
fn start_json(fd: i32) {
    // SAFETY: all-zero bytes are a valid stat buffer.
    let mut sb: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: sb is ours to fill.
    if unsafe { libc::fstat(fd, &mut sb) } == 0 && sb.st_mode & libc::S_IFMT == libc::S_IFREG && sb.st_size > 0 {
        return;
    }
    let mut o = Out::new(fd, -1);
    o.page_safe();
    // SAFETY: no preconditions.
    let pid = unsafe { libc::getpid() };
    json::header(&mut o, pid, true);
    NAMED.store(pid, Ordering::Relaxed);
    o.flush();
}

fn json() -> bool {
    FORMAT.load(Ordering::Relaxed) == JSON
}

/// The two outputs of one hook visit: trace lines, and check lines (to
/// stderr, and into the trace file too when there is one).
struct Outs {
    trace: Out,
    check: Out,
    mode: u8,
    found: bool,
}

impl Outs {
    fn new() -> Outs {
        let fd = TRACE_FD.load(Ordering::Relaxed);
        // Check lines are text: a JSON trace does not get them.
        let copy = if json() { -1 } else { fd };
        let mut trace = Out::new(fd, -1);
        if json() {
            trace.page_safe();
        }
        Outs { trace, check: Out::new(2, copy), mode: MODE.load(Ordering::Relaxed), found: false }
    }

    /// Text trace lines are wanted.
    fn tracing(&self) -> bool {
        self.mode & TRACE != 0 && !json()
    }

    /// JSON trace events are wanted.
    fn timeline(&self) -> bool {
        self.mode & TRACE != 0 && json()
    }

    fn checking(&self) -> bool {
        self.mode & CHECK != 0
    }

    /// In a JSON trace, a process seen for the first time (a forked child
    /// of the one that opened it) gets its name, and lanes of its own.
    fn process(&mut self, st: &mut State, stamp: &Stamp) {
        if self.timeline() && NAMED.load(Ordering::Relaxed) != stamp.pid {
            NAMED.store(stamp.pid, Ordering::Relaxed);
            st.forget_lanes();
            json::header(&mut self.trace, stamp.pid, false);
        }
    }

    fn report(&mut self, ring: RingName) -> Report<'_> {
        Report { out: &mut self.check, ring }
    }

    /// Writes everything; called before the lock is released.
    fn flush(&mut self) {
        self.trace.flush();
        if !self.check.is_empty() {
            self.found = true;
            self.check.flush();
        }
    }

    /// After the lock is released: LIBURING_RS_CHECK=abort stops here.
    fn finish(self) {
        if self.found && self.mode & ABORT != 0 {
            let mut o = Out::new(2, -1);
            o.begin().s("liburing-rs check: aborting (LIBURING_RS_CHECK=abort)").end();
            o.flush();
            // SAFETY: no preconditions.
            unsafe { libc::abort() };
        }
    }
}

fn name_of(st: &mut State, i: Option<usize>, v: &RingView) -> RingName {
    match i {
        Some(i) => RingName { fd: st.ring(i).fd, is_index: st.ring(i).fd_is_index },
        None if v.ring_fd >= 0 => RingName { fd: v.ring_fd, is_index: false },
        None => RingName { fd: v.enter_fd, is_index: true },
    }
}

/// A fresh record for `ring` as `v` shows it, tracing from the CQ head on.
fn open_record(st: &mut State, ring: *const IoUring, v: &RingView) -> Option<usize> {
    let i = st.open(ring as usize)?;
    let (head, _) = v.cq_head_tail();
    let r = st.ring(i);
    (r.fd, r.fd_is_index) = if v.ring_fd >= 0 { (v.ring_fd, false) } else { (v.enter_fd, true) };
    r.cq_next = head;
    r.cq_head = head;
    r.engine = v.int_flags & crate::sys::liburing::int_flags::ENGINE != 0;
    Some(i)
}

/// Asks the ring which opcodes it runs (the kernel or the engine answers),
/// a bit each. Called without STATE's lock: the engine takes its own.
fn probe(v: &RingView) -> Option<[u64; 4]> {
    // SAFETY: LIB is set by init, before any hook runs.
    let lib = unsafe { LIB.load(Ordering::Acquire).as_ref() }?;
    #[repr(C)]
    struct Probe {
        head: io_uring_probe,
        ops: [io_uring_probe_op; 256],
    }
    // SAFETY: all-zero bytes are a valid Probe (plain integers).
    let mut p: Probe = unsafe { core::mem::zeroed() };
    let (fd, op) = if v.ring_fd >= 0 {
        (v.ring_fd, IORING_REGISTER_PROBE)
    } else {
        (v.enter_fd, IORING_REGISTER_PROBE | IORING_REGISTER_USE_REGISTERED_RING)
    };
    // SAFETY: the buffer has room for the 256 entries announced.
    if unsafe { (lib.register)(fd, op, (&mut p as *mut Probe).cast(), 256) } < 0 {
        return None;
    }
    let mut ops = [0u64; 4];
    let n = p.head.ops_len as usize;
    for o in p.ops.iter().take(n).filter(|o| o.flags & IO_URING_OP_SUPPORTED != 0) {
        ops[(o.op / 64) as usize % 4] |= 1 << (o.op % 64);
    }
    Some(ops)
}

/// The ring's record, made on first sight for rings set up before we
/// watched (their registrations are then unknown).
fn record(st: &mut State, ring: *const IoUring, v: &RingView) -> Option<usize> {
    if let Some(i) = st.find(ring as usize) {
        return Some(i);
    }
    let i = open_record(st, ring, v)?;
    st.ring(i).forget_groups();
    Some(i)
}

extern "C" fn before(ring: *const IoUring, submit: bool) -> u64 {
    // SAFETY: the C caller passed a non-null ring pointer.
    let v = unsafe { RingView::read(ring) };
    let stamp = Stamp::now();
    let mut o = Outs::new();
    STATE.with(|st| {
        o.process(st, &stamp);
        if !v.live() {
            if o.checking() {
                check::dead_ring(&mut o.check, ring as usize, why_dead(st, ring, &v));
            }
            return o.flush();
        }
        let i = record(st, ring, &v);
        if let Some(i) = i {
            catch_up(st, i, &v, &stamp, &mut o);
        }
        if submit {
            submissions(st, i, &v, &stamp, &mut o);
        }
        if let Some(i) = i {
            counters(st, i, &stamp, &mut o);
        }
        o.flush();
    });
    o.finish();
    // The time after our own work: `after` measures the call alone.
    trace::mono_now()
}

extern "C" fn after(ring: *const IoUring, submit: bool, since: u64) {
    // SAFETY: as in before().
    let v = unsafe { RingView::read(ring) };
    let stamp = Stamp::now();
    let mut o = Outs::new();
    STATE.with(|st| {
        o.process(st, &stamp);
        let Some(i) = st.find(ring as usize) else { return };
        st.ring(i).waited += stamp.mono.saturating_sub(since);
        if o.timeline() && stamp.mono.saturating_sub(since) >= CALL_SLICE_NS {
            let r = st.ring(i);
            let name = RingName { fd: r.fd, is_index: r.fd_is_index };
            let lane = calls_lane(st, i, stamp.tid, stamp.pid, &mut o.trace);
            json::call(&mut o.trace, stamp.pid, lane, name, if submit { "submit" } else { "wait" }, since, stamp.mono);
        }
        if submit {
            st.ring(i).in_submit = st.ring(i).in_submit.saturating_sub(1);
        }
        if v.mapped() {
            catch_up(st, i, &v, &stamp, &mut o);
            counters(st, i, &stamp, &mut o);
        }
        o.flush();
    });
    o.finish();
}

/// The ring's counters in a JSON trace, when they changed.
fn counters(st: &mut State, i: usize, stamp: &Stamp, o: &mut Outs) {
    if !o.timeline() {
        return;
    }
    let r = st.ring(i);
    let now = (r.in_flight, r.cq_waiting);
    if r.shown != Some(now) {
        r.shown = Some(now);
        let name = RingName { fd: r.fd, is_index: r.fd_is_index };
        json::counters(&mut o.trace, stamp.pid, name, stamp.mono, now.0, now.1);
    }
}

/// A request whose completion the JSON trace will not show.
fn unfinished(st: &mut State, f: &Flight, stamp: &Stamp, out: &mut Out) {
    let Some(i) = st.index_of(f.ring) else { return };
    let name = RingName { fd: st.ring(i).fd, is_index: st.ring(i).fd_is_index };
    let at = lane(st, i, f.tid, None, stamp.pid, out);
    json::unfinished(out, stamp.pid, at, name, f);
}

/// The JSON lane of thread `tid` on ring `i` for a slice over `span`
/// (None: an instant, on the track's first lane); named when new.
fn lane(st: &mut State, i: usize, tid: i32, span: Option<(u64, u64)>, pid: i32, out: &mut Out) -> u32 {
    let next = st.last_lane.wrapping_add(1).max(1);
    let r = st.ring(i);
    let name = RingName { fd: r.fd, is_index: r.fd_is_index };
    let t = r.track(tid);
    let k = match span {
        // A lane whose slices all ended before this one starts; else the
        // one free soonest (the slices then overlap, rarely).
        Some((start, _)) => (0..LANES)
            .find(|&k| t.ends[k % LANES] <= start)
            .unwrap_or_else(|| (0..LANES).min_by_key(|&k| t.ends[k % LANES]).unwrap_or(0)),
        None => 0,
    };
    if let Some((_, end)) = span {
        t.ends[k % LANES] = t.ends[k % LANES].max(end);
    }
    if t.ids[k % LANES] != 0 {
        return t.ids[k % LANES];
    }
    let id = lane_id(pid, next);
    t.ids[k % LANES] = id;
    st.last_lane = next;
    json::lane_name(out, pid, id, name, tid, Some(k));
    id
}

/// Lane `n` of process `pid` as a "thread" id of the JSON trace. Viewers
/// take thread ids as unique across processes, and a forked child writes
/// to its parent's file: the pid's low bits go on top.
fn lane_id(pid: i32, n: u32) -> u32 {
    (pid as u32 & 0x3ff) << 22 | (n & 0x3f_ffff)
}

/// The JSON lane of thread `tid`'s library calls on ring `i`.
fn calls_lane(st: &mut State, i: usize, tid: i32, pid: i32, out: &mut Out) -> u32 {
    let next = st.last_lane.wrapping_add(1).max(1);
    let r = st.ring(i);
    let name = RingName { fd: r.fd, is_index: r.fd_is_index };
    let t = r.track(tid);
    if t.calls != 0 {
        return t.calls;
    }
    let id = lane_id(pid, next);
    t.calls = id;
    st.last_lane = next;
    json::lane_name(out, pid, id, name, tid, None);
    id
}

fn why_dead(st: &State, ring: *const IoUring, v: &RingView) -> Dead {
    if st.was_exited(ring as usize) {
        Dead::Exited
    } else if !v.mapped() {
        Dead::NeverSetUp
    } else {
        Dead::NoFd
    }
}

/// Traces (and checks) the SQEs filled since the last submit.
fn submissions(st: &mut State, i: Option<usize>, v: &RingView, stamp: &Stamp, o: &mut Outs) {
    let name = name_of(st, i, v);
    if let Some(i) = i {
        if st.ring(i).in_submit > 0 && o.checking() {
            check::concurrent_submit(&mut o.report(name));
        }
        st.ring(i).in_submit += 1;
    }
    let (start, end) = v.pending();
    let mixed = v.flags & IORING_SETUP_SQE_MIXED != 0;
    let mut batch = Batch::default();
    // A failing IOSQE_CQE_SKIP_SUCCESS request silences the CQEs of the
    // rest of its chain: those may never complete visibly.
    let mut quiet_chain = false;
    // The previous request links to this one: the flow's number.
    let mut link_in = 0;
    let mut idx = start;
    while end.wrapping_sub(idx) as i32 > 0 {
        let s = v.sqe(idx);
        if o.tracing() {
            trace::submit(&mut o.trace, stamp, name, &s);
        }
        if let Some(i) = i {
            let (id, epoch) = (st.ring(i).id, st.ring(i).epoch);
            if o.checking() {
                let earlier = st.flight(id, s.user_data);
                check::sqe(&mut o.report(name), st.ring(i), v.flags, &mut batch, idx, &s, earlier, stamp.mono);
            }
            quiet_chain |= s.flags & IOSQE_CQE_SKIP_SUCCESS != 0;
            st.last_seq = st.last_seq.wrapping_add(1).max(1);
            let seq = st.last_seq;
            if !quiet_chain {
                let old = st.depart(Flight {
                    ring: id,
                    epoch,
                    user_data: s.user_data,
                    t: stamp.mono,
                    opcode: s.opcode,
                    sqe_flags: s.flags,
                    tid: stamp.tid,
                    fd: s.fd,
                    len: s.len,
                    seq,
                    link_in,
                });
                // A request whose completion we never saw, now forgotten.
                if let Some(old) = old.filter(|_| o.timeline()) {
                    unfinished(st, &old, stamp, &mut o.trace);
                }
            }
            link_in = 0;
            if s.flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK) == 0 {
                quiet_chain = false;
            } else if !quiet_chain {
                link_in = seq;
            }
            st.ring(i).submitted += 1;
        }
        let wide = mixed && matches!(s.opcode, IORING_OP_NOP128 | IORING_OP_URING_CMD128);
        idx = idx.wrapping_add(1 + wide as u32);
    }
    if o.checking() {
        check::end_of_batch(&mut o.report(name), &batch);
    }
}

/// Traces the completions posted since the last look, and notices those
/// the application consumed before we could look.
fn catch_up(st: &mut State, i: usize, v: &RingView, stamp: &Stamp, o: &mut Outs) {
    let name = name_of(st, Some(i), v);
    let (head, tail) = v.cq_head_tail();
    let sane = if o.checking() {
        check::cq_head(&mut o.report(name), st.ring(i), head, tail)
    } else {
        head.wrapping_sub(tail) as i32 <= 0
    };
    let r = st.ring(i);
    r.cq_head = head;
    r.cq_waiting = tail.wrapping_sub(head).min(v.cq_entries);
    if !sane {
        r.cq_next = tail;
        return;
    }
    let unseen = head.wrapping_sub(r.cq_next) as i32;
    // A gap wider than the ring means the indices changed under us
    // (resized rings): restart from the head without counting.
    if unseen > 0 && (unseen as u32) <= v.cq_entries {
        r.lost += unseen as u64;
        r.epoch = r.epoch.wrapping_add(1);
        if o.tracing() {
            trace::lost(&mut o.trace, stamp, name, unseen as u32);
        }
        if o.timeline() {
            let lane = lane(st, i, stamp.tid, None, stamp.pid, &mut o.trace);
            json::instant(&mut o.trace, stamp.pid, lane, name, stamp.mono, "completions unseen");
            json::arg_u(&mut o.trace, "count", unseen as u64);
            json::close(&mut o.trace);
        }
    }
    let r = st.ring(i);
    if unseen > 0 || tail.wrapping_sub(r.cq_next) > v.cq_entries {
        r.cq_next = head;
    }
    let mixed = v.flags & IORING_SETUP_CQE_MIXED != 0;
    let internal_timeouts = v.features & IORING_FEAT_EXT_ARG == 0;
    let id = r.id;
    let mut idx = r.cq_next;
    while tail.wrapping_sub(idx) as i32 > 0 {
        let c = v.cqe(idx, false);
        let wide = mixed && c.flags & IORING_CQE_F_32 != 0;
        idx = idx.wrapping_add(1 + wide as u32);
        if mixed && c.flags & IORING_CQE_F_SKIP != 0 {
            continue;
        }
        if internal_timeouts && c.user_data == crate::sys::liburing::LIBURING_UDATA_TIMEOUT {
            continue;
        }
        let c = if wide { v.cqe(idx.wrapping_sub(2), true) } else { c };
        let f = st.flight(id, c.user_data);
        if f.is_some() && c.flags & IORING_CQE_F_MORE == 0 {
            st.arrive(id, c.user_data);
        }
        if o.tracing() {
            let latency = f.map(|f| stamp.mono.saturating_sub(f.t));
            trace::complete(&mut o.trace, stamp, name, &c, f.map(|f| f.opcode), latency);
        }
        if o.timeline() {
            timeline_cqe(st, i, name, &c, f, stamp, &mut o.trace);
        }
        st.ring(i).traced += 1;
    }
    st.ring(i).cq_next = tail;
}

/// A completion in the JSON trace: the slice of its request when it is
/// the last one, else an instant.
fn timeline_cqe(st: &mut State, i: usize, name: RingName, c: &Cqe, f: Option<Flight>, stamp: &Stamp, out: &mut Out) {
    match f {
        Some(f) if c.flags & IORING_CQE_F_MORE == 0 => {
            let lane = lane(st, i, f.tid, Some((f.t, stamp.mono)), stamp.pid, out);
            json::slice(out, stamp.pid, lane, name, &f, c, stamp.mono);
        }
        _ => {
            let lane = lane(st, i, f.map_or(stamp.tid, |f| f.tid), None, stamp.pid, out);
            json::cqe(out, stamp.pid, lane, name, c, f.map(|f| f.opcode), stamp.mono);
        }
    }
}

/// After a setup call on `ring` (`entries` and `flags` as the caller
/// asked): `ret` < 0 is the error, anything else success.
extern "C" fn setup(ring: *const IoUring, entries: u32, flags: u32, ret: i32) {
    // SAFETY: the caller passes its own, non-null ring.
    let v = unsafe { RingView::read(ring) };
    let stamp = Stamp::now();
    let mut o = Outs::new();
    let ops = if ret >= 0 && v.live() { probe(&v) } else { None };
    STATE.with(|st| {
        o.process(st, &stamp);
        st.forget_exit(ring as usize);
        let mut name = RingName { fd: -1, is_index: false };
        if ret >= 0 && v.live() {
            let i = open_record(st, ring, &v);
            if let (Some(i), Some(ops)) = (i, ops) {
                (st.ring(i).ops, st.ring(i).probed) = (ops, true);
            }
            name = name_of(st, i, &v);
        }
        if o.tracing() {
            trace::setup(&mut o.trace, &stamp, name, entries, flags, &v, ret);
        }
        if o.timeline() {
            let t = &mut o.trace;
            let lane = match st.find(ring as usize) {
                Some(i) if ret >= 0 => lane(st, i, stamp.tid, None, stamp.pid, t),
                _ => 0,
            };
            json::instant(t, stamp.pid, lane, name, stamp.mono, "setup");
            json::arg_u(t, "entries", entries as u64);
            json::arg_str(t, "flags", |t| {
                t.flags(flags as u64, &decode::SETUP_FLAGS);
            });
            json::arg_res(t, "res", ret);
            if ret >= 0 {
                json::arg_u(t, "sq_entries", v.sq_entries as u64);
                json::arg_u(t, "cq_entries", v.cq_entries as u64);
                json::arg_str(t, "engine", |t| {
                    t.s(if v.int_flags & crate::sys::liburing::int_flags::ENGINE != 0 { "user" } else { "kernel" });
                });
            }
            json::close(t);
        }
        o.flush();
    });
    o.finish();
}

/// After `io_uring_register(opcode, arg, nr)` on `ring` returned `ret`:
/// traces it, and remembers the files, buffers and groups it registered.
extern "C" fn register(ring: *const IoUring, opcode: u32, arg: *const c_void, nr: u32, ret: i32) {
    // SAFETY: the caller passes its own ring.
    let v = unsafe { RingView::read(ring) };
    let stamp = Stamp::now();
    let mut o = Outs::new();
    STATE.with(|st| {
        o.process(st, &stamp);
        // Registrations inside io_uring_queue_exit (after our exit hook)
        // belong to a ring whose memory may be gone already.
        let exiting = st.was_exited(ring as usize);
        if !v.live() && !exiting {
            if o.checking() {
                check::dead_ring(&mut o.check, ring as usize, why_dead(st, ring, &v));
            }
            return o.flush();
        }
        // Only rings set up through the C surface have records: the
        // library's own short-lived probe rings pass through here too.
        let i = if exiting { None } else { st.find(ring as usize) };
        let name = name_of(st, i, &v);
        if let Some(i) = i {
            catch_up(st, i, &v, &stamp, &mut o);
        }
        // SAFETY: the kernel accepted (or at least was given) `arg` for
        // this opcode, so it is the structure the opcode defines.
        let detail = unsafe { remember(st, i, opcode & !IORING_REGISTER_USE_REGISTERED_RING, arg, nr, ret) };
        if o.tracing() {
            trace::register(&mut o.trace, &stamp, name, opcode, &detail, ret);
        }
        if o.timeline() {
            let t = &mut o.trace;
            let lane = match i {
                Some(i) => lane(st, i, stamp.tid, None, stamp.pid, t),
                None => 0,
            };
            json::instant(t, stamp.pid, lane, name, stamp.mono, "register");
            json::arg_str(t, "op", |t| {
                match decode::register_op(opcode) {
                    Some(n) => t.s(n),
                    None => t.u(opcode as u64),
                };
            });
            json::arg_u(t, "nr", nr as u64);
            json::arg_res(t, "res", ret);
            json::close(t);
        }
        o.flush();
    });
    o.finish();
}

/// Updates ring `i`'s registration record after a register call, and says
/// what the call registered.
///
/// # Safety
/// `arg` is the argument `opcode` defines, readable for the call's duration.
unsafe fn remember(st: &mut State, i: Option<usize>, opcode: u32, arg: *const c_void, nr: u32, ret: i32) -> RegDetail {
    let mut dummy = None;
    let r = match i {
        Some(i) if ret >= 0 => Some(st.ring(i)),
        _ => dummy.take(),
    };
    // SAFETY (reads of `arg` below): per the function's contract.
    unsafe {
        match opcode {
            IORING_REGISTER_FILES => {
                if let Some(r) = r {
                    r.files = nr as i64;
                }
                RegDetail::Count(nr)
            }
            IORING_REGISTER_FILES2 | IORING_REGISTER_BUFFERS2 if !arg.is_null() => {
                let reg = *(arg as *const io_uring_rsrc_register);
                let sparse = reg.flags & IORING_RSRC_REGISTER_SPARSE != 0;
                if let Some(r) = r {
                    if opcode == IORING_REGISTER_FILES2 {
                        r.files = reg.nr as i64;
                    } else if sparse {
                        r.bufs.table(reg.nr);
                    } else {
                        learn_buffers(r, 0, reg.data as *const libc::iovec, reg.nr, reg.nr);
                    }
                }
                RegDetail::Table { nr: reg.nr, sparse }
            }
            IORING_REGISTER_BUFFERS => {
                if let Some(r) = r {
                    learn_buffers(r, 0, arg as *const libc::iovec, nr, nr);
                }
                RegDetail::Count(nr)
            }
            IORING_REGISTER_BUFFERS_UPDATE if !arg.is_null() => {
                let up = *(arg as *const io_uring_rsrc_update2);
                if let Some(r) = r {
                    if r.bufs.count >= 0 {
                        learn_buffers(r, up.offset, up.data as *const libc::iovec, up.nr, r.bufs.count as u32);
                    }
                }
                RegDetail::Update { off: up.offset, nr: up.nr }
            }
            IORING_UNREGISTER_FILES => {
                if let Some(r) = r {
                    r.files = 0;
                }
                RegDetail::None
            }
            IORING_UNREGISTER_BUFFERS => {
                if let Some(r) = r {
                    r.bufs.reset(0);
                }
                RegDetail::None
            }
            IORING_REGISTER_CLONE_BUFFERS => {
                if let Some(r) = r {
                    r.bufs.reset(-1);
                }
                RegDetail::None
            }
            IORING_REGISTER_PBUF_RING | IORING_UNREGISTER_PBUF_RING if !arg.is_null() => {
                let reg = *(arg as *const io_uring_buf_reg);
                if let Some(r) = r {
                    if opcode == IORING_REGISTER_PBUF_RING {
                        r.add_group(reg.bgid);
                    } else {
                        r.remove_group(reg.bgid);
                    }
                }
                RegDetail::Group { bgid: reg.bgid, entries: reg.ring_entries }
            }
            IORING_REGISTER_EVENTFD | IORING_REGISTER_EVENTFD_ASYNC if !arg.is_null() => {
                RegDetail::Fd(*(arg as *const i32))
            }
            _ => RegDetail::Count(nr),
        }
    }
}

/// Records `nr` buffers from `iov` into slots from `off`, in a table of
/// `count` slots (made anew when `off` is 0 and `count == nr`).
///
/// # Safety
/// `iov` points to `nr` iovecs, or is null.
unsafe fn learn_buffers(r: &mut state::Ring, off: u32, iov: *const libc::iovec, nr: u32, count: u32) {
    if off == 0 && count == nr {
        r.bufs.table(count);
    }
    if iov.is_null() {
        return;
    }
    for k in 0..nr {
        // SAFETY: per the contract, k < nr iovecs are readable.
        let v = unsafe { *iov.add(k as usize) };
        r.bufs.set(off.wrapping_add(k), v.iov_base as u64, v.iov_len as u64);
    }
}

/// Before `io_uring_queue_exit` tears `ring` down: the last completions,
/// a summary line, and the record is dropped.
extern "C" fn exit(ring: *const IoUring) {
    // SAFETY: the caller passes its own ring.
    let v = unsafe { RingView::read(ring) };
    let stamp = Stamp::now();
    let mut o = Outs::new();
    STATE.with(|st| {
        o.process(st, &stamp);
        if st.was_exited(ring as usize) {
            if o.checking() {
                check::dead_ring(&mut o.check, ring as usize, Dead::Exited);
            }
            return o.flush();
        }
        let i = if v.mapped() { record(st, ring, &v) } else { st.find(ring as usize) };
        if let Some(i) = i {
            if v.mapped() {
                catch_up(st, i, &v, &stamp, &mut o);
            }
            let name = name_of(st, Some(i), &v);
            let overflow = if v.mapped() { v.cq_overflow() } else { 0 };
            let lane = if o.timeline() { lane(st, i, stamp.tid, None, stamp.pid, &mut o.trace) } else { 0 };
            let r = st.ring(i);
            let e = trace::Exit {
                submitted: r.submitted,
                traced: r.traced,
                lost: r.lost,
                peak: r.peak,
                overflow,
                waited: r.waited,
            };
            if o.tracing() {
                trace::exit(&mut o.trace, &stamp, name, &e);
            }
            if o.timeline() {
                let id = st.ring(i).id;
                for k in 0..state::FLIGHTS {
                    let f = st.flight_at(k);
                    if f.ring == id {
                        unfinished(st, &f, &stamp, &mut o.trace);
                    }
                }
                let t = &mut o.trace;
                json::instant(t, stamp.pid, lane, name, stamp.mono, "exit");
                json::arg_u(t, "submitted", e.submitted);
                json::arg_u(t, "completions_traced", e.traced);
                json::arg_u(t, "completions_unseen", e.lost);
                json::arg_u(t, "peak_in_flight", e.peak as u64);
                json::arg_u(t, "cq_overflow", e.overflow as u64);
                json::arg_u(t, "waited_ns", e.waited);
                json::close(t);
            }
            st.close(i);
        }
        if v.mapped() {
            st.note_exit(ring as usize);
        }
        o.flush();
    });
    o.finish();
}
