//! seccomp and classic BPF, as the interception filter uses them
//! (`crate::intercept`): the UAPI values, and the filter itself.

/// `struct sock_filter`: one classic BPF instruction.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct sock_filter {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
pub struct sock_fprog {
    pub len: u16,
    pub filter: *const sock_filter,
}

pub const SECCOMP_SET_MODE_FILTER: u32 = 1;
pub const SECCOMP_FILTER_FLAG_TSYNC: u32 = 1;
pub const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
pub const SECCOMP_RET_TRAP: u32 = 0x0003_0000;
pub const SECCOMP_RET_DATA: u32 = 0x0000_ffff;
/// `si_code` of a SIGSYS sent by SECCOMP_RET_TRAP.
pub const SYS_SECCOMP: i32 = 1;
pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;

/// `struct seccomp_data` offsets (little-endian halves of the u64s).
const NR: u32 = 0;
const ARCH: u32 = 4;
const IP_LO: u32 = 8;
const IP_HI: u32 = 12;
const fn arg_lo(i: u32) -> u32 {
    16 + 8 * i
}
const fn arg_hi(i: u32) -> u32 {
    16 + 8 * i + 4
}

/// Where the interception stub lives, in every process that intercepts:
/// a fixed address, so that a filter inherited across execve still names
/// the stub of the new image. It lies between where the kernel puts PIE
/// executables (0x55..) and shared mappings (0x7f..).
pub const STUB_ADDR: usize = 0x6c69_6275_0000;
pub const STUB_LEN: usize = 4096;

/// The value SECCOMP_RET_TRAP carries to `si_errno`, which tells our SIGSYS
/// from any other.
pub const TRAP_DATA: u32 = 0x7552;

const MAP_SHARED: u32 = 0x01;
const MAP_ANONYMOUS: u32 = 0x20;

const fn ld(k: u32) -> sock_filter {
    sock_filter { code: BPF_LD_W_ABS, jt: 0, jf: 0, k }
}
const fn jmp(code: u16, k: u32, at: usize, t: usize, f: usize) -> sock_filter {
    sock_filter { code, jt: (t - at - 1) as u8, jf: (f - at - 1) as u8, k }
}
const fn ret(k: u32) -> sock_filter {
    sock_filter { code: BPF_RET_K, jt: 0, jf: 0, k }
}

const SIGACT: usize = 9;
const MMAP: usize = 19;
const CLOSE: usize = 27;
const ALLOW: usize = 30;
const CHKIP: usize = 31;
const TRAP: usize = 37;

/// The fd numbers a ring made by a trapped io_uring_setup gets when one is
/// free (`RING_FD_FIRST..RING_FD_END`), so that the filter can trap
/// close() of a ring fd and of nothing else. Fixed, so that a filter
/// inherited across execve names the same numbers; below FD_SETSIZE, so
/// that select() takes them; high enough that a program reaches them with
/// its own files only when it has some 960 open.
pub const RING_FD_FIRST: u32 = 960;
pub const RING_FD_END: u32 = 1024;

/// The interception filter (x86_64): io_uring_setup, io_uring_enter,
/// io_uring_register, `rt_sigaction` of SIGSYS that both sets an action
/// and asks for the old one (what `signal()` and most `sigaction()` calls
/// do; the program's handler is then kept for what is not ours, rather
/// than replacing ours), `mmap` calls that could map ring memory (a
/// shared file mapping at an offset that is a multiple of 128 MiB, which
/// takes in IORING_OFF_SQ_RING, _CQ_RING and _SQES, or at
/// IORING_OFF_PBUF_RING and above), and `close` of the ring fd numbers,
/// trap unless made from the stub. Every other call is let through on the
/// arch and number alone, so the kernel's per-number cache of constant
/// answers skips the filter for them (`close` runs it: five instructions).
///
/// A call that only reads the action, or only sets it, is let through:
/// glibc's posix_spawn child makes such calls with every signal blocked,
/// where a trap would kill it.
pub const FILTER: [sock_filter; 38] = [
    ld(ARCH),
    jmp(BPF_JEQ_K, AUDIT_ARCH_X86_64, 1, 2, ALLOW),
    ld(NR),
    jmp(BPF_JEQ_K, libc::SYS_io_uring_setup as u32, 3, CHKIP, 4),
    jmp(BPF_JEQ_K, libc::SYS_io_uring_enter as u32, 4, CHKIP, 5),
    jmp(BPF_JEQ_K, libc::SYS_io_uring_register as u32, 5, CHKIP, 6),
    jmp(BPF_JEQ_K, libc::SYS_mmap as u32, 6, MMAP, 7),
    jmp(BPF_JEQ_K, libc::SYS_close as u32, 7, CLOSE, 8),
    jmp(BPF_JEQ_K, libc::SYS_rt_sigaction as u32, 8, SIGACT, ALLOW),
    // 9: rt_sigaction(SIGSYS, act != NULL, oact != NULL, ...)
    ld(arg_lo(0)),
    jmp(BPF_JEQ_K, libc::SIGSYS as u32, 10, 11, ALLOW),
    ld(arg_lo(1)),
    jmp(BPF_JEQ_K, 0, 12, 13, 15),
    ld(arg_hi(1)),
    jmp(BPF_JEQ_K, 0, 14, ALLOW, 15),
    ld(arg_lo(2)),
    jmp(BPF_JEQ_K, 0, 16, 17, CHKIP),
    ld(arg_hi(2)),
    jmp(BPF_JEQ_K, 0, 18, ALLOW, CHKIP),
    // 19: mmap. Anonymous or private mappings are never ring memory.
    ld(arg_lo(3)),
    jmp(BPF_JSET_K, MAP_ANONYMOUS, 20, ALLOW, 21),
    jmp(BPF_JSET_K, MAP_SHARED, 21, 22, ALLOW),
    ld(arg_hi(5)),
    jmp(BPF_JEQ_K, 0, 23, 24, ALLOW),
    ld(arg_lo(5)),
    jmp(BPF_JGE_K, 0x8000_0000, 25, CHKIP, 26),
    jmp(BPF_JSET_K, 0x07ff_ffff, 26, ALLOW, CHKIP),
    // 27: close of a ring fd number (the kernel reads an unsigned int).
    ld(arg_lo(0)),
    jmp(BPF_JGE_K, RING_FD_FIRST, 28, 29, ALLOW),
    jmp(BPF_JGE_K, RING_FD_END, 29, ALLOW, CHKIP),
    // 30
    ret(SECCOMP_RET_ALLOW),
    // 31: made from the stub?
    ld(IP_HI),
    jmp(BPF_JEQ_K, (STUB_ADDR >> 32) as u32, 32, 33, TRAP),
    ld(IP_LO),
    jmp(BPF_JGE_K, STUB_ADDR as u32, 34, 35, TRAP),
    jmp(BPF_JGE_K, (STUB_ADDR + STUB_LEN) as u32, 35, TRAP, 36),
    ret(SECCOMP_RET_ALLOW),
    // 37
    ret(SECCOMP_RET_TRAP | TRAP_DATA),
];
