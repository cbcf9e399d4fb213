//! The two custom-op validators (SPEC §3, §4) as short-circuit chains of byte-range predicates
//! evaluated over the record's region table.

use crate::errors::{Predicate, Rejection};
use crate::regions::{
    byte_at, first_nonzero, le_value, record, slice, Chain, Domain, Guard, Record, Role,
};
use crate::roster::{is_named_opcode, Chip};

/// How a predicate is evaluated over a region table.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// byte[0] is in the chip's opcode enum.
    Roster,
    /// The `Tag` region holds its value.
    Tag,
    /// The wait-mode and update-mode regions hold admitted values (ids are not checked).
    Events,
    /// byte[0] is the record's opcode.
    OpcodeEquals,
    /// Every `Reserved(Validator)` region is all zero.
    ValidatorReservedZero,
    /// Scratch descriptor empty, or every required part nonzero.
    ScratchAllOrNone,
}

/// Seed 000 `is_valid_custom_op_header` (0x129b940), in order.
const HEADER_CHAIN: &[(Predicate, Check)] = &[
    (Predicate::ValidOpcode, Check::Roster),
    (Predicate::InstWordLen, Check::Tag),
    (Predicate::HasValidNeuronEvents, Check::Events),
    (Predicate::IsCustomOpHeaderOpcode, Check::OpcodeEquals),
    (
        Predicate::CustomOpHeaderReservedZero,
        Check::ValidatorReservedZero,
    ),
    (
        Predicate::CustomOpHeaderScratchSpaceVal,
        Check::ScratchAllOrNone,
    ),
];

/// Seed 000 `dbg_is_valid_custom_op_payload` (0x129c610), in order.
const PAYLOAD_CHAIN: &[(Predicate, Check)] = &[
    (Predicate::ValidOpcode, Check::Roster),
    (Predicate::InstWordLen, Check::Tag),
    (Predicate::HasValidNeuronEvents, Check::Events),
    (Predicate::IsCustomOpPayloadOpcode, Check::OpcodeEquals),
    (
        Predicate::CustomOpPayloadReservedZero,
        Check::ValidatorReservedZero,
    ),
];

/// Evaluate one check; on failure return (offset, value) of the offending byte.
fn evaluate(check: Check, rec: &Record, b: &[u8; 64], chip: Chip) -> Result<(), (usize, u8)> {
    match check {
        Check::Roster => {
            let op = byte_at(b, 0);
            if is_named_opcode(chip, op) {
                Ok(())
            } else {
                Err((0, op))
            }
        }
        Check::Tag => rec.regions().try_for_each(|reg| match reg.role {
            Role::Tag(want) if byte_at(b, reg.start) != want => {
                Err((reg.start, byte_at(b, reg.start)))
            }
            _ => Ok(()),
        }),
        Check::Events => rec.regions().try_for_each(|reg| match reg.role {
            Role::Live {
                domain: d @ (Domain::WaitMode | Domain::UpdateMode),
                ..
            } => {
                let value = le_value(slice(b, reg));
                if d.admits(value, chip) {
                    Ok(())
                } else {
                    Err((reg.start, byte_at(b, reg.start)))
                }
            }
            _ => Ok(()),
        }),
        Check::OpcodeEquals => {
            let op = byte_at(b, 0);
            if op == rec.opcode {
                Ok(())
            } else {
                Err((0, op))
            }
        }
        Check::ValidatorReservedZero => rec.regions().try_for_each(|reg| match reg.role {
            Role::Reserved(Guard::Validator) => match first_nonzero(b, reg) {
                Some(bad) => Err(bad),
                None => Ok(()),
            },
            _ => Ok(()),
        }),
        Check::ScratchAllOrNone => {
            let non_empty = rec
                .regions()
                .filter(|reg| matches!(reg.role, Role::Scratch { .. }))
                .any(|reg| first_nonzero(b, reg).is_some());
            if !non_empty {
                return Ok(());
            }
            rec.regions().try_for_each(|reg| match reg.role {
                Role::Scratch { required: true, .. } if first_nonzero(b, reg).is_none() => {
                    Err((reg.start, byte_at(b, reg.start)))
                }
                _ => Ok(()),
            })
        }
    }
}

/// Run a chain over the record of `opcode`, short-circuiting at the first failing predicate.
fn run_chain(
    chain: &[(Predicate, Check)],
    opcode: u8,
    b: &[u8; 64],
    chip: Chip,
) -> Result<(), Rejection> {
    let Some(rec) = record(opcode) else {
        // Unreachable with the static tables; report the opcode predicate rather than panic.
        return Err(Rejection {
            predicate: Predicate::ValidOpcode,
            offset: 0,
            value: byte_at(b, 0),
        });
    };
    for &(predicate, check) in chain {
        if let Err((offset, value)) = evaluate(check, rec, b, chip) {
            return Err(Rejection {
                predicate,
                offset,
                value,
            });
        }
    }
    Ok(())
}

/// Run the validator chain a record declares (None for records without one).
pub(crate) fn run_record_chain(rec: &Record, b: &[u8; 64], chip: Chip) -> Result<(), Rejection> {
    match rec.chain {
        Some(Chain::Header) => header_verdict(b, chip),
        Some(Chain::Payload) => payload_verdict(b, chip),
        None => Ok(()),
    }
}

/// `is_valid_custom_op_header` of `chip` (SPEC §3): the first failing predicate, or Ok.
pub fn header_verdict(b: &[u8; 64], chip: Chip) -> Result<(), Rejection> {
    run_chain(HEADER_CHAIN, 0x85, b, chip)
}

/// `is_valid_custom_op_payload` of `chip` (SPEC §4): the first failing predicate, or Ok.
pub fn payload_verdict(b: &[u8; 64], chip: Chip) -> Result<(), Rejection> {
    run_chain(PAYLOAD_CHAIN, 0x86, b, chip)
}

fn dbg_message(r: Rejection) -> String {
    format!("inst failed assertion check: '{}'", r.predicate_name())
}

/// The dbg twin of [`header_verdict`]: `inst failed assertion check: '<predicate>'`.
pub fn dbg_header_verdict(b: &[u8; 64], chip: Chip) -> Result<(), String> {
    header_verdict(b, chip).map_err(dbg_message)
}

/// The dbg twin of [`payload_verdict`].
pub fn dbg_payload_verdict(b: &[u8; 64], chip: Chip) -> Result<(), String> {
    payload_verdict(b, chip).map_err(dbg_message)
}
