//! Names for the numbers a ring carries: opcodes, flag words, errnos.
//!
//! Every table pairs values with the names of their C constants, the common
//! prefix dropped where the context makes it obvious (`LINK` for
//! `IOSQE_IO_LINK`, `F_MORE` for `IORING_CQE_F_MORE`). Names live in one
//! space-separated string per table rather than an array of `&str`: in a
//! shared object every such pointer costs a relocation.

use crate::sys::*;

/// Values and their names; the i-th name belongs to the i-th value.
pub struct Names {
    pub vals: &'static [u32],
    names: &'static str,
}

impl Names {
    /// The name of the i-th entry.
    pub fn nth(&self, i: usize) -> Option<&'static str> {
        self.names.split(' ').nth(i)
    }

    /// The name of value `v`.
    pub fn of(&self, v: u32) -> Option<&'static str> {
        self.nth(self.vals.iter().position(|&x| x == v)?)
    }

    /// (value, name) pairs, in table order.
    pub fn pairs(&self) -> impl Iterator<Item = (u32, &'static str)> {
        self.vals.iter().copied().zip(self.names.split(' '))
    }
}

/// A table indexed by the value itself (0, 1, 2, ...).
const fn dense(names: &'static str) -> Names {
    Names { vals: &[], names }
}

/// The opcode's name without `IORING_OP_`, or `None` past the known ones.
pub fn opcode(op: u8) -> Option<&'static str> {
    OPCODES.nth(op as usize)
}

const OPCODES: Names = dense(
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

const REGISTER_OPS: Names = dense(
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

macro_rules! names {
    ($($v:expr => $n:literal),* $(,)?) => {
        Names { vals: &[$($v as u32),*], names: concat!($($n, " "),*) }
    };
}

pub const SQE_FLAGS: Names = names![
    IOSQE_FIXED_FILE => "FIXED_FILE", IOSQE_IO_DRAIN => "DRAIN", IOSQE_IO_LINK => "LINK",
    IOSQE_IO_HARDLINK => "HARDLINK", IOSQE_ASYNC => "ASYNC", IOSQE_BUFFER_SELECT => "BUFFER_SELECT",
    IOSQE_CQE_SKIP_SUCCESS => "CQE_SKIP_SUCCESS",
];

/// CQE flags other than the buffer id, which [`super::out::Out::cqe_flags`] adds.
pub const CQE_FLAGS: Names = names![
    IORING_CQE_F_BUFFER => "F_BUFFER", IORING_CQE_F_MORE => "F_MORE",
    IORING_CQE_F_SOCK_NONEMPTY => "F_SOCK_NONEMPTY", IORING_CQE_F_NOTIF => "F_NOTIF",
    IORING_CQE_F_BUF_MORE => "F_BUF_MORE", IORING_CQE_F_SKIP => "F_SKIP", IORING_CQE_F_32 => "F_32",
];

pub const SETUP_FLAGS: Names = names![
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

pub const POLL_EVENTS: Names = names![
    libc::POLLIN => "POLLIN", libc::POLLPRI => "POLLPRI", libc::POLLOUT => "POLLOUT",
    libc::POLLERR => "POLLERR", libc::POLLHUP => "POLLHUP", libc::POLLNVAL => "POLLNVAL",
    libc::POLLRDNORM => "POLLRDNORM", libc::POLLRDBAND => "POLLRDBAND",
    libc::POLLWRNORM => "POLLWRNORM", libc::POLLWRBAND => "POLLWRBAND",
    libc::POLLRDHUP => "POLLRDHUP", libc::EPOLLEXCLUSIVE => "EPOLLEXCLUSIVE",
    libc::EPOLLONESHOT => "EPOLLONESHOT", libc::EPOLLET => "EPOLLET",
];

/// Command flags a POLL_ADD or POLL_REMOVE carries in `len`.
pub const POLL_CMD: Names = names![
    IORING_POLL_ADD_MULTI => "ADD_MULTI", IORING_POLL_UPDATE_EVENTS => "UPDATE_EVENTS",
    IORING_POLL_UPDATE_USER_DATA => "UPDATE_USER_DATA", IORING_POLL_ADD_LEVEL => "ADD_LEVEL",
];

pub const MSG_FLAGS: Names = names![
    libc::MSG_OOB => "MSG_OOB", libc::MSG_PEEK => "MSG_PEEK", libc::MSG_DONTROUTE => "MSG_DONTROUTE",
    libc::MSG_CTRUNC => "MSG_CTRUNC", libc::MSG_TRUNC => "MSG_TRUNC",
    libc::MSG_DONTWAIT => "MSG_DONTWAIT", libc::MSG_EOR => "MSG_EOR",
    libc::MSG_WAITALL => "MSG_WAITALL", libc::MSG_CONFIRM => "MSG_CONFIRM",
    libc::MSG_ERRQUEUE => "MSG_ERRQUEUE", libc::MSG_NOSIGNAL => "MSG_NOSIGNAL",
    libc::MSG_MORE => "MSG_MORE", libc::MSG_WAITFORONE => "MSG_WAITFORONE",
    libc::MSG_FASTOPEN => "MSG_FASTOPEN", libc::MSG_ZEROCOPY => "MSG_ZEROCOPY",
    libc::MSG_CMSG_CLOEXEC => "MSG_CMSG_CLOEXEC",
];

/// Send/receive/accept modifiers carried in `ioprio`.
pub const NET_IOPRIO: Names = names![
    IORING_RECVSEND_POLL_FIRST => "POLL_FIRST", IORING_RECV_MULTISHOT => "MULTISHOT",
    IORING_RECVSEND_FIXED_BUF => "FIXED_BUF", IORING_SEND_ZC_REPORT_USAGE => "ZC_REPORT_USAGE",
    IORING_RECVSEND_BUNDLE => "BUNDLE", IORING_SEND_VECTORIZED => "VECTORIZED",
];

pub const ACCEPT_IOPRIO: Names = names![
    IORING_ACCEPT_MULTISHOT => "MULTISHOT", IORING_ACCEPT_DONTWAIT => "DONTWAIT",
    IORING_ACCEPT_POLL_FIRST => "POLL_FIRST",
];

pub const SOCK_FLAGS: Names = names![
    libc::SOCK_NONBLOCK => "SOCK_NONBLOCK", libc::SOCK_CLOEXEC => "SOCK_CLOEXEC",
];

/// `open(2)` flags other than the access mode, which [`open_mode`] names.
pub const OPEN_FLAGS: Names = names![
    libc::O_CREAT => "O_CREAT", libc::O_EXCL => "O_EXCL", libc::O_NOCTTY => "O_NOCTTY",
    libc::O_TRUNC => "O_TRUNC", libc::O_APPEND => "O_APPEND", libc::O_NONBLOCK => "O_NONBLOCK",
    libc::O_DSYNC => "O_DSYNC", libc::O_ASYNC => "O_ASYNC", libc::O_DIRECT => "O_DIRECT",
    libc::O_LARGEFILE => "O_LARGEFILE", libc::O_DIRECTORY => "O_DIRECTORY",
    libc::O_NOFOLLOW => "O_NOFOLLOW", libc::O_NOATIME => "O_NOATIME", libc::O_CLOEXEC => "O_CLOEXEC",
    libc::O_SYNC & !libc::O_DSYNC => "O_SYNC", libc::O_PATH => "O_PATH",
    libc::O_TMPFILE & !libc::O_DIRECTORY => "O_TMPFILE",
];

/// The access mode of an `open(2)` flag word.
pub fn open_mode(flags: u32) -> &'static str {
    match flags as i32 & libc::O_ACCMODE {
        libc::O_RDONLY => "O_RDONLY",
        libc::O_WRONLY => "O_WRONLY",
        libc::O_RDWR => "O_RDWR",
        _ => "O_ACCMODE",
    }
}

pub const AT_FLAGS: Names = names![
    libc::AT_SYMLINK_NOFOLLOW => "AT_SYMLINK_NOFOLLOW", libc::AT_REMOVEDIR => "AT_REMOVEDIR",
    libc::AT_SYMLINK_FOLLOW => "AT_SYMLINK_FOLLOW", libc::AT_NO_AUTOMOUNT => "AT_NO_AUTOMOUNT",
    libc::AT_EMPTY_PATH => "AT_EMPTY_PATH",
];

pub const RW_FLAGS: Names = names![
    libc::RWF_HIPRI => "RWF_HIPRI", libc::RWF_DSYNC => "RWF_DSYNC", libc::RWF_SYNC => "RWF_SYNC",
    libc::RWF_NOWAIT => "RWF_NOWAIT", libc::RWF_APPEND => "RWF_APPEND",
    0x20 => "RWF_NOAPPEND", 0x40 => "RWF_ATOMIC", 0x80 => "RWF_DONTCACHE",
];

pub const TIMEOUT_FLAGS: Names = names![
    IORING_TIMEOUT_ABS => "ABS", IORING_TIMEOUT_UPDATE => "UPDATE",
    IORING_TIMEOUT_BOOTTIME => "BOOTTIME", IORING_TIMEOUT_REALTIME => "REALTIME",
    IORING_LINK_TIMEOUT_UPDATE => "LINK_UPDATE", IORING_TIMEOUT_ETIME_SUCCESS => "ETIME_SUCCESS",
    IORING_TIMEOUT_MULTISHOT => "MULTISHOT", IORING_TIMEOUT_IMMEDIATE_ARG => "IMMEDIATE_ARG",
];

pub const CANCEL_FLAGS: Names = names![
    IORING_ASYNC_CANCEL_ALL => "ALL", IORING_ASYNC_CANCEL_FD => "FD", IORING_ASYNC_CANCEL_ANY => "ANY",
    IORING_ASYNC_CANCEL_FD_FIXED => "FD_FIXED", IORING_ASYNC_CANCEL_USERDATA => "USERDATA",
    IORING_ASYNC_CANCEL_OP => "OP",
];

pub const FSYNC_FLAGS: Names = names![IORING_FSYNC_DATASYNC => "DATASYNC"];

pub const MSG_RING_FLAGS: Names = names![
    IORING_MSG_RING_CQE_SKIP => "CQE_SKIP", IORING_MSG_RING_FLAGS_PASS => "FLAGS_PASS",
];

/// errno values with their constant names.
pub const ERRNO: Names = {
    use libc::*;
    names![
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opcode_and_register_op_has_a_name() {
        assert_eq!(opcode(IORING_OP_READ), Some("READ"));
        assert_eq!(opcode(IORING_OP_URING_CMD128), Some("URING_CMD128"));
        assert_eq!(opcode(IORING_OP_LAST), None);
        assert_eq!(register_op(IORING_REGISTER_PBUF_RING), Some("REGISTER_PBUF_RING"));
        assert_eq!(register_op(IORING_REGISTER_BPF_FILTER | IORING_REGISTER_USE_REGISTERED_RING),
            Some("REGISTER_BPF_FILTER"));
        assert_eq!(register_op(IORING_REGISTER_LAST), None);
    }

    #[test]
    fn tables_pair_up() {
        for t in [&SQE_FLAGS, &CQE_FLAGS, &SETUP_FLAGS, &FEATURES, &POLL_EVENTS, &POLL_CMD, &MSG_FLAGS,
            &NET_IOPRIO, &ACCEPT_IOPRIO, &SOCK_FLAGS, &OPEN_FLAGS, &AT_FLAGS, &RW_FLAGS, &TIMEOUT_FLAGS,
            &CANCEL_FLAGS, &FSYNC_FLAGS, &MSG_RING_FLAGS, &ERRNO]
        {
            // One name per value, plus the empty piece after the last space.
            assert_eq!(t.names.split(' ').count(), t.vals.len() + 1, "{}", t.names);
        }
        assert_eq!(ERRNO.of(libc::EAGAIN as u32), Some("EAGAIN"));
        assert_eq!(ERRNO.of(libc::ECANCELED as u32), Some("ECANCELED"));
        assert_eq!(ERRNO.of(4000), None);
        assert_eq!(OPCODES.names.split(' ').count(), IORING_OP_LAST as usize);
        assert_eq!(REGISTER_OPS.names.split(' ').count(), IORING_REGISTER_LAST as usize);
    }
}
