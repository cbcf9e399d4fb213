//! Paths the tests of the reference library share: the workspace root, the
//! built `libtpb_reference.so` and the `tpbconform` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("capi/ has a parent")
        .to_path_buf()
}

/// `target/<profile>/`: the folder above this test binary's `deps/`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// The library cargo built for this test run (the package's own lib
/// target, so it is as fresh as the test).
pub fn library() -> PathBuf {
    let so = profile_dir().join("libtpb_reference.so");
    assert!(so.is_file(), "{} was not built", so.display());
    so
}

/// The `tpbconform` binary of the same profile, built (or found fresh) by
/// cargo now: it belongs to another package, so this test run did not
/// necessarily build it.
pub fn tpbconform() -> PathBuf {
    let dir = profile_dir();
    let profile = match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(other) => other.to_string(),
        None => panic!("no profile folder in {}", dir.display()),
    };
    let target_dir = dir.parent().expect("target/").to_path_buf();
    let status = Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "build",
            "--quiet",
            "-p",
            "tpb-harness",
            "--bin",
            "tpbconform",
        ])
        .args(["--profile", &profile])
        .arg("--target-dir")
        .arg(&target_dir)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build of tpbconform failed");
    let bin = dir.join("tpbconform");
    assert!(bin.is_file(), "{} was not built", bin.display());
    bin
}
