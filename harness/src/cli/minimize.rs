//! `tpbconform minimize`: keep the smallest set of corpus files covering
//! the same signatures (see [`crate::minimize`]).
//!
//! Exit codes: 0 = done; 2 = unreadable input or not a corpus folder
//! (nothing changed).

use super::{CliResult, EXIT_BAD_INPUT, EXIT_OK};
use std::path::PathBuf;

/// Arguments of `tpbconform minimize`.
#[derive(clap::Args, Debug, Clone)]
pub struct MinimizeArgs {
    /// `corpus/` (every <target>/ folder in it) or one `corpus/<target>/`.
    #[arg(value_name = "CORPUS_DIR")]
    pub dir: PathBuf,
    /// Write the kept set here instead of replacing the folder in place.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// Runs `minimize`.
pub fn run(a: MinimizeArgs) -> CliResult {
    std::panic::set_hook(Box::new(|_| {}));
    match crate::minimize::minimize(&a.dir, a.output.as_deref()) {
        Ok(stats) => {
            for s in stats {
                println!(
                    "{}: {} files -> {} (one per signature)",
                    s.target, s.before, s.after
                );
            }
            Ok(EXIT_OK)
        }
        Err(e) => {
            eprintln!("tpbconform: error: {e}");
            Ok(EXIT_BAD_INPUT)
        }
    }
}
