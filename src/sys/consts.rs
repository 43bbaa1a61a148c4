//! io_uring UAPI constants, under their C names.
//!
//! Each is typed as the kernel field it is stored in (e.g. `u8` for
//! `sqe->opcode`, `u16` for flags carried in `sqe->ioprio`), so callers need
//! no casts at the point of use.

/// Defines each constant and, for tests, a table of all of them so the set
/// can be checked against the C header.
macro_rules! uapi_consts {
    ($($(#[$m:meta])* $name:ident: $t:ty = $v:expr;)*) => {
        $($(#[$m])* pub const $name: $t = $v;)*

        #[cfg(test)]
        pub(crate) const ALL: &[(&str, i128)] = &[$((stringify!($name), $name as i128)),*];
    };
}

uapi_consts! {
    // sqe->flags (u8): bit numbers and masks
    IOSQE_FIXED_FILE_BIT: u8 = 0;
    IOSQE_IO_DRAIN_BIT: u8 = 1;
    IOSQE_IO_LINK_BIT: u8 = 2;
    IOSQE_IO_HARDLINK_BIT: u8 = 3;
    IOSQE_ASYNC_BIT: u8 = 4;
    IOSQE_BUFFER_SELECT_BIT: u8 = 5;
    IOSQE_CQE_SKIP_SUCCESS_BIT: u8 = 6;

    IOSQE_FIXED_FILE: u8 = 1 << IOSQE_FIXED_FILE_BIT;
    IOSQE_IO_DRAIN: u8 = 1 << IOSQE_IO_DRAIN_BIT;
    IOSQE_IO_LINK: u8 = 1 << IOSQE_IO_LINK_BIT;
    IOSQE_IO_HARDLINK: u8 = 1 << IOSQE_IO_HARDLINK_BIT;
    IOSQE_ASYNC: u8 = 1 << IOSQE_ASYNC_BIT;
    IOSQE_BUFFER_SELECT: u8 = 1 << IOSQE_BUFFER_SELECT_BIT;
    IOSQE_CQE_SKIP_SUCCESS: u8 = 1 << IOSQE_CQE_SKIP_SUCCESS_BIT;

    // sqe->attr_type_mask (u64)
    IORING_RW_ATTR_FLAG_PI: u64 = 1 << 0;

    // sqe->file_index: let the kernel pick a free direct slot
    IORING_FILE_INDEX_ALLOC: u32 = !0;

    // io_uring_params.flags
    IORING_SETUP_IOPOLL: u32 = 1 << 0;
    IORING_SETUP_SQPOLL: u32 = 1 << 1;
    IORING_SETUP_SQ_AFF: u32 = 1 << 2;
    IORING_SETUP_CQSIZE: u32 = 1 << 3;
    IORING_SETUP_CLAMP: u32 = 1 << 4;
    IORING_SETUP_ATTACH_WQ: u32 = 1 << 5;
    IORING_SETUP_R_DISABLED: u32 = 1 << 6;
    IORING_SETUP_SUBMIT_ALL: u32 = 1 << 7;
    IORING_SETUP_COOP_TASKRUN: u32 = 1 << 8;
    IORING_SETUP_TASKRUN_FLAG: u32 = 1 << 9;
    IORING_SETUP_SQE128: u32 = 1 << 10;
    IORING_SETUP_CQE32: u32 = 1 << 11;
    IORING_SETUP_SINGLE_ISSUER: u32 = 1 << 12;
    IORING_SETUP_DEFER_TASKRUN: u32 = 1 << 13;
    IORING_SETUP_NO_MMAP: u32 = 1 << 14;
    IORING_SETUP_REGISTERED_FD_ONLY: u32 = 1 << 15;
    IORING_SETUP_NO_SQARRAY: u32 = 1 << 16;
    IORING_SETUP_HYBRID_IOPOLL: u32 = 1 << 17;
    IORING_SETUP_CQE_MIXED: u32 = 1 << 18;
    IORING_SETUP_SQE_MIXED: u32 = 1 << 19;
    IORING_SETUP_SQ_REWIND: u32 = 1 << 20;

    // sqe->opcode (u8), enum io_uring_op
    IORING_OP_NOP: u8 = 0;
    IORING_OP_READV: u8 = 1;
    IORING_OP_WRITEV: u8 = 2;
    IORING_OP_FSYNC: u8 = 3;
    IORING_OP_READ_FIXED: u8 = 4;
    IORING_OP_WRITE_FIXED: u8 = 5;
    IORING_OP_POLL_ADD: u8 = 6;
    IORING_OP_POLL_REMOVE: u8 = 7;
    IORING_OP_SYNC_FILE_RANGE: u8 = 8;
    IORING_OP_SENDMSG: u8 = 9;
    IORING_OP_RECVMSG: u8 = 10;
    IORING_OP_TIMEOUT: u8 = 11;
    IORING_OP_TIMEOUT_REMOVE: u8 = 12;
    IORING_OP_ACCEPT: u8 = 13;
    IORING_OP_ASYNC_CANCEL: u8 = 14;
    IORING_OP_LINK_TIMEOUT: u8 = 15;
    IORING_OP_CONNECT: u8 = 16;
    IORING_OP_FALLOCATE: u8 = 17;
    IORING_OP_OPENAT: u8 = 18;
    IORING_OP_CLOSE: u8 = 19;
    IORING_OP_FILES_UPDATE: u8 = 20;
    IORING_OP_STATX: u8 = 21;
    IORING_OP_READ: u8 = 22;
    IORING_OP_WRITE: u8 = 23;
    IORING_OP_FADVISE: u8 = 24;
    IORING_OP_MADVISE: u8 = 25;
    IORING_OP_SEND: u8 = 26;
    IORING_OP_RECV: u8 = 27;
    IORING_OP_OPENAT2: u8 = 28;
    IORING_OP_EPOLL_CTL: u8 = 29;
    IORING_OP_SPLICE: u8 = 30;
    IORING_OP_PROVIDE_BUFFERS: u8 = 31;
    IORING_OP_REMOVE_BUFFERS: u8 = 32;
    IORING_OP_TEE: u8 = 33;
    IORING_OP_SHUTDOWN: u8 = 34;
    IORING_OP_RENAMEAT: u8 = 35;
    IORING_OP_UNLINKAT: u8 = 36;
    IORING_OP_MKDIRAT: u8 = 37;
    IORING_OP_SYMLINKAT: u8 = 38;
    IORING_OP_LINKAT: u8 = 39;
    IORING_OP_MSG_RING: u8 = 40;
    IORING_OP_FSETXATTR: u8 = 41;
    IORING_OP_SETXATTR: u8 = 42;
    IORING_OP_FGETXATTR: u8 = 43;
    IORING_OP_GETXATTR: u8 = 44;
    IORING_OP_SOCKET: u8 = 45;
    IORING_OP_URING_CMD: u8 = 46;
    IORING_OP_SEND_ZC: u8 = 47;
    IORING_OP_SENDMSG_ZC: u8 = 48;
    IORING_OP_READ_MULTISHOT: u8 = 49;
    IORING_OP_WAITID: u8 = 50;
    IORING_OP_FUTEX_WAIT: u8 = 51;
    IORING_OP_FUTEX_WAKE: u8 = 52;
    IORING_OP_FUTEX_WAITV: u8 = 53;
    IORING_OP_FIXED_FD_INSTALL: u8 = 54;
    IORING_OP_FTRUNCATE: u8 = 55;
    IORING_OP_BIND: u8 = 56;
    IORING_OP_LISTEN: u8 = 57;
    IORING_OP_RECV_ZC: u8 = 58;
    IORING_OP_EPOLL_WAIT: u8 = 59;
    IORING_OP_READV_FIXED: u8 = 60;
    IORING_OP_WRITEV_FIXED: u8 = 61;
    IORING_OP_PIPE: u8 = 62;
    IORING_OP_NOP128: u8 = 63;
    IORING_OP_URING_CMD128: u8 = 64;
    /// Number of opcodes; not itself an opcode.
    IORING_OP_LAST: u8 = 65;

    // sqe->uring_cmd_flags
    IORING_URING_CMD_FIXED: u32 = 1 << 0;
    IORING_URING_CMD_MASK: u32 = IORING_URING_CMD_FIXED;

    // sqe->fsync_flags
    IORING_FSYNC_DATASYNC: u32 = 1 << 0;

    // sqe->timeout_flags
    IORING_TIMEOUT_ABS: u32 = 1 << 0;
    IORING_TIMEOUT_UPDATE: u32 = 1 << 1;
    IORING_TIMEOUT_BOOTTIME: u32 = 1 << 2;
    IORING_TIMEOUT_REALTIME: u32 = 1 << 3;
    IORING_LINK_TIMEOUT_UPDATE: u32 = 1 << 4;
    IORING_TIMEOUT_ETIME_SUCCESS: u32 = 1 << 5;
    IORING_TIMEOUT_MULTISHOT: u32 = 1 << 6;
    IORING_TIMEOUT_IMMEDIATE_ARG: u32 = 1 << 7;
    IORING_TIMEOUT_CLOCK_MASK: u32 = IORING_TIMEOUT_BOOTTIME | IORING_TIMEOUT_REALTIME;
    IORING_TIMEOUT_UPDATE_MASK: u32 = IORING_TIMEOUT_UPDATE | IORING_LINK_TIMEOUT_UPDATE;

    // sqe->splice_flags
    SPLICE_F_FD_IN_FIXED: u32 = 1 << 31;

    // POLL_ADD command flags, stored in sqe->len
    IORING_POLL_ADD_MULTI: u32 = 1 << 0;
    IORING_POLL_UPDATE_EVENTS: u32 = 1 << 1;
    IORING_POLL_UPDATE_USER_DATA: u32 = 1 << 2;
    IORING_POLL_ADD_LEVEL: u32 = 1 << 3;

    // sqe->cancel_flags and io_uring_sync_cancel_reg.flags
    IORING_ASYNC_CANCEL_ALL: u32 = 1 << 0;
    IORING_ASYNC_CANCEL_FD: u32 = 1 << 1;
    IORING_ASYNC_CANCEL_ANY: u32 = 1 << 2;
    IORING_ASYNC_CANCEL_FD_FIXED: u32 = 1 << 3;
    IORING_ASYNC_CANCEL_USERDATA: u32 = 1 << 4;
    IORING_ASYNC_CANCEL_OP: u32 = 1 << 5;

    // send/recv flags, stored in sqe->ioprio (u16)
    IORING_RECVSEND_POLL_FIRST: u16 = 1 << 0;
    IORING_RECV_MULTISHOT: u16 = 1 << 1;
    IORING_RECVSEND_FIXED_BUF: u16 = 1 << 2;
    IORING_SEND_ZC_REPORT_USAGE: u16 = 1 << 3;
    IORING_RECVSEND_BUNDLE: u16 = 1 << 4;
    IORING_SEND_VECTORIZED: u16 = 1 << 5;

    // bit of a zero-copy notification's cqe->res
    IORING_NOTIF_USAGE_ZC_COPIED: u32 = 1 << 31;

    // accept flags, stored in sqe->ioprio (u16)
    IORING_ACCEPT_MULTISHOT: u16 = 1 << 0;
    IORING_ACCEPT_DONTWAIT: u16 = 1 << 1;
    IORING_ACCEPT_POLL_FIRST: u16 = 1 << 2;

    // MSG_RING sub-command, stored in sqe->addr
    IORING_MSG_DATA: u64 = 0;
    IORING_MSG_SEND_FD: u64 = 1;

    // sqe->msg_ring_flags
    IORING_MSG_RING_CQE_SKIP: u32 = 1 << 0;
    IORING_MSG_RING_FLAGS_PASS: u32 = 1 << 1;

    // sqe->install_fd_flags
    IORING_FIXED_FD_NO_CLOEXEC: u32 = 1 << 0;

    // sqe->nop_flags
    IORING_NOP_INJECT_RESULT: u32 = 1 << 0;
    IORING_NOP_CQE32: u32 = 1 << 5;

    // cqe->flags
    IORING_CQE_F_BUFFER: u32 = 1 << 0;
    IORING_CQE_F_MORE: u32 = 1 << 1;
    IORING_CQE_F_SOCK_NONEMPTY: u32 = 1 << 2;
    IORING_CQE_F_NOTIF: u32 = 1 << 3;
    IORING_CQE_F_BUF_MORE: u32 = 1 << 4;
    IORING_CQE_F_SKIP: u32 = 1 << 5;
    IORING_CQE_F_32: u32 = 1 << 15;
    IORING_CQE_BUFFER_SHIFT: u32 = 16;

    // mmap(2) offsets on the ring fd
    IORING_OFF_SQ_RING: u64 = 0;
    IORING_OFF_CQ_RING: u64 = 0x8000000;
    IORING_OFF_SQES: u64 = 0x10000000;
    IORING_OFF_PBUF_RING: u64 = 0x80000000;
    IORING_OFF_PBUF_SHIFT: u32 = 16;
    IORING_OFF_MMAP_MASK: u64 = 0xf8000000;

    // SQ ring flags word
    IORING_SQ_NEED_WAKEUP: u32 = 1 << 0;
    IORING_SQ_CQ_OVERFLOW: u32 = 1 << 1;
    IORING_SQ_TASKRUN: u32 = 1 << 2;

    // CQ ring flags word
    IORING_CQ_EVENTFD_DISABLED: u32 = 1 << 0;

    // io_uring_enter(2) flags
    IORING_ENTER_GETEVENTS: u32 = 1 << 0;
    IORING_ENTER_SQ_WAKEUP: u32 = 1 << 1;
    IORING_ENTER_SQ_WAIT: u32 = 1 << 2;
    IORING_ENTER_EXT_ARG: u32 = 1 << 3;
    IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;
    IORING_ENTER_ABS_TIMER: u32 = 1 << 5;
    IORING_ENTER_EXT_ARG_REG: u32 = 1 << 6;
    IORING_ENTER_NO_IOWAIT: u32 = 1 << 7;

    // io_uring_params.features
    IORING_FEAT_SINGLE_MMAP: u32 = 1 << 0;
    IORING_FEAT_NODROP: u32 = 1 << 1;
    IORING_FEAT_SUBMIT_STABLE: u32 = 1 << 2;
    IORING_FEAT_RW_CUR_POS: u32 = 1 << 3;
    IORING_FEAT_CUR_PERSONALITY: u32 = 1 << 4;
    IORING_FEAT_FAST_POLL: u32 = 1 << 5;
    IORING_FEAT_POLL_32BITS: u32 = 1 << 6;
    IORING_FEAT_SQPOLL_NONFIXED: u32 = 1 << 7;
    IORING_FEAT_EXT_ARG: u32 = 1 << 8;
    IORING_FEAT_NATIVE_WORKERS: u32 = 1 << 9;
    IORING_FEAT_RSRC_TAGS: u32 = 1 << 10;
    IORING_FEAT_CQE_SKIP: u32 = 1 << 11;
    IORING_FEAT_LINKED_FILE: u32 = 1 << 12;
    IORING_FEAT_REG_REG_RING: u32 = 1 << 13;
    IORING_FEAT_RECVSEND_BUNDLE: u32 = 1 << 14;
    IORING_FEAT_MIN_TIMEOUT: u32 = 1 << 15;
    IORING_FEAT_RW_ATTR: u32 = 1 << 16;
    IORING_FEAT_NO_IOWAIT: u32 = 1 << 17;

    // io_uring_register(2) opcodes, enum io_uring_register_op
    IORING_REGISTER_BUFFERS: u32 = 0;
    IORING_UNREGISTER_BUFFERS: u32 = 1;
    IORING_REGISTER_FILES: u32 = 2;
    IORING_UNREGISTER_FILES: u32 = 3;
    IORING_REGISTER_EVENTFD: u32 = 4;
    IORING_UNREGISTER_EVENTFD: u32 = 5;
    IORING_REGISTER_FILES_UPDATE: u32 = 6;
    IORING_REGISTER_EVENTFD_ASYNC: u32 = 7;
    IORING_REGISTER_PROBE: u32 = 8;
    IORING_REGISTER_PERSONALITY: u32 = 9;
    IORING_UNREGISTER_PERSONALITY: u32 = 10;
    IORING_REGISTER_RESTRICTIONS: u32 = 11;
    IORING_REGISTER_ENABLE_RINGS: u32 = 12;
    IORING_REGISTER_FILES2: u32 = 13;
    IORING_REGISTER_FILES_UPDATE2: u32 = 14;
    IORING_REGISTER_BUFFERS2: u32 = 15;
    IORING_REGISTER_BUFFERS_UPDATE: u32 = 16;
    IORING_REGISTER_IOWQ_AFF: u32 = 17;
    IORING_UNREGISTER_IOWQ_AFF: u32 = 18;
    IORING_REGISTER_IOWQ_MAX_WORKERS: u32 = 19;
    IORING_REGISTER_RING_FDS: u32 = 20;
    IORING_UNREGISTER_RING_FDS: u32 = 21;
    IORING_REGISTER_PBUF_RING: u32 = 22;
    IORING_UNREGISTER_PBUF_RING: u32 = 23;
    IORING_REGISTER_SYNC_CANCEL: u32 = 24;
    IORING_REGISTER_FILE_ALLOC_RANGE: u32 = 25;
    IORING_REGISTER_PBUF_STATUS: u32 = 26;
    IORING_REGISTER_NAPI: u32 = 27;
    IORING_UNREGISTER_NAPI: u32 = 28;
    IORING_REGISTER_CLOCK: u32 = 29;
    IORING_REGISTER_CLONE_BUFFERS: u32 = 30;
    IORING_REGISTER_SEND_MSG_RING: u32 = 31;
    IORING_REGISTER_ZCRX_IFQ: u32 = 32;
    IORING_REGISTER_RESIZE_RINGS: u32 = 33;
    IORING_REGISTER_MEM_REGION: u32 = 34;
    IORING_REGISTER_QUERY: u32 = 35;
    IORING_REGISTER_ZCRX_CTRL: u32 = 36;
    IORING_REGISTER_BPF_FILTER: u32 = 37;
    IORING_REGISTER_LAST: u32 = 38;
    /// OR-ed into the opcode when the fd argument is a registered-ring index.
    IORING_REGISTER_USE_REGISTERED_RING: u32 = 1 << 31;

    // index into the IORING_REGISTER_IOWQ_MAX_WORKERS array
    IO_WQ_BOUND: u32 = 0;
    IO_WQ_UNBOUND: u32 = 1;

    // io_uring_region_desc.flags
    IORING_MEM_REGION_TYPE_USER: u32 = 1;
    // io_uring_mem_region_reg.flags
    IORING_MEM_REGION_REG_WAIT_ARG: u64 = 1;

    // io_uring_rsrc_register.flags
    IORING_RSRC_REGISTER_SPARSE: u32 = 1 << 0;

    // fd value in a files update that leaves the slot alone
    IORING_REGISTER_FILES_SKIP: i32 = -2;

    // io_uring_probe_op.flags
    IO_URING_OP_SUPPORTED: u16 = 1 << 0;

    // io_uring_clone_buffers.flags
    IORING_REGISTER_SRC_REGISTERED: u32 = 1 << 0;
    IORING_REGISTER_DST_REPLACE: u32 = 1 << 1;

    // io_uring_buf_reg.flags
    IOU_PBUF_RING_MMAP: u16 = 1;
    IOU_PBUF_RING_INC: u16 = 2;

    // io_uring_restriction.opcode
    IORING_RESTRICTION_REGISTER_OP: u16 = 0;
    IORING_RESTRICTION_SQE_OP: u16 = 1;
    IORING_RESTRICTION_SQE_FLAGS_ALLOWED: u16 = 2;
    IORING_RESTRICTION_SQE_FLAGS_REQUIRED: u16 = 3;
    IORING_RESTRICTION_LAST: u16 = 4;

    // io_uring_reg_wait.flags
    IORING_REG_WAIT_TS: u32 = 1 << 0;

    // URING_CMD on sockets, stored in sqe->cmd_op
    SOCKET_URING_OP_SIOCINQ: u32 = 0;
    SOCKET_URING_OP_SIOCOUTQ: u32 = 1;
    SOCKET_URING_OP_GETSOCKOPT: u32 = 2;
    SOCKET_URING_OP_SETSOCKOPT: u32 = 3;
    SOCKET_URING_OP_TX_TIMESTAMP: u32 = 4;
    SOCKET_URING_OP_GETSOCKNAME: u32 = 5;

    // TX timestamp completions, encoded in cqe->flags
    IORING_TIMESTAMP_HW_SHIFT: u32 = 16;
    IORING_TIMESTAMP_TYPE_SHIFT: u32 = IORING_TIMESTAMP_HW_SHIFT + 1;
    IORING_CQE_F_TSTAMP_HW: u32 = 1 << IORING_TIMESTAMP_HW_SHIFT;

    // zero-copy receive
    IORING_ZCRX_AREA_SHIFT: u32 = 48;
    IORING_ZCRX_AREA_MASK: u64 = !((1u64 << IORING_ZCRX_AREA_SHIFT) - 1);
    IORING_ZCRX_AREA_DMABUF: u32 = 1;
    ZCRX_REG_IMPORT: u32 = 1;
    ZCRX_REG_NODEV: u32 = 2;
    ZCRX_FEATURE_RX_PAGE_SIZE: u32 = 1 << 0;
    ZCRX_CTRL_FLUSH_RQ: u32 = 0;
    ZCRX_CTRL_EXPORT: u32 = 1;
    __ZCRX_CTRL_LAST: u32 = 2;

    // <liburing/io_uring/query.h>: io_uring_query_hdr.query_op
    IO_URING_QUERY_OPCODES: u32 = 0;
    IO_URING_QUERY_ZCRX: u32 = 1;
    IO_URING_QUERY_SCQ: u32 = 2;
    __IO_URING_QUERY_MAX: u32 = 3;

    // <liburing/io_uring/bpf_filter.h>
    IO_URING_BPF_FILTER_DENY_REST: u32 = 1;
    IO_URING_BPF_FILTER_SZ_STRICT: u32 = 2;
    IO_URING_BPF_CMD_FILTER: u16 = 1;
}
