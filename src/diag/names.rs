//! Names for the kernel's numbers, as people read them in reports and
//! messages: opcodes, register opcodes, setup flags, features and errno
//! values, for the trace, the checker, the setup report and uring-info
//! alike (`decode.rs` adds the flag words only the trace prints).
//!
//! Every table pairs values with the names of their C constants, the
//! common prefix dropped (`SQPOLL` for `IORING_SETUP_SQPOLL`). Names live
//! in one space-separated string per table rather than an array of
//! `&str`: in a shared object every such pointer costs a relocation.

use super::Line;
use crate::sys::*;

/// Values and their names; the i-th name belongs to the i-th value, or to
/// the value i in a dense table (no values).
pub struct Names {
    /// What the C names start with before the names here.
    pub prefix: &'static str,
    /// The part of `prefix` uring-info shows and accepts (`FEAT_`).
    pub label: &'static str,
    vals: &'static [u32],
    names: &'static str,
}

impl Names {
    pub const fn new(prefix: &'static str, label: &'static str, vals: &'static [u32], names: &'static str) -> Names {
        Names { prefix, label, vals, names }
    }

    /// The name of the i-th entry.
    pub fn nth(&self, i: usize) -> Option<&'static str> {
        self.names.split(' ').nth(i).filter(|n| !n.is_empty())
    }

    /// The name of value `v`.
    pub fn of(&self, v: u32) -> Option<&'static str> {
        if self.vals.is_empty() {
            return self.nth(v as usize);
        }
        self.nth(self.vals.iter().position(|&x| x == v)?)
    }

    /// (value, name) pairs, in table order.
    pub fn pairs(&self) -> impl Iterator<Item = (u32, &'static str)> + '_ {
        let dense = self.vals.is_empty();
        self.names
            .split(' ')
            .filter(|n| !n.is_empty())
            .enumerate()
            .map(move |(i, n)| (if dense { i as u32 } else { self.vals[i] }, n))
    }

    pub fn count(&self) -> usize {
        self.pairs().count()
    }

    /// `name` with the table's label, for `write!` (`FEAT_NODROP`).
    pub fn labeled(&self, name: &'static str) -> Labeled {
        Labeled(self.label, name)
    }

    /// The value whose name is `name`, with the label or the whole
    /// prefix, in any letter case.
    pub fn lookup(&self, name: &[u8]) -> Option<u32> {
        let is = |pre: &str, n: &str| {
            name.len() == pre.len() + n.len()
                && name[..pre.len()].eq_ignore_ascii_case(pre.as_bytes())
                && name[pre.len()..].eq_ignore_ascii_case(n.as_bytes())
        };
        self.pairs().find(|&(_, n)| is(self.label, n) || is(self.prefix, n)).map(|e| e.0)
    }
}

/// A dense table: the value is the index (0, 1, 2, ...).
const fn dense(prefix: &'static str, names: &'static str) -> Names {
    Names::new(prefix, "", &[], names)
}

/// A table of `value => "NAME"` pairs after its prefix and label.
macro_rules! names {
    ($prefix:expr, $label:expr; $($v:expr => $n:literal),* $(,)?) => {
        $crate::diag::names::Names::new($prefix, $label, &[$($v as u32),*], concat!($($n, " "),*))
    };
}
pub(crate) use names;

/// The opcode's name without `IORING_OP_`, or `None` past the known ones.
pub fn opcode(op: u8) -> Option<&'static str> {
    OPCODES.nth(op as usize)
}

/// Request opcodes, indexed by value (a test checks the count).
pub const OPCODES: Names = dense(
    "IORING_OP_",
    "NOP READV WRITEV FSYNC READ_FIXED WRITE_FIXED POLL_ADD POLL_REMOVE SYNC_FILE_RANGE \
     SENDMSG RECVMSG TIMEOUT TIMEOUT_REMOVE ACCEPT ASYNC_CANCEL LINK_TIMEOUT CONNECT FALLOCATE \
     OPENAT CLOSE FILES_UPDATE STATX READ WRITE FADVISE MADVISE SEND RECV OPENAT2 EPOLL_CTL \
     SPLICE PROVIDE_BUFFERS REMOVE_BUFFERS TEE SHUTDOWN RENAMEAT UNLINKAT MKDIRAT SYMLINKAT \
     LINKAT MSG_RING FSETXATTR SETXATTR FGETXATTR GETXATTR SOCKET URING_CMD SEND_ZC SENDMSG_ZC \
     READ_MULTISHOT WAITID FUTEX_WAIT FUTEX_WAKE FUTEX_WAITV FIXED_FD_INSTALL FTRUNCATE BIND \
     LISTEN RECV_ZC EPOLL_WAIT READV_FIXED WRITEV_FIXED PIPE NOP128 URING_CMD128",
);

/// Name of a register opcode (without `IORING_`), `USE_REGISTERED_RING` masked off.
pub fn register_op(op: u32) -> Option<&'static str> {
    REGISTER_OPS.nth((op & !IORING_REGISTER_USE_REGISTERED_RING) as usize)
}

/// Register opcodes, indexed by value. The names keep REGISTER_ and
/// UNREGISTER_ so that they read as what they do.
pub const REGISTER_OPS: Names = dense(
    "IORING_",
    "REGISTER_BUFFERS UNREGISTER_BUFFERS REGISTER_FILES UNREGISTER_FILES REGISTER_EVENTFD \
     UNREGISTER_EVENTFD REGISTER_FILES_UPDATE REGISTER_EVENTFD_ASYNC REGISTER_PROBE \
     REGISTER_PERSONALITY UNREGISTER_PERSONALITY REGISTER_RESTRICTIONS REGISTER_ENABLE_RINGS \
     REGISTER_FILES2 REGISTER_FILES_UPDATE2 REGISTER_BUFFERS2 REGISTER_BUFFERS_UPDATE \
     REGISTER_IOWQ_AFF UNREGISTER_IOWQ_AFF REGISTER_IOWQ_MAX_WORKERS REGISTER_RING_FDS \
     UNREGISTER_RING_FDS REGISTER_PBUF_RING UNREGISTER_PBUF_RING REGISTER_SYNC_CANCEL \
     REGISTER_FILE_ALLOC_RANGE REGISTER_PBUF_STATUS REGISTER_NAPI UNREGISTER_NAPI \
     REGISTER_CLOCK REGISTER_CLONE_BUFFERS REGISTER_SEND_MSG_RING REGISTER_ZCRX_IFQ \
     REGISTER_RESIZE_RINGS REGISTER_MEM_REGION REGISTER_QUERY REGISTER_ZCRX_CTRL \
     REGISTER_BPF_FILTER",
);

pub const SETUP_FLAGS: Names = names![
    "IORING_SETUP_", "";
    IORING_SETUP_IOPOLL => "IOPOLL", IORING_SETUP_SQPOLL => "SQPOLL", IORING_SETUP_SQ_AFF => "SQ_AFF",
    IORING_SETUP_CQSIZE => "CQSIZE", IORING_SETUP_CLAMP => "CLAMP", IORING_SETUP_ATTACH_WQ => "ATTACH_WQ",
    IORING_SETUP_R_DISABLED => "R_DISABLED", IORING_SETUP_SUBMIT_ALL => "SUBMIT_ALL",
    IORING_SETUP_COOP_TASKRUN => "COOP_TASKRUN", IORING_SETUP_TASKRUN_FLAG => "TASKRUN_FLAG",
    IORING_SETUP_SQE128 => "SQE128", IORING_SETUP_CQE32 => "CQE32",
    IORING_SETUP_SINGLE_ISSUER => "SINGLE_ISSUER", IORING_SETUP_DEFER_TASKRUN => "DEFER_TASKRUN",
    IORING_SETUP_NO_MMAP => "NO_MMAP", IORING_SETUP_REGISTERED_FD_ONLY => "REGISTERED_FD_ONLY",
    IORING_SETUP_NO_SQARRAY => "NO_SQARRAY", IORING_SETUP_HYBRID_IOPOLL => "HYBRID_IOPOLL",
    IORING_SETUP_CQE_MIXED => "CQE_MIXED", IORING_SETUP_SQE_MIXED => "SQE_MIXED",
    IORING_SETUP_SQ_REWIND => "SQ_REWIND",
];

pub const FEATURES: Names = names![
    "IORING_FEAT_", "FEAT_";
    IORING_FEAT_SINGLE_MMAP => "SINGLE_MMAP", IORING_FEAT_NODROP => "NODROP",
    IORING_FEAT_SUBMIT_STABLE => "SUBMIT_STABLE", IORING_FEAT_RW_CUR_POS => "RW_CUR_POS",
    IORING_FEAT_CUR_PERSONALITY => "CUR_PERSONALITY", IORING_FEAT_FAST_POLL => "FAST_POLL",
    IORING_FEAT_POLL_32BITS => "POLL_32BITS", IORING_FEAT_SQPOLL_NONFIXED => "SQPOLL_NONFIXED",
    IORING_FEAT_EXT_ARG => "EXT_ARG", IORING_FEAT_NATIVE_WORKERS => "NATIVE_WORKERS",
    IORING_FEAT_RSRC_TAGS => "RSRC_TAGS", IORING_FEAT_CQE_SKIP => "CQE_SKIP",
    IORING_FEAT_LINKED_FILE => "LINKED_FILE", IORING_FEAT_REG_REG_RING => "REG_REG_RING",
    IORING_FEAT_RECVSEND_BUNDLE => "RECVSEND_BUNDLE", IORING_FEAT_MIN_TIMEOUT => "MIN_TIMEOUT",
    IORING_FEAT_RW_ATTR => "RW_ATTR", IORING_FEAT_NO_IOWAIT => "NO_IOWAIT",
];

/// errno values with their constant names.
pub const ERRNO: Names = {
    use libc::*;
    names![
        "", "";
        EPERM => "EPERM", ENOENT => "ENOENT", ESRCH => "ESRCH", EINTR => "EINTR", EIO => "EIO",
        ENXIO => "ENXIO", E2BIG => "E2BIG", ENOEXEC => "ENOEXEC", EBADF => "EBADF",
        ECHILD => "ECHILD", EAGAIN => "EAGAIN", ENOMEM => "ENOMEM", EACCES => "EACCES",
        EFAULT => "EFAULT", ENOTBLK => "ENOTBLK", EBUSY => "EBUSY", EEXIST => "EEXIST",
        EXDEV => "EXDEV", ENODEV => "ENODEV", ENOTDIR => "ENOTDIR", EISDIR => "EISDIR",
        EINVAL => "EINVAL", ENFILE => "ENFILE", EMFILE => "EMFILE", ENOTTY => "ENOTTY",
        ETXTBSY => "ETXTBSY", EFBIG => "EFBIG", ENOSPC => "ENOSPC", ESPIPE => "ESPIPE",
        EROFS => "EROFS", EMLINK => "EMLINK", EPIPE => "EPIPE", EDOM => "EDOM", ERANGE => "ERANGE",
        EDEADLK => "EDEADLK", ENAMETOOLONG => "ENAMETOOLONG", ENOLCK => "ENOLCK",
        ENOSYS => "ENOSYS", ENOTEMPTY => "ENOTEMPTY", ELOOP => "ELOOP", ENOMSG => "ENOMSG",
        EIDRM => "EIDRM", ENOSTR => "ENOSTR", ENODATA => "ENODATA", ETIME => "ETIME",
        ENOSR => "ENOSR", ENOLINK => "ENOLINK", EPROTO => "EPROTO", EBADMSG => "EBADMSG",
        EOVERFLOW => "EOVERFLOW", EBADFD => "EBADFD", EILSEQ => "EILSEQ", EUSERS => "EUSERS",
        ENOTSOCK => "ENOTSOCK", EDESTADDRREQ => "EDESTADDRREQ", EMSGSIZE => "EMSGSIZE",
        EPROTOTYPE => "EPROTOTYPE", ENOPROTOOPT => "ENOPROTOOPT",
        EPROTONOSUPPORT => "EPROTONOSUPPORT", ESOCKTNOSUPPORT => "ESOCKTNOSUPPORT",
        EOPNOTSUPP => "EOPNOTSUPP", EPFNOSUPPORT => "EPFNOSUPPORT",
        EAFNOSUPPORT => "EAFNOSUPPORT", EADDRINUSE => "EADDRINUSE",
        EADDRNOTAVAIL => "EADDRNOTAVAIL", ENETDOWN => "ENETDOWN", ENETUNREACH => "ENETUNREACH",
        ENETRESET => "ENETRESET", ECONNABORTED => "ECONNABORTED", ECONNRESET => "ECONNRESET",
        ENOBUFS => "ENOBUFS", EISCONN => "EISCONN", ENOTCONN => "ENOTCONN",
        ESHUTDOWN => "ESHUTDOWN", ETOOMANYREFS => "ETOOMANYREFS", ETIMEDOUT => "ETIMEDOUT",
        ECONNREFUSED => "ECONNREFUSED", EHOSTDOWN => "EHOSTDOWN", EHOSTUNREACH => "EHOSTUNREACH",
        EALREADY => "EALREADY", EINPROGRESS => "EINPROGRESS", ESTALE => "ESTALE",
        EDQUOT => "EDQUOT", ECANCELED => "ECANCELED", EOWNERDEAD => "EOWNERDEAD",
        ENOTRECOVERABLE => "ENOTRECOVERABLE", ERFKILL => "ERFKILL", EHWPOISON => "EHWPOISON",
    ]
};

/// `EPERM` for 1, and so on; `None` for numbers without a name here.
pub fn errno_name(e: i32) -> Option<&'static str> {
    ERRNO.of(e as u32)
}

/// Appends `-EINVAL`-style results (or positive errnos) as their name, or
/// `errno N` for numbers without one.
pub fn push_errno<const N: usize>(l: &mut Line<N>, e: i32) {
    let e = e.unsigned_abs() as i32;
    match ERRNO.of(e as u32) {
        Some(n) => l.push(n),
        None => l.push("errno ").push_u64(e as u64),
    };
}

/// Appends a mask of setup flags as `SQPOLL|IOPOLL|bit 27`.
pub fn push_setup_flags<const N: usize>(l: &mut Line<N>, mask: u32) {
    if mask == 0 {
        l.push("0");
    }
    let mut first = true;
    for bit in 0..32 {
        let v = 1u32 << bit;
        if mask & v == 0 {
            continue;
        }
        if !first {
            l.push("|");
        }
        first = false;
        match SETUP_FLAGS.of(v) {
            Some(n) => l.push(n),
            None => l.push("bit ").push_u64(bit),
        };
    }
}

/// Pads what `push` writes, so the `push_*` functions serve `write!` too.
fn pad_pushed(f: &mut core::fmt::Formatter<'_>, push: impl FnOnce(&mut Line<512>)) -> core::fmt::Result {
    let mut l = Line::new();
    push(&mut l);
    f.pad(l.as_str())
}

/// [`push_errno`] for `write!`.
pub struct Errno(pub i32);

impl core::fmt::Display for Errno {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        pad_pushed(f, |l| push_errno(l, self.0))
    }
}

/// [`Names::labeled`].
pub struct Labeled(&'static str, &'static str);

impl core::fmt::Display for Labeled {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        pad_pushed(f, |l| {
            l.push(self.0).push(self.1);
        })
    }
}

/// [`push_setup_flags`] for `write!`.
pub struct SetupFlags(pub u32);

impl core::fmt::Display for SetupFlags {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        pad_pushed(f, |l| push_setup_flags(l, self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn every_opcode_and_register_op_has_a_name() {
        assert_eq!(opcode(IORING_OP_READ), Some("READ"));
        assert_eq!(opcode(IORING_OP_URING_CMD128), Some("URING_CMD128"));
        assert_eq!(opcode(IORING_OP_LAST), None);
        assert_eq!(OPCODES.count(), IORING_OP_LAST as usize);
        assert_eq!(register_op(IORING_REGISTER_PBUF_RING), Some("REGISTER_PBUF_RING"));
        assert_eq!(
            register_op(IORING_REGISTER_BPF_FILTER | IORING_REGISTER_USE_REGISTERED_RING),
            Some("REGISTER_BPF_FILTER")
        );
        assert_eq!(register_op(IORING_REGISTER_LAST), None);
        assert_eq!(REGISTER_OPS.count(), IORING_REGISTER_LAST as usize);
    }

    #[test]
    fn tables_pair_up() {
        for t in [&SETUP_FLAGS, &FEATURES, &ERRNO] {
            // One name per value, plus the empty piece after the last space.
            assert_eq!(t.names.split(' ').count(), t.vals.len() + 1, "{}", t.names);
        }
        assert_eq!(ERRNO.of(libc::EAGAIN as u32), Some("EAGAIN"));
        assert_eq!(ERRNO.of(libc::ECANCELED as u32), Some("ECANCELED"));
        assert_eq!(ERRNO.of(4000), None);
    }

    #[test]
    fn lookups_take_short_and_full_names() {
        assert_eq!(OPCODES.lookup(b"send_zc"), Some(IORING_OP_SEND_ZC as u32));
        assert_eq!(OPCODES.lookup(b"IORING_OP_SEND_ZC"), Some(IORING_OP_SEND_ZC as u32));
        assert_eq!(SETUP_FLAGS.lookup(b"DEFER_TASKRUN"), Some(IORING_SETUP_DEFER_TASKRUN));
        assert_eq!(FEATURES.lookup(b"FEAT_EXT_ARG"), Some(IORING_FEAT_EXT_ARG));
        assert_eq!(FEATURES.lookup(b"IORING_FEAT_EXT_ARG"), Some(IORING_FEAT_EXT_ARG));
        assert_eq!(FEATURES.lookup(b"EXT_ARG"), None);
        assert_eq!(REGISTER_OPS.lookup(b"UNREGISTER_FILES"), Some(IORING_UNREGISTER_FILES));
        assert_eq!(OPCODES.lookup(b"SEND_Z"), None);
        assert_eq!(SETUP_FLAGS.of(IORING_SETUP_SQ_REWIND), Some("SQ_REWIND"));
        assert_eq!(FEATURES.labeled("NODROP").to_string(), "FEAT_NODROP");
    }

    #[test]
    fn masks_and_errnos_print_by_name() {
        let m = IORING_SETUP_SQPOLL | IORING_SETUP_SQE_MIXED | (1 << 27);
        assert_eq!(SetupFlags(m).to_string(), "SQPOLL|SQE_MIXED|bit 27");
        assert_eq!(SetupFlags(0).to_string(), "0");
        assert_eq!(Errno(-libc::EPERM).to_string(), "EPERM");
        assert_eq!(Errno(4000).to_string(), "errno 4000");
    }
}
