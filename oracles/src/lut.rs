//! Lookup tables of SPEC §6, written as rows of names and searched by value (never indexed).

use crate::errors::LutRejection;
use crate::roster::Generation;

/// bir::CollectiveKind rows: (name, ordinal, wire byte or None when the kind has no wire byte).
/// SPEC §6.1; seed 003 §2 LUT `01 02 03 04 09 05 06 07 08` for kinds 2..10.
const COLLECTIVE_KINDS: &[(&str, u32, Option<u8>)] = &[
    ("SendRecv", 0, None),
    ("SendRecvCCE", 1, None),
    ("AllReduce", 2, Some(0x01)),
    ("ReduceScatter", 3, Some(0x02)),
    ("AllGather", 4, Some(0x03)),
    ("AllToAll", 5, Some(0x04)),
    ("AllToAllV", 6, Some(0x09)),
    ("Permute", 7, Some(0x05)),
    ("PermuteReduce", 8, Some(0x06)),
    ("PermuteImplicit", 9, Some(0x07)),
    ("PermuteReduceImplicit", 10, Some(0x08)),
];

/// bir::AluOpType rows: (name, ordinal, wire byte or None = no wire byte). SPEC §6.2, FACTS §4.
const ALU_OPS: &[(&str, u32, Option<u8>)] = &[
    ("bypass", 0, Some(0x00)),
    ("bitwise_not", 1, Some(0x01)),
    ("arith_shift_left", 2, Some(0x02)),
    ("arith_shift_right", 3, Some(0x03)),
    ("add", 4, Some(0x04)),
    ("subtract", 5, Some(0x05)),
    ("mult", 6, Some(0x06)),
    ("divide", 7, Some(0x07)),
    ("max", 8, Some(0x08)),
    ("min", 9, Some(0x09)),
    ("bitwise_and", 10, Some(0x0A)),
    ("bitwise_or", 11, Some(0x0B)),
    ("bitwise_xor", 12, Some(0x0C)),
    ("logical_and", 13, Some(0x0D)),
    ("logical_or", 14, Some(0x0E)),
    ("logical_xor", 15, Some(0x0F)),
    ("logical_shift_left", 16, Some(0x10)),
    ("logical_shift_right", 17, Some(0x11)),
    ("is_equal", 18, Some(0x12)),
    ("not_equal", 19, Some(0x18)),
    ("is_gt", 20, Some(0x13)),
    ("is_ge", 21, Some(0x14)),
    ("is_lt", 22, Some(0x16)),
    ("is_le", 23, Some(0x15)),
    ("average", 24, None),
    ("elemwise_mul", 25, None),
    ("pow", 26, Some(0x1A)),
    ("mod", 27, Some(0x1B)),
    ("rsqrt", 28, Some(0x1D)),
    ("abs", 29, Some(0x19)),
];

/// The AluOp names the shipped CCE legalization admits (seed 003 §1.1: {bypass, add}).
const CCE_SHIPPED: &[&str] = &["bypass", "add"];

/// AluOp name → klr::DgeComputeOp (name, value). Seed 003 §1.2; FACTS §5.
const DGE_OPS: &[(&str, &str, u8)] = &[("bypass", "none", 1), ("add", "add", 2)];

/// bir::Dtype rows: (name, ordinal, pre-v4 tag, v4 tag). SPEC §6.4, FACTS §6.
const DTYPES: &[(&str, u32, u8, u8)] = &[
    ("uint8", 0, 0x03, 0x03),
    ("int8", 1, 0x02, 0x02),
    ("float4_e2m1fn_x4", 2, 0x05, 0x10),
    ("float8e3", 3, 0x0D, 0x0D),
    ("float8e4", 4, 0x0E, 0x0E),
    ("float8_e4m3fn", 5, 0x0E, 0x0E),
    ("float8_e8m0fnu", 6, 0x03, 0x03),
    ("float8e5", 7, 0x0F, 0x0F),
    ("float8_e4m3fn_x4", 8, 0x0E, 0x0E),
    ("float8_e5m2_x4", 9, 0x0F, 0x0F),
    ("uint16", 10, 0x05, 0x05),
    ("int16", 11, 0x04, 0x04),
    ("bfloat16", 12, 0x06, 0x06),
    ("float16", 13, 0x07, 0x07),
    ("uint32", 14, 0x09, 0x09),
    ("int32", 15, 0x08, 0x08),
    ("float32", 16, 0x0A, 0x0A),
    ("float32r", 17, 0x0B, 0x0B),
    ("uint64", 18, 0x01, 0x01),
    ("int64", 19, 0x0C, 0x0C),
];

/// BIR wait modes: (name, mode, wire byte). FACTS §2 compiler wire table / SPEC §6.5.
const WAIT_MODES: &[(&str, u32, u8)] = &[
    ("mode0", 0, 0x07),
    ("SEM_GE_IMM", 1, 0x05),
    ("SEM_GE_REG", 2, 0x85),
];

/// BIR update modes: (name, mode, wire byte). FACTS §2 compiler wire table `11 15 17 13 14 19`.
const UPDATE_MODES: &[(&str, u32, u8)] = &[
    ("evt-set", 0, 0x11),
    ("sem-add-imm", 1, 0x15),
    ("sem-sub-imm", 2, 0x17),
    ("sem-inc", 3, 0x13),
    ("sem-dec", 4, 0x14),
    ("sem-wr-imm", 5, 0x19),
];

/// Chips whose compiler uses the v4 dtype column (FACTS §6; v5 inherits v4, SPEC D-22).
const V4_COLUMN_CHIPS: &[Generation] = &[Generation::Mariana, Generation::Maverick];

/// A row of [`COLLECTIVE_KINDS`] or [`ALU_OPS`]: (name, ordinal, wire byte).
type Row = (&'static str, u32, Option<u8>);

/// `COLLECTIVE_KINDS` or `ALU_OPS`, looked up by ordinal, wire byte or name.
#[derive(Clone, Copy, Debug)]
pub struct Table(&'static [Row]);

/// The CollectiveKind table (SPEC §6.1).
pub const COLLECTIVE: Table = Table(COLLECTIVE_KINDS);
/// The AluOpType table (SPEC §6.2).
pub const ALU: Table = Table(ALU_OPS);

impl Table {
    /// The row with ordinal `ord`.
    fn row(self, ord: u32) -> Result<&'static Row, LutRejection> {
        self.0
            .iter()
            .find(|row| row.1 == ord)
            .ok_or(LutRejection::OutOfRange { value: ord })
    }

    /// The ordinal of the row `pick` finds.
    fn ordinal_where(self, pick: impl Fn(&Row) -> bool) -> Option<u32> {
        self.0.iter().find(|row| pick(row)).map(|row| row.1)
    }

    /// Wire byte → ordinal (inverse of [`collective_wire`] / [`alu_wire`]).
    pub fn of_wire(self, wire: u8) -> Option<u32> {
        self.ordinal_where(|row| row.2 == Some(wire))
    }

    /// Ordinal → name.
    pub fn name(self, ord: u32) -> Option<&'static str> {
        self.row(ord).ok().map(|row| row.0)
    }

    /// Name → ordinal.
    pub fn ordinal_of_name(self, name: &str) -> Option<u32> {
        self.ordinal_where(|row| row.0 == name)
    }
}

/// CollectiveKind → wire byte (SPEC §6.1).
pub fn collective_wire(kind: u32) -> Result<u8, LutRejection> {
    let &(name, _, wire) = COLLECTIVE.row(kind)?;
    wire.ok_or(LutRejection::NotEncodable { kind, name })
}

/// AluOpType ordinal → wire byte (SPEC §6.2).
pub fn alu_wire(op: u32) -> Result<u8, LutRejection> {
    let &(name, _, wire) = ALU.row(op)?;
    wire.ok_or(LutRejection::NoWireByte { op, name })
}

/// The CCE subset: AluOp errors first, then `not_shipped` unless the op is bypass or add.
pub fn cce_wire(op: u32) -> Result<u8, LutRejection> {
    let wire = alu_wire(op)?;
    let name = ALU.name(op).unwrap_or("");
    if CCE_SHIPPED.contains(&name) {
        Ok(wire)
    } else {
        Err(LutRejection::NotShipped { op, name })
    }
}

/// AluOpType ordinal → klr::DgeComputeOp value (bypass → none 1, add → add 2).
pub fn dge_op(op: u32) -> Result<u8, LutRejection> {
    let name = ALU.name(op);
    DGE_OPS
        .iter()
        .find(|row| Some(row.0) == name)
        .map(|row| row.2)
        .ok_or(LutRejection::NotDgeOp { op })
}

/// Dtype ordinal → wire tag for the pre-v4 (`v4 == false`) or v4 table.
pub fn dtype_wire(ord: u32, v4: bool) -> Result<u8, LutRejection> {
    DTYPES
        .iter()
        .find(|row| row.1 == ord)
        .map(|row| if v4 { row.3 } else { row.2 })
        .ok_or(LutRejection::OutOfRange { value: ord })
}

/// Does `chip`'s compiler use the v4 dtype column?
pub fn uses_v4_dtypes(chip: Generation) -> bool {
    V4_COLUMN_CHIPS.contains(&chip)
}

/// Is `tag` a tag of `chip`'s dtype column (the decoder's accepted set)?
pub fn is_dtype_tag(chip: Generation, tag: u8) -> bool {
    let v4 = uses_v4_dtypes(chip);
    DTYPES
        .iter()
        .any(|row| tag == if v4 { row.3 } else { row.2 })
}

/// The wire byte of BIR mode `mode` in `rows` (name, mode, wire).
fn mode_lut(rows: &[(&str, u32, u8)], mode: u32) -> Result<u8, LutRejection> {
    rows.iter()
        .find(|row| row.1 == mode)
        .map(|row| row.2)
        .ok_or(LutRejection::OutOfRange { value: mode })
}

/// BIR wait mode → wire byte, the raw LUT (0 → 0x07, 1 → 0x05, 2 → 0x85).
pub fn wait_mode_lut(mode: u32) -> Result<u8, LutRejection> {
    mode_lut(WAIT_MODES, mode)
}

/// BIR update mode → wire byte (0..5 → 11 15 17 13 14 19).
pub fn update_mode_lut(mode: u32) -> Result<u8, LutRejection> {
    mode_lut(UPDATE_MODES, mode)
}
