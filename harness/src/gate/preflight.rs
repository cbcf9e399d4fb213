//! Fail closed before the gate starts: a corpus that would check nothing is
//! refused (exit 2) unless the user says `--no-corpus`.
//!
//! [`check_corpus`] requires the corpus root to be a folder with something
//! in it, `vectors/` to hold at least one vector file, and every selected
//! target to have at least one regular file in a corpus folder routed to it
//! ([`crate::targets::folder_targets`]).

use super::vectors;
use crate::targets::{folder_targets, Target};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why the corpus cannot back a gate run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorpusProblem {
    /// The corpus root does not exist or cannot be read.
    Missing {
        /// The root.
        root: PathBuf,
        /// OS error.
        error: String,
    },
    /// The corpus root is not a folder.
    NotAFolder(PathBuf),
    /// The corpus root holds nothing.
    Empty(PathBuf),
    /// `vectors/` is missing or holds no vector file.
    NoVectors(PathBuf),
    /// No corpus file is routed to a selected target.
    NoFilesForTarget {
        /// The root.
        root: PathBuf,
        /// The target.
        target: &'static str,
    },
}

impl fmt::Display for CorpusProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorpusProblem::Missing { root, error } => {
                write!(f, "{}: no corpus folder: {error}", root.display())?
            }
            CorpusProblem::NotAFolder(p) => write!(f, "{}: corpus is not a folder", p.display())?,
            CorpusProblem::Empty(p) => write!(f, "{}: corpus folder is empty", p.display())?,
            CorpusProblem::NoVectors(p) => write!(
                f,
                "{}: no vector file (missing or empty folder)",
                p.display()
            )?,
            CorpusProblem::NoFilesForTarget { root, target } => write!(
                f,
                "{}: no corpus file for selected target {target} (expected a non-empty \
                 {target}/ folder or a folder routed to it)",
                root.display()
            )?,
        }
        f.write_str(
            "; a gate that replays nothing must not pass (give --corpus DIR, or --no-corpus to \
             run the generated cases only)",
        )
    }
}

impl std::error::Error for CorpusProblem {}

/// True when `dir` holds a regular file somewhere below it (symlinks not
/// followed, so a special file is never opened).
fn has_regular_file(dir: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.flatten().any(|e| match e.file_type() {
        Ok(t) if t.is_file() => true,
        Ok(t) if t.is_dir() => has_regular_file(&e.path()),
        _ => false,
    })
}

/// Checks that `root` can back a gate run over `targets` (module docs).
pub fn check_corpus(root: &Path, targets: &[Target]) -> Result<(), CorpusProblem> {
    let md = std::fs::metadata(root).map_err(|e| CorpusProblem::Missing {
        root: root.to_path_buf(),
        error: e.to_string(),
    })?;
    if !md.is_dir() {
        return Err(CorpusProblem::NotAFolder(root.to_path_buf()));
    }
    let entries: Vec<std::fs::DirEntry> = std::fs::read_dir(root)
        .map_err(|e| CorpusProblem::Missing {
            root: root.to_path_buf(),
            error: e.to_string(),
        })?
        .flatten()
        .collect();
    if entries.is_empty() {
        return Err(CorpusProblem::Empty(root.to_path_buf()));
    }
    let vdir = root.join("vectors");
    let has_vectors = std::fs::read_dir(&vdir).is_ok_and(|rd| {
        rd.flatten().any(|e| {
            e.file_type().is_ok_and(|t| t.is_file())
                && vectors::is_vector_file_name(&e.file_name().to_string_lossy())
        })
    });
    if !has_vectors {
        return Err(CorpusProblem::NoVectors(vdir));
    }
    for t in targets {
        let fed = entries.iter().any(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            folder_targets(&name).contains(t) && has_regular_file(&e.path())
        });
        if !fed {
            return Err(CorpusProblem::NoFilesForTarget {
                root: root.to_path_buf(),
                target: t.name(),
            });
        }
    }
    Ok(())
}
