// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
//! iopa's io_uring commands as `io-uring` entries (`IORING_OP_URING_CMD`,
//! `UringCmd80`: the ring must be built with 128-byte SQEs,
//! `io_uring::IoUring::<squeue::Entry128, cqueue::Entry>::builder()`).
//! They carry what libiopa's `iopa_prep_submit()`, `iopa_prep_fetch()`
//! and `iopa_prep_commit_and_fetch()` put in an SQE.
//!
//! - [`submit`]: one job on a submitter; its CQE comes when the job ends,
//!   `result()` the worker's result (or `-ECANCELED`).
//! - [`fetch`], [`commit_and_fetch`]: a worker's next job, written to a
//!   [`Work`] buffer that must stay put until the CQE (result 0) comes;
//!   then [`crate::Fetched::from_work`] takes its fd.

use std::os::fd::{AsRawFd, BorrowedFd};

use io_uring::{opcode, squeue, types};

use crate::sys;
use crate::{Job, Work};

fn cmd(fd: BorrowedFd<'_>, op: u32, payload: &[u8]) -> opcode::UringCmd80 {
    let mut c = [0u8; 80];
    c[..payload.len()].copy_from_slice(payload);
    opcode::UringCmd80::new(types::Fd(fd.as_raw_fd()), op).cmd(c)
}

fn bytes_of<T: Copy>(v: &T) -> &[u8] {
    // The ABI structures are plain old data without padding.
    unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) }
}

/// `IOPA_URING_CMD_SUBMIT` of `job` on submitter `sub`.  The job is
/// copied into the entry; its file must stay open until the entry is
/// submitted.
pub fn submit(sub: BorrowedFd<'_>, job: &Job) -> squeue::Entry128 {
    cmd(sub, sys::URING_CMD_SUBMIT, bytes_of(job)).build()
}

fn fetch_op(worker: BorrowedFd<'_>, op: u32, work: *mut Work, res: i32) -> squeue::Entry128 {
    let f = sys::UringFetch {
        work: work as u64,
        res,
        flags: 0,
    };
    cmd(worker, op, bytes_of(&f)).build()
}

/// `IOPA_URING_CMD_FETCH` on worker `worker`, into `work`.
///
/// # Safety
/// `work` must stay valid, and not be read or moved, until the entry's
/// CQE has come.
pub unsafe fn fetch(worker: BorrowedFd<'_>, work: *mut Work) -> squeue::Entry128 {
    fetch_op(worker, sys::URING_CMD_FETCH, work, 0)
}

/// `IOPA_URING_CMD_COMMIT_AND_FETCH`: completes the job the worker holds
/// with `res`, and fetches the next into `work`.
///
/// # Safety
/// As [`fetch`].
pub unsafe fn commit_and_fetch(worker: BorrowedFd<'_>, work: *mut Work, res: i32) -> squeue::Entry128 {
    fetch_op(worker, sys::URING_CMD_COMMIT_AND_FETCH, work, res)
}
