//! The exported C surface: one `extern "C"` shim per liburing symbol.
//!
//! Every shim follows the same prologue: turn each pointer argument into a
//! reference with [`arg!`] (a null pointer returns the function's error
//! value, `-EINVAL` or null), then call into [`crate::ring`]. No logic
//! lives here.

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

/// A queue call on `ring`: borrows it as [`arg!`] does, and runs `$body`
/// through the diagnostics room when that is on. A single comparison
/// covers both, so the hot path pays nothing for the diagnostics: the gate
/// is 1 (only NULL lies below it) unless tracing or checking is on.
macro_rules! queue_call {
    ($ring:ident, $err:expr, $kind:ident, |$r:ident| $body:expr) => {{
        if ($ring as usize) < crate::diag::gate() {
            if $ring.is_null() {
                return $err;
            }
            return crate::diag::call($ring, crate::diag::Call::$kind, move || {
                // SAFETY: see arg!; the diagnostics only read the ring.
                let $r = unsafe { &mut *$ring };
                $body
            });
        }
        // SAFETY: non-null; see arg!.
        let $r = unsafe { &mut *$ring };
        $body
    }};
}

/// `-EINVAL` as liburing's functions return it.
pub(crate) const EINVAL: i32 = -libc::EINVAL;

mod queue;
mod register;
mod setup;
mod syscall;
mod version;
