//! `lib:` subjects through the shared-memory batch worker
//! (`external::shm_client`): a version-1 library still loads and answers
//! like the JSON-lines worker; a version-2 batch library agrees with its
//! own per-bundle entry points; a planted crash (SIGSEGV) and a planted hang
//! on one input are each named with that exact input, the worker is
//! restarted and every other input is still answered, both in per-bundle
//! mode (stamped) and inside a library batch call (re-run one by one), for
//! the batch validators and for `tpb_lut_batch`; a LUT batch entry left
//! unwritten is a finding on that input; and the gate completes with the
//! planted crash named.

mod common;
mod subjects;

use common::{code, repo_root, stderr, BIN};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use subjects::*;
use tpbconform::external::shm_client::{batch_budget, Chunk, ShmChannel};
use tpbconform::external::{self, Answer, Reply, Request};
use tpbconform::generation::Generation;
use tpbconform::subjects::{Fault, LutTable, SubjectSpec, Validator};

/// A channel's answers to a whole batch, in order.
trait Answers {
    fn validate(&mut self, payload: bool, bs: &[[u8; 64]], tick: &dyn Fn()) -> Vec<Reply>;
    fn lut(&mut self, table: LutTable, ords: &[u32], tick: &dyn Fn()) -> Vec<Reply>;
}

impl Answers for ShmChannel {
    fn validate(&mut self, payload: bool, bs: &[[u8; 64]], tick: &dyn Fn()) -> Vec<Reply> {
        let mut out = Vec::new();
        self.run_into(Chunk::Bundles(payload, bs), tick, &mut |a| out.push(a));
        out
    }

    fn lut(&mut self, table: LutTable, ords: &[u32], tick: &dyn Fn()) -> Vec<Reply> {
        let mut out = Vec::new();
        self.run_into(Chunk::Lut(table, ords), tick, &mut |a| out.push(a));
        out
    }
}

fn channel(lib: &Path, timeout: Duration) -> ShmChannel {
    ShmChannel::start(
        std::path::PathBuf::from(BIN),
        lib.display().to_string(),
        "v2",
        timeout,
    )
    .unwrap_or_else(|e| panic!("start {}: {e}", lib.display()))
}

/// `n` bundles: header-ish images with varied bytes, so every predicate
/// shows up; entry `planted` (if any) ends in 0xEE, the misbehaving input.
fn bundles(n: usize, planted: Option<usize>) -> Vec<[u8; 64]> {
    let mut r = tpbconform::generators::SplitMix64(7);
    (0..n)
        .map(|i| {
            let mut b = [0u8; 64];
            b[0] = if i % 3 == 0 { 0x86 } else { 0x85 };
            b[1] = 0x10;
            b[0x0C] = 3;
            b[0x0F] = 1;
            // A few random bytes in the checked regions, sometimes.
            if i % 2 == 1 {
                let x = r.next_u64();
                b[usize::try_from(x % 64).unwrap()] = (x >> 8) as u8;
            }
            b[63] = if Some(i) == planted { 0xEE } else { 0 };
            b
        })
        .collect()
}

/// The same library's answers as protocol request records (one
/// `tpb_validate_*` call per bundle, the records path of the same worker),
/// as SPEC names.
fn json_verdicts(lib: &Path, payload: bool, bs: &[[u8; 64]]) -> Vec<Option<String>> {
    let spec: SubjectSpec = format!("lib:{}", lib.display()).parse().unwrap();
    let mut c = external::start(
        &spec,
        &std::path::PathBuf::from(BIN),
        Generation::V2,
        Duration::from_secs(10),
    )
    .expect("start");
    let reqs: Vec<Request> = bs
        .iter()
        .map(|b| {
            if payload {
                Request::Validate(Validator::Payload, *b)
            } else {
                Request::Validate(Validator::Header, *b)
            }
        })
        .collect();
    c.call_batch(&reqs)
        .into_iter()
        .map(|r| match r {
            Ok(Answer::Verdict(v)) => v,
            other => panic!("json worker: {other:?}"),
        })
        .collect()
}

fn names(a: &[Reply]) -> Vec<Option<String>> {
    a.iter()
        .map(|x| match x {
            Ok(Answer::Verdict(v)) => v.clone(),
            other => panic!("not a verdict: {other:?}"),
        })
        .collect()
}

#[test]
fn v1_and_v2_libraries_answer_like_the_json_worker_on_both_validators() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = c_example(dir.path(), false);
    let v1 = build_c(
        dir.path(),
        "custom_op_v1",
        &example("custom_op.c"),
        &["TPB_ABI_V1"],
    );
    // More than one hand-off (CHUNK entries each).
    let bs = bundles(2 * tpbconform::external::shm::CHUNK + 1_000, None);
    for lib in [&v1, &v2] {
        let mut ch = channel(lib, Duration::from_secs(10));
        assert_eq!(ch.has_batch(false), lib == &v2, "{}", lib.display());
        for payload in [false, true] {
            let got = names(&ch.validate(payload, &bs, &|| {}));
            let want = json_verdicts(lib, payload, &bs);
            assert_eq!(got, want, "{} payload={payload}", lib.display());
        }
        assert_eq!(ch.supervisor().restarts(), 0);
    }
    // The set of answers is not trivial: several predicates and valid.
    let mut ch = channel(&v2, Duration::from_secs(10));
    let got = names(&ch.validate(false, &bs, &|| {}));
    let distinct: std::collections::BTreeSet<_> = got.iter().collect();
    assert!(distinct.len() >= 4, "{distinct:?}");
    assert!(got.contains(&None));
}

#[test]
fn a_library_without_a_lut_answers_luts_unsupported() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = c_example(dir.path(), false);
    let mut ch = channel(&v2, Duration::from_secs(10));
    let a = ch.lut(LutTable::AluOp, &[0, 1, 2], &|| {});
    assert_eq!(a, vec![Ok(Answer::Unsupported); 3]);
}

/// `misbehave.c` built into `dir` as `stem` with its planted faults
/// `MISBEHAVE_<fault>` defined for each of `faults`.
fn misbehave(dir: &Path, stem: &str, faults: &[&str]) -> PathBuf {
    let defines: Vec<String> = faults.iter().map(|f| format!("MISBEHAVE_{f}")).collect();
    let defines: Vec<&str> = defines.iter().map(String::as_str).collect();
    build_c(dir, stem, &fixture("misbehave.c"), &defines)
}

/// Checks that entry `at` of `got` is a fault of `class` (returned) and every
/// other entry a verdict, the one in `want` when given.
#[track_caller]
fn fault_only_at<'a>(
    got: &'a [Reply],
    at: usize,
    class: &str,
    want: Option<&[Option<String>]>,
) -> &'a Fault {
    let mut fault = None;
    for (i, a) in got.iter().enumerate() {
        match a {
            Err(f) if i == at => {
                assert_eq!(class_of(f), class, "{f}");
                fault = Some(f);
            }
            Ok(Answer::Verdict(v)) if i != at => {
                if let Some(want) = want {
                    let got = v.as_deref();
                    assert_eq!(got, want[i].as_deref(), "entry {i}");
                }
            }
            other => panic!("entry {i}: {other:?}"),
        }
    }
    fault.expect("entry `at` exists")
}

/// Runs `lib` (misbehaving on inputs ending in 0xEE) on 20 000 bundles with
/// the planted one at 12 345; checks that exactly that entry is the fault
/// of `class` and every other entry equals the good library's answer.
fn planted(lib: &Path, class: &str, timeout: Duration) -> Duration {
    let took = planted_with(lib, class, timeout, false);
    // The same with the hand-off rung ahead (the gate's pipelined path):
    // the fault happens before the collecting call and is named the same.
    planted_with(lib, class, timeout, true);
    took
}

fn planted_with(lib: &Path, class: &str, timeout: Duration, ahead: bool) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let good = c_example(dir.path(), false);
    const AT: usize = 12_345;
    let bs = bundles(20_000, Some(AT));
    let want = names(&channel(&good, Duration::from_secs(10)).validate(false, &bs, &|| {}));
    let mut ch = channel(lib, timeout);
    if ahead {
        ch.begin(Chunk::Bundles(false, &bs));
        std::thread::sleep(Duration::from_millis(100));
    }
    let t = Instant::now();
    let got = ch.validate(false, &bs, &|| {});
    let took = t.elapsed();
    assert_eq!(got.len(), bs.len());
    fault_only_at(&got, AT, class, Some(&want));
    assert!(ch.supervisor().restarts() >= 1, "the worker was restarted");
    assert!(given_up(ch.supervisor()).is_none());
    took
}

#[test]
fn a_planted_crash_is_named_exactly_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let single = misbehave(dir.path(), "crash", &["CRASH"]);
    planted(&single, "crash", Duration::from_secs(10));
    let batch = misbehave(dir.path(), "crash_batch", &["CRASH", "BATCH"]);
    planted(&batch, "crash", Duration::from_secs(10));
}

#[test]
fn a_planted_hang_is_named_exactly_and_costs_the_case_timeout_once() {
    let dir = tempfile::tempdir().unwrap();
    let timeout = Duration::from_millis(1500);
    let single = misbehave(dir.path(), "hang", &["HANG"]);
    let took = planted(&single, "timeout", timeout);
    // One timeout, plus restarts and the work: well under two timeouts.
    assert!(took < timeout * 2, "took {took:?}");
    let batch = misbehave(dir.path(), "hang_batch", &["HANG", "BATCH"]);
    let took = planted(&batch, "timeout", timeout);
    // The batch probe (bounded), then one timeout on the named input.
    let bound = batch_budget(tpbconform::external::shm::CHUNK, timeout) + timeout * 2;
    assert!(took < bound, "took {took:?} (bound {bound:?})");
}

#[test]
fn a_hand_off_rung_ahead_serves_only_the_call_it_was_rung_for() {
    let dir = tempfile::tempdir().unwrap();
    let lib = c_example(dir.path(), false);
    let a = bundles(5_000, None);
    let mut b = bundles(5_000, None);
    for x in &mut b {
        x[0] = 0x86; // other answers than `a`'s for most entries
    }
    let want_a = names(&channel(&lib, Duration::from_secs(10)).validate(false, &a, &|| {}));
    let want_b = names(&channel(&lib, Duration::from_secs(10)).validate(false, &b, &|| {}));
    assert_ne!(want_a, want_b, "the two batches must differ for this test");
    let mut ch = channel(&lib, Duration::from_secs(10));
    // Rung for `a`, collected by `a`.
    ch.begin(Chunk::Bundles(false, &a));
    assert_eq!(names(&ch.validate(false, &a, &|| {})), want_a);
    // Rung for `a`, then a call on `b` (another slice), a LUT, the other
    // validator: each gets its own answers, never `a`'s.
    ch.begin(Chunk::Bundles(false, &a));
    assert_eq!(names(&ch.validate(false, &b, &|| {})), want_b);
    ch.begin(Chunk::Bundles(false, &a));
    assert_eq!(
        ch.lut(LutTable::AluOp, &[0, 1], &|| {}),
        vec![Ok(Answer::Unsupported); 2]
    );
    ch.begin(Chunk::Bundles(false, &a));
    let payload = names(&ch.validate(true, &a, &|| {}));
    assert_eq!(payload, json_verdicts(&lib, true, &a));
    // A rung hand-off nobody collects does not stop later calls.
    ch.begin(Chunk::Bundles(false, &b));
    ch.begin(Chunk::Bundles(false, &a));
    assert_eq!(names(&ch.validate(false, &a, &|| {})), want_a);
    assert_eq!(ch.supervisor().restarts(), 0);
}

#[test]
fn a_library_error_is_a_protocol_fault_on_that_input_only() {
    let dir = tempfile::tempdir().unwrap();
    let lib = misbehave(dir.path(), "error", &["ERROR"]);
    let bs = bundles(100, Some(42));
    let got = channel(&lib, Duration::from_secs(10)).validate(false, &bs, &|| {});
    fault_only_at(&got, 42, "protocol", None);
}

/// docs/subject-protocol.md "Shared-memory worker": in a validator hand-off (compact slots)
/// `TPB_ERROR` is a protocol finding on each input and does not count towards giving up: a
/// library that errs on every bundle is still asked every bundle of the next hand-off too.
#[test]
fn library_errors_in_a_validator_hand_off_are_findings_and_do_not_give_up() {
    let dir = tempfile::tempdir().unwrap();
    let lib = misbehave(dir.path(), "error_always", &["ERROR", "ALWAYS"]);
    let bs = bundles(100, None);
    let mut ch = channel(&lib, Duration::from_secs(10));
    for round in 0..2 {
        let got = ch.validate(false, &bs, &|| {});
        assert_eq!(got.len(), bs.len());
        for (i, a) in got.iter().enumerate() {
            assert!(
                matches!(a, Err(f) if class_of(f) == "protocol"),
                "round {round}, entry {i}: {a:?}"
            );
        }
        assert_eq!(given_up(ch.supervisor()), None, "round {round}");
    }
    assert_eq!(ch.supervisor().restarts(), 0);
}

/// A batch validator that leaves one entry unwritten: that entry is a
/// protocol finding, never a verdict left in the buffer by an earlier
/// hand-off (the region is reused), and every other entry is answered.
#[test]
fn a_batch_verdict_left_unwritten_is_a_finding_on_that_input() {
    let dir = tempfile::tempdir().unwrap();
    let lib = misbehave(dir.path(), "unwritten", &["BATCH", "UNWRITTEN"]);
    let good = c_example(dir.path(), false);
    let mut ch = channel(&lib, Duration::from_secs(10));
    assert!(ch.has_batch(false));
    // A first hand-off fills every entry of the region with a verdict.
    let clean = bundles(100, None);
    assert_eq!(
        names(&ch.validate(false, &clean, &|| {})),
        json_verdicts(&good, false, &clean)
    );
    let bs = bundles(100, Some(42));
    let want = json_verdicts(&good, false, &bs);
    let got = ch.validate(false, &bs, &|| {});
    let f = fault_only_at(&got, 42, "protocol", Some(&want));
    assert!(f.to_string().contains("unwritten"), "{f}");
}

#[test]
fn a_library_that_crashes_on_everything_is_given_up_not_restarted_forever() {
    let dir = tempfile::tempdir().unwrap();
    let lib = misbehave(dir.path(), "always", &["CRASH", "ALWAYS"]);
    let bs = bundles(1000, None);
    let mut ch = channel(&lib, Duration::from_secs(10));
    let got = ch.validate(false, &bs, &|| {});
    assert!(given_up(ch.supervisor()).is_some());
    assert!(
        ch.supervisor().restarts() <= 5,
        "{}",
        ch.supervisor().restarts()
    );
    assert!(matches!(&got[999], Err(f) if class_of(f) == "not sent"));
}

/// `tpbconform gate --quiet ARGS --subject lib:LIB --report-dir REPORT`
/// from the repository root (`env`: extra environment, `None` to remove a
/// variable).
fn gate_lib(
    lib: &Path,
    report: &Path,
    args: &[&str],
    env: &[(&str, Option<&str>)],
) -> std::process::Output {
    let mut c = std::process::Command::new(std::path::PathBuf::from(BIN));
    c.current_dir(repo_root())
        .args(["gate", "--quiet"])
        .args(args)
        .arg("--subject")
        .arg(format!("lib:{}", lib.display()))
        .arg("--report-dir")
        .arg(report);
    for (k, v) in env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c.output().unwrap()
}

/// The divergences.jsonl lines of `report` that mention `what`, each
/// naming an input that ends in 0xEE (the misbehaving one).
fn planted_lines(report: &Path, what: &str) -> Vec<String> {
    let jsonl = std::fs::read_to_string(report.join("divergences.jsonl")).expect("jsonl");
    let lines: Vec<String> = jsonl
        .lines()
        .filter(|l| l.contains(what))
        .map(String::from)
        .collect();
    assert!(!lines.is_empty(), "no {what} in {jsonl}");
    for l in &lines {
        assert!(l.to_lowercase().contains("ee\""), "{l}");
    }
    lines
}

#[test]
fn the_gate_names_a_planted_crash_and_completes() {
    let dir = tempfile::tempdir().unwrap();
    let lib = misbehave(dir.path(), "crash", &["CRASH"]);
    let report = dir.path().join("report");
    // Three hand-offs (shm::CHUNK = 32 768 each): the later ones are rung
    // while the gate judges the one before.
    let args = ["--cases", "70000", "--targets", "validate_header"];
    let o = gate_lib(
        &lib,
        &report,
        &[&args[..], &["--arch", "v2", "--subject-cases", "1000000"]].concat(),
        &[],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    planted_lines(&report, "crash");
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(!summary.contains("interrupted"), "{summary}");
    // Every generated case of the target was judged, not just up to the crash.
    assert!(
        summary.contains("70000") || summary.contains("70 000"),
        "{summary}"
    );
}

/// A planted hang in a library's batch validator, through the whole gate:
/// each hanging input is named (last byte 0xEE), costs the case timeout in
/// the run and nothing after it: the report does not run the hang again to
/// minimise it or to dump the library's fields (it keeps the input as it
/// faulted and the answer recorded in the run).
#[test]
fn the_gate_names_a_planted_hang_and_does_not_run_it_again_after_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let lib = misbehave(dir.path(), "hang_batch", &["HANG", "BATCH"]);
    let report = dir.path().join("report");
    let t = Instant::now();
    // The library gets half the case timeout: 2 s per input.
    let args = [
        "--no-corpus",
        "--cases",
        "1000",
        "--targets",
        "validate_header",
    ];
    let o = gate_lib(
        &lib,
        &report,
        &[&args[..], &["--arch", "v2", "--case-timeout", "4"]].concat(),
        &[],
    );
    let wall = t.elapsed();
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    planted_lines(&report, "timeout");
    // The run's own time (summary.md "whole run N s") is nearly all of it.
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    let run: f64 = summary
        .split("whole run ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no whole-run time in {summary}"));
    let after = wall.as_secs_f64() - run;
    assert!(
        after < 1.5,
        "{after:.1} s after the run (a hang re-run costs 2 s)"
    );
    assert!(summary.contains("input (as it faulted"), "{summary}");
    assert!(
        summary.contains("-timeout: no answer within 2s"),
        "{summary}"
    );
}

/// Issue 31: a `lib:` subject has one worker. When it cannot load the
/// library, the gate names the worker's error and leaves no region file.
#[test]
fn a_lib_that_cannot_start_names_the_worker_error_and_leaves_no_region() {
    let dir = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(BIN)
        .current_dir(repo_root())
        .args(["gate", "--quiet", "--no-corpus", "--cases", "10"])
        .args(["--targets", "validate_header"])
        .args(["--subject", "lib:/nonexistent/libx.so", "--report-dir"])
        .arg(dir.path().join("r"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("worker failed"), "{err}");
    assert!(err.contains("/nonexistent/libx.so"), "{err}");
    let prefix = format!("tpb-subject-{pid}-");
    for d in [Path::new("/dev/shm").to_path_buf(), std::env::temp_dir()] {
        let left: Vec<_> = std::fs::read_dir(&d)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .collect();
        assert!(left.is_empty(), "{}: left {left:?}", d.display());
    }
}

/// `tpb_lut_batch` of `lut_batch.c` built with `defines`, on 20 000 alu_op
/// ordinals with the planted one at 12 345: that entry's answer, and every
/// other entry checked against the good build's.
fn planted_lut(defines: &[&str], timeout: Duration) -> Reply {
    let dir = tempfile::tempdir().unwrap();
    let good = build_c(dir.path(), "lut_good", &fixture("lut_batch.c"), &[]);
    let bad = build_c(dir.path(), "lut_bad", &fixture("lut_batch.c"), defines);
    const AT: usize = 12_345;
    let ords: Vec<u32> = (0..20_000u32)
        .map(|i| if i as usize == AT { 0xEE_00EE } else { i % 40 })
        .collect();
    let want = channel(&good, Duration::from_secs(10)).lut(LutTable::AluOp, &ords, &|| {});
    // The good build answers as SPEC §6.2 says (not only as itself).
    assert_eq!(want[4], Ok(Answer::Wire(4)));
    assert_eq!(want[19], Ok(Answer::Wire(0x18)));
    assert!(matches!(&want[24], Ok(Answer::Refused(n)) if n == "no_wire_byte"));
    assert!(matches!(&want[AT], Ok(Answer::Refused(n)) if n == "out_of_range"));
    let mut ch = channel(&bad, timeout);
    let got = ch.lut(LutTable::AluOp, &ords, &|| {});
    assert_eq!(got.len(), ords.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if i != AT {
            assert_eq!(g, w, "entry {i}");
        }
    }
    got[AT].clone()
}

#[test]
fn a_planted_crash_or_hang_inside_tpb_lut_batch_is_named_exactly() {
    match planted_lut(&["LUT_CRASH"], Duration::from_secs(10)) {
        Err(f) => assert_eq!(class_of(&f), "crash", "{f}"),
        other => panic!("expected a crash on the planted ordinal, got {other:?}"),
    }
    match planted_lut(&["LUT_HANG"], Duration::from_millis(300)) {
        Err(f) => assert_eq!(class_of(&f), "timeout", "{f}"),
        other => panic!("expected a timeout on the planted ordinal, got {other:?}"),
    }
}

#[test]
fn a_lut_batch_entry_left_unwritten_is_a_finding_on_that_input() {
    match planted_lut(&["LUT_DROP"], Duration::from_secs(10)) {
        Err(f) => assert_eq!(class_of(&f), "protocol", "{f}"),
        Ok(Answer::Wire(w)) => assert!(w > 0xFF, "an unwritten entry read as wire {w}"),
        other => panic!("expected a finding on the dropped entry, got {other:?}"),
    }
}

/// Issue 31: an answer the worker leaves unwritten is the harness's fault,
/// never the library's divergence. `TPB_TEST_WORKER_SKIP_LAST` makes the
/// worker skip the last entry of every hand-off while claiming it done (the
/// batch bound off by one): every such case is a `Harness` finding and
/// nothing else, and the report counts fewer answers received than calls.
/// Without it the same run passes with every call answered and compared.
#[test]
fn an_answer_the_worker_leaves_unwritten_is_a_harness_fault_not_a_divergence() {
    let dir = tempfile::tempdir().unwrap();
    let lib = c_example(dir.path(), false);
    let args = [
        "--no-corpus",
        "--cases",
        "3000",
        "--targets",
        "validate_header,validate_payload,custom_op_group,collective_lowering,decode_any",
        "--arch",
        "v2",
    ];
    let counts = |report: &Path| {
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(report.join("run.json")).unwrap())
                .unwrap();
        // The machine-dependent counts live in run.json's `machine` group.
        let m = &run["machine"]["subjects"][0];
        let n = |k: &str| m[k].as_u64().unwrap_or_else(|| panic!("{k} in {m}"));
        let cases = run["subjects"][0]["cases"].as_u64().unwrap();
        (
            n("calls"),
            n("answers_received"),
            n("answers_compared"),
            cases,
        )
    };
    let good = dir.path().join("good");
    let o = gate_lib(&lib, &good, &args, &[(PLANT, None)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (calls, received, compared, cases) = counts(&good);
    assert_eq!((received, compared), (calls, cases), "{calls} calls");
    // Each case is asked once, in its batch: the judge is served from the
    // batch, not asked again one at a time.
    assert_eq!(calls, cases, "{received} received");
    let bad = dir.path().join("bad");
    let o = gate_lib(&lib, &bad, &args, &[(PLANT, Some("1"))]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let (calls, received, _, _) = counts(&bad);
    assert!(received < calls, "{received} of {calls} received");
    let (targets, classes) = filed(&bad);
    assert_eq!(classes, ["Harness"], "{targets:?}");
    let summary = std::fs::read_to_string(bad.join("summary.md")).unwrap();
    assert!(summary.contains("left this entry unwritten"), "{summary}");
    // Named once: `Fault::Harness` prints the "harness fault:" prefix itself.
    assert!(
        summary.contains("harness fault: the worker left this entry unwritten"),
        "{summary}"
    );
    assert!(
        !summary.contains("harness fault: harness fault"),
        "{summary}"
    );
    // The corpus's vector lines too: an answer lost on one is the harness's
    // fault, not a mismatch of the line's expectation.
    let vectors = dir.path().join("vectors");
    let o = gate_lib(
        &lib,
        &vectors,
        &["--cases", "10", "--arch", "v2"],
        &[(PLANT, Some("1"))],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let (targets, classes) = filed(&vectors);
    assert!(targets.contains("vectors"), "{targets:?}");
    assert_eq!(classes, ["Harness"], "{targets:?}");
}

/// The targets and classes of a report's divergences.jsonl records.
fn filed(report: &Path) -> (BTreeSet<String>, Vec<String>) {
    let lines = std::fs::read_to_string(report.join("divergences.jsonl")).unwrap();
    let (mut targets, mut classes) = (BTreeSet::new(), BTreeSet::new());
    for l in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        targets.insert(v["target"].as_str().unwrap().to_string());
        classes.insert(v["class"].as_str().unwrap().to_string());
    }
    (targets, classes.into_iter().collect())
}

const PLANT: &str = tpbconform::external::shm_worker::PLANT_SKIP_LAST_ENV;

/// A worker that dies with no input running blames no input. `after`: it
/// answers every entry of a hand-off and exits before saying so (the
/// re-run one entry at a time too): every answer still arrives and is
/// compared, the deaths are restarts, the gate passes. `before`: it exits
/// on every doorbell before running anything: the subject is given up
/// (the gate fails closed) and no case is filed as the input it crashed on.
#[test]
fn a_worker_that_dies_between_entries_blames_no_input() {
    const EXIT: &str = tpbconform::external::shm_worker::PLANT_EXIT_ENV;
    let dir = tempfile::tempdir().unwrap();
    let lib = c_example(dir.path(), false);
    let args = [
        "--no-corpus",
        "--cases",
        "200",
        "--targets",
        "validate_header,validate_payload",
        "--arch",
        "v2",
    ];
    let after = dir.path().join("after");
    let o = gate_lib(&lib, &after, &args, &[(EXIT, Some("after"))]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(after.join("run.json")).unwrap()).unwrap();
    let m = &run["machine"]["subjects"][0];
    let cases = &run["subjects"][0]["cases"];
    assert_eq!(m["answers_received"], m["calls"], "{m}");
    assert_eq!(&m["answers_compared"], cases, "{m}");
    assert!(m["restarts"].as_u64().unwrap() >= 2, "{m}");
    let before = dir.path().join("before");
    let o = gate_lib(&lib, &before, &args, &[(EXIT, Some("before"))]);
    assert_ne!(code(&o), 0, "{}", stderr(&o));
    let jsonl = std::fs::read_to_string(before.join("divergences.jsonl")).unwrap_or_default();
    assert!(!jsonl.contains("while running this input"), "{jsonl}");
    let summary = std::fs::read_to_string(before.join("summary.md")).unwrap();
    assert!(summary.contains("given up"), "{summary}");
}
