//! Registration.

use core::ffi::{c_int, c_uint};
use core::ptr;

use super::EINVAL;
use crate::ring::{buf_ring, register, IoUring};
use crate::sys::{
    io_uring_bpf, io_uring_buf_reg, io_uring_buf_ring, io_uring_clock_register, io_uring_mem_region_reg, io_uring_napi,
    io_uring_params, io_uring_probe, io_uring_query_hdr, io_uring_reg_wait, io_uring_restriction, io_uring_sqe,
    io_uring_sync_cancel_reg, io_uring_zcrx_ifq_reg, zcrx_ctrl,
};

// The two names below exist so the generated declarations spell these
// parameters exactly as liburing.h does: `struct iovec` (not a typedef) and
// `__u64` (unsigned long long, which C does not unify with uint64_t).

/// C's `struct iovec`, opaque here; cast to `libc::iovec` before use.
#[repr(C)]
pub struct iovec {
    _opaque: [u8; 0],
}

/// The kernel's `__u64`.
#[allow(non_camel_case_types)]
pub type __u64 = u64;

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `p` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_probe(ring: *mut IoUring, p: *mut io_uring_probe, nr: c_uint) -> i32 {
    let ring = ring!(ring, EINVAL);
    register::register_probe(ring, p, nr)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_enable_rings(ring: *mut IoUring) -> i32 {
    let ring = ring!(ring, EINVAL);
    register::enable_rings(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_ring_fd(ring: *mut IoUring) -> i32 {
    let ring = ring!(ring, EINVAL);
    register::register_ring_fd(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_unregister_ring_fd(ring: *mut IoUring) -> i32 {
    let ring = ring!(ring, EINVAL);
    register::unregister_ring_fd(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_close_ring_fd(ring: *mut IoUring) -> i32 {
    let ring = ring!(ring, EINVAL);
    register::close_ring_fd(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `p` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_resize_rings(ring: *mut IoUring, p: *mut io_uring_params) -> i32 {
    let ring = ring!(ring, EINVAL);
    let p = arg!(p, EINVAL);
    register::resize_rings(ring, p)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `iovecs` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_buffers(
    ring: *mut IoUring,
    iovecs: *const iovec,
    nr_iovecs: c_uint,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_buffers(ring, iovecs.cast(), nr_iovecs)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `iovecs` and `tags` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_buffers_tags(
    ring: *mut IoUring,
    iovecs: *const iovec,
    tags: *const __u64,
    nr: c_uint,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_buffers_tags(ring, iovecs.cast(), tags, nr)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_buffers_sparse(ring: *mut IoUring, nr: c_uint) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_buffers_sparse(ring, nr)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `iovecs` and `tags` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_buffers_update_tag(
    ring: *mut IoUring,
    off: c_uint,
    iovecs: *const iovec,
    tags: *const __u64,
    nr: c_uint,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_buffers_update_tag(ring, off, iovecs.cast(), tags, nr)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_unregister_buffers(ring: *mut IoUring) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::unregister_buffers(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `files` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_files(ring: *mut IoUring, files: *const c_int, nr_files: c_uint) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_files(ring, files, nr_files)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `files` and `tags` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_files_tags(
    ring: *mut IoUring,
    files: *const c_int,
    tags: *const __u64,
    nr: c_uint,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_files_tags(ring, files, tags, nr)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_files_sparse(ring: *mut IoUring, nr: c_uint) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_files_sparse(ring, nr)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `files` and `tags` are null or valid for the call as liburing's
/// documentation of this function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_files_update_tag(
    ring: *mut IoUring,
    off: c_uint,
    files: *const c_int,
    tags: *const __u64,
    nr_files: c_uint,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_files_update_tag(ring, off, files, tags, nr_files)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_unregister_files(ring: *mut IoUring) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::unregister_files(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `files` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_files_update(
    ring: *mut IoUring,
    off: c_uint,
    files: *const c_int,
    nr_files: c_uint,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_files_update(ring, off, files, nr_files)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_file_alloc_range(ring: *mut IoUring, off: c_uint, len: c_uint) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_file_alloc_range(ring, off, len)
}

/// # Safety
/// `dst` and `src` are each null (an error) or a live `struct io_uring`, used
/// as liburing allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn __io_uring_clone_buffers_offset(
    dst: *mut IoUring,
    src: *mut IoUring,
    dst_off: c_uint,
    src_off: c_uint,
    nr: c_uint,
    flags: c_uint,
) -> c_int {
    let dst = ring!(dst, EINVAL);
    let src = ring!(src, EINVAL);
    register::clone_buffers_offset(dst, src, dst_off, src_off, nr, flags)
}

/// # Safety
/// `dst` and `src` are each null (an error) or a live `struct io_uring`, used
/// as liburing allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_clone_buffers_offset(
    dst: *mut IoUring,
    src: *mut IoUring,
    dst_off: c_uint,
    src_off: c_uint,
    nr: c_uint,
    flags: c_uint,
) -> c_int {
    let dst = ring!(dst, EINVAL);
    let src = ring!(src, EINVAL);
    register::clone_buffers_offset(dst, src, dst_off, src_off, nr, flags | crate::sys::IORING_REGISTER_SRC_REGISTERED)
}

/// # Safety
/// `dst` and `src` are each null (an error) or a live `struct io_uring`, used
/// as liburing allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_clone_buffers(dst: *mut IoUring, src: *mut IoUring) -> c_int {
    let dst = ring!(dst, EINVAL);
    let src = ring!(src, EINVAL);
    register::clone_buffers_offset(dst, src, 0, 0, 0, crate::sys::IORING_REGISTER_SRC_REGISTERED)
}

/// # Safety
/// `dst` and `src` are each null (an error) or a live `struct io_uring`, used
/// as liburing allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn __io_uring_clone_buffers(dst: *mut IoUring, src: *mut IoUring, flags: c_uint) -> c_int {
    let dst = ring!(dst, EINVAL);
    let src = ring!(src, EINVAL);
    register::clone_buffers_offset(dst, src, 0, 0, 0, flags)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_eventfd(ring: *mut IoUring, fd: c_int) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_eventfd(ring, fd)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_eventfd_async(ring: *mut IoUring, fd: c_int) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_eventfd_async(ring, fd)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_unregister_eventfd(ring: *mut IoUring) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::unregister_eventfd(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_personality(ring: *mut IoUring) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_personality(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_unregister_personality(ring: *mut IoUring, id: c_int) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::unregister_personality(ring, id)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `res` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_restrictions(
    ring: *mut IoUring,
    res: *mut io_uring_restriction,
    nr_res: c_uint,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_restrictions(ring, res, nr_res)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `mask` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_iowq_aff(
    ring: *mut IoUring,
    cpusz: usize,
    mask: *const libc::cpu_set_t,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_iowq_aff(ring, cpusz, mask)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_unregister_iowq_aff(ring: *mut IoUring) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::unregister_iowq_aff(ring)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `values` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_iowq_max_workers(ring: *mut IoUring, values: *mut c_uint) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_iowq_max_workers(ring, values)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `reg` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_sync_cancel(
    ring: *mut IoUring,
    reg: *mut io_uring_sync_cancel_reg,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_sync_cancel(ring, reg)
}

/// # Safety
/// `sqe` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_sync_msg(sqe: *mut io_uring_sqe) -> c_int {
    register::register_sync_msg(sqe)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `napi` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_napi(ring: *mut IoUring, napi: *mut io_uring_napi) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_napi(ring, napi)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `napi` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_unregister_napi(ring: *mut IoUring, napi: *mut io_uring_napi) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::unregister_napi(ring, napi)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `arg` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_clock(ring: *mut IoUring, arg: *mut io_uring_clock_register) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_clock(ring, arg)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_set_iowait(ring: *mut IoUring, enable_iowait: bool) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::set_iowait(ring, enable_iowait)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `reg` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_region(ring: *mut IoUring, reg: *mut io_uring_mem_region_reg) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_region(ring, reg)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `reg` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_wait_reg(
    ring: *mut IoUring,
    reg: *mut io_uring_reg_wait,
    nr: c_int,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_wait_reg(ring, reg, nr)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `reg` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_ifq(ring: *mut IoUring, reg: *mut io_uring_zcrx_ifq_reg) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_ifq(ring, reg)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `ctrl` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_zcrx_ctrl(ring: *mut IoUring, ctrl: *mut zcrx_ctrl) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_zcrx_ctrl(ring, ctrl)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `bpf` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_bpf_filter(ring: *mut IoUring, bpf: *mut io_uring_bpf) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::register_bpf_filter(ring, bpf)
}

/// # Safety
/// `bpf` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_bpf_filter_task(bpf: *mut io_uring_bpf) -> c_int {
    register::register_bpf_filter_task(bpf)
}

/// # Safety
/// `query` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_query(query: *mut io_uring_query_hdr) -> c_int {
    register::register_query(query)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `reg` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_register_buf_ring(
    ring: *mut IoUring,
    reg: *mut io_uring_buf_reg,
    flags: c_uint,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    let reg = arg!(reg, EINVAL);
    register::register_buf_ring(ring, reg, flags)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
#[no_mangle]
pub unsafe extern "C" fn io_uring_unregister_buf_ring(ring: *mut IoUring, bgid: c_int) -> c_int {
    let ring = ring!(ring, EINVAL);
    register::unregister_buf_ring(ring, bgid)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `head` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_buf_ring_head(ring: *mut IoUring, buf_group: c_int, head: *mut u16) -> c_int {
    let ring = ring!(ring, EINVAL);
    let head = arg!(head, EINVAL);
    register::buf_ring_head(ring, buf_group, head)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `err` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_setup_buf_ring(
    ring: *mut IoUring,
    nentries: c_uint,
    bgid: c_int,
    flags: c_uint,
    err: *mut c_int,
) -> *mut io_uring_buf_ring {
    let ring = ring!(ring, ptr::null_mut());
    let err = arg!(err, ptr::null_mut());
    buf_ring::setup_buf_ring(ring, nentries, bgid, flags, err)
}

/// # Safety
/// `ring` is null (an error) or a live `struct io_uring`, used as liburing
/// allows (see `ring::Ring`).
/// `br` is null or valid for the call as liburing's documentation of this
/// function asks.
#[no_mangle]
pub unsafe extern "C" fn io_uring_free_buf_ring(
    ring: *mut IoUring,
    br: *mut io_uring_buf_ring,
    nentries: c_uint,
    bgid: c_int,
) -> c_int {
    let ring = ring!(ring, EINVAL);
    buf_ring::free_buf_ring(ring, br, nentries, bgid)
}
