//! Names for the kernel's numbers: setup flags, features, opcodes, register
//! opcodes and errno values, as people read them in reports and messages.

use super::Line;
use crate::sys::*;

/// Builds a `(value, "FULL_C_NAME")` table straight from the constants, so
/// a name can never drift from its value.
macro_rules! named {
    ($($c:ident),* $(,)?) => { &[$(($c as u32, stringify!($c))),*] };
}

/// A table of named values and the prefix every name in it starts with.
pub struct Names {
    pub prefix: &'static str,
    pub all: &'static [(u32, &'static str)],
}

impl Names {
    /// The name without its prefix (`IORING_SETUP_SQPOLL` -> `SQPOLL`).
    pub fn short(&self, full: &'static str) -> &'static str {
        full.strip_prefix(self.prefix).unwrap_or(full)
    }

    /// Short name of `value`, if the table has it.
    pub fn name_of(&self, value: u32) -> Option<&'static str> {
        self.all.iter().find(|e| e.0 == value).map(|e| self.short(e.1))
    }

    /// The value whose name is `name`, with or without the prefix, in any
    /// letter case.
    pub fn lookup(&self, name: &[u8]) -> Option<u32> {
        self.all.iter().find(|e| {
            name.eq_ignore_ascii_case(e.1.as_bytes()) || name.eq_ignore_ascii_case(self.short(e.1).as_bytes())
        }).map(|e| e.0)
    }
}

pub static SETUP_FLAGS: Names = Names {
    prefix: "IORING_SETUP_",
    all: named!(
        IORING_SETUP_IOPOLL, IORING_SETUP_SQPOLL, IORING_SETUP_SQ_AFF, IORING_SETUP_CQSIZE,
        IORING_SETUP_CLAMP, IORING_SETUP_ATTACH_WQ, IORING_SETUP_R_DISABLED,
        IORING_SETUP_SUBMIT_ALL, IORING_SETUP_COOP_TASKRUN, IORING_SETUP_TASKRUN_FLAG,
        IORING_SETUP_SQE128, IORING_SETUP_CQE32, IORING_SETUP_SINGLE_ISSUER,
        IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_NO_MMAP, IORING_SETUP_REGISTERED_FD_ONLY,
        IORING_SETUP_NO_SQARRAY, IORING_SETUP_HYBRID_IOPOLL, IORING_SETUP_CQE_MIXED,
        IORING_SETUP_SQE_MIXED, IORING_SETUP_SQ_REWIND,
    ),
};

pub static FEATURES: Names = Names {
    prefix: "IORING_",
    all: named!(
        IORING_FEAT_SINGLE_MMAP, IORING_FEAT_NODROP, IORING_FEAT_SUBMIT_STABLE,
        IORING_FEAT_RW_CUR_POS, IORING_FEAT_CUR_PERSONALITY, IORING_FEAT_FAST_POLL,
        IORING_FEAT_POLL_32BITS, IORING_FEAT_SQPOLL_NONFIXED, IORING_FEAT_EXT_ARG,
        IORING_FEAT_NATIVE_WORKERS, IORING_FEAT_RSRC_TAGS, IORING_FEAT_CQE_SKIP,
        IORING_FEAT_LINKED_FILE, IORING_FEAT_REG_REG_RING, IORING_FEAT_RECVSEND_BUNDLE,
        IORING_FEAT_MIN_TIMEOUT, IORING_FEAT_RW_ATTR, IORING_FEAT_NO_IOWAIT,
    ),
};

/// Request opcodes, indexed by value (a test checks the order).
pub static OPCODES: Names = Names {
    prefix: "IORING_OP_",
    all: named!(
        IORING_OP_NOP, IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC,
        IORING_OP_READ_FIXED, IORING_OP_WRITE_FIXED, IORING_OP_POLL_ADD, IORING_OP_POLL_REMOVE,
        IORING_OP_SYNC_FILE_RANGE, IORING_OP_SENDMSG, IORING_OP_RECVMSG, IORING_OP_TIMEOUT,
        IORING_OP_TIMEOUT_REMOVE, IORING_OP_ACCEPT, IORING_OP_ASYNC_CANCEL,
        IORING_OP_LINK_TIMEOUT, IORING_OP_CONNECT, IORING_OP_FALLOCATE, IORING_OP_OPENAT,
        IORING_OP_CLOSE, IORING_OP_FILES_UPDATE, IORING_OP_STATX, IORING_OP_READ,
        IORING_OP_WRITE, IORING_OP_FADVISE, IORING_OP_MADVISE, IORING_OP_SEND, IORING_OP_RECV,
        IORING_OP_OPENAT2, IORING_OP_EPOLL_CTL, IORING_OP_SPLICE, IORING_OP_PROVIDE_BUFFERS,
        IORING_OP_REMOVE_BUFFERS, IORING_OP_TEE, IORING_OP_SHUTDOWN, IORING_OP_RENAMEAT,
        IORING_OP_UNLINKAT, IORING_OP_MKDIRAT, IORING_OP_SYMLINKAT, IORING_OP_LINKAT,
        IORING_OP_MSG_RING, IORING_OP_FSETXATTR, IORING_OP_SETXATTR, IORING_OP_FGETXATTR,
        IORING_OP_GETXATTR, IORING_OP_SOCKET, IORING_OP_URING_CMD, IORING_OP_SEND_ZC,
        IORING_OP_SENDMSG_ZC, IORING_OP_READ_MULTISHOT, IORING_OP_WAITID,
        IORING_OP_FUTEX_WAIT, IORING_OP_FUTEX_WAKE, IORING_OP_FUTEX_WAITV,
        IORING_OP_FIXED_FD_INSTALL, IORING_OP_FTRUNCATE, IORING_OP_BIND, IORING_OP_LISTEN,
        IORING_OP_RECV_ZC, IORING_OP_EPOLL_WAIT, IORING_OP_READV_FIXED,
        IORING_OP_WRITEV_FIXED, IORING_OP_PIPE, IORING_OP_NOP128, IORING_OP_URING_CMD128,
    ),
};

/// Register opcodes, indexed by value (a test checks the order). The short
/// names keep REGISTER_/UNREGISTER_ so that they read as what they do.
pub static REGISTER_OPS: Names = Names {
    prefix: "IORING_",
    all: named!(
        IORING_REGISTER_BUFFERS, IORING_UNREGISTER_BUFFERS, IORING_REGISTER_FILES,
        IORING_UNREGISTER_FILES, IORING_REGISTER_EVENTFD, IORING_UNREGISTER_EVENTFD,
        IORING_REGISTER_FILES_UPDATE, IORING_REGISTER_EVENTFD_ASYNC, IORING_REGISTER_PROBE,
        IORING_REGISTER_PERSONALITY, IORING_UNREGISTER_PERSONALITY,
        IORING_REGISTER_RESTRICTIONS, IORING_REGISTER_ENABLE_RINGS, IORING_REGISTER_FILES2,
        IORING_REGISTER_FILES_UPDATE2, IORING_REGISTER_BUFFERS2,
        IORING_REGISTER_BUFFERS_UPDATE, IORING_REGISTER_IOWQ_AFF, IORING_UNREGISTER_IOWQ_AFF,
        IORING_REGISTER_IOWQ_MAX_WORKERS, IORING_REGISTER_RING_FDS,
        IORING_UNREGISTER_RING_FDS, IORING_REGISTER_PBUF_RING, IORING_UNREGISTER_PBUF_RING,
        IORING_REGISTER_SYNC_CANCEL, IORING_REGISTER_FILE_ALLOC_RANGE,
        IORING_REGISTER_PBUF_STATUS, IORING_REGISTER_NAPI, IORING_UNREGISTER_NAPI,
        IORING_REGISTER_CLOCK, IORING_REGISTER_CLONE_BUFFERS, IORING_REGISTER_SEND_MSG_RING,
        IORING_REGISTER_ZCRX_IFQ, IORING_REGISTER_RESIZE_RINGS, IORING_REGISTER_MEM_REGION,
        IORING_REGISTER_QUERY, IORING_REGISTER_ZCRX_CTRL, IORING_REGISTER_BPF_FILTER,
    ),
};

/// `EPERM` for 1, and so on; `None` for numbers without a name here. A
/// `match` rather than a table: no relocations in the shared libraries.
pub fn errno_name(e: i32) -> Option<&'static str> {
    use libc::*;
    Some(match e {
        EPERM => "EPERM",
        ENOENT => "ENOENT",
        ESRCH => "ESRCH",
        EINTR => "EINTR",
        EIO => "EIO",
        ENXIO => "ENXIO",
        E2BIG => "E2BIG",
        EBADF => "EBADF",
        ECHILD => "ECHILD",
        EAGAIN => "EAGAIN",
        ENOMEM => "ENOMEM",
        EACCES => "EACCES",
        EFAULT => "EFAULT",
        EBUSY => "EBUSY",
        EEXIST => "EEXIST",
        EXDEV => "EXDEV",
        ENODEV => "ENODEV",
        ENOTDIR => "ENOTDIR",
        EISDIR => "EISDIR",
        EINVAL => "EINVAL",
        ENFILE => "ENFILE",
        EMFILE => "EMFILE",
        ENOTTY => "ENOTTY",
        EFBIG => "EFBIG",
        ENOSPC => "ENOSPC",
        ESPIPE => "ESPIPE",
        EROFS => "EROFS",
        EPIPE => "EPIPE",
        ERANGE => "ERANGE",
        ENOSYS => "ENOSYS",
        EBADFD => "EBADFD",
        EOVERFLOW => "EOVERFLOW",
        ENOTSOCK => "ENOTSOCK",
        EOPNOTSUPP => "EOPNOTSUPP",
        ENOBUFS => "ENOBUFS",
        EALREADY => "EALREADY",
        ETIME => "ETIME",
        ETIMEDOUT => "ETIMEDOUT",
        ECANCELED => "ECANCELED",
        ECONNREFUSED => "ECONNREFUSED",
        ECONNRESET => "ECONNRESET",
        _ => return None,
    })
}

/// Appends `-EINVAL`-style results (or positive errnos) as their name, or
/// `errno N` for numbers without one.
pub fn push_errno<const N: usize>(l: &mut Line<N>, e: i32) {
    let e = e.unsigned_abs() as i32;
    match errno_name(e) {
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
        match SETUP_FLAGS.name_of(v) {
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
    fn indexed_tables_are_in_value_order() {
        for (i, e) in OPCODES.all.iter().enumerate() {
            assert_eq!(e.0, i as u32, "{}", e.1);
        }
        assert_eq!(OPCODES.all.len(), IORING_OP_LAST as usize);
        for (i, e) in REGISTER_OPS.all.iter().enumerate() {
            assert_eq!(e.0, i as u32, "{}", e.1);
        }
        assert_eq!(REGISTER_OPS.all.len(), IORING_REGISTER_LAST as usize);
    }

    #[test]
    fn lookups_take_short_and_full_names() {
        assert_eq!(OPCODES.lookup(b"send_zc"), Some(IORING_OP_SEND_ZC as u32));
        assert_eq!(OPCODES.lookup(b"IORING_OP_SEND_ZC"), Some(IORING_OP_SEND_ZC as u32));
        assert_eq!(SETUP_FLAGS.lookup(b"DEFER_TASKRUN"), Some(IORING_SETUP_DEFER_TASKRUN));
        assert_eq!(FEATURES.lookup(b"FEAT_EXT_ARG"), Some(IORING_FEAT_EXT_ARG));
        assert_eq!(REGISTER_OPS.lookup(b"UNREGISTER_FILES"), Some(IORING_UNREGISTER_FILES));
        assert_eq!(OPCODES.lookup(b"SEND_Z"), None);
        assert_eq!(SETUP_FLAGS.name_of(IORING_SETUP_SQ_REWIND), Some("SQ_REWIND"));
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
