//! The arms of `visitInstCollectiveCompute` as data, and [`lower`] (SPEC §5.4).

use super::error::LowerError;
use super::ir::{Collective, IrInstruction, LocalSendRecv, Transfer, TransferOperand};
use super::module::{Lowered, Module, MAX_PAIRS, MAX_RANKS};
use super::Direction;
use crate::bundle::Bundle;
use crate::insn::{
    CollectiveCompute, CollectiveComputeSecondary, CollectiveSendRecv, EncodeError, Gpsimdsb2sb,
    Sync, UpdateMode, WaitMode,
};
use crate::ir::{check_cc_dim, route_local_collective, Route};
use crate::lut::{cce_op_to_wire, dtype_to_wire, AluOp, CollectiveKind};
use std::collections::HashSet;

/// Which registry an arm fills (S003 §3.3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Geometry {
    /// `Module::addReplicaGroupIDs`.
    ReplicaGroups,
    /// `Module::addSrcTargetPairIDs`.
    SourceTargetPairs,
}

/// One arm: what a kind lowers to (SPEC §5.4 table).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Arm {
    /// The kind (2..=10).
    pub kind: CollectiveKind,
    /// The registry it fills.
    pub geometry: Geometry,
    /// `true`: 0xD9 + 0xDA (second AP, channel_id); `false`: 0xD9 only (DL-3).
    pub second_leg: bool,
    /// The one reduce op the kind accepts: add for reducing kinds, bypass
    /// otherwise (collectiveKindAcceptsALUOp ∩ shipped {bypass, add}; DL-4).
    pub op: AluOp,
}

const fn row(kind: CollectiveKind, geometry: Geometry, second_leg: bool, op: AluOp) -> Arm {
    Arm {
        kind,
        geometry,
        second_leg,
        op,
    }
}

use CollectiveKind as K;
use Geometry::{ReplicaGroups as G, SourceTargetPairs as P};

/// The nine CollectiveCompute arms (S003 §3, §3.3, §3.4; NKI collectives
/// for which permutes are explicit; DL-2..DL-4).
pub const ARMS: [Arm; 9] = [
    row(K::AllReduce, G, false, AluOp::Add),
    row(K::ReduceScatter, G, false, AluOp::Add),
    row(K::AllGather, G, false, AluOp::Bypass),
    row(K::AllToAll, G, false, AluOp::Bypass),
    row(K::AllToAllV, G, false, AluOp::Bypass),
    row(K::Permute, P, true, AluOp::Bypass),
    row(K::PermuteReduce, P, true, AluOp::Add),
    row(K::PermuteImplicit, G, true, AluOp::Bypass),
    row(K::PermuteReduceImplicit, G, true, AluOp::Add),
];

/// The arm of a kind; `None` for SendRecv/SendRecvCCE (S003 §2 GOTCHA).
pub fn arm_of(kind: CollectiveKind) -> Option<&'static Arm> {
    ARMS.iter().find(|a| a.kind == kind)
}

/// `true` iff a 0xD9 whose kind byte (+0x0E) is `wire` is followed by its
/// 0xDA leg (a `second_leg` arm; SPEC §5.3 DL-12).
pub fn needs_second_leg(wire: u8) -> bool {
    ARMS.iter()
        .any(|a| a.second_leg && a.kind.to_wire() == Ok(wire))
}

fn record_error(opcode: u8) -> impl Fn(EncodeError) -> LowerError {
    move |e| LowerError::Record {
        opcode,
        field: e.field(),
    }
}

fn dtype_tag(module: &Module, field: &'static str, ordinal: u32) -> Result<u8, LowerError> {
    dtype_to_wire(ordinal, module.generation().dtype_column())
        .map_err(|_| LowerError::DtypeOutOfRange { field, ordinal })
}

/// Replica groups: no pairs, ≥ 1 group, ≤ MAX_RANKS ranks, no empty group,
/// no rank twice (DL-5).
fn check_groups(c: &Collective) -> Result<(), LowerError> {
    let kind = c.kind.ordinal();
    if !c.source_target_pairs.is_empty() {
        return Err(LowerError::PairsOnGroupKind { kind });
    }
    if c.replica_groups.is_empty() {
        return Err(LowerError::NoReplicaGroups { kind });
    }
    let ranks: usize = c.replica_groups.iter().map(Vec::len).sum();
    at_most("ranks", ranks, MAX_RANKS)?;
    let mut seen = HashSet::with_capacity(ranks);
    for (index, group) in c.replica_groups.iter().enumerate() {
        if group.is_empty() {
            return Err(LowerError::EmptyGroup { index });
        }
        for &rank in group {
            if !seen.insert(rank) {
                return Err(LowerError::DuplicateRank { rank });
            }
        }
    }
    Ok(())
}

/// `found` within `limit` (DL-5), else [`LowerError::TooLarge`].
fn at_most(what: &'static str, found: usize, limit: usize) -> Result<(), LowerError> {
    if found > limit {
        return Err(LowerError::TooLarge { what, found, limit });
    }
    Ok(())
}

/// Source-target pairs: no groups, ≥ 1 pair, ≤ MAX_PAIRS, each source and
/// each target at most once (DL-5).
fn check_pairs(c: &Collective) -> Result<(), LowerError> {
    let kind = c.kind.ordinal();
    if !c.replica_groups.is_empty() {
        return Err(LowerError::GroupsOnPairKind { kind });
    }
    let n = c.source_target_pairs.len();
    if n == 0 {
        return Err(LowerError::NoSourceTargetPairs { kind });
    }
    at_most("pairs", n, MAX_PAIRS)?;
    let mut sources = HashSet::with_capacity(n);
    let mut targets = HashSet::with_capacity(n);
    for &(source, target) in &c.source_target_pairs {
        if !sources.insert(source) {
            return Err(LowerError::DuplicateSource { rank: source });
        }
        if !targets.insert(target) {
            return Err(LowerError::DuplicateTarget { rank: target });
        }
    }
    Ok(())
}

fn lower_collective(module: &mut Module, c: &Collective) -> Result<Lowered, LowerError> {
    let kind = c.kind.ordinal();
    let arm = arm_of(c.kind).ok_or(LowerError::SendRecvKind { kind })?;
    check_cc_dim(c.cc_dim).map_err(|_| LowerError::BadCcDim { dim: c.cc_dim })?;
    let dtype = dtype_tag(module, "dtype", c.dtype)?;
    let op = c.cce_op.ordinal();
    cce_op_to_wire(op).map_err(|_| LowerError::CceOpNotShipped { op })?;
    if c.cce_op != arm.op {
        return Err(LowerError::OpNotAccepted { kind, op });
    }
    let src2 = match (arm.second_leg, c.src2) {
        (true, None) => return Err(LowerError::MissingSecondAp { kind }),
        (false, Some(_)) => return Err(LowerError::UnexpectedSecondAp { kind }),
        (_, src2) => src2,
    };
    match arm.geometry {
        Geometry::ReplicaGroups => check_groups(c)?,
        Geometry::SourceTargetPairs => check_pairs(c)?,
    }
    // S003 §3.1: one 0xD9 per collective; the geometry is not in it (§3.3).
    let mut records = vec![CollectiveCompute {
        sync: c.sync,
        cce_op: c.cce_op,
        dtype,
        kind: c.kind,
        ap: c.src,
    }
    .encode(module.generation())
    .map_err(record_error(CollectiveCompute::OPCODE))?];
    // S003 §3.2, §3.4: the second leg carries the second AP and channel_id.
    if let Some(ap) = src2 {
        records.push(
            CollectiveComputeSecondary {
                channel_id: c.channel_id,
                cce_op: c.cce_op,
                dtype,
                kind: c.kind,
                ap,
            }
            .encode(module.generation())
            .map_err(record_error(CollectiveComputeSecondary::OPCODE))?,
        );
    }
    let side = match arm.geometry {
        Geometry::ReplicaGroups => module.add_replica_groups(&c.replica_groups),
        Geometry::SourceTargetPairs => module.add_source_target_pairs(&c.source_target_pairs),
    };
    Ok(Lowered {
        records,
        side: vec![side],
    })
}

fn send_recv_record(
    gen: crate::Generation,
    sync: Sync,
    operand: &TransferOperand,
) -> Result<Bundle, LowerError> {
    CollectiveSendRecv {
        sync,
        tensor_id: operand.tensor_id,
        tensor_base: operand.tensor_base,
        num_elements_per_partition: operand.num_elements_per_partition,
    }
    .encode(gen)
    .map_err(record_error(CollectiveSendRecv::OPCODE))
}

fn lower_transfer(module: &mut Module, t: &Transfer) -> Result<Lowered, LowerError> {
    // S003 §4.1: 0xCB carries tensor_id + AP; direction and peer are the
    // module attribute.
    let record = send_recv_record(module.generation(), t.sync, &t.operand)?;
    let side = module.set_attribute(t.direction, t.peer);
    Ok(Lowered {
        records: vec![record],
        side: vec![side],
    })
}

fn lower_local(module: &mut Module, l: &LocalSendRecv) -> Result<Lowered, LowerError> {
    if !matches!(
        l.kind,
        CollectiveKind::SendRecv | CollectiveKind::SendRecvCce
    ) {
        return Err(LowerError::NotSendRecvKind {
            kind: l.kind.ordinal(),
        });
    }
    let src_dtype = dtype_tag(module, "src_dtype", l.src_dtype)?;
    let dst_dtype = dtype_tag(module, "dst_dtype", l.dst_dtype)?;
    // DL-10: lower_local_collectives picks the 0xBF mover when this
    // generation has it, the arch is LNC2 (S003 §5 gate) and the tile is
    // under the ceiling (S003 §5 NOTE); otherwise it drops onto 0xCB.
    let sb2sb = module.generation().emits(Gpsimdsb2sb::OPCODE)
        && l.cores_per_lnc == 2
        && route_local_collective(l.bytes_per_partition) == Route::Sb2sb;
    if sb2sb {
        let record = Gpsimdsb2sb {
            sync: l.sync,
            src_dtype,
            dst_dtype,
            src_ap: l.src_ap,
            peer_partition: l.peer_partition,
            dst_ap: l.dst_ap,
        }
        .encode(module.generation())
        .map_err(record_error(Gpsimdsb2sb::OPCODE))?;
        return Ok(Lowered {
            records: vec![record],
            side: Vec::new(),
        });
    }
    // DL-10: a Send then a Recv; the first carries the wait half of the band,
    // the last the update half (the getSyncInfo "first"/"last" twins, S003).
    let first = Sync {
        update_mode: UpdateMode::default(),
        update_idx: 0,
        ..l.sync
    };
    let last = Sync {
        wait_mode: WaitMode::NONE,
        wait_idx: 0,
        ..l.sync
    };
    let records = vec![
        send_recv_record(module.generation(), first, &l.send)?,
        send_recv_record(module.generation(), last, &l.recv)?,
    ];
    let side = vec![
        module.set_attribute(Direction::Send, l.peer),
        module.set_attribute(Direction::Recv, l.peer),
    ];
    Ok(Lowered { records, side })
}

/// Lowers one IR instruction into `module`: returns its records and appends
/// them, registering the side-table entries they need. On error the module is
/// unchanged (all checks run before any registration; DL-11).
pub fn lower(module: &mut Module, insn: &IrInstruction) -> Result<Lowered, LowerError> {
    let lowered = match insn {
        IrInstruction::Collective(c) => lower_collective(module, c)?,
        IrInstruction::Transfer(t) => lower_transfer(module, t)?,
        IrInstruction::LocalSendRecv(l) => lower_local(module, l)?,
    };
    module.push(lowered.clone());
    Ok(lowered)
}
