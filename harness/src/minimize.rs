//! Corpus minimisation (`tpbconform minimize CORPUS_DIR`).
//!
//! # Contracts
//!
//! - Each file of `corpus/<folder>/` gets one [`folder_signature`], built
//!   from the folder's routes ([`crate::gate::routes`]; fuzz-target folders
//!   such as `luts` too). Per gate target, [`signature`] is: the target, the
//!   core verdict (first failing predicate, decode field or decoded mnemonic,
//!   LUT / gate result), the differential outcome (agree or the divergence
//!   signature) and, for bundle targets, the opcode and the class of every
//!   field of its layout (`0` all zero, `c` the canonical constant, `x`
//!   anything else); for other targets a length bucket.
//! - The kept set has exactly one file per distinct signature: the smallest
//!   (then the lexicographically smallest name). It covers the same
//!   signatures as the input and no smaller subset does.
//! - Writing is crash-safe: the kept files are written with
//!   [`crate::atomic::write_atomic`] into a hidden sibling folder; only when
//!   it is complete is the old folder renamed aside, the new one renamed into
//!   place and the old one deleted. With `output` the input is not touched.
//! - An unreadable file or folder is a [`MinimizeError`] (exit 2) and nothing
//!   is changed.

use crate::atomic::write_atomic;
use crate::cli::layout::{layout, Role};
use crate::engine::{bundle_from_input, Outcome};
use crate::gate::{sync, GateTarget};
use crate::subject::{CoreSubject, OracleSubject};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why minimisation failed (nothing was changed).
#[derive(Debug)]
pub enum MinimizeError {
    /// A file or folder could not be read or written.
    Io {
        /// Path.
        path: PathBuf,
        /// Error.
        error: std::io::Error,
    },
    /// The folder is neither `corpus/<target>/` nor a folder containing such folders.
    NoTarget(PathBuf),
}

impl fmt::Display for MinimizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MinimizeError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            MinimizeError::NoTarget(p) => write!(
                f,
                "{}: not a corpus folder: expected corpus/<target>/ or a folder holding \
                 <target>/ folders (gate or fuzz target names)",
                p.display()
            ),
        }
    }
}

impl std::error::Error for MinimizeError {}

fn io(path: &Path) -> impl Fn(std::io::Error) -> MinimizeError + '_ {
    move |error| MinimizeError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// The coverage signature of one input (see the module docs).
pub fn signature(t: GateTarget, input: &[u8]) -> String {
    let engine = crate::engine::Engine::with(
        crate::gate::record::Recorder::new(CoreSubject),
        OracleSubject,
    );
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match t {
        GateTarget::Engine(et) => {
            engine.left.reset();
            let o = engine.compare(et, input);
            let verdict = engine.left.with_key(str::to_string);
            let outcome = match o {
                Outcome::Agree => "agree".to_string(),
                Outcome::Divergence(d) => format!("{}:{}", d.class, d.signature),
            };
            (verdict, outcome)
        }
        GateTarget::SyncHandshake => match sync::run_case(input) {
            sync::SyncResult::Agree(k) => (k, "agree".to_string()),
            sync::SyncResult::Diverge { class, key, .. } => {
                ("diverged".to_string(), format!("{class}:{key}"))
            }
        },
    }));
    let (verdict, outcome) = run.unwrap_or_else(|_| ("panic".into(), "panic".into()));
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
        format!(
            "len~{}",
            usize::BITS - input.len().leading_zeros() // log2 bucket
        )
    };
    format!("{} | {verdict} | {outcome} | {shape}", t.name())
}

/// The signature of one input of corpus folder `folder` (a gate- or
/// fuzz-target name): the [`signature`]s of its gate routes
/// ([`crate::gate::routes`]) joined, plus for fuzz routes the fuzz property's
/// outcome and a length bucket.
pub fn folder_signature(folder: &str, input: &[u8]) -> String {
    let mut parts = Vec::new();
    for r in crate::gate::routes(folder) {
        match r {
            crate::gate::Route::Gate(t) => parts.push(signature(t, input)),
            crate::gate::Route::Fuzz(ft) => {
                let res = std::panic::catch_unwind(|| crate::fuzz_entry::check(ft, input));
                let o = match res {
                    Ok(Ok(())) => "agree".to_string(),
                    Ok(Err(f)) => crate::triage::fuzz_finding(ft.name(), &f.0, input).key,
                    Err(_) => "panic".to_string(),
                };
                parts.push(format!(
                    "{} | {o} | len~{}",
                    ft.name(),
                    usize::BITS - input.len().leading_zeros()
                ));
            }
        }
    }
    parts.join(" || ")
}

/// What [`minimize_target`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MinimizeStats {
    /// Target.
    pub target: String,
    /// Files before.
    pub before: usize,
    /// Files kept (= distinct signatures).
    pub after: usize,
}

/// Picks one file per signature. Returns `(signature, path)` sorted by signature.
pub fn select(folder: &str, dir: &Path) -> Result<Vec<(String, PathBuf, Vec<u8>)>, MinimizeError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .map(|e| e.map(|e| e.path()).map_err(io(dir)))
        .collect::<Result<_, _>>()?;
    files.sort();
    let mut best: BTreeMap<String, (PathBuf, Vec<u8>)> = BTreeMap::new();
    for p in files {
        if p.is_dir() {
            continue;
        }
        let data = std::fs::read(&p).map_err(io(&p))?;
        let sig = folder_signature(folder, &data);
        let better = match best.get(&sig) {
            None => true,
            Some((q, d)) => (data.len(), &p) < (d.len(), q),
        };
        if better {
            best.insert(sig, (p, data));
        }
    }
    Ok(best.into_iter().map(|(s, (p, d))| (s, p, d)).collect())
}

/// Minimises one `corpus/<target>/` folder (in place, or into `output`).
pub fn minimize_target(
    folder: &str,
    dir: &Path,
    output: Option<&Path>,
) -> Result<MinimizeStats, MinimizeError> {
    let before = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter(|e| e.as_ref().map_or(true, |e| !e.path().is_dir()))
        .count();
    let kept = select(folder, dir)?;
    let name = dir
        .file_name()
        .map_or_else(|| folder.to_string(), |n| n.to_string_lossy().to_string());
    let parent = dir.parent().unwrap_or(Path::new("."));
    let pid = std::process::id();
    let target_dir = output.map_or_else(|| dir.to_path_buf(), Path::to_path_buf);
    let staging = target_dir
        .parent()
        .unwrap_or(parent)
        .join(format!(".{name}.min-{pid}"));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(io(&staging))?;
    let written = (|| {
        for (_, p, data) in &kept {
            let fname = p.file_name().unwrap_or_default();
            write_atomic(staging.join(fname), data).map_err(io(p))?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if target_dir.exists() {
        let old = target_dir
            .parent()
            .unwrap_or(parent)
            .join(format!(".{name}.old-{pid}"));
        std::fs::rename(&target_dir, &old).map_err(io(&target_dir))?;
        std::fs::rename(&staging, &target_dir).map_err(io(&target_dir))?;
        std::fs::remove_dir_all(&old).map_err(io(&old))?;
    } else {
        std::fs::rename(&staging, &target_dir).map_err(io(&target_dir))?;
    }
    Ok(MinimizeStats {
        target: folder.to_string(),
        before,
        after: kept.len(),
    })
}

/// Minimises `dir`: a `corpus/<target>/` folder, or a corpus root (every
/// `<target>/` folder in it). With `output`, writes there instead
/// (`output/<target>/` for a root).
pub fn minimize(dir: &Path, output: Option<&Path>) -> Result<Vec<MinimizeStats>, MinimizeError> {
    let md = std::fs::metadata(dir).map_err(io(dir))?;
    if !md.is_dir() {
        return Err(MinimizeError::NoTarget(dir.to_path_buf()));
    }
    let own = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .filter(|n| !crate::gate::routes(n).is_empty());
    if let Some(f) = own {
        return Ok(vec![minimize_target(&f, dir, output)?]);
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !crate::gate::routes(n).is_empty())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let sub = dir.join(&n);
        let o = output.map(|o| o.join(&n));
        if let Some(o) = &o {
            if let Some(p) = o.parent() {
                std::fs::create_dir_all(p).map_err(io(p))?;
            }
        }
        out.push(minimize_target(&n, &sub, o.as_deref())?);
    }
    if out.is_empty() {
        return Err(MinimizeError::NoTarget(dir.to_path_buf()));
    }
    Ok(out)
}
