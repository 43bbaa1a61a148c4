//! uring-info: what io_uring can do on this machine, and why not.
//!
//!     uring-info                  readable report
//!     uring-info --json           the same facts as one JSON object
//!     uring-info --check NAME...  exit 0 if every named feature is available
//!
//! The facts come from the library's own code (`uring::diag`, `uring::ring`):
//! the report is what this library sees. The program only creates rings of
//! its own and closes them; docs/uring-info.md describes the JSON schema and
//! how each fact is found.
//!
//! The library crate is `no_std` under `panic = "abort"` and brings its own
//! panic handler; a `std` binary would bring a second one, which Rust
//! refuses. So this binary is `no_std` too, with a C `main` and libc for
//! output; it needs no allocator. When something builds it with unwinding
//! (the library then uses `std` and has no handler), it takes `std`'s.
#![no_std]
#![no_main]

#[cfg(not(panic = "abort"))]
extern crate std;

// A no_std binary names libc itself (std would have).
#[link(name = "c")]
extern "C" {}

// rust_eh_personality, which the prebuilt `core` refers to, comes from the
// library (src/rt.rs).

#[path = "summary/mod.rs"]
mod summary;

use core::ffi::{c_char, c_int, CStr};
use core::fmt::{self, Write};

use uring::diag::names::{Errno, Names, FEATURES, OPCODES, REGISTER_OPS, SETUP_FLAGS};
use uring::diag::sysinfo::{SysFacts, Utsname, CAP_IPC_LOCK, CAP_SYS_ADMIN, UNLIMITED};
use uring::diag::{setup as diag_setup, Line};
use uring::ring::ask::{self as probe, RegAnswer};
use uring::ring::{setup, IoUring, Ring};
use uring::sys::{io_uring_query_opcode, IORING_REGISTER_LAST, IORING_SETUP_SQPOLL};

const USAGE: &str = "usage: uring-info [--json | --check FEATURE... | --summary [--json | --svg] FILE]\n\
    \n\
    Reports what io_uring can do on this machine, and why not.\n\
    \x20 --json           print the facts as one JSON object\n\
    \x20 --check NAME...  exit 0 if every named opcode, setup flag, feature\n\
    \x20                  (FEAT_*) or register opcode (REGISTER_*) is available,\n\
    \x20                  1 if one is not, 2 if a name is unknown\n\
    \x20 --summary FILE   read a LIBURING_RS_TRACE file (text or json): one line\n\
    \x20                  per opcode (count, latency percentiles, errors), one per\n\
    \x20                  ring; with --json as JSON, with --svg as a timeline picture\n";

const N_REG: usize = IORING_REGISTER_LAST as usize;

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

/// Buffered output to a file descriptor, flushed when full and at the end.
struct Out {
    fd: c_int,
    buf: [u8; 4096],
    len: usize,
}

impl Out {
    const fn new(fd: c_int) -> Self {
        Out { fd, buf: [0; 4096], len: 0 }
    }

    fn flush(&mut self) {
        let mut done = 0;
        while done < self.len {
            // SAFETY: writing the filled part of our own buffer.
            let n = unsafe { libc::write(self.fd, self.buf[done..self.len].as_ptr().cast(), self.len - done) };
            if n <= 0 {
                break;
            }
            done += n as usize;
        }
        self.len = 0;
    }
}

impl Write for Out {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for chunk in s.as_bytes().chunks(self.buf.len()) {
            if self.len + chunk.len() > self.buf.len() {
                self.flush();
            }
            self.buf[self.len..self.len + chunk.len()].copy_from_slice(chunk);
            self.len += chunk.len();
        }
        Ok(())
    }
}

/// Bytes shown as text; invalid UTF-8 becomes U+FFFD.
struct Text<'a>(&'a [u8]);

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{fffd}")?;
            }
        }
        Ok(())
    }
}

/// A JSON string literal of some bytes.
struct JStr<'a>(&'a [u8]);

impl fmt::Display for JStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for chunk in self.0.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '"' => f.write_str("\\\"")?,
                    '\\' => f.write_str("\\\\")?,
                    c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
                    c => f.write_char(c)?,
                }
            }
            if !chunk.invalid().is_empty() {
                f.write_str("\u{fffd}")?;
            }
        }
        f.write_str("\"")
    }
}

/// A JSON value that may be null.
struct JOpt<T>(Option<T>);

impl<T: fmt::Display> fmt::Display for JOpt<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(v) => v.fmt(f),
            None => f.write_str("null"),
        }
    }
}

/// `-errno` as a JSON string of its name, 0 and up as null.
fn jerr(ret: i32) -> JOpt<JStr<'static>> {
    JOpt((ret < 0).then(|| JStr(uring::diag::names::errno_name(-ret).unwrap_or("unknown").as_bytes())))
}

// ---------------------------------------------------------------------------
// Facts
// ---------------------------------------------------------------------------

/// Everything the report shows. Probes that need a working io_uring are
/// left out (`None`) when io_uring is not available.
struct Report {
    uts: Option<Utsname>,
    /// 0, or the `-errno` of the library's own setup path.
    available: i32,
    cause: Line<512>,
    sys: SysFacts,
    uid: u32,
    euid: u32,
    features: Option<Result<u32, i32>>,
    query: Option<io_uring_query_opcode>,
    /// Per SETUP_FLAGS entry: 0 or -errno.
    flags: Option<[i32; 32]>,
    /// SQPOLL tried as nobody: (uid, result), root only.
    sqpoll_nobody: Option<(u32, i32)>,
    opcodes: Option<(Result<u8, i32>, [bool; 256])>,
    registers: Option<Result<[RegAnswer; N_REG], i32>>,
    largest: Option<Result<(u32, u32), i32>>,
    engine_env: Option<&'static CStr>,
}

/// Whether io_uring works here, through the library's own setup path; on
/// failure, its diagnosis.
fn availability() -> (i32, Line<512>) {
    let mut ring = IoUring::empty();
    let ret = setup::queue_init(4, Ring::from_mut(&mut ring), 0);
    let mut cause = Line::new();
    if ret == 0 {
        setup::queue_exit(Ring::from_mut(&mut ring));
    } else {
        let p = diag_setup::last_error();
        if !p.is_null() {
            // SAFETY: last_error returns this thread's live NUL-terminated line.
            let _ = write!(cause, "{}", Text(unsafe { CStr::from_ptr(p) }.to_bytes()));
        }
    }
    (ret, cause)
}

fn getenv(name: &CStr) -> Option<&'static CStr> {
    // SAFETY: a NUL-terminated name; the value lives as long as the
    // environment, which this program never changes.
    let v = unsafe { libc::getenv(name.as_ptr()) };
    // SAFETY: a non-null result is a NUL-terminated string.
    (!v.is_null()).then(|| unsafe { CStr::from_ptr(v) })
}

/// The user to try unprivileged SQPOLL as: nobody, or 65534.
fn nobody() -> (u32, u32) {
    // SAFETY: getpwnam with a NUL-terminated name; the record is read at once.
    let pw = unsafe { libc::getpwnam(c"nobody".as_ptr()) };
    if pw.is_null() {
        (65534, 65534)
    } else {
        // SAFETY: non-null getpwnam results point to a valid passwd.
        unsafe { ((*pw).pw_uid, (*pw).pw_gid) }
    }
}

/// Tries `flag` in a child that dropped root for `uid`/`gid`. The result
/// travels back as the exit status (its errno; 0 for accepted); `None` if
/// the child could not be made or could not drop privileges.
fn try_flag_as(uid: u32, gid: u32, flag: u32) -> Option<i32> {
    // SAFETY: this program is single-threaded, so the child may run any code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return None;
    }
    if pid == 0 {
        // SAFETY: dropping privileges in the child only; it exits below.
        let dropped = unsafe {
            libc::setgroups(0, core::ptr::null()) == 0
                && libc::setresgid(gid, gid, gid) == 0
                && libc::setresuid(uid, uid, uid) == 0
        };
        let code = if dropped { (-probe::try_flag(flag)).clamp(0, 254) } else { 255 };
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid || !libc::WIFEXITED(status) {
        return None;
    }
    match libc::WEXITSTATUS(status) {
        255 => None,
        e => Some(-e),
    }
}

/// The caller's LIBURING_RS_ENGINE, kept for the report; the probes then
/// run with `kernel`, so that they ask the kernel and never a userspace
/// engine ring the library would set up in `auto` mode.
fn take_engine_env() -> Option<&'static CStr> {
    let v = getenv(c"LIBURING_RS_ENGINE").map(|v| {
        // SAFETY: a NUL-terminated string; the copy is never freed, so it
        // lives as long as the program.
        unsafe { CStr::from_ptr(libc::strdup(v.as_ptr())) }
    });
    // SAFETY: both strings are NUL-terminated; no other thread runs yet.
    unsafe { libc::setenv(c"LIBURING_RS_ENGINE".as_ptr(), c"kernel".as_ptr(), 1) };
    v
}

impl Report {
    fn gather(engine_env: Option<&'static CStr>) -> Report {
        let (available, cause) = availability();
        // SAFETY: getuid/geteuid have no preconditions.
        let (uid, euid) = unsafe { (libc::getuid(), libc::geteuid()) };
        let mut r = Report {
            uts: Utsname::get(),
            available,
            cause,
            sys: SysFacts::gather(),
            uid,
            euid,
            features: None,
            query: probe::query(),
            flags: None,
            sqpoll_nobody: None,
            opcodes: None,
            registers: None,
            largest: None,
            engine_env,
        };
        if available != 0 {
            return r;
        }
        r.features = Some(probe::features());
        let mut flags = [0; 32];
        for (i, (flag, _)) in SETUP_FLAGS.pairs().enumerate() {
            flags[i] = probe::try_flag(flag);
        }
        r.flags = Some(flags);
        if euid == 0 {
            let (u, g) = nobody();
            r.sqpoll_nobody = try_flag_as(u, g, IORING_SETUP_SQPOLL).map(|ret| (u, ret));
        }
        let mut ops = [false; 256];
        r.opcodes = Some((probe::supported_opcodes(&mut ops), ops));
        let mut regs = [RegAnswer::Untested(0); N_REG];
        r.registers = Some(probe::register_opcodes(&mut regs).map(|()| regs));
        r.largest = Some(probe::largest_ring());
        r
    }
}

/// What this library runs rings on here, and why, as LIBURING_RS_ENGINE
/// (unset: `auto`) and the kernel's answer decide it.
fn engine(r: &Report) -> (&'static str, &'static str) {
    let asked = r.engine_env.map(|v| v.to_bytes()).unwrap_or(b"auto");
    let refused = matches!(-r.available, libc::ENOSYS | libc::EPERM | libc::EACCES);
    match asked {
        b"user" => ("userspace engine", "LIBURING_RS_ENGINE=user asks for it"),
        b"kernel" if r.available == 0 => ("kernel", "the kernel sets up rings for this process"),
        b"kernel" => {
            ("none", "the kernel refuses io_uring and LIBURING_RS_ENGINE=kernel rules out the userspace engine")
        }
        b"" | b"auto" if r.available == 0 => ("kernel", "the kernel sets up rings for this process"),
        b"" | b"auto" if refused => {
            ("userspace engine", "the kernel refuses io_uring, so auto mode falls back to the userspace engine")
        }
        b"" | b"auto" => {
            ("none", "the kernel fails ring setup for a reason the userspace engine does not stand in for")
        }
        _ => ("none", "LIBURING_RS_ENGINE has a value the library refuses (setup fails with EINVAL)"),
    }
}

// ---------------------------------------------------------------------------
// The readable report
// ---------------------------------------------------------------------------

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// "yes", or "no (ERRNO)".
struct Verdict(i32);

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 0 {
            f.write_str("yes")
        } else {
            write!(f, "no ({})", Errno(self.0))
        }
    }
}

/// Bytes, or "unlimited".
struct Limit(u64);

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == UNLIMITED {
            f.write_str("unlimited")
        } else {
            write!(f, "{} bytes", self.0)
        }
    }
}

fn text_report(r: &Report, o: &mut Out) -> fmt::Result {
    writeln!(o, "uring-info (liburing-rs {}.{})", uring::ring::version::MAJOR, uring::ring::version::MINOR)?;

    writeln!(o, "\nKernel")?;
    match &r.uts {
        Some(u) => {
            writeln!(o, "  {:<26}{} ({} {})", "release", Text(u.release()), Text(u.sysname()), Text(u.machine()))?
        }
        None => writeln!(o, "  {:<26}unknown", "release")?,
    }

    writeln!(o, "\nio_uring")?;
    if r.available == 0 {
        writeln!(o, "  {:<26}yes", "available")?;
    } else {
        writeln!(o, "  {:<26}no", "available")?;
        writeln!(o, "  {:<26}{}", "cause", r.cause.as_str())?;
    }

    writeln!(o, "\nPolicy")?;
    let s = &r.sys;
    match s.disabled {
        Some(0) => writeln!(o, "  {:<26}0 (every process may use io_uring)", "kernel.io_uring_disabled")?,
        Some(1) => writeln!(o, "  {:<26}1 (only io_uring_group and CAP_SYS_ADMIN)", "kernel.io_uring_disabled")?,
        Some(2) => writeln!(o, "  {:<26}2 (nobody may use io_uring)", "kernel.io_uring_disabled")?,
        Some(v) => writeln!(o, "  {:<26}{v}", "kernel.io_uring_disabled")?,
        None => writeln!(o, "  {:<26}absent (kernel before 6.6)", "kernel.io_uring_disabled")?,
    }
    match s.group {
        Some(g) if g >= 0 => writeln!(
            o,
            "  {:<26}{g} (this process is {}a member)",
            "kernel.io_uring_group",
            if s.in_group { "" } else { "not " }
        )?,
        Some(g) => writeln!(o, "  {:<26}{g} (none)", "kernel.io_uring_group")?,
        None => writeln!(o, "  {:<26}absent", "kernel.io_uring_group")?,
    }
    match s.seccomp {
        Some(0) => writeln!(o, "  {:<26}0 (off)", "seccomp")?,
        Some(1) => writeln!(o, "  {:<26}1 (strict)", "seccomp")?,
        Some(m) => writeln!(o, "  {:<26}{m} (filter; {} installed)", "seccomp", JOpt(s.seccomp_filters))?,
        None => writeln!(o, "  {:<26}unknown", "seccomp")?,
    }
    writeln!(o, "  {:<26}uid {}, euid {}", "user", r.uid, r.euid)?;
    writeln!(o, "  {:<26}{}", "CAP_SYS_ADMIN", yes(s.has_cap(CAP_SYS_ADMIN)))?;
    writeln!(o, "  {:<26}{}", "CAP_IPC_LOCK", yes(s.has_cap(CAP_IPC_LOCK)))?;
    match s.memlock {
        Some((soft, hard)) => writeln!(o, "  {:<26}{} (hard limit {})", "RLIMIT_MEMLOCK", Limit(soft), Limit(hard))?,
        None => writeln!(o, "  {:<26}unknown", "RLIMIT_MEMLOCK")?,
    }
    writeln!(
        o,
        "  {:<26}{}",
        "rings count as locked",
        if s.rings_count_as_locked() { "yes (unless CAP_IPC_LOCK)" } else { "no" }
    )?;

    if r.available != 0 {
        writeln!(o, "\nThe kernel's features, setup flags and opcodes cannot be probed without io_uring.")?;
    }
    if let Some(feat) = r.features {
        match feat {
            Ok(mask) => {
                writeln!(o, "\nFeatures (IORING_FEAT_*, 0x{mask:x})")?;
                for (v, name) in FEATURES.pairs() {
                    writeln!(o, "  {:<26}{}", FEATURES.labeled(name), yes(mask & v != 0))?;
                }
                let unnamed = mask & !FEATURES.pairs().fold(0, |a, e| a | e.0);
                if unnamed != 0 {
                    writeln!(o, "  {:<26}0x{unnamed:x}", "unnamed bits")?;
                }
            }
            Err(e) => writeln!(o, "\nFeatures: not read ({})", Errno(e))?,
        }
    }
    if let Some(flags) = &r.flags {
        writeln!(o, "\nSetup flags (each tried alone, with the flags it needs)")?;
        for (i, (v, name)) in SETUP_FLAGS.pairs().enumerate() {
            write!(o, "  {:<26}{}", name, Verdict(flags[i]))?;
            let needs = probe::companions(v);
            if needs != 0 {
                write!(o, "  (with {})", uring::diag::names::SetupFlags(needs))?;
            }
            writeln!(o)?;
            if v == IORING_SETUP_SQPOLL {
                match r.sqpoll_nobody {
                    Some((uid, ret)) => writeln!(o, "  {:<26}{}", SqpollAs(uid), Verdict(ret))?,
                    None if r.euid != 0 => writeln!(o, "  {:<26}not tested (not root)", "SQPOLL as root")?,
                    None => writeln!(o, "  {:<26}not tested (could not switch user)", "SQPOLL unprivileged")?,
                }
            }
        }
    }
    if let Some((res, ops)) = &r.opcodes {
        match res {
            Ok(last) => {
                writeln!(o, "\nOpcodes (IORING_REGISTER_PROBE; last_op {last})")?;
                for (v, name) in OPCODES.pairs() {
                    writeln!(o, "  {:<26}{}", name, yes(ops[v as usize]))?;
                }
            }
            Err(e) => writeln!(o, "\nOpcodes: no probe ({})", Errno(*e))?,
        }
    }
    if let Some(regs) = &r.registers {
        match regs {
            Ok(answers) => {
                writeln!(o, "\nRegister opcodes (each called so that it changes nothing)")?;
                for (i, a) in answers.iter().enumerate() {
                    let name = REGISTER_OPS.nth(i).unwrap_or("?");
                    match *a {
                        RegAnswer::Known(ret) if ret < 0 => writeln!(o, "  {:<26}yes (answers {})", name, Errno(ret))?,
                        RegAnswer::Known(ret) => writeln!(o, "  {:<26}yes (answers {ret})", name)?,
                        RegAnswer::Unknown(ret) => writeln!(o, "  {:<26}no ({})", name, Errno(ret))?,
                        RegAnswer::Untested(e) => writeln!(o, "  {:<26}not tested ({})", name, Errno(e))?,
                    }
                }
            }
            Err(e) => writeln!(o, "\nRegister opcodes: not probed ({})", Errno(*e))?,
        }
    }
    if let Some(q) = &r.query {
        writeln!(o, "\nThe kernel's own count (IORING_REGISTER_QUERY)")?;
        writeln!(o, "  {:<26}{}", "request opcodes", q.nr_request_opcodes)?;
        writeln!(o, "  {:<26}{}", "register opcodes", q.nr_register_opcodes)?;
        writeln!(o, "  {:<26}0x{:x}", "setup flags", q.ring_setup_flags)?;
        writeln!(o, "  {:<26}0x{:x}", "features", q.feature_flags)?;
    }
    if let Some(largest) = r.largest {
        writeln!(o, "\nLimits")?;
        match largest {
            Ok((sq, cq)) => writeln!(o, "  {:<26}{sq} SQ entries, {cq} CQ entries", "largest ring")?,
            Err(e) => writeln!(o, "  {:<26}unknown ({})", "largest ring", Errno(e))?,
        }
    }
    writeln!(o, "\nEngine")?;
    let (engine, why) = engine(r);
    writeln!(o, "  {:<26}{engine} ({why})", "rings run on")?;
    match r.engine_env {
        Some(v) => writeln!(o, "  {:<26}{}", "LIBURING_RS_ENGINE", Text(v.to_bytes()))?,
        None => writeln!(o, "  {:<26}(unset)", "LIBURING_RS_ENGINE")?,
    }
    Ok(())
}

struct SqpollAs(u32);

impl fmt::Display for SqpollAs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut l = Line::<32>::new();
        write!(l, "SQPOLL as uid {}", self.0)?;
        f.pad(l.as_str())
    }
}

// ---------------------------------------------------------------------------
// JSON (schema in docs/uring-info.md; bump "schema" on incompatible changes)
// ---------------------------------------------------------------------------

fn json_names(o: &mut Out, names: &Names, mask: u32) -> fmt::Result {
    o.write_str("[")?;
    let mut first = true;
    for (v, name) in names.pairs() {
        if mask & v != 0 {
            // Plain identifiers: nothing to escape.
            write!(o, "{}\"{}{}\"", if first { "" } else { ", " }, names.label, name)?;
            first = false;
        }
    }
    o.write_str("]")
}

fn json_report(r: &Report, o: &mut Out) -> fmt::Result {
    let s = &r.sys;
    let ok = r.available == 0;
    writeln!(o, "{{")?;
    writeln!(o, "  \"schema\": 1,")?;
    writeln!(
        o,
        "  \"library\": {{\"name\": \"liburing-rs\", \"version\": \"{}.{}\"}},",
        uring::ring::version::MAJOR,
        uring::ring::version::MINOR
    )?;
    let u = |f: fn(&Utsname) -> &[u8]| JOpt(r.uts.as_ref().map(|u| JStr(f(u))));
    writeln!(
        o,
        "  \"kernel\": {{\"sysname\": {}, \"release\": {}, \"version\": {}, \"machine\": {}}},",
        u(Utsname::sysname),
        u(Utsname::release),
        u(Utsname::version),
        u(Utsname::machine)
    )?;
    writeln!(
        o,
        "  \"io_uring\": {{\"available\": {ok}, \"error\": {}, \"cause\": {}}},",
        jerr(r.available),
        JOpt((!ok).then(|| JStr(r.cause.as_bytes())))
    )?;
    writeln!(
        o,
        "  \"sysctl\": {{\"io_uring_disabled\": {}, \"io_uring_group\": {}, \"in_io_uring_group\": {}}},",
        JOpt(s.disabled),
        JOpt(s.group),
        s.in_group
    )?;
    writeln!(
        o,
        "  \"process\": {{\"uid\": {}, \"euid\": {}, \"seccomp_mode\": {}, \"seccomp_filters\": {}, \
         \"cap_sys_admin\": {}, \"cap_ipc_lock\": {}}},",
        r.uid,
        r.euid,
        JOpt(s.seccomp),
        JOpt(s.seccomp_filters),
        s.has_cap(CAP_SYS_ADMIN),
        s.has_cap(CAP_IPC_LOCK)
    )?;
    let lim = |v: u64| JOpt((v != UNLIMITED).then_some(v));
    let (soft, hard) = s.memlock.map_or((JOpt(None), JOpt(None)), |(a, b)| (lim(a), lim(b)));
    writeln!(
        o,
        "  \"memlock\": {{\"soft\": {soft}, \"hard\": {hard}, \"rings_count_as_locked\": {}}},",
        s.rings_count_as_locked()
    )?;

    let mask = match r.features {
        Some(Ok(m)) => Some(m),
        _ => None,
    };
    write!(o, "  \"features\": {{\"mask\": {}, \"names\": ", JOpt(mask))?;
    json_names(o, &FEATURES, mask.unwrap_or(0))?;
    writeln!(o, "}},")?;

    match &r.query {
        Some(q) => writeln!(
            o,
            "  \"query\": {{\"request_opcodes\": {}, \"register_opcodes\": {}, \"setup_flags\": {}, \
             \"features\": {}, \"enter_flags\": {}, \"sqe_flags\": {}}},",
            q.nr_request_opcodes,
            q.nr_register_opcodes,
            q.ring_setup_flags,
            q.feature_flags,
            q.enter_flags,
            q.sqe_flags
        )?,
        None => writeln!(o, "  \"query\": null,")?,
    }

    writeln!(o, "  \"setup_flags\": [")?;
    for (i, (v, name)) in SETUP_FLAGS.pairs().enumerate() {
        let ret = r.flags.map(|f| f[i]);
        write!(o, "    {{\"name\": {}, \"value\": {v}, \"needs\": ", JStr(name.as_bytes()))?;
        json_names(o, &SETUP_FLAGS, probe::companions(v))?;
        writeln!(
            o,
            ", \"accepted\": {}, \"error\": {}}}{}",
            JOpt(ret.map(|r| r == 0)),
            ret.map_or(JOpt(None), jerr),
            if i + 1 < SETUP_FLAGS.count() { "," } else { "" }
        )?;
    }
    writeln!(o, "  ],")?;
    let (uid, ret) = match r.sqpoll_nobody {
        Some((u, ret)) => (Some(u), Some(ret)),
        None => (None, None),
    };
    writeln!(
        o,
        "  \"sqpoll_unprivileged\": {{\"uid\": {}, \"accepted\": {}, \"error\": {}}},",
        JOpt(uid),
        JOpt(ret.map(|r| r == 0)),
        ret.map_or(JOpt(None), jerr)
    )?;

    let (last, ops) = match &r.opcodes {
        Some((Ok(last), ops)) => (Some(*last), Some(ops)),
        _ => (None, None),
    };
    writeln!(o, "  \"probe_last_op\": {},", JOpt(last))?;
    writeln!(o, "  \"opcodes\": [")?;
    for (i, (v, name)) in OPCODES.pairs().enumerate() {
        writeln!(
            o,
            "    {{\"name\": {}, \"value\": {v}, \"supported\": {}}}{}",
            JStr(name.as_bytes()),
            JOpt(ops.map(|ops| ops[v as usize])),
            if i + 1 < OPCODES.count() { "," } else { "" }
        )?;
    }
    writeln!(o, "  ],")?;

    let regs = match &r.registers {
        Some(Ok(a)) => Some(a),
        _ => None,
    };
    writeln!(o, "  \"register_opcodes\": [")?;
    for (i, (v, name)) in REGISTER_OPS.pairs().enumerate() {
        let (known, result) = match regs.map(|a| a[i]) {
            Some(RegAnswer::Known(ret)) => (Some(true), Some(ret)),
            Some(RegAnswer::Unknown(ret)) => (Some(false), Some(ret)),
            _ => (None, None),
        };
        writeln!(
            o,
            "    {{\"name\": {}, \"value\": {v}, \"known\": {}, \"result\": {}, \"error\": {}}}{}",
            JStr(name.as_bytes()),
            JOpt(known),
            JOpt(result),
            result.map_or(JOpt(None), jerr),
            if i + 1 < N_REG { "," } else { "" }
        )?;
    }
    writeln!(o, "  ],")?;

    match r.largest {
        Some(Ok((sq, cq))) => writeln!(o, "  \"largest_ring\": {{\"sq_entries\": {sq}, \"cq_entries\": {cq}}},")?,
        _ => writeln!(o, "  \"largest_ring\": null,")?,
    }
    let (engine, why) = engine(r);
    writeln!(
        o,
        "  \"engine\": {{\"selected\": \"{engine}\", \"reason\": {}, \"LIBURING_RS_ENGINE\": {}}}",
        JStr(why.as_bytes()),
        JOpt(r.engine_env.map(|v| JStr(v.to_bytes())))
    )?;
    writeln!(o, "}}")
}

// ---------------------------------------------------------------------------
// --check
// ---------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Feature {
    Opcode(u32),
    SetupFlag(u32),
    Feat(u32),
    Register(u32),
}

fn parse_feature(name: &[u8]) -> Option<Feature> {
    OPCODES
        .lookup(name)
        .map(Feature::Opcode)
        .or_else(|| SETUP_FLAGS.lookup(name).map(Feature::SetupFlag))
        .or_else(|| FEATURES.lookup(name).map(Feature::Feat))
        .or_else(|| REGISTER_OPS.lookup(name).map(Feature::Register))
}

/// Answers computed once, when a name first needs them.
#[derive(Default)]
struct Lazy {
    features: Option<u32>,
    opcodes: Option<[bool; 256]>,
    registers: Option<[RegAnswer; N_REG]>,
}

impl Lazy {
    fn has(&mut self, f: Feature) -> bool {
        match f {
            Feature::SetupFlag(v) => probe::try_flag(v) == 0,
            Feature::Feat(v) => *self.features.get_or_insert_with(|| probe::features().unwrap_or(0)) & v != 0,
            Feature::Opcode(v) => self.opcodes.get_or_insert_with(|| {
                let mut ops = [false; 256];
                if probe::supported_opcodes(&mut ops).is_err() {
                    ops = [false; 256];
                }
                ops
            })[v as usize],
            Feature::Register(v) => self.registers.get_or_insert_with(|| {
                let mut regs = [RegAnswer::Untested(0); N_REG];
                if probe::register_opcodes(&mut regs).is_err() {
                    regs = [RegAnswer::Untested(0); N_REG];
                }
                regs
            })[v as usize]
                .is_known(),
        }
    }
}

fn check(names: &[&CStr], err: &mut Out) -> c_int {
    let mut wanted = [Feature::Opcode(0); 64];
    if names.len() > wanted.len() {
        let _ = writeln!(err, "uring-info: at most {} names at once", wanted.len());
        return 2;
    }
    for (slot, name) in wanted.iter_mut().zip(names) {
        match parse_feature(name.to_bytes()) {
            Some(f) => *slot = f,
            None => {
                let _ = writeln!(
                    err,
                    "uring-info: unknown feature name '{}' (opcodes, setup flags, FEAT_* and REGISTER_* names)",
                    Text(name.to_bytes())
                );
                return 2;
            }
        }
    }
    let (available, cause) = availability();
    if available != 0 {
        let _ = writeln!(err, "uring-info: io_uring is not available: {}", cause.as_str());
    }
    let mut lazy = Lazy::default();
    let mut missing = 0;
    for (f, name) in wanted.iter().zip(names) {
        if available != 0 || !lazy.has(*f) {
            let _ = writeln!(err, "uring-info: not available: {}", Text(name.to_bytes()));
            missing += 1;
        }
    }
    (missing > 0) as c_int
}

// ---------------------------------------------------------------------------

fn run(args: &[&CStr], engine_env: Option<&'static CStr>) -> c_int {
    let mut out = Out::new(1);
    let mut err = Out::new(2);
    let code = match args.split_first().map(|(a, rest)| (a.to_bytes(), rest)) {
        None => {
            let _ = text_report(&Report::gather(engine_env), &mut out);
            0
        }
        Some((b"--json", [])) => {
            let _ = json_report(&Report::gather(engine_env), &mut out);
            0
        }
        Some((b"-h" | b"--help", [])) => {
            let _ = out.write_str(USAGE);
            0
        }
        Some((b"--check", names)) if !names.is_empty() => check(names, &mut err),
        Some((b"--summary", rest)) => {
            let (mode, file) = match rest {
                [f] => (summary::Mode::Text, f),
                [m, f] | [f, m] if m.to_bytes() == b"--json" => (summary::Mode::Json, f),
                [m, f] | [f, m] if m.to_bytes() == b"--svg" => (summary::Mode::Svg, f),
                _ => {
                    let _ = err.write_str(USAGE);
                    err.flush();
                    return 2;
                }
            };
            summary::run(file, mode, &mut out, &mut err)
        }
        _ => {
            let _ = err.write_str(USAGE);
            2
        }
    };
    out.flush();
    err.flush();
    code
}

/// # Safety
/// Called by the C runtime with `argc` valid strings in `argv`.
#[no_mangle]
pub unsafe extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // Everything below asks the kernel, `--check` included.
    let engine_env = take_engine_env();
    let mut args = [c""; 66];
    let n = (argc.max(1) - 1) as usize;
    if n > args.len() {
        let mut err = Out::new(2);
        let _ = err.write_str(USAGE);
        err.flush();
        return 2;
    }
    for (i, slot) in args[..n].iter_mut().enumerate() {
        // SAFETY: the C runtime passes argc valid NUL-terminated strings.
        *slot = unsafe { CStr::from_ptr(*argv.add(i + 1)) };
    }
    run(&args[..n], engine_env)
}
