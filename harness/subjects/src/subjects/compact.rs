//! [`Compact`]: an answer as a prefetched batch holds it, so the judge compares a whole batch
//! with core's in one pass ([`crate::subjects::Transport::vouch`]).

use super::types::{LutResult, Name, Verdict};

/// Only answers that equal one another exactly are compact; [`Compact::Other`] is never
/// vouched for (the case is judged on its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compact {
    /// A validator's verdict by its `tpb_verdict` id: 0 valid, else 1 +
    /// the predicate's [`crate::subjects::Predicate::known_index`]
    /// (include/tpb_subject.h; harness `external::verdict`).
    Verdict(u16),
    /// A LUT's wire byte, or its refusal by a name the harness knows.
    Wire(u8),
    Refused(&'static str),
    /// A predicate or refusal the harness does not know, or no answer to compare (the
    /// reference pair disagreed on the case).
    Other,
}

impl Compact {
    #[inline]
    pub fn of_verdict(v: &Verdict) -> Compact {
        match v {
            None => Compact::Verdict(0),
            Some(p) => p
                .known_index()
                .map_or(Compact::Other, |i| Compact::Verdict(u16::from(i) + 1)),
        }
    }

    #[inline]
    pub fn of_lut(r: &LutResult) -> Compact {
        match r {
            Ok(w) => Compact::Wire(*w),
            Err(Name::Known(n)) => Compact::Refused(n),
            Err(Name::Unknown(_)) => Compact::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::Predicate;

    #[test]
    fn only_answers_that_compare_equal_are_compact() {
        assert_eq!(Compact::of_verdict(&None), Compact::Verdict(0));
        let p = Predicate::from_name("inst_word_len");
        assert_eq!(Compact::of_verdict(&Some(p)), Compact::Verdict(2));
        let u = Predicate::from_name("not_a_spec_name");
        assert_eq!(Compact::of_verdict(&Some(u)), Compact::Other);
        assert_eq!(Compact::of_lut(&Ok(7)), Compact::Wire(7));
        assert_eq!(
            Compact::of_lut(&Err(Name::Known("not_dge_op"))),
            Compact::Refused("not_dge_op")
        );
        assert_eq!(
            Compact::of_lut(&Err(Name::Unknown("x".into()))),
            Compact::Other
        );
    }
}
