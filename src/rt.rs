//! The runtime of the shipped (`no_std`, `panic = "abort"`) build, for the
//! whole crate and its binaries: the heap (libc's malloc; test builds use
//! std's allocator, the same malloc underneath), the panic handler, and the
//! two unwinding symbols the prebuilt `alloc` and `core` name.

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;

struct Malloc;

/// malloc's own alignment guarantee on the targets we build for.
const MIN_ALIGN: usize = 16;

// SAFETY: each method forwards to the matching libc allocator call, which
// returns memory of at least the requested size and alignment, or null.
unsafe impl GlobalAlloc for Malloc {
    /// # Safety
    /// The `GlobalAlloc::alloc` contract: `l` has a non-zero size.
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if l.align() <= MIN_ALIGN {
            // SAFETY: malloc has no preconditions.
            unsafe { libc::malloc(l.size()) as *mut u8 }
        } else {
            let mut p: *mut c_void = core::ptr::null_mut();
            // SAFETY: the alignment is a power of two and a multiple of the
            // pointer size, as posix_memalign requires.
            if unsafe { libc::posix_memalign(&mut p, l.align(), l.size()) } != 0 {
                return core::ptr::null_mut();
            }
            p as *mut u8
        }
    }

    /// # Safety
    /// The `GlobalAlloc::dealloc` contract: `p` came from this allocator.
    unsafe fn dealloc(&self, p: *mut u8, _: Layout) {
        // SAFETY: p came from malloc or posix_memalign above.
        unsafe { libc::free(p as *mut c_void) }
    }

    /// # Safety
    /// The `GlobalAlloc::realloc` contract: `p` came from this allocator
    /// with layout `l`, and `new_size` is non-zero and fits an `isize`.
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        if l.align() <= MIN_ALIGN {
            // SAFETY: p came from malloc with a compatible alignment.
            return unsafe { libc::realloc(p as *mut c_void, new_size) as *mut u8 };
        }
        // SAFETY: the GlobalAlloc contract: a fresh block, a copy of the
        // smaller size, and the old block released.
        unsafe {
            let n = self.alloc(Layout::from_size_align_unchecked(new_size, l.align()));
            if !n.is_null() {
                core::ptr::copy_nonoverlapping(p, n, l.size().min(new_size));
                self.dealloc(p, l);
            }
            n
        }
    }
}

#[global_allocator]
static ALLOC: Malloc = Malloc;

/// The prebuilt `alloc` crate is compiled for unwinding and names this
/// symbol in its unwind tables. Nothing unwinds here (panic = "abort"), so
/// it is never called; it only has to exist for the link.
#[no_mangle]
extern "C" fn rust_eh_personality() {}

/// Likewise for the landing pads of the prebuilt `alloc` crate: defined
/// here so the libraries do not pull in libgcc_s for a call that never
/// happens.
#[no_mangle]
extern "C" fn _Unwind_Resume() -> ! {
    // SAFETY: abort has no preconditions.
    unsafe { libc::abort() }
}

/// A panic would be a bug; in the C libraries it ends the process at once.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: abort has no preconditions.
    unsafe { libc::abort() }
}
