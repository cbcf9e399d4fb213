//! `tpbconform explain`: an annotated dump of each bundle with its stream context.

use super::check_output::{error_text, where_};
use super::color::ColorChoice;
use super::stream_context::{text, walk_streams, StreamStep};
use super::CliResult;
use super::{EXIT_INVALID, EXIT_OK};
use crate::explain::{explain_bundle, explain_tail};
use crate::generation::Generation;
use std::io::Write;

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    /// Read hex text (one bundle per line) instead of raw binary.
    #[arg(long)]
    pub hex: bool,
    /// Hardware generation (v2 Sunda, v3 Cayman, v4 Mariana, v5 Maverick).
    #[arg(long, default_value = "v2")]
    pub arch: Generation,
    /// Colour the blamed bytes: `auto` = when stdout is a terminal and
    /// `NO_COLOR` is unset or empty.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Input files (`-` = stdin; none = stdin).
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
}

pub fn run(a: ExplainArgs) -> CliResult {
    let color = a.color.for_stdout();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut any_invalid = false;
    walk_streams(&a.files, a.hex, a.arch, |step| match step {
        StreamStep::Bundle {
            index,
            loaded: l,
            seen,
        } => {
            if index > 0 {
                writeln!(out)?;
            }
            let at = where_(&l.source, l.index, l.offset, l.line, None);
            let header = format!("bundle #{index} ({at})");
            // `check`'s verdict is the walker's; the second half of a 128-byte instruction has none.
            let e = match seen.opcode {
                Some(_) => explain_bundle(&l.bytes, &header, color, a.arch),
                None => explain_tail(&l.bytes, &header),
            };
            // Exit as `check` does: an invalid bundle or a broken stream rule is 1.
            any_invalid |= !e.valid || !seen.errors.is_empty();
            let context = text(&seen, &l.bytes).replace('\n', "\n  ");
            writeln!(out, "{}\n  {context}\n{}", e.head, e.body)?;
            Ok(())
        }
        StreamStep::End {
            path,
            count,
            errors,
        } => {
            any_invalid |= !errors.is_empty();
            if count > 0 && !errors.is_empty() {
                let source = crate::input::source_name(path);
                writeln!(out, "\nend of {}:", super::shown(&source))?;
                for e in &errors {
                    writeln!(out, "  {}", error_text(e))?;
                }
            }
            Ok(())
        }
    })?;
    out.flush()?;
    Ok(if any_invalid { EXIT_INVALID } else { EXIT_OK })
}
