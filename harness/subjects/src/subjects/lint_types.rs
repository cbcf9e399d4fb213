//! The vocabulary of [`super::Reference::lint_stream`] (SPEC §5.3 "Linting a stream", D-27,
//! D-28): one [`LintRow`] per instruction and per stream error, in stream order.

/// One comparable report of a stream walker (`index`: bundle, `offset`: byte).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LintRow {
    Instruction {
        index: usize,
        offset: usize,
        opcode: u8,
        /// 64 or 128.
        length: usize,
        /// `valid`, `skeleton` or `invalid`.
        verdict: &'static str,
        /// The failing predicate and byte of an invalid one.
        failure: Option<(&'static str, usize)>,
    },
    StreamError {
        name: &'static str,
        index: usize,
        offset: usize,
        /// Its owner's bundle index, byte offset and opcode.
        owner: (usize, usize, u8),
    },
}

impl LintRow {
    /// Without numbers (signature keys).
    pub fn what(&self) -> String {
        match self {
            LintRow::Instruction { verdict, .. } => format!("instruction:{verdict}"),
            LintRow::StreamError { name, .. } => format!("stream_error:{name}"),
        }
    }
}

/// The rows, or why the walker refused the bytes (not whole bundles).
pub type LintResult = Result<Vec<LintRow>, String>;
