//! Memory shared with the kernel (or the engine) and the pages under it:
//! atomic access to ring words, the page size, and what the process has
//! mapped. Used by the ring logic, the engine and the diagnostics alike.

use core::sync::atomic::{AtomicU32, Ordering};

/// Loads a ring index the kernel publishes, ordering later reads of the
/// entries it covers after it.
///
/// # Safety
/// `p` points into a live ring mapping (4-byte aligned, shared with the kernel).
#[inline(always)]
pub unsafe fn load_acquire(p: *const u32) -> u32 {
    // SAFETY: per the contract, `p` is a valid, aligned u32 that the kernel
    // updates concurrently, which is exactly what AtomicU32 models.
    unsafe { (*(p as *const AtomicU32)).load(Ordering::Acquire) }
}

/// Reads a shared ring word with no ordering (a `READ_ONCE`).
///
/// # Safety
/// As for [`load_acquire`].
#[inline(always)]
pub unsafe fn load_relaxed(p: *const u32) -> u32 {
    // SAFETY: see load_acquire.
    unsafe { (*(p as *const AtomicU32)).load(Ordering::Relaxed) }
}

/// Publishes a ring index to the kernel after all earlier writes.
///
/// # Safety
/// As for [`load_acquire`].
#[inline(always)]
pub unsafe fn store_release(p: *mut u32, v: u32) {
    // SAFETY: see load_acquire.
    unsafe { (*(p as *const AtomicU32)).store(v, Ordering::Release) }
}

/// The system page size, read once.
pub fn page_size() -> usize {
    use core::sync::atomic::AtomicUsize;
    static PAGE_SIZE: AtomicUsize = AtomicUsize::new(0);
    let cached = PAGE_SIZE.load(Ordering::Relaxed);
    if cached != 0 {
        return cached;
    }
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let v = if v > 0 { v as usize } else { 4096 };
    PAGE_SIZE.store(v, Ordering::Relaxed);
    v
}

/// Whether the page holding `p` is mapped in this process (a forked child
/// lacks the pages io_uring_ring_dontfork kept from it).
pub fn page_mapped(p: *const u8) -> bool {
    let page = p as usize & !(page_size() - 1);
    let mut v = 0u8;
    // SAFETY: mincore only reports on the range (ENOMEM when unmapped).
    unsafe { libc::mincore(page as *mut libc::c_void, 1, &mut v) == 0 }
}

/// Whether the pages holding `len` bytes from `addr` are mapped writable: the
/// kernel pins them for writing, and faulting them in for writing
/// (MADV_POPULATE_WRITE, which never changes contents) fails the same
/// way. Read-only memory gets EINVAL, as does a kernel without the
/// advice: a page of our own stack tells the two apart.
pub fn writable(addr: u64, len: usize) -> bool {
    let page = page_size();
    const MADV_POPULATE_WRITE: i32 = 23;
    let populate = |a: usize, n: usize| {
        // SAFETY: populating only faults pages in; it changes no memory.
        // errno's location is valid for the calling thread.
        unsafe {
            if libc::madvise(a as *mut libc::c_void, n, MADV_POPULATE_WRITE) == 0 {
                0
            } else {
                *libc::__errno_location()
            }
        }
    };
    let start = addr as usize & !(page - 1);
    let end = (addr as usize).saturating_add(len).saturating_add(page - 1) & !(page - 1);
    match populate(start, end - start) {
        0 => true,
        libc::EINVAL => {
            let here = 0u8;
            populate(&here as *const u8 as usize & !(page - 1), page) != 0
        }
        _ => false,
    }
}
