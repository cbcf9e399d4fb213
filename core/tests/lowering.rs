//! Collective lowering (SPEC §5.4) and 0xD9+0xDA pairing (SPEC §5.3, DL-12).
//! Expected bytes are written by hand from S003 §3.1, §3.2, §3.4, §4.1, §5.

use proptest::prelude::*;
use tpb_core::insn::{Sync, UpdateMode, WaitMode};
use tpb_core::lower::{
    lower, needs_second_leg, Collective, Direction, Generation, IrInstruction, LocalSendRecv,
    LowerError, Module, SideRef, Transfer, TransferOperand, ARMS,
};
use tpb_core::lut::{dtype_to_wire, AluOp, CollectiveKind as K};
use tpb_core::stream::{parse_bundle_stream, BundleItem, StreamError, StreamItem};
use tpb_core::{decode, Instruction};

/// The generation these tests run under: v3 encodes all eleven opcodes (seed 003).
const G: tpb_core::Generation = tpb_core::Generation::V3;

const BF16: u32 = 12;
const FP32: u32 = 16;
const FP4X4: u32 = 2;

fn ap(seed: u8) -> [u8; 48] {
    core::array::from_fn(|i| seed.wrapping_add(i as u8))
}

fn sync() -> Sync {
    Sync {
        debug_cmd: 0,
        debug_hint: 0,
        wait_mode: WaitMode::WAIT_FOR_SEM_GE_IMM,
        wait_idx: 3,
        update_mode: UpdateMode::SEM_INC_COMPLETE,
        update_idx: 4,
        semaphore_value: 0x1122_3344,
    }
}

fn coll(kind: K, op: AluOp) -> Collective {
    let two = matches!(
        kind,
        K::Permute | K::PermuteReduce | K::PermuteImplicit | K::PermuteReduceImplicit
    );
    let pairs = matches!(kind, K::Permute | K::PermuteReduce);
    Collective {
        kind,
        cce_op: op,
        dtype: BF16,
        src: ap(0x40),
        src2: two.then(|| ap(0x80)),
        replica_groups: if pairs {
            vec![]
        } else {
            vec![vec![0, 1], vec![2, 3]]
        },
        source_target_pairs: if pairs { vec![(0, 1), (1, 0)] } else { vec![] },
        channel_id: 0x1234,
        cc_dim: 1,
        sync: sync(),
    }
}

fn hand_d9(op: u8, dtype: u8, kind: u8, ap_seed: u8) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[..12].copy_from_slice(&[0xD9, 0x10, 0, 0, 0x05, 3, 0x13, 4, 0x44, 0x33, 0x22, 0x11]);
    b[0x0C..0x10].copy_from_slice(&[op, dtype, kind, 0]);
    b[0x10..].copy_from_slice(&ap(ap_seed));
    b
}

fn hand_da(channel: u16, op: u8, dtype: u8, kind: u8, ap_seed: u8) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = 0xDA;
    b[4..6].copy_from_slice(&channel.to_le_bytes());
    b[0x0C..0x10].copy_from_slice(&[op, dtype, kind, 0]);
    b[0x10..].copy_from_slice(&ap(ap_seed));
    b
}

fn lower1(gen: Generation, insn: IrInstruction) -> (Module, Result<Vec<[u8; 64]>, LowerError>) {
    let mut m = Module::new(gen);
    let r = lower(&mut m, &insn).map(|l| l.records.iter().map(|b| b.0).collect());
    (m, r)
}

#[test]
fn all_reduce_is_one_d9_and_a_replica_group_entry() {
    let (m, r) = lower1(
        Generation::V2,
        IrInstruction::Collective(coll(K::AllReduce, AluOp::Add)),
    );
    // S003 §3.1: add = 0x04, bf16 = 0x06 (F§6), AllReduce wire 0x01 (S003 §2).
    assert_eq!(r.unwrap(), vec![hand_d9(0x04, 0x06, 0x01, 0x40)]);
    assert_eq!(m.replica_groups(), &[vec![vec![0, 1], vec![2, 3]]]);
    assert!(m.source_target_pairs().is_empty() && m.attributes().is_empty());
    assert_eq!(m.lowered()[0].side, vec![SideRef::ReplicaGroups(0)]);
}

#[test]
fn permute_is_d9_plus_da_with_channel_id_and_a_pair_entry() {
    let (m, r) = lower1(
        Generation::V3,
        IrInstruction::Collective(coll(K::Permute, AluOp::Bypass)),
    );
    // Permute wire 0x05 (S003 §2 QUIRK); channel_id u16 at 0xDA +0x04 (S003 §3.4).
    assert_eq!(
        r.unwrap(),
        vec![
            hand_d9(0x00, 0x06, 0x05, 0x40),
            hand_da(0x1234, 0x00, 0x06, 0x05, 0x80)
        ]
    );
    assert_eq!(m.source_target_pairs(), &[vec![(0, 1), (1, 0)]]);
    assert!(m.replica_groups().is_empty());
}

#[test]
fn implicit_permutes_register_replica_groups_and_keep_the_leg() {
    for (kind, op, wire) in [
        (K::PermuteImplicit, AluOp::Bypass, 0x07),
        (K::PermuteReduceImplicit, AluOp::Add, 0x08),
    ] {
        let (m, r) = lower1(Generation::V4, IrInstruction::Collective(coll(kind, op)));
        let op_wire = if op == AluOp::Add { 0x04 } else { 0x00 };
        assert_eq!(
            r.unwrap(),
            vec![
                hand_d9(op_wire, 0x06, wire, 0x40),
                hand_da(0x1234, op_wire, 0x06, wire, 0x80)
            ]
        );
        assert_eq!(m.replica_groups().len(), 1);
        assert!(m.source_target_pairs().is_empty());
    }
}

#[test]
fn every_arm_uses_the_kind_lut_verbatim() {
    // S003 §2: kinds 2..=10 -> 01 02 03 04 09 05 06 07 08.
    let expected = [
        (K::AllReduce, 0x01),
        (K::ReduceScatter, 0x02),
        (K::AllGather, 0x03),
        (K::AllToAll, 0x04),
        (K::AllToAllV, 0x09),
        (K::Permute, 0x05),
        (K::PermuteReduce, 0x06),
        (K::PermuteImplicit, 0x07),
        (K::PermuteReduceImplicit, 0x08),
    ];
    assert_eq!(ARMS.len(), expected.len());
    for (kind, wire) in expected {
        let reduce = matches!(
            kind,
            K::AllReduce | K::ReduceScatter | K::PermuteReduce | K::PermuteReduceImplicit
        );
        let op = if reduce { AluOp::Add } else { AluOp::Bypass };
        let (_, r) = lower1(Generation::V2, IrInstruction::Collective(coll(kind, op)));
        let recs = r.unwrap();
        assert_eq!(recs[0][0x0E], wire, "{kind:?}");
        let two = (0x05..=0x08).contains(&wire);
        assert_eq!(recs.len(), if two { 2 } else { 1 }, "{kind:?}");
        assert_eq!(needs_second_leg(wire), two);
    }
    assert!(!needs_second_leg(0x00) && !needs_second_leg(0x0A) && !needs_second_leg(0xFF));
}

#[test]
fn dtype_follows_the_generation_column() {
    // F§6: float4_e2m1fn_x4 is 0x05 before v4 and 0x10 from v4.
    for (gen, tag) in [
        (Generation::V2, 0x05),
        (Generation::V3, 0x05),
        (Generation::V4, 0x10),
        (Generation::V5, 0x10),
    ] {
        let mut c = coll(K::AllGather, AluOp::Bypass);
        c.dtype = FP4X4;
        let (_, r) = lower1(gen, IrInstruction::Collective(c));
        assert_eq!(r.unwrap()[0][0x0D], tag, "{gen:?}");
    }
}

fn operand(id: u64) -> TransferOperand {
    TransferOperand {
        tensor_id: id,
        tensor_base: id + 0x100,
        num_elements_per_partition: id + 7,
    }
}

fn hand_cb(band: [u8; 8], id: u64) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[..4].copy_from_slice(&[0xCB, 0x10, 0, 0]);
    b[4..12].copy_from_slice(&band);
    b[0x10..0x18].copy_from_slice(&id.to_le_bytes());
    b[0x30..0x38].copy_from_slice(&(id + 0x100).to_le_bytes());
    b[0x38..0x40].copy_from_slice(&(id + 7).to_le_bytes());
    b
}

const BAND: [u8; 8] = [0x05, 3, 0x13, 4, 0x44, 0x33, 0x22, 0x11];

#[test]
fn send_and_recv_are_one_cb_and_an_attribute() {
    for direction in [Direction::Send, Direction::Recv] {
        let t = Transfer {
            direction,
            operand: operand(0xABCD),
            peer: 9,
            sync: sync(),
        };
        let (m, r) = lower1(Generation::V2, IrInstruction::Transfer(t));
        assert_eq!(r.unwrap(), vec![hand_cb(BAND, 0xABCD)]);
        assert_eq!(m.attributes().len(), 1);
        let a = m.attributes()[0];
        assert_eq!((a.kind, a.direction, a.peer), (2, direction, 9));
    }
}

fn local(kind: K, bytes: u64, lnc: u32) -> LocalSendRecv {
    LocalSendRecv {
        kind,
        send: operand(0x10),
        recv: operand(0x20),
        peer: 5,
        src_dtype: BF16,
        dst_dtype: FP32,
        src_ap: [0xA1; 16],
        dst_ap: [0xB2; 16],
        peer_partition: 0x33,
        bytes_per_partition: bytes,
        cores_per_lnc: lnc,
        sync: sync(),
    }
}

#[test]
fn local_send_recv_routes_by_generation_lnc_and_ceiling() {
    // S003 §5 byte map: dtypes +0x0C/+0x0D, src AP +0x10, enable +0x20 = 1,
    // peer partition +0x21, dst AP +0x30.
    let mut bf = [0u8; 64];
    bf[..4].copy_from_slice(&[0xBF, 0x10, 0, 0]);
    bf[4..12].copy_from_slice(&BAND);
    bf[0x0C] = 0x06;
    bf[0x0D] = 0x0A;
    bf[0x10..0x20].copy_from_slice(&[0xA1; 16]);
    bf[0x20] = 1;
    bf[0x21] = 0x33;
    bf[0x30..0x40].copy_from_slice(&[0xB2; 16]);
    let send_band = [0x05, 3, 0, 0, 0x44, 0x33, 0x22, 0x11];
    let recv_band = [0, 0, 0x13, 4, 0x44, 0x33, 0x22, 0x11];
    let via_cb = vec![hand_cb(send_band, 0x10), hand_cb(recv_band, 0x20)];
    for kind in [K::SendRecv, K::SendRecvCce] {
        let cases = [
            (Generation::V2, 1024, 2, false),
            (Generation::V3, 1024, 2, true),
            (Generation::V3, 1025, 2, false),
            (Generation::V4, 0, 2, true),
            (Generation::V5, 1024, 1, false),
        ];
        for (gen, bytes, lnc, mover) in cases {
            let (m, r) = lower1(gen, IrInstruction::LocalSendRecv(local(kind, bytes, lnc)));
            let recs = r.unwrap();
            if mover {
                assert_eq!(recs, vec![bf], "{gen:?} {bytes} {lnc}");
                assert!(m.attributes().is_empty());
            } else {
                assert_eq!(recs, via_cb, "{gen:?} {bytes} {lnc}");
                let dirs: Vec<_> = m
                    .attributes()
                    .iter()
                    .map(|a| (a.direction, a.peer))
                    .collect();
                assert_eq!(dirs, vec![(Direction::Send, 5), (Direction::Recv, 5)]);
            }
        }
    }
}

#[test]
fn every_error_is_named_and_leaves_the_module_unchanged() {
    let c = |f: &dyn Fn(&mut Collective)| {
        let mut c = coll(K::AllReduce, AluOp::Add);
        f(&mut c);
        IrInstruction::Collective(c)
    };
    let p = |f: &dyn Fn(&mut Collective)| {
        let mut c = coll(K::Permute, AluOp::Bypass);
        f(&mut c);
        IrInstruction::Collective(c)
    };
    let cases: Vec<(IrInstruction, &str)> = vec![
        (c(&|c| c.kind = K::SendRecv), "send_recv_kind"),
        (c(&|c| c.kind = K::SendRecvCce), "send_recv_kind"),
        (c(&|c| c.cc_dim = 2), "bad_cc_dim"),
        (c(&|c| c.dtype = 20), "dtype_out_of_range"),
        (c(&|c| c.cce_op = AluOp::Max), "cce_op_not_shipped"),
        (c(&|c| c.cce_op = AluOp::Average), "cce_op_not_shipped"),
        (c(&|c| c.cce_op = AluOp::Bypass), "op_not_accepted"),
        (p(&|c| c.cce_op = AluOp::Add), "op_not_accepted"),
        (p(&|c| c.src2 = None), "missing_second_ap"),
        (c(&|c| c.src2 = Some(ap(1))), "unexpected_second_ap"),
        (
            c(&|c| c.source_target_pairs = vec![(0, 1)]),
            "pairs_on_group_kind",
        ),
        (
            p(&|c| c.replica_groups = vec![vec![0]]),
            "groups_on_pair_kind",
        ),
        (c(&|c| c.replica_groups.clear()), "no_replica_groups"),
        (
            p(&|c| c.source_target_pairs.clear()),
            "no_source_target_pairs",
        ),
        (c(&|c| c.replica_groups = vec![vec![0; 4097]]), "too_large"),
        (
            p(&|c| c.source_target_pairs = (0..4097).map(|i| (i, i)).collect()),
            "too_large",
        ),
        (
            c(&|c| c.replica_groups = vec![vec![0], vec![]]),
            "empty_group",
        ),
        (
            c(&|c| c.replica_groups = vec![vec![0, 1], vec![1]]),
            "duplicate_rank",
        ),
        (
            c(&|c| c.replica_groups = vec![vec![2, 2]]),
            "duplicate_rank",
        ),
        (
            p(&|c| c.source_target_pairs = vec![(0, 1), (0, 2)]),
            "duplicate_source",
        ),
        (
            p(&|c| c.source_target_pairs = vec![(0, 1), (2, 1)]),
            "duplicate_target",
        ),
        (c(&|c| c.sync.wait_mode = WaitMode(0x80)), "record"),
        (
            IrInstruction::LocalSendRecv(local(K::AllReduce, 0, 2)),
            "not_send_recv_kind",
        ),
        (
            IrInstruction::LocalSendRecv(LocalSendRecv {
                dst_dtype: 99,
                ..local(K::SendRecv, 0, 2)
            }),
            "dtype_out_of_range",
        ),
        (
            IrInstruction::Transfer(Transfer {
                direction: Direction::Send,
                operand: operand(1),
                peer: 0,
                sync: Sync {
                    update_mode: UpdateMode(0x06), // not an UPDATE_MODE member (FACTS §2)
                    ..sync()
                },
            }),
            "record",
        ),
    ];
    for (insn, name) in cases {
        let mut m = Module::new(Generation::V3);
        lower(
            &mut m,
            &IrInstruction::Collective(coll(K::AllGather, AluOp::Bypass)),
        )
        .unwrap();
        let before = m.clone();
        let e = lower(&mut m, &insn).unwrap_err();
        assert_eq!(e.name(), name, "{insn:?}");
        assert!(!e.to_string().is_empty());
        assert_eq!(m, before, "{name}: module changed on error");
    }
}

#[test]
fn registries_dedupe_and_ids_are_dense() {
    let mut m = Module::new(Generation::V2);
    let a = coll(K::AllReduce, AluOp::Add);
    let mut b = coll(K::AllGather, AluOp::Bypass);
    b.replica_groups = vec![vec![0, 1, 2, 3]];
    for c in [&a, &b, &a] {
        lower(&mut m, &IrInstruction::Collective(c.clone())).unwrap();
    }
    let ids: Vec<_> = m.lowered().iter().map(|l| l.side.clone()).collect();
    assert_eq!(
        ids,
        vec![
            vec![SideRef::ReplicaGroups(0)],
            vec![SideRef::ReplicaGroups(1)],
            vec![SideRef::ReplicaGroups(0)]
        ]
    );
    assert_eq!(m.replica_groups().len(), 2);
}

#[test]
fn module_json_names_records_and_every_entry() {
    let mut m = Module::new(Generation::V3);
    lower(
        &mut m,
        &IrInstruction::Collective(coll(K::Permute, AluOp::Bypass)),
    )
    .unwrap();
    lower(
        &mut m,
        &IrInstruction::Collective(coll(K::AllReduce, AluOp::Add)),
    )
    .unwrap();
    let j = m.to_json();
    assert!(j.starts_with("{\"generation\":\"v3\",\"instructions\":[{\"records\":[\"d9100000"));
    assert!(j.contains("\"side\":[{\"table\":\"source_target_pairs\",\"id\":0}]"));
    assert!(j.contains("\"replica_groups\":[{\"id\":0,\"groups\":[[0,1],[2,3]]}]"));
    assert!(j.contains("\"source_target_pairs\":[{\"id\":0,\"pairs\":[[0,1],[1,0]]}]"));
    assert!(j.ends_with("\"attributes\":[]}"));
}

// ---------------------------------------------------------------------------
// Stream pairing (SPEC §5.3, DL-12)
// ---------------------------------------------------------------------------

fn cat(parts: &[[u8; 64]]) -> Vec<u8> {
    parts.iter().flatten().copied().collect()
}

#[test]
fn pairs_legs_and_rejects_stray_missing_and_mismatched() {
    let d9p = hand_d9(0, 6, 0x05, 0);
    let da = hand_da(7, 0, 6, 0x05, 0);
    let d9g = hand_d9(4, 6, 0x01, 0);
    let cb = hand_cb(BAND, 1);
    let ok = parse_bundle_stream(&cat(&[d9g, d9p, da, cb]), G).unwrap();
    assert_eq!(
        ok,
        vec![
            BundleItem::Custom(StreamItem::Other {
                index: 0,
                opcode: 0xD9
            }),
            BundleItem::CollectivePair { index: 1 },
            BundleItem::Custom(StreamItem::Other {
                index: 3,
                opcode: 0xCB
            }),
        ]
    );
    let err = |parts: &[[u8; 64]]| parse_bundle_stream(&cat(parts), G).unwrap_err();
    assert_eq!(err(&[da]), StreamError::StrayLeg { index: 0 });
    assert_eq!(err(&[d9g, da]), StreamError::StrayLeg { index: 1 });
    assert_eq!(err(&[d9p, da, da]), StreamError::StrayLeg { index: 2 });
    assert_eq!(err(&[d9p]), StreamError::MissingLeg { index: 0 });
    assert_eq!(err(&[cb, d9p, cb]), StreamError::MissingLeg { index: 1 });
    assert_eq!(err(&[d9p, d9p, da]), StreamError::MissingLeg { index: 0 });
    let other_kind = hand_da(7, 0, 6, 0x06, 0);
    assert_eq!(
        err(&[d9p, other_kind]),
        StreamError::LegMismatch {
            index: 1,
            primary: [0, 6, 5],
            secondary: [0, 6, 6]
        }
    );
    // The custom-op parser keeps treating both as plain bundles.
    let plain = tpb_core::stream::parse_custom_op_stream(&cat(&[da, d9p]), G).unwrap();
    assert_eq!(plain.len(), 2);
}

// ---------------------------------------------------------------------------
// Properties (issue 13 §5)
// ---------------------------------------------------------------------------

fn any_gen() -> impl Strategy<Value = Generation> {
    prop::sample::select(Generation::ALL.to_vec())
}

fn any_sync() -> impl Strategy<Value = Sync> {
    (
        prop::sample::select(vec![0x00u8, 0x05, 0x07, 0x85]),
        any::<u8>(),
        prop::sample::select(vec![0x00u8, 0x01, 0x13, 0x99]),
        any::<u8>(),
        any::<u32>(),
    )
        .prop_map(|(wm, wi, um, ui, v)| Sync {
            debug_cmd: 0,
            debug_hint: 0,
            wait_mode: WaitMode(wm),
            wait_idx: wi,
            update_mode: UpdateMode(um),
            update_idx: ui,
            semaphore_value: v,
        })
}

/// A partition of distinct ranks into 1..=4 non-empty groups.
fn any_groups() -> impl Strategy<Value = Vec<Vec<u32>>> {
    (prop::collection::btree_set(any::<u32>(), 1..12), 1usize..=4).prop_map(|(ranks, n)| {
        let ranks: Vec<u32> = ranks.into_iter().collect();
        let n = n.min(ranks.len());
        let mut groups = vec![Vec::new(); n];
        for (i, r) in ranks.into_iter().enumerate() {
            groups[i % n].push(r);
        }
        groups
    })
}

/// Pairs with distinct sources and distinct targets.
fn any_pairs() -> impl Strategy<Value = Vec<(u32, u32)>> {
    prop::collection::btree_map(any::<u32>(), any::<u32>(), 1..10).prop_map(|m| {
        let mut seen = std::collections::BTreeSet::new();
        m.into_iter().filter(|(_, t)| seen.insert(*t)).collect()
    })
}

/// A valid collective of any arm.
fn any_collective() -> impl Strategy<Value = Collective> {
    (
        prop::sample::select(ARMS.to_vec()),
        0u32..20,
        any::<[u8; 48]>(),
        any::<[u8; 48]>(),
        any_groups(),
        any_pairs(),
        any::<u16>(),
        0u32..=1,
        any_sync(),
    )
        .prop_map(
            |(arm, dtype, src, src2, groups, pairs, channel_id, cc_dim, sync)| {
                let by_pairs = arm.geometry == tpb_core::lower::Geometry::SourceTargetPairs;
                Collective {
                    kind: arm.kind,
                    cce_op: arm.op,
                    dtype,
                    src,
                    src2: arm.second_leg.then_some(src2),
                    replica_groups: if by_pairs { vec![] } else { groups },
                    source_target_pairs: if by_pairs { pairs } else { vec![] },
                    channel_id,
                    cc_dim,
                    sync,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No geometry on the wire: other groups/pairs give the same records and
    /// other side-tables.
    #[test]
    fn no_geometry_on_the_wire(gen in any_gen(), c in any_collective(),
                               groups in any_groups(), pairs in any_pairs()) {
        let mut d = c.clone();
        if d.source_target_pairs.is_empty() { d.replica_groups = groups } else { d.source_target_pairs = pairs }
        let (m1, r1) = lower1(gen, IrInstruction::Collective(c.clone()));
        let (m2, r2) = lower1(gen, IrInstruction::Collective(d.clone()));
        prop_assert_eq!(r1.unwrap(), r2.unwrap());
        let same = c == d;
        prop_assert_eq!(m1.replica_groups() == m2.replica_groups()
            && m1.source_target_pairs() == m2.source_target_pairs(), same);
    }

    /// Channel id and cc_dim never reach a one-leg arm's record.
    #[test]
    fn one_leg_arms_ignore_channel_id_and_cc_dim(gen in any_gen(), c in any_collective(),
                                                 ch in any::<u16>(), dim in 0u32..=1) {
        let d = Collective { channel_id: ch, cc_dim: dim, ..c.clone() };
        let (_, r1) = lower1(gen, IrInstruction::Collective(c.clone()));
        let (_, r2) = lower1(gen, IrInstruction::Collective(d));
        let (r1, r2) = (r1.unwrap(), r2.unwrap());
        prop_assert_eq!(r1[0], r2[0]);
        if c.src2.is_some() {
            prop_assert_eq!(&r2[1][4..6], &ch.to_le_bytes()[..]);
        }
    }

    /// The peer is not on the wire either.
    #[test]
    fn peer_is_not_on_the_wire(gen in any_gen(), id in any::<u64>(), p1 in any::<u32>(),
                               p2 in any::<u32>(), s in any_sync(), send in any::<bool>()) {
        let t = |peer| IrInstruction::Transfer(Transfer {
            direction: if send { Direction::Send } else { Direction::Recv },
            operand: operand(id / 2), peer, sync: s });
        let (m1, r1) = lower1(gen, t(p1));
        let (m2, r2) = lower1(gen, t(p2));
        prop_assert_eq!(r1.unwrap(), r2.unwrap());
        prop_assert_eq!(m1.attributes() == m2.attributes(), p1 == p2);
    }

    /// Decoding the records recovers kind, op, dtype, APs and channel id.
    #[test]
    fn decoding_recovers_the_fields(gen in any_gen(), c in any_collective()) {
        let (_, r) = lower1(gen, IrInstruction::Collective(c.clone()));
        let recs = r.unwrap();
        let tag = dtype_to_wire(c.dtype, gen.dtype_column()).unwrap();
        let Ok(Instruction::CollectiveCompute(p)) = decode(&tpb_core::Bundle(recs[0]), gen) else {
            return Err(TestCaseError::fail("0xD9 does not decode"));
        };
        prop_assert_eq!((p.kind, p.cce_op, p.dtype, p.ap, p.sync), (c.kind, c.cce_op, tag, c.src, c.sync));
        prop_assert_eq!(recs.len(), 1 + usize::from(c.src2.is_some()));
        if let Some(src2) = c.src2 {
            let Ok(Instruction::CollectiveComputeSecondary(s)) = decode(&tpb_core::Bundle(recs[1]), gen) else {
                return Err(TestCaseError::fail("0xDA does not decode"));
            };
            prop_assert_eq!((s.kind, s.cce_op, s.dtype, s.ap, s.channel_id), (c.kind, c.cce_op, tag, src2, c.channel_id));
        }
    }

    /// Deterministic; registries hold exactly the entries the records need;
    /// the record stream pairs back into one item per two-leg collective.
    #[test]
    fn deterministic_minimal_and_pairable(gen in any_gen(),
                                          cs in prop::collection::vec(any_collective(), 1..6),
                                          ts in prop::collection::vec((any::<u64>(), any::<u32>(), any_sync()), 0..3)) {
        let mut insns: Vec<IrInstruction> = cs.into_iter().map(IrInstruction::Collective).collect();
        for (id, peer, sync) in ts {
            insns.push(IrInstruction::Transfer(Transfer { direction: Direction::Recv, operand: operand(id / 2), peer, sync }));
        }
        let run = || {
            let mut m = Module::new(gen);
            for i in &insns { lower(&mut m, i).unwrap(); }
            m
        };
        let (m1, m2) = (run(), run());
        prop_assert_eq!(m1.to_json(), m2.to_json());
        let mut used = std::collections::BTreeSet::new();
        for l in m1.lowered() { used.extend(l.side.iter().copied()); }
        let all: std::collections::BTreeSet<SideRef> = (0..m1.replica_groups().len()).map(SideRef::ReplicaGroups)
            .chain((0..m1.source_target_pairs().len()).map(SideRef::SourceTargetPairs))
            .chain((0..m1.attributes().len()).map(SideRef::Attribute)).collect();
        prop_assert_eq!(used, all);
        let bytes: Vec<u8> = m1.records().flat_map(|b| b.0).collect();
        let items = parse_bundle_stream(&bytes, G).unwrap();
        prop_assert_eq!(items.len(), m1.lowered().len());
    }
}

/// Anything at all: never panics; an error leaves the module as it was; a
/// success names an existing entry.
fn any_raw_collective() -> impl Strategy<Value = Collective> {
    (
        (
            prop::sample::select(K::ALL.to_vec()),
            prop::sample::select(AluOp::ALL.to_vec()),
            0u32..24,
            any::<[u8; 48]>(),
            prop::option::of(any::<[u8; 48]>()),
        ),
        prop::collection::vec(prop::collection::vec(0u32..6, 0..4), 0..4),
        prop::collection::vec((0u32..6, 0u32..6), 0..4),
        any::<u16>(),
        0u32..4,
        any_sync(),
    )
        .prop_map(
            |(
                (kind, cce_op, dtype, src, src2),
                replica_groups,
                source_target_pairs,
                channel_id,
                cc_dim,
                sync,
            )| {
                Collective {
                    kind,
                    cce_op,
                    dtype,
                    src,
                    src2,
                    replica_groups,
                    source_target_pairs,
                    channel_id,
                    cc_dim,
                    sync,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn total_and_atomic(gen in any_gen(), c in any_raw_collective()) {
        let mut m = Module::new(gen);
        lower(&mut m, &IrInstruction::Collective(coll(K::AllToAll, AluOp::Bypass))).unwrap();
        let before = m.clone();
        match lower(&mut m, &IrInstruction::Collective(c)) {
            Err(_) => prop_assert_eq!(m, before),
            Ok(l) => {
                prop_assert_eq!(m.lowered().len(), 2);
                for r in l.side {
                    let ok = match r {
                        SideRef::ReplicaGroups(i) => i < m.replica_groups().len(),
                        SideRef::SourceTargetPairs(i) => i < m.source_target_pairs().len(),
                        SideRef::Attribute(i) => i < m.attributes().len(),
                    };
                    prop_assert!(ok);
                }
            }
        }
    }
}
