//! Regression tests of issue 11 for `tpbconform gate`: the report folder is
//! claimed before any case runs. Each test names the promise of
//! docs/guarantees.md it holds.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_tpbconform");

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tpb-fc-gate-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Kills and reaps a child on drop.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn gate(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("gate")
        .args(["--threads", "1", "--quiet"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn wait_for(p: &Path, secs: u64) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(secs) {
        if p.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Guarantee G7: the report folder is claimed before any case runs, so a
/// second gate on the same `--report-dir` is refused at once (exit 2), not
/// after its whole run.
#[test]
fn report_dir_is_claimed_before_the_run() {
    let root = tmp("claim");
    let report = root.join("reports/shared");
    let none = root.join("none");
    let long = [
        "--cases",
        "100000000",
        "--targets",
        "validate_header",
        "--corpus",
        none.to_str().unwrap(),
        "--report-dir",
        report.to_str().unwrap(),
    ];
    let _a = Reap(gate(&long).spawn().unwrap());
    assert!(wait_for(&report, 20), "report folder not claimed at start");
    let t0 = Instant::now();
    let b = gate(&long).output().unwrap();
    assert_eq!(code(&b), 2, "{}", err(&b));
    assert!(err(&b).contains("exists already"), "{}", err(&b));
    assert!(t0.elapsed() < Duration::from_secs(20), "refused only late");
    drop(_a);
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G8: stale-staging cleanup removes only staging folders that
/// tpbconform provably made; a look-alike folder of a dead pid is kept.
#[test]
fn stale_cleanup_keeps_folders_it_did_not_make() {
    let root = tmp("stale");
    let reports = root.join("reports");
    // pid_max is at most 2^22 on Linux: this pid is not running.
    let foreign = [
        reports.join(".mine.staging-4194999"),
        reports.join(".r.staging-4194999-0011223344556677"),
    ];
    for f in &foreign {
        std::fs::create_dir_all(f).unwrap();
        std::fs::write(f.join("precious"), b"data").unwrap();
    }
    let none = root.join("none");
    let o = gate(&[
        "--cases",
        "20",
        "--targets",
        "validate_header",
        "--corpus",
        none.to_str().unwrap(),
        "--report-dir",
        reports.join("r").to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(reports.join("r/summary.md").is_file(), "{}", err(&o));
    for f in &foreign {
        assert!(f.join("precious").is_file(), "{} removed", f.display());
    }
    std::fs::remove_dir_all(&root).unwrap();
}
