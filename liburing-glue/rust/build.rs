// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
//! Builds libiopa's C sources (the ioctl wrappers, the worker pool, its
//! in-process job source and knee cache, and the module's controller
//! kernel/ctl.c) into a static library the crate links: the pool, its
//! fallback without the module and its adaptive limit are libiopa's own
//! code, not a second implementation.  Needs a C compiler and liburing's
//! header (<libiopa.h> includes <liburing.h>).

use std::path::PathBuf;

fn main() {
    let glue = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    let top = glue.join("..");
    let srcs = [
        glue.join("src/ioctl.c"),
        glue.join("src/pool.c"),
        glue.join("src/inproc.c"),
        glue.join("src/knees.c"),
        top.join("kernel/ctl.c"),
    ];
    let mut b = cc::Build::new();
    b.files(&srcs)
        .include(glue.join("include"))
        .include(top.join("uapi"))
        .include(top.join("kernel"))
        .flag("-std=gnu11")
        .flag("-pthread")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        // kernel/ctl.c's own definitions when built outside the kernel
        .flag_if_supported("-Wno-unused-parameter");
    b.compile("iopa_c");
    println!("cargo:rustc-link-lib=pthread");
    for f in srcs.iter().chain(
        [
            glue.join("include/libiopa.h"),
            glue.join("src/internal.h"),
            glue.join("src/pool.h"),
            top.join("uapi/linux/iopa.h"),
            top.join("kernel/ctl.h"),
        ]
        .iter(),
    ) {
        println!("cargo:rerun-if-changed={}", f.display());
    }
}
