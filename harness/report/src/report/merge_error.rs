//! Why a set of shard folders cannot be merged ([`MergeError`], exit 2):
//! a folder that fails verification ([`super::shard`]) or shards that are
//! not one run ([`super::merge`]).

use super::integrity::IntegrityError;
use std::fmt;
use std::path::PathBuf;

/// Cap on `run.json`, `summary.md`, `junit.xml` and one jsonl line.
pub const MAX_BYTES: u64 = 16 << 20;

/// Why a set of shard folders cannot be merged (exit 2).
#[derive(Debug)]
#[non_exhaustive]
pub enum MergeError {
    NoShards,
    /// A file could not be opened or read.
    Read {
        path: PathBuf,
        error: String,
    },
    /// A path that must be a regular file is something else.
    NotAFile {
        path: PathBuf,
    },
    /// A file or line is over [`MAX_BYTES`].
    TooLarge {
        path: PathBuf,
        /// 1-based line (jsonl), 0 for a whole file.
        line: usize,
    },
    /// Malformed JSON or a missing / mistyped field.
    BadJson {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// The folder fails its integrity record.
    Integrity {
        dir: PathBuf,
        error: IntegrityError,
    },
    /// Two shards disagree on a run parameter.
    Mismatch {
        /// Which parameter (`seed`, `cases`, `version`, …).
        what: &'static str,
        /// The first folder and its value.
        first: (PathBuf, String),
        /// The disagreeing folder and its value.
        other: (PathBuf, String),
    },
    /// The same shard index twice.
    DuplicateShard {
        shard: String,
        dirs: (PathBuf, PathBuf),
    },
    /// Some shard indices of `0..count` have no folder.
    MissingShards {
        count: u64,
        /// The first missing indices (at most 10).
        missing: Vec<u64>,
    },
    /// A shard was cut short.
    Incomplete {
        dir: PathBuf,
        shard: String,
    },
    /// A shard had bad input (its gate exited 2).
    BadInput {
        dir: PathBuf,
        shard: String,
    },
    /// A shard's own files contradict each other or the split.
    Inconsistent {
        dir: PathBuf,
        message: String,
    },
    /// The shards checked nothing (no target, zero cases).
    NothingChecked {
        /// Folder (the first shard's for a merged-level finding).
        dir: PathBuf,
        message: String,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use MergeError as E;
        match self {
            E::NoShards => f.write_str("no shard folder given"),
            E::Read { path, error } => write!(f, "{}: cannot read: {error}", path.display()),
            E::NotAFile { path } => write!(f, "{}: not a regular file", path.display()),
            E::TooLarge { path, line: 0 } => {
                write!(f, "{}: larger than {MAX_BYTES} bytes", path.display())
            }
            E::TooLarge { path, line } => write!(
                f,
                "{}:{line}: line longer than {MAX_BYTES} bytes",
                path.display()
            ),
            E::BadJson {
                path,
                line,
                message,
            } => write!(f, "{}:{line}: {message}", path.display()),
            E::Integrity { dir, error } => write!(f, "{}: {error}", dir.display()),
            E::Mismatch { what, first, other } => write!(
                f,
                "shards disagree on {what}: {} has {}, {} has {}",
                first.0.display(),
                first.1,
                other.0.display(),
                other.1
            ),
            E::DuplicateShard { shard, dirs } => write!(
                f,
                "shard {shard} given twice: {} and {}",
                dirs.0.display(),
                dirs.1.display()
            ),
            E::MissingShards { count, missing } => {
                let list: Vec<String> = missing.iter().map(|i| format!("{i}/{count}")).collect();
                write!(f, "missing shard(s): {}", list.join(", "))?;
                if missing.len() >= 10 {
                    f.write_str(", …")?;
                }
                Ok(())
            }
            E::Incomplete { dir, shard } => write!(
                f,
                "{}: shard {shard} is INCOMPLETE (cut short); re-run it",
                dir.display()
            ),
            E::BadInput { dir, shard } => write!(
                f,
                "{}: shard {shard} had bad input (its gate exited 2)",
                dir.display()
            ),
            E::Inconsistent { dir, message } => write!(f, "{}: {message}", dir.display()),
            E::NothingChecked { dir, message } => {
                write!(f, "{}: nothing was checked: {message}", dir.display())
            }
        }
    }
}

impl std::error::Error for MergeError {}
