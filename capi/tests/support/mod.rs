//! What the tests of the reference library share: the workspace root, and
//! the `libtpb_reference.so` and `tpbconform` they run, built by cargo now.
//!
//! Neither comes from this test run's own build: cargo builds a `cdylib`
//! for integration tests only as metadata, and `tpbconform` belongs to
//! another package. So each test asks cargo to build it (a no-op when it is
//! fresh) in this run's target folder and profile, and takes the path from
//! cargo's own artifact messages.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("capi/ has a parent")
        .to_path_buf()
}

/// `target/<profile>/`: the folder above this test binary's `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// Builds `target_args` of `package` with the profile and target folder of
/// this test run; the first artifact path cargo reports for which `pick`
/// answers.
fn build(
    package: &str,
    target_args: &[&str],
    pick: impl Fn(&serde_json::Value) -> Option<String>,
) -> PathBuf {
    let dir = profile_dir();
    let profile = match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(other) => other.to_string(),
        None => panic!("no profile folder in {}", dir.display()),
    };
    let out = Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "build",
            "--message-format=json-render-diagnostics",
            "-p",
            package,
        ])
        .args(target_args)
        .args(["--profile", &profile])
        .arg("--target-dir")
        .arg(dir.parent().expect("target/"))
        .stderr(Stdio::inherit())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo build -p {package} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .find_map(|m| pick(&m))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("cargo reported no artifact for {package} {target_args:?}"))
}

/// `libtpb_reference.so`, fresh.
pub fn library() -> PathBuf {
    build("tpb-capi", &["--lib"], |m| {
        m["filenames"]
            .as_array()?
            .iter()
            .filter_map(|f| f.as_str())
            .find(|f| f.ends_with("libtpb_reference.so"))
            .map(str::to_string)
    })
}

/// `tpbconform`, fresh.
pub fn tpbconform() -> PathBuf {
    build("tpbconform", &["--bin", "tpbconform"], |m| {
        m["executable"].as_str().map(str::to_string)
    })
}
