// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
//! iopa: a Rust API for `/dev/iopa`, the kernel's adaptive work queue for
//! file-processing jobs.
//!
//! - [`Context`], [`Submitter`] and [`Worker`]: the ioctl ABI, safely: a
//!   submitter hands the kernel jobs (a file, a byte range, a cookie) and
//!   reaps their completions; a worker fetches them, each with its own fd
//!   of the job's file ([`Fetched`] closes it), and completes them.  The
//!   kernel decides how many of a submitter's jobs run at once (its
//!   in-flight limit, adapted to the throughput the jobs get).
//! - [`uring`]: the same commands as io_uring entries
//!   (`IORING_OP_URING_CMD`, the `io-uring` crate's `UringCmd80` on a
//!   ring with 128-byte SQEs).
//! - [`Pool`]: libiopa's worker pool, with the same fallback: where
//!   `/dev/iopa` cannot be used (no module, no permission, another ABI)
//!   the pool runs in the process with the same adaptive limit, unless
//!   asked for the module only.
//!
//! Why bind libiopa rather than rewrite it: the pool, its in-process job
//! source, the knee cache and the limit's controller (the module's own
//! `kernel/ctl.c`) are C that must behave as the module does; one
//! implementation, tested once, serves C and Rust.  The crate builds
//! those sources itself (`build.rs`: a C compiler and liburing's header)
//! and links them statically.  libiopa's io_uring helpers are C inline
//! functions, so [`uring`] builds the same SQEs with the `io-uring` crate,
//! which Rust programs already drive their rings with.
//!
//! Errors are [`std::io::Error`]s carrying the errno of the call, as the
//! kernel's `Documentation/iopa.rst` lists them.
#![deny(missing_docs)]

pub mod sys;
pub mod uring;

mod pool;
pub use pool::{Pool, PoolInfo, PoolOptions};

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// The path of the device.
pub const DEV_PATH: &str = "/dev/iopa";

/// A job: a file, a byte range of it and a cookie returned with the
/// completion (`struct iopa_job`).
pub type Job = sys::Job;

/// A job's completion as its submitter reaps it (`struct iopa_cqe`).
pub type Completion = sys::Cqe;

/// A job as a worker sees it (`struct iopa_work`).
pub type Work = sys::Work;

/// A negative errno from libiopa as an [`io::Error`], else the value.
pub(crate) fn check(r: i32) -> io::Result<i32> {
    if r < 0 {
        Err(io::Error::from_raw_os_error(-r))
    } else {
        Ok(r)
    }
}

fn timeout_ns(t: Option<Duration>) -> u64 {
    t.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1))
}

impl Job {
    /// A job on the whole file `fd` (offset 0, length 0: to its end, as
    /// the worker reads it), with `user_data` returned on completion.
    pub fn new(fd: BorrowedFd<'_>, user_data: u64) -> Job {
        Job {
            fd: fd.as_raw_fd(),
            user_data,
            ..Job::default()
        }
    }

    /// The byte range `[offset, offset + len)` of the file.
    pub fn range(mut self, offset: u64, len: u64) -> Job {
        self.offset = offset;
        self.len = len;
        self
    }

    /// The job's flags (`sys::JOB_F_*`).
    pub fn flags(mut self, flags: u32) -> Job {
        self.flags = flags;
        self
    }
}

/// A context: an open `/dev/iopa`, from which submitters and workers are
/// made.  Workers serve every submitter of their context.
#[derive(Debug)]
pub struct Context {
    fd: OwnedFd,
}

impl Context {
    /// Opens `/dev/iopa`.  Fails with its errno: `NotFound` without the
    /// module, `PermissionDenied` for a user not in group `iopa`.
    pub fn open() -> io::Result<Context> {
        let fd = check(unsafe { sys::iopa_open() })?;
        Ok(Context {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// What the module offers (`IOPA_IOC_GET_FEATURES`).
    pub fn features(&self) -> io::Result<sys::Features> {
        let mut f = sys::Features::default();
        check(unsafe { sys::iopa_get_features(self.fd.as_raw_fd(), &mut f) })?;
        Ok(f)
    }

    /// A submitter: `limit` 0 lets the kernel adapt its in-flight limit,
    /// else pins it.
    pub fn submitter(&self, limit: u32) -> io::Result<Submitter> {
        let fd = check(unsafe { sys::iopa_submitter_create(self.fd.as_raw_fd(), limit, 0) })?;
        Ok(Submitter {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// A worker of this context.
    pub fn worker(&self) -> io::Result<Worker> {
        let fd = check(unsafe { sys::iopa_worker_create(self.fd.as_raw_fd(), 0) })?;
        Ok(Worker {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }
}

impl AsFd for Context {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// A submitter: it submits jobs and reaps their completions.  Closing it
/// (dropping) cancels its jobs not yet dispatched.
#[derive(Debug)]
pub struct Submitter {
    fd: OwnedFd,
}

impl Submitter {
    /// Queues `jobs` in order (`IOPA_IOC_SUBMIT`); returns how many were
    /// accepted (`WouldBlock`: the submitter is full, reap first).  The
    /// kernel holds its own reference to each job's file: the caller may
    /// close its fds once this returns.
    pub fn submit(&self, jobs: &[Job]) -> io::Result<usize> {
        let nr = u32::try_from(jobs.len()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        check(unsafe { sys::iopa_submit(self.fd.as_raw_fd(), jobs.as_ptr(), nr, 0) }).map(|n| n as usize)
    }

    /// Reaps completions into `out`; with `wait`, waits for at least one
    /// (up to `timeout`, `None`: for ever; `TimedOut` then).  Returns how
    /// many (without `wait`, `WouldBlock` for none).
    pub fn reap(&self, out: &mut [Completion], wait: bool, timeout: Option<Duration>) -> io::Result<usize> {
        let nr = u32::try_from(out.len()).unwrap_or(u32::MAX);
        let flags = if wait { sys::REAP_F_WAIT } else { 0 };
        check(unsafe { sys::iopa_reap(self.fd.as_raw_fd(), out.as_mut_ptr(), nr, flags, timeout_ns(timeout)) })
            .map(|n| n as usize)
    }

    /// Pins the in-flight limit at `limit` (0: the kernel adapts it again).
    pub fn set_limit(&self, limit: u32) -> io::Result<()> {
        check(unsafe { sys::iopa_set_limit(self.fd.as_raw_fd(), limit) }).map(|_| ())
    }

    /// The in-flight limit in force.
    pub fn limit(&self) -> io::Result<u32> {
        check(unsafe { sys::iopa_get_limit(self.fd.as_raw_fd(), std::ptr::null_mut()) }).map(|n| n as u32)
    }
}

impl AsFd for Submitter {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// A worker: it fetches jobs (the kernel parks it while the limits
/// allow none) and completes them.  A worker that dies with jobs
/// (dropped, or its process killed) has them requeued.
#[derive(Debug)]
pub struct Worker {
    fd: OwnedFd,
}

/// A job fetched by a worker: its [`Work`] and its fd of the job's file,
/// closed on drop (not a lent one, which is the submitter's).
#[derive(Debug)]
pub struct Fetched {
    work: Work,
}

impl Fetched {
    /// The job as fetched.
    pub fn work(&self) -> &Work {
        &self.work
    }

    /// The job's file.
    pub fn file(&self) -> BorrowedFd<'_> {
        unsafe { BorrowedFd::borrow_raw(self.work.fd) }
    }

    /// Wraps a [`Work`] the kernel filled (through [`uring`]), taking
    /// ownership of its fd.
    ///
    /// # Safety
    /// `work` must come from a completed fetch, its fd open and not
    /// closed elsewhere.
    pub unsafe fn from_work(work: Work) -> Fetched {
        Fetched { work }
    }
}

impl Drop for Fetched {
    fn drop(&mut self) {
        if self.work.flags & sys::WORK_F_BORROWED == 0 && self.work.fd >= 0 {
            unsafe { libc::close(self.work.fd) };
        }
    }
}

impl Worker {
    /// Fetches a job: waits up to `timeout` (`None`: for ever) while none
    /// may be dispatched; `Ok(None)` when the wait timed out.
    pub fn fetch(&self, timeout: Option<Duration>) -> io::Result<Option<Fetched>> {
        let mut w = Work::default();
        match check(unsafe { sys::iopa_fetch(self.fd.as_raw_fd(), &mut w, 0, timeout_ns(timeout)) }) {
            Ok(_) => Ok(Some(Fetched { work: w })),
            Err(e) if e.raw_os_error() == Some(libc::ETIMEDOUT) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Completes a fetched job with `res` (>= 0, or a negative errno);
    /// its fd is closed.
    pub fn complete(&self, job: Fetched, res: i32) -> io::Result<()> {
        let id = job.work.job_id;
        drop(job);
        check(unsafe { sys::iopa_complete(self.fd.as_raw_fd(), id, res) }).map(|_| ())
    }
}

impl AsFd for Worker {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for Worker {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl AsRawFd for Submitter {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
