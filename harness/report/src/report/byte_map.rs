//! Which bytes of a divergence's minimised bundle each side blames: each side's typed answer
//! handed to [`crate::blame::blamed_bytes`], the function `explain` marks bytes with. A side
//! that accepted, faulted or has no answer about the bytes blames no byte.

use super::model::{is_bundle_target, DivergenceRecord};
use crate::blame::{self, Answer};
use crate::judge::bundle_from_input;
use crate::judge::Answers;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

impl DivergenceRecord {
    /// The subject on `side`, its full result on the minimised input, and its typed answer
    /// there if it has one about the bytes.
    pub fn side(&self, side: Side) -> (&str, &str, Option<&Answer>) {
        let Answers { left, right } = &self.answers;
        match side {
            Side::Left => (&self.left_name, &self.left, left.as_ref()),
            Side::Right => (&self.right_name, &self.right, right.as_ref()),
        }
    }
}

/// The bytes `side` blames in `record`'s minimised input (none for inputs that are not one bundle).
pub fn blamed_bytes(record: &DivergenceRecord, side: Side) -> [bool; 64] {
    let bundle = |m: &Vec<u8>| m.len() <= 64 && is_bundle_target(&record.target);
    match (
        record.minimized_bytes().ok().filter(bundle),
        record.side(side).2,
    ) {
        (Some(min), Some(a)) => blame::blamed_bytes(&bundle_from_input(&min), a).to_array(),
        _ => [false; 64],
    }
}

/// What `side`'s rejection is about: `wait_mode 0x08 is not a WAIT_MODE member (byte 0x04)`;
/// `None` when the side accepted, faulted, or the input is not one bundle.
pub fn side_detail(record: &DivergenceRecord, side: Side) -> Option<String> {
    let min = record.minimized_bytes().ok()?;
    let detail = answer_detail(&record.target, &min, record.side(side).2?)?;
    // The subject's own answers (triage asked it): the bytes beyond the opcode and
    // inst_word_len whose change flips its answer and the rule does not name, each as its
    // field and value (a payload validator that reads arg_type as reserved: byte 0x0F).
    let asked = match (side, &record.subject_blame) {
        (Side::Left, Some(asked)) => asked,
        _ => return Some(detail),
    };
    let b = bundle_from_input(&min);
    let rule = blamed_bytes(record, side);
    let extra: Vec<String> = asked
        .iter()
        .map(|&i| i as usize)
        .filter(|&i| i > 0x01 && i < 64 && !rule[i])
        .map(|i| crate::layout::byte_detail(b[0], i, b[i]))
        .collect();
    if extra.is_empty() {
        return Some(detail);
    }
    Some(format!(
        "{detail}; its answer flips on {}",
        extra.join(", ")
    ))
}

/// [`side_detail`] of one typed answer to `input` of gate target `target` (also `replay`'s).
pub fn answer_detail(target: &str, input: &[u8], answer: &Answer) -> Option<String> {
    if !is_bundle_target(target) || input.len() > 64 {
        return None;
    }
    let b = bundle_from_input(input);
    let Answer::Rejected { reason, offset } = answer else {
        return None;
    };
    let off = offset.or_else(|| blame::blamed_bytes(&b, answer).iter().next())?;
    let reason = reason.strip_prefix("roundtrip:").unwrap_or(reason);
    Some(format!(
        "{} (byte 0x{off:02X})",
        crate::layout::failure_detail(b[0], reason, off, *b.get(off)?)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::OriginRecord;

    fn rejected(reason: &str, offset: Option<usize>) -> Answer {
        Answer::Rejected {
            reason: reason.into(),
            offset,
        }
    }

    /// A record of `minimized` whose sides answered `left` and `right`; its texts say
    /// something else, which the byte map must not read.
    fn record(minimized: &str, left: Answer, right: Answer) -> DivergenceRecord {
        DivergenceRecord {
            number: 1,
            target: "validate_header".into(),
            class: crate::judge::Class::OverAccept,
            signature: crate::judge::Signature {
                key: "k".into(),
                left: "reserved@0x01".into(),
                right: "inst_word_len".into(),
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
            replay_target: None,
            replay_subjects: Vec::new(),
            left_name: "sut".into(),
            right_name: "core".into(),
            left: "Err(opcode at offset 0x05)".into(),
            right: "Err(opcode at offset 0x06)".into(),
            answers: Answers::of(left, right),
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

    /// Header 0x85 with only byte 0x3F nonzero (SPEC §3 #5 reserved zero):
    /// the left side accepts it, the right rejects it.
    fn reserved_0x3f_record() -> DivergenceRecord {
        let hex = format!("8510{}01", "00".repeat(61));
        record(
            &hex,
            Answer::Valid,
            rejected("custom_op_header_reserved_zero", None),
        )
    }

    #[test]
    fn reserved_byte_0x3f_alone_is_blamed_by_the_side_that_rejects() {
        let r = reserved_0x3f_record();
        assert_eq!(set(&blamed_bytes(&r, Side::Left)), Vec::<usize>::new());
        assert_eq!(set(&blamed_bytes(&r, Side::Right)), vec![0x3F]);
        // A side without an answer about the bytes (it answered while the other faulted).
        let mut none = r.clone();
        none.answers.right = None;
        assert_eq!(set(&blamed_bytes(&none, Side::Right)), Vec::<usize>::new());
        assert_eq!(side_detail(&none, Side::Right), None);
    }

    #[test]
    fn decode_offsets_are_the_answers_own() {
        let hex = "00".repeat(64);
        let r = record(
            &hex,
            rejected("reserved", Some(0x2A)),
            rejected("opcode", Some(0)),
        );
        assert_eq!(set(&blamed_bytes(&r, Side::Left)), vec![0x2A]);
        assert_eq!(set(&blamed_bytes(&r, Side::Right)), vec![0]);
    }

    #[test]
    fn non_bundle_targets_blame_nothing() {
        let mut r = record("0102", Answer::Valid, rejected("opcode", Some(0)));
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
            Answer::Valid,
            rejected("has_valid_neuron_events", None),
        );
        assert_eq!(side_detail(&r, Side::Left), None);
        assert_eq!(
            side_detail(&r, Side::Right).as_deref(),
            Some("wait_mode 0x08 is not a WAIT_MODE member (byte 0x04)")
        );
        assert_eq!(
            side_detail(&reserved_0x3f_record(), Side::Right).as_deref(),
            Some("reserved byte 0x3F is 0x01, not zero (byte 0x3F)")
        );
    }
}
