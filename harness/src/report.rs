//! Gate reports: `summary.md`, `divergences.jsonl`, `junit.xml`, `index.html`,
//! `run.json` ([`crate::run_json`]) and one raw file per divergence
//! (`divergences/NNN-<target>.bin`).
//!
//! # Contracts
//!
//! - **Determinism.** [`render`] is a pure function of the [`GateRun`], the
//!   triaged findings and the [`Timing`]. Every line whose content depends on
//!   the clock (timestamp, durations, throughput, thread count) contains the
//!   marker [`TIMING_MARKER`] and nothing else that matters, so stripping the
//!   lines that contain it leaves byte-identical reports for the same seed.
//! - **Never overwrite, refuse at once.** [`claim_dir`] creates the report
//!   folder before any case runs: an existing `--report-dir` is refused
//!   ([`ReportDirError::Exists`], exit 2) right away, and the default
//!   `reports/<UTC timestamp>/` takes the first free `-N` suffix atomically,
//!   so concurrent runs never share a folder.
//! - **Never half-written.** [`write_dir`] writes every file with
//!   [`crate::atomic::write_atomic`] into a hidden staging folder next to the
//!   final one (`.<name>.staging-<pid>-<token>`, holding a marker file with
//!   that same suffix), then renames it onto the claimed (empty) folder:
//!   readers see an empty folder or a complete report. A Ctrl-C / SIGTERM
//!   handler calls [`abort_staging`], which removes the staging folder; a
//!   staging folder left by a SIGKILL is removed by the next run
//!   ([`cleanup_stale`]) once its process is gone, and only if its marker
//!   proves tpbconform made it.

use crate::arch::Arch;
use crate::atomic::write_atomic;
use crate::engine::bundle_from_input;
use crate::explain::explain_bundle;
use crate::findings::Origin;
use crate::gate::{GateRun, OUTCOMES};
use crate::subjects::hex;
use crate::targets::Target;
use crate::triage::Triaged;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Marker of clock-dependent lines.
pub const TIMING_MARKER: &str = "[timing]";

/// Clock-dependent facts of a run.
#[derive(Clone, Debug, Default)]
pub struct Timing {
    /// UTC timestamp `YYYY-MM-DDTHH:MM:SSZ`.
    pub timestamp: String,
}

/// Report-folder problems (exit 2).
#[derive(Debug)]
pub enum ReportDirError {
    /// The requested folder exists already.
    Exists(PathBuf),
    /// The folder could not be created or written.
    Io {
        /// Path.
        path: PathBuf,
        /// Error.
        error: io::Error,
    },
}

impl std::fmt::Display for ReportDirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportDirError::Exists(p) => write!(
                f,
                "{}: report folder exists already; refusing to overwrite (choose another \
                 --report-dir)",
                p.display()
            ),
            ReportDirError::Io { path, error } => {
                write!(f, "{}: cannot write report: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for ReportDirError {}

/// `(YYYYMMDDTHHMMSSZ, YYYY-MM-DDTHH:MM:SSZ)` for the current UTC time.
pub fn utc_now() -> (String, String) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_stamp(secs)
}

/// `(compact, iso)` UTC stamps of a Unix time (civil-from-days, proleptic
/// Gregorian).
pub fn utc_stamp(secs: u64) -> (String, String) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, mi, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        format!("{y:04}{m:02}{d:02}T{h:02}{mi:02}{s:02}Z"),
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z"),
    )
}

/// Claims the report folder before the run starts: creates `explicit`
/// (refused with [`ReportDirError::Exists`] if anything is there), or the
/// first free `root/<stamp>`, `root/<stamp>-1`, ... Creating a folder is
/// atomic, so two concurrent runs never get the same one. The folder stays
/// empty until [`write_dir`] renames the finished report onto it; a run that
/// ends early removes it again with [`release_claim`].
pub fn claim_dir(
    explicit: Option<&Path>,
    root: &Path,
    stamp: &str,
) -> Result<PathBuf, ReportDirError> {
    let ioe = |path: &Path, error: io::Error| ReportDirError::Io {
        path: path.to_path_buf(),
        error,
    };
    let create_parent = |p: &Path| match p.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => std::fs::create_dir_all(d).map_err(|e| ioe(d, e)),
        None => Ok(()),
    };
    let claimed = if let Some(p) = explicit {
        if std::fs::symlink_metadata(p).is_ok() {
            return Err(ReportDirError::Exists(p.to_path_buf()));
        }
        create_parent(p)?;
        match std::fs::create_dir(p) {
            Ok(()) => p.to_path_buf(),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(ReportDirError::Exists(p.to_path_buf()))
            }
            Err(e) => return Err(ioe(p, e)),
        }
    } else {
        std::fs::create_dir_all(root).map_err(|e| ioe(root, e))?;
        let mut n = 0u32;
        loop {
            let p = if n == 0 {
                root.join(stamp)
            } else {
                root.join(format!("{stamp}-{n}"))
            };
            match std::fs::create_dir(&p) {
                Ok(()) => break p,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(ioe(&p, e)),
            }
        }
    };
    if let Ok(mut g) = CLAIMED.lock() {
        *g = Some(claimed.clone());
    }
    Ok(claimed)
}

/// Removes the folder [`claim_dir`] claimed if it is still empty (a run that
/// ends without a report).
pub fn release_claim() {
    let p = CLAIMED.lock().ok().and_then(|mut g| g.take());
    if let Some(p) = p {
        let _ = std::fs::remove_dir(p);
    }
}

static CLAIMED: Mutex<Option<PathBuf>> = Mutex::new(None);
static STAGING: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Removes the staging folder of a report being written, if any, and the
/// still-empty claimed folder (for signal handlers and fatal errors).
pub fn abort_staging() {
    let p = STAGING.lock().ok().and_then(|mut g| g.take());
    if let Some(p) = p {
        let _ = std::fs::remove_dir_all(p);
    }
    release_claim();
}

/// Name of the marker file inside a staging folder; its content is
/// [`marker_text`] of the folder's own `<pid>-<token>` suffix.
const STAGING_MARKER: &str = ".tpbconform-staging";
const STAGING_INFIX: &str = ".staging-";

fn marker_text(suffix: &str) -> String {
    format!("tpbconform report staging {suffix}\n")
}

/// A fresh `<pid>-<token>` suffix (the token only has to differ between
/// runs of the same pid).
fn staging_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in nanos.to_le_bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{}-{h:016x}", std::process::id())
}

fn staging_name(final_dir: &Path, suffix: &str) -> PathBuf {
    let name = final_dir
        .file_name()
        .map_or_else(|| "report".into(), |n| n.to_string_lossy().to_string());
    final_dir
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!(".{name}{STAGING_INFIX}{suffix}"))
}

/// Removes the staging folders in `parent` that a killed `tpbconform` left:
/// only a folder named `.<name>.staging-<pid>-<token>` that holds the marker
/// file whose content names that same `<pid>-<token>`, and whose process is
/// gone (Linux: no `/proc/<pid>`; elsewhere nothing is removed). Anything
/// else, whatever its name, is left alone.
pub fn cleanup_stale(parent: &Path) {
    let proc_root = Path::new("/proc");
    if !proc_root.join("self").exists() {
        return;
    }
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        let Some((_, suffix)) = n
            .starts_with('.')
            .then(|| n.rsplit_once(STAGING_INFIX))
            .flatten()
        else {
            continue;
        };
        let Some(pid) = suffix
            .split_once('-')
            .and_then(|(p, _)| p.parse::<u32>().ok())
        else {
            continue;
        };
        let ours = e.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::read(e.path().join(STAGING_MARKER))
                .is_ok_and(|m| m == marker_text(suffix).as_bytes());
        if ours && pid != std::process::id() && !proc_root.join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Writes `files` (`relative path`, bytes) as the folder `final_dir`,
/// atomically (see the module docs). `final_dir` must be absent or the
/// empty folder this process claimed with [`claim_dir`].
pub fn write_dir(final_dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), ReportDirError> {
    let ioe = |path: &Path, error: io::Error| ReportDirError::Io {
        path: path.to_path_buf(),
        error,
    };
    let parent = final_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| ioe(parent, e))?;
    cleanup_stale(parent);
    let claimed = CLAIMED
        .lock()
        .ok()
        .and_then(|g| g.clone())
        .is_some_and(|c| c == final_dir);
    if !claimed && std::fs::symlink_metadata(final_dir).is_ok() {
        return Err(ReportDirError::Exists(final_dir.to_path_buf()));
    }
    let suffix = staging_suffix();
    let staging = staging_name(final_dir, &suffix);
    std::fs::create_dir(&staging).map_err(|e| ioe(&staging, e))?;
    if let Ok(mut g) = STAGING.lock() {
        *g = Some(staging.clone());
    }
    let result = (|| {
        let marker = staging.join(STAGING_MARKER);
        write_atomic(&marker, marker_text(&suffix).as_bytes()).map_err(|e| ioe(&marker, e))?;
        for (rel, bytes) in files {
            let p = staging.join(rel);
            if let Some(d) = p.parent() {
                std::fs::create_dir_all(d).map_err(|e| ioe(d, e))?;
            }
            write_atomic(&p, bytes).map_err(|e| ioe(&p, e))?;
        }
        std::fs::remove_file(&marker).map_err(|e| ioe(&marker, e))?;
        // rename(2) replaces the empty claimed folder atomically; a folder
        // that is not empty (someone else's) makes it fail.
        std::fs::rename(&staging, final_dir).map_err(|e| match e.kind() {
            io::ErrorKind::DirectoryNotEmpty | io::ErrorKind::AlreadyExists => {
                ReportDirError::Exists(final_dir.to_path_buf())
            }
            _ => ioe(final_dir, e),
        })?;
        if let Ok(d) = std::fs::File::open(parent) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if let Ok(mut g) = STAGING.lock() {
        *g = None;
    }
    if claimed && result.is_ok() {
        if let Ok(mut g) = CLAIMED.lock() {
            *g = None;
        }
    }
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

fn secs(d: std::time::Duration) -> f64 {
    d.as_secs_f64()
}

fn rate(n: u64, s: f64) -> String {
    if s <= 0.0 {
        return "-".into();
    }
    let r = n as f64 / s;
    if r >= 1e6 {
        format!("{:.2}M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1}k", r / 1e3)
    } else {
        format!("{r:.0}")
    }
}

fn status(run: &GateRun) -> &'static str {
    crate::run_json::verdict(run)
}

fn target_failed(run: &GateRun, t: Target) -> bool {
    run.findings.0.keys().any(|k| k.0 == t.name())
        || run
            .failures
            .iter()
            .any(|f| failure_target(f) == Some(t.name()))
}

fn failure_target(f: &crate::gate::GateFailure) -> Option<&str> {
    use crate::gate::GateFailure as G;
    match f {
        G::Timeout { target, .. }
        | G::InternalPanic { target, .. }
        | G::TargetDidNotRun { target } => Some(target),
        G::Unreached { .. } => Some(REACH_CASE),
        G::Corpus { path, .. } => Target::gate_targets()
            .into_iter()
            .find(|t| {
                Path::new(path)
                    .components()
                    .any(|c| c.as_os_str() == t.name())
            })
            .map(Target::name),
        _ => None,
    }
}

/// Unified diff of two dumps (`left_name` → `right_name`).
pub fn unified(left: &str, right: &str, left_name: &str, right_name: &str) -> String {
    similar::TextDiff::from_lines(left, right)
        .unified_diff()
        .context_radius(64)
        .header(left_name, right_name)
        .to_string()
}

fn annotated(t: &str, input: &[u8], arch: Arch) -> String {
    if Target::from_name(t).is_some_and(Target::is_bundle) || t == "vectors" {
        explain_bundle(&bundle_from_input(input), "bundle", false, arch).0
    } else {
        let mut s = String::new();
        for (i, row) in input.chunks(16).enumerate() {
            let _ = write!(s, "{:04x}  ", i * 16);
            for b in row {
                let _ = write!(s, "{b:02x} ");
            }
            s.push('\n');
        }
        s
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// FACTS' codename of a generation.
fn arch_codename(a: Arch) -> &'static str {
    match a {
        Arch::V2 => "Sunda",
        Arch::V3 => "Cayman",
        Arch::V4 => "Mariana",
        Arch::V5 => "Maverick",
    }
}

/// `summary.md`.
pub fn summary_md(run: &GateRun, triaged: &[Triaged], timing: &Timing) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# tpbconform gate report\n");
    let _ = writeln!(
        s,
        "- result: **{}** — {} distinct divergence(s), {} divergent case(s), {} other failure(s)",
        status(run),
        run.findings.distinct(),
        run.findings.total(),
        run.failures.len()
    );
    let _ = writeln!(
        s,
        "- seed: `{:#x}`, shard: {}, generated cases per target requested: {}",
        run.seed, run.shard, run.cases
    );
    let targets: Vec<&str> = run.targets.iter().map(|(t, _)| t.name()).collect();
    let _ = writeln!(s, "- targets: {}", targets.join(", "));
    let _ = writeln!(
        s,
        "- generated cases run: {} ({})",
        run.generated(),
        if run.stopped_early {
            "stopped early"
        } else {
            "all planned"
        }
    );
    let gens: Vec<&str> = run.arches.iter().map(|(a, _)| a.name()).collect();
    let _ = writeln!(s, "- generations: {}", gens.join(", "));
    let _ = writeln!(s, "- {TIMING_MARKER} generated at {}", timing.timestamp);
    let _ = writeln!(
        s,
        "- {TIMING_MARKER} budget: {}, threads: {}",
        run.seconds
            .map_or_else(|| "none".to_string(), |b| format!("{b} s")),
        run.threads
    );
    if !run.failures.is_empty() {
        let _ = writeln!(s, "\n## Failures\n");
        for f in &run.failures {
            let _ = writeln!(s, "- {f}");
        }
    }
    let _ = writeln!(s, "\n## Targets\n");
    let _ = writeln!(
        s,
        "| target | status | corpus files | corpus diverged | generated / planned | valid | near-valid | raw | diverged |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (t, st) in &run.targets {
        let corpus = if st.corpus_present {
            st.corpus_files.to_string()
        } else {
            "(no folder)".into()
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} / {} | {} | {} | {} | {} |",
            t,
            if target_failed(run, *t) { "FAIL" } else { "ok" },
            corpus,
            st.corpus_diverged,
            st.ran,
            st.planned,
            st.by_kind[0],
            st.by_kind[1],
            st.by_kind[2],
            st.diverged
        );
    }
    if !run.arches.is_empty() {
        let _ = writeln!(s, "\n## Generations\n");
        let _ = writeln!(
            s,
            "Generated case i runs under the (i mod {})-th generation; the corpus and the \
             vectors run under each.\n",
            run.arches.len()
        );
        let _ = writeln!(s, "| generation | status | generated cases | diverged |");
        let _ = writeln!(s, "|---|---|---:|---:|");
        for (a, st) in &run.arches {
            let failed = st.diverged > 0 || run.findings.0.values().any(|k| k.finding.arch == *a);
            let _ = writeln!(
                s,
                "| {a} {} | {} | {} | {} |",
                arch_codename(*a),
                if failed { "FAIL" } else { "ok" },
                st.ran,
                st.diverged
            );
        }
    }
    if !run.subjects.is_empty() {
        let _ = writeln!(s, "\n## Subjects under test (each judged against core)\n");
        let _ = writeln!(
            s,
            "Judged on the corpus, the vectors and the first {} generated cases of each target \
             they support.\n",
            run.subject_cases
        );
        let _ = writeln!(
            s,
            "| subject | says it is | capabilities | calls | time in subject | cases/s | core in-process cases/s (same cases) | restarts |"
        );
        let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|");
        for (name, caps) in &run.subjects {
            let ext = run.external.iter().find(|e| e.spec == *name);
            let cell = |f: &dyn Fn(&crate::gate::ExternalRun) -> String| ext.map_or("-".into(), f);
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
                md_escape(name),
                cell(&|e| md_escape(&e.stats.hello_name)),
                caps,
                cell(&|e| e.stats.calls.to_string()),
                cell(&|e| format!("{:.2} s", e.stats.busy.as_secs_f64())),
                cell(&|e| format!("{:.0}", e.stats.rate())),
                cell(&|e| e.core_rate.map_or("-".into(), |r| format!("{r:.0}"))),
                cell(&|e| e.stats.restarts.to_string()),
            );
        }
        let _ = writeln!(s);
        for (t, who) in &run.unsupported {
            let _ = writeln!(s, "- {t}: not supported by {}", who.join(", "));
        }
        for e in &run.external {
            if e.stats.stderr_tail.is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "\n### stderr of `{}` (last {} lines)\n\n```text",
                md_escape(&e.spec),
                e.stats.stderr_tail.len()
            );
            for l in &e.stats.stderr_tail {
                let _ = writeln!(s, "{}", l.replace("```", "'''"));
            }
            let _ = writeln!(s, "```");
        }
    }
    if !run.corpus.is_empty() {
        let _ = writeln!(s, "\n## Corpus folders\n");
        let _ = writeln!(s, "| folder | replayed through | files | diverged |");
        let _ = writeln!(s, "|---|---|---:|---:|");
        for c in &run.corpus {
            let _ = writeln!(
                s,
                "| {}/ | {} | {} | {} |",
                c.name,
                c.routes.join(", "),
                c.files,
                c.diverged
            );
        }
    }
    if !run.vector_files.is_empty() {
        let _ = writeln!(s, "\n## Vector files (checked against core and oracle)\n");
        let _ = writeln!(
            s,
            "| file | checks (vector × generation) | failed | vectors of no generation run |"
        );
        let _ = writeln!(s, "|---|---:|---:|---:|");
        for v in &run.vector_files {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                v.path, v.vectors, v.failed, v.other_generations
            );
        }
    }
    if !run.reach.is_empty() {
        let _ = writeln!(s, "\n## Reach: value classes of every field\n");
        let _ = writeln!(
            s,
            "Generated cases, one in {} of each target: each field's declared value classes \
             (enum members and non-members, table edges, zero / one / max, reserved zero / \
             nonzero, equal nonzero reserved bytes; group argument counts; the generation a case \
             ran under) and how often they \
             were hit. A complete unsharded run of every target with the default case count \
             fails when a class is never hit.\n",
            crate::gate::REACH_SAMPLE
        );
        let _ = writeln!(s, "| field | classes hit (count) |");
        let _ = writeln!(s, "|---|---|");
        for (field, classes) in run.reach.table() {
            let cells: Vec<String> = classes.iter().map(|(c, n)| format!("{c} ({n})")).collect();
            let _ = writeln!(s, "| `{field}` | {} |", cells.join(", "));
        }
        let unhit = run.reach.unhit();
        if unhit.is_empty() {
            let _ = writeln!(s, "\nUnexercised classes: none.");
        } else {
            let _ = writeln!(s, "\nUnexercised classes ({}):\n", unhit.len());
            for c in &unhit {
                let _ = writeln!(s, "- `{c}`");
            }
        }
    }
    let _ = writeln!(s, "\n## Coverage: core verdict × outcome\n");
    let _ = writeln!(
        s,
        "Rows are core's verdict (validator predicate, decode field or mnemonic, LUT / gate \
         result); columns the differential outcome. Corpus and generated cases.\n"
    );
    for (t, st) in &run.targets {
        let _ = writeln!(s, "### {t}\n");
        let _ = writeln!(s, "| core verdict | {} |", OUTCOMES.join(" | "));
        let _ = writeln!(s, "|---|{}", "---:|".repeat(OUTCOMES.len()));
        if st.coverage.is_empty() {
            let _ = writeln!(s, "| (no case ran) |{}", " |".repeat(OUTCOMES.len()));
        }
        for (k, c) in &st.coverage {
            let cells: Vec<String> = c.iter().map(u64::to_string).collect();
            let _ = writeln!(s, "| `{}` | {} |", md_escape(k), cells.join(" | "));
        }
        s.push('\n');
    }
    let _ = writeln!(s, "## Divergences\n");
    if triaged.is_empty() {
        let _ = writeln!(s, "None.\n");
    }
    for d in triaged {
        let f = &d.finding;
        let _ = writeln!(
            s,
            "### {}. `{}` — {} [{}]\n",
            d.number,
            f.target,
            md_escape(&f.signature()),
            f.class
        );
        let _ = writeln!(s, "- predicate / field: `{}`", f.key);
        let _ = writeln!(s, "- occurrences: {}; first: {}", d.count, f.origin);
        let _ = writeln!(s, "- input ({} bytes): `{}`", f.input.len(), hex(&f.input));
        let _ = writeln!(
            s,
            "- minimised ({} bytes): `{}`",
            d.minimized.len(),
            hex(&d.minimized)
        );
        if let Origin::Vector { expected, .. } = &f.origin {
            let _ = writeln!(s, "- expected by the vector file: `{expected}`");
        }
        let _ = writeln!(s, "- replay: `{}`", d.replay);
        let _ = writeln!(
            s,
            "- replay (file, from this report folder): `{}`",
            d.replay_file
        );
        let _ = writeln!(s, "\nMinimised input, annotated (core's reading):\n");
        let _ = writeln!(
            s,
            "```\n{}\n```\n",
            annotated(&f.target, &d.minimized, f.arch).trim_end()
        );
        let _ = writeln!(
            s,
            "Field-level diff ({} → {}) on the minimised input:\n",
            f.left_name, f.right_name
        );
        let diff = unified(&d.left_dump, &d.right_dump, &f.left_name, &f.right_name);
        let diff = if diff.trim().is_empty() {
            let w = f.left_name.len().max(f.right_name.len()) + 1;
            format!(
                "(dumps equal)\n{:w$} {}\n{:w$} {}",
                format!("{}:", f.left_name),
                d.min_finding.left,
                format!("{}:", f.right_name),
                d.min_finding.right
            )
        } else {
            diff
        };
        let _ = writeln!(s, "```diff\n{}\n```\n", diff.trim_end());
    }
    if !run.notes.is_empty() {
        let _ = writeln!(s, "## Notes\n");
        for n in &run.notes {
            let _ = writeln!(s, "- {n}");
        }
        s.push('\n');
    }
    let _ = writeln!(s, "## Throughput\n");
    let _ = writeln!(
        s,
        "Per target: cases per second of worker time (one core); total: generated cases per \
         wall-clock second of the generated phase, all threads.\n"
    );
    for (t, st) in &run.targets {
        let _ = writeln!(
            s,
            "- {TIMING_MARKER} {t}: {} cases in {:.3} s worker time = {} cases/s per core",
            st.ran,
            secs(st.busy),
            rate(st.ran, secs(st.busy))
        );
    }
    let _ = writeln!(
        s,
        "- {TIMING_MARKER} total: {} generated cases in {:.3} s wall = {} cases/s ({} threads); whole run {:.3} s",
        run.generated(),
        secs(run.gen_elapsed),
        rate(run.generated(), secs(run.gen_elapsed)),
        run.threads,
        secs(run.elapsed)
    );
    s
}

/// `divergences.jsonl`: one object per distinct divergence.
pub fn divergences_jsonl(triaged: &[Triaged]) -> String {
    let mut s = String::new();
    for d in triaged {
        let f = &d.finding;
        let origin = match &f.origin {
            Origin::Corpus { path } => serde_json::json!({"corpus": path}),
            Origin::Vector {
                path,
                line,
                expected,
            } => serde_json::json!({"vector": path, "line": line, "expected": expected}),
            Origin::Generated { index, kind } => {
                serde_json::json!({"generated": index, "kind": kind.name()})
            }
        };
        let o = serde_json::json!({
            "number": d.number,
            "target": f.target,
            "class": f.class,
            "signature": {"key": f.key, "left": f.left_verdict, "right": f.right_verdict},
            "count": d.count,
            "origin": origin,
            "arch": f.arch.name(),
            "input": hex(&f.input),
            "minimized": hex(&d.minimized),
            "replay": d.replay,
            "replay_file": d.replay_file,
            "file": d.file,
            "left_name": f.left_name,
            "right_name": f.right_name,
            "left": d.min_finding.left,
            "right": d.min_finding.right,
        });
        s.push_str(&o.to_string());
        s.push('\n');
    }
    s
}

/// XML-escapes text and attribute values.
pub fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => o.push_str("&#xFFFD;"),
            c => o.push(c),
        }
    }
    o
}

/// The `junit.xml` testcase of the value-class reach: an error per
/// [`crate::gate::GateFailure::Unreached`] (the unhit classes).
pub const REACH_CASE: &str = "reach";

/// `junit.xml`: one testcase per target, one for the value-class reach (when
/// bundle or stream targets ran) plus one for the vector files.
pub fn junit_xml(run: &GateRun, triaged: &[Triaged]) -> String {
    let mut cases: Vec<JunitCase> = Vec::new();
    for (t, _) in &run.targets {
        cases.push((t.name().to_string(), Vec::new(), Vec::new()));
    }
    if !run.reach.is_empty() {
        cases.push((REACH_CASE.to_string(), Vec::new(), Vec::new()));
    }
    cases.push(("vectors".into(), Vec::new(), Vec::new()));
    let vectors_at = cases.len() - 1;
    let idx = |cases: &Vec<JunitCase>, name: &str| {
        cases.iter().position(|c| c.0 == name).unwrap_or(vectors_at)
    };
    for d in triaged {
        if !cases.iter().any(|c| c.0 == d.finding.target) {
            cases.push((d.finding.target.clone(), Vec::new(), Vec::new()));
        }
        let i = idx(&cases, &d.finding.target);
        cases[i].1.push(format!(
            "#{} {} [{}] x{}\nreplay: {}",
            d.number,
            d.finding.signature(),
            d.finding.class,
            d.count,
            d.replay
        ));
    }
    for f in &run.failures {
        let i = idx(&cases, failure_target(f).unwrap_or("vectors"));
        cases[i].2.push(f.to_string());
    }
    // A cut-short run is not a green one: every target that did not run all
    // its planned cases gets an `incomplete` error.
    if run.stopped_early {
        for (t, st) in &run.targets {
            if st.ran < st.planned {
                let i = idx(&cases, t.name());
                cases[i].2.push(format!(
                    "{INCOMPLETE_PREFIX}ran {} of {} planned generated cases (run cut short)",
                    st.ran, st.planned
                ));
            }
        }
    }
    let properties = [
        ("verdict".to_string(), status(run).to_string()),
        ("seed".to_string(), format!("{:#x}", run.seed)),
        ("shard".to_string(), run.shard.to_string()),
        (
            format!("{TIMING_MARKER} elapsed_seconds"),
            format!("{:.3}", secs(run.elapsed)),
        ),
    ];
    junit_doc(&cases, &properties)
}

/// One `<testcase>` of `junit.xml`: name, divergence lines (one
/// `<failure>`), other failures (one `<error>` each; `type="incomplete"`
/// when the text starts with [`INCOMPLETE_PREFIX`], else `type="gate"`).
pub type JunitCase = (String, Vec<String>, Vec<String>);

/// Prefix of a [`JunitCase`] error that marks a target the run did not
/// finish (written as `<error type="incomplete">`).
pub const INCOMPLETE_PREFIX: &str = "incomplete: ";

/// The `junit.xml` document of `cases` with suite `properties`.
pub fn junit_doc(cases: &[JunitCase], properties: &[(String, String)]) -> String {
    let failures = cases.iter().filter(|c| !c.1.is_empty()).count();
    let errors = cases
        .iter()
        .filter(|c| c.1.is_empty() && !c.2.is_empty())
        .count();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"tpbconform gate\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">",
        cases.len()
    );
    let _ = writeln!(
        s,
        "  <testsuite name=\"tpbconform.gate\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">",
        cases.len()
    );
    let _ = writeln!(s, "    <properties>");
    for (name, value) in properties {
        let _ = writeln!(
            s,
            "      <property name=\"{}\" value=\"{}\"/>",
            xml_escape(name),
            xml_escape(value)
        );
    }
    let _ = writeln!(s, "    </properties>");
    for (name, fails, errs) in cases {
        let _ = writeln!(
            s,
            "    <testcase classname=\"tpbconform.gate\" name=\"{}\">",
            xml_escape(name)
        );
        if !fails.is_empty() {
            let _ = writeln!(
                s,
                "      <failure type=\"divergence\" message=\"{} distinct divergence(s)\">{}</failure>",
                fails.len(),
                xml_escape(&fails.join("\n"))
            );
        }
        for e in errs {
            let kind = if e.starts_with(INCOMPLETE_PREFIX) {
                "incomplete"
            } else {
                "gate"
            };
            let _ = writeln!(
                s,
                "      <error type=\"{kind}\" message=\"{}\"/>",
                xml_escape(e)
            );
        }
        let _ = writeln!(s, "    </testcase>");
    }
    let _ = writeln!(s, "  </testsuite>\n</testsuites>");
    s
}

fn side_by_side(left: &str, right: &str, names: (&str, &str)) -> String {
    let diff = similar::TextDiff::from_lines(left, right);
    let l: Vec<&str> = left.lines().collect();
    let r: Vec<&str> = right.lines().collect();
    let mut s = format!(
        "<table class=\"sbs\"><tr><th>{}</th><th>{}</th></tr>\n",
        xml_escape(names.0),
        xml_escape(names.1)
    );
    let row = |s: &mut String, a: Option<&str>, b: Option<&str>, cls: &str| {
        let _ = writeln!(
            s,
            "<tr class=\"{cls}\"><td>{}</td><td>{}</td></tr>",
            xml_escape(a.unwrap_or("")),
            xml_escape(b.unwrap_or(""))
        );
    };
    for op in diff.ops() {
        let (tag, or, nr) = op.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal => {
                for (i, j) in or.zip(nr) {
                    row(&mut s, l.get(i).copied(), r.get(j).copied(), "eq");
                }
            }
            _ => {
                let (a, b): (Vec<usize>, Vec<usize>) = (or.collect(), nr.collect());
                for k in 0..a.len().max(b.len()) {
                    row(
                        &mut s,
                        a.get(k).and_then(|&i| l.get(i).copied()),
                        b.get(k).and_then(|&j| r.get(j).copied()),
                        "chg",
                    );
                }
            }
        }
    }
    s.push_str("</table>\n");
    s
}

/// `index.html`: self-contained (inline CSS, no script, no server).
pub fn index_html(run: &GateRun, triaged: &[Triaged], timing: &Timing) -> String {
    let mut s = String::new();
    s.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <title>tpbconform gate report</title>\n<style>\n\
         body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}\n\
         pre,code,td{font-family:ui-monospace,monospace;font-size:0.9em}\n\
         table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}\n\
         .PASS{color:#070}.FAIL{color:#b00}.hot{background:#fdd}\n\
         .sbs .chg td{background:#ffe9b3}.sbs td{white-space:pre}\n\
         .timing{color:#777}\n</style></head><body>\n",
    );
    let st = status(run);
    let _ = writeln!(
        s,
        "<h1>tpbconform gate: <span class=\"{st}\">{st}</span></h1>"
    );
    let _ = writeln!(
        s,
        "<p>seed <code>{:#x}</code>, shard {}, {} generated cases, {} distinct divergence(s), {} failure(s)</p>",
        run.seed,
        run.shard,
        run.generated(),
        run.findings.distinct(),
        run.failures.len()
    );
    let _ = writeln!(
        s,
        "<p class=\"timing\">{TIMING_MARKER} generated at {}, {:.3} s</p>",
        xml_escape(&timing.timestamp),
        secs(run.elapsed)
    );
    if !run.failures.is_empty() {
        s.push_str("<h2>Failures</h2><ul>\n");
        for f in &run.failures {
            let _ = writeln!(s, "<li>{}</li>", xml_escape(&f.to_string()));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("<h2>Targets</h2>\n<table><tr><th>target</th><th>status</th><th>corpus</th><th>generated</th><th>diverged</th></tr>\n");
    for (t, st) in &run.targets {
        let bad = target_failed(run, *t);
        let _ = writeln!(
            s,
            "<tr><td>{t}</td><td class=\"{}\">{}</td><td>{}</td><td>{} / {}</td><td>{}</td></tr>",
            if bad { "FAIL" } else { "PASS" },
            if bad { "FAIL" } else { "ok" },
            st.corpus_files,
            st.ran,
            st.planned,
            st.diverged + st.corpus_diverged
        );
    }
    s.push_str("</table>\n<h2>Divergences</h2>\n");
    if triaged.is_empty() {
        s.push_str("<p>None.</p>\n");
    }
    for d in triaged {
        let f = &d.finding;
        let _ = writeln!(
            s,
            "<h3 id=\"d{}\">{}. {} — {} [{}]</h3>",
            d.number,
            d.number,
            xml_escape(&f.target),
            xml_escape(&f.signature()),
            xml_escape(&f.class)
        );
        let _ = writeln!(
            s,
            "<p>occurrences: {}; first: {}</p>\n<p>replay: <code>{}</code><br>file: <code>{}</code></p>",
            d.count,
            xml_escape(&f.origin.to_string()),
            xml_escape(&d.replay),
            xml_escape(&d.replay_file)
        );
        s.push_str("<h4>Minimised input, annotated</h4>\n<pre>");
        for line in annotated(&f.target, &d.minimized, f.arch).lines() {
            if line.contains("<== FAILED") {
                let _ = writeln!(s, "<span class=\"hot\">{}</span>", xml_escape(line));
            } else {
                let _ = writeln!(s, "{}", xml_escape(line));
            }
        }
        s.push_str("</pre>\n<h4>Field dumps, side by side</h4>\n");
        s.push_str(&side_by_side(
            &d.left_dump,
            &d.right_dump,
            (&f.left_name, &f.right_name),
        ));
    }
    if !run.notes.is_empty() {
        s.push_str("<h2>Notes</h2><ul>\n");
        for n in &run.notes {
            let _ = writeln!(s, "<li>{}</li>", xml_escape(n));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body></html>\n");
    s
}

/// All files of a report, as `(relative path, bytes)`.
pub fn render(run: &GateRun, triaged: &[Triaged], timing: &Timing) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![
        (
            "summary.md".to_string(),
            summary_md(run, triaged, timing).into_bytes(),
        ),
        (
            "divergences.jsonl".to_string(),
            divergences_jsonl(triaged).into_bytes(),
        ),
        (
            "junit.xml".to_string(),
            junit_xml(run, triaged).into_bytes(),
        ),
        (
            "index.html".to_string(),
            index_html(run, triaged, timing).into_bytes(),
        ),
        (
            crate::run_json::FILE.to_string(),
            crate::run_json::render(run).into_bytes(),
        ),
    ];
    for d in triaged {
        files.push((d.file.clone(), d.minimized.clone()));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps() {
        assert_eq!(utc_stamp(0).1, "1970-01-01T00:00:00Z");
        assert_eq!(utc_stamp(1_709_164_800).0, "20240229T000000Z");
        assert_eq!(utc_stamp(951_782_400).1, "2000-02-29T00:00:00Z");
    }

    #[test]
    fn claim_dir_never_reuses_and_write_dir_fills_the_claim() {
        let root = std::env::temp_dir().join(format!("tpb-report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("S")).unwrap();
        let c = claim_dir(None, &root, "S").unwrap();
        assert_eq!(c, root.join("S-1"));
        assert!(c.is_dir(), "claimed at once");
        assert_eq!(claim_dir(None, &root, "S").unwrap(), root.join("S-2"));
        assert!(matches!(
            claim_dir(Some(&root.join("S")), &root, "x"),
            Err(ReportDirError::Exists(_))
        ));
        // Concurrent default claims of one stamp get distinct folders.
        let got: Vec<PathBuf> = (0..8)
            .map(|_| {
                let root = root.clone();
                std::thread::spawn(move || claim_dir(None, &root, "T").unwrap())
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        let mut uniq = got.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), 8, "{got:?}");
        let r = claim_dir(Some(&root.join("R")), &root, "x").unwrap();
        write_dir(&r, &[("a/b.txt".into(), b"x".to_vec())]).unwrap();
        assert_eq!(std::fs::read(root.join("R/a/b.txt")).unwrap(), b"x");
        assert!(write_dir(&root.join("R"), &[]).is_err());
        assert!(write_dir(&root.join("S-1"), &[]).is_err(), "not claimed");
        let left: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(left.is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn cleanup_stale_removes_only_marked_staging_of_dead_processes() {
        let root = std::env::temp_dir().join(format!("tpb-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // A pid that is not running (pid_max is at most 2^22 on Linux).
        let dead = 4_194_999u32;
        let ours = root.join(format!(".r.staging-{dead}-00ab"));
        std::fs::create_dir(&ours).unwrap();
        std::fs::write(
            ours.join(STAGING_MARKER),
            marker_text(&format!("{dead}-00ab")),
        )
        .unwrap();
        // Same name pattern, no marker / a marker naming another token /
        // the old `.staging-<pid>` form: not ours, kept.
        let foreign = [
            root.join(format!(".r.staging-{dead}-00cd")),
            root.join(format!(".q.staging-{dead}-00ef")),
            root.join(format!(".p.staging-{dead}")),
        ];
        for f in &foreign {
            std::fs::create_dir(f).unwrap();
            std::fs::write(f.join("data"), b"precious").unwrap();
        }
        std::fs::write(
            foreign[1].join(STAGING_MARKER),
            marker_text(&format!("{dead}-0000")),
        )
        .unwrap();
        cleanup_stale(&root);
        if Path::new("/proc/self").exists() {
            assert!(!ours.exists(), "marked staging of a dead pid removed");
        }
        for f in &foreign {
            assert!(f.join("data").exists(), "{} kept", f.display());
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
