//! The two custom-op validators (SPEC §3, §4) as short-circuit chains of byte-range predicates
//! evaluated over the record's region table.

use crate::errors::{Predicate, Rejection};
use crate::regions::{
    byte_at, first_nonzero, le_value, record, slice, Chain, Domain, Guard, Record, Region, Role,
};
use crate::roster::{is_named_opcode, Chip};
use std::sync::OnceLock;

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

/// A record's regions sorted by what the chains look at, in table order (so the first
/// offending byte is the table walk's): built once from [`record`], never written by hand.
struct Plan {
    opcode: u8,
    /// `Tag` regions: (offset, required value).
    tags: Vec<(usize, u8)>,
    /// Live wait-mode / update-mode regions.
    events: Vec<(Region, Domain)>,
    /// `Reserved(Validator)` regions.
    reserved: Vec<Region>,
    /// Scratch regions with their `required` flag.
    scratch: Vec<(Region, bool)>,
}

impl Plan {
    fn of(rec: &Record) -> Plan {
        let mut p = Plan {
            opcode: rec.opcode,
            tags: Vec::new(),
            events: Vec::new(),
            reserved: Vec::new(),
            scratch: Vec::new(),
        };
        for reg in rec.regions() {
            match reg.role {
                Role::Tag(want) => p.tags.push((reg.start, want)),
                Role::Live {
                    domain: d @ (Domain::WaitMode | Domain::UpdateMode),
                    ..
                } => p.events.push((*reg, d)),
                Role::Reserved(Guard::Validator) => p.reserved.push(*reg),
                Role::Scratch { required, .. } => p.scratch.push((*reg, required)),
                _ => {}
            }
        }
        p
    }
}

/// The plans of the two validated records (0x85, 0x86); `None` if a table lacks one.
fn plans() -> &'static [Option<Plan>; 2] {
    static PLANS: OnceLock<[Option<Plan>; 2]> = OnceLock::new();
    PLANS.get_or_init(|| [record(0x85).map(Plan::of), record(0x86).map(Plan::of)])
}

/// Evaluate one check; on failure return (offset, value) of the offending byte.
fn evaluate(check: Check, plan: &Plan, b: &[u8; 64], chip: Chip) -> Result<(), (usize, u8)> {
    match check {
        Check::Roster => {
            let op = byte_at(b, 0);
            if is_named_opcode(chip, op) {
                Ok(())
            } else {
                Err((0, op))
            }
        }
        Check::Tag => plan.tags.iter().try_for_each(|&(at, want)| {
            if byte_at(b, at) == want {
                Ok(())
            } else {
                Err((at, byte_at(b, at)))
            }
        }),
        Check::Events => plan.events.iter().try_for_each(|(reg, d)| {
            if d.admits(le_value(slice(b, reg)), chip) {
                Ok(())
            } else {
                Err((reg.start, byte_at(b, reg.start)))
            }
        }),
        Check::OpcodeEquals => {
            let op = byte_at(b, 0);
            if op == plan.opcode {
                Ok(())
            } else {
                Err((0, op))
            }
        }
        Check::ValidatorReservedZero => plan
            .reserved
            .iter()
            .try_for_each(|reg| first_nonzero(b, reg).map_or(Ok(()), Err)),
        Check::ScratchAllOrNone => {
            let non_empty = plan
                .scratch
                .iter()
                .any(|(reg, _)| first_nonzero(b, reg).is_some());
            if !non_empty {
                return Ok(());
            }
            plan.scratch.iter().try_for_each(|&(reg, required)| {
                if required && first_nonzero(b, &reg).is_none() {
                    Err((reg.start, byte_at(b, reg.start)))
                } else {
                    Ok(())
                }
            })
        }
    }
}

/// Run a chain over the record of `opcode` (0x85 or 0x86), short-circuiting at the first
/// failing predicate.
fn run_chain(
    chain: &[(Predicate, Check)],
    opcode: u8,
    b: &[u8; 64],
    chip: Chip,
) -> Result<(), Rejection> {
    let plan = match opcode {
        0x85 => plans()[0].as_ref(),
        0x86 => plans()[1].as_ref(),
        _ => None,
    };
    let Some(plan) = plan else {
        // Unreachable with the static tables; report the opcode predicate rather than panic.
        return Err(Rejection {
            predicate: Predicate::ValidOpcode,
            offset: 0,
            value: byte_at(b, 0),
        });
    };
    for &(predicate, check) in chain {
        if let Err((offset, value)) = evaluate(check, plan, b, chip) {
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
