// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
//! libiopa's worker pool (`iopa_pool_*`), safely: threads that run a
//! closure on each job, as many as the kernel's limit lets work, and the
//! same pool in the process where the module cannot be used.

use std::ffi::c_void;
use std::io;
use std::os::raw::c_int;
use std::ptr;
use std::sync::Mutex;

use crate::sys;
use crate::{check, Completion, Job, Work};

type WorkFn = dyn Fn(&Work) -> i32 + Send + Sync;
type DoneFn = dyn FnMut(&Completion) + Send;

/// How a [`Pool`] is made (`struct iopa_pool_opts`); the defaults are
/// libiopa's.
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolOptions {
    /// Threads kept when idle.
    pub min_threads: u32,
    /// Most threads at once (0: the module's `max_limit` + 1, also
    /// without it; fewer under a low `RLIMIT_NOFILE`).
    pub max_threads: u32,
    /// A thread idle this long (ms) ends (0: 2000).
    pub idle_ms: u32,
    /// 0: the kernel (or, in the process, the same controller) adapts the
    /// in-flight limit; else it is pinned.
    pub limit: u32,
    /// Run in the process even where the module is loaded.
    pub in_process: bool,
    /// The module or nothing: fail where `/dev/iopa` cannot be used.
    pub module_only: bool,
}

/// What a pool is doing (`struct iopa_pool_info`).
#[derive(Clone, Copy, Debug)]
pub struct PoolInfo {
    raw: sys::PoolInfo,
}

impl PoolInfo {
    /// Live threads.
    pub fn threads(&self) -> u32 {
        self.raw.threads
    }
    /// The most threads the pool may run.
    pub fn max_threads(&self) -> u32 {
        self.raw.max_threads
    }
    /// Jobs accepted so far.
    pub fn submitted(&self) -> u64 {
        self.raw.submitted
    }
    /// Their completions reaped so far.
    pub fn completed(&self) -> u64 {
        self.raw.completed
    }
    /// How many of the pool's jobs may run at once now.
    pub fn limit(&self) -> u32 {
        self.raw.limit
    }
    /// The pool runs in the process, without the module.
    pub fn in_process(&self) -> bool {
        self.raw.flags & sys::POOL_INFO_F_INPROC != 0
    }
    /// Why it runs in the process: the error of opening or using
    /// `/dev/iopa` (`None`: it uses the module, or was asked not to).
    pub fn module_error(&self) -> Option<io::Error> {
        (self.raw.module_err != 0).then(|| io::Error::from_raw_os_error(self.raw.module_err as i32))
    }
}

struct Callbacks {
    work: Box<WorkFn>,
    done: Mutex<Box<DoneFn>>,
}

/// libiopa's worker pool.  Its threads run `work` on each job submitted
/// (the return value is the job's result: >= 0, or a negative errno);
/// `done` sees each completion, in the thread that reaps it (inside
/// [`Pool::submit`] or [`Pool::wait`]).  Dropping the pool ends its
/// threads, cancels what never ran, and closes its fds.
pub struct Pool {
    raw: *mut sys::RawPool,
    // Boxed: the C side holds its address until the pool is closed.
    cb: Box<Callbacks>,
}

// The pool's calls are thread-safe (libiopa(7)); the callbacks are Send
// and Sync as their bounds say.
unsafe impl Send for Pool {}
unsafe impl Sync for Pool {}

unsafe extern "C" fn work_tramp(arg: *mut c_void, work: *const Work) -> c_int {
    let cb = &*(arg as *const Callbacks);
    // A panic must not unwind into C: the job fails instead.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (cb.work)(&*work))).unwrap_or(-libc::EIO)
}

unsafe extern "C" fn done_tramp(arg: *mut c_void, cqe: *const Completion) {
    let cb = &*(arg as *const Callbacks);
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let Ok(mut f) = cb.done.lock() {
            f(&*cqe);
        }
    }));
}

impl Pool {
    /// A pool on its own context (a new `/dev/iopa` open), running `work`
    /// on each job and `done` on each completion, its threads started.
    /// Where the device cannot be used it runs in the process, unless
    /// `opts.module_only`.
    pub fn new<W, D>(opts: PoolOptions, work: W, done: D) -> io::Result<Pool>
    where
        W: Fn(&Work) -> i32 + Send + Sync + 'static,
        D: FnMut(&Completion) + Send + 'static,
    {
        let cb = Box::new(Callbacks {
            work: Box::new(work),
            done: Mutex::new(Box::new(done)),
        });
        let arg = &*cb as *const Callbacks as *mut c_void;
        let o = sys::PoolOpts {
            min_threads: opts.min_threads,
            max_threads: opts.max_threads,
            idle_ms: opts.idle_ms,
            limit: opts.limit,
            flags: if opts.in_process { sys::POOL_F_INPROC } else { 0 }
                | if opts.module_only { sys::POOL_F_MODULE } else { 0 },
            reserved0: 0,
            done: Some(done_tramp),
            done_arg: arg,
            reserved: [0; 4],
        };
        let mut raw = ptr::null_mut();
        check(unsafe { sys::iopa_pool_init(&mut raw, -1, &o) })?;
        let pool = Pool { raw, cb };
        check(unsafe { sys::iopa_pool_create_threads(pool.raw, work_tramp, arg) })?;
        Ok(pool)
    }

    /// Submits `jobs` in order; returns how many were accepted (at least
    /// one: a full pool reaps completions, calling `done`, to make room).
    /// The pool holds its own reference (or dup) of each job's file.
    pub fn submit(&self, jobs: &[Job]) -> io::Result<usize> {
        let nr = u32::try_from(jobs.len()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        check(unsafe { sys::iopa_pool_submit(self.raw, jobs.as_ptr(), nr) }).map(|n| n as usize)
    }

    /// Submits every job of `jobs`.
    pub fn submit_all(&self, mut jobs: &[Job]) -> io::Result<()> {
        while !jobs.is_empty() {
            let n = self.submit(jobs)?;
            jobs = &jobs[n..];
        }
        Ok(())
    }

    /// Waits until every job submitted has completed (`done` called).
    pub fn wait(&self) -> io::Result<()> {
        check(unsafe { sys::iopa_pool_wait(self.raw) }).map(|_| ())
    }

    /// What the pool is doing.
    pub fn info(&self) -> io::Result<PoolInfo> {
        let mut raw = sys::PoolInfo::default();
        check(unsafe { sys::iopa_pool_get_info(self.raw, &mut raw) })?;
        Ok(PoolInfo { raw })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Ends the threads (none runs a callback after this) before the
        // callbacks are freed with `cb`.
        unsafe { sys::iopa_pool_close(self.raw) };
        let _ = &self.cb;
    }
}
