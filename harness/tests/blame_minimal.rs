//! `blame::blamed_bytes` over every single-byte change and every equal-value
//! byte pair of each valid image (as `differential.rs` builds them), for the
//! header, payload and roundtrip checks: judged by the oracle, never by the
//! function itself. For each failure core reports, the blamed bytes are
//! - sufficient: put back to the valid image's values, the oracle no longer
//!   fails that predicate / field;
//! - each necessary: put back all but one, the oracle still fails it;
//! - the same for core's and the oracle's answers.
//!
//! The scratch predicate, whose fix has alternatives, is checked exhaustively
//! in `blame.rs`'s unit tests.

mod images;
use images::valid_images;
use tpbconform::blame::{ask, blamed_bytes, Answer, ByteSet};
use tpbconform::generation::Generation;
use tpbconform::subjects::{hex, registry, Subject, Validator};
use tpbconform::targets::Check;

fn checks(op: u8) -> Vec<Check> {
    match op {
        0x85 => vec![Check::Validator(Validator::Header), Check::Roundtrip],
        0x86 => vec![Check::Validator(Validator::Payload), Check::Roundtrip],
        _ => vec![Check::Roundtrip],
    }
}

fn reason_of(s: &dyn Subject, check: Check, b: &[u8; 64]) -> Option<String> {
    ask(s, check, b)
        .expect("a bundle check")
        .reason()
        .map(str::to_string)
}

fn restored(m: &[u8; 64], base: &[u8; 64], set: ByteSet) -> [u8; 64] {
    let mut x = *m;
    for i in set.iter() {
        x[i] = base[i];
    }
    x
}

#[test]
fn blamed_bytes_are_sufficient_and_each_necessary() {
    // v3: its compiler emits all eleven opcodes (SPEC §0).
    let core = registry::core_for(Generation::V3);
    let oracle = registry::oracle_for(Generation::V3);
    let mut judged = 0u32;
    let mut one = |base: &[u8; 64], m: &[u8; 64], check: Check| {
        let a = ask(core.as_ref(), check, m).unwrap();
        let reason = match &a {
            Answer::Rejected { reason, .. } if reason != "custom_op_header_scratch_space_val" => {
                reason.clone()
            }
            _ => return,
        };
        let s = blamed_bytes(m, &a);
        let o = ask(oracle.as_ref(), check, m).unwrap();
        assert_eq!(
            blamed_bytes(m, &o),
            s,
            "core vs oracle, {reason} {}",
            hex(m)
        );
        assert!(!s.is_empty(), "{reason} blames nothing: {}", hex(m));
        let fixed = restored(m, base, s);
        assert_ne!(
            reason_of(oracle.as_ref(), check, &fixed).as_deref(),
            Some(&*reason),
            "{reason}: restoring {s:?} of {} does not fix it",
            hex(m)
        );
        for i in s.iter() {
            let mut rest = s;
            rest = ByteSet::of(rest.iter().filter(|&j| j != i));
            assert_eq!(
                reason_of(oracle.as_ref(), check, &restored(m, base, rest)).as_deref(),
                Some(&*reason),
                "{reason}: byte 0x{i:02X} of {s:?} is not needed in {}",
                hex(m)
            );
        }
        judged += 1;
    };
    for base in valid_images() {
        for check in checks(base[0]) {
            assert_eq!(
                reason_of(oracle.as_ref(), check, &base),
                None,
                "{}",
                hex(&base)
            );
            for i in 0..64 {
                for v in [0x01u8, 0x80, 0xFF] {
                    let mut m = base;
                    m[i] = v;
                    one(&base, &m, check);
                    for j in i + 1..64 {
                        let mut m2 = m;
                        m2[j] = v;
                        one(&base, &m2, check);
                    }
                }
            }
        }
    }
    assert!(judged > 50_000, "only {judged} failures judged");
}
