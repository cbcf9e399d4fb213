//! The kind of a generated gate case (case `i` is kind `i % 3`).

/// What a generated case aims at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CaseKind {
    /// A valid encoder image / well-formed query.
    Valid,
    /// A valid case with a few structured mutations.
    NearValid,
    /// Uniform random bytes.
    Raw,
}

impl CaseKind {
    /// The kind of case `i` (`i % 3`).
    #[inline]
    pub fn of(i: u64) -> CaseKind {
        match i % 3 {
            0 => CaseKind::Valid,
            1 => CaseKind::NearValid,
            _ => CaseKind::Raw,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CaseKind::Valid => "valid",
            CaseKind::NearValid => "near-valid",
            CaseKind::Raw => "raw",
        }
    }

    /// Index 0..3.
    pub fn index(self) -> usize {
        self as usize
    }
}
