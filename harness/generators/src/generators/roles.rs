//! The role of each byte of an image, derived from [`crate::layout`].

use crate::arch::Arch;
use crate::layout::{self, OPCODES};

/// What SPEC says a byte of a given opcode's image holds (per byte, for the labels and
/// violations; the layout's [`crate::layout::Role`] is per span).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteRole {
    /// byte[0].
    Opcode,
    /// byte[1] (0x10; 0x00 for 0xDA).
    Tag,
    /// Must be zero (encoder-unwritten bytes, validator regions, 0xDA debug bytes).
    Reserved,
    /// byte[4] wait mode.
    WaitMode,
    /// byte[6] update mode.
    UpdateMode,
    /// Any value.
    Free,
    /// 0x85 scratch byte (0x10, 0x14..=0x1C).
    Scratch,
    /// `cce_op` wire byte ∈ {0x00, 0x04}.
    CceOp,
    /// `dtype` tag of the generation's column (the layout's `Dtype` domain).
    Dtype,
    /// CollectiveKind wire byte 0x01..=0x09.
    Kind,
    /// `src_dtype` tag.
    SrcDtype,
    /// `dst_dtype` tag.
    DstDtype,
    /// 0xBF byte[0x20] == 0x01.
    CrossCoreEnable,
    /// 0xDC byte[0x0C] ∈ {0, 1}.
    Valid,
    /// 0x86 byte[0x0F] `arg_type` ∈ {1 TENSOR, 2 ARRAY_OF_TENSOR} (FACTS §8).
    ArgType,
}

impl ByteRole {
    /// SPEC §5.1 decode-failure field name of a byte with this role.
    pub fn field(self) -> &'static str {
        match self {
            ByteRole::Opcode => "opcode",
            ByteRole::Tag => "inst_word_len",
            ByteRole::Reserved | ByteRole::Free | ByteRole::Scratch => "reserved",
            ByteRole::WaitMode => "wait_mode",
            ByteRole::UpdateMode => "update_mode",
            ByteRole::CceOp => "cce_op",
            ByteRole::Dtype => "dtype",
            ByteRole::Kind => "kind",
            ByteRole::SrcDtype => "src_dtype",
            ByteRole::DstDtype => "dst_dtype",
            ByteRole::CrossCoreEnable => "cross_core_enable",
            ByteRole::Valid => "valid",
            ByteRole::ArgType => "arg_type",
        }
    }

    /// Is `v` a legal value for this role under `arch` (tag: `tag` is the opcode's tag)?
    pub(super) fn accepts(self, v: u8, tag: u8, arch: Arch) -> bool {
        use crate::layout::Domain as D;
        let legal = |d: D| d.values_for(arch).is_none_or(|vs| vs.contains(&v));
        match self {
            ByteRole::Opcode | ByteRole::Free | ByteRole::Scratch => true,
            ByteRole::Tag => v == tag,
            ByteRole::Reserved => v == 0,
            ByteRole::WaitMode => legal(D::WaitMode),
            ByteRole::UpdateMode => legal(D::UpdateMode),
            ByteRole::CceOp => legal(D::CceOp),
            ByteRole::Dtype | ByteRole::SrcDtype | ByteRole::DstDtype => legal(D::Dtype),
            ByteRole::Kind => legal(D::Kind),
            // The stamped constant cross-core enable is 0x01.
            ByteRole::CrossCoreEnable => v == 0x01,
            ByteRole::ArgType => legal(D::ArgType),
            ByteRole::Valid => legal(D::Flag),
        }
    }
}

/// The role of byte `off` (< 64) in an image of `opcode` (one of
/// [`OPCODES`]), derived from the harness's one bundle layout
/// ([`crate::layout`]).
pub fn role(opcode: u8, off: usize) -> Option<ByteRole> {
    static TABLE: std::sync::OnceLock<[[Option<ByteRole>; 64]; OPCODES.len()]> =
        std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| OPCODES.map(|op| std::array::from_fn(|off| derive_role(op, off))));
    let i = OPCODES.iter().position(|&o| o == opcode)?;
    t[i].get(off).copied().flatten()
}

fn derive_role(opcode: u8, off: usize) -> Option<ByteRole> {
    use crate::layout::{Domain as D, Role as L};
    let s = layout::span_at(opcode, off)?;
    Some(match s.role {
        L::Reserved | L::Unknown => ByteRole::Reserved,
        L::Const(_) if off == 1 => ByteRole::Tag,
        L::Const(_) => match s.name {
            "cross_core_enable" => ByteRole::CrossCoreEnable,
            _ => ByteRole::Reserved,
        },
        L::Field(d) => match d {
            D::Opcode => ByteRole::Opcode,
            D::WaitMode => ByteRole::WaitMode,
            D::UpdateMode => ByteRole::UpdateMode,
            D::ArgType => ByteRole::ArgType,
            D::CceOp => ByteRole::CceOp,
            D::Dtype => match s.name {
                "src_dtype" => ByteRole::SrcDtype,
                "dst_dtype" => ByteRole::DstDtype,
                _ => ByteRole::Dtype,
            },
            D::Kind => ByteRole::Kind,
            D::Flag => ByteRole::Valid,
            D::Scratch => ByteRole::Scratch,
            D::Ap | D::Any => ByteRole::Free,
        },
    })
}
