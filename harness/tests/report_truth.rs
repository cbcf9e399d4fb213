//! Reports that tell the truth (issue 19 item 8): a subject's answer (and
//! core's next to it) is printed with SPEC names, never Rust Debug forms,
//! in the console, summary.md, divergences.jsonl, `replay` and
//! `subject-check`; a divergence a subject makes is listed once (not again
//! as a masked `structured_diff` copy); replay commands of a subject given
//! by a relative path run from the repository root and from the report
//! folder; `replay --case-timeout` bounds a hang.

mod common;
mod subjects;

use common::{code, repo_root, sh_in, text, tpb_in as run_in};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};
use subjects::{c_example, misbehave_py, tiny_py};

/// The Rust Debug forms a subject's answer used to be printed in
/// (`Some(InstWordLen)`, `Err(Known("not_shipped"))`, `Route::Dma`): found
/// in `s`, each with its line.
fn debug_forms(s: &str) -> Vec<String> {
    let mut pats: Vec<String> = [
        "Some(", "Known(", "Unknown(", "(None", "None)", "Sb2sb", "Dma",
    ]
    .iter()
    .map(|p| (*p).to_string())
    .collect();
    // Every predicate's Debug name (`InstWordLen`, …) is no SPEC name.
    pats.extend(tpb_core::validate::Predicate::ALL.map(|p| format!("{p:?}")));
    s.lines()
        .flat_map(|l| {
            pats.iter()
                .filter(|p| l.contains(p.as_str()))
                .map(move |p| format!("`{p}` in: {l}"))
        })
        .collect()
}

fn assert_no_debug_forms(what: &str, s: &str) {
    let found = debug_forms(s);
    assert!(found.is_empty(), "{what}:\n{}", found.join("\n"));
}

/// A Python subject (every generation) written into `dir`: `valid` answers
/// valid to both validators; `lut_unsupported` declares `lut` and answers
/// every lookup `unsupported` (a declared operation: a finding).
fn tiny(dir: &Path, mode: &str) -> PathBuf {
    let (ops, answer) = match mode {
        "valid" => (
            "['validate_header', 'validate_payload']",
            "{'id': req['id'], 'failed': None}",
        ),
        _ => ("['lut']", "{'id': req['id'], 'unsupported': True}"),
    };
    tiny_py(dir, mode, ops, answer)
}

/// `tpbconform gate --quiet --no-corpus` in `cwd`: `cases` cases of `targets` with
/// `subject`, the report in `report`.
/// A gate of `subject` that must diverge (exit 1); its summary.md.
fn diverging_summary(report: &Path, cases: &str, targets: &str, subject: &str) -> String {
    let o = subject_gate(&repo_root(), report, cases, targets, subject);
    common::summary_of(&o, 1, report)
}

fn subject_gate(cwd: &Path, report: &Path, cases: &str, targets: &str, subject: &str) -> Output {
    let report = report.to_str().unwrap();
    run_in(
        cwd,
        &[
            "gate",
            "--quiet",
            "--no-corpus",
            "--cases",
            cases,
            "--targets",
            targets,
            "--subject",
            subject,
            "--report-dir",
            report,
        ],
    )
}

/// `tpbconform replay --target TARGET --hex HEX <extra>` in the repository root.
fn replay(target: &str, hex: &str, extra: &[&str]) -> Output {
    let mut args = vec!["replay", "--target", target, "--hex", hex];
    args.extend_from_slice(extra);
    run_in(&repo_root(), &args)
}

#[test]
fn a_subjects_divergence_is_listed_once_never_as_a_masked_structured_diff_copy() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("cmd:python3 {}", tiny(dir.path(), "valid").display());
    let report = dir.path().join("r");
    // Every gate target, so the corpus of the fuzz-only structured_diff
    // target is replayed too (its items run through the validators).
    let o = run_in(
        &repo_root(),
        &[
            "gate",
            "--quiet",
            "--cases",
            "64",
            "--subject",
            &spec,
            "--report-dir",
            report.to_str().unwrap(),
        ],
    );
    let summary = common::summary_of(&o, 1, &report);
    assert!(
        summary.contains("| structured_diff/ | structured_diff |"),
        "the structured_diff corpus was not replayed:\n{summary}"
    );
    let recs = common::divergences(&report);
    assert!(recs.iter().any(|r| r["target"] == "validate_header"));
    for r in &recs {
        assert!(
            !(r["target"] == "structured_diff" && r["left_name"] == spec.as_str()),
            "a subject's divergence listed again under structured_diff: {r:#}"
        );
        let key = r["signature"]["key"].as_str().unwrap();
        assert!(!key.contains('#'), "a masked signature: {r:#}");
    }
    // Each (target, signature) once.
    let mut keys: Vec<String> = recs
        .iter()
        .map(|r| format!("{} {} {}", r["target"], r["signature"], r["left_name"]))
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n);
    assert_no_debug_forms("summary.md", &summary);
    assert_no_debug_forms("stdout", &text(&o.stdout));
}

#[test]
fn answers_next_to_a_fault_are_spec_names_in_reports_replay_and_subject_check() {
    let dir = tempfile::tempdir().unwrap();
    // Crashes on bundles ending in 0xEE: core's verdict is printed next to it.
    let crash = misbehave_py("crash");
    let report = dir.path().join("crash");
    let summary = diverging_summary(&report, "2000", "validate_header", &crash);
    assert!(summary.contains("[Crash]"), "{summary}");
    assert_no_debug_forms("summary.md (crash)", &summary);
    let jsonl = std::fs::read_to_string(report.join("divergences.jsonl")).unwrap();
    assert_no_debug_forms("divergences.jsonl (crash)", &jsonl);
    let crashed = common::divergences(&report)
        .into_iter()
        .find(|r| r["class"] == "Crash")
        .unwrap();
    let o = sh_in(&repo_root(), crashed["replay"].as_str().unwrap());
    assert_eq!(code(&o), 1, "{}{}", text(&o.stdout), text(&o.stderr));
    assert_no_debug_forms("replay (crash)", &text(&o.stdout));

    // A LUT subject answering `unsupported` for a table it declares: core's
    // `err:<name>` answers are printed as such (not `Err(Known("…"))`).
    let lut = format!("cmd:python3 {}", tiny(dir.path(), "lut").display());
    let report = dir.path().join("lut");
    let summary = diverging_summary(&report, "400", "alu_lut", &lut);
    assert!(summary.contains("err:"), "{summary}");
    assert_no_debug_forms("summary.md (lut)", &summary);
    let o = run_in(&repo_root(), &["subject-check", &lut]);
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("[Unsupported]"),
        "{}",
        text(&o.stdout)
    );
    assert_no_debug_forms("subject-check (lut)", &text(&o.stdout));
    let o = replay("alu_lut", "ff000000", &["--subject", &lut]);
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    assert_no_debug_forms("replay (lut)", &text(&o.stdout));
}

#[test]
fn replay_commands_of_relative_subject_paths_run_from_the_repository_and_the_report_folder() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    tiny(&work, "valid");
    let lib = c_example(&work, true);
    // Subjects named relative to the folder the gate runs in.
    let lib_rel = format!("lib:./{}", lib.file_name().unwrap().to_string_lossy());
    for spec in ["cmd:python3 tiny_valid.py", lib_rel.as_str()] {
        let report = work.join(format!("report-{}", spec.len()));
        let o = subject_gate(
            &work,
            &report,
            "3000",
            "validate_header,validate_payload",
            spec,
        );
        assert_eq!(code(&o), 1, "{spec}: {}", text(&o.stderr));
        let recs = common::divergences(&report);
        let mine: Vec<&serde_json::Value> =
            recs.iter().filter(|r| r["left_name"] == spec).collect();
        assert!(!mine.is_empty(), "{spec}: no divergence of the subject");
        for r in mine {
            let hex = r["replay"].as_str().unwrap();
            let file = r["replay_file"].as_str().unwrap();
            for cwd in [repo_root(), report.clone()] {
                let o = sh_in(&cwd, hex);
                assert_eq!(
                    code(&o),
                    1,
                    "{hex}\nfrom {}: {}{}",
                    cwd.display(),
                    text(&o.stdout),
                    text(&o.stderr)
                );
                assert!(text(&o.stdout).contains("REPRODUCED"));
            }
            let o = sh_in(&report, file);
            assert_eq!(
                code(&o),
                1,
                "{file}: {}{}",
                text(&o.stdout),
                text(&o.stderr)
            );
        }
        let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
        assert!(summary.contains("by absolute path"), "{summary}");
    }
}

#[test]
fn replay_case_timeout_bounds_a_hanging_subject() {
    // misbehave.py hangs on a bundle ending in 0xEE.
    let hex = format!("85{}ee", "00".repeat(62));
    let start = Instant::now();
    let o = replay(
        "validate_header",
        &hex,
        &["--subject", &misbehave_py("hang"), "--case-timeout", "1"],
    );
    let took = start.elapsed();
    assert_eq!(code(&o), 1, "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("[Timeout]"), "{}", text(&o.stdout));
    assert!(took < Duration::from_secs(8), "replay took {took:?}");
    let o = replay("validate_header", &hex, &["--case-timeout", "0"]);
    common::refused(&o, "--case-timeout");
}

#[test]
fn a_subject_that_fails_to_start_leaves_no_report_folder() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("cwd");
    std::fs::create_dir(&scratch).unwrap();
    for spec in [
        "lib:/nonexistent/libsubject.so",
        "cmd:echo this-is-not-a-hello",
        "cmd:exit 3",
    ] {
        // A nested --report-dir: neither it nor the parents made for it stay.
        let report = dir.path().join("a").join("b").join("r");
        let o = subject_gate(&repo_root(), &report, "10", "validate_header", spec);
        assert_eq!(code(&o), 2, "{spec}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(spec),
            "{spec}: {}",
            text(&o.stderr)
        );
        assert!(!dir.path().join("a").exists(), "{spec}: left a folder");
        // The default folder (reports/<stamp>) likewise, reports/ included.
        let o = run_in(
            &scratch,
            &[
                "gate",
                "--quiet",
                "--no-corpus",
                "--cases",
                "10",
                "--targets",
                "validate_header",
                "--subject",
                spec,
            ],
        );
        assert_eq!(code(&o), 2, "{spec}: {}", text(&o.stderr));
        assert!(!scratch.join("reports").exists(), "{spec}: left reports/");
    }
}
