//! Names for the numbers a ring carries: opcodes, flag words, errnos.
//!
//! Every table pairs values with the names of their C constants, the common
//! prefix dropped where the context makes it obvious (`LINK` for
//! `IOSQE_IO_LINK`, `F_MORE` for `IORING_CQE_F_MORE`). Names live in one
//! space-separated string per table rather than an array of `&str`: in a
//! shared object every such pointer costs a relocation.

use crate::sys::*;

pub use super::names::{opcode, register_op, Names, ERRNO, FEATURES, SETUP_FLAGS};

/// A table of `value => "NAME"` pairs.
macro_rules! names {
    ($($v:expr => $n:literal),* $(,)?) => {
        super::names::names!("", ""; $($v => $n),*)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_pair_up() {
        for t in [
            &SQE_FLAGS,
            &CQE_FLAGS,
            &POLL_EVENTS,
            &POLL_CMD,
            &MSG_FLAGS,
            &NET_IOPRIO,
            &ACCEPT_IOPRIO,
            &SOCK_FLAGS,
            &OPEN_FLAGS,
            &AT_FLAGS,
            &RW_FLAGS,
            &TIMEOUT_FLAGS,
            &CANCEL_FLAGS,
            &FSYNC_FLAGS,
            &MSG_RING_FLAGS,
        ] {
            assert!(t.pairs().count() > 0);
            assert_eq!(t.of(t.pairs().last().unwrap().0), t.pairs().last().map(|e| e.1));
        }
    }
}
