//! The bundle layout, stated once: the harness's own reading of SPEC §1,
//! §3, §4, §5 (not core's tables). Labels, `explain`, gate images and the
//! minimiser derive from it.

/// What a span of bytes is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A named field.
    Field,
    /// Reserved: must be zero.
    Reserved,
    /// A constant the encoder stamps (`marker`, `cross_core_enable`, `inst_word_len`).
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
    Span {
        off,
        len,
        name,
        role: Role::Field,
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

const SKELETON: [Span; 8] = [
    f(0x00, 1, "opcode"),
    c(0x01, "inst_word_len", 0x10),
    r(0x02, 2),
    f(0x04, 1, "sync.wait_mode"),
    f(0x05, 1, "sync.wait_id"),
    f(0x06, 1, "sync.update_mode"),
    f(0x07, 1, "sync.update_id"),
    f(0x08, 4, "sync.values"),
];

/// The spans of `opcode`'s bundle, covering all 64 bytes in order.
pub fn layout(opcode: u8) -> Vec<Span> {
    let body: &[Span] = match opcode {
        0x85 => &[
            f(0x0C, 2, "num_payloads"),
            f(0x0E, 1, "function_id"),
            f(0x0F, 1, "num_arguments"),
            f(0x10, 1, "scratch_byte_10"),
            r(0x11, 3),
            f(0x14, 4, "scratch_dword_14"),
            f(0x18, 4, "scratch_dword_18"),
            f(0x1C, 1, "scratch_byte_1c"),
            r(0x1D, 3),
            r(0x20, 32),
        ],
        0x86 => &[r(0x0C, 3), c(0x0F, "marker", 0x01), f(0x10, 48, "ap")],
        0xD9 => &[
            f(0x0C, 1, "cce_op"),
            f(0x0D, 1, "dtype"),
            f(0x0E, 1, "kind"),
            r(0x0F, 1),
            f(0x10, 48, "ap"),
        ],
        0xDA => {
            return vec![
                f(0x00, 1, "opcode"),
                c(0x01, "inst_word_len", 0x00),
                r(0x02, 2),
                f(0x04, 2, "channel_id"),
                r(0x06, 6),
                f(0x0C, 1, "cce_op"),
                f(0x0D, 1, "dtype"),
                f(0x0E, 1, "kind"),
                r(0x0F, 1),
                f(0x10, 48, "ap"),
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
            f(0x0C, 1, "src_dtype"),
            f(0x0D, 1, "dst_dtype"),
            r(0x0E, 2),
            f(0x10, 16, "src_ap"),
            c(0x20, "cross_core_enable", 0x01),
            f(0x21, 1, "peer_partition"),
            r(0x22, 14),
            f(0x30, 16, "dst_ap"),
        ],
        0xBE => &[
            f(0x0C, 1, "dtype"),
            r(0x0D, 1),
            f(0x0E, 1, "flag_0e"),
            f(0x0F, 1, "flag_0f"),
            f(0x10, 16, "in_ap"),
            f(0x20, 16, "out_ap"),
            r(0x30, 16),
        ],
        0xD8 => &[
            f(0x0C, 4, "barrier_id"),
            f(0x10, 4, "barrier_index"),
            r(0x14, 12),
            f(0x20, 32, "sema_ap"),
        ],
        0xDC => &[
            f(0x0C, 1, "valid"),
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

/// The bytes a failing validator predicate (SPEC §3/§4) is about.
pub fn predicate_bytes(pred: &str, b: &[u8; 64]) -> Vec<usize> {
    let nonzero = |r: std::ops::Range<usize>| -> Vec<usize> { r.filter(|&i| b[i] != 0).collect() };
    match pred {
        "valid_opcode" | "is_custom_op_header_opcode" | "is_custom_op_payload_opcode" => vec![0],
        "inst_word_len" => vec![1],
        "has_valid_neuron_events" => vec![4, 6],
        "custom_op_header_reserved_zero" => {
            let mut v = nonzero(0x11..0x14);
            v.extend(nonzero(0x1D..0x40));
            v
        }
        "custom_op_header_scratch_space_val" => {
            let mut v = vec![0x10];
            v.extend(0x14..0x1D);
            v
        }
        "custom_op_payload_reserved_zero" => nonzero(0x0C..0x0F),
        _ => Vec::new(),
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

/// The value kind of a SPEC §5.2 field name (used to read JSON back into
/// values): `ap`-like fields are bytes, `cce_op`/`kind` are names, the
/// rest are ints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An unsigned integer.
    Int,
    /// A SPEC §6 table name.
    Name,
    /// A byte range.
    Bytes,
}

/// See [`Kind`].
pub fn field_kind(name: &str) -> Kind {
    match name {
        "ap" | "src_ap" | "dst_ap" | "in_ap" | "out_ap" | "sema_ap" => Kind::Bytes,
        "cce_op" | "kind" => Kind::Name,
        _ => Kind::Int,
    }
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
