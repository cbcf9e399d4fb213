//! End-to-end tests of `tpbconform gate`, `replay` and `minimize` (the
//! release gate): determinism of reports, sharding, exit codes, bad input,
//! fail-closed behaviour and crash safety. Kept fast in debug builds (small
//! `--cases`).

mod common;
mod subjects;

use common::{code, gate_over, refused, stderr, tpb, BIN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tpbconform::gate::{self, GateConfig, Shard};
use tpbconform::generation::Generation;
use tpbconform::targets::Target;

fn tmp(name: &str) -> PathBuf {
    common::tmp("gate-test", name)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        }
        out.push(p);
    }
    out.sort();
    out
}

fn strip_timing(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.contains("[timing]"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Copies the repository's vector files into `corpus/vectors/`.
fn copy_real_vectors(corpus: &Path) {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/vectors");
    std::fs::create_dir_all(corpus.join("vectors")).unwrap();
    // The vector files (the gate ignores subfolders such as streams/).
    for e in std::fs::read_dir(real).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), corpus.join("vectors").join(e.file_name())).unwrap();
        }
    }
}

/// A small corpus: a few known files for every target the tests select
/// (the gate refuses a selected target without corpus files), and the real
/// vector files.
fn small_corpus(root: &Path) -> PathBuf {
    let c = root.join("corpus");
    let mut h = [0u8; 64];
    h[0] = 0x85;
    h[1] = 0x10;
    let mut p = [0u8; 64];
    p[0] = 0x86;
    for (file, data) in [
        ("validate_header/canonical", &h[..]),
        ("validate_header/empty", b""),
        ("alu_lut/ord24", &[24u8]),
        ("luts/ord3", &[3u8]),
        ("validate_payload/zero", &p[..]),
        ("ir_gates/zero", &[0u8; 8]),
        ("custom_op_stream/header", &h[..]),
    ] {
        let path = c.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, data).unwrap();
    }
    copy_real_vectors(&c);
    c
}

const FAST: &str = "validate_header,validate_payload,collective_lut,alu_lut,ir_gates";

/// `run.json` without its `integrity` record (the digests of the other
/// files, whose `[timing]` lines differ): every other field is clock-free.
/// `run.json` without its clock- and machine-dependent parts: the
/// `machine` group (threads, wall time, each subject's calls, answers,
/// time, rate, restarts) and the `integrity` digests of the other files.
fn run_json_facts(report: &Path) -> serde_json::Value {
    let mut v = run_json(report);
    let o = v.as_object_mut().unwrap();
    o.remove("integrity");
    o.remove("machine").expect("run.json has its machine group");
    v
}

fn run_json(report: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(report.join("run.json")).unwrap()).unwrap()
}

/// Same seed, same report (issue 35, item 4): with and without a subject
/// under test, with 1 and 2 threads, every file of the report is the same
/// once the `[timing]` lines (and run.json's `integrity` digests of them)
/// are set aside; the subject table's calls, answers, time, rates and
/// restarts are `[timing]` lines (before: table cells without the marker,
/// which differed between two runs), and in run.json they live in its one
/// `machine` group (before: `calls`, `answers_received`, `answers_compared`
/// among each subject's facts).
#[test]
fn same_seed_gives_identical_reports_any_thread_count() {
    let root = tmp("determinism");
    let corpus = small_corpus(&root);
    let lib = subjects::c_example(&root, true);
    let subject = format!("lib:{}", lib.display());
    // A 500-case gate of `seed` (and `more` arguments) with its report in `dir`.
    let run = |dir: &str, seed: &str, more: &[&str], want: &[i32]| {
        let report = root.join(dir);
        let mut args = vec!["gate", "--cases", "500", "--seconds", "0", "--seed", seed];
        args.extend(["--targets", FAST, "--corpus", corpus.to_str().unwrap()]);
        args.extend(["--report-dir", report.to_str().unwrap()]);
        args.extend(more);
        let o = tpb(&args);
        assert!(want.contains(&code(&o)), "{}", stderr(&o));
        report
    };
    let same = |a: &Path, b: &Path| {
        let rel = |base: &Path| -> Vec<PathBuf> {
            files_under(base)
                .iter()
                .map(|p| p.strip_prefix(base).unwrap().to_path_buf())
                .collect()
        };
        assert_eq!(rel(a), rel(b));
        for name in ["summary.md", "divergences.jsonl", "junit.xml", "index.html"] {
            let x = std::fs::read(a.join(name)).unwrap();
            let y = std::fs::read(b.join(name)).unwrap();
            assert_eq!(strip_timing(&x), strip_timing(&y), "{name} differs");
        }
        assert_eq!(run_json_facts(a), run_json_facts(b), "run.json differs");
    };
    // With the planted-bug library: findings, a subject table.
    let sa = run(
        "sa",
        "0x1234",
        &["--threads", "1", "--subject", &subject],
        &[0, 1],
    );
    let sb = run(
        "sb",
        "0x1234",
        &["--threads", "2", "--subject", &subject],
        &[0, 1],
    );
    same(&sa, &sb);
    let s = std::fs::read_to_string(sa.join("summary.md")).unwrap();
    assert!(
        s.contains(&format!("[timing] {subject}: ")) && s.contains(" calls, "),
        "{s}"
    );
    // What was set aside: the machine group, which does differ (threads),
    // holds each subject's counts, and only it does.
    let (ma, mb) = (run_json(&sa), run_json(&sb));
    assert_ne!(ma["machine"], mb["machine"]);
    let m = &ma["machine"]["subjects"][0];
    assert_eq!(m["spec"], subject.as_str(), "{m}");
    for k in [
        "calls",
        "answers_received",
        "answers_compared",
        "subject_ms",
    ] {
        assert!(m[k].is_u64(), "{k} in {m}");
    }
    for k in ["calls", "answers_received", "answers_compared"] {
        assert!(ma["subjects"][0].get(k).is_none(), "{k} outside machine");
    }
    let a = run("a", "0x1234", &["--threads", "1"], &[0]);
    let b = run("b", "0x1234", &["--threads", "2"], &[0]);
    same(&a, &b);
    let s = std::fs::read_to_string(a.join("summary.md")).unwrap();
    assert!(s.contains("result: **PASS**"), "{s}");
    assert!(s.contains("## Coverage"), "{s}");
    assert!(s.contains("cases/s"), "{s}");
    // A different seed changes the cases (the coverage counts move).
    let c = std::fs::read(run("c", "99", &[], &[0]).join("summary.md")).unwrap();
    assert_ne!(
        strip_timing(&c),
        strip_timing(&std::fs::read(a.join("summary.md")).unwrap())
    );
    std::fs::remove_dir_all(&root).unwrap();
}

fn lib_cfg(corpus: &Path, shard: Shard) -> GateConfig {
    GateConfig {
        cases: 700,
        seconds: None,
        seed: 5,
        shard,
        targets: ["validate_header", "dtype_lut", "custom_op_group"]
            .iter()
            .map(|n| Target::named(n))
            .collect(),
        corpus_dir: corpus.to_path_buf(),
        threads: 2,
        ..GateConfig::default()
    }
}

#[test]
fn shards_cover_the_unsharded_run_exactly() {
    let root = tmp("shards");
    let corpus = root.join("no-corpus");
    let full = gate::run(&lib_cfg(&corpus, Shard::default()), None);
    let n = 3;
    let parts: Vec<_> = (0..n)
        .map(|i| gate::run(&lib_cfg(&corpus, Shard { index: i, count: n }), None))
        .collect();
    for (ti, (t, st)) in full.targets.iter().enumerate() {
        let ran: u64 = parts.iter().map(|p| p.targets[ti].1.ran).sum();
        assert_eq!(ran, st.ran, "{t}");
        assert_eq!(st.ran, 700);
        // Coverage cells add up: the shards ran exactly the same cases.
        let mut sum = std::collections::BTreeMap::<String, [u64; 6]>::new();
        for p in &parts {
            for (k, v) in &p.targets[ti].1.coverage {
                let e = sum.entry(k.clone()).or_insert([0; 6]);
                for (a, b) in e.iter_mut().zip(v) {
                    *a += b;
                }
            }
        }
        assert_eq!(sum, st.coverage, "{t}");
    }
    // The index sets are disjoint and complete.
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..n {
        for id in (Shard { index: i, count: n }).case_ids(700) {
            assert!(seen.insert(id), "case {id} in two shards");
        }
    }
    assert_eq!(seen, (0..700).collect());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn replay_exit_codes_and_bad_input() {
    let root = tmp("replay");
    let mut h = [0u8; 64];
    h[0] = 0x85;
    h[1] = 0x10;
    let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
    let o = tpb(&["replay", "--target", "validate_header", "--hex", &hex]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("agree"));

    let o = tpb(&[
        "replay",
        "--target",
        "validate_header",
        "--hex",
        &hex[..127],
    ]);
    refused(&o, "--hex:1: odd number of hex digits (127)");

    let bad = format!("{}zz{}", &hex[..10], &hex[12..]);
    let o = tpb(&["replay", "--target", "validate_header", "--hex", &bad]);
    refused(&o, "bad hex digit 'z' at offset 10");

    let empty = root.join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    // An empty artefact is what a fuzzer can find: replayed as the fuzz entry maps it
    // (issue 32), a verdict, never a usage error.
    let o = tpb(&["replay", "--target", "alu_lut", empty.to_str().unwrap()]);
    assert!(matches!(code(&o), 0 | 1), "{}", stderr(&o));

    let hf = root.join("inputs.hex");
    std::fs::write(&hf, format!("# ok\n{hex}\n\n{}\n", &hex[..63])).unwrap();
    let o = tpb(&[
        "replay",
        "--target",
        "validate_header",
        "--hex-file",
        hf.to_str().unwrap(),
    ]);
    refused(&o, "inputs.hex:4: odd number of hex digits");

    let o = tpb(&["replay", "--target", "nope", "--hex", "00"]);
    assert_eq!(code(&o), 2);
    std::fs::remove_dir_all(&root).unwrap();
}

/// A 10-case `alu_lut` gate over `corpus`, the report in `report`.
fn alu_gate(corpus: &Path, report: &Path) -> Output {
    gate_over(&["--cases", "10", "--targets", "alu_lut"], corpus, report)
}

#[test]
fn gate_bad_input_exits_2_naming_file_and_line() {
    let root = tmp("badinput");
    let corpus = root.join("corpus");
    std::fs::create_dir_all(corpus.join("vectors")).unwrap();
    std::fs::create_dir_all(corpus.join("alu_lut")).unwrap();
    std::fs::write(corpus.join("alu_lut/ord24"), [24u8]).unwrap();
    let h = "00".repeat(64);
    std::fs::write(
        corpus.join("vectors/custom_op.txt"),
        format!(
            "# c\n{h} header invalid valid_opcode\n{}x header valid -\n",
            &h[..127]
        ),
    )
    .unwrap();
    let o = alu_gate(&corpus, &root.join("r1"));
    refused(&o, "custom_op.txt:3:128: bad hex");

    // Empty vector file.
    std::fs::write(corpus.join("vectors/custom_op.txt"), "# nothing\n").unwrap();
    let o = alu_gate(&corpus, &root.join("r2"));
    refused(&o, "custom_op.txt: empty vector file");
    std::fs::remove_file(corpus.join("vectors/custom_op.txt")).unwrap();
    copy_real_vectors(&corpus);

    // Unreadable corpus file (a dangling symlink): refused before the run
    // (issue 35), never a skip.
    std::os::unix::fs::symlink(root.join("missing"), corpus.join("alu_lut/dangling")).unwrap();
    let o = alu_gate(&corpus, &root.join("r3"));
    refused(&o, "alu_lut/dangling");
    assert!(!root.join("r3").exists(), "no report for a refused run");
    std::fs::create_dir_all(root.join("r3")).unwrap();

    // An existing --report-dir is never overwritten.
    let o = tpb(&[
        "gate",
        "--no-corpus",
        "--cases",
        "10",
        "--report-dir",
        root.join("r3").to_str().unwrap(),
    ]);
    refused(&o, "exists already");

    // Bad usage.
    assert_eq!(code(&tpb(&["gate", "--shard", "2/2"])), 2);
    assert_eq!(code(&tpb(&["gate", "--targets", "bogus"])), 2);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn timeout_fails_closed_with_a_report() {
    let root = tmp("timeout");
    let o = Command::new(BIN)
        .args([
            "gate",
            "--cases",
            "100",
            "--targets",
            "alu_lut",
            "--case-timeout",
            "1",
            "--no-corpus",
            "--report-dir",
            root.join("r").to_str().unwrap(),
        ])
        .env("TPB_GATE_DEBUG_HANG_CASE", "7")
        .output()
        .unwrap();
    let s = common::summary_of(&o, 1, &root.join("r"));
    assert!(s.contains("timeout: target alu_lut case #7"), "{s}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn internal_panic_fails_closed() {
    let root = tmp("panic");
    let cfg = GateConfig {
        cases: 50,
        seconds: None,
        targets: vec![Target::named("dge_lut")],
        corpus_dir: root.join("none"),
        no_corpus: true,
        debug_panic_case: Some(3),
        ..GateConfig::default()
    };
    std::panic::set_hook(Box::new(|_| {}));
    let run = gate::run(&cfg, None);
    let _ = std::panic::take_hook();
    assert!(!run.passed());
    assert!(run.failures.iter().any(
        |f| matches!(f, gate::GateFailure::InternalPanic { index: 3, message, .. }
            if message == "debug_panic_case 3")
    ));
    std::fs::remove_dir_all(&root).unwrap();
}

fn assert_no_partial_files(parent: &Path) {
    for p in files_under(parent) {
        let n = p.file_name().unwrap().to_string_lossy().to_string();
        assert!(!n.ends_with(".tmp"), "temp file left: {}", p.display());
        assert!(
            !n.contains(".staging-"),
            "staging folder left: {}",
            p.display()
        );
    }
}

fn spawn_long_gate(report: &Path) -> std::process::Child {
    Command::new(BIN)
        .args([
            "gate",
            "--cases",
            "100000000",
            "--seconds",
            "0",
            "--targets",
            "validate_header,alu_lut",
            "--no-corpus",
            "--report-dir",
            report.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn killed_gate_leaves_no_partial_report() {
    let root = tmp("kill");
    // SIGKILL mid-run: only the folder claimed at the start, still empty;
    // no report file, no temp files.
    let report = root.join("reports/r1");
    let mut child = spawn_long_gate(&report);
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        report.is_dir() && std::fs::read_dir(&report).unwrap().next().is_none(),
        "a killed gate left more than its empty claimed folder {}",
        report.display()
    );
    assert_no_partial_files(&root);

    // SIGTERM: the gate stops, writes a complete report marked interrupted.
    let report = root.join("reports/r2");
    let mut child = spawn_long_gate(&report);
    std::thread::sleep(Duration::from_millis(1500));
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "gate ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(1));
    for f in ["summary.md", "divergences.jsonl", "junit.xml", "index.html"] {
        assert!(report.join(f).is_file(), "{f} missing");
    }
    let s = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(s.contains("interrupted"), "{s}");
    assert_no_partial_files(&root);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn minimize_keeps_one_file_per_signature_and_is_idempotent() {
    let root = tmp("minimize");
    let dir = common::mkdir(&root, "corpus/validate_header");
    let mut h = [0u8; 64];
    h[0] = 0x85;
    h[1] = 0x10;
    std::fs::write(dir.join("a"), h).unwrap();
    std::fs::write(dir.join("b"), h).unwrap(); // same signature, same size
    let mut longer = h.to_vec();
    longer.push(0);
    std::fs::write(dir.join("c"), &longer).unwrap(); // same signature, larger
    let mut bad = h;
    bad[0x20] = 1; // reserved_zero
    std::fs::write(dir.join("d"), bad).unwrap();
    let o = tpb(&["minimize", root.join("corpus").to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "d"]);
    let o = tpb(&["minimize", dir.to_str().unwrap()]);
    assert_eq!(code(&o), 0);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    assert_no_partial_files(&root);
    let o = tpb(&["minimize", root.join("nope").to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn default_gate_covers_every_generation_and_arch_narrows_it() {
    let root = tmp("arches");
    let corpus = root.join("no-corpus");
    let cfg = GateConfig {
        no_corpus: true,
        ..lib_cfg(&corpus, Shard::default())
    };
    let all = gate::run(&cfg, None);
    assert!(all.passed(), "{:?}", all.failures);
    let names: Vec<&str> = all.arches.iter().map(|(a, _)| a.name()).collect();
    assert_eq!(names, ["v2", "v3", "v4", "v5"]);
    // 3 targets x 700 cases, case i under the (i mod 4)-th generation: 175 each per target.
    for (a, st) in &all.arches {
        assert_eq!(st.ran, 3 * 175, "{a}");
    }
    let md = tpbconform::report::summary_md::render(&tpbconform::report::ReportModel::of_gate(
        &cfg,
        &all,
        &[],
        "t",
    ));
    for row in ["| v2 Sunda | ok | 525 |", "| v5 Maverick | ok | 525 |"] {
        assert!(md.contains(row), "{row} in\n{md}");
    }
    let v4 = gate::run(
        &GateConfig {
            arches: vec![Generation::V4],
            ..cfg.clone()
        },
        None,
    );
    assert!(v4.passed(), "{:?}", v4.failures);
    assert_eq!(v4.arches.len(), 1);
    assert_eq!(
        v4.arches[0],
        (
            Generation::V4,
            gate::ArchStats {
                name: "v4".into(),
                ran: 2100,
                diverged: 0
            }
        )
    );
    std::fs::remove_dir_all(&root).unwrap();
}
