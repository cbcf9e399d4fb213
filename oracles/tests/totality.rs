//! Totality: random and mutated inputs never panic, and decode/encode stay inverse.

use tpb_oracle::*;

/// The chip these tests run under: Cayman (v3) emits all eleven opcodes (seed 003).
const C: tpb_oracle::Generation = tpb_oracle::Generation::Cayman;

/// The harness's one PRNG (`generators::SplitMix64`), included as a file:
/// this crate cannot depend on the harness.
#[allow(dead_code)]
#[path = "../../harness/generators/src/generators/rng.rs"]
mod rng;
use rng::SplitMix64;

fn seeds() -> Vec<[u8; 64]> {
    let mut v = Vec::new();
    let g =
        encode_custom_op_group(3, (0x05, 1, 1, 2, 0x1234), &[0x5A; 48], &[[0xA5; 48]], C).unwrap();
    v.extend(g);
    for op in [0xD9u8, 0xDA, 0xCB, 0xBF, 0xBE, 0xD8, 0xDC, 0xDB, 0xDE] {
        let mut b = [0u8; 64];
        b[0] = op;
        b[1] = if op == 0xDA { 0 } else { 0x10 };
        match op {
            0xD9 | 0xDA => b[0x0C..0x0F].copy_from_slice(&[0x04, 0x0A, 0x01]),
            0xBF => {
                b[0x0C] = 1;
                b[0x0D] = 2;
                b[0x20] = 1;
            }
            0xBE => b[0x0C] = 0x0A,
            _ => {}
        }
        assert!(decode(&b, C).is_ok(), "seed {op:#x}");
        v.push(b);
    }
    v
}

fn check_one(b: &[u8; 64]) {
    let _ = header_verdict(b, C);
    let _ = payload_verdict(b, C);
    let _ = dbg_header_verdict(b, C);
    let _ = dbg_payload_verdict(b, C);
    let _ = is_named_opcode(C, b[0]);
    match decode(b, C) {
        Ok(d) => {
            let f: Vec<(&str, Val)> = d.fields.iter().map(|(n, v)| (*n, v.clone())).collect();
            assert_eq!(
                encode(d.opcode, &f, C).as_ref(),
                Ok(b),
                "round trip {b:02x?}"
            );
            if d.opcode == 0x85 {
                assert_eq!(header_verdict(b, C), Ok(()));
            }
            if d.opcode == 0x86 {
                assert_eq!(payload_verdict(b, C), Ok(()));
            }
        }
        Err(e) => {
            assert!(!e.field().is_empty());
            assert!(e.offset() < 64);
        }
    }
}

#[test]
fn random_bundles_never_panic() {
    let mut rng = SplitMix64(0x9E37_79B9_7F4A_7C15);
    for _ in 0..50_000 {
        let mut b = [0u8; 64];
        for x in b.iter_mut() {
            *x = rng.byte();
        }
        check_one(&b);
    }
}

#[test]
fn mutated_valid_bundles_never_panic_and_round_trip() {
    let mut rng = SplitMix64(12345);
    let seeds = seeds();
    let mut accepted = 0usize;
    for i in 0..100_000 {
        let mut b = seeds[i % seeds.len()];
        for _ in 0..=rng.index(3) {
            let at = rng.index(64);
            b[at] = if rng.index(2) == 0 {
                b[at] ^ (1 << rng.index(8))
            } else {
                rng.byte()
            };
        }
        check_one(&b);
        if decode(&b, C).is_ok() {
            accepted += 1;
        }
    }
    assert!(
        accepted > 1000,
        "mutations should often stay valid ({accepted})"
    );
}

#[test]
fn random_streams_never_panic() {
    let mut rng = SplitMix64(777);
    let seeds = seeds();
    for _ in 0..5_000 {
        let n = rng.index(12);
        let mut s = Vec::new();
        for _ in 0..n {
            let mut b = seeds[rng.index(seeds.len())];
            if rng.index(4) == 0 {
                let at = rng.index(64);
                b[at] = rng.byte();
            }
            s.extend_from_slice(&b);
        }
        if rng.index(10) == 0 {
            s.push(rng.byte());
        }
        match parse_stream(&s, C) {
            Ok(items) => assert!(items.len() <= n),
            Err(e) => {
                let _ = (e.name(), e.index());
            }
        }
    }
}

#[test]
fn random_field_lists_never_panic() {
    let mut rng = SplitMix64(4242);
    let names = [
        "wait_mode",
        "wait_idx",
        "update_mode",
        "update_idx",
        "semaphore_value",
        "num_payloads",
        "function_id",
        "num_arguments",
        "has_scratch_space",
        "scratch_space_addr",
        "scratch_space_size",
        "scratch_space_num_partitions",
        "ap",
        "cce_op",
        "dtype",
        "kind",
        "channel_id",
        "tensor_id",
        "tensor_base",
        "num_elements_per_partition",
        "src_dtype",
        "dst_dtype",
        "src_ap",
        "peer_partition",
        "dst_ap",
        "flag_0e",
        "flag_0f",
        "in_ap",
        "out_ap",
        "barrier_id",
        "barrier_index",
        "sema_ap",
        "valid",
        "reg_id",
        "group_id",
        "iteration_id",
        "stream_id",
        "handle",
        "ap_byte",
        "",
        "bogus",
    ];
    let words = [
        "add",
        "bypass",
        "AllReduce",
        "SendRecv",
        "x",
        "",
        "AllToAllV",
        "abs",
    ];
    for _ in 0..20_000 {
        let op = if rng.index(4) == 0 {
            rng.byte()
        } else {
            RECORD_OPCODES[rng.index(RECORD_OPCODES.len())]
        };
        let mut fields: Vec<(&str, Val)> = Vec::new();
        for _ in 0..rng.index(14) {
            let name = names[rng.index(names.len())];
            let val = match rng.index(3) {
                0 => Val::Int(if rng.index(2) == 0 {
                    u64::from(rng.byte())
                } else {
                    rng.next_u64()
                }),
                1 => Val::Name(words[rng.index(words.len())].to_string()),
                _ => Val::Bytes((0..rng.index(70)).map(|_| rng.byte()).collect()),
            };
            fields.push((name, val));
        }
        if let Ok(b) = encode(op, &fields, C) {
            let d = decode(&b, C).expect("encoder output must decode");
            assert_eq!(d.opcode, op);
        }
    }
}

#[test]
fn lut_and_gate_totality() {
    for x in (0u32..2000).chain([u32::MAX, u32::MAX - 1, 1 << 31]) {
        let _ = (collective_wire(x), alu_wire(x), cce_wire(x), dge_op(x));
        let _ = (
            dtype_wire(x, false),
            dtype_wire(x, true),
            wait_mode_lut(x),
            update_mode_lut(x),
        );
        let _ = (gate_cc_dim(x), gate_rank_id_output(x), gate_lnc(x));
        let _ = gate_sb_scratchpad(x, x, x % 2 == 0, u64::from(x), u64::MAX, u64::from(x));
    }
    for w in 0u8..=255 {
        let _ = (COLLECTIVE.of_wire(w), ALU.of_wire(w), is_dtype_tag(C, w));
        let _ = gate_custom_op(&[w, 0], &[w], w);
    }
}
