//! `tpbconform gate`: the release gate (see [`crate::gate`]), its report
//! ([`crate::report`]) and its exit code ([`super::help::GATE`], docs/guarantees.md).

use super::{debug_env, CliError, CliResult, EXIT_BAD_INPUT, EXIT_INVALID, EXIT_OK};
use crate::external;
use crate::gate::{self, GateConfig, GateFailure, Shard};
use crate::generation::Generation;
use crate::judge::Judge;
use crate::report;
use crate::subjects::SubjectSpec;
use crate::targets::{parse_gate_target, Target};
use crate::triage;
use clap::builder::{PossibleValue, RangedU64ValueParser, TypedValueParser};
use std::ffi::OsStr;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub fn parse_seed(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|e| format!("bad seed `{s}`: {e} (expected a decimal or 0x-hex u64)"))
}

/// Largest `--seconds` (about 31 years), far below where `Duration` arithmetic overflows.
pub const MAX_SECONDS: f64 = 1e9;

/// `--seconds`: finite, in [0, [`MAX_SECONDS`]] (0 = no budget).
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|e| format!("bad --seconds `{s}`: {e} (expected seconds, e.g. 60 or 0.5)"))?;
    if !v.is_finite() || !(0.0..=MAX_SECONDS).contains(&v) {
        return Err(format!(
            "bad --seconds `{s}`: expected a finite number of seconds from 0 (no budget) to \
             {MAX_SECONDS:e}"
        ));
    }
    Ok(v)
}

/// Largest `--threads` (`--threads 1000000000` tried to allocate 40 GB).
pub const MAX_THREADS: u64 = 256;

/// Largest `--case-timeout` (a day): beyond it an `Instant` deadline could overflow.
pub const MAX_CASE_TIMEOUT: u64 = 86_400;

/// `--targets`: a gate target name; clap lists the names in `--help`.
#[derive(Clone, Copy, Debug)]
pub struct TargetArg;

impl TypedValueParser for TargetArg {
    type Value = Target;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Target, clap::Error> {
        let s = value.to_string_lossy();
        parse_gate_target(&s).map_err(|e| {
            let flag = arg.map_or_else(|| "TARGET".to_string(), ToString::to_string);
            clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("invalid value '{s}' for '{flag}': {e}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let names = Target::gate_targets().into_iter().map(Target::name);
        Some(Box::new(names.map(PossibleValue::new)))
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct GateArgs {
    /// Generated cases per target (before sharding), at least 1.
    #[arg(long, default_value_t = gate::DEFAULT_CASES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub cases: u64,
    /// Cap on sync_handshake cases (each simulates a whole program): that
    /// target runs min(--cases, --sync-cases). At least 1.
    #[arg(long, default_value_t = gate::DEFAULT_SYNC_CASES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub sync_cases: u64,
    /// Cap on collective_lowering cases (each lowers a whole module and
    /// checks the lowering properties): that target runs
    /// min(--cases, --lowering-cases). At least 1.
    #[arg(long, default_value_t = gate::DEFAULT_LOWERING_CASES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub lowering_cases: u64,
    /// Time budget in seconds for the whole run (0 = none, at most 1e9). A
    /// run the budget cuts short is INCOMPLETE (exit 1 unless
    /// --allow-partial).
    #[arg(long, default_value_t = gate::DEFAULT_SECONDS, value_parser = parse_seconds)]
    pub seconds: f64,
    /// Exit 0 for an INCOMPLETE run (cut short by --seconds, nothing found);
    /// the report still says INCOMPLETE.
    #[arg(long)]
    pub allow_partial: bool,
    /// Run the generated cases only: do not require (nor replay) the corpus
    /// and its vectors/. Without it a missing or empty corpus is refused.
    #[arg(long)]
    pub no_corpus: bool,
    /// Seed (decimal or 0x-hex). Same seed, same cases, same report.
    #[arg(long, value_parser = parse_seed, default_value = "0x7bc04f0e")]
    pub seed: u64,
    /// Run only the case indices ≡ i (mod n).
    #[arg(long, value_name = "i/n", default_value = "0/1")]
    pub shard: Shard,
    /// Comma-separated targets (default: all); a repeated target runs once.
    #[arg(long, value_delimiter = ',', value_name = "a,b", value_parser = TargetArg)]
    pub targets: Vec<Target>,
    /// Report folder (must not exist). Default: reports/<UTC timestamp>/.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Corpus root holding <target>/ folders and vectors/.
    #[arg(long, value_name = "DIR", default_value = "corpus")]
    pub corpus: PathBuf,
    /// Worker threads, 1 to 256 (default: all cores).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_THREADS))]
    pub threads: Option<usize>,
    /// Seconds without progress on one case before it counts as a timeout,
    /// 1 to 86400 (a day).
    #[arg(long, default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=MAX_CASE_TIMEOUT))]
    pub case_timeout: u64,
    /// Never show a progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// A subject under test, judged against core (repeatable): `lib:PATH`
    /// (a shared library with the C ABI of include/tpb_subject.h) or
    /// `cmd:COMMAND` (a process speaking tpb-subject/1, see
    /// docs/subject-protocol.md). It gets half of --case-timeout per answer.
    #[arg(long = "subject", value_name = "SPEC")]
    pub subjects: Vec<SubjectSpec>,
    /// Opt-in cap: only the first N generated cases per target (by case
    /// index) also go to the --subject's; the rest are core vs oracle only.
    /// Default: every generated case of every target a subject supports,
    /// under every generation it accepts. A subject judged on no case at
    /// all (e.g. 0 with --no-corpus) fails the gate.
    #[arg(long, value_name = "N")]
    pub subject_cases: Option<u64>,
    /// Narrow the run to one hardware generation (v2 Sunda, v3 Cayman, v4
    /// Mariana, v5 Maverick; the `arch` of the subjects' hello). Default:
    /// every generation, the generated cases spread over them round-robin
    /// (case i under the (i mod 4)-th) and the corpus and vectors run under
    /// each; the report has one row per generation.
    #[arg(long)]
    pub arch: Option<Generation>,
}

pub fn run(a: GateArgs) -> CliResult {
    let mut targets: Vec<Target> = Vec::new();
    for x in &a.targets {
        if !targets.contains(x) {
            targets.push(*x);
        }
    }
    if targets.is_empty() {
        targets = Target::gate_targets();
    }
    // Fail closed before anything is created: a corpus that checks nothing.
    if !a.no_corpus {
        gate::preflight::check_corpus(&a.corpus, &targets).map_err(CliError::refused)?;
    }
    let (stamp, iso) = report::utc_now();
    let dir = report::claim_dir(a.report_dir.as_deref(), &PathBuf::from("reports"), &stamp)
        .map_err(CliError::refused)?;
    // Any return without a report gives the claimed folder back.
    let _claim = report::ClaimGuard;
    // A first signal stops the gate (its report marked interrupted); a second, or the grace
    // running out, removes the staging and claimed folders, kills the subjects, exits 130.
    crate::interrupt::install();
    crate::interrupt::on_hard_exit(report::abort_staging);
    crate::interrupt::on_hard_exit(external::reaper::kill_all);
    crate::interrupt::set_graceful(true);
    let cfg = GateConfig {
        cases: a.cases,
        sync_cases: a.sync_cases,
        lowering_cases: a.lowering_cases,
        seconds: (a.seconds > 0.0).then_some(a.seconds),
        seed: a.seed,
        shard: a.shard,
        targets,
        subjects: a.subjects.clone(),
        subject_cases: a.subject_cases,
        arches: a.arch.map_or_else(|| Generation::ALL.to_vec(), |x| vec![x]),
        corpus_dir: a.corpus.clone(),
        no_corpus: a.no_corpus,
        threads: a
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .clamp(1, MAX_THREADS as usize),
        case_timeout: Duration::from_secs(a.case_timeout),
        stop: None,
        // Test hook: a smaller "full run" threshold for the reach failure.
        reach_required_from: debug_env("TPB_GATE_DEBUG_REACH_FROM").unwrap_or(gate::DEFAULT_CASES),
        debug_hang_case: debug_env("TPB_GATE_DEBUG_HANG_CASE"),
        debug_panic_case: None,
        debug_subject_panic_case: debug_env("TPB_GATE_DEBUG_SUBJECT_PANIC_CASE"),
    };
    let bar = (!a.quiet && std::io::stderr().is_terminal()).then(super::progress::gate_bar);
    // No terminal, no bar: a line every 10 s instead (issue 32), whatever the phase.
    let phase = Arc::new(super::progress::Phase::default());
    phase.set("replaying the corpus and the vectors, then generating cases");
    let ticker = (!a.quiet && !std::io::stderr().is_terminal()).then(|| {
        let every = debug_env("TPB_GATE_DEBUG_PROGRESS_SECS").unwrap_or(10);
        super::progress::Ticker::start(Arc::clone(&phase), Duration::from_secs(every))
    });
    let progress = |done: u64, total: u64| {
        phase.cases(done, total);
        if done < total {
            phase.set("generating cases");
        }
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    };
    // Subject panics are caught and reported as findings; keep stderr clean.
    super::panic_hook::install_quiet();
    external::set_case_timeout(cfg.case_timeout / 2);
    let mut run = gate::run(&cfg, Some(&progress));
    phase.set("minimising the divergences and writing the report");
    run.external = gate::bench::external_runs(&cfg, &run);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // A subject the run could not open is bad usage: no report.
    for f in &run.failures {
        if let GateFailure::Subject { error, .. } = f {
            return Err(CliError::refused(error));
        }
    }
    // Nothing to triage, or interrupted: no subject process is started again (issue 19);
    // findings are then reproduced on core and oracle only.
    let triage_subjects: &[SubjectSpec] =
        if run.findings.is_empty() || crate::interrupt::stop_requested() {
            &[]
        } else {
            &cfg.subjects
        };
    let engines = Judge::open_each(triage_subjects, &cfg.arches()).map_err(CliError::refused)?;
    let triaged = triage::triage(&run.findings, &engines, &cfg.subjects);
    super::panic_hook::install_loud(report::abort_staging);
    let model = report::ReportModel::of_gate(&cfg, &run, &triaged, &iso);
    let files = report::files(&model);
    report::write_dir(&dir, &files).map_err(CliError::refused)?;
    // The report on disk is the record: a closed stdout must not change the exit code.
    drop(ticker);
    let verdict = crate::report::verdict(&run);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "gate: {verdict}: {} generated cases over {} targets{}, {} corpus files, {} vectors; \
         {} distinct divergence(s) ({}), {} failure(s); {:.1} s, {}",
        run.generated(),
        run.targets.len(),
        if run.stopped_early {
            " (stopped early)"
        } else {
            ""
        },
        run.targets.iter().map(|(_, s)| s.corpus_files).sum::<u64>(),
        run.vector_files.iter().map(|v| v.vectors).sum::<u64>(),
        run.findings.distinct(),
        model.root_causes_line(),
        run.failures.len(),
        run.elapsed.as_secs_f64(),
        super::progress::whole_rate(
            run.generated() as f64 / run.gen_elapsed.as_secs_f64().max(1e-9),
            "cases/s"
        )
    );
    // A line per subject, its spec (a path or command) [`super::shown`].
    for l in model.subject_lines() {
        let _ = writeln!(out, "{}", super::shown(&l));
    }
    for f in &run.failures {
        eprintln!("tpbconform: {}", super::shown(&f.to_string()));
    }
    // Root causes only, each with its short replay (the file form, from the report folder),
    // and how many divergences are folded under it (issue 32).
    // (`model.divergences` are the records of `triaged`, in order.)
    let records = triaged.iter().zip(&model.divergences);
    for (d, r) in records.filter(|(d, _)| d.caused_by.is_none()) {
        let folded = triaged.iter().filter(|f| f.caused_by == Some(d.number));
        let folded = match folded.count() {
            0 => String::new(),
            n => format!("; {n} more, probably caused by #{}", d.number),
        };
        let _ = writeln!(
            out,
            "  #{} {} {}{}\n     (cd {} && {})",
            d.number,
            d.finding.target_name(),
            super::shown(&d.finding.headline(Some(d.count))),
            folded,
            crate::triage::shell_word(&dir.display().to_string()),
            r.replay_file
        );
    }
    let _ = writeln!(
        out,
        "report: {}",
        super::shown(&dir.join("summary.md").display().to_string())
    );
    Ok(if run.bad_input() {
        EXIT_BAD_INPUT
    } else if verdict == crate::report::run_json::PASS
        || (verdict == crate::report::run_json::INCOMPLETE && a.allow_partial)
    {
        EXIT_OK
    } else {
        EXIT_INVALID
    })
}
