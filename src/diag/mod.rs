//! The diagnostics room. Two halves:
//!
//! **Explaining the kernel**, shipped in liburing.so itself and reached only
//! on failure paths or from `uring-info`:
//! - [`names`]: readable names for flags, features, opcodes and errno values;
//! - [`sysinfo`]: facts about the system and this process (sysctls,
//!   seccomp, capabilities, RLIMIT_MEMLOCK, kernel release);
//! - the questions put to the kernel with short-lived rings of our own
//!   (which setup flags and register opcodes it knows, its largest ring)
//!   are the ring logic's (`ring::ask`), which makes rings;
//! - [`setup`](mod@setup): one human-readable line per failed ring setup,
//!   kept per thread for `liburing_rs_setup_error()`.
//!
//! **Watching a ring**: a request trace (`LIBURING_RS_TRACE`) and a
//! submission checker (`LIBURING_RS_CHECK`), both off unless asked for.
//!
//! The rest of the library calls in at a handful of places (see
//! docs/ARCHITECTURE.md): [`call`] around every queue call (submit, wait,
//! peek), [`setup`], [`register`] and [`exit`]. Every hook takes the ring as
//! a raw `*const IoUring` and only reads it.
//!
//! Of that half, only the switch and a loader ship in liburing.so. The
//! trace and checker themselves ([`back`] and the modules it uses)
//! live in their own shared object, `liburing-rs-diag.so.2.15`, linked from
//! the same Rust archive and loaded only when one of the variables is set,
//! so they cost the library neither time nor size otherwise.
//!
//! Cost when off: the environment is read once, at the first ring setup.
//! Until then and afterwards, with neither variable set, [`gate`] is 1 and
//! the wait and peek calls fold it into their NULL check (`ring <
//! gate()`). Turned on, the gate becomes `usize::MAX` and every such call
//! takes the diagnostic path; rings set up from then on also carry
//! `RING_SLOW`, which sends their submits through the general path and its
//! hook, so the submit fast path gains no instruction.
//!
//! What is seen: SQEs are read at submit, before the kernel sees them. CQEs
//! are read at every library call, from the last one traced up to the
//! kernel's tail, before and after the call; completions the application
//! consumed with inline helpers in between (without any library call) are
//! reported as a count. Inline helpers that move the CQ head wrongly are
//! caught at the next library call by comparing the head with the tail.

pub mod names;
pub mod setup;
pub mod sysinfo;

mod line;
pub use line::Line;

mod back;
mod check;
mod decode;
mod json;
mod out;
mod state;
mod trace;
mod view;

use core::ffi::{c_void, CStr};
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize, Ordering};

use crate::sys::liburing::IoUring;

/// Below this address a queue call's ring takes the slow path (see the
/// module documentation): 1 normally (only NULL), `usize::MAX` when on.
static GATE: AtomicUsize = AtomicUsize::new(1);
/// The loaded diagnostics; set before GATE opens, never changed after.
static HOOKS: AtomicPtr<Hooks> = AtomicPtr::new(ptr::null_mut());
/// 0: environment not read yet; 1: being read; 2: done.
static INIT: AtomicU8 = AtomicU8::new(0);

/// What `liburing-rs-diag.so` offers; the library and the diagnostics come
/// from one build, and [`HOOKS_VERSION`] guards against mixing two.
#[repr(C)]
pub struct Hooks {
    version: u32,
    init: extern "C" fn(&'static Lib) -> bool,
    setup: extern "C" fn(*const IoUring, u32, u32, i32),
    /// Returns the call's start time, which `after` gets back.
    before: extern "C" fn(*const IoUring, bool) -> u64,
    after: extern "C" fn(*const IoUring, bool, u64),
    register: extern "C" fn(*const IoUring, u32, *const c_void, u32, i32),
    exit: extern "C" fn(*const IoUring),
}

/// What the library lends the diagnostics: their own copy of the crate
/// knows no engine ring, so questions to a ring go through these.
#[repr(C)]
pub struct Lib {
    /// `io_uring_register(2)` as the library routes it (kernel or engine).
    pub register: unsafe extern "C" fn(i32, u32, *const c_void, u32) -> i32,
}

const HOOKS_VERSION: u32 = 2;
const DIAG_SO: &[u8] = b"liburing-rs-diag.so.2.15";

/// The slow-path threshold for queue calls; see the module documentation.
#[inline(always)]
pub fn gate() -> usize {
    GATE.load(Ordering::Relaxed)
}

/// Whether tracing or checking is on.
#[inline(always)]
pub fn on() -> bool {
    gate() > 1
}

fn hooks() -> &'static Hooks {
    // SAFETY: HOOKS is set (to a static in the loaded object, which is
    // never unloaded) before GATE opens, and on() is checked first.
    unsafe { &*HOOKS.load(Ordering::Acquire) }
}

/// A LIBURING_RS_* setting, if set to something other than "" or "0"
/// (never for programs running with raised privileges).
fn env(name: &CStr) -> Option<&'static [u8]> {
    crate::sys::env::get(name).filter(|s| !s.is_empty() && *s != b"0")
}

/// Reads the environment, once per process; loads the diagnostics if asked.
#[cold]
#[inline(never)]
fn init(lib: &'static Lib) {
    if INIT.load(Ordering::Acquire) == 2 {
        return;
    }
    if INIT.compare_exchange(0, 1, Ordering::Acquire, Ordering::Acquire).is_err() {
        while INIT.load(Ordering::Acquire) != 2 {
            // SAFETY: no preconditions.
            unsafe { libc::sched_yield() };
        }
        return;
    }
    if env(c"LIBURING_RS_TRACE").is_some() || env(c"LIBURING_RS_CHECK").is_some() {
        if let Some(h) = load() {
            if (h.init)(lib) {
                HOOKS.store(h as *const Hooks as *mut Hooks, Ordering::Release);
                GATE.store(usize::MAX, Ordering::Relaxed);
            }
        }
    }
    INIT.store(2, Ordering::Release);
}

/// Finds `liburing-rs-diag.so.2.15`: where LIBURING_RS_DIAG_LIB says, else
/// next to this library, else next to the file it resolves to when it was
/// reached through a symlink, else through the dynamic loader's search path.
fn load() -> Option<&'static Hooks> {
    let mut path = Path::new();
    let found = if let Some(p) = env(c"LIBURING_RS_DIAG_LIB") {
        path.push(p).open_hooks()
    } else {
        // SAFETY: all-zero bytes are a valid Dl_info (null pointers).
        let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
        // SAFETY: dladdr fills `info` for an address inside this library.
        let me = if unsafe { libc::dladdr(gate as *const c_void, &mut info) } != 0 && !info.dli_fname.is_null() {
            // SAFETY: dli_fname is the NUL-terminated path of our object.
            unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes()
        } else {
            b""
        };
        path.push(dir_of(me))
            .push(DIAG_SO)
            .open_hooks()
            .or_else(|| {
                let mut real = Path::new();
                real.push(me);
                let mut target = Path::new();
                // SAFETY: both buffers are NUL-terminated and 4096 bytes, at
                // least PATH_MAX; realpath writes at most that.
                let r = unsafe { libc::realpath(real.buf.as_ptr().cast(), target.buf.as_mut_ptr().cast()) };
                if r.is_null() {
                    return None;
                }
                // SAFETY: realpath wrote a NUL-terminated path into target.
                let t = unsafe { CStr::from_ptr(target.buf.as_ptr().cast()) }.to_bytes();
                if dir_of(t) == dir_of(me) {
                    return None;
                }
                path = Path::new();
                path.push(dir_of(t)).push(DIAG_SO).open_hooks()
            })
            .or_else(|| {
                path = Path::new();
                path.push(DIAG_SO).open_hooks()
            })
    };
    if found.is_none() {
        // SAFETY: dlerror returns null or a NUL-terminated message.
        let why = unsafe { libc::dlerror() };
        let why = if why.is_null() {
            &b"it is not from this build"[..]
        } else {
            // SAFETY: see above.
            unsafe { CStr::from_ptr(why) }.to_bytes()
        };
        let mut line = Path::new();
        line.push(b"liburing-rs: diagnostics off, cannot load ")
            .push(path.text())
            .push(b" (")
            .push(why)
            .push(b"); LIBURING_RS_DIAG_LIB names its path\n");
        // SAFETY: the bytes are initialised; a failed write is ignored.
        unsafe { libc::write(2, line.buf.as_ptr().cast(), line.len) };
    }
    found
}

/// The directory part of `path`, with its trailing slash ("" for none).
fn dir_of(path: &[u8]) -> &[u8] {
    let dir = path.len() - path.rsplit(|&c| c == b'/').next().map_or(0, |file| file.len());
    path.get(..dir).unwrap_or(&[])
}

/// A NUL-terminated string built on the stack (cut to fit).
struct Path {
    buf: [u8; 4096],
    len: usize,
}

impl Path {
    fn new() -> Path {
        Path { buf: [0; 4096], len: 0 }
    }

    fn push(&mut self, b: &[u8]) -> &mut Path {
        for &c in b {
            // The last byte stays 0.
            if let Some(slot) = self.buf.get_mut(self.len).filter(|_| self.len + 1 < 4096) {
                *slot = c;
                self.len += 1;
            }
        }
        self
    }

    fn text(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// The diagnostics object at this path, if it is one of this build.
    fn open_hooks(&self) -> Option<&'static Hooks> {
        // SAFETY: buf is NUL-terminated; the object stays loaded for good.
        let h = unsafe { libc::dlopen(self.buf.as_ptr().cast(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if h.is_null() {
            return None;
        }
        // SAFETY: h is a live handle, the name NUL-terminated.
        let sym = unsafe { libc::dlsym(h, c"liburing_rs_diag_hooks".as_ptr()) };
        // SAFETY: the symbol is the Hooks static of a diagnostics object;
        // its version is checked before anything else is trusted.
        unsafe { (sym as *const Hooks).as_ref() }.filter(|h| h.version == HOOKS_VERSION)
    }
}

/// What a queue call does besides waiting or peeking.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// Hands pending SQEs to the kernel.
    Submit,
    /// Only looks at or waits for completions.
    Reap,
}

/// Runs queue call `f` on `ring` with the diagnostics around it: pending
/// SQEs are traced and checked before, completions caught up before and
/// after.
#[cold]
#[inline(never)]
pub fn call<R>(ring: *mut IoUring, kind: Call, f: impl FnOnce() -> R) -> R {
    let h = hooks();
    let since = (h.before)(ring, kind == Call::Submit);
    let r = f();
    (h.after)(ring, kind == Call::Submit, since);
    r
}

/// After a setup call on `ring` (`entries` and `flags` as the caller asked;
/// `ret` < 0 is the error). The first one reads the environment, and
/// lends `lib` to the diagnostics if it loads them.
#[cold]
#[inline(never)]
pub fn setup(ring: *const IoUring, entries: u32, flags: u32, ret: i32, lib: &'static Lib) {
    init(lib);
    if on() {
        (hooks().setup)(ring, entries, flags, ret);
    }
}

/// After `io_uring_register(opcode, arg, nr)` on `ring` returned `ret`.
#[cold]
#[inline(never)]
pub fn register(ring: *const IoUring, opcode: u32, arg: *const c_void, nr: u32, ret: i32) {
    (hooks().register)(ring, opcode, arg, nr, ret);
}

/// Before `io_uring_queue_exit` tears `ring` down.
#[cold]
#[inline(never)]
pub fn exit(ring: *const IoUring) {
    (hooks().exit)(ring);
}
