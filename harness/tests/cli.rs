//! Integration tests of the `tpbconform` binary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_tpbconform");

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tpbconform");
    // A command that exits without reading all of stdin closes the pipe: not an error here.
    if let Err(e) = child.stdin.take().expect("stdin").write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code (not a signal)")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tpbconform-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, data: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p.to_string_lossy().into_owned()
}

fn no_panic(o: &Output) {
    let e = stderr(o);
    assert!(
        !e.contains("panicked") && !e.contains("backtrace"),
        "panic/backtrace in stderr: {e}"
    );
}

// Hand-built bundles (SPEC §5).

fn header() -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = 0x85;
    b[1] = 0x10;
    b[0x0C] = 3; // num_payloads = 1 + 2
    b[0x0E] = 7;
    b[0x0F] = 1;
    b
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
    let mut b = [0u8; 64];
    b[0] = 0xD9;
    b[1] = 0x10;
    b[4] = 0x85;
    b[5] = 2;
    b[6] = 1;
    b[7] = 3;
    b[0x0C] = 0x04;
    b[0x0D] = 0x0A;
    b[0x0E] = kind_wire;
    b[0x10] = 0xAB;
    b
}

/// The eleven opcodes' images the v2 compiler emits (the CLI default generation): all but
/// 0xBE, 0xBF, 0xD8 (seed 003 "At a glance": CoreV3+).
fn v2_emitted() -> Vec<[u8; 64]> {
    all_eleven()
        .into_iter()
        .filter(|b| ![0xBE, 0xBF, 0xD8].contains(&b[0]))
        .collect()
}

fn all_eleven() -> Vec<[u8; 64]> {
    let mut v = vec![header(), payload(), d9(0x01)];
    let mut da = [0u8; 64];
    da[0] = 0xDA;
    da[4] = 0x34;
    da[5] = 0x12;
    da[0x0D] = 0x0F; // highest pre-v4 dtype tag (v2, FACTS §6)
    da[0x0E] = 0x05;
    v.push(da);
    let mut cb = [0u8; 64];
    cb[0] = 0xCB;
    cb[1] = 0x10;
    cb[0x10] = 1;
    cb[0x30] = 2;
    cb[0x3F] = 0xFF;
    v.push(cb);
    let mut bf = [0u8; 64];
    bf[0] = 0xBF;
    bf[1] = 0x10;
    bf[0x0C] = 0x08;
    bf[0x0D] = 0x0A;
    bf[0x20] = 1;
    bf[0x21] = 9;
    v.push(bf);
    let mut be = [0u8; 64];
    be[0] = 0xBE;
    be[1] = 0x10;
    be[0x0C] = 0x08;
    be[0x0E] = 1;
    v.push(be);
    let mut d8 = [0u8; 64];
    d8[0] = 0xD8;
    d8[1] = 0x10;
    d8[0x0C] = 5;
    d8[0x20] = 6;
    v.push(d8);
    let mut dc = [0u8; 64];
    dc[0] = 0xDC;
    dc[1] = 0x10;
    dc[0x0C] = 1;
    dc[0x17] = 4;
    v.push(dc);
    let mut db = [0u8; 64];
    db[0] = 0xDB;
    db[1] = 0x10;
    db[0x0C] = 1;
    db[0x12] = 2;
    db[0x14] = 3;
    v.push(db);
    let mut de = [0u8; 64];
    de[0] = 0xDE;
    de[1] = 0x10;
    de[0x0C] = 0xEF;
    de[0x10] = 1;
    v.push(de);
    v
}

fn cat(v: &[[u8; 64]]) -> Vec<u8> {
    v.iter().flat_map(|b| b.iter().copied()).collect()
}

fn hexline(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn json_lines(s: &str) -> Vec<serde_json::Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad json {l:?}: {e}")))
        .collect()
}

// ---------------------------------------------------------------------------

#[test]
fn check_valid_exits_0_and_jsonl_shape() {
    let o = run(&["check", "--format", "jsonl"], &cat(&v2_emitted()));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines.len(), 8);
    assert_eq!(
        lines[0],
        serde_json::json!({"index":0,"opcode":"0x85","mnemonic":"CustomOpHeader","valid":true,"failed":null})
    );
    assert_eq!(lines[2]["opcode"], "0xD9");
    assert_eq!(lines[2]["mnemonic"], "CollectiveCompute");
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["index"], i);
        assert_eq!(l["valid"], true, "{l}");
    }
}

#[test]
fn check_invalid_exits_1_and_names_predicate() {
    let mut bad_p = payload();
    bad_p[0x0D] = 1;
    let mut bad_h = header();
    bad_h[0x10] = 1; // half a scratch triple
    let mut bad_d9 = d9(0x01);
    bad_d9[0x0F] = 1; // reserved
    let input = cat(&[header(), bad_p, bad_h, bad_d9]);
    let o = run(&["check", "--format", "jsonl", "-"], &input);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let l = json_lines(&stdout(&o));
    assert_eq!(l[0]["valid"], true);
    assert_eq!(
        l[1],
        serde_json::json!({"index":1,"opcode":"0x86","mnemonic":"CustomOpPayload","valid":false,"failed":"custom_op_payload_reserved_zero"})
    );
    assert_eq!(l[2]["failed"], "custom_op_header_scratch_space_val");
    assert_eq!(l[3]["failed"], "reserved");

    // Text format names the predicate too.
    let o = run(&["check"], &input);
    assert_eq!(code(&o), 1);
    let t = stdout(&o);
    assert_eq!(t.lines().count(), 4, "{t}");
    assert!(t.contains("custom_op_payload_reserved_zero"), "{t}");
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
        "# a header\n\n{h}   # trailing comment\n   \n{}\n",
        spaced.to_uppercase()
    );
    let o = run(&["check", "--hex", "--format", "jsonl"], text.as_bytes());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(json_lines(&stdout(&o)).len(), 2);
}

#[test]
fn bad_inputs_exit_2_with_precise_messages() {
    let dir = tmpdir("bad");
    // length not a multiple of 64, odd
    let odd = write(&dir, "odd.bin", &[0u8; 65]);
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
    let partial = write(&dir, "partial.bin", &[0u8; 130]);
    let o = run(&["decode", &partial], b"");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("byte offset 128"), "{}", stderr(&o));
    // Readers stream: the two whole bundles before the error were printed.
    assert_eq!(json_lines(&stdout(&o)).len(), 2, "{}", stdout(&o));
    // bad hex digit: line and column
    let text = format!(
        "# c\n{}\n{}x{}\n",
        hexline(&header()),
        "0".repeat(10),
        "0".repeat(117)
    );
    let badhex = write(&dir, "bad.hex", text.as_bytes());
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
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("127 digits (odd"), "{}", stderr(&o));
    // empty input (binary and hex-with-only-comments)
    let o = run(&["check"], b"");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("empty input"), "{}", stderr(&o));
    let o = run(&["decode", "--hex"], b"# nothing\n\n");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("empty input"), "{}", stderr(&o));
    // a directory
    let d = dir.to_string_lossy().into_owned();
    let o = run(&["check", &d], b"");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
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
            "mode_names": {"wait_mode": "WAIT_FOR_SEM_GE_REG", "update_mode": "EVT_SET_READ"}
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
    assert_eq!(l[1]["field"], "opcode");
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
fn encode_inverts_decode_for_all_eleven_opcodes() {
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
    let c = run(&["check", "--hex"], &e.stdout);
    assert_eq!(code(&c), 0);
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
    assert!(t.contains("num_payloads"), "{t}");
    assert!(t.contains("reserved"), "{t}");
    assert!(
        t.contains("<== FAILED: custom_op_header_reserved_zero"),
        "{t}"
    );
    assert!(t.contains("0x20  00 00 00 00 00 77"), "{t}");
    assert!(t.contains("kind") && t.contains("AllReduce"), "{t}");
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
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("v6"), "{}", stderr(&o));
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
    // decode under v2 refuses it too, at the opcode byte.
    let d = run(&["decode"], &be);
    assert_eq!(code(&d), 1);
    assert_eq!(json_lines(&stdout(&d))[0]["field"], "opcode");
}
