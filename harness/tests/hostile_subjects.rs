//! Hostile subjects and signals against the gate (issue 22, item 5): a
//! subject that faults on every input is given up fast, its remaining
//! cases count as not run (FAIL), no subject process (nor a child holding
//! its pipe) outlives the gate, and SIGINT / SIGTERM end the gate within
//! 2 s in every phase.

mod common;
mod subjects;

use common::{exit_within, repo_root, signal, start, Reap};
use nix::sys::signal::Signal;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use subjects::*;

fn tmp(name: &str) -> PathBuf {
    common::tmp("hostile-subj", name)
}

fn spawn(args: &[&str]) -> Reap {
    Reap(start(args, Stdio::null(), Stdio::null(), Stdio::piped()))
}

/// `gate --cases 20000` (no corpus) with `subject`, its report in `report`, and `more`.
fn gate_with(subject: &str, report: &Path, more: &[&str]) -> Reap {
    let mut args = vec!["gate", "--quiet", "--no-corpus", "--cases", "20000"];
    args.extend([
        "--subject",
        subject,
        "--report-dir",
        report.to_str().unwrap(),
    ]);
    args.extend(more);
    spawn(&args)
}

fn stderr_of(c: &mut Child) -> String {
    use std::io::Read;
    let mut e = String::new();
    if let Some(mut s) = c.stderr.take() {
        let _ = s.read_to_string(&mut e);
    }
    e
}

/// No process whose command line holds `mark`, and none of the pids in
/// `pids` (children the fixture forked), is left within a second.
fn nothing_left(mark: &str, pids: &Path) {
    let ok = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        processes_with(mark).is_empty() && pids_in(pids).iter().all(|&p| !alive(p))
    });
    assert!(
        ok,
        "left behind: {:?}, children {:?}",
        processes_with(mark),
        pids_in(pids)
            .into_iter()
            .filter(|&p| alive(p))
            .collect::<Vec<_>>()
    );
}

/// Item 5, done-when: `gate --cases 20000` with a subject that SIGSEGVs on
/// every request exits 1 in under 30 s, fails on the subject given up
/// (naming the first faulting input) and leaves no process behind; so
/// does a subject that forks a `setsid` child holding its stdout.
#[test]
fn a_subject_that_faults_on_every_request_is_given_up_fast() {
    let root = tmp("segv");
    for mode in ["segv", "setsid"] {
        let pids = root.join(format!("{mode}.pids"));
        let mark = format!("{}-{mode}", root.display());
        let spec = sh_segv(&mark, (mode == "setsid").then_some(pids.as_path()));
        let r = root.join(mode);
        // The subject's targets: the debug binary's core is slow.
        let mut g = gate_with(
            &spec,
            &r,
            &["--targets", "validate_header,validate_payload"],
        );
        let got = exit_within(&mut g.0, Duration::from_secs(30));
        let e = stderr_of(&mut g.0);
        let (code, took) = got.unwrap_or_else(|| panic!("{mode}: still running after 30 s"));
        assert_eq!(code, 1, "{mode}: {e}");
        eprintln!("{mode}: gate --cases 20000 took {took:?}");
        for op in ["validate_header", "validate_payload"] {
            assert!(
                e.contains(&format!(
                    "{op}: given up on {op} after 4 faults in a row (first: "
                )),
                "{e}"
            );
        }
        // Every generation's remaining cases of each operation (5 000 per
        // generation and target: a quarter of each) are counted as not run,
        // one failure per generation and operation.
        let not_run: Vec<u64> = e
            .lines()
            .filter_map(|l| {
                l.split("; ")
                    .last()?
                    .strip_suffix(" case(s) it should have judged were not run")
            })
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(not_run.len(), 8, "one per generation and operation: {e}");
        assert!(not_run.iter().all(|&n| n >= 4_500), "{not_run:?}");
        let summary = std::fs::read_to_string(r.join("summary.md")).unwrap();
        assert!(summary.contains("given up"), "{summary}");
        nothing_left(&mark, &pids);
        if mode == "setsid" {
            assert!(!pids_in(&pids).is_empty(), "the fixture started its child");
        }
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Issue 35: give-up is per operation. A library whose `validate_header`
/// crashes on every call but whose LUTs are right is given up on
/// `validate_header` only (per generation, naming it and the cases not run
/// because of it, in the failures, summary.md's subject table and
/// run.json); its two LUT targets are judged on every planned case with
/// answers from the library (its answers compared cover them), core and
/// the oracle run every planned case of every target, and the gate exits 1
/// (never `agree`). Before: the subject was given up as a whole after its
/// fourth crash, and its LUTs were counted as not run.
#[test]
fn a_subject_given_up_on_one_operation_is_still_judged_on_the_others() {
    let root = tmp("one-op");
    let lib = build_c(
        &root,
        "crashing_header",
        &fixture("some_tables.c"),
        &["CRASHING_HEADER"],
    );
    let spec = format!("lib:{}", lib.display());
    let report = root.join("r");
    // One generation and one thread, 100,000 cases: four hand-offs of
    // 32,768 per target, taken in turn (header, wait, update, header, …),
    // so the LUTs' later hand-offs come after the header was given up.
    let mut g = spawn(&[
        "gate",
        "--quiet",
        "--no-corpus",
        "--cases",
        "100000",
        "--arch",
        "v2",
        "--threads",
        "1",
        "--targets",
        "validate_header,wait_mode_lut,update_mode_lut",
        "--subject",
        &spec,
        "--report-dir",
        report.to_str().unwrap(),
    ]);
    let got = exit_within(&mut g.0, Duration::from_secs(120));
    let e = stderr_of(&mut g.0);
    let (code, _) = got.unwrap_or_else(|| panic!("still running after 120 s: {e}"));
    assert_eq!(code, 1, "{e}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["complete"], true, "{run}");
    // Core and the oracle ran every planned case of every target.
    for t in run["targets"].as_array().unwrap() {
        assert_eq!(t["ran"], t["planned"], "{t}");
        assert_eq!(t["planned"], 100_000, "{t}");
    }
    let s = &run["subjects"][0];
    // Given up on validate_header, per generation, and on nothing else.
    let ups = s["given_up"].as_array().unwrap();
    let generations = run["generations"].as_array().unwrap().len();
    assert_eq!(ups.len(), generations, "{ups:?}");
    for u in ups {
        assert_eq!(u["operation"], "validate_header", "{u}");
        assert!(u["reason"].as_str().unwrap().contains("crash"), "{u}");
    }
    let not_run: u64 = ups
        .iter()
        .map(|u| u["cases_not_run"].as_u64().unwrap())
        .sum();
    assert!(
        not_run >= 99_000,
        "{not_run} of 100000 header cases not run"
    );
    // The LUT targets: every planned case judged, with the library's
    // answers (compared with core's).
    let judged = |t: &str| {
        s["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == t)
            .unwrap_or_else(|| panic!("{t} in {s}"))["generated"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(judged("wait_mode_lut"), 100_000, "{s}");
    assert_eq!(judged("update_mode_lut"), 100_000, "{s}");
    assert!(judged("validate_header") < 1000, "{s}");
    // Answers the library gave (not faults, not requests never sent), and
    // no divergence but the header crashes.
    let m = &run["machine"]["subjects"][0];
    assert!(
        m["answers_received"].as_u64().unwrap() >= 200_000,
        "the LUT answers were the library's: {m}"
    );
    let divs = common::divergences(&report);
    assert!(!divs.is_empty());
    for d in &divs {
        assert_eq!(
            (d["target"].as_str(), d["class"].as_str()),
            (Some("validate_header"), Some("Crash")),
            "{d}"
        );
    }
    // The failures name the operation; no failure for a table.
    let failures: Vec<&str> = run["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        failures.iter().all(|f| f
            .contains(") validate_header: given up on validate_header after 4 faults in a row")),
        "{failures:?}"
    );
    assert_eq!(failures.len(), generations, "{failures:?}");
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(summary.contains("validate_header (v2: "), "{summary}");
    assert!(!summary.contains("lut:wait_mode ("), "{summary}");
    assert!(!summary.contains(", agree"), "{summary}");
    // junit.xml files the give-up under the `subjects` testcase (a CI reads it there), not
    // under `vectors` or a target that passed.
    let junit = std::fs::read_to_string(report.join("junit.xml")).unwrap();
    let case = |name: &str| -> String {
        let at = junit
            .find(&format!(" name=\"{name}\">"))
            .unwrap_or_else(|| panic!("no testcase {name}: {junit}"));
        let end = junit[at..]
            .find("</testcase>")
            .map_or(junit.len(), |e| at + e);
        junit[at..end].to_string()
    };
    assert_eq!(
        case("subjects")
            .matches("given up on validate_header")
            .count(),
        generations,
        "{junit}"
    );
    assert!(!case("vectors").contains("given up"), "{junit}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Item 5: `subject-check` of a subject that crashes on every request
/// exits 1 on its own, fast (not an outer timeout), for cmd: and lib:.
#[test]
fn subject_check_of_an_always_faulting_subject_exits_1_fast() {
    let root = tmp("check");
    let pids = root.join("pids");
    let lib = build_c(
        &root,
        "crash_all",
        &fixture("misbehave.c"),
        &["MISBEHAVE_CRASH", "MISBEHAVE_ALWAYS"],
    );
    for spec in [
        hostile_py("segv", Some(&pids)),
        format!("lib:{}", lib.display()),
    ] {
        let mut c = spawn(&["subject-check", &spec]);
        let got = exit_within(&mut c.0, Duration::from_secs(30));
        let e = stderr_of(&mut c.0);
        let (code, took) = got.unwrap_or_else(|| panic!("{spec}: still running after 30 s"));
        assert_eq!(code, 1, "{spec}: {e}");
        eprintln!("subject-check {spec}: {took:?}");
    }
    nothing_left(pids.to_str().unwrap(), &pids);
    std::fs::remove_dir_all(&root).unwrap();
}

/// Item 5: SIGINT and SIGTERM end the gate within 2 s whatever it is
/// doing — corpus replay, generated cases (bundle, sync and lowering
/// targets), a subject phase with a subject that never reads its stdin
/// again, report writing — and no subject process, staging folder or
/// temporary file is left. A second SIGINT ends it at once.
#[test]
fn signals_end_the_gate_within_2s_in_every_phase() {
    let root = tmp("signals");
    let pids = root.join("pids");
    let deaf = hostile_py("deaf", Some(&pids));
    let corpus = repo_root().join("corpus");
    let corpus = corpus.to_str().unwrap();
    // (what, extra arguments, delays before the signal in ms)
    let runs: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        (
            "corpus replay",
            vec!["--corpus", corpus, "--cases", "2000000"],
            vec![50, 300],
        ),
        (
            "generated cases",
            vec!["--no-corpus", "--cases", "5000000"],
            vec![800, 2500],
        ),
        (
            "sync and lowering",
            vec![
                "--no-corpus",
                "--targets",
                "sync_handshake,collective_lowering",
                "--cases",
                "5000000",
                "--sync-cases",
                "5000000",
                "--lowering-cases",
                "5000000",
            ],
            vec![600],
        ),
        (
            "never-reading subject",
            vec!["--no-corpus", "--cases", "20000", "--subject", &deaf],
            vec![1500, 4000],
        ),
        (
            "report writing",
            vec![
                "--no-corpus",
                "--cases",
                "20000",
                "--targets",
                "validate_header",
            ],
            vec![150, 300, 450],
        ),
    ];
    let mut n = 0;
    for (what, args, delays) in &runs {
        for &ms in delays {
            for sig in [Signal::SIGINT, Signal::SIGTERM] {
                n += 1;
                let r = root.join(format!("r{n}"));
                let mut a = vec!["gate", "--quiet", "--report-dir", r.to_str().unwrap()];
                a.extend(args.iter().copied());
                let mut g = spawn(&a);
                std::thread::sleep(Duration::from_millis(ms));
                let sent = Instant::now();
                signal(&g.0, sig);
                let got = exit_within(&mut g.0, Duration::from_secs(10));
                let (code, _) =
                    got.unwrap_or_else(|| panic!("{what} +{ms} ms {sig}: still running"));
                let took = sent.elapsed();
                assert!(
                    took < Duration::from_secs(2),
                    "{what} +{ms} ms {sig}: exit {code} after {took:?}"
                );
                assert!(
                    matches!(code, 0 | 1 | 130),
                    "{what} +{ms} ms {sig}: exit {code}"
                );
                eprintln!("{what} +{ms} ms {sig}: exit {code} {took:?} after the signal");
                nothing_left(pids.to_str().unwrap(), &pids);
                let stray: Vec<_> = std::fs::read_dir(&root)
                    .unwrap()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .filter(|f| f.contains("staging") || f.ends_with(".tmp"))
                    .collect();
                assert!(stray.is_empty(), "{what}: {stray:?}");
                // The report is complete or absent.
                if r.exists() && std::fs::read_dir(&r).unwrap().next().is_some() {
                    assert!(r.join("summary.md").exists(), "{what}: partial report");
                }
            }
        }
    }
    // Double SIGINT with a subject that never reads: exits at once.
    let r = root.join("double");
    let mut g = gate_with(&deaf, &r, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    signal(&g.0, Signal::SIGINT);
    // Well inside the ~20 ms the first one takes to end the gate (a 20 ms
    // pause raced it), and late enough not to merge with it.
    std::thread::sleep(Duration::from_millis(2));
    signal(&g.0, Signal::SIGINT);
    let (code, _) = exit_within(&mut g.0, Duration::from_secs(10)).expect("double SIGINT");
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(code, 130);
    nothing_left(pids.to_str().unwrap(), &pids);
    std::fs::remove_dir_all(&root).unwrap();
}
