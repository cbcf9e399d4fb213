//! Per-predicate tests of the 0x85 / 0x86 validators. Expected values are derived by hand from
//! seed 000 (Algorithm, reserved-zero region, scratch QUIRK, AC03-C1/C2) and SPEC §2–§4.

mod common;

use common::img;
use tpb_oracle::{
    dbg_header_verdict, dbg_payload_verdict, header_verdict, is_named_opcode, payload_verdict,
    Generation, Rejection,
};

/// The chip these tests run under: Cayman (v3) emits all eleven opcodes (seed 003).
const C: tpb_oracle::Generation = tpb_oracle::Generation::Cayman;

/// A header the validator accepts: opcode, tag, wait SEM_GE_IMM on sem 3, set-update sem 4,
/// num_payloads 4, function 7, 2 arguments, empty scratch.
fn header() -> [u8; 64] {
    img(&[
        (0, &[0x85, 0x10, 0, 0, 0x05, 3, 0x13, 4]),
        (0x0C, &[4, 0, 7, 2]),
    ])
}

/// A payload the validator accepts.
fn payload() -> [u8; 64] {
    let mut b = img(&[(0, &[0x86, 0x10, 0, 0, 0x85]), (0x0F, &[0x01])]);
    for (i, byte) in b.iter_mut().enumerate().skip(0x10) {
        *byte = i as u8 ^ 0x5A;
    }
    b
}

fn name_of(r: Result<(), Rejection>) -> &'static str {
    match r {
        Ok(()) => "ok",
        Err(e) => e.predicate_name(),
    }
}

#[test]
fn base_images_pass() {
    assert_eq!(header_verdict(&header(), C), Ok(()));
    assert_eq!(payload_verdict(&payload(), C), Ok(()));
    assert_eq!(dbg_header_verdict(&header(), C), Ok(()));
    assert_eq!(dbg_payload_verdict(&payload(), C), Ok(()));
}

// ---------------------------------------------------------------- roster (SPEC §2, FACTS §1)

#[test]
fn roster_counts_per_chip() {
    // FACTS §1: v2 144, v3 149, v4 158, v5 164 named opcodes.
    let chips = [
        Generation::Sunda,
        Generation::Cayman,
        Generation::Mariana,
        Generation::Maverick,
    ];
    let counts: Vec<usize> = chips
        .iter()
        .map(|&c| (0u8..=255).filter(|&op| is_named_opcode(c, op)).count())
        .collect();
    assert_eq!(counts, [144, 149, 158, 164]);
}

#[test]
fn roster_gaps_and_edges() {
    // In no chip's enum (FACTS §1): gaps, 0xB7 UcodeConfig, 0xEB Hint, 0xFF INVALID.
    let not_named = [
        0u8, 11, 32, 39, 47, 49, 64, 80, 85, 86, 87, 89, 93, 117, 128, 137, 144, 145, 151, 183,
        192, 236, 235, 245, 254, 255,
    ];
    for chip in [
        Generation::Sunda,
        Generation::Cayman,
        Generation::Mariana,
        Generation::Maverick,
    ] {
        for op in not_named {
            assert!(
                !is_named_opcode(chip, op),
                "{op} must not be named on {chip:?}"
            );
        }
        for op in [
            0x01u8, 0x85, 0x86, 0xCB, 0xD8, 0xD9, 0xDA, 0xDB, 0xDC, 0xDE, 0xF0,
        ] {
            assert!(is_named_opcode(chip, op), "{op:#x} on {chip:?}");
        }
    }
    // 0x87 on Sunda only; 0xBE from Cayman; 0xF3 on Maverick only.
    assert!(is_named_opcode(Generation::Sunda, 0x87) && !is_named_opcode(Generation::Cayman, 0x87));
    assert!(!is_named_opcode(Generation::Sunda, 0xBE) && is_named_opcode(Generation::Cayman, 0xBE));
    assert!(
        !is_named_opcode(Generation::Mariana, 0xF3) && is_named_opcode(Generation::Maverick, 0xF3)
    );
}

// ---------------------------------------------------------------- header chain order (SPEC §3)

/// Each of `values` at byte `at` is reported first by both validators as `name`, naming that
/// byte and value, even with the `later` bytes (checked later in the chain) also bad.
fn reported_first(at: usize, values: [u8; 5], later: &[(usize, u8)], name: &str) {
    for v in values {
        let mut b = header();
        b[at] = v;
        for &(o, x) in later {
            b[o] = x;
        }
        let r = header_verdict(&b, C).unwrap_err();
        assert_eq!(r.predicate_name(), name);
        assert_eq!((r.offset, r.value), (at, v));
        let mut p = payload();
        p[at] = v;
        assert_eq!(name_of(payload_verdict(&p, C)), name);
    }
}

#[test]
fn valid_opcode_is_first() {
    // A bad tag and bad events too, later in the chain.
    let values = [0x00u8, 0x0B, 0x80, 0x87, 0xFF];
    reported_first(0, values, &[(1, 0), (4, 0x80)], "valid_opcode");
}

#[test]
fn inst_word_len_is_second() {
    // Events also bad: must not be reported.
    let values = [0x00u8, 0x0F, 0x11, 0x20, 0xFF];
    reported_first(1, values, &[(4, 0x80)], "inst_word_len");
}

/// Every value of the mode byte at `off` passes both validators exactly when it is one of
/// `members`, and a header failing on it names that byte and value.
fn mode_domain(off: usize, members: &[u8], what: &str) {
    for v in 0u8..=255 {
        let want = if members.contains(&v) {
            "ok"
        } else {
            "has_valid_neuron_events"
        };
        let mut b = header();
        b[off] = v;
        assert_eq!(name_of(header_verdict(&b, C)), want, "{what} {v:#04x}");
        let mut p = payload();
        p[off] = v;
        assert_eq!(
            name_of(payload_verdict(&p, C)),
            want,
            "payload {what} {v:#04x}"
        );
        if let Err(r) = header_verdict(&b, C) {
            assert_eq!((r.offset, r.value), (off, v));
        }
    }
}

#[test]
fn events_wait_mode_domain() {
    // FACTS §2 [H] WAIT_MODE members, typed by hand; INVALID 0xFF and the rest fail.
    let members = [
        0x00u8, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0E, 0x0F, 0x81, 0x82, 0x83, 0x84, 0x85,
    ];
    mode_domain(4, &members, "wait mode");
}

#[test]
fn events_update_mode_domain() {
    // FACTS §2 [H] UPDATE_MODE members, typed by hand.
    let members = [
        0x00u8, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x09, 0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x19,
        0x99,
    ];
    mode_domain(6, &members, "update mode");
}

#[test]
fn events_wait_checked_before_update() {
    let mut b = header();
    b[4] = 0x08;
    b[6] = 0x06;
    assert_eq!(header_verdict(&b, C).unwrap_err().offset, 4);
}

#[test]
fn events_ids_and_values_are_not_checked() {
    for off in [5usize, 7, 8, 9, 10, 11, 2, 3] {
        let mut b = header();
        b[off] = 0xFF;
        assert_eq!(header_verdict(&b, C), Ok(()), "byte {off:#x}");
        let mut p = payload();
        p[off] = 0xFF;
        assert_eq!(payload_verdict(&p, C), Ok(()), "payload byte {off:#x}");
    }
}

#[test]
fn opcode_value_gates() {
    // A roster opcode that passes tag and events fails the value gate.
    let mut b = header();
    b[0] = 0x86;
    let r = header_verdict(&b, C).unwrap_err();
    assert_eq!(r.predicate_name(), "is_custom_op_header_opcode");
    assert_eq!((r.offset, r.value), (0, 0x86));
    let mut p = payload();
    p[0] = 0x85;
    let r = payload_verdict(&p, C).unwrap_err();
    assert_eq!(r.predicate_name(), "is_custom_op_payload_opcode");
    assert_eq!((r.offset, r.value), (0, 0x85));
    let mut d = header();
    d[0] = 0xD9;
    assert_eq!(name_of(header_verdict(&d, C)), "is_custom_op_header_opcode");
}

// ---------------------------------------------------------------- header reserved zero

#[test]
fn header_reserved_zero_region_exactly() {
    // Seed 000: [0x11..0x13] ∪ [0x1D..0x1F] ∪ [0x20..0x3F].
    let reserved: Vec<usize> = (0x11..=0x13)
        .chain(0x1D..=0x1F)
        .chain(0x20..=0x3F)
        .collect();
    for off in 0x0Cusize..0x40 {
        let mut b = header();
        b[off] = 0x80;
        let r = header_verdict(&b, C);
        if reserved.contains(&off) {
            let e = r.unwrap_err();
            assert_eq!(
                e.predicate_name(),
                "custom_op_header_reserved_zero",
                "byte {off:#x}"
            );
            assert_eq!((e.offset, e.value), (off, 0x80));
        } else if off == 0x10 || (0x14..=0x1C).contains(&off) {
            // a lone scratch byte: the descriptor is half-filled
            assert_eq!(
                name_of(r),
                "custom_op_header_scratch_space_val",
                "byte {off:#x}"
            );
        } else {
            // 0x0C..0x0F are the count/id block: not checked
            assert_eq!(r, Ok(()), "byte {off:#x}");
        }
    }
}

#[test]
fn header_reserved_reports_first_nonzero_ascending() {
    let mut b = header();
    b[0x3F] = 1;
    b[0x1E] = 2;
    b[0x12] = 3;
    let e = header_verdict(&b, C).unwrap_err();
    assert_eq!((e.offset, e.value), (0x12, 3));
}

#[test]
fn reserved_zero_precedes_scratch() {
    let mut b = header();
    b[0x10] = 1; // half-filled scratch
    b[0x25] = 1; // and a reserved byte
    assert_eq!(
        name_of(header_verdict(&b, C)),
        "custom_op_header_reserved_zero"
    );
}

// ---------------------------------------------------------------- scratch triple (16 combos)

/// (byte\[0x10\], dword\[0x14\], dword\[0x18\], byte\[0x1C\]) nonzero flags.
type Combo = (u8, u8, u8, u8);

#[test]
fn scratch_sixteen_combinations() {
    // (byte[0x10], dword[0x14], dword[0x18], byte[0x1C]) nonzero? -> expected verdict and the
    // offending offset (first zero required part: 0x10, then 0x18, then 0x1C). Derived by hand
    // from seed 000 (5) and D-4: non-empty := any of the four; if non-empty byte[0x10],
    // dword[0x18] and byte[0x1C] must all be nonzero; dword[0x14] only counts as non-empty.
    let table: [(Combo, Option<usize>); 16] = [
        ((0, 0, 0, 0), None),
        ((0, 0, 0, 1), Some(0x10)),
        ((0, 0, 1, 0), Some(0x10)),
        ((0, 0, 1, 1), Some(0x10)),
        ((0, 1, 0, 0), Some(0x10)),
        ((0, 1, 0, 1), Some(0x10)),
        ((0, 1, 1, 0), Some(0x10)),
        ((0, 1, 1, 1), Some(0x10)),
        ((1, 0, 0, 0), Some(0x18)),
        ((1, 0, 0, 1), Some(0x18)),
        ((1, 0, 1, 0), Some(0x1C)),
        ((1, 0, 1, 1), None),
        ((1, 1, 0, 0), Some(0x18)),
        ((1, 1, 0, 1), Some(0x18)),
        ((1, 1, 1, 0), Some(0x1C)),
        ((1, 1, 1, 1), None),
    ];
    for ((b10, d14, d18, b1c), want) in table {
        // exercise different bytes of each dword
        for lane in 0..4usize {
            let mut b = header();
            b[0x10] = b10 * 0x33;
            b[0x14 + lane] = d14 * 0x44;
            b[0x18 + lane] = d18 * 0x55;
            b[0x1C] = b1c * 0x66;
            let r = header_verdict(&b, C);
            match want {
                None => assert_eq!(r, Ok(()), "{:?}", (b10, d14, d18, b1c)),
                Some(off) => {
                    let e = r.unwrap_err();
                    assert_eq!(e.predicate_name(), "custom_op_header_scratch_space_val");
                    assert_eq!((e.offset, e.value), (off, 0), "{:?}", (b10, d14, d18, b1c));
                }
            }
        }
    }
}

#[test]
fn full_scratch_with_any_dword14_is_accepted() {
    let mut b = header();
    b[0x10] = 0xFF;
    b[0x14..0x18].copy_from_slice(&[0xDE, 0xAD, 0xBE, 0xEF]);
    b[0x18..0x1C].copy_from_slice(&[0, 0, 0, 0x80]);
    b[0x1C] = 1;
    assert_eq!(header_verdict(&b, C), Ok(()));
}

// ---------------------------------------------------------------- payload reserved zero

#[test]
fn payload_reserved_zero_is_0c_to_0e_only() {
    for off in 0x0Cusize..0x40 {
        for v in [0x00u8, 0x01, 0x80, 0xFF] {
            let mut p = payload();
            p[off] = v;
            let want = if (0x0C..=0x0E).contains(&off) && v != 0 {
                "custom_op_payload_reserved_zero"
            } else {
                "ok" // 0x0F (marker) and the AP are not checked by the validator
            };
            let got = payload_verdict(&p, C);
            assert_eq!(name_of(got), want, "byte {off:#x}={v:#x}");
            if let Err(e) = got {
                assert_eq!((e.offset, e.value), (off, v));
            }
        }
    }
}

#[test]
fn payload_does_not_check_marker() {
    let mut p = payload();
    p[0x0F] = 0x00;
    assert_eq!(payload_verdict(&p, C), Ok(()));
}

// ---------------------------------------------------------------- dbg form

#[test]
fn dbg_messages_name_the_predicate() {
    // (a header or a payload, the byte set, the predicate the message names)
    let cases: [(bool, usize, u8, &str); 5] = [
        (true, 0x30, 1, "custom_op_header_reserved_zero"),
        (true, 0x1C, 1, "custom_op_header_scratch_space_val"),
        (false, 0x0D, 1, "custom_op_payload_reserved_zero"),
        (false, 0, 0x85, "is_custom_op_payload_opcode"),
        // 0x0A: not an UPDATE_MODE member (FACTS §2).
        (false, 6, 0x0A, "has_valid_neuron_events"),
    ];
    for (is_header, at, v, name) in cases {
        let mut b = if is_header { header() } else { payload() };
        b[at] = v;
        let got = if is_header {
            dbg_header_verdict(&b, C)
        } else {
            dbg_payload_verdict(&b, C)
        };
        let want = format!("inst failed assertion check: '{name}'");
        assert_eq!(got, Err(want));
    }
}
