//! One report from the report folders of a sharded gate
//! (`tpbconform gate --shard i/N`, one folder per shard): what
//! `tpbconform report merge DIR... [--output DIR]` writes.
//!
//! # Contracts
//!
//! - **Refuse, don't guess** ([`MergeError`], exit 2, nothing written): a
//!   folder without a regular `run.json` and `divergences.jsonl`, a
//!   `run.json` of another [`FORMAT`](crate::run_json::FORMAT), a
//!   `divergences.jsonl` whose line count is not the `run.json` count; shards
//!   that disagree on tool version, seed, requested cases, targets, shard
//!   count, corpus replay or vector files; a shard index given twice or one of
//!   `0..N` missing; a shard that is INCOMPLETE or not complete, had bad
//!   input, or whose planned case counts are not its `i/N` share of one
//!   per-target count.
//! - **Verdict.** FAIL if any shard found a divergence or failed, else PASS.
//! - **Deduplication.** Divergences are merged by signature — target, class,
//!   key, core verdict, oracle verdict: the gate's own dedup key
//!   ([`crate::findings::DedupKey`]). The representative is the one with the
//!   smallest origin (corpus < vector < generated; then path, line, case
//!   index), the gate's own rule; generated case indices are global (shard
//!   `i` runs cases `i, i+N, …`), so it is the representative the unsharded
//!   gate keeps. `count` sums the shards' counts (every shard replays the
//!   whole corpus and the vector files, so those occurrences count once per
//!   shard); `shards` lists the shards that saw it. Order: gate target order,
//!   then key, as in a gate report.
//! - **Output.** A folder that does not exist yet (not even as a dangling
//!   symlink), written through [`crate::report::write_dir`] (staging folder,
//!   atomic files, one rename).
//! - **Bounded reading.** `run.json` and each `divergences.jsonl` line are
//!   capped at [`MAX_BYTES`]; the jsonl file is streamed line by line.

use crate::arch::Arch;
use crate::findings::DedupKey;
use crate::gate::Shard;
use crate::input::{hex_nibbles, pack_nibbles};
use crate::report::{junit_doc, xml_escape, JunitCase};
use crate::run_json::{
    self, GenerationMeta, RunMeta, ShardMeta, TargetMeta, FAIL, INCOMPLETE, PASS,
};
use crate::targets::Target;
use crate::triage::replay_file_command;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Cap on `run.json` and on one `divergences.jsonl` line.
pub const MAX_BYTES: u64 = 16 << 20;

/// The divergences file of a report folder.
pub const DIVERGENCES: &str = "divergences.jsonl";

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
            E::TooLarge { path, line } => {
                write!(
                    f,
                    "{}:{line}: line longer than {MAX_BYTES} bytes",
                    path.display()
                )
            }
            E::BadJson {
                path,
                line,
                message,
            } => write!(f, "{}:{line}: {message}", path.display()),
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
        }
    }
}

impl std::error::Error for MergeError {}

/// Where a divergence came from, ordered like [`crate::findings::Origin`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OriginKey {
    /// A corpus file.
    Corpus(String),
    /// A vector file line.
    Vector(String, u64, String),
    /// A generated case: index, kind rank.
    Generated(u64, usize),
}

/// One line of a shard's `divergences.jsonl`.
#[derive(Clone, Debug)]
pub struct DivLine {
    /// The line as written.
    pub object: Map<String, Value>,
    /// Its signature.
    pub key: DedupKey,
    /// Its origin.
    pub origin: OriginKey,
    /// Occurrences in its shard.
    pub count: u64,
    /// The replay target (from its `file` name).
    pub replay_target: String,
    /// Its minimised input.
    pub minimized: Vec<u8>,
}

/// One shard's report folder, read.
#[derive(Clone, Debug)]
pub struct ShardReport {
    /// Folder.
    pub dir: PathBuf,
    /// Its `run.json`.
    pub meta: RunMeta,
    /// Its `divergences.jsonl`.
    pub divergences: Vec<DivLine>,
}

fn open_regular(path: &Path) -> Result<std::fs::File, MergeError> {
    let read = |e: std::io::Error| MergeError::Read {
        path: path.to_path_buf(),
        error: e.to_string(),
    };
    let md = std::fs::metadata(path).map_err(read)?;
    if !md.is_file() {
        return Err(MergeError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    std::fs::File::open(path).map_err(read)
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
    let mut text = String::new();
    open_regular(&path)?
        .take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| MergeError::Read {
            path: path.clone(),
            error: e.to_string(),
        })?;
    if text.len() as u64 > MAX_BYTES {
        return Err(MergeError::TooLarge { path, line: 0 });
    }
    // Check the format first, so an older or newer layout is named as such.
    let v: Value =
        crate::strict_json::parse(&text).map_err(|e| bad(&path, e.line(), e.to_string()))?;
    match v.get("format").and_then(Value::as_u64) {
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

fn field<'a>(
    o: &'a Map<String, Value>,
    name: &str,
    path: &Path,
    line: usize,
) -> Result<&'a Value, MergeError> {
    o.get(name)
        .ok_or_else(|| bad(path, line, format!("missing field `{name}`")))
}

fn string(v: &Value, name: &str, path: &Path, line: usize) -> Result<String, MergeError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| bad(path, line, format!("field `{name}` is not a string")))
}

fn uint(v: &Value, name: &str, path: &Path, line: usize) -> Result<u64, MergeError> {
    v.as_u64().ok_or_else(|| {
        bad(
            path,
            line,
            format!("field `{name}` is not a non-negative integer"),
        )
    })
}

const KINDS: [&str; 3] = ["valid", "near-valid", "raw"];

fn origin_key(o: &Value, path: &Path, line: usize) -> Result<OriginKey, MergeError> {
    let s = |k: &str| o.get(k).map(|v| string(v, k, path, line)).transpose();
    let n = |k: &str| o.get(k).map(|v| uint(v, k, path, line)).transpose();
    if let Some(p) = s("corpus")? {
        return Ok(OriginKey::Corpus(p));
    }
    if let Some(p) = s("vector")? {
        let line_no = n("line")?.ok_or_else(|| bad(path, line, "vector origin without `line`"))?;
        let expected =
            s("expected")?.ok_or_else(|| bad(path, line, "vector origin without `expected`"))?;
        return Ok(OriginKey::Vector(p, line_no, expected));
    }
    if let Some(i) = n("generated")? {
        let kind = s("kind")?.ok_or_else(|| bad(path, line, "generated origin without `kind`"))?;
        let rank = KINDS
            .iter()
            .position(|k| *k == kind)
            .ok_or_else(|| bad(path, line, format!("unknown case kind `{kind}`")))?;
        return Ok(OriginKey::Generated(i, rank));
    }
    Err(bad(
        path,
        line,
        "`origin` is none of {corpus}, {vector, line}, {generated, kind}",
    ))
}

fn opt_s(o: &Map<String, Value>, k: &str, default: &str) -> String {
    o.get(k)
        .and_then(Value::as_str)
        .unwrap_or(default)
        .to_string()
}

fn div_line(text: &str, path: &Path, line: usize) -> Result<DivLine, MergeError> {
    let v: Value = crate::strict_json::parse(text).map_err(|e| bad(path, line, e.to_string()))?;
    let Value::Object(object) = v else {
        return Err(bad(path, line, "not a JSON object"));
    };
    let get_s = |o: &Map<String, Value>, k: &str| string(field(o, k, path, line)?, k, path, line);
    let sig = match field(&object, "signature", path, line)? {
        Value::Object(m) => m.clone(),
        _ => return Err(bad(path, line, "field `signature` is not an object")),
    };
    let key = (
        get_s(&object, "target")?,
        get_s(&object, "class")?,
        get_s(&sig, "key")?,
        get_s(&sig, "left")?,
        get_s(&sig, "right")?,
        // Subject pair (absent in reports older than N-way subjects: the reference pair).
        (
            opt_s(&object, "left_name", "core"),
            opt_s(&object, "right_name", "oracle"),
        ),
    );
    let origin = origin_key(field(&object, "origin", path, line)?, path, line)?;
    let count = uint(field(&object, "count", path, line)?, "count", path, line)?;
    if count == 0 {
        return Err(bad(path, line, "field `count` is 0"));
    }
    let file = get_s(&object, "file")?;
    let replay_target = file
        .strip_prefix("divergences/")
        .and_then(|f| f.strip_suffix(".bin"))
        .and_then(|f| f.split_once('-'))
        .filter(|(n, t)| n.len() == 3 && n.bytes().all(|b| b.is_ascii_digit()) && !t.is_empty())
        .map(|(_, t)| t.to_string())
        .ok_or_else(|| {
            bad(
                path,
                line,
                format!("field `file` is `{file}`, expected divergences/NNN-<target>.bin"),
            )
        })?;
    let hex = get_s(&object, "minimized")?;
    let digits = hex_nibbles(hex.as_bytes(), false).map_err(|e| {
        bad(
            path,
            line,
            format!("field `minimized`: bad hex digit `{}`", e.found),
        )
    })?;
    if digits.len() % 2 != 0 {
        return Err(bad(
            path,
            line,
            "field `minimized`: odd number of hex digits",
        ));
    }
    Ok(DivLine {
        object,
        key,
        origin,
        count,
        replay_target,
        minimized: pack_nibbles(&digits),
    })
}

/// Reads `divergences.jsonl` of `dir`, streaming (blank lines skipped); stops
/// with an error at the first divergence beyond `expected` (the `run.json`
/// count), so memory stays bounded by what `run.json` announces.
pub fn read_divergences(dir: &Path, expected: u64) -> Result<Vec<DivLine>, MergeError> {
    let path = dir.join(DIVERGENCES);
    let mut r = BufReader::new(open_regular(&path)?);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for line in 1.. {
        buf.clear();
        let n = r
            .by_ref()
            .take(MAX_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| MergeError::Read {
                path: path.clone(),
                error: e.to_string(),
            })?;
        if n == 0 {
            break;
        }
        if n as u64 > MAX_BYTES {
            return Err(MergeError::TooLarge { path, line });
        }
        let text = std::str::from_utf8(&buf).map_err(|e| bad(&path, line, e.to_string()))?;
        if text.trim().is_empty() {
            continue;
        }
        if out.len() as u64 == expected {
            return Err(MergeError::Inconsistent {
                dir: dir.to_path_buf(),
                message: format!(
                    "{DIVERGENCES} has more than the {expected} divergence(s) run.json says \
                     (line {line})"
                ),
            });
        }
        out.push(div_line(text, &path, line)?);
    }
    Ok(out)
}

fn shard_name(s: ShardMeta) -> String {
    format!("{}/{}", s.index, s.count)
}

/// Reads one shard folder and checks it on its own: a known verdict that
/// matches its findings, complete, no bad input, as many jsonl lines as
/// `run.json` says.
pub fn load(dir: &Path) -> Result<ShardReport, MergeError> {
    let meta = read_meta(dir)?;
    let divergences = read_divergences(dir, meta.distinct_divergences)?;
    let inconsistent = |message: String| MergeError::Inconsistent {
        dir: dir.to_path_buf(),
        message,
    };
    let shard = shard_name(meta.shard);
    if meta.shard.count == 0 || meta.shard.index >= meta.shard.count {
        return Err(inconsistent(format!("run.json: bad shard {shard}")));
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
    if (divergences.len() as u64) < meta.distinct_divergences {
        return Err(inconsistent(format!(
            "{DIVERGENCES} has {} divergence(s), run.json says {}",
            divergences.len(),
            meta.distinct_divergences
        )));
    }
    let found = meta.distinct_divergences > 0 || !meta.failures.is_empty();
    let want = if found { FAIL } else { PASS };
    if meta.verdict != want {
        return Err(inconsistent(format!(
            "run.json verdict `{}` but {} divergence(s) and {} failure(s)",
            meta.verdict,
            meta.distinct_divergences,
            meta.failures.len()
        )));
    }
    for d in &divergences {
        if let OriginKey::Generated(i, _) = d.origin {
            if i % meta.shard.count != meta.shard.index {
                return Err(inconsistent(format!(
                    "divergence from generated case #{i}, which is not in shard {shard}"
                )));
            }
        }
    }
    for t in &meta.targets {
        if t.ran != t.planned {
            return Err(MergeError::Incomplete {
                dir: dir.to_path_buf(),
                shard,
            });
        }
    }
    Ok(ShardReport {
        dir: dir.to_path_buf(),
        meta,
        divergences,
    })
}

/// A merged divergence.
#[derive(Clone, Debug)]
pub struct MergedDivergence {
    /// 1-based number in the merged report.
    pub number: usize,
    /// The representative line (renumbered, `count`, `file`, `replay_file`
    /// and `shards` rewritten).
    pub object: Map<String, Value>,
    /// Signature.
    pub key: DedupKey,
    /// Summed count.
    pub count: u64,
    /// Shards that saw it.
    pub shards: Vec<String>,
    /// Report-relative file of its minimised input.
    pub file: String,
    /// Its minimised input.
    pub minimized: Vec<u8>,
}

/// The merged report.
#[derive(Clone, Debug)]
pub struct Merged {
    /// Its `run.json` (shard `0/1`, `merged_from` = number of shards).
    pub meta: RunMeta,
    /// The shards, ordered by index: (folder, shard, verdict).
    pub shards: Vec<(PathBuf, String, String)>,
    /// Deduplicated divergences, in report order.
    pub divergences: Vec<MergedDivergence>,
}

impl Merged {
    /// True iff no divergence and no failure in any shard.
    pub fn passed(&self) -> bool {
        self.meta.verdict == PASS
    }
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
fn renumbered_replay(object: &Map<String, Value>, target: &str, file: &str) -> String {
    match object.get("replay_file").and_then(Value::as_str) {
        Some(old) if old.contains(" --target ") => match old.rsplit_once(' ') {
            Some((head, _)) => format!("{head} {file}"),
            None => replay_file_command(&[], Arch::default(), target, file),
        },
        _ => replay_file_command(&[], Arch::default(), target, file),
    }
}

fn target_rank(name: &str) -> usize {
    Target::from_name(name).map_or(usize::MAX, Target::rank)
}

/// Merges shard reports (see the module docs).
pub fn merge(mut shards: Vec<ShardReport>) -> Result<Merged, MergeError> {
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
                .map(|t| (t.corpus_files, t.corpus_diverged))
                .collect::<Vec<_>>()
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
    // Planned counts: shard i of N plans exactly its i/N share of one count.
    let mut targets: Vec<TargetMeta> = Vec::new();
    for (j, t0) in first.meta.targets.iter().enumerate() {
        let total: u64 = shards.iter().map(|s| s.meta.targets[j].planned).sum();
        let mut t = TargetMeta {
            name: t0.name.clone(),
            planned: total,
            corpus_files: t0.corpus_files,
            corpus_diverged: t0.corpus_diverged,
            ..TargetMeta::default()
        };
        for s in &shards {
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
        }
        targets.push(t);
    }
    // Divergences by signature; smallest origin wins.
    struct Acc {
        rep: DivLine,
        count: u64,
        shards: Vec<String>,
    }
    let mut by_key: BTreeMap<DedupKey, Acc> = BTreeMap::new();
    for s in &shards {
        for d in &s.divergences {
            let name = shard_name(s.meta.shard);
            match by_key.get_mut(&d.key) {
                None => {
                    by_key.insert(
                        d.key.clone(),
                        Acc {
                            rep: d.clone(),
                            count: d.count,
                            shards: vec![name],
                        },
                    );
                }
                Some(a) => {
                    a.count += d.count;
                    a.shards.push(name);
                    if d.origin < a.rep.origin {
                        a.rep = d.clone();
                    }
                }
            }
        }
    }
    let mut accs: Vec<(DedupKey, Acc)> = by_key.into_iter().collect();
    accs.sort_by_key(|(k, _)| target_rank(&k.0));
    let divergences: Vec<MergedDivergence> = accs
        .into_iter()
        .enumerate()
        .map(|(i, (key, a))| {
            let number = i + 1;
            let file = format!("divergences/{number:03}-{}.bin", a.rep.replay_target);
            let mut object = a.rep.object.clone();
            object.insert("number".into(), Value::from(number));
            object.insert("count".into(), Value::from(a.count));
            object.insert("file".into(), Value::from(file.clone()));
            object.insert(
                "replay_file".into(),
                Value::from(renumbered_replay(
                    &a.rep.object,
                    &a.rep.replay_target,
                    &file,
                )),
            );
            object.insert("shards".into(), Value::from(a.shards.clone()));
            MergedDivergence {
                number,
                object,
                key,
                count: a.count,
                shards: a.shards,
                file,
                minimized: a.rep.minimized,
            }
        })
        .collect();
    let mut failures = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for s in &shards {
        let name = shard_name(s.meta.shard);
        failures.extend(s.meta.failures.iter().map(|f| format!("shard {name}: {f}")));
        for n in &s.meta.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    // A class is unexercised by the merged run iff no shard hit it; a merged
    // full default run fails on one, as the unsharded gate does
    // (`crate::gate::reach_failure`).
    let mut unexercised = shards[0].meta.unexercised.clone();
    for s in &shards[1..] {
        unexercised.retain(|c| s.meta.unexercised.contains(c));
    }
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
    }
    let failed = !divergences.is_empty() || !failures.is_empty();
    let meta = RunMeta {
        format: run_json::FORMAT,
        tool: first.meta.tool.clone(),
        version: first.meta.version.clone(),
        verdict: if failed { FAIL } else { PASS }.into(),
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
        notes,
        unexercised,
        generations: first
            .meta
            .generations
            .iter()
            .map(|g| GenerationMeta {
                ran: shards
                    .iter()
                    .flat_map(|s| &s.meta.generations)
                    .filter(|x| x.name == g.name)
                    .map(|x| x.ran)
                    .sum(),
                diverged: shards
                    .iter()
                    .flat_map(|s| &s.meta.generations)
                    .filter(|x| x.name == g.name)
                    .map(|x| x.diverged)
                    .sum(),
                name: g.name.clone(),
            })
            .collect(),
    };
    Ok(Merged {
        meta,
        shards: shards
            .iter()
            .map(|s| {
                (
                    s.dir.clone(),
                    shard_name(s.meta.shard),
                    s.meta.verdict.clone(),
                )
            })
            .collect(),
        divergences,
    })
}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

fn text_of(o: &Map<String, Value>, k: &str) -> String {
    match o.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

fn signature(d: &MergedDivergence) -> String {
    let (_, _, key, left, right, _) = &d.key;
    format!(
        "{key}: {}={left} {}={right}",
        text_of(&d.object, "left_name"),
        text_of(&d.object, "right_name")
    )
}

fn origin_text(o: &Map<String, Value>) -> String {
    match o.get("origin") {
        Some(Value::Object(m)) => {
            if let Some(p) = m.get("corpus").and_then(Value::as_str) {
                format!("corpus file {p}")
            } else if let Some(p) = m.get("vector").and_then(Value::as_str) {
                format!("vector {p}:{}", m.get("line").unwrap_or(&Value::Null))
            } else {
                format!(
                    "generated case #{} ({})",
                    m.get("generated").unwrap_or(&Value::Null),
                    m.get("kind").and_then(Value::as_str).unwrap_or("?")
                )
            }
        }
        _ => "?".into(),
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn shards_line(m: &Merged) -> String {
    let v: Vec<String> = m
        .shards
        .iter()
        .map(|(d, s, v)| format!("{s} `{}` ({v})", d.display()))
        .collect();
    v.join(", ")
}

/// `summary.md` of a merged report.
pub fn summary_md(m: &Merged) -> String {
    let mut s = String::new();
    let meta = &m.meta;
    let _ = writeln!(
        s,
        "# tpbconform gate report (merged from {} shards)\n",
        m.shards.len()
    );
    let _ = writeln!(
        s,
        "- result: **{}** — {} distinct divergence(s), {} divergent case(s), {} other failure(s)",
        meta.verdict,
        meta.distinct_divergences,
        meta.divergent_cases,
        meta.failures.len()
    );
    let _ = writeln!(
        s,
        "- seed: `{}`, generated cases per target requested: {}, tpbconform {}",
        meta.seed, meta.cases, meta.version
    );
    let _ = writeln!(s, "- shards: {}", shards_line(m));
    let names: Vec<&str> = meta.targets.iter().map(|t| t.name.as_str()).collect();
    let _ = writeln!(s, "- targets: {}", names.join(", "));
    let _ = writeln!(
        s,
        "- generated cases run: {} (every shard complete)",
        meta.targets.iter().map(|t| t.ran).sum::<u64>()
    );
    if !meta.failures.is_empty() {
        let _ = writeln!(s, "\n## Failures\n");
        for f in &meta.failures {
            let _ = writeln!(s, "- {f}");
        }
    }
    let _ = writeln!(s, "\n## Targets\n");
    let _ = writeln!(
        s,
        "Generated counts are summed over the shards; every shard replays the whole corpus, so \
         corpus counts are one shard's.\n"
    );
    let _ = writeln!(
        s,
        "| target | status | corpus files | corpus diverged | generated / planned | valid | near-valid | raw | diverged |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for t in &meta.targets {
        let bad = m.divergences.iter().any(|d| d.key.0 == t.name)
            || meta.failures.iter().any(|f| f.contains(&t.name));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} / {} | {} | {} | {} | {} |",
            t.name,
            if bad { "FAIL" } else { "ok" },
            t.corpus_files,
            t.corpus_diverged,
            t.ran,
            t.planned,
            t.valid,
            t.near_valid,
            t.raw,
            t.diverged
        );
    }
    if !meta.generations.is_empty() {
        let _ = writeln!(s, "\n## Generations\n");
        let _ = writeln!(s, "| generation | status | generated cases | diverged |");
        let _ = writeln!(s, "|---|---|---:|---:|");
        for g in &meta.generations {
            let bad = g.diverged > 0
                || m.divergences
                    .iter()
                    .any(|d| d.object.get("arch").and_then(Value::as_str) == Some(&g.name));
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                g.name,
                if bad { "FAIL" } else { "ok" },
                g.ran,
                g.diverged
            );
        }
    }
    if !meta.vector_files.is_empty() {
        let _ = writeln!(s, "\n## Vector files\n");
        let _ = writeln!(s, "| file | vectors | failed |");
        let _ = writeln!(s, "|---|---:|---:|");
        for v in &meta.vector_files {
            let _ = writeln!(s, "| {} | {} | {} |", v.path, v.vectors, v.failed);
        }
    }
    let _ = writeln!(s, "\n## Divergences\n");
    if m.divergences.is_empty() {
        let _ = writeln!(s, "None.\n");
    }
    for d in &m.divergences {
        let o = &d.object;
        let _ = writeln!(
            s,
            "### {}. `{}` — {} [{}]\n",
            d.number,
            d.key.0,
            md_cell(&signature(d)),
            d.key.1
        );
        let _ = writeln!(s, "- predicate / field: `{}`", d.key.2);
        let _ = writeln!(
            s,
            "- occurrences: {} (shards {}); first: {}",
            d.count,
            d.shards.join(", "),
            origin_text(o)
        );
        let _ = writeln!(s, "- input: `{}`", text_of(o, "input"));
        let _ = writeln!(s, "- minimised: `{}`", text_of(o, "minimized"));
        let _ = writeln!(s, "- replay: `{}`", text_of(o, "replay"));
        let _ = writeln!(
            s,
            "- replay (file, from this report folder): `{}`",
            text_of(o, "replay_file")
        );
        let _ = writeln!(
            s,
            "- {}: `{}`\n- {}: `{}`\n",
            text_of(o, "left_name"),
            md_cell(&text_of(o, "left")),
            text_of(o, "right_name"),
            md_cell(&text_of(o, "right"))
        );
    }
    if !meta.unexercised.is_empty() {
        let _ = writeln!(
            s,
            "## Unexercised classes (hit by no shard)\n\n{}\n",
            meta.unexercised
                .iter()
                .map(|c| format!("- `{c}`"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    if !meta.notes.is_empty() {
        let _ = writeln!(s, "## Notes\n");
        for n in &meta.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// `divergences.jsonl` of a merged report.
pub fn divergences_jsonl(m: &Merged) -> String {
    let mut s = String::new();
    for d in &m.divergences {
        s.push_str(&Value::Object(d.object.clone()).to_string());
        s.push('\n');
    }
    s
}

/// `junit.xml` of a merged report: one testcase per target plus `vectors`
/// and one per shard (its failures as errors).
pub fn junit_xml(m: &Merged) -> String {
    let mut cases: Vec<JunitCase> = m
        .meta
        .targets
        .iter()
        .map(|t| (t.name.clone(), Vec::new(), Vec::new()))
        .collect();
    cases.push(("vectors".into(), Vec::new(), Vec::new()));
    for d in &m.divergences {
        let i = match cases.iter().position(|c| c.0 == d.key.0) {
            Some(i) => i,
            None => {
                cases.push((d.key.0.clone(), Vec::new(), Vec::new()));
                cases.len() - 1
            }
        };
        cases[i].1.push(format!(
            "#{} {} [{}] x{}\nreplay: {}",
            d.number,
            signature(d),
            d.key.1,
            d.count,
            text_of(&d.object, "replay")
        ));
    }
    for (dir, shard, _) in &m.shards {
        let prefix = format!("shard {shard}: ");
        let errs: Vec<String> = m
            .meta
            .failures
            .iter()
            .filter(|f| f.starts_with(&prefix))
            .cloned()
            .collect();
        cases.push((
            format!("shard {shard} ({})", dir.display()),
            Vec::new(),
            errs,
        ));
    }
    // Failures of the merged run itself (not of one shard): unreached classes.
    let own: Vec<String> = m
        .meta
        .failures
        .iter()
        .filter(|f| !f.starts_with("shard "))
        .cloned()
        .collect();
    if !own.is_empty() {
        cases.push(("reach".into(), Vec::new(), own));
    }
    let properties = [
        ("seed".to_string(), m.meta.seed.clone()),
        ("merged_shards".to_string(), m.shards.len().to_string()),
    ];
    junit_doc(&cases, &properties)
}

/// `index.html` of a merged report (self-contained).
pub fn index_html(m: &Merged) -> String {
    let meta = &m.meta;
    let v = meta.verdict.as_str();
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <title>tpbconform gate report (merged)</title>\n<style>\n\
         body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}\n\
         pre,code,td{font-family:ui-monospace,monospace;font-size:0.9em}\n\
         table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}\n\
         .PASS{color:#070}.FAIL{color:#b00}\n</style></head><body>\n",
    );
    let _ = writeln!(
        s,
        "<h1>tpbconform gate (merged from {} shards): <span class=\"{v}\">{v}</span></h1>",
        m.shards.len()
    );
    let _ = writeln!(
        s,
        "<p>seed <code>{}</code>, {} generated cases, {} distinct divergence(s), {} failure(s)</p>",
        xml_escape(&meta.seed),
        meta.targets.iter().map(|t| t.ran).sum::<u64>(),
        meta.distinct_divergences,
        meta.failures.len()
    );
    s.push_str("<h2>Shards</h2><ul>\n");
    for (d, sh, verdict) in &m.shards {
        let _ = writeln!(
            s,
            "<li>{}: <code>{}</code> <span class=\"{v}\">{v}</span></li>",
            xml_escape(sh),
            xml_escape(&d.display().to_string()),
            v = xml_escape(verdict)
        );
    }
    s.push_str("</ul>\n");
    if !meta.failures.is_empty() {
        s.push_str("<h2>Failures</h2><ul>\n");
        for f in &meta.failures {
            let _ = writeln!(s, "<li>{}</li>", xml_escape(f));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("<h2>Targets</h2>\n<table><tr><th>target</th><th>corpus</th><th>generated</th><th>diverged</th></tr>\n");
    for t in &meta.targets {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{} / {}</td><td>{}</td></tr>",
            xml_escape(&t.name),
            t.corpus_files,
            t.ran,
            t.planned,
            t.diverged + t.corpus_diverged
        );
    }
    s.push_str("</table>\n<h2>Divergences</h2>\n");
    if m.divergences.is_empty() {
        s.push_str("<p>None.</p>\n");
    }
    for d in &m.divergences {
        let o = &d.object;
        let _ = writeln!(
            s,
            "<h3 id=\"d{n}\">{n}. {} — {} [{}]</h3>\n<p>occurrences: {} (shards {}); first: {}</p>\n\
             <p>replay: <code>{}</code><br>file: <code>{}</code></p>\n<pre>{}: {}\n{}: {}</pre>",
            xml_escape(&d.key.0),
            xml_escape(&signature(d)),
            xml_escape(&d.key.1),
            d.count,
            xml_escape(&d.shards.join(", ")),
            xml_escape(&origin_text(o)),
            xml_escape(&text_of(o, "replay")),
            xml_escape(&text_of(o, "replay_file")),
            xml_escape(&text_of(o, "left_name")),
            xml_escape(&text_of(o, "left")),
            xml_escape(&text_of(o, "right_name")),
            xml_escape(&text_of(o, "right")),
            n = d.number
        );
    }
    s.push_str("</body></html>\n");
    s
}

/// All files of the merged report, as `(relative path, bytes)`.
pub fn render(m: &Merged) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![
        ("summary.md".to_string(), summary_md(m).into_bytes()),
        (DIVERGENCES.to_string(), divergences_jsonl(m).into_bytes()),
        ("junit.xml".to_string(), junit_xml(m).into_bytes()),
        ("index.html".to_string(), index_html(m).into_bytes()),
        (run_json::FILE.to_string(), m.meta.to_json().into_bytes()),
    ];
    for d in &m.divergences {
        files.push((d.file.clone(), d.minimized.clone()));
    }
    files
}
