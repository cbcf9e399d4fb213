//! Fail closed before the gate starts (exit 2 unless `--no-corpus`): [`check_corpus`]
//! requires a non-empty corpus root, a vector file in `vectors/`, a corpus file routed to
//! every selected target, and every input the run reads to be a regular file within its cap
//! that opens (issue 35: a skipped 3 GiB vector file let the gate say PASS).

use super::vectors;
use crate::targets::{folder_targets, Target};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why the corpus cannot back a gate run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorpusProblem {
    /// The corpus root does not exist or cannot be read.
    Missing { root: PathBuf, error: String },
    /// The corpus root is not a folder.
    NotAFolder(PathBuf),
    /// The corpus root holds nothing.
    Empty(PathBuf),
    /// `vectors/` is missing or holds no vector file.
    NoVectors(PathBuf),
    /// An input the gate cannot read whole, and why.
    Unreadable { path: PathBuf, why: String },
    /// No corpus file is routed to a selected target.
    NoFilesForTarget { root: PathBuf, target: &'static str },
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
            CorpusProblem::Unreadable { path, why } => {
                return write!(
                    f,
                    "{}: {why}; the gate checks every input it is given or refuses to run \
                     (remove or replace it)",
                    path.display()
                );
            }
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

fn missing(root: &Path) -> impl Fn(std::io::Error) -> CorpusProblem + '_ {
    move |e| CorpusProblem::Missing {
        root: root.to_path_buf(),
        error: e.to_string(),
    }
}

/// True when `dir` holds a regular file somewhere below it (symlinks not followed).
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

/// `p` is a regular file of at most `cap` bytes that opens; `Err(why)` without the path.
fn readable(p: &Path, cap: u64) -> Result<(), String> {
    match crate::input::open_regular(p, cap) {
        Ok(r) => r.map(drop),
        Err(e) => Err(format!("cannot be read: {e}")),
    }
}

/// Every input below `dir` whose name `keep` picks is [`readable`] (subfolders too unless `flat`).
fn check_inputs(
    dir: &Path,
    cap: u64,
    flat: bool,
    keep: &dyn Fn(&str) -> bool,
) -> Result<(), CorpusProblem> {
    let bad = |path: &Path, why: String| CorpusProblem::Unreadable {
        path: path.to_path_buf(),
        why,
    };
    let entries =
        vectors::sorted_paths(dir).map_err(|e| bad(dir, format!("folder cannot be read: {e}")))?;
    for p in entries {
        if !keep(&p.file_name().unwrap_or_default().to_string_lossy()) {
            continue;
        }
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            if !flat {
                check_inputs(&p, cap, flat, keep)?;
            }
            continue;
        }
        readable(&p, cap).map_err(|why| bad(&p, why))?;
    }
    Ok(())
}

/// Every input a gate over `targets` reads from `root`, and no symlinked folder among them.
fn check_every_input(root: &Path, targets: &[Target]) -> Result<(), CorpusProblem> {
    check_inputs(
        &root.join("vectors"),
        vectors::MAX_VECTOR_FILE,
        true,
        &vectors::is_vector_file_name,
    )?;
    let folders = vectors::sorted_paths(root).map_err(missing(root))?;
    for p in folders {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let md = std::fs::symlink_metadata(&p).map_err(|e| CorpusProblem::Unreadable {
            path: p.clone(),
            why: e.to_string(),
        })?;
        // The replay lists every folder: a symlinked one is refused whatever its name.
        if md.file_type().is_symlink() && p.is_dir() {
            return Err(CorpusProblem::Unreadable {
                path: p,
                why: "symlink to a directory, not followed".into(),
            });
        }
        if name == "vectors"
            || name.starts_with('.')
            || super::corpus::replayed_targets(targets, &name).is_empty()
        {
            continue;
        }
        if md.is_dir() {
            check_inputs(&p, crate::input::MAX_INPUT, false, &|_| true)?;
        }
    }
    Ok(())
}

pub fn check_corpus(root: &Path, targets: &[Target]) -> Result<(), CorpusProblem> {
    let md = std::fs::metadata(root).map_err(missing(root))?;
    if !md.is_dir() {
        return Err(CorpusProblem::NotAFolder(root.to_path_buf()));
    }
    let entries: Vec<std::fs::DirEntry> = std::fs::read_dir(root)
        .map_err(missing(root))?
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
    check_every_input(root, targets)
}
