//! The bundle layout, stated once: the harness's own reading of SPEC §1,
//! §3, §4, §5 (not core's tables). Generator labels and violations
//! ([`crate::generators`]), `explain`, gate images ([`crate::gate::cases`]),
//! the minimisers and JSON field kinds all derive from it.

use crate::arch::Arch;
use std::sync::OnceLock;

/// The values a field's byte may legally hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// byte[0], the opcode.
    Opcode,
    /// `wait_mode`: a WAIT_MODE member (SPEC §6.5; FACTS §2 [H]).
    WaitMode,
    /// `update_mode`: an UPDATE_MODE member (SPEC §6.5; FACTS §2 [H]).
    UpdateMode,
    /// 0x86 `arg_type` ∈ {1 TENSOR, 2 ARRAY_OF_TENSOR} (SPEC §4; FACTS §8 [H]).
    ArgType,
    /// `cce_op` wire byte ∈ {0x00, 0x04}: the shipped CCE ops (SPEC §6.2).
    CceOp,
    /// A dtype tag of the generators' generation's column: 0x01..=0x0F on v2 (SPEC §0, §6.4).
    Dtype,
    /// A CollectiveKind wire byte 0x01..=0x09 (SPEC §6.1).
    Kind,
    /// A flag ∈ {0, 1} (0xDC `valid`, SPEC §5.2).
    Flag,
    /// A part of the 0x85 scratch descriptor (SPEC §3 #6, D-4).
    Scratch,
    /// An access pattern: raw bytes (SPEC §5.2).
    Ap,
    /// Any integer.
    Any,
}

impl Domain {
    /// The legal values of a closed domain, in wire order (`None`: any value).
    pub fn values(self) -> Option<&'static [u8]> {
        const DTYPE: [u8; 15] = {
            let mut v = [0u8; 15];
            let mut i = 0;
            while i < 15 {
                v[i] = i as u8 + 1;
                i += 1;
            }
            v
        };
        Some(match self {
            Domain::WaitMode => &WAIT_MEMBERS,
            Domain::UpdateMode => &UPDATE_MEMBERS,
            Domain::ArgType => &[0x01, 0x02],
            Domain::Flag => &[0x00, 0x01],
            Domain::CceOp => &[0x00, 0x04],
            Domain::Dtype => &DTYPE,
            Domain::Kind => &[0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09],
            Domain::Opcode | Domain::Scratch | Domain::Ap | Domain::Any => return None,
        })
    }

    /// The legal values of a closed domain under generation `arch`: v4's dtype
    /// column adds tag 0x10 (FACTS §6; SPEC §6.4); the other domains do not
    /// depend on the generation.
    pub fn values_for(self, arch: Arch) -> Option<&'static [u8]> {
        const DTYPE_V4: [u8; 16] = {
            let mut v = [0u8; 16];
            let mut i = 0;
            while i < 16 {
                v[i] = i as u8 + 1;
                i += 1;
            }
            v
        };
        match self {
            Domain::Dtype if arch >= Arch::V4 => Some(&DTYPE_V4),
            _ => self.values(),
        }
    }

    /// Is `v` a legal value of the field's first byte?
    pub fn legal(self, v: u8) -> bool {
        self.values().is_none_or(|vs| vs.contains(&v))
    }

    /// How the field's value is written in JSON (`decode` output).
    pub fn kind(self) -> Kind {
        match self {
            Domain::Ap => Kind::Bytes,
            Domain::CceOp | Domain::Kind => Kind::Name,
            _ => Kind::Int,
        }
    }
}

/// WAIT_MODE members: the harness's own transcription of FACTS §2 [H] (not core's table).
pub const WAIT_MEMBERS: [u8; 15] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0E, 0x0F, 0x81, 0x82, 0x83, 0x84, 0x85,
];
/// UPDATE_MODE members known from the quoted header lines (FACTS §2 [H]).
pub const UPDATE_MEMBERS: [u8; 16] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x09, 0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x19, 0x99,
];

/// What a span of bytes is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A named field and its values.
    Field(Domain),
    /// Reserved: must be zero.
    Reserved,
    /// A constant the encoder stamps (`cross_core_enable`, `inst_word_len`).
    Const(u8),
    /// Bytes of an opcode without an encoder.
    Unknown,
}

/// One span of the layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Offset.
    pub off: usize,
    /// Width in bytes.
    pub len: usize,
    /// Field name (SPEC §5.2) or `reserved`.
    pub name: &'static str,
    /// Role.
    pub role: Role,
}

const fn f(off: usize, len: usize, name: &'static str) -> Span {
    d(off, len, name, Domain::Any)
}

const fn d(off: usize, len: usize, name: &'static str, domain: Domain) -> Span {
    Span {
        off,
        len,
        name,
        role: Role::Field(domain),
    }
}

const fn r(off: usize, len: usize) -> Span {
    Span {
        off,
        len,
        name: "reserved",
        role: Role::Reserved,
    }
}

const fn c(off: usize, name: &'static str, v: u8) -> Span {
    Span {
        off,
        len: 1,
        name,
        role: Role::Const(v),
    }
}

const SKELETON: [Span; 9] = [
    d(0x00, 1, "opcode", Domain::Opcode),
    c(0x01, "inst_word_len", 0x10),
    f(0x02, 1, "debug_cmd"),
    f(0x03, 1, "debug_hint"),
    d(0x04, 1, "wait_mode", Domain::WaitMode),
    f(0x05, 1, "wait_idx"),
    d(0x06, 1, "update_mode", Domain::UpdateMode),
    f(0x07, 1, "update_idx"),
    f(0x08, 4, "semaphore_value"),
];

/// The spans of `opcode`'s bundle, covering all 64 bytes in order.
pub fn layout(opcode: u8) -> Vec<Span> {
    let body: &[Span] = match opcode {
        0x85 => &[
            f(0x0C, 2, "num_payloads"),
            f(0x0E, 1, "function_id"),
            f(0x0F, 1, "num_arguments"),
            d(0x10, 1, "has_scratch_space", Domain::Scratch),
            r(0x11, 3),
            d(0x14, 4, "scratch_space_addr", Domain::Scratch),
            d(0x18, 4, "scratch_space_size", Domain::Scratch),
            d(0x1C, 1, "scratch_space_num_partitions", Domain::Scratch),
            r(0x1D, 3),
            r(0x20, 32),
        ],
        0x86 => &[
            r(0x0C, 3),
            d(0x0F, 1, "arg_type", Domain::ArgType),
            d(0x10, 48, "ap", Domain::Ap),
        ],
        0xD9 => &[
            d(0x0C, 1, "cce_op", Domain::CceOp),
            d(0x0D, 1, "dtype", Domain::Dtype),
            d(0x0E, 1, "kind", Domain::Kind),
            r(0x0F, 1),
            d(0x10, 48, "ap", Domain::Ap),
        ],
        0xDA => {
            return vec![
                d(0x00, 1, "opcode", Domain::Opcode),
                c(0x01, "inst_word_len", 0x00),
                r(0x02, 2),
                f(0x04, 2, "channel_id"),
                r(0x06, 6),
                d(0x0C, 1, "cce_op", Domain::CceOp),
                d(0x0D, 1, "dtype", Domain::Dtype),
                d(0x0E, 1, "kind", Domain::Kind),
                r(0x0F, 1),
                d(0x10, 48, "ap", Domain::Ap),
            ]
        }
        0xCB => &[
            r(0x0C, 4),
            f(0x10, 8, "tensor_id"),
            r(0x18, 24),
            f(0x30, 8, "tensor_base"),
            f(0x38, 8, "num_elements_per_partition"),
        ],
        0xBF => &[
            d(0x0C, 1, "src_dtype", Domain::Dtype),
            d(0x0D, 1, "dst_dtype", Domain::Dtype),
            r(0x0E, 2),
            d(0x10, 16, "src_ap", Domain::Ap),
            c(0x20, "cross_core_enable", 0x01),
            f(0x21, 1, "peer_partition"),
            r(0x22, 14),
            d(0x30, 16, "dst_ap", Domain::Ap),
        ],
        0xBE => &[
            d(0x0C, 1, "dtype", Domain::Dtype),
            r(0x0D, 1),
            f(0x0E, 1, "flag_0e"),
            f(0x0F, 1, "flag_0f"),
            d(0x10, 16, "in_ap", Domain::Ap),
            d(0x20, 16, "out_ap", Domain::Ap),
            r(0x30, 16),
        ],
        0xD8 => &[
            f(0x0C, 4, "barrier_id"),
            f(0x10, 4, "barrier_index"),
            r(0x14, 12),
            d(0x20, 32, "sema_ap", Domain::Ap),
        ],
        0xDC => &[
            d(0x0C, 1, "valid", Domain::Flag),
            r(0x0D, 10),
            f(0x17, 1, "reg_id"),
            r(0x18, 40),
        ],
        0xDB => &[
            f(0x0C, 2, "group_id"),
            f(0x0E, 2, "channel_id"),
            f(0x10, 2, "iteration_id"),
            f(0x12, 1, "reg_id"),
            r(0x13, 1),
            f(0x14, 2, "stream_id"),
            r(0x16, 42),
        ],
        0xDE => &[f(0x0C, 4, "handle"), f(0x10, 1, "ap_byte"), r(0x11, 47)],
        _ => &[Span {
            off: 0x0C,
            len: 52,
            name: "body",
            role: Role::Unknown,
        }],
    };
    SKELETON.iter().chain(body.iter()).copied().collect()
}

/// The bytes of a CUSTOM_OP record (`0x85` / `0x86`) that its validator's
/// reserved-zero predicate reads: the reserved spans after the SyncInfo
/// band (SPEC §3 #5, §4 #5; bytes 2..3 are decode's, not the validator's).
pub fn validator_reserved(opcode: u8, off: usize) -> bool {
    off >= 0x0C && byte_role(opcode, off) == Some(Role::Reserved)
}

/// The layouts of the [`OPCODES`], computed once.
fn cached() -> &'static [Vec<Span>; OPCODES.len()] {
    static L: OnceLock<[Vec<Span>; OPCODES.len()]> = OnceLock::new();
    L.get_or_init(|| OPCODES.map(layout))
}

/// The spans of one of the [`OPCODES`] (cached; empty for other opcodes).
pub fn spans(opcode: u8) -> &'static [Span] {
    OPCODES
        .iter()
        .position(|&o| o == opcode)
        .map_or(&[], |i| cached()[i].as_slice())
}

/// The span holding byte `off` of an `opcode` image (one of [`OPCODES`]).
pub fn span_at(opcode: u8, off: usize) -> Option<&'static Span> {
    spans(opcode)
        .iter()
        .find(|s| (s.off..s.off + s.len).contains(&off))
}

/// The role of byte `off` of an `opcode` image (one of [`OPCODES`]).
pub fn byte_role(opcode: u8, off: usize) -> Option<Role> {
    span_at(opcode, off).map(|s| s.role)
}

/// The tag byte[1] the encoder stamps for `opcode` (SPEC §1; 0x00 for 0xDA, D-3).
pub fn tag_of(opcode: u8) -> u8 {
    match byte_role(opcode, 1) {
        Some(Role::Const(v)) => v,
        _ => 0x10,
    }
}

/// The eleven opcodes with an encoder (SPEC §5).
pub const OPCODES: [u8; 11] = [
    0x85, 0x86, 0xD9, 0xDA, 0xCB, 0xBF, 0xBE, 0xD8, 0xDC, 0xDB, 0xDE,
];

/// SPEC §5.2 mnemonic of one of the eleven decodable opcodes.
pub fn mnemonic(opcode: u8) -> Option<&'static str> {
    Some(match opcode {
        0x85 => "CustomOpHeader",
        0x86 => "CustomOpPayload",
        0xD9 => "CollectiveCompute",
        0xDA => "CollectiveComputeSecondary",
        0xCB => "CollectiveSendRecv",
        0xBF => "Gpsimdsb2sb",
        0xBE => "GetSequenceBounds",
        0xD8 => "CoreBarrier",
        0xDC => "GetGlobalRankId",
        0xDB => "GetCurProcessingRankID",
        0xDE => "TensorCompletion",
        _ => return None,
    })
}

/// The value kind of a SPEC §5.2 field (used to read JSON back into values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An unsigned integer.
    Int,
    /// A SPEC §6 table name.
    Name,
    /// A byte range.
    Bytes,
}

/// The value kind of a field name: the [`Domain::kind`] of the first span
/// of that name in the layouts (names not in the layouts: [`Kind::Int`]).
pub fn field_kind(name: &str) -> Kind {
    OPCODES
        .iter()
        .flat_map(|&op| spans(op))
        .find_map(|s| match s.role {
            Role::Field(d) if s.name == name => Some(d.kind()),
            _ => None,
        })
        .unwrap_or(Kind::Int)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_cover_64_bytes() {
        for op in [
            0x85, 0x86, 0xD9, 0xDA, 0xCB, 0xBF, 0xBE, 0xD8, 0xDC, 0xDB, 0xDE, 0x01,
        ] {
            let l = layout(op);
            let mut next = 0;
            for s in &l {
                assert_eq!(s.off, next, "opcode {op:#x} span {}", s.name);
                next += s.len;
            }
            assert_eq!(next, 64, "opcode {op:#x}");
        }
    }
}
