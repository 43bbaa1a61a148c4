//! `uring-info --summary FILE`: a trace (text or JSON, as LIBURING_RS_TRACE
//! writes it) read back into one line per opcode and one per ring, or
//! (`--svg`) drawn as a timeline.
//!
//! No allocator: the file is mapped, and the requests found in it go into
//! an anonymous mapping sized by its line count (a request takes at least
//! one line). Both formats are the library's own, one event per line, so
//! fields are found by name within a line.

mod svg;

use core::fmt::{self, Write};
use core::ptr;

use super::{JStr, Out, Text};
use uring::diag::names::OPCODES;

/// A request that completed for good: its slice on the timeline.
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub struct Req {
    /// CLOCK_MONOTONIC (JSON) or time of day (text), ns.
    pub start: u64,
    pub dur: u64,
    /// Index in [`Trace::rings`].
    pub ring: u16,
    pub op: u8,
    /// Failed (res < 0).
    pub err: bool,
    /// Not a request: a library call of the program (JSON traces), whose
    /// `op` means nothing.
    pub call: bool,
    /// The lane the picture draws it in.
    pub lane: u32,
}

const MAX_RINGS: usize = 64;
const ERR_SLOTS: usize = 8;

#[derive(Clone, Copy, Default)]
pub struct RingSum {
    pub pid: i64,
    /// What the trace calls it: "5", "reg:0".
    pub name: [u8; 16],
    pub name_len: usize,
    pub requests: u64,
    /// Completions the program consumed before the trace saw them.
    pub unseen: u64,
    in_flight: i64,
    computed_peak: i64,
    /// From the ring's exit event, when it has one.
    pub peak: Option<u64>,
    pub overflow: Option<u64>,
    pub waited: Option<u64>,
}

impl RingSum {
    pub fn name(&self) -> &[u8] {
        self.name.get(..self.name_len).unwrap_or(&[])
    }
}

#[derive(Clone, Copy, Default)]
struct OpSum {
    /// Requests submitted, and those whose last completion was traced.
    count: u64,
    done: u64,
    /// Completions with IORING_CQE_F_MORE: a multishot request's results
    /// before its last.
    more: u64,
    errs: [([u8; 16], usize, u64); ERR_SLOTS],
    other_errs: u64,
}

pub struct Trace<'a> {
    pub reqs: &'a mut [Req],
    pub n: usize,
    pub rings: [RingSum; MAX_RINGS],
    pub nrings: usize,
    ops: [OpSum; 256],
    pub json: bool,
}

/// A read-only mapping of a file, or an anonymous one; unmapped on drop.
struct Map {
    p: *mut libc::c_void,
    len: usize,
}

impl Map {
    fn file(path: &core::ffi::CStr) -> Result<Map, i32> {
        // SAFETY: a NUL-terminated path.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(errno());
        }
        // SAFETY: all-zero bytes are a valid stat buffer, ours to fill.
        let mut sb: libc::stat = unsafe { core::mem::zeroed() };
        // SAFETY: as above.
        let r = unsafe { libc::fstat(fd, &mut sb) };
        let len = sb.st_size.max(0) as usize;
        let m = if r < 0 {
            Err(errno())
        } else if len == 0 {
            Ok(Map { p: ptr::null_mut(), len: 0 })
        } else {
            // SAFETY: a fresh private read-only mapping of the whole file.
            let p = unsafe { libc::mmap(ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, fd, 0) };
            if p == libc::MAP_FAILED {
                Err(errno())
            } else {
                Ok(Map { p, len })
            }
        };
        // SAFETY: fd is ours.
        unsafe { libc::close(fd) };
        m
    }

    fn anon(len: usize) -> Result<Map, i32> {
        // SAFETY: a fresh private anonymous mapping.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len.max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            Err(errno())
        } else {
            Ok(Map { p, len: len.max(1) })
        }
    }

    fn bytes(&self) -> &[u8] {
        if self.p.is_null() {
            return &[];
        }
        // SAFETY: the mapping is len readable bytes and lives as long as self.
        unsafe { core::slice::from_raw_parts(self.p as *const u8, self.len) }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        if !self.p.is_null() {
            // SAFETY: our own mapping.
            unsafe { libc::munmap(self.p, self.len) };
        }
    }
}

fn errno() -> i32 {
    // SAFETY: this thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// The value after `key` (given with its `=` or `":`) in `line`, up to the
/// next space, comma or closing brace (quotes dropped).
fn field<'l>(line: &'l [u8], key: &[u8]) -> Option<&'l [u8]> {
    let at = line.windows(key.len()).position(|w| w == key)?;
    let rest = line.get(at + key.len()..)?;
    if let Some(q) = rest.strip_prefix(b"\"") {
        let end = q.iter().position(|&c| c == b'"')?;
        return q.get(..end);
    }
    let end = rest.iter().position(|&c| matches!(c, b' ' | b',' | b'}' | b'\n')).unwrap_or(rest.len());
    rest.get(..end)
}

fn num(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    b.iter().try_fold(0u64, |v, &c| c.is_ascii_digit().then(|| v * 10 + (c - b'0') as u64))
}

/// `12.345` (microseconds, JSON) as ns.
fn us_ns(b: &[u8]) -> Option<u64> {
    let (int, frac) = match b.iter().position(|&c| c == b'.') {
        Some(d) => (b.get(..d)?, b.get(d + 1..)?),
        None => (b, &b""[..]),
    };
    let mut f = 0;
    for k in 0..3 {
        f = f * 10 + frac.get(k).map_or(0, |&c| c.wrapping_sub(b'0') as u64 % 10);
    }
    Some(num(int)? * 1000 + f)
}

/// `850ns`, `12.345us`, `1.500ms`, `2.000s` (the text trace's durations) as ns.
fn dur_ns(b: &[u8]) -> Option<u64> {
    let unit_at = b.iter().position(|c| c.is_ascii_alphabetic())?;
    let (n, unit) = b.split_at(unit_at);
    let scale = match unit {
        b"ns" => return num(n),
        b"us" => 1,
        b"ms" => 1000,
        b"s" => 1_000_000,
        _ => return None,
    };
    Some(us_ns(n)? * scale)
}

/// `HH:MM:SS.uuuuuu` as ns since midnight.
fn tod_ns(line: &[u8]) -> Option<u64> {
    let h = num(line.get(0..2)?)?;
    let m = num(line.get(3..5)?)?;
    let s = num(line.get(6..8)?)?;
    let us = num(line.get(9..15)?)?;
    Some(((h * 60 + m) * 60 + s) * 1_000_000_000 + us * 1000)
}

fn opcode(name: &[u8]) -> u8 {
    if let Some(n) = name.strip_prefix(b"OP_") {
        return num(n).unwrap_or(255).min(255) as u8;
    }
    OPCODES.lookup(name).unwrap_or(255).min(255) as u8
}

impl<'a> Trace<'a> {
    fn ring(&mut self, pid: i64, name: &[u8]) -> usize {
        if let Some(i) = self.rings[..self.nrings].iter().position(|r| r.pid == pid && r.name() == name) {
            return i;
        }
        if self.nrings == MAX_RINGS {
            return MAX_RINGS - 1;
        }
        let r = &mut self.rings[self.nrings];
        r.pid = pid;
        r.name_len = name.len().min(16);
        r.name[..r.name_len].copy_from_slice(&name[..r.name_len]);
        self.nrings += 1;
        self.nrings - 1
    }

    fn error(&mut self, op: u8, res: &[u8]) {
        let s = &mut self.ops[op as usize];
        let name = res.strip_prefix(b"-").unwrap_or(res);
        let len = name.len().min(16);
        let slot = s
            .errs
            .iter()
            .position(|e| e.2 > 0 && e.0.get(..e.1) == name.get(..len))
            .or_else(|| s.errs.iter().position(|e| e.2 == 0));
        match slot {
            Some(k) => {
                let e = &mut s.errs[k];
                e.0[..len].copy_from_slice(&name[..len]);
                e.1 = len;
                e.2 += 1;
            }
            None => s.other_errs += 1,
        }
    }

    fn request(&mut self, ring: usize, op: u8) {
        self.ops[op as usize].count += 1;
        self.rings[ring].requests += 1;
    }

    fn completed(&mut self, r: Req, res: &[u8]) {
        self.ops[r.op as usize].done += 1;
        if r.err {
            self.error(r.op, res);
        }
        if let Some(slot) = self.reqs.get_mut(self.n) {
            *slot = r;
            self.n += 1;
        }
    }

    fn submitted(&mut self, ring: usize, up: bool) {
        let r = &mut self.rings[ring];
        r.in_flight += if up { 1 } else { -1 };
        r.computed_peak = r.computed_peak.max(r.in_flight);
    }

    fn text_line(&mut self, line: &[u8]) {
        let (Some(pid), Some(ring)) = (field(line, b" pid="), field(line, b" ring=")) else { return };
        let pid = num(pid).map_or(-1, |p| p as i64);
        let ri = self.ring(pid, ring);
        let Some(at) = line.windows(ring.len() + 7).position(|w| w.starts_with(b" ring=") && w.ends_with(b" ")) else {
            return;
        };
        let what = line.get(at + ring.len() + 7..).unwrap_or(&[]);
        if let Some(rest) = what.strip_prefix(b"submit ") {
            self.submitted(ri, true);
            let op = rest.split(|&c| c == b' ').next().unwrap_or(b"");
            self.request(ri, opcode(op));
        } else if what.starts_with(b"complete ") {
            let flags = field(line, b" flags=").unwrap_or(b"0");
            let more = flags.windows(6).any(|w| w == b"F_MORE");
            let op = field(line, b" op=").unwrap_or(b"?");
            if op == b"?" {
                return;
            }
            let op = opcode(op);
            if more {
                self.ops[op as usize].more += 1;
                return;
            }
            self.submitted(ri, false);
            let res = field(line, b" res=").unwrap_or(b"0");
            let dur = field(line, b" latency=").and_then(dur_ns).unwrap_or(0);
            let end = tod_ns(line).unwrap_or(0);
            let r = Req {
                start: end.saturating_sub(dur),
                dur,
                ring: ri as u16,
                op,
                err: res.starts_with(b"-"),
                call: false,
                lane: 0,
            };
            self.completed(r, res);
        } else if what.starts_with(b"exit ") {
            let r = &mut self.rings[ri];
            r.peak = field(line, b" peak_in_flight=").and_then(num);
            r.overflow = field(line, b" cq_overflow=").and_then(num);
            r.waited = field(line, b" waited=").and_then(dur_ns);
        } else if what.ends_with(b" completions reaped before they could be traced") {
            let n = what.split(|&c| c == b' ').next().and_then(num).unwrap_or(0);
            self.rings[ri].unseen += n;
        }
    }

    fn json_line(&mut self, line: &[u8]) {
        let Some(ph) = field(line, b"\"ph\":") else { return };
        let pid = field(line, b"\"pid\":").and_then(num).map_or(-1, |p| p as i64);
        let ring = |line| field(line, b"\"ring\":").map(|r: &[u8]| r.strip_prefix(b"ring ").unwrap_or(r));
        match ph {
            b"X" if field(line, b"\"cat\":") == Some(b"request") => {
                let Some(rn) = ring(line) else { return };
                let ri = self.ring(pid, rn);
                let res = field(line, b"\"res\":").unwrap_or(b"0");
                let r = Req {
                    start: field(line, b"\"ts\":").and_then(us_ns).unwrap_or(0),
                    dur: field(line, b"\"dur\":").and_then(us_ns).unwrap_or(0),
                    ring: ri as u16,
                    op: opcode(field(line, b"\"name\":").unwrap_or(b"")),
                    err: res.starts_with(b"-"),
                    call: false,
                    lane: 0,
                };
                self.request(ri, r.op);
                self.completed(r, res);
            }
            b"X" if field(line, b"\"cat\":") == Some(b"call") => {
                let Some(rn) = ring(line) else { return };
                let ri = self.ring(pid, rn);
                let r = Req {
                    start: field(line, b"\"ts\":").and_then(us_ns).unwrap_or(0),
                    dur: field(line, b"\"dur\":").and_then(us_ns).unwrap_or(0),
                    ring: ri as u16,
                    call: true,
                    ..Req::default()
                };
                if let Some(slot) = self.reqs.get_mut(self.n) {
                    *slot = r;
                    self.n += 1;
                }
            }
            b"i" if field(line, b"\"cat\":") == Some(b"completion") => {
                let op = opcode(field(line, b"\"name\":").unwrap_or(b""));
                if field(line, b"\"cqe_flags\":").is_some_and(|f| f.windows(6).any(|w| w == b"F_MORE")) {
                    self.ops[op as usize].more += 1;
                }
            }
            b"i" if field(line, b"\"cat\":") == Some(b"unfinished") => {
                let Some(rn) = ring(line) else { return };
                let ri = self.ring(pid, rn);
                self.request(ri, opcode(field(line, b"\"name\":").unwrap_or(b"")));
            }
            b"i" if field(line, b"\"name\":") == Some(b"completions unseen") => {
                let Some(rn) = ring(line) else { return };
                let ri = self.ring(pid, rn);
                self.rings[ri].unseen += field(line, b"\"count\":").and_then(num).unwrap_or(0);
            }
            b"i" if field(line, b"\"name\":") == Some(b"exit") => {
                let Some(rn) = ring(line) else { return };
                let ri = self.ring(pid, rn);
                let r = &mut self.rings[ri];
                r.peak = field(line, b"\"peak_in_flight\":").and_then(num);
                r.overflow = field(line, b"\"cq_overflow\":").and_then(num);
                r.waited = field(line, b"\"waited_ns\":").and_then(num);
            }
            b"C" => {
                let Some(rn) = field(line, b"\"name\":") else { return };
                let rn = rn.strip_prefix(b"ring ").unwrap_or(rn);
                let ri = self.ring(pid, rn);
                let n = field(line, b"\"in_flight\":").and_then(num).unwrap_or(0) as i64;
                let r = &mut self.rings[ri];
                r.computed_peak = r.computed_peak.max(n);
            }
            _ => {}
        }
    }
}

/// A duration for people: `850ns`, `12.3us`, `4.56ms`, `1.20s`.
pub struct Dur(pub u64);

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        let (v, unit) = match ns {
            0..=999 => return write!(f, "{ns}ns"),
            1_000..=999_999 => (ns as f64 / 1e3, "us"),
            1_000_000..=999_999_999 => (ns as f64 / 1e6, "ms"),
            _ => (ns as f64 / 1e9, "s"),
        };
        let prec = if v >= 100.0 {
            0
        } else if v >= 10.0 {
            1
        } else {
            2
        };
        write!(f, "{v:.prec$}{unit}")
    }
}

fn op_name(op: u8) -> &'static str {
    OPCODES.of(op as u32).unwrap_or("?")
}

/// Calls `f` with each opcode's requests, sorted by duration, in order of
/// opcode (library calls left out).
fn by_op(reqs: &mut [Req], mut f: impl FnMut(u8, &[Req]) -> fmt::Result) -> fmt::Result {
    reqs.sort_unstable_by_key(|r| (r.call, r.op, r.dur));
    let calls = reqs.iter().position(|r| r.call).unwrap_or(reqs.len());
    let mut rest = &reqs[..calls];
    while let Some(first) = rest.first() {
        let n = rest.iter().position(|r| r.op != first.op).unwrap_or(rest.len());
        let (group, tail) = rest.split_at(n);
        f(first.op, group)?;
        rest = tail;
    }
    Ok(())
}

/// A group's requests sorted by duration: nearest-rank percentiles.
struct Durs<'a>(&'a [Req]);

impl Durs<'_> {
    fn at(&self, p: u64) -> u64 {
        if self.0.is_empty() {
            return 0;
        }
        let rank = (p * self.0.len() as u64).div_ceil(100).max(1) as usize;
        self.0.get(rank - 1).map_or(0, |r| r.dur)
    }
}

/// A count (false) or a duration (true), padded as a table cell; `-` when
/// the trace does not tell.
struct Opt(Option<u64>, bool);

impl fmt::Display for Opt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut l = uring::diag::Line::<32>::new();
        match *self {
            Opt(None, _) => return f.pad("-"),
            Opt(Some(v), true) => write!(l, "{}", Dur(v))?,
            Opt(Some(v), false) => write!(l, "{v}")?,
        }
        f.pad(l.as_str())
    }
}

impl Trace<'_> {
    fn errors<W: Write>(&self, op: u8, o: &mut W, json: bool) -> fmt::Result {
        let s = &self.ops[op as usize];
        let mut sep = "";
        let mut any = false;
        for e in s.errs.iter().filter(|e| e.2 > 0) {
            if json {
                write!(o, "{sep}{}:{}", JStr(&e.0[..e.1]), e.2)?;
                sep = ",";
            } else {
                write!(o, "{sep}{}:{}", Text(&e.0[..e.1]), e.2)?;
                sep = " ";
            }
            any = true;
        }
        if s.other_errs > 0 {
            if json {
                write!(o, "{sep}\"other\":{}", s.other_errs)?;
            } else {
                write!(o, "{sep}other:{}", s.other_errs)?;
            }
            any = true;
        }
        if !any && !json {
            o.write_str("-")?;
        }
        Ok(())
    }

    fn text<W: Write>(&mut self, o: &mut W) -> fmt::Result {
        writeln!(
            o,
            "{:<16} {:>8} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9}  errors",
            "opcode", "count", "unseen", "more", "p50", "p90", "p99", "max"
        )?;
        let n = self.n;
        let reqs = core::mem::take(&mut self.reqs);
        let r = by_op(&mut reqs[..n], |op, g| {
            let d = Durs(g);
            let s = &self.ops[op as usize];
            write!(
                o,
                "{:<16} {:>8} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9}  ",
                op_name(op),
                s.count,
                s.count.saturating_sub(s.done),
                s.more,
                Opt(Some(d.at(50)), true),
                Opt(Some(d.at(90)), true),
                Opt(Some(d.at(99)), true),
                Opt(Some(d.at(100)), true)
            )?;
            self.errors(op, o, false)?;
            o.write_str("\n")
        });
        self.reqs = reqs;
        r?;
        // Opcodes whose requests never completed visibly.
        for op in 0..=255u8 {
            let s = &self.ops[op as usize];
            if s.done == 0 && (s.count > 0 || s.more > 0) {
                writeln!(
                    o,
                    "{:<16} {:>8} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9}  -",
                    op_name(op),
                    s.count,
                    s.count,
                    s.more,
                    "-",
                    "-",
                    "-",
                    "-"
                )?;
            }
        }
        writeln!(o)?;
        writeln!(
            o,
            "{:<24} {:>9} {:>13} {:>14} {:>11} {:>10}",
            "ring", "requests", "unseen_cqes", "peak_in_flight", "cq_overflow", "waited"
        )?;
        for r in &self.rings[..self.nrings] {
            let mut l = uring::diag::Line::<64>::new();
            let _ = write!(l, "ring {} pid {}", Text(r.name()), r.pid);
            let peak = r.peak.unwrap_or(r.computed_peak.max(0) as u64);
            writeln!(
                o,
                "{:<24} {:>9} {:>13} {:>14} {:>11} {:>10}",
                l.as_str(),
                r.requests,
                r.unseen,
                peak,
                Opt(r.overflow, false),
                Opt(r.waited, true)
            )?;
        }
        Ok(())
    }

    fn json_out<W: Write>(&mut self, o: &mut W) -> fmt::Result {
        o.write_str("{\"format\":")?;
        o.write_str(if self.json { "\"json\"" } else { "\"text\"" })?;
        o.write_str(",\"opcodes\":[")?;
        let n = self.n;
        let reqs = core::mem::take(&mut self.reqs);
        let mut sep = "";
        let r = by_op(&mut reqs[..n], |op, g| {
            let d = Durs(g);
            let s = &self.ops[op as usize];
            write!(
                o,
                "{sep}{{\"op\":\"{}\",\"count\":{},\"unseen\":{},\"more\":{},\"errors\":{{",
                op_name(op),
                s.count,
                s.count.saturating_sub(s.done),
                s.more
            )?;
            self.errors(op, o, true)?;
            write!(
                o,
                "}},\"p50_ns\":{},\"p90_ns\":{},\"p99_ns\":{},\"max_ns\":{}}}",
                d.at(50),
                d.at(90),
                d.at(99),
                d.at(100)
            )?;
            sep = ",";
            Ok(())
        });
        self.reqs = reqs;
        r?;
        for op in 0..=255u8 {
            let s = &self.ops[op as usize];
            if s.done == 0 && (s.count > 0 || s.more > 0) {
                write!(
                    o,
                    "{sep}{{\"op\":\"{}\",\"count\":{},\"unseen\":{},\"more\":{},\"errors\":{{}},\"p50_ns\":null,\
                    \"p90_ns\":null,\"p99_ns\":null,\"max_ns\":null}}",
                    op_name(op),
                    s.count,
                    s.count,
                    s.more
                )?;
                sep = ",";
            }
        }
        o.write_str("],\"rings\":[")?;
        for (k, r) in self.rings[..self.nrings].iter().enumerate() {
            let peak = r.peak.unwrap_or(r.computed_peak.max(0) as u64);
            write!(o, "{}{{\"ring\":{},\"pid\":{},\"requests\":{},\"unseen_cqes\":{},\"peak_in_flight\":{},\"cq_overflow\":{},\
                \"waited_ns\":{}}}",
                if k > 0 { "," } else { "" }, JStr(r.name()), r.pid, r.requests, r.unseen, peak,
                super::JOpt(r.overflow), super::JOpt(r.waited))?;
        }
        o.write_str("]}\n")
    }
}

/// Runs `--summary [--json | --svg] FILE`; the exit code.
pub fn run(file: &core::ffi::CStr, mode: Mode, out: &mut Out, err: &mut Out) -> i32 {
    let map = match Map::file(file) {
        Ok(m) => m,
        Err(e) => {
            let _ = writeln!(
                err,
                "uring-info: {}: {}",
                Text(file.to_bytes()),
                uring::diag::names::errno_name(e).unwrap_or("error")
            );
            return 1;
        }
    };
    let text = map.bytes();
    let lines = text.iter().filter(|&&c| c == b'\n').count() + 1;
    let store = match Map::anon(lines * core::mem::size_of::<Req>()) {
        Ok(m) => m,
        Err(_) => {
            let _ = writeln!(err, "uring-info: no memory for {lines} lines");
            return 1;
        }
    };
    // SAFETY: the anonymous mapping holds `lines` zeroed Reqs (all-zero is
    // a valid Req) and outlives `t`.
    let reqs = unsafe { core::slice::from_raw_parts_mut(store.p as *mut Req, lines) };
    let json = text.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'[');
    let mut t =
        Trace { reqs, n: 0, rings: [RingSum::default(); MAX_RINGS], nrings: 0, ops: [OpSum::default(); 256], json };
    for line in text.split(|&c| c == b'\n') {
        if json {
            t.json_line(line);
        } else {
            t.text_line(line);
        }
    }
    if t.nrings == 0 {
        let _ = writeln!(err, "uring-info: {}: no LIBURING_RS_TRACE events in it", Text(file.to_bytes()));
        return 1;
    }
    let r = match mode {
        Mode::Text => t.text(out),
        Mode::Json => t.json_out(out),
        Mode::Svg => svg::draw(&mut t, out),
    };
    if r.is_err() {
        return 1;
    }
    0
}

#[derive(Clone, Copy)]
pub enum Mode {
    Text,
    Json,
    Svg,
}
