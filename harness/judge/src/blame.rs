//! Which bytes of a 64-byte bundle one implementation's answer blames (the bytes that made its
//! failing predicate or decode field fail), as `explain`, the text report and the HTML byte map
//! mark them. The field each reason is about comes from the harness's own layout (SPEC §1, §3,
//! §4, §5), never from core's tables, so the same function judges core, the oracle and a subject.

pub use crate::judge::Answer;
use crate::layout::{
    byte_role, layout, validator_reserved, Domain, Role, UPDATE_MEMBERS, WAIT_MEMBERS,
};
use crate::subjects::{Predicate, Subject, Validator};
use crate::targets::Check;
use std::fmt;

/// A set of byte offsets `0..64` of one bundle.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ByteSet(u64);

impl ByteSet {
    pub const EMPTY: ByteSet = ByteSet(0);

    /// The set of `offsets` (offsets ≥ 64 are not bundle bytes and are dropped).
    pub fn of(offsets: impl IntoIterator<Item = usize>) -> ByteSet {
        let mut s = ByteSet::EMPTY;
        for o in offsets {
            s.insert(o);
        }
        s
    }

    /// Adds byte `off` (ignored when `off` ≥ 64).
    pub fn insert(&mut self, off: usize) {
        if off < 64 {
            self.0 |= 1 << off;
        }
    }

    pub fn contains(self, off: usize) -> bool {
        off < 64 && self.0 & (1 << off) != 0
    }

    pub fn union(self, other: ByteSet) -> ByteSet {
        ByteSet(self.0 | other.0)
    }

    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The offsets, ascending.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        (0..64).filter(move |&i| self.contains(i))
    }

    pub fn to_array(self) -> [bool; 64] {
        std::array::from_fn(|i| self.contains(i))
    }
}

impl fmt::Debug for ByteSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(|i| format!("0x{i:02X}")))
            .finish()
    }
}

/// Asks `subject` about bundle `b` as `check` compares it, with the offending byte wherever the
/// subject names one: a validator predicate on its own opcode (0x85 header, 0x86 payload) takes
/// the offset of the subject's decode, which runs the same validator (SPEC §5.1), when that
/// decode reports the same predicate. `None` for a check that is not about one bundle.
pub fn ask(subject: &dyn Subject, check: Check, b: &[u8; 64]) -> Option<Answer> {
    Some(match check {
        Check::Validator(v) => match subject.validate(v, b) {
            Err(f) => Answer::Fault(f.to_string()),
            Ok(None) => Answer::Valid,
            Ok(Some(p)) => Answer::Rejected {
                offset: validator_offset(subject, v, &p, b),
                reason: p.name().to_string(),
            },
        },
        Check::Decode => match subject.decode(b) {
            Err(f) => Answer::Fault(f.to_string()),
            Ok(d) => Answer::of_decode(&d),
        },
        Check::Roundtrip => match subject.decode(b) {
            Err(f) => Answer::Fault(f.to_string()),
            Ok(Err(d)) => Answer::from_decode_fail(&d),
            Ok(Ok(d)) => match subject.encode(d.opcode, &d.fields) {
                Err(f) => Answer::Fault(f.to_string()),
                Ok(e) => Answer::of_encode(&e, b),
            },
        },
        _ => return None,
    })
}

fn validator_offset(
    subject: &dyn Subject,
    v: Validator,
    p: &Predicate,
    b: &[u8; 64],
) -> Option<usize> {
    let own = match v {
        Validator::Header => 0x85,
        Validator::Payload => 0x86,
    };
    if b[0] != own || p.is_unknown() {
        return None;
    }
    match subject.decode(b) {
        Ok(Err(d)) if d.field.as_str() == p.name() => Some(d.offset),
        _ => None,
    }
}

const SCRATCH: &str = "custom_op_header_scratch_space_val";

/// The bytes of bundle `b` that `answer` blames: the fewest bytes that would have to change for
/// the failing rule to hold (when several smallest changes exist, the bytes of all of them).
/// Per reason (SPEC §3, §4, §5.1; layout from [`crate::layout`]):
///
/// - `valid_opcode`, `is_custom_op_header_opcode`, `is_custom_op_payload_opcode`, decode
///   `opcode`: byte 0x00.
/// - `inst_word_len`: byte 0x01.
/// - `has_valid_neuron_events`: each of `wait_mode` 0x04 / `update_mode` 0x06 whose value is
///   not a member (SPEC §6.5); never `wait_idx`, `update_idx` or `semaphore_value`, which no
///   validator reads.
/// - `custom_op_header_reserved_zero`: every nonzero byte of 0x11..=0x13, 0x1D..=0x1F,
///   0x20..=0x3F; `custom_op_payload_reserved_zero`: every nonzero byte of 0x0C..=0x0E; decode
///   `reserved`: every nonzero reserved byte of the opcode's layout.
/// - `custom_op_header_scratch_space_val` (all-zero or all-nonzero): the descriptor (0x10,
///   0x14..=0x1C) is non-empty but one of its required parts (byte 0x10, dword 0x18..=0x1B,
///   byte 0x1C) is zero. Either every nonzero descriptor byte must become zero, or every zero
///   required part nonzero (any byte of it will do, so the whole part is marked): the cheaper
///   of the two, both on a tie. E.g. only 0x10 set → 0x10; 0x10 and 0x1C set → 0x18..=0x1B;
///   only an address byte set → that byte. The implementation's offset is not used (core
///   names 0x10 for the group).
/// - any other decode field (`wait_mode`, `update_mode`, `cce_op`, `dtype`, `kind`,
///   `src_dtype`, `dst_dtype`, `cross_core_enable`, `valid`, `arg_type`, each one byte) and
///   `roundtrip:<field>`: that field's byte.
/// - [`Answer::Reencoded`]: the bytes that differ from the re-encoding.
///
/// The implementation's own offset (when it names one) is always marked: for a correct answer
/// it is the first of the bytes above, and a wrong offset shows as an extra byte. When the
/// bytes do not support the claim (no byte above breaks the rule) and no offset is named, the
/// whole field the reason reads is marked, so the map shows what the implementation looked at.
/// [`Answer::Valid`], [`Answer::Fault`] and unknown reasons without an offset blame nothing.
pub fn blamed_bytes(b: &[u8; 64], answer: &Answer) -> ByteSet {
    match answer {
        Answer::Valid | Answer::Fault(_) => ByteSet::EMPTY,
        Answer::Reencoded(e) => ByteSet::of((0..64).filter(|&i| b[i] != e[i])),
        Answer::Rejected { reason, offset } => {
            let reason = reason.strip_prefix("roundtrip:").unwrap_or(reason);
            let broken = breaking(reason, b);
            let own = match offset {
                Some(o) if reason != SCRATCH => ByteSet::of([*o]),
                _ => ByteSet::EMPTY,
            };
            if broken.is_empty() && own.is_empty() {
                field_of(reason, b[0])
            } else {
                broken.union(own)
            }
        }
    }
}

/// The bytes the rule named `reason` reads on an `opcode` bundle.
fn field_of(reason: &str, opcode: u8) -> ByteSet {
    match reason {
        "valid_opcode"
        | "is_custom_op_header_opcode"
        | "is_custom_op_payload_opcode"
        | "opcode" => ByteSet::of([0]),
        "inst_word_len" => ByteSet::of([1]),
        "has_valid_neuron_events" => ByteSet::of([0x04, 0x06]),
        "custom_op_header_reserved_zero" => {
            ByteSet::of((0..64).filter(|&i| validator_reserved(0x85, i)))
        }
        "custom_op_payload_reserved_zero" => {
            ByteSet::of((0..64).filter(|&i| validator_reserved(0x86, i)))
        }
        SCRATCH => ByteSet::of(
            (0..64).filter(|&i| byte_role(0x85, i) == Some(Role::Field(Domain::Scratch))),
        ),
        "reserved" => spans_where(opcode, |s| s.role == Role::Reserved),
        field => spans_where(opcode, |s| s.name == field && s.role != Role::Reserved),
    }
}

fn spans_where(opcode: u8, keep: impl Fn(&crate::layout::Span) -> bool) -> ByteSet {
    ByteSet::of(
        layout(opcode)
            .into_iter()
            .filter(|s| keep(s))
            .flat_map(|s| s.off..s.off + s.len),
    )
}

/// The bytes of `field_of(reason)` whose value breaks the rule on `b`.
fn breaking(reason: &str, b: &[u8; 64]) -> ByteSet {
    let field = field_of(reason, b[0]);
    let nonzero = ByteSet::of(field.iter().filter(|&i| b[i] != 0));
    match reason {
        "has_valid_neuron_events" => {
            let mut s = ByteSet::EMPTY;
            if !WAIT_MEMBERS.contains(&b[0x04]) {
                s.insert(0x04);
            }
            if !UPDATE_MEMBERS.contains(&b[0x06]) {
                s.insert(0x06);
            }
            s
        }
        "custom_op_header_reserved_zero" | "custom_op_payload_reserved_zero" | "reserved" => {
            nonzero
        }
        SCRATCH => {
            // SPEC §3 #6: non-empty := any descriptor byte nonzero; full :=
            // byte 0x10, dword 0x18 and byte 0x1C all nonzero.
            // Clearing costs one byte per nonzero byte, filling one per empty part.
            let parts: [&[usize]; 3] = [&[0x10], &[0x18, 0x19, 0x1A, 0x1B], &[0x1C]];
            let empty: Vec<&[usize]> = parts
                .into_iter()
                .filter(|p| p.iter().all(|&i| b[i] == 0))
                .collect();
            let fill = ByteSet::of(empty.iter().flat_map(|p| p.iter().copied()));
            match (nonzero.len(), empty.len()) {
                (0, _) | (_, 0) => ByteSet::EMPTY,
                (clear, fills) if clear < fills => nonzero,
                (clear, fills) if fills < clear => fill,
                _ => nonzero.union(fill),
            }
        }
        // A one-byte rule that failed: that byte.
        _ => field,
    }
}

#[cfg(test)]
mod tests {
    //! Expected byte sets are written from SPEC (the offsets in each comment),
    //! never from [`blamed_bytes`]' own output. Each case is asked of core and
    //! of the oracle through [`ask`], so the offsets they name are used too.
    use super::*;
    use crate::generation::Generation;
    use crate::subjects::registry;

    fn header() -> [u8; 64] {
        let mut b = [0u8; 64];
        b[0] = 0x85;
        b[1] = 0x10;
        b
    }

    fn payload() -> [u8; 64] {
        let mut b = header();
        b[0] = 0x86;
        b[0x0F] = 0x01;
        b
    }

    /// `b` with the `(offset, value)` bytes set.
    fn set(mut b: [u8; 64], bytes: &[(usize, u8)]) -> [u8; 64] {
        for &(i, v) in bytes {
            b[i] = v;
        }
        b
    }

    fn d9() -> [u8; 64] {
        let mut b = [0u8; 64];
        b[0] = 0xD9;
        b[1] = 0x10;
        b[0x0D] = 0x03;
        b[0x0E] = 0x01;
        b
    }

    /// `check` asked of core and the oracle blames exactly `want`, and both name `reason`.
    fn blames(check: Check, b: [u8; 64], reason: &str, want: &[usize]) {
        for s in [
            registry::core_for(Generation::V2),
            registry::oracle_for(Generation::V2),
        ] {
            let a = ask(s.as_ref(), check, &b).expect("a bundle check");
            assert_eq!(a.reason(), Some(reason), "{}: {a:?}", s.name());
            assert_eq!(
                blamed_bytes(&b, &a),
                ByteSet::of(want.iter().copied()),
                "{} {reason} {}",
                s.name(),
                crate::subjects::hex(&b)
            );
        }
    }

    const H: Check = Check::Validator(Validator::Header);
    const P: Check = Check::Validator(Validator::Payload);
    const D: Check = Check::Roundtrip;

    #[test]
    fn opcode_and_inst_word_len_blame_their_byte() {
        // SPEC §3 #1, §4 #1: byte 0 not in the v2 enum (0xFF INVALID).
        let b = set(header(), &[(0, 0xFF)]);
        blames(H, b, "valid_opcode", &[0x00]);
        blames(P, b, "valid_opcode", &[0x00]);
        // SPEC §3 #2: byte 1 (byte 0x3F, a later predicate's, is not blamed).
        let b = set(header(), &[(1, 0x11), (0x3F, 1)]);
        blames(H, b, "inst_word_len", &[0x01]);
        // SPEC §3 #4 / §4 #4: the other CUSTOM_OP opcode.
        blames(H, payload(), "is_custom_op_header_opcode", &[0x00]);
        blames(P, header(), "is_custom_op_payload_opcode", &[0x00]);
        // SPEC §5.1: byte[0] not one of the eleven → field `opcode`.
        blames(D, set(d9(), &[(0, 0x01)]), "opcode", &[0x00]);
    }

    #[test]
    fn events_blame_each_bad_mode_byte_only() {
        // SPEC §3 #3: only bytes 4 (wait_mode) and 6 (update_mode) are read;
        // 0x80 and 0xFF are not members (SPEC §6.5).
        // wait_idx (5), update_idx (7), semaphore_value (8..12): never read.
        let quiet = [(5, 0x33), (7, 0x44), (8, 1), (9, 2), (10, 3), (11, 4)];
        let b = set(set(header(), &quiet), &[(4, 0x80)]);
        blames(H, b, "has_valid_neuron_events", &[0x04]);
        let b = set(payload(), &[(6, 0xFF)]);
        blames(P, b, "has_valid_neuron_events", &[0x06]);
        let b = set(header(), &[(4, 0xFF), (6, 0x80)]);
        blames(H, b, "has_valid_neuron_events", &[0x04, 0x06]);
        // SPEC §5.1 on another opcode: the mode byte is its own field.
        blames(D, set(d9(), &[(6, 0x80)]), "update_mode", &[0x06]);
    }

    #[test]
    fn reserved_zero_blames_every_nonzero_reserved_byte_and_no_other() {
        // SPEC §3 #5: 0x11..=0x13, 0x1D..=0x1F, 0x20..=0x3F.
        let b = set(header(), &[(0x3F, 0x01)]);
        blames(H, b, "custom_op_header_reserved_zero", &[0x3F]);
        // Byte 0x0C (num_payloads) is a field, not reserved.
        let b = set(b, &[(0x12, 0x80), (0x1E, 0x02), (0x0C, 0x05)]);
        blames(H, b, "custom_op_header_reserved_zero", &[0x12, 0x1E, 0x3F]);
        // SPEC §4 #5: 0x0C..=0x0E; byte 0x0F (arg_type) is not checked.
        let b = set(payload(), &[(0x0D, 0x07), (0x0F, 0x09)]);
        blames(P, b, "custom_op_payload_reserved_zero", &[0x0D]);
        // SPEC §5.1 `reserved` of 0xD9: byte 0x0F; of 0xDC: 0x0D..=0x16, 0x18..=0x3F
        // (byte 0x17, reg_id, is a field).
        blames(D, set(d9(), &[(0x0F, 0x01)]), "reserved", &[0x0F]);
        let b = set(
            [0u8; 64],
            &[(0, 0xDC), (1, 0x10), (0x0E, 1), (0x17, 9), (0x30, 2)],
        );
        blames(D, b, "reserved", &[0x0E, 0x30]);
    }

    #[test]
    fn scratch_blames_the_smallest_change_that_makes_it_hold() {
        // SPEC §3 #6: non-empty (any of 0x10, 0x14..=0x1C nonzero) needs byte
        // 0x10, dword 0x18 and byte 0x1C nonzero; the address never needs to be.
        let scratch = "custom_op_header_scratch_space_val";
        // Only the flag: clearing it (1 byte) beats filling size and partitions (2).
        blames(H, set(header(), &[(0x10, 1)]), scratch, &[0x10]);
        // Size and partitions without the flag: the flag is the one byte missing.
        blames(H, set(header(), &[(0x18, 1), (0x1C, 1)]), scratch, &[0x10]);
        // Flag and partitions, size 0: any byte of the size dword (the address
        // is fine either way).
        let b = set(header(), &[(0x10, 1), (0x1C, 4), (0x15, 9)]);
        blames(H, b, scratch, &[0x18, 0x19, 0x1A, 0x1B]);
        // Only an address byte: that byte.
        blames(H, set(header(), &[(0x15, 1)]), scratch, &[0x15]);
        // Flag, one size byte and an address byte, no partitions: 0x1C.
        let b = set(header(), &[(0x10, 1), (0x19, 1), (0x14, 7)]);
        blames(H, b, scratch, &[0x1C]);
        // A tie (flag + address vs size + partitions): both changes.
        let b = set(header(), &[(0x10, 1), (0x17, 1)]);
        blames(H, b, scratch, &[0x10, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C]);
        // Full: not this predicate.
        blames_none(H, set(header(), &[(0x10, 1), (0x1A, 1), (0x1C, 1)]));
    }

    /// Every zero / nonzero pattern of the ten scratch descriptor bytes: the
    /// blamed set is the union of the smallest sets of bytes whose toggling
    /// (zero ↔ nonzero) makes the oracle's header validator pass the scratch
    /// predicate — found by brute force, not by [`blamed_bytes`]' rule.
    #[test]
    fn scratch_blame_is_the_union_of_the_smallest_fixes() {
        const DESC: [usize; 10] = [0x10, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C];
        let oracle = registry::oracle_for(Generation::V2);
        let scratch_fails = |b: &[u8; 64]| {
            oracle
                .validate(Validator::Header, b)
                .unwrap()
                .is_some_and(|p| p.name() == SCRATCH)
        };
        let with = |pattern: u32| {
            let mut b = header();
            for (k, &i) in DESC.iter().enumerate() {
                b[i] = if pattern >> k & 1 == 1 { 0x5A } else { 0 };
            }
            b
        };
        let mut failing = 0;
        for pattern in 0..1u32 << DESC.len() {
            let b = with(pattern);
            if !scratch_fails(&b) {
                continue;
            }
            failing += 1;
            let fixes: Vec<u32> = (1..1u32 << DESC.len())
                .filter(|toggle| !scratch_fails(&with(pattern ^ toggle)))
                .collect();
            let fewest = fixes.iter().map(|t| t.count_ones()).min().unwrap();
            let want = ByteSet::of(
                fixes
                    .iter()
                    .filter(|t| t.count_ones() == fewest)
                    .flat_map(|t| (0..DESC.len()).filter(move |k| t >> k & 1 == 1))
                    .map(|k| DESC[k]),
            );
            let a = ask(registry::core_for(Generation::V2).as_ref(), H, &b).unwrap();
            assert_eq!(blamed_bytes(&b, &a), want, "{}", crate::subjects::hex(&b));
        }
        assert!(failing > 500, "only {failing} failing patterns");
    }

    #[test]
    fn decode_fields_blame_their_byte() {
        // SPEC §5.1 / §5: 0xD9 dtype 0x0D, kind 0x0E, cce_op 0x0C.
        // (Byte 0x0F, a later reserved byte, is a later failure.)
        blames(
            D,
            set(d9(), &[(0x0D, 0xFF), (0x0F, 0x01)]),
            "dtype",
            &[0x0D],
        );
        blames(D, set(d9(), &[(0x0E, 0x00)]), "kind", &[0x0E]);
        blames(D, set(d9(), &[(0x0C, 0x01)]), "cce_op", &[0x0C]);
        // 0x86 byte 0x0F arg_type ∈ {1, 2} (SPEC §4, §5.1).
        let b = set(payload(), &[(0x0F, 0x03)]);
        blames(Check::Decode, b, "arg_type", &[0x0F]);
        // 0xBF cross_core_enable 0x20 must be 0x01 (SPEC §5; v3 emits 0xBF).
        let b = set(
            [0u8; 64],
            &[(0, 0xBF), (1, 0x10), (0x0C, 0x03), (0x0D, 0x03)],
        );
        for s in [
            registry::core_for(Generation::V3),
            registry::oracle_for(Generation::V3),
        ] {
            let a = ask(s.as_ref(), D, &b).unwrap();
            assert_eq!(a.reason(), Some("cross_core_enable"), "{a:?}");
            assert_eq!(blamed_bytes(&b, &a), ByteSet::of([0x20]));
        }
    }

    #[test]
    fn answers_that_do_not_match_the_bytes() {
        let b = set(header(), &[(0x3F, 0x01)]);
        // A subject's offset that is not the first offending byte shows as an extra byte.
        let wrong = Answer::Rejected {
            reason: "custom_op_header_reserved_zero".into(),
            offset: Some(0x20),
        };
        assert_eq!(blamed_bytes(&b, &wrong), ByteSet::of([0x20, 0x3F]));
        // A claim the bytes do not support, without an offset: the field it reads.
        let claim = Answer::Rejected {
            reason: "has_valid_neuron_events".into(),
            offset: None,
        };
        assert_eq!(blamed_bytes(&header(), &claim), ByteSet::of([0x04, 0x06]));
        // Re-encoding: exactly the bytes that differ.
        let mut e = b;
        e[0x3F] = 0;
        e[0x02] = 9;
        let re = Answer::Reencoded(Box::new(e));
        assert_eq!(blamed_bytes(&b, &re), ByteSet::of([0x02, 0x3F]));
        for nothing in [
            Answer::Valid,
            Answer::Fault("crash".into()),
            Answer::Rejected {
                reason: "invented".into(),
                offset: None,
            },
        ] {
            assert!(blamed_bytes(&b, &nothing).is_empty(), "{nothing:?}");
        }
        // A valid bundle blames nothing, for both references.
        blames_none(H, header());
        blames_none(P, payload());
        blames_none(D, d9());
    }

    fn blames_none(check: Check, b: [u8; 64]) {
        for s in [
            registry::core_for(Generation::V2),
            registry::oracle_for(Generation::V2),
        ] {
            let a = ask(s.as_ref(), check, &b).unwrap();
            assert_eq!(a, Answer::Valid, "{}", s.name());
            assert!(blamed_bytes(&b, &a).is_empty());
        }
    }

    /// An answer goes to `divergences.jsonl` as data and comes back as itself, and blames the
    /// same bytes (what the report's byte map reads; before, a short verdict was parsed back).
    #[test]
    fn answers_round_trip_as_data() {
        let mut b = d9();
        b[0x0F] = 1;
        b[0x20] = 2;
        let mut e = b;
        e[0x05] = 7;
        let reserved = Answer::Rejected {
            reason: "reserved".into(),
            offset: Some(0x0F),
        };
        let answers = [
            Answer::Valid,
            reserved.clone(),
            Answer::Rejected {
                reason: "roundtrip:dtype".into(),
                offset: None,
            },
            Answer::Reencoded(Box::new(e)),
            Answer::Fault("crash".into()),
        ];
        for a in &answers {
            let json = serde_json::to_string(a).unwrap();
            let back: Answer = serde_json::from_str(&json).unwrap();
            assert_eq!(&back, a, "{json}");
            assert_eq!(blamed_bytes(&b, &back), blamed_bytes(&b, a));
        }
        // `reserved` at 0x0F: the only reserved byte of 0xD9 (SPEC §5); 0x20 is `ap`, not reserved.
        assert_eq!(blamed_bytes(&b, &reserved), ByteSet::of([0x0F]));
        assert_eq!(
            serde_json::to_string(&reserved).unwrap(),
            r#"{"rejected":{"reason":"reserved","offset":15}}"#
        );
        assert_eq!(serde_json::to_string(&Answer::Valid).unwrap(), r#""valid""#);
        for bad in [
            r#""ok""#,
            r#"{"rejected":{"reason":"x","at":1}}"#,
            r#"{"reencoded":"00"}"#,
        ] {
            assert!(serde_json::from_str::<Answer>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn byte_set_basics() {
        let s = ByteSet::of([0, 63, 64, 200]);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 63]);
        assert_eq!(s.len(), 2);
        assert!(s.to_array()[63] && !s.to_array()[1]);
        assert!(!s.contains(64));
    }
}
