//! Human-readable renderings of subject results, for divergence reports:
//! SPEC names (`inst_word_len`, `valid`, `err:not_shipped`), never Rust
//! Debug forms (`Some(InstWordLen)`, `Err(Known("not_shipped"))`).

use crate::subjects::{
    hex, verdict_name, DecodeFail, Decoded, EncodeResult, FieldName, GateResult, IrAnswer,
    LutResult, Route, StreamResult, StreamSummary, Value, Verdict,
};

/// A subject's answer as a report prints it (SPEC names).
pub trait Shown {
    /// The rendering.
    fn shown(&self) -> String;
}

impl Shown for Verdict {
    fn shown(&self) -> String {
        verdict_name(self).to_string()
    }
}

impl Shown for Result<Decoded, DecodeFail> {
    fn shown(&self) -> String {
        decode_long(self)
    }
}

impl Shown for EncodeResult {
    fn shown(&self) -> String {
        encode_long(self)
    }
}

impl Shown for StreamResult {
    fn shown(&self) -> String {
        stream_long(self)
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

impl Shown for LutResult {
    fn shown(&self) -> String {
        lut_str(self)
    }
}

impl Shown for IrAnswer {
    fn shown(&self) -> String {
        match self {
            IrAnswer::Gate(g) => gate_str(g),
            IrAnswer::Route(r) => route_name(*r).to_string(),
        }
    }
}

/// `sb2sb` or `dma` (SPEC §7).
pub fn route_name(r: Route) -> &'static str {
    match r {
        Route::Sb2sb => "sb2sb",
        Route::Dma => "dma",
    }
}

/// One stream item: `group header 0 output 1 args [2, 3]` or `bundle 4 opcode 0xBE`.
pub fn stream_item(it: &StreamSummary) -> String {
    match it {
        StreamSummary::Group {
            header_index,
            output,
            args,
        } => {
            let a: Vec<String> = args.iter().map(ToString::to_string).collect();
            format!(
                "group header {header_index} output {output} args [{}]",
                a.join(", ")
            )
        }
        StreamSummary::Other { index, opcode } => format!("bundle {index} opcode 0x{opcode:02X}"),
    }
}

/// `0xNN` or `err:<name>`.
pub fn lut_str(r: &LutResult) -> String {
    match r {
        Ok(b) => format!("0x{b:02X}"),
        Err(e) => format!("err:{e}"),
    }
}

/// `ok` or `err:<name>`.
pub fn gate_str(r: &GateResult) -> String {
    match r {
        Ok(()) => "ok".to_string(),
        Err(e) => format!("err:{e}"),
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

/// A decoded bundle, one field per line.
pub fn decoded_long(d: &Decoded) -> String {
    let mut s = format!("Ok {} (0x{:02X})\n", d.mnemonic, d.opcode);
    for (n, v) in &d.fields {
        s.push_str(&format!("    {n} = {v}\n"));
    }
    s
}

/// A decode result.
pub fn decode_long(r: &Result<Decoded, DecodeFail>) -> String {
    match r {
        Ok(d) => decoded_long(d),
        Err(e) => format!("Err({e})"),
    }
}

/// An encode result.
pub fn encode_long(r: &EncodeResult) -> String {
    match r {
        Ok(b) => format!("Ok {}", hex(b)),
        Err(e) => format!("Err(field {e})"),
    }
}

/// A stream parse result.
pub fn stream_long(r: &StreamResult) -> String {
    match r {
        Ok(v) => {
            let mut s = String::from("Ok [\n");
            for it in v {
                s.push_str(&format!("    {}\n", stream_item(it)));
            }
            s.push(']');
            s
        }
        Err(e) => format!("Err({e})"),
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
