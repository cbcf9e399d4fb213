//! Integration tests of the `tpbconform` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;

use common::{
    bundle_with, code, copy_dir, hexline, no_panic, refused, repo_root, run, stderr, stdout,
    write_file, BIN,
};

fn tmpdir(name: &str) -> PathBuf {
    common::tmp("cli", name)
}

// Hand-built bundles (SPEC §5).

fn header() -> [u8; 64] {
    // num_payloads = 1 + 2
    bundle_with(&[(0, 0x85), (1, 0x10), (0x0C, 3), (0x0E, 7), (0x0F, 1)])
}

fn payload() -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = 0x86;
    b[1] = 0x10;
    b[0x0F] = 1;
    for (i, x) in b[0x10..].iter_mut().enumerate() {
        *x = i as u8;
    }
    b
}

fn d9(kind_wire: u8) -> [u8; 64] {
    bundle_with(&[
        (0, 0xD9),
        (1, 0x10),
        (4, 0x85),
        (5, 2),
        (6, 1),
        (7, 3),
        (0x0C, 0x04),
        (0x0D, 0x0A),
        (0x0E, kind_wire),
        (0x10, 0xAB),
    ])
}

/// The eleven opcodes' images the v2 compiler emits (the CLI default generation): all but
/// 0xBE, 0xBF, 0xD8 (seed 003 "At a glance": CoreV3+).
fn v2_emitted() -> Vec<[u8; 64]> {
    every_record_opcode()
        .into_iter()
        .filter(|b| ![0xBE, 0xBF, 0xD8].contains(&b[0]))
        .collect()
}

/// [`v2_emitted`] as a well-formed stream (SPEC §5.3): the header's group completed (its
/// num_arguments 1 → two payloads) and the 0xD9 a two-leg kind (wire 0x05, SPEC §5.4) whose
/// 0xDA carries the same bytes 0x0C..0x0E.
fn v2_clean_stream() -> Vec<[u8; 64]> {
    let mut v = v2_emitted();
    v.insert(2, payload());
    for b in v.iter_mut() {
        match b[0] {
            0xD9 => b[0x0E] = 0x05,
            0xDA => b[0x0C..0x0F].copy_from_slice(&[0x04, 0x0A, 0x05]),
            _ => {}
        }
    }
    v
}

/// The JSONL lines of `check` that are instructions (not stream errors or summaries).
fn instruction_lines(out: &str) -> Vec<serde_json::Value> {
    json_lines(out)
        .into_iter()
        .filter(|l| l.get("verdict").is_some())
        .collect()
}

fn every_record_opcode() -> Vec<[u8; 64]> {
    let da = bundle_with(&[
        (0, 0xDA),
        (4, 0x34),
        (5, 0x12),
        (0x0D, 0x0F), // highest pre-v4 dtype tag (v2, FACTS §6)
        (0x0E, 0x05),
    ]);
    let record = |op: u8, set: &[(usize, u8)]| {
        let mut b = bundle_with(set);
        b[0] = op;
        b[1] = 0x10;
        b
    };
    vec![
        header(),
        payload(),
        d9(0x01),
        da,
        record(0xCB, &[(0x10, 1), (0x30, 2), (0x3F, 0xFF)]),
        record(0xBF, &[(0x0C, 0x08), (0x0D, 0x0A), (0x20, 1), (0x21, 9)]),
        record(0xBE, &[(0x0C, 0x08), (0x0E, 1)]),
        record(0xD8, &[(0x0C, 5), (0x20, 6)]),
        record(0xDC, &[(0x0C, 1), (0x17, 4)]),
        record(0xDB, &[(0x0C, 1), (0x12, 2), (0x14, 3)]),
        record(0xDE, &[(0x0C, 0xEF), (0x10, 1)]),
    ]
}

fn cat(v: &[[u8; 64]]) -> Vec<u8> {
    v.iter().flat_map(|b| b.iter().copied()).collect()
}

fn json_lines(s: &str) -> Vec<serde_json::Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad json {l:?}: {e}")))
        .collect()
}

// ---------------------------------------------------------------------------

#[test]
fn check_valid_exits_0_and_jsonl_shape() {
    let o = run(&["check", "--format", "jsonl"], &cat(&v2_clean_stream()));
    assert_eq!(code(&o), 0, "{}{}", stderr(&o), stdout(&o));
    let all = json_lines(&stdout(&o));
    let lines = instruction_lines(&stdout(&o));
    assert_eq!(lines.len(), 9);
    assert_eq!(all.len(), 10, "9 instructions and the summary");
    assert_eq!(
        lines[0],
        serde_json::json!({"source":"<stdin>","index":0,"offset":0,"opcode":"0x85",
            "mnemonic":"CustomOpHeader","length":64,"verdict":"valid","predicate":null,
            "byte":null,"value":null,"field":null,"message":null,"note":null,"valid":true,
            "failed":null})
    );
    assert_eq!(lines[3]["opcode"], "0xD9");
    assert_eq!(lines[3]["mnemonic"], "CollectiveCompute");
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["index"], i);
        assert_eq!(l["offset"], 64 * i);
        assert_eq!(l["valid"], true, "{l}");
    }
    assert_eq!(
        all[9],
        serde_json::json!({"source":"<stdin>","summary":{"arch":"v2","instructions":9,"valid":9,
            "skeleton":0,"invalid":0,"stream_errors":0,"stopped":false}})
    );
}

#[test]
fn check_invalid_exits_1_and_names_predicate() {
    let mut bad_p = payload();
    bad_p[0x0D] = 1;
    let mut bad_h = header();
    bad_h[0x10] = 1; // half a scratch triple
    let mut bad_d9 = d9(0x01);
    bad_d9[0x0F] = 1; // reserved
    let input = cat(&[
        header(),
        bad_p,
        payload(),
        bad_h,
        payload(),
        payload(),
        bad_d9,
    ]);
    let o = run(&["check", "--format", "jsonl", "-"], &input);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let l = instruction_lines(&stdout(&o));
    assert_eq!(l[0]["valid"], true);
    assert_eq!(
        l[1],
        serde_json::json!({"source":"<stdin>","index":1,"offset":64,"opcode":"0x86",
            "mnemonic":"CustomOpPayload","length":64,"verdict":"invalid",
            "predicate":"custom_op_payload_reserved_zero","byte":0x0D,"value":1,
            "field":"reserved","message":"reserved byte 0x0D is 0x01, not zero","note":null,
            "valid":false,"failed":"custom_op_payload_reserved_zero"})
    );
    assert_eq!(l[3]["failed"], "custom_op_header_scratch_space_val");
    assert_eq!(l[6]["failed"], "reserved");
    assert_eq!(l[6]["byte"], 0x0F);
    // The groups are whole (an invalid record still counts in its group, D-28): no stream error.
    assert!(!stdout(&o).contains("\"stream_error\":"), "{}", stdout(&o));

    // Text format names the predicate and its byte too.
    let o = run(&["check"], &input);
    assert_eq!(code(&o), 1);
    let t = stdout(&o);
    assert_eq!(t.lines().count(), 8, "{t}");
    assert!(
        t.contains("#1 0x86 CustomOpPayload: invalid: custom_op_payload_reserved_zero: reserved byte 0x0D is 0x01, not zero (byte 0x0D) (<stdin>@0x40)"),
        "{t}"
    );
    assert!(
        t.contains("<stdin>: 7 instructions (v2): 4 valid, 0 valid (skeleton; body not modelled), 3 invalid, 0 stream errors"),
        "{t}"
    );
}

#[test]
fn check_explicit_validator() {
    // A valid payload run through the header validator fails is_custom_op_header_opcode.
    let o = run(
        &[
            "check",
            "--validator",
            "custom_op_header",
            "--format",
            "jsonl",
        ],
        &payload(),
    );
    assert_eq!(code(&o), 1);
    assert_eq!(
        json_lines(&stdout(&o))[0]["failed"],
        "is_custom_op_header_opcode"
    );
    let o = run(&["check", "--validator", "custom_op_payload"], &payload());
    assert_eq!(code(&o), 0, "{}", stdout(&o));
}

#[test]
fn check_hex_input_with_comments_and_spaces() {
    let h = hexline(&header());
    let spaced: String = hexline(&payload())
        .as_bytes()
        .chunks(8)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    let text = format!(
        "# a header\n\n{h}   # trailing comment\n   \n{}\n{}\n",
        spaced.to_uppercase(),
        hexline(&payload())
    );
    let o = run(&["check", "--hex", "--format", "jsonl"], text.as_bytes());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(instruction_lines(&stdout(&o)).len(), 3);
}

#[test]
fn bad_inputs_exit_2_with_precise_messages() {
    let dir = tmpdir("bad");
    // length not a multiple of 64, odd
    let odd = write_file(&dir, "odd.bin", &[0u8; 65]);
    let o = run(&["check", &odd], b"");
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(
        e.contains(&odd) && e.contains("not a multiple of 64"),
        "{e}"
    );
    assert!(
        e.contains("byte offset 64") && e.contains("odd length"),
        "{e}"
    );
    // even but partial
    let partial = write_file(&dir, "partial.bin", &[0u8; 130]);
    let o = run(&["decode", &partial], b"");
    refused(&o, "byte offset 128");
    // Readers stream: the two whole bundles before the error were printed.
    assert_eq!(json_lines(&stdout(&o)).len(), 2, "{}", stdout(&o));
    // bad hex digit: line and column
    let text = format!(
        "# c\n{}\n{}x{}\n",
        hexline(&header()),
        "0".repeat(10),
        "0".repeat(117)
    );
    let badhex = write_file(&dir, "bad.hex", text.as_bytes());
    let o = run(&["check", "--hex", &badhex], b"");
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(
        e.contains(&format!("{badhex}:3:11")) && e.contains("bad hex digit 'x'"),
        "{e}"
    );
    // hex line of the wrong length
    let o = run(
        &["check", "--hex"],
        format!("{}\n00\n", hexline(&header())).as_bytes(),
    );
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(e.contains("<stdin>:2") && e.contains("2 digits"), "{e}");
    let o = run(&["explain", "--hex"], "0".repeat(127).as_bytes());
    refused(&o, "127 digits (odd");
    // empty input (binary and hex-with-only-comments)
    let o = run(&["check"], b"");
    refused(&o, "empty input");
    // encode reads JSON lines, not bundles (it said "no bundle found", "a file of bundles"),
    // and check reads a folder as an unpacked NEFF (it said "expected a file of bundles")
    let o = run(&["encode"], b"\n");
    refused(&o, "no JSON record found");
    assert!(!stderr(&o).contains("bundle"), "{}", stderr(&o));
    let d = dir.to_string_lossy();
    let o = run(&["encode", &d], b"");
    refused(&o, "expected a file of JSON lines");
    let o = run(&["check", &d], b"");
    refused(
        &o,
        "or an unpacked NEFF folder (one that holds sgNN/ subgraph folders)",
    );
    let o = run(&["decode", "--hex"], b"# nothing\n\n");
    refused(&o, "empty input");
    // a directory
    let d = dir.to_string_lossy().into_owned();
    let o = run(&["check", &d], b"");
    refused(&o, "is a directory");
    // a missing file
    let missing = dir.join("nope.bin").to_string_lossy().into_owned();
    let o = run(&["explain", &missing], b"");
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(e.contains(&missing) && e.contains("cannot read"), "{e}");
    for o in [run(&["check", &missing], b""), run(&["decode", &d], b"")] {
        no_panic(&o);
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["check", "--bogus"][..],
        &["frobnicate"][..],
        &["check", "--validator", "nope"][..],
        &[][..],
    ] {
        let o = run(args, b"");
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        no_panic(&o);
    }
    for sub in ["check", "decode", "encode", "explain"] {
        let o = run(&[sub, "--help"], b"");
        assert_eq!(code(&o), 0);
        let h = stdout(&o);
        assert!(h.contains("Exit codes"), "{sub} --help: {h}");
    }
}

#[test]
fn decode_jsonl_shape() {
    let o = run(&["decode"], &cat(&[d9(0x09), header()]));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let l = json_lines(&stdout(&o));
    let mut ap = String::from("ab");
    ap.push_str(&"00".repeat(47));
    assert_eq!(
        l[0],
        serde_json::json!({
            "index": 0, "opcode": "0xD9", "mnemonic": "CollectiveCompute",
            "fields": {
                "debug_cmd": 0, "debug_hint": 0,
                "wait_mode": 0x85, "wait_idx": 2, "update_mode": 1, "update_idx": 3, "semaphore_value": 0,
                "cce_op": "add", "dtype": 10, "kind": "AllToAllV", "ap": ap
            },
            "mode_names": {"wait_mode": "WAIT_FOR_SEM_GE_REG", "update_mode": "EVT_SET_READ"},
            "check": "valid"
        })
    );
    assert_eq!(l[1]["fields"]["num_arguments"], 1);
    assert_eq!(l[1]["fields"]["num_payloads"], 3);
    // Field order follows SPEC §5.2.
    let raw = stdout(&o);
    let first = raw.lines().next().unwrap();
    let pos = |k: &str| first.find(k).unwrap_or_else(|| panic!("{k} in {first}"));
    assert!(pos("\"debug_cmd\"") < pos("\"wait_mode\""));
    assert!(pos("\"semaphore_value\"") < pos("\"cce_op\""));
    assert!(pos("\"cce_op\"") < pos("\"dtype\""));
    assert!(pos("\"dtype\"") < pos("\"kind\""));
    assert!(pos("\"kind\"") < pos("\"ap\""));
}

#[test]
fn decode_error_names_field_and_offset() {
    let mut b = d9(0x01);
    b[0x0F] = 1;
    let mut c = [0u8; 64];
    c[0] = 0x01; // in the roster, not one of the eleven
    c[1] = 0x10;
    let o = run(&["decode"], &cat(&[b, c]));
    assert_eq!(code(&o), 1);
    let l = json_lines(&stdout(&o));
    assert_eq!(l[0]["index"], 0);
    assert_eq!(l[0]["field"], "reserved");
    assert_eq!(l[0]["offset"], 15);
    let msg = l[0]["error"].as_str().unwrap();
    assert!(msg.contains("reserved") && msg.contains("0x0F"), "{msg}");
    // A roster opcode with no record: its skeleton, as `check` judges it (issue 32).
    assert_eq!(l[1]["body"], "not modelled");
    assert_eq!(l[1]["check"], "valid (skeleton; body not modelled)");
    assert_eq!(l[1]["fields"]["wait_mode"], 0);
}

#[test]
fn decode_names_every_collective_kind_wire_byte() {
    // SPEC §6.1, written out by hand.
    let expect = [
        (0x01, "AllReduce"),
        (0x02, "ReduceScatter"),
        (0x03, "AllGather"),
        (0x04, "AllToAll"),
        (0x05, "Permute"),
        (0x06, "PermuteReduce"),
        (0x07, "PermuteImplicit"),
        (0x08, "PermuteReduceImplicit"),
        (0x09, "AllToAllV"),
    ];
    let input: Vec<[u8; 64]> = expect.iter().map(|(w, _)| d9(*w)).collect();
    let o = run(&["decode"], &cat(&input));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let l = json_lines(&stdout(&o));
    for (i, (w, name)) in expect.iter().enumerate() {
        assert_eq!(l[i]["fields"]["kind"], *name, "wire {w:#04x}");
    }
    // 0x00 and 0x0A are not kinds.
    for bad in [0x00u8, 0x0A] {
        let o = run(&["decode"], &d9(bad));
        assert_eq!(code(&o), 1);
        assert_eq!(json_lines(&stdout(&o))[0]["field"], "kind");
    }
}

#[test]
fn encode_inverts_decode_for_every_record_opcode() {
    let input = cat(&v2_emitted());
    let d = run(&["decode"], &input);
    assert_eq!(code(&d), 0, "{}", stderr(&d));
    let e = run(&["encode"], &d.stdout);
    assert_eq!(code(&e), 0, "{}", stderr(&e));
    assert_eq!(hexline(&e.stdout), hexline(&input));
    // --hex output reads back through check --hex.
    let e = run(&["encode", "--hex"], &d.stdout);
    assert_eq!(code(&e), 0);
    let lines: Vec<String> = v2_emitted().iter().map(|b| hexline(b)).collect();
    assert_eq!(stdout(&e), lines.join("\n") + "\n");
    // v2_emitted is not a well-formed stream (a short group, a stray 0xDA), but every
    // instruction of it is valid.
    let c = run(&["check", "--hex"], &e.stdout);
    assert_eq!(code(&c), 1);
    assert!(!stdout(&c).contains(": invalid:"), "{}", stdout(&c));
    assert_eq!(stdout(&c).matches(": valid (").count(), 8, "{}", stdout(&c));
}

#[test]
fn encode_to_file_is_atomic_output() {
    let dir = tmpdir("enc");
    let out = dir.join("out.bin").to_string_lossy().into_owned();
    let d = run(&["decode"], &header());
    let e = run(&["encode", "-o", &out], &d.stdout);
    assert_eq!(code(&e), 0, "{}", stderr(&e));
    assert!(e.stdout.is_empty());
    assert_eq!(std::fs::read(&out).unwrap(), header().to_vec());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn encode_bad_jsonl_exits_2_with_line_number() {
    let good = stdout(&run(&["decode"], &header()));
    for (bad, what) in [
        ("{\"opcode\":", "EOF"),
        ("[1,2]", "expected a JSON object"),
        ("{\"fields\":{}}", "missing \"opcode\""),
        ("{\"opcode\":\"0xZZ\",\"fields\":{}}", "not a hex byte"),
        ("{\"opcode\":\"0xD9\"}", "missing \"fields\""),
        (
            "{\"opcode\":\"0xDE\",\"fields\":{\"handle\":\"x\"}}",
            "expected a number",
        ),
        (
            "{\"opcode\":\"0x86\",\"fields\":{\"ap\":\"abc\"}}",
            "hex string",
        ),
    ] {
        let input = format!("{good}\n{bad}\n");
        let o = run(&["encode"], input.as_bytes());
        assert_eq!(code(&o), 2, "{bad}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("<stdin>:3"), "{bad}: {e}");
        assert!(e.contains(what), "{bad}: {e}");
        // Streams: the good record before the bad line is already out.
        assert_eq!(o.stdout, header().to_vec(), "{bad}: only the good record");
        no_panic(&o);
    }
}

#[test]
fn encode_rejected_record_exits_1() {
    let bad = r#"{"opcode":"0xD9","fields":{"wait_mode":0,"wait_idx":0,"update_mode":0,"update_idx":0,"semaphore_value":0,"cce_op":"mult","dtype":10,"kind":"AllReduce","ap":"000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"}}"#;
    let o = run(&["encode"], bad.as_bytes());
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("cce_op"), "{}", stderr(&o));
    no_panic(&o);
}

#[test]
fn explain_marks_fields_reserved_and_failure_without_colour_when_piped() {
    let mut b = header();
    b[0x25] = 0x77;
    let o = run(&["explain"], &cat(&[b, d9(0x01)]));
    assert_eq!(code(&o), 1);
    let t = stdout(&o);
    assert!(
        !t.contains('\x1b'),
        "no ANSI escapes when stdout is not a TTY"
    );
    for want in [
        "num_payloads",
        "reserved",
        "<== FAILED: custom_op_header_reserved_zero",
        "0x20  00 00 00 00 00 77",
        "kind",
        "AllReduce",
    ] {
        assert!(t.contains(want), "{want}: {t}");
    }
    let o = run(&["explain"], &d9(0x03));
    assert_eq!(code(&o), 0);
}

#[test]
fn decode_names_modes_and_encode_checks_them() {
    // FACTS §2 [H]: the collective-trigger band 05 07 13 07 decodes with header names.
    let mut b = header();
    b[4..8].copy_from_slice(&[0x05, 0x07, 0x13, 0x07]);
    let o = run(&["decode"], &b);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let l = json_lines(&stdout(&o));
    assert_eq!(
        l[0]["mode_names"],
        serde_json::json!({"wait_mode": "WAIT_FOR_SEM_GE_IMM", "update_mode": "SEM_INC_COMPLETE"})
    );
    let e = run(&["encode"], &o.stdout);
    assert_eq!(code(&e), 0, "{}", stderr(&e));
    assert_eq!(e.stdout, b.to_vec());
    // a mode name that does not match the byte is bad input
    let bad = stdout(&o).replace("SEM_INC_COMPLETE", "SEM_DEC_COMPLETE");
    let e = run(&["encode"], bad.as_bytes());
    assert_eq!(code(&e), 2, "{}", stderr(&e));
    assert!(stderr(&e).contains("mode_names"), "{}", stderr(&e));
}

/// A canonical bundle of `op`: opcode, tag 0x10, the rest zero (SPEC §1).
fn canonical(op: u8) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = op;
    b[1] = 0x10;
    b
}

#[test]
fn arch_selects_the_opcode_enum_of_check() {
    // FACTS §1 [H]: 0x87 is v2 only, 0xBE v3+, 0xB7 / 0xEB in no generation's enum.
    let first = |op: u8, arch: &str| {
        let o = run(
            &[
                "check",
                "--arch",
                arch,
                "--validator",
                "custom_op_header",
                "--format",
                "jsonl",
            ],
            &canonical(op),
        );
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        json_lines(&stdout(&o))[0]["failed"].clone()
    };
    for arch in ["v2", "v3", "v4", "v5"] {
        let valid_opcode = |op| first(op, arch) == "valid_opcode";
        assert_eq!(valid_opcode(0x87), arch != "v2", "0x87 {arch}");
        assert_eq!(valid_opcode(0xBE), arch == "v2", "0xBE {arch}");
        assert!(valid_opcode(0xB7) && valid_opcode(0xEB), "{arch}");
    }
    let o = run(&["check", "--arch", "v6"], &canonical(0x85));
    refused(&o, "v6");
}

#[test]
fn encode_refuses_an_opcode_the_generation_does_not_emit() {
    // Seed 003 "At a glance": GetSequenceBounds (0xBE) is CoreV3+.
    let mut be = canonical(0xBE);
    be[0x0C] = 0x0A; // dtype float32
    let d = run(&["decode", "--arch", "v3"], &be);
    assert_eq!(code(&d), 0, "{}", stderr(&d));
    let e = run(&["encode", "--arch", "v2"], &d.stdout);
    assert_eq!(code(&e), 1);
    assert!(e.stdout.is_empty());
    let msg = stderr(&e);
    assert!(msg.contains("0xBE") && msg.contains("v2"), "{msg}");
    let e = run(&["encode", "--arch", "v3"], &d.stdout);
    assert_eq!(code(&e), 0, "{}", stderr(&e));
    assert_eq!(e.stdout, be.to_vec());
    // decode under v2 refuses it too, at the opcode byte (`check`'s `valid_opcode`).
    let d = run(&["decode"], &be);
    assert_eq!(code(&d), 1);
    assert_eq!(json_lines(&stdout(&d))[0]["field"], "valid_opcode");
    assert_eq!(json_lines(&stdout(&d))[0]["offset"], 0);
}

// ---- Issue 21 item 5 / issue 22 item 6: help, flags, closed stdout, messages ----

fn sample(name: &str) -> String {
    repo_root()
        .join("examples/samples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn help(args: &[&str]) -> String {
    let mut a = args.to_vec();
    a.push("--help");
    let o = run(&a, b"");
    assert_eq!(code(&o), 0, "{a:?}: {}", stderr(&o));
    stdout(&o)
}

/// The `Exit codes:` table of a help text: its `  N  text` lines.
fn exit_table(h: &str) -> Vec<(u8, String)> {
    let Some(i) = h.find("Exit codes:") else {
        return Vec::new();
    };
    let mut rows: Vec<(u8, String)> = Vec::new();
    for l in h[i..].lines().skip(1) {
        let t = l.trim_start();
        let code = t
            .split_whitespace()
            .next()
            .and_then(|w| w.parse::<u8>().ok());
        match code {
            Some(c) if l.starts_with("  ") && !l.starts_with("       ") => {
                rows.push((c, t.to_string()))
            }
            _ if l.starts_with("       ") => {
                if let Some(last) = rows.last_mut() {
                    last.1.push(' ');
                    last.1.push_str(t);
                }
            }
            _ => break,
        }
    }
    rows
}

/// `(exit code, a phrase its help row must have)`.
type ExitRows = &'static [(u8, &'static str)];

#[test]
fn help_states_each_subcommands_exit_codes() {
    // (subcommand, [(code, a phrase its row must have)]): the codes each
    // `run` returns (docs/guarantees.md "Exit codes").
    let cases: &[(&[&str], ExitRows)] = &[
        (
            &["check"],
            &[
                (0, "every bundle is valid"),
                (1, "some bundle is invalid"),
                (2, "bad input"),
                (141, "stdout was closed"),
            ],
        ),
        (
            &["decode"],
            &[
                (0, "every bundle decodes"),
                (1, "does not decode"),
                (2, "bad input"),
                (141, "closed"),
            ],
        ),
        (
            &["explain"],
            &[
                (0, "every bundle is valid"),
                (1, "invalid"),
                (2, "bad input"),
                (141, "closed"),
            ],
        ),
        (
            &["encode"],
            &[
                (0, "every record was encoded"),
                (1, "some record was skipped"),
                (2, "malformed JSONL"),
                (141, "closed"),
            ],
        ),
        (
            &["lower"],
            &[
                (0, "every instruction lowered"),
                (2, "bad JSON"),
                (141, "closed"),
            ],
        ),
        (
            &["replay"],
            &[
                (0, "agree"),
                (1, "the divergence reproduces"),
                (2, "bad input"),
                (141, "closed"),
            ],
        ),
        (&["gate"], &[(0, "PASS"), (1, "FAIL"), (2, "bad usage")]),
        (
            &["minimize"],
            &[
                (0, "done"),
                (1, "a deletion failed"),
                (2, "nothing"),
                (141, "closed"),
            ],
        ),
        (
            &["subject-check"],
            &[
                (0, "agrees with core"),
                (1, "a divergence, a fault"),
                (2, "bad spec"),
                (141, "closed"),
            ],
        ),
        (
            &["neff", "info"],
            &[
                (0, "every member were read"),
                (2, "refused"),
                (141, "closed"),
            ],
        ),
        (
            &["report", "merge"],
            &[
                (0, "complete and clean"),
                (1, "divergence"),
                (2, "refused"),
                (141, "closed"),
            ],
        ),
    ];
    for (cmd, want) in cases {
        let h = help(cmd);
        let table = exit_table(&h);
        let codes: Vec<u8> = table.iter().map(|r| r.0).collect();
        let want_codes: Vec<u8> = want.iter().map(|w| w.0).collect();
        assert_eq!(codes, want_codes, "{cmd:?} --help exit codes:\n{h}");
        for ((c, phrase), (_, row)) in want.iter().zip(&table) {
            assert!(
                row.contains(phrase),
                "{cmd:?} exit {c}: `{row}` lacks `{phrase}`"
            );
        }
    }
    // encode's codes are about records, not bundle validity (it said "0 every bundle is valid").
    assert!(!help(&["encode"]).contains("every bundle is valid"));
    // The top level names every subcommand's codes instead of check's for all.
    let top = help(&[]);
    for cmd in [
        "check",
        "decode",
        "encode",
        "lower",
        "replay",
        "gate",
        "minimize",
        "subject-check",
        "report merge",
        "neff info",
    ] {
        assert!(
            top.lines()
                .any(|l| l.trim_start().starts_with(cmd) && l.contains(" 0 ")),
            "top-level help has no exit-code row for {cmd}:\n{top}"
        );
    }
    assert!(top.contains("gate             0 PASS"), "{top}");
    // minimize says that it deletes.
    let m = help(&["minimize"]);
    assert!(
        m.contains("DELETES the redundant seeds") && m.contains("--dry-run"),
        "{m}"
    );
}

#[test]
fn help_lists_target_names_from_the_registry() {
    use tpbconform::targets::Target;
    let gate = help(&["gate"]);
    let replay = help(&["replay"]);
    for t in Target::all() {
        if t.spec().gate {
            assert!(
                gate.contains(t.name()),
                "gate --help lacks target {}",
                t.name()
            );
        }
        assert!(
            replay.contains(t.name()),
            "replay --help lacks target {}",
            t.name()
        );
    }
    // Only gate targets are offered to --targets.
    let possible = gate
        .split("[possible values: ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .expect("gate --targets lists its possible values");
    let listed: Vec<&str> = possible.split(", ").collect();
    let gate_targets: Vec<&str> = Target::gate_targets()
        .into_iter()
        .map(Target::name)
        .collect();
    assert_eq!(listed, gate_targets);
    // A wrong name is refused naming the flag and the names accepted.
    let o = run(&["replay", "--target", "nope", "--hex", "00"], b"");
    refused(&o, "--target");
    assert!(stderr(&o).contains("structured_diff"), "{}", stderr(&o));
}

#[test]
fn minimize_and_encode_both_take_dash_o() {
    assert!(help(&["minimize"]).contains("-o, --output <DIR>"));
    assert!(help(&["encode"]).contains("-o, --output <PATH>"));
    assert!(help(&["report", "merge"]).contains("-o, --output <DIR>"));
}

#[test]
fn numeric_flags_out_of_range_exit_2_naming_the_flag() {
    let dir = tmpdir("numeric-flags");
    let report = dir.join("never");
    let rd = report.to_string_lossy().into_owned();
    let gate = |flag: &str, v: &str| -> Vec<String> {
        // `--flag=VALUE`, so that `-1` is a value, not a flag.
        let fv = format!("{flag}={v}");
        let cases: &[&str] = if flag == "--cases" {
            &[]
        } else {
            &["--cases", "10"]
        };
        ["gate", "--no-corpus", "--quiet", "--report-dir", &rd, &fv]
            .iter()
            .chain(cases)
            .map(|s| s.to_string())
            .collect()
    };
    let mut cases: Vec<(Vec<String>, &str)> = Vec::new();
    for v in ["0", "257", "1000000000", "18446744073709551615", "-1", "x"] {
        cases.push((gate("--threads", v), "--threads"));
    }
    for v in ["0", "86401", "18446744073709551615", "-1"] {
        cases.push((gate("--case-timeout", v), "--case-timeout"));
    }
    for f in ["--cases", "--sync-cases", "--lowering-cases"] {
        for v in ["0", "-1", "18446744073709551616"] {
            cases.push((gate(f, v), f));
        }
    }
    for v in ["-1", "18446744073709551616", "1.5"] {
        cases.push((gate("--subject-cases", v), "--subject-cases"));
    }
    for v in ["-1", "inf", "NaN", "1e19"] {
        cases.push((gate("--seconds", v), "--seconds"));
    }
    for v in ["0/0", "4/4", "1/18446744073709551616", "a/b"] {
        cases.push((gate("--shard", v), "--shard"));
    }
    cases.push((gate("--seed", "18446744073709551616"), "--seed"));
    for v in ["0", "3601", "18446744073709551615"] {
        cases.push((
            vec![
                "subject-check".to_string(),
                format!("--timeout={v}"),
                "core".to_string(),
            ],
            "--timeout",
        ));
    }
    for (args, flag) in &cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&a, b"");
        assert_eq!(code(&o), 2, "{a:?}: {}", stderr(&o));
        no_panic(&o);
        assert!(
            stderr(&o).contains(flag),
            "{a:?}: message does not name {flag}: {}",
            stderr(&o)
        );
        assert!(!report.exists(), "{a:?} created its report folder");
    }
    // The edges are accepted.
    let o = run(
        &[
            "gate",
            "--no-corpus",
            "--quiet",
            "--cases",
            "10",
            "--targets",
            "validate_header",
            "--threads",
            "2",
            "--case-timeout",
            "86400",
            "--report-dir",
            &rd,
        ],
        b"",
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

/// Runs the binary with a stdout whose reader has already gone.
fn run_closed_stdout(args: &[&str], cwd: &Path) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run")
}

/// The arguments of a 20-case `validate_header` gate with its report in `dir`.
fn small_gate(dir: &str) -> [&str; 9] {
    [
        "gate",
        "--no-corpus",
        "--quiet",
        "--cases",
        "20",
        "--targets",
        "validate_header",
        "--report-dir",
        dir,
    ]
}

/// A passing 20-case `validate_header` gate report in `shard`.
fn small_shard(shard: &Path) {
    let o = run(&small_gate(&shard.to_string_lossy()), b"");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn every_subcommand_exits_141_quietly_on_a_closed_stdout() {
    let dir = tmpdir("closed-stdout");
    let corpus = dir.join("validate_header");
    copy_dir(&repo_root().join("corpus/validate_header"), &corpus);
    let shard = dir.join("shard");
    small_shard(&shard);
    let merged = dir.join("merged").to_string_lossy().into_owned();
    let bundles = sample("bundles.hex");
    let neff = repo_root()
        .join("examples/neff/one_subgraph.neff")
        .to_string_lossy()
        .into_owned();
    let gsb = sample("get_sequence_bounds.jsonl");
    let lowering = repo_root()
        .join("examples/lowering/collectives.json")
        .to_string_lossy()
        .into_owned();
    let py = format!(
        "cmd:python3 {}",
        repo_root().join("examples/subjects/custom_op.py").display()
    );
    let hex = "85".to_string() + "10" + &"00".repeat(62);
    let corpus_s = corpus.to_string_lossy().into_owned();
    let shard_s = shard.to_string_lossy().into_owned();
    let commands: Vec<Vec<&str>> = vec![
        vec!["check", "--hex", &bundles],
        vec!["decode", "--hex", &bundles],
        vec!["explain", "--hex", &bundles],
        vec!["encode", "--arch", "v3", "--hex", &gsb],
        vec!["lower", &lowering],
        vec!["replay", "--target", "validate_header", "--hex", &hex],
        vec!["minimize", "--dry-run", &corpus_s],
        vec!["subject-check", &py],
        vec!["report", "merge", &shard_s, "-o", &merged],
        vec!["neff", "info", &neff],
    ];
    // Every subcommand of the top-level help is here, except `gate` (below:
    // it keeps its verdict) and `help`; subject-worker is hidden (internal).
    let top = help(&[]);
    let listed: Vec<&str> = top
        .split("Commands:\n")
        .nth(1)
        .expect("Commands:")
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(listed.len() >= 10, "{listed:?}");
    for name in listed {
        assert!(
            ["gate", "help"].contains(&name) || commands.iter().any(|c| c[0] == name),
            "subcommand {name} is not checked on a closed stdout"
        );
    }
    for c in &commands {
        let o = run_closed_stdout(c, &dir);
        assert_eq!(code(&o), 141, "{c:?} on a closed stdout: {}", stderr(&o));
        assert!(
            stderr(&o).is_empty(),
            "{c:?} printed on stderr: {}",
            stderr(&o)
        );
    }
    // The gate keeps its verdict (G12): the report is the record.
    let o = run_closed_stdout(&small_gate(&dir.join("g").to_string_lossy()), &dir);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn minimize_dry_run_lists_per_folder_and_deletes_nothing() {
    let dir = tmpdir("minimize-dry-run");
    let root = dir.join("corpus");
    for f in ["validate_header", "luts"] {
        copy_dir(&repo_root().join("corpus").join(f), &root.join(f));
    }
    let list = |d: &Path| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    };
    let before: Vec<Vec<PathBuf>> = ["validate_header", "luts"]
        .iter()
        .map(|f| list(&root.join(f)))
        .collect();
    let r = root.to_string_lossy().into_owned();
    let o = run(&["minimize", "--dry-run", &r], b"");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    let after: Vec<Vec<PathBuf>> = ["validate_header", "luts"]
        .iter()
        .map(|f| list(&root.join(f)))
        .collect();
    assert_eq!(before, after, "--dry-run deleted something");
    let would: Vec<PathBuf> = out
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("would delete "))
        .map(PathBuf::from)
        .collect();
    assert!(!would.is_empty(), "{out}");
    // Per folder: a header line per folder, then its files.
    for f in ["validate_header", "luts"] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{f}: "))),
            "{out}"
        );
    }
    // Exactly what the real run then deletes.
    let o = run(&["minimize", &r], b"");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut deleted: Vec<PathBuf> = before
        .concat()
        .into_iter()
        .filter(|p| !p.exists())
        .collect();
    deleted.sort();
    let mut would = would;
    would.sort();
    assert_eq!(would, deleted);
    // --dry-run with -o is a usage error.
    let o = run(
        &[
            "minimize",
            "--dry-run",
            &r,
            "-o",
            &dir.join("x").to_string_lossy(),
        ],
        b"",
    );
    assert_eq!(code(&o), 2);
}

#[test]
fn minimize_output_write_failure_names_the_output() {
    // A full disk, simulated with a file-size limit of 0 (SIGXFSZ ignored,
    // so write(2) fails with EFBIG).
    let dir = tmpdir("minimize-output-full");
    let corpus = dir.join("validate_header");
    copy_dir(&repo_root().join("corpus/validate_header"), &corpus);
    let out = dir.join("out").join("min");
    let script = format!(
        "trap '' XFSZ; ulimit -f 0; exec {BIN} minimize {} -o {}",
        corpus.display(),
        out.display()
    );
    let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let msg = stderr(&o);
    let parent = out.parent().unwrap().to_string_lossy().into_owned();
    assert!(
        msg.contains(&format!("error: {parent}/")),
        "does not name the output: {msg}"
    );
    assert!(
        !msg.contains(&corpus.to_string_lossy().into_owned()),
        "names the corpus: {msg}"
    );
    assert!(!out.exists());
    let left: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "staging left behind: {left:?}");
}

#[test]
fn lower_refuses_duplicate_keys() {
    let dir = tmpdir("lower-dup");
    let good =
        std::fs::read_to_string(repo_root().join("examples/lowering/collectives.json")).unwrap();
    assert!(good.contains("\"generation\": \"v3\""));
    let top = good.replacen(
        "\"generation\": \"v3\"",
        "\"generation\": \"v2\", \"generation\": \"v3\"",
        1,
    );
    let nested = good.replacen(
        "\"op\": \"collective\"",
        "\"op\": \"collective\", \"op\": \"collective\"",
        1,
    );
    for (name, text, key) in [
        ("top.json", top, "generation"),
        ("nested.json", nested, "op"),
    ] {
        let p = write_file(&dir, name, text.as_bytes());
        let o = run(&["lower", &p], b"");
        assert_eq!(code(&o), 2, "{name}: {}", stdout(&o));
        assert!(o.stdout.is_empty());
        let e = stderr(&o);
        assert!(
            e.contains(&p) && e.contains(&format!("duplicate key \"{key}\"")),
            "{e}"
        );
    }
    let o = run(
        &[
            "lower",
            &repo_root()
                .join("examples/lowering/collectives.json")
                .to_string_lossy(),
        ],
        b"",
    );
    assert_eq!(code(&o), 0);
}

#[test]
fn gate_prints_its_rate_as_whole_cases_per_second() {
    let dir = tmpdir("gate-rate");
    let o = run(
        &[
            "gate",
            "--no-corpus",
            "--quiet",
            "--cases",
            "3000",
            "--targets",
            "validate_header",
            "--report-dir",
            &dir.join("r").to_string_lossy(),
        ],
        b"",
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let line = stdout(&o).lines().next().unwrap_or_default().to_string();
    let rate = line
        .rsplit(", ")
        .next()
        .and_then(|r| r.strip_suffix(" cases/s"))
        .unwrap_or_else(|| panic!("no `N cases/s` at the end: {line}"));
    let groups: Vec<&str> = rate.split(',').collect();
    assert!(
        groups[0].len() <= 3
            && groups[1..].iter().all(|g| g.len() == 3)
            && groups
                .iter()
                .all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit())),
        "rate `{rate}` is not a whole number grouped by thousands: {line}"
    );
}

#[test]
fn progress_bar_prints_whole_cases_per_second() {
    // The bar draws only on a terminal: `script` gives the gate one.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED: no `script` (util-linux) to give the gate a terminal");
        return;
    }
    let dir = tmpdir("progress-bar");
    let cmd = format!(
        "{BIN} gate --no-corpus --cases 300000 --targets validate_header --report-dir {}",
        dir.join("r").display()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("script");
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let text = stdout(&o).replace('\r', "\n");
    let rates: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split(" cases (").nth(1))
        .filter_map(|r| r.split(')').next())
        .collect();
    assert!(!rates.is_empty(), "no progress line drawn: {text}");
    for r in rates {
        let n = r
            .strip_suffix(" cases/s")
            .unwrap_or_else(|| panic!("rate `{r}` has no `cases/s` unit"));
        assert!(
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b','),
            "rate `{r}` is not a whole number"
        );
    }
}

#[test]
fn report_merge_and_subject_answers_refuse_duplicate_keys() {
    let dir = tmpdir("dup-keys");
    // A shard whose run.json says "verdict" twice.
    let shard = dir.join("shard");
    small_shard(&shard);
    let rj = shard.join("run.json");
    let text = std::fs::read_to_string(&rj).unwrap();
    assert!(text.starts_with("{\n"));
    std::fs::write(
        &rj,
        text.replacen("{\n", "{\n  \"verdict\": \"PASS\",\n", 1),
    )
    .unwrap();
    let o = run(
        &[
            "report",
            "merge",
            &shard.to_string_lossy(),
            "-o",
            &dir.join("m").to_string_lossy(),
        ],
        b"",
    );
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let e = stderr(&o);
    assert!(
        e.contains("run.json") && e.contains("duplicate key \"verdict\""),
        "{e}"
    );
    // A subject whose answer says "failed" twice is a protocol finding, not an agreement.
    let py = write_file(
        &dir,
        "dup.py",
        b"import json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n    if r['op'] == 'hello':\n        print('{\"protocol\":1,\"name\":\"dup\",\"ops\":[\"validate_header\",\"validate_payload\"]}', flush=True)\n    else:\n        print('{\"id\":%d,\"failed\":null,\"failed\":null}' % r['id'], flush=True)\n",
    );
    let hex = "8510".to_string() + &"00".repeat(62);
    let spec = format!("cmd:python3 {py}");
    let o = run(
        &[
            "replay",
            "--target",
            "validate_header",
            "--hex",
            &hex,
            "--subject",
            &spec,
        ],
        b"",
    );
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("duplicate key \"failed\""),
        "{}",
        stdout(&o)
    );
}

/// A text starting with a UTF-8 byte-order mark (some editors add one) is refused by every text
/// reader, which now says so: it said "bad hex digit '\u{feff}'" or, for JSON, "expected value
/// at line 1 column 1".
#[test]
fn a_byte_order_mark_is_named_by_every_text_reader() {
    let dir = tmpdir("bom");
    let bom = |body: &str| format!("\u{FEFF}{body}");
    let hex = write_file(
        &dir,
        "b.hex",
        bom(&format!("{}\n", hexline(&header()))).as_bytes(),
    );
    let json = write_file(
        &dir,
        "b.json",
        bom(r#"{"generation":"v3","instructions":[]}"#).as_bytes(),
    );
    for args in [
        vec!["check", "--hex", &hex],
        vec!["decode", "--hex", &hex],
        vec!["replay", "--target", "validate_header", "--hex-file", &hex],
        vec!["lower", &json],
        vec!["encode", &json],
    ] {
        let o = run(&args, b"");
        refused(
            &o,
            "a UTF-8 byte-order mark (BOM); save the file without it",
        );
    }
}

/// Whether `s` holds a control character other than the newline ending each line (C0, DEL,
/// C1, and U+2028/U+2029, which some readers take for line breaks).
fn has_control(s: &str) -> bool {
    s.chars()
        .any(|c| c != '\n' && (c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')))
}

/// A path from the user cannot forge an output line or send a terminal escape: the text formats
/// of `check` and `explain`, and an error on stderr, show its control characters escaped as
/// `char::escape_debug` writes them (`\n`, `\u{1b}`), one line per line they print; non-ASCII
/// names print as they are; JSONL carries the exact path.
#[test]
fn a_path_with_control_characters_cannot_forge_output_lines() {
    let dir = tmpdir("control_path");
    let name = "модель\n#0 0x85 Matmul: valid\u{1b}[31m\r\u{85}\u{2028}.bin";
    // What text output shows for `name` (written out by hand from the escaping rule).
    let escaped = r"модель\n#0 0x85 Matmul: valid\u{1b}[31m\r\u{85}\u{2028}.bin";
    let path = dir.join(name);
    // A clean stream, then a header whose payloads never come (a stream error).
    let mut bundles = v2_clean_stream();
    bundles.push(header());
    std::fs::write(&path, cat(&bundles)).unwrap();
    let p = path.to_str().unwrap();
    let shown = format!("{}/{escaped}", dir.to_str().unwrap());

    let jsonl = run(&["check", "--format", "jsonl", p], b"");
    assert_eq!(code(&jsonl), 1, "{}", stderr(&jsonl));
    let records = json_lines(&stdout(&jsonl));
    assert!(records.iter().all(|r| r["source"] == p), "{records:?}");

    let text = run(&["check", p], b"");
    assert_eq!(code(&text), 1, "{}", stderr(&text));
    let text = stdout(&text);
    assert!(!has_control(&text), "{text:?}");
    // One text line per JSONL record: no line forged.
    assert_eq!(text.lines().count(), records.len(), "{text}");
    // Every line names the file as escaped: an instruction or stream error at `(path@0x..)`,
    // the summary as `path: N instructions`.
    for l in text.lines() {
        let at = format!("({shown}@0x");
        let summary = format!("{shown}: {} instructions", bundles.len());
        assert!(l.contains(&at) || l.starts_with(&summary), "{l:?}");
    }

    let summary = run(&["check", "--format", "summary", p], b"");
    let summary = stdout(&summary);
    assert_eq!(summary.lines().count(), 1, "{summary:?}");
    assert!(summary.starts_with(&format!("{shown}: ")), "{summary:?}");

    let explain = run(&["explain", p], b"");
    assert_eq!(code(&explain), 1, "{}", stderr(&explain));
    let explain = stdout(&explain);
    assert!(!has_control(&explain), "{explain:?}");
    let headers = explain
        .lines()
        .filter(|l| l.starts_with("bundle #"))
        .count();
    assert_eq!(headers, bundles.len(), "{explain}");
    assert!(
        explain.contains(&format!("\nend of {shown}:\n")),
        "{explain}"
    );

    // An error naming the path is one line.
    let missing = dir.join("missing\n\u{1b}[2Jfile.bin");
    let o = run(&["check", missing.to_str().unwrap()], b"");
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(!has_control(&err), "{err:?}");
    assert!(err.contains(r"missing\n\u{1b}[2Jfile.bin"), "{err:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 2-case `validate_header` gate with `extra` arguments, its report into `report`: its
/// stdout, checked to exit 0 and to hold no control character.
fn tiny_gate(extra: &[&str], report: &Path) -> String {
    let mut args = vec![
        "gate",
        "--no-corpus",
        "--cases",
        "2",
        "--targets",
        "validate_header",
    ];
    args.extend_from_slice(extra);
    args.extend(["--report-dir", report.to_str().unwrap()]);
    let o = run(&args, b"");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!has_control(&out), "{out:?}");
    out
}

/// The report folder a user names is shown escaped in the `report:` line of `gate` and
/// `report merge` (one line each, `\n` as written by `char::escape_debug`).
#[test]
fn a_report_folder_with_control_characters_is_one_report_line() {
    let dir = tmpdir("control_report");
    let shards = [dir.join("r\n0"), dir.join("r1")];
    for (i, shard) in shards.iter().enumerate() {
        let out = tiny_gate(&["--shard", &format!("{i}/2")], shard);
        let want = format!(
            "report: {}/summary.md",
            shard.to_str().unwrap().replace('\n', r"\n")
        );
        assert_eq!(out.lines().last(), Some(want.as_str()), "{out}");
    }
    let merged = dir.join("m\u{1b}[2J\nerged");
    let o = run(
        &[
            "report",
            "merge",
            shards[0].to_str().unwrap(),
            shards[1].to_str().unwrap(),
            "-o",
            merged.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!has_control(&out), "{out:?}");
    assert_eq!(out.lines().count(), 2, "{out}");
    let want = format!(
        r"report: {}/m\u{{1b}}[2J\nerged/summary.md",
        dir.to_str().unwrap()
    );
    assert_eq!(out.lines().last(), Some(want.as_str()), "{out}");
    assert!(merged.join("summary.md").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `encode`'s per-record error on stderr and `replay`'s verdict line name the input file
/// escaped: one line each, whatever control characters the name holds.
#[test]
fn encode_and_replay_name_a_file_with_control_characters_on_one_line() {
    let dir = tmpdir("control_encode_replay");
    let jsonl = dir.join("e\n\u{1b}[2Jx.jsonl");
    let record = r#"{"index":0,"opcode":"0x85","mnemonic":"CustomOpHeader","fields":{"bogus":1}}"#;
    std::fs::write(&jsonl, format!("{record}\n")).unwrap();
    let o = run(&["encode", "--hex", jsonl.to_str().unwrap()], b"");
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!has_control(&err), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    let shown = format!(r"{}/e\n\u{{1b}}[2Jx.jsonl:1: ", dir.to_str().unwrap());
    assert!(err.starts_with(&format!("tpbconform: {shown}")), "{err:?}");

    let bin = dir.join("z\n1.bin");
    std::fs::write(&bin, [0u8; 64]).unwrap();
    let o = run(
        &[
            "replay",
            "--target",
            "validate_header",
            bin.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!has_control(&out), "{out:?}");
    assert_eq!(out.lines().count(), 1, "{out:?}");
    let shown = format!(r"{}/z\n1.bin: agree: ", dir.to_str().unwrap());
    assert!(out.starts_with(&shown), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A subject's spec is shown escaped in `subject-check`'s and `gate`'s text: a `cmd:` command
/// holding a newline (a shell comment after it) is still one line each.
#[test]
fn a_subject_spec_with_control_characters_is_one_line() {
    let script = repo_root().join("examples/subjects/custom_op.py");
    let spec = format!("cmd:python3 {}\n#0 x\u{1b}[2J", script.display());
    let shown = format!(r"cmd:python3 {}\n#0 x\u{{1b}}[2J", script.display());
    let o = run(&["subject-check", &spec], b"");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!has_control(&out), "{out:?}");
    assert!(
        out.starts_with(&format!("subject:      {shown}\n")),
        "{out}"
    );
    assert!(
        out.contains(&format!("\nnot supported by {shown}: ")),
        "{out}"
    );

    let dir = tmpdir("control_subject");
    let out = tiny_gate(&["--subject", &spec], &dir.join("r"));
    let subject = format!("subject {shown}: 1 of 1 targets");
    assert_eq!(
        out.lines().filter(|l| l.starts_with(&subject)).count(),
        1,
        "{out}"
    );
    assert_eq!(out.lines().count(), 3, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// summary.md (which CI prints to logs) shows a subject spec holding a terminal escape and a
/// newline escaped everywhere it names it (head, tables, a divergence's diff header), so its
/// only control characters are its own line breaks; so does `gate`'s root-cause line.
#[test]
fn summary_md_shows_a_subject_spec_with_control_characters_escaped() {
    let dir = tmpdir("control_summary");
    let folder = dir.join("s\u{1b}[31m\nx");
    std::fs::create_dir_all(&folder).unwrap();
    let script = folder.join("custom_op.py");
    std::fs::copy(repo_root().join("examples/subjects/custom_op.py"), &script).unwrap();
    let spec = format!("cmd:python3 '{}' --planted-bug", script.display());
    let report = dir.join("r");
    let o = run(
        &[
            "gate",
            "--quiet",
            "--no-corpus",
            "--cases",
            "2000",
            "--subject-cases",
            "2000",
            "--targets",
            "validate_header",
            "--subject",
            &spec,
            "--report-dir",
            report.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!has_control(&out), "{out:?}");
    let md = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(!has_control(&md), "{md}");
    assert!(md.contains("Field-level diff"), "{md}");
    // Shown, or (a replay command) quoted for the shell.
    let names = [
        r"s\u{1b}[31m\nx/custom_op.py",
        r"s\x1b[31m\x0ax/custom_op.py",
    ];
    let naming: Vec<&str> = md.lines().filter(|l| l.contains("custom_op.py")).collect();
    assert!(naming.len() > 3, "{md}");
    let whole = |l: &&str| names.iter().any(|n| l.contains(n));
    assert!(naming.iter().all(whole), "{naming:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An error is one line on stderr even when it quotes a subject's stderr (untrusted text, a
/// terminal escape in it too): its lines are joined by an escaped `\n`.
#[test]
fn a_subject_start_error_quoting_its_stderr_is_one_line() {
    let spec = r#"cmd:sh -c "printf 'line1\n\033[2Jline2\n' >&2; exit 3""#;
    let o = run(&["subject-check", spec], b"");
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    let err = stderr(&o);
    assert!(!has_control(&err), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(
        err.trim_end()
            .ends_with(r"its stderr ends:\nline1\n\u{1b}[2Jline2"),
        "{err:?}"
    );
}

/// `minimize --dry-run` names the files it would delete escaped: a corpus folder whose path
/// holds a newline and an ESC still gives one `would delete` line per file.
#[test]
fn minimize_names_files_with_control_characters_on_one_line() {
    let dir = tmpdir("control_minimize");
    let root = dir.join("c\n\u{1b}[2Jorpus");
    copy_dir(
        &repo_root().join("corpus/validate_header"),
        &root.join("validate_header"),
    );
    let r = root.to_str().unwrap();
    let o = run(&["minimize", "--dry-run", r], b"");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!has_control(&out), "{out:?}");
    let shown = format!(
        r"  would delete {}/c\n\u{{1b}}[2Jorpus/validate_header/",
        dir.to_str().unwrap()
    );
    let would = out.lines().filter(|l| l.starts_with(&shown)).count();
    assert!(would > 0, "{out}");
    // A header line, the files, the closing line: nothing else.
    assert_eq!(out.lines().count(), would + 2, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
