//! Issue 19 items 1 and 5: per-operation and per-table capabilities, the
//! `validate_stream` and `lower` operations, and the README's plug-in
//! snippets. Each test runs the real binary (`subject-check`, a small
//! `gate`) on a subject: the README snippets as written (with a body), the
//! examples, their planted-mistake variants and the fixtures of
//! `tests/subjects/` (some_tables.py / .c, lower_via_cli.py).

mod common;
mod subjects;

use common::{code, repo_root, strs, text, tpb_in, BIN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use subjects::*;
use tpbconform::external::protocol::{Answer, Request};
use tpbconform::external::{self, Client};
use tpbconform::generation::Generation;
use tpbconform::subjects::SubjectSpec;
use tpbconform::subjects::{Capabilities, Capability};

/// `tpbconform subject-check SPEC` (v2).
fn subject_check(spec: &str) -> Output {
    tpb_in(&repo_root(), &["subject-check", spec])
}

/// A small gate (2000 cases) on `targets` with the subject; its output and
/// report folder.
fn gate(dir: &Path, subject: &str, targets: &str, extra: &[&str]) -> (Output, PathBuf) {
    gate_with(dir, subject, targets, "2000", extra)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The fenced block right after `<!-- snippet: NAME -->` in README.md,
/// exactly as written (without its fence lines).
fn readme_snippet(name: &str) -> String {
    let readme = read(&repo_root().join("README.md"));
    let marker = format!("<!-- snippet: {name} -->\n");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README.md has no `{marker}`"));
    let rest = &readme[at + marker.len()..];
    assert!(rest.starts_with("```"), "the marker is followed by a fence");
    let body = &rest[rest.find('\n').unwrap() + 1..];
    body[..body.find("```\n").expect("closing fence")].to_string()
}

/// A README snippet subject (the header validator only): `subject-check` says OK and lists
/// `validate_header`, and a small gate on both validators passes with `validate_payload` not
/// supported. Returns the gate's summary.md.
fn header_only_subject_passes(dir: &Path, spec: &str) -> String {
    let o = subject_check(spec);
    let out = text(&o.stdout);
    assert_eq!(code(&o), 0, "{out}{}", text(&o.stderr));
    assert!(out.contains("result: OK"), "{out}");
    assert!(out.contains("targets:      validate_header\n"), "{out}");
    let (o, report) = gate(dir, spec, "validate_header,validate_payload", &[]);
    let summary = read(&report.join("summary.md"));
    assert_eq!(code(&o), 0, "{summary}\n{}", text(&o.stderr));
    assert!(
        not_supported_line(&summary, spec).contains("validate_payload"),
        "{summary}"
    );
    summary
}

#[test]
fn the_readme_python_snippet_as_written_passes_subject_check_and_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let snippet = readme_snippet("python-subject");
    // The body the snippet leaves to the user: the example's header check.
    let script = format!(
        "import sys\nsys.path.insert(0, {:?})\nfrom custom_op import validate_header as my_header_check\n{snippet}",
        example("").display().to_string()
    );
    let path = dir.path().join("my_validator.py");
    std::fs::write(&path, script).unwrap();
    let spec = format!("cmd:python3 {}", path.display());
    // Every generation: it declares nothing for v3..v5 (listed as not
    // supported there), and is judged on validate_header under v2 only.
    let summary = header_only_subject_passes(dir.path(), &spec);
    assert!(
        not_supported_line(&summary, &spec).contains("v3"),
        "v3 listed as not supported:\n{summary}"
    );
}

#[test]
fn the_readme_c_snippet_as_written_passes_subject_check_and_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let snippet = readme_snippet("c-subject");
    // The body: the example's header check (its exports renamed away).
    let renamed = [
        "tpb_subject_abi_version",
        "tpb_subject_name",
        "tpb_subject_capabilities",
        "tpb_subject_init",
        "tpb_validate_header",
        "tpb_validate_payload",
        "tpb_validate_header_batch",
        "tpb_validate_payload_batch",
        "tpb_validate_stream",
    ];
    let mut src = String::new();
    for r in renamed {
        src.push_str(&format!("#define {r} example_{r}\n"));
    }
    src.push_str(&format!(
        "#include \"{}\"\n",
        example("custom_op.c").display()
    ));
    for r in renamed {
        src.push_str(&format!("#undef {r}\n"));
    }
    // The example's check answers a tpb_verdict id; the snippet wants the name.
    src.push_str("#define my_header_check(b) PREDICATE_NAMES[header(b)]\n");
    src.push_str(&snippet);
    let c = dir.path().join("my_validator.c");
    std::fs::write(&c, src).unwrap();
    let lib = build_c(dir.path(), "my_validator", &c, &[]);
    let spec = format!("lib:{}", lib.display());
    header_only_subject_passes(dir.path(), &spec);
}

/// A header bundle (SPEC §3, valid under v2) announcing `num_arguments`
/// arguments and `num_payloads` payloads (bytes 0x0F and 0x0C..0x0D LE).
fn header(num_payloads: u16, num_arguments: u8) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = 0x85;
    b[1] = 0x10;
    b[0x0C..0x0E].copy_from_slice(&num_payloads.to_le_bytes());
    b[0x0F] = num_arguments;
    b
}

/// A payload bundle (SPEC §4, valid under v2; arg_type 1).
fn payload() -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = 0x86;
    b[1] = 0x10;
    b[0x0F] = 1;
    b
}

/// A stream's SPEC §5.3 answer: valid, or the first error and its index.
type StreamAnswer = Option<(&'static str, u64)>;

/// Streams and their SPEC §5.3 answers, written out by hand.
fn pinned_streams() -> Vec<(Vec<u8>, StreamAnswer)> {
    let cat = |bs: &[[u8; 64]]| bs.concat();
    let (h, p) = (header(2, 0), payload());
    let mut bad_p = p;
    bad_p[0x0C] = 1; // SPEC §4 #5 reserved zero
    let mut other = [0u8; 64];
    other[0] = 0x01; // a v2 opcode, not 0x85 / 0x86
    other[1] = 0x10;
    vec![
        (cat(&[h, p]), None),
        (cat(&[header(3, 1), p, p]), None),
        (cat(&[h]), Some(("short_group", 0))),
        (cat(&[p]), Some(("stray_payload", 0))),
        (cat(&[h, p, p]), Some(("stray_payload", 2))),
        (cat(&[h, h, p]), Some(("short_group", 0))),
        (cat(&[other, h, other]), Some(("short_group", 1))),
        (cat(&[header(3, 0), p]), Some(("payload_count_mismatch", 0))),
        (cat(&[h, bad_p]), Some(("invalid_record", 1))),
        (vec![0u8; 63], Some(("trailing_bytes", 63))),
    ]
}

fn start(spec: &str) -> Client {
    let spec: SubjectSpec = spec.parse().unwrap();
    let timeout = std::time::Duration::from_secs(20);
    external::start(&spec, &PathBuf::from(BIN), Generation::V2, timeout).unwrap()
}

#[test]
fn both_examples_answer_validate_stream_as_spec_5_3_says() {
    let dir = tempfile::tempdir().unwrap();
    let lib = c_example(dir.path(), false);
    for spec in [format!("lib:{}", lib.display()), python_spec("")] {
        let mut s = start(&spec);
        assert!(s.hello().ops.has(Capability::ValidateStream), "{spec}");
        for (bytes, want) in pinned_streams() {
            let got = s.call(&Request::ValidateStream(bytes.clone().into()));
            let want = Answer::Stream(want.map(|(e, i)| (e.to_string(), i)));
            assert_eq!(
                got,
                Ok(want),
                "{spec}: {}",
                tpbconform::subjects::hex(&bytes)
            );
        }
    }
}

/// Gate and replay of a planted stream-rule mistake: the target, the input
/// and both answers are in summary.md.
#[test]
fn planted_stream_rule_mistakes_are_caught_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let bad_c = build_c(
        dir.path(),
        "custom_op_stream_bug",
        &example("custom_op.c"),
        &["TPB_PLANTED_STREAM_BUG"],
    );
    for (spec, wrong) in [
        (python_spec("--planted-stream-bug"), "=err:stray_payload"),
        (
            format!("lib:{}", bad_c.display()),
            "=err:payload_count_mismatch",
        ),
    ] {
        let (o, report) = gate(dir.path(), &spec, "custom_op_group", &["--arch", "v2"]);
        let summary = read(&report.join("summary.md"));
        assert_eq!(code(&o), 1, "{spec}\n{summary}");
        let line = summary
            .lines()
            .find(|l| l.starts_with("### ") && l.contains("custom_op_group") && l.contains(wrong))
            .unwrap_or_else(|| panic!("{spec}: no custom_op_group entry with {wrong}:\n{summary}"));
        assert!(line.contains(&spec) && line.contains("core="), "{line}");
        assert!(
            summary.contains("tpbconform replay --subject") && summary.contains("--hex "),
            "the input is named:\n{summary}"
        );
    }
    // The correct builds agree on the same cases.
    let good = c_example(dir.path(), false);
    for spec in [python_spec(""), format!("lib:{}", good.display())] {
        let (o, report) = gate(dir.path(), &spec, "custom_op_group", &["--arch", "v2"]);
        let summary = read(&report.join("summary.md"));
        assert_eq!(code(&o), 0, "{spec}\n{summary}");
    }
}

fn lower_spec(planted: bool) -> String {
    format!(
        "cmd:python3 {} {}{}",
        fixture("lower_via_cli.py").display(),
        PathBuf::from(BIN).display(),
        if planted { " planted" } else { "" }
    )
}

#[test]
fn the_lower_operation_is_judged_and_a_planted_lowering_mistake_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let extra = ["--arch", "v3", "--lowering-cases", "120"];
    // A subject answering exactly what `tpbconform lower` prints agrees.
    let (o, report) = gate(
        dir.path(),
        &lower_spec(false),
        "collective_lowering",
        &extra,
    );
    let summary = read(&report.join("summary.md"));
    assert_eq!(code(&o), 0, "{summary}\n{}", text(&o.stderr));
    // Its replica-group table reversed: DifferentOutput, both answers shown.
    let spec = lower_spec(true);
    let (o, report) = gate(dir.path(), &spec, "collective_lowering", &extra);
    let summary = read(&report.join("summary.md"));
    assert_eq!(code(&o), 1, "{summary}");
    let line = summary
        .lines()
        .find(|l| l.starts_with("### ") && l.contains("lower:side_tables"))
        .unwrap_or_else(|| panic!("no lower:side_tables entry:\n{summary}"));
    assert!(
        line.contains("collective_lowering") && line.contains("[DifferentOutput]"),
        "{line}"
    );
    assert!(
        summary.contains("replica_groups [[["),
        "both answers:\n{summary}"
    );
}

#[test]
fn a_subject_with_some_tables_passes_and_the_others_are_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    let py = format!("cmd:python3 {}", fixture("some_tables.py").display());
    let c = build_c(dir.path(), "some_tables", &fixture("some_tables.c"), &[]);
    let lib = format!("lib:{}", c.display());
    for spec in [py.clone(), lib] {
        let o = subject_check(&spec);
        let out = text(&o.stdout);
        assert_eq!(code(&o), 0, "{out}");
        assert!(
            out.contains("tables:       wait_mode, update_mode\n"),
            "{out}"
        );
        let targets = "wait_mode_lut,update_mode_lut,alu_lut,cce_lut,validate_header";
        let (o, report) = gate(dir.path(), &spec, targets, &["--arch", "v2"]);
        let summary = read(&report.join("summary.md"));
        assert_eq!(code(&o), 0, "{spec}\n{summary}");
        for t in ["alu_lut", "cce_lut", "validate_header"] {
            assert!(
                not_supported_line(&summary, &spec).contains(t),
                "{t}:\n{summary}"
            );
        }
        for t in ["wait_mode_lut", "update_mode_lut"] {
            assert!(
                !not_supported_line(&summary, &spec).contains(t),
                "{t}:\n{summary}"
            );
        }
        let run: serde_json::Value = serde_json::from_str(&read(&report.join("run.json"))).unwrap();
        let unsupported = strs(&run["unsupported"], Some("target"));
        assert_eq!(
            unsupported,
            ["alu_lut", "cce_lut", "validate_header"],
            "{run}"
        );
        let junit = read(&report.join("junit.xml"));
        assert!(junit.contains("not supported by"), "{junit}");
    }
    // A declared table answered `unsupported` is a finding, not a skip.
    let refusing = format!("{py} refuse");
    let (o, report) = gate(
        dir.path(),
        &refusing,
        "wait_mode_lut,update_mode_lut",
        &["--arch", "v2"],
    );
    let summary = read(&report.join("summary.md"));
    assert_eq!(code(&o), 1, "{summary}");
    assert!(
        summary.lines().any(|l| l.starts_with("### ")
            && l.contains("update_mode_lut")
            && l.contains("[Unsupported]")),
        "{summary}"
    );
}

/// The lines of the first fenced block after `heading` in
/// docs/subject-protocol.md.
fn protocol_doc_block(heading: &str) -> Vec<String> {
    let doc = read(&repo_root().join("docs/subject-protocol.md"));
    let at = doc.find(heading).unwrap_or_else(|| panic!("no {heading}"));
    let rest = &doc[at..];
    let open = rest.find("```\n").unwrap() + 4;
    let close = rest[open..].find("```").unwrap();
    rest[open..open + close]
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_documented_exchange_is_what_the_python_example_answers() {
    let block = protocol_doc_block("## A complete example exchange");
    let requests: Vec<&str> = block.iter().filter_map(|l| l.strip_prefix("> ")).collect();
    let answers: Vec<&str> = block.iter().filter_map(|l| l.strip_prefix("< ")).collect();
    assert!(
        requests.len() >= 5 && requests.len() == answers.len(),
        "{block:?}"
    );
    assert!(requests.iter().any(|r| r.contains("validate_stream")));
    let mut input = requests.join("\n");
    input.push('\n');
    let mut child = Command::new("python3")
        .arg(example("custom_op.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 0);
    let got: Vec<serde_json::Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let want: Vec<serde_json::Value> = answers
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn the_documented_capability_table_names_every_gate_target() {
    let doc = read(&repo_root().join("docs/subject-protocol.md"));
    let at = doc.find("## Capabilities").expect("a Capabilities section");
    let section = &doc[at..at + doc[at..].find("\n## Faults").unwrap()];
    for t in tpbconform::targets::Target::gate_targets() {
        assert!(
            section.contains(&format!("`{}`", t.name())),
            "{t} is missing from the Capabilities table"
        );
    }
    // And each LUT target asks only its own table.
    for t in tpbconform::targets::Target::gate_targets() {
        if let tpbconform::targets::Check::Lut(table) = t.check() {
            let needs: Vec<_> = t.spec().needs.iter().collect();
            assert_eq!(needs, [Capability::Lut(table)], "{t}");
        }
    }
}

#[test]
fn the_version_2_operations_cross_the_c_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("abi_v2_ops.c");
    let lib = build_c(dir.path(), "abi_v2_ops", &src, &[]);
    let mut s = start(&format!("lib:{}", lib.display()));
    assert_eq!(
        s.hello().ops.ops(),
        ["lut", "validate_stream", "lower"],
        "{:?}",
        s.hello()
    );
    assert_eq!(
        s.hello().lut_tables(),
        [tpbconform::subjects::LutTable::AluOp],
        "tpb_subject_lut_tables becomes the hello's tables"
    );
    let got = s.call(&Request::ValidateStream(vec![0; 192].into()));
    assert_eq!(got, Ok(Answer::Stream(Some(("short_group".into(), 3)))));
    // The retry with the size tpb_lower asked for.
    let ir = r#"{"generation":"v2","instructions":[]}"#.to_string();
    assert_eq!(
        s.call(&Request::Lower(ir.into())),
        Ok(Answer::LowerRejected {
            error: "duplicate_rank".into(),
            instruction: 0
        })
    );
    // An answer written short of the length reported reads the zeroed
    // buffer there, not the previous answer's bytes.
    let short = s.call(&Request::Lower(r#"{"under":1}"#.to_string().into()));
    assert!(
        matches!(&short, Err(e) if e.to_string().contains("wrote no JSON object")),
        "{short:?}"
    );
    // An undefined table bit: the library does not load.
    let bad = build_c(dir.path(), "abi_v2_bad_tables", &src, &["BAD_TABLES"]);
    let o = subject_check(&format!("lib:{}", bad.display()));
    common::refused(
        &o,
        "tpb_subject_lut_tables() = 0x1002 sets undefined bits 0x1000",
    );
}

#[test]
fn the_header_bits_are_the_harness_bits_and_the_docs_name_every_table() {
    use tpbconform::external::ffi::cap_bit;
    use tpbconform::subjects::LutTable;
    let header = read(&repo_root().join("include/tpb_subject.h"));
    let (mut caps, mut tables) = (Vec::new(), Vec::new());
    for line in header.lines() {
        // `#define TPB_CAP_DECODE (1u << 2) ...`
        let Some(rest) = line.strip_prefix("#define TPB_") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(name), Some("(1u"), Some("<<"), Some(bit)) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            continue;
        };
        let bit: u32 = bit.trim_end_matches(')').parse().unwrap();
        if let Some(op) = name.strip_prefix("CAP_") {
            let op = op.to_lowercase();
            let c = (Capabilities::of_op(&op).iter().next())
                .unwrap_or_else(|| panic!("TPB_CAP_{op} is no protocol op"));
            assert_eq!(cap_bit(c), 1 << bit, "TPB_CAP_{name}");
            caps.push(op);
        } else if let Some(t) = name.strip_prefix("LUT_") {
            let t = LutTable::from_name(&t.to_lowercase())
                .unwrap_or_else(|| panic!("TPB_LUT_{t} is no table"));
            assert_eq!(t.abi_bit(), 1 << bit, "TPB_LUT_{name}");
            tables.push(t);
        }
    }
    let ops = Capabilities::all().ops();
    assert_eq!(caps, ops, "one TPB_CAP_* per protocol op");
    assert_eq!(tables, LutTable::ALL, "one TPB_LUT_* per protocol table");
    let doc = read(&repo_root().join("docs/subject-protocol.md"));
    for t in LutTable::ALL {
        assert!(
            doc.contains(&format!("`{}`", t.name())),
            "{t:?} in the docs"
        );
        assert!(
            header.contains(&format!("\"{}\"", t.name())),
            "{t:?} in tpb_lut's comment"
        );
    }
}

/// The subject's one "not supported" line of summary.md (issue 32: one line per subject,
/// `- SPEC: not supported: every target (v3, v4, v5); validate_payload (v2)`), or "".
fn not_supported_line<'a>(summary: &'a str, spec: &str) -> &'a str {
    let head = format!("- {spec}: not supported: ");
    summary.lines().find(|l| l.starts_with(&head)).unwrap_or("")
}

/// The `lower` request's IR document, written as text for speed
/// (`lower_json::ir_document`), is exactly what the IR reader of
/// `tpbconform lower` and of `tpb_lower` reads back, for every shape the
/// collective_lowering generator makes (names, bare dtype ordinals,
/// `src2` null or hex, nested lists).
#[test]
fn the_lower_request_document_reads_back_as_the_module_sent() {
    use tpbconform::external::lower_json::ir_document;
    use tpbconform::generators::lowering_module::build_case;
    for seed in 0u32..400 {
        let data: Vec<u8> = (0..512u32)
            .map(|i| (seed.wrapping_mul(2_654_435_761) ^ i.wrapping_mul(40_503)).to_le_bytes()[1])
            .collect();
        let case = build_case(&data, None);
        let text = ir_document(case.gen, &case.insns);
        let v = tpbconform::strict_json::parse(&text).expect("the document is JSON");
        let (gen, insns) = tpbconform::lower_input::parse_program(&v)
            .unwrap_or_else(|e| panic!("seed {seed}: {}: {text}", e.message));
        assert_eq!(
            (gen, &insns),
            (case.gen, &*case.insns),
            "seed {seed}: {text}"
        );
    }
}
