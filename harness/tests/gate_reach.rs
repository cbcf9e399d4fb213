//! The gate's spec-coverage report (issue 12, item 2): generated cases are
//! classified into every field's value classes ([`tpbconform::reach`]) while
//! the gate runs; summary.md, run.json and junit.xml list the classes the run
//! never hit, and a full run (complete, unsharded, every target, at least the
//! default case count) with an unhit class FAILS.

mod common;

use common::{code, stderr, strs, BIN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tpbconform::gate::{self, reach_failure, GateConfig, GateFailure, GateRun};
use tpbconform::generation::Generation;
use tpbconform::kinds::declared_reach;
use tpbconform::targets::Target;

/// Hits of `class` of `field` in `reach` (`None` when not declared).
fn hits(reach: &tpbconform::reach::Reach, field: &str, class: &str) -> Option<u64> {
    let classes = *reach.table().get(field)?;
    classes.iter().find(|(c, _)| *c == class).map(|(_, n)| *n)
}

fn tmp(name: &str) -> PathBuf {
    common::tmp("gate-reach", name)
}

/// A run of every gate target with no case classified: every declared class unhit.
fn empty_full_run(cfg: &GateConfig) -> GateRun {
    GateRun {
        reach: declared_reach(&cfg.targets, &Generation::ALL),
        ..GateRun::default()
    }
}

#[test]
fn unhit_classes_fail_only_a_full_run() {
    let cfg = GateConfig::default();
    let run = empty_full_run(&cfg);
    let unhit = run.reach.unhit();
    // Declared classes from the spec tables, not from the generators.
    for c in [
        "0xD9.dtype: 0x10",
        "0xD9.kind: 0x0A..0xFF",
        "opcode: non-roster",
        "stream.num_arguments: 255",
        "generation: v5",
    ] {
        assert!(unhit.iter().any(|u| u == c), "{c} not declared: {unhit:?}");
    }
    match reach_failure(&cfg, &run) {
        Some(GateFailure::Unreached { classes }) => assert_eq!(classes, unhit),
        other => panic!("a full run with unhit classes must fail, got {other:?}"),
    }
    assert!(reach_failure(&cfg, &run)
        .unwrap()
        .to_string()
        .contains("0xD9.dtype: 0x10"));
    // Not a full run: fewer cases, a shard, a subset of the targets, cut short.
    let fewer = GateConfig {
        cases: cfg.reach_required_from - 1,
        ..cfg.clone()
    };
    assert_eq!(reach_failure(&fewer, &run), None);
    let shard = GateConfig {
        shard: "1/4".parse().unwrap(),
        ..cfg.clone()
    };
    assert_eq!(reach_failure(&shard, &run), None);
    let subset = GateConfig {
        targets: Target::gate_targets()[1..].to_vec(),
        ..cfg.clone()
    };
    assert_eq!(reach_failure(&subset, &empty_full_run(&subset)), None);
    let cut = GateRun {
        stopped_early: true,
        ..empty_full_run(&cfg)
    };
    assert_eq!(reach_failure(&cfg, &cut), None);
}

#[test]
fn the_gate_classifies_one_in_sixteen_of_its_cases() {
    let t = Target::gate_targets()
        .into_iter()
        .find(|t| t.name() == "validate_header")
        .unwrap();
    let cfg = GateConfig {
        cases: 4000,
        targets: vec![t],
        no_corpus: true,
        threads: 2,
        seconds: None,
        ..GateConfig::default()
    };
    let run = gate::run(&cfg, None);
    let sampled = (0..cfg.cases).filter(|&i| gate::reach_sampled(i)).count() as u64;
    assert!(
        (4000 / 16 / 2..4000 / 16 * 2).contains(&sampled),
        "one in {} of the indices: {sampled}",
        gate::REACH_SAMPLE
    );
    // Each classified bundle counts once in `opcode`.
    let opcode: u64 = run.reach.table()["opcode"].iter().map(|(_, n)| n).sum();
    assert_eq!(opcode, sampled);
    // ... and once under the generation it ran under (every one of the run's).
    let per_gen: Vec<u64> = cfg
        .arches()
        .iter()
        .map(|a| hits(&run.reach, "generation", a.name()).unwrap())
        .collect();
    assert_eq!(per_gen.iter().sum::<u64>(), sampled);
    assert!(per_gen.iter().all(|&n| n > 0), "{per_gen:?}");
    assert!(hits(&run.reach, "0x85.reserved@0x11", "zero").unwrap() > 0);
    // A subset of the targets is not a full run: unhit classes are listed, not failed.
    assert!(!run.reach.unhit().is_empty());
    assert!(run.passed(), "{:?}", run.failures);
}

fn gate(report: &Path, reach_from: Option<&str>) -> Output {
    let mut c = Command::new(BIN);
    c.args([
        "gate",
        "--quiet",
        "--no-corpus",
        "--cases",
        "400",
        "--sync-cases",
        "20",
        "--report-dir",
        report.to_str().unwrap(),
    ])
    .stdin(Stdio::null());
    if let Some(n) = reach_from {
        c.env("TPB_GATE_DEBUG_REACH_FROM", n);
    }
    c.output().unwrap()
}

#[test]
fn unexercised_classes_reach_summary_run_json_and_junit_and_fail_a_full_run() {
    let root = tmp("cli");
    // 400 cases per target leave classes unhit: listed, but not a failure
    // (the run is below the full-run case count).
    let small = root.join("small");
    let o = gate(&small, None);
    let summary = common::summary_of(&o, 0, &small);
    assert!(summary.contains("## Reach: value classes of every field"));
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(small.join("run.json")).unwrap()).unwrap();
    let unexercised = strs(&meta["unexercised"], None);
    assert!(!unexercised.is_empty());
    assert!(summary.contains(&format!("Unexercised classes ({}):", unexercised.len())));
    for c in &unexercised {
        assert!(summary.contains(&format!("- `{c}`")), "{c} not in summary");
    }
    let junit = std::fs::read_to_string(small.join("junit.xml")).unwrap();
    assert!(junit.contains("name=\"reach\""));
    assert!(!junit.contains("never generated"));

    // The same run counted as full: FAIL, the classes in every output.
    let full = root.join("full");
    let o = gate(&full, Some("400"));
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(full.join("run.json")).unwrap()).unwrap();
    assert_eq!(meta["verdict"], "FAIL");
    assert_eq!(
        meta["unexercised"].as_array().unwrap().len(),
        unexercised.len()
    );
    let failures = meta["failures"].as_array().unwrap();
    assert!(
        failures.iter().any(|f| f
            .as_str()
            .unwrap()
            .contains(&format!("never generated {} declared", unexercised.len()))),
        "{failures:?}"
    );
    let junit = std::fs::read_to_string(full.join("junit.xml")).unwrap();
    let at = junit.find("name=\"reach\"").unwrap();
    let case = &junit[at..at + junit[at..].find("</testcase>").unwrap()];
    assert!(case.contains("<error type=\"gate\""), "{case}");
    assert!(case.contains(unexercised[0]), "{case}");
    let summary = std::fs::read_to_string(full.join("summary.md")).unwrap();
    assert!(summary.contains("result: **FAIL**"));
    std::fs::remove_dir_all(&root).unwrap();
}
