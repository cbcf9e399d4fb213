//! Lookup tables (SPEC §6), all as data.

/// Column of the dtype table (F§6: pre-v4 and v4); a generation picks one
/// ([`crate::generation::Generation::dtype_column`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DtypeColumn {
    /// CoreV2/V3 (pre-v4 column).
    PreV4,
    /// CoreV4 column (v4 and v5, D-22).
    V4,
}

named_error! {
    /// SPEC §6 error name.
    fn name + Display;
    /// Why a table lookup failed.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    #[non_exhaustive]
    pub enum LutError {
        /// CollectiveKind 0/1 has no wire byte (S003 §2 GOTCHA).
        NotEncodable {
            /// The kind ordinal.
            kind: u32,
        } => "not_encodable",
        /// Ordinal past the end of the table.
        OutOfRange {
            /// The ordinal.
            value: u32,
        } => "out_of_range",
        /// AluOp average/elemwise_mul has no wire byte (F§4).
        NoWireByte {
            /// The AluOp ordinal.
            op: u32,
        } => "no_wire_byte",
        /// AluOp outside the shipped CCE subset {bypass, add} (S003 §1.1).
        NotShipped {
            /// The AluOp ordinal.
            op: u32,
        } => "not_shipped",
        /// AluOp other than bypass/add on the DGE path (S003 §1.2).
        NotDgeOp {
            /// The AluOp ordinal.
            op: u32,
        } => "not_dge_op",
    }
}

// ---------------------------------------------------------------------------
// 6.1 bir::CollectiveKind → wire. S003 §2 LUT unk_1DF5790 (indexed by kind−2),
// xxd "01 02 03 04 09 05 06 07 08"; names F§3.
// ---------------------------------------------------------------------------

/// First kind with a wire byte (S003 §2 `sub edi,2`).
pub const COLLECTIVE_KIND_LUT_BASE: u32 = 2;
/// The 9-byte LUT at 0x1DF5790, verbatim (S003 §2).
pub const COLLECTIVE_KIND_LUT: [u8; 9] = [0x01, 0x02, 0x03, 0x04, 0x09, 0x05, 0x06, 0x07, 0x08];
/// CollectiveKind names by ordinal (F§3).
pub const COLLECTIVE_KIND_NAMES: [&str; 11] = [
    "SendRecv",
    "SendRecvCCE",
    "AllReduce",
    "ReduceScatter",
    "AllGather",
    "AllToAll",
    "AllToAllV",
    "Permute",
    "PermuteReduce",
    "PermuteImplicit",
    "PermuteReduceImplicit",
];

coded_enum! {
    /// `bir::CollectiveKind` (F§3 ordinals).
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
    #[allow(missing_docs)]
    pub enum CollectiveKind {
        SendRecv = 0, SendRecvCce = 1, AllReduce = 2, ReduceScatter = 3, AllGather = 4,
        AllToAll = 5, AllToAllV = 6, Permute = 7, PermuteReduce = 8, PermuteImplicit = 9,
        PermuteReduceImplicit = 10,
    }
    /// Kind from its BIR ordinal.
    fn from_ordinal(u32) -> ordinal;
    names collective_kind_name;
}

impl CollectiveKind {
    /// Wire byte via the S003 §2 LUT.
    pub fn to_wire(self) -> Result<u8, LutError> {
        collective_kind_to_wire(self as u32)
    }

    /// Kind from a wire byte (0x01..=0x09).
    pub fn from_wire(wire: u8) -> Option<CollectiveKind> {
        collective_kind_from_wire(wire).and_then(CollectiveKind::from_ordinal)
    }
}

/// CollectiveKind ordinal → wire byte (SPEC §6.1; S003 §2).
pub fn collective_kind_to_wire(kind: u32) -> Result<u8, LutError> {
    match kind.checked_sub(COLLECTIVE_KIND_LUT_BASE) {
        None => Err(LutError::NotEncodable { kind }),
        Some(i) => usize::try_from(i)
            .ok()
            .and_then(|i| COLLECTIVE_KIND_LUT.get(i))
            .copied()
            .ok_or(LutError::OutOfRange { value: kind }),
    }
}

/// Wire byte → CollectiveKind ordinal (inverse of the S003 §2 LUT).
pub fn collective_kind_from_wire(wire: u8) -> Option<u32> {
    let i = COLLECTIVE_KIND_LUT.iter().position(|w| *w == wire)?;
    u32::try_from(i).ok().map(|i| i + COLLECTIVE_KIND_LUT_BASE)
}

/// CollectiveKind name (F§3).
pub fn collective_kind_name(kind: u32) -> Option<&'static str> {
    usize::try_from(kind)
        .ok()
        .and_then(|i| COLLECTIVE_KIND_NAMES.get(i))
        .copied()
}

// ---------------------------------------------------------------------------
// 6.2 bir::AluOpType → wire byte. F§4 [N] (ordinals [K]); S003 §1.1
// `convert<AluOpType>` @0x12039c0, 30-case jump. `None` = no wire byte.
// ---------------------------------------------------------------------------

/// `(name, wire)` by AluOp ordinal 0..=29 (F§4).
pub const ALU_OP_TABLE: [(&str, Option<u8>); 30] = [
    ("bypass", Some(0x00)),
    ("bitwise_not", Some(0x01)),
    ("arith_shift_left", Some(0x02)),
    ("arith_shift_right", Some(0x03)),
    ("add", Some(0x04)),
    ("subtract", Some(0x05)),
    ("mult", Some(0x06)),
    ("divide", Some(0x07)),
    ("max", Some(0x08)),
    ("min", Some(0x09)),
    ("bitwise_and", Some(0x0A)),
    ("bitwise_or", Some(0x0B)),
    ("bitwise_xor", Some(0x0C)),
    ("logical_and", Some(0x0D)),
    ("logical_or", Some(0x0E)),
    ("logical_xor", Some(0x0F)),
    ("logical_shift_left", Some(0x10)),
    ("logical_shift_right", Some(0x11)),
    ("is_equal", Some(0x12)),
    ("not_equal", Some(0x18)),
    ("is_gt", Some(0x13)),
    ("is_ge", Some(0x14)),
    ("is_lt", Some(0x16)),
    ("is_le", Some(0x15)),
    ("average", None),
    ("elemwise_mul", None),
    ("pow", Some(0x1A)),
    ("mod", Some(0x1B)),
    ("rsqrt", Some(0x1D)),
    ("abs", Some(0x19)),
];

/// The CCE shipped subset {bypass=0, add=4} (S003 §1.1 "only emits {bypass=0, add=4}").
pub const CCE_SHIPPED: [u32; 2] = [0, 4];

coded_enum! {
    /// `bir::AluOpType` (F§4 ordinals).
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
    #[allow(missing_docs)]
    pub enum AluOp {
        Bypass = 0, BitwiseNot = 1, ArithShiftLeft = 2, ArithShiftRight = 3, Add = 4, Subtract = 5,
        Mult = 6, Divide = 7, Max = 8, Min = 9, BitwiseAnd = 10, BitwiseOr = 11, BitwiseXor = 12,
        LogicalAnd = 13, LogicalOr = 14, LogicalXor = 15, LogicalShiftLeft = 16,
        LogicalShiftRight = 17, IsEqual = 18, NotEqual = 19, IsGt = 20, IsGe = 21, IsLt = 22,
        IsLe = 23, Average = 24, ElemwiseMul = 25, Pow = 26, Mod = 27, Rsqrt = 28, Abs = 29,
    }
    /// Op from its BIR ordinal.
    fn from_ordinal(u32) -> ordinal;
    names alu_op_name;
}

impl AluOp {}

fn alu_row(op: u32) -> Option<&'static (&'static str, Option<u8>)> {
    usize::try_from(op).ok().and_then(|i| ALU_OP_TABLE.get(i))
}

/// AluOp ordinal → wire byte (SPEC §6.2).
pub fn alu_op_to_wire(op: u32) -> Result<u8, LutError> {
    match alu_row(op) {
        None => Err(LutError::OutOfRange { value: op }),
        Some((_, None)) => Err(LutError::NoWireByte { op }),
        Some((_, Some(w))) => Ok(*w),
    }
}

/// Wire byte → AluOp ordinal (inverse of SPEC §6.2; the table is injective).
pub fn alu_op_from_wire(wire: u8) -> Option<u32> {
    let i = ALU_OP_TABLE.iter().position(|(_, w)| *w == Some(wire))?;
    u32::try_from(i).ok()
}

/// AluOp name (F§4).
pub fn alu_op_name(op: u32) -> Option<&'static str> {
    alu_row(op).map(|(n, _)| *n)
}

/// AluOp ordinal → CCE wire byte: the §6.2 table restricted to the shipped
/// subset (S003 §1.1). Errors of [`alu_op_to_wire`] take precedence.
pub fn cce_op_to_wire(op: u32) -> Result<u8, LutError> {
    let wire = alu_op_to_wire(op)?;
    if CCE_SHIPPED.contains(&op) {
        Ok(wire)
    } else {
        Err(LutError::NotShipped { op })
    }
}

// ---------------------------------------------------------------------------
// 6.3 AluOpType → klr::DgeComputeOp. S003 §1.2 `AluOpType2DGEComputeOp` @0x120b9e0;
// F§5 (none = 1, add = 2).
// ---------------------------------------------------------------------------

/// `(AluOp ordinal, DgeComputeOp)` rows (S003 §1.2).
pub const DGE_TABLE: [(u32, u8); 2] = [(0, 1), (4, 2)];

/// AluOp ordinal → DgeComputeOp (SPEC §6.3).
pub fn alu_op_to_dge(op: u32) -> Result<u8, LutError> {
    DGE_TABLE
        .iter()
        .find(|(a, _)| *a == op)
        .map(|(_, d)| *d)
        .ok_or(LutError::NotDgeOp { op })
}

// ---------------------------------------------------------------------------
// 6.4 bir::Dtype → wire tag. F§6 [N]: (name, pre-v4, v4) by BIR ordinal.
// ---------------------------------------------------------------------------

/// `(name, pre-v4 tag, v4 tag)` by BIR dtype ordinal 0..=19 (F§6).
pub const DTYPE_TABLE: [(&str, u8, u8); 20] = [
    ("uint8", 0x03, 0x03),
    ("int8", 0x02, 0x02),
    ("float4_e2m1fn_x4", 0x05, 0x10),
    ("float8e3", 0x0D, 0x0D),
    ("float8e4", 0x0E, 0x0E),
    ("float8_e4m3fn", 0x0E, 0x0E),
    ("float8_e8m0fnu", 0x03, 0x03),
    ("float8e5", 0x0F, 0x0F),
    ("float8_e4m3fn_x4", 0x0E, 0x0E),
    ("float8_e5m2_x4", 0x0F, 0x0F),
    ("uint16", 0x05, 0x05),
    ("int16", 0x04, 0x04),
    ("bfloat16", 0x06, 0x06),
    ("float16", 0x07, 0x07),
    ("uint32", 0x09, 0x09),
    ("int32", 0x08, 0x08),
    ("float32", 0x0A, 0x0A),
    ("float32r", 0x0B, 0x0B),
    ("uint64", 0x01, 0x01),
    ("int64", 0x0C, 0x0C),
];

fn dtype_row(ord: u32) -> Option<&'static (&'static str, u8, u8)> {
    usize::try_from(ord).ok().and_then(|i| DTYPE_TABLE.get(i))
}

/// BIR dtype ordinal → wire tag for a generation (SPEC §6.4).
pub fn dtype_to_wire(ord: u32, col: DtypeColumn) -> Result<u8, LutError> {
    let (_, pre, v4) = dtype_row(ord).ok_or(LutError::OutOfRange { value: ord })?;
    Ok(match col {
        DtypeColumn::PreV4 => *pre,
        DtypeColumn::V4 => *v4,
    })
}

/// BIR dtype name (F§6).
pub fn dtype_name(ord: u32) -> Option<&'static str> {
    dtype_row(ord).map(|(n, _, _)| *n)
}

// ---------------------------------------------------------------------------
// 6.5 The compiler's events wire tables. F§2 [N]: BIR wait mode 0 → 0x07,
// 1 (SEM_GE_IMM) → 0x05, 2 (SEM_GE_REG) → 0x85; BIR update mode 0..5 (evt-set,
// sem-add-imm, sem-sub-imm, sem-inc, sem-dec, sem-wr-imm) → 11 15 17 13 14 19.
// ---------------------------------------------------------------------------

/// Wait-mode LUT by BIR wait mode (F§2 `07 05 85`).
pub const WAIT_MODE_LUT: [u8; 3] = [0x07, 0x05, 0x85];
/// Update-mode LUT by BIR update mode (F§2 `11 15 17 13 14 19`).
pub const UPDATE_MODE_LUT: [u8; 6] = [0x11, 0x15, 0x17, 0x13, 0x14, 0x19];

fn lut_at(table: &[u8], mode: u32) -> Result<u8, LutError> {
    usize::try_from(mode)
        .ok()
        .and_then(|i| table.get(i))
        .copied()
        .ok_or(LutError::OutOfRange { value: mode })
}

/// BIR wait mode → wire byte (SPEC §6.5).
pub fn wait_mode_lut(mode: u32) -> Result<u8, LutError> {
    lut_at(&WAIT_MODE_LUT, mode)
}

/// BIR update mode → wire byte (SPEC §6.5).
pub fn update_mode_lut(mode: u32) -> Result<u8, LutError> {
    lut_at(&UPDATE_MODE_LUT, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values typed by hand from S003 §2 / SPEC §6 — not from code output.
    #[test]
    fn collective_kind_lut() {
        assert_eq!(
            collective_kind_to_wire(0),
            Err(LutError::NotEncodable { kind: 0 })
        );
        assert_eq!(
            collective_kind_to_wire(1),
            Err(LutError::NotEncodable { kind: 1 })
        );
        let expect = [0x01u8, 0x02, 0x03, 0x04, 0x09, 0x05, 0x06, 0x07, 0x08];
        for (k, w) in (2u32..=10).zip(expect) {
            assert_eq!(collective_kind_to_wire(k), Ok(w), "kind {k}");
            assert_eq!(collective_kind_from_wire(w), Some(k));
        }
        assert_eq!(
            collective_kind_to_wire(11).unwrap_err().name(),
            "out_of_range"
        );
        assert_eq!(
            collective_kind_to_wire(u32::MAX).unwrap_err().name(),
            "out_of_range"
        );
        assert_eq!(collective_kind_from_wire(0), None);
        assert_eq!(collective_kind_from_wire(0x0A), None);
        assert_eq!(collective_kind_name(6), Some("AllToAllV"));
        assert_eq!(collective_kind_name(3), Some("ReduceScatter"));
        assert_eq!(collective_kind_name(4), Some("AllGather"));
        assert_eq!(collective_kind_name(11), None);
    }

    #[test]
    fn alu_rows() {
        let rows: [(u32, &str, Option<u8>); 30] = [
            (0, "bypass", Some(0x00)),
            (1, "bitwise_not", Some(0x01)),
            (2, "arith_shift_left", Some(0x02)),
            (3, "arith_shift_right", Some(0x03)),
            (4, "add", Some(0x04)),
            (5, "subtract", Some(0x05)),
            (6, "mult", Some(0x06)),
            (7, "divide", Some(0x07)),
            (8, "max", Some(0x08)),
            (9, "min", Some(0x09)),
            (10, "bitwise_and", Some(0x0A)),
            (11, "bitwise_or", Some(0x0B)),
            (12, "bitwise_xor", Some(0x0C)),
            (13, "logical_and", Some(0x0D)),
            (14, "logical_or", Some(0x0E)),
            (15, "logical_xor", Some(0x0F)),
            (16, "logical_shift_left", Some(0x10)),
            (17, "logical_shift_right", Some(0x11)),
            (18, "is_equal", Some(0x12)),
            (19, "not_equal", Some(0x18)),
            (20, "is_gt", Some(0x13)),
            (21, "is_ge", Some(0x14)),
            (22, "is_lt", Some(0x16)),
            (23, "is_le", Some(0x15)),
            (24, "average", None),
            (25, "elemwise_mul", None),
            (26, "pow", Some(0x1A)),
            (27, "mod", Some(0x1B)),
            (28, "rsqrt", Some(0x1D)),
            (29, "abs", Some(0x19)),
        ];
        for (ord, name, wire) in rows {
            assert_eq!(alu_op_name(ord), Some(name));
            match wire {
                Some(w) => {
                    assert_eq!(alu_op_to_wire(ord), Ok(w), "{name}");
                    assert_eq!(alu_op_from_wire(w), Some(ord));
                }
                None => assert_eq!(alu_op_to_wire(ord), Err(LutError::NoWireByte { op: ord })),
            }
        }
        assert_eq!(alu_op_to_wire(30), Err(LutError::OutOfRange { value: 30 }));
        assert_eq!(alu_op_from_wire(0x17), None);
        assert_eq!(alu_op_from_wire(0x1C), None);
        assert_eq!(alu_op_from_wire(0x1E), None);
    }

    #[test]
    fn cce_and_dge() {
        assert_eq!(cce_op_to_wire(0), Ok(0x00));
        assert_eq!(cce_op_to_wire(4), Ok(0x04));
        assert_eq!(cce_op_to_wire(6).unwrap_err().name(), "not_shipped");
        assert_eq!(cce_op_to_wire(24).unwrap_err().name(), "no_wire_byte");
        assert_eq!(cce_op_to_wire(25).unwrap_err().name(), "no_wire_byte");
        assert_eq!(cce_op_to_wire(30).unwrap_err().name(), "out_of_range");
        assert_eq!(alu_op_to_dge(0), Ok(1));
        assert_eq!(alu_op_to_dge(4), Ok(2));
        for op in [1u32, 2, 3, 5, 24, 29, 30, 1000] {
            assert_eq!(alu_op_to_dge(op), Err(LutError::NotDgeOp { op }));
        }
    }

    #[test]
    fn dtype_tables() {
        let pre: [u8; 20] = [
            0x03, 0x02, 0x05, 0x0D, 0x0E, 0x0E, 0x03, 0x0F, 0x0E, 0x0F, 0x05, 0x04, 0x06, 0x07,
            0x09, 0x08, 0x0A, 0x0B, 0x01, 0x0C,
        ];
        let v4: [u8; 20] = [
            0x03, 0x02, 0x10, 0x0D, 0x0E, 0x0E, 0x03, 0x0F, 0x0E, 0x0F, 0x05, 0x04, 0x06, 0x07,
            0x09, 0x08, 0x0A, 0x0B, 0x01, 0x0C,
        ];
        for ord in 0..20u32 {
            assert_eq!(
                dtype_to_wire(ord, DtypeColumn::PreV4),
                Ok(pre[ord as usize])
            );
            assert_eq!(dtype_to_wire(ord, DtypeColumn::V4), Ok(v4[ord as usize]));
        }
        assert_eq!(
            dtype_to_wire(20, DtypeColumn::V4).unwrap_err().name(),
            "out_of_range"
        );
        assert_eq!(dtype_name(2), Some("float4_e2m1fn_x4"));
        assert_eq!(dtype_name(19), Some("int64"));
    }

    #[test]
    fn events_luts() {
        assert_eq!(wait_mode_lut(0), Ok(0x07));
        assert_eq!(wait_mode_lut(1), Ok(0x05));
        assert_eq!(wait_mode_lut(2), Ok(0x85));
        assert_eq!(wait_mode_lut(3).unwrap_err().name(), "out_of_range");
        let update = [0x11u8, 0x15, 0x17, 0x13, 0x14, 0x19];
        for (m, w) in (0u32..).zip(update) {
            assert_eq!(update_mode_lut(m), Ok(w), "update mode {m}");
            assert!(
                crate::events::is_update_mode(w),
                "{w:#x} is an UPDATE_MODE member"
            );
        }
        for m in [0u32, 1, 2] {
            assert!(crate::events::is_wait_mode(
                wait_mode_lut(m).unwrap_or(0xFF)
            ));
        }
        assert_eq!(update_mode_lut(6).unwrap_err().name(), "out_of_range");
        assert_eq!(
            update_mode_lut(u32::MAX).unwrap_err().name(),
            "out_of_range"
        );
    }
}
