//! The project's `LIBURING_RS_*` settings, read from the environment.

use core::ffi::CStr;

/// The value of `name`, or None when unset or when the process runs with
/// raised privileges (AT_SECURE: setuid, setgid, file capabilities), where
/// whoever started it could otherwise steer a privileged program.
pub fn get(name: &CStr) -> Option<&'static [u8]> {
    // SAFETY: getauxval has no preconditions.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return None;
    }
    // SAFETY: getenv takes a NUL-terminated name and returns null or a
    // NUL-terminated string that stays valid while nobody changes that
    // variable; the library never does.
    let p = unsafe { libc::getenv(name.as_ptr()) };
    // SAFETY: a non-null result is such a string.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes())
}
