// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
//! The crate against the iopa module (the QEMU guest of `make check`
//! runs this test program, built on the host): a job through the ioctl
//! layer from submitter to worker and back, the same through io_uring,
//! and the pool on the module.  Without /dev/iopa each says so and
//! passes: tests/host.rs is for that.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::time::Duration;

use io_uring::{cqueue, squeue, IoUring};
use iopa::{Context, Fetched, Job, Pool, PoolOptions, Work};

fn module() -> bool {
    if !std::path::Path::new(iopa::DEV_PATH).exists() {
        eprintln!("no {}: a guest test, skipped", iopa::DEV_PATH);
        return false;
    }
    true
}

fn job_file(len: usize) -> (std::path::PathBuf, File) {
    let p = std::env::temp_dir().join(format!("iopa-rs-job-{}-{len}", std::process::id()));
    File::create(&p).unwrap().write_all(&vec![b'j'; len]).unwrap();
    let f = File::open(&p).unwrap();
    (p, f)
}

#[test]
fn ioctl_job_from_submitter_to_worker_and_back() {
    if !module() {
        return;
    }
    let ctx = Context::open().unwrap();
    assert_eq!(ctx.features().unwrap().abi_version, iopa::sys::IOPA_ABI_VERSION);
    let sub = ctx.submitter(1).unwrap();
    let worker = ctx.worker().unwrap();
    let (p, f) = job_file(4096);
    assert_eq!(sub.submit(&[Job::new(f.as_fd(), 77).range(0, 4096)]).unwrap(), 1);
    drop(f); // the kernel holds its own reference
    let job = worker.fetch(Some(Duration::from_secs(10))).unwrap().expect("a job");
    assert_eq!(job.work().user_data, 77);
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    assert_eq!(0, unsafe { libc::fstat(job.work().fd, &mut st) });
    assert_eq!(st.st_size, 4096);
    worker.complete(job, 4096).unwrap();
    let mut c = [iopa::Completion::default(); 4];
    let n = sub.reap(&mut c, true, Some(Duration::from_secs(10))).unwrap();
    assert_eq!(n, 1);
    assert_eq!((c[0].user_data, c[0].res), (77, 4096));
    assert_eq!(sub.limit().unwrap(), 1);
    std::fs::remove_file(p).unwrap();
}

#[test]
fn uring_job_from_submitter_to_worker_and_back() {
    if !module() {
        return;
    }
    let ctx = Context::open().unwrap();
    let sub = ctx.submitter(0).unwrap();
    let worker = ctx.worker().unwrap();
    let mut ring: IoUring<squeue::Entry128, cqueue::Entry> = IoUring::builder().build(8).unwrap();
    let (p, f) = job_file(100);
    let mut work = Box::new(Work::default());
    let submit = iopa::uring::submit(sub.as_fd(), &Job::new(f.as_fd(), 5)).user_data(1);
    let fetch = unsafe { iopa::uring::fetch(worker.as_fd(), &mut *work) }.user_data(2);
    unsafe {
        ring.submission().push(&submit).unwrap();
        ring.submission().push(&fetch).unwrap();
    }
    ring.submit_and_wait(1).unwrap();
    // the fetch's CQE (res 0) first: the job is the worker's
    let mut got = Vec::new();
    while got.iter().all(|&(u, _)| u != 2) {
        ring.submit_and_wait(1).unwrap();
        got.extend(ring.completion().map(|c| (c.user_data(), c.result())));
    }
    assert!(got.contains(&(2, 0)), "{got:?}");
    assert_eq!(work.user_data, 5);
    let fetched = unsafe { Fetched::from_work(*work) };
    worker.complete(fetched, 42).unwrap();
    // then the submit's CQE: the job ended with the worker's result
    while got.iter().all(|&(u, _)| u != 1) {
        ring.submit_and_wait(1).unwrap();
        got.extend(ring.completion().map(|c| (c.user_data(), c.result())));
    }
    assert!(got.contains(&(1, 42)), "{got:?}");
    drop(f);
    std::fs::remove_file(p).unwrap();
}

#[test]
fn pool_on_the_module() {
    if !module() {
        return;
    }
    let o = PoolOptions { module_only: true, ..PoolOptions::default() };
    let pool = Pool::new(o, |w: &Work| w.len as i32, |_: &iopa::Completion| {}).unwrap();
    assert!(!pool.info().unwrap().in_process());
    let (p, f) = job_file(10);
    let jobs: Vec<Job> = (0..32).map(|i| Job::new(f.as_fd(), i).range(0, 10)).collect();
    pool.submit_all(&jobs).unwrap();
    pool.wait().unwrap();
    assert_eq!(pool.info().unwrap().completed(), 32);
    drop(pool);
    std::fs::remove_file(p).unwrap();
}
