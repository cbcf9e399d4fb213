//! The short in-process differential run: `cargo test`'s teeth, and the test
//! command of `scripts/mutants.sh`.
//!
//! 1. A short gate over **every** target (corpus replay, vector files,
//!    generated valid / near-valid / raw cases), in process: it must complete,
//!    run every target, and pass.
//! 2. Correlated faults no single-byte walk builds: every pair of bytes of a
//!    valid image of each opcode set to the *same* value (e.g. two reserved
//!    fields OR-ed with XOR fail only when both hold the same nonzero value).
//! 3. Custom-op groups of every argument count 0..=255 (SPEC §5.3): the stream
//!    parsers agree, and core's group codec (`CustomOpGroup`) inverts the
//!    oracle's group encoder, and refuses a group one bundle short or long.

mod images;
use images::valid_images;
use std::path::PathBuf;
use tpb_core::insn::CustomOpGroup;
use tpb_core::{Bundle, Generation};
use tpbconform::gate::{self, GateConfig};
use tpbconform::judge::{Judge, Outcome};
use tpbconform::targets::Target;

fn compare_bundle(t: Target, b: &[u8; 64]) -> Outcome {
    Judge::reference().compare(t, b)
}

fn compare_stream(s: &[u8]) -> Outcome {
    Judge::reference().compare_stream(s)
}

fn fail_on(o: Outcome, what: &dyn Fn() -> String) {
    if let Some(d) = o.divergence() {
        panic!("{}:\n{d}", what());
    }
}

#[test]
fn short_gate_over_every_target_passes() {
    let cfg = GateConfig {
        cases: 6_000,
        sync_cases: 300,
        seconds: None,
        corpus_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus"),
        ..GateConfig::default()
    };
    let run = gate::run(&cfg, None);
    assert!(!run.stopped_early, "the short gate was cut short");
    assert!(!run.targets.is_empty());
    for (t, s) in &run.targets {
        assert!(
            s.ran > 0 && s.ran == s.planned,
            "{t}: ran {} of {}",
            s.ran,
            s.planned
        );
    }
    assert!(
        run.passed(),
        "short gate failed: findings {:#?}\nfailures {:#?}",
        run.findings,
        run.failures
    );
}

#[test]
fn equal_values_in_every_byte_pair_agree() {
    let targets: Vec<Target> = Target::all().filter(|t| t.is_bundle()).collect();
    assert_eq!(targets.len(), 4);
    for base in valid_images() {
        for i in 0..64 {
            for j in i + 1..64 {
                for v in [0x01u8, 0x80, 0xFF] {
                    let mut b = base;
                    b[i] = v;
                    b[j] = v;
                    for &t in &targets {
                        fail_on(compare_bundle(t, &b), &|| {
                            format!("bytes {i:#04x} and {j:#04x} both {v:#04x}")
                        });
                    }
                }
            }
        }
    }
}

#[test]
fn groups_of_every_argument_count_agree() {
    for n in 0..=255usize {
        let output = [n as u8; 48];
        let args: Vec<[u8; 48]> = (0..n).map(|k| [(k as u8) ^ 0x5A; 48]).collect();
        let sync = (0x05, n as u8, 0x13, 0x07, 0x0102_0304);
        let group = tpb_oracle::encode_custom_op_group(
            n as u8,
            sync,
            &output,
            &args,
            tpb_oracle::Generation::Sunda,
        )
        .unwrap_or_else(|e| panic!("oracle refused a group of {n} args: {e:?}"));
        assert_eq!(group.len(), n + 2);
        let stream: Vec<u8> = group.iter().flatten().copied().collect();
        fail_on(compare_stream(&stream), &|| format!("group of {n} args"));
        // one bundle short / one payload too many: both parsers reject alike
        fail_on(compare_stream(&stream[..stream.len() - 64]), &|| {
            format!("group of {n} args, last payload dropped")
        });
        let mut long = stream.clone();
        long.extend_from_slice(&stream[stream.len() - 64..]);
        fail_on(compare_stream(&long), &|| {
            format!("group of {n} args, one payload extra")
        });

        let bundles: Vec<Bundle> = group.iter().map(|b| Bundle(*b)).collect();
        let g = CustomOpGroup::decode(&bundles, Generation::V2)
            .unwrap_or_else(|e| panic!("core refused the oracle's group of {n} args: {e:?}"));
        assert_eq!(
            (g.args.len(), g.output, g.function_id),
            (n, output, n as u8)
        );
        assert_eq!(g.args, args, "group of {n} args");
        let again: Vec<[u8; 64]> = g
            .encode(Generation::V2)
            .unwrap()
            .iter()
            .map(|b| b.0)
            .collect();
        assert_eq!(again, group, "group of {n} args does not re-encode");
        assert!(
            CustomOpGroup::decode(&bundles[..n + 1], Generation::V2).is_err(),
            "{n} args, short"
        );
        let mut extra = bundles.clone();
        extra.push(bundles[n + 1]);
        assert!(
            CustomOpGroup::decode(&extra, Generation::V2).is_err(),
            "{n} args, long"
        );
    }
}

/// The verdict comparison of the gate is by predicate; this one also holds the
/// two readings to the same *first offending byte* (what `explain` highlights),
/// for every single-byte change and every equal-value byte pair of each valid
/// image, under every generation. The scratch rule names a field group, not a
/// byte (core reports has_scratch_space 0x10, SPEC §3), so only its predicate
/// is compared.
#[test]
fn validators_name_the_same_offending_byte() {
    use tpb_core::validate::{validate_header, validate_payload};
    let gens = [
        (Generation::V2, tpb_oracle::Generation::Sunda),
        (Generation::V3, tpb_oracle::Generation::Cayman),
        (Generation::V4, tpb_oracle::Generation::Mariana),
        (Generation::V5, tpb_oracle::Generation::Maverick),
    ];
    let mut compared = 0u32;
    let mut check = |b: &[u8; 64], g: Generation, chip: tpb_oracle::Generation| {
        let bundle = Bundle::from_slice(b).unwrap();
        let pairs = [
            (
                validate_header(&bundle, g).err(),
                tpb_oracle::header_verdict(b, chip).err(),
            ),
            (
                validate_payload(&bundle, g).err(),
                tpb_oracle::payload_verdict(b, chip).err(),
            ),
        ];
        for (c, o) in pairs {
            match (c, o) {
                (None, None) => {}
                (Some(c), Some(o)) => {
                    assert_eq!(
                        c.predicate().name(),
                        o.predicate.name(),
                        "{g:?} {}",
                        tpbconform::subjects::hex(b)
                    );
                    if c.predicate().name() != "custom_op_header_scratch_space_val" {
                        assert_eq!(
                            c.offset(),
                            o.offset,
                            "{g:?} {}: {} at core 0x{:02X}, oracle 0x{:02X}",
                            tpbconform::subjects::hex(b),
                            c.predicate().name(),
                            c.offset(),
                            o.offset
                        );
                        compared += 1;
                    }
                }
                (c, o) => panic!(
                    "{g:?} {}: core {:?}, oracle {:?}",
                    tpbconform::subjects::hex(b),
                    c.map(|e| e.predicate().name()),
                    o.map(|r| r.predicate.name())
                ),
            }
        }
    };
    for (g, chip) in gens {
        for base in valid_images() {
            for i in 0..64 {
                for v in [0x01u8, 0x80, 0xFF] {
                    let mut b = base;
                    b[i] = v;
                    check(&b, g, chip);
                    for j in i + 1..64 {
                        let mut b2 = b;
                        b2[j] = v;
                        check(&b2, g, chip);
                    }
                }
            }
        }
    }
    assert!(compared > 100_000, "only {compared} offsets compared");
}
