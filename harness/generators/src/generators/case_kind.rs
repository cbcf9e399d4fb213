//! The kind of a generated gate case (case `i` is kind `i % 3`).

/// What a generated case is: valid, valid with a few structured mutations, or random bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CaseKind {
    Valid,
    NearValid,
    Raw,
}

impl CaseKind {
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

    pub fn index(self) -> usize {
        self as usize
    }
}
