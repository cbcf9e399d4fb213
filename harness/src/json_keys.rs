//! Duplicate JSON object keys, refused at every level: `serde_json` alone
//! keeps the last of two equal keys (and a derived struct only sees its own
//! fields), so `{"verdict": "FAIL", "verdict": "PASS"}` would read as PASS.
//! [`reject_duplicates`] walks a document without building it.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;

/// `Ok` when no object of `text` has a key twice; else the serde_json error
/// naming the key (with its line and column).
pub fn reject_duplicates(text: &str) -> Result<(), serde_json::Error> {
    let mut d = serde_json::Deserializer::from_str(text);
    NoDuplicates::deserialize(&mut d)?;
    d.end()
}

struct NoDuplicates;

impl<'de> Deserialize<'de> for NoDuplicates {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicatesVisitor)
    }
}

struct NoDuplicatesVisitor;

impl<'de> Visitor<'de> for NoDuplicatesVisitor {
    type Value = NoDuplicates;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<NoDuplicates, A::Error> {
        while s.next_element::<NoDuplicates>()?.is_some() {}
        Ok(NoDuplicates)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<NoDuplicates, A::Error> {
        let mut seen = HashSet::new();
        while let Some(k) = m.next_key::<String>()? {
            if !seen.insert(k.clone()) {
                return Err(de::Error::custom(format!("duplicate key \"{k}\"")));
            }
            m.next_value::<NoDuplicates>()?;
        }
        Ok(NoDuplicates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_at_any_level_are_refused() {
        assert!(reject_duplicates(r#"{"a": 1, "b": [{"c": 2}, {"c": 3}]}"#).is_ok());
        for bad in [
            r#"{"verdict": "FAIL", "verdict": "PASS"}"#,
            r#"{"a": {"x": 1, "x": 2}}"#,
            r#"[{"k": 0}, {"k": 1, "k": 1}]"#,
        ] {
            let e = reject_duplicates(bad).unwrap_err().to_string();
            assert!(e.contains("duplicate key"), "{bad}: {e}");
        }
        assert!(reject_duplicates("{} trailing").is_err());
    }
}
