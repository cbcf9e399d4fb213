//! Kind `collective_lowering`: core's lowering (`tpb_core::lower`) against
//! the oracle's (`tpb_oracle::Ledger`) on generated IR (SPEC §5.4; modules
//! from [`crate::generators::lowering_module`], translated by
//! [`crate::subjects::lowering_translate`]), plus the issue-13 properties
//! checked on core: no geometry on the wire, decoding recovers the fields,
//! determinism, minimal registries, and the 0xD9+0xDA pairing of the emitted
//! stream (both parsers). Then each subject under test that declares `lower`
//! is judged against core on what that operation answers
//! ([`judge_module`]: every instruction's records and side rows plus the
//! side-tables, or the first rejection's index and name).
//!
//! The generation is the engine's (`--arch`; the gate runs case i under the
//! (i mod 4)-th), so one input is one case per generation.
//!
//! Contract: [`compare`] never panics (a panic in either implementation
//! becomes a `Panic` divergence); its coverage key is the generation and
//! the first instruction's verdict (`v3 ok:d9+da`, `v2 err:duplicate_rank`)
//! or `diverged`; the signature key is the [`LoweringMismatch`] and the
//! description with digits masked, cut at the first `:` context, so one bug
//! deduplicates to one entry.

use super::kind::{CaseBudget, Ran, TargetKind};
use crate::arch::Arch;
use crate::engine::nway::Engine;
use crate::engine::{panic_text, Class, Divergence, Outcome, Signature};
use crate::generators::lowering_module::{self, LoweringCase};
use crate::reach::Reach;
use crate::subjects::lowering_translate::{chip, side_pair};
use crate::subjects::{registry, Fault, LoweredModule, ModuleAnswer, Reply, Subject};
use crate::targets::Target;
use std::collections::BTreeSet;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tpb_core::lower::{lower, Generation, IrInstruction, LocalSendRecv, Module, SideRef, Transfer};
use tpb_core::lut::dtype_to_wire;
use tpb_core::stream::{BundleItem, StreamItem};
use tpb_core::{decode, Bundle, Instruction};
use tpb_oracle as oracle;

/// The collective-lowering kind.
pub struct CollectiveLoweringKind;

impl TargetKind for CollectiveLoweringKind {
    fn name(&self) -> &'static str {
        "collective_lowering"
    }

    fn compare(&self, e: &Engine, t: Target, input: &[u8]) -> Outcome {
        Outcome(compare(e, t, input).1)
    }

    fn run(&self, e: &Engine, t: Target, input: &[u8], _reach: Option<&mut Reach>) -> Ran {
        let (key, d) = compare(e, t, input);
        Ran {
            outcome: Outcome(d),
            key: Some(key),
            classified: false,
        }
    }

    /// The first generation (in [`Arch::ALL`] order) under which core and
    /// oracle disagree on `input` (0xBF only from v3, so every generation).
    fn check_every_generation(
        &self,
        _e: &Engine,
        t: Target,
        input: &[u8],
    ) -> Option<(Option<Arch>, Divergence)> {
        Arch::ALL.into_iter().find_map(|arch| {
            let e = Engine::open(&[], arch).ok()?;
            compare(&e, t, input)
                .1
                .into_iter()
                .next()
                .map(|d| (Some(arch), d))
        })
    }

    fn case_budget(&self) -> CaseBudget {
        CaseBudget::LoweringCases
    }

    /// 0xBF only from v3: a module is signed under every generation.
    fn signed_under_every_generation(&self) -> bool {
        true
    }
}

/// How core and oracle disagree on a module, or which property fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoweringMismatch {
    /// Core lowers, the oracle rejects.
    OverAccept,
    /// Core rejects, the oracle lowers.
    UnderAccept,
    /// Both reject, with different error names.
    SameVerdictDifferentReason,
    /// Both lower, to different records or side-tables.
    DifferentOutput,
    /// A property of core's lowering fails (issue 13 §5).
    Property,
    /// A subject gave no answer (its [`Fault`] as a class).
    Fault(Class),
}

impl LoweringMismatch {
    /// Stable name (signature keys).
    pub fn name(self) -> &'static str {
        match self {
            LoweringMismatch::OverAccept => "OverAccept",
            LoweringMismatch::UnderAccept => "UnderAccept",
            LoweringMismatch::SameVerdictDifferentReason => "SameVerdictDifferentReason",
            LoweringMismatch::DifferentOutput => "DifferentOutput",
            LoweringMismatch::Property => "Property",
            LoweringMismatch::Fault(c) => c.name(),
        }
    }

    /// The divergence class (a property failure is a different output).
    pub fn class(self) -> Class {
        match self {
            LoweringMismatch::OverAccept => Class::OverAccept,
            LoweringMismatch::UnderAccept => Class::UnderAccept,
            LoweringMismatch::SameVerdictDifferentReason => Class::SameVerdictDifferentReason,
            LoweringMismatch::DifferentOutput | LoweringMismatch::Property => {
                Class::DifferentOutput
            }
            LoweringMismatch::Fault(c) => c,
        }
    }
}

/// Digits masked, instruction index and values dropped: `[#] records`.
fn signature_key(m: LoweringMismatch, description: &str) -> String {
    let head: String = description
        .split(&[',', ':', '('][..])
        .next()
        .unwrap_or("")
        .chars()
        .take(72)
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    format!("{}:{head}", m.name())
}

/// Runs one case under the engine's generation (input mapping:
/// [`collective_lowering_case`]) on its reference pair, then on each subject
/// under test that declares `lower`: the coverage key and the divergences.
pub fn compare(e: &Engine, target: Target, data: &[u8]) -> (String, Vec<Divergence>) {
    let gen = e.arch().generation();
    let filed = e.described_case(target, data, ("core", "oracle"));
    let div = |class: Class, key: String, description: String, case: String| {
        filed.divergence(class, key, description, case)
    };
    // The engine's reference pair (in the gate, core is wrapped in its
    // coverage recorder, which forwards `lower`).
    let (left, right) = (e.reference_subject(), &*e.subjects()[1]);
    let built = lowering_module::build_case(data, Some(gen));
    let case = || compare_case_on(left, right, &built);
    match catch_unwind(AssertUnwindSafe(case)) {
        Ok(Ok(o)) => {
            let divs = e
                .judged_now(target)
                .into_iter()
                .filter_map(|x| judge_module(x, left, target, data, &built))
                .collect();
            (o.key, divs)
        }
        Ok(Err(d)) => (
            "diverged".into(),
            vec![div(
                d.class.class(),
                signature_key(d.class, &d.description),
                d.description,
                d.case,
            )],
        ),
        Err(p) => (
            "diverged".into(),
            vec![div(
                Class::Panic,
                "collective_lowering:panic".into(),
                format!("PANIC: {}", panic_text(&*p)),
                String::new(),
            )],
        ),
    }
}

/// One line of a `lower` answer: the module's records per instruction and
/// its side-tables, or the rejection.
fn answer_text(a: &Reply<ModuleAnswer>) -> String {
    let hex = |rs: &[[u8; 64]]| rs.iter().map(|b| Bundle(*b).to_hex()).collect::<Vec<_>>();
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
                    Ok(l) => format!("[{i}] records {:?} side {:?}", hex(&l.records), l.side),
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

/// Subject `x` (under test) against `core` on what the `lower` operation
/// answers ([`Subject::lower_module`]): a fault, a different verdict, the
/// first rejection's index or name, or a record / side row / side-table
/// that differs is a divergence naming both answers.
pub fn judge_module(
    x: &dyn Subject,
    core: &dyn Subject,
    target: Target,
    data: &[u8],
    case: &LoweringCase,
) -> Option<Divergence> {
    let guarded = |s: &dyn Subject| {
        catch_unwind(AssertUnwindSafe(|| s.lower_module(&case.insns)))
            .unwrap_or_else(|p| Err(Fault::Crash(format!("PANIC: {}", panic_text(&*p)))))
    };
    let (l, r) = (guarded(x), guarded(core));
    let (class, key): (Class, String) = match (&l, &r) {
        (Ok(a), Ok(b)) if a == b => return None,
        (Err(f), _) | (_, Err(f)) => {
            let c = match f {
                Fault::Unsupported => Class::Unsupported,
                Fault::Timeout(_) => Class::Timeout,
                Fault::Protocol(_) => Class::Protocol,
                Fault::Crash(_) => Class::Crash,
            };
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
    Some(Divergence {
        target,
        input: data.to_vec(),
        case: format!("{case:?}"),
        left_name: x.name().to_string(),
        right_name: core.name().to_string(),
        left: ls,
        right: rs,
        signature: Signature {
            key,
            left: short(&l),
            right: short(&r),
        },
        class,
        cohorts: Vec::new(),
    })
}

/// What a case did when core and oracle agree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweringOutcome {
    /// Coverage key (bounded): the generation and the first instruction's
    /// verdict, e.g. `v3 ok:d9+da` or `v2 err:duplicate_rank`.
    pub key: String,
    /// Every instruction's verdict, in order (`ok:<opcodes>` or `err:<name>`).
    pub verdicts: Vec<String>,
    /// Instructions lowered.
    pub lowered: usize,
    /// Instructions rejected.
    pub rejected: usize,
}

/// Core and oracle disagree, or a property fails on core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweringDivergence {
    /// What kind of disagreement.
    pub class: LoweringMismatch,
    /// What differs.
    pub description: String,
    /// The case (Debug form).
    pub case: String,
}

impl fmt::Display for LoweringDivergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "collective_lowering {}: {}\ncase: {}",
            self.class.name(),
            self.description,
            self.case
        )
    }
}

impl std::error::Error for LoweringDivergence {}

/// Run one case from bytes (the fuzz target's and the gate's input mapping,
/// [`lowering_module::build_case`]).
pub fn collective_lowering_case(
    data: &[u8],
    gen: Option<Generation>,
) -> Result<LoweringOutcome, LoweringDivergence> {
    compare_case(&lowering_module::build_case(data, gen))
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

fn check_decoded(
    gen: Generation,
    insn: &IrInstruction,
    records: &[[u8; 64]],
) -> Result<(), String> {
    let records: Vec<Bundle> = records.iter().map(|b| Bundle(*b)).collect();
    let decode = |b: &Bundle| decode(b, gen);
    for b in &records {
        decode(b).map_err(|e| format!("record {} does not decode: {e:?}", b.to_hex()))?;
        oracle::decode(&b.0, chip(gen))
            .map_err(|e| format!("oracle cannot decode record {}: {e:?}", b.to_hex()))?;
    }
    let IrInstruction::Collective(c) = insn else {
        return Ok(());
    };
    let tag = dtype_to_wire(c.dtype, gen.dtype_column()).map_err(|e| format!("{e}"))?;
    match records.first().map(decode) {
        Some(Ok(Instruction::CollectiveCompute(p)))
            if (p.kind, p.cce_op, p.dtype, p.ap) == (c.kind, c.cce_op, tag, c.src) => {}
        other => return Err(format!("0xD9 does not recover the collective: {other:?}")),
    }
    match (c.src2, records.get(1).map(decode)) {
        (None, None) => Ok(()),
        (Some(ap), Some(Ok(Instruction::CollectiveComputeSecondary(s))))
            if (s.kind, s.cce_op, s.dtype, s.ap, s.channel_id)
                == (c.kind, c.cce_op, tag, ap, c.channel_id) =>
        {
            Ok(())
        }
        (_, other) => Err(format!("0xDA does not recover the second leg: {other:?}")),
    }
}

/// Compares core and oracle (the reference pair of the case's generation) on
/// a built case, then checks the properties on core.
pub fn compare_case(case: &LoweringCase) -> Result<LoweringOutcome, LoweringDivergence> {
    let arch = Arch::ALL
        .into_iter()
        .find(|a| a.generation() == case.gen)
        .unwrap_or_default();
    compare_case_on(
        &*registry::core_for(arch),
        &*registry::oracle_for(arch),
        case,
    )
}

/// Compares subject `left` with its reference `right` on a built case
/// through [`Subject::lower`] (both serving the case's generation), then
/// checks the properties on core.
pub fn compare_case_on(
    left: &dyn Subject,
    right: &dyn Subject,
    case: &LoweringCase,
) -> Result<LoweringOutcome, LoweringDivergence> {
    let diverge = |class: LoweringMismatch, description: String| LoweringDivergence {
        class,
        description,
        case: format!("{case:?}"),
    };
    let (ln, rn) = (left.name(), right.name());
    let (l, r) = match (left.lower(&case.insns), right.lower(&case.insns)) {
        (Ok(l), Ok(r)) => (l, r),
        (l, r) => {
            let fault = l.as_ref().err().or(r.as_ref().err());
            let class = match fault {
                Some(Fault::Unsupported) => Class::Unsupported,
                Some(Fault::Timeout(_)) => Class::Timeout,
                Some(Fault::Protocol(_)) => Class::Protocol,
                _ => Class::Crash,
            };
            let show = |x: &Reply<LoweredModule>| match x {
                Ok(_) => "answered".to_string(),
                Err(f) => f.to_string(),
            };
            return Err(diverge(
                LoweringMismatch::Fault(class),
                format!("lower: {ln} {}, {rn} {}", show(&l), show(&r)),
            ));
        }
    };
    if l.instrs.len() != case.insns.len() || r.instrs.len() != case.insns.len() {
        return Err(diverge(
            LoweringMismatch::Fault(Class::Protocol),
            format!(
                "lower: {} instructions asked, {ln} answered {}, {rn} {}",
                case.insns.len(),
                l.instrs.len(),
                r.instrs.len()
            ),
        ));
    }
    let mut verdicts = Vec::with_capacity(case.insns.len());
    let (mut lowered, mut rejected) = (0, 0);
    let hex = |rs: &[[u8; 64]]| rs.iter().map(|b| Bundle(*b).to_hex()).collect::<Vec<_>>();
    for (i, (insn, (lv, rv))) in case
        .insns
        .iter()
        .zip(l.instrs.iter().zip(&r.instrs))
        .enumerate()
    {
        match (lv, rv) {
            (Err(e), Err(r)) if e.name == r.name => {
                rejected += 1;
                verdicts.push(format!("err:{}", e.name));
            }
            (Err(e), Err(r)) => {
                return Err(diverge(
                    LoweringMismatch::SameVerdictDifferentReason,
                    format!("[{i}] {ln} rejects with {}, {rn} with {}", e.name, r.name),
                ))
            }
            (Err(e), Ok(_)) => {
                return Err(diverge(
                    LoweringMismatch::UnderAccept,
                    format!("[{i}] {ln} rejects with {}, {rn} accepts", e.message),
                ))
            }
            (Ok(_), Err(r)) => {
                return Err(diverge(
                    LoweringMismatch::OverAccept,
                    format!("[{i}] {ln} accepts, {rn} rejects with {}", r.message),
                ))
            }
            (Ok(a), Ok(b)) => {
                if a.records != b.records {
                    return Err(diverge(
                        LoweringMismatch::DifferentOutput,
                        format!(
                            "[{i}] records: {ln} {:?}, {rn} {:?}",
                            hex(&a.records),
                            hex(&b.records)
                        ),
                    ));
                }
                if a.side != b.side {
                    return Err(diverge(
                        LoweringMismatch::DifferentOutput,
                        format!("[{i}] side refs: {ln} {:?}, {rn} {:?}", a.side, b.side),
                    ));
                }
                check_decoded(case.gen, insn, &a.records).map_err(|d| {
                    diverge(LoweringMismatch::Property, format!("[{i}] decode: {d}"))
                })?;
                lowered += 1;
                let ops: Vec<String> = a.records.iter().map(|b| format!("{:02x}", b[0])).collect();
                verdicts.push(format!("ok:{}", ops.join("+")));
            }
        }
    }
    // The side-tables themselves.
    if l.replica_groups != r.replica_groups
        || l.source_target_pairs != r.source_target_pairs
        || l.attributes != r.attributes
    {
        return Err(diverge(
            LoweringMismatch::DifferentOutput,
            format!(
                "side-tables: {ln} {:?}/{:?}/{:?}, {rn} {:?}/{:?}/{:?}",
                l.replica_groups,
                l.source_target_pairs,
                l.attributes,
                r.replica_groups,
                r.source_target_pairs,
                r.attributes
            ),
        ));
    }
    check_properties(case, &l).map_err(|d| diverge(LoweringMismatch::Property, d))?;
    Ok(LoweringOutcome {
        key: format!(
            "{} {}",
            case.gen.name(),
            verdicts.first().map_or("empty", String::as_str)
        ),
        verdicts,
        lowered,
        rejected,
    })
}

/// Properties of core's lowering (issue 13 §5) on a case core and oracle agree on.
fn check_properties(case: &LoweringCase, first: &LoweredModule) -> Result<(), String> {
    // Determinism: lowering again gives what the first lowering answered.
    let mut again = Module::new(case.gen);
    for insn in &case.insns {
        let _ = lower(&mut again, insn);
    }
    let module = &again;
    let answered = first.instrs.iter().flatten();
    let same_instrs = module.lowered().len() == answered.clone().count()
        && module.lowered().iter().zip(answered).all(|(m, a)| {
            m.records.len() == a.records.len()
                && m.records.iter().zip(&a.records).all(|(x, y)| x.0 == *y)
                && m.side.iter().map(side_pair).eq(a.side.iter().copied())
        });
    let same_tables = module.replica_groups() == first.replica_groups.as_slice()
        && module.source_target_pairs() == first.source_target_pairs.as_slice()
        && module
            .attributes()
            .iter()
            .map(|x| (x.kind, x.direction.name(), x.peer))
            .eq(first.attributes.iter().copied());
    if !(same_instrs && same_tables) {
        return Err("lowering the same case twice differs".into());
    }
    // Minimal registries: every entry is needed by some instruction.
    let used: BTreeSet<SideRef> = module
        .lowered()
        .iter()
        .flat_map(|l| l.side.clone())
        .collect();
    let all: BTreeSet<SideRef> = (0..module.replica_groups().len())
        .map(SideRef::ReplicaGroups)
        .chain((0..module.source_target_pairs().len()).map(SideRef::SourceTargetPairs))
        .chain((0..module.attributes().len()).map(SideRef::Attribute))
        .collect();
    if used != all {
        return Err(format!("registry entries {all:?}, needed {used:?}"));
    }
    // No geometry on the wire: each accepted instruction with its ranks moved
    // lowers to the same records and to other side-tables (unless it has none).
    for insn in &case.insns {
        let mut m1 = Module::new(case.gen);
        let Ok(l1) = lower(&mut m1, insn) else {
            continue;
        };
        let Some(other) = moved(insn) else { continue };
        let mut m2 = Module::new(case.gen);
        let l2 = lower(&mut m2, &other).map_err(|e| format!("moved geometry rejected: {e}"))?;
        if l1.records != l2.records {
            return Err(format!("geometry reaches the wire: {insn:?}"));
        }
        let same_tables = m1.replica_groups() == m2.replica_groups()
            && m1.source_target_pairs() == m2.source_target_pairs()
            && m1.attributes() == m2.attributes();
        if same_tables != l1.side.is_empty() {
            return Err(format!(
                "moved geometry leaves the side-tables as they were: {insn:?}"
            ));
        }
    }
    // The emitted stream parses, in both parsers, into one item per record
    // except that each 0xDA joins its 0xD9.
    let bytes: Vec<u8> = module.records().flat_map(|b| b.0).collect();
    let legs = module.records().filter(|b| b.0[0] == 0xDA).count();
    let expected = module.records().count() - legs;
    let core_items: Vec<(usize, usize, &str)> =
        tpb_core::stream::parse_bundle_stream(&bytes, case.gen)
            .map_err(|e| format!("core stream parser rejects the emitted stream: {e}"))?
            .into_iter()
            .map(|item| match item {
                BundleItem::CollectivePair { index } => (index, 2, "pair"),
                BundleItem::Custom(StreamItem::Other { index, .. }) => (index, 1, "single"),
                BundleItem::Custom(StreamItem::Group {
                    header_index, args, ..
                }) => (header_index, args.len() + 2, "group"),
            })
            .collect();
    let oracle_items: Vec<(usize, usize, &str)> =
        oracle::parse_bundle_stream(&bytes, chip(case.gen))
            .map_err(|e| format!("oracle stream parser rejects the emitted stream: {e:?}"))?
            .into_iter()
            .map(|s| (s.start, s.count, s.what))
            .collect();
    if core_items != oracle_items || core_items.len() != expected {
        return Err(format!(
            "stream items: core {core_items:?}, oracle {oracle_items:?}, expected {expected}"
        ));
    }
    check_leg_faults(case, module)
}

/// The pairing's error paths (SPEC DL-12): the emitted stream with its first
/// 0xDA's trio changed, the 0xDA dropped, repeated, or moved before its 0xD9;
/// both parsers must give the same item count or the same error at the same
/// bundle.
fn check_leg_faults(case: &LoweringCase, module: &Module) -> Result<(), String> {
    let recs: Vec<[u8; 64]> = module.records().map(|b| b.0).collect();
    let Some(k) = recs.iter().position(|b| b[0] == 0xDA) else {
        return Ok(());
    };
    let mut variants: Vec<(&str, Vec<[u8; 64]>)> = Vec::with_capacity(4);
    let mut v = recs.clone();
    // One of the three trio bytes +0x0C..=+0x0E (S003 §3.2), by record count.
    v[k][0x0C + recs.len() % 3] ^= 0x01;
    variants.push(("trio byte changed", v));
    let mut v = recs.clone();
    v.remove(k);
    variants.push(("leg dropped", v));
    let mut v = recs.clone();
    v.insert(k, recs[k]);
    variants.push(("leg repeated", v));
    if k > 0 {
        let mut v = recs.clone();
        v.swap(k - 1, k);
        variants.push(("leg before its 0xD9", v));
    }
    for (what, v) in variants {
        let bytes: Vec<u8> = v.concat();
        let core = match tpb_core::stream::parse_bundle_stream(&bytes, case.gen) {
            Ok(items) => Ok(items.len()),
            Err(e) => Err((e.name(), e.index())),
        };
        let oracle = match oracle::parse_bundle_stream(&bytes, chip(case.gen)) {
            Ok(spans) => Ok(spans.len()),
            Err(e) => Err((e.name(), e.index())),
        };
        if core != oracle {
            return Err(format!(
                "bundle stream with {what} (record {k}): core {core:?}, oracle {oracle:?}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::SplitMix64;
    use crate::kinds::test_subjects::Silent;
    use crate::subjects::Capabilities;

    /// Core, with the last byte of each instruction's first record flipped.
    struct Flipped(Box<dyn Subject>);

    impl Subject for Flipped {
        fn name(&self) -> &str {
            "flipped"
        }
        fn capabilities(&self) -> Capabilities {
            Capabilities::all()
        }
        fn lower(&self, insns: &[IrInstruction]) -> Reply<LoweredModule> {
            let mut m = self.0.lower(insns)?;
            for l in m.instrs.iter_mut().flatten() {
                if let Some(r) = l.records.first_mut() {
                    r[63] ^= 1;
                }
            }
            Ok(m)
        }
    }

    #[test]
    fn lowering_goes_through_the_subject_interface() {
        let arch = Arch::default();
        let (core, oracle) = (registry::core_for(arch), registry::oracle_for(arch));
        let case = (0..200u64)
            .map(|s| {
                lowering_module::build_case(&SplitMix64(s).bytes(256), Some(arch.generation()))
            })
            .find(|c| compare_case_on(&*core, &*oracle, c).is_ok_and(|o| o.lowered > 0))
            .expect("a case that lowers");
        let d = compare_case_on(&Flipped(registry::core_for(arch)), &*oracle, &case)
            .expect_err("a changed record diverges");
        assert_eq!(d.class, LoweringMismatch::DifferentOutput, "{d}");
        assert!(d.description.contains("records: flipped"), "{d}");
        let d = compare_case_on(&Silent, &*oracle, &case).expect_err("no answer diverges");
        assert_eq!(d.class, LoweringMismatch::Fault(Class::Unsupported), "{d}");
    }
}

#[cfg(test)]
mod recorded {
    use super::*;

    #[test]
    fn the_gate_engine_lowers_through_its_recorded_core() {
        let (e, _key) = Engine::open_recorded(&[], Arch::V3).expect("reference pair");
        let t = Target::named("collective_lowering");
        let data = crate::generators::SplitMix64(5).bytes(300);
        let (key, d) = compare(&e, t, &data);
        assert!(d.is_empty(), "{d:?}");
        assert!(key.starts_with("v3 "), "{key}");
    }
}
