//! Unit tests of the validators. Expected verdicts are derived by hand from
//! S000 §is_valid_custom_op_header / §is_valid_custom_op_payload, not from the code.

use super::*;

const V2: Generation = Generation::V2;

fn vh(b: &Bundle) -> Result<(), ValidationError> {
    validate_header(b, V2)
}

fn vp(b: &Bundle) -> Result<(), ValidationError> {
    validate_payload(b, V2)
}

fn dbg_vh(b: &Bundle) -> Result<(), String> {
    dbg_validate_header(b, V2)
}

fn dbg_vp(b: &Bundle) -> Result<(), String> {
    dbg_validate_payload(b, V2)
}

fn header() -> Bundle {
    let mut b = [0u8; 64];
    b[0] = 0x85;
    b[1] = 0x10;
    Bundle(b)
}

fn payload() -> Bundle {
    let mut b = [0u8; 64];
    b[0] = 0x86;
    b[1] = 0x10;
    b[0x0F] = 0x01;
    Bundle(b)
}

fn with(mut b: Bundle, sets: &[(usize, u8)]) -> Bundle {
    for (o, v) in sets {
        b.0[*o] = *v;
    }
    b
}

#[test]
fn minimal_records_pass() {
    assert_eq!(vh(&header()), Ok(()));
    assert_eq!(vp(&payload()), Ok(()));
}

#[test]
fn valid_opcode_predicate() {
    // In no generation's enum (isa/opcodes.tsv; F§1): gaps, 0xB7 UcodeConfig, 0xEB Hint, 0xFF.
    for op in [0x00u8, 0x0B, 0x55, 0x57, 0x80, 0xB7, 0xEB, 0xEC, 0xFF] {
        for generation in Generation::ALL {
            let e = validate_header(&with(header(), &[(0, op)]), generation).unwrap_err();
            assert_eq!(
                e,
                ValidationError::ValidOpcode {
                    opcode: op,
                    generation
                }
            );
            assert_eq!(e.predicate(), Predicate::ValidOpcode);
            let e = validate_payload(&with(payload(), &[(0, op)]), generation).unwrap_err();
            assert_eq!(
                e,
                ValidationError::ValidOpcode {
                    opcode: op,
                    generation
                }
            );
        }
    }
}

#[test]
fn valid_opcode_is_per_generation() {
    // F§1: 0x87 is v2 only; 0xBE is v3+; 0xF3 is v5 only; 0x08 is v4+.
    let cases: [(u8, [bool; 4]); 4] = [
        (0x87, [true, false, false, false]),
        (0xBE, [false, true, true, true]),
        (0xF3, [false, false, false, true]),
        (0x08, [false, false, true, true]),
    ];
    for (op, member) in cases {
        for (generation, m) in Generation::ALL.into_iter().zip(member) {
            let want = if m {
                Predicate::IsCustomOpHeaderOpcode
            } else {
                Predicate::ValidOpcode
            };
            let got = validate_header(&with(header(), &[(0, op)]), generation).unwrap_err();
            assert_eq!(got.predicate(), want, "{op:#x} {generation}");
        }
    }
}

#[test]
fn inst_word_len_predicate() {
    for v in [0x00u8, 0x0F, 0x11, 0x90, 0xFF] {
        assert_eq!(
            vh(&with(header(), &[(1, v)])),
            Err(ValidationError::InstWordLen { value: v })
        );
        assert_eq!(
            vp(&with(payload(), &[(1, v)])),
            Err(ValidationError::InstWordLen { value: v })
        );
    }
}

#[test]
fn events_predicate() {
    // F§2 [H]: members pass (a sample; every byte is in corpus/vectors/events.txt)
    for w in [0x00u8, 0x05, 0x07, 0x0E, 0x0F, 0x81, 0x85] {
        for u in [0x00u8, 0x01, 0x09, 0x13, 0x19, 0x99] {
            assert_eq!(vh(&with(header(), &[(4, w), (6, u)])), Ok(()));
            assert_eq!(vp(&with(payload(), &[(4, w), (6, u)])), Ok(()));
        }
    }
    for w in [0x08u8, 0x0D, 0x10, 0x13, 0x80, 0x86, 0x8F, 0xFF] {
        let e = vh(&with(header(), &[(4, w)])).unwrap_err();
        assert_eq!(
            e,
            ValidationError::HasValidNeuronEvents {
                wait_mode: w,
                update_mode: 0
            }
        );
        assert_eq!(e.offset(), 4);
    }
    for u in [0x06u8, 0x08, 0x0A, 0x10, 0x16, 0x18, 0x1A, 0x80, 0x98, 0xFF] {
        let e = vp(&with(payload(), &[(6, u)])).unwrap_err();
        assert_eq!(
            e,
            ValidationError::HasValidNeuronEvents {
                wait_mode: 0,
                update_mode: u
            }
        );
        assert_eq!(e.offset(), 6);
    }
    // ids and values never checked (D-2)
    let b = with(
        header(),
        &[
            (5, 0xFF),
            (7, 0xFF),
            (8, 0xFF),
            (9, 0xFF),
            (10, 0xFF),
            (11, 0xFF),
            (2, 0xAA),
            (3, 0x55),
        ],
    );
    assert_eq!(vh(&b), Ok(()));
    let b = with(
        payload(),
        &[
            (5, 0xFF),
            (7, 0xFF),
            (8, 0xFF),
            (11, 0xFF),
            (2, 0xAA),
            (3, 0x55),
        ],
    );
    assert_eq!(vp(&b), Ok(()));
}

#[test]
fn opcode_value_predicates() {
    for op in [0x86u8, 0xD9, 0x01, 0xF0] {
        assert_eq!(
            vh(&with(header(), &[(0, op)])),
            Err(ValidationError::IsCustomOpHeaderOpcode { opcode: op })
        );
    }
    for op in [0x85u8, 0xD9, 0x01, 0xF0] {
        assert_eq!(
            vp(&with(payload(), &[(0, op)])),
            Err(ValidationError::IsCustomOpPayloadOpcode { opcode: op })
        );
    }
}

#[test]
fn header_reserved_bytes() {
    let reserved = (0x11..=0x13).chain(0x1D..=0x1F).chain(0x20..=0x3F);
    for off in reserved {
        for v in [0x01u8, 0x80, 0xFF] {
            let e = vh(&with(header(), &[(off, v)])).unwrap_err();
            assert_eq!(
                e,
                ValidationError::CustomOpHeaderReservedZero {
                    offset: off,
                    value: v
                },
                "off {off:#x}"
            );
            assert_eq!(e.predicate(), Predicate::CustomOpHeaderReservedZero);
            // also with a full scratch triple present
            let full = with(header(), &[(0x10, 1), (0x18, 1), (0x1C, 1), (off, v)]);
            assert_eq!(
                vh(&full).unwrap_err().predicate(),
                Predicate::CustomOpHeaderReservedZero
            );
        }
    }
    // [0x14..0x17] is not reserved (D-4): alone it makes the descriptor non-empty
    for off in 0x14..=0x17 {
        let e = vh(&with(header(), &[(off, 0x01)])).unwrap_err();
        assert_eq!(
            e.predicate(),
            Predicate::CustomOpHeaderScratchSpaceVal,
            "off {off:#x}"
        );
        let full = with(header(), &[(0x10, 1), (0x18, 1), (0x1C, 1), (off, 0xFF)]);
        assert_eq!(vh(&full), Ok(()), "off {off:#x}");
    }
    // count/id block 0x0C..0x0F is not checked by the header (D-2)
    let b = with(
        header(),
        &[(0x0C, 0xFF), (0x0D, 0xFF), (0x0E, 0xFF), (0x0F, 0xFF)],
    );
    assert_eq!(vh(&b), Ok(()));
}

#[test]
fn scratch_lattice() {
    // (byte[0x10], dword[0x14], dword[0x18], byte[0x1C]) nonzero?, verdict by hand:
    // non-empty := any of the four nonzero; if non-empty, need b10 && d18 && b1c.
    let table: [([bool; 4], bool); 16] = [
        ([false, false, false, false], true), // empty
        ([false, false, false, true], false),
        ([false, false, true, false], false),
        ([false, false, true, true], false),
        ([false, true, false, false], false), // only dword[0x14] (D-4)
        ([false, true, false, true], false),
        ([false, true, true, false], false),
        ([false, true, true, true], false),
        ([true, false, false, false], false),
        ([true, false, false, true], false),
        ([true, false, true, false], false),
        ([true, false, true, true], true), // full triple
        ([true, true, false, false], false),
        ([true, true, false, true], false),
        ([true, true, true, false], false),
        ([true, true, true, true], true), // full triple + dword[0x14]
    ];
    // Vary which byte inside each dword is the nonzero one.
    for lane in 0..4usize {
        for ([b10, d14, d18, b1c], ok) in table {
            let mut b = header();
            if b10 {
                b.0[0x10] = 0x5A;
            }
            if d14 {
                b.0[0x14 + lane] = 0x01;
            }
            if d18 {
                b.0[0x18 + lane] = 0x80;
            }
            if b1c {
                b.0[0x1C] = 0xFF;
            }
            let r = vh(&b);
            if ok {
                assert_eq!(r, Ok(()), "{b10} {d14} {d18} {b1c} lane {lane}");
            } else {
                let e = r.unwrap_err();
                assert_eq!(
                    e.predicate(),
                    Predicate::CustomOpHeaderScratchSpaceVal,
                    "{b10} {d14} {d18} {b1c} lane {lane}"
                );
                assert_eq!(
                    e,
                    ValidationError::CustomOpHeaderScratchSpaceVal {
                        has_scratch_space: b.0[0x10],
                        scratch_space_addr: u32::from_le_bytes([
                            b.0[0x14], b.0[0x15], b.0[0x16], b.0[0x17]
                        ]),
                        scratch_space_size: u32::from_le_bytes([
                            b.0[0x18], b.0[0x19], b.0[0x1A], b.0[0x1B]
                        ]),
                        scratch_space_num_partitions: b.0[0x1C],
                    }
                );
            }
        }
    }
}

#[test]
fn payload_reserved_bytes() {
    for off in 0x0C..=0x0E {
        for v in [0x01u8, 0xFF] {
            let e = vp(&with(payload(), &[(off, v)])).unwrap_err();
            assert_eq!(
                e,
                ValidationError::CustomOpPayloadReservedZero {
                    offset: off,
                    value: v
                }
            );
            assert_eq!(e.offset(), off);
        }
    }
    for v in [0x00u8, 0x01, 0x02, 0xFF] {
        assert_eq!(vp(&with(payload(), &[(0x0F, v)])), Ok(()), "marker {v:#x}");
    }
    let mut b = payload();
    for o in 0x10..0x40 {
        b.0[o] = 0xFF;
    }
    assert_eq!(vp(&b), Ok(()));
}

#[test]
fn chain_order() {
    // (bytes set over a valid header, the predicate reported first)
    let header_first: [(&[(usize, u8)], Predicate); 5] = [
        // opcode invalid + bad tag + bad events → valid_opcode
        (&[(0, 0xFF), (1, 0), (4, 0x80)], Predicate::ValidOpcode),
        // bad tag + bad events → inst_word_len
        (&[(1, 0), (4, 0x80)], Predicate::InstWordLen),
        // bad events + wrong opcode (0x86 in header) → events
        (&[(0, 0x86), (6, 0x06)], Predicate::HasValidNeuronEvents),
        // wrong opcode + reserved → is_custom_op_header_opcode
        (&[(0, 0xD9), (0x30, 1)], Predicate::IsCustomOpHeaderOpcode),
        // reserved + half scratch → reserved
        (
            &[(0x3F, 1), (0x10, 1)],
            Predicate::CustomOpHeaderReservedZero,
        ),
    ];
    for (set, want) in header_first {
        assert_eq!(
            vh(&with(header(), set)).unwrap_err().predicate(),
            want,
            "{set:?}"
        );
    }
    // reserved: lowest offset is reported
    let b = with(header(), &[(0x3F, 2), (0x12, 3), (0x1E, 4)]);
    assert_eq!(
        vh(&b),
        Err(ValidationError::CustomOpHeaderReservedZero {
            offset: 0x12,
            value: 3
        })
    );
    // The same over a valid payload.
    let payload_first: [(&[(usize, u8)], Predicate); 2] = [
        // wrong opcode + reserved → opcode
        (&[(0, 0x85), (0x0C, 1)], Predicate::IsCustomOpPayloadOpcode),
        // bad events + reserved → events
        (&[(4, 0x80), (0x0D, 1)], Predicate::HasValidNeuronEvents),
    ];
    for (set, want) in payload_first {
        assert_eq!(
            vp(&with(payload(), set)).unwrap_err().predicate(),
            want,
            "{set:?}"
        );
    }
    let b = with(payload(), &[(0x0E, 1), (0x0D, 2)]);
    assert_eq!(
        vp(&b),
        Err(ValidationError::CustomOpPayloadReservedZero {
            offset: 0x0D,
            value: 2
        })
    );
}

#[test]
fn names_and_dbg() {
    let names = [
        "valid_opcode",
        "inst_word_len",
        "has_valid_neuron_events",
        "is_custom_op_header_opcode",
        "custom_op_header_reserved_zero",
        "custom_op_header_scratch_space_val",
        "is_custom_op_payload_opcode",
        "custom_op_payload_reserved_zero",
    ];
    for (p, n) in Predicate::ALL.iter().zip(names) {
        assert_eq!(p.name(), n);
        assert_eq!(Predicate::from_name(n), Some(*p));
    }
    assert_eq!(dbg_vh(&header()), Ok(()));
    assert_eq!(
        dbg_vh(&with(header(), &[(0x20, 1)])),
        Err("inst failed assertion check: 'custom_op_header_reserved_zero'".to_string())
    );
    assert_eq!(
        dbg_vp(&with(payload(), &[(0x0C, 1)])),
        Err("inst failed assertion check: 'custom_op_payload_reserved_zero'".to_string())
    );
}
