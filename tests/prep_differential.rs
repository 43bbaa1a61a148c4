//! Differential test of liburing's SQE prep helpers and SQE/CQE accessors.
//!
//! The helpers are only inline functions in `liburing.h`; `liburing-ffi.so.2`
//! exports each of them as a real symbol. This test dlopen()s that library
//! (build/lib/liburing-ffi.so.2, or the file named by `LIBURING_FFI_SO`, which
//! lets the same test run against a reference build) and never links the
//! liburing-rs crate itself.
//!
//! Part 1 (differential): for every helper whose operation the `io-uring`
//! crate (tokio-rs, 0.7) can also build, thousands of random argument sets are
//! encoded both ways and the 64-byte SQEs must be byte-identical. The liburing
//! side starts from an all-zero SQE: that equals what io_uring_get_sqe() hands
//! out for every field io_uring_initialize_sqe() clears, and every remaining
//! field is written by the helper itself. The bytes 64..128 after the SQE must
//! stay untouched.
//!
//! Where the two libraries express the same operation with different calls
//! (the crate sets IOSQE_BUFFER_SELECT and the buffer group inside its
//! builder, liburing leaves that to io_uring_sqe_set_flags() and
//! io_uring_sqe_set_buf_group(); the crate encodes a fixed file inside its
//! builder, liburing via IOSQE_FIXED_FILE), the liburing side makes those
//! extra accessor calls, so the accessors are exercised too. Remaining true
//! encoding differences are documented next to the case that avoids them.
//!
//! Part 2 (golden): helpers the crate does not cover are checked against an
//! SQE built here field by field from the kernel's documented layout.

use io_uring::{opcode, squeue, types};
use std::collections::BTreeMap;
use std::ffi::{c_void, CString};
use std::mem::{size_of, transmute_copy};

const ITERS: usize = 1000;

// ---- kernel constants (include/uapi/linux/io_uring.h) ----
const IOSQE_FIXED_FILE: u8 = 1 << 0;
const IOSQE_BUFFER_SELECT: u8 = 1 << 5;
const IORING_FILE_INDEX_ALLOC: u32 = !0;
const IORING_RECV_MULTISHOT: u16 = 1 << 1;
const IORING_RECVSEND_FIXED_BUF: u16 = 1 << 2;
const IORING_ASYNC_CANCEL_ALL: u32 = 1 << 0;
const IORING_ASYNC_CANCEL_FD: u32 = 1 << 1;
const IORING_ASYNC_CANCEL_ANY: u32 = 1 << 2;
const IORING_ASYNC_CANCEL_FD_FIXED: u32 = 1 << 3;
const IORING_TIMEOUT_UPDATE: u32 = 1 << 1;
const SPLICE_F_FD_IN_FIXED: u32 = 1 << 31;
const SOCKET_URING_OP_GETSOCKOPT: i32 = 2;
const SOCKET_URING_OP_SETSOCKOPT: i32 = 3;
const SOCKET_URING_OP_GETSOCKNAME: u32 = 5;
const IORING_OP_RW_BASE: [u8; 3] = [0, 22, 23]; // NOP, READ, WRITE for prep_rw
const IORING_OP_POLL_REMOVE: u8 = 7;
const IORING_OP_TIMEOUT_REMOVE: u8 = 12;
const IORING_OP_ASYNC_CANCEL: u8 = 14;
const IORING_OP_FADVISE: u8 = 24;
const IORING_OP_MADVISE: u8 = 25;
const IORING_OP_RECV: u8 = 27;
const IORING_OP_URING_CMD: u8 = 46;
const IORING_OP_SEND_ZC: u8 = 47;
const IORING_OP_NOP128: u8 = 63;
const IORING_OP_URING_CMD128: u8 = 64;
const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8; // _IO(0x12, 0)
const BLOCK_URING_CMD_ZONE_RESET_ALL: u32 = (0x12 << 8) | 1; // _IO(0x12, 1)
const IORING_SETUP_SQE128: u32 = 1 << 10;
const IORING_SETUP_CQE32: u32 = 1 << 11;
const IORING_CQE_F_32: u32 = 1 << 15;
const AT_FDCWD: i32 = -100;

// ---- SQE field offsets, for readable diffs and golden SQEs ----
const FIELDS: &[(&str, usize, usize)] = &[
    ("opcode", 0, 1),
    ("flags", 1, 1),
    ("ioprio", 2, 2),
    ("fd", 4, 4),
    ("off/addr2/cmd_op", 8, 8),
    ("addr/splice_off_in/level+optname", 16, 8),
    ("len", 24, 4),
    ("op_flags(rw_flags,...)", 28, 4),
    ("user_data", 32, 8),
    ("buf_index/buf_group", 40, 2),
    ("personality", 42, 2),
    ("file_index/splice_fd_in/optlen/addr_len", 44, 4),
    ("addr3/optval/cmd", 48, 8),
    ("__pad2", 56, 8),
];

type Bytes = [u8; 64];

/// A golden SQE under construction.
struct Gold(Bytes);

/// One setter a field: `name: type = offset`, stored in native byte order.
macro_rules! gold_fields {
    ($($name:ident: $t:ty = $off:expr),* $(,)?) => {
        $(fn $name(self, v: $t) -> Self {
            self.put($off, &v.to_ne_bytes())
        })*
    };
}

impl Gold {
    fn new(opcode: u8) -> Self {
        let mut b = [0u8; 64];
        b[0] = opcode;
        Gold(b)
    }
    fn put(mut self, off: usize, v: &[u8]) -> Self {
        self.0[off..off + v.len()].copy_from_slice(v);
        self
    }
    gold_fields! {
        flags: u8 = 1,
        ioprio: u16 = 2,
        fd: i32 = 4,
        off: u64 = 8,
        addr: u64 = 16,
        len: u32 = 24,
        op_flags: u32 = 28,
        user_data: u64 = 32,
        buf_index: u16 = 40,
        file_index: u32 = 44,
        addr3: u64 = 48,
    }
}

/// splitmix64: small deterministic generator, seeded per helper name.
struct Rng(u64);
impl Rng {
    fn for_name(name: &str) -> Self {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in name.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
        Rng(h)
    }
    fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.u64() % n
    }
    fn bool(&mut self) -> bool {
        self.u64() & 1 == 1
    }
    /// A 64-bit value biased towards edge cases.
    fn v64(&mut self) -> u64 {
        match self.below(8) {
            0 => 0,
            1 => u64::MAX,
            2 => self.below(16),
            3 => 1u64 << self.below(64),
            4 => (self.u64() as u32) as u64,
            _ => self.u64(),
        }
    }
    fn v32(&mut self) -> u32 {
        match self.below(8) {
            0 => 0,
            1 => u32::MAX,
            2 => self.below(16) as u32,
            3 => 1u32 << self.below(32),
            _ => self.u64() as u32,
        }
    }
    fn i32(&mut self) -> i32 {
        self.v32() as i32
    }
    fn u16(&mut self) -> u16 {
        match self.below(4) {
            0 => 0,
            1 => u16::MAX,
            _ => self.u64() as u16,
        }
    }
    /// Any descriptor value, including -1 and AT_FDCWD.
    fn fd(&mut self) -> i32 {
        match self.below(8) {
            0 => -1,
            1 => AT_FDCWD,
            2 => i32::MAX,
            3 | 4 => self.below(1024) as i32,
            _ => (self.u64() as i32) & i32::MAX,
        }
    }
    /// A non-negative descriptor or fixed-file index.
    fn fd_nonneg(&mut self) -> i32 {
        match self.below(4) {
            0 => 0,
            1 => self.below(64) as i32,
            _ => (self.u64() as i32) & i32::MAX,
        }
    }
    /// A pointer-sized value (never dereferenced by the helpers).
    fn ptr(&mut self) -> u64 {
        match self.below(6) {
            0 => 0,
            1 => 0x7fff_0000_0000 + (self.u64() & 0xffff_fff8),
            _ => self.u64(),
        }
    }
    /// A slot for *_direct helpers: 0..=u32::MAX-2, or IORING_FILE_INDEX_ALLOC.
    fn slot(&mut self) -> u32 {
        match self.below(5) {
            0 => IORING_FILE_INDEX_ALLOC,
            1 => 0,
            2 => u32::MAX - 2,
            _ => (self.u64() as u32) % (u32::MAX - 1),
        }
    }
}

fn dest(slot: u32) -> types::DestinationSlot {
    if slot == IORING_FILE_INDEX_ALLOC {
        types::DestinationSlot::auto_target()
    } else {
        types::DestinationSlot::try_from_slot_target(slot).expect("slot in range")
    }
}

struct Lib {
    handle: *mut c_void,
    path: String,
    /// liburing-ffi.so.2 rows of abi/liburing-2.15-symbols.tsv: a helper
    /// listed there must be exported; the few inline helpers that liburing
    /// does not export (e.g. io_uring_initialize_sqe) are skipped if absent.
    table: std::collections::HashSet<String>,
}

impl Lib {
    fn open() -> Lib {
        let path = std::env::var("LIBURING_FFI_SO")
            .unwrap_or_else(|_| format!("{}/build/lib/liburing-ffi.so.2", env!("CARGO_MANIFEST_DIR")));
        if !std::path::Path::new(&path).exists() {
            panic!("{path} does not exist: run `make lib` first");
        }
        let c = CString::new(path.clone()).unwrap();
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            let err = unsafe { std::ffi::CStr::from_ptr(libc::dlerror()) };
            panic!("dlopen({path}) failed: {err:?} (run `make lib` first)");
        }
        let tsv = format!("{}/abi/liburing-2.15-symbols.tsv", env!("CARGO_MANIFEST_DIR"));
        let table = std::fs::read_to_string(&tsv)
            .unwrap_or_else(|e| panic!("{tsv}: {e}"))
            .lines()
            .filter_map(|l| {
                let c: Vec<&str> = l.split('\t').collect();
                (c.len() == 3 && c[2] == "liburing-ffi.so.2").then(|| c[0].to_string())
            })
            .collect();
        Lib { handle, path, table }
    }

    /// Looks a symbol up as a function pointer type `T`.
    fn sym<T: Copy>(&self, name: &str) -> Option<T> {
        assert_eq!(size_of::<T>(), size_of::<usize>());
        let c = CString::new(name).unwrap();
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        if p.is_null() {
            None
        } else {
            Some(unsafe { transmute_copy::<*mut c_void, T>(&p) })
        }
    }
}

/// A 128-byte, 64-aligned zeroed SQE slot, so that a helper that writes past
/// a 64-byte SQE is caught.
#[repr(C, align(64))]
struct Slot([u8; 128]);

fn c_sqe(f: impl FnOnce(*mut u8)) -> Result<Bytes, String> {
    let mut s = Slot([0u8; 128]);
    f(s.0.as_mut_ptr());
    if s.0[64..].iter().any(|&b| b != 0) {
        return Err("helper wrote beyond the 64-byte SQE".into());
    }
    Ok(s.0[..64].try_into().unwrap())
}

fn ent(e: squeue::Entry) -> Bytes {
    assert_eq!(size_of::<squeue::Entry>(), 64);
    unsafe { transmute_copy::<squeue::Entry, Bytes>(&e) }
}

fn diff_text(a: &Bytes, b: &Bytes) -> String {
    let mut out = String::new();
    for &(name, off, len) in FIELDS {
        if a[off..off + len] != b[off..off + len] {
            out += &format!(
                "\n      {name:<40} liburing {:02x?} expected {:02x?}",
                &a[off..off + len],
                &b[off..off + len]
            );
        }
    }
    out
}

#[derive(Default)]
struct Report {
    counts: BTreeMap<String, (usize, &'static str)>,
    failures: Vec<String>,
}

type SetFlags = unsafe extern "C" fn(*mut u8, u32);
type SetData64 = unsafe extern "C" fn(*mut u8, u64);
type SetData = unsafe extern "C" fn(*mut u8, *mut c_void);
type SetBufGroup = unsafe extern "C" fn(*mut u8, i32);

/// The SQE accessors, applied on the liburing side.
struct Acc {
    set_flags: SetFlags,
    set_data64: SetData64,
    set_data: SetData,
    set_buf_group: SetBufGroup,
}

unsafe extern "C" fn miss_flags(_: *mut u8, _: u32) {}
unsafe extern "C" fn miss_data64(_: *mut u8, _: u64) {}
unsafe extern "C" fn miss_data(_: *mut u8, _: *mut c_void) {}
unsafe extern "C" fn miss_bg(_: *mut u8, _: i32) {}

impl Acc {
    /// OR `f` into the SQE's flags through io_uring_sqe_set_flags().
    unsafe fn or_flags(&self, s: *mut u8, f: u8) {
        let cur = *s.add(1);
        (self.set_flags)(s, (cur | f) as u32);
    }
}

/// Runs `ITERS` random cases of one helper. `case` returns the argument text,
/// the liburing SQE and the expected SQE.
fn run<F: Copy>(
    rep: &mut Report,
    lib: &Lib,
    kind: &'static str,
    name: &str,
    mut case: impl FnMut(&mut Rng, F) -> (String, Result<Bytes, String>, Bytes),
) {
    let sym = name.split('#').next().unwrap();
    let Some(f) = lib.sym::<F>(sym) else {
        if lib.table.contains(sym) {
            rep.failures.push(format!("{name}: symbol not exported by {}", lib.path));
            rep.counts.insert(name.to_string(), (0, kind));
        } else {
            rep.counts.insert(name.to_string(), (0, "not-in-abi"));
        }
        return;
    };
    let mut rng = Rng::for_name(name);
    let mut ok = 0;
    let mut bad = 0;
    for _ in 0..ITERS {
        let (args, got, want) = case(&mut rng, f);
        match got {
            Ok(got) if got == want => ok += 1,
            Ok(got) => {
                bad += 1;
                if bad <= 2 {
                    rep.failures.push(format!("{name}({args}): SQE differs:{}", diff_text(&got, &want)));
                }
            }
            Err(e) => {
                bad += 1;
                if bad <= 2 {
                    rep.failures.push(format!("{name}({args}): {e}"));
                }
            }
        }
    }
    if bad > 0 {
        rep.failures.push(format!("{name}: {bad} of {ITERS} cases failed"));
    }
    rep.counts.insert(name.to_string(), (ok, kind));
}

/// Builds the crate entry with either a plain fd or a fixed-file index.
macro_rules! tgt {
    ($fixed:expr, $fd:expr, |$t:ident| $body:expr) => {
        if $fixed {
            let $t = types::Fixed($fd as u32);
            $body
        } else {
            let $t = types::Fd($fd);
            $body
        }
    };
}

/// Random user_data/flags decoration, applied to both sides: liburing via
/// io_uring_sqe_set_data{,64}() and io_uring_sqe_set_flags(), the crate via
/// Entry::user_data() and Entry::flags(). Returns (user_data, extra flags, use_ptr).
fn decor(r: &mut Rng) -> Option<(u64, u8, bool)> {
    if r.below(3) == 0 {
        None
    } else {
        // Flag bits 0..6 are the IOSQE_* bits.
        Some((r.v64(), (r.u64() & 0x7f) as u8, r.bool()))
    }
}

fn apply_c(acc: &Acc, s: *mut u8, d: Option<(u64, u8, bool)>) {
    if let Some((ud, fl, ptr)) = d {
        unsafe {
            if ptr {
                (acc.set_data)(s, ud as usize as *mut c_void);
            } else {
                (acc.set_data64)(s, ud);
            }
            acc.or_flags(s, fl);
        }
    }
}

fn apply_e(e: squeue::Entry, d: Option<(u64, u8, bool)>) -> squeue::Entry {
    match d {
        Some((ud, fl, _)) => e.user_data(ud).flags(squeue::Flags::from_bits_retain(fl)),
        None => e,
    }
}

// Argument lists of the C helpers, sqe first.
type P = *mut u8;
type Ptr = u64; // pointers are passed as u64: same ABI class on x86-64/aarch64
type Cstr = u64;

#[test]
fn prep_helpers_match_io_uring_crate_and_golden_sqes() {
    let lib = Lib::open();
    let mut rep = Report::default();

    let acc = Acc {
        set_flags: lib.sym::<SetFlags>("io_uring_sqe_set_flags").unwrap_or_else(|| {
            rep.failures.push("io_uring_sqe_set_flags: symbol missing".into());
            miss_flags
        }),
        set_data64: lib.sym::<SetData64>("io_uring_sqe_set_data64").unwrap_or_else(|| {
            rep.failures.push("io_uring_sqe_set_data64: symbol missing".into());
            miss_data64
        }),
        set_data: lib.sym::<SetData>("io_uring_sqe_set_data").unwrap_or_else(|| {
            rep.failures.push("io_uring_sqe_set_data: symbol missing".into());
            miss_data
        }),
        set_buf_group: lib.sym::<SetBufGroup>("io_uring_sqe_set_buf_group").unwrap_or_else(|| {
            rep.failures.push("io_uring_sqe_set_buf_group: symbol missing".into());
            miss_bg
        }),
    };
    let acc = &acc;
    const D: &str = "differential";
    const G: &str = "golden";

    // ---------------------------------------------------------------
    // Part 1: differential against the io-uring crate
    // ---------------------------------------------------------------

    run(&mut rep, &lib, D, "io_uring_prep_nop", |r, f: unsafe extern "C" fn(P)| {
        let d = decor(r);
        let got = c_sqe(|s| unsafe {
            f(s);
            apply_c(acc, s, d);
        });
        (format!("{d:?}"), got, ent(apply_e(opcode::Nop::new().build(), d)))
    });

    // read/write family: (fd, buf/iov, len, offset[, rw_flags][, buf_index])
    macro_rules! rw_case {
        ($name:literal, $op:ident, $cast:ty, v2: false) => {
            run(&mut rep, &lib, D, $name, |r, f: unsafe extern "C" fn(P, i32, Ptr, u32, u64)| {
                let (fixed, d) = (r.bool(), decor(r));
                let fd = if fixed { r.fd_nonneg() } else { r.fd() };
                let (buf, len, off) = (r.ptr(), r.v32(), r.v64());
                let got = c_sqe(|s| unsafe {
                    f(s, fd, buf, len, off);
                    if fixed {
                        acc.or_flags(s, IOSQE_FIXED_FILE)
                    }
                    apply_c(acc, s, d);
                });
                let e = tgt!(fixed, fd, |t| opcode::$op::new(t, buf as $cast, len).offset(off).build());
                (format!("fd={fd} fixed={fixed} buf={buf:#x} len={len} off={off} {d:?}"), got, ent(apply_e(e, d)))
            });
        };
        ($name:literal, $op:ident, $cast:ty, v2: true) => {
            run(&mut rep, &lib, D, $name, |r, f: unsafe extern "C" fn(P, i32, Ptr, u32, u64, i32)| {
                let (fixed, d) = (r.bool(), decor(r));
                let fd = if fixed { r.fd_nonneg() } else { r.fd() };
                let (buf, len, off, fl) = (r.ptr(), r.v32(), r.v64(), r.i32());
                let got = c_sqe(|s| unsafe {
                    f(s, fd, buf, len, off, fl);
                    if fixed {
                        acc.or_flags(s, IOSQE_FIXED_FILE)
                    }
                    apply_c(acc, s, d);
                });
                let e = tgt!(fixed, fd, |t| opcode::$op::new(t, buf as $cast, len).offset(off).rw_flags(fl).build());
                (
                    format!("fd={fd} fixed={fixed} iov={buf:#x} nr={len} off={off} flags={fl:#x} {d:?}"),
                    got,
                    ent(apply_e(e, d)),
                )
            });
        };
    }
    rw_case!("io_uring_prep_read", Read, *mut u8, v2: false);
    rw_case!("io_uring_prep_write", Write, *const u8, v2: false);
    rw_case!("io_uring_prep_readv", Readv, *const libc::iovec, v2: false);
    rw_case!("io_uring_prep_writev", Writev, *const libc::iovec, v2: false);
    rw_case!("io_uring_prep_readv2", Readv, *const libc::iovec, v2: true);
    rw_case!("io_uring_prep_writev2", Writev, *const libc::iovec, v2: true);

    macro_rules! fixed_case {
        ($name:literal, $op:ident, $cast:ty) => {
            run(&mut rep, &lib, D, $name, |r, f: unsafe extern "C" fn(P, i32, Ptr, u32, u64, i32)| {
                let (fixed, d) = (r.bool(), decor(r));
                let fd = if fixed { r.fd_nonneg() } else { r.fd() };
                let (buf, len, off, bi) = (r.ptr(), r.v32(), r.v64(), r.i32());
                let got = c_sqe(|s| unsafe {
                    f(s, fd, buf, len, off, bi);
                    if fixed {
                        acc.or_flags(s, IOSQE_FIXED_FILE)
                    }
                    apply_c(acc, s, d);
                });
                // liburing stores the int buf_index as __u16.
                let e = tgt!(fixed, fd, |t| opcode::$op::new(t, buf as $cast, len, bi as u16).offset(off).build());
                (
                    format!("fd={fd} fixed={fixed} buf={buf:#x} len={len} off={off} bi={bi} {d:?}"),
                    got,
                    ent(apply_e(e, d)),
                )
            });
        };
    }
    fixed_case!("io_uring_prep_read_fixed", ReadFixed, *mut u8);
    fixed_case!("io_uring_prep_write_fixed", WriteFixed, *const u8);

    macro_rules! vfixed_case {
        ($name:literal, $op:ident) => {
            run(&mut rep, &lib, D, $name, |r, f: unsafe extern "C" fn(P, i32, Ptr, u32, u64, i32, i32)| {
                let (fixed, d) = (r.bool(), decor(r));
                let fd = if fixed { r.fd_nonneg() } else { r.fd() };
                let (iov, nr, off, fl, bi) = (r.ptr(), r.v32(), r.v64(), r.i32(), r.i32());
                let got = c_sqe(|s| unsafe {
                    f(s, fd, iov, nr, off, fl, bi);
                    if fixed {
                        acc.or_flags(s, IOSQE_FIXED_FILE)
                    }
                    apply_c(acc, s, d);
                });
                let e = tgt!(fixed, fd, |t| opcode::$op::new(t, iov as *const libc::iovec, nr, bi as u16)
                    .offset(off)
                    .rw_flags(fl)
                    .build());
                (
                    format!("fd={fd} fixed={fixed} iov={iov:#x} nr={nr} off={off} fl={fl:#x} bi={bi} {d:?}"),
                    got,
                    ent(apply_e(e, d)),
                )
            });
        };
    }
    vfixed_case!("io_uring_prep_readv_fixed", ReadvFixed);
    vfixed_case!("io_uring_prep_writev_fixed", WritevFixed);

    // msghdr family: (fd, msg, flags)
    macro_rules! msg_case {
        ($name:literal, |$t:ident, $msg:ident, $fl:ident, $r:ident| $build:expr, $extra:expr) => {
            run(&mut rep, &lib, D, $name, |r, f: unsafe extern "C" fn(P, i32, Ptr, u32)| {
                let (fixed, d) = (r.bool(), decor(r));
                let fd = if fixed { r.fd_nonneg() } else { r.fd() };
                let ($msg, $fl) = (r.ptr(), r.v32());
                let bg = r.u16();
                let got = c_sqe(|s| unsafe {
                    f(s, fd, $msg, $fl);
                    if fixed {
                        acc.or_flags(s, IOSQE_FIXED_FILE)
                    }
                    let extra: fn(&Acc, P, u16) = $extra;
                    extra(acc, s, bg);
                    apply_c(acc, s, d);
                });
                let $r = bg;
                let e = tgt!(fixed, fd, |$t| $build);
                (
                    format!("fd={fd} fixed={fixed} msg={:#x} flags={:#x} bg={bg} {d:?}", $msg, $fl),
                    got,
                    ent(apply_e(e, d)),
                )
            });
        };
    }
    msg_case!(
        "io_uring_prep_sendmsg",
        |t, m, fl, _bg| opcode::SendMsg::new(t, m as *const libc::msghdr).flags(fl).build(),
        |_, _, _| {}
    );
    msg_case!(
        "io_uring_prep_recvmsg",
        |t, m, fl, _bg| opcode::RecvMsg::new(t, m as *mut libc::msghdr).flags(fl).build(),
        |_, _, _| {}
    );
    msg_case!(
        "io_uring_prep_sendmsg_zc",
        |t, m, fl, _bg| opcode::SendMsgZc::new(t, m as *const libc::msghdr).flags(fl).build(),
        |_, _, _| {}
    );
    // The crate's RecvMsgMulti also selects a provided-buffer group; liburing
    // leaves that to io_uring_sqe_set_flags(IOSQE_BUFFER_SELECT) and
    // io_uring_sqe_set_buf_group(), which multishot recvmsg requires.
    msg_case!(
        "io_uring_prep_recvmsg_multishot",
        |t, m, fl, bg| opcode::RecvMsgMulti::new(t, m as *const libc::msghdr, bg).flags(fl).build(),
        |a, s, bg| {
            a.or_flags(s, IOSQE_BUFFER_SELECT);
            (a.set_buf_group)(s, bg as i32);
        }
    );

    run(&mut rep, &lib, D, "io_uring_prep_sendmsg_zc_fixed", |r, f: unsafe extern "C" fn(P, i32, Ptr, u32, u32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (m, fl, bi) = (r.ptr(), r.v32(), r.v32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, m, fl, bi);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::SendMsgZc::new(t, m as *const libc::msghdr)
            .flags(fl)
            .buf_index(Some(bi as u16))
            .build());
        (format!("fd={fd} fixed={fixed} msg={m:#x} fl={fl:#x} bi={bi} {d:?}"), got, ent(apply_e(e, d)))
    });

    // poll
    for (name, multi) in [("io_uring_prep_poll_add", false), ("io_uring_prep_poll_multishot", true)] {
        run(&mut rep, &lib, D, name, |r, f: unsafe extern "C" fn(P, i32, u32)| {
            let (fixed, d) = (r.bool(), decor(r));
            let fd = if fixed { r.fd_nonneg() } else { r.fd() };
            let mask = r.v32();
            let got = c_sqe(|s| unsafe {
                f(s, fd, mask);
                if fixed {
                    acc.or_flags(s, IOSQE_FIXED_FILE)
                }
                apply_c(acc, s, d);
            });
            let e = tgt!(fixed, fd, |t| opcode::PollAdd::new(t, mask).multi(multi).build());
            (format!("fd={fd} fixed={fixed} mask={mask:#x} {d:?}"), got, ent(apply_e(e, d)))
        });
    }
    run(&mut rep, &lib, D, "io_uring_prep_poll_remove", |r, f: unsafe extern "C" fn(P, u64)| {
        let (u, d) = (r.v64(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, u);
            apply_c(acc, s, d)
        });
        (format!("ud={u:#x} {d:?}"), got, ent(apply_e(opcode::PollRemove::new(u).build(), d)))
    });

    run(&mut rep, &lib, D, "io_uring_prep_fsync", |r, f: unsafe extern "C" fn(P, i32, u32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let fl = r.v32();
        let got = c_sqe(|s| unsafe {
            f(s, fd, fl);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Fsync::new(t).flags(types::FsyncFlags::from_bits_retain(fl)).build());
        (format!("fd={fd} fixed={fixed} flags={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });

    run(&mut rep, &lib, D, "io_uring_prep_sync_file_range", |r, f: unsafe extern "C" fn(P, i32, u32, u64, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (len, off, fl) = (r.v32(), r.v64(), r.i32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, len, off, fl);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::SyncFileRange::new(t, len).offset(off).flags(fl as u32).build());
        (format!("fd={fd} len={len} off={off} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });

    // timeouts
    run(&mut rep, &lib, D, "io_uring_prep_timeout", |r, f: unsafe extern "C" fn(P, Ptr, u32, u32)| {
        let (ts, count, fl, d) = (r.ptr(), r.v32(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, ts, count, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::Timeout::new(ts as *const types::Timespec)
            .count(count)
            .flags(types::TimeoutFlags::from_bits_retain(fl))
            .build();
        (format!("ts={ts:#x} count={count} flags={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    // The crate's TimeoutRemove takes no flags; flags are checked in part 2.
    run(&mut rep, &lib, D, "io_uring_prep_timeout_remove", |r, f: unsafe extern "C" fn(P, u64, u32)| {
        let (u, d) = (r.v64(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, u, 0);
            apply_c(acc, s, d)
        });
        (format!("ud={u:#x} flags=0 {d:?}"), got, ent(apply_e(opcode::TimeoutRemove::new(u).build(), d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_timeout_update", |r, f: unsafe extern "C" fn(P, Ptr, u64, u32)| {
        let (ts, u, fl, d) = (r.ptr(), r.v64(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, ts, u, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::TimeoutUpdate::new(u, ts as *const types::Timespec)
            .flags(types::TimeoutFlags::from_bits_retain(fl))
            .build();
        (format!("ts={ts:#x} ud={u:#x} flags={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_link_timeout", |r, f: unsafe extern "C" fn(P, Ptr, u32)| {
        let (ts, fl, d) = (r.ptr(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, ts, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::LinkTimeout::new(ts as *const types::Timespec)
            .flags(types::TimeoutFlags::from_bits_retain(fl))
            .build();
        (format!("ts={ts:#x} flags={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });

    // accept
    run(&mut rep, &lib, D, "io_uring_prep_accept", |r, f: unsafe extern "C" fn(P, i32, Ptr, Ptr, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (a, al, fl) = (r.ptr(), r.ptr(), r.i32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, a, al, fl);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Accept::new(t, a as *mut libc::sockaddr, al as *mut libc::socklen_t)
            .flags(fl)
            .build());
        (format!("fd={fd} addr={a:#x} len={al:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_accept_direct", |r, f: unsafe extern "C" fn(P, i32, Ptr, Ptr, i32, u32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (a, al, fl, slot) = (r.ptr(), r.ptr(), r.i32(), r.slot());
        let got = c_sqe(|s| unsafe {
            f(s, fd, a, al, fl, slot);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Accept::new(t, a as *mut libc::sockaddr, al as *mut libc::socklen_t)
            .flags(fl)
            .file_index(Some(dest(slot)))
            .build());
        (format!("fd={fd} addr={a:#x} len={al:#x} fl={fl:#x} slot={slot} {d:?}"), got, ent(apply_e(e, d)))
    });
    // The crate's AcceptMulti cannot pass an address buffer: compared with
    // addr = addrlen = NULL, which is how multishot accept is normally used.
    for (name, direct) in [("io_uring_prep_multishot_accept", false), ("io_uring_prep_multishot_accept_direct", true)] {
        run(&mut rep, &lib, D, name, |r, f: unsafe extern "C" fn(P, i32, Ptr, Ptr, i32)| {
            let (fixed, d) = (r.bool(), decor(r));
            let fd = if fixed { r.fd_nonneg() } else { r.fd() };
            let fl = r.i32();
            let got = c_sqe(|s| unsafe {
                f(s, fd, 0, 0, fl);
                if fixed {
                    acc.or_flags(s, IOSQE_FIXED_FILE)
                }
                apply_c(acc, s, d);
            });
            let e = tgt!(fixed, fd, |t| opcode::AcceptMulti::new(t).flags(fl).allocate_file_index(direct).build());
            (format!("fd={fd} fixed={fixed} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
        });
    }

    // cancel: the crate's CancelBuilder expresses ALL/ANY/FD/FD_FIXED.
    for name in ["io_uring_prep_cancel64", "io_uring_prep_cancel"] {
        run(&mut rep, &lib, D, name, |r, f: unsafe extern "C" fn(P, u64, i32)| {
            let d = decor(r);
            let (u, fl, e) = match r.below(5) {
                0 => {
                    let u = r.v64();
                    (u, 0, opcode::AsyncCancel::new(u).build())
                }
                1 => {
                    let u = r.v64();
                    (u, 0, opcode::AsyncCancel2::new(types::CancelBuilder::user_data(u)).build())
                }
                2 => {
                    let u = r.v64();
                    (
                        u,
                        IORING_ASYNC_CANCEL_ALL,
                        opcode::AsyncCancel2::new(types::CancelBuilder::user_data(u).all()).build(),
                    )
                }
                3 => (0, IORING_ASYNC_CANCEL_ANY, opcode::AsyncCancel2::new(types::CancelBuilder::any()).build()),
                _ => (
                    0,
                    IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL,
                    opcode::AsyncCancel2::new(types::CancelBuilder::any().all()).build(),
                ),
            };
            let got = c_sqe(|s| unsafe {
                f(s, u, fl as i32);
                apply_c(acc, s, d)
            });
            (format!("ud={u:#x} flags={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
        });
    }
    run(&mut rep, &lib, D, "io_uring_prep_cancel_fd", |r, f: unsafe extern "C" fn(P, i32, u32)| {
        let (fixed, all, d) = (r.bool(), r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let fl = if fixed { IORING_ASYNC_CANCEL_FD_FIXED } else { 0 } | if all { IORING_ASYNC_CANCEL_ALL } else { 0 };
        let got = c_sqe(|s| unsafe {
            f(s, fd, fl);
            apply_c(acc, s, d)
        });
        let b = tgt!(fixed, fd, |t| types::CancelBuilder::fd(t));
        let b = if all { b.all() } else { b };
        (format!("fd={fd} flags={fl:#x} {d:?}"), got, ent(apply_e(opcode::AsyncCancel2::new(b).build(), d)))
    });

    // sockets
    for (name, which) in [("io_uring_prep_connect", 0), ("io_uring_prep_bind", 1)] {
        run(&mut rep, &lib, D, name, |r, f: unsafe extern "C" fn(P, i32, Ptr, u32)| {
            let (fixed, d) = (r.bool(), decor(r));
            let fd = if fixed { r.fd_nonneg() } else { r.fd() };
            let (a, al) = (r.ptr(), r.v32());
            let got = c_sqe(|s| unsafe {
                f(s, fd, a, al);
                if fixed {
                    acc.or_flags(s, IOSQE_FIXED_FILE)
                }
                apply_c(acc, s, d);
            });
            let e = tgt!(fixed, fd, |t| if which == 0 {
                opcode::Connect::new(t, a as *const libc::sockaddr, al).build()
            } else {
                opcode::Bind::new(t, a as *const libc::sockaddr, al).build()
            });
            (format!("fd={fd} addr={a:#x} len={al} {d:?}"), got, ent(apply_e(e, d)))
        });
    }
    run(&mut rep, &lib, D, "io_uring_prep_listen", |r, f: unsafe extern "C" fn(P, i32, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let bl = r.i32();
        let got = c_sqe(|s| unsafe {
            f(s, fd, bl);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Listen::new(t, bl).build());
        (format!("fd={fd} backlog={bl} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_shutdown", |r, f: unsafe extern "C" fn(P, i32, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let how = r.i32();
        let got = c_sqe(|s| unsafe {
            f(s, fd, how);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Shutdown::new(t, how).build());
        (format!("fd={fd} how={how} {d:?}"), got, ent(apply_e(e, d)))
    });
    for (name, direct) in [("io_uring_prep_socket", 0), ("io_uring_prep_socket_direct_alloc", 2)] {
        run(&mut rep, &lib, D, name, |r, f: unsafe extern "C" fn(P, i32, i32, i32, u32)| {
            let (dom, ty, proto, fl, d) = (r.i32(), r.i32(), r.i32(), r.v32(), decor(r));
            let got = c_sqe(|s| unsafe {
                f(s, dom, ty, proto, fl);
                apply_c(acc, s, d)
            });
            let mut b = opcode::Socket::new(dom, ty, proto).flags(fl as i32);
            if direct == 2 {
                b = b.file_index(Some(types::DestinationSlot::auto_target()));
            }
            (format!("{dom} {ty} {proto} fl={fl:#x} {d:?}"), got, ent(apply_e(b.build(), d)))
        });
    }
    run(&mut rep, &lib, D, "io_uring_prep_socket_direct", |r, f: unsafe extern "C" fn(P, i32, i32, i32, u32, u32)| {
        let (dom, ty, proto, slot, fl, d) = (r.i32(), r.i32(), r.i32(), r.slot(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, dom, ty, proto, slot, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::Socket::new(dom, ty, proto).flags(fl as i32).file_index(Some(dest(slot))).build();
        (format!("{dom} {ty} {proto} slot={slot} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });

    // send/recv: len is size_t in liburing and stored as __u32.
    run(&mut rep, &lib, D, "io_uring_prep_send", |r, f: unsafe extern "C" fn(P, i32, Ptr, u64, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (b, len, fl) = (r.ptr(), r.v64(), r.i32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, b, len, fl);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Send::new(t, b as *const u8, len as u32).flags(fl).build());
        (format!("fd={fd} buf={b:#x} len={len} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_sendto", |r, f: unsafe extern "C" fn(P, i32, Ptr, u64, i32, Ptr, u32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (b, len, fl, a, al) = (r.ptr(), r.v64(), r.i32(), r.ptr(), r.v32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, b, len, fl, a, al);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Send::new(t, b as *const u8, len as u32)
            .flags(fl)
            .dest_addr(a as *const libc::sockaddr)
            .dest_addr_len(al)
            .build());
        (format!("fd={fd} buf={b:#x} len={len} fl={fl:#x} addr={a:#x} alen={al} {d:?}"), got, ent(apply_e(e, d)))
    });
    // send_bundle / recv_multishot: the crate selects the buffer group in the
    // builder; liburing through set_flags(IOSQE_BUFFER_SELECT) + set_buf_group.
    // The crate's RecvMulti has no buffer address: liburing gets buf = NULL,
    // as it must for a multishot receive from provided buffers.
    run(&mut rep, &lib, D, "io_uring_prep_send_bundle", |r, f: unsafe extern "C" fn(P, i32, u64, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (len, fl, bg) = (r.v64(), r.i32(), r.u16());
        let got = c_sqe(|s| unsafe {
            f(s, fd, len, fl);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            acc.or_flags(s, IOSQE_BUFFER_SELECT);
            (acc.set_buf_group)(s, bg as i32);
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::SendBundle::new(t, bg).flags(fl).len(len as u32).build());
        (format!("fd={fd} fixed={fixed} len={len} fl={fl:#x} bg={bg} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_recv_multishot", |r, f: unsafe extern "C" fn(P, i32, Ptr, u64, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (len, fl, bg) = (r.v64(), r.i32(), r.u16());
        let got = c_sqe(|s| unsafe {
            f(s, fd, 0, len, fl);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            acc.or_flags(s, IOSQE_BUFFER_SELECT);
            (acc.set_buf_group)(s, bg as i32);
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::RecvMulti::new(t, bg).flags(fl).len(len as u32).build());
        (format!("fd={fd} fixed={fixed} len={len} fl={fl:#x} bg={bg} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_recv", |r, f: unsafe extern "C" fn(P, i32, Ptr, u64, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (b, len, fl) = (r.ptr(), r.v64(), r.i32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, b, len, fl);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Recv::new(t, b as *mut u8, len as u32).flags(fl).build());
        (format!("fd={fd} buf={b:#x} len={len} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_send_zc", |r, f: unsafe extern "C" fn(P, i32, Ptr, u64, i32, u32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (b, len, fl, zc) = (r.ptr(), r.v64(), r.i32(), r.v32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, b, len, fl, zc);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        // zc_flags go into the 16-bit ioprio field.
        let e = tgt!(fixed, fd, |t| opcode::SendZc::new(t, b as *const u8, len as u32)
            .flags(fl)
            .zc_flags(zc as u16)
            .build());
        (format!("fd={fd} buf={b:#x} len={len} fl={fl:#x} zc={zc:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(
        &mut rep,
        &lib,
        D,
        "io_uring_prep_send_zc_fixed",
        |r, f: unsafe extern "C" fn(P, i32, Ptr, u64, i32, u32, u32)| {
            let (fixed, d) = (r.bool(), decor(r));
            let fd = if fixed { r.fd_nonneg() } else { r.fd() };
            let (b, len, fl, zc, bi) = (r.ptr(), r.v64(), r.i32(), r.v32(), r.v32());
            let got = c_sqe(|s| unsafe {
                f(s, fd, b, len, fl, zc, bi);
                if fixed {
                    acc.or_flags(s, IOSQE_FIXED_FILE)
                }
                apply_c(acc, s, d);
            });
            let e = tgt!(fixed, fd, |t| opcode::SendZc::new(t, b as *const u8, len as u32)
                .flags(fl)
                .zc_flags(zc as u16)
                .buf_index(Some(bi as u16))
                .build());
            (format!("fd={fd} buf={b:#x} len={len} fl={fl:#x} zc={zc:#x} bi={bi} {d:?}"), got, ent(apply_e(e, d)))
        },
    );

    run(&mut rep, &lib, D, "io_uring_prep_epoll_wait", |r, f: unsafe extern "C" fn(P, i32, Ptr, i32, u32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (ev, max, fl) = (r.ptr(), r.i32(), r.v32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, ev, max, fl);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e =
            tgt!(fixed, fd, |t| opcode::EpollWait::new(t, ev as *mut types::epoll_event, max as u32).flags(fl).build());
        (format!("fd={fd} ev={ev:#x} max={max} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    // epoll_ctl: liburing stores the target fd as (__u32) fd in the 64-bit
    // off field, the crate sign-extends it. The kernel reads it back as an
    // int, so both mean the same for every fd; they encode differently only
    // for negative fds, which epoll_ctl rejects anyway. Compared for fd >= 0.
    run(&mut rep, &lib, D, "io_uring_prep_epoll_ctl", |r, f: unsafe extern "C" fn(P, i32, i32, i32, Ptr)| {
        let (fixed, d) = (r.bool(), decor(r));
        let epfd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (fd, op, ev) = (r.fd_nonneg(), r.i32(), r.ptr());
        let got = c_sqe(|s| unsafe {
            f(s, epfd, fd, op, ev);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e =
            tgt!(fixed, epfd, |t| opcode::EpollCtl::new(t, types::Fd(fd), op, ev as *const types::epoll_event).build());
        (format!("epfd={epfd} fd={fd} op={op} ev={ev:#x} {d:?}"), got, ent(apply_e(e, d)))
    });

    run(&mut rep, &lib, D, "io_uring_prep_files_update", |r, f: unsafe extern "C" fn(P, Ptr, u32, i32)| {
        let (fds, nr, off, d) = (r.ptr(), r.v32(), r.i32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, fds, nr, off);
            apply_c(acc, s, d)
        });
        let e = opcode::FilesUpdate::new(fds as *const i32, nr).offset(off).build();
        (format!("fds={fds:#x} nr={nr} off={off} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_fallocate", |r, f: unsafe extern "C" fn(P, i32, i32, u64, u64)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (mode, off, len) = (r.i32(), r.v64(), r.v64());
        let got = c_sqe(|s| unsafe {
            f(s, fd, mode, off, len);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Fallocate::new(t, len).offset(off).mode(mode).build());
        (format!("fd={fd} mode={mode} off={off} len={len} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_ftruncate", |r, f: unsafe extern "C" fn(P, i32, i64)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let len = r.v64() as i64;
        let got = c_sqe(|s| unsafe {
            f(s, fd, len);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Ftruncate::new(t, len as u64).build());
        (format!("fd={fd} len={len} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_fadvise", |r, f: unsafe extern "C" fn(P, i32, u64, u32, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (off, len, adv) = (r.v64(), r.v32(), r.i32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, off, len, adv);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::Fadvise::new(t, len as libc::off_t, adv).offset(off).build());
        (format!("fd={fd} off={off} len={len} adv={adv} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_madvise", |r, f: unsafe extern "C" fn(P, Ptr, u32, i32)| {
        let (a, len, adv, d) = (r.ptr(), r.v32(), r.i32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, a, len, adv);
            apply_c(acc, s, d)
        });
        let e = opcode::Madvise::new(a as *const c_void, len as libc::off_t, adv).build();
        (format!("addr={a:#x} len={len} adv={adv} {d:?}"), got, ent(apply_e(e, d)))
    });

    // open/close
    run(&mut rep, &lib, D, "io_uring_prep_openat", |r, f: unsafe extern "C" fn(P, i32, Cstr, i32, u32)| {
        let (dfd, p, fl, mode, d) = (r.fd(), r.ptr(), r.i32(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, dfd, p, fl, mode);
            apply_c(acc, s, d)
        });
        let e = opcode::OpenAt::new(types::Fd(dfd), p as *const libc::c_char).flags(fl).mode(mode).build();
        (format!("dfd={dfd} path={p:#x} fl={fl:#x} mode={mode:o} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_openat_direct", |r, f: unsafe extern "C" fn(P, i32, Cstr, i32, u32, u32)| {
        let (dfd, p, fl, mode, slot, d) = (r.fd(), r.ptr(), r.i32(), r.v32(), r.slot(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, dfd, p, fl, mode, slot);
            apply_c(acc, s, d)
        });
        let e = opcode::OpenAt::new(types::Fd(dfd), p as *const libc::c_char)
            .flags(fl)
            .mode(mode)
            .file_index(Some(dest(slot)))
            .build();
        (format!("dfd={dfd} path={p:#x} fl={fl:#x} mode={mode:o} slot={slot} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_open", |r, f: unsafe extern "C" fn(P, Cstr, i32, u32)| {
        let (p, fl, mode, d) = (r.ptr(), r.i32(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, p, fl, mode);
            apply_c(acc, s, d)
        });
        let e = opcode::OpenAt::new(types::Fd(AT_FDCWD), p as *const libc::c_char).flags(fl).mode(mode).build();
        (format!("path={p:#x} fl={fl:#x} mode={mode:o} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_open_direct", |r, f: unsafe extern "C" fn(P, Cstr, i32, u32, u32)| {
        let (p, fl, mode, slot, d) = (r.ptr(), r.i32(), r.v32(), r.slot(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, p, fl, mode, slot);
            apply_c(acc, s, d)
        });
        let e = opcode::OpenAt::new(types::Fd(AT_FDCWD), p as *const libc::c_char)
            .flags(fl)
            .mode(mode)
            .file_index(Some(dest(slot)))
            .build();
        (format!("path={p:#x} fl={fl:#x} mode={mode:o} slot={slot} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_openat2", |r, f: unsafe extern "C" fn(P, i32, Cstr, Ptr)| {
        let (dfd, p, how, d) = (r.fd(), r.ptr(), r.ptr(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, dfd, p, how);
            apply_c(acc, s, d)
        });
        let e = opcode::OpenAt2::new(types::Fd(dfd), p as *const libc::c_char, how as *const types::OpenHow).build();
        (format!("dfd={dfd} path={p:#x} how={how:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_openat2_direct", |r, f: unsafe extern "C" fn(P, i32, Cstr, Ptr, u32)| {
        let (dfd, p, how, slot, d) = (r.fd(), r.ptr(), r.ptr(), r.slot(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, dfd, p, how, slot);
            apply_c(acc, s, d)
        });
        let e = opcode::OpenAt2::new(types::Fd(dfd), p as *const libc::c_char, how as *const types::OpenHow)
            .file_index(Some(dest(slot)))
            .build();
        (format!("dfd={dfd} path={p:#x} how={how:#x} slot={slot} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_close", |r, f: unsafe extern "C" fn(P, i32)| {
        let (fd, d) = (r.fd(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, fd);
            apply_c(acc, s, d)
        });
        (format!("fd={fd} {d:?}"), got, ent(apply_e(opcode::Close::new(types::Fd(fd)).build(), d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_close_direct", |r, f: unsafe extern "C" fn(P, u32)| {
        let (idx, d) = (r.v32().min(u32::MAX - 1), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, idx);
            apply_c(acc, s, d)
        });
        (format!("idx={idx} {d:?}"), got, ent(apply_e(opcode::Close::new(types::Fixed(idx)).build(), d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_statx", |r, f: unsafe extern "C" fn(P, i32, Cstr, i32, u32, Ptr)| {
        let (dfd, p, fl, mask, buf, d) = (r.fd(), r.ptr(), r.i32(), r.v32(), r.ptr(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, dfd, p, fl, mask, buf);
            apply_c(acc, s, d)
        });
        let e = opcode::Statx::new(types::Fd(dfd), p as *const libc::c_char, buf as *mut types::statx)
            .flags(fl)
            .mask(mask)
            .build();
        (format!("dfd={dfd} path={p:#x} fl={fl:#x} mask={mask:#x} buf={buf:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_read_multishot", |r, f: unsafe extern "C" fn(P, i32, u32, u64, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (n, off, bg) = (r.v32(), r.v64(), r.u16());
        let got = c_sqe(|s| unsafe {
            f(s, fd, n, off, bg as i32);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::ReadMulti::new(t, n, bg).offset(off).build());
        (format!("fd={fd} n={n} off={off} bg={bg} {d:?}"), got, ent(apply_e(e, d)))
    });

    // provided buffers: the crate takes nr, bgid and bid as u16. liburing
    // stores nr in the 32-bit fd and bid as (__u64) in off; these mean the
    // same for the kernel's 16-bit ranges, which is what is compared.
    run(
        &mut rep,
        &lib,
        D,
        "io_uring_prep_provide_buffers",
        |r, f: unsafe extern "C" fn(P, Ptr, i32, i32, i32, i32)| {
            let (a, len, nr, bgid, bid, d) = (r.ptr(), r.i32(), r.u16(), r.u16(), r.u16(), decor(r));
            let got = c_sqe(|s| unsafe {
                f(s, a, len, nr as i32, bgid as i32, bid as i32);
                apply_c(acc, s, d)
            });
            let e = opcode::ProvideBuffers::new(a as *mut u8, len, nr, bgid, bid).build();
            (format!("addr={a:#x} len={len} nr={nr} bgid={bgid} bid={bid} {d:?}"), got, ent(apply_e(e, d)))
        },
    );
    run(&mut rep, &lib, D, "io_uring_prep_remove_buffers", |r, f: unsafe extern "C" fn(P, i32, i32)| {
        let (nr, bgid, d) = (r.u16(), r.i32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, nr as i32, bgid);
            apply_c(acc, s, d)
        });
        let e = opcode::RemoveBuffers::new(nr, bgid as u16).build();
        (format!("nr={nr} bgid={bgid} {d:?}"), got, ent(apply_e(e, d)))
    });

    // path operations
    run(&mut rep, &lib, D, "io_uring_prep_unlinkat", |r, f: unsafe extern "C" fn(P, i32, Cstr, i32)| {
        let (dfd, p, fl, d) = (r.fd(), r.ptr(), r.i32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, dfd, p, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::UnlinkAt::new(types::Fd(dfd), p as *const libc::c_char).flags(fl).build();
        (format!("dfd={dfd} path={p:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_unlink", |r, f: unsafe extern "C" fn(P, Cstr, i32)| {
        let (p, fl, d) = (r.ptr(), r.i32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, p, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::UnlinkAt::new(types::Fd(AT_FDCWD), p as *const libc::c_char).flags(fl).build();
        (format!("path={p:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_renameat", |r, f: unsafe extern "C" fn(P, i32, Cstr, i32, Cstr, u32)| {
        let (od, op, nd, np, fl, d) = (r.fd(), r.ptr(), r.fd(), r.ptr(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, od, op, nd, np, fl);
            apply_c(acc, s, d)
        });
        let e =
            opcode::RenameAt::new(types::Fd(od), op as *const libc::c_char, types::Fd(nd), np as *const libc::c_char)
                .flags(fl)
                .build();
        (format!("{od} {op:#x} {nd} {np:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_rename", |r, f: unsafe extern "C" fn(P, Cstr, Cstr)| {
        let (op, np, d) = (r.ptr(), r.ptr(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, op, np);
            apply_c(acc, s, d)
        });
        let e = opcode::RenameAt::new(
            types::Fd(AT_FDCWD),
            op as *const libc::c_char,
            types::Fd(AT_FDCWD),
            np as *const libc::c_char,
        )
        .build();
        (format!("{op:#x} {np:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_mkdirat", |r, f: unsafe extern "C" fn(P, i32, Cstr, u32)| {
        let (dfd, p, mode, d) = (r.fd(), r.ptr(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, dfd, p, mode);
            apply_c(acc, s, d)
        });
        let e = opcode::MkDirAt::new(types::Fd(dfd), p as *const libc::c_char).mode(mode).build();
        (format!("dfd={dfd} path={p:#x} mode={mode:o} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_mkdir", |r, f: unsafe extern "C" fn(P, Cstr, u32)| {
        let (p, mode, d) = (r.ptr(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, p, mode);
            apply_c(acc, s, d)
        });
        let e = opcode::MkDirAt::new(types::Fd(AT_FDCWD), p as *const libc::c_char).mode(mode).build();
        (format!("path={p:#x} mode={mode:o} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_symlinkat", |r, f: unsafe extern "C" fn(P, Cstr, i32, Cstr)| {
        let (tg, nd, lp, d) = (r.ptr(), r.fd(), r.ptr(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, tg, nd, lp);
            apply_c(acc, s, d)
        });
        let e = opcode::SymlinkAt::new(types::Fd(nd), tg as *const libc::c_char, lp as *const libc::c_char).build();
        (format!("target={tg:#x} dfd={nd} link={lp:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_symlink", |r, f: unsafe extern "C" fn(P, Cstr, Cstr)| {
        let (tg, lp, d) = (r.ptr(), r.ptr(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, tg, lp);
            apply_c(acc, s, d)
        });
        let e =
            opcode::SymlinkAt::new(types::Fd(AT_FDCWD), tg as *const libc::c_char, lp as *const libc::c_char).build();
        (format!("target={tg:#x} link={lp:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_linkat", |r, f: unsafe extern "C" fn(P, i32, Cstr, i32, Cstr, i32)| {
        let (od, op, nd, np, fl, d) = (r.fd(), r.ptr(), r.fd(), r.ptr(), r.i32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, od, op, nd, np, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::LinkAt::new(types::Fd(od), op as *const libc::c_char, types::Fd(nd), np as *const libc::c_char)
            .flags(fl)
            .build();
        (format!("{od} {op:#x} {nd} {np:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_link", |r, f: unsafe extern "C" fn(P, Cstr, Cstr, i32)| {
        let (op, np, fl, d) = (r.ptr(), r.ptr(), r.i32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, op, np, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::LinkAt::new(
            types::Fd(AT_FDCWD),
            op as *const libc::c_char,
            types::Fd(AT_FDCWD),
            np as *const libc::c_char,
        )
        .flags(fl)
        .build();
        (format!("{op:#x} {np:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });

    // xattrs
    run(&mut rep, &lib, D, "io_uring_prep_getxattr", |r, f: unsafe extern "C" fn(P, Cstr, Ptr, Cstr, u32)| {
        let (n, v, p, len, d) = (r.ptr(), r.ptr(), r.ptr(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, n, v, p, len);
            apply_c(acc, s, d)
        });
        let e =
            opcode::GetXattr::new(n as *const libc::c_char, v as *mut c_void, p as *const libc::c_char, len).build();
        (format!("name={n:#x} value={v:#x} path={p:#x} len={len} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_setxattr", |r, f: unsafe extern "C" fn(P, Cstr, Ptr, Cstr, i32, u32)| {
        let (n, v, p, fl, len, d) = (r.ptr(), r.ptr(), r.ptr(), r.i32(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, n, v, p, fl, len);
            apply_c(acc, s, d)
        });
        let e = opcode::SetXattr::new(n as *const libc::c_char, v as *const c_void, p as *const libc::c_char, len)
            .flags(fl)
            .build();
        (format!("name={n:#x} value={v:#x} path={p:#x} fl={fl:#x} len={len} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_fgetxattr", |r, f: unsafe extern "C" fn(P, i32, Cstr, Ptr, u32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (n, v, len) = (r.ptr(), r.ptr(), r.v32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, n, v, len);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::FGetXattr::new(t, n as *const libc::c_char, v as *mut c_void, len).build());
        (format!("fd={fd} name={n:#x} value={v:#x} len={len} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_fsetxattr", |r, f: unsafe extern "C" fn(P, i32, Cstr, Ptr, i32, u32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (n, v, fl, len) = (r.ptr(), r.ptr(), r.i32(), r.v32());
        let got = c_sqe(|s| unsafe {
            f(s, fd, n, v, fl, len);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::FSetXattr::new(t, n as *const libc::c_char, v as *const c_void, len)
            .flags(fl)
            .build());
        (format!("fd={fd} name={n:#x} value={v:#x} fl={fl:#x} len={len} {d:?}"), got, ent(apply_e(e, d)))
    });

    // msg_ring
    run(&mut rep, &lib, D, "io_uring_prep_msg_ring", |r, f: unsafe extern "C" fn(P, i32, u32, u64, u32)| {
        let (fd, len, data, fl, d) = (r.fd(), r.v32(), r.v64(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, fd, len, data, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::MsgRingData::new(types::Fd(fd), len as i32, data, None).opcode_flags(fl).build();
        (format!("fd={fd} len={len} data={data:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(
        &mut rep,
        &lib,
        D,
        "io_uring_prep_msg_ring_cqe_flags",
        |r, f: unsafe extern "C" fn(P, i32, u32, u64, u32, u32)| {
            let (fd, len, data, fl, cf, d) = (r.fd(), r.v32(), r.v64(), r.v32(), r.v32(), decor(r));
            let got = c_sqe(|s| unsafe {
                f(s, fd, len, data, fl, cf);
                apply_c(acc, s, d)
            });
            let e = opcode::MsgRingData::new(types::Fd(fd), len as i32, data, Some(cf)).opcode_flags(fl).build();
            (format!("fd={fd} len={len} data={data:#x} fl={fl:#x} cqe_flags={cf:#x} {d:?}"), got, ent(apply_e(e, d)))
        },
    );
    // source_fd is a fixed-file index (>= 0): liburing stores the int
    // sign-extended into addr3, the crate the u32 zero-extended; identical
    // for every valid index.
    run(&mut rep, &lib, D, "io_uring_prep_msg_ring_fd", |r, f: unsafe extern "C" fn(P, i32, i32, i32, u64, u32)| {
        let (fd, src, slot, data, fl, d) = (r.fd(), r.fd_nonneg(), r.slot(), r.v64(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, fd, src, slot as i32, data, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::MsgRingSendFd::new(types::Fd(fd), types::Fixed(src as u32), dest(slot), data)
            .opcode_flags(fl)
            .build();
        (format!("fd={fd} src={src} slot={slot} data={data:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_msg_ring_fd_alloc", |r, f: unsafe extern "C" fn(P, i32, i32, u64, u32)| {
        let (fd, src, data, fl, d) = (r.fd(), r.fd_nonneg(), r.v64(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, fd, src, data, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::MsgRingSendFd::new(
            types::Fd(fd),
            types::Fixed(src as u32),
            types::DestinationSlot::auto_target(),
            data,
        )
        .opcode_flags(fl)
        .build();
        (format!("fd={fd} src={src} data={data:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });

    // uring_cmd
    run(&mut rep, &lib, D, "io_uring_prep_uring_cmd", |r, f: unsafe extern "C" fn(P, i32, i32)| {
        let (fixed, d) = (r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let op = r.i32();
        let got = c_sqe(|s| unsafe {
            f(s, op, fd);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| opcode::UringCmd16::new(t, op as u32).build());
        (format!("cmd_op={op:#x} fd={fd} fixed={fixed} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_cmd_sock", |r, f: unsafe extern "C" fn(P, i32, i32, i32, i32, Ptr, i32)| {
        let (fixed, set, d) = (r.bool(), r.bool(), decor(r));
        let fd = if fixed { r.fd_nonneg() } else { r.fd() };
        let (lvl, name, val, len) = (r.i32(), r.i32(), r.ptr(), r.i32());
        let op = if set { SOCKET_URING_OP_SETSOCKOPT } else { SOCKET_URING_OP_GETSOCKOPT };
        let got = c_sqe(|s| unsafe {
            f(s, op, fd, lvl, name, val, len);
            if fixed {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fixed, fd, |t| if set {
            opcode::SetSockOpt::new(t, lvl as u32, name as u32, val as *const c_void, len as u32).build()
        } else {
            opcode::GetSockOpt::new(t, lvl as u32, name as u32, val as *mut c_void, len as u32).build()
        });
        (format!("op={op} fd={fd} level={lvl} name={name} val={val:#x} len={len} {d:?}"), got, ent(apply_e(e, d)))
    });

    // waitid / futex / misc
    run(&mut rep, &lib, D, "io_uring_prep_waitid", |r, f: unsafe extern "C" fn(P, u32, u32, Ptr, i32, u32)| {
        let (idt, id, inf, opts, fl, d) = (r.below(4) as u32, r.v32(), r.ptr(), r.i32(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, idt, id, inf, opts, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::WaitId::new(idt as libc::idtype_t, id as libc::id_t, opts)
            .infop(inf as *const libc::siginfo_t)
            .flags(fl)
            .build();
        (format!("idtype={idt} id={id} infop={inf:#x} opts={opts:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    for (name, wake) in [("io_uring_prep_futex_wait", false), ("io_uring_prep_futex_wake", true)] {
        run(&mut rep, &lib, D, name, |r, f: unsafe extern "C" fn(P, Ptr, u64, u64, u32, u32)| {
            let (fu, val, mask, ff, fl, d) = (r.ptr(), r.v64(), r.v64(), r.v32(), r.v32(), decor(r));
            let got = c_sqe(|s| unsafe {
                f(s, fu, val, mask, ff, fl);
                apply_c(acc, s, d)
            });
            let e = if wake {
                opcode::FutexWake::new(fu as *const u32, val, mask, ff).flags(fl).build()
            } else {
                opcode::FutexWait::new(fu as *const u32, val, mask, ff).flags(fl).build()
            };
            (format!("futex={fu:#x} val={val:#x} mask={mask:#x} ff={ff:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
        });
    }
    run(&mut rep, &lib, D, "io_uring_prep_futex_waitv", |r, f: unsafe extern "C" fn(P, Ptr, u32, u32)| {
        let (fv, nr, fl, d) = (r.ptr(), r.v32(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, fv, nr, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::FutexWaitV::new(fv as *const types::FutexWaitV, nr).flags(fl).build();
        (format!("futexv={fv:#x} nr={nr} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_fixed_fd_install", |r, f: unsafe extern "C" fn(P, i32, u32)| {
        let (fd, fl, d) = (r.fd_nonneg(), r.v32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, fd, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::FixedFdInstall::new(types::Fixed(fd as u32), fl).build();
        (format!("fd={fd} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_pipe", |r, f: unsafe extern "C" fn(P, Ptr, i32)| {
        let (fds, fl, d) = (r.ptr(), r.i32(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, fds, fl);
            apply_c(acc, s, d)
        });
        let e = opcode::Pipe::new(fds as *mut i32).flags(fl as u32).build();
        (format!("fds={fds:#x} fl={fl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });
    run(&mut rep, &lib, D, "io_uring_prep_pipe_direct", |r, f: unsafe extern "C" fn(P, Ptr, i32, u32)| {
        let (fds, fl, slot, d) = (r.ptr(), r.i32(), r.slot(), decor(r));
        let got = c_sqe(|s| unsafe {
            f(s, fds, fl, slot);
            apply_c(acc, s, d)
        });
        let e = opcode::Pipe::new(fds as *mut i32).flags(fl as u32).file_index(Some(dest(slot))).build();
        (format!("fds={fds:#x} fl={fl:#x} slot={slot} {d:?}"), got, ent(apply_e(e, d)))
    });
    // splice/tee: a fixed input is SPLICE_F_FD_IN_FIXED in liburing's flags,
    // types::Fixed in the crate; a fixed output is IOSQE_FIXED_FILE.
    run(&mut rep, &lib, D, "io_uring_prep_splice", |r, f: unsafe extern "C" fn(P, i32, i64, i32, i64, u32, u32)| {
        let (fin, fout, d) = (r.bool(), r.bool(), decor(r));
        let fd_in = if fin { r.fd_nonneg() } else { r.fd() };
        let fd_out = if fout { r.fd_nonneg() } else { r.fd() };
        let (oi, oo, n, fl) = (r.v64() as i64, r.v64() as i64, r.v32(), r.v32() & !SPLICE_F_FD_IN_FIXED);
        let cfl = fl | if fin { SPLICE_F_FD_IN_FIXED } else { 0 };
        let got = c_sqe(|s| unsafe {
            f(s, fd_in, oi, fd_out, oo, n, cfl);
            if fout {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e =
            tgt!(fin, fd_in, |ti| tgt!(fout, fd_out, |to| opcode::Splice::new(ti, oi, to, oo, n).flags(fl).build()));
        (
            format!("in={fd_in}/{fin} off_in={oi} out={fd_out}/{fout} off_out={oo} n={n} fl={cfl:#x} {d:?}"),
            got,
            ent(apply_e(e, d)),
        )
    });
    run(&mut rep, &lib, D, "io_uring_prep_tee", |r, f: unsafe extern "C" fn(P, i32, i32, u32, u32)| {
        let (fin, fout, d) = (r.bool(), r.bool(), decor(r));
        let fd_in = if fin { r.fd_nonneg() } else { r.fd() };
        let fd_out = if fout { r.fd_nonneg() } else { r.fd() };
        let (n, fl) = (r.v32(), r.v32() & !SPLICE_F_FD_IN_FIXED);
        let cfl = fl | if fin { SPLICE_F_FD_IN_FIXED } else { 0 };
        let got = c_sqe(|s| unsafe {
            f(s, fd_in, fd_out, n, cfl);
            if fout {
                acc.or_flags(s, IOSQE_FIXED_FILE)
            }
            apply_c(acc, s, d);
        });
        let e = tgt!(fin, fd_in, |ti| tgt!(fout, fd_out, |to| opcode::Tee::new(ti, to, n).flags(fl).build()));
        (format!("in={fd_in}/{fin} out={fd_out}/{fout} n={n} fl={cfl:#x} {d:?}"), got, ent(apply_e(e, d)))
    });

    // ---------------------------------------------------------------
    // Part 2: golden SQEs for helpers the crate does not build
    // ---------------------------------------------------------------

    run(&mut rep, &lib, G, "io_uring_prep_rw", |r, f: unsafe extern "C" fn(i32, P, i32, Ptr, u32, u64)| {
        let op = IORING_OP_RW_BASE[r.below(3) as usize] as i32 + if r.bool() { 0 } else { r.below(65) as i32 };
        let (fd, a, len, off) = (r.fd(), r.ptr(), r.v32(), r.v64());
        let got = c_sqe(|s| unsafe { f(op, s, fd, a, len, off) });
        (
            format!("op={op} fd={fd} addr={a:#x} len={len} off={off}"),
            got,
            Gold::new(op as u8).fd(fd).addr(a).len(len).off(off).0,
        )
    });
    run(&mut rep, &lib, G, "io_uring_prep_nop128", |r, f: unsafe extern "C" fn(P)| {
        let d = decor(r);
        let got = c_sqe(|s| unsafe {
            f(s);
            apply_c(acc, s, d)
        });
        let mut g = Gold::new(IORING_OP_NOP128).fd(-1);
        if let Some((ud, fl, _)) = d {
            g = g.user_data(ud).flags(fl)
        }
        (format!("{d:?}"), got, g.0)
    });
    run(&mut rep, &lib, G, "io_uring_prep_uring_cmd128", |r, f: unsafe extern "C" fn(P, i32, i32)| {
        let (op, fd) = (r.i32(), r.fd());
        let got = c_sqe(|s| unsafe { f(s, op, fd) });
        (format!("cmd_op={op:#x} fd={fd}"), got, Gold::new(IORING_OP_URING_CMD128).fd(fd).off(op as u32 as u64).0)
    });
    run(&mut rep, &lib, G, "__io_uring_prep_uring_cmd", |r, f: unsafe extern "C" fn(P, i32, u32, i32)| {
        let op = if r.bool() { IORING_OP_URING_CMD } else { IORING_OP_URING_CMD128 };
        let (cmd, fd) = (r.v32(), r.fd());
        let got = c_sqe(|s| unsafe { f(s, op as i32, cmd, fd) });
        (format!("op={op} cmd_op={cmd:#x} fd={fd}"), got, Gold::new(op).fd(fd).off(cmd as u64).0)
    });
    // poll_update: old user_data in addr, new one in off, update flags in
    // len, the new mask in poll32_events.
    run(&mut rep, &lib, G, "io_uring_prep_poll_update", |r, f: unsafe extern "C" fn(P, u64, u64, u32, u32)| {
        let (old, new, mask, fl) = (r.v64(), r.v64(), r.v32(), r.v32());
        let got = c_sqe(|s| unsafe { f(s, old, new, mask, fl) });
        (
            format!("old={old:#x} new={new:#x} mask={mask:#x} fl={fl:#x}"),
            got,
            Gold::new(IORING_OP_POLL_REMOVE).fd(-1).addr(old).off(new).len(fl).op_flags(mask).0,
        )
    });
    run(&mut rep, &lib, G, "io_uring_prep_timeout_remove", |r, f: unsafe extern "C" fn(P, u64, u32)| {
        let (u, fl) = (r.v64(), r.v32());
        let got = c_sqe(|s| unsafe { f(s, u, fl) });
        (format!("ud={u:#x} flags={fl:#x}"), got, Gold::new(IORING_OP_TIMEOUT_REMOVE).fd(-1).addr(u).op_flags(fl).0)
    });
    // 64-bit lengths: fadvise64 puts the length in addr, madvise64 in off.
    run(&mut rep, &lib, G, "io_uring_prep_fadvise64", |r, f: unsafe extern "C" fn(P, i32, u64, i64, i32)| {
        let (fd, off, len, adv) = (r.fd(), r.v64(), r.v64() as i64, r.i32());
        let got = c_sqe(|s| unsafe { f(s, fd, off, len, adv) });
        (
            format!("fd={fd} off={off} len={len} adv={adv}"),
            got,
            Gold::new(IORING_OP_FADVISE).fd(fd).off(off).addr(len as u64).op_flags(adv as u32).0,
        )
    });
    run(&mut rep, &lib, G, "io_uring_prep_madvise64", |r, f: unsafe extern "C" fn(P, Ptr, i64, i32)| {
        let (a, len, adv) = (r.ptr(), r.v64() as i64, r.i32());
        let got = c_sqe(|s| unsafe { f(s, a, len, adv) });
        (
            format!("addr={a:#x} len={len} adv={adv}"),
            got,
            Gold::new(IORING_OP_MADVISE).fd(-1).addr(a).off(len as u64).op_flags(adv as u32).0,
        )
    });
    // getsockname: sockaddr in addr, the socklen_t pointer in addr3, peer in optlen.
    run(&mut rep, &lib, G, "io_uring_prep_cmd_getsockname", |r, f: unsafe extern "C" fn(P, i32, Ptr, Ptr, i32)| {
        let (fd, sa, sl, peer) = (r.fd(), r.ptr(), r.ptr(), r.i32());
        let got = c_sqe(|s| unsafe { f(s, fd, sa, sl, peer) });
        (
            format!("fd={fd} sa={sa:#x} len={sl:#x} peer={peer}"),
            got,
            Gold::new(IORING_OP_URING_CMD)
                .fd(fd)
                .off(SOCKET_URING_OP_GETSOCKNAME as u64)
                .addr(sa)
                .addr3(sl)
                .file_index(peer as u32)
                .0,
        )
    });
    // Block discard: start offset in addr, byte count in addr3.
    run(&mut rep, &lib, G, "io_uring_prep_cmd_discard", |r, f: unsafe extern "C" fn(P, i32, u64, u64)| {
        let (fd, off, n) = (r.fd(), r.v64(), r.v64());
        let got = c_sqe(|s| unsafe { f(s, fd, off, n) });
        (
            format!("fd={fd} off={off} n={n}"),
            got,
            Gold::new(IORING_OP_URING_CMD).fd(fd).off(BLOCK_URING_CMD_DISCARD as u64).addr(off).addr3(n).0,
        )
    });
    run(&mut rep, &lib, G, "io_uring_prep_cmd_zone_reset_all", |r, f: unsafe extern "C" fn(P, i32)| {
        let fd = r.fd();
        let got = c_sqe(|s| unsafe { f(s, fd) });
        (format!("fd={fd}"), got, Gold::new(IORING_OP_URING_CMD).fd(fd).off(BLOCK_URING_CMD_ZONE_RESET_ALL as u64).0)
    });
    run(&mut rep, &lib, G, "io_uring_prep_send_set_addr", |r, f: unsafe extern "C" fn(P, Ptr, u16)| {
        let (a, al) = (r.ptr(), r.u16());
        let got = c_sqe(|s| unsafe { f(s, a, al) });
        (format!("addr={a:#x} len={al}"), got, Gold::new(0).off(a).put(44, &al.to_ne_bytes()).0)
    });
    // A second, crate-independent reference for helpers whose flag bits
    // the differential part above also covers.
    run(
        &mut rep,
        &lib,
        G,
        "io_uring_prep_recv_multishot#golden",
        |r, f: unsafe extern "C" fn(P, i32, Ptr, u64, i32)| {
            let (fd, b, len, fl) = (r.fd(), r.ptr(), r.v64(), r.i32());
            let got = c_sqe(|s| unsafe { f(s, fd, b, len, fl) });
            (
                format!("fd={fd} buf={b:#x} len={len} fl={fl:#x}"),
                got,
                Gold::new(IORING_OP_RECV)
                    .fd(fd)
                    .addr(b)
                    .len(len as u32)
                    .op_flags(fl as u32)
                    .ioprio(IORING_RECV_MULTISHOT)
                    .0,
            )
        },
    );
    run(
        &mut rep,
        &lib,
        G,
        "io_uring_prep_send_zc_fixed#golden",
        |r, f: unsafe extern "C" fn(P, i32, Ptr, u64, i32, u32, u32)| {
            let (fd, b, len, fl, zc, bi) = (r.fd(), r.ptr(), r.v64(), r.i32(), r.v32(), r.v32());
            let got = c_sqe(|s| unsafe { f(s, fd, b, len, fl, zc, bi) });
            (
                format!("fd={fd} buf={b:#x} len={len} fl={fl:#x} zc={zc:#x} bi={bi}"),
                got,
                Gold::new(IORING_OP_SEND_ZC)
                    .fd(fd)
                    .addr(b)
                    .len(len as u32)
                    .op_flags(fl as u32)
                    .ioprio(zc as u16 | IORING_RECVSEND_FIXED_BUF)
                    .buf_index(bi as u16)
                    .0,
            )
        },
    );
    run(&mut rep, &lib, G, "io_uring_prep_cancel_fd#golden", |r, f: unsafe extern "C" fn(P, i32, u32)| {
        let (fd, fl) = (r.fd(), r.v32());
        let got = c_sqe(|s| unsafe { f(s, fd, fl) });
        (
            format!("fd={fd} flags={fl:#x}"),
            got,
            Gold::new(IORING_OP_ASYNC_CANCEL).fd(fd).op_flags(fl | IORING_ASYNC_CANCEL_FD).0,
        )
    });
    run(&mut rep, &lib, G, "io_uring_prep_timeout_update#golden", |r, f: unsafe extern "C" fn(P, Ptr, u64, u32)| {
        let (ts, u, fl) = (r.ptr(), r.v64(), r.v32());
        let got = c_sqe(|s| unsafe { f(s, ts, u, fl) });
        (
            format!("ts={ts:#x} ud={u:#x} flags={fl:#x}"),
            got,
            Gold::new(IORING_OP_TIMEOUT_REMOVE).fd(-1).off(ts).addr(u).op_flags(fl | IORING_TIMEOUT_UPDATE).0,
        )
    });
    run(&mut rep, &lib, G, "io_uring_sqe_set_buf_group", |r, f: SetBufGroup| {
        let bg = r.i32();
        let got = c_sqe(|s| unsafe { f(s, bg) });
        (format!("bgid={bg}"), got, Gold::new(0).buf_index(bg as u16).0)
    });
    run(&mut rep, &lib, G, "io_uring_sqe_set_flags", |r, f: SetFlags| {
        let fl = r.v32();
        let got = c_sqe(|s| unsafe { f(s, fl) });
        (format!("flags={fl:#x}"), got, Gold::new(0).flags(fl as u8).0)
    });
    run(&mut rep, &lib, G, "io_uring_sqe_set_data64", |r, f: SetData64| {
        let u = r.v64();
        let got = c_sqe(|s| unsafe { f(s, u) });
        (format!("{u:#x}"), got, Gold::new(0).user_data(u).0)
    });
    run(&mut rep, &lib, G, "io_uring_sqe_set_data", |r, f: SetData| {
        let u = r.ptr();
        let got = c_sqe(|s| unsafe { f(s, u as usize as *mut c_void) });
        (format!("{u:#x}"), got, Gold::new(0).user_data(u).0)
    });
    // io_uring_initialize_sqe clears flags, ioprio, op flags, buf_index,
    // personality, file_index, addr3 and __pad2, and nothing else.
    run(&mut rep, &lib, G, "io_uring_initialize_sqe", |r, f: unsafe extern "C" fn(P)| {
        let mut s = Slot([0u8; 128]);
        for b in s.0[..64].iter_mut() {
            *b = r.u64() as u8;
        }
        let before: Bytes = s.0[..64].try_into().unwrap();
        unsafe { f(s.0.as_mut_ptr()) };
        let mut want = before;
        for (off, len) in [(1, 1), (2, 2), (28, 4), (40, 2), (42, 2), (44, 4), (48, 8), (56, 8)] {
            want[off..off + len].fill(0);
        }
        (String::from("random SQE"), Ok(s.0[..64].try_into().unwrap()), want)
    });

    // CQE accessors and small pure helpers, checked against the kernel's
    // meaning of each field.
    scalar_checks(&mut rep, &lib);

    // ---------------------------------------------------------------
    println!("\nper-helper results ({} random argument sets each):", ITERS);
    let (mut nd, mut ng, mut total) = (0, 0, 0);
    for (name, (ok, kind)) in &rep.counts {
        println!("  {kind:<12} {name:<42} {ok:>5} ok");
        if *kind == D {
            nd += 1
        } else if *kind == G {
            ng += 1
        }
        total += ok;
    }
    println!("{nd} helpers differential, {ng} golden (\"not-in-abi\": inline-only helper liburing-ffi does not export), {total} SQEs/values matched, library {}", lib.path);
    if !rep.failures.is_empty() {
        for f in &rep.failures {
            eprintln!("FAIL {f}");
        }
        panic!("{} failure(s) in prep helper checks", rep.failures.len());
    }
}

/// Checks of accessors that do not build an SQE.
fn scalar_checks(rep: &mut Report, lib: &Lib) {
    // Optional symbols (not in the ABI table) come back as None.
    macro_rules! sym {
        ($name:literal, $t:ty) => {
            match lib.sym::<$t>($name) {
                Some(f) => Some(f),
                None if !lib.table.contains($name) => None,
                None => {
                    rep.failures.push(format!("{}: symbol not exported", $name));
                    return;
                }
            }
        };
    }
    let get_data = sym!("io_uring_cqe_get_data", unsafe extern "C" fn(*const u8) -> *mut c_void).unwrap();
    let get_data64 = sym!("io_uring_cqe_get_data64", unsafe extern "C" fn(*const u8) -> u64).unwrap();
    let cqe_nr = sym!("io_uring_cqe_nr", unsafe extern "C" fn(*const u8) -> u32).unwrap();
    let cqe_shift = sym!("io_uring_cqe_shift_from_flags", unsafe extern "C" fn(u32) -> u32);
    let sqe_shift = sym!("io_uring_sqe_shift_from_flags", unsafe extern "C" fn(u32) -> u32);
    let op_supported = sym!("io_uring_opcode_supported", unsafe extern "C" fn(*const u8, i32) -> i32).unwrap();
    let br_mask = sym!("io_uring_buf_ring_mask", unsafe extern "C" fn(u32) -> i32).unwrap();
    let br_init = sym!("io_uring_buf_ring_init", unsafe extern "C" fn(*mut u8)).unwrap();
    let br_add = sym!("io_uring_buf_ring_add", unsafe extern "C" fn(*mut u8, Ptr, u32, u16, i32, i32)).unwrap();
    let br_advance = sym!("io_uring_buf_ring_advance", unsafe extern "C" fn(*mut u8, i32)).unwrap();

    let mut check = |name: &str, ok: usize, bad: Vec<String>| {
        for b in bad.iter().take(3) {
            rep.failures.push(format!("{name}: {b}"));
        }
        let kind = if ok == 0 && bad.is_empty() { "not-in-abi" } else { "golden" };
        rep.counts.insert(name.to_string(), (ok, kind));
    };

    // CQE: user_data u64 @0, res i32 @8, flags u32 @12 (16 bytes, 32 for big CQEs).
    let mut r = Rng::for_name("cqe");
    let (mut ok, mut bad) = (0, vec![]);
    for _ in 0..ITERS {
        let (ud, res, fl) = (r.v64(), r.i32(), r.v32());
        let mut cqe = [0u8; 32];
        cqe[0..8].copy_from_slice(&ud.to_ne_bytes());
        cqe[8..12].copy_from_slice(&res.to_ne_bytes());
        cqe[12..16].copy_from_slice(&fl.to_ne_bytes());
        let (a, b, n) =
            unsafe { (get_data(cqe.as_ptr()) as usize as u64, get_data64(cqe.as_ptr()), cqe_nr(cqe.as_ptr())) };
        let want_n = if fl & IORING_CQE_F_32 != 0 { 2 } else { 1 };
        if a == ud && b == ud && n == want_n {
            ok += 1
        } else {
            bad.push(format!("cqe ud={ud:#x} flags={fl:#x}: get_data={a:#x} get_data64={b:#x} nr={n} (want {want_n})"));
        }
    }
    check("io_uring_cqe_get_data/get_data64/cqe_nr", ok, bad);

    let (mut ok, mut bad) = (0, vec![]);
    for _ in 0..ITERS {
        let fl = r.v32();
        let wc = (fl & IORING_SETUP_CQE32 != 0) as u32;
        let ws = (fl & IORING_SETUP_SQE128 != 0) as u32;
        // Not exported by liburing-ffi (absent from the ABI table): skip.
        let (Some(cs), Some(ss)) = (cqe_shift, sqe_shift) else { break };
        let (c, s) = unsafe { (cs(fl), ss(fl)) };
        if c == wc && s == ws {
            ok += 1
        } else {
            bad.push(format!("setup flags {fl:#x}: cqe_shift {c} (want {wc}), sqe_shift {s} (want {ws})"));
        }
    }
    check("io_uring_{cqe,sqe}_shift_from_flags", ok, bad);

    // Probe: header 16 bytes (last_op u8, ops_len u8, ...), then 8-byte ops
    // with flags u16 at +2; IO_URING_OP_SUPPORTED = 1.
    let (mut ok, mut bad) = (0, vec![]);
    for _ in 0..ITERS {
        let last = r.below(70) as u8;
        let mut p = vec![0u8; 16 + 8 * 256];
        p[0] = last;
        p[1] = last.wrapping_add(1);
        let mut sup = [false; 256];
        for i in 0..=last as usize {
            p[16 + 8 * i] = i as u8;
            let f = r.u16();
            p[16 + 8 * i + 2..16 + 8 * i + 4].copy_from_slice(&f.to_ne_bytes());
            sup[i] = f & 1 != 0;
        }
        // garbage past last_op must be ignored
        for i in last as usize + 1..256 {
            p[16 + 8 * i + 2] = 0xff;
        }
        let op = r.below(300) as i32 - 20;
        let got = unsafe { op_supported(p.as_ptr(), op) };
        let want = op >= 0 && op <= last as i32 && sup[op as usize];
        if (got != 0) == want {
            ok += 1
        } else {
            bad.push(format!("last_op={last} op={op}: got {got}, want {want}"));
        }
    }
    check("io_uring_opcode_supported", ok, bad);

    // Buffer ring: io_uring_buf { addr u64, len u32, bid u16, resv u16 },
    // the ring's tail (u16) overlays bufs[0].resv at byte 14.
    let (mut ok, mut bad) = (0, vec![]);
    for _ in 0..ITERS / 10 {
        let entries = 1u32 << r.below(8);
        let mask = unsafe { br_mask(entries) };
        if mask != entries as i32 - 1 {
            bad.push(format!("buf_ring_mask({entries}) = {mask}"));
            continue;
        }
        let mut ring = vec![0u8; 16 * entries as usize];
        ring[14] = 0xaa;
        ring[15] = 0x55;
        unsafe { br_init(ring.as_mut_ptr()) };
        if ring[14] != 0 || ring[15] != 0 {
            bad.push("buf_ring_init did not zero the tail".into());
            continue;
        }
        let mut model = vec![(0u64, 0u32, 0u16); entries as usize];
        let mut tail: u16 = 0;
        let mut good = true;
        for _ in 0..3 * entries {
            let n = r.below(entries as u64) as i32 + 1;
            for k in 0..n {
                let (a, l, bid) = (r.ptr(), r.v32(), r.u16());
                unsafe { br_add(ring.as_mut_ptr(), a, l, bid, mask, k) };
                model[(tail as usize + k as usize) & mask as usize] = (a, l, bid);
            }
            unsafe { br_advance(ring.as_mut_ptr(), n) };
            tail = tail.wrapping_add(n as u16);
            let t = u16::from_ne_bytes([ring[14], ring[15]]);
            if t != tail {
                bad.push(format!("tail {t}, want {tail}"));
                good = false;
                break;
            }
            for (i, &(a, l, bid)) in model.iter().enumerate() {
                let e = &ring[16 * i..16 * i + 16];
                let ga = u64::from_ne_bytes(e[0..8].try_into().unwrap());
                let gl = u32::from_ne_bytes(e[8..12].try_into().unwrap());
                let gb = u16::from_ne_bytes(e[12..14].try_into().unwrap());
                if ga != a || gl != l || gb != bid {
                    bad.push(format!("entry {i}: ({ga:#x},{gl},{gb}) want ({a:#x},{l},{bid})"));
                    good = false;
                    break;
                }
            }
            if !good {
                break;
            }
        }
        if good {
            ok += 1
        }
    }
    check("io_uring_buf_ring_{mask,init,add,advance}", ok, bad);
}
