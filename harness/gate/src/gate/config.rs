//! Gate parameters: [`GateConfig`], [`Shard`] and their defaults.

use crate::generation::Generation;
use crate::kinds::{self, CaseBudget};
use crate::subjects::SubjectSpec;
use crate::targets::Target;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A slice `index/count` of the case space: case indices `≡ index (mod count)`; `shard` of
/// `run.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
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
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("bad shard `{s}`: expected i/n with integers 0 <= i < n (e.g. 0/4)");
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

#[derive(Clone, Debug)]
pub struct GateConfig {
    /// Generated cases per target (before sharding).
    pub cases: u64,
    /// Cap on `sync_handshake` cases (each is a whole program simulated on
    /// every engine, ~100x a bundle case): it runs `min(cases, sync_cases)`.
    pub sync_cases: u64,
    /// Cap on `collective_lowering` cases (each lowers a whole module twice
    /// plus the property re-lowerings, ~15x a validator case).
    pub lowering_cases: u64,
    /// Time budget for the whole run; `None` = no budget.
    pub seconds: Option<f64>,
    pub seed: u64,
    pub shard: Shard,
    /// Targets, in report order (gate targets of the registry).
    pub targets: Vec<Target>,
    /// Subjects under test, judged against core (besides core vs oracle).
    pub subjects: Vec<SubjectSpec>,
    /// `None` (the default): the subjects under test are judged on every
    /// generated case of every target they support. `Some(n)`
    /// (`--subject-cases`, an opt-in cap): on the generated cases with an
    /// index below `n` (per target); the rest are core vs oracle only.
    pub subject_cases: Option<u64>,
    /// The generations the run covers, oldest first (empty = v2): generated
    /// case `i` runs under `arches[i % arches.len()]`; the corpus and the
    /// vectors run under each. Default: every generation (SPEC §0).
    pub arches: Vec<Generation>,
    /// The corpus root (`corpus/`).
    pub corpus_dir: PathBuf,
    /// Skip the corpus and vector phases (`--no-corpus`). Without it a
    /// corpus that fails [`super::preflight::check_corpus`] is a bad-input
    /// failure.
    pub no_corpus: bool,
    /// Worker threads (≥ 1).
    pub threads: usize,
    /// A case making no progress this long is a timeout failure.
    pub case_timeout: Duration,
    /// Show a progress bar on stderr (only honoured on a terminal by the CLI).
    pub progress: bool,
    /// Set from outside (Ctrl-C) to stop early.
    pub stop: Option<Arc<AtomicBool>>,
    /// A complete, unsharded run of every gate target with at least this
    /// many generated cases per target must hit every declared value class
    /// of [`crate::reach`] ([`super::GateFailure::Unreached`] otherwise).
    /// Default [`DEFAULT_CASES`]: the full default run.
    pub reach_required_from: u64,
    /// Test hook: generated case with this index of the first target hangs.
    #[doc(hidden)]
    pub debug_hang_case: Option<u64>,
    /// Test hook: generated case with this index of the first target panics
    /// outside the judge.
    #[doc(hidden)]
    pub debug_panic_case: Option<u64>,
    /// Fault injection: on generated case with this index of the first
    /// target, the core subject panics inside its call (a subject bug).
    #[doc(hidden)]
    pub debug_subject_panic_case: Option<u64>,
}

/// Default generated cases per target.
pub const DEFAULT_CASES: u64 = 5_000_000;
/// Default cap on `sync_handshake` cases: the 10^6 programs the sync issue
/// asks the gate to check.
pub const DEFAULT_SYNC_CASES: u64 = 1_000_000;
/// Default cap on `collective_lowering` cases (about 3 s of one core at 35k cases/s, measured idle).
pub const DEFAULT_LOWERING_CASES: u64 = 100_000;
/// Default time budget in seconds: a safety net against a hang, not a
/// schedule. The default case counts finish in about a minute on an idle
/// 2-core machine and in about four on one loaded 4x over (measured); the
/// budget is well beyond both, so a default run on a busy CI host is still
/// complete (never INCOMPLETE) and its report deterministic.
pub const DEFAULT_SECONDS: f64 = 1200.0;
pub const DEFAULT_SEED: u64 = 0x7BC0_4F0E;

impl GateConfig {
    /// True once the run was asked to stop ([`GateConfig::stop`], or a
    /// signal: [`crate::interrupt::stop_requested`]).
    pub fn interrupted(&self) -> bool {
        crate::interrupt::stop_requested()
            || self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The generations of the run ([`GateConfig::arches`]; v2 when empty).
    pub fn arches(&self) -> Vec<Generation> {
        if self.arches.is_empty() {
            vec![Generation::default()]
        } else {
            self.arches.clone()
        }
    }

    /// The index in [`GateConfig::arches`] of generated case `i`'s generation.
    #[inline]
    pub fn arch_index(&self, i: u64) -> usize {
        match self.arches.len() as u64 {
            // One generation (`--arch`): no division on every case.
            0 | 1 => 0,
            n => (i % n) as usize,
        }
    }

    /// True when generated case `i` (of any target) goes to the subjects
    /// under test: always, unless capped by [`GateConfig::subject_cases`].
    #[inline]
    pub fn judges(&self, i: u64) -> bool {
        self.subject_cases.is_none_or(|cap| i < cap)
    }

    /// Cases per work chunk of `target`: the registry's
    /// [`crate::targets::TargetSpec::chunk`], raised to one shared-memory
    /// hand-off ([`crate::external::shm::CHUNK`]) for the bundle and LUT
    /// targets when an external subject is under test (one per generation
    /// of the run), so each chunk is one hand-off of thousands of cases per
    /// subject instance (the chunk only groups work: the same case indices
    /// run either way).
    pub fn chunk_of(&self, target: Target) -> u64 {
        let spec = target.spec().chunk;
        let external = self
            .subjects
            .iter()
            .any(|s| matches!(s, SubjectSpec::Lib(_) | SubjectSpec::Cmd(_)));
        if external && kinds::of(target).asks_case_inputs(target) {
            // Streams and modules: one hand-off of 256 per generation
            // (the request area holds about that many of the largest).
            spec.max(256 * self.arches().len() as u64)
        } else if external && target.is_bundle_or_lut() {
            // A chunk's cases split over the generations (one subject
            // instance each), so each instance still gets a full hand-off.
            let per_arch = crate::external::shm::CHUNK as u64;
            spec.max(per_arch.saturating_mul(self.arches().len() as u64))
        } else {
            spec
        }
    }

    /// Generated cases (before sharding) for `target`.
    pub fn cases_for(&self, target: Target) -> u64 {
        match kinds::of(target).case_budget() {
            CaseBudget::Cases => self.cases,
            CaseBudget::SyncCases => self.cases.min(self.sync_cases),
            CaseBudget::LoweringCases => self.cases.min(self.lowering_cases),
            CaseBudget::AtMost(n) => self.cases.min(n),
        }
    }
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            cases: DEFAULT_CASES,
            sync_cases: DEFAULT_SYNC_CASES,
            lowering_cases: DEFAULT_LOWERING_CASES,
            seconds: Some(DEFAULT_SECONDS),
            seed: DEFAULT_SEED,
            shard: Shard::default(),
            targets: Target::gate_targets(),
            subjects: Vec::new(),
            subject_cases: None,
            arches: Generation::ALL.to_vec(),
            corpus_dir: PathBuf::from("corpus"),
            no_corpus: false,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            case_timeout: Duration::from_secs(30),
            progress: false,
            stop: None,
            reach_required_from: DEFAULT_CASES,
            debug_hang_case: None,
            debug_panic_case: None,
            debug_subject_panic_case: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn default_gate_cases_per_target() {
        // The default case counts of the gate, per target (kept by
        // `cases_for` reading each kind's budget).
        let cfg = GateConfig::default();
        for t in Target::gate_targets() {
            let want = match t.name() {
                "sync_handshake" => 1_000_000,
                "collective_lowering" | "stream_lint" | "engine_sync" => 100_000,
                _ => 5_000_000,
            };
            assert_eq!(cfg.cases_for(t), want, "{t}");
        }
        let small = GateConfig {
            cases: 50,
            ..GateConfig::default()
        };
        assert!(Target::gate_targets()
            .iter()
            .all(|&t| small.cases_for(t) == 50));
    }

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
