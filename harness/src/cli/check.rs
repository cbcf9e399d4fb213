//! `tpbconform check`: validate bundles with tpb_core, serving one generation (`--arch`).

use super::{emit, judge, location, mnemonic_of, opcode_str, CliResult, Format, Validator};
use super::{EXIT_INVALID, EXIT_OK};
use crate::arch::Arch;
use crate::input::stream_bundles;
use std::io::Write;

/// Runs `check`. Output: one line (text) or one JSON object (jsonl) per bundle.
pub fn run(
    files: &[String],
    hex: bool,
    validator: Validator,
    format: Format,
    arch: Arch,
) -> CliResult {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut any_invalid = false;
    for l in stream_bundles(files, hex) {
        let l = &l?;
        let verdict = judge(&l.bytes, validator, arch);
        any_invalid |= verdict.is_some();
        let op = l.bytes[0];
        match format {
            Format::Jsonl => {
                let o = serde_json::json!({
                    "index": l.index,
                    "opcode": opcode_str(op),
                    "mnemonic": mnemonic_of(op),
                    "valid": verdict.is_none(),
                    "failed": verdict.as_ref().map(|v| v.0.clone()),
                });
                emit(&mut out, &o.to_string())?;
            }
            Format::Text => {
                let m = mnemonic_of(op).unwrap_or("?");
                let line = match &verdict {
                    None => format!(
                        "#{} {} {m}: valid ({})",
                        l.index,
                        opcode_str(op),
                        location(l)
                    ),
                    Some((f, Some(off))) => format!(
                        "#{} {} {m}: INVALID: {f} (byte 0x{off:02X}) ({})",
                        l.index,
                        opcode_str(op),
                        location(l)
                    ),
                    Some((f, None)) => format!(
                        "#{} {} {m}: INVALID: {f} ({})",
                        l.index,
                        opcode_str(op),
                        location(l)
                    ),
                };
                emit(&mut out, &line)?;
            }
        }
    }
    out.flush()?;
    Ok(if any_invalid { EXIT_INVALID } else { EXIT_OK })
}
