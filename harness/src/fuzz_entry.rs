//! Entry points of the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and of
//! the corpus replay (`tests/corpus_replay.rs`).
//!
//! # Contract
//!
//! [`check`] maps raw bytes to one or more differential comparisons
//! (core vs oracle) and returns `Err(report)` on the first disagreement; the
//! report holds the input bytes (hex) and both subjects' results. [`run`] is
//! the same but panics with the report — the only deliberate panic, which is
//! how libFuzzer learns of a finding. Any byte string is a valid input; the
//! mapping is deterministic.
//!
//! | target | input | property |
//! |---|---|---|
//! | `validate_header` | one bundle (first 64 bytes, zero-padded) | same §3 verdict |
//! | `validate_payload` | one bundle | same §4 verdict |
//! | `decode_any` | one bundle | same §5.1 decode (fields or failure) and §5.1 round trip, self and cross |
//! | `structured_diff` | generator program ([`crate::generators`]) | every bundle target agrees **and** equals the generator's label; encode of near-valid field lists agrees; streams, LUTs, IR gates agree |
//! | `custom_op_stream` | raw multi-bundle stream, and the same bytes as an engine stream program | same §5.3 parse |
//! | `luts` | `u32` LE ordinal | all four §6 LUT targets agree |
//! | `ir_gates` | engine IR query mapping | same §7 gate result |
//!
//! `sync_handshake` (model vs simulator) lives in [`crate::sync_diff`] when
//! registered; its fuzz target calls it directly.

use crate::engine::{Engine, Outcome, Target};
use crate::generators::{self as gen, Case, Config, GenError};
use crate::subject::{hex, CoreSubject, OracleSubject, Subject, Value};
use arbitrary::{Arbitrary, Unstructured};
use std::fmt;

/// The fuzz targets that run through this module (names = fuzz binaries =
/// `corpus/<name>/` folders).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FuzzTarget {
    /// Raw 64-byte bundle, header validator.
    ValidateHeader,
    /// Raw 64-byte bundle, payload validator.
    ValidatePayload,
    /// Raw 64-byte bundle, decode + round trip.
    DecodeAny,
    /// Generator-driven, every differential target plus labels.
    StructuredDiff,
    /// Multi-bundle stream.
    CustomOpStream,
    /// LUT ordinal.
    Luts,
    /// IR query.
    IrGates,
}

impl FuzzTarget {
    /// All targets.
    pub const ALL: [FuzzTarget; 7] = [
        FuzzTarget::ValidateHeader,
        FuzzTarget::ValidatePayload,
        FuzzTarget::DecodeAny,
        FuzzTarget::StructuredDiff,
        FuzzTarget::CustomOpStream,
        FuzzTarget::Luts,
        FuzzTarget::IrGates,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            FuzzTarget::ValidateHeader => "validate_header",
            FuzzTarget::ValidatePayload => "validate_payload",
            FuzzTarget::DecodeAny => "decode_any",
            FuzzTarget::StructuredDiff => "structured_diff",
            FuzzTarget::CustomOpStream => "custom_op_stream",
            FuzzTarget::Luts => "luts",
            FuzzTarget::IrGates => "ir_gates",
        }
    }

    /// Looks a target up by name.
    pub fn from_name(s: &str) -> Option<FuzzTarget> {
        FuzzTarget::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// A finding: a rendered report (input bytes and both results).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding(pub String);

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Finding {}

fn outcome(o: Outcome) -> Result<(), Finding> {
    match o {
        Outcome::Agree => Ok(()),
        Outcome::Divergence(d) => Err(Finding(d.to_string())),
    }
}

/// Runs `target` on `data`; `Err` on the first disagreement.
pub fn check(target: FuzzTarget, data: &[u8]) -> Result<(), Finding> {
    let e = Engine::new();
    match target {
        FuzzTarget::ValidateHeader => outcome(e.compare(Target::ValidateHeader, data)),
        FuzzTarget::ValidatePayload => outcome(e.compare(Target::ValidatePayload, data)),
        FuzzTarget::DecodeAny => {
            outcome(e.compare(Target::DecodeAny, data))?;
            outcome(e.compare(Target::Roundtrip, data))
        }
        FuzzTarget::StructuredDiff => structured_diff(&e, data),
        FuzzTarget::CustomOpStream => {
            outcome(e.compare_stream(data))?;
            outcome(e.compare(Target::CustomOpGroup, data))
        }
        FuzzTarget::Luts => {
            for t in [
                Target::CollectiveLut,
                Target::AluLut,
                Target::DgeLut,
                Target::DtypeLut,
            ] {
                outcome(e.compare(t, data))?;
            }
            Ok(())
        }
        FuzzTarget::IrGates => outcome(e.compare(Target::IrGates, data)),
    }
}

/// [`check`], panicking with the report on a finding (for fuzz targets).
pub fn run(target: FuzzTarget, data: &[u8]) {
    if let Err(f) = check(target, data) {
        panic!("[{}] {f}", target.name());
    }
}

/// Most generated items per `structured_diff` input.
pub const STRUCTURED_MAX_ITEMS: usize = 8;

fn gen_err(e: GenError) -> Result<(), Finding> {
    match e {
        GenError::Arbitrary(_) => Ok(()), // not reachable in practice; nothing to compare
        GenError::Encode(r) => Err(Finding(r.to_string())),
    }
}

/// `structured_diff`: a [`Config`] from the first bytes, then up to
/// [`STRUCTURED_MAX_ITEMS`] generated items (bundle cases, streams, LUT
/// ordinals, IR queries).
fn structured_diff(e: &Engine, data: &[u8]) -> Result<(), Finding> {
    let mut u = Unstructured::new(data);
    let cfg = Config::arbitrary(&mut u).unwrap_or_default();
    for i in 0..STRUCTURED_MAX_ITEMS {
        if i > 0 && u.is_empty() {
            break;
        }
        let pick = u.int_in_range(0..=9u8).unwrap_or(0);
        let r = match pick {
            0..=5 => match gen::case(&mut u, &cfg) {
                Ok(c) => check_case(e, &c).and_then(|()| check_encode(&mut u, &c)),
                Err(err) => gen_err(err),
            },
            6 | 7 => match gen::stream(&mut u, &cfg) {
                Ok(s) => outcome(e.compare_stream(&s)),
                Err(err) => gen_err(err),
            },
            8 => {
                let ord = gen::lut_ordinal(&mut u).unwrap_or(0);
                [
                    Target::CollectiveLut,
                    Target::AluLut,
                    Target::DgeLut,
                    Target::DtypeLut,
                ]
                .into_iter()
                .try_for_each(|t| outcome(e.compare_lut(t, ord)))
            }
            _ => match gen::ir_query(&mut u) {
                Ok(q) => outcome(e.compare_ir(&q)),
                Err(_) => Ok(()),
            },
        };
        r?;
    }
    Ok(())
}

/// Runs a generated case through the four bundle targets, then checks both
/// subjects against the generator's label.
pub fn check_case(e: &Engine, c: &Case) -> Result<(), Finding> {
    let ctx = || {
        format!(
            "\n  case: base 0x{:02X}, violations {:?}\n  bundle: {}",
            c.base,
            c.violations,
            hex(&c.bundle)
        )
    };
    for t in [
        Target::ValidateHeader,
        Target::ValidatePayload,
        Target::DecodeAny,
        Target::Roundtrip,
    ] {
        outcome(e.compare_bundle(t, &c.bundle)).map_err(|f| Finding(format!("{f}{}", ctx())))?;
    }
    let label = |view: &str, want: String, core: String, oracle: String| {
        if want == core && want == oracle {
            Ok(())
        } else {
            Err(Finding(format!(
                "label mismatch in `{view}`: generator expects {want}, core says {core}, \
                 oracle says {oracle}{}",
                ctx()
            )))
        }
    };
    let v = |x: Option<&str>| x.unwrap_or("valid").to_string();
    let b = &c.bundle;
    if let Some(want) = c.expected.header {
        label(
            "validate_header",
            v(want),
            v(CoreSubject.validate_header(b)),
            v(OracleSubject.validate_header(b)),
        )?;
    }
    if let Some(want) = c.expected.payload {
        label(
            "validate_payload",
            v(want),
            v(CoreSubject.validate_payload(b)),
            v(OracleSubject.validate_payload(b)),
        )?;
    }
    if let Some(want) = c.expected.decode {
        let show = |r: Result<(), (String, usize)>| match r {
            Ok(()) => "ok".to_string(),
            Err((f, o)) if f == "reserved" => format!("reserved@0x{o:02X}"),
            Err((f, _)) => f,
        };
        let got = |s: &dyn Subject| {
            show(
                s.decode(b)
                    .map(|_| ())
                    .map_err(|f| (f.field.clone(), f.offset)),
            )
        };
        label(
            "decode",
            show(want.map_err(|l| (l.field.to_string(), l.offset))),
            got(&CoreSubject),
            got(&OracleSubject),
        )?;
    }
    Ok(())
}

/// Encode-side near-valid: core's decode of the case's valid image with one
/// field replaced by an out-of-table / too-wide value (kind `SendRecv` /
/// `SendRecvCCE`, a non-shipped `cce_op`, dtype 0 / 0x11, width + 1, …);
/// both encoders must return the same bytes or the same error field.
fn check_encode(u: &mut Unstructured<'_>, c: &Case) -> Result<(), Finding> {
    let Ok(base) = gen::encode(&c.instruction) else {
        return Ok(());
    };
    let Ok(d) = CoreSubject.decode(&base) else {
        return Ok(()); // decode_any / roundtrip already compared this image
    };
    let mut fields = d.fields.clone();
    if fields.is_empty() {
        return Ok(());
    }
    let i = u.choose_index(fields.len()).unwrap_or(0);
    let (name, val) = &mut fields[i];
    *val = match (name.as_str(), &*val) {
        ("kind", _) => Value::Name(
            (*u.choose(&["SendRecv", "SendRecvCCE", "AllToAllV", "nope"])
                .unwrap_or(&"SendRecv"))
            .to_string(),
        ),
        ("cce_op", _) => Value::Name(
            (*u.choose(&["subtract", "average", "elemwise_mul", "abs", "bypass", "x"])
                .unwrap_or(&"subtract"))
            .to_string(),
        ),
        (_, Value::Int(_)) => Value::Int(
            *u.choose(&[0, 0x02, 0x07, 0x11, 0x100, 0x1_0000, 1 << 32, u64::MAX])
                .unwrap_or(&0),
        ),
        (_, Value::Bytes(b)) => {
            let n = b.len();
            Value::Bytes(vec![
                0xA5;
                if u.ratio(1, 2).unwrap_or(false) {
                    n + 1
                } else {
                    n.saturating_sub(1)
                }
            ])
        }
        (_, Value::Name(_)) => Value::Name("nope".to_string()),
    };
    let l = CoreSubject.encode(d.opcode, &fields);
    let r = OracleSubject.encode(d.opcode, &fields);
    if l == r {
        return Ok(());
    }
    let show = |x: &Result<[u8; 64], String>| match x {
        Ok(b) => format!("Ok {}", hex(b)),
        Err(f) => format!("Err(field {f})"),
    };
    let list: Vec<String> = fields.iter().map(|(n, v)| format!("{n}={v}")).collect();
    Err(Finding(format!(
        "divergence in encode (near-valid field list) for opcode 0x{:02X}\n  fields: {}\n  core: {}\n  oracle: {}",
        d.opcode,
        list.join(", "),
        show(&l),
        show(&r)
    )))
}

/// `fuzz_targets/validate_header.rs`.
pub fn validate_header(data: &[u8]) {
    run(FuzzTarget::ValidateHeader, data)
}

/// `fuzz_targets/validate_payload.rs`.
pub fn validate_payload(data: &[u8]) {
    run(FuzzTarget::ValidatePayload, data)
}

/// `fuzz_targets/decode_any.rs`.
pub fn decode_any(data: &[u8]) {
    run(FuzzTarget::DecodeAny, data)
}

/// `fuzz_targets/structured_diff.rs`.
pub fn structured_diff_entry(data: &[u8]) {
    run(FuzzTarget::StructuredDiff, data)
}

/// `fuzz_targets/custom_op_stream.rs`.
pub fn custom_op_stream(data: &[u8]) {
    run(FuzzTarget::CustomOpStream, data)
}

/// `fuzz_targets/luts.rs`.
pub fn luts(data: &[u8]) {
    run(FuzzTarget::Luts, data)
}

/// `fuzz_targets/ir_gates.rs`.
pub fn ir_gates(data: &[u8]) {
    run(FuzzTarget::IrGates, data)
}

/// The spec version the seed corpus was generated for (`corpus/VERSION`).
pub const CORPUS_VERSION: &str = "tpb-spec-1";

/// 64-bit FNV-1a of `data`: corpus files are named by its 16-digit lowercase hex.
pub fn fnv1a64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}
