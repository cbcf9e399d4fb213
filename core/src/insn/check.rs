//! Decode-side byte rules per opcode, as data (SPEC §5, §5.1).
//!
//! Each table covers all 64 bytes in ascending order; `check` walks it and
//! reports the first offending byte, which is exactly SPEC §5.1's failure order.

use super::DecodeError;
use crate::bundle::Bundle;
use crate::events::{is_update_mode, is_wait_mode};
use crate::generation::Generation;
use crate::lut::collective_kind_from_wire;

/// What a byte range must hold.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Rule {
    /// byte[0]; dispatched on before the walk.
    Opcode,
    /// byte[1] equals the value (0x10, or 0x00 for 0xDA).
    InstWordLen(u8),
    /// Must be zero (encoder never writes it, S003 §Abstract "pxor-zeroed").
    Reserved,
    /// byte[4] ∈ WAIT_MODE (F§2 [H]).
    WaitMode,
    /// byte[6] ∈ UPDATE_MODE (F§2 [H]).
    UpdateMode,
    /// Any value.
    Any,
    /// Shipped CCE wire byte {0x00, 0x04} (D-13).
    CceOp,
    /// A tag of the generation's dtype column (SPEC §6.4), reported as `dtype`.
    Dtype,
    /// CollectiveKind wire byte 0x01..=0x09.
    Kind,
    /// Dtype tag, reported as `src_dtype`.
    SrcDtype,
    /// Dtype tag, reported as `dst_dtype`.
    DstDtype,
    /// Must be 0x01 (S003 §5).
    CrossCoreEnable,
    /// 0x00 or 0x01 (D-7).
    Valid,
}

/// A byte range and its rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Span {
    pub off: u8,
    pub len: u8,
    pub rule: Rule,
}

const fn s(off: u8, len: u8, rule: Rule) -> Span {
    Span { off, len, rule }
}

macro_rules! with_sync_skeleton {
    ($($span:expr),* $(,)?) => {
        &[
            // S003 "shared skeleton": [0]=op [1]=0x10; F§2 [H]: [2..3] debug_cmd/debug_hint
            // (any value, D-2), events band [4..0xB]
            s(0x00, 1, Rule::Opcode),
            s(0x01, 1, Rule::InstWordLen(0x10)),
            s(0x02, 2, Rule::Any),
            s(0x04, 1, Rule::WaitMode),
            s(0x05, 1, Rule::Any),
            s(0x06, 1, Rule::UpdateMode),
            s(0x07, 5, Rule::Any),
            $($span),*
        ]
    };
}

// ---------------------------------------------------------------------------
// Per-opcode byte maps. SPEC §5 table; sources per row.
// ---------------------------------------------------------------------------

/// 0xD9 CollectiveCompute. S003 §3.1.
pub(crate) static LAYOUT_D9: &[Span] = with_sync_skeleton![
    s(0x0C, 1, Rule::CceOp),    // S003 §3.1 mov %al,0xc
    s(0x0D, 1, Rule::Dtype),    // S003 §3.1 mov %al,0xd
    s(0x0E, 1, Rule::Kind),     // S003 §3.1 mov %al,0xe
    s(0x0F, 1, Rule::Reserved), // S003 §3.1 movb $0x0,0xf
    s(0x10, 48, Rule::Any),     // ADDR8 TENSOR2D; D-5
];

/// 0xDA CollectiveComputeSecondary: raw stamp, no sync band. S003 §3.2, §3.4; D-3.
pub(crate) static LAYOUT_DA: &[Span] = &[
    s(0x00, 1, Rule::Opcode),
    s(0x01, 1, Rule::InstWordLen(0x00)),
    s(0x02, 2, Rule::Reserved),
    s(0x04, 2, Rule::Any), // channel_id u16, S003 §3.4
    s(0x06, 6, Rule::Reserved),
    s(0x0C, 1, Rule::CceOp),
    s(0x0D, 1, Rule::Dtype),
    s(0x0E, 1, Rule::Kind),
    s(0x0F, 1, Rule::Reserved),
    s(0x10, 48, Rule::Any),
];

/// 0xCB CollectiveSendRecv. S003 §4.1 (three stores only).
pub(crate) static LAYOUT_CB: &[Span] = with_sync_skeleton![
    s(0x0C, 4, Rule::Reserved),
    s(0x10, 8, Rule::Any), // tensor_id
    s(0x18, 24, Rule::Reserved),
    s(0x30, 8, Rule::Any), // tensor_base
    s(0x38, 8, Rule::Any), // num_elements_per_partition
];

/// 0xBF Gpsimdsb2sb. S003 §5.
pub(crate) static LAYOUT_BF: &[Span] = with_sync_skeleton![
    s(0x0C, 1, Rule::SrcDtype),
    s(0x0D, 1, Rule::DstDtype),
    s(0x0E, 2, Rule::Reserved),
    s(0x10, 16, Rule::Any), // src_ap TENSOR3D
    s(0x20, 1, Rule::CrossCoreEnable),
    s(0x21, 1, Rule::Any), // peer_partition
    s(0x22, 14, Rule::Reserved),
    s(0x30, 16, Rule::Any), // dst_ap TENSOR3D
];

/// 0xBE GetSequenceBounds. S003 §6; D-6.
pub(crate) static LAYOUT_BE: &[Span] = with_sync_skeleton![
    s(0x0C, 1, Rule::Dtype),
    s(0x0D, 1, Rule::Reserved),
    s(0x0E, 2, Rule::Any),  // flag_0e, flag_0f
    s(0x10, 32, Rule::Any), // in_ap, out_ap TENSOR3D
    s(0x30, 16, Rule::Reserved),
];

/// 0xD8 CoreBarrier. S003 §7.
pub(crate) static LAYOUT_D8: &[Span] = with_sync_skeleton![
    s(0x0C, 8, Rule::Any), // barrier_id, barrier_index
    s(0x14, 12, Rule::Reserved),
    s(0x20, 32, Rule::Any), // sema_ap TENSOR4D
];

/// 0xDC GetGlobalRankId. S003 §8.1; D-7.
pub(crate) static LAYOUT_DC: &[Span] = with_sync_skeleton![
    s(0x0C, 1, Rule::Valid),
    s(0x0D, 10, Rule::Reserved),
    s(0x17, 1, Rule::Any), // reg_id
    s(0x18, 40, Rule::Reserved),
];

/// 0xDB GetCurProcessingRankID. S003 §8.2.
pub(crate) static LAYOUT_DB: &[Span] = with_sync_skeleton![
    s(0x0C, 7, Rule::Any), // group_id, channel_id, iteration_id, reg_id
    s(0x13, 1, Rule::Reserved),
    s(0x14, 2, Rule::Any), // stream_id
    s(0x16, 42, Rule::Reserved),
];

/// 0xDE TensorCompletion. S003 §9.
pub(crate) static LAYOUT_DE: &[Span] = with_sync_skeleton![
    s(0x0C, 5, Rule::Any), // handle, ap_byte
    s(0x11, 47, Rule::Reserved),
];

#[cfg(test)]
/// Byte map of one of the nine non-custom-op opcodes.
pub(crate) fn layout_of(opcode: u8) -> Option<&'static [Span]> {
    Some(match opcode {
        0xD9 => LAYOUT_D9,
        0xDA => LAYOUT_DA,
        0xCB => LAYOUT_CB,
        0xBF => LAYOUT_BF,
        0xBE => LAYOUT_BE,
        0xD8 => LAYOUT_D8,
        0xDC => LAYOUT_DC,
        0xDB => LAYOUT_DB,
        0xDE => LAYOUT_DE,
        _ => return None,
    })
}

fn check_byte(rule: Rule, offset: usize, value: u8, gen: Generation) -> Result<(), DecodeError> {
    let ok = match rule {
        Rule::Opcode | Rule::Any => true,
        Rule::InstWordLen(v) => value == v,
        Rule::Reserved => value == 0,
        Rule::WaitMode => is_wait_mode(value),
        Rule::UpdateMode => is_update_mode(value),
        Rule::CceOp => value == 0x00 || value == 0x04,
        Rule::Dtype | Rule::SrcDtype | Rule::DstDtype => gen.emits_dtype_tag(value),
        Rule::Kind => collective_kind_from_wire(value).is_some(),
        Rule::CrossCoreEnable => value == 0x01,
        Rule::Valid => value <= 1,
    };
    if ok {
        return Ok(());
    }
    Err(match rule {
        Rule::Opcode | Rule::Any => DecodeError::Opcode { opcode: value },
        Rule::InstWordLen(_) => DecodeError::InstWordLen { value },
        Rule::Reserved => DecodeError::Reserved { offset, value },
        Rule::WaitMode => DecodeError::WaitMode { value },
        Rule::UpdateMode => DecodeError::UpdateMode { value },
        Rule::CceOp => DecodeError::CceOp { value },
        Rule::Dtype => DecodeError::Dtype { offset, value },
        Rule::Kind => DecodeError::Kind { value },
        Rule::SrcDtype => DecodeError::SrcDtype { value },
        Rule::DstDtype => DecodeError::DstDtype { value },
        Rule::CrossCoreEnable => DecodeError::CrossCoreEnable { value },
        Rule::Valid => DecodeError::Valid { value },
    })
}

/// Walks `spans` in ascending offset; the first offending byte is the error.
pub(crate) fn check(b: &Bundle, spans: &[Span], gen: Generation) -> Result<(), DecodeError> {
    for span in spans {
        if matches!(span.rule, Rule::Any | Rule::Opcode) {
            continue;
        }
        let start = usize::from(span.off);
        let end = start + usize::from(span.len);
        for (i, v) in b.0.iter().enumerate().take(end).skip(start) {
            check_byte(span.rule, i, *v, gen)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_cover_all_64_bytes_in_order() {
        for op in crate::roster::seed_opcodes() {
            let Some(spans) = layout_of(op) else { continue };
            let mut next = 0usize;
            for sp in spans {
                assert_eq!(usize::from(sp.off), next, "opcode {op:#x}");
                assert!(sp.len > 0);
                next += usize::from(sp.len);
            }
            assert_eq!(next, 64, "opcode {op:#x}");
        }
    }
}
