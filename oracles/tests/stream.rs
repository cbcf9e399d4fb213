//! Stream parser (SPEC §5.3, D-10).

mod common;

use common::img;
use tpb_oracle::*;

/// The chip these tests run under: Cayman (v3) emits all eleven opcodes (seed 003).
const C: tpb_oracle::Generation = tpb_oracle::Generation::Cayman;

fn header(n_args: u8, num_payloads: u16) -> [u8; 64] {
    let n = num_payloads.to_le_bytes();
    img(&[(0, &[0x85, 0x10]), (0x0C, &n), (0x0E, &[3, n_args])])
}

fn payload() -> [u8; 64] {
    img(&[(0, &[0x86, 0x10]), (0x0F, &[1]), (0x20, &[0xAB])])
}

fn other(op: u8) -> [u8; 64] {
    img(&[(0, &[op, 0x10])])
}

fn cat(parts: &[[u8; 64]]) -> Vec<u8> {
    parts.iter().flatten().copied().collect()
}

fn err(bytes: &[u8]) -> (&'static str, Option<usize>) {
    let e = parse_stream(bytes, C).unwrap_err();
    (e.name(), e.index())
}

#[test]
fn empty_and_simple_streams() {
    assert_eq!(parse_stream(&[], C), Ok(vec![]));
    let s = cat(&[
        other(0xD9),
        header(1, 3),
        payload(),
        payload(),
        other(0x00),
        header(0, 2),
        payload(),
    ]);
    assert_eq!(
        parse_stream(&s, C),
        Ok(vec![
            Item::Other {
                index: 0,
                opcode: 0xD9
            },
            Item::Group {
                header_index: 1,
                n_args: 1
            },
            Item::Other {
                index: 4,
                opcode: 0x00
            },
            Item::Group {
                header_index: 5,
                n_args: 0
            },
        ])
    );
}

#[test]
fn other_bundles_are_not_validated() {
    // SPEC §5.3 only validates 0x85 / 0x86; garbage elsewhere is an Other item.
    let mut junk = [0xFFu8; 64];
    junk[0] = 0x13;
    assert_eq!(
        parse_stream(&junk, C),
        Ok(vec![Item::Other {
            index: 0,
            opcode: 0x13
        }])
    );
}

#[test]
fn trailing_bytes_first() {
    for len in [1usize, 63, 65, 127, 130] {
        let bytes = vec![0x86u8; len];
        let e = parse_stream(&bytes, C).unwrap_err();
        assert_eq!(e, StreamRejection::TrailingBytes { len });
        assert_eq!((e.name(), e.index()), ("trailing_bytes", None));
    }
}

#[test]
fn invalid_record() {
    let mut bad_h = header(0, 2);
    bad_h[0x30] = 1;
    let s = cat(&[other(0xD9), bad_h, payload()]);
    let e = parse_stream(&s, C).unwrap_err();
    assert_eq!((e.name(), e.index()), ("invalid_record", Some(1)));
    match e {
        StreamRejection::InvalidRecord { rejection, .. } => {
            assert_eq!(rejection.predicate_name(), "custom_op_header_reserved_zero");
            assert_eq!(rejection.offset, 0x30);
        }
        other => panic!("{other:?}"),
    }
    let mut bad_p = payload();
    bad_p[0x0C] = 1;
    assert_eq!(
        err(&cat(&[header(0, 2), bad_p])),
        ("invalid_record", Some(1))
    );
    // an invalid 0x86 with no open group is invalid_record, not stray_payload
    assert_eq!(
        err(&cat(&[other(0xD9), bad_p])),
        ("invalid_record", Some(1))
    );
    // invalid header checked before payload count
    let mut bad_both = header(1, 7);
    bad_both[1] = 0;
    assert_eq!(err(&cat(&[bad_both])), ("invalid_record", Some(0)));
}

#[test]
fn payload_count_mismatch() {
    let s = cat(&[header(2, 3), payload(), payload(), payload()]);
    let e = parse_stream(&s, C).unwrap_err();
    assert_eq!(
        e,
        StreamRejection::PayloadCountMismatch {
            index: 0,
            num_payloads: 3,
            num_arguments: 2
        }
    );
    assert_eq!(
        err(&cat(&[header(255, 1)])),
        ("payload_count_mismatch", Some(0))
    );
    // num_payloads is u16: 257 = 255 + 2 is consistent
    let mut parts = vec![header(255, 257)];
    parts.extend(std::iter::repeat_n(payload(), 256));
    assert_eq!(
        parse_stream(&cat(&parts), C),
        Ok(vec![Item::Group {
            header_index: 0,
            n_args: 255
        }])
    );
}

#[test]
fn stray_payload() {
    assert_eq!(err(&cat(&[payload()])), ("stray_payload", Some(0)));
    // a group closes after num_arguments + 1 payloads; the next 0x86 is stray
    assert_eq!(
        err(&cat(&[header(1, 3), payload(), payload(), payload()])),
        ("stray_payload", Some(3))
    );
    assert_eq!(
        err(&cat(&[other(0xDE), payload()])),
        ("stray_payload", Some(1))
    );
}

#[test]
fn short_group() {
    let e = parse_stream(&cat(&[header(2, 4), payload()]), C).unwrap_err();
    assert_eq!(
        e,
        StreamRejection::ShortGroup {
            header_index: 0,
            expected: 3,
            found: 1
        }
    );
    assert_eq!((e.name(), e.index()), ("short_group", Some(0)));
    assert_eq!(
        err(&cat(&[other(1), header(0, 2)])),
        ("short_group", Some(1))
    );
    assert_eq!(
        err(&cat(&[header(1, 3), payload(), other(0xD9), payload()])),
        ("short_group", Some(0))
    );
    // a new header ends the previous group
    assert_eq!(
        err(&cat(&[header(1, 3), payload(), header(0, 2), payload()])),
        ("short_group", Some(0))
    );
}

#[test]
fn short_group_precedes_errors_of_the_bundle_that_ends_it() {
    // D-10 reading (SPEC D-15): the group's error is positioned at its header.
    let mut bad_h = header(0, 2);
    bad_h[0x20] = 1;
    assert_eq!(
        err(&cat(&[header(1, 3), payload(), bad_h])),
        ("short_group", Some(0))
    );
    assert_eq!(
        err(&cat(&[header(1, 3), header(0, 9)])),
        ("short_group", Some(0))
    );
}

#[test]
fn group_encoder_output_parses() {
    for n in [0usize, 1, 5, 255] {
        let args = vec![[7u8; 48]; n];
        let g = encode_custom_op_group(9, (0x85, 1, 0, 2, 3), &[1u8; 48], &args, C).unwrap();
        let mut s: Vec<u8> = g.iter().flatten().copied().collect();
        s.extend_from_slice(&other(0xDC));
        assert_eq!(
            parse_stream(&s, C),
            Ok(vec![
                Item::Group {
                    header_index: 0,
                    n_args: n
                },
                Item::Other {
                    index: n + 2,
                    opcode: 0xDC
                }
            ])
        );
    }
}
