//! The oracle's lowering and pairing, against bytes written by hand from seed 003
//! §3.1/§3.2/§3.4/§4.1/§5 and the SPEC §5.4 table.

use tpb_oracle::{parse_bundle_stream, Ledger, Request, Span};

const BAND: (u8, u8, u8, u8, u32) = (0x85, 9, 0x01, 2, 0xA0B0_C0D0);

fn collective(
    kind: u32,
    op: u32,
    groups: Vec<Vec<u32>>,
    pairs: Vec<(u32, u32)>,
    two: bool,
) -> Request {
    Request::Collective {
        kind,
        op,
        dtype: 16, // float32 -> 0x0A (FACTS §6)
        ap: [0x11; 48],
        ap2: two.then_some([0x22; 48]),
        groups,
        pairs,
        channel: 0xBEEF,
        dim: 0,
        band: BAND,
    }
}

fn head(op: u8) -> [u8; 12] {
    [op, 0x10, 0, 0, 0x85, 9, 0x01, 2, 0xD0, 0xC0, 0xB0, 0xA0]
}

#[test]
fn reduce_scatter_and_permute_reduce() {
    let mut l = Ledger::new(2);
    let out = l
        .lower(&collective(3, 4, vec![vec![4, 5]], vec![], false))
        .unwrap();
    let mut d9 = [0u8; 64];
    d9[..12].copy_from_slice(&head(0xD9));
    d9[12..16].copy_from_slice(&[0x04, 0x0A, 0x02, 0]);
    d9[16..].copy_from_slice(&[0x11; 48]);
    assert_eq!(out.records, vec![d9]);
    assert_eq!(out.refs, vec![("replica_groups", 0)]);

    let out = l
        .lower(&collective(8, 4, vec![], vec![(1, 2), (2, 1)], true))
        .unwrap();
    let mut da = [0u8; 64];
    da[0] = 0xDA;
    da[4] = 0xEF;
    da[5] = 0xBE;
    da[12..16].copy_from_slice(&[0x04, 0x0A, 0x06, 0]);
    da[16..].copy_from_slice(&[0x22; 48]);
    assert_eq!(out.records[1], da);
    assert_eq!(out.records[0][0x0E], 0x06);
    assert_eq!(out.refs, vec![("source_target_pairs", 0)]);
    assert_eq!(l.source_target_pairs, vec![vec![(1, 2), (2, 1)]]);
}

#[test]
fn rejections_by_name() {
    let cases = [
        (
            collective(0, 0, vec![vec![0]], vec![], false),
            "send_recv_kind",
        ),
        (
            collective(4, 4, vec![vec![0]], vec![], false),
            "op_not_accepted",
        ),
        (
            collective(2, 6, vec![vec![0]], vec![], false),
            "cce_op_not_shipped",
        ),
        (
            collective(7, 0, vec![], vec![], true),
            "no_source_target_pairs",
        ),
        (
            collective(9, 0, vec![], vec![(0, 1)], true),
            "pairs_on_group_kind",
        ),
        (
            collective(9, 0, vec![vec![0, 1]], vec![], false),
            "missing_second_ap",
        ),
        (
            collective(7, 0, vec![], vec![(0, 1), (3, 1)], true),
            "duplicate_target",
        ),
        (
            collective(5, 0, vec![vec![0], vec![0]], vec![], false),
            "duplicate_rank",
        ),
    ];
    for (req, name) in cases {
        let mut l = Ledger::new(3);
        let before = l.clone();
        assert_eq!(l.lower(&req).unwrap_err().name(), name);
        assert_eq!(l, before);
    }
}

#[test]
fn local_swap_routes() {
    let swap = |bytes| Request::LocalSwap {
        kind: 1,
        outgoing: (1, 2, 3),
        incoming: (4, 5, 6),
        peer: 7,
        src_dtype: 0,
        dst_dtype: 0,
        src_ap: [1; 16],
        dst_ap: [2; 16],
        partition: 8,
        bytes,
        lnc: 2,
        band: BAND,
    };
    let mut l = Ledger::new(3);
    let out = l.lower(&swap(1024)).unwrap();
    assert_eq!(out.records.len(), 1);
    assert_eq!(&out.records[0][..2], &[0xBF, 0x10]);
    assert_eq!((out.records[0][0x20], out.records[0][0x21]), (1, 8));
    let out = l.lower(&swap(1025)).unwrap();
    assert_eq!(out.records.len(), 2);
    // The first 0xCB waits, the last updates (SPEC DL-10).
    assert_eq!(&out.records[0][4..8], &[0x85, 9, 0, 0]);
    assert_eq!(&out.records[1][4..8], &[0, 0, 0x01, 2]);
    assert_eq!(out.records[1][0x10], 4);
    assert_eq!(l.attributes, vec![(2, "send", 7), (2, "recv", 7)]);
    let mut v2 = Ledger::new(2);
    assert_eq!(v2.lower(&swap(0)).unwrap().records.len(), 2);
}

#[test]
fn bundle_stream_pairs() {
    let out = Ledger::new(2).lower(&collective(10, 4, vec![vec![0, 1]], vec![], true));
    let out = out.unwrap();
    let mut bytes: Vec<u8> = out.records.concat();
    // Then one 0xDE bundle.
    bytes.push(0xDE);
    bytes.extend([0u8; 63]);
    assert_eq!(
        parse_bundle_stream(&bytes, tpb_oracle::Generation::Cayman).unwrap(),
        vec![
            Span {
                start: 0,
                count: 2,
                what: "pair"
            },
            Span {
                start: 2,
                count: 1,
                what: "single"
            }
        ]
    );
    let da = out.records[1];
    assert_eq!(
        parse_bundle_stream(&da, tpb_oracle::Generation::Cayman)
            .unwrap_err()
            .name(),
        "stray_leg"
    );
    assert_eq!(
        parse_bundle_stream(&out.records[0], tpb_oracle::Generation::Cayman)
            .unwrap_err()
            .name(),
        "missing_leg"
    );
}
