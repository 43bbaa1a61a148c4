//! Line formatting without allocation: lines are written into a buffer on
//! the caller's stack and reach the file descriptor in one `write` per
//! buffer-full (normally one per library call).

use super::decode::{self, Names};

/// Room for one batch of lines; a hook call that produces more writes more
/// than once.
const BUF: usize = 8192;
/// A single line never takes more than this (longer ones are cut).
const LINE_MAX: usize = 1024;

pub struct Out {
    fd: i32,
    buf: [u8; BUF],
    len: usize,
    line_start: usize,
    /// A second descriptor that gets the same bytes (check lines also go to
    /// a trace file), or -1.
    copy_fd: i32,
    /// Lines never straddle a page of the file (see [`Out::page_safe`]).
    page_safe: bool,
}

/// The unit in which a write to a file may be cut short.
const PAGE: u64 = 4096;
static SPACES: [u8; PAGE as usize] = [b' '; PAGE as usize];

impl Out {
    pub fn new(fd: i32, copy_fd: i32) -> Out {
        Out {
            fd,
            buf: [0; BUF],
            len: 0,
            line_start: 0,
            copy_fd: if copy_fd == fd { -1 } else { copy_fd },
            page_safe: false,
        }
    }

    /// From now on, a line that would straddle a page boundary of the file
    /// starts on the next page instead, after spaces. A process killed
    /// while writing loses whole pages at most (the kernel copies a write
    /// page by page and stops between pages for a fatal signal), so the
    /// file never ends inside a line: a JSON trace stays parseable.
    pub fn page_safe(&mut self) -> &mut Self {
        self.page_safe = true;
        self
    }

    /// What has been written and not flushed.
    pub fn text(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Starts a line; flushes first if a full line might not fit.
    #[inline(never)]
    pub fn begin(&mut self) -> &mut Self {
        if BUF - self.len < LINE_MAX {
            self.flush();
        }
        self.line_start = self.len;
        self
    }

    #[inline(never)]
    pub fn end(&mut self) {
        self.put(b"\n");
        // A cut line still needs its newline.
        if let Some(last) = self.len.checked_sub(1).and_then(|i| self.buf.get_mut(i)) {
            *last = b'\n';
        }
    }

    #[inline(never)]
    pub fn put(&mut self, b: &[u8]) -> &mut Self {
        let room = (self.line_start + LINE_MAX).min(BUF).saturating_sub(self.len);
        let n = b.len().min(room);
        if let (Some(dst), Some(src)) = (self.buf.get_mut(self.len..self.len + n), b.get(..n)) {
            dst.copy_from_slice(src);
            self.len += n;
        }
        self
    }

    pub fn s(&mut self, s: &str) -> &mut Self {
        self.put(s.as_bytes())
    }

    /// Decimal; digits come out most significant first through recursion,
    /// which keeps this (and `hex`, `oct`) small.
    pub fn u(&mut self, v: u64) -> &mut Self {
        self.digits(v, 10)
    }

    #[inline(never)]
    fn digits(&mut self, v: u64, base: u64) -> &mut Self {
        if v >= base {
            self.digits(v / base, base);
        }
        self.put(&[b"0123456789abcdef"[(v % base) as usize % 16]])
    }

    pub fn i(&mut self, v: i64) -> &mut Self {
        if v < 0 {
            self.s("-").u(v.unsigned_abs())
        } else {
            self.u(v as u64)
        }
    }

    /// `v` zero-padded to `width` decimal digits.
    pub fn u_pad(&mut self, v: u64, width: u32) -> &mut Self {
        let mut x = v;
        for _ in 1..width {
            x /= 10;
            if x == 0 {
                self.s("0");
            }
        }
        self.u(v)
    }

    pub fn hex(&mut self, v: u64) -> &mut Self {
        self.s("0x").digits(v, 16)
    }

    pub fn oct(&mut self, v: u32) -> &mut Self {
        self.s("0");
        if v != 0 {
            self.digits(v as u64, 8);
        }
        self
    }

    /// `A|B|0x40`, or `0` when no bit is set.
    #[inline(never)]
    pub fn flags(&mut self, v: u64, names: &Names) -> &mut Self {
        if v == 0 {
            return self.s("0");
        }
        let mut rest = v;
        let mut sep = "";
        for (bit, name) in names.pairs() {
            let bit = bit as u64;
            if bit != 0 && rest & bit == bit {
                self.s(sep).s(name);
                sep = "|";
                rest &= !bit;
            }
        }
        if rest != 0 {
            self.s(sep).hex(rest);
        }
        self
    }

    /// A result: `-EAGAIN` when negative (number if unnamed), else decimal.
    #[inline(never)]
    pub fn res(&mut self, res: i32) -> &mut Self {
        if res < 0 {
            if let Some(name) = decode::ERRNO.of(res.unsigned_abs()) {
                return self.s("-").s(name);
            }
        }
        self.i(res as i64)
    }

    /// CQE flags with the provided-buffer id: `F_BUFFER(17)|F_MORE`.
    pub fn cqe_flags(&mut self, flags: u32) -> &mut Self {
        use crate::sys::{IORING_CQE_BUFFER_SHIFT, IORING_CQE_F_BUFFER};
        if flags & IORING_CQE_F_BUFFER == 0 {
            return self.flags(flags as u64 & 0xffff, &decode::CQE_FLAGS);
        }
        self.s("F_BUFFER(").u((flags >> IORING_CQE_BUFFER_SHIFT) as u64).s(")");
        let rest = flags & 0xffff & !IORING_CQE_F_BUFFER;
        if rest != 0 {
            self.s("|").flags(rest as u64, &decode::CQE_FLAGS);
        }
        self
    }

    /// A duration in nanoseconds with a readable unit: `850ns`, `12.345us`,
    /// `1.500ms`, `2.000s`.
    pub fn dur(&mut self, ns: u64) -> &mut Self {
        let (div, unit) = match ns {
            0..=999 => return self.u(ns).s("ns"),
            1_000..=999_999 => (1_000, "us"),
            1_000_000..=999_999_999 => (1_000_000, "ms"),
            _ => (1_000_000_000, "s"),
        };
        self.u(ns / div).s(".").u_pad((ns % div) * 1000 / div, 3).s(unit)
    }

    /// A timespec as seconds, trailing zeros dropped: `1.5s`, `0.001s`, `5s`.
    pub fn ts(&mut self, sec: i64, nsec: i64) -> &mut Self {
        self.i(sec);
        if nsec != 0 {
            let mut frac = nsec.unsigned_abs();
            let mut width = 9;
            while frac % 10 == 0 {
                frac /= 10;
                width -= 1;
            }
            self.s(".").u_pad(frac, width);
        }
        self.s("s")
    }

    /// A NUL-terminated string read from `bytes`, quoted; unprintable bytes
    /// become `\xNN`.
    pub fn quoted(&mut self, bytes: &[u8]) -> &mut Self {
        self.s("\"");
        for &c in bytes {
            match c {
                b'"' | b'\\' => {
                    self.put(&[b'\\', c]);
                }
                0x20..=0x7e => {
                    self.put(&[c]);
                }
                _ => {
                    let hex = b"0123456789abcdef";
                    self.put(&[b'\\', b'x', hex[(c >> 4) as usize], hex[(c & 15) as usize]]);
                }
            }
        }
        self.s("\"")
    }

    /// Writes what is buffered.
    pub fn flush(&mut self) {
        if self.page_safe {
            write_aligned(self.fd, self.text());
        } else {
            write_all(self.fd, self.text());
        }
        if self.copy_fd >= 0 {
            write_all(self.copy_fd, self.text());
        }
        self.len = 0;
        self.line_start = 0;
    }
}

fn write_all(fd: i32, mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: b is a live byte slice; write reads at most b.len() bytes.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        if n > 0 {
            b = b.get(n as usize..).unwrap_or(&[]);
        } else if n < 0 && errno() == libc::EINTR {
            continue;
        } else {
            // A trace that cannot be written is dropped, never a failure
            // of the program being traced.
            return;
        }
    }
}

/// Writes the lines of `b` with spaces before any line that would cross
/// a page boundary of the file (appended at its end); in one `writev`
/// normally. Where the file's end is unknown (not a file), as it is.
fn write_aligned(fd: i32, b: &[u8]) {
    if b.is_empty() {
        return;
    }
    // SAFETY: no memory is passed.
    let end = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
    if end < 0 {
        return write_all(fd, b);
    }
    let mut pos = end as u64;
    let mut iov = [libc::iovec { iov_base: core::ptr::null_mut(), iov_len: 0 }; 32];
    let mut n = 0;
    let mut run = 0;
    let mut at = 0;
    for line in b.split_inclusive(|&c| c == b'\n') {
        let off = pos % PAGE;
        let len = line.len() as u64;
        if off != 0 && off + len > PAGE && len <= PAGE {
            if n + 2 > iov.len() {
                write_iov(fd, &iov[..n]);
                n = 0;
            }
            let before = b.get(run..at).unwrap_or(&[]);
            iov[n] = libc::iovec { iov_base: before.as_ptr() as *mut _, iov_len: before.len() };
            iov[n + 1] = libc::iovec { iov_base: SPACES.as_ptr() as *mut _, iov_len: (PAGE - off) as usize };
            n += 2;
            pos += PAGE - off;
            run = at;
        }
        pos += len;
        at += line.len();
    }
    if n == iov.len() {
        write_iov(fd, &iov[..n]);
        n = 0;
    }
    let rest = b.get(run..).unwrap_or(&[]);
    iov[n] = libc::iovec { iov_base: rest.as_ptr() as *mut _, iov_len: rest.len() };
    write_iov(fd, &iov[..n + 1]);
}

/// `writev` of all of `iov`, finishing a short one piece by piece.
fn write_iov(fd: i32, iov: &[libc::iovec]) {
    // SAFETY: every iovec describes live bytes (a slice or SPACES).
    let mut done = unsafe { libc::writev(fd, iov.as_ptr(), iov.len() as i32) };
    if done < 0 {
        return;
    }
    for v in iov {
        let skip = (done as usize).min(v.iov_len);
        done -= skip as isize;
        if skip < v.iov_len {
            // SAFETY: as above; the rest of this iovec's bytes.
            let rest = unsafe { core::slice::from_raw_parts((v.iov_base as *const u8).add(skip), v.iov_len - skip) };
            write_all(fd, rest);
        }
    }
}

fn errno() -> i32 {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut Out)) -> String {
        let mut o = Out::new(-1, -1);
        o.begin();
        f(&mut o);
        String::from_utf8(o.text().to_vec()).unwrap()
    }

    #[test]
    fn numbers() {
        assert_eq!(
            text(|o| {
                o.u(0).s(" ").u(18446744073709551615).s(" ").i(-42);
            }),
            "0 18446744073709551615 -42"
        );
        assert_eq!(
            text(|o| {
                o.hex(0).s(" ").hex(0xdead_beef).s(" ").oct(0o644).s(" ").oct(0);
            }),
            "0x0 0xdeadbeef 0644 0"
        );
        assert_eq!(
            text(|o| {
                o.u_pad(7, 3);
            }),
            "007"
        );
    }

    #[test]
    fn flag_words() {
        let v = (crate::sys::IOSQE_IO_LINK | crate::sys::IOSQE_FIXED_FILE) as u64;
        assert_eq!(
            text(|o| {
                o.flags(v, &decode::SQE_FLAGS);
            }),
            "FIXED_FILE|LINK"
        );
        assert_eq!(
            text(|o| {
                o.flags(0x80, &decode::SQE_FLAGS);
            }),
            "0x80"
        );
        assert_eq!(
            text(|o| {
                o.flags(0, &decode::SQE_FLAGS);
            }),
            "0"
        );
        assert_eq!(
            text(|o| {
                o.cqe_flags((17 << 16) | 3);
            }),
            "F_BUFFER(17)|F_MORE"
        );
        assert_eq!(
            text(|o| {
                o.res(-libc::EAGAIN).s(" ").res(4096);
            }),
            "-EAGAIN 4096"
        );
    }

    #[test]
    fn times_and_strings() {
        assert_eq!(
            text(|o| {
                o.dur(850).s(" ").dur(12_345).s(" ").dur(1_500_000).s(" ").dur(2_000_000_000);
            }),
            "850ns 12.345us 1.500ms 2.000s"
        );
        assert_eq!(
            text(|o| {
                o.ts(1, 500_000_000).s(" ").ts(0, 1_000_000).s(" ").ts(5, 0);
            }),
            "1.5s 0.001s 5s"
        );
        assert_eq!(
            text(|o| {
                o.quoted(b"a\"b\n");
            }),
            "\"a\\\"b\\x0a\""
        );
    }

    #[test]
    fn page_safe_lines_never_straddle_a_page() {
        let path = std::env::temp_dir().join(format!("liburing-rs-out-test.{}", std::process::id()));
        let f = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
        for round in 0..40u64 {
            let mut o = Out::new(fd, -1);
            o.page_safe();
            for k in 0..(round % 7 + 1) * 9 {
                o.begin().s(",{\"event\":").u(round * 1000 + k).s(",\"pad\":\"");
                for _ in 0..(k * 37 % 300) {
                    o.s("x");
                }
                o.s("\"}").end();
            }
            o.flush();
        }
        let text = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut at = 0;
        let mut lines = 0;
        for line in text.split_inclusive(|&c| c == b'\n') {
            let trimmed = line.iter().position(|&c| c != b' ').unwrap();
            let start = at + trimmed;
            assert_eq!(start / 4096, (at + line.len() - 1) / 4096, "line at {start} crosses a page");
            at += line.len();
            lines += 1;
        }
        assert!(text.len() > 3 * 4096 && lines > 100);
    }

    #[test]
    fn long_lines_are_cut_and_still_end() {
        let mut o = Out::new(-1, -1);
        o.begin();
        for _ in 0..LINE_MAX {
            o.s("xy");
        }
        o.end();
        assert_eq!(o.len, LINE_MAX);
        assert_eq!(o.buf[LINE_MAX - 1], b'\n');
    }
}
