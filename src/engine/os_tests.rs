//! `copy_str_from_user`, the copy every path argument takes: exact
//! results around its first short read and at page ends, and the kernel's
//! errors (getname's) for a string that is too long or not mapped.

use std::vec::Vec;

use super::*;

/// Two pages, the second made inaccessible: a string may end right
/// before it.
struct Guarded {
    base: *mut u8,
    page: usize,
}

impl Guarded {
    fn new() -> Guarded {
        let page = crate::sys::mem::page_size();
        // SAFETY: a fresh private mapping; the second page is then made
        // inaccessible.
        let base = unsafe {
            let p = libc::mmap(
                core::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(libc::mprotect((p as *mut u8).add(page) as *mut c_void, page, libc::PROT_NONE), 0);
            p as *mut u8
        };
        Guarded { base, page }
    }

    /// Writes `s` and its NUL so that the NUL is the first page's last byte.
    fn at_end(&self, s: &[u8]) -> u64 {
        assert!(s.len() < self.page);
        let at = self.page - s.len() - 1;
        // SAFETY: inside the first (writable) page.
        unsafe {
            core::ptr::copy_nonoverlapping(s.as_ptr(), self.base.add(at), s.len());
            *self.base.add(self.page - 1) = 0;
        }
        self.base as u64 + at as u64
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`.
        unsafe { libc::munmap(self.base as *mut c_void, 2 * self.page) };
    }
}

fn with_nul(s: &[u8]) -> Vec<u8> {
    let mut v = s.to_vec();
    v.push(0);
    v
}

#[test]
fn lengths_around_the_first_read() {
    for n in [0, 1, 254, 255, 256, 257, 511, 1000, 4000, 4095] {
        let s = alloc::vec![b'x'; n];
        let c = with_nul(&s);
        let got = copy_str_from_user(c.as_ptr() as u64, 4096).unwrap();
        assert_eq!(&got[..], &c[..], "length {n}");
    }
}

#[test]
fn strings_ending_at_an_inaccessible_page() {
    let g = Guarded::new();
    for n in [0, 10, 255, 256, 300, g.page - 2] {
        let s = alloc::vec![b'p'; n];
        let at = g.at_end(&s);
        let got = copy_str_from_user(at, 4096).unwrap();
        assert_eq!(&got[..], &with_nul(&s)[..], "length {n}");
    }
}

#[test]
fn errors() {
    let g = Guarded::new();
    // No NUL before the inaccessible page: the copy faults.
    // SAFETY: fills the first page, which is writable.
    unsafe { core::ptr::write_bytes(g.base, b'q', g.page) };
    assert_eq!(copy_str_from_user(g.base as u64 + 100, 8192), Err(-libc::EFAULT));
    assert_eq!(copy_str_from_user(g.base as u64 + g.page as u64, 4096), Err(-libc::EFAULT));
    assert_eq!(copy_str_from_user(0, 4096), Err(-libc::EFAULT));
    // `max` counts the NUL: 4095 bytes and a NUL fit in 4096, 4096 do not.
    let long = with_nul(&alloc::vec![b'l'; 4096]);
    assert_eq!(copy_str_from_user(long.as_ptr() as u64, 4096), Err(-libc::ENAMETOOLONG));
    assert_eq!(copy_str_from_user(long.as_ptr() as u64, 4097).map(|b| b.len()), Ok(4097));
    // A limit below the first read's length still holds.
    assert_eq!(copy_str_from_user(long.as_ptr() as u64, 10), Err(-libc::ENAMETOOLONG));
    assert_eq!(copy_str_from_user(b"abc\0".as_ptr() as u64, 4).map(|b| b.len()), Ok(4));
}
