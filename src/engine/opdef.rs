//! One row per opcode the engine implements: how to prepare and issue it,
//! whether it needs a file, whether it may run inline, and what readiness
//! it waits for on a pollable file. Opcodes without a row complete with
//! -EINVAL, exactly as on a kernel that predates them, and the probe
//! reports the rows and nothing else.

use super::ctx::Ctx;
use super::req::{Issued, Mode, Req, ReqPtr};
use crate::sys::*;

#[derive(Clone, Copy)]
pub(crate) struct OpDef {
    /// Checks the SQE and records what the op needs (at submission).
    pub prep: fn(&Ctx, &mut Req) -> Result<(), i32>,
    /// Does the work; see [`Issued`].
    pub issue: fn(&Ctx, ReqPtr, Mode) -> Issued,
    /// Copies user memory the op reads later (iovecs, paths) before the
    /// request leaves the submitting call.
    pub stabilize: fn(&mut Req) -> Result<(), i32>,
    /// Readiness (EPOLLIN/EPOLLOUT) to wait for when the file is pollable;
    /// 0 sends blocked work to the worker pool instead.
    pub poll_mask: fn(&Req) -> u32,
    /// The SQE's fd (or fixed file) is resolved before issue.
    pub needs_file: bool,
    /// Never attempted inline: always a worker (ops that block in the
    /// kernel too, e.g. fsync).
    pub force_async: bool,
    /// Accepts a non-zero `ioprio`.
    pub ioprio: bool,
    /// Accepts IOSQE_BUFFER_SELECT.
    pub buffer_select: bool,
}

pub(crate) fn stable(_: &mut Req) -> Result<(), i32> {
    Ok(())
}

pub(crate) fn no_poll(_: &Req) -> u32 {
    0
}

pub(crate) const BASE: OpDef = OpDef {
    prep: |_, _| Ok(()),
    issue: |_, _, _| Issued::Done(-libc::EINVAL, 0),
    stabilize: stable,
    poll_mask: no_poll,
    needs_file: false,
    force_async: false,
    ioprio: false,
    buffer_select: false,
};

const N: usize = IORING_OP_LAST as usize;

static TABLE: [Option<OpDef>; N] = {
    let mut t: [Option<OpDef>; N] = [None; N];
    t[IORING_OP_NOP as usize] = Some(super::nop::NOP);
    t
};

/// The row for `opcode`, if the engine implements it.
#[inline]
pub(crate) fn lookup(opcode: u8) -> Option<&'static OpDef> {
    TABLE.get(opcode as usize).and_then(|d| d.as_ref())
}

/// The row of an opcode already accepted at submission.
#[inline]
pub(crate) fn get(opcode: u8) -> &'static OpDef {
    lookup(opcode).unwrap_or(&BASE)
}

/// Whether the engine implements `opcode` (the probe's answer).
pub(crate) fn supported(opcode: u32) -> bool {
    opcode < N as u32 && TABLE[opcode as usize].is_some()
}
