//! What a comparison says: [`Outcome`] (zero or more [`Divergence`]s), each with a [`Class`]
//! and a deduplication [`Signature`]. The *left* subject is the one under test, the *right*
//! one its reference (core vs oracle: left = core; a subject X: left = X, right = core);
//! classes are named from the left's perspective.

use crate::subjects::{hex, DecodeFail, Decoded, EncodeResult, Fault, Verdict};
use crate::targets::Target;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Declares [`Class`], [`Class::ALL`] (in a stable order), [`Class::name`], [`Class::lower`].
macro_rules! classes {
    ($($(#[$doc:meta])* $v:ident = $lower:literal,)*) => {
        /// Divergence class, named from the left subject's perspective. Written to
        /// `divergences.jsonl` as its name and read back by that name only; ordered by name
        /// (the order a target's findings are listed in: the variants are in name order).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(into = "&'static str", try_from = "String")]
        pub enum Class { $($(#[$doc])* $v,)* }

        impl Class {
            pub const ALL: [Class; [$(stringify!($v)),*].len()] = [$(Class::$v),*];

            pub fn name(self) -> &'static str {
                match self { $(Class::$v => stringify!($v),)* }
            }

            /// The name in lower case (`crash`: a fault's answer, a key's suffix).
            pub fn lower(self) -> &'static str {
                match self { $(Class::$v => $lower,)* }
            }
        }
    };
}

// `Crash`, `Protocol`, `Timeout`, `Unsupported`: a subject's `Fault` for an operation its
// capabilities promise.
classes! {
    Crash = "crash",
    /// Both accept, different outputs (or a shared invariant failure, e.g. a roundtrip).
    DifferentOutput = "differentoutput",
    /// The harness's transport lost, left unwritten or misplaced an
    /// answer: a harness / protocol fault, never the subject's divergence.
    Harness = "harness",
    /// Left accepts (valid / `Ok`), right rejects.
    OverAccept = "overaccept",
    Panic = "panic",
    Protocol = "protocol",
    /// Both reject, with different predicate / field / offset / error names.
    SameVerdictDifferentReason = "sameverdictdifferentreason",
    Timeout = "timeout",
    UnderAccept = "underaccept",
    Unsupported = "unsupported",
    /// A `corpus/vectors/` line's expectation not met.
    VectorMismatch = "vectormismatch",
}

impl Class {
    pub fn of_fault(f: &Fault) -> Class {
        match f {
            Fault::Unsupported => Class::Unsupported,
            Fault::Crash(_) | Fault::NotSent(_) => Class::Crash,
            Fault::Timeout(_) => Class::Timeout,
            Fault::Protocol(_) => Class::Protocol,
            Fault::Harness(_) => Class::Harness,
        }
    }

    pub fn from_accepts(left_ok: bool, right_ok: bool) -> Class {
        match (left_ok, right_ok) {
            (true, false) => Class::OverAccept,
            (false, true) => Class::UnderAccept,
            (false, false) => Class::SameVerdictDifferentReason,
            (true, true) => Class::DifferentOutput,
        }
    }
}

impl From<Class> for &'static str {
    fn from(c: Class) -> &'static str {
        c.name()
    }
}

impl TryFrom<String> for Class {
    type Error = String;
    fn try_from(s: String) -> Result<Class, String> {
        Class::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("unknown class `{s}`"))
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One implementation's answer about one bundle, as [`crate::blame::blamed_bytes`] reads it;
/// written as data to `divergences.jsonl` (`"valid"`, `{"rejected":{"reason":…,"offset":…}}`,
/// `{"reencoded":"<hex>"}`, `{"fault":…}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Answer {
    /// Accepted (valid, or decoded and re-encoded to the same bytes).
    Valid,
    /// `reason`: a SPEC §3/§4 predicate or §5.1 decode field name (`roundtrip:<field>` when
    /// re-encoding refused the field); `offset`: the offending byte it named, if any.
    Rejected {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        offset: Option<usize>,
    },
    /// Decoded, but re-encoding gave these other bytes (SPEC §5.1 roundtrip).
    Reencoded(#[serde(with = "bundle_hex")] Box<[u8; 64]>),
    /// The implementation gave no answer (`panic`, or a fault class: `crash`, `timeout`, …).
    Fault(String),
}

impl Answer {
    /// A validator verdict (a validator reply carries no offset).
    pub fn from_verdict(v: &Verdict) -> Answer {
        match v {
            None => Answer::Valid,
            Some(p) => Answer::Rejected {
                reason: p.name().to_string(),
                offset: None,
            },
        }
    }

    pub fn from_decode_fail(d: &DecodeFail) -> Answer {
        Answer::Rejected {
            reason: d.field.to_string(),
            offset: Some(d.offset),
        }
    }

    pub fn of_decode(r: &Result<Decoded, DecodeFail>) -> Answer {
        r.as_ref()
            .map_or_else(Answer::from_decode_fail, |_| Answer::Valid)
    }

    /// A re-encoding `r` of bundle `b`: the same bytes, other bytes, or the field refused.
    pub fn of_encode(r: &EncodeResult, b: &[u8; 64]) -> Answer {
        match r {
            Ok(x) if x == b => Answer::Valid,
            Ok(x) => Answer::Reencoded(Box::new(*x)),
            Err(f) => Answer::Rejected {
                reason: format!("roundtrip:{f}"),
                offset: None,
            },
        }
    }

    /// The short verdict: `None` for valid, else the reason (`roundtrip`, a fault's text).
    pub fn reason(&self) -> Option<&str> {
        match self {
            Answer::Valid => None,
            Answer::Rejected { reason, .. } => Some(reason),
            Answer::Reencoded(_) => Some("roundtrip"),
            Answer::Fault(f) => Some(f),
        }
    }

    pub fn offset(&self) -> Option<usize> {
        match self {
            Answer::Rejected { offset, .. } => *offset,
            _ => None,
        }
    }
}

/// Each side's [`Answer`] of a divergence about one bundle's bytes; `None` for a side whose
/// answer is not about the bytes, and for every other target.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answers {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<Answer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right: Option<Answer>,
}

impl Answers {
    pub fn of(left: Answer, right: Answer) -> Answers {
        Answers {
            left: Some(left),
            right: Some(right),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.left.is_none() && self.right.is_none()
    }
}

/// A re-encoded bundle as 128 hex digits.
mod bundle_hex {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8; 64], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::subjects::hex(b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Box<[u8; 64]>, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() != 128 {
            return Err(D::Error::custom(format!(
                "a re-encoding is 128 hex digits, not {}",
                s.len()
            )));
        }
        crate::fields_json::parse_bundle_hex(&s)
            .map(Box::new)
            .ok_or_else(|| D::Error::custom("a re-encoding has a non-hex digit"))
    }
}

/// Deduplication key of a divergence (inputs are not part of it).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    /// Predicate, field, LUT or gate name (`reserved`, `alu_lut`, `roundtrip.self`, …).
    pub key: String,
    /// Short verdicts (`valid`, a predicate, `ok`, `err:<name>`, …).
    pub left: String,
    pub right: String,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} vs {}", self.key, self.left, self.right)
    }
}

/// One disagreement between two subjects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    pub target: Target,
    pub input: Vec<u8>,
    /// The case derived from the input, readable (`ordinal 24`).
    pub case: String,
    pub left_name: String,
    pub right_name: String,
    pub left: String,
    pub right: String,
    pub signature: Signature,
    pub class: Class,
    /// With two or more subjects under test judged: who gave which answer.
    pub cohorts: Vec<Cohort>,
    /// Each side's typed answer about the bundle (bundle comparisons only).
    pub answers: Answers,
}

/// One group of implementations that gave the same answer on an input (a report record's too).
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(deny_unknown_fields)]
pub struct Cohort {
    /// Implementation names, in judge order.
    pub members: Vec<String>,
    /// Their short verdict, prefixed with the signature key (`cce_lut=0x01`) when the diverging
    /// subjects disagree on different parts of the answer (a key that names no verdict).
    pub answer: String,
}

/// The cohorts with their answers, one line: `{core, oracle, lib:a}: valid; {cmd:b}: …`.
pub struct Line<'a>(pub &'a [Cohort]);

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{{{}}}: {}", c.members.join(", "), c.answer)?;
        }
        Ok(())
    }
}

/// What a whole-case kind files (`kinds::DescribedCase`): class, signature key, description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filed {
    pub class: Class,
    pub key: String,
    pub text: String,
}

impl Filed {
    pub fn new(class: Class, key: impl Into<String>, text: impl Into<String>) -> Filed {
        let (key, text) = (key.into(), text.into());
        Filed { class, key, text }
    }
}

impl Divergence {
    pub fn with_answers(self, left: Answer, right: Answer) -> Divergence {
        Divergence {
            answers: Answers::of(left, right),
            ..self
        }
    }

    /// The report without the line diff of a multi-line `DifferentOutput` (the lean fuzz
    /// entries do not link the differ).
    pub fn head(&self) -> Head<'_> {
        Head(self)
    }
}

pub struct Head<'a>(&'a Divergence);

impl fmt::Display for Head<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        writeln!(f, "divergence in target `{}` [{}]", d.target, d.class)?;
        writeln!(
            f,
            "  signature: {} — {}={} {}={}",
            d.signature.key, d.left_name, d.signature.left, d.right_name, d.signature.right
        )?;
        writeln!(f, "  input ({} bytes): {}", d.input.len(), hex(&d.input))?;
        if !d.case.is_empty() {
            writeln!(f, "  case: {}", d.case)?;
        }
        writeln!(f, "  {}: {}", d.left_name, d.left)?;
        write!(f, "  {}: {}", d.right_name, d.right)?;
        if !d.cohorts.is_empty() {
            write!(f, "\n  cohorts: {}", Line(&d.cohorts))?;
        }
        Ok(())
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.head())?;
        if self.class == Class::DifferentOutput && self.left.contains('\n') {
            let diff = similar::TextDiff::from_lines(&self.left, &self.right);
            write!(
                f,
                "\n  diff ({} → {}):\n{}",
                self.left_name,
                self.right_name,
                diff.unified_diff().context_radius(2)
            )?;
        }
        Ok(())
    }
}

/// Every divergence of one input of one target (none: all agree). When the reference pair
/// disagrees, that is the only one: no subject is judged on a case whose reference is in doubt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome(pub Vec<Divergence>);

impl Outcome {
    pub fn agree() -> Outcome {
        Outcome(Vec::new())
    }

    pub fn is_agree(&self) -> bool {
        self.0.is_empty()
    }

    pub fn divergence(&self) -> Option<&Divergence> {
        self.0.first()
    }

    pub fn divergences(&self) -> &[Divergence] {
        &self.0
    }
}

impl IntoIterator for Outcome {
    type Item = Divergence;
    type IntoIter = std::vec::IntoIter<Divergence>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Class;

    #[test]
    fn lower_is_the_name_in_lower_case() {
        for c in Class::ALL {
            assert_eq!(c.lower(), c.name().to_lowercase());
        }
    }
}
