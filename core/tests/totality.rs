//! Totality: decode / validate / stream-parse never panic, on random input and on
//! every single-byte mutation of valid images.

use proptest::prelude::*;
use tpb_core::insn::{decode, Instruction};
use tpb_core::stream::parse_custom_op_stream;
use tpb_core::validate::{
    dbg_validate_header, dbg_validate_payload, validate_header, validate_payload,
};
use tpb_core::Bundle;

fn exercise(b: &Bundle) {
    let _ = validate_header(b);
    let _ = validate_payload(b);
    let _ = dbg_validate_header(b);
    let _ = dbg_validate_payload(b);
    if let Ok(i) = decode(b) {
        let _ = i.fields();
        let _ = i.encode();
    }
    if let Err(e) = decode(b) {
        let _ = (e.field(), e.offset());
    }
    for off in [0usize, 1, 8, 56, 57, 63, 64, 65, usize::MAX, usize::MAX - 3] {
        let _ = (b.u8_at(off), b.u16_at(off), b.u32_at(off), b.u64_at(off));
    }
    let _ = parse_custom_op_stream(&b.0);
}

fn seeds() -> Vec<Bundle> {
    let mut v = Vec::new();
    for op in tpb_core::roster::seed_opcodes() {
        let mut b = Bundle::ZERO;
        b.0[0] = op;
        b.0[1] = if op == 0xDA { 0 } else { 0x10 };
        v.push(b);
    }
    let mut hp = Bundle::ZERO;
    hp.0[0] = 0x86;
    hp.0[1] = 0x10;
    hp.0[0x0F] = 1;
    v.push(hp);
    v
}

#[test]
fn all_single_byte_mutations() {
    for base in seeds() {
        for pos in 0..64 {
            for val in 0..=255u8 {
                let mut b = base;
                b.0[pos] = val;
                exercise(&b);
            }
        }
    }
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
        let _ = Bundle::from_slice(s);
        let _ = parse_custom_op_stream(s);
    }
    assert_eq!(Bundle::from_slice(&[0; 63]).unwrap_err().len, 63);
    assert!(Bundle::from_slice(&[0; 64]).is_ok());
}

#[test]
fn from_fields_garbage() {
    use tpb_core::FieldValue;
    for op in 0..=255u8 {
        let _ = Instruction::from_fields::<&str>(op, &[]);
        let _ = Instruction::from_fields(op, &[("ap", FieldValue::Bytes(vec![0; 1000]))]);
        let _ = Instruction::from_fields(op, &[("sync.values", FieldValue::Int(u64::MAX))]);
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
        let _ = parse_custom_op_stream(&bytes);
    }
}
