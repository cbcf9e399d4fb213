//! `tpbconform neff info FILE`: a NEFF's header and every member with its size, role and how
//! the role was decided (SPEC §12), like `readelf -h -S`; `--format jsonl` for scripts.

use super::check_neff::parse_json;
use super::{shown, CliResult, EXIT_OK};
use std::io::Read;
use std::io::Write;
use std::path::Path;
use tpb_neff::header::hex;
use tpb_neff::payload::Limits;
use tpb_neff::{NeffError, Role, StreamRef, StreamSink};

#[derive(Debug, clap::Subcommand)]
pub enum NeffCommand {
    /// Print a NEFF's header fields and every member with its size, role and how the role was
    /// decided (exit 0; 2 on a NEFF refused, naming the member and the reason).
    #[command(after_help = super::help::NEFF_INFO)]
    Info {
        /// The NEFF file (or an unpacked NEFF folder).
        #[arg(value_name = "FILE")]
        file: String,
        /// The gzip-bomb cap: the payload may inflate to at most N times its compressed size
        /// (never less than 64 MiB; SPEC §12).
        #[arg(long, value_name = "N", default_value_t = 200,
              value_parser = clap::value_parser!(u64).range(1..))]
        max_ratio: u64,
        /// Output format: `text` (aligned, for reading) or `jsonl` (one object per line:
        /// `neff`, then one `member` per member, one `engine` per subgraph engine, `end`).
        #[arg(long, value_enum, default_value_t = InfoFormat::Text)]
        format: InfoFormat,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InfoFormat {
    Text,
    Jsonl,
}

/// Reads no stream (info lists members only).
struct Skip;

impl StreamSink for Skip {
    fn stream(&mut self, _: &StreamRef, _: &mut dyn Read) -> Result<bool, NeffError> {
        Ok(false)
    }
}

pub fn run(command: NeffCommand) -> CliResult {
    let NeffCommand::Info {
        file,
        max_ratio,
        format,
    } = command;
    let bad = |e: NeffError| super::check_neff::neff_error(&file, e);
    if file == "-" {
        return Err(super::CliError::bad(
            "<stdin>",
            "a NEFF is read from a regular file, not from stdin (its payload may be read twice): \
             save it and give its path",
        ));
    }
    let limits = Limits {
        max_ratio,
        ..Limits::default()
    };
    let path = Path::new(&file);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let jsonl = format == InfoFormat::Jsonl;
    let report = if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        let report = tpb_neff::scan_folder(path, &limits, parse_json, &[]).map_err(bad)?;
        if jsonl {
            let o = serde_json::json!({"type": "neff", "file": file, "kind": "folder"});
            writeln!(out, "{o}")?;
        } else {
            writeln!(out, "{}: unpacked NEFF folder", shown(&file))?;
        }
        report
    } else {
        let (o, report) =
            tpb_neff::scan_file(path, &limits, parse_json, &[], &mut Skip).map_err(bad)?;
        let h = &o.header;
        let used = h.tpb_per_node.iter().rposition(|&b| b != 0);
        let nodes = &h.tpb_per_node[..used.map_or(0, |i| i + 1)];
        let (verified, algorithm) = match &report.integrity {
            Some(tpb_neff::Integrity::Verified(k)) => (true, k.name()),
            _ => (false, h.hash_kind().name()),
        };
        let record = serde_json::json!({
            "type": "neff", "file": file, "kind": "file",
            "pkg_version": h.pkg_version, "header_size": h.header_size,
            "data_size": h.data_size,
            "neff_version": format!("{}.{}", h.neff_version_major, h.neff_version_minor),
            "neff_build_version": h.build_version, "num_tpb": h.num_tpb,
            "hash": h.hash_hex(), "hash_kind": h.hash_kind().name(),
            "uuid": hex(&h.uuid), "name": h.name,
            "requested_tpb_count": h.requested_tpb_count,
            "tpb_per_node": nodes, "feature_bits": h.feature_bits,
            "lnc_size": h.lnc_size, "payload": o.compression.name(),
            "integrity": {"verified": verified, "algorithm": algorithm},
            "trailing": o.trailing,
        });
        if jsonl {
            writeln!(out, "{record}")?;
        } else {
            writeln!(out, "{}: NEFF", shown(&file))?;
        }
        // The text rows: the record's values, shown as numbers and bare strings but these.
        let nodes: Vec<String> = nodes.iter().map(|b| b.to_string()).collect();
        let rows = record.as_object().into_iter().flatten().skip(3);
        for (k, v) in rows.filter(|_| !jsonl) {
            let v = match k.as_str() {
                "hash_kind" => continue,
                "trailing" if o.trailing == 0 => continue,
                "trailing" => format!("{} bytes after the payload (ignored)", o.trailing),
                "neff_build_version" => format!("{:?}", h.build_version),
                "name" => format!("{:?}", h.name),
                "hash" => format!("{} ({})", h.hash_hex(), h.hash_kind().name()),
                "tpb_per_node" => format!("[{}]", nodes.join(", ")),
                "feature_bits" => format!("0x{:X}", h.feature_bits),
                "integrity" if verified => format!("{algorithm} verified"),
                "integrity" => format!(
                    "not verified: pkg_version {} is not 1 (SHA-256) or 2 (MD5)",
                    h.pkg_version
                ),
                _ => v.as_str().map_or_else(|| v.to_string(), String::from),
            };
            writeln!(out, "  {k:<20} {v}")?;
        }
        report
    };
    if !jsonl {
        writeln!(out, "members ({}):", report.members.len())?;
    }
    // Names from the NEFF (members, subgraph folders, def.json's text) [`shown`].
    for m in &report.members {
        let (role, engine) = match m.role {
            Role::DefJson => ("def_json", None),
            Role::EngineJson(e) => ("engine_json", Some(e.name())),
            Role::Stream(e) => ("stream", Some(e.name())),
            Role::Other => ("other", None),
        };
        if jsonl {
            let o = serde_json::json!({
                "type": "member", "name": m.name, "size": m.size, "role": role, "engine": engine,
                "why": m.why,
            });
            writeln!(out, "{o}")?;
        } else {
            let (name, why, role) = (shown(&m.name), shown(&m.why), m.role.name());
            writeln!(out, "  {name:<32} {:>10}  {role:<28} {why}", m.size)?;
        }
    }
    for sg in &report.subgraphs {
        if !jsonl {
            writeln!(out, "subgraph {}:", shown(&sg.name))?;
        }
        for e in &sg.engines {
            if jsonl {
                let dma: Vec<_> = e
                    .dma
                    .iter()
                    .map(|d| serde_json::json!({"id": d.id, "semaphore": d.semaphore, "increment": d.increment()}))
                    .collect();
                let o = serde_json::json!({
                    "type": "engine", "subgraph": sg.name, "engine": e.engine.name(),
                    "member": e.member, "dma": dma,
                });
                writeln!(out, "{o}")?;
                continue;
            }
            let member = shown(e.member.as_deref().unwrap_or("(no instruction stream)"));
            write!(out, "  {:<10} {member}", e.engine.name())?;
            let incs = e.dma.iter().map(|d| {
                let sem = d.semaphore.map_or("-".into(), |s| s.to_string());
                let by = d.increment().map_or("?".into(), |n| n.to_string());
                format!("{}: sem {sem} +{by}", d.id)
            });
            let incs: Vec<String> = incs.collect();
            if !incs.is_empty() {
                write!(out, "; dma {}", incs.join(", "))?;
            }
            writeln!(out)?;
        }
    }
    if jsonl {
        let o = serde_json::json!({
            "type": "end", "members": report.members.len(), "subgraphs": report.subgraphs.len(),
            "passes": report.passes,
        });
        writeln!(out, "{o}")?;
    } else if report.passes == 2 {
        writeln!(out, "note: a stream came before its def.json and did not fit in memory: the payload was read twice")?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
