//! uring-run: runs a program with its raw io_uring system calls served by
//! liburing-rs's userspace engine where the kernel refuses them.
//!
//!     uring-run [--] PROGRAM [ARG...]
//!
//! It preloads the library (`LD_PRELOAD`) and sets
//! `LIBURING_RS_INTERCEPT=1`, then execs PROGRAM (searched in PATH); the
//! library does the rest when it loads (see `src/intercept/`). The library
//! is the one next to this program (`../lib/liburing.so.2`, as in the build
//! tree and a `make install`), else `liburing.so.2` from the loader's path.
//! After it comes `liburing-rs-syscall.so.2.15` (src/preload-syscall.c),
//! glibc's syscall(3) with the io_uring calls served by a function call
//! rather than a trap: from beside the library, else from the loader's
//! path if the loader finds it there; left out where it is found nowhere,
//! as the loader would complain of it in every process.
//!
//! no_std with a C `main`, as uring-info is (see its header for why).
#![no_std]
#![no_main]

#[cfg(not(panic = "abort"))]
extern crate std;

extern crate alloc;
// The library brings the panic handler and the allocator.
extern crate uring;

#[link(name = "c")]
extern "C" {}

use alloc::vec::Vec;
use core::ffi::{c_char, c_int, CStr};

const USAGE: &[u8] = b"usage: uring-run [--] PROGRAM [ARG...]\n\
    \n\
    Runs PROGRAM with its io_uring system calls served by liburing-rs's\n\
    userspace engine where the kernel refuses io_uring (a container's\n\
    seccomp profile, the kernel.io_uring_disabled sysctl), with the\n\
    seccomp policy still applied to every operation.\n";

fn out(fd: c_int, parts: &[&[u8]]) {
    for p in parts {
        // SAFETY: writes p.len() initialised bytes.
        unsafe { libc::write(fd, p.as_ptr() as *const libc::c_void, p.len()) };
    }
}

/// `name` beside this program (in `../lib/`), if it is there.
fn beside(name: &[u8]) -> Option<Vec<u8>> {
    let mut buf = [0u8; 4096];
    // SAFETY: readlink writes at most buf.len() bytes into buf.
    let n = unsafe { libc::readlink(c"/proc/self/exe".as_ptr(), buf.as_mut_ptr() as *mut c_char, buf.len()) };
    if n <= 0 || n as usize >= buf.len() {
        return None;
    }
    let exe = &buf[..n as usize];
    let slash = exe.iter().rposition(|&b| b == b'/')?;
    let mut p = exe[..slash].to_vec();
    p.extend_from_slice(b"/../lib/");
    p.extend_from_slice(name);
    p.push(0);
    // SAFETY: p is NUL-terminated.
    if unsafe { libc::access(p.as_ptr() as *const c_char, libc::R_OK) } != 0 {
        return None;
    }
    p.pop();
    Some(p)
}

/// The library beside this program, else its name for the loader's path.
fn library() -> Vec<u8> {
    beside(b"liburing.so.2").unwrap_or_else(|| b"liburing.so.2".to_vec())
}

/// The syscall(3) preload object beside this program, else its name if
/// the loader finds it (a trial load: it has no constructor, and its one
/// export is not made global), else none.
fn syscall_object() -> Option<Vec<u8>> {
    const NAME: &CStr = c"liburing-rs-syscall.so.2.15";
    if let Some(p) = beside(NAME.to_bytes()) {
        return Some(p);
    }
    // SAFETY: a NUL-terminated name; the handle, if any, is closed at once.
    unsafe {
        let h = libc::dlopen(NAME.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL);
        if h.is_null() {
            return None;
        }
        libc::dlclose(h);
    }
    Some(NAME.to_bytes().to_vec())
}

#[no_mangle]
pub extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // SAFETY: argv holds argc valid C strings and a terminating null.
    let arg = |i: usize| unsafe { CStr::from_ptr(*argv.add(i)) }.to_bytes();
    let mut first = 1usize;
    if (first as c_int) < argc {
        match arg(first) {
            b"--" => first += 1,
            b"-h" | b"--help" => {
                out(1, &[USAGE]);
                return 0;
            }
            a if a.starts_with(b"-") => {
                out(2, &[b"uring-run: unknown option ", a, b"\n", USAGE]);
                return 2;
            }
            _ => {}
        }
    }
    if first as c_int >= argc {
        out(2, &[USAGE]);
        return 2;
    }
    let mut preload = library();
    if let Some(o) = syscall_object() {
        preload.push(b':');
        preload.extend_from_slice(&o);
    }
    // SAFETY: getenv returns null or a NUL-terminated string.
    let old = unsafe { libc::getenv(c"LD_PRELOAD".as_ptr()) };
    if !old.is_null() {
        // SAFETY: non-null: a C string.
        let old = unsafe { CStr::from_ptr(old) }.to_bytes();
        if !old.is_empty() {
            preload.push(b':');
            preload.extend_from_slice(old);
        }
    }
    preload.push(0);
    // SAFETY: NUL-terminated names and values; the process is still
    // single-threaded.
    let set = unsafe {
        libc::setenv(c"LD_PRELOAD".as_ptr(), preload.as_ptr() as *const c_char, 1) == 0
            && libc::setenv(c"LIBURING_RS_INTERCEPT".as_ptr(), c"1".as_ptr(), 1) == 0
    };
    if !set {
        out(2, &[b"uring-run: cannot set the environment\n"]);
        return 126;
    }
    // SAFETY: argv[first..] is a null-terminated array of C strings.
    unsafe { libc::execvp(*argv.add(first), argv.add(first)) };
    // SAFETY: errno's location is valid for this thread.
    let e = unsafe { *libc::__errno_location() };
    // SAFETY: strerror returns a valid C string.
    let msg = unsafe { CStr::from_ptr(libc::strerror(e)) }.to_bytes();
    out(2, &[b"uring-run: ", arg(first), b": ", msg, b"\n"]);
    if e == libc::ENOENT {
        127
    } else {
        126
    }
}
