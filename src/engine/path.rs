//! Path arguments: copied from caller memory at submission, as the
//! kernel's getname() does, with its errors.

use alloc::boxed::Box;

use super::os;

const PATH_MAX: usize = 4096;

/// A path copied at submission (NUL included).
pub(crate) type Path = Box<[u8]>;

/// getname(): -EFAULT, -ENAMETOOLONG, or -ENOENT for an empty path unless
/// `empty_ok` (AT_EMPTY_PATH).
pub(crate) fn get(addr: u64, empty_ok: bool) -> Result<Path, i32> {
    let p = os::copy_str_from_user(addr, PATH_MAX)?;
    if p.len() == 1 && !empty_ok {
        return Err(-libc::ENOENT);
    }
    Ok(p)
}

pub(crate) fn ptr(p: &Path) -> *const libc::c_char {
    p.as_ptr() as *const libc::c_char
}
