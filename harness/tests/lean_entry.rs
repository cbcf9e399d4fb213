//! The lean fuzz entries (`fuzz_entry::Entry`, `engine::lean`): which fuzz
//! targets take them, that they report exactly what the engine reports, and
//! that a lean finding carries the input, both verdicts and a `tpbconform
//! replay` command that parses.

mod common;

use common::BIN;
use std::process::Command;
use tpbconform::fuzz_entry::{self, Entry};
use tpbconform::judge::{group_header, group_payload, lean, Judge};
use tpbconform::subjects::{
    hex, registry, Capabilities, DecodeFail, Decoded, EncodeResult, FieldName, Reference, Reply,
    Subject, Validator, Value, Verdict,
};
use tpbconform::targets::{folder_targets, Target};

/// core with one planted disagreement per operation: its validators ignore
/// byte 0x3F (the "reserved check skips the tail byte" bug) and byte 0x0E
/// (the payload's last reserved byte; the header does not check it), it decodes 0x86
/// with an extra field, and it encodes 0x85 with bit 0 of byte 0x3E flipped.
struct Planted(Box<dyn Subject>);

impl Subject for Planted {
    fn name(&self) -> &str {
        "planted"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::all()
    }
    fn validate(&self, v: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        let mut c = *b;
        c[0x3F] = 0;
        c[0x0E] = 0;
        self.0.validate(v, &c)
    }
    fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> {
        self.0.decode(b).map(|r| {
            r.map(|mut d| {
                if d.opcode == 0x86 {
                    d.fields.push(("planted".into(), Value::Int(1)));
                }
                d
            })
        })
    }
    fn encode(&self, opcode: u8, fields: &[(FieldName, Value)]) -> Reply<EncodeResult> {
        self.0.encode(opcode, fields).map(|r| {
            r.map(|mut b| {
                if opcode == 0x85 {
                    b[0x3E] ^= 1;
                }
                b
            })
        })
    }
}

impl Reference for Planted {}

/// The oracle as a concrete subject (the lean entries take `impl Subject`).
fn oracle() -> impl Reference + Copy {
    registry::reference_pair_for(Default::default()).1
}

/// Valid headers and payloads, an other-opcode bundle, each as is, with every
/// byte set to 0x01 and to 0xFF in turn, cut short and run long.
fn inputs() -> Vec<Vec<u8>> {
    let mut other = [0u8; 64];
    other[0] = 0xD9;
    other[1] = 0x10;
    let mut out = Vec::new();
    for base in [
        group_header(0, 0),
        group_header(3, 7),
        group_payload(0),
        group_payload(0xAB),
        other,
    ] {
        out.push(base.to_vec());
        for i in 0..64 {
            for v in [0x01, 0xFF] {
                let mut b = base;
                b[i] = v;
                out.push(b.to_vec());
            }
        }
        for n in [0, 1, 2, 16, 63] {
            out.push(base[..n].to_vec());
        }
        let mut long = base.to_vec();
        long.extend([1, 2, 3]);
        out.push(long);
    }
    out
}

#[test]
fn the_bundle_folders_and_only_they_take_the_lean_path() {
    for f in fuzz_entry::fuzz_targets() {
        let e = Entry::find(f).unwrap_or_else(|| panic!("{f}: no entry"));
        assert_eq!(e.folder(), f);
        let bundle = folder_targets(f).iter().all(|t| t.is_bundle());
        assert_eq!(!matches!(e, Entry::Judge(_)), bundle, "{f}: {e:?}");
    }
    assert!(matches!(
        Entry::of("validate_header"),
        Entry::Validator(_, Validator::Header)
    ));
    assert!(matches!(
        Entry::of("validate_payload"),
        Entry::Validator(_, Validator::Payload)
    ));
    assert!(matches!(Entry::of("decode_any"), Entry::Bundle(_)));
    assert!(matches!(Entry::of("structured_diff"), Entry::Judge(_)));
    assert_eq!(Entry::find("no_such_target"), None);
    // A gate target's own corpus folder is no fuzz target: `check` takes the engine.
    assert_eq!(Entry::find("alu_lut"), None);
    assert!(fuzz_entry::check("alu_lut", &[0, 0, 0, 0]).is_ok());
}

#[test]
fn lean_divergences_are_the_engines() {
    let engine = Judge::new(
        Box::new(Planted(registry::core())),
        Box::new(oracle()),
        Vec::new(),
    );
    let (left, right) = (Planted(registry::core()), oracle());
    let inputs = inputs();
    for t in Target::all().filter(|t| t.is_bundle()) {
        let mut found = 0;
        for input in &inputs {
            let lean = lean::bundle_pair(&left, &right, t, input);
            let eng = engine.compare(t, input).0.into_iter().next();
            assert_eq!(lean, eng, "{t} on {}", hex(input));
            found += usize::from(lean.is_some());
            if let tpbconform::targets::Check::Validator(v) = t.check() {
                assert_eq!(lean::validator_pair(&left, &right, t, v, input), eng);
            }
        }
        // The planted bugs are seen: the comparison above compared divergences, not only `None`s.
        assert!(found > 0, "{t}: the planted disagreement was never found");
    }
}

#[test]
fn a_lean_finding_names_input_verdicts_and_a_replay_command_that_parses() {
    let mut b = group_header(0, 0);
    b[0x3F] = 7;
    let left = Planted(registry::core());
    let f = Entry::of("validate_header")
        .check_pair(&left, &oracle(), &b)
        .expect_err("the planted validator accepts a nonzero byte 0x3F")
        .to_string();
    for want in [
        "divergence in target `validate_header` [OverAccept]".to_string(),
        format!("input (64 bytes): {}", hex(&b)),
        "planted: valid".to_string(),
        "oracle: custom_op_header_reserved_zero".to_string(),
        format!(
            "replay: tpbconform replay --target validate_header --hex {}",
            hex(&b)
        ),
    ] {
        assert!(f.contains(&want), "missing `{want}` in:\n{f}");
    }
    // A short input is reported (and replayed) as its zero-padded bundle.
    let short = [0x86, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 9];
    let f = Entry::of("decode_any")
        .check_pair(&left, &oracle(), &short)
        .expect_err("the planted decoder adds a field to 0x86")
        .to_string();
    let cmd = f
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: tpbconform "))
        .unwrap_or_else(|| panic!("no replay line in:\n{f}"));
    assert!(f.contains("diff (planted → oracle)"), "{f}");
    // core and oracle agree on it: the command parses and replays (exit 0, not 2).
    let out = Command::new(BIN)
        .args(cmd.split(' '))
        .output()
        .expect("run tpbconform");
    assert_eq!(
        out.status.code(),
        Some(0),
        "`tpbconform {cmd}`: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // And through the registry pair (what the fuzz binaries run) the same inputs agree.
    assert!(Entry::of("validate_header").check(&b).is_ok());
    assert!(Entry::of("decode_any").check(&short).is_ok());
}
