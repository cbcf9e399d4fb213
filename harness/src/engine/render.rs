//! Human-readable renderings of subject results, for divergence reports.

use crate::subjects::{
    hex, DecodeFail, Decoded, EncodeResult, FieldName, GateResult, LutResult, StreamResult, Value,
};

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
                s.push_str(&format!("    {it:?}\n"));
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
