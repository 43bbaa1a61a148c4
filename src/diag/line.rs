//! A fixed-capacity text line for diagnostics, built without allocating.

use core::fmt;

/// A NUL-terminated line built in place; text beyond the capacity is
/// dropped, so building never fails and never allocates. The `push*`
/// methods keep `core::fmt` (some kilobytes) and panic paths out of the
/// shipped libraries; `write!` works too, for the `uring-info` program.
pub struct Line<const N: usize> {
    buf: [u8; N],
    /// Always below N: the NUL after the text fits.
    len: usize,
}

impl<const N: usize> Line<N> {
    pub const fn new() -> Self {
        Line { buf: [0; N], len: 0 }
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    pub fn as_str(&self) -> &str {
        // Only whole `&str`s are appended and `push` cuts on a char
        // boundary, so the bytes stay valid UTF-8.
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// The text with its terminating NUL, for C.
    pub fn as_bytes_with_nul(&self) -> &[u8] {
        self.buf.get(..self.len + 1).unwrap_or(&[])
    }

    // Not inlined: a message is dozens of pushes.
    #[inline(never)]
    pub fn push(&mut self, s: &str) -> &mut Self {
        // One byte always stays free for the NUL.
        let room = N.saturating_sub(self.len + 1);
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        let src = s.as_bytes().iter().take(take);
        for (d, c) in self.buf.iter_mut().skip(self.len).zip(src) {
            *d = *c;
        }
        self.len += take;
        if let Some(nul) = self.buf.get_mut(self.len) {
            *nul = 0;
        }
        self
    }

    /// `v` in base R (10 or 16, lowercase).
    #[inline(never)]
    fn push_radix<const R: u64>(&mut self, mut v: u64) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        for slot in digits.iter_mut().rev() {
            let d = (v % R) as u8;
            *slot = if d < 10 { b'0' + d } else { b'a' + d - 10 };
            start -= 1;
            v /= R;
            if v == 0 {
                break;
            }
        }
        // The digits are ASCII.
        self.push(core::str::from_utf8(digits.get(start..).unwrap_or(&[])).unwrap_or(""))
    }

    pub fn push_u64(&mut self, v: u64) -> &mut Self {
        self.push_radix::<10>(v)
    }

    pub fn push_i64(&mut self, v: i64) -> &mut Self {
        if v < 0 {
            self.push("-");
        }
        self.push_radix::<10>(v.unsigned_abs())
    }

    pub fn push_hex(&mut self, v: u64) -> &mut Self {
        self.push("0x").push_radix::<16>(v)
    }
}

impl<const N: usize> Default for Line<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Write for Line<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Line;
    use core::fmt::Write;

    #[test]
    fn line_truncates_on_char_boundaries_and_stays_terminated() {
        let mut l = Line::<8>::new();
        l.push("ab").push_u64(12);
        assert_eq!(l.as_str(), "ab12");
        assert_eq!(l.as_bytes_with_nul(), b"ab12\0");
        write!(l, "xé!").unwrap();
        // 7 bytes fit: "ab12x" + 'é' (2 bytes) = 7; '!' is dropped.
        assert_eq!(l.as_str(), "ab12xé");
        l.push("more");
        assert_eq!(l.as_bytes_with_nul().last(), Some(&0));
        assert_eq!(l.as_str(), "ab12xé");
    }

    #[test]
    fn line_numbers() {
        let mut l = Line::<64>::new();
        l.push_u64(0).push(" ").push_u64(u64::MAX).push(" ").push_i64(-1).push(" ").push_i64(i64::MIN);
        l.push(" ").push_hex(0x7ffff).push(" ").push_hex(0);
        assert_eq!(l.as_str(), "0 18446744073709551615 -1 -9223372036854775808 0x7ffff 0x0");
    }
}
