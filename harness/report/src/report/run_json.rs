//! `run.json`: the facts of one report folder and its [`Integrity`] record. Every field but
//! `machine` and `integrity` is free of the clock and the machine; meanings: `reports/README.md`.

use super::integrity::Integrity;
use crate::gate::vectors::FileStats;
use crate::gate::{ArchStats, CorpusFolder, Shard, TargetStats};
use std::collections::BTreeMap;

pub const FILE: &str = "run.json";

/// Layout version, bumped on any incompatible change (5: a subject's `failures`).
pub const FORMAT: u32 = 5;

pub const PASS: &str = "PASS";
pub const FAIL: &str = "FAIL";
/// Cut short by the budget or a signal, with nothing found.
pub const INCOMPLETE: &str = "INCOMPLETE";

wire! {
    #[derive(Default)]
    pub struct RunMeta {
        pub format: u32,
        pub tool: String,
        pub version: String,
        pub verdict: String,
        pub complete: bool,
        pub bad_input: bool,
        pub seed: String,
        pub cases: u64,
        pub shard: Shard,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub merged_from: Option<u64>,
        pub targets: Vec<TargetStats>,
        pub corpus: Vec<CorpusFolder>,
        pub vector_files: Vec<FileStats>,
        pub distinct_divergences: u64,
        pub divergent_cases: u64,
        pub failures: Vec<String>,
        pub failure_targets: Vec<String>,
        pub notes: Vec<String>,
        pub unexercised: Vec<String>,
        pub generations: Vec<ArchStats>,
        pub subjects: Vec<SubjectMeta>,
        pub subject_cases_cap: Option<u64>,
        pub unsupported: Vec<UnsupportedMeta>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub cohorts: Vec<CohortMeta>,
        pub reach: BTreeMap<String, Vec<ReachClass>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub machine: Option<MachineMeta>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub integrity: Option<Integrity>,
    }

    /// The one group two reports of one seed may differ in (besides `integrity`).
    #[derive(Default)]
    pub struct MachineMeta {
        pub threads: u64,
        pub elapsed_ms: u64,
        pub subjects: Vec<SubjectMachineMeta>,
    }

    #[derive(Default)]
    pub struct SubjectMachineMeta {
        pub spec: String,
        pub calls: u64,
        pub answers_received: u64,
        pub answers_compared: u64,
        pub subject_ms: u64,
        pub cases_per_s: u64,
        pub restarts: u64,
    }

    pub struct SubjectMeta {
        pub spec: String,
        pub capabilities: String,
        pub targets: Vec<SubjectTargetMeta>,
        pub vector_checks: u64,
        pub generations: Vec<String>,
        pub cases: u64,
        #[serde(default, skip_serializing_if = "is_zero")]
        pub failures: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub given_up: Vec<GivenUpMeta>,
    }

    /// One operation a subject under test was given up on, in one generation.
    pub struct GivenUpMeta {
        pub generation: String,
        pub operation: String,
        pub cases_not_run: u64,
        pub reason: String,
    }

    pub struct SubjectTargetMeta {
        pub name: String,
        pub corpus: u64,
        pub generated: u64,
    }

    /// Divergent inputs whose implementations split one way.
    pub struct CohortMeta {
        pub pattern: String,
        pub inputs: u64,
    }

    /// The subjects under test one target is not supported by.
    pub struct UnsupportedMeta {
        pub target: String,
        pub subjects: Vec<String>,
    }

    pub struct ReachClass {
        pub class: String,
        pub hits: u64,
    }
}

impl SubjectTargetMeta {
    pub fn cases(&self) -> u64 {
        self.corpus.saturating_add(self.generated)
    }
}

impl SubjectMeta {
    pub fn cases_of_parts(&self) -> u64 {
        self.targets
            .iter()
            .fold(self.vector_checks, |a, t| a.saturating_add(t.cases()))
    }
}

impl RunMeta {
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// `run.json` without its integrity record (added once the other files exist).
pub fn render(meta: &RunMeta) -> String {
    let mut meta = meta.clone();
    meta.integrity = None;
    meta.to_json()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
