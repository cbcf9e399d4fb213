//! `tpbconform gate --subject`, `replay --subject` and `subject-check` with
//! the example subjects (C through `lib:`, Python through `cmd:`), their
//! planted-bug variants, and subjects that crash, hang or print garbage.
//! Small `--cases`: external subjects cost a round trip per case.

mod common;
mod subjects;

use common::{code, repo_root, sh_in, text, BIN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use subjects::*;

/// Validator targets plus one the examples lack.
const TARGETS: &str = "validate_header,validate_payload,decode_any";

/// Runs the gate on `targets` with `cases` cases and the subject; returns
/// its output and summary.md.
fn gate(dir: &Path, subject: &str, targets: &str, cases: &str, extra: &[&str]) -> (Output, String) {
    let (o, summary, _) = gate_in(dir, subject, targets, cases, extra);
    (o, summary)
}

/// [`gate`], also returning the report folder.
fn gate_in(
    dir: &Path,
    subject: &str,
    targets: &str,
    cases: &str,
    extra: &[&str],
) -> (Output, String, PathBuf) {
    let (o, report) = gate_with(dir, subject, targets, cases, extra);
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap_or_else(|e| {
        panic!(
            "no summary.md ({e}); exit {:?}\nstderr: {}",
            o.status.code(),
            text(&o.stderr)
        )
    });
    (o, summary, report)
}

/// The `tpbconform replay --subject …` lines of a summary.
fn replay_lines(summary: &str) -> Vec<String> {
    summary
        .lines()
        .filter_map(|l| {
            let at = l.find("tpbconform replay --subject")?;
            Some(l[at..].trim_end_matches('`').to_string())
        })
        .collect()
}

/// Runs a replay line from a report with `sh` (the report's quoting), the
/// binary under test standing in for `tpbconform`, in the repository root
/// (a line replaying a `divergences/` file: in the report folder `report`).
fn run_replay(line: &str, report: &Path) -> Output {
    if line.contains(" divergences/") {
        sh_in(report, line)
    } else {
        sh_in(&repo_root(), line)
    }
}

#[test]
fn both_examples_pass_the_gate_and_lacking_targets_are_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    let [lib, py] = both_examples(dir.path());
    for spec in [&lib, &py] {
        let (o, summary) = gate(dir.path(), spec, TARGETS, "3000", &[]);
        assert_eq!(code(&o), 0, "{spec}\n{summary}\n{}", text(&o.stderr));
        assert!(summary.contains("PASS"), "{summary}");
        // One line per subject (issue 32): `SPEC: not supported: targets (generations)`.
        assert!(summary.contains(": not supported: "), "{summary}");
        assert_eq!(
            summary.matches(": not supported: ").count(),
            1,
            "one line per subject: {summary}"
        );
        assert!(summary.contains("cases/s"), "{summary}");
    }
    // The library's cases/s is its worker's own time per hand-off: a
    // worker that reports no time leaves no rate.
    let (_, summary) = gate(dir.path(), &lib, TARGETS, "3000", &[]);
    // Its `[timing]` line: `[timing] lib:…: N calls, T s in the subject = R cases/s; …`.
    let row = summary
        .lines()
        .find(|l| l.starts_with("- [timing] lib:") && l.contains(" calls, "))
        .unwrap_or_else(|| panic!("no subject rate line:\n{summary}"));
    let rate: String = row
        .split(" = ")
        .nth(1)
        .and_then(|r| r.split(" cases/s").next())
        .unwrap_or("")
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    assert!(rate.parse::<u64>().is_ok_and(|r| r > 0), "{row}");
}

#[test]
fn planted_bugs_fail_the_gate_naming_the_predicate_and_replay_reproduces() {
    let dir = tempfile::tempdir().unwrap();
    let good_lib = c_example(dir.path(), false);
    let bad_lib = c_example(dir.path(), true);
    let cases = [
        (
            lib_spec(&bad_lib),
            lib_spec(&good_lib),
            "custom_op_payload_reserved_zero",
        ),
        (
            python_spec("--planted-bug"),
            python_spec(""),
            "custom_op_header_reserved_zero",
        ),
    ];
    for (bad, good, predicate) in cases {
        let (o, summary, report) = gate_in(dir.path(), &bad, TARGETS, "3000", &[]);
        assert_eq!(code(&o), 1, "{bad}\n{summary}");
        assert!(summary.contains(predicate), "{bad}: {summary}");
        let lines = replay_lines(&summary);
        assert!(!lines.is_empty(), "{bad}: no replay command in\n{summary}");
        for l in &lines {
            let r = run_replay(l, &report);
            assert_eq!(code(&r), 1, "{l}\n{}{}", text(&r.stdout), text(&r.stderr));
            // The same input through the good build agrees with core.
            let fixed = l.replace(
                &tpbconform::triage::shell_word(&bad),
                &tpbconform::triage::shell_word(&good),
            );
            assert_ne!(&fixed, l);
            let r = run_replay(&fixed, &report);
            assert_eq!(
                code(&r),
                0,
                "{fixed}\n{}{}",
                text(&r.stdout),
                text(&r.stderr)
            );
            // An agreeing replay with a subject says what it cannot show: a
            // divergence of the subject's batch answers.
            assert!(
                text(&r.stdout).contains("one input at a time"),
                "{}",
                text(&r.stdout)
            );
        }
    }
}

/// A subject misbehaving on inputs ending in 0xEE: the gate completes, exits
/// 1, and the report names such an input and the class.
fn misbehaving(spec: &str, class: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (o, summary) = gate(dir.path(), spec, "validate_header", "2000", extra);
    assert_eq!(code(&o), 1, "{spec}\n{summary}\n{}", text(&o.stderr));
    assert!(
        summary.contains(class),
        "{spec}: no `{class}` in\n{summary}"
    );
    // The named input is a bundle whose last byte is 0xEE.
    assert!(
        summary.to_lowercase().contains("ee`") || summary.to_lowercase().contains("ee "),
        "{spec}: no input ending in ee in\n{summary}"
    );
    // The validators still ran to the end: the run is complete, not cut short.
    assert!(!summary.contains("interrupted"), "{summary}");
}

#[test]
fn a_crashing_subject_is_a_crash_finding_with_its_input() {
    misbehaving(&misbehave_py("crash"), "crash", &[]);
    let dir = tempfile::tempdir().unwrap();
    misbehaving(
        &misbehave_lib(dir.path(), "crash", &["MISBEHAVE_CRASH"]),
        "crash",
        &[],
    );
}

#[test]
fn a_hanging_subject_is_a_timeout_finding_with_its_input() {
    misbehaving(&misbehave_py("hang"), "timeout", &["--case-timeout", "4"]);
}

#[test]
fn a_subject_printing_garbage_is_a_protocol_finding_with_its_input() {
    misbehaving(&misbehave_py("garbage"), "protocol", &[]);
}

#[test]
fn subject_check_reports_name_protocol_capabilities_and_smoke_result() {
    let dir = tempfile::tempdir().unwrap();
    let lib = c_example(dir.path(), false);
    let bad = c_example(dir.path(), true);
    for (spec, ok) in [
        (lib_spec(&lib), true),
        (python_spec(""), true),
        (lib_spec(&bad), false),
        (python_spec("--planted-bug"), false),
    ] {
        let o = Command::new(BIN)
            .args(["subject-check", &spec])
            .current_dir(repo_root())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let out = text(&o.stdout);
        assert_eq!(code(&o) == 0, ok, "{spec}\n{out}{}", text(&o.stderr));
        assert!(out.contains("example-"), "{out}");
        assert!(out.contains("tpb-subject/1"), "{out}");
        assert!(out.contains("validate_header"), "{out}");
    }
    let o = Command::new(BIN)
        .args(["subject-check", "cmd:exit 3"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(code(&o), 0);
}

/// A subject under test changes nothing about which cases run: core's
/// predicate × outcome coverage and the reach counts of a gate with the C
/// example are those of the same gate without it (the prefetched cases the
/// per-case loop reuses are the very cases it would have generated).
#[test]
fn a_subject_leaves_the_cases_of_the_run_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let lib = c_example(dir.path(), false);
    let targets = "validate_header,validate_payload,collective_lut";
    let run = |subject: Option<&str>| {
        let report = dir.path().join(format!("cases-{}", subject.is_some()));
        let mut c = Command::new(BIN);
        c.current_dir(repo_root())
            .args(["gate", "--quiet", "--no-corpus", "--seed", "11"])
            .args(["--cases", "20000", "--targets", targets])
            .arg("--report-dir")
            .arg(&report)
            .stdin(Stdio::null());
        if let Some(s) = subject {
            c.args(["--subject", s]);
        }
        let o = c.output().unwrap();
        assert_eq!(code(&o), 0, "{subject:?}: {}", text(&o.stderr));
        let j: serde_json::Value =
            serde_json::from_slice(&std::fs::read(report.join("run.json")).unwrap()).unwrap();
        let coverage: Vec<serde_json::Value> = j["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .map(|t| serde_json::json!([t["name"], t["ran"], t["coverage"]]))
            .collect();
        (coverage, j["reach"].clone())
    };
    let without = run(None);
    let with = run(Some(&lib_spec(&lib)));
    assert_eq!(with.0, without.0, "coverage differs with a subject");
    assert_eq!(with.1, without.1, "reach differs with a subject");
}

/// Issue 19: after the run, triage starts the subjects again only when
/// there is a finding to reproduce. The `cmd:` subject appends a line to
/// a file at each start. One generation, one worker thread and a hello
/// without the batch framing make the run itself two starts (the gate's
/// first judges, for the capabilities and the corpus; the worker's).
#[test]
fn triage_starts_a_subject_again_only_for_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    let starts = |args: &str, want_exit: i32| {
        let log = dir.path().join(format!("starts{}.txt", args.len()));
        let spec = format!(
            "cmd:echo start >> {}; exec python3 {} {args}",
            log.display(),
            example("custom_op.py").display()
        );
        let (o, _) = gate_with(
            dir.path(),
            &spec,
            "validate_header,validate_payload",
            "3000",
            &["--no-corpus", "--threads", "1", "--arch", "v2"],
        );
        assert_eq!(code(&o), want_exit, "{spec}\n{}", text(&o.stderr));
        std::fs::read_to_string(&log).unwrap().lines().count()
    };
    // Agreeing: the run's starts only.
    assert_eq!(starts("", 0), 2);
    // A finding: triage reproduces it on the subject, started once more.
    assert_eq!(starts("--planted-bug", 1), 3);
}

/// The divergences of `subject` in a report: (target, key, count), sorted.
fn divergences_of(report: &Path, subject: &str) -> Vec<(String, String, u64)> {
    let jsonl = std::fs::read_to_string(report.join("divergences.jsonl")).unwrap();
    let mut out: Vec<(String, String, u64)> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|d| d["left_name"] == subject)
        .map(|d| {
            (
                d["target"].as_str().unwrap_or("").to_string(),
                d["signature"]["key"].as_str().unwrap_or("").to_string(),
                d["count"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    out.sort();
    out
}

/// Bulk judging (one subject under test: its batch of answers compared with
/// core's in one pass, only the differing cases judged on their own) finds
/// exactly what judging every case on its own finds, which a run with a
/// second, agreeing subject does: the same divergences and counts, and the
/// same coverage matrix and per-target counts.
#[test]
fn bulk_judging_finds_what_case_by_case_judging_finds() {
    let dir = tempfile::tempdir().unwrap();
    let (good, bad) = (
        lib_spec(&c_example(dir.path(), false)),
        lib_spec(&c_example(dir.path(), true)),
    );
    let targets = "validate_header,validate_payload";
    let extra = ["--arch", "v2", "--no-corpus", "--seed", "7"];
    let (o, bulk) = gate_with(dir.path(), &bad, targets, "20000", &extra);
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    let mut two = extra.to_vec();
    two.extend(["--subject", good.as_str()]);
    let (o2, each) = gate_with(dir.path(), &bad, targets, "20000", &two);
    assert_eq!(code(&o2), 1, "{}", text(&o2.stderr));
    let found = divergences_of(&bulk, &bad);
    assert!(
        found
            .iter()
            .any(|(t, k, _)| t == "validate_payload" && k == "custom_op_payload_reserved_zero"),
        "{found:?}"
    );
    assert_eq!(found, divergences_of(&each, &bad));
    let run = |r: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(r.join("run.json")).unwrap()).unwrap()
    };
    let (a, b) = (run(&bulk), run(&each));
    for (x, y) in a["targets"]
        .as_array()
        .unwrap()
        .iter()
        .zip(b["targets"].as_array().unwrap())
    {
        for field in ["name", "ran", "diverged", "coverage"] {
            assert_eq!(x[field], y[field], "{field} of {}", x["name"]);
        }
    }
    // The cases the subject is counted as judged on: every generated case
    // of both targets, bulk or not.
    let judged = |r: &serde_json::Value| {
        let s = r["subjects"].as_array().unwrap().iter();
        s.filter(|s| s["spec"] == bad.as_str())
            .map(|s| s["targets"].clone())
            .next()
            .unwrap()
    };
    assert_eq!(judged(&a), judged(&b));
    for t in judged(&a).as_array().unwrap() {
        assert_eq!(t["generated"], 20000, "{t}");
    }
}

/// The gate starts its external subjects at once, not one after another:
/// a `cmd:` subject that takes 2 s before its hello, one worker thread and
/// the four generations make eight starts (the gate's first judges, the
/// worker's), 16 s end to end one after another; at once, two rounds of
/// 2 s. The bound is half the sum, generous for a loaded machine.
#[test]
fn subjects_start_at_once_not_one_after_another() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts.txt");
    let spec = format!(
        "cmd:echo start >> {}; sleep 2; exec python3 {}",
        log.display(),
        example("custom_op.py").display()
    );
    let t0 = std::time::Instant::now();
    let (o, _) = gate_with(
        dir.path(),
        &spec,
        "validate_header",
        "40",
        &["--no-corpus", "--threads", "1"],
    );
    let took = t0.elapsed();
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let starts = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(starts, 8, "two rounds of four generations");
    let sum = std::time::Duration::from_secs(2 * starts as u64);
    assert!(took < sum / 2, "{starts} starts of 2 s took {took:?}");
}

/// Started at once, a failed start is still reported as one after another
/// would: the first in (generation, `--subject`) order, however much later
/// it fails than the others. The subject of the first `--subject` fails
/// after 1 s, the second at once; then one subject failing slowly for v2
/// (the first generation) and at once for the others.
#[test]
fn the_first_failed_start_in_order_is_reported_whichever_fails_first() {
    let dir = tempfile::tempdir().unwrap();
    let two = [
        "--no-corpus",
        "--subject",
        "cmd:echo second-broke >&2; exit 4",
    ];
    let (o, _) = gate_with(
        dir.path(),
        "cmd:sleep 1; echo first-broke >&2; exit 3",
        "validate_header",
        "40",
        &two,
    );
    let err = text(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("first-broke") && err.contains("status 3"),
        "{err}"
    );
    assert!(!err.contains("second-broke"), "{err}");
    let spec = r#"cmd:read l; case "$l" in *'"v2"'*) sleep 1; echo v2-broke >&2; exit 3;; *) echo other-broke >&2; exit 4;; esac"#;
    let (o, _) = gate_with(dir.path(), spec, "validate_header", "40", &["--no-corpus"]);
    let err = text(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    // Its stderr's lines, each after an escaped newline (the spec quotes both).
    let said = |w: &str| err.contains(&format!("\\n{w}"));
    assert!(said("v2-broke") && err.contains("status 3"), "{err}");
    assert!(!said("other-broke"), "{err}");
}

/// One subject's start fails while another's (started at the same time,
/// for every generation) succeed: the gate refuses and leaves none of the
/// started processes running.
#[test]
fn a_failed_start_leaves_no_process_of_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids.txt");
    let good = format!(
        "cmd:echo $$ >> {}; exec python3 {}",
        pids.display(),
        example("custom_op.py").display()
    );
    let (o, _) = gate_with(
        dir.path(),
        &good,
        "validate_header",
        "40",
        &["--no-corpus", "--subject", "cmd:sleep 1; exit 3"],
    );
    assert_eq!(code(&o), 2, "{}", text(&o.stderr));
    let started = pids_in(&pids);
    assert_eq!(started.len(), 4, "one per generation, started at once");
    let live: Vec<u32> = started.into_iter().filter(|&p| alive(p)).collect();
    assert!(live.is_empty(), "left running: {live:?}");
}
