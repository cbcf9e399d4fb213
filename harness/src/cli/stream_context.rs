//! The stream context `explain` and `decode --stream` show for each bundle (SPEC §5.3), from the
//! walker `check` runs; each file is one stream.

use super::check_output::{at_text, error_text, verdict_text};
use super::CliError;
use crate::generation::Generation;
use crate::input::{stream_bundles, Loaded};
use tpb_core::layout::{custom_op_header, OPCODE_CUSTOM_OP_HEADER};
use tpb_core::lint::Verdict;
use tpb_core::lower::needs_second_leg;
use tpb_core::walk::{Event, Place, StreamError, Walker};
use tpb_core::Bundle;

/// +0x0E kind byte of a 0xD9 (S003 §3.1).
const OFF_KIND: usize = 0x0E;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// Bundle index in the file's stream.
    pub index: usize,
    pub place: Place,
    /// `None` for a 128-byte instruction's second half.
    pub opcode: Option<u8>,
    pub length: usize,
    pub verdict: Option<Verdict>,
    pub errors: Vec<StreamError>,
}

pub enum StreamStep<'a> {
    /// `index`: across all inputs.
    Bundle {
        index: usize,
        loaded: &'a Loaded,
        seen: Seen,
    },
    End {
        path: &'a str,
        count: usize,
        errors: Vec<StreamError>,
    },
}

/// Hands `step` each bundle of `files` (none: stdin) and each file's end.
pub fn walk_streams(
    files: &[String],
    hex: bool,
    arch: Generation,
    mut step: impl FnMut(StreamStep<'_>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let stdin = ["-".to_string()];
    let paths = if files.is_empty() { &stdin[..] } else { files };
    let mut first = 0usize;
    for path in paths {
        let mut walker = Walker::new(arch);
        let mut count = 0usize;
        for l in stream_bundles(path, hex) {
            let loaded = l?;
            count += 1;
            let seen = next(&mut walker, &loaded.bytes);
            step(StreamStep::Bundle {
                index: first + loaded.index,
                loaded: &loaded,
                seen,
            })?;
        }
        let mut errors = Vec::new();
        walker.finish(&mut |e| {
            if let Event::Stream(s) = e {
                errors.push(s);
            }
        });
        step(StreamStep::End {
            path,
            count,
            errors,
        })?;
        first += count;
    }
    Ok(())
}

fn next(walker: &mut Walker, bytes: &[u8; 64]) -> Seen {
    let b = Bundle(*bytes);
    let index = walker.bundles();
    let mut seen = Seen {
        index,
        place: walker.place(&b),
        opcode: None,
        length: 64,
        verdict: None,
        errors: Vec::new(),
    };
    walker.push(&b, &mut |e| match e {
        Event::Instruction {
            at,
            length,
            verdict,
        } => {
            seen.opcode = Some(at.opcode);
            seen.length = length;
            seen.verdict = Some(verdict);
        }
        Event::Stream(s) => seen.errors.push(s),
    });
    seen
}

/// What `bytes` opens: a group (0x85: num_arguments + 1 payloads, D-28) or a pair (a two-leg
/// 0xD9, SPEC §5.4).
fn opens(bytes: &[u8; 64]) -> Option<String> {
    match bytes[0] {
        OPCODE_CUSTOM_OP_HEADER => {
            let n = usize::from(bytes[custom_op_header::OFF_NUM_ARGUMENTS]) + 1;
            let s = if n == 1 { "" } else { "s" };
            Some(format!("opens a group of {n} payload{s}"))
        }
        0xD9 if needs_second_leg(bytes[OFF_KIND]) => {
            Some("opens a pair (a two-leg kind: its 0xDA follows)".to_string())
        }
        _ => None,
    }
}

/// `stream: bundle #N at byte offset 0xNN; <place>; check: <verdict>`, then its stream errors.
pub fn text(seen: &Seen, bytes: &[u8; 64]) -> String {
    let mut s = format!(
        "stream: bundle #{} at byte offset 0x{:X}",
        seen.index,
        seen.index * 64
    );
    let place = match seen.place {
        Place::Tail { of } => Some(format!(
            "the second 64 bytes of the 128-byte instruction {} (its body, not an opcode)",
            at_text(of.index, of.opcode)
        )),
        Place::Payload {
            header,
            n,
            expected,
        } => Some(format!(
            "payload {n} of {expected} ({}) of the group of {}",
            if n == 1 { "the output" } else { "an argument" },
            at_text(header.index, header.opcode)
        )),
        Place::Leg { primary } => Some(format!(
            "the 0xDA leg of the pair of {}",
            at_text(primary.index, primary.opcode)
        )),
        Place::Alone if seen.length > 64 => Some(format!(
            "a {}-byte instruction (the next bundle is its second half)",
            seen.length
        )),
        Place::Alone => opens(bytes),
    };
    if let Some(p) = place {
        s.push_str("; ");
        s.push_str(&p);
    }
    if let (Some(v), Some(op)) = (&seen.verdict, seen.opcode) {
        s.push_str("; check: ");
        s.push_str(&verdict_text(v, op));
    }
    for e in &seen.errors {
        s.push('\n');
        s.push_str(&error_text(e));
    }
    s
}

/// The `"stream"` object of `decode --stream` (its keys: `DecodeArgs::stream`'s help).
pub fn json(seen: &Seen, bytes: &[u8; 64]) -> serde_json::Value {
    let (within, of, payload, opens) = match seen.place {
        Place::Tail { of } => ("tail", Some(of.index), None, None),
        Place::Payload {
            header,
            n,
            expected,
        } => ("group", Some(header.index), Some((n, expected)), None),
        Place::Leg { primary } => ("pair", Some(primary.index), None, None),
        Place::Alone => ("alone", None, None, opens(bytes)),
    };
    serde_json::json!({
        "index": seen.index,
        "offset": seen.index * 64,
        "in": within,
        "of": of,
        "payload": payload.map(|p| p.0),
        "payloads": payload.map(|p| p.1),
        "opens": opens,
        "length": seen.opcode.map(|_| seen.length),
        "verdict": seen.verdict.map(|v| v.kind()),
        "stream_errors": seen.errors.iter().map(|e| e.fault.name()).collect::<Vec<_>>(),
    })
}
