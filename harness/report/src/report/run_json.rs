//! `run.json`: the machine-readable facts of one report folder (verdict,
//! seed, case counts, tool version, shard `i/N`, per-target counts and
//! coverage, generations, corpus and vector replays, subjects, reach,
//! failures) and the folder's [`Integrity`] record. `tpbconform report merge`
//! reads it back ([`super::merge`]); CI can read it instead of parsing
//! summary.md. Its renderer is [`render`].
//!
//! Contract: every field but `machine` and `integrity` is a pure function
//! of the run with no clock- or machine-dependent value, so two runs of the
//! same seed write the same facts once those two are set aside: `machine`
//! ([`MachineMeta`]) holds what the clock, the thread count and the load
//! decide (threads, wall time, each external subject's calls, answers
//! received and compared, time in the subject, rate, restarts);
//! `integrity` digests the other files, whose `[timing]` lines differ.
//! Layout: `reports/README.md`.

use super::integrity::Integrity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// File name inside a report folder.
pub const FILE: &str = "run.json";

/// Layout version; bumped on any incompatible change (2: coverage, reach,
/// subjects and the integrity record; 3: per-subject coverage, the
/// optional `--subject-cases` cap, cohorts; 4: the `machine` group holds
/// the subjects' calls and answers, a subject's `given_up` operations; 5: a subject's
/// `failures`).
pub const FORMAT: u32 = 5;

/// Verdict of a complete run with no finding and no failure.
pub const PASS: &str = "PASS";
/// Verdict of a run with a divergence or a failure.
pub const FAIL: &str = "FAIL";
/// Verdict of a run the budget or a signal cut short, with nothing found.
pub const INCOMPLETE: &str = "INCOMPLETE";

/// The contents of `run.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunMeta {
    pub format: u32,
    pub tool: String,
    pub version: String,
    pub verdict: String,
    /// False when the budget or a stop cut the generated phase short.
    pub complete: bool,
    /// True when some failure is bad input (the gate exits 2).
    pub bad_input: bool,
    /// Seed, `0x` hex (a JSON number cannot hold every u64 exactly).
    pub seed: String,
    /// Requested generated cases per target, before sharding.
    pub cases: u64,
    pub shard: ShardMeta,
    /// Number of shard folders merged into this one (absent for a gate run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<u64>,
    /// Per target, in report order.
    pub targets: Vec<TargetMeta>,
    /// Corpus folders replayed (every shard replays the whole corpus).
    pub corpus: Vec<CorpusMeta>,
    /// Vector files checked (every shard checks all of them).
    pub vector_files: Vec<VectorMeta>,
    /// Distinct divergence signatures (lines of `divergences.jsonl`).
    pub distinct_divergences: u64,
    pub divergent_cases: u64,
    /// Failures other than divergences, one line each.
    pub failures: Vec<String>,
    /// Per failure (same order), the junit testcase it belongs to: a target,
    /// `reach`, `vectors`, or a merged report's `shard i/N`.
    pub failure_targets: Vec<String>,
    /// Notes (missing folders, budget stop).
    pub notes: Vec<String>,
    /// Declared value classes ([`crate::reach`]) no generated case of the
    /// run hit, as `field: class` (the summary's "Unexercised classes").
    pub unexercised: Vec<String>,
    /// Per generation of the run (`v2` … `v5`), its share of the generated
    /// cases.
    pub generations: Vec<GenerationMeta>,
    /// Subjects under test (besides core and the oracle).
    pub subjects: Vec<SubjectMeta>,
    /// The `--subject-cases` cap on generated cases per target the subjects
    /// under test were judged on; `null`: every generated case.
    pub subject_cases_cap: Option<u64>,
    /// Per target, the subjects under test that do not support it.
    pub unsupported: Vec<UnsupportedMeta>,
    /// With two or more subjects under test: divergent inputs (one per input
    /// and generation) per cohort pattern ([`crate::judge::cohort`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cohorts: Vec<CohortMeta>,
    /// Value classes per field ([`crate::reach`]) with their hit counts;
    /// empty when no sampled target ran.
    pub reach: BTreeMap<String, Vec<ReachClass>>,
    /// Clock- and machine-dependent values (absent only in a report
    /// written before it existed): set them aside, and two reports of one
    /// seed compare equal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineMeta>,
    /// Digests of the folder's other files (absent while rendering).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<Integrity>,
}

/// What the clock, the thread count and the machine's load decide: the
/// one group of `run.json` two reports of one seed may differ in (besides
/// `integrity`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineMeta {
    /// Worker threads (a merged report: the shards' summed).
    pub threads: u64,
    /// Wall time of the run, milliseconds (merged: the shards' summed).
    pub elapsed_ms: u64,
    /// Per external subject, in `subjects` order.
    pub subjects: Vec<SubjectMachineMeta>,
}

/// One external subject's machine-dependent counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubjectMachineMeta {
    pub spec: String,
    /// Calls made (requests handed to it; a restart re-sends some; a
    /// roundtrip case makes a decode and up to two encodes).
    pub calls: u64,
    /// Answers received, one per case (every case's but those whose call
    /// crashed, hung, was never sent or whose answer the harness lost; a
    /// roundtrip case's encodes are part of its answer).
    pub answers_received: u64,
    /// Answers the judge compared with core's (one per case likewise).
    pub answers_compared: u64,
    /// Time spent in the subject, milliseconds.
    pub subject_ms: u64,
    /// Cases judged per second of that time (0: none measured).
    pub cases_per_s: u64,
    pub restarts: u64,
}

/// One subject under test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubjectMeta {
    pub spec: String,
    pub capabilities: String,
    /// Every selected target it supports, in report order, with the cases
    /// it was judged on there (every generation).
    pub targets: Vec<SubjectTargetMeta>,
    /// Vector checks it was judged on (every shard checks every vector).
    pub vector_checks: u64,
    /// The generations it was judged under (`v2` … `v5`, run order).
    pub generations: Vec<String>,
    /// Every case it was judged on: the targets' corpus files and generated
    /// cases plus the vector checks.
    pub cases: u64,
    /// The entries of `failures` about it (not opened, judged on nothing, given up on).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failures: u64,
    /// The operations it was given up on (too many faults in a row), per
    /// generation: the cases needing them were not run, its other
    /// operations were judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given_up: Vec<GivenUpMeta>,
}

/// One operation a subject under test was given up on, in one generation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GivenUpMeta {
    pub generation: String,
    /// `validate_header`, `lut:dtype`, … (every operation when the whole
    /// subject was given up: one entry each).
    pub operation: String,
    /// Cases of targets needing it that were not run because of it (with
    /// several threads: after the first thread gave it up).
    pub cases_not_run: u64,
    /// Why (the first faulting inputs).
    pub reason: String,
}

/// One target a subject under test supports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubjectTargetMeta {
    pub name: String,
    /// Corpus files it was judged on, each generation counted (every shard
    /// replays the whole corpus).
    pub corpus: u64,
    /// Generated cases it was judged on.
    pub generated: u64,
}

impl SubjectTargetMeta {
    /// Corpus and generated cases.
    pub fn cases(&self) -> u64 {
        self.corpus.saturating_add(self.generated)
    }
}

impl SubjectMeta {
    /// [`SubjectMeta::cases`] as its parts add up.
    pub fn cases_of_parts(&self) -> u64 {
        self.targets
            .iter()
            .fold(self.vector_checks, |a, t| a.saturating_add(t.cases()))
    }
}

/// Divergent inputs whose implementations split one way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CohortMeta {
    /// `{core, oracle, lib:a} vs {cmd:b}` ([`crate::judge::cohort::pattern`]).
    pub pattern: String,
    /// Inputs (one per input and generation).
    pub inputs: u64,
}

/// The subjects under test one target is not supported by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnsupportedMeta {
    pub target: String,
    pub subjects: Vec<String>,
}

/// One value class of a field and how many sampled cases hit it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachClass {
    pub class: String,
    /// Sampled cases that hit it.
    pub hits: u64,
}

/// One generation's share of the generated cases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenerationMeta {
    pub name: String,
    /// Generated cases run under it.
    pub ran: u64,
    /// Of those, cases with a divergence.
    pub diverged: u64,
}

/// Shard `index/count`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardMeta {
    pub index: u64,
    pub count: u64,
}

/// One target's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetMeta {
    pub name: String,
    /// Generated cases planned for this shard.
    pub planned: u64,
    pub ran: u64,
    pub valid: u64,
    pub near_valid: u64,
    pub raw: u64,
    pub diverged: u64,
    /// Corpus files replayed through this target.
    pub corpus_files: u64,
    pub corpus_diverged: u64,
    /// True when some corpus folder was replayed through this target.
    pub corpus_present: bool,
    /// Coverage: core's verdict key → counts per
    /// [`crate::gate::OUTCOMES`] column (corpus and generated cases).
    pub coverage: BTreeMap<String, [u64; 6]>,
}

/// One corpus folder's replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusMeta {
    pub name: String,
    /// Routes (gate or fuzz target names).
    pub routes: Vec<String>,
    pub files: u64,
    pub diverged: u64,
}

/// One vector file's check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VectorMeta {
    pub path: String,
    pub vectors: u64,
    pub failed: u64,
    /// Vectors naming none of the run's generations.
    pub other_generations: u64,
}

impl RunMeta {
    /// Pretty JSON plus a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// `run.json` of a report's facts, without their integrity record (the
/// writer adds it once the other files exist, [`super::integrity::seal`]).
pub fn render(meta: &RunMeta) -> String {
    let mut meta = meta.clone();
    meta.integrity = None;
    meta.to_json()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
