//! The exported C surface: one `extern "C"` shim per liburing symbol.
//!
//! Every shim follows the same prologue: wrap the ring pointer with
//! [`ring!`] and turn each other pointer argument into a reference with
//! [`arg!`] (a null pointer returns the function's error value, `-EINVAL` or
//! null), then call into [`crate::ring`]. No logic lives here: the hooks
//! into the diagnostics and the engine sit in the ring logic.

/// Borrows a C pointer argument, or returns `$err` when it is null.
///
/// Callers across the C ABI promise that a non-null pointer is valid and
/// unaliased for the call, as liburing's documentation requires; null is the
/// one misuse we can detect, and it gets an error instead of a crash.
macro_rules! arg {
    ($p:expr) => {
        arg!($p, ())
    };
    ($p:expr, $err:expr) => {
        // SAFETY: see the macro's documentation.
        match unsafe { $p.as_mut() } {
            Some(r) => r,
            #[allow(clippy::unused_unit)]
            None => return $err,
        }
    };
}

/// Wraps the caller's `struct io_uring *` in a [`crate::ring::Ring`], or
/// returns `$err` when it is null. No reference to the struct is made: other
/// threads may be inside other calls on the same ring.
macro_rules! ring {
    ($p:expr) => {
        ring!($p, ())
    };
    ($p:expr, $err:expr) => {
        // SAFETY: liburing's contract: a non-null ring pointer addresses a
        // struct io_uring (of any alignment) that lives for the call, used
        // by the caller's threads as liburing's documentation allows.
        match unsafe { crate::ring::Ring::new($p) } {
            Some(r) => r,
            #[allow(clippy::unused_unit)]
            None => return $err,
        }
    };
}

/// A wait or peek call on `ring`: wraps it as [`ring!`] does, through the
/// ring logic's diagnostics hook (`ring::queue::call`).
macro_rules! queue_call {
    ($ring:ident, $err:expr, $kind:ident, |$r:ident| $body:expr) => {{
        let body = move |$r: crate::ring::Ring<'_>| $body;
        // SAFETY: see ring!.
        unsafe { crate::ring::queue::call($ring, $err, crate::ring::queue::Call::$kind, body) }
    }};
}

/// `-EINVAL` as liburing's functions return it.
pub(crate) const EINVAL: i32 = -libc::EINVAL;

mod diag;
mod engine;
mod queue;
mod register;
mod setup;
mod syscall;
mod version;
