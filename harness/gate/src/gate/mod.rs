//! The release gate: corpus replay, vector checks and generated differential
//! cases, run on all cores, failing closed.
//!
//! # Contracts
//!
//! - **Phases.** (1) Every file under `corpus/<folder>/` (recursive, sorted)
//!   is run through the registry targets of that folder ([`corpus`]).
//!   Unless `no_corpus`, a corpus that fails [`preflight::check_corpus`]
//!   (missing or empty root or `vectors/`, a selected target without corpus
//!   files) is a [`GateFailure::Corpus`] (bad input); so is an unreadable
//!   file or folder, a symlink, a FIFO, device or socket, and a file over
//!   its cap (1 MiB, a vector file 16 MiB) among the inputs the run reads.
//!   One that turns so after that check is never opened blocking
//!   ([`crate::input::read_corpus_file`]) nor read: a
//!   [`GateFailure::InputSkipped`] (exit 1).
//!   (2) Every vector file under `corpus/vectors/` is checked against every
//!   subject ([`vectors`]). (3) `cases` generated cases per target
//!   (each target kind's generator, [`crate::kinds`]), split over `threads`
//!   workers ([`generate`]).
//! - **Subjects.** Every corpus file and vector, and every generated case
//!   (with `--subject-cases N`: those with an index below N,
//!   [`GateConfig::subject_cases`]), go to core, oracle and each subject of
//!   [`GateConfig::subjects`] ([`crate::judge::Judge`];
//!   bundle cases are offered to them a chunk at a time first,
//!   [`crate::judge::Judge::prefetch`]); a target a subject
//!   lacks the capabilities for is listed in [`GateRun::unsupported`] ("not
//!   supported by X"), never counted as a pass for it, and a subject that
//!   supports none of the selected targets is a
//!   [`GateFailure::SubjectCheckedNothing`]; one that supports some but was
//!   judged on no case at all (e.g. `--no-corpus --subject-cases 0`) is a
//!   [`GateFailure::SubjectJudgedOnNothing`].
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
//! - **Fail closed.** A subject panic is a `Panic` finding (judge); a panic
//!   in the gate's own code is a [`GateFailure::InternalPanic`]; a case that
//!   makes no progress for `case_timeout` is a [`GateFailure::Timeout`] (the
//!   run stops, the stuck worker is abandoned, the report is still written);
//!   a selected target that ran no generated case (zero planned included)
//!   is a [`GateFailure::TargetDidNotRun`]. [`GateRun::passed`] is true only
//!   with no finding and no failure; a run the budget cut short is
//!   INCOMPLETE ([`crate::report::verdict`]), never PASS.
//! - **Bounded plan.** The work list is computed on demand from an atomic
//!   counter (O(targets) memory whatever `cases` is).
//! - **Hot loop.** Bundle cases are generated into a stack `[u8; 64]`, other
//!   inputs into a reused `Vec`; validator, LUT and IR-gate comparisons that
//!   agree do not allocate (the coverage key is written into a reused
//!   buffer, see [`crate::judge::record`]).

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
        Err(_) if cfg.interrupted() => {
            // A hello cut short by the stop is not the subject's fault.
            run.failures.push(GateFailure::Interrupted);
            run.elapsed = start.elapsed();
            return run;
        }
        Err(e) => {
            run.failures.push(GateFailure::Subject {
                spec: match &e {
                    crate::subjects::registry::OpenError::NotAvailable(s)
                    | crate::subjects::registry::OpenError::Failed { spec: s, .. } => s.to_string(),
                },
                error: e.to_string(),
            });
            run.elapsed = start.elapsed();
            return run;
        }
    };
    // A subject serves each generation in its own process, and may serve
    // some generations only (an empty hello): judged per generation.
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
            error: e.to_string(),
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

/// Fail closed: a subject under test that supports a selected target but
/// was judged on no case at all (whatever the flags: `--no-corpus
/// --subject-cases 0`, an empty shard, a budget cut) fails the gate. A
/// subject that supports no selected target has its own failure already.
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

/// Phases 1 and 2: corpus replay and vector checks.
fn replay_and_check_vectors(cfg: &GateConfig, runners: &[coverage::Runner], run: &mut GateRun) {
    corpus::replay_corpus(cfg, runners, run);
    let engines: Vec<_> = runners.iter().map(|r| (r.arch, &r.judge)).collect();
    match vectors::check_dir(&cfg.corpus_dir.join("vectors"), &engines) {
        Ok(checked) => {
            for why in checked.skipped {
                run.failures.push(GateFailure::InputSkipped(why));
            }
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
        Err(e) => run.failures.push(GateFailure::Vectors(e.to_string())),
    }
}
