//! `io_uring_major_version`, `io_uring_minor_version`, `io_uring_check_version`.

use crate::ring::version;

#[no_mangle]
pub extern "C" fn io_uring_major_version() -> i32 {
    version::MAJOR
}

#[no_mangle]
pub extern "C" fn io_uring_minor_version() -> i32 {
    version::MINOR
}

#[no_mangle]
pub extern "C" fn io_uring_check_version(major: i32, minor: i32) -> bool {
    version::check_version(major, minor)
}
