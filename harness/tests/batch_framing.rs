//! The `batch64` framing of `cmd:` subjects through the gate: the Python
//! example with `--batch64` passes (and its planted bug is caught) with its
//! validator cases sent as frames; a subject that drops a record, answers
//! two records in the other order or echoes the wrong frame number is a
//! finding; one that crashes on a frame has its inputs judged over the JSON
//! lines (named there), and so does one that exits while a grandchild
//! holds its stdout open, at once, not after the case timeout.

mod common;
mod subjects;

use common::{repo_root, BIN};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use subjects::*;

fn gate(dir: &Path, subject: &str) -> (i32, String, String) {
    gate_with_args(dir, subject, &[])
}

/// [`gate`] with `extra` arguments.
fn gate_with_args(dir: &Path, subject: &str, extra: &[&str]) -> (i32, String, String) {
    let report = dir.join(format!("r{}", dir.read_dir().unwrap().count()));
    let o = Command::new(std::path::PathBuf::from(BIN))
        .current_dir(repo_root())
        .args(["gate", "--quiet", "--cases", "3000", "--arch", "v2"])
        .args(["--targets", "validate_header,validate_payload"])
        .args(["--subject", subject, "--subject-cases", "1000000"])
        .arg("--report-dir")
        .arg(&report)
        .args(extra)
        .output()
        .unwrap();
    let summary = std::fs::read_to_string(report.join("summary.md"))
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let jsonl = std::fs::read_to_string(report.join("divergences.jsonl")).unwrap_or_default();
    (o.status.code().unwrap_or(-1), summary, jsonl)
}

fn batch_misbehave(mode: &str) -> String {
    format!(
        "cmd:python3 {} {mode}",
        fixture("batch_misbehave.py").display()
    )
}

#[test]
fn the_python_example_passes_over_batch64_and_its_planted_bug_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let (code, summary, _) = gate(dir.path(), &python_spec("--batch64"));
    assert_eq!(code, 0, "{summary}");
    let (code, summary, jsonl) = gate(dir.path(), &python_spec("--batch64 --planted-bug"));
    assert_eq!(code, 1, "{summary}");
    assert!(jsonl.contains("custom_op_header_reserved_zero"), "{jsonl}");
}

#[test]
fn dropped_records_and_a_wrong_frame_number_are_protocol_findings() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, why) in [("drop", "records for"), ("seq", "out of order")] {
        let (code, summary, jsonl) = gate(dir.path(), &batch_misbehave(mode));
        assert_eq!(code, 1, "{mode}: {summary}");
        assert!(jsonl.contains("protocol"), "{mode}: {jsonl}");
        assert!(jsonl.contains(why), "{mode}: no `{why}` in {jsonl}");
    }
}

#[test]
fn records_answered_in_another_order_are_divergences() {
    let dir = tempfile::tempdir().unwrap();
    let (code, summary, jsonl) = gate(dir.path(), &batch_misbehave("swap"));
    assert_eq!(code, 1, "{summary}");
    assert!(!jsonl.trim().is_empty(), "{summary}");
}

#[test]
fn a_frame_that_crashes_is_judged_over_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    // The JSON lines answer correctly, so the run passes: no case is lost.
    let (code, summary, jsonl) = gate(dir.path(), &batch_misbehave("crash"));
    assert_eq!(code, 0, "{summary}\n{jsonl}");
}

/// Issue 31: a batch64 instance that exits on its frame while a grandchild
/// it started (`sleep 120`) holds its stdout open (so its stdout never
/// ends) is a crash as soon as it exits (the wait of a running child looks
/// at the process, not only at its output), not a timeout after the
/// answer wait: the frame's bundles go down the JSON lines one by one,
/// which answer correctly, so nothing is blamed on the subject and every
/// case is judged; the grandchild is killed with the instance's process
/// group. Before (main's frame wait, end of output only), each of the two
/// frames waited out the whole answer wait (half of `--case-timeout`) and
/// was counted a timeout.
#[test]
fn a_batch_instance_that_exits_while_a_grandchild_holds_its_stdout_is_a_crash_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("grandchildren");
    let subject = format!("{} {}", batch_misbehave("orphan"), pids.display());
    // An answer may take half the case timeout: 15 s.
    let (case_timeout, answer_wait) = ("30", Duration::from_secs(15));
    let t0 = Instant::now();
    // One thread, no corpus: one frame per validator, one after the other.
    let (code, summary, jsonl) = gate_with_args(
        dir.path(),
        &subject,
        &[
            "--threads",
            "1",
            "--no-corpus",
            "--case-timeout",
            case_timeout,
        ],
    );
    let took = t0.elapsed();
    eprintln!("gate with a batch64 instance orphaning its stdout took {took:?}");
    assert_eq!(code, 0, "{summary}\n{jsonl}");
    assert!(jsonl.trim().is_empty(), "{jsonl}");
    assert!(
        summary.contains("6,000 cases"),
        "every case judged: {summary}"
    );
    assert!(summary.contains(", agree"), "{summary}");
    // Each validator's frame reached the instance (and started a grandchild).
    let frames = std::fs::read_to_string(&pids).unwrap_or_default();
    for op in ["validate_header", "validate_payload"] {
        assert!(frames.contains(op), "no {op} frame: {frames}");
    }
    // A timeout fault needs the whole answer wait: the frames were crashes.
    assert!(
        took < answer_wait,
        "took {took:?}, a frame waited out its answer wait of {answer_wait:?}"
    );
    // No grandchild outlives the gate (docs/guarantees.md S7).
    let mark = pids.to_str().unwrap();
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        processes_with(mark).is_empty() && pids_in_column(&frames).all(|p| !alive(p))
    });
    assert!(gone, "left behind: {frames}, {:?}", processes_with(mark));
}

/// The pids of `<op> <pid>` lines.
fn pids_in_column(lines: &str) -> impl Iterator<Item = u32> + '_ {
    lines
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
}
