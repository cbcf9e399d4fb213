//! The JSON form of decoded fields (`tpbconform decode`, `encode`, tpb-subject/1): SPEC §5.2
//! names and order, ints as numbers, names as strings, byte ranges as lowercase hex.

use crate::layout::Kind;
use crate::strict_json::{Json, Object, Scan};
use crate::subjects::{hex, push_hex, FieldName, Value};
use serde_json::{Map, Value as J};

pub fn fields_json(fields: &[(FieldName, Value)]) -> Map<String, J> {
    let value = |v: &Value| match v {
        Value::Int(n) => J::from(*n),
        Value::Name(s) => J::from(s.as_str()),
        Value::Bytes(b) => J::from(hex(b)),
    };
    fields
        .iter()
        .map(|(name, v)| (name.to_string(), value(v)))
        .collect()
}

/// [`fields_json`] as text, written directly (a roundtrip case writes it per encode).
pub fn fields_text(fields: &[(FieldName, Value)]) -> String {
    use std::fmt::Write;
    let mut o = String::with_capacity(32 * fields.len() + 2);
    o.push('{');
    for (i, (name, v)) in fields.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        json_str(&mut o, name);
        o.push(':');
        match v {
            Value::Int(n) => {
                let _ = write!(o, "{n}");
            }
            Value::Name(s) => json_str(&mut o, s),
            Value::Bytes(b) => {
                o.push('"');
                push_hex(&mut o, b);
                o.push('"');
            }
        }
    }
    o.push('}');
    o
}

/// `{"error":{"field":…,"offset":…}}` (tpb_subject.h `tpb_decode`), written directly: most
/// bundles of a `decode_any` case fail to decode.
pub fn decode_error_text(field: &str, offset: u64) -> String {
    use std::fmt::Write;
    let mut o = String::with_capacity(48 + field.len());
    o.push_str(r#"{"error":{"field":"#);
    json_str(&mut o, field);
    let _ = write!(o, r#","offset":{offset}}}}}"#);
    o
}

/// A plain name as is, anything else escaped by `serde_json`.
fn json_str(o: &mut String, s: &str) {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
    {
        o.push('"');
        o.push_str(s);
        o.push('"');
    } else {
        o.push_str(&J::from(s).to_string());
    }
}

/// Exactly 128 hex digits, nothing else.
pub fn parse_bundle_hex(s: &str) -> Option<[u8; 64]> {
    if s.len() != 128 {
        return None;
    }
    // 128 bytes of text giving 64 bytes: no space among them.
    parse_hex_bytes(s)?.try_into().ok()
}

fn parse_hex_bytes(s: &str) -> Option<Vec<u8>> {
    let digits = crate::input::hex_nibbles(s.as_bytes(), false).ok()?;
    digits
        .len()
        .is_multiple_of(2)
        .then(|| crate::input::pack_nibbles(&digits))
}

/// Field `name`'s JSON value as a [`Value`] of its `kind`; the error names the field.
fn value_of(kind: Kind, name: &str, v: &Json<'_>) -> Result<Value, String> {
    match (kind, v) {
        (_, Json::U64(n)) => Ok(Value::Int(*n)),
        (_, n @ (Json::I64(_) | Json::F64(_))) => Err(format!(
            "field `{name}`: {n} is not an unsigned 64-bit integer"
        )),
        (Kind::Bytes, Json::Str(s)) => parse_hex_bytes(s)
            .map(Value::Bytes)
            .ok_or_else(|| format!("field `{name}`: {s:?} is not an even-length hex string")),
        (Kind::Name, Json::Str(s)) => Ok(Value::Name(s.to_string())),
        (Kind::Int, Json::Str(s)) => Err(format!(
            "field `{name}`: expected a number, got the string {s:?}"
        )),
        (_, other) => Err(format!(
            "field `{name}`: expected a number or string, got {other}"
        )),
    }
}

/// The inverse of [`fields_json`].
pub fn fields_from_json(fo: &Object<'_>) -> Result<Vec<(FieldName, Value)>, String> {
    fo.iter()
        .map(|(k, v)| {
            let (name, kind) = crate::layout::field(k);
            Ok((name, value_of(kind, k, v)?))
        })
        .collect()
}

/// [`fields_from_json`] straight from the text: `None` wherever unsure (an escape, a key
/// twice, any error), and then the caller's [`crate::strict_json::parse`] names the error.
pub fn fields_from_text(s: &mut Scan<'_>) -> Option<Vec<(FieldName, Value)>> {
    let mut out: Vec<(FieldName, Value)> = Vec::with_capacity(16);
    s.entries(|s, k| {
        let (name, kind) = crate::layout::field(k);
        if out.iter().any(|(n, _)| *n == name) {
            return None;
        }
        let v = match s.u64() {
            Some(n) => Json::U64(n),
            None => Json::Str(s.str()?.into()),
        };
        out.push((name, value_of(kind, k, &v).ok()?));
        Some(())
    })?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_text_is_the_fields_object_as_serde_json_writes_it() {
        let fields: Vec<(FieldName, Value)> = vec![
            ("opcode".into(), Value::Int(217)),
            ("op".into(), Value::Name("add".into())),
            ("odd".into(), Value::Name("a \"b\"\n".into())),
            ("src".into(), Value::Bytes(vec![0, 0xAB])),
            ("max".into(), Value::Int(u64::MAX)),
        ];
        assert_eq!(
            fields_text(&fields),
            J::Object(fields_json(&fields)).to_string()
        );
        assert_eq!(fields_text(&[]), "{}");
    }

    #[test]
    fn decode_error_text_is_the_answer_object_as_serde_json_writes_it() {
        use crate::external::protocol::{tests::answer_object, Answer};
        for (field, offset) in [("kind", 14), ("odd \"name\"", u64::MAX), ("", 0)] {
            let a = Answer::DecodeError {
                field: field.into(),
                offset,
            };
            assert_eq!(
                decode_error_text(field, offset),
                J::Object(answer_object(&a)).to_string()
            );
        }
    }

    #[test]
    fn bundle_hex_is_exactly_128_digits() {
        let ok = "0aF9".repeat(32);
        let b = parse_bundle_hex(&ok).expect("128 digits");
        assert_eq!((b[0], b[1], b[63]), (0x0A, 0xF9, 0xF9));
        for bad in [
            &ok[1..],
            &format!("{ok}0"),
            &format!(" {}", &ok[1..]),
            &format!("g{}", &ok[1..]),
        ] {
            assert_eq!(parse_bundle_hex(bad), None, "{bad}");
        }
        assert_eq!(parse_bundle_hex(&format!("é{}", &ok[2..])), None);
    }
}
