//! `#[repr(C)]` mirrors of the io_uring kernel structs.
//!
//! Field names are the C ones. Each anonymous C union (or struct inside a
//! union) becomes a named Rust type; the field holding it is named after the
//! first member it contains plus `_u` (union) or `_s` (struct). For example
//! C's `sqe->cmd_op` is `sqe.off_u.cmd_op_s.cmd_op` here. The full mapping
//! for `io_uring_sqe`:
//!
//! | offset | field      | members                                              |
//! |--------|------------|------------------------------------------------------|
//! | 8      | `off_u`    | `off`, `addr2`, `cmd_op_s.{cmd_op,__pad1}`            |
//! | 16     | `addr_u`   | `addr`, `splice_off_in`, `level_s.{level,optname}`    |
//! | 28     | `rw_flags_u` | `rw_flags`, `fsync_flags`, ... `pipe_flags`        |
//! | 40     | `buf_index_u` | `buf_index`, `buf_group`                          |
//! | 44     | `splice_fd_in_u` | `splice_fd_in`, `file_index`, `zcrx_ifq_idx`, `optlen`, `addr_len_s.{addr_len,__pad3}` |
//! | 48     | `addr3_u`  | `addr3_s.{addr3,__pad2}`, `attr_ptr_s.{attr_ptr,attr_type_mask}`, `optval`, `cmd` |
//!
//! Every type here is plain data for which all-zero bytes are a valid
//! value, so each gets a `Default` that zeroes it.

use core::fmt;

/// `struct __kernel_timespec` (64-bit time on every architecture).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct __kernel_timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

/// `struct io_timespec`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_timespec {
    pub tv_sec: u64,
    pub tv_nsec: u64,
}

// ---------------------------------------------------------------------------
// Submission queue entry
// ---------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_sqe_cmd_op_s {
    pub cmd_op: u32,
    pub __pad1: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_off_u {
    pub off: u64,
    pub addr2: u64,
    pub cmd_op_s: io_uring_sqe_cmd_op_s,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_sqe_level_s {
    pub level: u32,
    pub optname: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_addr_u {
    pub addr: u64,
    pub splice_off_in: u64,
    pub level_s: io_uring_sqe_level_s,
}

/// Per-opcode flag word at offset 28.
#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_rw_flags_u {
    /// `__kernel_rwf_t`, an `int` in the UAPI.
    pub rw_flags: i32,
    pub fsync_flags: u32,
    pub poll_events: u16,
    pub poll32_events: u32,
    pub sync_range_flags: u32,
    pub msg_flags: u32,
    pub timeout_flags: u32,
    pub accept_flags: u32,
    pub cancel_flags: u32,
    pub open_flags: u32,
    pub statx_flags: u32,
    pub fadvise_advice: u32,
    pub splice_flags: u32,
    pub rename_flags: u32,
    pub unlink_flags: u32,
    pub hardlink_flags: u32,
    pub xattr_flags: u32,
    pub msg_ring_flags: u32,
    pub uring_cmd_flags: u32,
    pub waitid_flags: u32,
    pub futex_flags: u32,
    pub install_fd_flags: u32,
    pub nop_flags: u32,
    pub pipe_flags: u32,
}

/// C marks this union packed only for ARM OABI, which Rust does not target;
/// the natural layout is identical elsewhere.
#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_buf_index_u {
    pub buf_index: u16,
    pub buf_group: u16,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_sqe_addr_len_s {
    pub addr_len: u16,
    pub __pad3: [u16; 1],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_splice_fd_in_u {
    pub splice_fd_in: i32,
    pub file_index: u32,
    pub zcrx_ifq_idx: u32,
    pub optlen: u32,
    pub addr_len_s: io_uring_sqe_addr_len_s,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_sqe_addr3_s {
    pub addr3: u64,
    pub __pad2: [u64; 1],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_sqe_attr_ptr_s {
    pub attr_ptr: u64,
    pub attr_type_mask: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_sqe_addr3_u {
    pub addr3_s: io_uring_sqe_addr3_s,
    pub attr_ptr_s: io_uring_sqe_attr_ptr_s,
    pub optval: u64,
    /// Start of the 80-byte command area of 128-byte SQEs.
    pub cmd: [u8; 0],
}

/// `struct io_uring_sqe`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct io_uring_sqe {
    pub opcode: u8,
    pub flags: u8,
    pub ioprio: u16,
    pub fd: i32,
    pub off_u: io_uring_sqe_off_u,
    pub addr_u: io_uring_sqe_addr_u,
    pub len: u32,
    pub rw_flags_u: io_uring_sqe_rw_flags_u,
    pub user_data: u64,
    pub buf_index_u: io_uring_sqe_buf_index_u,
    pub personality: u16,
    pub splice_fd_in_u: io_uring_sqe_splice_fd_in_u,
    pub addr3_u: io_uring_sqe_addr3_u,
}

impl fmt::Debug for io_uring_sqe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: every union here consists of integers only, so any bit
        // pattern is a valid value for the widest member read.
        let (off, addr, opf, bi, fi, a3) = unsafe {
            (
                self.off_u.off,
                self.addr_u.addr,
                self.rw_flags_u.fsync_flags,
                self.buf_index_u.buf_index,
                self.splice_fd_in_u.file_index,
                self.addr3_u.addr3_s.addr3,
            )
        };
        f.debug_struct("io_uring_sqe")
            .field("opcode", &self.opcode)
            .field("flags", &self.flags)
            .field("ioprio", &self.ioprio)
            .field("fd", &self.fd)
            .field("off", &off)
            .field("addr", &addr)
            .field("len", &self.len)
            .field("op_flags", &opf)
            .field("user_data", &self.user_data)
            .field("buf_index", &bi)
            .field("personality", &self.personality)
            .field("file_index", &fi)
            .field("addr3", &a3)
            .finish()
    }
}

/// `struct io_uring_attr_pi`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_attr_pi {
    pub flags: u16,
    pub app_tag: u16,
    pub len: u32,
    pub addr: u64,
    pub seed: u64,
    pub rsvd: u64,
}

// ---------------------------------------------------------------------------
// Completion queue entry and ring geometry
// ---------------------------------------------------------------------------

/// `struct io_uring_cqe`; `big_cqe` marks the extra 16 bytes of big CQEs.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_cqe {
    pub user_data: u64,
    pub res: i32,
    pub flags: u32,
    pub big_cqe: [u64; 0],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_sqring_offsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub flags: u32,
    pub dropped: u32,
    pub array: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_cqring_offsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub overflow: u32,
    pub cqes: u32,
    pub flags: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_params {
    pub sq_entries: u32,
    pub cq_entries: u32,
    pub flags: u32,
    pub sq_thread_cpu: u32,
    pub sq_thread_idle: u32,
    pub features: u32,
    pub wq_fd: u32,
    pub resv: [u32; 3],
    pub sq_off: io_sqring_offsets,
    pub cq_off: io_cqring_offsets,
}

// ---------------------------------------------------------------------------
// Registration arguments
// ---------------------------------------------------------------------------
// `align(8)` stands in for the UAPI's `__aligned_u64` on 32-bit targets.

#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_files_update {
    pub offset: u32,
    pub resv: u32,
    /// Pointer to an array of `i32` fds.
    pub fds: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_region_desc {
    pub user_addr: u64,
    pub size: u64,
    pub flags: u32,
    pub id: u32,
    pub mmap_offset: u64,
    pub __resv: [u64; 4],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_mem_region_reg {
    /// Pointer to a `io_uring_region_desc`.
    pub region_uptr: u64,
    pub flags: u64,
    pub __resv: [u64; 2],
}

#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_rsrc_register {
    pub nr: u32,
    pub flags: u32,
    pub resv2: u64,
    pub data: u64,
    pub tags: u64,
}

#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_rsrc_update {
    pub offset: u32,
    pub resv: u32,
    pub data: u64,
}

#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_rsrc_update2 {
    pub offset: u32,
    pub resv: u32,
    pub data: u64,
    pub tags: u64,
    pub nr: u32,
    pub resv2: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_probe_op {
    pub op: u8,
    pub resv: u8,
    pub flags: u16,
    pub resv2: u32,
}

/// `struct io_uring_probe`; `ops` is a flexible array the caller sizes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_probe {
    pub last_op: u8,
    pub ops_len: u8,
    pub resv: u16,
    pub resv2: [u32; 3],
    pub ops: [io_uring_probe_op; 0],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_restriction_register_op_u {
    pub register_op: u8,
    pub sqe_op: u8,
    pub sqe_flags: u8,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct io_uring_restriction {
    pub opcode: u16,
    pub register_op_u: io_uring_restriction_register_op_u,
    pub resv: u8,
    pub resv2: [u32; 3],
}

impl fmt::Debug for io_uring_restriction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: all union members are u8.
        let arg = unsafe { self.register_op_u.register_op };
        f.debug_struct("io_uring_restriction").field("opcode", &self.opcode).field("arg", &arg).finish()
    }
}

/// `struct io_uring_task_restriction`; `restrictions` is a flexible array.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct io_uring_task_restriction {
    pub flags: u16,
    pub nr_res: u16,
    pub resv: [u32; 3],
    pub restrictions: [io_uring_restriction; 0],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_clock_register {
    pub clockid: u32,
    pub __resv: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_clone_buffers {
    pub src_fd: u32,
    pub flags: u32,
    pub src_off: u32,
    pub dst_off: u32,
    pub nr: u32,
    pub pad: [u32; 3],
}

// ---------------------------------------------------------------------------
// Provided-buffer rings
// ---------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_buf {
    pub addr: u64,
    pub len: u32,
    pub bid: u16,
    pub resv: u16,
}

/// Ring header; it overlays `bufs[0]`, with `tail` in `bufs[0].resv`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_buf_ring_resv1_s {
    pub resv1: u64,
    pub resv2: u32,
    pub resv3: u16,
    pub tail: u16,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_buf_ring_resv1_u {
    pub resv1_s: io_uring_buf_ring_resv1_s,
    pub bufs: [io_uring_buf; 0],
}

/// `struct io_uring_buf_ring`: `ring.resv1_u.resv1_s.tail` is C's `br->tail`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct io_uring_buf_ring {
    pub resv1_u: io_uring_buf_ring_resv1_u,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_buf_reg {
    pub ring_addr: u64,
    pub ring_entries: u32,
    pub bgid: u16,
    pub flags: u16,
    pub min_left: u32,
    pub resv: [u32; 5],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_buf_status {
    pub buf_group: u32,
    pub head: u32,
    pub resv: [u32; 8],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_napi {
    pub busy_poll_to: u32,
    pub prefer_busy_poll: u8,
    pub pad: [u8; 3],
    pub resv: u64,
}

// ---------------------------------------------------------------------------
// Waiting and cancellation
// ---------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_reg_wait {
    pub ts: __kernel_timespec,
    pub min_wait_usec: u32,
    pub flags: u32,
    pub sigmask: u64,
    pub sigmask_sz: u32,
    pub pad: [u32; 3],
    pub pad2: [u64; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_getevents_arg {
    pub sigmask: u64,
    pub sigmask_sz: u32,
    pub min_wait_usec: u32,
    /// Pointer to a `__kernel_timespec`, or 0.
    pub ts: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_sync_cancel_reg {
    pub addr: u64,
    pub fd: i32,
    pub flags: u32,
    pub timeout: __kernel_timespec,
    pub opcode: u8,
    pub pad: [u8; 7],
    pub pad2: [u64; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_file_index_range {
    pub off: u32,
    pub len: u32,
    pub resv: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_recvmsg_out {
    pub namelen: u32,
    pub controllen: u32,
    pub payloadlen: u32,
    pub flags: u32,
}

// ---------------------------------------------------------------------------
// Zero-copy receive
// ---------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_zcrx_rqe {
    pub off: u64,
    pub len: u32,
    pub __pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_zcrx_cqe {
    pub off: u64,
    pub __pad: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_zcrx_offsets {
    pub head: u32,
    pub tail: u32,
    pub rqes: u32,
    pub __resv2: u32,
    pub __resv: [u64; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_zcrx_area_reg {
    pub addr: u64,
    pub len: u64,
    pub rq_area_token: u64,
    pub flags: u32,
    pub dmabuf_fd: u32,
    pub __resv2: [u64; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_zcrx_ifq_reg {
    pub if_idx: u32,
    pub if_rxq: u32,
    pub rq_entries: u32,
    pub flags: u32,
    /// Pointer to a `io_uring_zcrx_area_reg`.
    pub area_ptr: u64,
    /// Pointer to a `io_uring_region_desc`.
    pub region_ptr: u64,
    pub offsets: io_uring_zcrx_offsets,
    pub zcrx_id: u32,
    pub rx_buf_len: u32,
    pub __resv: [u64; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct zcrx_ctrl_flush_rq {
    pub __resv: [u64; 6],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct zcrx_ctrl_export {
    pub zcrx_fd: u32,
    pub __resv1: [u32; 11],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union zcrx_ctrl_zc_export_u {
    pub zc_export: zcrx_ctrl_export,
    pub zc_flush: zcrx_ctrl_flush_rq,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct zcrx_ctrl {
    pub zcrx_id: u32,
    pub op: u32,
    pub __resv: [u64; 2],
    pub zc_export_u: zcrx_ctrl_zc_export_u,
}

// ---------------------------------------------------------------------------
// <liburing/io_uring/query.h>
// ---------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_query_hdr {
    pub next_entry: u64,
    pub query_data: u64,
    pub query_op: u32,
    pub size: u32,
    pub result: i32,
    pub __resv: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_query_opcode {
    pub nr_request_opcodes: u32,
    pub nr_register_opcodes: u32,
    pub feature_flags: u64,
    pub ring_setup_flags: u64,
    pub enter_flags: u64,
    pub sqe_flags: u64,
    pub nr_query_opcodes: u32,
    pub __pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_query_zcrx {
    pub register_flags: u64,
    pub area_flags: u64,
    pub nr_ctrl_opcodes: u32,
    pub features: u32,
    pub rq_hdr_size: u32,
    pub rq_hdr_alignment: u32,
    pub __resv2: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_query_scq {
    pub hdr_size: u64,
    pub hdr_alignment: u64,
}

// ---------------------------------------------------------------------------
// <liburing/io_uring/bpf_filter.h>
// ---------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_bpf_ctx_socket {
    pub family: u32,
    pub type_: u32,
    pub protocol: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_bpf_ctx_open {
    pub flags: u64,
    pub mode: u64,
    pub resolve: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_bpf_ctx_socket_u {
    pub socket: io_uring_bpf_ctx_socket,
    pub open: io_uring_bpf_ctx_open,
}

/// `struct io_uring_bpf_ctx`; C's `socket.type` is `socket.type_` here.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct io_uring_bpf_ctx {
    pub user_data: u64,
    pub opcode: u8,
    pub sqe_flags: u8,
    pub pdu_size: u8,
    pub pad: [u8; 5],
    pub socket_u: io_uring_bpf_ctx_socket_u,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct io_uring_bpf_filter {
    pub opcode: u32,
    pub flags: u32,
    pub filter_len: u32,
    pub pdu_size: u8,
    pub resv: [u8; 3],
    pub filter_ptr: u64,
    pub resv2: [u64; 5],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union io_uring_bpf_filter_u {
    pub filter: io_uring_bpf_filter,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct io_uring_bpf {
    pub cmd_type: u16,
    pub cmd_flags: u16,
    pub resv: u32,
    pub filter_u: io_uring_bpf_filter_u,
}

macro_rules! zeroed_default {
    ($($t:ident),* $(,)?) => {$(
        impl Default for $t {
            #[inline]
            fn default() -> Self {
                // SAFETY: the type is integers, integer arrays and unions
                // of those, for which all-zero bytes are a valid value.
                unsafe { core::mem::zeroed() }
            }
        }
    )*};
}

zeroed_default!(
    __kernel_timespec,
    io_timespec,
    io_uring_sqe_cmd_op_s,
    io_uring_sqe_off_u,
    io_uring_sqe_level_s,
    io_uring_sqe_addr_u,
    io_uring_sqe_rw_flags_u,
    io_uring_sqe_buf_index_u,
    io_uring_sqe_addr_len_s,
    io_uring_sqe_splice_fd_in_u,
    io_uring_sqe_addr3_s,
    io_uring_sqe_attr_ptr_s,
    io_uring_sqe_addr3_u,
    io_uring_sqe,
    io_uring_attr_pi,
    io_uring_cqe,
    io_sqring_offsets,
    io_cqring_offsets,
    io_uring_params,
    io_uring_files_update,
    io_uring_region_desc,
    io_uring_mem_region_reg,
    io_uring_rsrc_register,
    io_uring_rsrc_update,
    io_uring_rsrc_update2,
    io_uring_probe_op,
    io_uring_probe,
    io_uring_restriction_register_op_u,
    io_uring_restriction,
    io_uring_task_restriction,
    io_uring_clock_register,
    io_uring_clone_buffers,
    io_uring_buf,
    io_uring_buf_ring_resv1_s,
    io_uring_buf_ring_resv1_u,
    io_uring_buf_ring,
    io_uring_buf_reg,
    io_uring_buf_status,
    io_uring_napi,
    io_uring_reg_wait,
    io_uring_getevents_arg,
    io_uring_sync_cancel_reg,
    io_uring_file_index_range,
    io_uring_recvmsg_out,
    io_uring_zcrx_rqe,
    io_uring_zcrx_cqe,
    io_uring_zcrx_offsets,
    io_uring_zcrx_area_reg,
    io_uring_zcrx_ifq_reg,
    zcrx_ctrl_flush_rq,
    zcrx_ctrl_export,
    zcrx_ctrl_zc_export_u,
    zcrx_ctrl,
    io_uring_query_hdr,
    io_uring_query_opcode,
    io_uring_query_zcrx,
    io_uring_query_scq,
    io_uring_bpf_ctx_socket,
    io_uring_bpf_ctx_open,
    io_uring_bpf_ctx_socket_u,
    io_uring_bpf_ctx,
    io_uring_bpf_filter,
    io_uring_bpf_filter_u,
    io_uring_bpf,
);
