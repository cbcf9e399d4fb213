//! The release gate: (1) corpus replay ([`corpus`]) after [`preflight::check_corpus`] unless
//! `no_corpus`, (2) vector checks ([`vectors`]), (3) generated cases on `threads` workers
//! ([`generate`]). Fail-closed promises: docs/guarantees.md G1–G3, G5, G9, G13, G17, G20.
//! Invariants: case `i` of target `t` is a pure function of `(seed, t, i)`; chunks go
//! round-robin over the targets from one atomic counter, so a budget stop runs a prefix and
//! otherwise every count is independent of threads and scheduling; `--shard i/n` runs exactly
//! the indices `≡ i (mod n)`; agreeing validator, LUT and IR-gate cases do not allocate.

pub mod bench;
pub mod config;
pub mod corpus;
pub mod coverage;
pub mod generate;
pub mod outcome;
pub mod preflight;
mod stage;
pub mod vectors;

pub use config::{
    GateConfig, Shard, DEFAULT_CASES, DEFAULT_LOWERING_CASES, DEFAULT_SECONDS, DEFAULT_SEED,
    DEFAULT_SYNC_CASES,
};
pub use generate::{reach_failure, reach_sampled, Progress, REACH_SAMPLE};
pub use outcome::{
    ArchStats, CorpusFolder, ExternalRun, GateFailure, GateRun, SubjectJudged, TargetStats,
    OUTCOMES,
};

use crate::subjects::Capabilities;

use std::time::Instant;

/// Runs the gate. `progress` is called from the monitoring thread.
pub fn run(cfg: &GateConfig, progress: Option<Progress<'_>>) -> GateRun {
    let start = Instant::now();
    let mut run = GateRun::of(cfg);
    let runners = match coverage::runners(cfg) {
        Ok(r) => r,
        Err(e) => {
            use crate::subjects::registry::OpenError;
            // A hello cut short by the stop is not the subject's fault.
            run.failures.push(if cfg.interrupted() {
                GateFailure::Interrupted
            } else {
                let (OpenError::NotAvailable(spec) | OpenError::Failed { spec, .. }) = &e;
                GateFailure::Subject {
                    spec: spec.to_string(),
                    error: e.to_string(),
                }
            });
            run.elapsed = start.elapsed();
            return run;
        }
    };
    // One process per generation; a subject may serve some only (an empty hello).
    let multi = runners.len() > 1;
    let first = runners.first().map_or(&[][..], |r| r.judge.under_test());
    for (k, s) in first.iter().enumerate() {
        let caps: Vec<Capabilities> = runners
            .iter()
            .filter_map(|r| r.judge.under_test().get(k).map(|s| s.capabilities()))
            .collect();
        let union = caps.iter().fold(Capabilities::NONE, |u, c| u.union(*c));
        run.subjects.push((s.name().to_string(), union));
        if !cfg
            .targets
            .iter()
            .any(|t| caps.iter().any(|c| c.covers(t.spec().needs)))
        {
            run.failures.push(GateFailure::SubjectCheckedNothing {
                subject: s.name().to_string(),
            });
        }
    }
    for t in &cfg.targets {
        let mut lacking: Vec<String> = Vec::new();
        for r in &runners {
            for (n, _) in r.judge.unsupported(*t) {
                lacking.push(if multi {
                    format!("{n} ({})", r.arch)
                } else {
                    n
                });
            }
        }
        if !lacking.is_empty() {
            run.unsupported.push((*t, lacking));
        }
    }
    if cfg.no_corpus {
        run.notes
            .push("corpus and vectors not replayed (--no-corpus)".to_string());
    } else if let Err(e) = preflight::check_corpus(&cfg.corpus_dir, &cfg.targets) {
        run.failures.push(GateFailure::Corpus {
            path: cfg.corpus_dir.display().to_string(),
            error: e,
        });
    } else {
        replay_and_check_vectors(cfg, &runners, &mut run);
    }
    run.count_judged(runners.iter().map(|r| (r.arch, &r.judge)), false);
    drop(runners);
    generate::generate(cfg, start, &mut run, progress);
    subjects_judged_on_something(cfg, &mut run);
    run.fail_given_up();
    run.failures.sort();
    run.failures.dedup();
    run.elapsed = start.elapsed();
    run
}

/// Fail closed: a subject supporting a selected target but judged on no case fails the gate.
fn subjects_judged_on_something(cfg: &GateConfig, run: &mut GateRun) {
    for (k, (name, caps)) in run.subjects.iter().enumerate() {
        let covers = cfg.targets.iter().any(|t| caps.covers(t.spec().needs));
        if covers && run.subject_judged.get(k).map_or(0, SubjectJudged::total) == 0 {
            run.failures.push(GateFailure::SubjectJudgedOnNothing {
                subject: name.clone(),
            });
        }
    }
}

fn replay_and_check_vectors(cfg: &GateConfig, runners: &[coverage::Runner], run: &mut GateRun) {
    corpus::replay_corpus(cfg, runners, run);
    let engines: Vec<_> = runners.iter().map(|r| (r.arch, &r.judge)).collect();
    match vectors::check_dir(&cfg.corpus_dir.join("vectors"), &engines) {
        Ok(checked) => {
            let skipped = checked.skipped.into_iter().map(GateFailure::InputSkipped);
            run.failures.extend(skipped);
            if checked.files.is_empty() && !cfg.interrupted() {
                // Fail closed: vectors/ held names but nothing was checked.
                run.failures.push(GateFailure::Vectors(format!(
                    "{}/vectors: no readable vector file (every entry skipped)",
                    cfg.corpus_dir.display()
                )));
            }
            run.vector_files = checked.files;
            for f in checked.findings {
                run.findings.add(f);
            }
        }
        Err(e) => run.failures.push(GateFailure::Vectors(e)),
    }
}
