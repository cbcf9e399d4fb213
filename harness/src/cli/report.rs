//! `tpbconform report merge` ([`crate::report::merge`]); exit codes: [`super::help::REPORT_MERGE`].

use super::{CliResult, EXIT_BAD_INPUT, EXIT_BROKEN_PIPE, EXIT_INVALID, EXIT_OK};
use crate::report::{self, merge, shard, ReportModel};
use std::io::Write as _;
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand, Debug, Clone)]
pub enum ReportCommand {
    /// Merge the report folders of `gate --shard i/N` (one per shard, all N)
    /// into one report folder: summary.md, divergences.jsonl (deduplicated
    /// by signature), junit.xml, index.html, run.json.
    ///
    /// Each shard folder is verified, not trusted: its integrity record
    /// (SHA-256 of every file, in run.json) and its files against each other
    /// (case counts, divergence records, verdicts); the merged verdict is
    /// recomputed from them.
    ///
    /// Refuses (exit 2, nothing written) an edited or self-contradicting
    /// folder, shards that disagree on seed, case count, targets or tool
    /// version, a shard missing, given twice or INCOMPLETE, and a run that
    /// checked nothing (no target, zero cases). Exit 1 when any shard found a
    /// divergence or failed; 0 otherwise.
    #[command(after_help = super::help::REPORT_MERGE)]
    Merge {
        /// Shard report folders (each holds run.json and divergences.jsonl).
        #[arg(value_name = "DIR", required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder (must not exist). Default: reports/<UTC timestamp>-merged/.
        #[arg(long, short, value_name = "DIR")]
        output: Option<PathBuf>,
    },
}

pub fn run(a: ReportCommand) -> CliResult {
    merge_shards(a).or_else(|e| {
        eprintln!("tpbconform: report merge: {}", super::shown(&e.to_string()));
        Ok(EXIT_BAD_INPUT)
    })
}

/// A refusal is its message (exit 2).
fn merge_shards(a: ReportCommand) -> Result<u8, String> {
    let ReportCommand::Merge { dirs, output } = a;
    // Verify every shard before anything is created, not even `reports/`.
    if let Some(o) = output
        .as_ref()
        .filter(|o| std::fs::symlink_metadata(o).is_ok())
    {
        return Err(report::ReportDirError::Exists(o.clone()).to_string());
    }
    let shards: Vec<_> = dirs
        .iter()
        .map(|d| shard::load(d).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let merged = merge::merge(shards).map_err(|e| e.to_string())?;
    let (stamp, _) = report::utc_now();
    let stamp = format!("{stamp}-merged");
    let dir = report::claim_dir(output.as_deref(), Path::new("reports"), &stamp)
        .map_err(|e| e.to_string())?;
    let _claim = report::ClaimGuard;
    // A signal while writing (exit 130) removes the staging folder and the claim.
    crate::interrupt::on_hard_exit(report::abort_staging);
    if let Some(ms) = super::debug_env("TPB_REPORT_DEBUG_STAGING_PAUSE_MS") {
        report::folder::set_staging_pause_ms(ms);
    }
    report::write_dir(&dir, &report::files(&merged)).map_err(|e| e.to_string())?;
    match print_summary(&merged, &dir) {
        Ok(()) => {}
        // `report merge | head -1`: the report is written; stop quietly.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(EXIT_BROKEN_PIPE),
        Err(e) => return Err(format!("stdout: {e}")),
    }
    Ok(if merged.passed() {
        EXIT_OK
    } else {
        EXIT_INVALID
    })
}

fn print_summary(m: &ReportModel, dir: &Path) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "report merge: {}: {} shards, {} generated cases, {} distinct divergence(s), {} failure(s)",
        m.meta.verdict,
        m.shards.len(),
        m.generated(),
        m.meta.distinct_divergences,
        m.meta.failures.len()
    )?;
    for d in &m.divergences {
        writeln!(
            out,
            "  #{} {} x{} (shards {})",
            d.number,
            d.target,
            d.count,
            d.shards.join(", ")
        )?;
    }
    writeln!(
        out,
        "report: {}",
        super::shown(&dir.join("summary.md").display().to_string())
    )?;
    out.flush()
}
