//! Findings: one disagreement each, from the corpus, a vector file or a generated case, and
//! their deduplication. [`Findings`] keeps, per [`DedupKey`] (inputs are not part of it), the
//! count and the finding with the smallest [`Origin`], so the kept representative does not
//! depend on thread scheduling.

use crate::generation::Generation;
use crate::judge::{Class, Divergence, Signature};
use std::collections::BTreeMap;

pub use crate::generators::CaseKind;

/// Where a finding came from; the derived order is the preference for the kept representative.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    Corpus {
        path: String,
    },
    Vector {
        path: String,
        /// 1-based.
        line: usize,
        expected: String,
    },
    /// Generated case `index` (derived from `(seed, target, index)`).
    Generated {
        index: u64,
    },
}

/// The name vector-line findings are filed under (a report's record target, a junit testcase).
pub const VECTORS: &str = "vectors";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub origin: Origin,
    /// The generation the subjects served (replay with `--arch`).
    pub arch: Generation,
    /// What was found; its target, for a vector line ([`Origin::Vector`]), is the target whose
    /// check the line states (it replays it).
    pub divergence: Divergence,
}

/// `(target, class, signature, (left subject, right subject))`.
pub type DedupKey = (String, Class, Signature, (String, String));

impl Finding {
    pub fn is_vector(&self) -> bool {
        matches!(self.origin, Origin::Vector { .. })
    }

    /// The name the report files it under: its target's, or `vectors` for a vector line.
    pub fn target_name(&self) -> &'static str {
        if self.is_vector() {
            VECTORS
        } else {
            self.divergence.target.name()
        }
    }

    pub fn dedup_key(&self) -> DedupKey {
        let d = &self.divergence;
        let names = (d.left_name.clone(), d.right_name.clone());
        (
            self.target_name().into(),
            d.class,
            d.signature.clone(),
            names,
        )
    }

    /// `key: left vs right` (one line).
    pub fn signature(&self) -> String {
        let (d, s) = (&self.divergence, &self.divergence.signature);
        signature_line(
            &s.key,
            (&d.left_name, &s.left, &d.left),
            (&d.right_name, &s.right, &d.right),
        )
    }

    pub fn headline(&self, count: Option<u64>) -> String {
        headline(&self.signature(), self.divergence.class, count)
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

/// A divergence's one-line signature, `key: LEFT=verdict RIGHT=verdict`; when the verdicts
/// read the same, the full answers follow, ` (left vs right)` (first line, at most 80 chars).
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

    pub fn total(&self) -> u64 {
        self.0.values().map(|k| k.count).sum()
    }

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
        let mut by_enum = Class::ALL.to_vec();
        by_enum.sort();
        let mut by_name = Class::ALL.map(Class::name).to_vec();
        by_name.sort_unstable();
        assert_eq!(
            by_enum.iter().map(|c| c.name()).collect::<Vec<_>>(),
            by_name
        );
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
