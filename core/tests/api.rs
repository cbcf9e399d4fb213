//! Decode/encode error reporting, the field list, and the stream parser.

use tpb_core::insn::*;
use tpb_core::lut::{AluOp, CollectiveKind};
use tpb_core::stream::{parse_custom_op_stream, StreamError, StreamItem};
use tpb_core::validate::Predicate;
use tpb_core::{Bundle, FieldValue};

/// The generation these tests run under: v3 encodes all eleven opcodes (seed 003).
const G: tpb_core::Generation = tpb_core::Generation::V3;

fn header(num_arguments: u8) -> Bundle {
    CustomOpHeader {
        num_payloads: u16::from(num_arguments) + 2,
        num_arguments,
        function_id: 3,
        ..Default::default()
    }
    .encode(G)
    .unwrap()
}

fn payload(tag: u8) -> Bundle {
    CustomOpPayload {
        sync: Sync::default(),
        arg_type: 1,
        ap: [tag; 48],
    }
    .encode(G)
    .unwrap()
}

fn other() -> Bundle {
    TensorCompletion::default().encode(G).unwrap()
}

fn cat(bs: &[Bundle]) -> Vec<u8> {
    bs.iter().flat_map(|b| b.0).collect()
}

#[test]
fn encoder_images_by_hand() {
    // S003 §3.1: D9 [0]=D9 [1]=10 [0x0C]=04 (add) [0x0D]=0A [0x0E]=09 (AllToAllV) [0x10..]=ap
    let d9 = CollectiveCompute {
        sync: Sync::default(),
        cce_op: AluOp::Add,
        dtype: 0x0A,
        kind: CollectiveKind::AllToAllV,
        ap: [0xAB; 48],
    }
    .encode(G)
    .unwrap();
    assert_eq!(d9.0[0x10..], [0xAB; 48]);
    // 0xDA stamped raw: byte[1] = 0, channel at 4..5
    let da = CollectiveComputeSecondary {
        channel_id: 0x1234,
        cce_op: AluOp::Bypass,
        dtype: 6,
        kind: CollectiveKind::Permute,
        ap: [0; 48],
    }
    .encode(G)
    .unwrap();
    let d9_head = [
        0xD9, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x0A, 0x09, 0,
    ];
    assert_eq!(d9.0[..0x10], d9_head);
    let da_head = [
        0xDA, 0, 0, 0, 0x34, 0x12, 0, 0, 0, 0, 0, 0, 0x00, 0x06, 0x05, 0,
    ];
    assert_eq!(da.0[..0x10], da_head);
    // 0x86 marker
    assert_eq!(payload(0).0[0x0F], 1);
    // 0xBF cross-core enable
    let sb = Gpsimdsb2sb {
        sync: Sync::default(),
        src_dtype: 1,
        dst_dtype: 2,
        src_ap: [0; 16],
        peer_partition: 9,
        dst_ap: [0; 16],
    }
    .encode(G)
    .unwrap();
    assert_eq!((sb.0[0x20], sb.0[0x21]), (1, 9));
}

#[test]
fn encode_errors_in_list_order() {
    let bad = CollectiveCompute {
        sync: Sync {
            wait_mode: WaitMode(0x80), // not a WAIT_MODE member (F§2)
            ..Default::default()
        },
        cce_op: AluOp::Mult,
        dtype: 0,
        kind: CollectiveKind::SendRecv,
        ap: [0; 48],
    };
    assert_eq!(bad.encode(G).unwrap_err().field(), "wait_mode");
    let bad = CollectiveCompute {
        sync: Sync::default(),
        ..bad
    };
    let e = bad.encode(G).unwrap_err();
    assert_eq!((e.field(), e.reason()), ("cce_op", "not_shipped"));
    let bad = CollectiveCompute {
        cce_op: AluOp::Average,
        ..bad
    };
    assert_eq!(bad.encode(G).unwrap_err().reason(), "no_wire_byte");
    let bad = CollectiveCompute {
        cce_op: AluOp::Add,
        ..bad
    };
    assert_eq!(bad.encode(G).unwrap_err().field(), "dtype");
    let bad = CollectiveCompute { dtype: 1, ..bad };
    let e = bad.encode(G).unwrap_err();
    assert_eq!((e.field(), e.reason()), ("kind", "not_encodable"));
    let h = CustomOpHeader {
        has_scratch_space: 1,
        ..Default::default()
    };
    assert_eq!(
        h.encode(G).unwrap_err().field(),
        "custom_op_header_scratch_space_val"
    );
    let s = TensorCompletion {
        sync: Sync {
            update_mode: UpdateMode(0x06), // not an UPDATE_MODE member (F§2)
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(s.encode(G).unwrap_err().field(), "update_mode");
}

#[test]
fn field_lists() {
    let x = Instruction::GetCurProcessingRankId(GetCurProcessingRankId {
        group_id: 1,
        channel_id: 2,
        iteration_id: 3,
        reg_id: 4,
        stream_id: 5,
        ..Default::default()
    });
    let names: Vec<&str> = x.fields().iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names.join(" "),
        concat!(
            "debug_cmd debug_hint wait_mode wait_idx update_mode update_idx semaphore_value ",
            "group_id channel_id iteration_id reg_id stream_id"
        )
    );
    assert_eq!(x.mnemonic(), "GetCurProcessingRankID");
    let y = Instruction::CollectiveComputeSecondary(CollectiveComputeSecondary {
        channel_id: 7,
        cce_op: AluOp::Add,
        dtype: 3,
        kind: CollectiveKind::ReduceScatter,
        ap: [1; 48],
    });
    let f = y.fields();
    assert_eq!(f[0], ("channel_id", FieldValue::Int(7)));
    assert_eq!(f[1], ("cce_op", FieldValue::Name("add".into())));
    assert_eq!(f[3], ("kind", FieldValue::Name("ReduceScatter".into())));
    assert_eq!(f[4].1.to_string(), "01".repeat(48));
}

#[test]
fn from_fields_errors() {
    let good = Instruction::TensorCompletion(TensorCompletion {
        handle: 5,
        ap_byte: 6,
        ..Default::default()
    })
    .fields();
    // missing
    let missing: Vec<_> = good
        .iter()
        .filter(|(n, _)| *n != "handle")
        .cloned()
        .collect();
    assert_eq!(
        Instruction::from_fields(0xDE, &missing, G),
        Err(EncodeError::Missing { field: "handle" })
    );
    // unknown
    let mut extra = good.clone();
    extra.push(("bogus", FieldValue::Int(0)));
    assert_eq!(
        Instruction::from_fields(0xDE, &extra, G),
        Err(EncodeError::UnknownField { position: 9 })
    );
    // does not fit
    let mut wide = good.clone();
    wide[8].1 = FieldValue::Int(256);
    assert_eq!(
        Instruction::from_fields(0xDE, &wide, G).unwrap_err(),
        EncodeError::DoesNotFit {
            field: "ap_byte",
            value: 256
        }
    );
    // list order: bad wait mode (first) wins over too-wide ap_byte
    wide[2].1 = FieldValue::Int(0x80);
    assert_eq!(
        Instruction::from_fields(0xDE, &wide, G)
            .unwrap_err()
            .field(),
        "wait_mode"
    );
    // opcode
    assert_eq!(
        Instruction::from_fields(0x01, &good, G)
            .unwrap_err()
            .field(),
        "opcode"
    );
    // names
    let d9 = vec![
        ("wait_mode", FieldValue::Int(0)),
        ("wait_idx", FieldValue::Int(0)),
        ("update_mode", FieldValue::Int(0)),
        ("update_idx", FieldValue::Int(0)),
        ("semaphore_value", FieldValue::Int(0)),
        ("cce_op", FieldValue::Name("nope".into())),
        ("dtype", FieldValue::Int(1)),
        ("kind", FieldValue::Name("AllReduce".into())),
        ("ap", FieldValue::Bytes(vec![0; 48])),
    ];
    assert_eq!(
        Instruction::from_fields(0xD9, &d9, G),
        Err(EncodeError::UnknownName { field: "cce_op" })
    );
    let mut d9b = d9.clone();
    d9b[5].1 = FieldValue::Name("add".into());
    d9b[8].1 = FieldValue::Bytes(vec![0; 47]);
    assert_eq!(
        Instruction::from_fields(0xD9, &d9b, G),
        Err(EncodeError::BadLength {
            field: "ap",
            len: 47
        })
    );
    d9b[8].1 = FieldValue::Bytes(vec![0; 48]);
    d9b[7].1 = FieldValue::Name("SendRecvCCE".into());
    assert_eq!(
        Instruction::from_fields(0xD9, &d9b, G)
            .unwrap_err()
            .reason(),
        "not_encodable"
    );
    d9b[7].1 = FieldValue::Name("PermuteImplicit".into());
    let i = Instruction::from_fields(0xD9, &d9b, G).unwrap();
    assert_eq!(i.encode(G).unwrap().0[0x0E], 0x07);
    // valid flag
    let mut dc = Instruction::GetGlobalRankId(GetGlobalRankId::default()).fields();
    dc[7].1 = FieldValue::Int(2);
    assert_eq!(
        Instruction::from_fields(0xDC, &dc, G).unwrap_err().field(),
        "valid"
    );
}

#[test]
fn decode_error_fields() {
    let mut b = other();
    b.0[0x20] = 9;
    let e = decode(&b, G).unwrap_err();
    assert_eq!((e.field(), e.offset()), ("reserved", 0x20));
    let mut h = header(0);
    h.0[0] = 0x85;
    h.0[0x1D] = 1;
    let e = decode(&h, G).unwrap_err();
    assert_eq!(
        (e.field(), e.offset()),
        ("custom_op_header_reserved_zero", 0x1D)
    );
    // per-family decoders refuse other opcodes
    assert_eq!(
        CoreBarrier::decode(&other(), G).unwrap_err().field(),
        "opcode"
    );
}

#[test]
fn stream_happy_path() {
    let s = cat(&[
        other(),
        header(2),
        payload(1),
        payload(2),
        payload(3),
        header(0),
        payload(4),
        other(),
    ]);
    let items = parse_custom_op_stream(&s, G).unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(
        items[0],
        StreamItem::Other {
            index: 0,
            opcode: 0xDE
        }
    );
    match &items[1] {
        StreamItem::Group {
            header_index,
            header,
            output,
            args,
        } => {
            assert_eq!(*header_index, 1);
            assert_eq!(header.num_arguments, 2);
            assert_eq!(output.ap, [1; 48]);
            assert_eq!(args.iter().map(|a| a.ap[0]).collect::<Vec<_>>(), [2, 3]);
        }
        o => panic!("{o:?}"),
    }
    match &items[2] {
        StreamItem::Group {
            header_index: 5,
            args,
            ..
        } => assert!(args.is_empty()),
        o => panic!("{o:?}"),
    }
    assert_eq!(
        items[3],
        StreamItem::Other {
            index: 7,
            opcode: 0xDE
        }
    );
    assert_eq!(parse_custom_op_stream(&[], G), Ok(vec![]));
}

#[test]
fn stream_errors() {
    let e = parse_custom_op_stream(&[0u8; 65], G).unwrap_err();
    assert_eq!((e.name(), e.index()), ("trailing_bytes", None));
    assert_eq!(e, StreamError::TrailingBytes { len: 65 });
    // trailing_bytes before anything else, even a stray payload
    let mut s = cat(&[payload(0)]);
    s.push(0);
    assert_eq!(
        parse_custom_op_stream(&s, G).unwrap_err().name(),
        "trailing_bytes"
    );
    // invalid record
    let mut bad = header(1);
    bad.0[0x30] = 1;
    let e = parse_custom_op_stream(&cat(&[other(), bad]), G).unwrap_err();
    assert_eq!(
        e,
        StreamError::InvalidRecord {
            index: 1,
            predicate: Predicate::CustomOpHeaderReservedZero
        }
    );
    let mut badp = payload(0);
    badp.0[0x0C] = 1;
    let e = parse_custom_op_stream(&cat(&[header(0), badp]), G).unwrap_err();
    assert_eq!((e.name(), e.index()), ("invalid_record", Some(1)));
    // payload_count_mismatch
    let mut h = header(1);
    h.0[0x0C] = 4;
    let e = parse_custom_op_stream(&cat(&[h, payload(0), payload(0)]), G).unwrap_err();
    assert_eq!(
        e,
        StreamError::PayloadCountMismatch {
            index: 0,
            num_payloads: 4,
            num_arguments: 1
        }
    );
    // stray
    let e = parse_custom_op_stream(&cat(&[other(), payload(0)]), G).unwrap_err();
    assert_eq!(e, StreamError::StrayPayload { index: 1 });
    let e = parse_custom_op_stream(&cat(&[header(0), payload(0), payload(0)]), G).unwrap_err();
    assert_eq!(e, StreamError::StrayPayload { index: 2 });
    // short group: end of stream, another bundle, another header
    let e = parse_custom_op_stream(&cat(&[header(2), payload(0)]), G).unwrap_err();
    assert_eq!(
        e,
        StreamError::ShortGroup {
            header_index: 0,
            expected: 3,
            found: 1
        }
    );
    let e =
        parse_custom_op_stream(&cat(&[other(), header(1), payload(0), other()]), G).unwrap_err();
    assert_eq!(
        e,
        StreamError::ShortGroup {
            header_index: 1,
            expected: 2,
            found: 1
        }
    );
    let e = parse_custom_op_stream(&cat(&[header(0), header(0), payload(0)]), G).unwrap_err();
    assert_eq!(
        e,
        StreamError::ShortGroup {
            header_index: 0,
            expected: 1,
            found: 0
        }
    );
    // first in stream order wins: a stray at 1 beats a bad record at 2
    let e = parse_custom_op_stream(&cat(&[other(), payload(0), bad]), G).unwrap_err();
    assert_eq!(e.name(), "stray_payload");
}

#[test]
fn generations_gate_encode_and_decode() {
    use tpb_core::Generation::{V2, V3, V4};
    // seed 003 §"At a glance": GetSequenceBounds is CoreV3+.
    let x = GetSequenceBounds {
        sync: Sync::default(),
        dtype: 0x0A,
        flag_0e: 0,
        flag_0f: 0,
        in_ap: [0; 16],
        out_ap: [0; 16],
    };
    let e = x.encode(V2).unwrap_err();
    assert_eq!(
        e,
        EncodeError::NotEmitted {
            opcode: 0xBE,
            generation: V2
        }
    );
    assert!(e.to_string().contains("v2"), "{e}");
    let b = x.encode(V3).unwrap();
    assert_eq!(decode(&b, V3), Ok(Instruction::GetSequenceBounds(x)));
    let e = decode(&b, V2).unwrap_err();
    assert_eq!((e.field(), e.offset()), ("opcode", 0));
    // 0xD8 is in v2's header enum but only CoreV3+ emits it.
    let d8 = CoreBarrier {
        sync: Sync::default(),
        barrier_id: 1,
        barrier_index: 2,
        sema_ap: [0; 32],
    }
    .encode(V3)
    .unwrap();
    assert!(matches!(
        decode(&d8, V2),
        Err(DecodeError::NotEmitted { opcode: 0xD8, .. })
    ));
    // dtype 0x10 (float4_e2m1fn_x4) is a v4-column tag only (F§6).
    let mut d9 = CollectiveCompute {
        sync: Sync::default(),
        cce_op: AluOp::Add,
        dtype: 0x10,
        kind: CollectiveKind::AllReduce,
        ap: [0; 48],
    };
    assert_eq!(d9.encode(V3).unwrap_err().field(), "dtype");
    let b = d9.encode(V4).unwrap();
    assert_eq!(decode(&b, V3).unwrap_err().field(), "dtype");
    assert!(decode(&b, V4).is_ok());
    d9.dtype = 0x0F;
    assert!(d9.encode(V2).is_ok());
}

#[test]
fn debug_bytes_and_arg_type() {
    // F§2 [H]: bytes 2..3 are debug_cmd/debug_hint; any value decodes, encoders write 0
    // unless given.
    let mut b = other();
    b.0[2] = 7;
    b.0[3] = 0xEE;
    let i = decode(&b, G).unwrap();
    assert_eq!(i.fields()[0], ("debug_cmd", FieldValue::Int(7)));
    assert_eq!(i.fields()[1], ("debug_hint", FieldValue::Int(0xEE)));
    assert_eq!(i.encode(G), Ok(b));
    let without: Vec<_> = i.fields().into_iter().skip(2).collect();
    let j = Instruction::from_fields(0xDE, &without, G).unwrap();
    assert_eq!(&j.encode(G).unwrap().0[2..4], &[0, 0]);
    // F§8 [H]: arg_type TENSOR 1 and ARRAY_OF_TENSOR 2 decode; 0 and 3 do not.
    for (v, ok) in [(0u8, false), (1, true), (2, true), (3, false)] {
        let mut p = payload(0);
        p.0[0x0F] = v;
        assert_eq!(decode(&p, G).is_ok(), ok, "arg_type {v}");
        if !ok {
            assert_eq!(decode(&p, G).unwrap_err().field(), "arg_type");
        }
    }
}

#[test]
fn bundle_length_error_names_the_rule_and_the_offered_length() {
    // SPEC §1: a bundle is exactly 64 bytes. The message must say what was expected (a bundle,
    // 64 bytes) and carry the length that was offered, so the user can see what was wrong.
    for len in [0usize, 1, 63, 65, 128] {
        let bytes = vec![0u8; len];
        let e = Bundle::from_slice(&bytes).unwrap_err();
        assert_eq!(e.len, len);
        assert_eq!(e.to_string(), format!("bundle must be 64 bytes, got {len}"));
    }
    assert!(Bundle::from_slice(&[0u8; 64]).is_ok());
}

#[test]
fn lut_errors_display_their_spec_names() {
    use tpb_core::lut::{alu_op_to_dge, alu_op_to_wire, cce_op_to_wire, collective_kind_to_wire};
    // SPEC §6.1: kinds 0 and 1 have no wire byte, kinds past 10 are out of range.
    assert_eq!(
        collective_kind_to_wire(0).unwrap_err().to_string(),
        "not_encodable"
    );
    assert_eq!(
        collective_kind_to_wire(11).unwrap_err().to_string(),
        "out_of_range"
    );
    // SPEC §6.2: average (24) has no wire byte; ordinals past 29 are out of range;
    // subtract (1) has a wire byte but no shipped CCE byte.
    assert_eq!(alu_op_to_wire(24).unwrap_err().to_string(), "no_wire_byte");
    assert_eq!(alu_op_to_wire(30).unwrap_err().to_string(), "out_of_range");
    assert_eq!(cce_op_to_wire(1).unwrap_err().to_string(), "not_shipped");
    // SPEC §6.3: only bypass and add map to a DGE op.
    assert_eq!(alu_op_to_dge(1).unwrap_err().to_string(), "not_dge_op");
}

#[test]
fn stream_errors_display_name_and_bundle() {
    let e = parse_custom_op_stream(&[0u8; 65], G).unwrap_err();
    assert_eq!(e.to_string(), "trailing_bytes");
    let e = parse_custom_op_stream(&cat(&[payload(0)]), G).unwrap_err();
    assert_eq!(e.to_string(), "stray_payload at bundle 0");
}

#[test]
fn bundle_stream_pairs_legs_by_trio() {
    use tpb_core::stream::{parse_bundle_stream, BundleItem};
    // SPEC DL-12 / S003 §3.2: a 0xD9 whose kind byte (+0x0E) is a two-leg kind
    // (wire 0x05..=0x08) takes the next bundle, a 0xDA with the same trio
    // (+0x0C cce_op, +0x0D dtype, +0x0E kind), as its leg.
    let mut d9 = [0u8; 64];
    d9[0] = 0xD9;
    d9[0x0C..0x0F].copy_from_slice(&[0x00, 0x0A, 0x05]);
    let mut da = [0u8; 64];
    da[0] = 0xDA;
    da[0x0C..0x0F].copy_from_slice(&[0x00, 0x0A, 0x05]);
    let ok = parse_bundle_stream(&[d9, da].concat(), G).unwrap();
    assert_eq!(ok, vec![BundleItem::CollectivePair { index: 0 }]);
    for off in 0x0C..0x0F {
        let mut bad = da;
        bad[off] ^= 0x01;
        let e = parse_bundle_stream(&[d9, bad].concat(), G).unwrap_err();
        assert_eq!(
            (e.name(), e.index()),
            ("leg_mismatch", Some(1)),
            "trio byte 0x{off:02X}"
        );
    }
    let e = parse_bundle_stream(&d9, G).unwrap_err();
    assert_eq!((e.name(), e.index()), ("missing_leg", Some(0)));
    let e = parse_bundle_stream(&[da, d9].concat(), G).unwrap_err();
    assert_eq!((e.name(), e.index()), ("stray_leg", Some(0)));
}

#[test]
fn validation_errors_display_the_dbg_message() {
    use tpb_core::validate::{validate_header, validate_payload};
    // SPEC §3/§4: predicate names; the dbg form's message is
    // `inst failed assertion check: '<predicate>'` (S000).
    let mut h = *header(1).as_bytes();
    h[0x3F] = 0x01; // last byte of the 32-byte reserved tail (S000 header (4))
    let e = validate_header(&Bundle::from_slice(&h).unwrap(), G).unwrap_err();
    assert_eq!(e.predicate().to_string(), "custom_op_header_reserved_zero");
    assert_eq!(
        e.to_string(),
        "inst failed assertion check: 'custom_op_header_reserved_zero'"
    );
    let e = validate_payload(&header(1), G).unwrap_err();
    assert_eq!(
        e.to_string(),
        "inst failed assertion check: 'is_custom_op_payload_opcode'"
    );
    for p in Predicate::ALL {
        assert_eq!(p.to_string(), p.name());
        assert!(!p.name().is_empty());
    }
}

#[test]
fn header_encoder_applies_the_scratch_rule_to_each_field() {
    // S000 header (5) / SPEC §3: a header with any scratch field nonzero must have
    // has_scratch_space (0x10), scratch_space_size (0x18) and num_partitions (0x1C)
    // all nonzero; the address (0x14) is not part of "full". The encoder refuses
    // what the validator would refuse.
    let base = CustomOpHeader {
        num_payloads: 2,
        ..Default::default()
    };
    let with = |f: &dyn Fn(&mut CustomOpHeader)| {
        let mut h = base;
        f(&mut h);
        h.encode(G)
    };
    let partial: [&dyn Fn(&mut CustomOpHeader); 6] = [
        &|h| h.has_scratch_space = 1,
        &|h| h.scratch_space_addr = 0x1000,
        &|h| h.scratch_space_size = 64,
        &|h| h.scratch_space_num_partitions = 1,
        &|h| {
            h.has_scratch_space = 1;
            h.scratch_space_size = 64;
        },
        &|h| {
            h.scratch_space_size = 64;
            h.scratch_space_num_partitions = 1;
        },
    ];
    for (i, f) in partial.iter().enumerate() {
        assert!(
            matches!(with(f), Err(EncodeError::ScratchSpaceVal { .. })),
            "partial scratch #{i} must be refused"
        );
    }
    assert!(with(&|h| {
        h.has_scratch_space = 1;
        h.scratch_space_size = 64;
        h.scratch_space_num_partitions = 1;
    })
    .is_ok());
    assert!(with(&|_| {}).is_ok());
}

#[test]
fn get_sequence_bounds_puts_each_field_at_its_own_offset() {
    use tpb_core::Generation::V3;
    // isa/records.tsv rows for 0xBE (S003 §6; D-6): dtype at 0x0C, reserved
    // 0x0D, flag_0e at 0x0E, flag_0f at 0x0F, in_ap 0x10..0x20, out_ap
    // 0x20..0x30. Every value distinct, so a swapped pair of offsets shows.
    let in_ap: [u8; 16] = core::array::from_fn(|i| 0x40 + i as u8);
    let out_ap: [u8; 16] = core::array::from_fn(|i| 0x60 + i as u8);
    let x = GetSequenceBounds {
        sync: Sync::default(),
        dtype: 0x0A,
        flag_0e: 0x11,
        flag_0f: 0x22,
        in_ap,
        out_ap,
    };
    let b = x.encode(V3).unwrap();
    let bytes = b.as_bytes();
    assert_eq!(bytes[0], 0xBE);
    assert_eq!(bytes[0x0D], 0, "reserved");
    assert_eq!((bytes[0x0E], bytes[0x0F]), (0x11, 0x22), "flag_0e, flag_0f");
    assert_eq!(&bytes[0x10..0x20], &in_ap[..], "in_ap");
    assert_eq!(&bytes[0x20..0x30], &out_ap[..], "out_ap");
    assert!(bytes[0x30..].iter().all(|&v| v == 0), "reserved tail");
    // And decode reads each back from its own byte.
    let mut swapped = *bytes;
    swapped.swap(0x0E, 0x0F);
    let Ok(Instruction::GetSequenceBounds(y)) = decode(&tpb_core::Bundle(swapped), V3) else {
        panic!("the swapped bundle still decodes");
    };
    assert_eq!((y.flag_0e, y.flag_0f), (0x22, 0x11));
    assert_eq!(decode(&b, V3), Ok(Instruction::GetSequenceBounds(x)));
}
