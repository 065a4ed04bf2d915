// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
//! The ABI: `<linux/iopa.h>`'s structures and constants as `#[repr(C)]`
//! Rust types, and the libiopa functions the safe API calls.
//!
//! The layouts are checked against the C header's sizes in the crate's
//! tests (`tests/host.rs`); the kernel's `Documentation/iopa.rst`
//! describes every field.

use std::os::raw::{c_int, c_uint, c_void};

/// `IOPA_IOC_MAGIC`, the ioctl type of every iopa command.
pub const IOPA_IOC_MAGIC: u32 = 0xB9;
/// `IOPA_ABI_VERSION`: the ABI this crate speaks.
pub const IOPA_ABI_VERSION: u32 = 1;
/// `IOPA_JOB_F_NO_REQUEUE`: a job whose worker dies ends with `-ECANCELED`.
pub const JOB_F_NO_REQUEUE: u32 = 0x1;
/// `IOPA_JOB_F_BORROW`: lend the job the submitter's own fd.
pub const JOB_F_BORROW: u32 = 0x2;
/// `IOPA_WORK_F_BORROWED`: the work's fd is the submitter's own: not ours to close.
pub const WORK_F_BORROWED: u32 = 0x2;
/// `IOPA_REAP_F_WAIT`: wait for at least one completion.
pub const REAP_F_WAIT: u32 = 0x1;
/// `IOPA_FETCH_F_NONBLOCK`: `-EAGAIN` instead of waiting for a job.
pub const FETCH_F_NONBLOCK: u32 = 0x1;
/// `IOPA_POOL_F_BORROW`: the pool's threads take lent fds.
pub const POOL_F_BORROW: u32 = 0x1;
/// `IOPA_POOL_F_INPROC`: run the pool in the process, module or not.
pub const POOL_F_INPROC: u32 = 0x2;
/// `IOPA_POOL_F_MODULE`: the module or nothing.
pub const POOL_F_MODULE: u32 = 0x4;
/// `IOPA_POOL_INFO_F_INPROC`: the pool runs in the process.
pub const POOL_INFO_F_INPROC: u32 = 0x1;

/// Linux's `_IOC()` for the generic ioctl layout (x86, arm64, riscv...).
const fn ioc(dir: u32, nr: u32, size: usize) -> u32 {
    (dir << 30) | ((size as u32) << 16) | (IOPA_IOC_MAGIC << 8) | nr
}

/// `IOPA_URING_CMD_SUBMIT`: one job in an SQE128's command area.
pub const URING_CMD_SUBMIT: u32 = ioc(1, 0x30, std::mem::size_of::<Job>());
/// `IOPA_URING_CMD_FETCH`: a job into a [`Work`] buffer.
pub const URING_CMD_FETCH: u32 = ioc(3, 0x31, std::mem::size_of::<UringFetch>());
/// `IOPA_URING_CMD_COMMIT_AND_FETCH`: complete the held job, fetch the next.
pub const URING_CMD_COMMIT_AND_FETCH: u32 = ioc(3, 0x32, std::mem::size_of::<UringFetch>());

/// `struct iopa_job`: a file, a byte range and a cookie.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Job {
    /// The file (the worker gets its own fd of it, or this one lent).
    pub fd: i32,
    /// `JOB_F_*`.
    pub flags: u32,
    /// The byte range's start.
    pub offset: u64,
    /// The byte range's length.
    pub len: u64,
    /// Returned with the job's completion.
    pub user_data: u64,
    /// Zero.
    pub reserved: u64,
}

/// `struct iopa_work`: a job as a worker gets it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// The job's id, to complete it with.
    pub job_id: u64,
    /// The submitter's cookie.
    pub user_data: u64,
    /// The byte range's start.
    pub offset: u64,
    /// The byte range's length.
    pub len: u64,
    /// The worker's fd of the job's file (its own, unless `WORK_F_BORROWED`).
    pub fd: i32,
    /// `WORK_F_*`.
    pub flags: u32,
}

/// `struct iopa_cqe`: a job's completion as its submitter reaps it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cqe {
    /// The submitter's cookie.
    pub user_data: u64,
    /// The job's id.
    pub job_id: u64,
    /// The worker's result (>= 0), or a negative errno.
    pub res: i32,
    /// Zero.
    pub flags: u32,
}

/// `struct iopa_features`: what the module offers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Features {
    /// `IOPA_ABI_VERSION` of the module.
    pub abi_version: u32,
    /// Zero.
    pub reserved0: u32,
    /// `IOPA_FEAT_*` bits.
    pub features: u64,
    /// Most jobs of one SUBMIT.
    pub batch_max: u32,
    /// Highest in-flight limit.
    pub limit_max: u32,
    /// Most jobs one worker may hold.
    pub worker_max_jobs: u32,
    /// Zero.
    pub reserved1: u32,
    /// Zero.
    pub reserved: [u64; 4],
}

/// `struct iopa_uring_fetch`: the command payload of a fetch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct UringFetch {
    /// The address of the [`Work`] to fill.
    pub work: u64,
    /// `COMMIT_AND_FETCH`: the held job's result.
    pub res: i32,
    /// Zero.
    pub flags: u32,
}

/// libiopa's pool (opaque).
#[repr(C)]
pub struct RawPool {
    _private: [u8; 0],
}

/// `iopa_pool_fn`: the user function a pool thread runs.
pub type PoolFn = unsafe extern "C" fn(arg: *mut c_void, work: *const Work) -> c_int;
/// `iopa_pool_done_fn`: called with each completion the pool reaps.
pub type PoolDoneFn = unsafe extern "C" fn(arg: *mut c_void, cqe: *const Cqe);

/// `struct iopa_pool_opts`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PoolOpts {
    /// Threads kept when idle.
    pub min_threads: c_uint,
    /// Most threads at once (0: the default).
    pub max_threads: c_uint,
    /// A thread idle this long ends.
    pub idle_ms: c_uint,
    /// 0: the limit adapts; else pinned.
    pub limit: c_uint,
    /// `POOL_F_*`.
    pub flags: c_uint,
    /// Zero.
    pub reserved0: c_uint,
    /// The done callback.
    pub done: Option<PoolDoneFn>,
    /// Its first argument.
    pub done_arg: *mut c_void,
    /// Zero.
    pub reserved: [u64; 4],
}

/// `struct iopa_pool_info`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolInfo {
    /// Live pool threads.
    pub threads: c_uint,
    /// Live threads not running the user function.
    pub idle: c_uint,
    /// Most live threads at once.
    pub peak_threads: c_uint,
    /// The minimum in force.
    pub min_threads: c_uint,
    /// The maximum in force.
    pub max_threads: c_uint,
    /// The idle timeout in force.
    pub idle_ms: c_uint,
    /// Threads started.
    pub threads_started: u64,
    /// Threads ended.
    pub threads_exited: u64,
    /// Jobs accepted.
    pub submitted: u64,
    /// Their completions reaped.
    pub completed: u64,
    /// Completions with a negative result.
    pub failed: u64,
    /// `submitted - completed`.
    pub outstanding: u64,
    /// `POOL_INFO_F_*`.
    pub flags: c_uint,
    /// How many of the pool's jobs may run at once now.
    pub limit: c_uint,
    /// Why a pool that opened the device itself runs in the process (errno).
    pub module_err: c_uint,
    /// Zero.
    pub reserved0: c_uint,
    /// Zero.
    pub reserved: [u64; 2],
}

extern "C" {
    /// `iopa_open()`.
    pub fn iopa_open() -> c_int;
    /// `iopa_get_features()`.
    pub fn iopa_get_features(fd: c_int, features: *mut Features) -> c_int;
    /// `iopa_submitter_create()`.
    pub fn iopa_submitter_create(ctx_fd: c_int, limit: c_uint, flags: c_uint) -> c_int;
    /// `iopa_worker_create()`.
    pub fn iopa_worker_create(ctx_fd: c_int, flags: c_uint) -> c_int;
    /// `iopa_submit()`.
    pub fn iopa_submit(sub_fd: c_int, jobs: *const Job, nr: c_uint, flags: c_uint) -> c_int;
    /// `iopa_reap()`.
    pub fn iopa_reap(sub_fd: c_int, cqes: *mut Cqe, nr: c_uint, flags: c_uint, timeout_ns: u64) -> c_int;
    /// `iopa_set_limit()`.
    pub fn iopa_set_limit(sub_fd: c_int, limit: c_uint) -> c_int;
    /// `iopa_get_limit()`.
    pub fn iopa_get_limit(sub_fd: c_int, flags: *mut c_uint) -> c_int;
    /// `iopa_fetch()`.
    pub fn iopa_fetch(worker_fd: c_int, work: *mut Work, flags: c_uint, timeout_ns: u64) -> c_int;
    /// `iopa_complete()`.
    pub fn iopa_complete(worker_fd: c_int, job_id: u64, res: c_int) -> c_int;
    /// `iopa_pool_init()`.
    pub fn iopa_pool_init(pool: *mut *mut RawPool, ctx_fd: c_int, opts: *const PoolOpts) -> c_int;
    /// `iopa_pool_create_threads()`.
    pub fn iopa_pool_create_threads(pool: *mut RawPool, f: PoolFn, arg: *mut c_void) -> c_int;
    /// `iopa_pool_submit()`.
    pub fn iopa_pool_submit(pool: *mut RawPool, jobs: *const Job, nr: c_uint) -> c_int;
    /// `iopa_pool_wait()`.
    pub fn iopa_pool_wait(pool: *mut RawPool) -> c_int;
    /// `iopa_pool_close()`.
    pub fn iopa_pool_close(pool: *mut RawPool) -> c_int;
    /// `iopa_pool_get_info()`.
    pub fn iopa_pool_get_info(pool: *mut RawPool, info: *mut PoolInfo) -> c_int;
}
