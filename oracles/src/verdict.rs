//! The two custom-op validators (SPEC §3, §4) as short-circuit chains of byte-range predicates
//! evaluated over the record's region table.

use crate::errors::{Predicate, Rejection};
use crate::regions::{
    byte_at, first_nonzero, le_value, record, slice, Chain, Domain, Guard, Record, Region, Role,
};
use crate::roster::{is_named_opcode, Chip, CHIPS};
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

/// Byte-local admission of one validator on one chip, compiled once from its [`Plan`]: the
/// values each byte a byte-local check reads may hold (`Roster`, `Tag`, one-byte `Events`,
/// `OpcodeEquals`, intersected per byte) and the ranges `ValidatorReservedZero` wants zero.
/// A bundle it admits passes every byte-local check of the chain, so only the other checks
/// (`ScratchAllOrNone`) are left to walk; a bundle it refuses walks the whole chain, which names
/// the first failing predicate and byte exactly as before.
struct Admission {
    /// (offset < 64, admitted values indexed by byte value).
    bytes: Vec<(u8, [bool; 256])>,
    /// Offsets (< 64) of the bytes that must be zero.
    zero: Vec<u8>,
}

impl Admission {
    /// Compile `chain` over `plan` for `chip`; None when a check is not byte-local after all
    /// (an event field wider than one byte, an offset outside the bundle): then the chain is
    /// always walked.
    fn compile(chain: &[(Predicate, Check)], plan: &Plan, chip: Chip) -> Option<Admission> {
        let mut a = Admission {
            bytes: Vec::new(),
            zero: Vec::new(),
        };
        for &(_, check) in chain {
            match check {
                Check::Roster => a.restrict(0, |v| is_named_opcode(chip, v))?,
                Check::Tag => {
                    for &(at, want) in &plan.tags {
                        a.restrict(at, |v| v == want)?;
                    }
                }
                Check::Events => {
                    for &(reg, d) in &plan.events {
                        if reg.len != 1 {
                            return None;
                        }
                        a.restrict(reg.start, |v| d.admits(u64::from(v), chip))?;
                    }
                }
                Check::OpcodeEquals => a.restrict(0, |v| v == plan.opcode)?,
                Check::ValidatorReservedZero => {
                    for reg in &plan.reserved {
                        let end = reg.start.checked_add(reg.len).filter(|&e| e <= 64)?;
                        for at in reg.start..end {
                            a.zero.push(u8::try_from(at).ok()?);
                        }
                    }
                }
                Check::ScratchAllOrNone => {}
            }
        }
        Some(a)
    }

    /// Intersect the values admitted at `at` with `keep`.
    fn restrict(&mut self, at: usize, keep: impl Fn(u8) -> bool) -> Option<()> {
        let at = u8::try_from(at).ok().filter(|&at| at < 64)?;
        let i = match self.bytes.iter().position(|&(o, _)| o == at) {
            Some(i) => i,
            None => {
                self.bytes.push((at, [true; 256]));
                self.bytes.len() - 1
            }
        };
        let (_, table) = self.bytes.get_mut(i)?;
        for (v, ok) in (0..=255u8).zip(table.iter_mut()) {
            *ok = *ok && keep(v);
        }
        Some(())
    }

    /// Does `b` pass every byte-local check? (Offsets are below 64 by construction; `& 63`
    /// only lets the compiler see it.)
    fn admits(&self, b: &[u8; 64]) -> bool {
        let at = |o: u8| b[usize::from(o & 63)];
        self.bytes
            .iter()
            .all(|(o, table)| table[usize::from(at(*o))])
            && self.zero.iter().fold(0u8, |acc, &o| acc | at(o)) == 0
    }
}

impl Check {
    /// Is this check decided by [`Admission`] (when one compiled)?
    fn byte_local(self) -> bool {
        !matches!(self, Check::ScratchAllOrNone)
    }
}

/// One validated record: its chain, its plan, and the chain's admission on each chip of
/// [`CHIPS`] (same order).
struct Validator {
    chain: &'static [(Predicate, Check)],
    /// The checks of `chain` that are not byte-local, in chain order.
    rest: Vec<(Predicate, Check)>,
    plan: Plan,
    admission: Vec<Option<Admission>>,
}

impl Validator {
    fn of(opcode: u8, chain: &'static [(Predicate, Check)]) -> Option<Validator> {
        let plan = Plan::of(record(opcode)?);
        let admission = CHIPS
            .iter()
            .map(|&(_, chip)| Admission::compile(chain, &plan, chip))
            .collect();
        Some(Validator {
            chain,
            rest: chain
                .iter()
                .copied()
                .filter(|(_, check)| !check.byte_local())
                .collect(),
            plan,
            admission,
        })
    }
}

/// The validators of the two validated records: 0x85 with the header chain, 0x86 with the
/// payload chain; `None` if a table lacks one.
fn validators() -> &'static [Option<Validator>; 2] {
    static VALIDATORS: OnceLock<[Option<Validator>; 2]> = OnceLock::new();
    VALIDATORS.get_or_init(|| {
        [
            Validator::of(0x85, HEADER_CHAIN),
            Validator::of(0x86, PAYLOAD_CHAIN),
        ]
    })
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

/// Validator `which` (0: header, 1: payload) resolved for one chip: what [`run_chain`] looks up
/// per call, looked up once (the stream walk validates many bundles on one chip).
#[derive(Clone, Copy)]
pub(crate) struct Resolved {
    validator: Option<&'static Validator>,
    admission: Option<&'static Admission>,
    chip: Chip,
}

impl Resolved {
    pub(crate) fn of(which: usize, chip: Chip) -> Resolved {
        let validator = validators().get(which).and_then(Option::as_ref);
        let admission = validator.and_then(|v| {
            CHIPS
                .iter()
                .position(|&(_, c)| c == chip)
                .and_then(|i| v.admission.get(i))
                .and_then(Option::as_ref)
        });
        Resolved {
            validator,
            admission,
            chip,
        }
    }

    /// Run the chain on `b`, short-circuiting at the first failing predicate.
    pub(crate) fn run(&self, b: &[u8; 64]) -> Result<(), Rejection> {
        let Some(v) = self.validator else {
            // Unreachable with the static tables; report the opcode predicate rather than panic.
            return Err(Rejection {
                predicate: Predicate::ValidOpcode,
                offset: 0,
                value: byte_at(b, 0),
            });
        };
        let admitted = self.admission.is_some_and(|a| a.admits(b));
        // An admitted bundle passes every byte-local check: walk only the rest (none for the
        // payload chain), in chain order.
        let chain = if admitted { &v.rest[..] } else { v.chain };
        for &(predicate, check) in chain {
            if let Err((offset, value)) = evaluate(check, &v.plan, b, self.chip) {
                return Err(Rejection {
                    predicate,
                    offset,
                    value,
                });
            }
        }
        Ok(())
    }
}

/// Run validator `which` (0: header, 1: payload) on `chip`, short-circuiting at the first
/// failing predicate of its chain.
fn run_chain(which: usize, b: &[u8; 64], chip: Chip) -> Result<(), Rejection> {
    Resolved::of(which, chip).run(b)
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
    run_chain(0, b, chip)
}

/// `is_valid_custom_op_payload` of `chip` (SPEC §4): the first failing predicate, or Ok.
pub fn payload_verdict(b: &[u8; 64], chip: Chip) -> Result<(), Rejection> {
    run_chain(1, b, chip)
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
