//! The vocabulary of [`super::Subject::lint_stream`] (SPEC §5.3 "Linting a
//! stream", D-27, D-28): a walk of whole bundles is one [`LintRow`] per
//! instruction and per stream error, in stream order. Reference pair only (no
//! protocol op carries it, docs/subject-protocol.md).

/// One comparable report of a stream walker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LintRow {
    /// An instruction.
    Instruction {
        /// Bundle index.
        index: usize,
        offset: usize,
        /// byte[0].
        opcode: u8,
        /// 64 or 128.
        length: usize,
        /// `valid`, `skeleton` or `invalid`.
        verdict: &'static str,
        /// The failing predicate and byte of an invalid one.
        failure: Option<(&'static str, usize)>,
    },
    /// A stream error.
    StreamError {
        /// SPEC §5.3 name.
        name: &'static str,
        /// Bundle index where it is detected.
        index: usize,
        /// Byte offset where it is detected.
        offset: usize,
        /// Its owner's bundle index, byte offset and opcode.
        owner: (usize, usize, u8),
    },
}

impl LintRow {
    /// What the row is, without numbers (signature keys).
    pub fn what(&self) -> String {
        match self {
            LintRow::Instruction { verdict, .. } => format!("instruction:{verdict}"),
            LintRow::StreamError { name, .. } => format!("stream_error:{name}"),
        }
    }
}

/// A walk: the rows, or why the walker refused the bytes (not whole bundles).
pub type LintResult = Result<Vec<LintRow>, String>;
