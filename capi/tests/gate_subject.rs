//! The reference library as a gate subject: `tpbconform gate --subject
//! lib:<libtpb_reference.so>` drives the whole library path (worker
//! process, dlopen, every export, the JSON shapes) against core itself, so
//! it must PASS on every target the library declares, with the subject
//! judged on every generated case of each.

mod support;

use std::process::Command;

/// Every target the library's declared operations cover (`subject-check`
/// lists them): each operation and each LUT table is a target of its own.
const TARGETS: [&str; 14] = [
    "validate_header",
    "validate_payload",
    "decode_any",
    "roundtrip",
    "custom_op_group",
    "collective_lut",
    "alu_lut",
    "cce_lut",
    "dge_lut",
    "dtype_lut",
    "dtype_v4_lut",
    "wait_mode_lut",
    "update_mode_lut",
    "collective_lowering",
];

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
    for t in TARGETS {
        assert!(declared.contains(&t), "{t} not declared: {out}");
    }
    assert!(
        out.contains("ops:          validate_header, validate_payload, decode, encode, lut, validate_stream, lower"),
        "{out}"
    );
    // Its smoke set agrees with core on each.
    for t in TARGETS {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("smoke: {t}: ")))
            .unwrap_or_else(|| panic!("no smoke line for {t}:\n{out}"));
        assert!(line.ends_with("all agree with core"), "{line}");
    }

    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r");
    let cases = CASES.to_string();
    let targets = TARGETS.join(",");
    let (code, out, err) = run(
        &bin,
        &[
            "gate",
            "--subject",
            &spec,
            "--cases",
            &cases,
            "--targets",
            &targets,
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
    let generated = CASES * TARGETS.len() as u64;
    assert!(
        calls >= generated,
        "the subject answered {calls} calls, fewer than the {generated} generated cases"
    );
}
