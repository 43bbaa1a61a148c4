//! What the system and this process allow: the io_uring sysctls, seccomp,
//! capabilities, RLIMIT_MEMLOCK and the kernel release. Read from `/proc`
//! and libc, never written.

use core::ffi::CStr;

/// Capability bit numbers, as in `<linux/capability.h>`.
pub const CAP_IPC_LOCK: u32 = 14;
pub const CAP_SYS_ADMIN: u32 = 21;

/// The RLIMIT_MEMLOCK value meaning "no limit".
pub const UNLIMITED: u64 = u64::MAX;

/// Everything the setup diagnosis and `uring-info` look at. `None` means
/// the fact could not be read (the file does not exist on this kernel).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SysFacts {
    /// `kernel.io_uring_disabled` (Linux 6.6+): 0 allowed, 1 group only, 2 off.
    pub disabled: Option<i64>,
    /// `kernel.io_uring_group`: the group allowed when `disabled` is 1; -1 none.
    pub group: Option<i64>,
    /// Whether this process's effective or supplementary groups hold `group`.
    pub in_group: bool,
    /// `Seccomp:` of /proc/self/status: 0 off, 1 strict, 2 filter.
    pub seccomp: Option<u32>,
    /// `Seccomp_filters:`, the number of filters stacked on this process.
    pub seccomp_filters: Option<u32>,
    /// `CapEff:`, the effective capability set.
    pub cap_eff: Option<u64>,
    /// RLIMIT_MEMLOCK (soft, hard) in bytes; [`UNLIMITED`] for none.
    pub memlock: Option<(u64, u64)>,
    /// The running kernel's (major, minor) version.
    pub kernel: Option<(u32, u32)>,
}

impl SysFacts {
    pub fn gather() -> Self {
        let mut buf = [0u8; 4096];
        let mut f = SysFacts {
            disabled: read_int(c"/proc/sys/kernel/io_uring_disabled"),
            group: read_int(c"/proc/sys/kernel/io_uring_group"),
            memlock: crate::sys::getrlimit(libc::RLIMIT_MEMLOCK).ok(),
            ..Default::default()
        };
        if let Some(g) = f.group {
            f.in_group = (0..=u32::MAX as i64).contains(&g) && in_group(g as u32);
        }
        if let Some(status) = read_file(c"/proc/self/status", &mut buf) {
            let num = |key: &[u8]| status_value(status, key).and_then(parse_int);
            f.seccomp = num(b"Seccomp").and_then(|v| u32::try_from(v).ok());
            f.seccomp_filters = num(b"Seccomp_filters").and_then(|v| u32::try_from(v).ok());
            f.cap_eff = status_value(status, b"CapEff").and_then(parse_hex);
        }
        f.kernel = Utsname::get().and_then(|u| parse_release(u.release()));
        f
    }

    /// Whether capability `cap` is effective; unknown counts as absent.
    pub fn has_cap(&self, cap: u32) -> bool {
        self.cap_eff.is_some_and(|c| c & (1u64 << cap) != 0)
    }

    /// Whether this kernel is older than `major.minor`; unknown counts as not.
    pub fn kernel_before(&self, major: u32, minor: u32) -> bool {
        self.kernel.is_some_and(|k| k < (major, minor))
    }

    /// Whether this kernel charges ring memory to RLIMIT_MEMLOCK (for
    /// processes without CAP_IPC_LOCK). Linux 5.1 to 5.11 did; 5.12 to 6.13
    /// charged the memory cgroup instead; from 6.14 rings are allocated as
    /// memory regions, which are charged to RLIMIT_MEMLOCK again.
    pub fn rings_count_as_locked(&self) -> bool {
        self.kernel.is_some_and(|k| !((5, 12)..(6, 14)).contains(&k))
    }
}

/// `uname(2)`, kept whole so its strings can be shown.
pub struct Utsname(libc::utsname);

impl Utsname {
    pub fn get() -> Option<Self> {
        // SAFETY: utsname is plain C arrays; all-zero is a valid value.
        let mut u: libc::utsname = unsafe { core::mem::zeroed() };
        // SAFETY: `u` is a live, writable utsname.
        (unsafe { libc::uname(&mut u) } == 0).then_some(Utsname(u))
    }

    fn field(f: &[libc::c_char]) -> &[u8] {
        // SAFETY: c_char and u8 have the same size and alignment; the slice
        // covers exactly the field.
        let b = unsafe { core::slice::from_raw_parts(f.as_ptr() as *const u8, f.len()) };
        let mut end = 0;
        while end < b.len() && b[end] != 0 {
            end += 1;
        }
        b.get(..end).unwrap_or(&[])
    }

    pub fn sysname(&self) -> &[u8] {
        Self::field(&self.0.sysname)
    }
    pub fn release(&self) -> &[u8] {
        Self::field(&self.0.release)
    }
    pub fn version(&self) -> &[u8] {
        Self::field(&self.0.version)
    }
    pub fn machine(&self) -> &[u8] {
        Self::field(&self.0.machine)
    }
}

/// Reads up to `buf.len()` bytes of a small file into `buf` and returns
/// them; `None` if it can't be read.
pub fn read_file<'a>(path: &CStr, buf: &'a mut [u8]) -> Option<&'a [u8]> {
    // SAFETY: path is NUL-terminated; the fd is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let mut n = 0;
    while let Some(rest) = buf.get_mut(n..).filter(|r| !r.is_empty()) {
        // SAFETY: the destination is the unfilled tail of `buf`.
        let r = unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) };
        if r <= 0 {
            break;
        }
        n += r as usize;
    }
    // SAFETY: we opened fd and nothing else holds it.
    unsafe { libc::close(fd) };
    buf.get(..n)
}

/// A sysctl holding one integer.
fn read_int(path: &CStr) -> Option<i64> {
    let mut buf = [0u8; 32];
    parse_int(read_file(path, &mut buf)?)
}

/// A decimal integer with an optional sign, blanks around it allowed
/// (`"1\n"`, `" -1"`); `None` for anything else.
pub fn parse_int(s: &[u8]) -> Option<i64> {
    let s = s.trim_ascii();
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = digits.iter().fold(0i64, |acc, d| acc * 10 + (d - b'0') as i64);
    Some(if neg { -v } else { v })
}

/// A hexadecimal number such as `CapEff:`'s `000001ffffffffff`.
pub fn parse_hex(s: &[u8]) -> Option<u64> {
    let s = s.trim_ascii();
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &c| Some(acc << 4 | (c as char).to_digit(16)? as u64))
}

/// The value after `key:` on its own line of a `/proc/<pid>/status` text.
pub fn status_value<'a>(status: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    status.split(|&c| c == b'\n').find_map(|line| {
        let rest = line.strip_prefix(key)?;
        rest.strip_prefix(b":")
    })
}

/// (major, minor) of a release string like `6.18.44-fc-v657`.
pub fn parse_release(s: &[u8]) -> Option<(u32, u32)> {
    let mut nums = [0u32; 2];
    let mut digits = [0usize; 2];
    let mut i = 0;
    for &c in s {
        match c {
            b'0'..=b'9' => {
                nums[i] = nums[i].wrapping_mul(10).wrapping_add((c - b'0') as u32);
                digits[i] += 1;
            }
            b'.' if i == 0 => i = 1,
            _ => break,
        }
    }
    (digits[0] > 0 && digits[1] > 0).then_some((nums[0], nums[1]))
}

/// Whether `gid` is this process's effective group or one of its
/// supplementary groups, the test the kernel applies to io_uring_group.
fn in_group(gid: u32) -> bool {
    // SAFETY: getegid has no preconditions.
    if unsafe { libc::getegid() } == gid {
        return true;
    }
    let mut groups = [0 as libc::gid_t; 256];
    // SAFETY: the buffer holds groups.len() entries.
    let n = unsafe { libc::getgroups(groups.len() as i32, groups.as_mut_ptr()) };
    if n >= 0 {
        return groups.iter().take(n as usize).any(|&g| g == gid);
    }
    // More groups than the buffer holds: ask for the count, then fetch all.
    // SAFETY: a zero size only asks for the count.
    let count = unsafe { libc::getgroups(0, core::ptr::null_mut()) };
    if count <= 0 {
        return false;
    }
    // SAFETY: calloc returns zeroed memory for `count` gids, or null.
    let all = unsafe { libc::calloc(count as usize, core::mem::size_of::<libc::gid_t>()) } as *mut libc::gid_t;
    if all.is_null() {
        return false;
    }
    // SAFETY: `all` holds `count` entries.
    let n = unsafe { libc::getgroups(count, all) };
    // SAFETY: the kernel filled n <= count entries.
    let found = n > 0 && unsafe { core::slice::from_raw_parts(all, n as usize) }.contains(&gid);
    // SAFETY: allocated above, not shared.
    unsafe { libc::free(all.cast()) };
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_values_parse() {
        assert_eq!(parse_int(b"0\n"), Some(0));
        assert_eq!(parse_int(b"2\n"), Some(2));
        assert_eq!(parse_int(b"-1\n"), Some(-1));
        assert_eq!(parse_int(b"  1000 "), Some(1000));
        assert_eq!(parse_int(b""), None);
        assert_eq!(parse_int(b"\n"), None);
        assert_eq!(parse_int(b"-"), None);
        assert_eq!(parse_int(b"1x"), None);
        assert_eq!(parse_int(b"1 2"), None);
        assert_eq!(parse_int(b"99999999999999999999999"), None);
    }

    #[test]
    fn status_fields_parse() {
        let status = b"Name:\tcat\nUid:\t0\t0\t0\t0\nCapEff:\t000001ffffffffff\n\
                       NoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";
        assert_eq!(status_value(status, b"Seccomp").and_then(parse_int), Some(2));
        assert_eq!(status_value(status, b"Seccomp_filters").and_then(parse_int), Some(1));
        assert_eq!(status_value(status, b"CapEff").and_then(parse_hex), Some(0x1ff_ffff_ffff));
        assert_eq!(status_value(status, b"Missing"), None);
        assert_eq!(parse_hex(b"zz"), None);
    }

    #[test]
    fn releases_parse() {
        assert_eq!(parse_release(b"6.18.44-fc-v657"), Some((6, 18)));
        assert_eq!(parse_release(b"5.10.0-28-amd64"), Some((5, 10)));
        assert_eq!(parse_release(b"7.0"), Some((7, 0)));
        assert_eq!(parse_release(b"garbage"), None);
    }

    #[test]
    fn facts_of_this_process_are_readable() {
        let f = SysFacts::gather();
        assert!(f.seccomp.is_some(), "/proc/self/status has no Seccomp line");
        assert!(f.cap_eff.is_some());
        assert!(f.memlock.is_some());
        assert!(f.kernel.is_some_and(|k| k >= (5, 1)));
        // The sysctl exists since 6.6; compare with the file directly.
        let direct = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok();
        assert_eq!(f.disabled, direct.map(|s| s.trim().parse::<i64>().unwrap()));
    }
}
