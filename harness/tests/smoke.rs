//! `smoke()`: every cargo-fuzz target's entry point, run a few hundred times on
//! deterministic pseudo-random inputs under plain `cargo test` (wasmtime
//! `crates/fuzzing` style). A divergence, or a panic in either subject, fails
//! the test with the fuzz target's own report.
//!
//! "Nothing ran" guard: random bytes almost never get past a validator's first
//! predicate, so two thirds of the inputs start from a generated valid bundle
//! (a few bytes then overwritten), and the test fails unless enough inputs got
//! deep: past the opcode checks of each validator (into the reserved-byte and
//! scratch predicates), decoded per opcode, parsed into custom-op groups.

use arbitrary::Unstructured;
use tpb_core::stream::{parse_custom_op_stream, StreamItem};
use tpb_core::validate::{validate_header, validate_payload, Predicate};
use tpb_core::Bundle;
use tpbconform::fuzz_entry;
use tpbconform::generators::SplitMix64;
use tpbconform::generators::{self, Config};
use tpbconform::kinds::sync_handshake::sync_handshake_case;

const RUNS: u64 = 300;

/// The record opcodes (isa/records.tsv), in the generators' weight order.
const OPCODES: [u8; tpbconform::layout::OPCODES.len()] = tpbconform::layout::OPCODES;
/// The generators' default generation (`Config::arch`).
const GEN: tpb_core::Generation = tpb_core::Generation::V2;

/// The harness's SplitMix64: input `i` of a target is a pure function of `(target, i)`.
fn rng(target: u64, i: u64) -> impl FnMut() -> u64 {
    let mut r = SplitMix64(target.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i);
    move || r.next_u64()
}

/// Input `i`: raw bytes (lengths 0..=320, so short, exact-64, multi-bundle and
/// odd-length inputs all occur) when `i % 3 == 0`; else a generated valid
/// bundle (0x85 / 0x86 for the validators, else opcode `OPCODES[i % OPCODES.len()]`; for
/// `custom_op_stream` a generated stream of groups), odd `i` with one to three
/// random bytes overwritten.
fn input(target: &str, t: u64, i: u64) -> Vec<u8> {
    let mut next = rng(t, i);
    let raw = |next: &mut dyn FnMut() -> u64, len: usize| -> Vec<u8> {
        (0..len).map(|_| next() as u8).collect()
    };
    if i.is_multiple_of(3) || matches!(target, "structured_diff" | "ir_gates") {
        let len = (next() % 321) as usize;
        return raw(&mut next, len);
    }
    let seed = raw(&mut next, 4096);
    let mut u = Unstructured::new(&seed);
    let mut weights = [0u8; OPCODES.len()];
    let k = match target {
        "validate_header" => 0,  // 0x85
        "validate_payload" => 1, // 0x86
        _ => {
            // cycle over the opcodes the generators' generation emits; a stream's lone
            // bundles avoid 0x85/0x86 (groups come from the group generator)
            let lone = |op: u8| target != "custom_op_stream" || (op != 0x85 && op != 0x86);
            let emitted: Vec<usize> = (0..OPCODES.len())
                .filter(|&k| GEN.emits(OPCODES[k]) && lone(OPCODES[k]))
                .collect();
            // j counts the generated inputs (i not a multiple of 3); each pair (j, j + 1)
            // holds one odd (mutated) and one even i, whatever the number of opcodes
            let j = i - i / 3 - 1;
            emitted[((j / 2) % emitted.len() as u64) as usize]
        }
    };
    weights[k] = 1;
    let cfg = Config {
        weights,
        near: 0,
        max_args: 15,
        ..Config::default()
    };
    let mut out = match target {
        "custom_op_stream" => generators::stream(&mut u, &cfg).unwrap_or_default(),
        "luts" => (next() % 40).to_le_bytes()[..4].to_vec(),
        _ => generators::valid_case(&mut u, &cfg)
            .map(|c| c.bundle.to_vec())
            .unwrap_or_default(),
    };
    for _ in 0..if i.is_multiple_of(2) { 0 } else { 1 + i % 3 } {
        let r = next();
        if !out.is_empty() {
            let at = (r % out.len() as u64) as usize;
            out[at] = (r >> 16) as u8;
        }
    }
    out
}

fn bundle_of(data: &[u8]) -> Bundle {
    let mut b = [0u8; 64];
    let n = data.len().min(64);
    b[..n].copy_from_slice(&data[..n]);
    Bundle(b)
}

/// How deep the inputs of one run got (the "nothing ran" guard).
#[derive(Default, Debug)]
struct Depth {
    header_deep: u64,
    header_inputs: u64,
    payload_deep: u64,
    payload_inputs: u64,
    decoded: [u64; OPCODES.len()],
    stream_groups: u64,
}

impl Depth {
    fn record(&mut self, target: &str, data: &[u8]) {
        let b = bundle_of(data);
        // deep = accepted, or rejected by a predicate after the opcode check
        // (reserved bytes, scratch triple): the validator's own body ran.
        let deep = |r: Result<(), tpb_core::validate::ValidationError>, opcode_check| {
            u64::from(r.err().is_none_or(|e| e.predicate() > opcode_check))
        };
        match target {
            "validate_header" => {
                self.header_inputs += 1;
                self.header_deep +=
                    deep(validate_header(&b, GEN), Predicate::IsCustomOpHeaderOpcode);
            }
            "validate_payload" => {
                self.payload_inputs += 1;
                self.payload_deep += deep(
                    validate_payload(&b, GEN),
                    Predicate::IsCustomOpPayloadOpcode,
                );
            }
            "decode_any" => {
                if let Ok(insn) = tpb_core::decode(&b, GEN) {
                    if let Some(k) = OPCODES.iter().position(|&o| o == insn.opcode()) {
                        self.decoded[k] += 1;
                    }
                }
            }
            "custom_op_stream" => {
                if let Ok(items) = parse_custom_op_stream(data, GEN) {
                    self.stream_groups += items
                        .iter()
                        .filter(|it| matches!(it, StreamItem::Group { .. }))
                        .count() as u64;
                }
            }
            _ => {}
        }
    }

    fn check(&self) {
        assert!(
            self.header_deep * 4 > self.header_inputs,
            "nothing ran: only {} of {} validate_header inputs got past the opcode checks",
            self.header_deep,
            self.header_inputs
        );
        assert!(
            self.payload_deep * 4 > self.payload_inputs,
            "nothing ran: only {} of {} validate_payload inputs got past the opcode checks",
            self.payload_deep,
            self.payload_inputs
        );
        for (op, n) in OPCODES.iter().zip(self.decoded) {
            if !GEN.emits(*op) {
                // 0xBE, 0xBF, 0xD8 under v2: not emitted, so decode refuses every image.
                assert_eq!(n, 0, "{op:#04x} decoded under {GEN}");
                continue;
            }
            assert!(
                n >= 5,
                "nothing ran: only {n} decode_any inputs of opcode {op:#04x} decoded"
            );
        }
        // A floor, not a target: 3 of 8 stream items are deliberate errors, so only short
        // streams parse whole (45..50 groups over these inputs with the v2 generators).
        assert!(
            self.stream_groups >= 40,
            "nothing ran: custom_op_stream inputs parsed into only {} groups",
            self.stream_groups
        );
    }
}

#[test]
fn smoke() {
    let mut depth = Depth::default();
    let targets: Vec<&str> = fuzz_entry::fuzz_targets()
        .into_iter()
        .filter(|t| *t != "sync_handshake")
        .collect();
    assert_eq!(targets.len(), 10, "{targets:?}");
    for (t, target) in targets.into_iter().enumerate() {
        for i in 0..RUNS {
            let data = input(target, t as u64, i);
            depth.record(target, &data);
            if let Err(f) = fuzz_entry::check(target, &data) {
                panic!("fuzz target {target} input #{i}: {f}");
            }
        }
    }
    depth.check();
    let mut next = rng(99, 0);
    for i in 0..RUNS {
        let len = (next() % 321) as usize;
        let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if let Err(d) = sync_handshake_case(&data) {
            panic!("fuzz target sync_handshake input #{i}: {d:?}");
        }
    }
}
