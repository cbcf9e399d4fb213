//! What the gate says a subject under test covered (issue 19 items 4 and
//! 6): every generated case of every target it supports under every
//! generation it accepts, by default (`--subject-cases` an opt-in cap), per
//! subject in the console line, summary.md and run.json (summed by
//! `report merge`, forged counts refused); with two subjects, the cohorts
//! of each divergent input and the inputs per cohort pattern.
//! Expected counts are derived from the case plan (case i runs under the
//! (i mod 4)-th generation), never read back from the tool.

mod common;
mod report_support;
mod subjects;

use common::{code, copy_dir, repo_root, stderr, text, BIN};
use report_support::{read_json, reseal, write_json};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use subjects::{c_example, lib_spec, tiny_py};

/// A Python subject of every generation whose validators always answer
/// `answer` (`valid` or a SPEC §3 predicate name).
fn tiny(dir: &Path, answer: &str) -> String {
    let failed = if answer == "valid" {
        "None".to_string()
    } else {
        format!("{answer:?}")
    };
    let ops = "['validate_header', 'validate_payload']";
    let p = tiny_py(
        dir,
        answer,
        ops,
        &format!("{{'id': req['id'], 'failed': {failed}}}"),
    );
    format!("cmd:python3 {}", p.display())
}

/// `tpbconform gate --quiet --no-corpus --report-dir <report> <args>` in the
/// repository root.
/// A `validate_header` gate of `cases` cases with subject `spec` (and `extra` arguments).
fn header_gate(report: &Path, cases: &str, spec: &str, extra: &[&str]) -> Output {
    let args = [
        "--cases",
        cases,
        "--targets",
        "validate_header",
        "--subject",
        spec,
    ];
    gate(report, &[&args[..], extra].concat())
}

fn gate(report: &Path, args: &[&str]) -> Output {
    Command::new(PathBuf::from(BIN))
        .current_dir(repo_root())
        .args(["gate", "--quiet", "--no-corpus", "--report-dir"])
        .arg(report)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn subject<'a>(run: &'a Value, spec: &str) -> &'a Value {
    run["subjects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["spec"] == spec)
        .unwrap_or_else(|| panic!("no subject {spec} in {run:#}"))
}

fn generated_on(s: &Value, target: &str) -> u64 {
    s["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == target)
        .and_then(|t| t["generated"].as_u64())
        .unwrap_or_else(|| panic!("no target {target} in {s:#}"))
}

/// Cases `0..n` that run under generation `k` of 4 (`i mod 4 == k`).
fn under(n: u64, k: u64) -> u64 {
    (0..n).filter(|i| i % 4 == k).count() as u64
}

#[test]
fn a_library_subject_gets_every_generated_case_by_default_and_the_cap_is_opt_in() {
    let dir = tempfile::tempdir().unwrap();
    let spec = lib_spec(&c_example(dir.path(), false));
    // More than the old fixed 100000 per target: the v2 cases above index
    // 100000 reach the subject too.
    let n = 120_000u64;
    let report = dir.path().join("all");
    let o = gate(
        &report,
        &[
            "--cases",
            &n.to_string(),
            "--targets",
            "validate_header,validate_payload,decode_any",
            "--subject",
            &spec,
        ],
    );
    assert_eq!(code(&o), 0, "{}{}", text(&o.stdout), stderr(&o));
    let run = read_json(&report.join("run.json"));
    assert_eq!(run["subject_cases_cap"], Value::Null, "{run:#}");
    let s = subject(&run, &spec);
    // The example serves v2 only: every v2 case of both validators.
    let v2 = under(n, 0);
    assert_eq!(generated_on(s, "validate_header"), v2);
    assert_eq!(generated_on(s, "validate_payload"), v2);
    assert_eq!(s["cases"].as_u64(), Some(2 * v2));
    assert_eq!(s["generations"], serde_json::json!(["v2"]));
    let line = format!("subject {spec}: 2 of 3 targets, v2, 60,000 cases, agree");
    assert_eq!(2 * v2, 60_000);
    assert!(text(&o.stdout).contains(&line), "{}", text(&o.stdout));
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(summary.contains(&line), "{summary}");
    assert!(summary.contains("every generated case"), "{summary}");

    // The cap: only indices below it.
    let capped = dir.path().join("capped");
    let o = header_gate(&capped, "4000", &spec, &["--subject-cases", "1000"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let run = read_json(&capped.join("run.json"));
    assert_eq!(run["subject_cases_cap"], 1000);
    assert_eq!(
        generated_on(subject(&run, &spec), "validate_header"),
        under(1000, 0)
    );
    let summary = std::fs::read_to_string(capped.join("summary.md")).unwrap();
    assert!(summary.contains("--subject-cases 1000"), "{summary}");
}

#[test]
fn a_subject_of_every_generation_is_judged_under_v2_to_v5() {
    let dir = tempfile::tempdir().unwrap();
    // Valid on everything: it diverges where core rejects, agrees elsewhere.
    let spec = tiny(dir.path(), "valid");
    let report = dir.path().join("r");
    let o = header_gate(&report, "200", &spec, &[]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let run = read_json(&report.join("run.json"));
    let s = subject(&run, &spec);
    assert_eq!(
        s["generations"],
        serde_json::json!(["v2", "v3", "v4", "v5"])
    );
    assert_eq!(generated_on(s, "validate_header"), 200);
    let head = format!("subject {spec}: 1 of 1 targets, v2..v5, 200 cases, ");
    let out = text(&o.stdout);
    let line = out.lines().find(|l| l.starts_with(&head));
    assert!(
        line.is_some_and(|l| l.contains("distinct divergence(s)")),
        "{out}"
    );
}

#[test]
fn two_subjects_that_disagree_differently_are_grouped_into_cohorts() {
    let dir = tempfile::tempdir().unwrap();
    let a = tiny(dir.path(), "valid");
    let b = tiny(dir.path(), "inst_word_len");
    let report = dir.path().join("r");
    let n = 200u64;
    let o = gate(
        &report,
        &[
            "--cases",
            &n.to_string(),
            "--targets",
            "validate_header",
            "--subject",
            &a,
            "--subject",
            &b,
        ],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let run = read_json(&report.join("run.json"));
    let cohorts: Vec<(String, u64)> = run["cohorts"]
        .as_array()
        .unwrap_or_else(|| panic!("no cohorts in {run:#}"))
        .iter()
        .map(|c| {
            (
                c["pattern"].as_str().unwrap().to_string(),
                c["inputs"].as_u64().unwrap(),
            )
        })
        .collect();
    // a and b never agree, so every input diverges for one of them: every
    // input is counted under exactly one pattern.
    assert_eq!(cohorts.iter().map(|c| c.1).sum::<u64>(), n, "{cohorts:?}");
    let has = |p: &str| cohorts.iter().any(|(q, k)| q == p && *k > 0);
    // core says valid: a agrees with it, b does not.
    assert!(
        has(&format!("{{core, oracle, {a}}} vs {{{b}}}")),
        "{cohorts:?}"
    );
    // core rejects for another predicate than b's: three answers.
    assert!(
        has(&format!("{{core, oracle}} vs {{{a}}} vs {{{b}}}")),
        "{cohorts:?}"
    );
    // Each divergence record lists its input's cohorts with their answers.
    let records = std::fs::read_to_string(report.join("divergences.jsonl")).unwrap();
    let mut seen = 0;
    for l in records.lines() {
        let r: Value = serde_json::from_str(l).unwrap();
        let cs = r["cohorts"].as_array().unwrap_or_else(|| panic!("{r:#}"));
        let members: Vec<&str> = cs
            .iter()
            .flat_map(|c| c["members"].as_array().unwrap())
            .map(|m| m.as_str().unwrap())
            .collect();
        for who in ["core", "oracle", a.as_str(), b.as_str()] {
            assert_eq!(members.iter().filter(|m| **m == who).count(), 1, "{r:#}");
        }
        let b_says = cs
            .iter()
            .find(|c| c["members"].as_array().unwrap().iter().any(|m| m == &b))
            .map(|c| c["answer"].as_str().unwrap());
        assert_eq!(b_says, Some("inst_word_len"), "{r:#}");
        seen += 1;
    }
    assert!(seen >= 2, "{records}");
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(summary.contains("## Cohorts"), "{summary}");
    assert!(
        summary.contains("cohorts (who gave which answer)"),
        "{summary}"
    );
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("Cohorts: who agreed with whom"));
}

fn merge(dirs: &[PathBuf], out: &Path) -> Output {
    let mut c = Command::new(PathBuf::from(BIN));
    c.args(["report", "merge"])
        .args(dirs)
        .arg("--output")
        .arg(out);
    c.stdin(Stdio::null()).output().unwrap()
}

#[test]
fn merged_shards_sum_each_subjects_cases_and_forged_coverage_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let spec = lib_spec(&c_example(dir.path(), false));
    let n = 400u64;
    let shards: Vec<PathBuf> = (0..2)
        .map(|i| {
            let d = dir.path().join(format!("s{i}"));
            let shard = format!("{i}/2");
            let o = gate(
                &d,
                &[
                    "--cases",
                    &n.to_string(),
                    "--targets",
                    "validate_header",
                    "--arch",
                    "v2",
                    "--shard",
                    &shard,
                    "--subject",
                    &spec,
                ],
            );
            assert_eq!(code(&o), 0, "{}", stderr(&o));
            d
        })
        .collect();
    let out = dir.path().join("merged");
    let o = merge(&shards, &out);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let run = read_json(&out.join("run.json"));
    // Every case runs under v2 (--arch v2): shard 0 the even, shard 1 the odd indices.
    assert_eq!(generated_on(subject(&run, &spec), "validate_header"), n);
    // A shard claiming more judged cases than its parts add up to.
    let forged = dir.path().join("forged");
    let copies: Vec<PathBuf> = shards
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let c = forged.join(format!("s{i}"));
            copy_dir(d, &c);
            if i == 0 {
                let mut m = read_json(&c.join("run.json"));
                let cases = m["subjects"][0]["cases"].as_u64().unwrap();
                m["subjects"][0]["cases"] = (cases + 1_000_000).into();
                write_json(&c.join("run.json"), &m);
                reseal(&c);
            }
            c
        })
        .collect();
    let o = merge(&copies, &dir.path().join("m2"));
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("add up to"), "{}", stderr(&o));
    assert!(!dir.path().join("m2").exists());
}
