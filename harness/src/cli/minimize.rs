//! `tpbconform minimize` ([`crate::minimize`]); exit codes: [`super::help::MINIMIZE`].

use super::{CliError, CliResult, EXIT_BAD_INPUT, EXIT_INVALID, EXIT_OK};
use crate::minimize::FolderPlan;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct MinimizeArgs {
    /// `corpus/` (every <target>/ folder in it) or one `corpus/<target>/`.
    #[arg(value_name = "CORPUS_DIR")]
    pub dir: PathBuf,
    /// Write the kept set into this new folder (it must not exist) instead
    /// of deleting the other files in place.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Print, per folder, the files an in-place run would delete, and
    /// change nothing.
    #[arg(long, conflicts_with = "output")]
    pub dry_run: bool,
}

/// `<target>: N files -> M (one per signature)[, K entries skipped]`.
fn counts(s: &FolderPlan) -> String {
    let skipped = (!s.skipped.is_empty()).then(|| format!(", {} entries skipped", s.skipped.len()));
    format!(
        "{}: {} files -> {} (one per signature){}",
        s.target,
        s.kept.len() + s.dropped.len(),
        s.kept.len(),
        skipped.unwrap_or_default()
    )
}

fn warn_skipped(s: &FolderPlan) {
    for w in &s.skipped {
        eprintln!(
            "tpbconform: warning: skipped {}",
            super::shown(&w.to_string())
        );
    }
}

pub fn run(a: MinimizeArgs) -> CliResult {
    super::panic_hook::install_quiet();
    let mut out = std::io::stdout().lock();
    if a.dry_run {
        let plans = crate::minimize::plan(&a.dir).map_err(CliError::refused)?;
        let mut total = 0;
        for p in &plans {
            warn_skipped(p);
            writeln!(
                out,
                "{} — dry run, {} to delete",
                counts(p),
                p.dropped.len()
            )?;
            for d in &p.dropped {
                writeln!(
                    out,
                    "  would delete {}",
                    super::shown(&d.display().to_string())
                )?;
            }
            total += p.dropped.len();
        }
        writeln!(
            out,
            "dry run: {total} file(s) would be deleted; nothing changed"
        )?;
        return Ok(EXIT_OK);
    }
    match crate::minimize::minimize(&a.dir, a.output.as_deref()) {
        Ok(stats) => {
            for s in &stats {
                warn_skipped(s);
                writeln!(out, "{}", counts(s))?;
            }
            Ok(EXIT_OK)
        }
        Err(e) => {
            eprintln!("tpbconform: error: {}", super::shown(&e.to_string()));
            Ok(if e.changed_something() {
                EXIT_INVALID
            } else {
                EXIT_BAD_INPUT
            })
        }
    }
}
