//! Decode-side byte rules (SPEC §5, §5.1), walked over a record's table fields
//! ([`crate::layout::RecordDef::fields`], generated from isa/records.tsv).
//!
//! The fields cover all bytes in ascending order; `check` walks them and reports the first
//! offending byte, which is exactly SPEC §5.1's failure order.

use super::DecodeError;
use crate::bundle::Bundle;
use crate::generation::Generation;
use crate::layout::{EnumDomain, FieldDef, FieldKind, RecordDef};

/// Does byte `value` fit the field's kind? Byte 0 is dispatched on before the walk.
fn admits(kind: FieldKind, value: u8, gen: Generation) -> bool {
    match kind {
        FieldKind::Opcode | FieldKind::Integer | FieldKind::Scratch | FieldKind::Ap => true,
        FieldKind::Constant(v) => value == v,
        FieldKind::Reserved => value == 0,
        FieldKind::Enum(d) => d.admits(value, gen),
    }
}

/// The SPEC §5.1 error for byte `offset` of field `f` holding `value`: the dedicated variant of
/// the field name, else [`DecodeError::Field`].
fn refusal(f: &FieldDef, offset: usize, value: u8) -> DecodeError {
    match (f.kind, f.name) {
        (FieldKind::Reserved, _) => DecodeError::Reserved { offset, value },
        (FieldKind::Constant(_), "inst_word_len") => DecodeError::InstWordLen { value },
        (FieldKind::Constant(_), "cross_core_enable") => DecodeError::CrossCoreEnable { value },
        (FieldKind::Enum(EnumDomain::WaitMode), "wait_mode") => DecodeError::WaitMode { value },
        (FieldKind::Enum(EnumDomain::UpdateMode), "update_mode") => {
            DecodeError::UpdateMode { value }
        }
        (FieldKind::Enum(EnumDomain::CceOp), "cce_op") => DecodeError::CceOp { value },
        (FieldKind::Enum(EnumDomain::Dtype), "dtype") => DecodeError::Dtype { offset, value },
        (FieldKind::Enum(EnumDomain::Dtype), "src_dtype") => DecodeError::SrcDtype { value },
        (FieldKind::Enum(EnumDomain::Dtype), "dst_dtype") => DecodeError::DstDtype { value },
        (FieldKind::Enum(EnumDomain::CollectiveKind), "kind") => DecodeError::Kind { value },
        (FieldKind::Enum(EnumDomain::Flag), "valid") => DecodeError::Valid { value },
        (FieldKind::Enum(EnumDomain::ArgType), "arg_type") => DecodeError::ArgType { value },
        _ => DecodeError::Field {
            field: f.name,
            offset,
            value,
        },
    }
}

/// Walks `rec`'s fields in ascending offset; the first offending byte is the error.
pub(crate) fn check(b: &Bundle, rec: &RecordDef, gen: Generation) -> Result<(), DecodeError> {
    for f in rec.fields {
        if matches!(
            f.kind,
            FieldKind::Opcode | FieldKind::Integer | FieldKind::Scratch | FieldKind::Ap
        ) {
            continue;
        }
        for (i, v) in b.0.iter().enumerate().skip(f.offset).take(f.width) {
            if !admits(f.kind, *v, gen) {
                return Err(refusal(f, i, *v));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::RECORDS;

    #[test]
    fn tables_cover_all_64_bytes_in_order() {
        for rec in RECORDS {
            let mut next = 0usize;
            for f in rec.fields {
                assert_eq!(f.offset, next, "opcode {:#x}", rec.opcode);
                assert!(f.width > 0);
                next += f.width;
            }
            assert_eq!(next, rec.wire_len, "opcode {:#x}", rec.opcode);
        }
    }

    #[test]
    fn every_named_error_reports_its_own_field_and_offset() {
        for rec in RECORDS {
            for f in rec.fields {
                let e = refusal(f, f.offset, 0xFF);
                if f.kind != FieldKind::Reserved {
                    assert_eq!(e.field(), f.name, "{:#x}", rec.opcode);
                }
                assert_eq!(e.offset(), f.offset, "{:#x} {}", rec.opcode, f.name);
            }
        }
    }
}
