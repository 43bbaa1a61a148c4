//! IORING_(UN)REGISTER_NAPI on an engine ring: the ring's NAPI busy-poll
//! settings (timeout, prefer flag, tracking mode, static NAPI ids) with the
//! kernel's checks, answers and write-back of the previous settings
//! (Linux 6.18).
//!
//! The settings are the ring's state, as in the kernel, but the engine's
//! waits do not busy-poll a device queue: they sleep in the ring's epoll
//! set. On a device without NAPI (loopback) the kernel polls nothing
//! either; on a NAPI-capable NIC the engine's latency is that of a plain
//! epoll wait.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};

use super::ctx::Ctx;
use super::os;
use crate::sys::IORING_SETUP_IOPOLL;

/// `io_uring_napi.opcode` (the byte after prefer_busy_poll).
const OP_REGISTER: u8 = 0;
const OP_STATIC_ADD_ID: u8 = 1;
const OP_STATIC_DEL_ID: u8 = 2;
/// Tracking modes (`op_param` of OP_REGISTER, reported back the same way).
const TRACK_DYNAMIC: u32 = 0;
const TRACK_STATIC: u32 = 1;
const TRACK_INACTIVE: u32 = 255;
/// The kernel caps the busy-poll time at 10 ms.
const MAX_BUSY_POLL_US: u32 = 10_000;

/// `struct io_uring_napi` as the kernel reads it (liburing's header calls
/// opcode..resv `pad[3]` and `resv`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct NapiArg {
    busy_poll_to: u32,
    prefer_busy_poll: u8,
    opcode: u8,
    pad: [u8; 2],
    op_param: u32,
    resv: u32,
}

pub(crate) struct Napi {
    busy_poll_us: u32,
    prefer: bool,
    mode: u32,
    /// NAPI ids added in static tracking mode.
    ids: Vec<u32>,
}

impl Napi {
    pub(crate) fn new() -> Napi {
        Napi { busy_poll_us: 0, prefer: false, mode: TRACK_INACTIVE, ids: Vec::new() }
    }

    fn current(&self, with_mode: bool) -> NapiArg {
        NapiArg {
            busy_poll_to: self.busy_poll_us,
            prefer_busy_poll: self.prefer as u8,
            op_param: if with_mode { self.mode } else { 0 },
            ..NapiArg::default()
        }
    }
}

/// The lowest valid NAPI id: ids up to NR_CPUS belong to sender CPUs. The
/// kernel's NR_CPUS is one more than /sys/devices/system/cpu/kernel_max.
fn min_napi_id() -> u32 {
    static MIN: AtomicU32 = AtomicU32::new(0);
    let m = MIN.load(Ordering::Relaxed);
    if m != 0 {
        return m;
    }
    let m = read_u32(c"/sys/devices/system/cpu/kernel_max").map_or(8192 + 1, |max| max + 2);
    MIN.store(m, Ordering::Relaxed);
    m
}

/// A decimal number read from a small sysfs file.
fn read_u32(path: &core::ffi::CStr) -> Option<u32> {
    // SAFETY: a NUL-terminated path; the fd is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let mut buf = [0u8; 16];
    // SAFETY: reads at most buf.len() bytes into buf.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    os::close(fd);
    let mut v: u32 = 0;
    let mut any = false;
    for &b in buf.get(..usize::try_from(n).ok()?)?.iter().take_while(|b| b.is_ascii_digit()) {
        v = v.checked_mul(10)?.checked_add((b - b'0') as u32)?;
        any = true;
    }
    any.then_some(v)
}

fn write_back(arg: u64, v: &NapiArg) -> Result<(), i32> {
    os::copy_to_user(arg, v as *const NapiArg as *const u8, core::mem::size_of::<NapiArg>())
}

/// IORING_REGISTER_NAPI: reports the previous settings into the caller's
/// struct, then applies its opcode.
pub(crate) fn register(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if arg == 0 || nr != 1 || ctx.flags & IORING_SETUP_IOPOLL != 0 {
        return -libc::EINVAL;
    }
    let mut a = NapiArg::default();
    if let Err(e) = os::copy_from_user(&mut a as *mut NapiArg as *mut u8, arg, core::mem::size_of::<NapiArg>()) {
        return e;
    }
    if a.pad != [0; 2] || a.resv != 0 {
        return -libc::EINVAL;
    }
    let mut n = ctx.napi.lock();
    if let Err(e) = write_back(arg, &n.current(true)) {
        return e;
    }
    let id = a.op_param;
    match a.opcode {
        OP_REGISTER => {
            if id != TRACK_DYNAMIC && id != TRACK_STATIC {
                return -libc::EINVAL;
            }
            *n = Napi {
                busy_poll_us: a.busy_poll_to.min(MAX_BUSY_POLL_US),
                prefer: a.prefer_busy_poll != 0,
                mode: id,
                ids: Vec::new(),
            };
            0
        }
        OP_STATIC_ADD_ID | OP_STATIC_DEL_ID if n.mode != TRACK_STATIC || id < min_napi_id() => -libc::EINVAL,
        OP_STATIC_ADD_ID if n.ids.contains(&id) => -libc::EEXIST,
        OP_STATIC_ADD_ID => {
            n.ids.push(id);
            0
        }
        OP_STATIC_DEL_ID => match n.ids.iter().position(|&i| i == id) {
            Some(at) => {
                n.ids.swap_remove(at);
                0
            }
            None => -libc::ENOENT,
        },
        _ => -libc::EINVAL,
    }
}

/// IORING_UNREGISTER_NAPI: reports the settings (without the tracking
/// mode, as the kernel does) when given a struct, then clears them.
pub(crate) fn unregister(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    if nr != 1 {
        return -libc::EINVAL;
    }
    let mut n = ctx.napi.lock();
    if arg != 0 {
        if let Err(e) = write_back(arg, &n.current(false)) {
            return e;
        }
    }
    *n = Napi::new();
    0
}
