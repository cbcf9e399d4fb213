//! One [`ReportModel`] from the report folders of a sharded gate
//! (`tpbconform gate --shard i/N`, one folder per shard): what
//! `tpbconform report merge DIR... [--output DIR]` renders.
//!
//! # Contracts
//!
//! - **Verify, don't trust** ([`MergeError`], exit 2, nothing written). Each
//!   folder ([`load`]) must pass its integrity record
//!   ([`super::integrity`]), and its files must agree with each other: the
//!   records of `divergences.jsonl` with `run.json`'s counts (distinct and
//!   divergent cases; a target, vector file or generation with diverged
//!   cases has records, a record's origin has a diverged count behind it and
//!   lies in the shard's share of the cases, its raw file holds its
//!   minimised input), per target `ran = planned =
//!   valid + near-valid + raw`, generations summing to the targets, and the
//!   verdict `run.json`, `summary.md` and `junit.xml` state equal to the one
//!   recomputed from those contents. A folder that lists no target, a run of
//!   zero requested cases, and a target no shard planned a case for are
//!   refused (nothing was checked).
//! - **One run** ([`merge`]): shards that disagree on tool version, seed,
//!   requested cases, targets, generations, shard count, corpus replay,
//!   vector files or subjects; a shard index given twice or one of `0..N`
//!   missing; planned counts that are not each shard's `i/N` share of one
//!   per-target count: refused.
//! - **Verdict, recomputed.** FAIL if any record, failure or diverged count
//!   exists in any shard (or a full default run left a class unhit), else
//!   PASS. A shard's own verdict is only cross-checked, never used.
//! - **Deduplication.** Divergences are merged by signature, the gate's own
//!   dedup key ([`crate::findings::DedupKey`]); the representative is the one
//!   with the smallest origin (the gate's own rule; generated case indices
//!   are global, so it is the one the unsharded gate keeps). `count` sums
//!   the shards' counts (every shard replays the whole corpus and the vector
//!   files, so those occurrences count once per shard); `shards` lists the
//!   shards that saw it.
//! - **Bounded reading.** `run.json`, `summary.md`, `junit.xml` and each
//!   `divergences.jsonl` line are capped at [`MAX_BYTES`]; the jsonl file is
//!   streamed, and holds at most the records `run.json` announces.

use super::divergences_jsonl::{self, LineError};
use super::integrity::{self, IntegrityError};
use super::model::{
    DivergenceRecord, OriginKey, OriginRecord, ReportModel, ShardRef, REACH_CASE, VECTORS_CASE,
};
use super::run_json::{
    self, GenerationMeta, ReachClass, RunMeta, ShardMeta, TargetMeta, FAIL, INCOMPLETE, PASS,
};
use crate::arch::Arch;
use crate::findings::DedupKey;
use crate::gate::Shard;
use crate::targets::Target;
use crate::triage::replay_file_command;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Cap on `run.json`, `summary.md`, `junit.xml` and one jsonl line.
pub const MAX_BYTES: u64 = 16 << 20;

/// Why a set of shard folders cannot be merged (exit 2).
#[derive(Debug)]
#[non_exhaustive]
pub enum MergeError {
    /// No folder given.
    NoShards,
    /// A file could not be opened or read.
    Read {
        /// File.
        path: PathBuf,
        /// Error text.
        error: String,
    },
    /// A path that must be a regular file is something else.
    NotAFile {
        /// Path.
        path: PathBuf,
    },
    /// A file or line is over [`MAX_BYTES`].
    TooLarge {
        /// File.
        path: PathBuf,
        /// 1-based line (jsonl), 0 for a whole file.
        line: usize,
    },
    /// Malformed JSON or a missing / mistyped field.
    BadJson {
        /// File.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The folder fails its integrity record.
    Integrity {
        /// Folder.
        dir: PathBuf,
        /// What is wrong.
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
        /// The shard.
        shard: String,
        /// Both folders.
        dirs: (PathBuf, PathBuf),
    },
    /// Some shard indices of `0..count` have no folder.
    MissingShards {
        /// Shard count.
        count: u64,
        /// The first missing indices (at most 10).
        missing: Vec<u64>,
    },
    /// A shard was cut short.
    Incomplete {
        /// Folder.
        dir: PathBuf,
        /// Its shard.
        shard: String,
    },
    /// A shard had bad input (its gate exited 2).
    BadInput {
        /// Folder.
        dir: PathBuf,
        /// Its shard.
        shard: String,
    },
    /// A shard's own files contradict each other or the split.
    Inconsistent {
        /// Folder.
        dir: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The shards checked nothing (no target, zero cases).
    NothingChecked {
        /// Folder (the first shard's for a merged-level finding).
        dir: PathBuf,
        /// What is missing.
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

/// One shard's report folder, read and verified.
#[derive(Clone, Debug)]
pub struct ShardReport {
    /// Folder.
    pub dir: PathBuf,
    /// Its `run.json`.
    pub meta: RunMeta,
    /// Its `divergences.jsonl`.
    pub divergences: Vec<DivergenceRecord>,
}

fn open_regular(path: &Path) -> Result<std::fs::File, MergeError> {
    let read = |e: std::io::Error| MergeError::Read {
        path: path.to_path_buf(),
        error: e.to_string(),
    };
    let md = std::fs::symlink_metadata(path).map_err(read)?;
    if !md.is_file() {
        return Err(MergeError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    std::fs::File::open(path).map_err(read)
}

fn read_capped(path: &Path) -> Result<String, MergeError> {
    let mut text = String::new();
    open_regular(path)?
        .take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| MergeError::Read {
            path: path.to_path_buf(),
            error: e.to_string(),
        })?;
    if text.len() as u64 > MAX_BYTES {
        return Err(MergeError::TooLarge {
            path: path.to_path_buf(),
            line: 0,
        });
    }
    Ok(text)
}

fn bad(path: &Path, line: usize, message: impl Into<String>) -> MergeError {
    MergeError::BadJson {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// Reads `run.json` of `dir`.
pub fn read_meta(dir: &Path) -> Result<RunMeta, MergeError> {
    let path = dir.join(run_json::FILE);
    let text = read_capped(&path)?;
    crate::strict_json::reject_duplicates(&text)
        .map_err(|e| bad(&path, e.line(), e.to_string()))?;
    // Check the format first, so an older or newer layout is named as such.
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(&path, e.line(), e.to_string()))?;
    match v.get("format").and_then(serde_json::Value::as_u64) {
        Some(f) if f == u64::from(run_json::FORMAT) => {}
        other => {
            return Err(bad(
                &path,
                1,
                format!(
                    "run.json format {} (expected {})",
                    other.map_or_else(|| "missing".to_string(), |n| n.to_string()),
                    run_json::FORMAT
                ),
            ))
        }
    }
    serde_json::from_value(v).map_err(|e| bad(&path, 1, e.to_string()))
}

/// Reads `divergences.jsonl` of `dir`: at most `expected` records (the
/// `run.json` count), so memory stays bounded by what `run.json` announces.
pub fn read_divergences(dir: &Path, expected: u64) -> Result<Vec<DivergenceRecord>, MergeError> {
    let path = dir.join(divergences_jsonl::FILE);
    divergences_jsonl::read(open_regular(&path)?, expected).map_err(|e| match e {
        LineError::Io(e) => MergeError::Read {
            path,
            error: e.to_string(),
        },
        LineError::TooLong(line) => MergeError::TooLarge { path, line },
        LineError::TooMany(line) => MergeError::Inconsistent {
            dir: dir.to_path_buf(),
            message: format!(
                "{} has more than the {expected} divergence(s) run.json says (line {line})",
                divergences_jsonl::FILE
            ),
        },
        LineError::Bad(line, m) => bad(&path, line, m),
    })
}

fn shard_name(s: ShardMeta) -> String {
    format!("{}/{}", s.index, s.count)
}

/// True when the facts of `meta` and `records` hold a divergence or a
/// failure (the verdict is then FAIL).
fn found_something(meta: &RunMeta, records: &[DivergenceRecord]) -> bool {
    !records.is_empty()
        || !meta.failures.is_empty()
        || meta.distinct_divergences > 0
        || meta.divergent_cases > 0
        || meta
            .targets
            .iter()
            .any(|t| t.diverged > 0 || t.corpus_diverged > 0)
        || meta.vector_files.iter().any(|v| v.failed > 0)
        || meta.generations.iter().any(|g| g.diverged > 0)
        || meta.corpus.iter().any(|c| c.diverged > 0)
}

/// The verdict `summary.md` states (`- result: **X**`), from its first lines.
fn summary_verdict(dir: &Path) -> Result<Option<String>, MergeError> {
    let text = read_capped(&dir.join("summary.md"))?;
    Ok(text.lines().take(20).find_map(|l| {
        let rest = l.strip_prefix("- result: **")?;
        Some(rest.split("**").next()?.to_string())
    }))
}

/// The `verdict` property and the testcase names of `junit.xml`.
fn junit_facts(dir: &Path) -> Result<(Option<String>, Vec<String>), MergeError> {
    let text = read_capped(&dir.join("junit.xml"))?;
    let attr = |tag: &str, l: &str| -> Option<String> {
        let at = l.find(tag)? + tag.len();
        Some(l[at..].split('"').next()?.to_string())
    };
    let verdict = text
        .lines()
        .find(|l| l.contains("<property name=\"verdict\""))
        .and_then(|l| attr("value=\"", l));
    let cases = text
        .lines()
        .filter(|l| l.trim_start().starts_with("<testcase "))
        .filter_map(|l| attr(" name=\"", l))
        .collect();
    Ok((verdict, cases))
}

/// Checks one shard's files against each other (see the module docs).
fn check_shard(dir: &Path, meta: &RunMeta, recs: &[DivergenceRecord]) -> Result<(), MergeError> {
    let no = |message: String| MergeError::Inconsistent {
        dir: dir.to_path_buf(),
        message,
    };
    let shard = shard_name(meta.shard);
    if meta.targets.is_empty() {
        return Err(MergeError::NothingChecked {
            dir: dir.to_path_buf(),
            message: "run.json lists no target".into(),
        });
    }
    if meta.cases == 0 {
        return Err(MergeError::NothingChecked {
            dir: dir.to_path_buf(),
            message: "zero generated cases requested (cases = 0)".into(),
        });
    }
    if recs.len() as u64 != meta.distinct_divergences {
        return Err(no(format!(
            "{} has {} divergence(s), run.json says {}",
            divergences_jsonl::FILE,
            recs.len(),
            meta.distinct_divergences
        )));
    }
    let total: u64 = recs.iter().map(|r| r.count).sum();
    if total != meta.divergent_cases {
        return Err(no(format!(
            "{} records {total} divergent case(s), run.json says {}",
            divergences_jsonl::FILE,
            meta.divergent_cases
        )));
    }
    for (i, t) in meta.targets.iter().enumerate() {
        if Target::from_name(&t.name).is_none() {
            return Err(no(format!("run.json: unknown target `{}`", t.name)));
        }
        if meta.targets[..i].iter().any(|u| u.name == t.name) {
            return Err(no(format!("run.json: target `{}` listed twice", t.name)));
        }
        if t.ran != t.planned {
            return Err(MergeError::Incomplete {
                dir: dir.to_path_buf(),
                shard,
            });
        }
        if t.valid + t.near_valid + t.raw != t.ran || t.diverged > t.ran {
            return Err(no(format!(
                "target {}: {} run but {} valid + {} near-valid + {} raw, {} diverged",
                t.name, t.ran, t.valid, t.near_valid, t.raw, t.diverged
            )));
        }
        if t.corpus_diverged > t.corpus_files {
            return Err(no(format!(
                "target {}: {} of {} corpus files diverged",
                t.name, t.corpus_diverged, t.corpus_files
            )));
        }
        let of_t: Vec<&DivergenceRecord> = recs.iter().filter(|r| r.target == t.name).collect();
        let cases = t.diverged + t.corpus_diverged;
        if cases > of_t.iter().map(|r| r.count).sum::<u64>() {
            return Err(no(format!(
                "target {}: {cases} diverged case(s) in run.json but {} divergence record(s) \
                 with {} occurrence(s) in {}",
                t.name,
                of_t.len(),
                of_t.iter().map(|r| r.count).sum::<u64>(),
                divergences_jsonl::FILE
            )));
        }
    }
    let vector_failed: u64 = meta.vector_files.iter().map(|v| v.failed).sum();
    let vector_recs: u64 = recs
        .iter()
        .filter(|r| r.target == VECTORS_CASE)
        .map(|r| r.count)
        .sum();
    if meta.vector_files.iter().any(|v| v.failed > v.vectors) || vector_failed > vector_recs {
        return Err(no(format!(
            "{vector_failed} failed vector check(s) in run.json but {vector_recs} vector \
             divergence occurrence(s) in {}",
            divergences_jsonl::FILE
        )));
    }
    let (g_ran, g_div) = meta
        .generations
        .iter()
        .fold((0, 0), |(a, b), g| (a + g.ran, b + g.diverged));
    let (t_ran, t_div) = meta
        .targets
        .iter()
        .fold((0, 0), |(a, b), t| (a + t.ran, b + t.diverged));
    if meta.generations.is_empty() || g_ran != t_ran || g_div != t_div {
        return Err(no(format!(
            "generations run {g_ran} case(s), {g_div} diverged; targets run {t_ran}, {t_div} \
             diverged"
        )));
    }
    if meta.failures.len() != meta.failure_targets.len() {
        return Err(no(
            "run.json: failures and failure_targets differ in length".into(),
        ));
    }
    for (i, r) in recs.iter().enumerate() {
        check_record(dir, meta, i, r)?;
    }
    let want = if found_something(meta, recs) {
        FAIL
    } else {
        PASS
    };
    if meta.verdict != want {
        return Err(no(format!(
            "run.json verdict `{}` but its files hold {} divergence record(s), {} failure(s) \
             and {} diverged generated case(s): the verdict is {want}",
            meta.verdict,
            recs.len(),
            meta.failures.len(),
            t_div
        )));
    }
    match summary_verdict(dir)? {
        Some(v) if v == want => {}
        v => {
            return Err(no(format!(
                "summary.md says {} but the verdict is {want}",
                v.as_deref().unwrap_or("no result")
            )))
        }
    }
    let (jv, cases) = junit_facts(dir)?;
    if jv.as_deref() != Some(want) {
        return Err(no(format!(
            "junit.xml says {} but the verdict is {want}",
            jv.as_deref().unwrap_or("no verdict")
        )));
    }
    if let Some(t) = meta.targets.iter().find(|t| !cases.contains(&t.name)) {
        return Err(no(format!(
            "junit.xml has no testcase for target {}",
            t.name
        )));
    }
    if let Some(c) = cases
        .iter()
        .find(|c| Target::from_name(c).is_some() && !meta.targets.iter().any(|t| t.name == **c))
    {
        return Err(no(format!(
            "junit.xml has a testcase for target {c}, which run.json does not list (a missing \
             target)"
        )));
    }
    Ok(())
}

fn check_record(
    dir: &Path,
    meta: &RunMeta,
    i: usize,
    r: &DivergenceRecord,
) -> Result<(), MergeError> {
    let path = dir.join(divergences_jsonl::FILE);
    let line = i + 1;
    let shard = shard_name(meta.shard);
    let target = meta.targets.iter().find(|t| t.name == r.target);
    if r.number != line as u64 {
        return Err(bad(
            &path,
            line,
            format!("record number {} (expected {line})", r.number),
        ));
    }
    if r.count == 0 {
        return Err(bad(&path, line, "field `count` is 0"));
    }
    if target.is_none() && r.target != VECTORS_CASE {
        return Err(bad(
            &path,
            line,
            format!("target `{}` is not one of the run's targets", r.target),
        ));
    }
    if r.file_target().is_none() {
        return Err(bad(
            &path,
            line,
            format!(
                "field `file` is `{}`, expected divergences/NNN-<target>.bin",
                r.file
            ),
        ));
    }
    let minimized = r
        .minimized_bytes()
        .map_err(|e| bad(&path, line, format!("field `minimized`: {e}")))?;
    // The raw file beside the record holds the same bytes.
    let bin = dir.join(&r.file);
    let mut held = Vec::new();
    open_regular(&bin)?
        .take(MAX_BYTES + 1)
        .read_to_end(&mut held)
        .map_err(|e| MergeError::Read {
            path: bin.clone(),
            error: e.to_string(),
        })?;
    if held != minimized {
        return Err(MergeError::Inconsistent {
            dir: dir.to_path_buf(),
            message: format!(
                "{}: does not hold the minimised input of record {line} of {}",
                r.file,
                divergences_jsonl::FILE
            ),
        });
    }
    if let Err(e) = r.input_bytes() {
        return Err(bad(&path, line, format!("field `input`: {e}")));
    }
    if !meta.generations.iter().any(|g| g.name == r.arch) {
        return Err(bad(
            &path,
            line,
            format!("generation `{}` is not one of the run's", r.arch),
        ));
    }
    let inconsistent = |message: String| MergeError::Inconsistent {
        dir: dir.to_path_buf(),
        message: format!("{}:{line}: {message}", divergences_jsonl::FILE),
    };
    match &r.origin {
        OriginRecord::Generated { generated, kind } => {
            if r.origin.key().is_none() {
                return Err(bad(&path, line, format!("unknown case kind `{kind}`")));
            }
            if generated % meta.shard.count != meta.shard.index {
                return Err(inconsistent(format!(
                    "divergence from generated case #{generated}, which is not in shard {shard}"
                )));
            }
            if target.is_none_or(|t| t.diverged == 0) {
                return Err(inconsistent(format!(
                    "divergence from generated case #{generated} but run.json has no diverged \
                     generated case of {}",
                    r.target
                )));
            }
        }
        OriginRecord::Corpus { corpus } => {
            if target.is_none_or(|t| t.corpus_diverged == 0) {
                return Err(inconsistent(format!(
                    "divergence from corpus file {corpus} but run.json has no diverged corpus \
                     file of {}",
                    r.target
                )));
            }
        }
        OriginRecord::Vector { vector, .. } => {
            if !meta
                .vector_files
                .iter()
                .any(|v| v.path == *vector && v.failed > 0)
            {
                return Err(inconsistent(format!(
                    "divergence from vector file {vector} but run.json has no failed check in it"
                )));
            }
        }
    }
    Ok(())
}

/// Reads one shard folder and verifies it on its own (see the module docs).
pub fn load(dir: &Path) -> Result<ShardReport, MergeError> {
    let meta = read_meta(dir)?;
    let shard = shard_name(meta.shard);
    if meta.shard.count == 0 || meta.shard.index >= meta.shard.count {
        return Err(MergeError::Inconsistent {
            dir: dir.to_path_buf(),
            message: format!("run.json: bad shard {shard}"),
        });
    }
    if meta.verdict == INCOMPLETE || !meta.complete {
        return Err(MergeError::Incomplete {
            dir: dir.to_path_buf(),
            shard,
        });
    }
    if meta.bad_input {
        return Err(MergeError::BadInput {
            dir: dir.to_path_buf(),
            shard,
        });
    }
    let divergences = read_divergences(dir, meta.distinct_divergences)?;
    integrity::verify(
        dir,
        run_json::FILE,
        meta.integrity.as_ref(),
        &run_json::render(&meta),
    )
    .map_err(|error| MergeError::Integrity {
        dir: dir.to_path_buf(),
        error,
    })?;
    check_shard(dir, &meta, &divergences)?;
    Ok(ShardReport {
        dir: dir.to_path_buf(),
        meta,
        divergences,
    })
}

fn check_same<T: fmt::Debug + PartialEq>(
    what: &'static str,
    first: &ShardReport,
    other: &ShardReport,
    get: impl Fn(&RunMeta) -> T,
) -> Result<(), MergeError> {
    let (a, b) = (get(&first.meta), get(&other.meta));
    if a == b {
        return Ok(());
    }
    Err(MergeError::Mismatch {
        what,
        first: (first.dir.clone(), format!("{a:?}")),
        other: (other.dir.clone(), format!("{b:?}")),
    })
}

/// The shard's file-form replay command (with its `--subject` flags) for the
/// merged report's file name.
fn renumbered_replay(old: &str, target: &str, file: &str) -> String {
    match old.rsplit_once(' ') {
        Some((head, _)) if old.contains(" --target ") => format!("{head} {file}"),
        _ => replay_file_command(&[], Arch::default(), target, file),
    }
}

fn target_rank(name: &str) -> usize {
    Target::from_name(name).map_or(usize::MAX, Target::rank)
}

/// Merges verified shard reports into one model (see the module docs).
pub fn merge(mut shards: Vec<ShardReport>) -> Result<ReportModel, MergeError> {
    let first = shards.first().ok_or(MergeError::NoShards)?.clone();
    for s in &shards[1..] {
        check_same("tool", &first, s, |m| m.tool.clone())?;
        check_same("version", &first, s, |m| m.version.clone())?;
        check_same("seed", &first, s, |m| m.seed.clone())?;
        check_same("cases", &first, s, |m| m.cases)?;
        check_same("shard count", &first, s, |m| m.shard.count)?;
        check_same("generations", &first, s, |m| {
            m.generations
                .iter()
                .map(|g| g.name.clone())
                .collect::<Vec<_>>()
        })?;
        check_same("targets", &first, s, |m| {
            m.targets.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
        })?;
        check_same("corpus replay", &first, s, |m| m.corpus.clone())?;
        check_same("vector files", &first, s, |m| m.vector_files.clone())?;
        check_same("corpus files per target", &first, s, |m| {
            m.targets
                .iter()
                .map(|t| (t.corpus_files, t.corpus_diverged, t.corpus_present))
                .collect::<Vec<_>>()
        })?;
        check_same("subjects", &first, s, |m| {
            (m.subjects.clone(), m.subject_cases, m.unsupported.clone())
        })?;
        check_same("reach classes", &first, s, |m| {
            m.reach
                .iter()
                .map(|(f, cs)| (f.clone(), cs.iter().map(|c| c.class.clone()).collect()))
                .collect::<Vec<(String, Vec<String>)>>()
        })?;
    }
    let count = first.meta.shard.count;
    shards.sort_by_key(|s| s.meta.shard.index);
    for w in shards.windows(2) {
        if w[0].meta.shard.index == w[1].meta.shard.index {
            return Err(MergeError::DuplicateShard {
                shard: shard_name(w[0].meta.shard),
                dirs: (w[0].dir.clone(), w[1].dir.clone()),
            });
        }
    }
    if shards.len() as u64 != count {
        let have: Vec<u64> = shards.iter().map(|s| s.meta.shard.index).collect();
        let missing = (0..count)
            .filter(|i| have.binary_search(i).is_err())
            .take(10)
            .collect();
        return Err(MergeError::MissingShards { count, missing });
    }
    let targets = merged_targets(&shards, count)?;
    let divergences = merged_divergences(&shards);
    let mut failures = Vec::new();
    let mut failure_targets = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for s in &shards {
        let name = shard_name(s.meta.shard);
        for f in &s.meta.failures {
            failures.push(format!("shard {name}: {f}"));
            failure_targets.push(format!("shard {name}"));
        }
        for n in &s.meta.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    // Reach: hits summed; a class is unexercised iff no shard hit it. A
    // merged full default run fails on one, as the unsharded gate does
    // (`crate::gate::reach_failure`).
    let mut reach = shards[0].meta.reach.clone();
    for s in &shards[1..] {
        for (field, classes) in &mut reach {
            if let Some(other) = s.meta.reach.get(field) {
                for (c, o) in classes.iter_mut().zip(other) {
                    c.hits += o.hits;
                }
            }
        }
    }
    let unexercised: Vec<String> = if reach.is_empty() {
        let mut u = shards[0].meta.unexercised.clone();
        for s in &shards[1..] {
            u.retain(|c| s.meta.unexercised.contains(c));
        }
        u
    } else {
        reach
            .iter()
            .flat_map(|(f, cs)| {
                cs.iter()
                    .filter(|c: &&ReachClass| c.hits == 0)
                    .map(move |c| format!("{f}: {}", c.class))
            })
            .collect()
    };
    let all_targets = Target::gate_targets()
        .iter()
        .all(|t| first.meta.targets.iter().any(|m| m.name == t.name()));
    if first.meta.cases >= crate::gate::DEFAULT_CASES && all_targets && !unexercised.is_empty() {
        failures.push(
            crate::gate::GateFailure::Unreached {
                classes: unexercised.clone(),
            }
            .to_string(),
        );
        failure_targets.push(REACH_CASE.to_string());
    }
    let generations: Vec<GenerationMeta> = first
        .meta
        .generations
        .iter()
        .map(|g| {
            let of = |f: fn(&GenerationMeta) -> u64| -> u64 {
                shards
                    .iter()
                    .flat_map(|s| &s.meta.generations)
                    .filter(|x| x.name == g.name)
                    .map(f)
                    .sum()
            };
            GenerationMeta {
                name: g.name.clone(),
                ran: of(|x| x.ran),
                diverged: of(|x| x.diverged),
            }
        })
        .collect();
    let mut meta = RunMeta {
        format: run_json::FORMAT,
        tool: first.meta.tool.clone(),
        version: first.meta.version.clone(),
        verdict: String::new(),
        complete: true,
        bad_input: false,
        seed: first.meta.seed.clone(),
        cases: first.meta.cases,
        shard: ShardMeta { index: 0, count: 1 },
        merged_from: Some(count),
        targets,
        corpus: first.meta.corpus.clone(),
        vector_files: first.meta.vector_files.clone(),
        distinct_divergences: divergences.len() as u64,
        divergent_cases: divergences.iter().map(|d| d.count).sum(),
        failures,
        failure_targets,
        notes,
        unexercised,
        generations,
        subjects: first.meta.subjects.clone(),
        subject_cases: first.meta.subject_cases,
        unsupported: first.meta.unsupported.clone(),
        reach,
        integrity: None,
    };
    // Recomputed from the merged contents, never copied from a shard.
    meta.verdict = if found_something(&meta, &divergences) {
        FAIL
    } else {
        PASS
    }
    .into();
    let shard_refs = shards
        .iter()
        .map(|s| ShardRef {
            dir: s.dir.clone(),
            shard: shard_name(s.meta.shard),
            verdict: if found_something(&s.meta, &s.divergences) {
                FAIL
            } else {
                PASS
            }
            .into(),
        })
        .collect();
    Ok(ReportModel {
        meta,
        divergences,
        shards: shard_refs,
        live: None,
    })
}

/// Per target: counts summed, planned counts checked against each shard's
/// share of one total, and a total of at least one case.
fn merged_targets(shards: &[ShardReport], count: u64) -> Result<Vec<TargetMeta>, MergeError> {
    let first = &shards[0];
    let mut targets = Vec::new();
    for (j, t0) in first.meta.targets.iter().enumerate() {
        let total: u64 = shards.iter().map(|s| s.meta.targets[j].planned).sum();
        if total == 0 {
            return Err(MergeError::NothingChecked {
                dir: first.dir.clone(),
                message: format!("target {}: no shard planned a generated case", t0.name),
            });
        }
        let mut t = TargetMeta {
            name: t0.name.clone(),
            planned: total,
            corpus_files: t0.corpus_files,
            corpus_diverged: t0.corpus_diverged,
            corpus_present: t0.corpus_present,
            ..TargetMeta::default()
        };
        for s in shards {
            let st = &s.meta.targets[j];
            let share = Shard {
                index: s.meta.shard.index,
                count,
            }
            .len(total);
            if st.planned != share {
                return Err(MergeError::Inconsistent {
                    dir: s.dir.clone(),
                    message: format!(
                        "target {}: shard {} planned {} generated cases, but its share of \
                         the shards' {total} is {share} (different --cases / --sync-cases?)",
                        t.name,
                        shard_name(s.meta.shard),
                        st.planned
                    ),
                });
            }
            t.ran += st.ran;
            t.valid += st.valid;
            t.near_valid += st.near_valid;
            t.raw += st.raw;
            t.diverged += st.diverged;
            for (k, v) in &st.coverage {
                let e = t.coverage.entry(k.clone()).or_insert([0; 6]);
                for (x, y) in e.iter_mut().zip(v) {
                    *x += y;
                }
            }
        }
        targets.push(t);
    }
    Ok(targets)
}

/// Divergences by signature; smallest origin wins; renumbered in report
/// order (gate target order, then key).
fn merged_divergences(shards: &[ShardReport]) -> Vec<DivergenceRecord> {
    struct Acc {
        rep: DivergenceRecord,
        rep_origin: Option<OriginKey>,
        count: u64,
        shards: Vec<String>,
    }
    let mut by_key: BTreeMap<DedupKey, Acc> = BTreeMap::new();
    for s in shards {
        let name = shard_name(s.meta.shard);
        for d in &s.divergences {
            let origin = d.origin.key();
            match by_key.get_mut(&d.dedup_key()) {
                None => {
                    by_key.insert(
                        d.dedup_key(),
                        Acc {
                            rep: d.clone(),
                            rep_origin: origin,
                            count: d.count,
                            shards: vec![name.clone()],
                        },
                    );
                }
                Some(a) => {
                    a.count += d.count;
                    a.shards.push(name.clone());
                    if origin < a.rep_origin {
                        a.rep = d.clone();
                        a.rep_origin = origin;
                    }
                }
            }
        }
    }
    let mut accs: Vec<(DedupKey, Acc)> = by_key.into_iter().collect();
    accs.sort_by_key(|(k, _)| target_rank(&k.0));
    accs.into_iter()
        .enumerate()
        .map(|(i, (_, a))| {
            let number = i as u64 + 1;
            let target = a.rep.file_target().unwrap_or(&a.rep.target).to_string();
            let file = format!("divergences/{number:03}-{target}.bin");
            DivergenceRecord {
                number,
                count: a.count,
                replay_file: renumbered_replay(&a.rep.replay_file, &target, &file),
                file,
                shards: a.shards,
                ..a.rep
            }
        })
        .collect()
}
