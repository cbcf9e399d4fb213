//! `tpbconform explain`: an annotated dump of each bundle, with its stream context (each file is
//! one stream, [`super::stream_context`]).

use super::color::ColorChoice;
use super::stream_context::{error_text, text, StreamContext};
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
    let paths: Vec<String> = if files.is_empty() {
        vec!["-".to_string()]
    } else {
        files.to_vec()
    };
    // Bundle numbers run across all inputs; each input is one stream.
    let mut first = 0usize;
    for path in &paths {
        let mut stream = StreamContext::new(arch);
        let mut count = 0usize;
        for l in stream_bundles(std::slice::from_ref(path), hex) {
            let l = &l?;
            if first + count > 0 {
                emit(&mut out, "")?;
            }
            count += 1;
            let header = format!("bundle #{} ({})", first + l.index, location(l));
            let seen = stream.next(&l.bytes);
            let (body, valid) = explain_bundle(&l.bytes, &header, color, arch);
            any_invalid |= !valid;
            let mut lines = body.splitn(2, '\n');
            let head = lines.next().unwrap_or("");
            emit(&mut out, head)?;
            emit(
                &mut out,
                &format!("  {}", text(&seen, &l.bytes).replace('\n', "\n  ")),
            )?;
            if let Some(rest) = lines.next() {
                emit(&mut out, rest)?;
            }
        }
        let end = stream.finish();
        if count > 0 && !end.is_empty() {
            emit(&mut out, "")?;
            emit(
                &mut out,
                &format!("end of {}:", crate::input::source_name(path)),
            )?;
            for e in &end {
                emit(&mut out, &format!("  {}", error_text(e)))?;
            }
        }
        first += count;
    }
    out.flush()?;
    Ok(if any_invalid { EXIT_INVALID } else { EXIT_OK })
}
