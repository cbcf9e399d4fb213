//! `check`'s stream walker (SPEC §5.3 "Linting a stream", D-27, D-28): core's walker
//! (`tpb_core::walk`) against the oracle's independent one (`tpb_oracle::lint_stream`) on
//! generated programs (`tpbconform::generators::stream_program`), and both against expectations written from the SPEC for the shipped
//! sample streams.

mod common;

use common::{code, run, stdout, BIN};
use tpb_core::lint::Verdict;
use tpb_core::walk::{walk, Event, Walker};
use tpb_core::Generation;
use tpb_oracle::{lint_stream, Lint, Report};
use tpbconform::generators::stream_program::{d9, da, header, payload, program_into, skeleton};
use tpbconform::generators::SplitMix64;

/// One comparable report: an instruction (index, opcode, length, verdict kind, predicate,
/// byte) or a stream error (name, index, owner index, owner opcode).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Row {
    Insn(
        usize,
        u8,
        usize,
        &'static str,
        Option<&'static str>,
        Option<usize>,
    ),
    Fault(&'static str, usize, usize, u8),
}

fn gens() -> [(Generation, tpb_oracle::Generation); 4] {
    [
        (Generation::V2, tpb_oracle::Generation::Sunda),
        (Generation::V3, tpb_oracle::Generation::Cayman),
        (Generation::V4, tpb_oracle::Generation::Mariana),
        (Generation::V5, tpb_oracle::Generation::Maverick),
    ]
}

fn core_rows(bytes: &[u8], gen: Generation) -> Vec<Row> {
    walk(bytes, gen)
        .expect("whole bundles")
        .into_iter()
        .map(|e| match e {
            Event::Instruction {
                at,
                length,
                verdict,
            } => {
                assert_eq!(at.offset, 64 * at.index, "offset of #{}", at.index);
                let (p, b) = match verdict {
                    Verdict::Invalid(f) => (Some(f.predicate), Some(f.offset)),
                    _ => (None, None),
                };
                let kind = match verdict {
                    Verdict::Valid => "valid",
                    Verdict::SkeletonOnly => "skeleton",
                    Verdict::Invalid(_) => "invalid",
                };
                Row::Insn(at.index, at.opcode, length, kind, p, b)
            }
            Event::Stream(s) => {
                assert_eq!(s.offset, 64 * s.index, "offset of {s:?}");
                assert_eq!(s.owner.offset, 64 * s.owner.index, "owner offset of {s:?}");
                Row::Fault(s.fault.name(), s.index, s.owner.index, s.owner.opcode)
            }
        })
        .collect()
}

fn oracle_rows(bytes: &[u8], chip: tpb_oracle::Generation) -> Vec<Row> {
    lint_stream(bytes, chip)
        .expect("whole bundles")
        .into_iter()
        .map(|r| match r {
            Report::Instruction {
                index,
                opcode,
                length,
                lint,
            } => match lint {
                Lint::Valid => Row::Insn(index, opcode, length, "valid", None, None),
                Lint::NotModelled => Row::Insn(index, opcode, length, "skeleton", None, None),
                Lint::Invalid { predicate, offset } => Row::Insn(
                    index,
                    opcode,
                    length,
                    "invalid",
                    Some(predicate),
                    Some(offset),
                ),
            },
            Report::Fault {
                name,
                index,
                owner,
                owner_opcode,
            } => Row::Fault(name, index, owner, owner_opcode),
        })
        .collect()
}

fn agree(bytes: &[u8], what: &str) {
    for (gen, chip) in gens() {
        let (c, o) = (core_rows(bytes, gen), oracle_rows(bytes, chip));
        assert_eq!(c, o, "{what} under {gen}: {}", hex(bytes));
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn core_and_oracle_walk_generated_programs_alike() {
    let mut r = SplitMix64(0x5EED_0020);
    let mut faults = std::collections::BTreeSet::new();
    let mut kinds = std::collections::BTreeSet::new();
    let mut s = Vec::new();
    for case in 0..3000 {
        program_into(&mut r, Generation::ALL[case % 4], &mut s);
        agree(&s, &format!("case {case}"));
        for row in core_rows(&s, Generation::V2) {
            match row {
                Row::Fault(name, ..) => faults.insert(name),
                Row::Insn(_, _, _, kind, ..) => kinds.insert(kind),
            };
        }
    }
    // The programs reach every stream error and every verdict kind (else the comparison is thin).
    let mut all_faults: Vec<&str> = STREAM_ERROR_NAMES.split(' ').collect();
    all_faults.sort_unstable();
    assert_eq!(faults.into_iter().collect::<Vec<_>>(), all_faults);
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["invalid", "skeleton", "valid"]
    );
}

/// The reader's block walk ([`Walker::push_bundles`], the fast path of `check`) gives the events
/// of the bundle-by-bundle walk, whatever the block boundaries, and stops right after the bundle
/// whose event asked it to.
#[test]
fn the_block_walk_gives_the_bundle_walk_events() {
    let mut r = SplitMix64(0xB10C);
    for case in 0..1500 {
        // Long runs of plain skeletons between programs (the fast path), then a program.
        let mut s = Vec::new();
        for _ in 0..r.below(4) {
            for _ in 0..r.below(40) {
                s.extend_from_slice(&skeleton(0x01 + r.below(3) as u8));
            }
            let mut p = Vec::new();
            program_into(&mut r, Generation::ALL[case % 4], &mut p);
            s.extend(p);
        }
        for (gen, _) in gens() {
            let want = walk(&s, gen).expect("whole bundles");
            let block = 64 * (1 + r.below(9) as usize);
            let mut got = Vec::new();
            let mut w = Walker::new(gen);
            for run in s.chunks(block) {
                assert_eq!(
                    w.push_bundles(run, &mut |e| {
                        got.push(e);
                        false
                    }),
                    run.len()
                );
            }
            w.finish(&mut |e| got.push(e));
            assert_eq!(got, want, "case {case} under {gen}, blocks of {block}");
            // Stopping at the k-th event: every event of that bundle, then nothing.
            if want.is_empty() {
                continue;
            }
            let k = r.below(want.len() as u64) as usize;
            let mut w = Walker::new(gen);
            let mut seen = Vec::new();
            let walked = w.push_bundles(&s, &mut |e| {
                seen.push(e);
                seen.len() > k
            });
            let stop_bundle = |e: &Event| match e {
                Event::Instruction { at, .. } => at.index,
                Event::Stream(x) => x.index,
            };
            let last = stop_bundle(&seen[seen.len() - 1]);
            if seen.len() > k {
                assert_eq!(walked, 64 * (last + 1), "case {case}: walked past the stop");
                let whole_bundle: Vec<Event> = want
                    .iter()
                    .copied()
                    .take_while(|e| stop_bundle(e) <= last)
                    .collect();
                assert_eq!(seen, whole_bundle, "case {case}: stop at event {k}");
            }
        }
    }
}

/// The shipped well-formed program, hex lines with `#` comments.
fn sample(name: &str) -> Vec<u8> {
    let path = format!("{}/../examples/samples/{name}", env!("CARGO_MANIFEST_DIR"));
    tpb_neff::build::parse_hex_lines(&std::fs::read_to_string(&path).expect("sample"))
}

#[test]
fn every_byte_of_the_sample_program_corrupted_keeps_core_and_oracle_together() {
    let good = sample("program.hex");
    for at in 0..good.len() {
        for v in [0x00u8, 0xFF, good[at] ^ 0x01, 0x86, 0xDA] {
            let mut s = good.clone();
            s[at] = v;
            agree(&s, &format!("byte {at:#x} = {v:#04x}"));
        }
    }
}

#[test]
fn the_well_formed_sample_keeps_sync_across_its_128_byte_instruction() {
    // examples/samples/program.hex (SPEC §5.3): 12 bundles, the 0xD4 at #8 is 128 bytes
    // (FACTS §9 [K]) and its second half starts with 0x86; read as 64 bytes that half would
    // be a stray_payload.
    let s = sample("program.hex");
    assert_eq!(s.len(), 12 * 64);
    for (gen, chip) in gens().into_iter().take(1) {
        let rows = core_rows(&s, gen);
        assert_eq!(rows, oracle_rows(&s, chip));
        let skel = |i, op| Row::Insn(i, op, 64, "skeleton", None, None);
        let valid = |i, op| Row::Insn(i, op, 64, "valid", None, None);
        assert_eq!(
            rows,
            vec![
                skel(0, 0x01),
                skel(1, 0x02),
                skel(2, 0x21),
                valid(3, 0x85),
                valid(4, 0x86),
                valid(5, 0x86),
                valid(6, 0xD9),
                valid(7, 0xDA),
                Row::Insn(8, 0xD4, 128, "skeleton", None, None),
                skel(10, 0x6B),
                valid(11, 0xCB),
            ]
        );
    }
}

#[test]
fn the_broken_sample_names_each_stream_error_where_spec_says() {
    // examples/samples/program_broken.hex, expectations from SPEC §5.3: (name, index where it
    // is detected, owner index, owner opcode).
    let s = sample("program_broken.hex");
    let faults: Vec<Row> = core_rows(&s, Generation::V2)
        .into_iter()
        .filter(|r| matches!(r, Row::Fault(..)))
        .collect();
    assert_eq!(
        faults,
        vec![
            Row::Fault("short_group", 3, 1, 0x85),
            Row::Fault("stray_payload", 4, 4, 0x86),
            Row::Fault("missing_leg", 6, 5, 0xD9),
            Row::Fault("payload_count_mismatch", 7, 7, 0x85),
            Row::Fault("stray_leg", 9, 9, 0xDA),
        ]
    );
    assert_eq!(
        core_rows(&s, Generation::V2),
        oracle_rows(&s, tpb_oracle::Generation::Sunda)
    );
    // 0x87 is a v2-only opcode (FACTS §1 [H]): skeleton on v2, valid_opcode at byte 0 on v3.
    let last = |gen| core_rows(&s, gen).last().cloned();
    assert_eq!(
        last(Generation::V2),
        Some(Row::Insn(12, 0x87, 64, "skeleton", None, None))
    );
    assert_eq!(
        last(Generation::V3),
        Some(Row::Insn(
            12,
            0x87,
            64,
            "invalid",
            Some("valid_opcode"),
            Some(0)
        ))
    );
}

#[test]
fn each_stream_error_at_the_end_of_the_stream() {
    // Cut short by the end (SPEC §5.3): detected one past the last bundle.
    let cases: Vec<(Vec<[u8; 64]>, Row)> = vec![
        (
            vec![header(2, 4), payload()],
            Row::Fault("short_group", 2, 0, 0x85),
        ),
        (vec![d9(0x05)], Row::Fault("missing_leg", 1, 0, 0xD9)),
        (
            vec![skeleton(0x01), skeleton(0xD4)],
            Row::Fault("truncated_instruction", 2, 1, 0xD4),
        ),
    ];
    for (bundles, want) in cases {
        let s: Vec<u8> = bundles.concat();
        let rows = core_rows(&s, Generation::V2);
        assert_eq!(rows.last(), Some(&want));
        assert_eq!(rows, oracle_rows(&s, tpb_oracle::Generation::Sunda));
    }
    // A 0xDA whose trio differs (SPEC §5.3 leg_mismatch), at the 0xDA, owned by the 0xD9.
    let s = [d9(0x05), da([0x04, 0x0A, 0x06])].concat();
    let rows = core_rows(&s, Generation::V2);
    assert!(
        rows.contains(&Row::Fault("leg_mismatch", 1, 0, 0xD9)),
        "{rows:?}"
    );
    // A group of 255 arguments (D-18) closes after its 256th payload.
    let mut s = header(255, 257).to_vec();
    for _ in 0..256 {
        s.extend_from_slice(&payload());
    }
    s.extend_from_slice(&payload());
    let rows = core_rows(&s, Generation::V2);
    let faults: Vec<&Row> = rows
        .iter()
        .filter(|r| matches!(r, Row::Fault(..)))
        .collect();
    assert_eq!(faults, [&Row::Fault("stray_payload", 257, 257, 0x86)]);
    assert_eq!(rows, oracle_rows(&s, tpb_oracle::Generation::Sunda));
}

fn from_hex(h: &str) -> [u8; 64] {
    let mut b = [0u8; 64];
    for (k, x) in b.iter_mut().enumerate() {
        *x = u8::from_str_radix(&h[2 * k..2 * k + 2], 16).expect("hex");
    }
    b
}

#[test]
fn each_verdict_kind_under_each_generation() {
    // (bundle, [verdict under v2, v3, v4, v5]), written from SPEC §1, §2, §5.3 (D-27) and
    // FACTS §1 [H]; a verdict is (kind, predicate, byte).
    type V = (&'static str, Option<&'static str>, Option<usize>);
    const SKEL: V = ("skeleton", None, None);
    const VALID: V = ("valid", None, None);
    const NOT_MEMBER: V = ("invalid", Some("valid_opcode"), Some(0));
    let with = |mut b: [u8; 64], at: usize, v: u8| {
        b[at] = v;
        b
    };
    // decode.txt's fp32 GetSequenceBounds (CoreV3+, S003 §6).
    let be = from_hex("be10000000000000000000000a000100303132333435363738393a3b3c3d3e3f505152535455565758595a5b5c5d5e5f00000000000000000000000000000000");
    let cases: Vec<([u8; 64], [V; 4])> = vec![
        (skeleton(0x01), [SKEL; 4]),
        (skeleton(0xD4), [SKEL; 4]),
        (skeleton(0x87), [SKEL, NOT_MEMBER, NOT_MEMBER, NOT_MEMBER]),
        (skeleton(0xB7), [NOT_MEMBER; 4]),
        (skeleton(0xFF), [NOT_MEMBER; 4]),
        (be, [NOT_MEMBER, VALID, VALID, VALID]),
        // 0xD8 is in every enum; only CoreV3+ emits its record (D-22, D-27).
        (skeleton(0xD8), [SKEL, VALID, VALID, VALID]),
        (header(0, 2), [VALID; 4]),
        (
            with(header(0, 2), 0x11, 1),
            [(
                "invalid",
                Some("custom_op_header_reserved_zero"),
                Some(0x11),
            ); 4],
        ),
        (
            with(skeleton(0x01), 1, 0x20),
            [("invalid", Some("inst_word_len"), Some(1)); 4],
        ),
        (
            with(skeleton(0x02), 4, 0xFF),
            [("invalid", Some("has_valid_neuron_events"), Some(4)); 4],
        ),
        (
            with(skeleton(0x02), 6, 0xFF),
            [("invalid", Some("has_valid_neuron_events"), Some(6)); 4],
        ),
        // 0xDA is stamped raw (D-3): byte 1 must stay 0x00, and it has no events band.
        (
            with(da([0x04, 0x0A, 0x05]), 1, 0x10),
            [("invalid", Some("inst_word_len"), Some(1)); 4],
        ),
    ];
    for (b, want) in cases {
        for (k, (gen, chip)) in gens().into_iter().enumerate() {
            let length = if b[0] == 0xD4 { 128 } else { 64 };
            let (kind, p, at) = want[k];
            let row = Row::Insn(0, b[0], length, kind, p, at);
            let mut s = b.to_vec();
            if length == 128 {
                s.extend_from_slice(&[0u8; 64]);
            }
            let got = core_rows(&s, gen);
            assert_eq!(got.first(), Some(&row), "{:#04x} under {gen}", b[0]);
            assert_eq!(got, oracle_rows(&s, chip), "{:#04x} under {gen}", b[0]);
        }
    }
}

fn check(args: &[&str], input: &[u8]) -> (i32, String) {
    let o = run(&[&["check"], args].concat(), input);
    (code(&o), stdout(&o))
}

#[test]
fn cli_verdicts_summary_and_max_errors() {
    // A short group, an opcode v3 lacks, a stray leg: three errors under v3.
    let s = [
        header(1, 3),
        payload(),
        skeleton(0x87),
        da([0x04, 0x0A, 0x05]),
    ]
    .concat();
    let (code, out) = check(&["--arch", "v3"], &s);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("#2 stream error: short_group at byte offset 0x80: group expects 2 payloads, found 1, cut short by 0x87"), "{out}");
    assert!(out.contains("#2 0x87 TENSOR_SCALAR_PTR_MULTI_DUAL_ARITH: invalid: valid_opcode: 0x87 is an opcode of v2 only (byte 0x00) (<stdin>@0x80)"), "{out}");
    assert!(
        out.contains("#3 stream error: stray_leg at byte offset 0xC0"),
        "{out}"
    );
    assert!(out.ends_with("<stdin>: 4 instructions (v3): 3 valid, 0 valid (skeleton; body not modelled), 1 invalid, 2 stream errors\n"), "{out}");
    // --format summary: the summary line only.
    let (code, out) = check(&["--arch", "v3", "--format", "summary"], &s);
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 1, "{out}");
    // --max-errors 1 stops at the first error (the short group at #2), before the 0x87.
    let (code, out) = check(
        &["--arch", "v3", "--format", "jsonl", "--max-errors", "1"],
        &s,
    );
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines[2]["stream_error"], "short_group");
    assert_eq!(lines[2]["offset"], 128);
    assert_eq!(lines[2]["instruction"]["index"], 0);
    let last = lines.last().expect("summary");
    assert_eq!(last["summary"]["stopped"], true, "{out}");
    assert_eq!(last["summary"]["stream_errors"], 1, "{out}");
    // Under v2 the 0x87 is skeleton-only: the same stream has only its two stream errors.
    let (code, out) = check(&["--format", "summary"], &s);
    assert_eq!(code, 1);
    assert!(
        out.contains("3 valid, 1 valid (skeleton; body not modelled), 0 invalid, 2 stream errors"),
        "{out}"
    );
    // Two files are two streams: a group open at the end of one does not run into the next.
    let dir = std::env::temp_dir().join(format!("tpb-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let a = dir.join("a.bin");
    let b = dir.join("b.bin");
    std::fs::write(&a, header(0, 2)).expect("a");
    std::fs::write(&b, payload()).expect("b");
    let o = std::process::Command::new(BIN)
        .args(["check", "--format", "summary"])
        .arg(&a)
        .arg(&b)
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("a.bin: 1 instructions (v2): 1 valid, 0 valid (skeleton; body not modelled), 0 invalid, 1 stream errors"), "{out}");
    assert!(out.contains("b.bin: 1 instructions (v2): 1 valid, 0 valid (skeleton; body not modelled), 0 invalid, 1 stream errors"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn jsonl_lines_parse_for_every_opcode_and_an_odd_file_name() {
    // check writes instruction lines by hand: every opcode, valid or not, and a file name that
    // needs escaping must still give one JSON object per line.
    let mut s = Vec::new();
    for op in 0..=255u8 {
        let mut b = skeleton(op);
        b[1] = if op % 3 == 0 { 0x11 } else { 0x10 };
        s.extend_from_slice(&b);
    }
    let dir = std::env::temp_dir().join(format!("tpb-lint-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("a \"q\" \\ b.bin");
    std::fs::write(&path, &s).expect("write");
    let o = std::process::Command::new(BIN)
        .args(["check", "--arch", "v5", "--format", "jsonl"])
        .arg(&path)
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut instructions = 0;
    for line in out.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(v["source"], path.to_string_lossy().as_ref(), "{line}");
        instructions += usize::from(v.get("verdict").is_some());
    }
    // 0xD4 takes the next bundle as its second half.
    assert_eq!(instructions, 255, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_broken_sample_completed_exits_0() {
    // program_broken.hex with each broken rule repaired (SPEC §5.3): the group gets its two
    // missing payloads, the stray 0x86 a header of its own (num_arguments 0), the 0xD9 its 0xDA,
    // the mismatched header num_payloads 2, the stray 0xDA a two-leg 0xD9 before it.
    let broken = sample("program_broken.hex");
    let b: Vec<[u8; 64]> = broken.chunks(64).map(|c| from_hex(&hex(c))).collect();
    assert_eq!(b.len(), 13);
    let leg = da([0x04, 0x0A, 0x05]);
    let mut fixed = vec![b[0], b[1], b[2], payload(), payload(), b[3]];
    fixed.extend([header(0, 2), b[4], b[5], leg, b[6]]);
    fixed.extend([header(0, 2), b[8], d9(0x05), b[9], b[10], b[11], b[12]]);
    let s = fixed.concat();
    let rows = core_rows(&s, Generation::V2);
    assert!(
        rows.iter().all(|r| !matches!(r, Row::Fault(..))),
        "{rows:?}"
    );
    assert_eq!(rows, oracle_rows(&s, tpb_oracle::Generation::Sunda));
    let (code, out) = check(&[], &s);
    assert_eq!(code, 0, "{out}");
    let (code, out) = check(
        &["--hex"],
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/samples/program_broken.hex"
        ))
        .expect("sample"),
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(", 0 invalid, 5 stream errors"), "{out}");
}

/// One stream of `corpus/vectors/streams/lint.txt`: its name, generations, bytes, and the rows
/// SPEC §5.3 says a walker reports, in order.
struct StreamVector {
    line: usize,
    name: String,
    arches: Vec<Generation>,
    bytes: Vec<u8>,
    rows: Vec<tpbconform::kinds::stream_lint::Row>,
}

/// Parses the stream vectors (format: corpus/vectors/README.md, `streams/`).
fn stream_vectors(text: &str) -> Vec<StreamVector> {
    use tpbconform::kinds::stream_lint::Row;
    let mut out: Vec<StreamVector> = Vec::new();
    let mut open: Option<StreamVector> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let f: Vec<&str> = body.split_whitespace().collect();
        match f.as_slice() {
            ["stream", name, arch] => {
                assert!(open.is_none(), "line {line}: stream inside a stream");
                let arches = arch
                    .strip_prefix("arch=")
                    .unwrap_or_else(|| panic!("line {line}: arch="))
                    .split(',')
                    .map(|a| match a {
                        "v2" => Generation::V2,
                        "v3" => Generation::V3,
                        "v4" => Generation::V4,
                        "v5" => Generation::V5,
                        _ => panic!("line {line}: generation {a}"),
                    })
                    .collect();
                open = Some(StreamVector {
                    line,
                    name: name.to_string(),
                    arches,
                    bytes: Vec::new(),
                    rows: Vec::new(),
                });
            }
            ["end"] => out.push(open.take().unwrap_or_else(|| panic!("line {line}: end"))),
            ["!", name, at, owner] => {
                let s = open.as_mut().unwrap_or_else(|| panic!("line {line}"));
                let num = |f: &str, key: &str| -> usize {
                    f.strip_prefix(key)
                        .and_then(|n| n.parse().ok())
                        .unwrap_or_else(|| panic!("line {line}: {key}N"))
                };
                let (at, owner) = (num(at, "at="), num(owner, "owner="));
                let name = STREAM_ERROR_NAMES
                    .split(' ')
                    .find(|n| n == name)
                    .unwrap_or_else(|| panic!("line {line}: stream error {name}"));
                s.rows.push(Row::StreamError {
                    name,
                    index: at,
                    offset: 64 * at,
                    owner: (
                        owner,
                        64 * owner,
                        *s.bytes.get(64 * owner).unwrap_or_else(|| {
                            panic!("line {line}: owner {owner} is not a bundle before this line")
                        }),
                    ),
                });
            }
            [hex, verdict @ ..] => {
                let s = open.as_mut().unwrap_or_else(|| panic!("line {line}"));
                let b = from_hex(hex);
                let index = s.bytes.len() / 64;
                s.bytes.extend_from_slice(&b);
                let (verdict, length) = match verdict {
                    [v @ .., "len=128"] => (v, 128),
                    v => (v, 64),
                };
                let (verdict, failure) = match verdict {
                    // The second half of a 128-byte instruction: no row of its own.
                    ["tail"] => continue,
                    ["valid"] => ("valid", None),
                    ["skeleton"] => ("skeleton", None),
                    ["invalid", predicate, byte] => {
                        let byte = usize::from_str_radix(byte.trim_start_matches("0x"), 16)
                            .unwrap_or_else(|_| panic!("line {line}: byte {byte}"));
                        let p: &'static str = Box::leak(predicate.to_string().into_boxed_str());
                        ("invalid", Some((p, byte)))
                    }
                    other => panic!("line {line}: verdict {other:?}"),
                };
                s.rows.push(Row::Instruction {
                    index,
                    offset: 64 * index,
                    opcode: b[0],
                    length,
                    verdict,
                    failure,
                });
            }
            [] => {}
        }
    }
    assert!(open.is_none(), "a stream without end");
    out
}

/// SPEC §5.3's stream errors, space-separated.
const STREAM_ERROR_NAMES: &str = concat!(
    "payload_count_mismatch stray_payload short_group missing_leg leg_mismatch stray_leg ",
    "truncated_instruction"
);

/// Every stream vector holds for core's walker and for the oracle's, under each generation it
/// names; together they cover every stream error and every verdict kind (valid, skeleton, each
/// skeleton predicate, a body predicate) under every generation.
#[test]
fn the_stream_vectors_hold_for_core_and_oracle_under_each_generation() {
    use tpbconform::kinds::stream_lint::Row;
    use tpbconform::subjects::{registry::reference_pair_for, Reference};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/vectors/streams/lint.txt"
    );
    let text = std::fs::read_to_string(path).expect("the stream vectors");
    let vectors = stream_vectors(&text);
    let mut covered = std::collections::BTreeSet::new();
    for v in &vectors {
        for &arch in &v.arches {
            let what = format!("stream {} (line {}) under {arch}", v.name, v.line);
            let (core, oracle) = reference_pair_for(arch);
            let rows =
                |s: &dyn Reference| s.lint_stream(&v.bytes).expect("answer").expect("bundles");
            assert_eq!(rows(&core), v.rows, "core: {what}");
            assert_eq!(rows(&oracle), v.rows, "oracle: {what}");
            for r in &v.rows {
                covered.insert(match r {
                    Row::StreamError { name, .. } => (arch, name.to_string()),
                    Row::Instruction {
                        verdict, failure, ..
                    } => (
                        arch,
                        match failure {
                            Some((p @ ("valid_opcode" | "inst_word_len"), _)) => p.to_string(),
                            Some(("has_valid_neuron_events", 4)) => "events@4".into(),
                            Some(("has_valid_neuron_events", 6)) => "events@6".into(),
                            Some(_) => "body".into(),
                            None => verdict.to_string(),
                        },
                    ),
                });
            }
        }
    }
    let kinds = [
        "valid",
        "skeleton",
        "valid_opcode",
        "inst_word_len",
        "events@4",
        "events@6",
        "body",
    ];
    for arch in Generation::ALL {
        for what in STREAM_ERROR_NAMES.split(' ').chain(kinds) {
            assert!(
                covered.contains(&(arch, what.to_string())),
                "no stream vector has {what} under {arch}"
            );
        }
    }
}

/// `minimize` keeps a `stream_lint` seed per class the walk reaches: seeds of one length with
/// different stream errors, or with a verdict only one of them has, have different signatures.
#[test]
fn minimize_signatures_tell_stream_lint_seeds_apart() {
    use tpbconform::minimize::signature;
    use tpbconform::targets::Target;
    let t = Target::named("stream_lint");
    let stray_payload = payload().to_vec();
    let stray_leg = da([0x04, 0x0A, 0x05]).to_vec();
    let skeleton_only = skeleton(0x01).to_vec();
    let sigs = [
        signature(t, &stray_payload),
        signature(t, &stray_leg),
        signature(t, &skeleton_only),
    ];
    assert_ne!(sigs[0], sigs[1]);
    assert_ne!(sigs[0], sigs[2]);
    assert_ne!(sigs[1], sigs[2]);
    assert!(sigs[0].contains("stray_payload"), "{}", sigs[0]);
    // The same classes in a longer seed of the same length bucket: the same signature.
    let again = [skeleton_only.clone(), skeleton(0x02).to_vec()].concat();
    assert_eq!(
        signature(t, &again).split(" | ").nth(1),
        sigs[2].split(" | ").nth(1)
    );
}

/// Runs the binary on files; (exit code, stdout, stderr).
fn run_bin(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    use std::io::Write;
    let mut child = std::process::Command::new(BIN)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run tpbconform");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin).expect("write stdin");
    drop(input);
    let o = child.wait_with_output().expect("wait");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn tmp_file(name: &str, bytes: &[u8]) -> String {
    let d = std::env::temp_dir().join(format!("tpb-stream-context-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("tmp");
    let p = d.join(name);
    std::fs::write(&p, bytes).expect("write");
    p.display().to_string()
}

/// `explain` names each bundle's place in its stream (SPEC §5.3: the group, the pair, the
/// 128-byte instruction), `check`'s verdict, and the stream errors where they are detected;
/// each file is its own stream.
#[test]
fn explain_shows_the_stream_context_of_each_bundle() {
    let broken = sample("program_broken.hex");
    let path = tmp_file("broken.bin", &broken);
    let (_, out, _) = run_bin(&["explain", "--color", "never", &path], b"");
    let context: Vec<&str> = out.lines().filter(|l| l.starts_with("  stream")).collect();
    let has = |needle: &str| {
        assert!(
            context.iter().any(|l| l.contains(needle)),
            "no context line has {needle:?}:\n{}",
            context.join("\n")
        )
    };
    // The sample's own comments (hand-written from SPEC §5.3) say what each bundle is.
    has("stream: bundle #0 at byte offset 0x0; check: valid (skeleton; body not modelled)");
    has("stream: bundle #1 at byte offset 0x40; opens a group of 3 payloads");
    has("stream: bundle #2 at byte offset 0x80; payload 1 of 3 (the output) of the group of #1 0x85");
    has("stream error: short_group at byte offset 0xC0");
    has("stream error: stray_payload at byte offset 0x100");
    has("stream error: missing_leg at byte offset 0x180");
    has("stream: bundle #11 at byte offset 0x2C0; the second 64 bytes of the 128-byte instruction #10 0xD4");
    // Two files are two streams: a header open at the end of the first is cut by the end
    // of that file, and the second file's payload is stray.
    let a = tmp_file("a.bin", &header(0, 2));
    let b = tmp_file("b.bin", &payload());
    let (_, out, _) = run_bin(&["explain", "--color", "never", &a, &b], b"");
    assert!(out.contains("end of "), "{out}");
    assert!(
        out.contains("stream error: short_group at byte offset 0x40"),
        "{out}"
    );
    assert!(
        out.contains("bundle #1 ("),
        "bundle numbers run across the files: {out}"
    );
    assert!(
        out.contains(
            "stream: bundle #0 at byte offset 0x0; check: valid\n  stream error: stray_payload"
        ),
        "{out}"
    );
}

/// `decode --stream` adds each bundle's stream context, and `encode` takes that output back.
#[test]
fn decode_stream_gives_the_context_and_encode_takes_it_back() {
    let good = sample("program.hex");
    let path = tmp_file("good.bin", &good);
    let (_, out, _) = run_bin(&["decode", "--stream", &path], b"");
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(rows.len(), good.len() / 64);
    let ctx = |i: usize| rows[i]["stream"].clone();
    // program.hex: #3 a header of 1 argument, #4 #5 its payloads, #6 a two-leg 0xD9 with its
    // 0xDA #7, #8 the 128-byte 0xD4 and #9 its second half (its comments, SPEC §5.3).
    assert_eq!(ctx(0)["in"], "alone");
    assert_eq!(ctx(0)["verdict"], "skeleton");
    assert_eq!(ctx(3)["opens"], "opens a group of 2 payloads");
    assert_eq!(
        (ctx(5)["in"].clone(), ctx(5)["of"].clone()),
        ("group".into(), 3.into())
    );
    assert_eq!(
        (ctx(5)["payload"].clone(), ctx(5)["payloads"].clone()),
        (2.into(), 2.into())
    );
    assert_eq!(
        (ctx(7)["in"].clone(), ctx(7)["of"].clone()),
        ("pair".into(), 6.into())
    );
    assert_eq!(ctx(8)["length"], 128);
    assert_eq!(
        (ctx(9)["in"].clone(), ctx(9)["of"].clone()),
        ("tail".into(), 8.into())
    );
    assert_eq!(ctx(9)["offset"], 9 * 64);
    // Without --stream the output is as before (no "stream" key).
    let (_, plain, _) = run_bin(&["decode", &path], b"");
    assert!(!plain.contains("\"stream\""));
    // encode reads decode --stream's records (the records that decode; the rest are skipped).
    let (code, bytes, err) = run_bin(&["encode", "--hex"], out.as_bytes());
    assert!(!err.contains("unknown key"), "{err}");
    assert_eq!(code, 1, "error records are skipped: {err}");
    assert!(bytes.lines().any(|l| l.starts_with("d910")), "{bytes}");
}

/// `check --per-opcode`: per opcode of the stream, its valid / skeleton / invalid counts, in
/// the text summary and in the JSONL summary object; without it, neither.
#[test]
fn check_per_opcode_counts_each_opcode_of_the_stream() {
    // Two 0x01 (one skeleton, one invalid at byte 1), a whole group of 0 arguments, a 0x87
    // (skeleton under v2, not a member under v3: SPEC §0).
    let mut bad = skeleton(0x01);
    bad[1] = 0;
    let s = [skeleton(0x01), bad, header(0, 2), payload(), skeleton(0x87)].concat();
    let path = tmp_file("per_opcode.bin", &s);
    let (code, out, _) = run_bin(
        &["check", "--per-opcode", "--format", "summary", &path],
        b"",
    );
    assert_eq!(code, 1, "{out}");
    let want = [
        "  0x01 LDWEIGHTS: 2 instructions: 0 valid, 1 valid (skeleton; body not modelled), 1 invalid",
        "  0x85 CustomOpHeader: 1 instructions: 1 valid, 0 valid (skeleton; body not modelled), 0 invalid",
        "  0x86 CustomOpPayload: 1 instructions: 1 valid, 0 valid (skeleton; body not modelled), 0 invalid",
        "  0x87 TENSOR_SCALAR_PTR_MULTI_DUAL_ARITH: 1 instructions: 0 valid, 1 valid (skeleton; body not modelled), 0 invalid",
    ];
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(lines, want, "{out}");
    let (_, out, _) = run_bin(
        &[
            "check",
            "--per-opcode",
            "--format",
            "jsonl",
            "--arch",
            "v3",
            &path,
        ],
        b"",
    );
    let last: serde_json::Value =
        serde_json::from_str(out.lines().last().expect("summary")).expect("JSON");
    let per = last["summary"]["per_opcode"]
        .as_array()
        .expect("per_opcode")
        .clone();
    let row = |op: &str| per.iter().find(|r| r["opcode"] == op).cloned().expect(op);
    assert_eq!(row("0x87")["invalid"], 1);
    assert_eq!(row("0x87")["skeleton"], 0);
    assert_eq!(row("0x01")["skeleton"], 1);
    assert_eq!(per.len(), 4);
    let (_, plain, _) = run_bin(&["check", "--format", "summary", &path], b"");
    assert_eq!(plain.lines().count(), 1, "{plain}");
}
