//! The annotated reading of one bundle (`tpbconform explain`, the report's annotated inputs)
//! and the verdict `check` gives it.

use crate::blame::{blamed_bytes, Answer};
use crate::generation::Generation;
use crate::layout::{layout, Domain, Role};
use crate::subjects::{registry, LintRow, Value};

/// `check`'s verdict on one instruction (SPEC §5.3 "Linting a stream"): core's walker on the
/// bundle alone, so `explain`, `decode` and the report say what `check` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lint {
    Valid,
    /// The skeleton holds; no record is modelled for the opcode under this generation.
    Skeleton,
    /// A predicate (or decode field) failed at byte `offset`.
    Invalid {
        predicate: String,
        offset: usize,
    },
}

impl Lint {
    /// The verdict words `check` prints for `b` ([`crate::layout::invalid_text`]).
    pub fn text(&self, b: &[u8; 64]) -> String {
        match self {
            Lint::Valid => "valid".to_string(),
            Lint::Skeleton => crate::layout::VALID_SKELETON.to_string(),
            Lint::Invalid { predicate, offset } => crate::layout::invalid_text(
                b[0],
                predicate,
                *offset,
                b.get(*offset).copied().unwrap_or(0),
            ),
        }
    }

    pub fn answer(&self) -> Answer {
        match self {
            Lint::Valid | Lint::Skeleton => Answer::Valid,
            Lint::Invalid { predicate, offset } => Answer::Rejected {
                reason: predicate.clone(),
                offset: Some(*offset),
            },
        }
    }
}

/// `check`'s verdict on the instruction whose first 64 bytes are `b` under `arch` (a 128-byte
/// instruction is judged on its first 64 bytes, as `check` does).
pub fn lint(b: &[u8; 64], arch: Generation) -> Lint {
    let rows = match registry::core_for(arch).lint_stream(b) {
        Ok(Ok(rows)) => rows,
        Ok(Err(e)) => return invalid_fault(e),
        Err(f) => return invalid_fault(f.to_string()),
    };
    rows.into_iter()
        .find_map(|r| match r {
            LintRow::Instruction {
                verdict, failure, ..
            } => Some(match (verdict, failure) {
                ("valid", _) => Lint::Valid,
                ("skeleton", _) => Lint::Skeleton,
                (_, Some((p, offset))) => Lint::Invalid {
                    predicate: p.to_string(),
                    offset,
                },
                (v, None) => invalid_fault(v.to_string()),
            }),
            LintRow::StreamError { .. } => None,
        })
        .unwrap_or_else(|| invalid_fault("no instruction".to_string()))
}

fn invalid_fault(why: String) -> Lint {
    Lint::Invalid {
        predicate: why,
        offset: 0,
    }
}

pub fn opcode_str(op: u8) -> String {
    format!("0x{op:02X}")
}

const RED: &str = "\x1b[1;31m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
}

/// The value column of a field span: the decoded value, else the same reading from the raw
/// bytes (so names stay readable on an invalid bundle).
fn field_value(
    name: &str,
    domain: Domain,
    bytes: &[u8],
    decoded: Option<&crate::subjects::Decoded>,
    arch: Generation,
) -> String {
    if let Some(v) = decoded.and_then(|d| d.get(name)) {
        return match v {
            Value::Bytes(v) => format!("({} bytes)", v.len()),
            v => v.to_string(),
        };
    }
    match domain {
        Domain::Ap => format!("({} bytes)", bytes.len()),
        Domain::CceOp | Domain::Kind => match registry::table_byte_name(name, bytes[0]) {
            Some(n) if legal(domain, bytes[0], arch) => n.to_string(),
            Some(n) => format!("0x{:02X} {n} (not a member)", bytes[0]),
            None => format!("0x{:02X} (not a member)", bytes[0]),
        },
        _ if bytes.len() <= 8 => {
            let v = le(bytes);
            if legal(domain, bytes[0], arch) {
                v.to_string()
            } else {
                format!("{v} (not a member)")
            }
        }
        _ => format!("({} bytes)", bytes.len()),
    }
}

fn legal(domain: Domain, v: u8, arch: Generation) -> bool {
    domain.values_for(arch).is_none_or(|vs| vs.contains(&v))
}

const NAME_W: usize = 28;

/// The second 64 bytes of a 128-byte instruction: its bytes, no verdict of its own (`check`
/// judges the instruction by its first 64 bytes).
pub fn explain_tail(b: &[u8; 64], header: &str) -> Explained {
    let rows: Vec<String> = b
        .chunks(16)
        .enumerate()
        .map(|(k, row)| {
            let hex: Vec<String> = row.iter().map(|x| format!("{x:02x}")).collect();
            format!("  0x{:02X}  {}", k * 16, hex.join(" "))
        })
        .collect();
    Explained {
        head: format!(
            "{header}: the second half of a 128-byte instruction (no verdict of its own)"
        ),
        body: rows.join("\n"),
        valid: true,
        failed_lines: Vec::new(),
    }
}

/// A bundle's explanation: its first line (the verdict) and the lines under it, whether the
/// bundle is valid, and which lines (0-based, the first line 0) end with `<== FAILED`.
pub struct Explained {
    pub head: String,
    pub body: String,
    pub valid: bool,
    pub failed_lines: Vec<usize>,
}

impl Explained {
    pub fn text(&self) -> String {
        format!("{}\n{}", self.head, self.body)
    }
}

/// One bundle's explanation: every byte core's answer blames has a `^^` under it, each row
/// holding one ends with `<== FAILED: <reason>`; `color` paints those bytes red and zero
/// reserved bytes dim, each escape reset before the end of its line.
pub fn explain_bundle(b: &[u8; 64], header: &str, color: bool, arch: Generation) -> Explained {
    let verdict = lint(b, arch);
    let answer = &verdict.answer();
    let hot = blamed_bytes(b, answer);
    let status = verdict.text(b);
    let decoded = registry::core_for(arch).decode(b).ok().and_then(Result::ok);
    let mut s = String::new();
    let op = b[0];
    let head = format!(
        "{header} {} {}: {status}",
        opcode_str(op),
        registry::mnemonic_of(op).unwrap_or("(not a decodable opcode)")
    );
    s.push_str(&format!(
        "  off   bytes                                            {:<NAME_W$}  value\n",
        "field"
    ));
    // `text` in `style` when painting (an empty style: as it is).
    let paint = |style: &str, text: String| match color && !style.is_empty() {
        true => format!("{style}{text}{RESET}"),
        false => text,
    };
    // The header and column lines come first.
    let (mut lines, mut failed_lines) = (2, Vec::new());
    for span in layout(op) {
        let bytes = &b[span.off..span.off + span.len];
        let value = match span.role {
            Role::Reserved if bytes.iter().all(|&x| x == 0) => "(reserved, zero)".to_string(),
            Role::Reserved => "(reserved, NONZERO)".to_string(),
            Role::Const(v) if bytes[0] == v => format!("0x{v:02X} (constant)"),
            Role::Const(v) => format!("0x{:02X} (expected constant 0x{v:02X})", bytes[0]),
            Role::Unknown => "(body not modelled)".to_string(),
            Role::Field(Domain::Opcode) => opcode_str(op),
            // The mode's header name (SPEC §6.5; FACTS §2 [H]).
            Role::Field(Domain::WaitMode | Domain::UpdateMode) => {
                match registry::mode_byte_name(span.name, bytes[0]) {
                    Some(n) => format!("0x{:02X} {n}", bytes[0]),
                    None => format!("0x{:02X} (not a member)", bytes[0]),
                }
            }
            Role::Field(d) => field_value(span.name, d, bytes, decoded.as_ref(), arch),
        };
        // Byte column: at most 16 bytes per row.
        for (k, chunk) in bytes.chunks(16).enumerate() {
            let row_off = span.off + k * 16;
            let mut row = String::new();
            let mut carets = String::new();
            for (j, x) in chunk.iter().enumerate() {
                let i = row_off + j;
                if j > 0 {
                    row.push(' ');
                    carets.push(' ');
                }
                let blamed = hot.contains(i);
                carets.push_str(if blamed { "^^" } else { "  " });
                let style = match (blamed, span.role == Role::Reserved && *x == 0) {
                    (true, _) => RED,
                    (false, true) => DIM,
                    _ => "",
                };
                row.push_str(&paint(style, format!("{x:02x}")));
            }
            // pad to the width of 16 bytes (47 visible chars)
            let pad = " ".repeat(47usize.saturating_sub(chunk.len() * 3 - 1));
            let row_hot = (row_off..row_off + chunk.len()).any(|i| hot.contains(i));
            let name = if span.role == Role::Reserved {
                "reserved"
            } else {
                span.name
            };
            let mut line = if k == 0 {
                format!("  0x{row_off:02X}  {row}{pad}  {name:<NAME_W$}  {value}")
            } else if row_hot {
                format!("  0x{row_off:02X}  {row}{pad}  {:<NAME_W$}  (cont.)", "")
            } else {
                format!("  0x{row_off:02X}  {row}")
            };
            if row_hot {
                let text = format!("<== FAILED: {}", answer.reason().unwrap_or(""));
                line.push_str(&format!("  {}", paint(RED, text)));
                failed_lines.push(lines);
            }
            s.push_str(&line);
            s.push('\n');
            lines += 1;
            if row_hot {
                s.push_str(&format!("        {}", carets.trim_end()));
                s.push('\n');
                lines += 1;
            }
        }
    }
    s.pop();
    Explained {
        head,
        body: s,
        valid: answer.reason().is_none(),
        failed_lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain text the report embeds (summary.md's annotated input): the
    /// byte SPEC §3 #5 rejects — 0x3F, the last of the second row of the
    /// 32-byte reserved tail — alone has a caret, and only its row is marked.
    #[test]
    fn plain_text_marks_the_offending_byte_of_a_continuation_row() {
        let mut b = [0u8; 64];
        b[0] = 0x85;
        b[1] = 0x10;
        b[0x3F] = 0x01;
        let e = explain_bundle(&b, "bundle", false, Generation::V2);
        let t = e.text();
        assert!(!e.valid);
        assert!(!t.contains('\x1b'), "{t}");
        let lines: Vec<&str> = t.lines().collect();
        let failed: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].contains("<== FAILED"))
            .collect();
        assert_eq!(failed.len(), 1, "{t}");
        // The typed line numbers are the marked lines.
        assert_eq!(e.failed_lines, failed, "{t}");
        let row = lines[failed[0]];
        assert!(row.starts_with("  0x30  "), "{t}");
        assert!(
            row.ends_with("<== FAILED: custom_op_header_reserved_zero"),
            "{t}"
        );
        // The caret under the 16th byte column: 8 + 15 * 3.
        assert_eq!(
            lines[failed[0] + 1],
            format!("{}^^", " ".repeat(8 + 15 * 3))
        );
        assert_eq!(t.matches("^^").count(), 1, "{t}");
        assert!(
            lines[0].ends_with(
                "custom_op_header_reserved_zero: reserved byte 0x3F is 0x01, not zero (byte 0x3F)"
            ),
            "{t}"
        );
    }
}
