//! Fail closed before the gate starts (docs/guarantees.md G1, G9; issue 35): [`check_corpus`]
//! refuses a corpus that would check nothing or holds an input the run cannot read whole.

use super::vectors;
use crate::targets::{folder_targets, Target};
use std::fmt;
use std::path::Path;

/// Why the corpus cannot back a gate run: `p` leaves it nothing to replay.
fn nothing(p: &Path, what: impl fmt::Display) -> String {
    format!(
        "{}: {what}; a gate that replays nothing must not pass (give --corpus DIR, or \
         --no-corpus to run the generated cases only)",
        p.display()
    )
}

/// An input the gate cannot read whole, and why.
fn unreadable(p: &Path, why: impl fmt::Display) -> String {
    format!(
        "{}: {why}; the gate checks every input it is given or refuses to run (remove or \
         replace it)",
        p.display()
    )
}

fn missing(root: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| nothing(root, format_args!("no corpus folder: {e}"))
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
) -> Result<(), String> {
    let entries = vectors::sorted_paths(dir)
        .map_err(|e| unreadable(dir, format_args!("folder cannot be read: {e}")))?;
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
        readable(&p, cap).map_err(|why| unreadable(&p, why))?;
    }
    Ok(())
}

/// Every input a gate over `targets` reads from `root`, and no symlinked folder among them.
fn check_every_input(root: &Path, targets: &[Target]) -> Result<(), String> {
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
        let md = std::fs::symlink_metadata(&p).map_err(|e| unreadable(&p, e))?;
        // The replay lists every folder: a symlinked one is refused whatever its name.
        if md.file_type().is_symlink() && p.is_dir() {
            return Err(unreadable(&p, "symlink to a directory, not followed"));
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

/// `Err`: why the corpus cannot back a gate run, said in full.
pub fn check_corpus(root: &Path, targets: &[Target]) -> Result<(), String> {
    let md = std::fs::metadata(root).map_err(missing(root))?;
    if !md.is_dir() {
        return Err(nothing(root, "corpus is not a folder"));
    }
    let entries: Vec<std::fs::DirEntry> = std::fs::read_dir(root)
        .map_err(missing(root))?
        .flatten()
        .collect();
    if entries.is_empty() {
        return Err(nothing(root, "corpus folder is empty"));
    }
    let vdir = root.join("vectors");
    let has_vectors = std::fs::read_dir(&vdir).is_ok_and(|rd| {
        rd.flatten().any(|e| {
            e.file_type().is_ok_and(|t| t.is_file())
                && vectors::is_vector_file_name(&e.file_name().to_string_lossy())
        })
    });
    if !has_vectors {
        return Err(nothing(&vdir, "no vector file (missing or empty folder)"));
    }
    for t in targets {
        let fed = entries.iter().any(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            folder_targets(&name).contains(t) && has_regular_file(&e.path())
        });
        if !fed {
            let t = t.name();
            return Err(nothing(
                root,
                format_args!(
                    "no corpus file for selected target {t} (expected a non-empty {t}/ folder \
                     or a folder routed to it)"
                ),
            ));
        }
    }
    check_every_input(root, targets)
}
