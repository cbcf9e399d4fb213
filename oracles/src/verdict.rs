//! The two custom-op validators (SPEC §3, §4) as short-circuit chains of byte-range predicates
//! evaluated over the record's region table.

use crate::errors::{Predicate, Rejection};
use crate::regions::{
    byte_at, first_nonzero, le_value, record, slice, Chain, Domain, Guard, Record, Region, Role,
};
use crate::roster::{is_named_opcode, Generation, CHIPS};
use std::sync::OnceLock;

/// How a predicate is evaluated over a region table.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// byte\[0\] is in the chip's opcode enum.
    Roster,
    /// The `Tag` region holds its value.
    Tag,
    /// The wait-mode and update-mode regions hold admitted values (ids are not checked).
    Events,
    /// byte\[0\] is the record's opcode.
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

/// One byte read by a byte-local check (`Roster`, `Tag`, one-byte `Events`, `OpcodeEquals`):
/// the check's index in its chain, the offset, and the values it admits there (a 256-entry
/// table built from the oracle's own roster and domains).
struct Probe {
    check: usize,
    at: u8,
    admits: [bool; 256],
}

/// A chain compiled for one chip from its [`Plan`], so a bundle costs a few table lookups and
/// one masked OR instead of roster scans and region walks. Byte-local checks become
/// [`Probe`]s, the `ValidatorReservedZero` check a byte mask; a check that does not compile
/// (`ScratchAllOrNone`, an event field wider than one byte, an offset outside the bundle,
/// reserved regions not in ascending order) is walked with [`evaluate`]. The first failing
/// check and its first offending byte are [`evaluate`]'s: probes keep chain and read order,
/// the mask is searched in ascending offset order, which is the regions' order.
struct Compiled {
    /// In chain order, and within a check in [`evaluate`]'s read order.
    probes: Vec<Probe>,
    /// The `ValidatorReservedZero` check's index and its bytes (0xFF: must be zero).
    zero: Option<(usize, [u8; 64])>,
    /// Indices of the checks walked with [`evaluate`], ascending.
    walked: Vec<usize>,
    /// The lowest index of a check that is not a probe (the mask's or a walked one's); a probe
    /// failing before it decides the verdict alone.
    probes_decide_below: usize,
}

impl Compiled {
    fn of(chain: &[(Predicate, Check)], plan: &Plan, chip: Generation) -> Compiled {
        let mut c = Compiled {
            probes: Vec::new(),
            zero: None,
            walked: Vec::new(),
            probes_decide_below: 0,
        };
        for (k, &(_, check)) in chain.iter().enumerate() {
            let compiled = match check {
                Check::ValidatorReservedZero if c.zero.is_none() => {
                    zero_mask(plan).map(|mask| c.zero = Some((k, mask)))
                }
                _ => probes(k, check, plan, chip).map(|p| c.probes.extend(p)),
            };
            if compiled.is_none() {
                c.walked.push(k);
            }
        }
        c.probes_decide_below = c
            .zero
            .iter()
            .map(|&(k, _)| k)
            .chain(c.walked.first().copied())
            .min()
            .unwrap_or(usize::MAX);
        c
    }

    /// Run `chain` (the one this was compiled from) on `b`: the first failing check's index
    /// and its (offset, value), or None.
    fn run(
        &self,
        chain: &[(Predicate, Check)],
        plan: &Plan,
        b: &[u8; 64],
        chip: Generation,
    ) -> Option<(usize, (usize, u8))> {
        // The first probe that refuses, then the mask if its check comes earlier.
        let mut first = self.probes.iter().find_map(|p| {
            let v = b[usize::from(p.at & 63)];
            (!p.admits[usize::from(v)]).then_some((p.check, (usize::from(p.at), v)))
        });
        // Most refused bundles end here (a probe of the chain's head refuses).
        if first.is_some_and(|(f, _)| f < self.probes_decide_below) {
            return first;
        }
        if let Some((k, mask)) = self.zero {
            if first.is_none_or(|(f, _)| k < f) {
                let hit = mask.iter().zip(b).fold(0u8, |acc, (m, x)| acc | (m & x));
                if hit != 0 {
                    first = mask
                        .iter()
                        .zip(b)
                        .position(|(m, x)| m & x != 0)
                        .map(|at| (k, (at, byte_at(b, at))));
                }
            }
        }
        // Walked checks before it, in chain order.
        for &k in &self.walked {
            if first.is_some_and(|(f, _)| f < k) {
                break;
            }
            if let Some(&(_, check)) = chain.get(k) {
                if let Err(bad) = evaluate(check, plan, b, chip) {
                    return Some((k, bad));
                }
            }
        }
        first
    }
}

/// The probes of byte-local check `check` (index `k`), or None if it is not byte-local.
fn probes(k: usize, check: Check, plan: &Plan, chip: Generation) -> Option<Vec<Probe>> {
    let probe = |at: usize, keep: &dyn Fn(u8) -> bool| {
        let at = u8::try_from(at).ok().filter(|&at| at < 64)?;
        let mut admits = [false; 256];
        for (v, ok) in (0..=255u8).zip(admits.iter_mut()) {
            *ok = keep(v);
        }
        Some(Probe {
            check: k,
            at,
            admits,
        })
    };
    match check {
        Check::Roster => Some(vec![probe(0, &|v| is_named_opcode(chip, v))?]),
        Check::Tag => plan
            .tags
            .iter()
            .map(|&(at, want)| probe(at, &|v| v == want))
            .collect(),
        Check::Events => plan
            .events
            .iter()
            .map(|&(reg, d)| {
                if reg.len == 1 {
                    probe(reg.start, &|v| d.admits(u64::from(v), chip))
                } else {
                    None
                }
            })
            .collect(),
        Check::OpcodeEquals => Some(vec![probe(0, &|v| v == plan.opcode)?]),
        Check::ValidatorReservedZero | Check::ScratchAllOrNone => None,
    }
}

/// The plan's `Reserved(Validator)` bytes as a mask, if they lie in the bundle and ascend in
/// region order (so the lowest set byte is [`evaluate`]'s first offending byte).
fn zero_mask(plan: &Plan) -> Option<[u8; 64]> {
    let mut mask = [0u8; 64];
    let mut next = 0usize;
    for reg in &plan.reserved {
        let end = reg.start.checked_add(reg.len).filter(|&e| e <= 64)?;
        if reg.start < next {
            return None;
        }
        next = end;
        mask.get_mut(reg.start..end)?.fill(0xFF);
    }
    Some(mask)
}

/// One validated record: its chain, its plan, and the chain compiled for each chip.
struct Validator {
    chain: &'static [(Predicate, Check)],
    plan: Plan,
    /// At index `chip as usize`: that chip and the chain compiled for it.
    compiled: Vec<(Generation, Compiled)>,
}

impl Validator {
    fn of(opcode: u8, chain: &'static [(Predicate, Check)]) -> Option<Validator> {
        let plan = Plan::of(record(opcode)?);
        let mut chips: Vec<Generation> = CHIPS.iter().map(|&(_, chip)| chip).collect();
        chips.sort_by_key(|&chip| chip as usize);
        let compiled = chips
            .into_iter()
            .map(|chip| (chip, Compiled::of(chain, &plan, chip)))
            .collect();
        Some(Validator {
            chain,
            plan,
            compiled,
        })
    }

    /// The chain walked with [`evaluate`] only (a chip without a compiled chain; the tests'
    /// reference).
    fn walk(&self, b: &[u8; 64], chip: Generation) -> Option<(usize, (usize, u8))> {
        self.chain
            .iter()
            .enumerate()
            .find_map(|(k, &(_, check))| evaluate(check, &self.plan, b, chip).err().map(|e| (k, e)))
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
fn evaluate(check: Check, plan: &Plan, b: &[u8; 64], chip: Generation) -> Result<(), (usize, u8)> {
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
    /// The chain compiled for `chip` (None: walked with [`evaluate`]).
    compiled: Option<&'static Compiled>,
    chip: Generation,
}

impl Resolved {
    pub(crate) fn of(which: usize, chip: Generation) -> Resolved {
        let validator = validators().get(which).and_then(Option::as_ref);
        let compiled = validator.and_then(|v| {
            v.compiled
                .get(chip as usize)
                .filter(|(c, _)| *c == chip)
                .map(|(_, compiled)| compiled)
        });
        Resolved {
            validator,
            compiled,
            chip,
        }
    }

    /// Run the chain on `b`: the first failing predicate and its offending byte, or Ok.
    pub(crate) fn run(&self, b: &[u8; 64]) -> Result<(), Rejection> {
        let Some(v) = self.validator else {
            // Unreachable with the static tables; report the opcode predicate rather than panic.
            return Err(Rejection {
                predicate: Predicate::ValidOpcode,
                offset: 0,
                value: byte_at(b, 0),
            });
        };
        let failed = match self.compiled {
            Some(compiled) => compiled.run(v.chain, &v.plan, b, self.chip),
            None => v.walk(b, self.chip),
        };
        match failed {
            None => Ok(()),
            Some((k, (offset, value))) => Err(Rejection {
                // The index comes from the chain; the fallback only keeps this total.
                predicate: v.chain.get(k).map_or(Predicate::ValidOpcode, |&(p, _)| p),
                offset,
                value,
            }),
        }
    }
}

/// Run validator `which` (0: header, 1: payload) on `chip`, short-circuiting at the first
/// failing predicate of its chain.
fn run_chain(which: usize, b: &[u8; 64], chip: Generation) -> Result<(), Rejection> {
    Resolved::of(which, chip).run(b)
}

/// Run the validator chain a record declares (None for records without one).
pub(crate) fn run_record_chain(
    rec: &Record,
    b: &[u8; 64],
    chip: Generation,
) -> Result<(), Rejection> {
    match rec.chain {
        Some(Chain::Header) => header_verdict(b, chip),
        Some(Chain::Payload) => payload_verdict(b, chip),
        None => Ok(()),
    }
}

/// `is_valid_custom_op_header` of `chip` (SPEC §3): the first failing predicate, or Ok.
pub fn header_verdict(b: &[u8; 64], chip: Generation) -> Result<(), Rejection> {
    run_chain(0, b, chip)
}

/// `is_valid_custom_op_payload` of `chip` (SPEC §4): the first failing predicate, or Ok.
pub fn payload_verdict(b: &[u8; 64], chip: Generation) -> Result<(), Rejection> {
    run_chain(1, b, chip)
}

fn dbg_message(r: Rejection) -> String {
    format!("inst failed assertion check: '{}'", r.predicate_name())
}

/// The dbg twin of [`header_verdict`]: `inst failed assertion check: '<predicate>'`.
pub fn dbg_header_verdict(b: &[u8; 64], chip: Generation) -> Result<(), String> {
    header_verdict(b, chip).map_err(dbg_message)
}

/// The dbg twin of [`payload_verdict`].
pub fn dbg_payload_verdict(b: &[u8; 64], chip: Generation) -> Result<(), String> {
    payload_verdict(b, chip).map_err(dbg_message)
}

/// The harness's one PRNG (`generators::SplitMix64`), included as a file for
/// the tests (the oracle depends on nothing).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../harness/generators/src/generators/rng.rs"]
mod test_rng;

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain walked with [`evaluate`] only: the reading the compiled chain must reproduce.
    fn walked(which: usize, b: &[u8; 64], chip: Generation) -> Result<(), Rejection> {
        let v = validators()[which].as_ref().expect("validator");
        match v.walk(b, chip) {
            None => Ok(()),
            Some((k, (offset, value))) => Err(Rejection {
                predicate: v.chain[k].0,
                offset,
                value,
            }),
        }
    }

    /// A bundle the walked chain accepts on `chip`: the record's opcode, its tags, and each
    /// one-byte event field at its first admitted value (found by trying them all).
    fn accepted(which: usize, chip: Generation) -> [u8; 64] {
        let v = validators()[which].as_ref().expect("validator");
        let mut b = [0u8; 64];
        b[0] = v.plan.opcode;
        for &(at, want) in &v.plan.tags {
            b[at] = want;
        }
        for &(reg, d) in &v.plan.events {
            b[reg.start] = (0..=255u8)
                .find(|&x| d.admits(u64::from(x), chip))
                .expect("an admitted event value");
        }
        assert_eq!(walked(which, &b, chip), Ok(()), "{which} {chip:?}");
        b
    }

    #[test]
    fn every_check_but_scratch_compiles() {
        for v in validators().iter().map(|v| v.as_ref().expect("validator")) {
            for (chip, c) in &v.compiled {
                let scratch: Vec<usize> = (0..v.chain.len())
                    .filter(|&k| matches!(v.chain[k].1, Check::ScratchAllOrNone))
                    .collect();
                assert_eq!(c.walked, scratch, "{chip:?}");
                assert!(c.zero.is_some(), "{chip:?}");
            }
            let chips: Vec<Generation> = v.compiled.iter().map(|(c, _)| *c).collect();
            assert_eq!(
                chips,
                [
                    Generation::Sunda,
                    Generation::Cayman,
                    Generation::Mariana,
                    Generation::Maverick
                ]
            );
        }
    }

    /// Compiled and walked chains agree (predicate, offset, value) on every single-byte change
    /// of an accepted bundle and on pseudo-random two- and many-byte changes, every chip.
    #[test]
    fn compiled_chain_is_the_walked_chain() {
        let mut rng = super::test_rng::SplitMix64(0x9E37_79B9_7F4A_7C15);
        let mut next = move || rng.next_u64();
        let mut refused = 0usize;
        for &(_, chip) in CHIPS {
            for which in 0..2 {
                let base = accepted(which, chip);
                let mut check = |b: &[u8; 64]| {
                    let want = walked(which, b, chip);
                    refused += usize::from(want.is_err());
                    assert_eq!(run_chain(which, b, chip), want, "{which} {chip:?} {b:02x?}");
                };
                check(&base);
                for at in 0..64 {
                    for x in 0..=255u8 {
                        let mut b = base;
                        b[at] = x;
                        check(&b);
                    }
                }
                for _ in 0..20_000 {
                    let mut b = base;
                    for _ in 0..(next() % 4 + 1) {
                        let r = next();
                        b[(r % 64) as usize] = (r >> 8) as u8;
                    }
                    check(&b);
                    let mut r = [0u8; 64];
                    r.iter_mut().for_each(|x| *x = next() as u8);
                    check(&r);
                }
            }
        }
        assert!(refused > 100_000, "{refused}");
    }
}
