//! `check`'s output: one line per instruction and per stream error, then a summary per stream
//! (text, JSONL, or the summaries alone).

use super::{mnemonic_of, opcode_str, shown, CliError, Format};
use crate::generation::Generation;
use std::io::{self, Write};
use tpb_core::lint::Verdict;
use tpb_core::walk::{At, Event, StreamError, StreamFault, Walker};
use tpb_neff::StreamRef;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Instructions by verdict: valid, `valid (skeleton; body not modelled)`, invalid.
    pub by: [u64; 3],
    pub stream_errors: u64,
    /// With `--per-opcode`: counts by verdict per opcode.
    pub per_opcode: Option<Box<[[u64; 3]; 256]>>,
}

impl Tally {
    pub fn new(per_opcode: bool) -> Tally {
        Tally {
            per_opcode: per_opcode.then(|| Box::new([[0u64; 3]; 256])),
            ..Tally::default()
        }
    }

    pub fn instructions(&self) -> u64 {
        self.by.iter().sum()
    }

    /// Invalid verdicts and stream errors.
    pub fn errors(&self) -> u64 {
        self.by[2] + self.stream_errors
    }

    /// Counts `e`; `true` when it is an error (an invalid verdict or a stream error).
    #[inline]
    pub fn count(&mut self, e: &Event) -> bool {
        let Event::Instruction { at, verdict, .. } = e else {
            self.stream_errors += 1;
            return true;
        };
        let k = match verdict {
            Verdict::Valid => 0,
            Verdict::SkeletonOnly => 1,
            Verdict::Invalid(_) => 2,
        };
        self.by[k] += 1;
        if let Some(per) = self.per_opcode.as_mut() {
            per[usize::from(at.opcode)][k] += 1;
        }
        k == 2
    }
}

/// Prints and counts the events of one stream at a time (`start`), keeping the first output
/// error.
pub struct Printer<W: Write> {
    pub out: W,
    format: Format,
    arch: Generation,
    per_opcode: bool,
    /// The stream's source and its JSON string form.
    source: (String, String),
    /// The stream's place in a NEFF (named in every location and record, issue 33) and its
    /// JSON keys.
    origin: Option<(StreamRef, String)>,
    pub tally: Tally,
    /// Invalid verdicts and stream errors over every stream so far.
    pub errors: u64,
    failed: Result<(), CliError>,
}

/// Where a bundle is, for messages: `file:line` (hex), `file@0xOFFSET` (binary), or in a NEFF
/// `member #index @0xOFFSET, engine E`; names [`shown`] (text output).
pub(super) fn where_(
    source: &str,
    index: usize,
    offset: usize,
    line: Option<usize>,
    origin: Option<&(StreamRef, String)>,
) -> String {
    let source = shown(source);
    match (line, origin) {
        (_, Some((o, _))) => format!(
            "{source} #{index} @0x{offset:X}, engine {}",
            o.engine.name()
        ),
        (Some(n), None) => format!("{source}:{n}"),
        (None, None) => format!("{source}@0x{offset:X}"),
    }
}

fn name(op: u8) -> &'static str {
    mnemonic_of(op).unwrap_or("?")
}

fn by_str(by: Option<u8>) -> String {
    match by {
        Some(op) => format!("{} {}", opcode_str(op), name(op)),
        None => "the end of the stream".to_string(),
    }
}

fn fault_parts(f: &StreamFault) -> (String, serde_json::Value) {
    use serde_json::json;
    match *f {
        StreamFault::PayloadCountMismatch {
            num_payloads,
            num_arguments,
        } => (
            format!(
                "num_payloads {num_payloads} but num_arguments {num_arguments} (must be num_arguments + 2)"
            ),
            json!({"num_payloads": num_payloads, "num_arguments": num_arguments}),
        ),
        StreamFault::StrayPayload => ("a 0x86 payload with no open group".into(), json!({})),
        StreamFault::ShortGroup {
            expected,
            found,
            by,
        } => (
            format!(
                "group expects {expected} payloads, found {found}, cut short by {}",
                by_str(by)
            ),
            json!({"expected": expected, "found": found, "by": by.map(opcode_str)}),
        ),
        StreamFault::MissingLeg { by } => (
            format!("two-leg 0xD9 not followed by its 0xDA but by {}", by_str(by)),
            json!({"by": by.map(opcode_str)}),
        ),
        StreamFault::LegMismatch { primary, secondary } => (
            format!(
                "0xDA bytes 0x0C..0x0E {} differ from its 0xD9's {}",
                hex3(secondary),
                hex3(primary)
            ),
            json!({"primary": hex3(primary), "secondary": hex3(secondary)}),
        ),
        StreamFault::StrayLeg => (
            "a 0xDA that is not the leg of a two-leg 0xD9".into(),
            json!({}),
        ),
        StreamFault::TruncatedInstruction { length, found } => (
            format!("a {length}-byte instruction with only {found} bytes before the end"),
            json!({"length": length, "found": found}),
        ),
    }
}

fn hex3(b: [u8; 3]) -> String {
    format!("{:02x}{:02x}{:02x}", b[0], b[1], b[2])
}

pub(super) fn verdict_text(v: &Verdict, op: u8) -> String {
    match v {
        Verdict::Valid => "valid".to_string(),
        Verdict::SkeletonOnly => crate::layout::VALID_SKELETON.to_string(),
        Verdict::Invalid(f) => crate::layout::invalid_text(op, f.predicate, f.offset, f.value),
    }
}

impl<W: Write> Printer<W> {
    pub fn new(out: W, args: &super::CheckArgs) -> Self {
        Printer {
            out,
            format: args.format,
            arch: args.arch,
            per_opcode: args.per_opcode,
            source: Default::default(),
            origin: None,
            tally: Tally::default(),
            errors: 0,
            failed: Ok(()),
        }
    }

    /// The next stream: `source`, with its place in a NEFF.
    pub fn start(&mut self, source: &str, origin: Option<StreamRef>) {
        let quoted = serde_json::Value::from(source).to_string();
        self.source = (source.to_string(), quoted);
        self.tally = Tally::new(self.per_opcode);
        self.origin = origin.map(|o| {
            let keys = serde_json::json!({
                "subgraph": o.subgraph,
                "engine": o.engine.name(),
                "member": o.member,
            })
            .to_string();
            // `{"subgraph":..}` without its braces, then a comma.
            let keys = format!("{},", &keys[1..keys.len() - 1]);
            (o, keys)
        });
    }

    /// One instruction as a JSON line, written directly (no map built per bundle).
    fn instruction_json(&mut self, at: &At, length: usize, verdict: &Verdict) -> io::Result<()> {
        let f = match verdict {
            Verdict::Invalid(f) => Some(f),
            _ => None,
        };
        let str_or_null = |s: Option<&str>| s.map_or("null".to_string(), |s| format!("\"{s}\""));
        let num_or_null = |n: Option<usize>| n.map_or("null".to_string(), |n| n.to_string());
        let predicate = f.map(|f| f.predicate);
        let note = f
            .filter(|f| f.predicate == "valid_opcode")
            .map(|_| crate::layout::membership_note(at.opcode));
        let field = f.and_then(|f| {
            let mut spans = crate::layout::layout(at.opcode).into_iter();
            spans.find(|s| (s.off..s.off + s.len).contains(&f.offset))
        });
        let message =
            f.map(|f| crate::layout::failure_detail(at.opcode, f.predicate, f.offset, f.value));
        // Names, predicates, notes and messages are ASCII letters, digits, '_', ' ', ',', '.',
        // '(', ')', '-': no escaping.
        writeln!(
            self.out,
            "{{\"source\":{},{}\"index\":{},\"offset\":{},\"opcode\":\"{}\",\"mnemonic\":{},\"length\":{},\"verdict\":\"{}\",\"predicate\":{},\"byte\":{},\"value\":{},\"field\":{},\"message\":{},\"note\":{},\"valid\":{},\"failed\":{}}}",
            self.source.1,
            self.origin.as_ref().map_or("", |o| o.1.as_str()),
            at.index,
            at.offset,
            opcode_str(at.opcode),
            str_or_null(mnemonic_of(at.opcode)),
            length,
            verdict.kind(),
            str_or_null(predicate),
            num_or_null(f.map(|f| f.offset)),
            num_or_null(f.map(|f| usize::from(f.value))),
            str_or_null(field.map(|s| s.name)),
            str_or_null(message.as_deref()),
            str_or_null(note.as_deref()),
            f.is_none(),
            str_or_null(predicate),
        )
    }

    #[inline]
    fn event(&mut self, e: &Event, line: Option<usize>) -> io::Result<()> {
        let (source, origin) = (&self.source.0, self.origin.as_ref());
        match self.format {
            Format::Summary | Format::Html => Ok(()),
            Format::Text => {
                let s = match e {
                    Event::Instruction { at, verdict, .. } => format!(
                        "{}: {} ({})\n",
                        at_text(at.index, at.opcode),
                        verdict_text(verdict, at.opcode),
                        where_(source, at.index, at.offset, line, origin)
                    ),
                    Event::Stream(s) => format!(
                        "#{} {} ({})\n",
                        s.index,
                        error_text(s),
                        where_(source, s.index, s.offset, line, origin)
                    ),
                };
                self.out.write_all(s.as_bytes())
            }
            Format::Jsonl => match e {
                Event::Instruction {
                    at,
                    length,
                    verdict,
                } => self.instruction_json(at, *length, verdict),
                Event::Stream(s) => self.record(stream_json(s)),
            },
        }
    }

    /// The stream's closing summary.
    pub fn summary(&mut self, stopped: bool) -> io::Result<()> {
        let t = &self.tally;
        match self.format {
            Format::Text | Format::Summary | Format::Html => {
                let source = shown(&self.source.0);
                let shown = match &self.origin {
                    Some((o, _)) => {
                        format!("{source} ({} {})", shown(&o.subgraph), o.engine.name())
                    }
                    None => source.into_owned(),
                };
                let [valid, skeleton, invalid] = t.by;
                let mut s = format!(
                    "{shown}: {} instructions ({}): {valid} valid, {skeleton} valid (skeleton; body not modelled), {invalid} invalid, {} stream errors",
                    t.instructions(),
                    self.arch.name(),
                    t.stream_errors
                );
                if stopped {
                    s.push_str(" (stopped at --max-errors)");
                }
                for (op, [valid, skeleton, invalid]) in per_opcode_rows(t) {
                    s.push_str(&format!(
                        "\n  {} {}: {} instructions: {valid} valid, {skeleton} valid (skeleton; body not modelled), {invalid} invalid",
                        opcode_str(op),
                        name(op),
                        valid + skeleton + invalid
                    ));
                }
                writeln!(self.out, "{s}")
            }
            Format::Jsonl => {
                let mut summary = serde_json::json!({
                    "arch": self.arch.name(),
                    "instructions": t.instructions(),
                    "valid": t.by[0],
                    "skeleton": t.by[1],
                    "invalid": t.by[2],
                    "stream_errors": t.stream_errors,
                    "stopped": stopped,
                });
                if t.per_opcode.is_some() {
                    let rows: Vec<serde_json::Value> = per_opcode_rows(t)
                        .map(|(op, [valid, skeleton, invalid])| {
                            serde_json::json!({
                                "opcode": opcode_str(op),
                                "mnemonic": mnemonic_of(op),
                                "valid": valid,
                                "skeleton": skeleton,
                                "invalid": invalid,
                            })
                        })
                        .collect();
                    summary["per_opcode"] = rows.into();
                }
                self.record(serde_json::json!({ "summary": summary }))
            }
        }
    }

    fn record(&mut self, rest: serde_json::Value) -> io::Result<()> {
        let (rest, origin) = (rest.to_string(), self.origin.as_ref());
        let origin = origin.map_or("", |o| o.1.as_str());
        writeln!(
            self.out,
            "{{\"source\":{},{origin}{}",
            self.source.1,
            &rest[1..]
        )
    }

    /// Counts and prints `e`; `true` when the walk must stop.
    #[inline(always)]
    fn on(&mut self, e: &Event, line: Option<usize>, limit: u64) -> bool {
        if self.tally.count(e) {
            self.errors += 1;
        }
        // `--format summary`: nothing per event.
        if self.format != Format::Summary && self.failed.is_ok() {
            self.failed = self.event(e, line).map_err(CliError::from);
        }
        self.errors >= limit || self.failed.is_err()
    }

    #[inline(always)]
    pub fn one(&mut self, e: &Event, line: Option<usize>, limit: u64) -> Result<bool, CliError> {
        let stop = self.on(e, line, limit);
        self.take_failure()?;
        Ok(stop)
    }

    #[inline(always)]
    pub fn walk(
        &mut self,
        walker: &mut Walker,
        run: &[u8],
        line: Option<usize>,
        limit: u64,
    ) -> Result<bool, CliError> {
        walker.push_bundles(run, &mut |e| self.on(&e, line, limit));
        self.take_failure()?;
        Ok(self.errors >= limit)
    }

    /// The end of the stream: the walker's last events, counted past any limit.
    pub fn finish(&mut self, walker: Walker) -> Result<(), CliError> {
        walker.finish(&mut |e| {
            self.on(&e, None, u64::MAX);
        });
        self.take_failure()
    }

    #[inline(always)]
    fn take_failure(&mut self) -> Result<(), CliError> {
        std::mem::replace(&mut self.failed, Ok(()))
    }
}

fn per_opcode_rows(t: &Tally) -> impl Iterator<Item = (u8, [u64; 3])> + '_ {
    t.per_opcode.iter().flat_map(|per| {
        (0..=255u8)
            .zip(per.iter())
            .filter(|(_, c)| c.iter().any(|&n| n > 0))
            .map(|(op, c)| (op, *c))
    })
}

/// `#N 0xOP Mnemonic`.
pub(super) fn at_text(index: usize, op: u8) -> String {
    format!("#{index} {} {}", opcode_str(op), name(op))
}

/// `stream error: <name> at byte offset 0xNN: <what>; instruction #M 0xOP Mnemonic at byte
/// offset 0xNN`.
pub(super) fn error_text(e: &StreamError) -> String {
    format!(
        "stream error: {} at byte offset 0x{:X}: {}; instruction {} at byte offset 0x{:X}",
        e.fault.name(),
        e.offset,
        fault_parts(&e.fault).0,
        at_text(e.owner.index, e.owner.opcode),
        e.owner.offset
    )
}

fn stream_json(s: &StreamError) -> serde_json::Value {
    let (message, extra) = fault_parts(&s.fault);
    let mut o = serde_json::json!({
        "index": s.index,
        "offset": s.offset,
        "stream_error": s.fault.name(),
        "message": message,
        "instruction": {
            "index": s.owner.index,
            "offset": s.owner.offset,
            "opcode": opcode_str(s.owner.opcode),
            "mnemonic": mnemonic_of(s.owner.opcode),
        },
    });
    if let (Some(o), serde_json::Value::Object(extra)) = (o.as_object_mut(), extra) {
        o.extend(extra);
    }
    o
}
