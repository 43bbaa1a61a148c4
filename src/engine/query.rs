//! IORING_REGISTER_QUERY: what the engine supports, in the kernel's
//! format (a chain of headers, each naming a query and its answer's
//! buffer). The engine answers IO_URING_QUERY_OPCODES only, as Linux
//! 6.18 does; any other query gets -EOPNOTSUPP in its header.

use super::os;
use crate::sys::*;

/// Entries followed at most before a chain counts as a cycle (-ERANGE).
const MAX_ENTRIES: u32 = 1000;

/// The whole call: 0 once every entry of the chain at `arg` is answered,
/// or the first failure to reach one.
pub(crate) fn query(arg: u64, nr: u32) -> i32 {
    if nr != 0 {
        return -libc::EINVAL;
    }
    let (mut at, mut n) = (arg, 0);
    while at != 0 {
        at = match entry(at) {
            Ok(next) => next,
            Err(e) => return e,
        };
        n += 1;
        if n >= MAX_ENTRIES {
            return -libc::ERANGE;
        }
    }
    0
}

fn opcodes() -> io_uring_query_opcode {
    io_uring_query_opcode {
        nr_request_opcodes: IORING_OP_LAST as u32,
        nr_register_opcodes: IORING_REGISTER_LAST,
        feature_flags: super::setup::FEATURES as u64,
        ring_setup_flags: super::setup::KNOWN_FLAGS as u64,
        enter_flags: super::wait::ENTER_FLAGS as u64,
        sqe_flags: super::submit::SQE_VALID_FLAGS as u64,
        nr_query_opcodes: 1,
        __pad: 0,
    }
}

/// Answers the entry at `uhdr`; returns the next one's address.
fn entry(uhdr: u64) -> Result<u64, i32> {
    let mut hdr = io_uring_query_hdr { next_entry: 0, query_data: 0, query_op: 0, size: 0, result: 0, __resv: [0; 3] };
    let hsize = core::mem::size_of::<io_uring_query_hdr>();
    os::copy_from_user(&mut hdr as *mut io_uring_query_hdr as *mut u8, uhdr, hsize)?;
    let answer = opcodes();
    let usize = hdr.size as usize;
    let size = usize.min(core::mem::size_of::<io_uring_query_opcode>());
    let result = if hdr.query_op != IO_URING_QUERY_OPCODES {
        -libc::EOPNOTSUPP
    } else if hdr.__resv != [0; 3] || hdr.result != 0 || size == 0 {
        -libc::EINVAL
    } else {
        // As the kernel, which reads the buffer before it answers.
        let mut scratch = [0u8; core::mem::size_of::<io_uring_query_opcode>()];
        os::copy_from_user(scratch.as_mut_ptr(), hdr.query_data, size)?;
        0
    };
    // The answer, cut to the caller's size, then zeros up to that size.
    let written = if result == 0 { size } else { 0 };
    if written != 0 {
        os::copy_to_user(hdr.query_data, &answer as *const io_uring_query_opcode as *const u8, written)?;
    }
    let zeros = [0u8; 256];
    let mut at = written;
    while at < usize {
        let n = (usize - at).min(zeros.len());
        os::copy_to_user(hdr.query_data + at as u64, zeros.as_ptr(), n)?;
        at += n;
    }
    hdr.result = result;
    hdr.size = written as u32;
    os::copy_to_user(uhdr, &hdr as *const io_uring_query_hdr as *const u8, hsize)?;
    Ok(hdr.next_entry)
}
