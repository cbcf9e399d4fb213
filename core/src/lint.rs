//! The verdict `check` gives one instruction of any opcode (SPEC §5.3 "Linting a stream",
//! D-27): the shared skeleton every TPB instruction has (SPEC §1, §2), then the body where this
//! generation has a record for the opcode (isa/records.tsv `since`), and the instruction's
//! length on the wire (isa/opcodes.tsv `length`, FACTS §9 \[K\]).

use crate::bundle::Bundle;
use crate::events::{is_update_mode, is_wait_mode};
use crate::generation::{Generation, LONG_OPCODES};
use crate::insn::{decode, CollectiveComputeSecondary};
use crate::layout::{
    record, BUNDLE_LEN, OFF_INST_WORD_LEN, OFF_OPCODE, OFF_UPDATE_MODE, OFF_WAIT_MODE,
    OPCODE_CUSTOM_OP_HEADER, OPCODE_CUSTOM_OP_PAYLOAD,
};
use crate::validate::{validate_header, validate_payload};

/// The `inst_word_len` of every 64-byte skeleton (S003 "inst_word_len = 0x10 (16 dwords = 64
/// bytes)"; S000 (1) `cmpb 0x10`; D-27 for opcodes without a record).
pub const SKELETON_INST_WORD_LEN: u8 = 0x10;

/// What one instruction is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Verdict {
    /// The skeleton and the record body hold.
    Valid,
    /// The skeleton holds; this generation has no record for the opcode, so its body is not
    /// checked (`valid (skeleton; body not modelled)`).
    SkeletonOnly,
    /// A predicate failed.
    Invalid(Failure),
}

impl Verdict {
    /// `valid`, `skeleton` or `invalid`.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::SkeletonOnly => "skeleton",
            Verdict::Invalid(_) => "invalid",
        }
    }
}

/// A failed predicate of [`lint_instruction`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Failure {
    /// The predicate (`valid_opcode`, `inst_word_len`, `has_valid_neuron_events`, a validator
    /// predicate of SPEC §3/§4, or the decode field of SPEC §5.1).
    pub predicate: &'static str,
    /// The byte it is about (D-14: informative).
    pub offset: usize,
    /// The value of that byte.
    pub value: u8,
}

/// Bytes one instruction with opcode `op` occupies on the wire: 64 or 128 (isa/opcodes.tsv
/// `length`; FACTS §9 \[K\]). A 0xD9 and its 0xDA are two 64-byte records (DL-12).
#[inline(always)]
pub fn instruction_len(op: u8) -> usize {
    if LONG_OPCODES.contains(&op) {
        2 * BUNDLE_LEN
    } else {
        BUNDLE_LEN
    }
}

fn fail(b: &Bundle, predicate: &'static str, offset: usize) -> Verdict {
    Verdict::Invalid(Failure {
        predicate,
        offset,
        value: b.0.get(offset).copied().unwrap_or(0),
    })
}

/// How [`lint_instruction`] judges one opcode under one generation (its row of the roster and
/// of the instruction table).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Class {
    /// Not in the generation's enum.
    NotMember,
    /// In the enum, no record for it in this generation: skeleton only.
    Skeleton,
    /// 0xDA: stamped raw (no inst_word_len tag, no events band, D-3), body by decode.
    RawRecord,
    /// 0x85: the header validator.
    Header,
    /// 0x86: the payload validator.
    Payload,
    /// Another record this generation's compiler emits: skeleton, then decode.
    Record,
}

/// The [`Class`] of `op` under `gen`.
pub fn classify(op: u8, gen: Generation) -> Class {
    if !gen.is_valid_opcode(op) {
        Class::NotMember
    } else if op == OPCODE_CUSTOM_OP_HEADER {
        Class::Header
    } else if op == OPCODE_CUSTOM_OP_PAYLOAD {
        Class::Payload
    } else if record(op).is_none() || !gen.emits(op) {
        Class::Skeleton
    } else if op == CollectiveComputeSecondary::OPCODE {
        Class::RawRecord
    } else {
        Class::Record
    }
}

/// The verdict of the instruction whose first 64 bytes are `b`, under generation `gen`.
///
/// Order (SPEC §5.3, D-27): `valid_opcode` (byte 0 in `gen`'s enum, SPEC §2); `inst_word_len`
/// (byte 1 == 0x10; 0xDA is stamped raw, D-3, and its decode checks byte 1);
/// `has_valid_neuron_events` (byte 4, then byte 6; 0xDA has no sync band); then the body: the
/// S000 validator for 0x85/0x86, decode (SPEC §5.1) for another record this generation's
/// compiler emits, and [`Verdict::SkeletonOnly`] for every other opcode.
#[inline]
pub fn lint_instruction(b: &Bundle, gen: Generation) -> Verdict {
    lint_classified(b, gen, classify(b.0[OFF_OPCODE], gen))
}

/// The verdict of an opcode of class [`Class::NotMember`] or [`Class::Skeleton`] (the walker's
/// fast path, straight on the bytes read): `valid_opcode` for a non-member, else the skeleton
/// (byte 1, then byte 4, then byte 6; SPEC §5.3, D-27). Any other class is judged on its
/// skeleton only.
#[inline(always)]
pub fn lint_skeleton(b: &[u8; 64], class: Class) -> Verdict {
    let failed = |predicate, offset: usize| {
        Verdict::Invalid(Failure {
            predicate,
            offset,
            value: b[offset],
        })
    };
    if class == Class::NotMember {
        failed("valid_opcode", OFF_OPCODE)
    } else if b[OFF_INST_WORD_LEN] != SKELETON_INST_WORD_LEN {
        failed("inst_word_len", OFF_INST_WORD_LEN)
    } else if !is_wait_mode(b[OFF_WAIT_MODE]) {
        failed("has_valid_neuron_events", OFF_WAIT_MODE)
    } else if !is_update_mode(b[OFF_UPDATE_MODE]) {
        failed("has_valid_neuron_events", OFF_UPDATE_MODE)
    } else {
        Verdict::SkeletonOnly
    }
}

/// [`lint_instruction`] with the opcode's [`Class`] already known (the walker keeps a table).
#[inline(always)]
pub fn lint_classified(b: &Bundle, gen: Generation, class: Class) -> Verdict {
    match class {
        Class::NotMember | Class::Skeleton => return lint_skeleton(&b.0, class),
        Class::RawRecord => {}
        _ => {
            if let Verdict::Invalid(f) = lint_skeleton(&b.0, Class::Skeleton) {
                return Verdict::Invalid(f);
            }
        }
    }
    let checked = match class {
        Class::Skeleton | Class::NotMember => return Verdict::SkeletonOnly,
        Class::Header => validate_header(b, gen).map_err(|e| (e.predicate(), e.offset())),
        Class::Payload => validate_payload(b, gen).map_err(|e| (e.predicate(), e.offset())),
        Class::Record | Class::RawRecord => {
            return match decode(b, gen) {
                Ok(_) => Verdict::Valid,
                Err(e) => fail(b, e.field(), e.offset()),
            };
        }
    };
    match checked {
        Ok(()) => Verdict::Valid,
        Err((p, offset)) => fail(b, p.name(), offset),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(op: u8, len: u8) -> Bundle {
        let mut b = [0u8; 64];
        b[0] = op;
        b[1] = len;
        Bundle(b)
    }

    #[test]
    fn a_roster_opcode_without_a_record_is_skeleton_only() {
        // 0x01 LDWEIGHTS is in every enum (isa/opcodes.tsv) and has no record.
        assert_eq!(
            lint_instruction(&bundle(0x01, 0x10), Generation::V2),
            Verdict::SkeletonOnly
        );
        assert_eq!(
            lint_instruction(&bundle(0x01, 0x00), Generation::V2),
            Verdict::Invalid(Failure {
                predicate: "inst_word_len",
                offset: 1,
                value: 0
            })
        );
        let mut b = bundle(0x01, 0x10);
        b.0[4] = 0xFF;
        assert_eq!(
            lint_instruction(&b, Generation::V2),
            Verdict::Invalid(Failure {
                predicate: "has_valid_neuron_events",
                offset: 4,
                value: 0xFF
            })
        );
    }

    #[test]
    fn membership_is_per_generation() {
        // 0x87 is a v2-only opcode (FACTS §1 [H]).
        let b = bundle(0x87, 0x10);
        assert_eq!(lint_instruction(&b, Generation::V2), Verdict::SkeletonOnly);
        assert_eq!(
            lint_instruction(&b, Generation::V3).kind(),
            "invalid",
            "0x87 on v3"
        );
        // 0xD8 is in every enum but only CoreV3+ emits its record (S003 "At a glance").
        let b = bundle(0xD8, 0x10);
        assert_eq!(lint_instruction(&b, Generation::V2), Verdict::SkeletonOnly);
    }

    #[test]
    fn the_length_table_has_0xd4_at_128() {
        assert_eq!(instruction_len(0xD4), 128);
        for op in [0x01u8, 0x85, 0x86, 0xD9, 0xDA, 0xF0, 0xFF] {
            assert_eq!(instruction_len(op), 64, "{op:#04x}");
        }
    }
}
