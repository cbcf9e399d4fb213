//! `tpbconform encode`: `decode`'s JSONL → bundles, one line at a time; strict records and an
//! atomic `-o PATH` (the help text of `Encode` in `main.rs`, docs/guarantees.md E1).

use super::{mnemonic_of, shown, CliError, CliResult, EXIT_INVALID, EXIT_OK};
use crate::atomic::AtomicFile;
use crate::generation::Generation;
use crate::input::{open_source, source_name, Lines, Problem};
use crate::strict_json::{get, Json as J, Object};
use crate::subjects::registry::{self, mode_byte_name};
use crate::subjects::{FieldName, Value};
use std::io::Write;

/// The keys of a bundle record, as `decode` prints them (`stream`: the context `decode --stream`
/// adds, `record`: the record decoder's answer beside a skeleton, both ignored).
const BUNDLE_KEYS: &str =
    "index, opcode, mnemonic, fields, mode_names, stream, check, body, record";
/// The keys of a `decode` error record (`check`: `check`'s verdict words, `record`: the
/// record decoder's answer, `body`: an unmodelled body's note, all ignored).
const ERROR_KEYS: &str =
    "index, opcode, mnemonic, error, field, offset, stream, check, record, body";

enum Record {
    Bundle {
        opcode: u8,
        fields: Vec<(FieldName, Value)>,
    },
    /// A `decode` error record (`"error"` key): nothing to encode.
    Error(String),
}

fn parse_opcode(o: &Object<'_>) -> Result<u8, String> {
    match get(o, "opcode") {
        Some(J::Str(s)) => {
            let h = s
                .strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .ok_or_else(|| format!("\"opcode\": {s:?} is not of the form \"0xNN\""))?;
            u8::from_str_radix(h, 16).map_err(|_| format!("\"opcode\": {s:?} is not a hex byte"))
        }
        Some(n @ (J::U64(_) | J::I64(_) | J::F64(_))) => n
            .as_u64()
            .and_then(|n| u8::try_from(n).ok())
            .ok_or_else(|| format!("\"opcode\": {n} is not a byte")),
        Some(other) => Err(format!("\"opcode\": expected \"0xNN\", got {other}")),
        None => Err("missing \"opcode\"".to_string()),
    }
}

/// A `mnemonic` key, when present, must be the opcode's (null when it has none).
fn check_mnemonic(o: &Object<'_>, opcode: u8) -> Result<(), String> {
    let want = mnemonic_of(opcode);
    match (get(o, "mnemonic"), want) {
        (None, _) | (Some(J::Null), None) => Ok(()),
        (Some(J::Str(m)), Some(w)) if m == w => Ok(()),
        (Some(got), Some(w)) => Err(format!(
            "\"mnemonic\": {got} is not the mnemonic of opcode 0x{opcode:02X} (\"{w}\")"
        )),
        (Some(got), None) => Err(format!(
            "\"mnemonic\": {got} given, but opcode 0x{opcode:02X} has no mnemonic (expected null)"
        )),
    }
}

/// `mode_names`, when present, names each mode field's byte in `fields` (FACTS §2 \[H\]).
fn check_mode_names(o: &Object<'_>, fields: &[(FieldName, Value)]) -> Result<(), String> {
    let Some(names) = get(o, "mode_names") else {
        return Ok(());
    };
    let names = names
        .as_object()
        .ok_or_else(|| format!("\"mode_names\": expected an object, got {names}"))?;
    for (k, v) in names {
        let k: &str = k;
        let byte = fields
            .iter()
            .find(|(n, _)| n == k)
            .and_then(|(_, val)| match val {
                Value::Int(b) => u8::try_from(*b).ok(),
                _ => None,
            });
        let want = byte.and_then(|b| mode_byte_name(k, b));
        match want {
            Some(w) if v.as_str() == Some(w) => {}
            Some(w) => return Err(format!("\"mode_names\".\"{k}\": {v} is not \"{w}\"")),
            None => return Err(format!("\"mode_names\".\"{k}\": no such mode field byte")),
        }
    }
    Ok(())
}

fn parse_record(v: &J<'_>) -> Result<Record, String> {
    let o = v.as_object().ok_or("expected a JSON object")?;
    let is_error = get(o, "error").is_some();
    let allowed = if is_error { ERROR_KEYS } else { BUNDLE_KEYS };
    if let Some((k, _)) = o
        .iter()
        .find(|(k, _)| !allowed.split(", ").any(|a| a == &**k))
    {
        return Err(format!(
            "unknown key \"{k}\" (a {} record has only: {allowed})",
            if is_error { "decode error" } else { "bundle" },
        ));
    }
    if let Some(e) = get(o, "error") {
        return Ok(Record::Error(e.to_string()));
    }
    // `decode`'s skeleton of an opcode with no modelled record, or a 128-byte instruction's
    // second half: nothing to encode.
    if let Some(J::Str(b)) = get(o, "body") {
        return Ok(Record::Error(format!("body {b}")));
    }
    let opcode = parse_opcode(o)?;
    check_mnemonic(o, opcode)?;
    let fo = match get(o, "fields") {
        Some(J::Object(m)) => m,
        Some(other) => return Err(format!("\"fields\": expected an object, got {other}")),
        None => return Err("missing \"fields\"".to_string()),
    };
    let fields = crate::fields_json::fields_from_json(fo)?;
    check_mode_names(o, &fields)?;
    Ok(Record::Bundle { opcode, fields })
}

#[derive(clap::Args, Debug)]
pub struct EncodeArgs {
    /// Write hex lines instead of raw binary.
    #[arg(long)]
    pub hex: bool,
    /// Write to this file atomically instead of stdout.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<String>,
    /// Hardware generation (v2 Sunda, v3 Cayman, v4 Mariana, v5 Maverick): an opcode its
    /// compiler does not emit is refused (exit 1).
    #[arg(long, default_value = "v2")]
    pub arch: Generation,
    /// JSONL input files (`-` = stdin; none = stdin).
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
}

pub fn run(a: EncodeArgs) -> CliResult {
    let (files, hex, output, arch) = (&a.files[..], a.hex, a.output.as_deref(), a.arch);
    let stdin = ["-".to_string()];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let path = output.unwrap_or_default();
    let path_err = |e: std::io::Error| CliError::output(format!("{path}: {e}"));
    let mut file = output
        .map(AtomicFile::create)
        .transpose()
        .map_err(path_err)?;
    let mut stdout = std::io::stdout().lock();
    let out: &mut dyn Write = match &mut file {
        Some(f) => f,
        None => &mut stdout,
    };
    let (mut records, mut encoded, mut any_bad) = (0usize, 0usize, false);
    for f in files {
        let source = source_name(f);
        let input = open_source(f).map_err(|e| match e.problem {
            Problem::IsDirectory => CliError::bad(
                e.source,
                "is a directory, expected a file of JSON lines (as decode prints them)",
            ),
            _ => CliError::from(e),
        })?;
        let mut lines = Lines::new(&source, input);
        while let Some(next) = lines.next_line() {
            let (line, bytes) = next?;
            let bad =
                |m: String| CliError::bad(format!("{source}:{line}"), format!("bad jsonl: {m}"));
            let text = std::str::from_utf8(bytes).map_err(|_| bad("invalid UTF-8".into()))?;
            if text.trim().is_empty() {
                continue;
            }
            if text.starts_with('\u{FEFF}') {
                let hint = crate::input::bom_hint('\u{FEFF}');
                return Err(bad(format!("column 1: bad JSON{hint}")));
            }
            let v = crate::strict_json::parse(text).map_err(|e| bad(e.to_string()))?;
            records += 1;
            let encoded_or_why = match parse_record(&v).map_err(bad)? {
                Record::Error(e) => Err(format!("skipped: decode error record ({e})")),
                Record::Bundle { opcode, .. } if !arch.emits(opcode) => Err(format!(
                    "cannot encode opcode 0x{opcode:02X} ({}): the {arch} compiler does not emit \
                     it (seed 003 §\"At a glance\"; try a later --arch)",
                    mnemonic_of(opcode).unwrap_or("?")
                )),
                Record::Bundle { opcode, fields } => registry::core_for(arch)
                    .encode(opcode, &fields)
                    .map_err(|f| f.to_string())
                    .and_then(|r| r.map_err(|f| f.to_string()))
                    .map_err(|field| {
                        format!("cannot encode opcode 0x{opcode:02X}: bad field `{field}`")
                    }),
            };
            encoded += usize::from(encoded_or_why.is_ok());
            match encoded_or_why {
                Ok(b) if hex => writeln!(out, "{}", crate::subjects::hex(&b))?,
                Ok(b) => out.write_all(&b)?,
                Err(why) => {
                    any_bad = true;
                    eprintln!("tpbconform: {}:{line}: {}", shown(&source), shown(&why));
                }
            }
        }
    }
    if records == 0 {
        let sources: Vec<String> = files.iter().map(|f| source_name(f)).collect();
        return Err(CliError::bad(
            sources.join(", "),
            "empty input: no JSON record found (encode reads the JSON lines decode prints)",
        ));
    }
    match file {
        None => stdout.flush()?,
        Some(f) if encoded > 0 => f.commit().map_err(path_err)?,
        Some(_) => eprintln!(
            "tpbconform: nothing encoded: {} left unchanged",
            shown(path)
        ),
    }
    Ok(if any_bad { EXIT_INVALID } else { EXIT_OK })
}
