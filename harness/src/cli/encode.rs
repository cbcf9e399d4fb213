//! `tpbconform encode`: `decode`'s JSONL → bundles (tpb_core's encoder).

use super::{CliError, CliResult, EXIT_INVALID, EXIT_OK};
use crate::input::{read_source, source_name};
use crate::subject::{field_kind, CoreSubject, Kind, Subject, Value};
use serde_json::Value as J;
use std::io::Write;

/// One parsed JSONL record.
enum Record {
    /// A bundle description to encode.
    Bundle {
        opcode: u8,
        fields: Vec<(String, Value)>,
    },
    /// A `decode` error record (`"error"` key): nothing to encode.
    Error(String),
}

/// A JSON hex string (no comments) via the shared [`crate::input::hex_nibbles`].
fn parse_hex_bytes(s: &str) -> Option<Vec<u8>> {
    let digits = crate::input::hex_nibbles(s.as_bytes(), false).ok()?;
    digits
        .len()
        .is_multiple_of(2)
        .then(|| crate::input::pack_nibbles(&digits))
}

fn json_to_value(name: &str, v: &J) -> Result<Value, String> {
    match (field_kind(name), v) {
        (_, J::Number(n)) => n
            .as_u64()
            .map(Value::Int)
            .ok_or_else(|| format!("field `{name}`: {n} is not an unsigned 64-bit integer")),
        (Kind::Bytes, J::String(s)) => parse_hex_bytes(s)
            .map(Value::Bytes)
            .ok_or_else(|| format!("field `{name}`: {s:?} is not an even-length hex string")),
        (Kind::Name, J::String(s)) => Ok(Value::Name(s.clone())),
        (Kind::Int, J::String(s)) => Err(format!(
            "field `{name}`: expected a number, got the string {s:?}"
        )),
        (_, other) => Err(format!(
            "field `{name}`: expected a number or string, got {other}"
        )),
    }
}

fn parse_record(v: &J) -> Result<Record, String> {
    let o = v.as_object().ok_or("expected a JSON object")?;
    if let Some(e) = o.get("error") {
        return Ok(Record::Error(e.to_string()));
    }
    let opcode = match o.get("opcode") {
        Some(J::String(s)) => {
            let h = s
                .strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .ok_or_else(|| format!("\"opcode\": {s:?} is not of the form \"0xNN\""))?;
            u8::from_str_radix(h, 16).map_err(|_| format!("\"opcode\": {s:?} is not a hex byte"))?
        }
        Some(J::Number(n)) => n
            .as_u64()
            .and_then(|n| u8::try_from(n).ok())
            .ok_or_else(|| format!("\"opcode\": {n} is not a byte"))?,
        Some(other) => return Err(format!("\"opcode\": expected \"0xNN\", got {other}")),
        None => return Err("missing \"opcode\"".to_string()),
    };
    let fo = match o.get("fields") {
        Some(J::Object(m)) => m,
        Some(other) => return Err(format!("\"fields\": expected an object, got {other}")),
        None => return Err("missing \"fields\"".to_string()),
    };
    let mut fields = Vec::new();
    for (k, v) in fo {
        if k == "sync" {
            let s = v
                .as_object()
                .ok_or_else(|| format!("\"sync\": expected an object, got {v}"))?;
            for (sk, sv) in s {
                let name = format!("sync.{sk}");
                let val = json_to_value(&name, sv)?;
                fields.push((name, val));
            }
        } else {
            fields.push((k.clone(), json_to_value(k, v)?));
        }
    }
    Ok(Record::Bundle { opcode, fields })
}

/// Runs `encode`. Structural JSONL errors exit 2 before anything is written;
/// records the encoder rejects (and `decode` error records) are reported on
/// stderr and skipped, and the exit code is then 1.
pub fn run(files: &[String], hex: bool, output: Option<&str>) -> CliResult {
    let stdin = ["-".to_string()];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let mut records = Vec::new();
    for f in files {
        let source = source_name(f);
        let data = read_source(f)?;
        let text = std::str::from_utf8(&data).map_err(|e| {
            let line = data[..e.valid_up_to()]
                .iter()
                .filter(|&&c| c == b'\n')
                .count()
                + 1;
            CliError::Jsonl {
                source: source.clone(),
                line,
                message: "invalid UTF-8".to_string(),
            }
        })?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |message: String| CliError::Jsonl {
                source: source.clone(),
                line: i + 1,
                message,
            };
            let v: J = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            let r = parse_record(&v).map_err(bad)?;
            records.push((source.clone(), i + 1, r));
        }
    }
    if records.is_empty() {
        return Err(CliError::Input(crate::input::InputError::Empty {
            source: files.join(", "),
        }));
    }
    let mut bin = Vec::new();
    let mut text = String::new();
    let mut any_bad = false;
    for (source, line, r) in &records {
        match r {
            Record::Error(e) => {
                any_bad = true;
                eprintln!("tpbconform: {source}:{line}: skipped: decode error record ({e})");
            }
            Record::Bundle { opcode, fields } => match CoreSubject.encode(*opcode, fields) {
                Ok(b) => {
                    bin.extend_from_slice(&b);
                    text.push_str(&crate::subject::hex(&b));
                    text.push('\n');
                }
                Err(field) => {
                    any_bad = true;
                    eprintln!(
                        "tpbconform: {source}:{line}: cannot encode opcode 0x{opcode:02X}: bad \
                         field `{field}`"
                    );
                }
            },
        }
    }
    let bytes = if hex { text.into_bytes() } else { bin };
    match output {
        Some(path) => crate::atomic::write_atomic(path, &bytes)
            .map_err(|e| CliError::Output(format!("{path}: {e}")))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)?;
            out.flush()?;
        }
    }
    Ok(if any_bad { EXIT_INVALID } else { EXIT_OK })
}
