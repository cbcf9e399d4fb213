//! [`Compact`]: an answer in the form a subject's prefetched batch holds
//! it, so that the judge can compare a whole batch of a subject's answers
//! with core's in one pass ([`crate::subjects::Subject::vouch`], the
//! judge's bulk judging) and take the per-case path only where they differ.

use super::types::{LutResult, Name, Verdict};

/// See the module docs. Only answers that equal one another exactly are
/// compact; anything else is [`Compact::Other`], which is never vouched
/// for (the case is judged on its own, as every case used to be).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compact {
    /// A validator's verdict by its `tpb_verdict` id: 0 valid, else 1 +
    /// the predicate's [`crate::subjects::Predicate::known_index`]
    /// (include/tpb_subject.h; harness `external::verdict`).
    Verdict(u16),
    /// A LUT's wire byte.
    Wire(u8),
    /// A LUT's refusal by a name the harness knows.
    Refused(&'static str),
    /// Not compact: a predicate or refusal the harness does not know, or no
    /// answer to compare (the reference pair disagreed on the case).
    Other,
}

impl Compact {
    /// The compact form of verdict `v`.
    #[inline]
    pub fn of_verdict(v: &Verdict) -> Compact {
        match v {
            None => Compact::Verdict(0),
            Some(p) => p
                .known_index()
                .map_or(Compact::Other, |i| Compact::Verdict(u16::from(i) + 1)),
        }
    }

    /// The compact form of LUT answer `r`.
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
