//! `tpbconform decode`: bundles → JSONL (tpb_core's decoder).

use super::stream_context::{json as stream_json, walk_streams, StreamStep};
use super::{
    emit, fields_json, mnemonic_of, mode_names, opcode_str, CliResult, EXIT_INVALID, EXIT_OK,
};
use crate::arch::Arch;
use std::io::Write;

/// The object `decode` prints for one bundle, and whether it decoded.
pub fn bundle_json(index: usize, bytes: &[u8; 64], arch: Arch) -> (serde_json::Value, bool) {
    match super::core_decode(bytes, arch) {
        Ok(d) => (
            serde_json::json!({
                "index": index,
                "opcode": opcode_str(d.opcode),
                "mnemonic": d.mnemonic,
                "fields": fields_json(&d),
                "mode_names": mode_names(&d),
            }),
            true,
        ),
        Err(e) => (
            serde_json::json!({
                "index": index,
                "opcode": opcode_str(bytes[0]),
                "mnemonic": mnemonic_of(bytes[0]),
                "error": format!("{} at byte offset 0x{:02X}", e.field, e.offset),
                "field": e.field.as_str(),
                "offset": e.offset,
            }),
            false,
        ),
    }
}

/// Runs `decode`: one JSON object per bundle; with `stream`, each carries its stream context
/// (`"stream"`, [`super::stream_context::json`]; each file is one stream).
pub fn run(files: &[String], hex: bool, arch: Arch, stream: bool) -> CliResult {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut any_bad = false;
    walk_streams(files, hex, arch, |step| {
        let StreamStep::Bundle {
            index,
            loaded: l,
            seen,
        } = step
        else {
            return Ok(());
        };
        let (mut o, ok) = bundle_json(index, &l.bytes, arch);
        any_bad |= !ok;
        if stream {
            if let Some(m) = o.as_object_mut() {
                m.insert("stream".into(), stream_json(&seen, &l.bytes));
            }
        }
        emit(&mut out, &o.to_string())
    })?;
    out.flush()?;
    Ok(if any_bad { EXIT_INVALID } else { EXIT_OK })
}
