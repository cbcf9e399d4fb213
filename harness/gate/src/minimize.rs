//! Corpus minimisation (`tpbconform minimize CORPUS_DIR`): exactly one file per distinct
//! [`folder_signature`] is kept (the smallest, then by name). Promises: docs/guarantees.md
//! M1–M5 (nothing changes until every folder is read and judged; in place only inputs read
//! and not kept are deleted, each checked by device and inode; no symlink is followed;
//! `--output` is staged and registered with [`crate::interrupt`]).

use crate::atomic::write_atomic;
use crate::generation::Generation;
use crate::judge::{bundle_from_input, pair::guard, Judge};
use crate::kinds;
use crate::layout::{layout, Role};
use crate::targets::{folder_targets, Target};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why minimisation failed, said in full; nothing was changed unless `partial` (a deletion
/// failed after earlier ones: exit 1, every signature still covered).
#[derive(Debug)]
pub struct MinimizeError {
    message: String,
    partial: bool,
}

impl MinimizeError {
    fn at(p: &Path, what: impl fmt::Display) -> Self {
        MinimizeError {
            message: format!("{}: {what}", p.display()),
            partial: false,
        }
    }

    /// Deleting `p` failed after earlier deletions.
    fn partial(p: &Path, error: impl fmt::Display) -> Self {
        MinimizeError {
            partial: true,
            ..Self::at(
                p,
                format_args!(
                    "cannot delete: {error} (files deleted before this one stay deleted; every \
                     signature is still covered)"
                ),
            )
        }
    }

    /// The folder is neither `corpus/<target>/` nor a folder containing such folders.
    fn no_target(p: &Path) -> Self {
        Self::at(
            p,
            "not a corpus folder: expected corpus/<target>/ or a folder holding <target>/ \
             folders (gate or fuzz target names)",
        )
    }

    fn output_exists(p: &Path) -> Self {
        Self::at(
            p,
            "--output exists already; refusing to touch it (give a new folder)",
        )
    }

    pub fn changed_something(&self) -> bool {
        self.partial
    }
}

impl fmt::Display for MinimizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MinimizeError {}

fn io(path: &Path) -> impl Fn(std::io::Error) -> MinimizeError + '_ {
    move |error| MinimizeError::at(path, error)
}

/// The coverage signature of an input of `t`: target, core's verdict, outcome, and a bundle's
/// opcode and field classes (`0` zero, `c` canonical, `x` other) or a length bucket.
pub fn signature(t: Target, input: &[u8]) -> String {
    let run = guard(|| {
        let kind = kinds::of(t);
        if let Some(own) = kind.corpus_signature(t, input) {
            return Some(own);
        }
        let default = [Generation::default()];
        let arches: &[Generation] = if kind.about_every_generation() {
            &Generation::ALL
        } else {
            &default
        };
        let (mut keys, mut outs) = (Vec::new(), Vec::new());
        for &arch in arches {
            let (judge, recorded) = Judge::open(&[], arch).ok()?.recorded();
            recorded.reset();
            let ran = kind.run(&judge, t, input, None);
            keys.push(ran.key.unwrap_or_else(|| recorded.with_key(str::to_string)));
            outs.push(match ran.outcome.divergence() {
                None => "agree".to_string(),
                Some(d) => format!("{}:{}", d.class, d.signature),
            });
        }
        Some((keys.join(" | "), outs.join(" | ")))
    });
    let (verdict, outcome) = run
        .ok()
        .flatten()
        .unwrap_or_else(|| ("panic".into(), "panic".into()));
    let shape = if t.is_bundle() {
        let b = bundle_from_input(input);
        let mut s = format!("op={:02x} ", b[0]);
        for span in layout(b[0]) {
            let bytes = &b[span.off..span.off + span.len];
            s.push(match span.role {
                Role::Const(v) if bytes == [v] => 'c',
                _ if bytes.iter().all(|&x| x == 0) => '0',
                _ => 'x',
            });
        }
        s
    } else {
        len_band(input)
    };
    format!("{} | {verdict} | {outcome} | {shape}", t.name())
}

/// The signature of one input of `folder`: its gate targets' [`signature`]s, and for its
/// fuzz-only targets the outcome's key and a length bucket.
pub fn folder_signature(folder: &str, input: &[u8]) -> String {
    let mut parts = Vec::new();
    for t in folder_targets(folder) {
        if t.spec().gate {
            parts.push(signature(t, input));
            continue;
        }
        let res = guard(|| Judge::reference().compare(t, input));
        let o = match res {
            Ok(o) => o
                .divergence()
                .map_or_else(|| "agree".to_string(), |d| d.signature.key.clone()),
            Err(_) => "panic".to_string(),
        };
        parts.push(format!("{} | {o} | {}", t.name(), len_band(input)));
    }
    parts.join(" || ")
}

fn len_band(input: &[u8]) -> String {
    format!("len~{}", usize::BITS - input.len().leading_zeros())
}

/// One corpus folder read and judged: kept `(signature, path, bytes)` sorted by signature,
/// inputs to drop, and (device, inode) of the folder and each dropped input when read.
#[derive(Debug)]
pub struct FolderPlan {
    pub target: String,
    pub dir: PathBuf,
    pub kept: Vec<(String, PathBuf, Vec<u8>)>,
    pub dropped: Vec<PathBuf>,
    ids: ((u64, u64), Vec<(u64, u64)>),
    pub skipped: Vec<String>,
}

/// Reads every input of `dir` (top level) and keeps one per signature; unreadable: error.
pub fn plan_folder(folder: &str, dir: &Path) -> Result<FolderPlan, MinimizeError> {
    let entries = crate::gate::vectors::sorted_paths(dir).map_err(io(dir))?;
    let mut best: BTreeMap<String, (PathBuf, Vec<u8>)> = BTreeMap::new();
    // Each input read, with its (device, inode).
    let mut read = Vec::new();
    let mut skipped = Vec::new();
    for p in entries {
        if let Some(why) = crate::input::symlink_skip(&p).map_err(io(&p))? {
            skipped.push(format!("{}: {why}", p.display()));
            continue;
        }
        let md = std::fs::symlink_metadata(&p).map_err(io(&p))?;
        if md.is_dir() {
            continue;
        }
        if !md.is_file() {
            skipped.push(format!(
                "{}: {}, not a regular file",
                p.display(),
                crate::atomic::file_kind(&md.file_type())
            ));
            continue;
        }
        let data = match crate::input::read_corpus_file(&p) {
            Ok(Ok(d)) => d,
            Ok(Err(why)) => {
                skipped.push(why);
                continue;
            }
            Err(e) => return Err(io(&p)(e)),
        };
        read.push((p.clone(), file_id(&md)));
        let sig = folder_signature(folder, &data);
        if best
            .get(&sig)
            .is_none_or(|(q, d)| (data.len(), &p) < (d.len(), q))
        {
            best.insert(sig, (p, data));
        }
    }
    let kept: Vec<(String, PathBuf, Vec<u8>)> =
        best.into_iter().map(|(s, (p, d))| (s, p, d)).collect();
    let (dropped, dropped_ids): (Vec<PathBuf>, _) = read
        .into_iter()
        .filter(|(p, _)| !kept.iter().any(|(_, k, _)| k == p))
        .unzip();
    let dir_id = file_id(&std::fs::symlink_metadata(dir).map_err(io(dir))?);
    Ok(FolderPlan {
        target: folder.to_string(),
        dir: dir.to_path_buf(),
        kept,
        dropped,
        skipped,
        ids: (dir_id, dropped_ids),
    })
}

fn file_id(m: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (m.dev(), m.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        (0, 0)
    }
}

/// Deletes the plan's dropped inputs, each only if it and its folder are the ones read.
fn delete_dropped(plan: &FolderPlan) -> Result<(), MinimizeError> {
    let same = |p: &Path, want: (u64, u64), dir: bool| {
        std::fs::symlink_metadata(p)
            .is_ok_and(|m| (if dir { m.is_dir() } else { m.is_file() }) && file_id(&m) == want)
    };
    for (p, id) in plan.dropped.iter().zip(&plan.ids.1) {
        if !same(&plan.dir, plan.ids.0, true) || !same(p, *id, false) {
            return Err(MinimizeError::partial(
                p,
                "changed since it was read (replaced or moved); not deleted",
            ));
        }
        std::fs::remove_file(p).map_err(|error| MinimizeError::partial(p, error))?;
    }
    Ok(())
}

/// The `<target>/` folders `dir` stands for: itself, else its target-named subfolders.
fn target_folders(
    dir: &Path,
    skipped: &mut Vec<String>,
) -> Result<Vec<(String, PathBuf)>, MinimizeError> {
    let md = std::fs::symlink_metadata(dir).map_err(io(dir))?;
    if md.file_type().is_symlink() {
        return Err(MinimizeError::at(
            dir,
            "is a symlink; minimize deletes only inside a real folder (give the folder it \
             points to)",
        ));
    }
    if !md.is_dir() {
        return Err(MinimizeError::no_target(dir));
    }
    let own = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .filter(|n| !folder_targets(n).is_empty());
    if let Some(f) = own {
        return Ok(vec![(f, dir.to_path_buf())]);
    }
    let mut folders = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io(dir))?.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if folder_targets(&name).is_empty() || !e.path().is_dir() {
            continue;
        }
        if e.file_type().map_or(true, |t| t.is_symlink()) {
            let p = e.path();
            skipped.push(format!(
                "{}: symlink to a directory, not followed",
                p.display()
            ));
            continue;
        }
        folders.push((name.clone(), dir.join(name)));
    }
    folders.sort();
    if folders.is_empty() {
        return Err(MinimizeError::no_target(dir));
    }
    Ok(folders)
}

/// Minimises `dir` (a `corpus/<target>/` folder or a root) in place or into `output`; what
/// was done, per folder.
pub fn minimize(dir: &Path, output: Option<&Path>) -> Result<Vec<FolderPlan>, MinimizeError> {
    if let Some(o) = output {
        if std::fs::symlink_metadata(o).is_ok() {
            return Err(MinimizeError::output_exists(o));
        }
    }
    let plans = plan(dir)?;
    let is_root = !plans.iter().any(|p| p.dir == dir);
    match output {
        Some(o) => write_output(&plans, o, is_root)?,
        None => {
            for plan in &plans {
                delete_dropped(plan)?;
            }
        }
    }
    Ok(plans)
}

/// What [`minimize`] would do to `dir`, changing nothing (`--dry-run`).
pub fn plan(dir: &Path) -> Result<Vec<FolderPlan>, MinimizeError> {
    let mut root_skipped = Vec::new();
    let folders = target_folders(dir, &mut root_skipped)?;
    let mut plans = folders
        .iter()
        .map(|(name, d)| plan_folder(name, d))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(first) = plans.first_mut() {
        // Symlinked target folders of the root: named with the first folder.
        first.skipped.splice(0..0, root_skipped);
    }
    Ok(plans)
}

fn write_output(plans: &[FolderPlan], out: &Path, is_root: bool) -> Result<(), MinimizeError> {
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = out
        .file_name()
        .map_or_else(|| "minimized".into(), |n| n.to_string_lossy().to_string());
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let staging = parent.join(format!(".{name}.min-{}", std::process::id()));
    crate::interrupt::create_temp_dir(&staging).map_err(io(&staging))?;
    let result = (|| {
        for plan in plans {
            let dir = if is_root {
                let d = staging.join(&plan.target);
                std::fs::create_dir(&d).map_err(io(&d))?;
                d
            } else {
                staging.clone()
            };
            for (_, p, data) in &plan.kept {
                let fname = p.file_name().unwrap_or_default();
                let dest = dir.join(fname);
                // A failed write names the output it could not write, not the input.
                write_atomic(&dest, data).map_err(io(&dest))?;
            }
        }
        debug_pause();
        if std::fs::symlink_metadata(out).is_ok() {
            return Err(MinimizeError::output_exists(out));
        }
        crate::interrupt::finish_temp(&staging, || std::fs::rename(&staging, out)).map_err(io(out))
    })();
    if result.is_err() {
        crate::interrupt::discard_temp(&staging);
    }
    result
}

/// Test hook: `TPB_MINIMIZE_DEBUG_PAUSE_MS` pauses just before the staging folder is renamed.
fn debug_pause() {
    if let Some(ms) = std::env::var("TPB_MINIMIZE_DEBUG_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(folder: &str, name: &str) -> Vec<u8> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../corpus")
            .join(folder)
            .join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn a_kinds_own_coverage_key_is_in_the_signature() {
        // Two stream_lint seeds of one length band: a clean program and one
        // whose group is short (SPEC §5.3). Their verdicts differ, so must
        // their signatures (the kind's own classes).
        let clean = folder_signature("stream_lint", &seed("stream_lint", "44b434555039fc48"));
        let short = folder_signature("stream_lint", &seed("stream_lint", "4a956d8702ea84d4"));
        // (stream_lint signs with its own classes: kinds/stream_lint.rs.)
        assert!(!clean.contains("short_group"), "{clean}");
        assert!(short.contains("short_group"), "{short}");
        assert_ne!(clean, short);
        // Lowering: one key per generation, joined.
        let sig = signature(Target::named("collective_lowering"), b"{}");
        assert!(sig.matches(" | ").count() >= Generation::ALL.len(), "{sig}");
    }
}
