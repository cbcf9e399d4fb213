//! LUT tests (SPEC §6; expected values copied from seed 003 and FACTS) and IR gates (SPEC §7).

use tpb_oracle::*;

fn lut_err<T: std::fmt::Debug>(r: Result<T, LutRejection>) -> &'static str {
    r.unwrap_err().name()
}

#[test]
fn collective_lut_is_the_nine_bytes() {
    // seed 003 §2: objdump -s 0x1df5790: 01 02 03 04 09 05 06 07 08 for kinds 2..10.
    let lut = [0x01u8, 0x02, 0x03, 0x04, 0x09, 0x05, 0x06, 0x07, 0x08];
    for (i, &wire) in lut.iter().enumerate() {
        let kind = i as u32 + 2;
        assert_eq!(collective_wire(kind), Ok(wire), "kind {kind}");
        assert_eq!(COLLECTIVE.of_wire(wire), Some(kind));
    }
    assert_eq!(lut_err(collective_wire(0)), "not_encodable");
    assert_eq!(lut_err(collective_wire(1)), "not_encodable");
    for k in [11u32, 12, 255, u32::MAX] {
        assert_eq!(lut_err(collective_wire(k)), "out_of_range");
    }
    for w in [0x00u8, 0x0A, 0x0B, 0x80, 0xFF] {
        assert_eq!(COLLECTIVE.of_wire(w), None);
    }
    assert_eq!(collective_wire(6), Ok(0x09)); // AllToAllV QUIRK
    assert_eq!(COLLECTIVE.name(6), Some("AllToAllV"));
    assert_eq!(COLLECTIVE.name(3), Some("ReduceScatter"));
    assert_eq!(COLLECTIVE.name(4), Some("AllGather"));
    assert_eq!(
        COLLECTIVE.ordinal_of_name("PermuteReduceImplicit"),
        Some(10)
    );
}

#[test]
fn alu_lut_all_thirty() {
    // SPEC §6.2 / FACTS §4 ord:wire.
    let rows: [(u32, Option<u8>, &str); 30] = [
        (0, Some(0x00), "bypass"),
        (1, Some(0x01), "bitwise_not"),
        (2, Some(0x02), "arith_shift_left"),
        (3, Some(0x03), "arith_shift_right"),
        (4, Some(0x04), "add"),
        (5, Some(0x05), "subtract"),
        (6, Some(0x06), "mult"),
        (7, Some(0x07), "divide"),
        (8, Some(0x08), "max"),
        (9, Some(0x09), "min"),
        (10, Some(0x0A), "bitwise_and"),
        (11, Some(0x0B), "bitwise_or"),
        (12, Some(0x0C), "bitwise_xor"),
        (13, Some(0x0D), "logical_and"),
        (14, Some(0x0E), "logical_or"),
        (15, Some(0x0F), "logical_xor"),
        (16, Some(0x10), "logical_shift_left"),
        (17, Some(0x11), "logical_shift_right"),
        (18, Some(0x12), "is_equal"),
        (19, Some(0x18), "not_equal"),
        (20, Some(0x13), "is_gt"),
        (21, Some(0x14), "is_ge"),
        (22, Some(0x16), "is_lt"),
        (23, Some(0x15), "is_le"),
        (24, None, "average"),
        (25, None, "elemwise_mul"),
        (26, Some(0x1A), "pow"),
        (27, Some(0x1B), "mod"),
        (28, Some(0x1D), "rsqrt"),
        (29, Some(0x19), "abs"),
    ];
    for (ord, wire, name) in rows {
        assert_eq!(ALU.name(ord), Some(name));
        assert_eq!(ALU.ordinal_of_name(name), Some(ord));
        match wire {
            Some(w) => {
                assert_eq!(alu_wire(ord), Ok(w), "{name}");
                assert_eq!(ALU.of_wire(w), Some(ord));
            }
            None => assert_eq!(lut_err(alu_wire(ord)), "no_wire_byte"),
        }
    }
    for ord in [30u32, 31, 100, u32::MAX] {
        assert_eq!(lut_err(alu_wire(ord)), "out_of_range");
    }
    for w in [0x17u8, 0x1C, 0x1E, 0xFF] {
        assert_eq!(ALU.of_wire(w), None);
    }
}

#[test]
fn cce_subset() {
    assert_eq!(cce_wire(0), Ok(0x00));
    assert_eq!(cce_wire(4), Ok(0x04));
    for ord in (1..=3).chain(5..=23).chain(26..=29) {
        assert_eq!(lut_err(cce_wire(ord)), "not_shipped", "ord {ord}");
    }
    assert_eq!(lut_err(cce_wire(24)), "no_wire_byte");
    assert_eq!(lut_err(cce_wire(25)), "no_wire_byte");
    assert_eq!(lut_err(cce_wire(30)), "out_of_range");
}

#[test]
fn dge_ops() {
    assert_eq!(dge_op(0), Ok(1));
    assert_eq!(dge_op(4), Ok(2));
    for ord in [1u32, 2, 3, 5, 24, 29, 30, 1000] {
        assert_eq!(lut_err(dge_op(ord)), "not_dge_op");
    }
}

#[test]
fn dtype_tables() {
    // SPEC §6.4 (ord, pre-v4, v4).
    let rows: [(u32, u8, u8); 20] = [
        (0, 0x03, 0x03),
        (1, 0x02, 0x02),
        (2, 0x05, 0x10),
        (3, 0x0D, 0x0D),
        (4, 0x0E, 0x0E),
        (5, 0x0E, 0x0E),
        (6, 0x03, 0x03),
        (7, 0x0F, 0x0F),
        (8, 0x0E, 0x0E),
        (9, 0x0F, 0x0F),
        (10, 0x05, 0x05),
        (11, 0x04, 0x04),
        (12, 0x06, 0x06),
        (13, 0x07, 0x07),
        (14, 0x09, 0x09),
        (15, 0x08, 0x08),
        (16, 0x0A, 0x0A),
        (17, 0x0B, 0x0B),
        (18, 0x01, 0x01),
        (19, 0x0C, 0x0C),
    ];
    for (ord, pre, v4) in rows {
        assert_eq!(dtype_wire(ord, false), Ok(pre), "ord {ord}");
        assert_eq!(dtype_wire(ord, true), Ok(v4), "ord {ord} v4");
    }
    assert_eq!(lut_err(dtype_wire(20, false)), "out_of_range");
    assert_eq!(lut_err(dtype_wire(20, true)), "out_of_range");
    // decodable tags: 0x01..=0x0F on the pre-v4 chips, 0x01..=0x10 on v4 and v5 (FACTS §6)
    for tag in 0u8..=255 {
        for chip in [Generation::Sunda, Generation::Cayman] {
            assert_eq!(
                is_dtype_tag(chip, tag),
                (0x01..=0x0F).contains(&tag),
                "{chip:?} {tag:#x}"
            );
        }
        for chip in [Generation::Mariana, Generation::Maverick] {
            assert_eq!(
                is_dtype_tag(chip, tag),
                (0x01..=0x10).contains(&tag),
                "{chip:?} {tag:#x}"
            );
        }
    }
}

#[test]
fn wait_mode_luts() {
    assert_eq!(wait_mode_lut(0), Ok(0x07));
    assert_eq!(wait_mode_lut(1), Ok(0x05));
    assert_eq!(wait_mode_lut(2), Ok(0x85));
    assert_eq!(lut_err(wait_mode_lut(3)), "out_of_range");
    // FACTS §2: BIR update modes 0..5 → 11 15 17 13 14 19
    for (mode, wire) in [
        (0u32, 0x11u8),
        (1, 0x15),
        (2, 0x17),
        (3, 0x13),
        (4, 0x14),
        (5, 0x19),
    ] {
        assert_eq!(update_mode_lut(mode), Ok(wire), "update mode {mode}");
    }
    assert_eq!(lut_err(update_mode_lut(6)), "out_of_range");
    assert_eq!(lut_err(update_mode_lut(u32::MAX)), "out_of_range");
}

fn gate_err(r: Result<(), GateRejection>) -> &'static str {
    r.map(|()| "ok").unwrap_or_else(|e| e.name())
}

#[test]
fn check_custom_op_gate() {
    // spaces: 0 SBUF, 1 HBM, 2 PSUM, 3 Other; arch: 0 Tonga, 1 Sunda, 2 Cayman, 3 Mariana.
    assert_eq!(gate_err(gate_custom_op(&[0, 1], &[0], 1)), "ok");
    assert_eq!(gate_err(gate_custom_op(&[], &[], 0)), "ok");
    assert_eq!(
        gate_err(gate_custom_op(&[2], &[0, 0], 2)),
        "too_many_outputs"
    );
    assert_eq!(
        gate_err(gate_custom_op(&[0, 2], &[0], 1)),
        "bad_memory_space"
    );
    assert_eq!(gate_err(gate_custom_op(&[0], &[3], 1)), "bad_memory_space");
    assert_eq!(gate_err(gate_custom_op(&[0], &[9], 1)), "bad_memory_space");
    assert_eq!(gate_err(gate_custom_op(&[0], &[1], 2)), "bad_arch");
    assert_eq!(gate_err(gate_custom_op(&[0], &[1], 3)), "bad_arch");
    assert_eq!(gate_err(gate_custom_op(&[0], &[1], 4)), "bad_arch");
    assert_eq!(
        gate_custom_op(&[0, 1, 2], &[3], 9),
        Err(GateRejection::BadMemorySpace {
            operand: Operand::Arg,
            index: 2,
            code: 2
        })
    );
    assert_eq!(
        gate_custom_op(&[0], &[2], 0),
        Err(GateRejection::BadMemorySpace {
            operand: Operand::Output,
            index: 0,
            code: 2
        })
    );
}

#[test]
fn sb_scratchpad_gate() {
    const MAX: u64 = u64::MAX;
    // kind, subkind, sb_arg_global, n_args, n_outputs, n_scratch
    type Args = (u32, u32, bool, u64, u64, u64);
    // The arguments and the gate's answer.
    let cases: [(Args, &str); 10] = [
        ((0x30, 2, true, 3, 1, 6), "ok"),
        ((0x30, 3, true, 0, 0, 2), "ok"),
        ((0x2F, 9, false, 0, 0, 0), "not_custom_op"),
        ((0x30, 1, false, 0, 0, 0), "bad_subkind"),
        ((0x30, 4, true, 0, 0, 2), "bad_subkind"),
        ((0x30, 0, true, 0, 0, 2), "bad_subkind"),
        ((0x30, 2, false, 0, 0, 2), "not_sb_arg_global"),
        ((0x30, 2, true, 3, 1, 5), "scratch_count_mismatch"),
        // no overflow: u64::MAX + 2 + u64::MAX never equals a u64
        ((0x30, 2, true, MAX, MAX, MAX), "scratch_count_mismatch"),
        ((0x30, 2, true, MAX - 2, 0, MAX), "ok"),
    ];
    for ((k, sub, global, x, y, z), want) in cases {
        let got = gate_err(gate_sb_scratchpad(k, sub, global, x, y, z));
        assert_eq!(got, want, "{:?}", (k, sub, global, x, y, z));
    }
}

#[test]
fn small_gates() {
    assert_eq!(gate_err(gate_cc_dim(0)), "ok");
    assert_eq!(gate_err(gate_cc_dim(1)), "ok");
    assert_eq!(gate_err(gate_cc_dim(2)), "bad_cc_dim");
    assert_eq!(gate_err(gate_rank_id_output(11)), "ok");
    assert_eq!(gate_err(gate_rank_id_output(10)), "not_register_access");
    assert_eq!(gate_err(gate_rank_id_output(12)), "not_register_access");
    assert_eq!(gate_err(gate_lnc(2)), "ok");
    assert_eq!(gate_err(gate_lnc(1)), "not_lnc2");
    assert_eq!(gate_err(gate_lnc(4)), "not_lnc2");
    assert!(route_is_sb2sb(0));
    assert!(route_is_sb2sb(1024));
    assert!(!route_is_sb2sb(1025));
    assert!(!route_is_sb2sb(u64::MAX));
}
