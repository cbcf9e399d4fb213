//! Labels: what both subjects must say about a near-valid case, computed
//! only from the mutations and SPEC's chain order.

use super::roles::field;
use super::violations::Violation;
use crate::generation::Generation;
use crate::layout::{self, Domain, Role, OPCODES};
use crate::subjects::Validator;

/// A decode failure: field or predicate name, and offset (compared only for `reserved`, D-14).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecodeLabel {
    pub field: &'static str,
    pub offset: usize,
}

/// A validator label: `None` = valid, `Some(p)` = the first failing predicate.
pub type Label = Option<&'static str>;

/// The expected result of each view (SPEC §3, §4 validators, §5.1 decode); `None`: unlabelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Expected {
    pub header: Option<Label>,
    pub payload: Option<Label>,
    pub decode: Option<std::result::Result<(), DecodeLabel>>,
}

/// The validator chain verdict under `arch`, from the mutations (SPEC §3 / §4 order).
fn validator_label(v: Validator, base: u8, vs: &[Violation], arch: Generation) -> Option<Label> {
    // The record `v` checks (SPEC §3: 0x85, §4: 0x86), its opcode and reserved-zero predicates.
    let (own, is_op, reserved_zero) = match v {
        Validator::Header => (
            0x85,
            "is_custom_op_header_opcode",
            "custom_op_header_reserved_zero",
        ),
        Validator::Payload => (
            0x86,
            "is_custom_op_payload_opcode",
            "custom_op_payload_reserved_zero",
        ),
    };
    let mut best: Option<(u8, &'static str)> = None;
    let mut note = |rank: u8, name: &'static str| match best {
        Some((r, _)) if r <= rank => {}
        _ => best = Some((rank, name)),
    };
    for x in vs {
        match *x {
            Violation::Opcode(o) => {
                if o == own {
                    return None; // relabelled as this validator's record
                }
                if arch.is_valid_opcode(o) {
                    note(4, is_op);
                } else {
                    note(1, "valid_opcode");
                }
            }
            Violation::Tag(_) => note(2, "inst_word_len"),
            Violation::WaitMode(_) | Violation::UpdateMode(_) => note(3, "has_valid_neuron_events"),
            // The bytes the reserved-zero predicate reads (SPEC §3 #5, §4 #5).
            Violation::ReservedBit { offset, .. }
                if layout::validator_reserved(own, usize::from(offset)) =>
            {
                note(5, reserved_zero)
            }
            Violation::Scratch { .. } if v == Validator::Header => {
                note(6, "custom_op_header_scratch_space_val")
            }
            _ => {}
        }
    }
    if base != own {
        note(4, is_op);
    }
    if base == 0xDA {
        // raw stamp: byte[1] is 0x00, or a mutated value that is never 0x10
        note(2, "inst_word_len");
    }
    Some(best.map(|(_, n)| n))
}

/// The SPEC §5.1 decode verdict under `arch`, from the mutations.
fn decode_label(
    base: u8,
    vs: &[Violation],
    arch: Generation,
) -> Option<std::result::Result<(), DecodeLabel>> {
    for x in vs {
        if let Violation::Opcode(o) = *x {
            if OPCODES.contains(&o) {
                return None; // decodes as another record
            }
            return Some(Err(DecodeLabel {
                field: "opcode",
                offset: 0,
            }));
        }
    }
    let min_by_offset = |pred: &dyn Fn(usize) -> bool| {
        vs.iter()
            .map(|x| x.footprint()[0])
            .filter(|&off| pred(off))
            .min()
    };
    let custom = match base {
        0x85 => Some(Validator::Header),
        0x86 => Some(Validator::Payload),
        _ => None,
    };
    let hit = match custom {
        Some(v) => {
            if let Some(Some(p)) = validator_label(v, base, vs, arch) {
                return Some(Err(DecodeLabel {
                    field: p,
                    offset: 0,
                }));
            }
            // then (0x86) arg_type; the debug bytes take any value (FACTS §2 [H])
            min_by_offset(&|off| layout::byte_role(base, off) == Some(Role::Field(Domain::ArgType)))
        }
        None => min_by_offset(&|_| true),
    };
    Some(hit.map_or(Ok(()), |offset| {
        Err(DecodeLabel {
            field: field(base, offset),
            offset,
        })
    }))
}

/// Labels `vs` applied to a valid image of `base` under `arch`.
pub fn label(base: u8, vs: &[Violation], arch: Generation) -> Expected {
    Expected {
        header: validator_label(Validator::Header, base, vs, arch),
        payload: validator_label(Validator::Payload, base, vs, arch),
        decode: decode_label(base, vs, arch),
    }
}
