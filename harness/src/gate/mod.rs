//! The release gate: corpus replay, vector checks and generated differential
//! cases, run on all cores, failing closed.
//!
//! # Contracts
//!
//! - **Phases.** (1) Every file under `corpus/<folder>/` (recursive, sorted)
//!   is run through the [`routes`] of that folder (fuzz-target folders such
//!   as `luts` go through the gate targets they cover and, where the fuzz
//!   property checks more, through [`crate::fuzz_entry::check`]). A missing
//!   folder is noted, not a failure; an unreadable file or folder is a
//!   [`GateFailure::Corpus`] (bad input).
//!   (2) Every vector file under `corpus/vectors/` is checked against both
//!   subjects ([`vectors`]). (3) `cases` generated cases per target
//!   ([`cases`]), split over `threads` workers.
//! - **Determinism.** Case `i` of target `t` is a pure function of
//!   `(seed, t, i)`. Work is cut into chunks of consecutive case ordinals,
//!   handed out round-robin over the targets through one atomic counter, so a
//!   time budget stops every target at about the same fraction and the set
//!   of cases run is always a prefix of the chunk list. With no budget hit,
//!   every count, coverage cell and kept finding is independent of the
//!   thread count and the scheduling.
//! - **Sharding.** `--shard i/n` runs exactly the case indices `≡ i (mod n)`
//!   ([`Shard`]): shards are pairwise disjoint and their union is the
//!   unsharded case set.
//! - **Fail closed.** A subject panic is a `Panic` finding (engine); a panic
//!   in the gate's own code is a [`GateFailure::InternalPanic`]; a case that
//!   makes no progress for `case_timeout` is a [`GateFailure::Timeout`] (the
//!   run stops, the stuck worker is abandoned, the report is still written);
//!   a selected target that ran no generated case while some were requested
//!   is a [`GateFailure::TargetDidNotRun`]. [`GateRun::passed`] is true only
//!   with no finding and no failure.
//! - **Hot loop.** Bundle cases are generated into a stack `[u8; 64]`, other
//!   inputs into a reused `Vec`; validator, LUT and IR-gate comparisons that
//!   agree do not allocate (the coverage key is written into a reused
//!   buffer, see [`record`]).

pub mod cases;
pub mod record;
pub mod sync;
pub mod vectors;

use crate::engine::{Engine, Outcome, Target};
use crate::subject::{CoreSubject, OracleSubject};
use crate::triage::{Finding, Findings, Origin};
use cases::{case_rng, name_hash, CaseKind};
use record::Recorder;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A target of the gate: one of the engine's, or the sync handshake model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GateTarget {
    /// A [`crate::engine::Target`].
    Engine(Target),
    /// `sync_handshake`: the alloc_semaphores model vs the simulator.
    SyncHandshake,
}

impl GateTarget {
    /// Every target, in report order.
    pub fn all() -> Vec<GateTarget> {
        Target::ALL
            .into_iter()
            .map(GateTarget::Engine)
            .chain([GateTarget::SyncHandshake])
            .collect()
    }

    /// Stable name (the fuzz target / corpus folder name).
    pub fn name(self) -> &'static str {
        match self {
            GateTarget::Engine(t) => t.name(),
            GateTarget::SyncHandshake => "sync_handshake",
        }
    }

    /// Looks a target up by name.
    pub fn from_name(s: &str) -> Option<GateTarget> {
        GateTarget::all().into_iter().find(|t| t.name() == s)
    }

    /// True for the four targets whose case is one 64-byte bundle.
    pub fn is_bundle(self) -> bool {
        matches!(self, GateTarget::Engine(t) if t.is_bundle())
    }

    /// Cases per work chunk (about a millisecond of work or more).
    fn chunk(self) -> u64 {
        match self {
            GateTarget::SyncHandshake => 16,
            GateTarget::Engine(Target::DecodeAny | Target::Roundtrip | Target::CustomOpGroup) => {
                1024
            }
            GateTarget::Engine(_) => 8192,
        }
    }
}

impl fmt::Display for GateTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Bad `--targets` / `--shard` values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsageError {
    /// Unknown target name.
    UnknownTarget(String),
    /// Malformed shard.
    BadShard(String),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::UnknownTarget(s) => {
                write!(f, "unknown target `{s}` (expected one of:")?;
                for t in GateTarget::all() {
                    write!(f, " {t}")?;
                }
                f.write_str(")")
            }
            UsageError::BadShard(s) => write!(
                f,
                "bad shard `{s}`: expected i/n with integers 0 <= i < n (e.g. 0/4)"
            ),
        }
    }
}

impl std::error::Error for UsageError {}

impl FromStr for GateTarget {
    type Err = UsageError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GateTarget::from_name(s).ok_or_else(|| UsageError::UnknownTarget(s.to_string()))
    }
}

/// A slice `index/count` of the case space: case indices `≡ index (mod count)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 0-based shard index.
    pub index: u64,
    /// Number of shards (≥ 1).
    pub count: u64,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl FromStr for Shard {
    type Err = UsageError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || UsageError::BadShard(s.to_string());
        let (a, b) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = a.trim().parse().map_err(|_| bad())?;
        let count: u64 = b.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// How many of the case indices `0..n` are in this shard.
    pub fn len(self, n: u64) -> u64 {
        if self.index >= n {
            0
        } else {
            (n - self.index).div_ceil(self.count)
        }
    }

    /// True if the shard has no case of `0..n`.
    pub fn is_empty(self, n: u64) -> bool {
        self.len(n) == 0
    }

    /// The case index of the shard's `m`-th case.
    #[inline]
    pub fn case_index(self, m: u64) -> u64 {
        self.index + m * self.count
    }

    /// The shard's case indices of `0..n`, ascending.
    pub fn case_ids(self, n: u64) -> impl Iterator<Item = u64> {
        (0..self.len(n)).map(move |m| self.case_index(m))
    }
}

/// Gate parameters.
#[derive(Clone, Debug)]
pub struct GateConfig {
    /// Generated cases per target (before sharding).
    pub cases: u64,
    /// Cap on `sync_handshake` cases (each is a whole program simulated on
    /// every engine, ~100x a bundle case): it runs `min(cases, sync_cases)`.
    pub sync_cases: u64,
    /// Time budget for the whole run; `None` = no budget.
    pub seconds: Option<f64>,
    /// Seed.
    pub seed: u64,
    /// Shard.
    pub shard: Shard,
    /// Targets, in report order.
    pub targets: Vec<GateTarget>,
    /// The corpus root (`corpus/`).
    pub corpus_dir: PathBuf,
    /// Worker threads (≥ 1).
    pub threads: usize,
    /// A case making no progress this long is a timeout failure.
    pub case_timeout: Duration,
    /// Show a progress bar on stderr (only honoured on a terminal by the CLI).
    pub progress: bool,
    /// Set from outside (Ctrl-C) to stop early.
    pub stop: Option<Arc<AtomicBool>>,
    /// Test hook: generated case with this index of the first target hangs.
    #[doc(hidden)]
    pub debug_hang_case: Option<u64>,
    /// Test hook: generated case with this index of the first target panics
    /// outside the engine.
    #[doc(hidden)]
    pub debug_panic_case: Option<u64>,
}

/// Default generated cases per target.
pub const DEFAULT_CASES: u64 = 5_000_000;
/// Default cap on `sync_handshake` cases: the 10^6 programs the sync issue
/// asks the gate to check.
pub const DEFAULT_SYNC_CASES: u64 = 1_000_000;
/// Default time budget in seconds: a safety net. The default case counts
/// finish in about a minute on a 2-core machine, well inside it, so a default
/// run is complete and its report deterministic.
pub const DEFAULT_SECONDS: f64 = 180.0;
/// Default seed.
pub const DEFAULT_SEED: u64 = 0x7BC0_4F0E;

impl GateConfig {
    /// Generated cases (before sharding) for `target`.
    pub fn cases_for(&self, target: GateTarget) -> u64 {
        match target {
            GateTarget::SyncHandshake => self.cases.min(self.sync_cases),
            _ => self.cases,
        }
    }
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            cases: DEFAULT_CASES,
            sync_cases: DEFAULT_SYNC_CASES,
            seconds: Some(DEFAULT_SECONDS),
            seed: DEFAULT_SEED,
            shard: Shard::default(),
            targets: GateTarget::all(),
            corpus_dir: PathBuf::from("corpus"),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            case_timeout: Duration::from_secs(30),
            progress: false,
            stop: None,
            debug_hang_case: None,
            debug_panic_case: None,
        }
    }
}

/// Why the gate failed other than by a finding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GateFailure {
    /// A corpus file or folder could not be read (bad input).
    Corpus {
        /// Path.
        path: String,
        /// What went wrong.
        error: String,
    },
    /// A vector file is malformed or unreadable (bad input).
    Vectors(String),
    /// A generated case hung.
    Timeout {
        /// Target.
        target: String,
        /// Case index.
        index: u64,
        /// Seconds without progress.
        seconds: u64,
    },
    /// A panic in the gate's own code (generator, bookkeeping).
    InternalPanic {
        /// Target.
        target: String,
        /// Case index.
        index: u64,
        /// Panic message.
        message: String,
    },
    /// A target ran no generated case although some were requested.
    TargetDidNotRun {
        /// Target.
        target: String,
    },
    /// Stopped from outside (Ctrl-C) before the planned cases ran.
    Interrupted,
}

impl GateFailure {
    /// True for failures caused by bad input (exit 2).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, GateFailure::Corpus { .. } | GateFailure::Vectors(_))
    }
}

impl fmt::Display for GateFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateFailure::Corpus { path, error } => write!(f, "{path}: cannot read: {error}"),
            GateFailure::Vectors(e) => f.write_str(e),
            GateFailure::Timeout {
                target,
                index,
                seconds,
            } => write!(
                f,
                "timeout: target {target} case #{index} made no progress for {seconds} s"
            ),
            GateFailure::InternalPanic {
                target,
                index,
                message,
            } => write!(
                f,
                "internal panic in target {target} near case #{index}: {message}"
            ),
            GateFailure::TargetDidNotRun { target } => {
                write!(
                    f,
                    "target {target} ran no generated case (budget too small?)"
                )
            }
            GateFailure::Interrupted => f.write_str("interrupted before the planned cases ran"),
        }
    }
}

/// Coverage columns: agree, then the divergence classes.
pub const OUTCOMES: [&str; 6] = [
    "agree",
    "OverAccept",
    "UnderAccept",
    "SameVerdictDifferentReason",
    "DifferentOutput",
    "Panic",
];

fn outcome_col(class: &str) -> usize {
    OUTCOMES.iter().position(|c| *c == class).unwrap_or(4)
}

/// Per-target results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetStats {
    /// Generated cases planned for this shard.
    pub planned: u64,
    /// Generated cases run.
    pub ran: u64,
    /// Generated cases per [`CaseKind`] (valid, near-valid, raw).
    pub by_kind: [u64; 3],
    /// Generated cases that diverged.
    pub diverged: u64,
    /// Corpus files replayed.
    pub corpus_files: u64,
    /// Corpus files that diverged.
    pub corpus_diverged: u64,
    /// `true` when some corpus folder was replayed through this target.
    pub corpus_present: bool,
    /// Coverage: core's verdict key → counts per [`OUTCOMES`] column
    /// (corpus and generated cases).
    pub coverage: BTreeMap<String, [u64; 6]>,
    /// Worker time spent on this target's generated cases.
    pub busy: Duration,
}

/// Everything a gate run found.
#[derive(Clone, Debug, Default)]
pub struct GateRun {
    /// Seed.
    pub seed: u64,
    /// Shard.
    pub shard: Shard,
    /// Requested cases per target.
    pub cases: u64,
    /// Budget.
    pub seconds: Option<f64>,
    /// Threads.
    pub threads: usize,
    /// Per target, in config order.
    pub targets: Vec<(GateTarget, TargetStats)>,
    /// Vector files checked.
    pub vector_files: Vec<vectors::FileStats>,
    /// Corpus folders replayed.
    pub corpus: Vec<CorpusFolder>,
    /// Deduplicated findings.
    pub findings: Findings,
    /// Failures other than findings (sorted).
    pub failures: Vec<GateFailure>,
    /// Notes (missing corpus folders, unknown folders, budget stop).
    pub notes: Vec<String>,
    /// True when the time budget (or a stop) cut the generated phase short.
    pub stopped_early: bool,
    /// Wall time of the generated phase.
    pub gen_elapsed: Duration,
    /// Wall time of the whole run.
    pub elapsed: Duration,
}

impl GateRun {
    /// True iff no finding and no failure.
    pub fn passed(&self) -> bool {
        self.findings.is_empty() && self.failures.is_empty()
    }

    /// True if some failure is bad input.
    pub fn bad_input(&self) -> bool {
        self.failures.iter().any(GateFailure::is_bad_input)
    }

    /// Total generated cases run.
    pub fn generated(&self) -> u64 {
        self.targets.iter().map(|(_, s)| s.ran).sum()
    }
}

// ---------------------------------------------------------------------------
// Phase 1: corpus
// ---------------------------------------------------------------------------

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), (String, String)> {
    let err = |p: &Path, e: std::io::Error| (p.display().to_string(), e.to_string());
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| err(dir, e))?
        .map(|e| e.map(|e| e.path()).map_err(|e| err(dir, e)))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        let md = std::fs::metadata(&p).map_err(|e| err(&p, e))?;
        if md.is_dir() {
            walk(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

type RecEngine = Engine<Recorder<CoreSubject>, OracleSubject>;

/// FNV-1a hasher for the per-chunk coverage maps (keys are short strings;
/// SipHash showed up in profiles).
#[derive(Clone, Copy, Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        self.0 = h;
    }
}

type CovMap = HashMap<String, [u64; 6], std::hash::BuildHasherDefault<Fnv>>;

fn new_engine() -> RecEngine {
    Engine::with(Recorder::new(CoreSubject), OracleSubject)
}

/// Runs one input through a target; returns the coverage column (and fills
/// `key` via the recorder / sync result) and the finding, if any.
fn run_one(
    e: &RecEngine,
    t: GateTarget,
    input: &[u8],
    bundle: Option<&[u8; 64]>,
    origin: impl FnOnce() -> Origin,
    cov: &mut CovMap,
) -> Option<Finding> {
    e.left.reset();
    let (col, finding, sync_key) = match t {
        GateTarget::Engine(et) => {
            let o = match bundle {
                Some(b) => e.compare_bundle(et, b),
                None => e.compare(et, input),
            };
            match o {
                Outcome::Agree => (0, None, None),
                Outcome::Divergence(d) => (
                    outcome_col(d.class.name()),
                    Some(Finding::from_divergence(&d, origin())),
                    None,
                ),
            }
        }
        GateTarget::SyncHandshake => {
            let r = sync::run_case(input);
            match &r {
                sync::SyncResult::Agree(k) => (0, None, Some(k.clone())),
                sync::SyncResult::Diverge { class, .. } => (
                    outcome_col(class),
                    Finding::from_sync(&r, input, origin()),
                    Some("diverged".to_string()),
                ),
            }
        }
    };
    let mut bump = |k: &str| match cov.get_mut(k) {
        Some(c) => c[col] += 1,
        None => {
            let mut c = [0u64; 6];
            c[col] = 1;
            cov.insert(k.to_string(), c);
        }
    };
    match sync_key {
        Some(k) => bump(&k),
        None => e.left.with_key(bump),
    }
    finding
}

fn merge_cov(into: &mut BTreeMap<String, [u64; 6]>, from: CovMap) {
    for (k, v) in from {
        let e = into.entry(k).or_insert([0; 6]);
        for (a, b) in e.iter_mut().zip(v) {
            *a += b;
        }
    }
}

/// How the files of one corpus folder are replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Through a gate target (structured findings, replayable by name).
    Gate(GateTarget),
    /// Through a fuzz target's full property ([`crate::fuzz_entry::check`]).
    Fuzz(crate::fuzz_entry::FuzzTarget),
}

impl Route {
    /// Name (gate or fuzz target).
    pub fn name(self) -> &'static str {
        match self {
            Route::Gate(t) => t.name(),
            Route::Fuzz(f) => f.name(),
        }
    }
}

/// The routes of corpus folder `name` (empty: not a known target). A
/// folder named after a gate target goes through it (`decode_any` also
/// through `roundtrip`); fuzz-target folders go through the gate targets
/// their fuzz target covers plus, where the fuzz target checks more than
/// those (`custom_op_stream`: the raw stream; `structured_diff`: generator
/// labels), through the fuzz target itself.
pub fn routes(name: &str) -> Vec<Route> {
    use crate::fuzz_entry::FuzzTarget as F;
    let g = |n: &str| GateTarget::from_name(n).map(Route::Gate);
    match name {
        "decode_any" => [g("decode_any"), g("roundtrip")]
            .into_iter()
            .flatten()
            .collect(),
        "luts" => ["collective_lut", "alu_lut", "dge_lut", "dtype_lut"]
            .into_iter()
            .filter_map(g)
            .collect(),
        "custom_op_stream" => vec![
            Route::Gate(GateTarget::Engine(Target::CustomOpGroup)),
            Route::Fuzz(F::CustomOpStream),
        ],
        "structured_diff" => vec![Route::Fuzz(F::StructuredDiff)],
        n => g(n).into_iter().collect(),
    }
}

/// One corpus folder's replay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CorpusFolder {
    /// Folder name.
    pub name: String,
    /// Routes run (names).
    pub routes: Vec<String>,
    /// Files.
    pub files: u64,
    /// Files with at least one divergence.
    pub diverged: u64,
}

fn replay_corpus(cfg: &GateConfig, run: &mut GateRun) {
    let e = new_engine();
    let all_selected = GateTarget::all().iter().all(|t| cfg.targets.contains(t));
    let mut folders: Vec<String> = match std::fs::read_dir(&cfg.corpus_dir) {
        Ok(rd) => rd
            .filter_map(|x| x.ok())
            .filter(|x| x.path().is_dir())
            .map(|x| x.file_name().to_string_lossy().to_string())
            .filter(|n| n != "vectors" && !n.starts_with('.'))
            .collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            run.notes.push(format!(
                "no corpus folder {} (skipped)",
                cfg.corpus_dir.display()
            ));
            Vec::new()
        }
        Err(err) => {
            run.failures.push(GateFailure::Corpus {
                path: cfg.corpus_dir.display().to_string(),
                error: err.to_string(),
            });
            Vec::new()
        }
    };
    folders.sort();
    for name in folders {
        let rs: Vec<Route> = routes(&name)
            .into_iter()
            .filter(|r| match r {
                Route::Gate(t) => cfg.targets.contains(t),
                Route::Fuzz(_) => all_selected,
            })
            .collect();
        if rs.is_empty() {
            let why = if routes(&name).is_empty() {
                "not a gate or fuzz target"
            } else {
                "target not selected"
            };
            run.notes
                .push(format!("corpus folder {name}/ not replayed ({why})"));
            continue;
        }
        let files = match corpus_files_named(&cfg.corpus_dir, &name) {
            Ok(f) => f,
            Err(f) => {
                run.failures.push(f);
                continue;
            }
        };
        let mut folder = CorpusFolder {
            name: name.clone(),
            routes: rs.iter().map(|r| r.name().to_string()).collect(),
            ..CorpusFolder::default()
        };
        let mut covs: Vec<CovMap> = rs.iter().map(|_| CovMap::default()).collect();
        for p in files {
            let path = p.display().to_string();
            let data = match std::fs::read(&p) {
                Ok(d) => d,
                Err(err) => {
                    run.failures.push(GateFailure::Corpus {
                        path,
                        error: err.to_string(),
                    });
                    continue;
                }
            };
            folder.files += 1;
            let mut any = false;
            for (r, cov) in rs.iter().zip(covs.iter_mut()) {
                let origin = || Origin::Corpus { path: path.clone() };
                let f = catch_unwind(AssertUnwindSafe(|| match r {
                    Route::Gate(t) => run_one(&e, *t, &data, None, origin, cov),
                    Route::Fuzz(ft) => crate::fuzz_entry::check(*ft, &data).err().map(|rep| {
                        crate::triage::Finding {
                            origin: origin(),
                            ..crate::triage::fuzz_finding(ft.name(), &rep.0, &data)
                        }
                    }),
                }));
                if let Some(st) = run
                    .targets
                    .iter_mut()
                    .find(|(t, _)| matches!(r, Route::Gate(g) if g == t))
                    .map(|(_, s)| s)
                {
                    st.corpus_present = true;
                    st.corpus_files += 1;
                    if matches!(f, Ok(Some(_))) {
                        st.corpus_diverged += 1;
                    }
                }
                match f {
                    Ok(Some(f)) => {
                        any = true;
                        run.findings.add(f);
                    }
                    Ok(None) => {}
                    Err(pl) => run.failures.push(GateFailure::InternalPanic {
                        target: r.name().to_string(),
                        index: 0,
                        message: format!("corpus file {path}: {}", panic_text(&*pl)),
                    }),
                }
            }
            folder.diverged += u64::from(any);
        }
        for (r, cov) in rs.iter().zip(covs) {
            if let Some((_, st)) = run
                .targets
                .iter_mut()
                .find(|(t, _)| matches!(r, Route::Gate(g) if g == t))
            {
                merge_cov(&mut st.coverage, cov);
            }
        }
        run.corpus.push(folder);
    }
    for (t, st) in &run.targets {
        if !st.corpus_present {
            run.notes.push(format!("no corpus files for target {t}"));
        }
    }
}

/// The files of `corpus/<name>/`, sorted (recursive).
pub fn corpus_files_named(corpus: &Path, name: &str) -> Result<Vec<PathBuf>, GateFailure> {
    let mut files = Vec::new();
    walk(&corpus.join(name), &mut files)
        .map_err(|(path, error)| GateFailure::Corpus { path, error })?;
    Ok(files)
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "<non-string panic payload>".into())
}

// ---------------------------------------------------------------------------
// Phase 3: generated cases
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Slot {
    ticks: AtomicU64,
    busy: AtomicBool,
    target: AtomicUsize,
    case: AtomicU64,
    done: AtomicU64,
}

#[derive(Default)]
struct Acc {
    ran: Vec<u64>,
    by_kind: Vec<[u64; 3]>,
    diverged: Vec<u64>,
    busy: Vec<Duration>,
    coverage: Vec<BTreeMap<String, [u64; 6]>>,
    findings: Findings,
    failures: Vec<GateFailure>,
}

struct Shared {
    cfg: GateConfig,
    items: Vec<(usize, u64)>,
    planned: Vec<u64>,
    next: AtomicUsize,
    stop: AtomicBool,
    deadline: Option<Instant>,
    slots: Vec<Slot>,
    accs: Vec<Mutex<Acc>>,
}

fn plan_items(cfg: &GateConfig) -> (Vec<(usize, u64)>, Vec<u64>) {
    let planned: Vec<u64> = cfg
        .targets
        .iter()
        .map(|t| cfg.shard.len(cfg.cases_for(*t)))
        .collect();
    let chunks: Vec<u64> = cfg
        .targets
        .iter()
        .zip(&planned)
        .map(|(t, n)| n.div_ceil(t.chunk()))
        .collect();
    let rounds = chunks.iter().copied().max().unwrap_or(0);
    let mut items = Vec::new();
    for k in 0..rounds {
        for (ti, &c) in chunks.iter().enumerate() {
            if k < c {
                items.push((ti, k));
            }
        }
    }
    (items, planned)
}

fn worker(sh: &Shared, w: usize) {
    let e = new_engine();
    let slot = &sh.slots[w];
    let cfg = &sh.cfg;
    let hashes: Vec<u64> = cfg.targets.iter().map(|t| name_hash(t.name())).collect();
    let mut bundle = [0u8; 64];
    let mut buf: Vec<u8> = Vec::with_capacity(2048);
    loop {
        if sh.stop.load(Relaxed) || sh.deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let j = sh.next.fetch_add(1, Relaxed);
        let Some(&(ti, k)) = sh.items.get(j) else {
            break;
        };
        let t = cfg.targets[ti];
        let lo = k * t.chunk();
        let hi = (lo + t.chunk()).min(sh.planned[ti]);
        let mut cov = CovMap::default();
        let mut findings = Findings::default();
        let (mut kinds, mut diverged) = ([0u64; 3], 0u64);
        slot.target.store(ti, Relaxed);
        slot.busy.store(true, Relaxed);
        let t0 = Instant::now();
        let res = catch_unwind(AssertUnwindSafe(|| {
            for m in lo..hi {
                let i = cfg.shard.case_index(m);
                slot.case.store(i, Relaxed);
                slot.ticks.fetch_add(1, Relaxed);
                if ti == 0 && cfg.debug_hang_case == Some(i) {
                    loop {
                        std::thread::sleep(Duration::from_secs(3600));
                    }
                }
                if ti == 0 && cfg.debug_panic_case == Some(i) {
                    panic!("debug_panic_case {i}");
                }
                let kind = CaseKind::of(i);
                kinds[kind.index()] += 1;
                let mut r = case_rng(cfg.seed, hashes[ti], i);
                let origin = || Origin::Generated { index: i, kind };
                let f = if t.is_bundle() {
                    let GateTarget::Engine(et) = t else {
                        unreachable!()
                    };
                    cases::bundle_case(et, &mut r, kind, &mut bundle);
                    run_one(&e, t, &bundle, Some(&bundle), origin, &mut cov)
                } else {
                    cases::bytes_case(t, &mut r, kind, &mut buf);
                    run_one(&e, t, &buf, None, origin, &mut cov)
                };
                if let Some(f) = f {
                    diverged += 1;
                    findings.add(f);
                }
            }
        }));
        slot.busy.store(false, Relaxed);
        let dt = t0.elapsed();
        let mut acc = sh.accs[w].lock().unwrap_or_else(|p| p.into_inner());
        match res {
            Ok(()) => {
                acc.ran[ti] += hi - lo;
                for (a, b) in acc.by_kind[ti].iter_mut().zip(kinds) {
                    *a += b;
                }
                acc.diverged[ti] += diverged;
            }
            Err(p) => {
                acc.failures.push(GateFailure::InternalPanic {
                    target: t.name().to_string(),
                    index: slot.case.load(Relaxed),
                    message: panic_text(&*p),
                });
                sh.stop.store(true, Relaxed);
            }
        }
        acc.busy[ti] += dt;
        merge_cov(&mut acc.coverage[ti], cov);
        acc.findings.merge(findings);
        drop(acc);
        slot.done.fetch_add(hi - lo, Relaxed);
    }
}

/// Progress callback: `(cases done, cases planned)`.
pub type Progress<'a> = &'a dyn Fn(u64, u64);

fn generate(cfg: &GateConfig, start: Instant, run: &mut GateRun, progress: Option<Progress<'_>>) {
    let (items, planned) = plan_items(cfg);
    let n_t = cfg.targets.len();
    let threads = cfg.threads.max(1);
    let acc = || Acc {
        ran: vec![0; n_t],
        by_kind: vec![[0; 3]; n_t],
        diverged: vec![0; n_t],
        busy: vec![Duration::ZERO; n_t],
        coverage: vec![BTreeMap::new(); n_t],
        ..Acc::default()
    };
    let total_items = items.len();
    let total_planned: u64 = planned.iter().sum();
    let sh = Arc::new(Shared {
        cfg: cfg.clone(),
        items,
        planned: planned.clone(),
        next: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        deadline: cfg
            .seconds
            .map(|s| start + Duration::from_secs_f64(s.max(0.0))),
        slots: (0..threads).map(|_| Slot::default()).collect(),
        accs: (0..threads).map(|_| Mutex::new(acc())).collect(),
    });
    let t0 = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|w| {
            let sh = Arc::clone(&sh);
            std::thread::Builder::new()
                .name(format!("gate-{w}"))
                .spawn(move || worker(&sh, w))
        })
        .collect();
    let mut handles: Vec<_> = handles.into_iter().filter_map(Result::ok).collect();
    // Monitor: progress, external stop, per-case timeout.
    let mut last: Vec<(u64, Instant)> = (0..threads).map(|_| (0, Instant::now())).collect();
    let mut stuck: Option<usize> = None;
    loop {
        if handles.iter().all(|h| h.is_finished()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        if cfg.stop.as_ref().is_some_and(|s| s.load(Relaxed)) {
            sh.stop.store(true, Relaxed);
        }
        let done: u64 = sh.slots.iter().map(|s| s.done.load(Relaxed)).sum();
        if let Some(p) = progress {
            p(done, total_planned);
        }
        for (w, s) in sh.slots.iter().enumerate() {
            let ticks = s.ticks.load(Relaxed);
            if ticks != last[w].0 || !s.busy.load(Relaxed) {
                last[w] = (ticks, Instant::now());
            } else if last[w].1.elapsed() >= cfg.case_timeout && stuck.is_none() {
                stuck = Some(w);
                sh.stop.store(true, Relaxed);
                let ti = s.target.load(Relaxed);
                run.failures.push(GateFailure::Timeout {
                    target: cfg.targets[ti].name().to_string(),
                    index: s.case.load(Relaxed),
                    seconds: cfg.case_timeout.as_secs(),
                });
            }
        }
        if let Some(stuck) = stuck {
            // Give the other workers a moment to finish their chunk, then
            // abandon the stuck one (its thread is detached).
            let until = Instant::now() + Duration::from_secs(2);
            while Instant::now() < until
                && handles
                    .iter()
                    .enumerate()
                    .any(|(w, h)| w != stuck && !h.is_finished())
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            break;
        }
    }
    let timed_out = stuck.is_some();
    if !timed_out {
        for h in handles.drain(..) {
            if let Err(p) = h.join() {
                run.failures.push(GateFailure::InternalPanic {
                    target: "-".into(),
                    index: 0,
                    message: panic_text(&*p),
                });
            }
        }
    }
    run.gen_elapsed = t0.elapsed();
    if let Some(p) = progress {
        let done: u64 = sh.slots.iter().map(|s| s.done.load(Relaxed)).sum();
        p(done, total_planned);
    }
    for m in &sh.accs {
        let a = std::mem::take(&mut *m.lock().unwrap_or_else(|p| p.into_inner()));
        for (ti, (_, st)) in run.targets.iter_mut().enumerate() {
            if a.ran.is_empty() {
                break;
            }
            st.ran += a.ran[ti];
            for (x, y) in st.by_kind.iter_mut().zip(a.by_kind[ti]) {
                *x += y;
            }
            st.diverged += a.diverged[ti];
            st.busy += a.busy[ti];
            for (k, v) in &a.coverage[ti] {
                let e = st.coverage.entry(k.clone()).or_insert([0; 6]);
                for (x, y) in e.iter_mut().zip(v) {
                    *x += y;
                }
            }
        }
        run.findings.merge(a.findings);
        run.failures.extend(a.failures);
    }
    for ((_, st), p) in run.targets.iter_mut().zip(&planned) {
        st.planned = *p;
    }
    let processed = sh.next.load(Relaxed).min(total_items);
    run.stopped_early = processed < total_items || timed_out;
    if run.stopped_early && !timed_out {
        let why = if cfg.stop.as_ref().is_some_and(|s| s.load(Relaxed)) {
            run.failures.push(GateFailure::Interrupted);
            "interrupted"
        } else {
            "time budget reached"
        };
        run.notes.push(format!(
            "{why}: ran {} of {} planned generated cases",
            run.generated(),
            total_planned
        ));
    }
    for (t, st) in &run.targets {
        if st.planned > 0 && st.ran == 0 {
            run.failures.push(GateFailure::TargetDidNotRun {
                target: t.name().to_string(),
            });
        }
    }
}

/// Runs the gate. `progress` is called from the monitoring thread.
pub fn run(cfg: &GateConfig, progress: Option<Progress<'_>>) -> GateRun {
    let start = Instant::now();
    let mut run = GateRun {
        seed: cfg.seed,
        shard: cfg.shard,
        cases: cfg.cases,
        seconds: cfg.seconds,
        threads: cfg.threads.max(1),
        targets: cfg
            .targets
            .iter()
            .map(|t| (*t, TargetStats::default()))
            .collect(),
        ..GateRun::default()
    };
    replay_corpus(cfg, &mut run);
    match vectors::check_dir(&cfg.corpus_dir.join("vectors")) {
        Ok((stats, findings)) => {
            if stats.is_empty() {
                run.notes.push(format!(
                    "no vector files under {}/vectors",
                    cfg.corpus_dir.display()
                ));
            }
            run.vector_files = stats;
            for f in findings {
                run.findings.add(f);
            }
        }
        Err(e) => run.failures.push(GateFailure::Vectors(e.to_string())),
    }
    generate(cfg, start, &mut run, progress);
    run.failures.sort();
    run.failures.dedup();
    run.elapsed = start.elapsed();
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn shards_partition_the_case_space() {
        for n in [0u64, 1, 2, 7, 100, 1001] {
            for count in 1..=5u64 {
                let mut union = BTreeSet::new();
                let mut total = 0;
                for index in 0..count {
                    let s = Shard { index, count };
                    let ids: Vec<u64> = s.case_ids(n).collect();
                    assert_eq!(ids.len() as u64, s.len(n));
                    total += ids.len();
                    union.extend(ids);
                }
                assert_eq!(total, union.len(), "overlap n={n} count={count}");
                assert_eq!(union, (0..n).collect(), "n={n} count={count}");
            }
        }
    }

    #[test]
    fn shard_parse() {
        assert_eq!("1/4".parse::<Shard>(), Ok(Shard { index: 1, count: 4 }));
        for bad in ["4/4", "1/0", "x", "1-2", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
