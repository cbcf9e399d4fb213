//! `tpbconform subject-worker lib:PATH` (hidden): the worker process of a
//! `lib:` subject, see [`crate::external::worker`]. Exit 0 when stdin ends,
//! 2 when the library does not load or a request line is malformed.

use super::{CliResult, EXIT_BAD_INPUT, EXIT_OK};
use crate::external::worker;
use crate::subjects::SubjectSpec;

/// Runs the worker for `spec` (must be `lib:PATH`).
pub fn run(spec: &str) -> CliResult {
    let path = match spec.parse::<SubjectSpec>() {
        Ok(SubjectSpec::Lib(p)) => p,
        _ => {
            eprintln!("tpbconform subject-worker: expected lib:PATH, got `{spec}`");
            return Ok(EXIT_BAD_INPUT);
        }
    };
    match worker::serve(&path, std::io::stdin().lock(), std::io::stdout().lock()) {
        Ok(()) => Ok(EXIT_OK),
        Err(e) => {
            eprintln!("tpbconform subject-worker: {e}");
            Ok(EXIT_BAD_INPUT)
        }
    }
}
