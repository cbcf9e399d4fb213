//! The `batch64` framing of `cmd:` subjects through the gate: the Python
//! example with `--batch64` passes (and its planted bug is caught) with its
//! validator cases sent as frames; a subject that drops a record, answers
//! two records in the other order or echoes the wrong frame number is a
//! finding; one that crashes on a frame has its inputs judged over the JSON
//! lines (named there).

mod common;
mod subjects;

use common::{repo_root, BIN};
use std::path::Path;
use std::process::Command;
use subjects::*;

fn gate(dir: &Path, subject: &str) -> (i32, String, String) {
    let report = dir.join(format!("r{}", dir.read_dir().unwrap().count()));
    let o = Command::new(std::path::PathBuf::from(BIN))
        .current_dir(repo_root())
        .args(["gate", "--quiet", "--cases", "3000", "--arch", "v2"])
        .args(["--targets", "validate_header,validate_payload"])
        .args(["--subject", subject, "--subject-cases", "1000000"])
        .arg("--report-dir")
        .arg(&report)
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
