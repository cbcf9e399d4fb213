//! JSON with duplicate object keys refused at every level. `serde_json`
//! alone keeps the last of two equal keys (`{"generation":"v2",
//! "generation":"v5"}` reads as v5), so a record could say two things and
//! be read as one of them; every JSON reader of the harness (`encode`,
//! `lower`, `report merge`, the subject protocol) parses through [`parse`].

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as J;

/// Parses `text` as one JSON value; a key given twice in one object (at
/// any depth) is an error naming the key, with its line and column.
pub fn parse(text: &str) -> Result<J, serde_json::Error> {
    serde_json::from_str::<Strict>(text).map(|Strict(v)| v)
}

/// A JSON value parsed with duplicate object keys refused at every level
/// (`serde_json` alone keeps the last one).
pub struct Strict(pub J);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = J;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<J, E> {
        Ok(J::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<J, E> {
        Ok(J::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<J, E> {
        Ok(J::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<J, E> {
        Ok(J::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<J, E> {
        Ok(J::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<J, E> {
        Ok(J::String(v))
    }
    fn visit_unit<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_none<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<J, A::Error> {
        let mut v = Vec::new();
        while let Some(Strict(x)) = s.next_element()? {
            v.push(x);
        }
        Ok(J::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<J, A::Error> {
        use serde_json::map::Entry;
        let mut o = serde_json::Map::new();
        while let Some(k) = m.next_key::<String>()? {
            // One lookup per key (a subject's answers are read here).
            match o.entry(k) {
                Entry::Occupied(e) => {
                    return Err(de::Error::custom(format!("duplicate key \"{}\"", e.key())));
                }
                Entry::Vacant(e) => {
                    let Strict(v) = m.next_value()?;
                    e.insert(v);
                }
            }
        }
        Ok(J::Object(o))
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn duplicate_keys_are_refused_at_every_level() {
        assert!(parse(r#"{"a":1,"b":{"c":[{"d":2}]}}"#).is_ok());
        for text in [
            r#"{"a":1,"a":1}"#,
            r#"{"a":{"b":1,"b":2}}"#,
            r#"[{"x":[{"y":0,"y":0}]}]"#,
            r#"{"verdict": "FAIL", "verdict": "PASS"}"#,
            r#"[{"k": 0}, {"k": 1, "k": 1}]"#,
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
}
