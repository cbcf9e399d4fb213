//! [`ReportModel`]: everything a report says, built once from a gate run or from verified
//! shard folders ([`super::merge`]); [`DivergenceRecord`] is one line of `divergences.jsonl`.

use super::format::{each, grouped};
use super::run_json::{
    self, CohortMeta, GivenUpMeta, MachineMeta, ReachClass, RunMeta, SubjectMachineMeta,
    SubjectMeta, SubjectTargetMeta, UnsupportedMeta, FAIL, INCOMPLETE, PASS,
};
use crate::findings::{CaseKind, DedupKey, Origin};
use crate::gate::{ArchStats, GateConfig, GateFailure, GateRun};
use crate::generation::Generation;
use crate::input::{hex_nibbles, pack_nibbles};
use crate::subjects::{hex, Capabilities};
use crate::targets::Target;
use crate::triage::{divergence_file, replay_command, replay_file_command, Triaged};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The `junit.xml` testcase of the value-class reach ([`GateFailure::Unreached`]).
pub const REACH_CASE: &str = "reach";

/// The `junit.xml` testcase (and record target) of the vector files.
pub const VECTORS_CASE: &str = crate::findings::VECTORS;

/// The junit testcase of a failure about a subject under test as a whole.
pub const SUBJECTS_CASE: &str = "subjects";

/// One report: `run.json`'s facts, the divergences, and what only a live run knows.
#[derive(Clone, Debug, Default)]
pub struct ReportModel<'r> {
    /// `integrity` is filled by the writer.
    pub meta: RunMeta,
    pub divergences: Vec<DivergenceRecord>,
    /// The shard folders a merged report was made from (empty for a gate run).
    pub shards: Vec<ShardRef>,
    /// Clock-dependent and process facts of a gate run (absent when merged).
    pub live: Option<Live<'r>>,
}

/// One shard folder of a merged report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardRef {
    pub dir: PathBuf,
    pub shard: String,
    /// As recomputed by the merge.
    pub verdict: String,
}

/// A live gate run and when its report was written (UTC).
#[derive(Clone, Debug)]
pub struct Live<'r> {
    pub cfg: &'r GateConfig,
    pub run: &'r GateRun,
    pub timestamp: String,
}

wire! {
    /// One line of `divergences.jsonl`: one distinct divergence (fields: `reports/README.md`).
    pub struct DivergenceRecord {
        pub number: u64,
        pub target: String,
        pub class: crate::judge::Class,
        pub signature: crate::judge::Signature,
        pub count: u64,
        pub origin: OriginRecord,
        pub arch: String,
        pub input: String,
        pub minimized: String,
        pub replay: String,
        pub replay_file: String,
        pub file: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub replay_target: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub replay_subjects: Vec<String>,
        pub left_name: String,
        pub right_name: String,
        pub left: String,
        pub right: String,
        #[serde(default, skip_serializing_if = "crate::judge::Answers::is_empty")]
        pub answers: crate::judge::Answers,
        pub left_dump: String,
        pub right_dump: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub shards: Vec<String>,
        /// Who gave which answer, with two or more subjects ([`crate::judge::cohort`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub cohorts: Vec<crate::judge::cohort::Cohort>,
        /// The divergence this one is probably caused by (triage's folding); `None`: a root cause.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub caused_by: Option<u64>,
        /// The bytes whose single change flips the left subject's answer
        /// ([`crate::triage::asked_blame`]); `None`: not asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub subject_blame: Option<Vec<u64>>,
    }
}

/// Where a divergence came from (`origin` of a record), ordered like
/// [`crate::findings::Origin`]: corpus < vector < generated, then path, line, case index (a
/// case index has one kind, [`CaseKind::of`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum OriginRecord {
    Corpus {
        corpus: String,
    },
    Vector {
        vector: String,
        line: u64,
        /// The expectation written in the file.
        expected: String,
    },
    Generated {
        /// Case index (global over the shards).
        generated: u64,
        kind: String,
    },
}

impl OriginRecord {
    /// False for a generated case of an unknown kind.
    pub fn kind_known(&self) -> bool {
        match self {
            OriginRecord::Generated { kind, .. } => (0..3).any(|i| CaseKind::of(i).name() == kind),
            _ => true,
        }
    }
}

impl std::fmt::Display for OriginRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OriginRecord::Corpus { corpus } => write!(f, "corpus file {corpus}"),
            OriginRecord::Vector {
                vector,
                line,
                expected,
            } => write!(f, "vector {vector}:{line} (expected `{expected}`)"),
            OriginRecord::Generated { generated, kind } => {
                write!(f, "generated case #{generated} ({kind})")
            }
        }
    }
}

/// A hex field of a record as bytes, or why it does not decode.
fn unhex(s: &str) -> Result<Vec<u8>, String> {
    let d = hex_nibbles(s.as_bytes(), false).map_err(|e| format!("bad hex digit `{}`", e.found))?;
    if d.len() % 2 != 0 {
        return Err(format!("odd number of hex digits ({})", d.len()));
    }
    Ok(pack_nibbles(&d))
}

impl DivergenceRecord {
    pub fn of(d: &Triaged) -> DivergenceRecord {
        let (f, fd, min) = (&d.finding, &d.finding.divergence, &d.min_finding.divergence);
        let mut r = DivergenceRecord {
            number: d.number as u64,
            target: f.target_name().to_string(),
            class: fd.class,
            signature: fd.signature.clone(),
            count: d.count,
            origin: match &f.origin {
                Origin::Corpus { path } => OriginRecord::Corpus {
                    corpus: path.clone(),
                },
                Origin::Vector {
                    path,
                    line,
                    expected,
                } => OriginRecord::Vector {
                    vector: path.clone(),
                    line: *line as u64,
                    expected: expected.clone(),
                },
                Origin::Generated { index } => OriginRecord::Generated {
                    generated: *index,
                    kind: CaseKind::of(*index).name().to_string(),
                },
            },
            arch: f.arch.name().to_string(),
            input: hex(&fd.input),
            minimized: hex(&d.minimized),
            replay: String::new(),
            replay_file: String::new(),
            file: String::new(),
            replay_target: (f.target_name() != fd.target.name()).then(|| fd.target.name().into()),
            replay_subjects: d.replay_subjects.clone(),
            left_name: fd.left_name.clone(),
            right_name: fd.right_name.clone(),
            left: min.left.clone(),
            right: min.right.clone(),
            answers: min.answers.clone(),
            left_dump: d.left_dump.clone(),
            right_dump: d.right_dump.clone(),
            shards: Vec::new(),
            cohorts: fd.cohorts.clone(),
            caused_by: d.caused_by.map(|n| n as u64),
            subject_blame: d
                .subject_blame
                .as_ref()
                .map(|v| v.iter().map(|&i| i as u64).collect()),
        };
        [r.file, r.replay, r.replay_file] = r.replay_of(r.number);
        r
    }

    pub fn dedup_key(&self) -> DedupKey {
        let names = (self.left_name.clone(), self.right_name.clone());
        (
            self.target.clone(),
            self.class,
            self.signature.clone(),
            names,
        )
    }

    pub fn input_bytes(&self) -> Result<Vec<u8>, String> {
        unhex(&self.input)
    }

    pub fn minimized_bytes(&self) -> Result<Vec<u8>, String> {
        unhex(&self.minimized)
    }

    /// The generation it ran under (`v2` when the name is unknown, SPEC §0).
    pub fn arch(&self) -> Generation {
        self.arch.parse().unwrap_or_default()
    }

    /// [`crate::findings::headline`] of this record.
    pub fn headline(&self, count: Option<u64>) -> String {
        let signature = crate::findings::signature_line(
            &self.signature.key,
            (&self.left_name, &self.signature.left, &self.left),
            (&self.right_name, &self.signature.right, &self.right),
        );
        crate::findings::headline(&signature, self.class, count)
    }

    pub fn replay_target(&self) -> &str {
        self.replay_target.as_deref().unwrap_or(&self.target)
    }

    /// `file`, `replay` and `replay_file` as the typed fields give them for divergence
    /// `number` (a merged report renumbers; a shard's are checked against them).
    pub fn replay_of(&self, number: u64) -> [String; 3] {
        let (subjects, arch, t) = (&self.replay_subjects, self.arch(), self.replay_target());
        let file = divergence_file(number as usize, t);
        let min = self.minimized_bytes().unwrap_or_default();
        let replay_file = replay_file_command(subjects, arch, t, &file);
        [file, replay_command(subjects, arch, t, &min), replay_file]
    }
}

/// True for a target whose input is one 64-byte bundle.
pub fn is_bundle_target(target: &str) -> bool {
    Target::from_name(target).is_some_and(Target::is_bundle) || target == VECTORS_CASE
}

fn failure_subject(f: &GateFailure) -> Option<&str> {
    use GateFailure as G;
    match f {
        G::Subject { spec: s, .. }
        | G::SubjectCheckedNothing { subject: s }
        | G::SubjectJudgedOnNothing { subject: s }
        | G::SubjectGivenUp { subject: s, .. } => Some(s),
        _ => None,
    }
}

fn failure_target(f: &GateFailure) -> String {
    use GateFailure as G;
    if failure_subject(f).is_some() {
        return SUBJECTS_CASE.to_string();
    }
    let t = match f {
        G::Timeout { target, .. }
        | G::InternalPanic { target, .. }
        | G::TargetDidNotRun { target } => Some(target.clone()),
        G::Unreached { .. } => Some(REACH_CASE.to_string()),
        G::Corpus { path, .. } => {
            let named = |t: &Target| {
                Path::new(path)
                    .components()
                    .any(|c| c.as_os_str() == t.name())
            };
            Target::gate_targets()
                .into_iter()
                .find(named)
                .map(|t| t.name().to_string())
        }
        _ => None,
    };
    t.unwrap_or_else(|| VECTORS_CASE.to_string())
}

/// The verdict of a gate run: FAIL on any finding or failure, else
/// INCOMPLETE when cut short, else PASS.
pub fn verdict(run: &GateRun) -> &'static str {
    if !run.passed() {
        FAIL
    } else if run.stopped_early {
        INCOMPLETE
    } else {
        PASS
    }
}

/// `v2..v5` for consecutive generations (SPEC §0 order), else a list;
/// `no generation` for none.
pub fn generation_span(names: &[String]) -> String {
    let pos = |n: &String| Generation::ALL.iter().position(|a| a.name() == n);
    let consecutive = names.len() > 2
        && names
            .windows(2)
            .all(|w| pos(&w[0]).is_some_and(|a| pos(&w[1]) == Some(a + 1)));
    match names {
        [] => "no generation".to_string(),
        [first, .., last] if consecutive => format!("{first}..{last}"),
        _ => names.join(", "),
    }
}

/// The `run.json` facts of subject under test `k` of a gate run.
fn subject_meta(run: &GateRun, k: usize, spec: &str, caps: Capabilities) -> SubjectMeta {
    let judged = run.subject_judged.get(k).cloned().unwrap_or_default();
    let targets: Vec<SubjectTargetMeta> = run
        .targets
        .iter()
        .filter(|(t, _)| caps.covers(t.spec().needs))
        .map(|(t, _)| SubjectTargetMeta {
            name: t.name().to_string(),
            corpus: judged.replayed_on(*t),
            generated: judged.generated_on(*t),
        })
        .collect();
    let mut meta = SubjectMeta {
        spec: spec.to_string(),
        capabilities: caps.to_string(),
        targets,
        vector_checks: judged.on_vectors(),
        generations: run
            .arches
            .iter()
            .zip(judged.by_arch.iter().chain(std::iter::repeat(&0)))
            .filter(|(_, n)| **n > 0)
            .map(|((a, _), _)| a.name().to_string())
            .collect(),
        cases: 0,
        failures: run
            .failures
            .iter()
            .filter(|f| failure_subject(f) == Some(spec))
            .count() as u64,
        given_up: run
            .failures
            .iter()
            .filter_map(|f| match f {
                GateFailure::SubjectGivenUp {
                    subject,
                    arch,
                    op,
                    reason,
                    not_run,
                } if subject == spec => Some(GivenUpMeta {
                    generation: arch.clone(),
                    operation: op.clone(),
                    cases_not_run: *not_run,
                    reason: reason.clone(),
                }),
                _ => None,
            })
            .collect(),
    };
    meta.cases = meta.cases_of_parts();
    meta
}

fn machine_of(cfg: &GateConfig, run: &GateRun) -> MachineMeta {
    MachineMeta {
        threads: cfg.threads.max(1) as u64,
        elapsed_ms: millis(run.elapsed),
        subjects: each(&run.external, |e| SubjectMachineMeta {
            spec: e.spec.clone(),
            calls: e.stats.calls,
            answers_received: e.stats.received,
            answers_compared: e.stats.compared,
            subject_ms: millis(e.stats.busy),
            cases_per_s: e.rate().map_or(0, |r| r.round() as u64),
            restarts: e.stats.restarts,
        }),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn meta_of(cfg: &GateConfig, run: &GateRun, records: &[DivergenceRecord]) -> RunMeta {
    RunMeta {
        format: run_json::FORMAT,
        tool: "tpbconform".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        verdict: verdict(run).into(),
        complete: !run.stopped_early,
        bad_input: run.bad_input(),
        seed: format!("{:#x}", cfg.seed),
        cases: cfg.cases,
        shard: cfg.shard,
        merged_from: None,
        targets: each(&run.targets, |(_, s)| s.clone()),
        corpus: run.corpus.clone(),
        vector_files: run.vector_files.clone(),
        distinct_divergences: records.len() as u64,
        divergent_cases: records.iter().map(|r| r.count).sum(),
        failures: run.failures.iter().map(ToString::to_string).collect(),
        failure_targets: run.failures.iter().map(failure_target).collect(),
        notes: run.notes.clone(),
        unexercised: run.reach.unhit(),
        generations: each(&run.arches, |(_, st)| st.clone()),
        subjects: run
            .subjects
            .iter()
            .enumerate()
            .map(|(k, (spec, caps))| subject_meta(run, k, spec, *caps))
            .collect(),
        subject_cases_cap: cfg.subject_cases.map(|c| c.min(cfg.cases)),
        cohorts: run
            .cohorts
            .iter()
            .map(|(p, n)| CohortMeta {
                pattern: p.clone(),
                inputs: *n,
            })
            .collect(),
        unsupported: each(&run.unsupported, |(t, who)| UnsupportedMeta {
            target: t.name().to_string(),
            subjects: who.clone(),
        }),
        reach: run
            .reach
            .table()
            .into_iter()
            .map(|(field, classes)| {
                let class = |&(c, hits): &(&str, u64)| ReachClass {
                    class: c.into(),
                    hits,
                };
                (field.to_string(), each(classes, class))
            })
            .collect(),
        machine: Some(machine_of(cfg, run)),
        integrity: None,
    }
}

impl<'r> ReportModel<'r> {
    pub fn of_gate(
        cfg: &'r GateConfig,
        run: &'r GateRun,
        triaged: &[Triaged],
        timestamp: &str,
    ) -> Self {
        let divergences: Vec<DivergenceRecord> = triaged.iter().map(DivergenceRecord::of).collect();
        ReportModel {
            meta: meta_of(cfg, run, &divergences),
            divergences,
            shards: Vec::new(),
            live: Some(Live {
                cfg,
                run,
                timestamp: timestamp.to_string(),
            }),
        }
    }

    /// `R root cause(s), F more folded under them` (the result line's count of divergences).
    pub fn root_causes_line(&self) -> String {
        let folded = self
            .divergences
            .iter()
            .filter(|d| d.caused_by.is_some())
            .count();
        format!(
            "{} root cause(s), {folded} more folded under them",
            self.divergences.len() - folded
        )
    }

    pub fn passed(&self) -> bool {
        self.meta.verdict == PASS
    }

    pub fn generated(&self) -> u64 {
        self.meta.targets.iter().map(|t| t.ran).sum()
    }

    /// True when `target` has a divergence or a failure.
    pub fn target_failed(&self, target: &str) -> bool {
        self.divergences.iter().any(|d| d.target == target)
            || self.meta.failure_targets.iter().any(|t| t == target)
    }

    /// True when generation `name` has a diverged case or a divergence.
    pub fn generation_failed(&self, g: &ArchStats) -> bool {
        g.diverged > 0 || self.divergences.iter().any(|d| d.arch == g.name)
    }

    /// Per subject: `subject lib:/x/libmine.so: 2 of 12 targets, v2..v5, 20,000,000 cases,
    /// agree` (the console and summary.md).
    pub fn subject_lines(&self) -> Vec<String> {
        self.meta
            .subjects
            .iter()
            .map(|s| {
                let covered = s.targets.iter().filter(|t| t.cases() > 0).count();
                let divs = self
                    .divergences
                    .iter()
                    .filter(|d| d.left_name == s.spec || d.right_name == s.spec)
                    .count();
                let how = match (divs, s.failures > 0) {
                    // Never `agree` for a run cut short (issue 35).
                    (0, false) if s.cases > 0 && !self.meta.complete => {
                        "no divergence in the cases run, but the run was cut short".to_string()
                    }
                    (0, false) if s.cases > 0 => "agree".to_string(),
                    (0, false) => "judged on nothing".to_string(),
                    (0, true) => "FAIL (see Failures)".to_string(),
                    (n, false) => format!("{n} distinct divergence(s)"),
                    (n, true) => format!("{n} distinct divergence(s), FAIL (see Failures)"),
                };
                let vectors = match s.vector_checks {
                    0 => String::new(),
                    n => format!(" ({} vector checks)", grouped(n)),
                };
                format!(
                    "subject {}: {covered} of {} targets, {}, {} cases{vectors}, {how}",
                    s.spec,
                    self.meta.targets.len(),
                    generation_span(&s.generations),
                    grouped(s.cases),
                )
            })
            .collect()
    }

    pub fn is_merged(&self) -> bool {
        self.meta.merged_from.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subject's line says FAIL from its typed failure count, also in a merged report
    /// whose failure texts start with their shard.
    #[test]
    fn a_subject_line_fails_from_its_failure_count() {
        let mut m = ReportModel::default();
        m.meta.complete = true;
        m.meta.failures = vec!["shard 1/2: subject cmd:x was judged on no case".into()];
        m.meta.subjects = vec![SubjectMeta {
            spec: "cmd:x".into(),
            capabilities: String::new(),
            targets: Vec::new(),
            vector_checks: 0,
            generations: Vec::new(),
            cases: 5,
            failures: 1,
            given_up: Vec::new(),
        }];
        assert!(m.subject_lines()[0].ends_with(", FAIL (see Failures)"));
        m.meta.subjects[0].failures = 0;
        assert!(m.subject_lines()[0].ends_with(", agree"));
    }
}
