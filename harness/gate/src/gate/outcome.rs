//! What a gate run found: [`GateRun`], per-target [`TargetStats`] and the
//! [`GateFailure`]s other than findings.

use super::config::GateConfig;
use super::vectors;
use crate::findings::Findings;
use crate::generation::Generation;
use crate::subjects::Capabilities;
use crate::targets::Target;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// Why the gate failed other than by a finding (`Corpus`, `Vectors`, `Subject`: bad input).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GateFailure {
    /// A corpus file or folder could not be read.
    Corpus { path: String, error: String },
    /// A vector file is malformed or unreadable.
    Vectors(String),
    /// A generated case hung in the gate's own code (a subject's hang is its client's
    /// `Timeout` finding). `batch`: 0 while case `index` was judged, n while the subjects
    /// answered n cases from it on.
    Timeout {
        target: String,
        index: u64,
        batch: u64,
        seconds: u64,
    },
    /// A panic in the gate's own code (generator, bookkeeping).
    InternalPanic {
        target: String,
        index: u64,
        message: String,
    },
    /// A target ran no generated case although some were requested.
    TargetDidNotRun { target: String },
    /// A subject under test could not be opened.
    Subject { spec: String, error: String },
    /// A subject under test supports none of the selected targets.
    SubjectCheckedNothing { subject: String },
    /// It supports some selected target but nothing it answered was compared.
    SubjectJudgedOnNothing { subject: String },
    /// Given up on operation `op` (`lut:dtype`, …) for one generation after faults in a row
    /// (its earlier faults are findings); `not_run` cases needing it were not asked.
    SubjectGivenUp {
        subject: String,
        arch: String,
        op: String,
        reason: String,
        not_run: u64,
    },
    /// An input that turned unreadable after the preflight: not checked, so never a pass.
    InputSkipped(String),
    /// Stopped from outside (Ctrl-C) before the planned cases ran.
    Interrupted,
    /// A full default run left declared value classes (`field: class`, sorted) unhit.
    Unreached { classes: Vec<String> },
}

impl fmt::Display for GateFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateFailure::Corpus { path, error } => write!(f, "{path}: cannot read: {error}"),
            GateFailure::Vectors(e) => f.write_str(e),
            GateFailure::Timeout {
                target,
                index,
                batch,
                seconds,
            } => {
                let what = match batch {
                    0 => format!(" case #{index}"),
                    n => format!(": the subjects' answers to its {n} case(s) from #{index} on"),
                };
                write!(f, "timeout: target {target}{what} made no progress for {seconds} s")
            }
            GateFailure::InternalPanic {
                target,
                index,
                message,
            } => write!(
                f,
                "internal panic in target {target} near case #{index}: {message}"
            ),
            GateFailure::TargetDidNotRun { target } => {
                write!(f, "target {target} ran no generated case (budget too small?)")
            }
            GateFailure::Subject { spec, error } => write!(f, "subject {spec}: {error}"),
            GateFailure::SubjectCheckedNothing { subject } => write!(
                f,
                "subject {subject} supports none of the selected targets: none of them was checked (vector checks alone do not count)"
            ),
            GateFailure::SubjectJudgedOnNothing { subject } => write!(
                f,
                "subject {subject} was judged on no case (no corpus file, vector or generated \
                 case of its targets reached it; --subject-cases 0 with --no-corpus?)"
            ),
            GateFailure::SubjectGivenUp {
                subject,
                arch,
                op,
                reason,
                not_run,
            } => write!(
                f,
                "subject {subject} ({arch}) {op}: {reason}; {not_run} case(s) it should have \
                 judged were not run"
            ),
            GateFailure::InputSkipped(why) => write!(f, "input not checked: {why}"),
            GateFailure::Interrupted => f.write_str("interrupted before the planned cases ran"),
            GateFailure::Unreached { classes } => write!(
                f,
                "a full default run never generated {} declared value class(es): {}",
                classes.len(),
                classes.join(", ")
            ),
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

/// The [`OUTCOMES`] column of a divergence class (the fault classes count as `DifferentOutput`).
pub fn outcome_col(class: crate::judge::Class) -> usize {
    use crate::judge::Class as C;
    match class {
        C::OverAccept => 1,
        C::UnderAccept => 2,
        C::SameVerdictDifferentReason => 3,
        C::Panic => 5,
        C::DifferentOutput
        | C::Unsupported
        | C::Crash
        | C::Timeout
        | C::Protocol
        | C::Harness
        | C::VectorMismatch => 4,
    }
}

/// One target's generated cases planned (this shard), run, per kind and diverged; corpus
/// files; coverage (core's verdict key → [`OUTCOMES`] counts); worker time (not in
/// `run.json`, whose `targets` rows these are).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetStats {
    pub name: String,
    pub planned: u64,
    pub ran: u64,
    pub valid: u64,
    pub near_valid: u64,
    pub raw: u64,
    pub diverged: u64,
    pub corpus_files: u64,
    pub corpus_diverged: u64,
    /// Some corpus folder was replayed through this target.
    pub corpus_present: bool,
    pub coverage: BTreeMap<String, [u64; 6]>,
    #[serde(skip)]
    pub busy: Duration,
}

impl TargetStats {
    /// Adds `o`'s generated cases (run, per kind, diverged), coverage and worker time.
    pub fn add_generated(&mut self, o: TargetStats) {
        self.add_kinds(o.ran, [o.valid, o.near_valid, o.raw], o.diverged);
        self.busy += o.busy;
        merge_cov(&mut self.coverage, o.coverage);
    }

    /// Adds `ran` generated cases, of each [`crate::findings::CaseKind`] `by_kind`, `diverged`.
    pub fn add_kinds(&mut self, ran: u64, by_kind: [u64; 3], diverged: u64) {
        self.ran += ran;
        self.valid += by_kind[0];
        self.near_valid += by_kind[1];
        self.raw += by_kind[2];
        self.diverged += diverged;
    }
}

pub fn merge_cov(
    into: &mut BTreeMap<String, [u64; 6]>,
    from: impl IntoIterator<Item = (String, [u64; 6])>,
) {
    for (k, v) in from {
        let e = into.entry(k).or_insert([0; 6]);
        for (a, b) in e.iter_mut().zip(v) {
            *a += b;
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct GateRun {
    pub targets: Vec<(Target, TargetStats)>,
    /// Per subject under test, in `--subject` order.
    pub subject_judged: Vec<SubjectJudged>,
    /// Divergent inputs per cohort pattern ([`crate::judge::cohort::pattern`]), 2+ subjects.
    pub cohorts: BTreeMap<String, u64>,
    pub vector_files: Vec<vectors::FileStats>,
    pub corpus: Vec<CorpusFolder>,
    pub findings: Findings,
    /// Sorted.
    pub failures: Vec<GateFailure>,
    pub subjects: Vec<(String, Capabilities)>,
    /// Per target, the subjects under test that do not support it.
    pub unsupported: Vec<(Target, Vec<String>)>,
    pub notes: Vec<String>,
    /// The time budget (or a stop) cut the generated phase short.
    pub stopped_early: bool,
    /// Sampled ([`super::generate::reach_sampled`]).
    pub reach: crate::reach::Reach,
    pub gen_elapsed: Duration,
    pub elapsed: Duration,
    pub external: Vec<ExternalRun>,
    pub arches: Vec<(Generation, ArchStats)>,
    /// Per (subject, generation, operation) given up: why, and the cases not run.
    pub given_up: BTreeMap<(String, String, String), (String, u64)>,
}

/// The cases one subject under test was judged on, per [`crate::judge::nway::JUDGED_SLOTS`]
/// slot (corpus and vector checks `replayed`, and `generated`), and all per generation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubjectJudged {
    pub replayed: Vec<u64>,
    pub generated: Vec<u64>,
    pub by_arch: Vec<u64>,
}

/// Applies `f` to each element of `into` and its counterpart in `more`, growing `into` first.
fn zip_grow<T: Clone + Default, U>(into: &mut Vec<T>, more: &[U], mut f: impl FnMut(&mut T, &U)) {
    if into.len() < more.len() {
        into.resize(more.len(), T::default());
    }
    for (x, y) in into.iter_mut().zip(more) {
        f(x, y);
    }
}

fn add_into(into: &mut Vec<u64>, more: &[u64]) {
    zip_grow(into, more, |x, y| *x = x.saturating_add(*y));
}

fn slot(v: &[u64], i: usize) -> u64 {
    v.get(i).copied().unwrap_or(0)
}

impl SubjectJudged {
    pub fn total(&self) -> u64 {
        self.replayed
            .iter()
            .chain(&self.generated)
            .fold(0u64, |a, &b| a.saturating_add(b))
    }

    pub fn replayed_on(&self, t: Target) -> u64 {
        slot(&self.replayed, t.rank())
    }

    pub fn generated_on(&self, t: Target) -> u64 {
        slot(&self.generated, t.rank())
    }

    pub fn on_vectors(&self) -> u64 {
        slot(&self.replayed, crate::judge::nway::VECTORS_SLOT)
    }

    /// Adds a judge's [`crate::judge::Judge::judged`] row under generation `arch` of `arches`.
    pub fn add(&mut self, arch: usize, arches: usize, slots: &[u64], generated: bool) {
        add_into(
            if generated {
                &mut self.generated
            } else {
                &mut self.replayed
            },
            slots,
        );
        if self.by_arch.len() < arches.max(arch + 1) {
            self.by_arch.resize(arches.max(arch + 1), 0);
        }
        let sum = slots.iter().fold(0u64, |a, &b| a.saturating_add(b));
        self.by_arch[arch] = self.by_arch[arch].saturating_add(sum);
    }

    pub fn merge(&mut self, o: &SubjectJudged) {
        add_into(&mut self.replayed, &o.replayed);
        add_into(&mut self.generated, &o.generated);
        add_into(&mut self.by_arch, &o.by_arch);
    }
}

pub fn merge_judged(into: &mut Vec<SubjectJudged>, more: &[SubjectJudged]) {
    zip_grow(into, more, SubjectJudged::merge);
}

pub fn add_counts(into: &mut BTreeMap<String, u64>, from: BTreeMap<String, u64>) {
    for (k, n) in from {
        *into.entry(k).or_insert(0) += n;
    }
}

/// Counts the cohort pattern of one divergent input's findings (if any has cohorts).
pub fn count_cohorts(into: &mut BTreeMap<String, u64>, fs: &[crate::findings::Finding]) {
    if let Some(f) = fs.iter().find(|f| !f.divergence.cohorts.is_empty()) {
        *into
            .entry(crate::judge::cohort::pattern(&f.divergence.cohorts))
            .or_insert(0) += 1;
    }
}

/// One generation's generated cases (every target): run and diverged (a `generations` row
/// of `run.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchStats {
    pub name: String,
    pub ran: u64,
    pub diverged: u64,
}

/// One external subject's statistics, cases judged and core's rate on them ([`super::bench`]).
#[derive(Clone, Debug, Default)]
pub struct ExternalRun {
    pub spec: String,
    pub stats: crate::external::SubjectStats,
    pub cases: u64,
    pub core_rate: Option<f64>,
}

impl ExternalRun {
    /// Cases judged per second in the subject (`None` when no time was measured).
    pub fn rate(&self) -> Option<f64> {
        let s = self.stats.busy.as_secs_f64();
        (s > 0.0).then(|| self.cases as f64 / s)
    }
}

impl GateRun {
    pub fn of(cfg: &GateConfig) -> GateRun {
        GateRun {
            targets: cfg
                .targets
                .iter()
                .map(|t| {
                    let name = t.name().to_string();
                    (
                        *t,
                        TargetStats {
                            name,
                            ..TargetStats::default()
                        },
                    )
                })
                .collect(),
            arches: cfg
                .arches()
                .into_iter()
                .map(|a| {
                    let name = a.name().to_string();
                    (
                        a,
                        ArchStats {
                            name,
                            ..ArchStats::default()
                        },
                    )
                })
                .collect(),
            ..GateRun::default()
        }
    }

    /// Adds what each generation's judge counted: cases per subject, and what was not run.
    pub fn count_judged<'a, J>(&mut self, judges: J, generated: bool)
    where
        J: ExactSizeIterator<Item = (Generation, &'a crate::judge::Judge)>,
    {
        let n = judges.len();
        for (a, (arch, judge)) in judges.enumerate() {
            zip_grow(&mut self.subject_judged, &judge.judged(), |x, y| {
                x.add(a, n, y, generated)
            });
            for g in judge.not_run() {
                let key = (g.subject, arch.name().to_string(), g.op.name().to_string());
                self.given_up.entry(key).or_insert((g.why, 0)).1 += g.cases;
            }
        }
    }

    pub fn fail_given_up(&mut self) {
        for ((subject, arch, op), (reason, not_run)) in std::mem::take(&mut self.given_up) {
            self.failures.push(GateFailure::SubjectGivenUp {
                subject,
                arch,
                op,
                reason,
                not_run,
            });
        }
    }

    pub fn passed(&self) -> bool {
        self.findings.is_empty() && self.failures.is_empty()
    }

    pub fn bad_input(&self) -> bool {
        self.failures.iter().any(|f| {
            matches!(
                f,
                GateFailure::Corpus { .. } | GateFailure::Vectors(_) | GateFailure::Subject { .. }
            )
        })
    }

    pub fn generated(&self) -> u64 {
        self.targets.iter().map(|(_, s)| s.ran).sum()
    }
}

/// One corpus folder's replay (a `corpus` row of `run.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusFolder {
    pub name: String,
    pub routes: Vec<String>,
    pub files: u64,
    pub diverged: u64,
}

#[cfg(test)]
mod tests {
    use super::GateFailure;

    #[test]
    fn a_timeout_names_the_case_or_the_batch_the_subjects_were_answering() {
        let t = |batch| GateFailure::Timeout {
            target: "alu_lut".into(),
            index: 7,
            batch,
            seconds: 4,
        };
        assert_eq!(
            t(0).to_string(),
            "timeout: target alu_lut case #7 made no progress for 4 s"
        );
        assert_eq!(
            t(3).to_string(),
            "timeout: target alu_lut: the subjects' answers to its 3 case(s) from #7 on made no \
             progress for 4 s"
        );
    }
}
