//! The project's own diagnostics exports (version node URING_RS_1.0).

use core::ffi::c_char;

use crate::diag::setup;

#[no_mangle]
pub extern "C" fn liburing_rs_setup_error() -> *const c_char {
    setup::last_error()
}
