//! `tpbconform lower FILE.json`: IR collectives → records + module side-tables
//! (SPEC §5.4). Input format: [`crate::lower_input`].

use super::decode::bundle_json;
use super::{CliError, CliResult, EXIT_OK};
use crate::input::source_name;
use crate::lower_input::{error_path, parse_program, PathError, MAX_INPUT_BYTES};
use std::io::{Read, Write};
use tpb_core::lower::{lower, IrInstruction, Module, SideRef};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LowerFormat {
    /// One 128-digit hex line per record; instructions and side-tables as `#`
    /// comments (the input of `decode --arch <generation> --hex`).
    Hex,
    /// One `decode` object per record (plus `"instruction"`), then one
    /// `{"side_tables": …}` line.
    Jsonl,
    /// The module as one JSON object: records and side-tables together.
    Json,
}

fn read_input(path: &str) -> Result<String, CliError> {
    let source = source_name(path);
    let input: Box<dyn Read> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        let meta = std::fs::metadata(path).map_err(|e| CliError::bad(path, e))?;
        if !meta.is_file() {
            return Err(CliError::bad(path, "not a regular file"));
        }
        Box::new(std::fs::File::open(path).map_err(|e| CliError::bad(path, e))?)
    };
    let mut bytes = Vec::new();
    input
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::bad(&source, e))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(CliError::bad(
            &source,
            format!("larger than {MAX_INPUT_BYTES} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let b = e.as_bytes();
        let line = 1 + b[..at].iter().filter(|&&c| c == b'\n').count();
        let column = 1 + at
            - b[..at]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |i| i + 1);
        CliError::bad(
            &source,
            format!(
                "line {line} column {column}: not UTF-8 (byte 0x{:02X} at byte offset {at})",
                b[at]
            ),
        )
    })
}

fn summary(insn: &IrInstruction) -> String {
    match insn {
        IrInstruction::Collective(c) => c.kind.name().to_string(),
        IrInstruction::Transfer(t) => t.direction.name().to_string(),
        IrInstruction::LocalSendRecv(l) => format!("local {}", l.kind.name()),
    }
}

fn side_str(r: &SideRef) -> String {
    match r {
        SideRef::ReplicaGroups(i) => format!("replica_groups#{i}"),
        SideRef::SourceTargetPairs(i) => format!("source_target_pairs#{i}"),
        SideRef::Attribute(i) => format!("attributes#{i}"),
    }
}

/// Lowers every instruction; nothing is printed unless all succeed.
pub fn lower_file(path: &str) -> Result<(Module, Vec<IrInstruction>), CliError> {
    let source = source_name(path);
    let text = read_input(path)?;
    if text.starts_with('\u{FEFF}') {
        return Err(CliError::bad(
            &source,
            format!(
                "line 1 column 1: bad JSON{}",
                crate::input::bom_hint('\u{FEFF}')
            ),
        ));
    }
    let doc = crate::strict_json::parse(&text).map_err(|e| {
        CliError::bad(
            &source,
            format!("line {} column {}: bad JSON: {e}", e.line(), e.column()),
        )
    })?;
    let (gen, insns) = parse_program(&doc).map_err(|e: PathError| CliError::bad(&source, e))?;
    let mut module = Module::new(gen);
    for (i, insn) in insns.iter().enumerate() {
        lower(&mut module, insn).map_err(|e| {
            CliError::bad(
                &source,
                format!("$.instructions[{i}]{}: {e}", error_path(insn, &e)),
            )
        })?;
    }
    Ok((module, insns))
}

pub fn run(path: &str, format: LowerFormat) -> CliResult {
    let (module, insns) = lower_file(path)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let side: serde_json::Value = serde_json::from_str(&module.to_json())
        .map_err(|e| CliError::output(format!("module JSON: {e}")))?;
    match format {
        LowerFormat::Json => writeln!(out, "{:#}", side)?,
        LowerFormat::Jsonl => {
            let mut index = 0;
            for (i, l) in module.lowered().iter().enumerate() {
                for b in &l.records {
                    let (mut o, _) = bundle_json(index, &b.0, module.generation());
                    o["instruction"] = i.into();
                    writeln!(out, "{o}")?;
                    index += 1;
                }
            }
            let mut tables = side;
            if let serde_json::Value::Object(m) = &mut tables {
                m.remove("instructions");
            }
            writeln!(out, "{}", serde_json::json!({ "side_tables": tables }))?;
        }
        LowerFormat::Hex => {
            let gen = module.generation().name();
            writeln!(out, "# generation {gen} (decode --arch {gen})")?;
            for (i, (l, insn)) in module.lowered().iter().zip(&insns).enumerate() {
                let refs: Vec<String> = l.side.iter().map(side_str).collect();
                let refs = if refs.is_empty() {
                    "none".to_string()
                } else {
                    refs.join(", ")
                };
                writeln!(out, "# [{i}] {}: side {refs}", summary(insn))?;
                for b in &l.records {
                    writeln!(out, "{}", b.to_hex())?;
                }
            }
            for (id, g) in module.replica_groups().iter().enumerate() {
                writeln!(out, "# replica_groups#{id}: {g:?}")?;
            }
            for (id, p) in module.source_target_pairs().iter().enumerate() {
                writeln!(out, "# source_target_pairs#{id}: {p:?}")?;
            }
            for (id, a) in module.attributes().iter().enumerate() {
                let (kind, dir, peer) = (a.kind, a.direction.name(), a.peer);
                writeln!(out, "# attributes#{id}: kind {kind} {dir} peer {peer}")?;
            }
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}
