//! Differential target `collective_lowering`: `tpb_core::lower` against
//! `tpb_oracle::Ledger` on generated IR (SPEC §5.4), plus the issue-13
//! properties checked on core: no geometry on the wire, decoding recovers the
//! fields, determinism, minimal registries, and the 0xD9+0xDA pairing of the
//! emitted stream (both parsers).
//!
//! A case is built from bytes through [`arbitrary::Unstructured`]: a
//! generation, then up to [`GEN_MAX_INSTRS`] instructions, each valid by
//! construction for its arm, near-valid (one rule broken on purpose), or raw.

use arbitrary::Unstructured;
use std::collections::BTreeSet;
use std::fmt;
use tpb_core::insn::{Sync, UpdateMode, WaitMode};
use tpb_core::lower::{
    lower, Collective, Direction, Gen, Geometry, IrInstruction, LocalSendRecv, Module, SideRef,
    Transfer, TransferOperand, ARMS,
};
use tpb_core::lut::{dtype_to_wire, AluOp, CollectiveKind};
use tpb_core::stream::{BundleItem, StreamItem};
use tpb_core::{decode, Bundle, Instruction};
use tpb_oracle as oracle;

/// Most instructions per case.
pub const GEN_MAX_INSTRS: usize = 8;
/// Rank space of generated geometry (small, so registries get reused).
const RANK_SPACE: u32 = 16;

/// Near-valid mutations of a collective, one rule broken each (SPEC §5.4 error list).
const MUTATIONS: u8 = 16;

fn pick<T: Copy>(u: &mut Unstructured<'_>, xs: &[T]) -> T {
    let i = u.choose_index(xs.len()).unwrap_or(0);
    xs[i]
}

fn gen_sync(u: &mut Unstructured<'_>, valid: bool) -> Sync {
    let wait = [0x00, 0x05, 0x85];
    let update = [0x00, 0x01, 0x13];
    let wm = if valid {
        pick(u, &wait)
    } else {
        u.arbitrary().unwrap_or(0)
    };
    let um = if valid {
        pick(u, &update)
    } else {
        u.arbitrary().unwrap_or(0)
    };
    Sync {
        wait_mode: WaitMode(wm),
        wait_idx: u.arbitrary().unwrap_or(0),
        update_mode: UpdateMode(um),
        update_idx: u.arbitrary().unwrap_or(0),
        semaphore_value: u.arbitrary().unwrap_or(0),
        // The IR has no debug bytes: lowering writes 0 (oracle Band).
        ..Sync::default()
    }
}

fn gen_groups(u: &mut Unstructured<'_>) -> Vec<Vec<u32>> {
    let n_ranks = u.int_in_range(1..=8usize).unwrap_or(1);
    let mut ranks: Vec<u32> = Vec::with_capacity(n_ranks);
    while ranks.len() < n_ranks {
        let r = u
            .int_in_range(0..=RANK_SPACE - 1)
            .unwrap_or(ranks.len() as u32);
        let r = if ranks.contains(&r) {
            RANK_SPACE + ranks.len() as u32
        } else {
            r
        };
        ranks.push(r);
    }
    let n_groups = u.int_in_range(1..=n_ranks.min(4)).unwrap_or(1);
    let mut groups = vec![Vec::new(); n_groups];
    for (i, r) in ranks.into_iter().enumerate() {
        groups[i % n_groups].push(r);
    }
    groups
}

fn gen_pairs(u: &mut Unstructured<'_>) -> Vec<(u32, u32)> {
    let n = u.int_in_range(1..=6usize).unwrap_or(1);
    let shift = u.int_in_range(0..=RANK_SPACE - 1).unwrap_or(1);
    // A rotation: distinct sources, distinct targets.
    (0..n as u32).map(|i| (i, (i + shift) % n as u32)).collect()
}

fn gen_ap<const N: usize>(u: &mut Unstructured<'_>) -> [u8; N] {
    u.arbitrary().unwrap_or([0; N])
}

fn gen_operand(u: &mut Unstructured<'_>) -> TransferOperand {
    TransferOperand {
        tensor_id: u.arbitrary().unwrap_or(0),
        tensor_base: u.arbitrary().unwrap_or(0),
        num_elements_per_partition: u.arbitrary().unwrap_or(0),
    }
}

/// A valid collective for an arm, then optionally one mutation.
fn gen_collective(u: &mut Unstructured<'_>) -> Collective {
    let arm = pick(u, &ARMS);
    let by_pairs = arm.geometry == Geometry::SourceTargetPairs;
    let mut c = Collective {
        kind: arm.kind,
        cce_op: arm.op,
        dtype: u.int_in_range(0..=19).unwrap_or(0),
        src: gen_ap(u),
        src2: None,
        replica_groups: Vec::new(),
        source_target_pairs: Vec::new(),
        channel_id: u.arbitrary().unwrap_or(0),
        cc_dim: u.int_in_range(0..=1).unwrap_or(0),
        sync: gen_sync(u, true),
    };
    if arm.second_leg {
        c.src2 = Some(gen_ap(u));
    }
    if by_pairs {
        c.source_target_pairs = gen_pairs(u);
    } else {
        c.replica_groups = gen_groups(u);
    }
    let mutate = u.ratio(1u8, 3).unwrap_or(false);
    if mutate {
        match u.int_in_range(0..=MUTATIONS - 1).unwrap_or(0) {
            0 => c.kind = pick(u, &[CollectiveKind::SendRecv, CollectiveKind::SendRecvCce]),
            1 => c.cc_dim = u.int_in_range(2..=u32::MAX).unwrap_or(2),
            2 => c.dtype = u.int_in_range(20..=40).unwrap_or(20),
            3 => c.cce_op = pick(u, &AluOp::ALL),
            4 => {
                c.cce_op = if c.cce_op == AluOp::Add {
                    AluOp::Bypass
                } else {
                    AluOp::Add
                }
            }
            5 => {
                c.src2 = if c.src2.is_some() {
                    None
                } else {
                    Some(gen_ap(u))
                }
            }
            6 => c.source_target_pairs.push((0, 1)),
            7 => c.replica_groups.push(vec![0]),
            8 => {
                c.replica_groups.clear();
                c.source_target_pairs.clear();
            }
            9 => c.replica_groups.push(Vec::new()),
            10 => {
                let r = c
                    .replica_groups
                    .first()
                    .and_then(|g| g.first())
                    .copied()
                    .unwrap_or(3);
                c.replica_groups.push(vec![r]);
            }
            11 => {
                let s = c.source_target_pairs.first().map_or(0, |p| p.0);
                c.source_target_pairs.push((s, RANK_SPACE + 1));
            }
            12 => {
                let t = c.source_target_pairs.first().map_or(0, |p| p.1);
                c.source_target_pairs.push((RANK_SPACE + 1, t));
            }
            13 => c.sync = gen_sync(u, false),
            14 => {
                c.replica_groups = vec![(0..2049).collect(), (2049..4097).collect()];
            }
            _ => {
                c.kind = pick(u, &CollectiveKind::ALL);
            }
        }
    }
    c
}

fn gen_local(u: &mut Unstructured<'_>) -> LocalSendRecv {
    let near = u.ratio(1u8, 4).unwrap_or(false);
    let kind = if near {
        pick(u, &CollectiveKind::ALL)
    } else {
        pick(u, &[CollectiveKind::SendRecv, CollectiveKind::SendRecvCce])
    };
    let dt = |u: &mut Unstructured<'_>| {
        if near && u.ratio(1u8, 3).unwrap_or(false) {
            u.int_in_range(20..=24).unwrap_or(20)
        } else {
            u.int_in_range(0..=19).unwrap_or(0)
        }
    };
    LocalSendRecv {
        kind,
        send: gen_operand(u),
        recv: gen_operand(u),
        peer: u.int_in_range(0..=RANK_SPACE).unwrap_or(0),
        src_dtype: dt(u),
        dst_dtype: dt(u),
        src_ap: gen_ap(u),
        dst_ap: gen_ap(u),
        peer_partition: u.arbitrary().unwrap_or(0),
        bytes_per_partition: pick(u, &[0, 1, 512, 1023, 1024, 1025, 4096, u64::MAX]),
        cores_per_lnc: pick(u, &[1, 2, 2, 2, 4]),
        sync: gen_sync(u, !near),
    }
}

fn gen_instruction(u: &mut Unstructured<'_>) -> IrInstruction {
    match u.int_in_range(0..=5u8).unwrap_or(0) {
        0..=2 => IrInstruction::Collective(gen_collective(u)),
        3 | 4 => IrInstruction::Transfer(Transfer {
            direction: if u.arbitrary().unwrap_or(false) {
                Direction::Send
            } else {
                Direction::Recv
            },
            operand: gen_operand(u),
            peer: u.int_in_range(0..=RANK_SPACE).unwrap_or(0),
            sync: {
                let valid = u.ratio(7u8, 8).unwrap_or(true);
                gen_sync(u, valid)
            },
        }),
        _ => IrInstruction::LocalSendRecv(gen_local(u)),
    }
}

/// A generated case.
#[derive(Clone, Debug)]
pub struct LoweringCase {
    /// The generation.
    pub gen: Gen,
    /// The instructions, lowered in order into one module.
    pub insns: Vec<IrInstruction>,
}

/// Builds a case; `gen` forces the generation (else the first byte picks it).
pub fn build_case(data: &[u8], gen: Option<Gen>) -> LoweringCase {
    let mut u = Unstructured::new(data);
    let g = pick(&mut u, &Gen::ALL);
    let n = u.int_in_range(1..=GEN_MAX_INSTRS).unwrap_or(1);
    let mut insns = Vec::with_capacity(n);
    for _ in 0..n {
        if u.is_empty() && !insns.is_empty() {
            break;
        }
        insns.push(gen_instruction(&mut u));
    }
    LoweringCase {
        gen: gen.unwrap_or(g),
        insns,
    }
}

// ---------------------------------------------------------------------------
// Core IR -> oracle request (field by field; the harness sees both crates).
// ---------------------------------------------------------------------------

fn band(s: &Sync) -> oracle::Band {
    (
        s.wait_mode.0,
        s.wait_idx,
        s.update_mode.0,
        s.update_idx,
        s.semaphore_value,
    )
}

fn tensor(t: &TransferOperand) -> oracle::Tensor {
    (t.tensor_id, t.tensor_base, t.num_elements_per_partition)
}

/// The oracle's request for one IR instruction.
pub fn to_request(insn: &IrInstruction) -> oracle::Request {
    match insn {
        IrInstruction::Collective(c) => oracle::Request::Collective {
            kind: c.kind.ordinal(),
            op: c.cce_op.ordinal(),
            dtype: c.dtype,
            ap: c.src,
            ap2: c.src2,
            groups: c.replica_groups.clone(),
            pairs: c.source_target_pairs.clone(),
            channel: c.channel_id,
            dim: c.cc_dim,
            band: band(&c.sync),
        },
        IrInstruction::Transfer(t) => oracle::Request::SendOrRecv {
            send: t.direction == Direction::Send,
            tensor: tensor(&t.operand),
            peer: t.peer,
            band: band(&t.sync),
        },
        IrInstruction::LocalSendRecv(l) => oracle::Request::LocalSwap {
            kind: l.kind.ordinal(),
            outgoing: tensor(&l.send),
            incoming: tensor(&l.recv),
            peer: l.peer,
            src_dtype: l.src_dtype,
            dst_dtype: l.dst_dtype,
            src_ap: l.src_ap,
            dst_ap: l.dst_ap,
            partition: l.peer_partition,
            bytes: l.bytes_per_partition,
            lnc: l.cores_per_lnc,
            band: band(&l.sync),
        },
    }
}

/// The oracle's generation number (2..=5).
pub fn gen_number(g: Gen) -> u8 {
    match g {
        Gen::V2 => 2,
        Gen::V3 => 3,
        Gen::V4 => 4,
        Gen::V5 => 5,
    }
}

fn side_pair(r: &SideRef) -> (&'static str, usize) {
    match *r {
        SideRef::ReplicaGroups(i) => ("replica_groups", i),
        SideRef::SourceTargetPairs(i) => ("source_target_pairs", i),
        SideRef::Attribute(i) => ("attributes", i),
    }
}

// ---------------------------------------------------------------------------
// Comparison and properties
// ---------------------------------------------------------------------------

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
    /// `OverAccept`, `UnderAccept`, `SameVerdictDifferentReason`,
    /// `DifferentOutput` or `Property`.
    pub class: &'static str,
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
            self.class, self.description, self.case
        )
    }
}

impl std::error::Error for LoweringDivergence {}

/// Run one case from bytes (the fuzz target's and the gate's input mapping).
pub fn collective_lowering_case(
    data: &[u8],
    gen: Option<Gen>,
) -> Result<LoweringOutcome, LoweringDivergence> {
    compare_case(&build_case(data, gen))
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

/// The oracle's chip of generation `g`.
pub fn chip(g: Gen) -> oracle::Chip {
    match g {
        Gen::V2 => oracle::Chip::Sunda,
        Gen::V3 => oracle::Chip::Cayman,
        Gen::V4 => oracle::Chip::Mariana,
        Gen::V5 => oracle::Chip::Maverick,
    }
}

fn check_decoded(gen: Gen, insn: &IrInstruction, records: &[Bundle]) -> Result<(), String> {
    let decode = |b: &Bundle| decode(b, gen);
    for b in records {
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

/// Compare core and oracle on a built case, then check the properties on core.
pub fn compare_case(case: &LoweringCase) -> Result<LoweringOutcome, LoweringDivergence> {
    let diverge = |class: &'static str, description: String| LoweringDivergence {
        class,
        description,
        case: format!("{case:?}"),
    };
    let mut module = Module::new(case.gen);
    let mut ledger = oracle::Ledger::new(gen_number(case.gen));
    let mut verdicts = Vec::with_capacity(case.insns.len());
    let (mut lowered, mut rejected) = (0, 0);
    for (i, insn) in case.insns.iter().enumerate() {
        let core = lower(&mut module, insn);
        let orc = ledger.lower(&to_request(insn));
        match (core, orc) {
            (Err(e), Err(r)) if e.name() == r.name() => {
                rejected += 1;
                verdicts.push(format!("err:{}", e.name()));
            }
            (Err(e), Err(r)) => {
                return Err(diverge(
                    "SameVerdictDifferentReason",
                    format!(
                        "[{i}] core rejects with {}, oracle with {}",
                        e.name(),
                        r.name()
                    ),
                ))
            }
            (Err(e), Ok(_)) => {
                return Err(diverge(
                    "UnderAccept",
                    format!("[{i}] core rejects with {e}, oracle accepts"),
                ))
            }
            (Ok(_), Err(r)) => {
                return Err(diverge(
                    "OverAccept",
                    format!("[{i}] core accepts, oracle rejects with {r}"),
                ))
            }
            (Ok(l), Ok(o)) => {
                let core_records: Vec<[u8; 64]> = l.records.iter().map(|b| b.0).collect();
                if core_records != o.records {
                    return Err(diverge(
                        "DifferentOutput",
                        format!(
                            "[{i}] records: core {:?}, oracle {:?}",
                            l.records.iter().map(Bundle::to_hex).collect::<Vec<_>>(),
                            o.records
                                .iter()
                                .map(|b| Bundle(*b).to_hex())
                                .collect::<Vec<_>>()
                        ),
                    ));
                }
                let refs: Vec<_> = l.side.iter().map(side_pair).collect();
                if refs != o.refs {
                    return Err(diverge(
                        "DifferentOutput",
                        format!("[{i}] side refs: core {refs:?}, oracle {:?}", o.refs),
                    ));
                }
                check_decoded(case.gen, insn, &l.records)
                    .map_err(|d| diverge("Property", format!("[{i}] decode: {d}")))?;
                lowered += 1;
                let ops: Vec<String> = l
                    .records
                    .iter()
                    .map(|b| format!("{:02x}", b.0[0]))
                    .collect();
                verdicts.push(format!("ok:{}", ops.join("+")));
            }
        }
    }
    // The side-tables themselves.
    let attrs: Vec<(u32, &str, u32)> = module
        .attributes()
        .iter()
        .map(|a| (a.kind, a.direction.name(), a.peer))
        .collect();
    if module.replica_groups() != ledger.replica_groups.as_slice()
        || module.source_target_pairs() != ledger.source_target_pairs.as_slice()
        || attrs != ledger.attributes
    {
        return Err(diverge(
            "DifferentOutput",
            format!(
                "side-tables: core {}, oracle {:?}/{:?}/{:?}",
                module.to_json(),
                ledger.replica_groups,
                ledger.source_target_pairs,
                ledger.attributes
            ),
        ));
    }
    check_properties(case, &module).map_err(|d| diverge("Property", d))?;
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
fn check_properties(case: &LoweringCase, module: &Module) -> Result<(), String> {
    // Determinism: a fresh module gives the same JSON.
    let mut again = Module::new(case.gen);
    for insn in &case.insns {
        let _ = lower(&mut again, insn);
    }
    if again.to_json() != module.to_json() {
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
