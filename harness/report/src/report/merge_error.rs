//! Why a set of shard folders cannot be merged ([`MergeError`], exit 2):
//! a folder that fails verification ([`super::shard`]) or shards that are
//! not one run ([`super::merge`]).

use std::fmt;
use std::path::Path;

/// Cap on `run.json`, `summary.md`, `junit.xml` and one jsonl line.
pub const MAX_BYTES: u64 = 16 << 20;

/// Why a set of shard folders cannot be merged (exit 2): one line naming the folder, file or
/// line and what is wrong.
#[derive(Debug)]
pub struct MergeError(pub String);

impl MergeError {
    /// `<at>: <message>`.
    pub fn at(at: impl fmt::Display, message: impl fmt::Display) -> Self {
        MergeError(format!("{at}: {message}"))
    }

    /// A file or folder that could not be opened or read.
    pub fn read(path: &Path, error: impl fmt::Display) -> Self {
        Self::at(path.display(), format_args!("cannot read: {error}"))
    }

    /// Line `line` (1-based) of `path`: malformed JSON, a bad or missing field.
    pub fn line(path: &Path, line: usize, message: impl fmt::Display) -> Self {
        Self::at(format_args!("{}:{line}", path.display()), message)
    }

    /// A file (`line` 0) or a jsonl line over [`MAX_BYTES`].
    pub fn too_large(path: &Path, line: usize) -> Self {
        match line {
            0 => Self::at(
                path.display(),
                format_args!("larger than {MAX_BYTES} bytes"),
            ),
            n => Self::line(path, n, format_args!("line longer than {MAX_BYTES} bytes")),
        }
    }

    /// Shard `shard` of folder `dir` was cut short.
    pub fn incomplete(dir: &Path, shard: &str) -> Self {
        let m = format!("shard {shard} is INCOMPLETE (cut short); re-run it");
        Self::at(dir.display(), m)
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MergeError {}
