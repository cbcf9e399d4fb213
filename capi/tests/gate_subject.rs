//! The reference library as a gate subject: `tpbconform gate --subject
//! lib:<libtpb_reference.so>` drives the whole library path (worker
//! process, dlopen, every export, the JSON shapes) against core itself, so
//! it must PASS on every target the library declares, with the subject
//! judged on every generated case of each.

mod support;

use std::process::Command;

/// Every target the library's declared operations cover (`subject-check`
/// lists them): each operation and each LUT table is a target of its own.
/// Comma-separated, as `--targets` takes them.
const TARGETS: &str = concat!(
    "validate_header,validate_payload,decode_any,roundtrip,custom_op_group,",
    "collective_lut,alu_lut,cce_lut,dge_lut,dtype_lut,dtype_v4_lut,wait_mode_lut,update_mode_lut,",
    "collective_lowering"
);

/// Generated cases per target (all go to the subject too: the default
/// `--subject-cases` is larger).
const CASES: u64 = 2000;

fn run(bin: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin)
        .current_dir(support::root())
        .args(args)
        .output()
        .expect("tpbconform runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The calls `subject` answered, from its `[timing]` line in summary.md
/// (`[timing] SPEC: N calls, …`: clock- and machine-dependent, issue 35).
fn subject_calls(summary: &str, subject: &str) -> Option<u64> {
    summary.lines().find_map(|l| {
        let rest = l
            .trim_start_matches("- ")
            .strip_prefix(&format!("[timing] {subject}: "))?;
        rest.split(" calls")
            .next()?
            .replace([',', ' '], "")
            .parse()
            .ok()
    })
}

#[test]
fn the_gate_passes_with_the_reference_library_as_its_subject() {
    let bin = support::tpbconform();
    let lib = support::library();
    let spec = format!("lib:{}", lib.display());

    // What the library declares, as the gate sees it.
    let (_, out, err) = run(&bin, &["subject-check", &spec]);
    let declared = out
        .lines()
        .find_map(|l| l.strip_prefix("targets:"))
        .unwrap_or_else(|| panic!("no targets line:\n{out}\n{err}"));
    let declared: Vec<&str> = declared.split(',').map(str::trim).collect();
    for t in TARGETS.split(',') {
        assert!(declared.contains(&t), "{t} not declared: {out}");
    }
    assert!(
        out.contains("ops:          validate_header, validate_payload, decode, encode, lut, validate_stream, lower"),
        "{out}"
    );
    // Its smoke set agrees with core on each.
    for t in TARGETS.split(',') {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("smoke: {t}: ")))
            .unwrap_or_else(|| panic!("no smoke line for {t}:\n{out}"));
        assert!(line.ends_with("all agree with core"), "{line}");
    }

    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r");
    let cases = CASES.to_string();
    let (code, out, err) = run(
        &bin,
        &[
            "gate",
            "--subject",
            &spec,
            "--cases",
            &cases,
            "--targets",
            TARGETS,
            "--report-dir",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "gate did not pass:\n{out}\n{err}");
    assert!(out.contains("gate: PASS"), "{out}");

    let run_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["verdict"], "PASS", "{run_json}");
    assert_eq!(
        run_json["unsupported"],
        serde_json::json!([]),
        "a selected target is not supported by the library"
    );
    let subjects = run_json["subjects"].as_array().expect("subjects");
    assert_eq!(subjects.len(), 1, "{subjects:?}");
    assert_eq!(subjects[0]["spec"], spec.as_str());
    assert_eq!(
        subjects[0]["capabilities"],
        "validate_header, validate_payload, decode, encode, lut:collective_kind, lut:alu_op, lut:cce_op, lut:dge, lut:dtype, lut:dtype_v4, lut:wait_mode, lut:update_mode, validate_stream, lower",
        "{subjects:?}"
    );

    // Judged on every generated case of every target (roundtrip asks twice).
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    let calls: u64 = subject_calls(&summary, &spec)
        .unwrap_or_else(|| panic!("no calls cell for {spec} in summary.md:\n{summary}"));
    let generated = CASES * TARGETS.split(',').count() as u64;
    assert!(
        calls >= generated,
        "the subject answered {calls} calls, fewer than the {generated} generated cases"
    );
}

/// Issue 31: the batched record hand-offs (decode, a roundtrip's decodes
/// and encodes, streams, lowering modules) keep the fault semantics of the
/// compact ones. With `TPB_TEST_WORKER_SKIP_LAST` the worker skips the last
/// entry of every hand-off while claiming it done: every target's findings
/// are `Harness` faults and nothing else (never a divergence of the
/// library), and fewer answers are received than calls made. Without it the
/// same run passes with one answer received and compared per case judged.
/// With `TPB_TEST_WORKER_CUT_RECORDS` every binary answer record is one byte
/// short: again `Harness` faults only, and no answer received.
#[test]
fn an_unwritten_entry_of_a_batched_record_hand_off_is_a_harness_fault() {
    const PLANT: &str = "TPB_TEST_WORKER_SKIP_LAST";
    const CUT: &str = "TPB_TEST_WORKER_CUT_RECORDS";
    let bin = support::tpbconform();
    let lib = support::library();
    let spec = format!("lib:{}", lib.display());
    let targets = [
        "decode_any",
        "roundtrip",
        "custom_op_group",
        "collective_lowering",
    ];
    let dir = tempfile::tempdir().unwrap();
    let gate = |report: &std::path::Path, plant: Option<&str>| {
        let mut c = Command::new(&bin);
        c.current_dir(support::root()).args([
            "gate",
            "--quiet",
            "--no-corpus",
            "--cases",
            "3000",
            "--targets",
            &targets.join(","),
            "--subject",
            &spec,
            "--report-dir",
            report.to_str().unwrap(),
        ]);
        c.env_remove(PLANT).env_remove(CUT);
        if let Some(p) = plant {
            c.env(p, "1");
        }
        let o = c.output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // The counts (machine-dependent: run.json's `machine` group) with the
    // cases judged.
    let subject = |report: &std::path::Path| {
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(report.join("run.json")).unwrap())
                .unwrap();
        let mut m = run["machine"]["subjects"][0].clone();
        m["cases"] = run["subjects"][0]["cases"].clone();
        m
    };
    let n = |s: &serde_json::Value, k: &str| s[k].as_u64().unwrap_or_else(|| panic!("{k}: {s}"));

    let good = dir.path().join("good");
    let (code, err) = gate(&good, None);
    assert_eq!(code, Some(0), "{err}");
    let s = subject(&good);
    assert_eq!(n(&s, "answers_received"), n(&s, "cases"), "{s}");
    assert_eq!(n(&s, "answers_compared"), n(&s, "cases"), "{s}");
    assert!(n(&s, "calls") > n(&s, "cases"), "roundtrip encodes: {s}");

    for (plant, name) in [(PLANT, "bad"), (CUT, "cut")] {
        let bad = dir.path().join(name);
        let (code, err) = gate(&bad, Some(plant));
        assert_eq!(code, Some(1), "{plant}: {err}");
        let s = subject(&bad);
        assert!(n(&s, "answers_received") < n(&s, "calls"), "{plant}: {s}");
        let lines = std::fs::read_to_string(bad.join("divergences.jsonl")).unwrap();
        let mut by_target = std::collections::BTreeMap::<String, Vec<String>>::new();
        for l in lines.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let t = v["target"].as_str().unwrap_or_else(|| panic!("{l}"));
            by_target
                .entry(t.to_string())
                .or_default()
                .push(v["class"].as_str().unwrap().to_string());
        }
        for t in targets {
            let classes = by_target
                .get(t)
                .unwrap_or_else(|| panic!("{plant}: no finding on {t}: {lines}"));
            assert!(
                classes.iter().all(|c| c == "Harness"),
                "{plant}: {t}: {classes:?}\n{lines}"
            );
        }
    }
}
