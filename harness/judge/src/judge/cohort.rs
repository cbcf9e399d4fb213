//! Cohorts (mishegos style): on an input where two or more subjects under test were judged
//! and some diverged, which implementations gave which answer. The reference cohort comes
//! first (core, the oracle, every judged subject that agreed with core); each other is the
//! diverging subjects with the same answer. Subjects not judged are in no cohort.

use std::fmt;

/// What one diverging subject said on the input (its divergence's signature).
#[derive(Clone, Copy, Debug)]
pub struct Answer<'a> {
    pub subject: &'a str,
    pub key: &'a str,
    pub verdict: &'a str,
    pub reference: &'a str,
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

/// The cohorts of one input from the `judged` subjects under test and the answers of those
/// that diverged; empty when fewer than two were judged or nothing diverged.
pub fn cohorts(reference: [&str; 2], judged: &[&str], divs: &[Answer<'_>]) -> Vec<Cohort> {
    if judged.len() < 2 || divs.is_empty() {
        return Vec::new();
    }
    let one_key = divs.iter().all(|d| d.key == divs[0].key);
    // A validator's key is the predicate one side names: no part to show.
    let names_a_verdict = |key: &str| divs.iter().any(|d| d.verdict == key || d.reference == key);
    let say = |key: &str, verdict: &str| {
        if one_key || names_a_verdict(key) {
            verdict.to_string()
        } else {
            format!("{key}={verdict}")
        }
    };
    let first = &divs[0];
    let mut out = vec![Cohort {
        members: reference.iter().map(|s| (*s).to_string()).collect(),
        answer: say(first.key, first.reference),
    }];
    for name in judged {
        match divs.iter().find(|d| d.subject == *name) {
            None => out[0].members.push((*name).to_string()),
            Some(d) => {
                let answer = say(d.key, d.verdict);
                match out[1..].iter_mut().find(|c| c.answer == answer) {
                    Some(c) => c.members.push((*name).to_string()),
                    None => out.push(Cohort {
                        members: vec![(*name).to_string()],
                        answer,
                    }),
                }
            }
        }
    }
    out
}

/// `{core, oracle, lib:a} vs {cmd:b}`: who agreed with whom (the pattern inputs are counted by).
pub fn pattern(cs: &[Cohort]) -> String {
    cs.iter()
        .map(|c| format!("{{{}}}", c.members.join(", ")))
        .collect::<Vec<_>>()
        .join(" vs ")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn div<'a>(subject: &'a str, key: &'a str, verdict: &'a str, reference: &'a str) -> Answer<'a> {
        Answer {
            subject,
            key,
            verdict,
            reference,
        }
    }

    #[test]
    fn agreeing_subjects_join_the_reference_and_equal_answers_group() {
        let divs = [div("b", "p", "p", "valid"), div("d", "p", "p", "valid")];
        let cs = cohorts(["core", "oracle"], &["a", "b", "c", "d"], &divs);
        assert_eq!(pattern(&cs), "{core, oracle, a, c} vs {b, d}");
        assert_eq!(
            Line(&cs).to_string(),
            "{core, oracle, a, c}: valid; {b, d}: p"
        );
    }

    #[test]
    fn different_answers_are_different_cohorts_and_keys_show_when_they_differ() {
        let divs = [div("a", "p", "p", "valid"), div("b", "q", "q", "valid")];
        let cs = cohorts(["core", "oracle"], &["a", "b"], &divs);
        assert_eq!(pattern(&cs), "{core, oracle} vs {a} vs {b}");
        // Validator-style: the key is the predicate one side names.
        assert_eq!(
            Line(&cs).to_string(),
            "{core, oracle}: valid; {a}: p; {b}: q"
        );
        // Different tables of one LUT target: the table is shown.
        let divs = [
            div("a", "alu_lut", "0x01", "0x02"),
            div("b", "cce_lut", "err:not_shipped", "0x03"),
        ];
        let cs = cohorts(["core", "oracle"], &["a", "b"], &divs);
        assert_eq!(
            Line(&cs).to_string(),
            "{core, oracle}: alu_lut=0x02; {a}: alu_lut=0x01; {b}: cce_lut=err:not_shipped"
        );
    }

    #[test]
    fn one_judged_subject_or_no_divergence_has_no_cohorts() {
        let divs = [div("a", "p", "p", "valid")];
        assert!(cohorts(["core", "oracle"], &["a"], &divs).is_empty());
        assert!(cohorts(["core", "oracle"], &["a", "b"], &[]).is_empty());
    }
}
