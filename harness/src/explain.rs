//! The annotated reading of one bundle (`tpbconform explain`, the report's
//! annotated inputs) and the verdict `check` gives it, from the reference
//! subject and the harness's [`crate::layout`].

use crate::arch::Arch;
use crate::layout::{layout, predicate_bytes, Domain, Role};
use crate::subjects::{registry, DecodeFail, Subject, Validator, Value};

/// Which verdict [`judge`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// 0x85 → header validator, 0x86 → payload validator, any other opcode →
    /// valid iff it decodes and re-encodes to the same bytes.
    Auto,
    /// The SPEC §3 header validator.
    Header,
    /// The SPEC §4 payload validator.
    Payload,
}

/// The verdict `check`/`explain` give one bundle: `None` = valid, else the
/// failing predicate or decode field, with the byte offset when known;
/// the reference serving generation `arch`.
pub fn judge(b: &[u8; 64], mode: Mode, arch: Arch) -> Option<(String, Option<usize>)> {
    let core = registry::core_for(arch);
    let by_validator = |v: Validator| match core.validate(v, b) {
        Ok(p) => p.map(|p| (p.name().to_string(), None)),
        Err(f) => Some((f.to_string(), None)),
    };
    match (mode, b[0]) {
        (Mode::Header, _) | (Mode::Auto, 0x85) => by_validator(Validator::Header),
        (Mode::Payload, _) | (Mode::Auto, 0x86) => by_validator(Validator::Payload),
        (Mode::Auto, _) => match core.decode(b) {
            Ok(Err(DecodeFail { field, offset })) => Some((field.to_string(), Some(offset))),
            Ok(Ok(d)) => match core.encode(d.opcode, &d.fields) {
                Ok(Ok(e)) if &e == b => None,
                Ok(Ok(_)) => Some(("roundtrip".to_string(), None)),
                Ok(Err(f)) => Some((format!("roundtrip:{f}"), None)),
                Err(f) => Some((f.to_string(), None)),
            },
            Err(f) => Some((f.to_string(), None)),
        },
    }
}

/// `0xNN` with uppercase digits.
pub fn opcode_str(op: u8) -> String {
    format!("0x{op:02X}")
}

/// The mnemonic of an opcode: SPEC §5.2 for the eleven, else the
/// reference's roster name when it has one.
pub fn mnemonic_of(op: u8) -> Option<&'static str> {
    crate::layout::mnemonic(op).or_else(|| registry::roster_mnemonic(op))
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

/// Renders one bundle's explanation (no trailing newline). `color` adds ANSI
/// escapes; the textual `<== FAILED` marker is always there.
pub fn explain_bundle(b: &[u8; 64], header: &str, color: bool, arch: Arch) -> (String, bool) {
    let verdict = judge(b, Mode::Auto, arch);
    let decoded = registry::core_for(arch).decode(b).ok().and_then(Result::ok);
    let hot: Vec<usize> = match &verdict {
        None => Vec::new(),
        Some((f, off)) => {
            let mut v = predicate_bytes(f, b);
            if v.is_empty() {
                if let Some(o) = off {
                    v.push(*o);
                }
            }
            v
        }
    };
    let mut s = String::new();
    let op = b[0];
    let status = match &verdict {
        None => "valid".to_string(),
        Some((f, Some(o))) => format!("INVALID: {f} (byte 0x{o:02X})"),
        Some((f, None)) => format!("INVALID: {f}"),
    };
    s.push_str(&format!(
        "{header} {} {}: {status}\n",
        opcode_str(op),
        mnemonic_of(op).unwrap_or("(not a decodable opcode)")
    ));
    s.push_str("  off   bytes                                            field                       value\n");
    for span in layout(op) {
        let bytes = &b[span.off..span.off + span.len];
        let failed_here = (span.off..span.off + span.len).any(|i| hot.contains(&i));
        // Byte column: at most 16 bytes per row.
        let mut rows: Vec<String> = Vec::new();
        for (ci, chunk) in bytes.chunks(16).enumerate() {
            let mut row = String::new();
            for (j, x) in chunk.iter().enumerate() {
                let i = span.off + ci * 16 + j;
                if j > 0 {
                    row.push(' ');
                }
                let h = format!("{x:02x}");
                if color && hot.contains(&i) {
                    row.push_str(&format!("{RED}{h}{RESET}"));
                } else if color && span.role == Role::Reserved && *x == 0 {
                    row.push_str(&format!("{DIM}{h}{RESET}"));
                } else {
                    row.push_str(&h);
                }
            }
            // pad to the width of 16 bytes (47 visible chars)
            let visible = chunk.len() * 3 - 1;
            row.push_str(&" ".repeat(47usize.saturating_sub(visible)));
            rows.push(row);
        }
        let value = match span.role {
            Role::Reserved => {
                if bytes.iter().all(|&x| x == 0) {
                    "(reserved, zero)".to_string()
                } else {
                    "(reserved, NONZERO)".to_string()
                }
            }
            Role::Const(v) => {
                if bytes[0] == v {
                    format!("0x{v:02X} (constant)")
                } else {
                    format!("0x{:02X} (expected constant 0x{v:02X})", bytes[0])
                }
            }
            Role::Unknown => "(no encoder for this opcode)".to_string(),
            Role::Field(Domain::Opcode) => opcode_str(op),
            // The mode's header name (FACTS §2 [H]).
            Role::Field(Domain::WaitMode | Domain::UpdateMode) => {
                match registry::mode_byte_name(span.name, bytes[0]) {
                    Some(n) => format!("0x{:02X} {n}", bytes[0]),
                    None => format!("0x{:02X} (not a member)", bytes[0]),
                }
            }
            Role::Field(_) => match decoded.as_ref().and_then(|d| d.get(span.name)) {
                Some(Value::Bytes(v)) => format!("({} bytes)", v.len()),
                Some(v) => v.to_string(),
                None if span.len <= 8 => format!("{} (raw)", le(bytes)),
                None => "(raw)".to_string(),
            },
        };
        let name = if span.role == Role::Reserved {
            "reserved"
        } else {
            span.name
        };
        let mark = if failed_here {
            match &verdict {
                Some((f, _)) => format!("  <== FAILED: {f}"),
                None => String::new(),
            }
        } else {
            String::new()
        };
        for (k, row) in rows.iter().enumerate() {
            let off = span.off + k * 16;
            if k == 0 {
                s.push_str(&format!(
                    "  0x{off:02X}  {row}  {name:<26}  {value}{mark}\n"
                ));
            } else {
                s.push_str(&format!("  0x{off:02X}  {row}\n"));
            }
        }
    }
    s.pop();
    (s, verdict.is_none())
}
