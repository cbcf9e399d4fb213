//! `tpbconform neff info FILE`: a NEFF's header and every member with its size, role and how
//! the role was decided (SPEC §12), like `readelf -h -S`; `--format jsonl` for scripts.

use super::check_neff::parse_json;
use super::{shown, CliResult, EXIT_OK};
use std::io::Read;
use std::io::Write;
use std::path::Path;
use tpb_neff::header::hex;
use tpb_neff::payload::Limits;
use tpb_neff::{NeffError, Report, Role, StreamRef, StreamSink};

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
    let report: Report;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        report = tpb_neff::scan_folder(path, &limits, parse_json, &[]).map_err(bad)?;
        if format == InfoFormat::Jsonl {
            let o = serde_json::json!({"type": "neff", "file": file, "kind": "folder"});
            writeln!(out, "{o}")?;
            return jsonl_rest(&mut out, &report);
        }
        writeln!(out, "{}: unpacked NEFF folder", shown(&file))?;
    } else {
        let (o, r) = tpb_neff::scan_file(path, &limits, parse_json, &[], &mut Skip).map_err(bad)?;
        report = r;
        let h = &o.header;
        let used = h.tpb_per_node.iter().rposition(|&b| b != 0);
        let nodes = &h.tpb_per_node[..used.map_or(0, |i| i + 1)];
        if format == InfoFormat::Jsonl {
            let (verified, algorithm) = match &report.integrity {
                Some(tpb_neff::Integrity::Verified(k)) => (true, k.name()),
                _ => (false, h.hash_kind().name()),
            };
            let o = serde_json::json!({
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
            writeln!(out, "{o}")?;
            return jsonl_rest(&mut out, &report);
        }
        writeln!(out, "{}: NEFF", shown(&file))?;
        let integrity = match &report.integrity {
            Some(tpb_neff::Integrity::Verified(k)) => format!("{} verified", k.name()),
            _ => format!(
                "not verified: pkg_version {} is not 1 (SHA-256) or 2 (MD5)",
                h.pkg_version
            ),
        };
        let nodes: Vec<String> = nodes.iter().map(|b| b.to_string()).collect();
        let neff_version = format!("{}.{}", h.neff_version_major, h.neff_version_minor);
        let mut rows = vec![
            ("pkg_version", h.pkg_version.to_string()),
            ("header_size", h.header_size.to_string()),
            ("data_size", h.data_size.to_string()),
            ("neff_version", neff_version),
            ("neff_build_version", format!("{:?}", h.build_version)),
            ("num_tpb", h.num_tpb.to_string()),
            (
                "hash",
                format!("{} ({})", h.hash_hex(), h.hash_kind().name()),
            ),
            ("uuid", hex(&h.uuid)),
            ("name", format!("{:?}", h.name)),
            ("requested_tpb_count", h.requested_tpb_count.to_string()),
            ("tpb_per_node", format!("[{}]", nodes.join(", "))),
            ("feature_bits", format!("0x{:X}", h.feature_bits)),
            ("lnc_size", h.lnc_size.to_string()),
            ("payload", o.compression.name().to_string()),
            ("integrity", integrity),
        ];
        if o.trailing > 0 {
            let t = format!("{} bytes after the payload (ignored)", o.trailing);
            rows.push(("trailing", t));
        }
        for (k, v) in rows {
            writeln!(out, "  {k:<20} {v}")?;
        }
    }
    writeln!(out, "members ({}):", report.members.len())?;
    // Names from the NEFF (members, subgraph folders, def.json's text) [`shown`].
    for m in &report.members {
        writeln!(
            out,
            "  {:<32} {:>10}  {:<28} {}",
            shown(&m.name),
            m.size,
            m.role.name(),
            shown(&m.why)
        )?;
    }
    for sg in &report.subgraphs {
        writeln!(out, "subgraph {}:", shown(&sg.name))?;
        for e in &sg.engines {
            let member = shown(e.member.as_deref().unwrap_or("(no instruction stream)"));
            write!(out, "  {:<10} {member}", e.engine.name())?;
            if !e.dma.is_empty() {
                let incs: Vec<String> = e
                    .dma
                    .iter()
                    .map(|d| {
                        format!(
                            "{}: sem {} +{}",
                            d.id,
                            d.semaphore.map_or("-".into(), |s| s.to_string()),
                            d.increment().map_or("?".into(), |n| n.to_string())
                        )
                    })
                    .collect();
                write!(out, "; dma {}", incs.join(", "))?;
            }
            writeln!(out)?;
        }
    }
    if report.passes == 2 {
        writeln!(out, "note: a stream came before its def.json and did not fit in memory: the payload was read twice")?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// `--format jsonl` after the `neff` record: `member`s, `engine`s, then `end`.
fn jsonl_rest(out: &mut impl Write, report: &Report) -> CliResult {
    for m in &report.members {
        let (role, engine) = match m.role {
            Role::DefJson => ("def_json", None),
            Role::EngineJson(e) => ("engine_json", Some(e.name())),
            Role::Stream(e) => ("stream", Some(e.name())),
            Role::Other => ("other", None),
        };
        let o = serde_json::json!({
            "type": "member", "name": m.name, "size": m.size, "role": role, "engine": engine,
            "why": m.why,
        });
        writeln!(out, "{o}")?;
    }
    for sg in &report.subgraphs {
        for e in &sg.engines {
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
        }
    }
    let o = serde_json::json!({
        "type": "end", "members": report.members.len(), "subgraphs": report.subgraphs.len(),
        "passes": report.passes,
    });
    writeln!(out, "{o}")?;
    out.flush()?;
    Ok(EXIT_OK)
}
