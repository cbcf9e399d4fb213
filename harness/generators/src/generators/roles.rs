//! The role of each byte of an image, derived from [`crate::layout`].

use crate::arch::Arch;
use crate::layout::{self, OPCODES};

/// What SPEC says a byte of a given opcode's image holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
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

impl Role {
    /// SPEC §5.1 decode-failure field name of a byte with this role.
    pub fn field(self) -> &'static str {
        match self {
            Role::Opcode => "opcode",
            Role::Tag => "inst_word_len",
            Role::Reserved | Role::Free | Role::Scratch => "reserved",
            Role::WaitMode => "wait_mode",
            Role::UpdateMode => "update_mode",
            Role::CceOp => "cce_op",
            Role::Dtype => "dtype",
            Role::Kind => "kind",
            Role::SrcDtype => "src_dtype",
            Role::DstDtype => "dst_dtype",
            Role::CrossCoreEnable => "cross_core_enable",
            Role::Valid => "valid",
            Role::ArgType => "arg_type",
        }
    }

    /// Is `v` a legal value for this role under `arch` (tag: `tag` is the opcode's tag)?
    pub(super) fn accepts(self, v: u8, tag: u8, arch: Arch) -> bool {
        use crate::layout::Domain as D;
        let legal = |d: D| d.values_for(arch).is_none_or(|vs| vs.contains(&v));
        match self {
            Role::Opcode | Role::Free | Role::Scratch => true,
            Role::Tag => v == tag,
            Role::Reserved => v == 0,
            Role::WaitMode => legal(D::WaitMode),
            Role::UpdateMode => legal(D::UpdateMode),
            Role::CceOp => legal(D::CceOp),
            Role::Dtype | Role::SrcDtype | Role::DstDtype => legal(D::Dtype),
            Role::Kind => legal(D::Kind),
            // The stamped constant cross-core enable is 0x01.
            Role::CrossCoreEnable => v == 0x01,
            Role::ArgType => legal(D::ArgType),
            Role::Valid => legal(D::Flag),
        }
    }
}

/// The role of byte `off` (< 64) in an image of `opcode` (one of
/// [`OPCODES`]), derived from the harness's one bundle layout
/// ([`crate::layout`]).
pub fn role(opcode: u8, off: usize) -> Option<Role> {
    static TABLE: std::sync::OnceLock<[[Option<Role>; 64]; OPCODES.len()]> =
        std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| OPCODES.map(|op| std::array::from_fn(|off| derive_role(op, off))));
    let i = OPCODES.iter().position(|&o| o == opcode)?;
    t[i].get(off).copied().flatten()
}

fn derive_role(opcode: u8, off: usize) -> Option<Role> {
    use crate::layout::{Domain as D, Role as L};
    let s = layout::span_at(opcode, off)?;
    Some(match s.role {
        L::Reserved | L::Unknown => Role::Reserved,
        L::Const(_) if off == 1 => Role::Tag,
        L::Const(_) => match s.name {
            "cross_core_enable" => Role::CrossCoreEnable,
            _ => Role::Reserved,
        },
        L::Field(d) => match d {
            D::Opcode => Role::Opcode,
            D::WaitMode => Role::WaitMode,
            D::UpdateMode => Role::UpdateMode,
            D::ArgType => Role::ArgType,
            D::CceOp => Role::CceOp,
            D::Dtype => match s.name {
                "src_dtype" => Role::SrcDtype,
                "dst_dtype" => Role::DstDtype,
                _ => Role::Dtype,
            },
            D::Kind => Role::Kind,
            D::Flag => Role::Valid,
            D::Scratch => Role::Scratch,
            D::Ap | D::Any => Role::Free,
        },
    })
}

/// The tag byte[1] of an opcode's image (from the layout).
pub use crate::layout::tag_of;
