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

/// `-EINVAL` as liburing's functions return it.
pub(crate) const EINVAL: i32 = -libc::EINVAL;

mod engine;
mod queue;
mod register;
mod setup;
mod syscall;
mod version;
