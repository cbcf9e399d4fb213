//! The one JSON reading of the harness: [`parse`] into a [`Json`] tree with
//! duplicate object keys refused at every level. `serde_json` alone keeps
//! the last of two equal keys (`{"generation":"v2","generation":"v5"}`
//! reads as v5), so a record could say two things and be read as one of
//! them. Every JSON reader parses through here: `encode`, `lower`, `check
//! --neff`'s `def.json`, the subject protocol (hello, answers, requests),
//! the library worker reading its library's answers, and the reference
//! library reading its requests. Strings and keys are borrowed from the
//! text, an object is its entries in text order (no hash map, no copy per
//! key): a `lib:` gate reads a JSON answer or request for every decode,
//! encode and lowering case. Errors are `serde_json`'s (the scanner is
//! its), with line and column.

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// A JSON value read by [`parse`].
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A non-negative integer.
    U64(u64),
    /// A negative integer.
    I64(i64),
    /// Any other number.
    F64(f64),
    /// A string, borrowed from the text unless it has escapes.
    Str(Cow<'a, str>),
    /// An array.
    Array(Vec<Json<'a>>),
    /// An object's entries, in text order, no key twice.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

/// An object's entries (see [`Json::Object`]).
pub type Object<'a> = [(Cow<'a, str>, Json<'a>)];

/// Parses `text` as one JSON value; a key given twice in one object (at
/// any depth) is an error naming the key, with its line and column.
pub fn parse(text: &str) -> Result<Json<'_>, serde_json::Error> {
    serde_json::from_str(text)
}

/// The value of `key` in an object's entries.
pub fn get<'o, 'a>(o: &'o Object<'a>, key: &str) -> Option<&'o Json<'a>> {
    o.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

impl<'a> Json<'a> {
    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// A boolean's value.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Json::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// A non-negative integer's value.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Json::U64(n) => Some(n),
            _ => None,
        }
    }

    /// A string's text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An array's elements.
    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// An object's entries.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The value of `key` when this is an object holding it.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.as_object().and_then(|o| get(o, key))
    }

    /// As a `serde_json` value (for writing one back, and in tests).
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::U64(n) => Value::from(*n),
            Json::I64(n) => Value::from(*n),
            Json::F64(x) => Value::from(*x),
            Json::Str(s) => Value::String(s.to_string()),
            Json::Array(a) => Value::Array(a.iter().map(Json::to_value).collect()),
            Json::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.to_string(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

/// Compact JSON, as `serde_json` writes the same value (error messages
/// quote a bad value this way).
impl fmt::Display for Json<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_value(), f)
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        // serde_json gives a non-negative integer to visit_u64.
        Ok(u64::try_from(v).map_or(Json::I64(v), Json::U64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::U64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
        Ok(Json::F64(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Json<'de>, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = s.next_element()? {
            v.push(x);
        }
        Ok(Json::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Json<'de>, A::Error> {
        let mut o: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        // A long object's keys also go in a set, so a duplicate is found
        // in linear time.
        let mut long: Option<HashSet<Cow<'de, str>>> = None;
        while let Some(k) = m.next_key_seed(Key)? {
            let twice = match &mut long {
                Some(set) => !set.insert(k.clone()),
                None => o.iter().any(|(x, _)| *x == k),
            };
            if twice {
                return Err(de::Error::custom(format!("duplicate key \"{k}\"")));
            }
            let v = m.next_value()?;
            o.push((k, v));
            if o.len() == 32 && long.is_none() {
                long = Some(o.iter().map(|(k, _)| k.clone()).collect());
            }
        }
        Ok(Json::Object(o))
    }
}

/// An object key, borrowed from the text unless it has escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, Json};
    use serde_json::Value;

    #[test]
    fn duplicate_keys_are_refused_at_every_level() {
        assert!(parse(r#"{"a":1,"b":{"c":[{"d":2}]}}"#).is_ok());
        let long: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let long = format!("{{{}}}", long.join(","));
        assert!(parse(&long).is_ok());
        let long_twice = format!("{},\n \"k39\":0}}", &long[..long.len() - 1]);
        for text in [
            r#"{"a":1,"a":1}"#,
            r#"{"a":{"b":1,"b":2}}"#,
            r#"[{"x":[{"y":0,"y":0}]}]"#,
            r#"{"verdict": "FAIL", "verdict": "PASS"}"#,
            r#"[{"k": 0}, {"k": 1, "k": 1}]"#,
            r#"{"\u0061":1,"a":2}"#,
            &long_twice,
        ] {
            let e = parse(text).expect_err(text).to_string();
            assert!(e.contains("duplicate key"), "{text}: {e}");
        }
        let e = parse("{\n\"generation\":\"v2\",\n\"generation\":\"v5\"}").unwrap_err();
        assert!(
            e.to_string().contains("duplicate key \"generation\""),
            "{e}"
        );
        assert_eq!(e.line(), 3, "{e}");
        assert!(parse("{} trailing").is_err());
    }

    /// What serde_json reads the same text as (it keeps a key's last
    /// value where `parse` refuses the object).
    #[test]
    fn a_tree_is_the_value_serde_json_reads_and_errors_are_its_errors() {
        for text in [
            r#"{"a":1,"b":{"c":[{"d":2}]}}"#,
            r#"[1,-2,3.5,1e3,"x\"y",null,true,false,{"\u0061":[]}]"#,
            "[-0,0,18446744073709551615,-9223372036854775808,1e400]",
            r#"{"z":1,"a":2,"m":{"y":[],"b":{}}}"#,
            "{} trailing",
            "{\"a\":",
            "{1:2}",
            "[1,]",
            "\"\\q\"",
            "",
        ] {
            match (parse(text), serde_json::from_str::<Value>(text)) {
                (Ok(n), Ok(v)) => {
                    assert_eq!(n.to_value(), v, "{text}");
                    assert_eq!(n.to_string(), v.to_string(), "{text}");
                    let t = n.to_string();
                    assert_eq!(parse(&t).unwrap(), n, "{text}");
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
                (a, b) => panic!("{text}: {a:?} but {b:?}"),
            }
        }
        let n = parse(r#"{"s":"x","e":"\n","n":7,"m":-7,"o":{"k":true}}"#).unwrap();
        assert!(matches!(
            n.get("s"),
            Some(Json::Str(std::borrow::Cow::Borrowed("x")))
        ));
        assert_eq!(n.get("e").and_then(Json::as_str), Some("\n"));
        assert_eq!(n.get("n").and_then(Json::as_u64), Some(7));
        assert_eq!(n.get("m").and_then(Json::as_u64), None);
        assert_eq!(
            n.get("o").and_then(|o| o.get("k")).and_then(Json::as_bool),
            Some(true)
        );
        assert_eq!(n.get("absent"), None);
    }
}
