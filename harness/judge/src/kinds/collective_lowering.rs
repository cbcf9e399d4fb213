//! Kind `collective_lowering`: core's lowering against the oracle's on generated IR (SPEC
//! §5.4), plus the issue-13 properties checked on core (no geometry on the wire, decoding
//! recovers the fields, determinism, minimal registries, the 0xD9+0xDA pairing of the emitted
//! stream in both parsers), all through [`Subject`]; then each subject under test that
//! declares `lower` against core on what that operation answers ([`judge_module`]). One input
//! is one case per generation (the judge's).
//!
//! Contract: [`compare`] never panics (a panic is a `Panic` divergence); its coverage key is
//! the generation and the first instruction's verdict (`v3 ok:d9+da`) or `diverged`; the
//! signature key is the class (`Property` for a failed property) and what differs (no index,
//! no values), so one bug deduplicates to one entry.

use super::kind::{CaseBudget, CaseDivergence, DescribedCase, Ran, TargetKind};
use crate::generation::Generation;
use crate::generators::lowering_module::{self, LoweringCase};
use crate::judge::nway::{Built, CaseInputs, Judge};
use crate::judge::pair::{guard, Pair};
use crate::judge::{Class, Divergence, Filed};
use crate::reach::Reach;
use crate::subjects::{
    hex, hex_pair, registry, Fault, IrInstruction, LocalSendRecv, LoweredModule, ModuleAnswer,
    Reference, Reply, StreamFail, Subject, Transfer,
};
use crate::targets::Target;
use std::collections::BTreeSet;
use std::fmt;

pub struct CollectiveLoweringKind;

impl TargetKind for CollectiveLoweringKind {
    fn run(&self, e: &Judge, t: Target, input: &[u8], _reach: Option<&mut Reach>) -> Ran {
        let (key, d) = compare(e, t, input);
        Ran::keyed(d, key, false)
    }

    /// 0xBF only from v3.
    fn about_every_generation(&self) -> bool {
        true
    }

    fn case_budget(&self) -> CaseBudget {
        CaseBudget::LoweringCases
    }

    fn case_inputs(
        &self,
        _t: Target,
        arch: Generation,
        inputs: &mut dyn Iterator<Item = &[u8]>,
    ) -> Option<CaseInputs> {
        Some(CaseInputs::Modules(
            inputs
                .map(|d| lowering_module::build_case(d, Some(arch)).insns)
                .collect(),
        ))
    }
}

/// Runs one case on the judge's reference pair, then on each subject under test that declares
/// `lower`: the coverage key and the divergences.
pub fn compare(e: &Judge, target: Target, data: &[u8]) -> (String, Vec<Divergence>) {
    let gen = e.arch();
    // In the gate, core is wrapped in its coverage recorder, which forwards `lower`.
    let (left, right) = e.references();
    let filed = DescribedCase::new(target, data, (left, right), ("core", "oracle"));
    // The module the subjects were asked ahead, else built here.
    let staged = match e.built() {
        Some(Built::Module(insns)) => Some(LoweringCase { gen, insns }),
        _ => None,
    };
    // The tests (debug builds) check it is this input's module.
    #[cfg(debug_assertions)]
    if let Some(s) = &staged {
        assert_eq!(
            s.insns,
            lowering_module::build_case(data, Some(gen)).insns,
            "the staged module of a {} case",
            target.name()
        );
    }
    let built = staged.unwrap_or_else(|| lowering_module::build_case(data, Some(gen)));
    match filed.guarded("collective_lowering", || {
        compare_case_on(left, right, &built)
    }) {
        Ok(o) => {
            let divs = e
                .judged_on(target)
                .filter_map(|x| judge_module(x, left, target, data, &built))
                .collect();
            (o.key, divs)
        }
        Err(d) => ("diverged".into(), vec![d]),
    }
}

fn answer_text(a: &Reply<ModuleAnswer>) -> String {
    match a {
        Err(f) => f.to_string(),
        Ok(ModuleAnswer::Rejected { instruction, name }) => {
            format!("rejects instruction [{instruction}] with {name}")
        }
        Ok(ModuleAnswer::Lowered(m)) => {
            let instrs: Vec<String> = m
                .instrs
                .iter()
                .enumerate()
                .map(|(i, l)| match l {
                    Ok(l) => format!("[{i}] records {:?} side {:?}", hexes(&l.records), l.side),
                    Err(e) => format!("[{i}] {}", e.name),
                })
                .collect();
            format!(
                "lowers {}; replica_groups {:?}; source_target_pairs {:?}; attributes {:?}",
                instrs.join("; "),
                m.replica_groups,
                m.source_target_pairs,
                m.attributes
            )
        }
    }
}

fn hexes(records: &[[u8; 64]]) -> Vec<String> {
    records.iter().map(|b| hex(b)).collect()
}

/// Subject `x` against `core` on what `lower` answers ([`Subject::lower_module`]): a fault,
/// another verdict, first rejection or record / side row / side-table diverges.
pub fn judge_module(
    x: &dyn Subject,
    core: &dyn Subject,
    target: Target,
    data: &[u8],
    case: &LoweringCase,
) -> Option<Divergence> {
    let guarded = |s: &dyn Subject| {
        guard(|| s.lower_module(&case.insns))
            .unwrap_or_else(|m| Err(Fault::Crash(format!("PANIC: {m}"))))
    };
    let (l, r) = (guarded(x), guarded(core));
    let (class, key): (Class, String) = match (&l, &r) {
        (Ok(a), Ok(b)) if a == b => return None,
        (Err(f), _) | (_, Err(f)) => {
            let c = Class::of_fault(f);
            (c, format!("lower:{}", c.name()))
        }
        (Ok(ModuleAnswer::Rejected { .. }), Ok(ModuleAnswer::Lowered(_))) => {
            (Class::UnderAccept, "lower:rejects".into())
        }
        (Ok(ModuleAnswer::Lowered(_)), Ok(ModuleAnswer::Rejected { name, .. })) => {
            (Class::OverAccept, format!("lower:accepts:{name}"))
        }
        (
            Ok(ModuleAnswer::Rejected { name: a, .. }),
            Ok(ModuleAnswer::Rejected { name: b, .. }),
        ) => (Class::SameVerdictDifferentReason, format!("lower:{b}:{a}")),
        (Ok(ModuleAnswer::Lowered(a)), Ok(ModuleAnswer::Lowered(b))) => {
            let what = if a
                .instrs
                .iter()
                .zip(&b.instrs)
                .any(|(x, y)| matches!((x, y), (Ok(x), Ok(y)) if x.records != y.records))
            {
                "records"
            } else if a.instrs != b.instrs {
                "side_refs"
            } else {
                "side_tables"
            };
            (Class::DifferentOutput, format!("lower:{what}"))
        }
    };
    let (ls, rs) = (answer_text(&l), answer_text(&r));
    let short = |a: &Reply<ModuleAnswer>| match a {
        Err(f) => f.to_string(),
        Ok(ModuleAnswer::Rejected { instruction, name }) => format!("err[{instruction}]:{name}"),
        Ok(ModuleAnswer::Lowered(_)) => "lowered".to_string(),
    };
    let case = &|| format!("{case:?}");
    let pair = Pair {
        left: x,
        right: core,
        target,
        input: data,
        case,
    };
    pair.div(class, key, short(&l), short(&r), ls, rs)
}

/// What a case did when core and oracle agree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweringOutcome {
    pub key: String,
    /// Every instruction's verdict, in order (`ok:<opcodes>` or `err:<name>`).
    pub verdicts: Vec<String>,
}

/// One case from bytes ([`lowering_module::build_case`]).
pub fn collective_lowering_case(
    data: &[u8],
    gen: Option<Generation>,
) -> Result<LoweringOutcome, CaseDivergence> {
    let case = lowering_module::build_case(data, gen);
    let (core, oracle) = (registry::core_for(case.gen), registry::oracle_for(case.gen));
    compare_case_on(&*core, &*oracle, &case)
}

/// Geometry moved to other ranks (a bijection, so validity is kept).
fn moved(insn: &IrInstruction) -> Option<IrInstruction> {
    const FLIP: u32 = 0x8000_0000;
    match insn {
        IrInstruction::Collective(c) => {
            let mut d = c.clone();
            for g in &mut d.replica_groups {
                for r in g.iter_mut() {
                    *r ^= FLIP;
                }
            }
            for p in &mut d.source_target_pairs {
                *p = (p.0 ^ FLIP, p.1 ^ FLIP);
            }
            Some(IrInstruction::Collective(d))
        }
        IrInstruction::Transfer(t) => Some(IrInstruction::Transfer(Transfer {
            peer: t.peer ^ FLIP,
            ..t.clone()
        })),
        IrInstruction::LocalSendRecv(l) => Some(IrInstruction::LocalSendRecv(LocalSendRecv {
            peer: l.peer ^ FLIP,
            ..l.clone()
        })),
    }
}

/// Compares `left` with its reference `right` on a built case, then checks the properties
/// on `left`.
pub fn compare_case_on(
    left: &dyn Reference,
    right: &dyn Reference,
    case: &LoweringCase,
) -> Result<LoweringOutcome, CaseDivergence> {
    let diverge = |f: Filed| CaseDivergence {
        filed: Box::new(f),
        case: format!("{case:?}"),
    };
    let (ln, rn) = (left.name(), right.name());
    let output = Class::DifferentOutput;
    let (l, r) = match (left.lower(&case.insns), right.lower(&case.insns)) {
        (Ok(l), Ok(r)) => (l, r),
        (l, r) => {
            let fault = l.as_ref().err().or(r.as_ref().err());
            let class = fault.map_or(Class::Crash, Class::of_fault);
            let show = |x: &Reply<LoweredModule>| match x {
                Ok(_) => "answered".to_string(),
                Err(f) => f.to_string(),
            };
            let text = format!("lower: {ln} {}, {rn} {}", show(&l), show(&r));
            return Err(diverge(mismatch(class, "lower", text)));
        }
    };
    if l.instrs.len() != case.insns.len() || r.instrs.len() != case.insns.len() {
        return Err(diverge(mismatch(
            Class::Protocol,
            "lower",
            format!(
                "lower: {} instructions asked, {ln} answered {}, {rn} {}",
                case.insns.len(),
                l.instrs.len(),
                r.instrs.len()
            ),
        )));
    }
    let mut verdicts = Vec::with_capacity(case.insns.len());
    for (i, (insn, (lv, rv))) in case
        .insns
        .iter()
        .zip(l.instrs.iter().zip(&r.instrs))
        .enumerate()
    {
        let f = match (lv, rv) {
            (Err(e), Err(r)) if e.name == r.name => {
                verdicts.push(["err:", e.name].concat());
                continue;
            }
            (Err(e), Err(r)) => mismatch(
                Class::SameVerdictDifferentReason,
                &format!("[#] {ln} rejects with {}", e.name),
                format!("[{i}] {ln} rejects with {}, {rn} with {}", e.name, r.name),
            ),
            (Err(e), Ok(_)) => mismatch(
                Class::UnderAccept,
                &format!("[#] {ln} rejects with {}", e.name),
                format!("[{i}] {ln} rejects with {}, {rn} accepts", e.message),
            ),
            (Ok(_), Err(r)) => mismatch(
                Class::OverAccept,
                &format!("[#] {ln} accepts"),
                format!("[{i}] {ln} accepts, {rn} rejects with {}", r.message),
            ),
            (Ok(a), Ok(b)) if a.records != b.records => {
                let (x, y) = (hexes(&a.records), hexes(&b.records));
                let d = format!("[{i}] records: {ln} {x:?}, {rn} {y:?}");
                mismatch(output, "[#] records", d)
            }
            (Ok(a), Ok(b)) if a.side != b.side => {
                let d = format!("[{i}] side refs: {ln} {:?}, {rn} {:?}", a.side, b.side);
                mismatch(output, "[#] side refs", d)
            }
            (Ok(a), Ok(_)) => {
                check_decoded(left, right, insn, &a.records, i).map_err(diverge)?;
                verdicts.push(ok_verdict(&a.records));
                continue;
            }
        };
        return Err(diverge(f));
    }
    // The side-tables themselves.
    if !same_tables(&l, &r) {
        return Err(diverge(mismatch(
            output,
            "side-tables",
            format!(
                "side-tables: {ln} {:?}/{:?}/{:?}, {rn} {:?}/{:?}/{:?}",
                l.replica_groups,
                l.source_target_pairs,
                l.attributes,
                r.replica_groups,
                r.source_target_pairs,
                r.attributes
            ),
        )));
    }
    check_properties(left, right, case, &l).map_err(diverge)?;
    Ok(LoweringOutcome {
        key: format!(
            "{} {}",
            case.gen.name(),
            verdicts.first().map_or("empty", String::as_str)
        ),
        verdicts,
    })
}

/// `ok:<opcodes>` of a lowered instruction (built without the formatting machinery: one per
/// lowered instruction of every case).
fn ok_verdict(records: &[[u8; 64]]) -> String {
    let mut v = String::with_capacity(3 + 3 * records.len());
    v.push_str("ok:");
    for (j, b) in records.iter().enumerate() {
        if j > 0 {
            v.push('+');
        }
        v.extend(hex_pair(b[0]).map(char::from));
    }
    v
}

/// A mismatch of `class`, keyed `<class>:<what>`.
fn mismatch(class: Class, what: &str, text: String) -> Filed {
    Filed::new(class, format!("{}:{what}", class.name()), text)
}

/// A failed property of `left`'s lowering (issue 13 §5): a different output keyed
/// `Property:<what>`.
fn failed(what: &str, text: String) -> Filed {
    Filed::new(Class::DifferentOutput, format!("Property:{what}"), text)
}

fn property(what: &str, detail: impl fmt::Display) -> Filed {
    failed(what, format!("{what}: {detail}"))
}

fn faulted(who: &dyn Reference, op: &str, f: &Fault) -> Filed {
    mismatch(Class::of_fault(f), op, format!("{op}: {} {f}", who.name()))
}

/// Instruction `i`'s `records` decode on both sides, and on `left` give back its wire fields.
fn check_decoded(
    left: &dyn Reference,
    right: &dyn Reference,
    insn: &IrInstruction,
    records: &[[u8; 64]],
    i: usize,
) -> Result<(), Filed> {
    let at = |f: Filed, property: bool| {
        let prefix = if property { "Property" } else { f.class.name() };
        let text = format!("[{i}] decode: {}", f.text);
        Filed::new(f.class, format!("{prefix}:[#] decode"), text)
    };
    left.check_lowered(insn, records)
        .map_err(|f| at(faulted(left, "check_lowered", &f), false))?
        .map_err(|d| at(failed("", d), true))?;
    for b in records {
        right
            .decode(b)
            .map_err(|f| at(faulted(right, "decode", &f), false))?
            .map_err(|e| {
                let what = format!("{} cannot decode record {}", right.name(), hex(b));
                at(property(&what, format!("{e:?}")), true)
            })?;
    }
    Ok(())
}

/// Whether two lowerings give the same answer (error messages not compared).
fn same_lowering(a: &LoweredModule, b: &LoweredModule) -> bool {
    a.instrs.len() == b.instrs.len()
        && a.instrs.iter().zip(&b.instrs).all(|(x, y)| match (x, y) {
            (Ok(x), Ok(y)) => x == y,
            (Err(x), Err(y)) => x.name == y.name,
            _ => false,
        })
        && same_tables(a, b)
}

fn same_tables(a: &LoweredModule, b: &LoweredModule) -> bool {
    a.replica_groups == b.replica_groups
        && a.source_target_pairs == b.source_target_pairs
        && a.attributes == b.attributes
}

/// Properties of `left`'s lowering `first` (issue 13 §5) on a case it and `right` agree on.
fn check_properties(
    left: &dyn Reference,
    right: &dyn Reference,
    case: &LoweringCase,
    first: &LoweredModule,
) -> Result<(), Filed> {
    let lower = |insns: &[IrInstruction]| left.lower(insns).map_err(|f| faulted(left, "lower", &f));
    // Determinism: lowering again gives what the first lowering answered
    // (the same records, side rows and tables; the same error names).
    if !same_lowering(&lower(&case.insns)?, first) {
        let what = "lowering the same case twice differs";
        return Err(failed(what, what.into()));
    }
    // Minimal registries: every entry is needed by some instruction.
    let used: BTreeSet<(&str, usize)> = first
        .instrs
        .iter()
        .flatten()
        .flat_map(|l| l.side.iter().copied())
        .collect();
    let all: BTreeSet<(&str, usize)> = (0..first.replica_groups.len())
        .map(|i| ("replica_groups", i))
        .chain((0..first.source_target_pairs.len()).map(|i| ("source_target_pairs", i)))
        .chain((0..first.attributes.len()).map(|i| ("attributes", i)))
        .collect();
    if used != all {
        let text = format!("registry entries {all:?}, needed {used:?}");
        return Err(failed("registry entries", text));
    }
    // No geometry on the wire: each accepted instruction with its ranks moved
    // lowers to the same records and to other side-tables (unless it has none).
    for insn in case.insns.iter() {
        let m1 = lower(std::slice::from_ref(insn))?;
        let Some(Ok(l1)) = m1.instrs.first() else {
            continue;
        };
        let Some(other) = moved(insn) else { continue };
        let m2 = lower(std::slice::from_ref(&other))?;
        let l2 = match m2.instrs.first() {
            Some(Ok(l2)) => l2,
            Some(Err(e)) => return Err(property("moved geometry rejected", &e.message)),
            None => {
                let f = Fault::Protocol("no answer for the one instruction asked".into());
                return Err(faulted(left, "lower", &f));
            }
        };
        if l1.records != l2.records {
            return Err(property("geometry reaches the wire", format!("{insn:?}")));
        }
        if same_tables(&m1, &m2) != l1.side.is_empty() {
            let what = "moved geometry leaves the side-tables as they were";
            return Err(property(what, format!("{insn:?}")));
        }
    }
    // The emitted stream parses, in both parsers, into one item per record
    // except that each 0xDA joins its 0xD9.
    let mut bytes = Vec::with_capacity(64 * case.insns.len() * 2);
    for l in first.instrs.iter().flatten() {
        l.records.iter().for_each(|r| bytes.extend_from_slice(r));
    }
    let records = bytes.len() / 64;
    let legs = bytes.chunks_exact(64).filter(|b| b[0] == 0xDA).count();
    let expected = records - legs;
    let parse = |s: &dyn Reference| {
        s.parse_bundle_stream(&bytes)
            .map_err(|f| faulted(s, "parse_bundle_stream", &f))?
            .map_err(|e| {
                property(
                    &format!("{} stream parser rejects the emitted stream", s.name()),
                    e,
                )
            })
    };
    let (left_items, right_items) = (parse(left)?, parse(right)?);
    if left_items != right_items || left_items.len() != expected {
        return Err(property(
            "stream items",
            format!(
                "{} {left_items:?}, {} {right_items:?}, expected {expected}",
                left.name(),
                right.name()
            ),
        ));
    }
    check_leg_faults(left, right, &bytes)
}

/// The pairing's error paths (SPEC DL-12): `bytes` with its first 0xDA's trio changed, the
/// 0xDA dropped, repeated, or moved before its 0xD9; both parsers must agree.
fn check_leg_faults(
    left: &dyn Reference,
    right: &dyn Reference,
    bytes: &[u8],
) -> Result<(), Filed> {
    let records = bytes.len() / 64;
    let Some(k) = bytes.chunks_exact(64).position(|b| b[0] == 0xDA) else {
        return Ok(());
    };
    let (at, next) = (64 * k, 64 * (k + 1));
    let mut variants: Vec<(&str, Vec<u8>)> = Vec::with_capacity(4);
    let mut v = bytes.to_vec();
    // One of the three trio bytes +0x0C..=+0x0E (S003 §3.2), by record count.
    v[at + 0x0C + records % 3] ^= 0x01;
    variants.push(("trio byte changed", v));
    variants.push(("leg dropped", [&bytes[..at], &bytes[next..]].concat()));
    variants.push(("leg repeated", [&bytes[..next], &bytes[at..]].concat()));
    if k > 0 {
        let mut v = bytes.to_vec();
        v[at - 64..next].rotate_left(64);
        variants.push(("leg before its 0xD9", v));
    }
    let count = |s: &dyn Reference, bytes: &[u8]| -> Result<Result<usize, StreamFail>, Filed> {
        Ok(s.parse_bundle_stream(bytes)
            .map_err(|f| faulted(s, "parse_bundle_stream", &f))?
            .map(|items| items.len()))
    };
    for (what, v) in variants {
        let (l, r) = (count(left, &v)?, count(right, &v)?);
        if l != r {
            let (ln, rn) = (left.name(), right.name());
            return Err(failed(
                &format!("bundle stream with {what}"),
                format!("bundle stream with {what} (record {k}): {ln} {l:?}, {rn} {r:?}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod recorded {
    use super::*;

    #[test]
    fn the_gate_judge_lowers_through_its_recorded_core() {
        let (e, _key) = Judge::open(&[], Generation::V3)
            .expect("reference pair")
            .recorded();
        let t = Target::named("collective_lowering");
        let data = crate::generators::SplitMix64(5).bytes(300);
        let (key, d) = compare(&e, t, &data);
        assert!(d.is_empty(), "{d:?}");
        assert!(key.starts_with("v3 "), "{key}");
    }
}
