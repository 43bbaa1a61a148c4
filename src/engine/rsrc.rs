//! Registered files and buffers (IORING_REGISTER_FILES*, _BUFFERS*, the
//! file allocation range), with the kernel's limits, errors and tag CQEs.

use alloc::vec::Vec;

use super::ctx::{Cqe, Ctx};
use super::opdef::{OpDef, BASE};
use super::req::{Issued, Mode, Req, ReqPtr};
use super::{fileref, os};
use crate::sys::{
    io_uring_file_index_range, io_uring_rsrc_register, io_uring_rsrc_update, io_uring_rsrc_update2,
    IORING_REGISTER_FILES_SKIP, IORING_RSRC_REGISTER_SPARSE,
};

const MAX_FILES: u32 = 1 << 20;
const MAX_BUFFERS: u32 = 1 << 14;
const MAX_BUF_LEN: u64 = 1 << 30;

#[derive(Clone, Copy)]
struct FileSlot {
    fd: i32,
    tag: u64,
}

#[derive(Clone, Copy)]
struct BufSlot {
    addr: u64,
    len: u64,
    tag: u64,
    /// Cloned from another table (IORING_REGISTER_CLONE_BUFFERS): its
    /// pages are counted where it was registered, as the kernel shares
    /// the pinned buffer between the two.
    cloned: bool,
    /// Names this registration of the buffer (the kernel's rsrc node),
    /// which requests using it hold until they are freed.
    node: u64,
}

/// Buffer node names, unique in the process.
static NEXT_NODE: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);

pub(crate) struct Rsrc {
    files: Option<Vec<Option<FileSlot>>>,
    /// Bytes of registered buffers, counted against RLIMIT_MEMLOCK as the
    /// kernel counts pinned pages.
    locked: u64,
    alloc_lo: u32,
    alloc_hi: u32,
    alloc_hint: u32,
    bufs: Option<Vec<Option<BufSlot>>>,
    /// Tag CQEs owed for removed resources, posted once the lock is dropped.
    tags: Vec<Cqe>,
    /// (request id, buffer node) of each live request using a registered
    /// buffer, and the tag CQEs of removed buffers still in use: as the
    /// kernel's node references, a removed buffer's tag is posted when the
    /// last request using it is freed.
    holders: Vec<(u64, u64)>,
    held_tags: Vec<(u64, Cqe)>,
}

impl Rsrc {
    pub(crate) fn new() -> Rsrc {
        Rsrc {
            files: None,
            locked: 0,
            alloc_lo: 0,
            alloc_hi: 0,
            alloc_hint: 0,
            bufs: None,
            tags: Vec::new(),
            holders: Vec::new(),
            held_tags: Vec::new(),
        }
    }

    /// A registered buffer leaves its slot: its tag CQE is owed now, or
    /// once no request uses it any more.
    fn drop_buf(&mut self, b: &BufSlot) {
        if b.tag == 0 {
            return;
        }
        let cqe = Cqe::new(b.tag, 0, 0);
        if self.holders.iter().any(|&(_, n)| n == b.node) {
            self.held_tags.push((b.node, cqe));
        } else {
            self.tags.push(cqe);
        }
    }

    pub(crate) fn has_buffers(&self) -> bool {
        self.bufs.is_some()
    }

    /// The fd registered at `idx`.
    pub(crate) fn file(&self, idx: u32) -> Option<i32> {
        self.files.as_ref()?.get(idx as usize).copied().flatten().map(|s| s.fd)
    }

    /// The registered buffer `idx` as (address, length).
    pub(crate) fn buffer(&self, idx: u16) -> Option<(u64, u64)> {
        self.bufs.as_ref()?.get(idx as usize).copied().flatten().map(|b| (b.addr, b.len))
    }

    fn drop_file(&mut self, s: FileSlot) {
        fileref::close_file(s.fd);
        if s.tag != 0 {
            self.tags.push(Cqe::new(s.tag, 0, 0));
        }
    }

    /// Puts `fd` (owned by the table from now on) at `idx`, replacing what
    /// was there. -ENXIO without a table, -EINVAL out of range.
    pub(crate) fn install(&mut self, idx: u32, fd: i32) -> Result<(), i32> {
        let files = self.files.as_mut().ok_or(-libc::ENXIO)?;
        let slot = files.get_mut(idx as usize).ok_or(-libc::EINVAL)?;
        let old = slot.replace(FileSlot { fd, tag: 0 });
        // As in the kernel, allocation goes on after the last slot filled.
        self.alloc_hint = idx + 1;
        if let Some(o) = old {
            self.drop_file(o);
        }
        Ok(())
    }

    /// Takes `fd` out of slot `idx` (IORING_OP_CLOSE on a fixed file).
    pub(crate) fn remove(&mut self, idx: u32) -> Result<(), i32> {
        let files = self.files.as_mut().ok_or(-libc::ENXIO)?;
        let old = files.get_mut(idx as usize).ok_or(-libc::EINVAL)?.take().ok_or(-libc::EBADF)?;
        self.drop_file(old);
        Ok(())
    }

    /// A free slot in the allocation range (IORING_FILE_INDEX_ALLOC).
    /// Without a table there is nothing to allocate from: -ENFILE, as the
    /// kernel answers (a chosen slot is -ENXIO instead, see `install`).
    pub(crate) fn alloc_slot(&mut self) -> Result<u32, i32> {
        let files = self.files.as_ref().ok_or(-libc::ENFILE)?;
        let (lo, hi) = (self.alloc_lo, self.alloc_hi.min(files.len() as u32));
        if lo >= hi {
            return Err(-libc::ENFILE);
        }
        let start = self.alloc_hint.clamp(lo, hi - 1);
        let pick = (start..hi).chain(lo..start).find(|&i| files[i as usize].is_none()).ok_or(-libc::ENFILE)?;
        self.alloc_hint = pick + 1;
        Ok(pick)
    }

    fn set_files(&mut self, n: usize) {
        self.files = Some(alloc::vec![None; n]);
        self.alloc_lo = 0;
        self.alloc_hi = n as u32;
        self.alloc_hint = 0;
    }
}

impl Drop for Rsrc {
    fn drop(&mut self) {
        for s in self.files.take().unwrap_or_default().into_iter().flatten() {
            fileref::close_file(s.fd);
        }
    }
}

/// Reads `n` plain values from caller memory.
fn read_array<T: Copy + Default>(addr: u64, n: usize) -> Result<Vec<T>, i32> {
    let mut v = alloc::vec![T::default(); n];
    let bytes = n.checked_mul(core::mem::size_of::<T>()).ok_or(-libc::EOVERFLOW)?;
    os::copy_from_user(v.as_mut_ptr() as *mut u8, addr, bytes)?;
    Ok(v)
}

/// `read_array`, or `n` times `absent` when the caller passed no array.
fn read_or<T: Copy + Default>(addr: u64, n: usize, absent: T) -> Result<Vec<T>, i32> {
    if addr == 0 {
        Ok(alloc::vec![absent; n])
    } else {
        read_array(addr, n)
    }
}

fn read_val<T: Copy + Default>(addr: u64) -> Result<T, i32> {
    Ok(read_array::<T>(addr, 1)?[0])
}

/// A struct the caller sized as `size` bytes: -EINVAL for another size.
fn read_sized<T: Copy + Default>(addr: u64, size: u32) -> Result<T, i32> {
    if size as usize != core::mem::size_of::<T>() {
        return Err(-libc::EINVAL);
    }
    read_val(addr)
}

fn post_tags(ctx: &Ctx, tags: Vec<Cqe>) {
    ctx.post_all(&tags, super::req::Mode::Inline);
}

/// Runs `f` on the ring's tables and then posts any tag CQEs it owed;
/// its error is the call's result.
fn with_rsrc(ctx: &Ctx, f: impl FnOnce(&mut Rsrc) -> Result<i32, i32>) -> i32 {
    let (ret, tags) = {
        let mut g = ctx.rsrc.lock();
        let ret = f(&mut g);
        (ret, core::mem::take(&mut g.tags))
    };
    if !tags.is_empty() {
        post_tags(ctx, tags);
    }
    ret.unwrap_or_else(|e| e)
}

/// The `nr` entries (read by `read`) and tags of a registration or
/// update; no entries at all is -EINVAL.
fn read_batch<T>(
    nr: u32,
    tags: u64,
    read: impl FnOnce(usize) -> Result<Vec<T>, i32>,
) -> Result<(Vec<T>, Vec<u64>), i32> {
    if nr == 0 {
        return Err(-libc::EINVAL);
    }
    Ok((read(nr as usize)?, read_or(tags, nr as usize, 0)?))
}

/// Checks that slots `offset..offset + nr` exist: -ENXIO without a
/// table, -EINVAL past its end.
fn check_span<T>(table: &Option<Vec<T>>, offset: u32, nr: u32) -> Result<(), i32> {
    let len = table.as_ref().ok_or(-libc::ENXIO)?.len();
    if offset as u64 + nr as u64 > len as u64 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

/// A batch that stops at its first error reports how many it did, or
/// that error when it did none.
fn partial(done: i32, err: i32) -> i32 {
    if done != 0 {
        done
    } else {
        err
    }
}

/// A file for the table: a dup of `fd`, refusing the engine's own rings.
fn take_file(fd: i32) -> Result<i32, i32> {
    if super::table::lookup(fd).is_some() {
        return Err(-libc::EBADF);
    }
    let d = fileref::dup_file(fd);
    if d < 0 {
        Err(-libc::EBADF)
    } else {
        Ok(d)
    }
}

fn nofile_limit() -> u64 {
    crate::sys::getrlimit(libc::RLIMIT_NOFILE as u32).map(|(soft, _)| soft).unwrap_or(u64::MAX)
}

fn register_files_common(ctx: &Ctx, fds: u64, tags: u64, nr: u32, sparse: bool) -> i32 {
    // Zero files is -EINVAL (from read_batch), checked before the limit.
    if nr != 0 && (nr > MAX_FILES || nr as u64 > nofile_limit()) {
        return -libc::EMFILE;
    }
    let (fdv, tagv) = match read_batch(nr, tags, |n| read_or(if sparse { 0 } else { fds }, n, -1)) {
        Ok(v) => v,
        Err(e) => return e,
    };
    with_rsrc(ctx, |rs| {
        if rs.files.is_some() {
            return Err(-libc::EBUSY);
        }
        let mut table = alloc::vec![None; nr as usize];
        for (i, (&fd, &tag)) in fdv.iter().zip(tagv.iter()).enumerate() {
            if fd == -1 {
                if tag != 0 {
                    return Err(fail_files(table, -libc::EINVAL));
                }
                continue;
            }
            match take_file(fd) {
                Ok(d) => table[i] = Some(FileSlot { fd: d, tag }),
                Err(e) => return Err(fail_files(table, e)),
            }
        }
        rs.set_files(nr as usize);
        rs.files = Some(table);
        Ok(0)
    })
}

fn fail_files(table: Vec<Option<FileSlot>>, e: i32) -> i32 {
    for s in table.into_iter().flatten() {
        fileref::close_file(s.fd);
    }
    e
}

/// IORING_REGISTER_FILES.
pub(crate) fn register_files(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    register_files_common(ctx, arg, 0, nr, false)
}

/// IORING_REGISTER_FILES2 and IORING_REGISTER_BUFFERS2.
pub(crate) fn register_rsrc2(ctx: &Ctx, arg: u64, size: u32, files: bool) -> i32 {
    let r: io_uring_rsrc_register = match read_sized(arg, size) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if r.resv2 != 0 || r.flags & !IORING_RSRC_REGISTER_SPARSE != 0 {
        return -libc::EINVAL;
    }
    let sparse = r.flags & IORING_RSRC_REGISTER_SPARSE != 0;
    if sparse && (r.data != 0 || r.tags != 0) {
        return -libc::EINVAL;
    }
    if files {
        register_files_common(ctx, r.data, r.tags, r.nr, sparse)
    } else {
        register_buffers_common(ctx, r.data, r.tags, r.nr, sparse)
    }
}

/// IORING_UNREGISTER_FILES.
pub(crate) fn unregister_files(ctx: &Ctx) -> i32 {
    with_rsrc(ctx, |rs| {
        for s in rs.files.take().ok_or(-libc::ENXIO)?.into_iter().flatten() {
            rs.drop_file(s);
        }
        Ok(0)
    })
}

/// Updates `nr` file slots from `offset`; returns how many were done.
pub(crate) fn update_files(ctx: &Ctx, offset: u32, fds: u64, tags: u64, nr: u32) -> i32 {
    let (fdv, tagv) = match read_batch(nr, tags, |n| read_array::<i32>(fds, n)) {
        Ok(v) => v,
        Err(e) => return e,
    };
    with_rsrc(ctx, |rs| {
        check_span(&rs.files, offset, nr)?;
        let mut done = 0;
        let mut err = 0;
        for (i, (&fd, &tag)) in fdv.iter().zip(tagv.iter()).enumerate() {
            let idx = offset as usize + i;
            if fd == IORING_REGISTER_FILES_SKIP {
                done += 1;
                continue;
            }
            let new = if fd == -1 {
                if tag != 0 {
                    err = -libc::EINVAL;
                    break;
                }
                None
            } else {
                match take_file(fd) {
                    Ok(d) => Some(FileSlot { fd: d, tag }),
                    Err(e) => {
                        // The kernel empties the slot before it looks at
                        // the new fd: a refused one leaves it empty.
                        if let Some(o) = rs.files.as_mut().expect("checked above")[idx].take() {
                            rs.drop_file(o);
                        }
                        err = e;
                        break;
                    }
                }
            };
            let old = core::mem::replace(&mut rs.files.as_mut().expect("checked above")[idx], new);
            if let Some(o) = old {
                rs.drop_file(o);
            }
            done += 1;
        }
        Ok(partial(done, err))
    })
}

/// IORING_REGISTER_FILES_UPDATE (the count travels in `nr`).
pub(crate) fn register_files_update(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    let up: io_uring_rsrc_update = match read_val(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if up.resv != 0 {
        return -libc::EINVAL;
    }
    update_files(ctx, up.offset, up.data, 0, nr)
}

/// IORING_REGISTER_FILES_UPDATE2 and IORING_REGISTER_BUFFERS_UPDATE.
pub(crate) fn register_update2(ctx: &Ctx, arg: u64, size: u32, files: bool) -> i32 {
    let up: io_uring_rsrc_update2 = match read_sized(arg, size) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if up.resv != 0 || up.resv2 != 0 {
        return -libc::EINVAL;
    }
    if files {
        update_files(ctx, up.offset, up.data, up.tags, up.nr)
    } else {
        update_buffers(ctx, up.offset, up.data, up.tags, up.nr)
    }
}

/// IORING_REGISTER_FILE_ALLOC_RANGE.
pub(crate) fn register_alloc_range(ctx: &Ctx, arg: u64) -> i32 {
    let r: io_uring_file_index_range = match read_val(arg) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if r.resv != 0 {
        return -libc::EINVAL;
    }
    let Some(end) = r.off.checked_add(r.len) else { return -libc::EOVERFLOW };
    with_rsrc(ctx, |rs| {
        if end as usize > rs.files.as_ref().map_or(0, |t| t.len()) {
            return Err(-libc::EINVAL);
        }
        rs.alloc_lo = r.off;
        rs.alloc_hi = r.off + r.len;
        rs.alloc_hint = r.off;
        Ok(0)
    })
}

/// Validates one iovec as a registrable buffer (None: an empty slot).
fn check_buf(iov: &libc::iovec, tag: u64) -> Result<Option<BufSlot>, i32> {
    let (addr, len) = (iov.iov_base as u64, iov.iov_len as u64);
    if addr == 0 {
        if len != 0 || tag != 0 {
            return Err(if len != 0 { -libc::EFAULT } else { -libc::EINVAL });
        }
        return Ok(None);
    }
    if len == 0
        || len > MAX_BUF_LEN
        || addr.checked_add(len).is_none()
        || !crate::sys::mem::writable(addr, len as usize)
    {
        return Err(-libc::EFAULT);
    }
    if shared_disk_file(addr, addr + len) {
        return Err(-libc::EFAULT);
    }
    Ok(Some(BufSlot {
        addr,
        len,
        tag,
        cloned: false,
        node: NEXT_NODE.fetch_add(1, core::sync::atomic::Ordering::Relaxed),
    }))
}

/// Whether any of `start..end` is a shared mapping of a file whose
/// filesystem tracks dirty pages (a disk file): the kernel will not pin
/// such pages long-term for writing, so registering them is EFAULT. Files
/// of tmpfs, hugetlbfs and ramfs, memfds, SysV and /dev/zero shared
/// memory are fine (read from /proc/self/maps).
fn shared_disk_file(start: u64, end: u64) -> bool {
    const FINE: [i64; 3] = [0x0102_1994, 0x9584_58f6, 0x8584_58f6];
    let Some(maps) = os::read_file(c"/proc/self/maps") else { return false };
    let hex = |b: &[u8]| core::str::from_utf8(b).ok().and_then(|t| u64::from_str_radix(t, 16).ok());
    let fs_type = |path: &[u8]| {
        let mut c = path.to_vec();
        c.push(0);
        // SAFETY: an all-zero statfs is valid; `c` is NUL-terminated.
        let mut st: libc::statfs = unsafe { core::mem::zeroed() };
        // SAFETY: as above.
        (unsafe { libc::statfs(c.as_ptr() as *const libc::c_char, &mut st) } == 0).then_some(st.f_type as i64)
    };
    for line in maps.split(|&c| c == b'\n') {
        // start-end perms offset dev inode path
        let mut f = line.splitn(6, |&c| c == b' ');
        let (Some(range), Some(perms)) = (f.next(), f.next()) else { continue };
        let Some((a, b)) = range.iter().position(|&c| c == b'-').map(|i| (&range[..i], &range[i + 1..])) else {
            continue;
        };
        let (Some(a), Some(b)) = (hex(a), hex(b)) else { continue };
        if b <= start || a >= end || perms.get(3) != Some(&b's') {
            continue;
        }
        let path = f.nth(3).unwrap_or(&[]);
        let path = &path[path.iter().position(|&c| c != b' ').unwrap_or(path.len())..];
        if !path.starts_with(b"/")
            || path.starts_with(b"/memfd:")
            || path.starts_with(b"/SYSV")
            || path.starts_with(b"/dev/zero")
        {
            continue;
        }
        let path = path.strip_suffix(b" (deleted)").unwrap_or(path);
        let dir = &path[..path.iter().rposition(|&c| c == b'/').unwrap_or(0).max(1)];
        match fs_type(path).or_else(|| fs_type(dir)) {
            Some(t) if FINE.contains(&t) => {}
            Some(_) => return true,
            None => {}
        }
    }
    false
}

const EMPTY_IOV: libc::iovec = libc::iovec { iov_base: core::ptr::null_mut(), iov_len: 0 };

fn read_iovecs(addr: u64, nr: usize) -> Result<Vec<libc::iovec>, i32> {
    let mut v = alloc::vec![EMPTY_IOV; nr];
    let bytes = nr * core::mem::size_of::<libc::iovec>();
    os::copy_from_user(v.as_mut_ptr() as *mut u8, addr, bytes)?;
    Ok(v)
}

/// Whether the process may lock memory without limit (CAP_IPC_LOCK).
fn ipc_lock_capable() -> bool {
    // _LINUX_CAPABILITY_VERSION_3 and CAP_IPC_LOCK's bit.
    const CAP_IPC_LOCK: u32 = 14;
    let mut hdr = [0x2008_0522u32, 0];
    let mut data = [0u32; 6];
    // SAFETY: capget with a v3 header and room for two data structs.
    let r = unsafe { libc::syscall(libc::SYS_capget, hdr.as_mut_ptr(), data.as_mut_ptr()) };
    r == 0 && data[0] & (1 << CAP_IPC_LOCK) != 0
}

/// Bytes of whole pages a buffer pins.
fn pinned(b: &BufSlot) -> u64 {
    if b.cloned {
        return 0;
    }
    let page = crate::sys::mem::page_size() as u64;
    (b.addr + b.len).div_ceil(page) * page - b.addr / page * page
}

/// Accounts `add` more pinned bytes (which replace `drop` bytes), or
/// refuses them as the kernel would: -ENOMEM over RLIMIT_MEMLOCK.
fn account(rs: &mut Rsrc, add: u64, drop: u64) -> Result<(), i32> {
    let limit = crate::sys::getrlimit(libc::RLIMIT_MEMLOCK as u32).map(|(soft, _)| soft).unwrap_or(u64::MAX);
    let total = rs.locked - drop + add;
    if total > rs.locked - drop && total > limit && !ipc_lock_capable() {
        return Err(-libc::ENOMEM);
    }
    rs.locked = total;
    Ok(())
}

fn register_buffers_common(ctx: &Ctx, iovs: u64, tags: u64, nr: u32, sparse: bool) -> i32 {
    if nr > MAX_BUFFERS {
        return -libc::EINVAL;
    }
    let read = |n| if sparse || iovs == 0 { Ok(alloc::vec![EMPTY_IOV; n]) } else { read_iovecs(iovs, n) };
    let (iov, tagv) = match read_batch(nr, tags, read) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let mut table = Vec::with_capacity(nr as usize);
    for (v, &t) in iov.iter().zip(tagv.iter()) {
        match check_buf(v, t) {
            Ok(s) => table.push(s),
            Err(e) => return e,
        }
    }
    let bytes = table.iter().flatten().map(pinned).sum();
    with_rsrc(ctx, |rs| {
        if rs.bufs.is_some() {
            return Err(-libc::EBUSY);
        }
        account(rs, bytes, 0)?;
        rs.bufs = Some(table);
        Ok(0)
    })
}

/// IORING_REGISTER_BUFFERS.
pub(crate) fn register_buffers(ctx: &Ctx, arg: u64, nr: u32) -> i32 {
    register_buffers_common(ctx, arg, 0, nr, false)
}

/// IORING_UNREGISTER_BUFFERS.
pub(crate) fn unregister_buffers(ctx: &Ctx) -> i32 {
    with_rsrc(ctx, |rs| {
        for b in rs.bufs.take().ok_or(-libc::ENXIO)?.into_iter().flatten() {
            rs.drop_buf(&b);
        }
        rs.locked = 0;
        Ok(0)
    })
}

/// IORING_REGISTER_CLONE_BUFFERS into `ctx` from the engine ring `src`
/// (the destination when it names itself): `nr` slots (all of the source's
/// when 0) from `src_off` land at `dst_off`. A destination with a table
/// needs IORING_REGISTER_DST_REPLACE; it keeps its slots outside the
/// cloned range and may grow. Cloned slots carry no tag; replaced ones
/// post theirs.
pub(crate) fn clone_buffers(ctx: &Ctx, src: &Ctx, a: &crate::sys::io_uring_clone_buffers) -> i32 {
    let replace = a.flags & crate::sys::IORING_REGISTER_DST_REPLACE != 0;
    if a.nr == 0 && (a.dst_off != 0 || a.src_off != 0) {
        return -libc::EINVAL;
    }
    let (slots, nr) = {
        let g = src.rsrc.lock();
        let Some(t) = g.bufs.as_ref().filter(|t| !t.is_empty()) else { return -libc::ENXIO };
        let nbufs = t.len() as u32;
        let nr = if a.nr == 0 { nbufs } else { a.nr };
        if nr > nbufs || nr > MAX_BUFFERS {
            return -libc::EINVAL;
        }
        match nr.checked_add(a.src_off) {
            Some(end) if end <= nbufs => {}
            _ => return -libc::EOVERFLOW,
        }
        let range = a.src_off as usize..(a.src_off + nr) as usize;
        let slots: Vec<Option<BufSlot>> =
            t[range].iter().map(|s| s.map(|b| BufSlot { tag: 0, cloned: true, ..b })).collect();
        (slots, nr)
    };
    let Some(end) = nr.checked_add(a.dst_off) else { return -libc::EOVERFLOW };
    if end > MAX_BUFFERS {
        return -libc::EINVAL;
    }
    with_rsrc(ctx, |rs| {
        if rs.bufs.is_some() && !replace {
            return Err(-libc::EBUSY);
        }
        let mut table = rs.bufs.take().unwrap_or_default();
        if table.len() < end as usize {
            table.resize(end as usize, None);
        }
        let mut dropped = 0;
        for (i, s) in slots.into_iter().enumerate() {
            if let Some(old) = core::mem::replace(&mut table[a.dst_off as usize + i], s) {
                dropped += pinned(&old);
                rs.drop_buf(&old);
            }
        }
        rs.locked -= dropped;
        rs.bufs = Some(table);
        Ok(0)
    })
}

fn update_buffers(ctx: &Ctx, offset: u32, iovs: u64, tags: u64, nr: u32) -> i32 {
    let (iov, tagv) = match read_batch(nr, tags, |n| read_iovecs(iovs, n)) {
        Ok(v) => v,
        Err(e) => return e,
    };
    with_rsrc(ctx, |rs| {
        check_span(&rs.bufs, offset, nr)?;
        let mut done = 0;
        for (i, (v, &t)) in iov.iter().zip(tagv.iter()).enumerate() {
            let drop = rs.bufs.as_ref().expect("checked above")[offset as usize + i].as_ref().map_or(0, pinned);
            let step = check_buf(v, t).and_then(|new| account(rs, new.as_ref().map_or(0, pinned), drop).map(|_| new));
            let new = match step {
                Ok(s) => s,
                Err(e) => return Ok(partial(done, e)),
            };
            let old = core::mem::replace(&mut rs.bufs.as_mut().expect("checked above")[offset as usize + i], new);
            if let Some(o) = old {
                rs.drop_buf(&o);
            }
            done += 1;
        }
        Ok(done)
    })
}

/// Checks that `addr`/`len` lies inside registered buffer `idx`, as the
/// kernel's import of a fixed buffer does: -EFAULT if not (or no buffer).
pub(crate) fn fixed_span(ctx: &Ctx, idx: u16, addr: u64, len: u64) -> Result<(), i32> {
    let (base, blen) = ctx.rsrc.lock().buffer(idx).ok_or(-libc::EFAULT)?;
    let end = addr.checked_add(len).ok_or(-libc::EFAULT)?;
    if addr < base || end > base + blen {
        return Err(-libc::EFAULT);
    }
    Ok(())
}

/// Request `r`, which passed `fixed_span` or `fixed_iovecs`, uses its
/// registered buffer until `put_buffer`.
pub(crate) fn hold_buffer(ctx: &Ctx, r: &mut super::req::Req) {
    let mut g = ctx.rsrc.lock();
    let Some(node) = g.bufs.as_ref().and_then(|t| t.get(r.sqe.buf_index as usize).copied().flatten()).map(|b| b.node)
    else {
        return;
    };
    g.holders.push((r.id, node));
    r.flags |= super::req::rf::BUF_HELD;
}

/// Request `id` is freed: the tag of a buffer removed while it used it is
/// posted if no other request still uses it.
pub(crate) fn put_buffer(ctx: &Ctx, id: u64) {
    with_rsrc(ctx, |rs| {
        let Some(i) = rs.holders.iter().position(|&(r, _)| r == id) else { return Ok(0) };
        let (_, node) = rs.holders.swap_remove(i);
        if !rs.holders.iter().any(|&(_, n)| n == node) {
            let (due, kept): (Vec<_>, Vec<_>) = rs.held_tags.drain(..).partition(|&(n, _)| n == node);
            rs.held_tags = kept;
            rs.tags.extend(due.into_iter().map(|(_, c)| c));
        }
        Ok(0)
    });
}

/// `fixed_span` for every iovec of a vectored fixed-buffer request
/// (READV_FIXED, WRITEV_FIXED, SENDMSG_ZC); Linux 6.18 refuses empty
/// iovecs there too.
pub(crate) fn fixed_iovecs(ctx: &Ctx, idx: u16, iov: &[libc::iovec]) -> Result<(), i32> {
    let (base, blen) = ctx.rsrc.lock().buffer(idx).ok_or(-libc::EFAULT)?;
    let inside = |v: &libc::iovec| {
        let a = v.iov_base as u64;
        v.iov_len != 0 && a >= base && a.checked_add(v.iov_len as u64).is_some_and(|e| e <= base + blen)
    };
    if iov.iter().all(inside) {
        Ok(())
    } else {
        Err(-libc::EFAULT)
    }
}

/// Installs `fd` into the fixed table at `slot` (or a free slot for
/// IORING_FILE_INDEX_ALLOC); returns the slot for ALLOC, else 0. On
/// failure the fd is closed.
pub(crate) fn install_fixed(ctx: &Ctx, fd: i32, slot: u32) -> i32 {
    let fd = fileref::to_engine_number(fd);
    with_rsrc(ctx, |rs| {
        let r = if slot == crate::sys::IORING_FILE_INDEX_ALLOC {
            rs.alloc_slot().and_then(|i| rs.install(i, fd).map(|_| i as i32))
        } else {
            rs.install(slot, fd).map(|_| 0)
        };
        r.inspect_err(|_| fileref::close_file(fd))
    })
}

/// Removes fixed file `slot` (IORING_OP_CLOSE with a file index).
pub(crate) fn close_fixed(ctx: &Ctx, slot: u32) -> i32 {
    with_rsrc(ctx, |rs| rs.remove(slot).map(|_| 0))
}

fn update_prep(_: &Ctx, r: &mut Req) -> Result<(), i32> {
    if r.sqe.op_flags != 0 || r.sqe.file_index != 0 || r.sqe.len == 0 {
        return Err(-libc::EINVAL);
    }
    Ok(())
}

/// IORING_OP_FILES_UPDATE: like IORING_REGISTER_FILES_UPDATE, or with
/// IORING_FILE_INDEX_ALLOC, into free slots whose indexes are written back
/// over the fds.
fn update_issue(ctx: &Ctx, req: ReqPtr, _: Mode) -> Issued {
    // SAFETY: issue functions own their request.
    let s = unsafe { req.get() }.sqe;
    if s.off as u32 != crate::sys::IORING_FILE_INDEX_ALLOC {
        return Issued::Done(update_files(ctx, s.off as u32, s.addr, 0, s.len), 0);
    }
    if ctx.rsrc.lock().files.is_none() {
        return Issued::Done(-libc::ENXIO, 0);
    }
    let mut done = 0;
    let mut err = 0;
    for i in 0..s.len as u64 {
        let at = s.addr + i * 4;
        let fd: i32 = match read_val(at) {
            Ok(v) => v,
            Err(e) => {
                err = e;
                break;
            }
        };
        let slot = match take_file(fd) {
            Ok(d) => install_fixed(ctx, d, crate::sys::IORING_FILE_INDEX_ALLOC),
            Err(e) => e,
        };
        if slot < 0 {
            err = slot;
            break;
        }
        if let Err(e) = os::copy_to_user(at, &slot as *const i32 as *const u8, 4) {
            close_fixed(ctx, slot as u32);
            err = e;
            break;
        }
        done += 1;
    }
    Issued::Done(partial(done, err), 0)
}

pub(crate) const FILES_UPDATE: OpDef =
    OpDef { prep: update_prep, issue: update_issue, iopoll: true, creds: false, ..BASE };
