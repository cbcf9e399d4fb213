//! Which bytes of a divergence's minimised bundle each side blames: the one
//! adapter every report view asks ([`blamed_bytes`]).
//!
//! Interim source (until an exact per-byte blame function exists): the
//! side's own verdict as the record states it — a decode offset
//! (`reserved@0xNN`, `… at offset 0xNN`, [`crate::engine`]'s short and long
//! forms), else the bytes a validator predicate reads
//! ([`crate::layout::predicate_bytes`], SPEC §3/§4), else the bytes of the
//! decode field it names ([`crate::layout::spans`]). A side that says
//! `valid` / `ok`, or names nothing known, blames no byte.

use super::model::{is_bundle_target, DivergenceRecord};
use crate::engine::bundle_from_input;
use crate::layout::{predicate_bytes, spans};

/// One side of a divergence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// `left_name` (a subject under test, or core against the oracle).
    Left,
    /// `right_name`.
    Right,
}

impl DivergenceRecord {
    /// The subject on `side`.
    pub fn side_name(&self, side: Side) -> &str {
        match side {
            Side::Left => &self.left_name,
            Side::Right => &self.right_name,
        }
    }
}

/// The 64-byte map of the bytes `side` blames in `record`'s minimised input
/// (all false for inputs that are not one bundle).
pub fn blamed_bytes(record: &DivergenceRecord, side: Side) -> [bool; 64] {
    let mut out = [false; 64];
    let Ok(min) = record.minimized_bytes() else {
        return out;
    };
    if !is_bundle_target(&record.target) || min.len() > 64 {
        return out;
    }
    let b = bundle_from_input(&min);
    let (short, long) = match side {
        Side::Left => (&record.signature.left, &record.left),
        Side::Right => (&record.signature.right, &record.right),
    };
    for off in verdict_bytes(short, long, &b) {
        if let Some(x) = out.get_mut(off) {
            *x = true;
        }
    }
    out
}

/// A hex offset after `marker` in `s` (`@0x3F`, `at offset 0x3F`).
fn offset_after(s: &str, marker: &str) -> Option<usize> {
    let at = s.find(marker)? + marker.len();
    let rest = s[at..]
        .strip_prefix("0x")
        .or_else(|| s[at..].strip_prefix("0X"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
    usize::from_str_radix(&digits, 16).ok()
}

fn verdict_bytes(short: &str, long: &str, b: &[u8; 64]) -> Vec<usize> {
    let v = short.trim();
    if v.is_empty() || v == "valid" || v == "ok" {
        return Vec::new();
    }
    if let Some(o) = offset_after(v, "@").or_else(|| offset_after(long, "at offset ")) {
        return vec![o];
    }
    let p = predicate_bytes(v, b);
    if !p.is_empty() {
        return p;
    }
    spans(b[0])
        .iter()
        .filter(|s| s.name == v)
        .flat_map(|s| s.off..s.off + s.len)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{OriginRecord, SignatureRecord};

    fn record(minimized: &str, left: &str, right: &str, long_right: &str) -> DivergenceRecord {
        DivergenceRecord {
            number: 1,
            target: "validate_header".into(),
            class: "OverAccept".into(),
            signature: SignatureRecord {
                key: right.into(),
                left: left.into(),
                right: right.into(),
            },
            count: 1,
            origin: OriginRecord::Generated {
                generated: 0,
                kind: "valid".into(),
            },
            arch: "v2".into(),
            input: minimized.into(),
            minimized: minimized.into(),
            replay: String::new(),
            replay_file: String::new(),
            file: "divergences/001-validate_header.bin".into(),
            left_name: "sut".into(),
            right_name: "core".into(),
            left: left.into(),
            right: long_right.into(),
            left_dump: String::new(),
            right_dump: String::new(),
            shards: Vec::new(),
        }
    }

    fn set(m: &[bool; 64]) -> Vec<usize> {
        (0..64).filter(|&i| m[i]).collect()
    }

    #[test]
    fn reserved_byte_0x3f_alone_is_blamed_by_the_side_that_rejects() {
        // Header 0x85 with only byte 0x3F nonzero (SPEC §3 #5 reserved zero).
        let mut hex = String::from("8510");
        hex.push_str(&"00".repeat(61));
        hex.push_str("01");
        let r = record(
            &hex,
            "valid",
            "custom_op_header_reserved_zero",
            "custom_op_header_reserved_zero",
        );
        assert_eq!(set(&blamed_bytes(&r, Side::Left)), Vec::<usize>::new());
        assert_eq!(set(&blamed_bytes(&r, Side::Right)), vec![0x3F]);
    }

    #[test]
    fn decode_offsets_short_and_long_forms() {
        let hex = "00".repeat(64);
        let r = record(
            &hex,
            "reserved@0x2A",
            "opcode",
            "Err(opcode at offset 0x00)",
        );
        assert_eq!(set(&blamed_bytes(&r, Side::Left)), vec![0x2A]);
        assert_eq!(set(&blamed_bytes(&r, Side::Right)), vec![0]);
    }

    #[test]
    fn non_bundle_targets_blame_nothing() {
        let mut r = record("0102", "valid", "opcode", "Err(opcode at offset 0x00)");
        r.target = "stream".into();
        assert_eq!(set(&blamed_bytes(&r, Side::Right)), Vec::<usize>::new());
    }
}
