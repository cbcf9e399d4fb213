//! Round-trip properties for every opcode: decode(encode(x), G) == x, and for any
//! bundle that decodes, encode(decode(b, G)) == b; fields()/from_fields() invert.

use proptest::prelude::*;
use tpb_core::insn::*;
use tpb_core::lut::{AluOp, CollectiveKind};
use tpb_core::Bundle;

/// The generation these tests run under: v3 encodes all eleven opcodes (seed 003).
const G: tpb_core::Generation = tpb_core::Generation::V3;

fn sync() -> impl Strategy<Value = Sync> {
    let waits: Vec<WaitMode> = tpb_core::events::WAIT_MODES
        .iter()
        .map(|(b, _)| WaitMode(*b))
        .collect();
    let updates: Vec<UpdateMode> = tpb_core::events::UPDATE_MODES
        .iter()
        .map(|(b, _)| UpdateMode(*b))
        .collect();
    (
        any::<[u8; 2]>(),
        prop::sample::select(waits),
        any::<u8>(),
        prop::sample::select(updates),
        any::<u8>(),
        any::<u32>(),
    )
        .prop_map(
            |([debug_cmd, debug_hint], wait_mode, wait_idx, update_mode, update_idx, value)| Sync {
                debug_cmd,
                debug_hint,
                wait_mode,
                wait_idx,
                update_mode,
                update_idx,
                semaphore_value: value,
            },
        )
}

/// Tags of G's (pre-v4) dtype column (F§6).
fn dtype() -> impl Strategy<Value = u8> {
    0x01u8..=0x0F
}
fn cce() -> impl Strategy<Value = AluOp> {
    prop::sample::select(vec![AluOp::Bypass, AluOp::Add])
}
fn kind() -> impl Strategy<Value = CollectiveKind> {
    prop::sample::select(CollectiveKind::ALL[2..].to_vec())
}
fn ap48() -> impl Strategy<Value = [u8; 48]> {
    prop::collection::vec(any::<u8>(), 48).prop_map(|v| <[u8; 48]>::try_from(v).unwrap())
}
fn ap32() -> impl Strategy<Value = [u8; 32]> {
    any::<[u8; 32]>()
}
fn ap16() -> impl Strategy<Value = [u8; 16]> {
    any::<[u8; 16]>()
}

fn scratch() -> impl Strategy<Value = (u8, u32, u32, u8)> {
    prop_oneof![
        Just((0u8, 0u32, 0u32, 0u8)),
        (1u8..=255, any::<u32>(), 1u32..=u32::MAX, 1u8..=255),
    ]
}

fn instruction() -> impl Strategy<Value = Instruction> {
    prop_oneof![
        (sync(), any::<u16>(), any::<u8>(), any::<u8>(), scratch()).prop_map(
            |(sync, num_payloads, function_id, num_arguments, (b10, d14, d18, b1c))| {
                Instruction::CustomOpHeader(CustomOpHeader {
                    sync,
                    num_payloads,
                    function_id,
                    num_arguments,
                    has_scratch_space: b10,
                    scratch_space_addr: d14,
                    scratch_space_size: d18,
                    scratch_space_num_partitions: b1c,
                })
            }
        ),
        (sync(), ap48()).prop_map(|(sync, ap)| {
            Instruction::CustomOpPayload(CustomOpPayload {
                sync,
                arg_type: 1,
                ap,
            })
        }),
        (sync(), cce(), dtype(), kind(), ap48()).prop_map(|(sync, cce_op, dtype, kind, ap)| {
            Instruction::CollectiveCompute(CollectiveCompute {
                sync,
                cce_op,
                dtype,
                kind,
                ap,
            })
        }),
        (any::<u16>(), cce(), dtype(), kind(), ap48()).prop_map(
            |(channel_id, cce_op, dtype, kind, ap)| {
                Instruction::CollectiveComputeSecondary(CollectiveComputeSecondary {
                    channel_id,
                    cce_op,
                    dtype,
                    kind,
                    ap,
                })
            }
        ),
        (sync(), any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(sync, a, b, c)| {
            Instruction::CollectiveSendRecv(CollectiveSendRecv {
                sync,
                tensor_id: a,
                tensor_base: b,
                num_elements_per_partition: c,
            })
        }),
        (sync(), dtype(), dtype(), ap16(), any::<u8>(), ap16()).prop_map(
            |(sync, s, d, sa, p, da)| {
                Instruction::Gpsimdsb2sb(Gpsimdsb2sb {
                    sync,
                    src_dtype: s,
                    dst_dtype: d,
                    src_ap: sa,
                    peer_partition: p,
                    dst_ap: da,
                })
            }
        ),
        (sync(), dtype(), any::<u8>(), any::<u8>(), ap16(), ap16()).prop_map(
            |(sync, dtype, f0e, f0f, i, o)| {
                Instruction::GetSequenceBounds(GetSequenceBounds {
                    sync,
                    dtype,
                    flag_0e: f0e,
                    flag_0f: f0f,
                    in_ap: i,
                    out_ap: o,
                })
            }
        ),
        (sync(), any::<u32>(), any::<u32>(), ap32()).prop_map(|(sync, a, b, ap)| {
            Instruction::CoreBarrier(CoreBarrier {
                sync,
                barrier_id: a,
                barrier_index: b,
                sema_ap: ap,
            })
        }),
        (sync(), any::<bool>(), any::<u8>()).prop_map(|(sync, valid, reg_id)| {
            Instruction::GetGlobalRankId(GetGlobalRankId {
                sync,
                valid,
                reg_id,
            })
        }),
        (
            sync(),
            any::<u16>(),
            any::<u16>(),
            any::<u16>(),
            any::<u8>(),
            any::<u16>()
        )
            .prop_map(|(sync, g, c, i, r, s)| {
                Instruction::GetCurProcessingRankId(GetCurProcessingRankId {
                    sync,
                    group_id: g,
                    channel_id: c,
                    iteration_id: i,
                    reg_id: r,
                    stream_id: s,
                })
            }),
        (sync(), any::<u32>(), any::<u8>()).prop_map(|(sync, handle, ap_byte)| {
            Instruction::TensorCompletion(TensorCompletion {
                sync,
                handle,
                ap_byte,
            })
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn decode_encode(x in instruction()) {
        let b = x.encode(G).expect("generated values are encodable");
        prop_assert_eq!(b.opcode(), x.opcode());
        prop_assert_eq!(decode(&b, G), Ok(x));
        // the per-family decoder agrees with the dispatcher
        prop_assert_eq!(decode(&b, G).map(|i| i.mnemonic()), Ok(x.mnemonic()));
    }

    #[test]
    fn fields_from_fields(x in instruction()) {
        let f = x.fields();
        let names: Vec<&str> = f.iter().map(|(n, _)| *n).collect();
        prop_assert_eq!(Some(names), Instruction::field_names(x.opcode()));
        prop_assert_eq!(Instruction::from_fields(x.opcode(), &f, G), Ok(x));
    }

    /// Flip one byte of an encoder image; whatever still decodes re-encodes to itself.
    #[test]
    fn encode_decode_mutated(x in instruction(), pos in 0usize..64, val in any::<u8>()) {
        let mut b = x.encode(G).unwrap();
        b.0[pos] = val;
        if let Ok(i) = decode(&b, G) {
            prop_assert_eq!(i.encode(G), Ok(b));
        }
    }

    /// Random sparse bundles with a seed opcode; whatever decodes re-encodes to itself.
    #[test]
    fn encode_decode_sparse(
        op in prop::sample::select(tpb_core::mnemonics::seed_opcodes().collect::<Vec<u8>>()),
        edits in prop::collection::vec((1usize..64, any::<u8>()), 0..6),
    ) {
        let mut b = Bundle::ZERO;
        b.0[0] = op;
        b.0[1] = if op == 0xDA { 0 } else { 0x10 };
        if op == 0x86 { b.0[0x0F] = 1; }
        if op == 0xBF { b.0[0x0C] = 1; b.0[0x0D] = 1; b.0[0x20] = 1; }
        if op == 0xBE { b.0[0x0C] = 1; }
        if op == 0xD9 || op == 0xDA { b.0[0x0D] = 1; b.0[0x0E] = 1; }
        for (o, v) in edits { b.0[o] = v; }
        if let Ok(i) = decode(&b, G) {
            prop_assert_eq!(i.encode(G), Ok(b));
        }
    }

    #[test]
    fn group_roundtrip(
        sync in sync(),
        function_id in any::<u8>(),
        output in ap48(),
        args in prop::collection::vec(ap48(), 0..8),
    ) {
        let g = CustomOpGroup {
            sync, function_id,
            has_scratch_space: 0, scratch_space_addr: 0, scratch_space_size: 0, scratch_space_num_partitions: 0,
            output, args: args.clone(),
        };
        let bundles = g.encode(G).unwrap();
        prop_assert_eq!(bundles.len(), args.len() + 2);
        let h = CustomOpHeader::decode(&bundles[0], G).unwrap();
        prop_assert_eq!(usize::from(h.num_payloads), args.len() + 2);
        prop_assert_eq!(usize::from(h.num_arguments), args.len());
        prop_assert_eq!(CustomOpGroup::decode(&bundles, G), Ok(g));
        let bytes: Vec<u8> = bundles.iter().flat_map(|b| b.0).collect();
        let items = tpb_core::stream::parse_custom_op_stream(&bytes, G).unwrap();
        prop_assert_eq!(items.len(), 1);
    }
}
