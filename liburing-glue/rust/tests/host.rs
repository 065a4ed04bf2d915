// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
//! The crate on a host without the iopa module (`cargo test`): the ABI's
//! layouts, the errors of the ioctl layer, the pool's fallback (it runs
//! in the process and says why; asked for the module only, the error),
//! its jobs each done once with their results, and the io_uring entries'
//! bytes.  With /dev/iopa present these tests say so and do not run: the
//! guest's tests (tests/guest.rs) are for that.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use iopa::{sys, Context, Job, Pool, PoolOptions, Work};

fn no_module() -> bool {
    if std::path::Path::new(iopa::DEV_PATH).exists() {
        eprintln!("this host has {}: a host test without the module, skipped", iopa::DEV_PATH);
        return false;
    }
    true
}

#[test]
fn abi_layouts_are_the_headers() {
    use std::mem::size_of;
    assert_eq!(size_of::<sys::Job>(), 40);
    assert_eq!(size_of::<sys::Work>(), 40);
    assert_eq!(size_of::<sys::Cqe>(), 24);
    assert_eq!(size_of::<sys::Features>(), 64);
    assert_eq!(size_of::<sys::UringFetch>(), 16);
    assert_eq!(size_of::<sys::PoolOpts>(), 72);
    assert_eq!(size_of::<sys::PoolInfo>(), 104);
    // _IOW(0xB9, 0x30, struct iopa_job), _IOWR(0xB9, 0x31, ...)
    assert_eq!(sys::URING_CMD_SUBMIT, 0x4028_b930);
    assert_eq!(sys::URING_CMD_FETCH, 0xc010_b931);
    assert_eq!(sys::URING_CMD_COMMIT_AND_FETCH, 0xc010_b932);
}

#[test]
fn open_without_the_module_is_not_found() {
    if !no_module() {
        return;
    }
    let e = Context::open().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn pool_falls_back_and_says_why() {
    if !no_module() {
        return;
    }
    let pool = Pool::new(PoolOptions::default(), |_: &Work| 0, |_: &iopa::Completion| {}).unwrap();
    let info = pool.info().unwrap();
    assert!(info.in_process());
    assert_eq!(info.module_error().unwrap().kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn pool_module_only_gets_the_error() {
    if !no_module() {
        return;
    }
    let o = PoolOptions { module_only: true, ..PoolOptions::default() };
    let e = Pool::new(o, |_: &Work| 0, |_: &iopa::Completion| {}).err().unwrap();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    let o = PoolOptions { module_only: true, in_process: true, ..PoolOptions::default() };
    let e = Pool::new(o, |_: &Work| 0, |_: &iopa::Completion| {}).err().unwrap();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn pool_runs_every_job_once_with_its_result_and_file() {
    let dir = std::env::temp_dir().join(format!("iopa-rs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for i in 0..64u64 {
        let p = dir.join(format!("f{i}"));
        File::create(&p).unwrap().write_all(&vec![b'x'; i as usize * 100]).unwrap();
        files.push(p);
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(vec![0u32; 64]));
    let res = Arc::new(Mutex::new(vec![0i32; 64]));
    let (c, s, r) = (calls.clone(), seen.clone(), res.clone());
    let o = PoolOptions { in_process: true, ..PoolOptions::default() };
    let pool = Pool::new(
        o,
        move |w: &Work| {
            c.fetch_add(1, Ordering::SeqCst);
            // the job's own fd of its file: its size is the job's index * 100
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            assert_eq!(0, unsafe { libc::fstat(w.fd, &mut st) });
            (st.st_size / 100) as i32
        },
        move |cqe: &iopa::Completion| {
            s.lock().unwrap()[cqe.user_data as usize] += 1;
            r.lock().unwrap()[cqe.user_data as usize] = cqe.res;
        },
    )
    .unwrap();
    for (i, p) in files.iter().enumerate() {
        let f = File::open(p).unwrap();
        pool.submit_all(&[Job::new(f.as_fd(), i as u64)]).unwrap();
    }
    pool.wait().unwrap();
    assert_eq!(pool.info().unwrap().completed(), 64);
    drop(pool);
    assert_eq!(calls.load(Ordering::SeqCst), 64);
    assert!(seen.lock().unwrap().iter().all(|&n| n == 1));
    for (i, r) in res.lock().unwrap().iter().enumerate() {
        assert_eq!(*r, i as i32);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn uring_submit_entry_carries_the_job() {
    let f = File::open("/dev/null").unwrap();
    let job = Job::new(f.as_fd(), 0x1234_5678).range(4096, 8192);
    let e = iopa::uring::submit(f.as_fd(), &job);
    // The SQE128: 64 bytes of SQE (cmd_op at 8, cmd from 48) + 64 more.
    let b: [u8; 128] = unsafe { std::mem::transmute(e) };
    assert_eq!(b[0], 46); // IORING_OP_URING_CMD
    assert_eq!(u32::from_ne_bytes(b[8..12].try_into().unwrap()), sys::URING_CMD_SUBMIT);
    let job_bytes: [u8; 40] = unsafe { std::mem::transmute(job) };
    assert_eq!(&b[48..88], &job_bytes[..]);
}
