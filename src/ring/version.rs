//! The library's version, as `io_uring_major_version()` and friends report it.

pub const MAJOR: i32 = 2;
pub const MINOR: i32 = 15;

/// `io_uring_check_version`: true when the library is *older* than
/// `major.minor`, mirroring the `IO_URING_CHECK_VERSION` macro.
pub fn check_version(major: i32, minor: i32) -> bool {
    major > MAJOR || (major == MAJOR && minor > MINOR)
}

#[cfg(test)]
mod tests {
    #[test]
    fn check_version_is_true_only_for_newer_requests() {
        use super::check_version;
        assert!(!check_version(2, 15));
        assert!(!check_version(2, 0));
        assert!(!check_version(1, 99));
        assert!(check_version(2, 16));
        assert!(check_version(3, 0));
    }
}
