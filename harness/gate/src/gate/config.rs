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
    pub index: u64,
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
        n.saturating_sub(self.index).div_ceil(self.count)
    }

    #[inline]
    pub fn case_index(self, m: u64) -> u64 {
        self.index + m * self.count
    }

    pub fn case_ids(self, n: u64) -> impl Iterator<Item = u64> {
        (0..self.len(n)).map(move |m| self.case_index(m))
    }
}

#[derive(Clone, Debug)]
pub struct GateConfig {
    /// Generated cases per target (before sharding).
    pub cases: u64,
    /// Caps on `sync_handshake` (~100x a bundle case) and `collective_lowering` (~15x) cases.
    pub sync_cases: u64,
    pub lowering_cases: u64,
    pub seconds: Option<f64>,
    pub seed: u64,
    pub shard: Shard,
    pub targets: Vec<Target>,
    /// Subjects under test, judged against core (besides core vs oracle).
    pub subjects: Vec<SubjectSpec>,
    /// `--subject-cases`: subjects are judged on generated cases below it (per target) only.
    pub subject_cases: Option<u64>,
    /// Oldest first (empty = v2): case `i` runs under `arches[i % len]`, corpus and vectors
    /// under each (SPEC §0).
    pub arches: Vec<Generation>,
    pub corpus_dir: PathBuf,
    pub no_corpus: bool,
    pub threads: usize,
    /// A case making no progress this long is a timeout failure.
    pub case_timeout: Duration,
    /// Set from outside (Ctrl-C) to stop early.
    pub stop: Option<Arc<AtomicBool>>,
    /// A complete, unsharded run of every gate target with at least this many cases must hit
    /// every declared [`crate::reach`] class ([`super::GateFailure::Unreached`] otherwise).
    pub reach_required_from: u64,
    /// Test hooks on case `i` of the first target: it hangs; it panics outside the judge;
    /// core panics inside its call (a subject bug).
    #[doc(hidden)]
    pub debug_hang_case: Option<u64>,
    #[doc(hidden)]
    pub debug_panic_case: Option<u64>,
    #[doc(hidden)]
    pub debug_subject_panic_case: Option<u64>,
}

pub const DEFAULT_CASES: u64 = 5_000_000;
/// The 10^6 programs the sync issue asks the gate to check.
pub const DEFAULT_SYNC_CASES: u64 = 1_000_000;
/// About 3 s of one core at 35k cases/s (measured idle).
pub const DEFAULT_LOWERING_CASES: u64 = 100_000;
/// A safety net against a hang, not a schedule: well beyond the default run's four minutes
/// on a host loaded 4x (measured), so a default CI run stays complete and deterministic.
pub const DEFAULT_SECONDS: f64 = 1200.0;
pub const DEFAULT_SEED: u64 = 0x7BC0_4F0E;

impl GateConfig {
    /// True once the run was asked to stop ([`GateConfig::stop`] or a signal).
    pub fn interrupted(&self) -> bool {
        crate::interrupt::stop_requested()
            || self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// [`GateConfig::arches`]; v2 when empty.
    pub fn arches(&self) -> Vec<Generation> {
        if self.arches.is_empty() {
            vec![Generation::default()]
        } else {
            self.arches.clone()
        }
    }

    #[inline]
    pub fn arch_index(&self, i: u64) -> usize {
        match self.arches.len() as u64 {
            // One generation (`--arch`): no division on every case.
            0 | 1 => 0,
            n => (i % n) as usize,
        }
    }

    /// True when generated case `i` goes to the subjects under test.
    #[inline]
    pub fn judges(&self, i: u64) -> bool {
        self.subject_cases.is_none_or(|cap| i < cap)
    }

    /// Cases per work chunk of `target`: the registry's, raised with an external subject to
    /// one shared-memory hand-off per generation (the chunk only groups work).
    pub fn chunk_of(&self, target: Target) -> u64 {
        let spec = target.spec().chunk;
        let external = self
            .subjects
            .iter()
            .any(|s| matches!(s, SubjectSpec::Lib(_) | SubjectSpec::Cmd(_)));
        if external && kinds::of(target).asks_case_inputs(target) {
            // The request area holds about 256 of the largest streams or modules.
            spec.max(256 * self.arches().len() as u64)
        } else if external && target.is_bundle_or_lut() {
            let per_arch = crate::external::shm::CHUNK as u64;
            spec.max(per_arch.saturating_mul(self.arches().len() as u64))
        } else {
            spec
        }
    }

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
