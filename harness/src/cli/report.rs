//! `tpbconform report merge DIR... [--output DIR]`: one report folder from
//! the report folders of a sharded gate ([`crate::report_merge`]).
//!
//! Exit codes: 0 = every shard present, complete and clean; 1 = some shard
//! found a divergence or failed; 2 = refused (missing / duplicated /
//! incomplete shard, shards of different runs, unreadable or malformed
//! folder, existing output) and nothing written.

use super::{CliResult, EXIT_BAD_INPUT, EXIT_INVALID, EXIT_OK};
use crate::report;
use crate::report_merge;
use std::path::{Path, PathBuf};

/// Arguments of `tpbconform report`.
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// What to do with reports.
    #[command(subcommand)]
    pub command: ReportCommand,
}

/// Subcommands of `tpbconform report`.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum ReportCommand {
    /// Merge the report folders of `gate --shard i/N` (one per shard, all N)
    /// into one report folder: summary.md, divergences.jsonl (deduplicated
    /// by signature), junit.xml, index.html, run.json.
    ///
    /// Refuses (exit 2, nothing written) when the shards disagree on seed,
    /// case count, targets or tool version, when a shard is missing or given
    /// twice, or when a shard is INCOMPLETE. Exit 1 when any shard found a
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

/// Runs `report`.
pub fn run(a: ReportArgs) -> CliResult {
    let ReportCommand::Merge { dirs, output } = a.command;
    let fail = |e: &dyn std::fmt::Display| {
        // Give back the folder claimed below (removed only while empty).
        report::release_claim();
        eprintln!("tpbconform: report merge: {e}");
        Ok(EXIT_BAD_INPUT)
    };
    let (stamp, _) = report::utc_now();
    // Claimed at once (an existing path, dangling symlinks included, is
    // refused); write_dir fills the claimed folder.
    let dir = match report::claim_dir(
        output.as_deref(),
        Path::new("reports"),
        &format!("{stamp}-merged"),
    ) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    let mut shards = Vec::with_capacity(dirs.len());
    for d in &dirs {
        match report_merge::load(d) {
            Ok(s) => shards.push(s),
            Err(e) => return fail(&e),
        }
    }
    let merged = match report_merge::merge(shards) {
        Ok(m) => m,
        Err(e) => return fail(&e),
    };
    if let Err(e) = report::write_dir(&dir, &report_merge::render(&merged)) {
        return fail(&e);
    }
    println!(
        "report merge: {}: {} shards, {} generated cases, {} distinct divergence(s), {} failure(s)",
        merged.meta.verdict,
        merged.shards.len(),
        merged.meta.targets.iter().map(|t| t.ran).sum::<u64>(),
        merged.meta.distinct_divergences,
        merged.meta.failures.len()
    );
    for d in &merged.divergences {
        println!(
            "  #{} {} x{} (shards {})",
            d.number,
            d.key.0,
            d.count,
            d.shards.join(", ")
        );
    }
    println!("report: {}", dir.join("summary.md").display());
    Ok(if merged.passed() {
        EXIT_OK
    } else {
        EXIT_INVALID
    })
}
