//! The record layouts, as data generated from `isa/records.tsv` (the instruction table; each row
//! cites its seed source), plus the constants and masks the validators read, derived from it.
//! Multi-byte fields are little-endian (S003 §3.1).

use crate::generation::Generation;

/// What a field's bytes are (the table's `kind` and `domain` columns).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FieldKind {
    /// byte\[0\], the record's opcode.
    Opcode,
    /// A fixed byte the encoder stamps (`inst_word_len`, `cross_core_enable`).
    Constant(u8),
    /// One byte from a closed table.
    Enum(EnumDomain),
    /// An unsigned little-endian integer, any value.
    Integer,
    /// An integer part of the 0x85 scratch descriptor (S000 (5), D-4).
    Scratch,
    /// An opaque access pattern (D-5).
    Ap,
    /// Must be zero (the encoder never writes it, S003 §Abstract "pxor-zeroed").
    Reserved,
}

/// The closed tables an enum field takes its byte from.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum EnumDomain {
    /// `NEURON_ISA_TPB_WAIT_MODE` (F§2 \[H\]).
    WaitMode,
    /// `NEURON_ISA_TPB_UPDATE_MODE` (F§2 \[H\]).
    UpdateMode,
    /// A dtype tag of the generation's column (SPEC §6.4).
    Dtype,
    /// A shipped CCE AluOp wire byte {0x00, 0x04} (SPEC §6.2, D-13).
    CceOp,
    /// A CollectiveKind wire byte (SPEC §6.1).
    CollectiveKind,
    /// 0x86 `arg_type`: TENSOR 1, ARRAY_OF_TENSOR 2 (F§8 \[H\]).
    ArgType,
    /// 0 or 1 (D-7).
    Flag,
}

impl EnumDomain {
    /// Is `value` a member under generation `gen`? The one statement of each domain's
    /// members, read by core's decode walk and by the harness's generators and reach.
    pub fn admits(self, value: u8, gen: Generation) -> bool {
        match self {
            EnumDomain::WaitMode => crate::events::is_wait_mode(value),
            EnumDomain::UpdateMode => crate::events::is_update_mode(value),
            EnumDomain::Dtype => gen.emits_dtype_tag(value),
            // Shipped CCE wire bytes (D-13): the ALU wire bytes of `CCE_SHIPPED`.
            EnumDomain::CceOp => crate::lut::CCE_SHIPPED
                .iter()
                .any(|&ord| crate::lut::alu_op_to_wire(ord) == Ok(value)),
            EnumDomain::CollectiveKind => crate::lut::collective_kind_from_wire(value).is_some(),
            EnumDomain::ArgType => value == 0x01 || value == 0x02,
            EnumDomain::Flag => value <= 1,
        }
    }
}

/// The S000 validator that gates a record's body (SPEC §3, §4).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Validator {
    /// `is_valid_custom_op_header` (0x85).
    Header,
    /// `is_valid_custom_op_payload` (0x86).
    Payload,
}

/// One byte range of a record.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FieldDef {
    /// Byte offset.
    pub offset: usize,
    /// Width in bytes.
    pub width: usize,
    /// Canonical name (SPEC §5.2), `reserved` for reserved bytes.
    pub name: &'static str,
    /// What the bytes are.
    pub kind: FieldKind,
    /// Source citation (seed §, SPEC decision).
    pub source: &'static str,
}

/// One record opcode of the instruction table.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RecordDef {
    /// byte\[0\].
    pub opcode: u8,
    /// SPEC §5.2 mnemonic.
    pub mnemonic: &'static str,
    /// The `tpb_core::insn` type.
    pub type_name: &'static str,
    /// First generation whose compiler emits it (later ones inherit, D-22).
    pub emitted_since: Generation,
    /// Bytes on the wire (FACTS §9 \[K\]).
    pub wire_len: usize,
    /// The validator gating its body, if any.
    pub validator: Option<Validator>,
    /// Source citation.
    pub source: &'static str,
    /// Every field, ascending, tiling `0..wire_len` exactly once.
    pub fields: &'static [FieldDef],
}

impl RecordDef {
    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&'static FieldDef> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The field holding byte `offset`.
    pub fn field_at(&self, offset: usize) -> Option<&'static FieldDef> {
        self.fields
            .iter()
            .find(|f| (f.offset..f.offset + f.width).contains(&offset))
    }

    /// Decoded field names in SPEC §5.2 order (no opcode, constants or reserved bytes).
    pub fn field_names(&self) -> impl Iterator<Item = &'static str> {
        self.fields
            .iter()
            .filter(|f| {
                !matches!(
                    f.kind,
                    FieldKind::Opcode | FieldKind::Constant(_) | FieldKind::Reserved
                )
            })
            .map(|f| f.name)
    }
}

include!(concat!(env!("OUT_DIR"), "/records.rs"));

/// The table row of `opcode`, if it is a record opcode.
pub fn record(opcode: u8) -> Option<&'static RecordDef> {
    RECORDS.iter().find(|r| r.opcode == opcode)
}

// ---------------------------------------------------------------------------
// The shared skeleton (SPEC §1), from the table's `field sync` rows (the rest of its offsets:
// [`sync_skeleton`]).
// ---------------------------------------------------------------------------

/// Bundle length in bytes. S003 "std::array<unsigned char, 64>".
pub const BUNDLE_LEN: usize = 64;
/// Opcode byte.
pub const OFF_OPCODE: usize = sync_skeleton::OFF_OPCODE;
/// Header tag / `inst_word_len`.
pub const OFF_INST_WORD_LEN: usize = sync_skeleton::OFF_INST_WORD_LEN;
/// The value of `inst_word_len` (16 dwords).
pub const INST_WORD_LEN: u8 = sync_skeleton::INST_WORD_LEN;
/// `wait_mode`.
pub const OFF_WAIT_MODE: usize = sync_skeleton::OFF_WAIT_MODE;
/// `update_mode`.
pub const OFF_UPDATE_MODE: usize = sync_skeleton::OFF_UPDATE_MODE;

// ---------------------------------------------------------------------------
// CUSTOM_OP header 0x85 and payload 0x86 (SPEC §3, §4): what the validators read (the other
// offsets: [`custom_op_header`], [`custom_op_payload`]).
// ---------------------------------------------------------------------------

/// CustomOpHeader opcode.
pub const OPCODE_CUSTOM_OP_HEADER: u8 = custom_op_header::OPCODE;
/// CustomOpPayload opcode.
pub const OPCODE_CUSTOM_OP_PAYLOAD: u8 = custom_op_payload::OPCODE;
/// `num_payloads` u16.
pub const OFF_NUM_PAYLOADS: usize = custom_op_header::OFF_NUM_PAYLOADS;
/// `has_scratch_space` u8 (scratch triple part 1).
pub const OFF_HAS_SCRATCH_SPACE: usize = custom_op_header::OFF_HAS_SCRATCH_SPACE;
/// `arg_type` u8 (the seed's "payload-present marker").
pub const OFF_ARG_TYPE: usize = custom_op_payload::OFF_ARG_TYPE;
/// `arg_type` TENSOR: what the group encoder writes. S000 §C3 `[0x0F]=1`; F§8.
pub const ARG_TYPE_TENSOR: u8 = 0x01;
/// `arg_type` ARRAY_OF_TENSOR. F§8 \[H\].
pub const ARG_TYPE_ARRAY_OF_TENSOR: u8 = 0x02;

/// Little-endian byte-lane mask of the bytes of `rec` in `[off, off + n)` (n ≤ 8) that are
/// scratch-descriptor parts (`scratch`) or reserved (`!scratch`).
const fn lane_mask(rec: &RecordDef, off: usize, n: usize, scratch: bool) -> u64 {
    let mut mask = 0u64;
    let mut i = 0;
    while i < rec.fields.len() {
        let f = &rec.fields[i];
        let hit = match f.kind {
            FieldKind::Reserved => !scratch,
            FieldKind::Scratch => scratch,
            _ => false,
        };
        if hit {
            let mut b = f.offset;
            while b < f.offset + f.width {
                if b >= off && b < off + n {
                    mask |= 0xFF << (8 * (b - off));
                }
                b += 1;
            }
        }
        i += 1;
    }
    mask
}

const fn reserved_mask(rec: &RecordDef, off: usize, n: usize) -> u64 {
    lane_mask(rec, off, n, false)
}

/// Reserved-zero mask over dword\[0x10\] | dword\[0x1C\] (S000 (4) `and edx,0xffffff00`).
pub const HDR_RESERVED_DWORD_MASK: u32 = reserved_mask(custom_op_header::DEF, 0x10, 4) as u32;
/// Start of the 32-byte reserved tail (S000 (4) qword-OR on [0x20..0x3F]).
pub const HDR_RESERVED_TAIL: usize = 0x20;
/// Non-empty scratch mask on qword\[0x10\] (S000 (5)).
pub const HDR_SCRATCH_Q10_MASK: u64 = lane_mask(custom_op_header::DEF, 0x10, 8, true);
/// Non-empty scratch mask on qword\[0x18\] (S000 (5)).
pub const HDR_SCRATCH_Q18_MASK: u64 = lane_mask(custom_op_header::DEF, 0x18, 8, true);
/// Reserved-zero mask on dword\[0x0C\]: bytes 0x0C..=0x0E (S000 (4), AC03-C2).
pub const PAYLOAD_RESERVED_DWORD_MASK: u32 = reserved_mask(custom_op_payload::DEF, 0x0C, 4) as u32;

// The validators' word-wise code (validate.rs) assumes this shape of the table: one mask serves
// dword[0x10] and dword[0x1C]; the tail is all reserved; no other header body byte is reserved;
// the payload's only reserved bytes are in dword[0x0C].
const _: () = {
    let h = custom_op_header::DEF;
    assert!(reserved_mask(h, 0x1C, 4) as u32 == HDR_RESERVED_DWORD_MASK);
    assert!(reserved_mask(h, 0x20, 8) == u64::MAX);
    assert!(reserved_mask(h, 0x28, 8) == u64::MAX);
    assert!(reserved_mask(h, 0x30, 8) == u64::MAX);
    assert!(reserved_mask(h, 0x38, 8) == u64::MAX);
    assert!(reserved_mask(h, 0x0C, 4) == 0 && reserved_mask(h, 0x14, 8) == 0);
    let p = custom_op_payload::DEF;
    assert!(reserved_mask(p, 0x10, 8) == 0 && reserved_mask(p, 0x18, 8) == 0);
    assert!(reserved_mask(p, 0x20, 8) == 0 && reserved_mask(p, 0x28, 8) == 0);
    assert!(reserved_mask(p, 0x30, 8) == 0 && reserved_mask(p, 0x38, 8) == 0);
};

/// Width of an ADDR4/ADDR8 access pattern (0x10..0x3F). D-5.
pub const AP48_LEN: usize = 48;
/// Width of a TENSOR3D access pattern. D-5.
pub const AP16_LEN: usize = 16;
/// Width of a TENSOR4D access pattern. D-5.
pub const AP32_LEN: usize = 32;
