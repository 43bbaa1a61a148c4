//! Questions put to the kernel with rings of our own, each created for the
//! question and destroyed before the answer is returned. Nothing here
//! changes the system or leaves anything registered. The ring setup path
//! asks them when a setup fails (for the diagnostics' line), `uring-info`
//! for its report.

use core::ffi::c_void;
use core::mem::size_of;
use core::ptr;

use super::{probe as ring_probe, setup, IoUring, Ring};
use crate::sys::{self, *};

/// Entries of the rings used for questions: small, any size works.
const TRIAL_ENTRIES: u32 = 4;

/// The flags a setup flag cannot be tried without.
pub fn companions(flag: u32) -> u32 {
    match flag {
        IORING_SETUP_SQ_AFF => IORING_SETUP_SQPOLL,
        IORING_SETUP_TASKRUN_FLAG => IORING_SETUP_COOP_TASKRUN,
        IORING_SETUP_DEFER_TASKRUN => IORING_SETUP_SINGLE_ISSUER,
        IORING_SETUP_REGISTERED_FD_ONLY => IORING_SETUP_NO_MMAP,
        IORING_SETUP_HYBRID_IOPOLL => IORING_SETUP_IOPOLL,
        IORING_SETUP_SQ_REWIND => IORING_SETUP_NO_SQARRAY,
        _ => 0,
    }
}

/// A ring that closes itself.
struct Owned(IoUring);

impl Owned {
    /// Sets up a ring with exactly `p.flags` through the library's own setup
    /// path (NO_MMAP memory is allocated by it). 0 or `-errno`.
    fn new(entries: u32, p: &mut io_uring_params) -> Result<Self, i32> {
        let mut ring = IoUring::empty();
        let ret = setup::queue_init_params_kernel(entries, Ring::from_mut(&mut ring), p);
        if ret < 0 {
            Err(ret)
        } else {
            Ok(Owned(ring))
        }
    }

    fn plain(flags: u32) -> Result<Self, i32> {
        Self::new(TRIAL_ENTRIES, &mut io_uring_params { flags, ..Default::default() })
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        setup::queue_exit(Ring::from_mut(&mut self.0));
    }
}

/// Creates and destroys a ring with exactly `flags`, supplying what those
/// flags need (a CQ size, a CPU, a ring to attach to). 0 or `-errno`.
pub fn try_setup(flags: u32) -> i32 {
    let mut p = io_uring_params { flags, ..Default::default() };
    if flags & IORING_SETUP_CQSIZE != 0 {
        p.cq_entries = 4 * TRIAL_ENTRIES;
    }
    if flags & IORING_SETUP_SQ_AFF != 0 {
        // SAFETY: sched_getcpu has no preconditions.
        p.sq_thread_cpu = unsafe { libc::sched_getcpu() }.max(0) as u32;
    }
    let _wq_owner = if flags & IORING_SETUP_ATTACH_WQ != 0 {
        match Owned::plain(0) {
            Ok(other) => {
                p.wq_fd = other.0.ring_fd as u32;
                Some(other)
            }
            Err(e) => return e,
        }
    } else {
        None
    };
    Owned::new(TRIAL_ENTRIES, &mut p).map_or_else(|e| e, |_ring| 0)
}

/// Tries one setup flag with its companions. 0 or `-errno`.
pub fn try_flag(flag: u32) -> i32 {
    try_setup(flag | companions(flag))
}

/// The kernel's own account of what it knows (IORING_REGISTER_QUERY,
/// Linux 6.18 and later); `None` on older kernels.
pub fn query() -> Option<io_uring_query_opcode> {
    let mut op = io_uring_query_opcode::default();
    let mut hdr = io_uring_query_hdr {
        query_data: &mut op as *mut io_uring_query_opcode as u64,
        query_op: IO_URING_QUERY_OPCODES,
        size: size_of::<io_uring_query_opcode>() as u32,
        ..Default::default()
    };
    // SAFETY: one header, pointing at a live io_uring_query_opcode of the
    // size it states; next_entry is 0, ending the chain.
    let ret = unsafe { super::register::register_query(&mut hdr) };
    (ret == 0 && hdr.result == 0).then_some(op)
}

/// The bits of `flags` this kernel does not know: from its query answer
/// where it gives one, else by trying each bit alone.
pub fn unknown_setup_flags(flags: u32) -> u32 {
    if let Some(q) = query() {
        return flags & !(q.ring_setup_flags as u32);
    }
    (0..32).map(|b| 1u32 << b).filter(|&f| flags & f != 0 && try_flag(f) == -libc::EINVAL).fold(0, |acc, f| acc | f)
}

/// The IORING_FEAT_* bits a plain ring reports.
pub fn features() -> Result<u32, i32> {
    let mut p = io_uring_params::default();
    Owned::new(TRIAL_ENTRIES, &mut p).map(|_ring| p.features)
}

/// Which request opcodes the kernel supports, from the library's own probe.
/// Returns the probe's `last_op`.
pub fn supported_opcodes(out: &mut [bool; 256]) -> Result<u8, i32> {
    let probe = ring_probe::get_probe();
    if probe.is_null() {
        return Err(-libc::ENOSYS);
    }
    // SAFETY: get_probe returns a live probe whose ops array holds ops_len
    // entries; it is freed below and not used after.
    let (last, ops) = unsafe {
        let p = &*probe;
        (p.last_op, core::slice::from_raw_parts((*probe).ops.as_ptr(), p.ops_len as usize))
    };
    *out = [false; 256];
    for op in ops {
        out[op.op as usize] = op.flags & IO_URING_OP_SUPPORTED != 0;
    }
    ring_probe::free_probe(probe);
    Ok(last)
}

/// The largest ring the kernel will set up, as (SQ entries, CQ entries).
/// It asks for more than any kernel allows with IORING_SETUP_CLAMP, so the
/// kernel's own limit decides; when memory runs short it halves the size.
pub fn largest_ring() -> Result<(u32, u32), i32> {
    let mut entries = u32::MAX;
    loop {
        let mut p = io_uring_params {
            flags: IORING_SETUP_CLAMP | IORING_SETUP_CQSIZE,
            cq_entries: entries.saturating_mul(2),
            ..Default::default()
        };
        match Owned::new(entries, &mut p) {
            Ok(r) => return Ok((r.0.sq.ring_entries, r.0.cq.ring_entries)),
            Err(e) if e == -libc::ENOMEM && entries > 1 => {
                entries = if entries == u32::MAX { 1 << 14 } else { entries / 2 };
            }
            Err(e) => return Err(e),
        }
    }
}

// ---------------------------------------------------------------------------
// Register opcodes
// ---------------------------------------------------------------------------
//
// The kernel answers an opcode it does not know with -EINVAL, before looking
// at anything else. A known opcode also answers -EINVAL to many malformed
// calls, so each opcode gets a call shaped to pass its argument checks and
// then fail (or do nothing) before it changes anything:
//
// - most get an argument pointer into a page mapped PROT_NONE, with the
//   nr_args value their checks want; the kernel's first copy from (or to) it
//   fails with -EFAULT;
// - the unregister calls that take no argument run on a fresh ring with
//   nothing registered (-ENXIO), ENABLE_RINGS and RESTRICTIONS on a ring
//   that is not disabled (-EBADFD), UNREGISTER_IOWQ_AFF resets an affinity
//   nobody set (0);
// - PERSONALITY registers the caller's credentials and UNREGISTER_PERSONALITY
//   removes them again: the only pair with an effect, undone at once;
// - RESIZE_RINGS and ZCRX_IFQ only look at their argument on DEFER_TASKRUN
//   rings (ZCRX_IFQ also wants 32-byte CQEs), so they get such a ring;
// - SEND_MSG_RING is ring-less: fd -1. Kernels without ring-less register
//   calls answer -EBADF there, which also means "unknown".
//
// Each opcode gets a ring of its own, closed right after, so whatever a call
// might set up cannot outlive it. Any answer other than -EINVAL (and -EBADF
// for the ring-less call) means the kernel knows the opcode.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Ring,
    DeferRing,
    NoRing,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Arg {
    Null,
    Fault,
}

/// The call that probes `op`: which ring, which argument, which nr_args.
fn probe_call(op: u32) -> (Target, Arg, u32) {
    use Arg::*;
    use Target::*;
    match op {
        IORING_UNREGISTER_BUFFERS
        | IORING_UNREGISTER_FILES
        | IORING_UNREGISTER_EVENTFD
        | IORING_REGISTER_ENABLE_RINGS
        | IORING_UNREGISTER_IOWQ_AFF => (Ring, Null, 0),
        IORING_REGISTER_FILES2 | IORING_REGISTER_BUFFERS2 => (Ring, Fault, size_of::<io_uring_rsrc_register>() as u32),
        IORING_REGISTER_FILES_UPDATE2 | IORING_REGISTER_BUFFERS_UPDATE => {
            (Ring, Fault, size_of::<io_uring_rsrc_update2>() as u32)
        }
        IORING_REGISTER_IOWQ_AFF => (Ring, Fault, size_of::<libc::cpu_set_t>() as u32),
        IORING_REGISTER_IOWQ_MAX_WORKERS => (Ring, Fault, 2),
        IORING_REGISTER_FILE_ALLOC_RANGE
        | IORING_REGISTER_CLOCK
        | IORING_REGISTER_QUERY
        | IORING_REGISTER_ZCRX_CTRL => (Ring, Fault, 0),
        IORING_REGISTER_RESIZE_RINGS | IORING_REGISTER_ZCRX_IFQ => (DeferRing, Fault, 1),
        IORING_REGISTER_SEND_MSG_RING => (NoRing, Fault, 1),
        _ => (Ring, Fault, 1),
    }
}

/// What a register-opcode probe found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegAnswer {
    /// The kernel answered this (0, an id, or `-errno`) and so knows it.
    Known(i32),
    /// The kernel answered as it does for opcodes it does not know.
    Unknown(i32),
    /// No ring to ask on could be set up (`-errno` of that setup).
    Untested(i32),
}

impl RegAnswer {
    pub fn is_known(self) -> bool {
        matches!(self, RegAnswer::Known(_))
    }
}

fn classify(target: Target, ret: i32) -> RegAnswer {
    let unknown = ret == -libc::EINVAL || (target == Target::NoRing && ret == -libc::EBADF);
    if unknown {
        RegAnswer::Unknown(ret)
    } else {
        RegAnswer::Known(ret)
    }
}

/// A page nobody may touch: every copy the kernel makes from or to it
/// fails with -EFAULT.
struct FaultPage(*mut c_void);

impl FaultPage {
    fn new() -> Result<Self, i32> {
        // SAFETY: a fresh anonymous mapping without an address hint.
        let p = unsafe {
            sys::mmap(ptr::null_mut(), 4096, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        }?;
        Ok(FaultPage(p))
    }
}

impl Drop for FaultPage {
    fn drop(&mut self) {
        // SAFETY: our own mapping, never handed out for use.
        unsafe { sys::munmap(self.0, 4096) };
    }
}

/// Probes every register opcode below IORING_REGISTER_LAST (see the method
/// above); `out[op]` gets the answer for `op`.
pub fn register_opcodes(out: &mut [RegAnswer; IORING_REGISTER_LAST as usize]) -> Result<(), i32> {
    let fault = FaultPage::new()?;
    for op in 0..IORING_REGISTER_LAST {
        out[op as usize] = match op {
            IORING_REGISTER_PERSONALITY => personality_pair(out),
            // Answered together with PERSONALITY.
            IORING_UNREGISTER_PERSONALITY => out[op as usize],
            _ => probe_one(op, &fault),
        };
    }
    Ok(())
}

fn probe_one(op: u32, fault: &FaultPage) -> RegAnswer {
    let (target, arg, nr) = probe_call(op);
    let arg = match arg {
        Arg::Null => ptr::null(),
        Arg::Fault => fault.0 as *const c_void,
    };
    let flags = match target {
        Target::DeferRing => IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CQE32,
        _ => 0,
    };
    let ring = match target {
        Target::NoRing => None,
        _ => match Owned::plain(flags) {
            Ok(r) => Some(r),
            Err(e) => return RegAnswer::Untested(e),
        },
    };
    let fd = ring.as_ref().map_or(-1, |r| r.0.ring_fd);
    // SAFETY: `arg` is null or points into the PROT_NONE page, which the
    // kernel can only fail to copy; `fd` is our own ring or -1.
    let ret = unsafe { sys::io_uring_register(fd, op, arg, nr) };
    classify(target, ret)
}

/// PERSONALITY and its undo on one ring; fills in UNREGISTER_PERSONALITY.
fn personality_pair(out: &mut [RegAnswer; IORING_REGISTER_LAST as usize]) -> RegAnswer {
    let unreg = IORING_UNREGISTER_PERSONALITY as usize;
    let ring = match Owned::plain(0) {
        Ok(r) => r,
        Err(e) => {
            out[unreg] = RegAnswer::Untested(e);
            return RegAnswer::Untested(e);
        }
    };
    let fd = ring.0.ring_fd;
    // SAFETY: PERSONALITY takes no argument.
    let id = unsafe { sys::io_uring_register(fd, IORING_REGISTER_PERSONALITY, ptr::null(), 0) };
    if id < 0 {
        // Unknown, or refused: without an id there is no way to ask about
        // the undo, which the kernel added together with it.
        out[unreg] = classify(Target::Ring, id);
        return classify(Target::Ring, id);
    }
    // SAFETY: UNREGISTER_PERSONALITY takes the id in nr_args, no argument.
    let ret = unsafe { sys::io_uring_register(fd, IORING_UNREGISTER_PERSONALITY, ptr::null(), id as u32) };
    out[unreg] = classify(Target::Ring, ret);
    RegAnswer::Known(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_known_to_the_kernel_agree_with_its_query() {
        let Some(q) = query() else {
            eprintln!("skipped: no IORING_REGISTER_QUERY on this kernel");
            return;
        };
        for (flag, name) in crate::diag::names::SETUP_FLAGS.pairs() {
            let known = q.ring_setup_flags as u32 & flag != 0;
            let ret = try_flag(flag);
            if known {
                assert_ne!(ret, -libc::EINVAL, "{name} is known but refused");
            } else {
                assert_eq!(ret, -libc::EINVAL, "{name} is unknown but answered {ret}");
            }
        }
        assert_eq!(unknown_setup_flags(1 << 30), 1 << 30);
        assert_eq!(unknown_setup_flags(IORING_SETUP_SQPOLL), 0);
    }

    #[test]
    fn register_probe_agrees_with_the_query() {
        let Some(q) = query() else {
            eprintln!("skipped: no IORING_REGISTER_QUERY on this kernel");
            return;
        };
        let mut out = [RegAnswer::Untested(0); IORING_REGISTER_LAST as usize];
        register_opcodes(&mut out).unwrap();
        for (op, a) in out.iter().enumerate() {
            let name = crate::diag::names::REGISTER_OPS.nth(op).unwrap_or("?");
            assert!(!matches!(a, RegAnswer::Untested(_)), "{name}: {a:?}");
            assert_eq!(a.is_known(), (op as u32) < q.nr_register_opcodes, "{name}: {a:?}");
        }
    }

    #[test]
    fn largest_ring_reaches_the_kernel_limit() {
        let (sq, cq) = largest_ring().unwrap();
        assert!(sq.is_power_of_two() && sq >= 4096, "sq {sq}");
        assert!(cq >= sq, "cq {cq} < sq {sq}");
        // Without CLAMP one entry more is refused: beyond the kernel's limit
        // (EINVAL), or, where memory set the size, for lack of it (ENOMEM).
        let mut ring = IoUring::empty();
        let mut p = io_uring_params::default();
        let ret = setup::queue_init_params_kernel(sq + 1, Ring::from_mut(&mut ring), &mut p);
        assert!(ret == -libc::EINVAL || ret == -libc::ENOMEM, "{ret}");
    }

    #[test]
    fn opcode_probe_lists_nop() {
        let mut ops = [false; 256];
        let last = supported_opcodes(&mut ops).unwrap();
        assert!(ops[IORING_OP_NOP as usize]);
        assert!(last as usize >= IORING_OP_NOP as usize);
        assert!(!ops[255]);
    }
}
