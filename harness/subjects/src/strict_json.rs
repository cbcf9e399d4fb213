//! The one JSON reading of the harness: [`parse`] into a [`Json`] tree with duplicate object
//! keys refused at every level (`serde_json` alone keeps the last of two equal keys, so a
//! record could say two things and be read as one). Strings and keys are borrowed, objects are
//! entries in text order: a `lib:` gate reads JSON for every decode, encode and lowering case.
//! [`Scan`] reads the JSON the harness and its subjects write and gives up on anything else;
//! `serde_json` then reads the text, so every value and error (with line and column) is its.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// A JSON value read by [`parse`]: `U64` non-negative, `I64` negative integers, `F64` any other
/// number; a string borrowed unless it has escapes; an object's entries in text order, no key
/// twice.
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

pub type Object<'a> = [(Cow<'a, str>, Json<'a>)];

/// One JSON value; a key twice in one object (at any depth) is an error naming it.
pub fn parse(text: &str) -> Result<Json<'_>, serde_json::Error> {
    match Scan::whole(text) {
        Some(j) => Ok(j),
        None => serde_json::from_str(text),
    }
}

/// The fast reading of [`parse`]: where it reads a value, `serde_json` reads the same one
/// (tested on generated texts). A reader that knows the shape it expects can also pull values
/// straight off the text with no tree, then read it with [`parse`] where that gives `None`.
pub struct Scan<'a> {
    text: &'a str,
    at: usize,
}

/// Deeper nesting is left to `serde_json` (its own limit is 128).
const SCAN_DEPTH: u32 = 64;

impl<'a> Scan<'a> {
    pub fn new(text: &'a str) -> Scan<'a> {
        Scan { text, at: 0 }
    }

    /// Reads a `null` (true), or nothing (false).
    pub fn null(&mut self) -> bool {
        self.blank();
        let yes = self.text[self.at..].starts_with("null");
        self.at += if yes { 4 } else { 0 };
        yes
    }

    pub fn u64(&mut self) -> Option<u64> {
        self.blank();
        self.natural()
    }

    /// A string without escapes.
    pub fn str(&mut self) -> Option<&'a str> {
        self.blank();
        if self.peek()? != b'"' {
            return None;
        }
        self.string()
    }

    pub fn items(&mut self, item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.blank();
        if self.peek()? != b'[' {
            return None;
        }
        self.list(b']', item)
    }

    /// Each value by `entry` given its key (a key twice is the caller's to refuse).
    pub fn entries(
        &mut self,
        mut entry: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.blank();
        if self.peek()? != b'{' {
            return None;
        }
        self.list(b'}', |s| {
            let k = s.str()?;
            s.eat(b':')?;
            entry(s, k)
        })
    }

    /// Blanks only, to the end.
    pub fn end(&mut self) -> Option<()> {
        self.blank();
        (self.at == self.text.len()).then_some(())
    }

    fn whole(text: &'a str) -> Option<Json<'a>> {
        let mut s = Scan { text, at: 0 };
        let mut v = Json::Null;
        s.value(0, &mut v)?;
        s.blank();
        (s.at == text.len()).then_some(v)
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips what `serde_json` skips between tokens.
    fn blank(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.blank();
        (self.peek()? == c).then(|| self.at += 1)
    }

    fn word(&mut self, w: &str, v: Json<'a>, slot: &mut Json<'a>) -> Option<()> {
        self.text[self.at..].starts_with(w).then(|| {
            self.at += w.len();
            *slot = v;
        })
    }

    /// Into `slot` (which holds `null`).
    fn value(&mut self, depth: u32, slot: &mut Json<'a>) -> Option<()> {
        self.blank();
        match self.peek()? {
            b'"' => {
                *slot = Json::Str(Cow::Borrowed(self.string()?));
                Some(())
            }
            b'-' | b'0'..=b'9' => self.integer(slot),
            b'n' => self.word("null", Json::Null, slot),
            b't' => self.word("true", Json::Bool(true), slot),
            b'f' => self.word("false", Json::Bool(false), slot),
            b'[' if depth < SCAN_DEPTH => self.array(depth + 1, slot),
            b'{' if depth < SCAN_DEPTH => self.object(depth + 1, slot),
            _ => None,
        }
    }

    fn string(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        let start = self.at + 1;
        let len = b[start..]
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
        let end = start + len;
        (b[end] == b'"').then(|| {
            self.at = end + 1;
            &self.text[start..end]
        })
    }

    /// Without fraction or exponent, fitting `u64` (negative: `i64`).
    fn integer(&mut self, slot: &mut Json<'a>) -> Option<()> {
        let negative = self.peek() == Some(b'-');
        self.at += usize::from(negative);
        // A `None` ends the scan (the text is then serde_json's).
        *slot = match (negative, self.natural()?) {
            (false, n) => Json::U64(n),
            // "-0" is serde_json's too.
            (true, n) if n != 0 => Json::I64(0i64.checked_sub_unsigned(n)?),
            _ => return None,
        };
        Some(())
    }

    /// The digits at hand as a `u64`, read only if they are one: not "01",
    /// "1.5", "1e3" or past `u64` (serde_json's: an error, or a float).
    fn natural(&mut self) -> Option<u64> {
        let b = self.text.as_bytes();
        let start = self.at;
        let (mut n, mut end) = (0u64, start);
        while let Some(d) = b.get(end).map(|c| c.wrapping_sub(b'0')).filter(|d| *d < 10) {
            // Wraps only past 19 digits, checked below.
            n = n.wrapping_mul(10).wrapping_add(u64::from(d));
            end += 1;
        }
        let digits = &b[start..end];
        let fits = match digits.len() {
            0 => false,
            1..=19 => true,
            // Same length: the text order is the numbers' order.
            20 => digits <= b"18446744073709551615".as_slice(),
            _ => false,
        };
        if !fits
            || (digits.len() > 1 && digits[0] == b'0')
            || matches!(b.get(end), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        self.at = end;
        Some(n)
    }

    /// The comma-separated items up to `close` (the opening byte at hand).
    fn list(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.at += 1;
        self.blank();
        if self.peek()? != close {
            loop {
                item(self)?;
                self.blank();
                match self.peek()? {
                    b',' => self.at += 1,
                    c if c == close => break,
                    _ => return None,
                }
            }
        }
        self.at += 1;
        Some(())
    }

    fn array(&mut self, depth: u32, slot: &mut Json<'a>) -> Option<()> {
        let mut v = Vec::with_capacity(4);
        self.list(b']', |s| {
            // Not `push(Json::Null)`: that wrote the tag to the stack and
            // copied it whole, a stalled store-to-load forward.
            v.resize_with(v.len() + 1, || Json::Null);
            s.value(depth, v.last_mut()?)
        })?;
        *slot = Json::Array(v);
        Some(())
    }

    fn object(&mut self, depth: u32, slot: &mut Json<'a>) -> Option<()> {
        let mut o: Vec<(Cow<'a, str>, Json<'a>)> = Vec::with_capacity(8);
        self.list(b'}', |s| {
            let k = s.str()?;
            // A key twice: serde_json's error. Objects here are small.
            if o.len() >= 32 || o.iter().any(|(x, _)| *x == k) {
                return None;
            }
            s.eat(b':')?;
            o.push((Cow::Borrowed(k), Json::Null));
            s.value(depth, &mut o.last_mut()?.1)
        })?;
        *slot = Json::Object(o);
        Some(())
    }
}

pub fn get<'o, 'a>(o: &'o Object<'a>, key: &str) -> Option<&'o Json<'a>> {
    o.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

impl<'a> Json<'a> {
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Json::U64(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.as_object().and_then(|o| get(o, key))
    }

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

/// Compact JSON, as `serde_json` writes it (error messages quote a bad value this way).
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
        // A key is read as a value: serde_json reads keys as strings only.
        while let Some(k) = m.next_key::<Json<'de>>()? {
            let Json::Str(k) = k else {
                return Err(de::Error::custom("a key that is not a string"));
            };
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

/// The harness's one PRNG (`generators::SplitMix64`), included as a file
/// for the tests (this crate is below the generators).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../generators/src/generators/rng.rs"]
mod test_rng;

#[cfg(test)]
mod tests {
    use super::test_rng::SplitMix64;
    use super::{parse, Json, Scan};
    use serde_json::Value;

    /// A random JSON text of depth at most `depth`, in the shapes the
    /// harness and its subjects write and some they do not.
    fn text(r: &mut SplitMix64, depth: u32, o: &mut String) {
        let blank = [" ", "", "", "\n", "\t", "\r\n  "];
        o.push_str(blank[r.below(6) as usize]);
        let pick = if depth == 0 { r.below(5) } else { r.below(7) };
        match pick {
            0 => o.push_str(["null", "true", "false", "nul", "True"][r.below(5) as usize]),
            1 | 2 => {
                let ints = [
                    "0",
                    "7",
                    "-1",
                    "-0",
                    "01",
                    "18446744073709551615",
                    "18446744073709551616",
                    "-9223372036854775808",
                    "-9223372036854775809",
                    "1.5",
                    "1e3",
                    "-",
                    "2E-2",
                    "12345678901234567890",
                    "00",
                    "-01",
                ];
                if r.below(3) == 0 {
                    o.push_str(ints[r.below(ints.len() as u64) as usize]);
                } else {
                    o.push_str(&r.below(u64::MAX).to_string());
                }
            }
            3 | 4 => {
                let strs = [
                    "\"a\"",
                    "\"\"",
                    "\"x\\\"y\"",
                    "\"\\u0061\"",
                    "\"é\"",
                    "\"\u{1}\"",
                    "\"tab\there\"",
                    "\"unterminated",
                ];
                o.push_str(strs[r.below(strs.len() as u64) as usize]);
            }
            5 => {
                o.push('[');
                for i in 0..r.below(4) {
                    if i > 0 {
                        o.push(',');
                    }
                    text(r, depth - 1, o);
                }
                o.push_str(if r.below(20) == 0 { ",]" } else { "]" });
            }
            _ => {
                o.push('{');
                let keys = ["a", "b", "op", "a", "\\u0061", "fields"];
                for i in 0..r.below(4) {
                    if i > 0 {
                        o.push(',');
                    }
                    o.push_str(&format!(
                        "\"{}\":",
                        keys[r.below(keys.len() as u64) as usize]
                    ));
                    text(r, depth - 1, o);
                }
                o.push('}');
            }
        }
        o.push_str(blank[r.below(6) as usize]);
    }

    /// Where the scanner reads a value, `serde_json` reads the same one
    /// (through the same tree), and it reads the texts the harness writes.
    #[test]
    fn the_scanner_reads_what_serde_json_reads_or_gives_up() {
        let mut r = SplitMix64(7);
        let (mut scanned, mut total) = (0, 0);
        for _ in 0..20_000 {
            let mut t = String::new();
            text(&mut r, 4, &mut t);
            let mut texts = vec![t.clone()];
            // And with one character cut or doubled, at three places.
            for _ in 0..3 {
                let i = r.index(t.len());
                if let Some(c) = t.get(i..).and_then(|rest| rest.chars().next()) {
                    let mut cut = t.clone();
                    cut.remove(i);
                    texts.push(cut);
                    let mut twice = t.clone();
                    twice.insert(i, c);
                    texts.push(twice);
                }
            }
            for t in texts.iter().filter(|t| t.is_char_boundary(0)) {
                total += 1;
                let serde = serde_json::from_str::<Json<'_>>(t);
                if let Some(j) = Scan::whole(t) {
                    scanned += 1;
                    assert_eq!(serde.as_ref().ok(), Some(&j), "{t:?}");
                }
                // parse is one or the other, and equals serde's reading.
                match (parse(t), serde) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{t:?}"),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{t:?}"),
                    (a, b) => panic!("{t:?}: {a:?} but {b:?}"),
                }
            }
        }
        assert!(scanned * 4 > total, "the scanner read {scanned} of {total}");
        let doc = r#"{"generation":"v3","instructions":[{"op":"send","tensor_id":4096,
            "tensor_base":0,"num_elements_per_partition":64,"peer":1,"sync":{"wait_mode":3}}]}"#;
        assert!(Scan::whole(doc).is_some(), "an IR document");
        let answer = r#"{"opcode":"0x85","fields":{"debug_cmd":0,"src":"00ff","op":"add"}}"#;
        assert!(Scan::whole(answer).is_some(), "a decode answer");
    }

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
            "[1}",
            r#"[{"a":1]"#,
            r#"{"a":[1}"#,
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
        assert_eq!(n.get("o").and_then(|o| o.get("k")), Some(&Json::Bool(true)));
        assert_eq!(n.get("absent"), None);
    }
}
