//! Findings: one disagreement each, from the corpus, a vector file or a
//! generated case, and their deduplication.
//!
//! # Contracts
//!
//! - A [`Finding`]'s [`DedupKey`] is `(target, class, key, left verdict,
//!   right verdict, left subject, right subject)`; inputs are not part of it.
//!   [`Findings`] keeps, per key, the count and the finding with the smallest
//!   [`Origin`] (corpus before vectors before generated; then path/line/case
//!   index), so the kept representative does not depend on thread
//!   scheduling.

use crate::generation::Generation;
use crate::judge::Divergence;
use std::collections::BTreeMap;
use std::fmt;

pub use crate::generators::CaseKind;

/// Where a finding came from. The derived order is the preference order for
/// the kept representative of a signature.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// A file of `corpus/<target>/`.
    Corpus { path: String },
    /// A line of a `corpus/vectors/` file.
    Vector {
        path: String,
        /// 1-based.
        line: usize,
        expected: String,
    },
    /// Generated case `index` (derived from `(seed, target, index)`).
    Generated { index: u64, kind: CaseKind },
}

/// What kind of disagreement a finding is: a judge's [`crate::judge::Class`],
/// or a vector file's expectation that an implementation did not meet.
/// Written to `divergences.jsonl` as its name (`OverAccept`,
/// `VectorMismatch`) and read back by that name only. Ordered by name (the
/// order a target's findings are listed in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum Class {
    Judge(crate::judge::Class),
    /// A `corpus/vectors/` line's expectation not met.
    VectorMismatch,
}

impl Class {
    /// Every class, the judge's in their order, then `VectorMismatch`.
    pub fn all() -> impl Iterator<Item = Class> {
        crate::judge::Class::ALL
            .into_iter()
            .map(Class::Judge)
            .chain([Class::VectorMismatch])
    }

    /// Stable name (the variant name).
    pub fn name(self) -> &'static str {
        match self {
            Class::Judge(c) => c.name(),
            Class::VectorMismatch => "VectorMismatch",
        }
    }

    /// The judge class, if it is one.
    pub fn judge(self) -> Option<crate::judge::Class> {
        match self {
            Class::Judge(c) => Some(c),
            Class::VectorMismatch => None,
        }
    }
}

impl Ord for Class {
    fn cmp(&self, other: &Class) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for Class {
    fn partial_cmp(&self, other: &Class) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
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
        Class::all()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("unknown class `{s}`"))
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name vector-line findings are filed under (a report's record target, a junit testcase).
pub const VECTORS: &str = "vectors";

/// One disagreement (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The target it was judged on; for a vector line ([`Origin::Vector`]),
    /// the target whose check the line states (it replays it).
    pub target: crate::targets::Target,
    pub origin: Origin,
    /// The generation the subjects served (replay with `--arch`).
    pub arch: Generation,
    pub input: Vec<u8>,
    pub class: Class,
    /// Signature key: predicate / field / LUT / gate name.
    pub key: String,
    pub left_verdict: String,
    pub right_verdict: String,
    pub left_name: String,
    pub right_name: String,
    pub left: String,
    pub right: String,
    /// The case derived from the input, human-readable (may be empty).
    pub case: String,
    /// Who gave which answer on the input, with two or more subjects
    /// judged ([`crate::judge::cohort`]); not part of the dedup key.
    pub cohorts: Vec<crate::judge::cohort::Cohort>,
    /// Each side's typed answer about the bundle, when the input is one
    /// ([`crate::judge::Answers`]; what the byte maps blame).
    pub answers: crate::judge::Answers,
}

/// Deduplication key: `(target, class, key, left verdict, right verdict,
/// (left subject, right subject))`.
pub type DedupKey = (String, Class, String, String, String, (String, String));

impl Finding {
    pub fn from_divergence(d: &Divergence, origin: Origin) -> Finding {
        Finding {
            target: d.target,
            origin,
            arch: Generation::default(),
            input: d.input.clone(),
            class: Class::Judge(d.class),
            key: d.signature.key.clone(),
            left_verdict: d.signature.left.clone(),
            right_verdict: d.signature.right.clone(),
            left_name: d.left_name.clone(),
            right_name: d.right_name.clone(),
            left: d.left.clone(),
            right: d.right.clone(),
            case: d.case.clone(),
            cohorts: d.cohorts.clone(),
            answers: d.answers.clone(),
        }
    }

    /// True for a `corpus/vectors/` line's finding (filed under `vectors`).
    pub fn is_vector(&self) -> bool {
        matches!(self.origin, Origin::Vector { .. })
    }

    /// The name the report files it under: its target's, or `vectors` for a vector line.
    pub fn target_name(&self) -> &'static str {
        if self.is_vector() {
            VECTORS
        } else {
            self.target.name()
        }
    }

    /// The same finding, made under generation `arch`.
    pub fn with_arch(self, arch: Generation) -> Finding {
        Finding { arch, ..self }
    }

    pub fn dedup_key(&self) -> DedupKey {
        (
            self.target_name().to_string(),
            self.class,
            self.key.clone(),
            self.left_verdict.clone(),
            self.right_verdict.clone(),
            (self.left_name.clone(), self.right_name.clone()),
        )
    }

    /// `key: left vs right` (one line).
    pub fn signature(&self) -> String {
        signature_line(
            &self.key,
            (&self.left_name, &self.left_verdict, &self.left),
            (&self.right_name, &self.right_verdict, &self.right),
        )
    }

    /// [`headline`] of this finding.
    pub fn headline(&self, count: Option<u64>) -> String {
        headline(&self.signature(), self.class, count)
    }
}

/// A finding's headline, `<signature line> [Class]`, then ` xN` with a count: the one wording
/// of the console's list, `junit.xml` and the report's list and section titles.
pub fn headline(signature: &str, class: Class, count: Option<u64>) -> String {
    match count {
        Some(n) => format!("{signature} [{class}] x{n}"),
        None => format!("{signature} [{class}]"),
    }
}

/// A divergence's one-line signature, `key: LEFT=verdict RIGHT=verdict`
/// (each side: subject name, verdict, full answer). When the two verdicts
/// read the same (the key drops what differs: a stream error's index, a
/// reason), the full answers follow, ` (left vs right)`: the first line of
/// each, at most 80 characters.
pub fn signature_line(
    key: &str,
    (ln, lv, left): (&str, &str, &str),
    (rn, rv, right): (&str, &str, &str),
) -> String {
    let short = |s: &str| -> String {
        let l = s.lines().next().unwrap_or("");
        l.chars().take(80).collect()
    };
    let mut line = format!("{key}: {ln}={lv} {rn}={rv}");
    if lv == rv && short(left) != short(right) {
        line.push_str(&format!(" ({} vs {})", short(left), short(right)));
    }
    line
}

/// A kept representative and how many findings share its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    pub finding: Finding,
    pub count: u64,
}

/// Deduplicated findings, ordered by key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Findings(pub BTreeMap<DedupKey, Kept>);

impl Findings {
    pub fn add(&mut self, f: Finding) {
        self.add_n(f, 1);
    }

    /// Adds `f` as `n` findings.
    pub fn add_n(&mut self, f: Finding, n: u64) {
        match self.0.entry(f.dedup_key()) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(Kept {
                    finding: f,
                    count: n,
                });
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                let k = o.get_mut();
                k.count += n;
                if f.origin < k.finding.origin {
                    k.finding = f;
                }
            }
        }
    }

    /// Merges `other` in (order-independent).
    pub fn merge(&mut self, other: Findings) {
        for (_, k) in other.0 {
            self.add_n(k.finding, k.count);
        }
    }

    /// Total findings (with duplicates).
    pub fn total(&self) -> u64 {
        self.0.values().map(|k| k.count).sum()
    }

    /// Number of distinct signatures.
    pub fn distinct(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::{signature_line, Class};

    /// Findings of one target are listed in class-name order (the report's order since classes
    /// were names), whatever the judge's own order of its classes.
    #[test]
    fn classes_order_by_name() {
        let mut by_enum: Vec<Class> = Class::all().collect();
        by_enum.sort();
        let mut by_name: Vec<&str> = Class::all().map(Class::name).collect();
        by_name.sort_unstable();
        assert_eq!(
            by_enum.iter().map(|c| c.name()).collect::<Vec<_>>(),
            by_name
        );
        assert_eq!(by_name.len(), crate::judge::Class::ALL.len() + 1);
    }

    #[test]
    fn alike_verdicts_show_the_answers_that_differ() {
        let alike = signature_line(
            "short_group:index",
            ("lib", "err:short_group", "short_group at 1"),
            ("core", "err:short_group", "short_group at 0"),
        );
        assert_eq!(
            alike,
            "short_group:index: lib=err:short_group core=err:short_group \
             (short_group at 1 vs short_group at 0)"
        );
        // Different verdicts say it already; equal answers add nothing.
        assert_eq!(
            signature_line("k", ("l", "a", "x"), ("r", "b", "y")),
            "k: l=a r=b"
        );
        assert_eq!(
            signature_line("k", ("l", "a", "x\nmore"), ("r", "a", "x\nother")),
            "k: l=a r=a"
        );
    }
}
