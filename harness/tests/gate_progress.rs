//! A long gate is never silent when stderr is not a terminal (issue 32 item 7): a progress line
//! on stderr at least every interval (10 s; `TPB_GATE_DEBUG_PROGRESS_SECS` shortens it for this
//! test), naming the phase and the generated cases done; `--quiet` prints none.

mod common;

use common::{code, repo_root, stderr, tmp, BIN};

fn gate(extra: &[&str]) -> (String, std::time::Duration) {
    let report = tmp("gate_progress", &extra.len().to_string());
    std::fs::remove_dir_all(&report).unwrap();
    let t = std::time::Instant::now();
    let o = std::process::Command::new(BIN)
        .current_dir(repo_root())
        .env("TPB_GATE_DEBUG_PROGRESS_SECS", "1")
        .args([
            "gate",
            "--cases",
            "400000",
            "--targets",
            "validate_header,decode_any",
        ])
        .args(extra)
        .arg("--report-dir")
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    (stderr(&o), t.elapsed())
}

#[test]
fn a_piped_gate_prints_a_progress_line_every_interval() {
    let (err, took) = gate(&[]);
    let secs: Vec<u64> = err
        .lines()
        .filter_map(|l| l.strip_prefix("tpbconform: gate: "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    // One line per whole interval the run lasted (give or take the last).
    let whole = took.as_secs();
    assert!(
        secs.len() as u64 + 1 >= whole && !secs.is_empty() || whole < 1,
        "{whole} s, lines: {err}"
    );
    for w in secs.windows(2) {
        assert!(w[1] - w[0] <= 2, "{err}");
    }
    // A run of two intervals or more has printed its phase (a faster one may print nothing).
    assert!(
        whole < 2 || err.contains("generated cases: ") || err.contains("report"),
        "{whole} s: {err}"
    );
    let (quiet, _) = gate(&["--quiet"]);
    assert!(!quiet.contains("tpbconform: gate: "), "{quiet}");
}
