//! Generator contract tests: labels equal both subjects' verdicts, coverage of
//! every predicate / decode field / opcode, determinism; proptest strategies
//! (shrinking) and bolero harnesses over the same generators.

use arbitrary::Unstructured;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use tpbconform::fuzz_entry;
use tpbconform::generation::Generation;
use tpbconform::generators::{self as gen, Case, Config, SplitMix64, Violation, SCRATCH_PARTIAL};
use tpbconform::judge::Judge;
use tpbconform::kinds::structured::check_case_report as check_case;
use tpbconform::layout::OPCODES;
use tpbconform::subjects::{registry, verdict_name, Subject, Validator};

/// A subject's verdict text (`valid`, a predicate, or its fault).
fn verdict(s: &dyn Subject, which: Validator, b: &[u8; 64]) -> String {
    s.validate(which, b)
        .map_or_else(|f| f.to_string(), |v| verdict_name(&v).to_string())
}

/// A subject's decode failure field (`Ok` when it decodes).
fn decode_field(s: &dyn Subject, b: &[u8; 64]) -> Result<(), String> {
    match s.decode(b) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(f)) => Err(f.field.to_string()),
        Err(f) => Err(f.to_string()),
    }
}

/// Deterministic byte source.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    SplitMix64(seed).bytes(n)
}

fn near(seed: u64, cfg: &Config) -> Case {
    let data = bytes(seed, 256);
    gen::near_valid_case(&mut Unstructured::new(&data), cfg).expect("generator")
}

fn valid(seed: u64, cfg: &Config) -> Case {
    let data = bytes(seed, 256);
    gen::valid_case(&mut Unstructured::new(&data), cfg).expect("generator")
}

/// The predicates of each validator in chain order (SPEC §3, §4), space-separated.
const HEADER_PREDICATES: &str = concat!(
    "valid_opcode inst_word_len has_valid_neuron_events is_custom_op_header_opcode ",
    "custom_op_header_reserved_zero custom_op_header_scratch_space_val"
);
const PAYLOAD_PREDICATES: &str = concat!(
    "valid_opcode inst_word_len has_valid_neuron_events is_custom_op_payload_opcode ",
    "custom_op_payload_reserved_zero"
);
const DECODE_FIELDS: [&str; 13] = [
    "opcode",
    "inst_word_len",
    "reserved",
    "wait_mode",
    "update_mode",
    "cce_op",
    "dtype",
    "kind",
    "src_dtype",
    "dst_dtype",
    "cross_core_enable",
    "valid",
    "arg_type",
];

/// Over N near-valid cases (k = 1, 2, 3): each label equals core's and the
/// oracle's verdict, every predicate of both validators is the first failing
/// one at least once, every decode field fails first at least once, every
/// partial scratch combination occurs, every opcode is valid at least once.
#[test]
fn coverage_and_labels() {
    let e = Judge::reference();
    let (core, oracle) = (registry::core(), registry::oracle());
    // (view, label) -> [cases, core agrees, oracle agrees]
    let mut matrix: BTreeMap<(&str, String), [usize; 3]> = BTreeMap::new();
    let mut scratch_combos = BTreeSet::new();
    let mut count = |view: &'static str, want: String, core: String, oracle: String| {
        let row = matrix.entry((view, want.clone())).or_default();
        row[0] += 1;
        row[1] += usize::from(core == want);
        row[2] += usize::from(oracle == want);
    };
    let v = |x: Option<&str>| x.unwrap_or("valid").to_string();
    let mut failures = Vec::new();
    let n = 3000u64;
    for seed in 0..n {
        let cfg = Config {
            k: (seed % 7 / 5) as u8 + (seed % 11 / 10) as u8, // mostly k = 1
            ..Config::default()
        };
        let c = if seed % 8 == 0 {
            valid(seed, &cfg)
        } else {
            near(seed, &cfg)
        };
        if let Err(f) = check_case(&e, &c) {
            failures.push(f.to_string());
        }
        let b = &c.bundle;
        for (view, want, which) in [
            ("header", c.expected.header, Validator::Header),
            ("payload", c.expected.payload, Validator::Payload),
        ] {
            if let Some(w) = want {
                count(
                    view,
                    v(w),
                    verdict(&*core, which, b),
                    verdict(&*oracle, which, b),
                );
            }
        }
        if let Some(w) = c.expected.decode {
            let f = |r: Result<(), String>| r.err().unwrap_or_else(|| "ok".into());
            count(
                "decode",
                f(w.map_err(|l| l.field.to_string())),
                f(decode_field(&*core, b)),
                f(decode_field(&*oracle, b)),
            );
            if w.is_ok() {
                count(
                    "valid_opcode",
                    format!("0x{:02X}", c.base),
                    "".into(),
                    "".into(),
                );
            }
        }
        for x in &c.violations {
            if let Violation::Scratch { parts, .. } = x {
                scratch_combos.insert(*parts);
            }
        }
    }
    println!(
        "{:<8} {:<36} {:>6} {:>6} {:>6}",
        "view", "first failing", "cases", "core", "oracle"
    );
    for ((view, label), [n, c, o]) in &matrix {
        println!("{view:<8} {label:<36} {n:>6} {c:>6} {o:>6}");
    }
    assert!(
        failures.is_empty(),
        "{} failures, first:\n{}",
        failures.len(),
        failures[0]
    );
    let has = |view: &str, l: &str| matrix.contains_key(&(view, l.to_string()));
    for p in HEADER_PREDICATES.split(' ') {
        assert!(has("header", p), "header predicate {p} never first");
    }
    for p in PAYLOAD_PREDICATES.split(' ') {
        assert!(has("payload", p), "payload predicate {p} never first");
    }
    for f in DECODE_FIELDS {
        // src_dtype, dst_dtype, cross_core_enable live only in 0xBF, which the generators' generation may not emit.
        if matches!(f, "src_dtype" | "dst_dtype" | "cross_core_enable")
            && !Generation::default().emits(0xBF)
        {
            continue;
        }
        assert!(has("decode", f), "decode field {f} never first");
    }
    for op in OPCODES
        .into_iter()
        .filter(|&op| Generation::default().emits(op))
    {
        assert!(
            has("valid_opcode", &format!("0x{op:02X}")),
            "0x{op:02X} never valid"
        );
    }
    assert_eq!(scratch_combos, SCRATCH_PARTIAL.into_iter().collect());
}

#[test]
fn dword_14_alone_is_scratch_failure() {
    let c = gen::label(
        0x85,
        &[Violation::Scratch {
            parts: 0b0010,
            b10: 1,
            d14: 0x100,
            d18: 1,
            b1c: 1,
        }],
        Generation::V2,
    );
    assert_eq!(c.header, Some(Some("custom_op_header_scratch_space_val")));
}

#[test]
fn deterministic() {
    for seed in 0..50 {
        let cfg = Config::default();
        assert_eq!(near(seed, &cfg), near(seed, &cfg));
        let d = bytes(seed, 300);
        let a = gen::stream(&mut Unstructured::new(&d), &cfg).expect("stream");
        let b = gen::stream(&mut Unstructured::new(&d), &cfg).expect("stream");
        assert_eq!(a, b);
    }
    // Exhausted input still generates (minimal choices).
    let c = gen::near_valid_case(&mut Unstructured::new(&[]), &Config::default());
    assert!(c.is_ok());
}

#[test]
fn swarm_configs_and_structured_diff_agree() {
    for seed in 0..300 {
        let d = bytes(seed ^ 0x5157, 400);
        fuzz_entry::check("structured_diff", &d).unwrap_or_else(|f| panic!("{f}"));
    }
}

// ---------------------------------------------------------------------------
// proptest: strategies over the same generators (shrinking = shrinking bytes)
// ---------------------------------------------------------------------------

/// A swarm config.
fn config() -> impl Strategy<Value = Config> {
    (prop::array::uniform(0u8..4), 0u8..3, any::<u8>(), 0u8..8).prop_map(
        |(weights, k, near, max_args)| Config {
            arch: Generation::default(),
            weights,
            k,
            near,
            max_args,
        },
    )
}

/// A near-valid case under a swarm config.
fn near_valid() -> impl Strategy<Value = Case> {
    (config(), prop::collection::vec(any::<u8>(), 0..160)).prop_map(|(cfg, data)| {
        gen::near_valid_case(&mut Unstructured::new(&data), &cfg).expect("generator")
    })
}

/// A bundle stream.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    (config(), prop::collection::vec(any::<u8>(), 0..400)).prop_map(|(cfg, data)| {
        gen::stream(&mut Unstructured::new(&data), &cfg).expect("generator")
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn prop_near_valid_labels_hold(c in near_valid()) {
        let e = Judge::reference();
        prop_assert!(check_case(&e, &c).is_ok(), "{}", check_case(&e, &c).unwrap_err());
    }

    #[test]
    fn prop_streams_agree(s in stream()) {
        let r = fuzz_entry::check("custom_op_stream", &s);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

// ---------------------------------------------------------------------------
// bolero: the fuzz entry points under plain `cargo test` (random inputs)
// ---------------------------------------------------------------------------

#[test]
fn bolero_structured_diff() {
    bolero::check!()
        .with_iterations(300)
        .with_max_len(512)
        .for_each(|d: &[u8]| {
            fuzz_entry::check("structured_diff", d).unwrap_or_else(|f| panic!("{f}"))
        });
}

#[test]
fn bolero_raw_targets() {
    bolero::check!()
        .with_iterations(300)
        .with_max_len(256)
        .for_each(|d: &[u8]| {
            for t in fuzz_entry::fuzz_targets() {
                fuzz_entry::check(t, d).unwrap_or_else(|f| panic!("{f}"));
            }
        });
}

/// The LUT edge ordinals read from core's answers are the tables' edges of SPEC §6 (and
/// nothing else): collective kinds 2..=10, ALU ordinals 0..=29 with no wire byte at 24 and
/// 25, CCE / DGE {0, 4}, dtype 0..=19, wait modes 0..=2, update modes 0..=5 (FACTS §2, §4).
#[test]
fn lut_edges_are_the_tables_edges() {
    let far = [0x100, 0x1_0000, 0x8000_0000, u32::MAX];
    let mut want = vec![
        0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 19, 20, 21, 24, 25, 29, 30, 31,
    ];
    want.extend(far);
    assert_eq!(gen::lut_edge_ordinals(), want.as_slice());
}

/// The labels follow the config's generation: under each, near-valid cases of the opcodes
/// it emits are labelled as that generation's core and oracle judge them (its roster, dtype
/// column and encoder).
#[test]
fn labels_follow_the_generation() {
    for arch in Generation::ALL {
        let (core, oracle) = (registry::core_for(arch), registry::oracle_for(arch));
        let cfg = Config {
            arch,
            ..Config::default()
        };
        for seed in 0..1500 {
            let c = near(seed, &cfg);
            let b = &c.bundle;
            for (want, which) in [
                (c.expected.header, Validator::Header),
                (c.expected.payload, Validator::Payload),
            ] {
                let Some(w) = want else { continue };
                let w = w.unwrap_or("valid");
                for s in [&core, &oracle] {
                    assert_eq!(verdict(&**s, which, b), w, "{arch} {which:?} {c:?}");
                }
            }
            if let Some(w) = c.expected.decode {
                let w = w.map_err(|l| l.field.to_string());
                for s in [&core, &oracle] {
                    assert_eq!(decode_field(&**s, b), w, "{arch} decode {c:?}");
                }
            }
        }
    }
}
