//! `run.json`: the machine-readable metadata of one gate report folder
//! (verdict, seed, case counts, tool version, shard `i/N`, per-target
//! counts, corpus and vector replays, failures). `tpbconform report merge`
//! reads it to check that shard folders belong to one run
//! ([`crate::report_merge`]); CI can read it instead of parsing summary.md.
//!
//! Contract: a pure function of the [`GateRun`] with no clock-dependent field,
//! so two runs of the same seed write the same `run.json` (threads, timing
//! and the budget are left out on purpose). Layout: `reports/README.md`.

use crate::gate::GateRun;
use serde::{Deserialize, Serialize};

/// File name inside a report folder.
pub const FILE: &str = "run.json";

/// Layout version; bumped on any incompatible change.
pub const FORMAT: u32 = 1;

/// Verdict of a complete run with no finding and no failure.
pub const PASS: &str = "PASS";
/// Verdict of a run with a divergence or a failure.
pub const FAIL: &str = "FAIL";
/// Verdict of a run the budget or a signal cut short, with nothing found.
pub const INCOMPLETE: &str = "INCOMPLETE";

/// The contents of `run.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMeta {
    /// [`FORMAT`].
    pub format: u32,
    /// `tpbconform`.
    pub tool: String,
    /// The tool's package version.
    pub version: String,
    /// [`PASS`], [`FAIL`] or [`INCOMPLETE`].
    pub verdict: String,
    /// False when the budget or a stop cut the generated phase short.
    pub complete: bool,
    /// True when some failure is bad input (the gate exits 2).
    pub bad_input: bool,
    /// Seed, `0x` hex (a JSON number cannot hold every u64 exactly).
    pub seed: String,
    /// Requested generated cases per target, before sharding.
    pub cases: u64,
    /// This folder's shard.
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
    /// Divergent cases, duplicates included.
    pub divergent_cases: u64,
    /// Failures other than divergences, one line each.
    pub failures: Vec<String>,
    /// Notes (missing folders, budget stop).
    pub notes: Vec<String>,
    /// Declared value classes ([`crate::reach`]) no generated case of the
    /// run hit, as `field: class` (the summary's "Unexercised classes").
    #[serde(default)]
    pub unexercised: Vec<String>,
    /// Per generation of the run (`v2` … `v5`), its share of the generated
    /// cases.
    #[serde(default)]
    pub generations: Vec<GenerationMeta>,
}

/// One generation's share of the generated cases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationMeta {
    /// `v2` … `v5`.
    pub name: String,
    /// Generated cases run under it.
    pub ran: u64,
    /// Of those, cases with a divergence.
    pub diverged: u64,
}

/// Shard `index/count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardMeta {
    /// 0-based index.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

/// One target's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetMeta {
    /// Target name.
    pub name: String,
    /// Generated cases planned for this shard.
    pub planned: u64,
    /// Generated cases run.
    pub ran: u64,
    /// Generated valid cases.
    pub valid: u64,
    /// Generated near-valid cases.
    pub near_valid: u64,
    /// Generated raw cases.
    pub raw: u64,
    /// Generated cases that diverged.
    pub diverged: u64,
    /// Corpus files replayed through this target.
    pub corpus_files: u64,
    /// Corpus files that diverged.
    pub corpus_diverged: u64,
}

/// One corpus folder's replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusMeta {
    /// Folder name.
    pub name: String,
    /// Routes (gate or fuzz target names).
    pub routes: Vec<String>,
    /// Files replayed.
    pub files: u64,
    /// Files that diverged.
    pub diverged: u64,
}

/// One vector file's check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorMeta {
    /// Path.
    pub path: String,
    /// Vectors checked.
    pub vectors: u64,
    /// Vectors failed.
    pub failed: u64,
}

/// The verdict of a run: FAIL on any finding or failure, else INCOMPLETE when
/// cut short, else PASS.
pub fn verdict(run: &GateRun) -> &'static str {
    if !run.passed() {
        FAIL
    } else if run.stopped_early {
        INCOMPLETE
    } else {
        PASS
    }
}

impl RunMeta {
    /// The metadata of a gate run.
    pub fn of(run: &GateRun) -> RunMeta {
        RunMeta {
            format: FORMAT,
            tool: "tpbconform".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            verdict: verdict(run).into(),
            complete: !run.stopped_early,
            bad_input: run.bad_input(),
            seed: format!("{:#x}", run.seed),
            cases: run.cases,
            shard: ShardMeta {
                index: run.shard.index,
                count: run.shard.count,
            },
            merged_from: None,
            generations: run
                .arches
                .iter()
                .map(|(a, st)| GenerationMeta {
                    name: a.name().to_string(),
                    ran: st.ran,
                    diverged: st.diverged,
                })
                .collect(),
            targets: run
                .targets
                .iter()
                .map(|(t, s)| TargetMeta {
                    name: t.name().to_string(),
                    planned: s.planned,
                    ran: s.ran,
                    valid: s.by_kind[0],
                    near_valid: s.by_kind[1],
                    raw: s.by_kind[2],
                    diverged: s.diverged,
                    corpus_files: s.corpus_files,
                    corpus_diverged: s.corpus_diverged,
                })
                .collect(),
            corpus: run
                .corpus
                .iter()
                .map(|c| CorpusMeta {
                    name: c.name.clone(),
                    routes: c.routes.clone(),
                    files: c.files,
                    diverged: c.diverged,
                })
                .collect(),
            vector_files: run
                .vector_files
                .iter()
                .map(|v| VectorMeta {
                    path: v.path.clone(),
                    vectors: v.vectors,
                    failed: v.failed,
                })
                .collect(),
            distinct_divergences: run.findings.distinct() as u64,
            divergent_cases: run.findings.total(),
            failures: run.failures.iter().map(ToString::to_string).collect(),
            notes: run.notes.clone(),
            unexercised: run.reach.unhit(),
        }
    }

    /// Pretty JSON plus a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// `run.json` of a gate run.
pub fn render(run: &GateRun) -> String {
    RunMeta::of(run).to_json()
}
