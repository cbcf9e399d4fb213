//! decode / encode: hand-built images of all eleven opcodes (from SPEC §5 and seed 003),
//! round trips, decode failures at each field (SPEC §5.1), encode failures (SPEC §5.2).

mod common;

use common::img;
use tpb_oracle::*;

/// The chip these tests run under: Mariana (v4) emits all eleven opcodes (seed 003) and has the
/// v4 dtype column (tag 0x10, FACTS §6).
const C: tpb_oracle::Generation = tpb_oracle::Generation::Mariana;

fn ramp(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed))
        .collect()
}

/// sync band: wait SEM_GE_REG on sem 0x21, increment sem 0x42, values 0xA1B2C3D4.
const SYNC: &[u8] = &[0x85, 0x21, 0x01, 0x42, 0xD4, 0xC3, 0xB2, 0xA1];

fn sync_fields() -> Vec<(&'static str, Val)> {
    vec![
        ("debug_cmd", Val::Int(0)),
        ("debug_hint", Val::Int(0)),
        ("wait_mode", Val::Int(0x85)),
        ("wait_idx", Val::Int(0x21)),
        ("update_mode", Val::Int(1)),
        ("update_idx", Val::Int(0x42)),
        ("semaphore_value", Val::Int(0xA1B2_C3D4)),
    ]
}

fn with_sync(rest: Vec<(&'static str, Val)>) -> Vec<(&'static str, Val)> {
    let mut v = sync_fields();
    v.extend(rest);
    v
}

/// (image, mnemonic, expected canonical fields).
type Sample = ([u8; 64], &'static str, Vec<(&'static str, Val)>);

/// One or more samples for each of the eleven opcodes.
fn samples() -> Vec<Sample> {
    let ap48 = ramp(48, 3);
    let ap16a = ramp(16, 9);
    let ap16b = ramp(16, 200);
    let ap32 = ramp(32, 77);
    vec![
        (
            img(&[
                (0, &[0x85, 0x10]),
                (4, SYNC),
                (0x0C, &[0x05, 0x00, 0x09, 0x03]),
            ]),
            "CustomOpHeader",
            with_sync(vec![
                ("num_payloads", Val::Int(5)),
                ("function_id", Val::Int(9)),
                ("num_arguments", Val::Int(3)),
                ("has_scratch_space", Val::Int(0)),
                ("scratch_space_addr", Val::Int(0)),
                ("scratch_space_size", Val::Int(0)),
                ("scratch_space_num_partitions", Val::Int(0)),
            ]),
        ),
        (
            // header carrying a full scratch descriptor and a dword[0x14] (D-4, D-8)
            img(&[
                (0, &[0x85, 0x10]),
                (4, SYNC),
                (0x0C, &[0x34, 0x12, 0xFF, 0xFE]),
                (0x10, &[0x07]),
                (0x14, &[1, 2, 3, 4]),
                (0x18, &[0, 0, 0x10, 0]),
                (0x1C, &[0x01]),
            ]),
            "CustomOpHeader",
            with_sync(vec![
                ("num_payloads", Val::Int(0x1234)),
                ("function_id", Val::Int(0xFF)),
                ("num_arguments", Val::Int(0xFE)),
                ("has_scratch_space", Val::Int(7)),
                ("scratch_space_addr", Val::Int(0x0403_0201)),
                ("scratch_space_size", Val::Int(0x0010_0000)),
                ("scratch_space_num_partitions", Val::Int(1)),
            ]),
        ),
        (
            img(&[
                (0, &[0x86, 0x10]),
                (4, SYNC),
                (0x0F, &[0x01]),
                (0x10, &ap48),
            ]),
            "CustomOpPayload",
            with_sync(vec![
                ("arg_type", Val::Int(1)),
                ("ap", Val::Bytes(ap48.clone())),
            ]),
        ),
        (
            img(&[
                (0, &[0xD9, 0x10]),
                (4, SYNC),
                (0x0C, &[0x04, 0x0A, 0x09]),
                (0x10, &ap48),
            ]),
            "CollectiveCompute",
            with_sync(vec![
                ("cce_op", Val::Name("add".into())),
                ("dtype", Val::Int(0x0A)),
                ("kind", Val::Name("AllToAllV".into())),
                ("ap", Val::Bytes(ap48.clone())),
            ]),
        ),
        (
            img(&[
                (0, &[0xDA, 0x00]),
                (4, &[0x34, 0x12]),
                (0x0C, &[0x00, 0x10, 0x05]),
                (0x10, &ap48),
            ]),
            "CollectiveComputeSecondary",
            vec![
                ("channel_id", Val::Int(0x1234)),
                ("cce_op", Val::Name("bypass".into())),
                ("dtype", Val::Int(0x10)),
                ("kind", Val::Name("Permute".into())),
                ("ap", Val::Bytes(ap48.clone())),
            ],
        ),
        (
            img(&[
                (0, &[0xCB, 0x10]),
                (4, SYNC),
                (0x10, &[1, 2, 3, 4, 5, 6, 7, 8]),
                (0x30, &[0xFF; 8]),
                (0x38, &[0x00, 0x04, 0, 0, 0, 0, 0, 0]),
            ]),
            "CollectiveSendRecv",
            with_sync(vec![
                ("tensor_id", Val::Int(0x0807_0605_0403_0201)),
                ("tensor_base", Val::Int(u64::MAX)),
                ("num_elements_per_partition", Val::Int(0x400)),
            ]),
        ),
        (
            img(&[
                (0, &[0xBF, 0x10]),
                (4, SYNC),
                (0x0C, &[0x0A, 0x06]),
                (0x10, &ap16a),
                (0x20, &[0x01, 0x3F]),
                (0x30, &ap16b),
            ]),
            "Gpsimdsb2sb",
            with_sync(vec![
                ("src_dtype", Val::Int(0x0A)),
                ("dst_dtype", Val::Int(0x06)),
                ("src_ap", Val::Bytes(ap16a.clone())),
                ("peer_partition", Val::Int(0x3F)),
                ("dst_ap", Val::Bytes(ap16b.clone())),
            ]),
        ),
        (
            img(&[
                (0, &[0xBE, 0x10]),
                (4, SYNC),
                (0x0C, &[0x08, 0x00, 0xAA, 0x55]),
                (0x10, &ap16a),
                (0x20, &ap16b),
            ]),
            "GetSequenceBounds",
            with_sync(vec![
                ("dtype", Val::Int(0x08)),
                ("flag_0e", Val::Int(0xAA)),
                ("flag_0f", Val::Int(0x55)),
                ("in_ap", Val::Bytes(ap16a.clone())),
                ("out_ap", Val::Bytes(ap16b.clone())),
            ]),
        ),
        (
            img(&[
                (0, &[0xD8, 0x10]),
                (4, SYNC),
                (0x0C, &[0x78, 0x56, 0x34, 0x12]),
                (0x10, &[0x02, 0, 0, 0x80]),
                (0x20, &ap32),
            ]),
            "CoreBarrier",
            with_sync(vec![
                ("barrier_id", Val::Int(0x1234_5678)),
                ("barrier_index", Val::Int(0x8000_0002)),
                ("sema_ap", Val::Bytes(ap32.clone())),
            ]),
        ),
        (
            img(&[
                (0, &[0xDC, 0x10]),
                (4, SYNC),
                (0x0C, &[0x01]),
                (0x17, &[0x1F]),
            ]),
            "GetGlobalRankId",
            with_sync(vec![("valid", Val::Int(1)), ("reg_id", Val::Int(0x1F))]),
        ),
        (
            img(&[
                (0, &[0xDB, 0x10]),
                (4, SYNC),
                (0x0C, &[0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07]),
                (0x14, &[0x08, 0x09]),
            ]),
            "GetCurProcessingRankID",
            with_sync(vec![
                ("group_id", Val::Int(0x0201)),
                ("channel_id", Val::Int(0x0403)),
                ("iteration_id", Val::Int(0x0605)),
                ("reg_id", Val::Int(0x07)),
                ("stream_id", Val::Int(0x0908)),
            ]),
        ),
        (
            img(&[
                (0, &[0xDE, 0x10]),
                (4, SYNC),
                (0x0C, &[0xEF, 0xBE, 0xAD, 0xDE]),
                (0x10, &[0x99]),
            ]),
            "TensorCompletion",
            with_sync(vec![
                ("handle", Val::Int(0xDEAD_BEEF)),
                ("ap_byte", Val::Int(0x99)),
            ]),
        ),
    ]
}

#[test]
fn samples_cover_every_record() {
    let mut ops: Vec<u8> = samples().iter().map(|s| s.0[0]).collect();
    ops.sort_unstable();
    ops.dedup();
    let mut want = RECORD_OPCODES.to_vec();
    want.sort_unstable();
    assert_eq!(
        ops, want,
        "every record opcode needs a known-answer sample here"
    );
}

#[test]
fn decode_gives_canonical_fields() {
    for (b, mnemonic, fields) in samples() {
        let d = decode(&b, C).unwrap_or_else(|e| panic!("{mnemonic}: {e:?}"));
        assert_eq!(d.opcode, b[0]);
        assert_eq!(d.mnemonic, mnemonic);
        assert_eq!(d.fields, fields, "{mnemonic}");
        let names: Vec<&str> = fields.iter().map(|f| f.0).collect();
        assert_eq!(opcode_field_names(b[0]).unwrap(), names);
    }
}

#[test]
fn encode_decode_round_trip() {
    for (b, mnemonic, fields) in samples() {
        let as_ref: Vec<(&str, Val)> = fields.iter().map(|(n, v)| (*n, v.clone())).collect();
        assert_eq!(encode(b[0], &as_ref, C), Ok(b), "{mnemonic}");
        let d = decode(&b, C).unwrap();
        let back: Vec<(&str, Val)> = d.fields.iter().map(|(n, v)| (*n, v.clone())).collect();
        assert_eq!(encode(d.opcode, &back, C), Ok(b), "{mnemonic}");
        // field order in the input does not matter
        let mut rev = back.clone();
        rev.reverse();
        assert_eq!(encode(d.opcode, &rev, C), Ok(b), "{mnemonic} reversed");
    }
}

#[test]
fn every_cce_kind_dtype_combination_round_trips() {
    for cce in [0x00u8, 0x04] {
        for dtype in 0x01u8..=0x10 {
            for kind in 0x01u8..=0x09 {
                for op in [0xD9u8, 0xDA] {
                    let tag = if op == 0xD9 { 0x10 } else { 0x00 };
                    let b = img(&[(0, &[op, tag]), (0x0C, &[cce, dtype, kind])]);
                    let d = decode(&b, C).unwrap();
                    let f: Vec<(&str, Val)> =
                        d.fields.iter().map(|(n, v)| (*n, v.clone())).collect();
                    assert_eq!(encode(op, &f, C), Ok(b));
                }
            }
        }
    }
}

fn fail(b: &[u8; 64]) -> (&'static str, usize) {
    let e = decode(b, C).unwrap_err();
    (e.field(), e.offset())
}

fn sample(op: u8) -> [u8; 64] {
    samples()
        .into_iter()
        .find(|s| s.0[0] == op && s.0[0x10] != 7)
        .unwrap()
        .0
}

fn poke(op: u8, pokes: &[(usize, u8)]) -> [u8; 64] {
    let mut b = sample(op);
    for &(o, v) in pokes {
        b[o] = v;
    }
    b
}

#[test]
fn decode_opcode_failures() {
    for op in [0x00u8, 0x01, 0x0A, 0x80, 0x87, 0xA0, 0xDD, 0xF0, 0xFF] {
        let mut b = sample(0xD9);
        b[0] = op;
        assert_eq!(fail(&b), ("opcode", 0), "{op:#x}");
    }
}

#[test]
fn decode_skeleton_failures() {
    for op in [0xD9u8, 0xCB, 0xBF, 0xBE, 0xD8, 0xDC, 0xDB, 0xDE] {
        assert_eq!(fail(&poke(op, &[(1, 0x00)])), ("inst_word_len", 1));
        assert_eq!(fail(&poke(op, &[(1, 0x11)])), ("inst_word_len", 1));
        // debug_cmd / debug_hint take any value (FACTS §2 [H])
        assert!(decode(&poke(op, &[(2, 1), (3, 0x80)]), C).is_ok());
        assert_eq!(fail(&poke(op, &[(4, 0x08)])), ("wait_mode", 4));
        assert_eq!(fail(&poke(op, &[(4, 0xFF)])), ("wait_mode", 4));
        assert_eq!(fail(&poke(op, &[(6, 0x06)])), ("update_mode", 6));
        assert_eq!(fail(&poke(op, &[(6, 0xFF)])), ("update_mode", 6));
        // ascending walk: the lowest offending byte wins
        assert_eq!(
            fail(&poke(op, &[(1, 0), (2, 1), (4, 0x80)])),
            ("inst_word_len", 1)
        );
        assert_eq!(fail(&poke(op, &[(4, 0x80), (6, 0x80)])), ("wait_mode", 4));
        // ids and values are free
        assert!(decode(
            &poke(op, &[(5, 0xFF), (7, 0xFF), (8, 0xFF), (0x0B, 0xFF)]),
            C
        )
        .is_ok());
    }
}

#[test]
fn decode_d9_da_failures() {
    for (op, base) in [(0xD9u8, 0usize), (0xDA, 0)] {
        let _ = base;
        assert_eq!(fail(&poke(op, &[(0x0C, 0x05)])), ("cce_op", 0x0C)); // subtract: not shipped (D-13)
        assert_eq!(fail(&poke(op, &[(0x0C, 0x17)])), ("cce_op", 0x0C)); // no AluOp
        assert_eq!(fail(&poke(op, &[(0x0C, 0x01)])), ("cce_op", 0x0C));
        assert_eq!(fail(&poke(op, &[(0x0D, 0x00)])), ("dtype", 0x0D));
        assert_eq!(fail(&poke(op, &[(0x0D, 0x11)])), ("dtype", 0x0D));
        assert_eq!(fail(&poke(op, &[(0x0E, 0x00)])), ("kind", 0x0E));
        assert_eq!(fail(&poke(op, &[(0x0E, 0x0A)])), ("kind", 0x0E));
        assert_eq!(fail(&poke(op, &[(0x0F, 0x01)])), ("reserved", 0x0F));
        assert_eq!(
            fail(&poke(op, &[(0x0C, 5), (0x0D, 0), (0x0E, 0)])),
            ("cce_op", 0x0C)
        );
        assert_eq!(fail(&poke(op, &[(0x0D, 0), (0x0E, 0)])), ("dtype", 0x0D));
    }
    // 0xDA: raw stamp, byte[1] must be 0x00, [0x06..0x0B] reserved, [4..5] channel id
    assert_eq!(fail(&poke(0xDA, &[(1, 0x10)])), ("inst_word_len", 1));
    assert_eq!(fail(&poke(0xDA, &[(2, 1)])), ("reserved", 2));
    for off in 0x06..=0x0B {
        assert_eq!(fail(&poke(0xDA, &[(off, 0x05)])), ("reserved", off));
    }
    assert!(decode(&poke(0xDA, &[(4, 0xFF), (5, 0xFF)]), C).is_ok());
}

#[test]
fn decode_reserved_ranges_per_opcode() {
    let ranges: [(u8, Vec<usize>); 8] = [
        (0xCB, (0x0C..=0x0F).chain(0x18..=0x2F).collect()),
        (0xBF, (0x0E..=0x0F).chain(0x22..=0x2F).collect()),
        (0xBE, std::iter::once(0x0D).chain(0x30..=0x3F).collect()),
        (0xD8, (0x14..=0x1F).collect()),
        (0xDC, (0x0D..=0x16).chain(0x18..=0x3F).collect()),
        (0xDB, std::iter::once(0x13).chain(0x16..=0x3F).collect()),
        (0xDE, (0x11..=0x3F).collect()),
        (0xD9, vec![0x0F]),
    ];
    for (op, offs) in ranges {
        for off in 0x0Cusize..0x40 {
            let b = poke(op, &[(off, 0xA5)]);
            if offs.contains(&off) {
                assert_eq!(fail(&b), ("reserved", off), "{op:#x} byte {off:#x}");
            }
        }
    }
}

#[test]
fn decode_named_constraints() {
    assert_eq!(fail(&poke(0xBF, &[(0x0C, 0x00)])), ("src_dtype", 0x0C));
    assert_eq!(fail(&poke(0xBF, &[(0x0D, 0x20)])), ("dst_dtype", 0x0D));
    assert_eq!(
        fail(&poke(0xBF, &[(0x20, 0x00)])),
        ("cross_core_enable", 0x20)
    );
    assert_eq!(
        fail(&poke(0xBF, &[(0x20, 0x02)])),
        ("cross_core_enable", 0x20)
    );
    assert_eq!(fail(&poke(0xBE, &[(0x0C, 0x11)])), ("dtype", 0x0C));
    assert_eq!(fail(&poke(0xDC, &[(0x0C, 0x02)])), ("valid", 0x0C));
    assert!(decode(&poke(0xDC, &[(0x0C, 0x00)]), C).is_ok());
    // opaque fields accept anything
    assert!(decode(&poke(0xBE, &[(0x0E, 0xFF), (0x0F, 0xFF)]), C).is_ok());
    assert!(decode(&poke(0xD8, &[(0x3F, 0xFF), (0x0C, 0xFF)]), C).is_ok());
}

#[test]
fn decode_custom_op_order() {
    // validator first, field = predicate name
    assert_eq!(fail(&poke(0x85, &[(1, 0x00)])), ("inst_word_len", 1));
    assert_eq!(
        fail(&poke(0x85, &[(4, 0x80)])),
        ("has_valid_neuron_events", 4)
    );
    assert_eq!(
        fail(&poke(0x85, &[(0x2A, 1)])),
        ("custom_op_header_reserved_zero", 0x2A)
    );
    assert_eq!(
        fail(&poke(0x85, &[(0x1C, 1)])),
        ("custom_op_header_scratch_space_val", 0x10)
    );
    assert_eq!(
        fail(&poke(0x85, &[(0x10, 1), (0x18, 1)])),
        ("custom_op_header_scratch_space_val", 0x1C)
    );
    // debug bytes take any value
    assert!(decode(&poke(0x85, &[(2, 1), (3, 9)]), C).is_ok());
    // payload
    assert_eq!(
        fail(&poke(0x86, &[(0x0E, 1)])),
        ("custom_op_payload_reserved_zero", 0x0E)
    );
    assert_eq!(
        fail(&poke(0x86, &[(6, 0x16)])),
        ("has_valid_neuron_events", 6)
    );
    // arg_type: TENSOR 1 and ARRAY_OF_TENSOR 2 decode (FACTS §8 [H])
    assert_eq!(fail(&poke(0x86, &[(0x0F, 0x00)])), ("arg_type", 0x0F));
    assert!(decode(&poke(0x86, &[(0x0F, 0x02)]), C).is_ok());
    assert_eq!(fail(&poke(0x86, &[(0x0F, 0x03)])), ("arg_type", 0x0F));
    assert_eq!(
        fail(&poke(0x86, &[(0x0C, 1), (3, 1), (0x0F, 0)])),
        ("custom_op_payload_reserved_zero", 0x0C)
    );
}

fn enc_err(op: u8, f: &[(&str, Val)]) -> &'static str {
    encode(op, f, C).unwrap_err().field()
}

fn fields_of(op: u8) -> Vec<(&'static str, Val)> {
    samples()
        .into_iter()
        .find(|s| s.0[0] == op)
        .unwrap_or_else(|| panic!("{op:#04x} has no known-answer sample"))
        .2
}

fn set(mut f: Vec<(&'static str, Val)>, name: &str, v: Val) -> Vec<(&'static str, Val)> {
    for (n, val) in f.iter_mut() {
        if *n == name {
            *val = v.clone();
        }
    }
    f
}

#[test]
fn encode_missing_and_unknown() {
    for op in RECORD_OPCODES {
        let f = fields_of(op);
        for i in 0..f.len() {
            let mut g = f.clone();
            let (name, _) = g.remove(i);
            if name == "debug_cmd" || name == "debug_hint" {
                // optional: encoders write 0 unless given (FACTS §2; SPEC §5.2)
                assert!(encode(op, &g, C).is_ok(), "{op:#x} without {name}");
                continue;
            }
            let e = encode(op, &g, C).unwrap_err();
            assert_eq!(e.field(), name);
            assert_eq!(e, EncodeRejection::Missing { field: name });
        }
        let mut g = f.clone();
        g.push(("bogus", Val::Int(0)));
        assert_eq!(enc_err(op, &g), "unknown_field");
        // Two unknown names: the first in the caller's order is the one named.
        g.insert(0, ("first_bogus", Val::Int(0)));
        assert_eq!(
            encode(op, &g, C),
            Err(EncodeRejection::UnknownField {
                name: "first_bogus".to_string()
            })
        );
        let mut g = f.clone();
        g.push(f[0].clone());
        assert_eq!(enc_err(op, &g), f[0].0);
    }
    assert_eq!(enc_err(0x01, &[]), "opcode");
    assert_eq!(enc_err(0xFF, &fields_of(0xD9)), "opcode");
    // 0xDA has no sync band
    let mut g = fields_of(0xDA);
    g.push(("wait_mode", Val::Int(5)));
    assert_eq!(enc_err(0xDA, &g), "unknown_field");
}

#[test]
fn encode_bad_values() {
    let d9 = fields_of(0xD9);
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "wait_mode", Val::Int(0x08))),
        "wait_mode"
    );
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "wait_mode", Val::Int(0x105))),
        "wait_mode"
    );
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "update_mode", Val::Int(6))),
        "update_mode"
    );
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "wait_idx", Val::Int(256))),
        "wait_idx"
    );
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "semaphore_value", Val::Int(1 << 32))),
        "semaphore_value"
    );
    let e = encode(
        0xD9,
        &set(d9.clone(), "cce_op", Val::Name("subtract".into())),
        C,
    )
    .unwrap_err();
    assert_eq!(e.field(), "cce_op");
    assert!(matches!(
        e,
        EncodeRejection::Lut {
            cause: LutRejection::NotShipped { op: 5, .. },
            ..
        }
    ));
    let e = encode(
        0xD9,
        &set(d9.clone(), "cce_op", Val::Name("average".into())),
        C,
    )
    .unwrap_err();
    assert!(matches!(
        e,
        EncodeRejection::Lut {
            cause: LutRejection::NoWireByte { .. },
            ..
        }
    ));
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "cce_op", Val::Name("nope".into()))),
        "cce_op"
    );
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "cce_op", Val::Int(4))),
        "cce_op"
    );
    let e = encode(
        0xD9,
        &set(d9.clone(), "kind", Val::Name("SendRecv".into())),
        C,
    )
    .unwrap_err();
    assert_eq!(e.field(), "kind");
    assert!(matches!(
        e,
        EncodeRejection::Lut {
            cause: LutRejection::NotEncodable { kind: 0, .. },
            ..
        }
    ));
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "dtype", Val::Int(0))),
        "dtype"
    );
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "dtype", Val::Int(0x11))),
        "dtype"
    );
    assert_eq!(
        enc_err(0xD9, &set(d9.clone(), "ap", Val::Bytes(vec![0; 47]))),
        "ap"
    );
    assert_eq!(enc_err(0xD9, &set(d9.clone(), "ap", Val::Int(0))), "ap");
    // first bad field in canonical order wins
    let two = set(
        set(d9.clone(), "kind", Val::Name("SendRecv".into())),
        "update_mode",
        Val::Int(0x0A),
    );
    assert_eq!(enc_err(0xD9, &two), "update_mode");
    let two = set(
        set(d9.clone(), "kind", Val::Name("x".into())),
        "dtype",
        Val::Int(0),
    );
    assert_eq!(enc_err(0xD9, &two), "dtype");
    let bf = fields_of(0xBF);
    assert_eq!(
        enc_err(0xBF, &set(bf.clone(), "src_dtype", Val::Int(0))),
        "src_dtype"
    );
    assert_eq!(
        enc_err(0xBF, &set(bf.clone(), "dst_dtype", Val::Int(0x20))),
        "dst_dtype"
    );
    assert_eq!(
        enc_err(0xBF, &set(bf.clone(), "peer_partition", Val::Int(0x100))),
        "peer_partition"
    );
    assert_eq!(
        enc_err(0xBF, &set(bf, "src_ap", Val::Bytes(vec![0; 48]))),
        "src_ap"
    );
    let dc = fields_of(0xDC);
    assert_eq!(enc_err(0xDC, &set(dc, "valid", Val::Int(2))), "valid");
    let db = fields_of(0xDB);
    assert_eq!(
        enc_err(0xDB, &set(db, "group_id", Val::Int(0x1_0000))),
        "group_id"
    );
    let da = fields_of(0xDA);
    assert_eq!(
        enc_err(0xDA, &set(da, "channel_id", Val::Int(0x1_0000))),
        "channel_id"
    );
    let h = fields_of(0x85);
    assert_eq!(
        enc_err(0x85, &set(h.clone(), "num_arguments", Val::Int(256))),
        "num_arguments"
    );
    assert_eq!(
        enc_err(
            0x85,
            &set(h.clone(), "scratch_space_num_partitions", Val::Int(1))
        ),
        "custom_op_header_scratch_space_val"
    );
    assert_eq!(
        enc_err(0x85, &set(h, "scratch_space_addr", Val::Int(1))),
        "custom_op_header_scratch_space_val"
    );
}

#[test]
fn encode_writes_constants_and_zeroes_the_rest() {
    let b = encode(
        0x86,
        &with_sync(vec![
            ("arg_type", Val::Int(1)),
            ("ap", Val::Bytes(vec![0; 48])),
        ]),
        C,
    )
    .unwrap();
    assert_eq!(b[0x0F], 0x01);
    assert_eq!(&b[0x0C..0x0F], &[0, 0, 0]);
    let mut bf = fields_of(0xBF);
    bf = set(bf, "src_ap", Val::Bytes(vec![0; 16]));
    bf = set(bf, "dst_ap", Val::Bytes(vec![0; 16]));
    let b = encode(0xBF, &bf, C).unwrap();
    assert_eq!(b[0x20], 0x01);
    assert!(b[0x22..0x30].iter().all(|&x| x == 0));
    let b = encode(0xDA, &fields_of(0xDA), C).unwrap();
    assert_eq!((b[0], b[1]), (0xDA, 0x00));
}

#[test]
fn custom_op_group_encoder() {
    let out_ap = [0x11u8; 48];
    let args = [[0x22u8; 48], [0x33u8; 48]];
    let g =
        encode_custom_op_group(0x42, (0x05, 1, 0x01, 2, 0xDEAD_BEEF), &out_ap, &args, C).unwrap();
    assert_eq!(g.len(), 4);
    let h = &g[0];
    assert_eq!(
        (h[0], h[1], h[4], h[5], h[6], h[7]),
        (0x85, 0x10, 0x05, 1, 0x01, 2)
    );
    assert_eq!(&h[8..12], &[0xEF, 0xBE, 0xAD, 0xDE]);
    assert_eq!((h[0x0C], h[0x0D], h[0x0E], h[0x0F]), (4, 0, 0x42, 2));
    assert!(h[0x10..].iter().all(|&x| x == 0));
    for (i, p) in g[1..].iter().enumerate() {
        // D-19: the sync band rides on the header only.
        assert_eq!(&p[0..12], &[0x86, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&p[0x0C..0x10], &[0, 0, 0, 1]);
        let want = if i == 0 { out_ap } else { args[i - 1] };
        assert_eq!(&p[0x10..], &want[..]);
        assert_eq!(payload_verdict(p, C), Ok(()));
    }
    assert_eq!(header_verdict(h, C), Ok(()));
    let stream: Vec<u8> = g.iter().flatten().copied().collect();
    assert_eq!(
        parse_stream(&stream, C),
        Ok(vec![Item::Group {
            header_index: 0,
            n_args: 2
        }])
    );
    // zero args: header + output only
    let g0 = encode_custom_op_group(0, (0, 0, 0, 0, 0), &out_ap, &[], C).unwrap();
    assert_eq!(g0.len(), 2);
    assert_eq!((g0[0][0x0C], g0[0][0x0F]), (2, 0));
    // 255 args is fine, 256 is not
    let many = vec![[0u8; 48]; 255];
    let g255 = encode_custom_op_group(1, (0, 0, 0, 0, 0), &out_ap, &many, C).unwrap();
    assert_eq!(g255.len(), 257);
    assert_eq!((g255[0][0x0C], g255[0][0x0D], g255[0][0x0F]), (1, 1, 255));
    let too_many = vec![[0u8; 48]; 256];
    let e = encode_custom_op_group(1, (0, 0, 0, 0, 0), &out_ap, &too_many, C).unwrap_err();
    assert_eq!(e, EncodeRejection::TooManyArgs { n_args: 256 });
    assert_eq!(e.field(), "num_arguments");
    // bad sync band
    let e = encode_custom_op_group(1, (0x08, 0, 0, 0, 0), &out_ap, &[], C).unwrap_err();
    assert_eq!(e.field(), "wait_mode");
    let e = encode_custom_op_group(1, (0x05, 0, 0x06, 0, 0), &out_ap, &[], C).unwrap_err();
    assert_eq!(e.field(), "update_mode");
}

#[test]
fn chips_gate_decode_and_encode() {
    // seed 003 "At a glance": 0xBE, 0xBF, 0xD8 come with CoreV3 (Cayman).
    for op in [0xBEu8, 0xBF, 0xD8] {
        let b = sample(op);
        assert_eq!(decode(&b, Generation::Sunda).unwrap_err().field(), "opcode");
        assert!(decode(&b, Generation::Cayman).is_ok());
        let f = fields_of(op);
        assert_eq!(
            encode(op, &f, Generation::Sunda),
            Err(EncodeRejection::NotOnChip {
                opcode: op,
                chip: Generation::Sunda
            })
        );
        assert_eq!(encode(op, &f, Generation::Maverick), Ok(b));
    }
    // dtype 0x10 only in the v4 column (FACTS §6)
    let b = poke(0xD9, &[(0x0D, 0x10)]);
    assert_eq!(decode(&b, Generation::Cayman).unwrap_err().field(), "dtype");
    assert!(decode(&b, Generation::Mariana).is_ok());
}
