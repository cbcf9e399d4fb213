//! `tpbconform explain`: an annotated dump of each bundle.

use super::color::ColorChoice;
use super::{emit, location, CliResult};
use super::{EXIT_INVALID, EXIT_OK};
use crate::arch::Arch;
use crate::explain::explain_bundle;
use crate::input::stream_bundles;
use std::io::Write;

/// Runs `explain`.
pub fn run(files: &[String], hex: bool, arch: Arch, color: ColorChoice) -> CliResult {
    let color = color.for_stdout();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut any_invalid = false;
    for (i, l) in stream_bundles(files, hex).enumerate() {
        let l = &l?;
        if i > 0 {
            emit(&mut out, "")?;
        }
        let header = format!("bundle #{} ({})", l.index, location(l));
        let (text, valid) = explain_bundle(&l.bytes, &header, color, arch);
        any_invalid |= !valid;
        emit(&mut out, &text)?;
    }
    out.flush()?;
    Ok(if any_invalid { EXIT_INVALID } else { EXIT_OK })
}
