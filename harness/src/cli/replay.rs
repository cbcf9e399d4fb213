//! `tpbconform replay`: re-run one input through a target, as the gate does; exit codes:
//! [`super::help::REPLAY`].

use super::{CliError, CliResult, EXIT_INVALID, EXIT_OK};
use crate::fuzz_entry::{replay_names, replay_targets};
use crate::generation::Generation;
use crate::input::{open_source, read_capped, source_name, Lines};
use crate::judge::{Divergence, Judge};
use crate::kinds;
use crate::report::byte_map::answer_detail;
use crate::subjects::{hex, SubjectSpec};
use std::io::Write;

#[derive(clap::Args, Debug, Clone)]
pub struct ReplayArgs {
    /// The target to run the input through: a fuzz target (fuzz/fuzz_targets/, e.g. `luts`:
    /// every target of it, the input mapped as that fuzz target maps it) or a registry target
    /// (a gate target, or a fuzz-only one such as `structured_diff`).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(replay_names()))]
    pub target: String,
    /// The input as hex digits (128 for a bundle target).
    #[arg(long, value_name = "HEX", conflicts_with = "file")]
    pub hex: Option<String>,
    /// Read FILE as hex text: one input per line, `#` comments, blank lines skipped.
    #[arg(long, requires = "file")]
    pub hex_file: bool,
    /// A raw input file (e.g. divergences/001-<target>.bin or a fuzz
    /// artifact, of any length: read as the fuzz target reads its input; `-` = stdin), at most
    /// 1 MiB.
    #[arg(value_name = "FILE", required_unless_present = "hex")]
    pub file: Option<String>,
    /// A subject under test to replay on as well (repeatable): `lib:PATH`
    /// or `cmd:COMMAND`, judged against core as in the gate.
    #[arg(long = "subject", value_name = "SPEC")]
    pub subjects: Vec<SubjectSpec>,
    /// The generation the subjects serve.
    #[arg(long, default_value = "v2")]
    pub arch: Generation,
    /// Seconds to wait for each answer of a --subject, 1 to 86400 (a hang
    /// is a Timeout divergence after this long).
    #[arg(long, value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=super::gate::MAX_CASE_TIMEOUT))]
    pub case_timeout: u64,
}

fn bad(source: &str, line: usize, message: String) -> CliError {
    CliError::bad(format!("{source}:{line}"), message)
}

fn empty(source: &str) -> CliError {
    CliError::bad(source, "empty input: no bytes to replay")
}

fn parse_hex_line(source: &str, line: usize, text: &str) -> Result<Vec<u8>, CliError> {
    let digits = crate::input::hex_nibbles(text.as_bytes(), false).map_err(|e| {
        let (found, offset) = (e.found, e.index);
        let m = format!(
            "bad hex digit {found:?} at offset {offset} (expected 0-9, a-f, A-F){}",
            crate::input::bom_hint(found)
        );
        bad(source, line, m)
    })?;
    if digits.is_empty() {
        return Err(empty(source));
    }
    if digits.len() % 2 == 1 {
        let m = format!(
            "odd number of hex digits ({}); each byte needs two",
            digits.len()
        );
        return Err(bad(source, line, m));
    }
    Ok(crate::input::pack_nibbles(&digits))
}

/// Hands `each` every input `a` names as `(source[:line], bytes)`: a raw FILE whole (any length,
/// as a fuzz target takes it); typed hex for bundle targets exactly 64 bytes.
fn visit_inputs(
    a: &ReplayArgs,
    mut each: impl FnMut(String, Vec<u8>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let targets = replay_targets(&a.target);
    let bundles = !targets.is_empty() && targets.iter().all(|t| t.is_bundle());
    let check = |src: &str, line: usize, b: Vec<u8>| {
        if bundles && b.len() != 64 {
            let m = format!(
                "{} bytes, a bundle target needs exactly 64 (128 hex digits)",
                b.len()
            );
            return Err(bad(src, line, m));
        }
        Ok(b)
    };
    if let Some(h) = &a.hex {
        let src = "--hex";
        let b = parse_hex_line(src, 1, h)?;
        return each(src.into(), check(src, 1, b)?);
    }
    let arg = a.file.clone().unwrap_or_default();
    let src = source_name(&arg);
    if !a.hex_file {
        let data = read_capped(&arg)?;
        return each(src, data);
    }
    let mut lines = Lines::new(&src, open_source(&arg)?);
    let mut any = false;
    while let Some(next) = lines.next_line() {
        let (n, l) = next?;
        let l = String::from_utf8_lossy(l);
        let body = l.split('#').next().unwrap_or("");
        if body.trim().is_empty() {
            continue;
        }
        let b = parse_hex_line(&src, n, body)?;
        let b = check(&src, n, b)?;
        any = true;
        each(format!("{src}:{n}"), b)?;
    }
    if !any {
        return Err(empty(&src));
    }
    Ok(())
}

/// An input as hex: whole up to 64 bytes, else its first 64 bytes and its length.
fn shown(input: &[u8]) -> String {
    match input.len() {
        0 => "(0 bytes)".to_string(),
        n if n <= 64 => hex(input),
        n => format!("{}… ({n} bytes)", hex(&input[..64])),
    }
}

/// Under a bundle divergence, what each side's rejection is about, as in the report.
fn why(out: &mut impl std::io::Write, d: &Divergence) -> std::io::Result<()> {
    for (name, answer) in [
        (&d.left_name, &d.answers.left),
        (&d.right_name, &d.answers.right),
    ] {
        let Some(answer) = answer else { continue };
        if let Some(detail) = answer_detail(d.target.name(), &d.input, answer) {
            writeln!(out, "  {name} refuses: {detail}")?;
        }
    }
    Ok(())
}

pub fn run(a: ReplayArgs) -> CliResult {
    super::panic_hook::install_quiet();
    crate::external::set_case_timeout(std::time::Duration::from_secs(a.case_timeout));
    let mut out = std::io::stdout().lock();
    let e = Judge::open(&a.subjects, a.arch).map_err(CliError::refused)?;
    let who = if a.subjects.is_empty() {
        "core and oracle".to_string()
    } else {
        let s: Vec<String> = a.subjects.iter().map(|s| s.to_string()).collect();
        format!("core, oracle and {}", s.join(", "))
    };
    let targets = replay_targets(&a.target);
    let name = &a.target;
    let mut any = false;
    let mut agreed = false;
    visit_inputs(&a, |src, input| {
        // The input's name (a path and line) [`super::shown`].
        let src = super::shown(&src);
        let mut found = false;
        for &t in &targets {
            for d in e.compare(t, &input) {
                found = true;
                writeln!(out, "{src}: REPRODUCED\n{d}")?;
                why(&mut out, &d)?;
            }
            // Core vs oracle under every generation the fuzz entry runs the kind under
            // (fuzz_entry::check_judged).
            if !found && a.subjects.is_empty() {
                if let Some((Some(arch), d)) = kinds::of(t).check_every_generation(&e, t, &input) {
                    found = true;
                    writeln!(out, "{src}: REPRODUCED under {arch}\n{d}")?;
                    why(&mut out, &d)?;
                }
            }
        }
        if found {
            any = true;
        } else {
            agreed = true;
            writeln!(
                out,
                "{src}: agree: {who} agree on {name} input {}",
                shown(&input)
            )?;
        }
        Ok(())
    })?;
    if agreed && !a.subjects.is_empty() {
        // Replay asks each input alone; the gate asked in batches.
        writeln!(
            out,
            "note: replay asks a subject one input at a time; a gate divergence that does not \
             reproduce here may come from the subject's batch answers (an answer out of order \
             or left unwritten, a batch64 frame with a wrong seq): check its batch entry point \
             or framing"
        )?;
    }
    out.flush()?;
    Ok(if any { EXIT_INVALID } else { EXIT_OK })
}
