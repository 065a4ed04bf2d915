// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
//! A tree hasher: the SHA-256 of every regular file under each operand,
//! as `find DIR -type f | LC_ALL=C sort | xargs sha256sum` prints them,
//! read by an iopa pool (the kernel's in-flight limit decides how many
//! files at once; without the module, the same pool in the process).
//!
//!   cargo run --example tree_hash -- DIR...

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, FromRawFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use iopa::{Job, Pool, PoolOptions, Work};
use sha2::{Digest, Sha256};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let t = e.file_type()?;
        if t.is_dir() {
            walk(&e.path(), out)?;
        } else if t.is_file() {
            out.push(e.path());
        }
    }
    Ok(())
}

/// The job: hash the file the worker's fd names (the pool closes the fd).
fn hash(w: &Work, digests: &Mutex<Vec<Option<[u8; 32]>>>) -> i32 {
    // Borrow the fd: a File that does not close it on drop.
    let mut f = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(w.fd) });
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 128 * 1024];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) => return -e.raw_os_error().unwrap_or(libc_eio()),
        }
    }
    digests.lock().unwrap()[w.user_data as usize] = Some(h.finalize().into());
    0
}

fn libc_eio() -> i32 {
    5
}

fn main() -> io::Result<()> {
    let mut files = Vec::new();
    for arg in std::env::args_os().skip(1) {
        walk(Path::new(&arg), &mut files)?;
    }
    files.sort_by(|a, b| a.as_os_str().as_encoded_bytes().cmp(b.as_os_str().as_encoded_bytes()));
    let digests = Arc::new(Mutex::new(vec![None; files.len()]));
    let failed = Arc::new(Mutex::new(Vec::new()));
    let d = digests.clone();
    let fl = failed.clone();
    let pool = Pool::new(
        PoolOptions::default(),
        move |w: &Work| hash(w, &d),
        move |c: &iopa::Completion| {
            if c.res < 0 {
                fl.lock().unwrap().push((c.user_data, c.res));
            }
        },
    )?;
    eprintln!("tree_hash: {} files, {}", files.len(),
              if pool.info()?.in_process() { "in process" } else { "with the iopa module" });
    for (i, p) in files.iter().enumerate() {
        let f = File::open(p)?;
        pool.submit_all(&[Job::new(f.as_fd(), i as u64)])?;
        // the pool holds its own reference: f may close now
    }
    pool.wait()?;
    drop(pool);
    let out = io::stdout();
    let mut out = out.lock();
    let digests = digests.lock().unwrap();
    for (i, p) in files.iter().enumerate() {
        if let Some(md) = digests[i] {
            let hex: String = md.iter().map(|b| format!("{b:02x}")).collect();
            // sha256sum's line: \, newline and CR escaped, then a leading \
            let name = p.as_os_str().as_encoded_bytes();
            let esc = name.iter().any(|&c| c == b'\\' || c == b'\n' || c == b'\r');
            let mut line = Vec::with_capacity(name.len() + 70);
            if esc {
                line.push(b'\\');
            }
            line.extend_from_slice(hex.as_bytes());
            line.extend_from_slice(b"  ");
            for &c in name {
                match c {
                    b'\\' if esc => line.extend_from_slice(b"\\\\"),
                    b'\n' if esc => line.extend_from_slice(b"\\n"),
                    b'\r' if esc => line.extend_from_slice(b"\\r"),
                    _ => line.push(c),
                }
            }
            line.push(b'\n');
            out.write_all(&line)?;
        }
    }
    let failed = failed.lock().unwrap();
    for (i, res) in failed.iter() {
        eprintln!("tree_hash: {}: {}", files[*i as usize].display(), io::Error::from_raw_os_error(-res));
    }
    std::process::exit(if failed.is_empty() { 0 } else { 1 });
}
