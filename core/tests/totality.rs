//! Totality: decode / validate / stream-parse never panic, on random input and on
//! every single-byte mutation of valid images; and on every input they stay
//! consistent: decode and encode are inverse (SPEC §5.1), every reported offset
//! is inside the bundle and names the byte it is about, the `dbg` twin says what
//! the plain validator says (SPEC §3/§4 "dbg form"), and a parsed stream's items
//! point into the stream.

use proptest::prelude::*;
use tpb_core::insn::{decode, DecodeError, Instruction};
use tpb_core::stream::{parse_custom_op_stream, StreamItem};
use tpb_core::validate::{
    dbg_validate_header, dbg_validate_payload, validate_header, validate_payload, Predicate,
    ValidationError,
};
use tpb_core::Bundle;

/// The generation these tests run under: v3 encodes all eleven opcodes (seed 003).
const G: tpb_core::Generation = tpb_core::Generation::V3;

/// SPEC §3 #5: the header reserved-zero region [0x11..0x13] ∪ [0x1D..0x3F].
fn header_reserved(off: usize) -> bool {
    matches!(off, 0x11..=0x13 | 0x1D..=0x3F)
}

/// SPEC §4 #5: the payload reserved bytes 0x0C..=0x0E.
fn payload_reserved(off: usize) -> bool {
    matches!(off, 0x0C..=0x0E)
}

/// A validator error carries the bytes it names, and its predicate's name round-trips.
fn check_validation_error(b: &Bundle, e: &ValidationError, reserved: fn(usize) -> bool) {
    let p = e.predicate();
    assert_eq!(Predicate::from_name(p.name()), Some(p), "{e:?}");
    assert!(e.offset() < 64, "offset {} of {e:?}", e.offset());
    let at = |o: usize| b.0[o];
    match *e {
        ValidationError::ValidOpcode { opcode, .. } => assert_eq!(opcode, at(0)),
        ValidationError::InstWordLen { value } => {
            assert_eq!(value, at(1));
            assert_ne!(value, 0x10, "a 0x10 tag passes inst_word_len");
        }
        ValidationError::HasValidNeuronEvents {
            wait_mode,
            update_mode,
        } => {
            assert_eq!((wait_mode, update_mode), (at(4), at(6)));
            assert!(e.offset() == 4 || e.offset() == 6, "{e:?}");
        }
        ValidationError::IsCustomOpHeaderOpcode { opcode } => {
            assert_eq!(opcode, at(0));
            assert_ne!(opcode, 0x85);
        }
        ValidationError::IsCustomOpPayloadOpcode { opcode } => {
            assert_eq!(opcode, at(0));
            assert_ne!(opcode, 0x86);
        }
        ValidationError::CustomOpHeaderReservedZero { offset, value }
        | ValidationError::CustomOpPayloadReservedZero { offset, value } => {
            assert!(
                reserved(offset),
                "offset {offset:#x} is not reserved: {e:?}"
            );
            assert_eq!(value, at(offset), "{e:?}");
            assert_ne!(value, 0, "{e:?}");
            // the lowest nonzero reserved byte is named
            assert!(
                (0..offset).all(|o| !reserved(o) || at(o) == 0),
                "a lower reserved byte is nonzero: {e:?} {:02x?}",
                b.0
            );
        }
        ValidationError::CustomOpHeaderScratchSpaceVal {
            has_scratch_space: byte_10,
            scratch_space_addr: dword_14,
            scratch_space_size: dword_18,
            scratch_space_num_partitions: byte_1c,
        } => {
            assert_eq!(byte_10, at(0x10));
            assert_eq!(
                dword_14.to_le_bytes(),
                [at(0x14), at(0x15), at(0x16), at(0x17)]
            );
            assert_eq!(
                dword_18.to_le_bytes(),
                [at(0x18), at(0x19), at(0x1A), at(0x1B)]
            );
            assert_eq!(byte_1c, at(0x1C));
            let nonempty = byte_10 != 0 || dword_14 != 0 || dword_18 != 0 || byte_1c != 0;
            let full = byte_10 != 0 && dword_18 != 0 && byte_1c != 0;
            assert!(nonempty && !full, "{e:?}");
        }
        _ => {}
    }
}

/// The validator, its `dbg` twin and the chain facts every verdict implies.
fn check_validator(
    b: &Bundle,
    plain: Result<(), ValidationError>,
    dbg: Result<(), String>,
    opcode: u8,
    reserved: fn(usize) -> bool,
) {
    match &plain {
        Ok(()) => {
            assert_eq!(dbg, Ok(()), "dbg twin rejects what the validator accepts");
            assert_eq!((b.0[0], b.0[1]), (opcode, 0x10));
        }
        Err(e) => {
            // SPEC §3/§4: the dbg message names the failing predicate.
            let want = format!("inst failed assertion check: '{}'", e.predicate().name());
            assert_eq!(dbg, Err(want), "{e:?}");
            check_validation_error(b, e, reserved);
        }
    }
}

/// A decode error names a byte of the bundle, and carries that byte.
fn check_decode_error(b: &Bundle, e: &DecodeError) {
    assert!(!e.field().is_empty(), "{e:?}");
    assert!(e.offset() < 64, "offset {} of {e:?}", e.offset());
    let at = |o: usize| b.0[o];
    match *e {
        DecodeError::Invalid(v) => {
            let r = if at(0) == 0x85 {
                header_reserved
            } else {
                payload_reserved
            };
            assert!(at(0) == 0x85 || at(0) == 0x86, "{e:?}");
            assert_eq!(e.field(), v.predicate().name());
            check_validation_error(b, &v, r);
        }
        DecodeError::Opcode { opcode } => assert_eq!(opcode, at(0)),
        DecodeError::InstWordLen { value } => assert_eq!(value, at(1)),
        DecodeError::Reserved { offset, value } | DecodeError::Dtype { offset, value } => {
            assert_eq!(offset, e.offset());
            assert_eq!(value, at(offset), "{e:?}");
        }
        DecodeError::WaitMode { value } => assert_eq!(value, at(4)),
        DecodeError::UpdateMode { value } => assert_eq!(value, at(6)),
        DecodeError::CceOp { value }
        | DecodeError::SrcDtype { value }
        | DecodeError::DstDtype { value }
        | DecodeError::Kind { value }
        | DecodeError::CrossCoreEnable { value }
        | DecodeError::Valid { value }
        | DecodeError::ArgType { value } => assert_eq!(value, at(e.offset()), "{e:?}"),
        _ => {}
    }
}

/// Decode and encode are inverse on every accepted bundle, through the typed
/// value and through the field list (SPEC §5.1, §5.2).
fn check_round_trip(b: &Bundle, i: &Instruction) {
    assert_eq!(i.opcode(), b.0[0]);
    assert_eq!(i.encode(G), Ok(*b), "encode(decode(b)) != b");
    let fields = i.fields();
    let names: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
    assert_eq!(Some(names), Instruction::field_names(i.opcode()));
    assert_eq!(
        Instruction::from_fields(i.opcode(), &fields, G),
        Ok(*i),
        "from_fields(fields(decode(b))) != decode(b)"
    );
    // a decodable 0x85/0x86 passes its validator (decode runs it first)
    match b.0[0] {
        0x85 => assert_eq!(validate_header(b, G), Ok(())),
        0x86 => assert_eq!(validate_payload(b, G), Ok(())),
        _ => {}
    }
}

/// Every check on one bundle; returns whether it decoded.
fn exercise(b: &Bundle) -> bool {
    check_validator(
        b,
        validate_header(b, G),
        dbg_validate_header(b, G),
        0x85,
        header_reserved,
    );
    check_validator(
        b,
        validate_payload(b, G),
        dbg_validate_payload(b, G),
        0x86,
        payload_reserved,
    );
    let decoded = match decode(b, G) {
        Ok(i) => {
            check_round_trip(b, &i);
            true
        }
        Err(e) => {
            check_decode_error(b, &e);
            false
        }
    };
    for off in [0usize, 1, 8, 56, 57, 63, 64, 65, usize::MAX, usize::MAX - 3] {
        let want = |n: usize| off.checked_add(n).is_some_and(|end| end <= 64);
        assert_eq!(b.u8_at(off).is_some(), want(1), "u8_at({off})");
        assert_eq!(b.u16_at(off).is_some(), want(2), "u16_at({off})");
        assert_eq!(b.u32_at(off).is_some(), want(4), "u32_at({off})");
        assert_eq!(b.u64_at(off).is_some(), want(8), "u64_at({off})");
        if let Some(v) = b.u32_at(off) {
            assert_eq!(v.to_le_bytes(), b.0[off..off + 4]);
        }
    }
    check_stream(&b.0);
    decoded
}

/// A parsed stream's items are in order, inside the stream, and groups hold
/// exactly `num_arguments` argument payloads; an error names a bundle of it.
fn check_stream(bytes: &[u8]) {
    let n = bytes.len() / 64;
    match parse_custom_op_stream(bytes, G) {
        Ok(items) => {
            assert_eq!(bytes.len() % 64, 0);
            let mut next = 0usize;
            for it in &items {
                match it {
                    StreamItem::Group {
                        header_index,
                        header,
                        args,
                        ..
                    } => {
                        assert!(*header_index >= next && *header_index < n);
                        assert_eq!(bytes[header_index * 64], 0x85);
                        assert_eq!(args.len(), usize::from(header.num_arguments));
                        next = header_index + 2 + args.len();
                    }
                    StreamItem::Other { index, opcode } => {
                        assert!(*index >= next && *index < n);
                        assert_eq!(bytes[index * 64], *opcode);
                        next = index + 1;
                    }
                }
            }
            assert_eq!(next, n, "items do not cover the stream");
        }
        Err(e) => {
            assert!(!e.name().is_empty());
            if let Some(i) = e.index() {
                assert!(i < n, "error index {i} of a {n}-bundle stream: {e:?}");
            }
        }
    }
}

/// A valid image of each of the eleven opcodes (SPEC §5.2 tables: cce_op 0x04,
/// dtype 0x0A, kind 0x01, cross-core enable 1, payload marker 1), plus a header
/// with a full scratch triple.
fn seeds() -> Vec<Bundle> {
    let mut v = Vec::new();
    for op in tpb_core::mnemonics::seed_opcodes() {
        let mut b = Bundle::ZERO;
        b.0[0] = op;
        b.0[1] = if op == 0xDA { 0 } else { 0x10 };
        match op {
            0x86 => b.0[0x0F] = 1,
            0xD9 | 0xDA => b.0[0x0C..0x0F].copy_from_slice(&[0x04, 0x0A, 0x01]),
            0xBF => {
                b.0[0x0C] = 0x01;
                b.0[0x0D] = 0x02;
                b.0[0x20] = 0x01;
            }
            0xBE => b.0[0x0C] = 0x0A,
            _ => {}
        }
        v.push(b);
    }
    let mut h = Bundle::ZERO;
    h.0[..2].copy_from_slice(&[0x85, 0x10]);
    h.0[0x10] = 0x11;
    h.0[0x18] = 0x22;
    h.0[0x1C] = 0x33;
    v.push(h);
    for b in &v {
        assert!(
            decode(b, G).is_ok(),
            "seed {:02x?}: {:?}",
            b.0,
            decode(b, G)
        );
    }
    v
}

#[test]
fn all_single_byte_mutations() {
    let mut decoded = 0usize;
    let mut total = 0usize;
    for base in seeds() {
        for pos in 0..64 {
            for val in 0..=255u8 {
                let mut b = base;
                b.0[pos] = val;
                decoded += usize::from(exercise(&b));
                total += 1;
            }
        }
    }
    // Not vacuous: the round-trip branch ran on a good share of the inputs.
    assert!(
        decoded * 10 > total * 3,
        "only {decoded} of {total} decoded"
    );
}

/// The harness's one PRNG (`generators::SplitMix64`), included as a file:
/// this crate cannot depend on the harness.
#[allow(dead_code)]
#[path = "../../harness/generators/src/generators/rng.rs"]
mod rng;
use rng::SplitMix64;

#[test]
fn multi_byte_mutations() {
    // 2..=4 bytes changed at once: correlated faults (two reserved bytes, a
    // partial scratch triple, a bad mode next to a bad reserved byte) that no
    // single-byte mutation builds. Values favour 0, 1 and one value repeated.
    let seeds = seeds();
    let mut s = SplitMix64(0x9E37_79B9_7F4A_7C15);
    let mut decoded = 0usize;
    for i in 0..60_000usize {
        let mut b = seeds[i % seeds.len()];
        let shared = s.next_u64() as u8 | 1;
        for _ in 0..2 + i % 3 {
            let r = s.next_u64();
            let at = (r % 64) as usize;
            b.0[at] = match (r >> 8) % 4 {
                0 => shared,
                1 => 1,
                2 => 0,
                _ => (r >> 16) as u8,
            };
        }
        decoded += usize::from(exercise(&b));
    }
    assert!(decoded > 1000, "only {decoded} decoded");
}

#[test]
fn all_opcodes_zero_and_ones() {
    for op in 0..=255u8 {
        for fill in [0x00u8, 0x01, 0x10, 0xFF] {
            let mut b = Bundle([fill; 64]);
            b.0[0] = op;
            exercise(&b);
        }
    }
}

#[test]
fn lengths_and_slices() {
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 37 % 251) as u8).collect();
    for len in 0..data.len() {
        let s = &data[..len];
        match Bundle::from_slice(s) {
            Ok(b) => assert_eq!((len, &b.0[..]), (64, s)),
            Err(e) => assert_eq!(e.len, len),
        }
        check_stream(s);
    }
}

#[test]
fn from_fields_garbage() {
    use tpb_core::FieldValue;
    for op in 0..=255u8 {
        let named = Instruction::field_names(op).is_some();
        for fields in [
            vec![],
            vec![("ap", FieldValue::Bytes(vec![0; 1000]))],
            vec![("semaphore_value", FieldValue::Int(u64::MAX))],
        ] {
            // never panics; an accepted list encodes to an image that decodes back
            if let Ok(i) = Instruction::from_fields(op, &fields, G) {
                assert!(named);
                let b = i.encode(G).expect("from_fields output encodes");
                assert_eq!(decode(&b, G), Ok(i));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn random_bundles(bytes in prop::collection::vec(any::<u8>(), 64)) {
        let b = Bundle::from_slice(&bytes).unwrap();
        exercise(&b);
    }

    #[test]
    fn random_streams(mut bytes in prop::collection::vec(any::<u8>(), 0..1024), ops in prop::collection::vec(prop::sample::select(vec![0x85u8, 0x86, 0xD9, 0x00]), 0..16)) {
        // plant plausible custom-op records so the parser gets past the validators sometimes
        for (i, op) in ops.iter().enumerate() {
            let base = i * 64;
            if base + 64 <= bytes.len() {
                bytes[base] = *op;
                bytes[base + 1] = 0x10;
                for o in 2..0x0C { bytes[base + o] = 0; }
                if *op == 0x85 { for o in 0x10..0x40 { bytes[base + o] = 0; } }
                if *op == 0x86 { for o in 0x0C..0x0F { bytes[base + o] = 0; } }
            }
        }
        check_stream(&bytes);
    }
}

/// SPEC §11: the engine model never panics on any steps, DMA list or stream bytes; every
/// finding's location names an instruction or DMA of the input; each engine ends somewhere in
/// its stream.
#[test]
fn engine_sync_is_total() {
    use tpb_core::engines::{analyze, steps_of_stream, DmaIncrement, End, Loc, Options, Step};
    let mut s = SplitMix64(0xE5_0034);
    // Mode bytes biased to the members (FACTS §2) with some non-members mixed in.
    let waits = [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0E, 0x0F, 0x85, 0x10,
    ];
    let updates = [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x09, 0x13, 0x14, 0x15, 0x17, 0x19,
    ];
    for _ in 0..3000 {
        let n = s.index(6);
        let engines: Vec<Vec<Step>> = (0..n)
            .map(|_| {
                (0..s.index(12))
                    .map(|_| Step {
                        wait_mode: if s.below(50) == 0 {
                            s.byte()
                        } else {
                            s.pick(&waits)
                        },
                        wait_idx: s.below(3) as u8,
                        update_mode: if s.below(50) == 0 {
                            s.byte()
                        } else {
                            s.pick(&updates)
                        },
                        update_idx: s.below(3) as u8,
                        value: [0, 1, 2, 3, u32::MAX][s.index(5)],
                    })
                    .collect()
            })
            .collect();
        let refs: Vec<&[Step]> = engines.iter().map(Vec::as_slice).collect();
        let dma: Vec<DmaIncrement> = (0..s.index(3))
            .map(|_| DmaIncrement {
                sem: s.below(3) as u8,
                by: s.below(4) as u32,
                trigger: if s.below(2) == 0 && n > 0 {
                    let e = s.index(n);
                    Some((e as u16, s.below(engines[e].len() as u64 + 1) as u32))
                } else {
                    None
                },
            })
            .collect();
        let Ok(r) = analyze(&refs, &dma, Options { links: true }) else {
            continue;
        };
        assert_eq!(r.ends.len(), n);
        for (e, end) in r.ends.iter().enumerate() {
            if let End::Blocked { index } | End::Stopped { index } = end {
                assert!((*index as usize) < engines[e].len());
            }
        }
        for f in &r.findings {
            match f.at() {
                Some(Loc::Instr { engine, index }) => {
                    assert!(
                        (index as usize) < engines[usize::from(engine)].len(),
                        "{f:?}"
                    )
                }
                Some(Loc::Dma { index }) => assert!((index as usize) < dma.len(), "{f:?}"),
                None => panic!("{f:?} has no location"),
            }
        }
        let len = s.index(400);
        let bytes = s.bytes(len);
        let x = steps_of_stream(&bytes);
        assert_eq!(x.steps.len(), x.offsets.len());
    }
}
