//! Human-readable renderings of subject results, for divergence reports:
//! SPEC names (`inst_word_len`, `valid`, `err:not_shipped`), never Rust
//! Debug forms (`Some(InstWordLen)`, `Err(Known("not_shipped"))`).

use crate::subjects::{
    hex, verdict_name, DecodeFail, Decoded, EncodeResult, FieldName, IrAnswer, LutResult, Route,
    StreamResult, StreamSummary, Value, Verdict,
};

/// A subject's answer as a report prints it (SPEC names).
pub trait Shown {
    fn shown(&self) -> String;
}

impl Shown for Verdict {
    fn shown(&self) -> String {
        verdict_name(self).to_string()
    }
}

/// A decoded bundle, one field per line.
impl Shown for Result<Decoded, DecodeFail> {
    fn shown(&self) -> String {
        match self {
            Ok(d) => {
                let mut s = format!("Ok {} (0x{:02X})\n", d.mnemonic, d.opcode);
                for (n, v) in &d.fields {
                    s.push_str(&format!("    {n} = {v}\n"));
                }
                s
            }
            Err(e) => format!("Err({e})"),
        }
    }
}

impl Shown for EncodeResult {
    fn shown(&self) -> String {
        match self {
            Ok(b) => format!("Ok {}", hex(b)),
            Err(e) => format!("Err(field {e})"),
        }
    }
}

/// One stream item per line: `group header 0 output 1 args [2, 3]` or `bundle 4 opcode 0xBE`.
impl Shown for StreamResult {
    fn shown(&self) -> String {
        let v = match self {
            Ok(v) => v,
            Err(e) => return format!("Err({e})"),
        };
        let mut s = String::from("Ok [\n");
        for it in v {
            let item = match it {
                &StreamSummary::Group {
                    header_index: h,
                    n_args,
                } => {
                    let a: Vec<String> = (h + 2..h + 2 + n_args).map(|i| i.to_string()).collect();
                    format!("group header {h} output {} args [{}]", h + 1, a.join(", "))
                }
                StreamSummary::Other { index, opcode } => {
                    format!("bundle {index} opcode 0x{opcode:02X}")
                }
            };
            s.push_str(&format!("    {item}\n"));
        }
        s.push(']');
        s
    }
}

impl Shown for Result<(), crate::subjects::StreamFail> {
    fn shown(&self) -> String {
        match self {
            Ok(()) => "valid".to_string(),
            Err(e) => e.to_string(),
        }
    }
}

/// `0xNN` or `err:<name>`.
impl Shown for LutResult {
    fn shown(&self) -> String {
        match self {
            Ok(b) => format!("0x{b:02X}"),
            Err(e) => format!("err:{e}"),
        }
    }
}

/// A gate: `ok` or `err:<name>`; a route: `sb2sb` or `dma` (SPEC §7).
impl Shown for IrAnswer {
    fn shown(&self) -> String {
        match self {
            IrAnswer::Gate(Ok(())) => "ok".to_string(),
            IrAnswer::Gate(Err(e)) => format!("err:{e}"),
            IrAnswer::Route(Route::Sb2sb) => "sb2sb".to_string(),
            IrAnswer::Route(Route::Dma) => "dma".to_string(),
        }
    }
}

/// The short verdict of a decode failure (`reserved@0xNN` for reserved bytes).
pub fn fail_key(f: &DecodeFail) -> String {
    if f.field.as_str() == "reserved" {
        format!("reserved@0x{:02X}", f.offset)
    } else {
        f.field.to_string()
    }
}

/// The first field two decodes disagree on (`field_order:<name>` when the
/// names differ).
pub fn first_field_diff(a: &[(FieldName, Value)], b: &[(FieldName, Value)]) -> String {
    for (x, y) in a.iter().zip(b.iter()) {
        if x.0 != y.0 {
            return format!("field_order:{}", x.0);
        }
        if x.1 != y.1 {
            return x.0.to_string();
        }
    }
    match (a.get(b.len()), b.get(a.len())) {
        (Some(x), _) => x.0.to_string(),
        (_, Some(y)) => y.0.to_string(),
        _ => "fields".to_string(),
    }
}
