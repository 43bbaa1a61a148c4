//! The trace as a timeline (`LIBURING_RS_TRACE_FORMAT=json`): Trace Event
//! Format, which Perfetto and chrome://tracing open, streamed as a JSON
//! array without its closing bracket (which those viewers accept), so the
//! file stays readable when the process dies. Every event is one line
//! starting with a comma; the file's first line is `[` and a metadata event
//! (the writer, `Out::page_safe`, keeps each line inside a page of the file).
//!
//! Requests are complete ("X") slices on lanes of a track per ring and
//! submitting thread (each lane a numbered "thread" of the process, named by
//! metadata), and so are long library calls, on a lane of their own; links
//! are flow events ("s"/"f") between two requests; in-flight and waiting
//! CQE counts are counter ("C") events; setup, register and exit calls,
//! `F_MORE` completions, and requests whose completion was not seen are
//! instants. Times are CLOCK_MONOTONIC, in microseconds with nanosecond
//! decimals.

use super::decode;
use super::out::Out;
use super::state::Flight;
use super::trace::RingName;
use super::view::Cqe;

/// `us.nnn` from nanoseconds.
fn ts(out: &mut Out, ns: u64) -> &mut Out {
    out.u(ns / 1000).s(".").u_pad(ns % 1000, 3)
}

fn ring_str(out: &mut Out, ring: RingName) -> &mut Out {
    out.s("\"ring ");
    if ring.is_index {
        out.s("reg:");
    }
    out.i(ring.fd as i64).s("\"")
}

/// The program's name as a JSON string: bytes other than plain ASCII
/// become `_` (some viewers take no `\u` escapes).
fn string<'a>(out: &'a mut Out, b: &[u8]) -> &'a mut Out {
    out.s("\"");
    for &c in b {
        let plain = c.is_ascii_alphanumeric() || b" .,:;_-+/=()[]#@".contains(&c);
        out.put(&[if plain { c } else { b'_' }]);
    }
    out.s("\"")
}

fn op_str(out: &mut Out, op: u8) -> &mut Out {
    match decode::opcode(op) {
        Some(n) => out.s("\"").s(n).s("\""),
        None => out.s("\"OP_").u(op as u64).s("\""),
    }
}

fn res(out: &mut Out, r: i32) -> &mut Out {
    if r < 0 {
        out.s("\"").res(r).s("\"")
    } else {
        out.i(r as i64)
    }
}

/// The process's name: the file's first line (`first`, after the array's
/// bracket), or the first event of a forked child.
pub fn header(out: &mut Out, pid: i32, first: bool) {
    let mut comm = [0u8; 32];
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe { libc::open(c"/proc/self/comm".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    let mut n = 0;
    if fd >= 0 {
        // SAFETY: comm has room for the bytes asked for.
        n = unsafe { libc::read(fd, comm.as_mut_ptr().cast(), comm.len()) }.max(0) as usize;
        // SAFETY: fd is ours.
        unsafe { libc::close(fd) };
    }
    let name = comm.get(..n).unwrap_or(&[]);
    let name = name.strip_suffix(b"\n").unwrap_or(name);
    out.begin()
        .s(if first { "[" } else { "," })
        .s("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":")
        .i(pid as i64)
        .s(",\"tid\":0,\"args\":{\"name\":");
    string(out, name).s("}}").end();
}

/// Starts an event of phase `ph` at `t` on lane `lane` of process `pid`.
fn event<'a>(out: &'a mut Out, ph: &str, pid: i32, lane: u32, t: u64) -> &'a mut Out {
    out.begin().s(",{\"ph\":\"").s(ph).s("\",\"pid\":").i(pid as i64).s(",\"tid\":").u(lane as u64).s(",\"ts\":");
    ts(out, t)
}

/// Names lane `k` of thread `tid`'s track on `ring` (None: the lane of its
/// library calls).
pub fn lane_name(out: &mut Out, pid: i32, lane: u32, ring: RingName, tid: i32, k: Option<usize>) {
    out.begin()
        .s(",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":")
        .i(pid as i64)
        .s(",\"tid\":")
        .u(lane as u64)
        .s(",\"args\":{\"name\":\"ring ");
    if ring.is_index {
        out.s("reg:");
    }
    out.i(ring.fd as i64).s(" tid ").i(tid as i64);
    match k {
        None => {
            out.s(" calls");
        }
        Some(0) => {}
        Some(k) => {
            out.s(" #").u(k as u64 + 1);
        }
    }
    out.s("\"}}").end();
    out.begin()
        .s(",{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":")
        .i(pid as i64)
        .s(",\"tid\":")
        .u(lane as u64)
        .s(",\"args\":{\"sort_index\":")
        .u(lane as u64)
        .s("}}")
        .end();
}

/// A request from submission (`f.t`) to its last completion `c` at `end`,
/// with the flows of its links.
pub fn slice(out: &mut Out, pid: i32, lane: u32, ring: RingName, f: &Flight, c: &Cqe, end: u64) {
    event(out, "X", pid, lane, f.t).s(",\"dur\":");
    ts(out, end.saturating_sub(f.t)).s(",\"cat\":\"request\",\"name\":");
    op_str(out, f.opcode).s(",\"args\":{\"ring\":");
    ring_str(out, ring)
        .s(",\"tid\":")
        .i(f.tid as i64)
        .s(",\"fd\":")
        .i(f.fd as i64)
        .s(",\"len\":")
        .u(f.len as u64)
        .s(",\"user_data\":\"")
        .hex(f.user_data)
        .s("\",\"res\":");
    res(out, c.res)
        .s(",\"flags\":\"")
        .flags(f.sqe_flags as u64, &decode::SQE_FLAGS)
        .s("\",\"cqe_flags\":\"")
        .cqe_flags(c.flags)
        .s("\"}}")
        .end();
    flows(out, pid, lane, f, f.t + end.saturating_sub(f.t) / 2);
}

/// The flows into and out of request `f`, bound to its event on `lane`
/// at `t`, inside it (viewers bind a flow to the slice enclosing it).
fn flows(out: &mut Out, pid: i32, lane: u32, f: &Flight, t: u64) {
    if f.link_in != 0 {
        event(out, "f", pid, lane, t)
            .s(",\"bp\":\"e\",\"cat\":\"link\",\"name\":\"link\",\"id\":")
            .u(f.link_in as u64)
            .s("}")
            .end();
    }
    if f.sqe_flags & (crate::sys::IOSQE_IO_LINK | crate::sys::IOSQE_IO_HARDLINK) != 0 {
        event(out, "s", pid, lane, t).s(",\"cat\":\"link\",\"name\":\"link\",\"id\":").u(f.seq as u64).s("}").end();
    }
}

/// A library call that took a while (`wait`: it may have waited for
/// completions; `submit`: it handed SQEs to the kernel, and may have waited).
pub fn call(out: &mut Out, pid: i32, lane: u32, ring: RingName, name: &str, start: u64, end: u64) {
    event(out, "X", pid, lane, start).s(",\"dur\":");
    ts(out, end.saturating_sub(start)).s(",\"cat\":\"call\",\"name\":\"").s(name).s("\",\"args\":{\"ring\":");
    ring_str(out, ring).s("}}").end();
}

/// A completion that is not a request's last (F_MORE), or whose request
/// was not seen submitted (`op` None).
pub fn cqe(out: &mut Out, pid: i32, lane: u32, ring: RingName, c: &Cqe, op: Option<u8>, t: u64) {
    event(out, "i", pid, lane, t).s(",\"s\":\"t\",\"cat\":\"completion\",\"name\":");
    match op {
        Some(op) => op_str(out, op),
        None => out.s("\"completion\""),
    };
    out.s(",\"args\":{\"ring\":");
    ring_str(out, ring).s(",\"user_data\":\"").hex(c.user_data).s("\",\"res\":");
    res(out, c.res).s(",\"cqe_flags\":\"").cqe_flags(c.flags).s("\"}}").end();
}

/// A request whose completion was never seen (consumed by the program
/// before a library call let us look, or still in flight at exit), at
/// its submission.
pub fn unfinished(out: &mut Out, pid: i32, lane: u32, ring: RingName, f: &Flight) {
    event(out, "i", pid, lane, f.t).s(",\"s\":\"t\",\"cat\":\"unfinished\",\"name\":");
    op_str(out, f.opcode).s(",\"args\":{\"ring\":");
    ring_str(out, ring)
        .s(",\"tid\":")
        .i(f.tid as i64)
        .s(",\"fd\":")
        .i(f.fd as i64)
        .s(",\"user_data\":\"")
        .hex(f.user_data)
        .s("\"}}")
        .end();
    flows(out, pid, lane, f, f.t);
}

/// The ring's two counters.
pub fn counters(out: &mut Out, pid: i32, ring: RingName, t: u64, in_flight: u32, cq_waiting: u32) {
    event(out, "C", pid, 0, t).s(",\"name\":");
    ring_str(out, ring)
        .s(",\"args\":{\"in_flight\":")
        .u(in_flight as u64)
        .s(",\"cq_waiting\":")
        .u(cq_waiting as u64)
        .s("}}")
        .end();
}

/// An instant on `lane` named `name`; the caller writes the arguments
/// (`"key":value` pairs, each after a comma) and calls [`close`].
pub fn instant<'a>(out: &'a mut Out, pid: i32, lane: u32, ring: RingName, t: u64, name: &str) -> &'a mut Out {
    event(out, "i", pid, lane, t).s(",\"s\":\"t\",\"cat\":\"call\",\"name\":\"").s(name).s("\",\"args\":{\"ring\":");
    ring_str(out, ring)
}

/// Ends an [`instant`].
pub fn close(out: &mut Out) {
    out.s("}}").end();
}

/// `,"key":"..."` with what `f` writes as the string's text (flag names,
/// errno names and numbers need no escaping).
pub fn arg_str<'a>(out: &'a mut Out, key: &str, f: impl FnOnce(&mut Out)) -> &'a mut Out {
    out.s(",\"").s(key).s("\":\"");
    f(out);
    out.s("\"")
}

pub fn arg_u(out: &mut Out, key: &str, v: u64) {
    out.s(",\"").s(key).s("\":").u(v);
}

pub fn arg_res(out: &mut Out, key: &str, r: i32) {
    out.s(",\"").s(key).s("\":");
    res(out, r);
}
