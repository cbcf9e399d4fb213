//! Root causes first (issue 32 item 5): with a subject whose payload validator also reads byte
//! 0x0F (arg_type) as reserved, its stream (custom_op_group) divergences follow from the
//! validate_payload one and are folded under it — in divergences.jsonl (`caused_by`), the
//! result line, summary.md and the console, which shows root causes only, each with the short
//! (file form) replay; a stream program's input is shown as the stream it builds.

mod common;

use common::{code, repo_root, stderr, stdout, tmp, tpb, tpb_in};

#[test]
fn stream_divergences_fold_under_the_validator_divergence_they_follow_from() {
    let report = tmp("report_folding", "r");
    std::fs::remove_dir_all(&report).unwrap();
    let subject = repo_root().join("harness/tests/subjects/arg_type_reserved.py");
    let spec = format!("cmd:python3 {}", subject.display());
    let report_arg = report.to_str().unwrap();
    let o = tpb_in(
        &repo_root(),
        &[
            "gate",
            "--cases",
            "2000",
            "--targets",
            "validate_payload,custom_op_group",
            "--subject",
            &spec,
            "--report-dir",
            report_arg,
        ],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let recs = common::divergences(&report);
    let root = recs
        .iter()
        .find(|r| r["target"] == "validate_payload")
        .expect("the payload divergence");
    assert!(root["caused_by"].is_null(), "{root}");
    // Blame from the subject's own answers (item 8): of the payload's bytes, the change that
    // flips its answer is at 0x0F (arg_type, the byte it wrongly checks), not the reserved
    // 0x0C..=0x0E the rule names (all zero).
    let asked: Vec<u64> = root["subject_blame"]
        .as_array()
        .unwrap_or_else(|| panic!("asked: {root}"))
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(asked.contains(&0x0F), "{asked:?}");
    assert!(
        !asked.iter().any(|i| (0x0C..=0x0E).contains(i)),
        "{asked:?}"
    );
    // The field-level diff shows only what the subject declared (item 5): its validators, not
    // core's decoded fields beside `decode = unsupported`.
    for side in ["left_dump", "right_dump"] {
        let dump = root[side]
            .as_str()
            .unwrap_or_else(|| panic!("{side}: {root}"));
        assert!(dump.contains("validate_payload = "), "{side}: {dump}");
        assert!(
            !dump.contains("decode") && !dump.contains("unsupported"),
            "{side}: {dump}"
        );
    }
    let n = root["number"].as_u64().unwrap();
    let groups: Vec<&serde_json::Value> = recs
        .iter()
        .filter(|r| r["target"] == "custom_op_group")
        .collect();
    assert!(!groups.is_empty(), "{recs:?}");
    for g in &groups {
        assert_eq!(g["caused_by"].as_u64(), Some(n), "{g}");
    }
    let folded = recs.iter().filter(|r| !r["caused_by"].is_null()).count();
    let roots = recs.len() - folded;
    // The result line counts root causes and folded ones, on the console and in summary.md.
    let counts = format!("{roots} root cause(s), {folded} more folded under them");
    let out = stdout(&o);
    assert!(out.contains(&counts), "{out}");
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(
        summary.lines().take(5).any(|l| l.contains(&counts)),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("probably caused by #{n}")),
        "summary"
    );
    // The console: root causes only, each with the file-form replay, no 2 KB --hex line.
    assert!(!out.contains("custom_op_group"), "{out}");
    assert!(
        out.contains(&format!("more, probably caused by #{n}")),
        "{out}"
    );
    assert!(
        out.contains("divergences/001-validate_payload.bin"),
        "{out}"
    );
    assert!(!out.contains("--hex"), "{out}");
    // Divergences first (item 6): the result, then the divergences, then targets, subjects…
    let at = |h: &str| summary.find(h).unwrap_or_else(|| panic!("{h}: {summary}"));
    assert!(at("## Divergences") < at("## Targets"), "divergences first");
    assert!(at("## Targets") < at("## Subjects under test"));
    // "not supported" is one line per subject, the generations it lacks grouped.
    let lines: Vec<&str> = summary
        .lines()
        .filter(|l| l.contains("not supported"))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("every target (v3, v4, v5)"), "{lines:?}");
    // The asked bytes beside core's rule-based blame, in summary.md and index.html.
    let line = summary
        .lines()
        .find(|l| l.contains("asked (single-byte changes that flip its answer) blames:"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(line.contains("0x0f"), "{line}");
    // The subject's verdict line names that byte as its field and value, and never claims a
    // zero reserved byte is nonzero (it said "reserved byte 0x0C is 0x00, not zero").
    let said = summary
        .lines()
        .find(|l| l.starts_with("- cmd:") && l.contains("custom_op_payload_reserved_zero` — "))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(
        said.contains("its answer flips on arg_type 0x01 (byte 0x0F)"),
        "{said}"
    );
    assert!(!said.contains("is 0x00, not zero"), "{said}");
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        html.contains("asked (single-byte changes that flip its answer)"),
        "index.html"
    );
    // A stream program's input is the stream it builds.
    assert!(summary.contains("input: the stream it builds ("), "summary");

    // The merged report of the run (one shard) folds the same way, by its own numbers.
    let merged = report.with_file_name("merged");
    let _ = std::fs::remove_dir_all(&merged);
    let m = tpb(&[
        "report",
        "merge",
        report_arg,
        "-o",
        merged.to_str().unwrap(),
    ]);
    let summary = common::summary_of(&m, 1, &merged);
    assert!(
        summary.lines().take(5).any(|l| l.contains(&counts)),
        "merged: {summary}"
    );
    let merged_recs = common::divergences(&merged);
    let root = merged_recs
        .iter()
        .find(|r| r["target"] == "validate_payload")
        .expect("the payload divergence");
    for g in merged_recs
        .iter()
        .filter(|r| r["target"] == "custom_op_group")
    {
        assert_eq!(g["caused_by"], root["number"], "merged: {g}");
    }
}
