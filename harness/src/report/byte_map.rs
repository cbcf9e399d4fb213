//! Which bytes of a divergence's minimised bundle each side blames: the one
//! adapter every report view asks ([`blamed_bytes`]).
//!
//! Each side's answer is read back from its record ([`Answer::from_short`]
//! on the signature's short verdict, with the offset of the long form
//! `… at offset 0xNN` where the short one has none) and handed to
//! [`crate::blame::blamed_bytes`], the same function `explain` marks bytes
//! with: the fewest bytes that must change for the failing rule to hold,
//! plus the side's own offending byte. A side that says `valid` / `ok`, or
//! faulted, blames no byte.

use super::model::{is_bundle_target, DivergenceRecord};
use crate::blame::{self, Answer};
use crate::judge::bundle_from_input;

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
    let Ok(min) = record.minimized_bytes() else {
        return [false; 64];
    };
    if !is_bundle_target(&record.target) || min.len() > 64 {
        return [false; 64];
    }
    let b = bundle_from_input(&min);
    let (short, long) = match side {
        Side::Left => (&record.signature.left, &record.left),
        Side::Right => (&record.signature.right, &record.right),
    };
    blame::blamed_bytes(&b, &answer_of(short, long)).to_array()
}

/// What `side`'s rejection is about in `record`'s minimised bundle, naming the field and its
/// value ([`crate::layout::failure_detail`]) at the first byte it blames: `wait_mode 0x08 is not
/// a WAIT_MODE member (byte 0x04)`; `None` when the side accepted, faulted, or the input is not
/// one bundle.
pub fn side_detail(record: &DivergenceRecord, side: Side) -> Option<String> {
    let min = record.minimized_bytes().ok()?;
    if !is_bundle_target(&record.target) || min.len() > 64 {
        return None;
    }
    let b = bundle_from_input(&min);
    let (short, long) = match side {
        Side::Left => (&record.signature.left, &record.left),
        Side::Right => (&record.signature.right, &record.right),
    };
    let answer = answer_of(short, long);
    let Answer::Rejected { reason, offset } = &answer else {
        return None;
    };
    let off = offset.or_else(|| blame::blamed_bytes(&b, &answer).iter().next())?;
    let reason = reason.strip_prefix("roundtrip:").unwrap_or(reason);
    Some(format!(
        "{} (byte 0x{off:02X})",
        crate::layout::failure_detail(b[0], reason, off, *b.get(off)?)
    ))
}

/// `short` as an [`Answer`], with the long form's `at offset 0xNN` when the
/// short verdict names no offset.
fn answer_of(short: &str, long: &str) -> Answer {
    match Answer::from_short(short.trim()) {
        Answer::Rejected {
            reason,
            offset: None,
        } => Answer::Rejected {
            reason,
            offset: offset_after(long, "at offset "),
        },
        other => other,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{OriginRecord, SignatureRecord};

    fn record(minimized: &str, left: &str, right: &str, long_right: &str) -> DivergenceRecord {
        DivergenceRecord {
            number: 1,
            target: "validate_header".into(),
            class: crate::findings::Class::Judge(crate::judge::Class::OverAccept),
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
            cohorts: Vec::new(),
            caused_by: None,
            subject_blame: None,
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

    /// The report names the field and its value of each side's rejection (issue 32 item 3).
    #[test]
    fn a_rejection_names_its_field_and_value() {
        let mut hex = String::from("85100000");
        hex.push_str("08");
        hex.push_str(&"00".repeat(59));
        let r = record(
            &hex,
            "valid",
            "has_valid_neuron_events",
            "has_valid_neuron_events",
        );
        assert_eq!(side_detail(&r, Side::Left), None);
        assert_eq!(
            side_detail(&r, Side::Right).as_deref(),
            Some("wait_mode 0x08 is not a WAIT_MODE member (byte 0x04)")
        );
        let mut hex = String::from("8510");
        hex.push_str(&"00".repeat(61));
        hex.push_str("01");
        let r = record(&hex, "valid", "custom_op_header_reserved_zero", "x");
        assert_eq!(
            side_detail(&r, Side::Right).as_deref(),
            Some("reserved byte 0x3F is 0x01, not zero (byte 0x3F)")
        );
    }
}
