//! `check` on multi-engine input runs the engine model (SPEC §11) by default: the sample NEFFs
//! of `examples/neff/` (built by `cargo run -p tpb-neff --example build_samples`) with a planted
//! deadlock, an unsatisfiable wait, a wait only a DMA descriptor satisfies and a clean one;
//! `--engine NAME=FILE` streams; `--no-sync`; `--format html`.

mod common;

use common::{code, repo_root, stdout, tpb};
use serde_json::Value;

fn sample(name: &str) -> String {
    repo_root()
        .join("examples/neff")
        .join(name)
        .display()
        .to_string()
}

/// The `"type":"sync"` records of `check --format jsonl ARGS`, and the exit code.
fn sync_records(args: &[&str]) -> (i32, Vec<Value>) {
    let mut all = vec!["check", "--format", "jsonl"];
    all.extend_from_slice(args);
    let o = tpb(&all);
    let recs = stdout(&o)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "sync")
        .collect();
    (code(&o), recs)
}

#[test]
fn a_planted_deadlock_names_both_engines_their_instructions_and_semaphores() {
    let (rc, recs) = sync_records(&[&sample("sync_deadlock.neff")]);
    assert_eq!(rc, 1, "{recs:?}");
    let d: Vec<&Value> = recs.iter().filter(|r| r["finding"] == "deadlock").collect();
    assert_eq!(d.len(), 1, "{recs:?}");
    let c = &d[0]["cycle"];
    assert_eq!(c[0]["waiter"]["engine"], "PE");
    assert_eq!(c[0]["waiter"]["member"], "sg00/pe.bin");
    assert_eq!(c[0]["waiter"]["index"], 1);
    assert_eq!(c[0]["waiter"]["offset"], 64);
    assert_eq!(c[0]["resource"], "S[2]");
    assert_eq!(c[0]["helper"]["engine"], "Pool");
    assert_eq!(c[0]["helper"]["index"], 1);
    assert_eq!(c[1]["waiter"]["engine"], "Pool");
    assert_eq!(c[1]["resource"], "S[3]");
    assert_eq!(c[1]["helper"]["engine"], "PE");
    assert_eq!(d[0]["subgraph"], "sg00");
    assert_eq!(d[0]["advisory"], true);
    // Off with --no-sync: the streams themselves are valid.
    let (rc, recs) = sync_records(&[&sample("sync_deadlock.neff"), "--no-sync"]);
    assert_eq!((rc, recs.len()), (0, 0));
}

#[test]
fn an_unsatisfiable_wait_is_reported_at_the_waiting_instruction() {
    let (rc, recs) = sync_records(&[&sample("sync_unsatisfiable.neff")]);
    assert_eq!(rc, 1);
    let u: Vec<&Value> = recs
        .iter()
        .filter(|r| r["finding"] == "unsatisfiable_wait")
        .collect();
    assert_eq!(u.len(), 1, "{recs:?}");
    assert_eq!(
        (&u[0]["engine"], &u[0]["index"], &u[0]["resource"]),
        (&Value::from("Pool"), &Value::from(1), &Value::from("S[7]"))
    );
    assert_eq!(u[0]["other"][0]["engine"], "PE", "the last update: {u:?}");
}

#[test]
fn a_wait_only_a_dma_descriptor_satisfies_and_a_clean_subgraph_report_nothing() {
    for name in ["sync_dma.neff", "sync_clean.neff"] {
        let (rc, recs) = sync_records(&[&sample(name)]);
        assert_eq!((rc, recs.len()), (0, 0), "{name}: {recs:?}");
    }
}

#[test]
fn engine_files_are_one_subgraph_and_html_draws_its_lanes() {
    let root = common::tmp("check_sync", "engines");
    let insn = |band: [u8; 8]| {
        let mut b = vec![0u8; 64];
        b[0] = 0x01;
        b[1] = 0x10;
        b[4..12].copy_from_slice(&band);
        b
    };
    // PE waits S[2] >= 1 then bumps S[1]; Pool waits S[1] >= 1 then bumps S[2].
    let pe = [
        insn([5, 2, 0, 0, 1, 0, 0, 0]),
        insn([0, 0, 0x13, 1, 0, 0, 0, 0]),
    ]
    .concat();
    let pool = [
        insn([5, 1, 0, 0, 1, 0, 0, 0]),
        insn([0, 0, 0x13, 2, 0, 0, 0, 0]),
    ]
    .concat();
    let (a, b) = (root.join("pe.bin"), root.join("pool.bin"));
    std::fs::write(&a, pe).unwrap();
    std::fs::write(&b, pool).unwrap();
    let ea = format!("PE={}", a.display());
    let eb = format!("Pool={}", b.display());
    let (rc, recs) = sync_records(&["--engine", &ea, "--engine", &eb]);
    assert_eq!(rc, 1);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0]["finding"], "deadlock");
    let o = tpb(&[
        "check", "--format", "html", "--engine", &ea, "--engine", &eb,
    ]);
    assert_eq!(code(&o), 1);
    let html = stdout(&o);
    assert!(html.starts_with("<!doctype html>"), "{html}");
    assert_eq!(html.matches("class=\"cycle\"").count(), 2, "{html}");
    // One engine: nothing to look across.
    let (rc, recs) = sync_records(&["--engine", &ea]);
    assert_eq!((rc, recs.len()), (0, 0));
    let _ = std::fs::remove_dir_all(&root);
}

/// An engine file that cannot be read is bad input before any stream is linted: exit 2, the
/// error on stderr, no other engine's lines on stdout (the workers used to lint the readable
/// file first, or not, depending on which started first).
#[test]
fn an_unreadable_engine_file_refuses_the_run_before_any_line() {
    let root = common::tmp("check_sync", "unreadable");
    let pe = root.join("pe.bin");
    std::fs::write(&pe, [[0x01u8; 64], [0x01u8; 64]].concat()).unwrap();
    let ea = format!("PE={}", pe.display());
    let missing = format!("Pool={}", root.join("missing.bin").display());
    for _ in 0..5 {
        let o = tpb(&["check", "--engine", &ea, "--engine", &missing]);
        assert_eq!(code(&o), 2);
        assert_eq!(stdout(&o), "", "no stream linted before the refusal");
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(
            err.contains("missing.bin") && err.contains("cannot read"),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// `--format summary` counts each subgraph's findings and names them in the closing line, so
/// its exit 1 has a reason on the page; a clean subgraph says so.
#[test]
fn the_summary_counts_the_findings_that_make_its_exit_code() {
    let o = tpb(&[
        "check",
        "--format",
        "summary",
        &sample("sync_deadlock.neff"),
    ]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains(":sg00: sync (advisory): 1 error(s), 0 warning(s): deadlock x1"),
        "{out}"
    );
    assert!(
        out.contains("; 1 sync error(s) across engines (advisory)"),
        "{out}"
    );
    let o = tpb(&["check", "--format", "summary", &sample("sync_clean.neff")]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(out.contains(":sg00: sync (advisory): 0 error(s)"), "{out}");
    assert!(!out.contains("sync error(s) across engines"), "{out}");
}
