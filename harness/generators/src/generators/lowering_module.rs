//! Lowering modules for `collective_lowering` (SPEC §5.4), from bytes: a generation, then IR
//! instructions valid for their arm, near-valid (one §5.4 error-list rule broken) or raw.

use arbitrary::Unstructured;
use tpb_core::insn::{Sync, UpdateMode, WaitMode};
use tpb_core::lower::{
    Collective, Direction, Generation, Geometry, IrInstruction, LocalSendRecv, Transfer,
    TransferOperand, ARMS,
};
use tpb_core::lut::{AluOp, CollectiveKind};

pub const GEN_MAX_INSTRS: usize = 8;
/// Rank space of generated geometry (small, so registries get reused).
const RANK_SPACE: u32 = 16;

const MUTATIONS: u8 = 16;

fn pick<T: Copy>(u: &mut Unstructured<'_>, xs: &[T]) -> T {
    let i = u.choose_index(xs.len()).unwrap_or(0);
    xs[i]
}

fn gen_sync(u: &mut Unstructured<'_>, valid: bool) -> Sync {
    // A wait mode, then an update mode: a member (valid), else any byte.
    let mut mode = |members: &[u8]| match valid {
        true => pick(u, members),
        false => u.arbitrary().unwrap_or(0),
    };
    let (wm, um) = (mode(&[0x00, 0x05, 0x85]), mode(&[0x00, 0x01, 0x13]));
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
            4 => c.cce_op = [AluOp::Add, AluOp::Bypass][usize::from(c.cce_op == AluOp::Add)],
            5 => c.src2 = c.src2.is_none().then(|| gen_ap(u)),
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
            14 => c.replica_groups = vec![(0..2049).collect(), (2049..4097).collect()],
            _ => c.kind = pick(u, &CollectiveKind::ALL),
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

/// Instructions lowered in order into one module (shared with a subject's batch).
#[derive(Clone, Debug)]
pub struct LoweringCase {
    pub gen: Generation,
    pub insns: std::sync::Arc<Vec<IrInstruction>>,
}

/// Builds a case; `gen` forces the generation (else the first byte picks it).
pub fn build_case(data: &[u8], gen: Option<Generation>) -> LoweringCase {
    let mut u = Unstructured::new(data);
    let g = pick(&mut u, &Generation::ALL);
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
        insns: insns.into(),
    }
}
