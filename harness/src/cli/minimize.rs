//! `tpbconform minimize`: keep the smallest set of corpus files covering
//! the same signatures (see [`crate::minimize`]).
//!
//! Exit codes: 0 = done; 1 = a deletion failed part way (the files deleted
//! before it stay deleted; every signature is still covered); 2 = unreadable
//! input, not a corpus folder or an existing `--output` (nothing changed).

use super::{CliResult, EXIT_BAD_INPUT, EXIT_INVALID, EXIT_OK};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `tpbconform minimize`.
#[derive(clap::Args, Debug, Clone)]
pub struct MinimizeArgs {
    /// `corpus/` (every <target>/ folder in it) or one `corpus/<target>/`.
    #[arg(value_name = "CORPUS_DIR")]
    pub dir: PathBuf,
    /// Write the kept set into this new folder (it must not exist) instead
    /// of deleting the other files in place.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// Runs `minimize`.
pub fn run(a: MinimizeArgs) -> CliResult {
    std::panic::set_hook(Box::new(|_| {}));
    match crate::minimize::minimize(&a.dir, a.output.as_deref()) {
        Ok(stats) => {
            let mut out = std::io::stdout().lock();
            for s in stats {
                for w in &s.skipped {
                    eprintln!("tpbconform: warning: skipped {w}");
                }
                writeln!(
                    out,
                    "{}: {} files -> {} (one per signature){}",
                    s.target,
                    s.before,
                    s.after,
                    if s.skipped.is_empty() {
                        String::new()
                    } else {
                        format!(", {} entries skipped", s.skipped.len())
                    }
                )?;
            }
            Ok(EXIT_OK)
        }
        Err(e) => {
            eprintln!("tpbconform: error: {e}");
            Ok(if e.changed_something() {
                EXIT_INVALID
            } else {
                EXIT_BAD_INPUT
            })
        }
    }
}
