//! fork(): an engine ring belongs to the process that created it. In a
//! child, every call on an inherited ring fails with -EBADFD (the child
//! may still tear it down to close its copy of the fd), and the child's
//! own rings start with fresh workers and reactor.

use core::sync::atomic::{AtomicBool, Ordering};

static INSTALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn child() {
    // SAFETY: we are the atfork child handler: the only thread.
    unsafe {
        super::table::after_fork_child();
        super::io_wq::after_fork_child();
        super::reactor::after_fork_child();
        super::waiter::after_fork_child();
        super::futex::after_fork_child();
    }
}

/// Registers the fork handler, once per process.
pub(crate) fn install() {
    if !INSTALLED.swap(true, Ordering::AcqRel) {
        // SAFETY: the handler is a plain extern fn that lives as long as
        // the library.
        unsafe { libc::pthread_atfork(None, None, Some(child)) };
    }
}

/// Whether a ring created under `gen` belongs to this process.
pub(crate) fn ours(gen: u32) -> bool {
    gen == super::table::FORK_GEN.load(Ordering::Relaxed)
}
