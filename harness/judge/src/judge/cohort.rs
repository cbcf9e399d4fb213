//! Cohorts (mishegos style): on an input where two or more subjects under test were judged
//! and some diverged, which implementations gave which answer. The reference cohort comes
//! first (core, the oracle, every judged subject that agreed with core); each other is the
//! diverging subjects with the same answer. Subjects not judged are in no cohort.

use super::divergence::Divergence;
pub use super::divergence::{Cohort, Line};

/// The cohorts of one input from the `judged` subjects under test and the divergences of those
/// that diverged (each from core: its signature's left verdict the subject's, right core's);
/// empty when fewer than two were judged or nothing diverged.
pub fn cohorts(reference: [&str; 2], judged: &[&str], divs: &[Divergence]) -> Vec<Cohort> {
    if judged.len() < 2 || divs.is_empty() {
        return Vec::new();
    }
    let one_key = divs
        .iter()
        .all(|d| d.signature.key == divs[0].signature.key);
    // A validator's key is the predicate one side names: no part to show.
    let names_a_verdict = |key: &str| {
        let s = divs.iter().map(|d| &d.signature);
        s.clone().any(|s| s.left == key || s.right == key)
    };
    let say = |key: &str, verdict: &str| {
        if one_key || names_a_verdict(key) {
            verdict.to_string()
        } else {
            format!("{key}={verdict}")
        }
    };
    let first = &divs[0].signature;
    let mut out = vec![Cohort {
        members: reference.iter().map(|s| (*s).to_string()).collect(),
        answer: say(&first.key, &first.right),
    }];
    for name in judged {
        match divs.iter().find(|d| d.left_name == *name) {
            None => out[0].members.push((*name).to_string()),
            Some(d) => {
                let answer = say(&d.signature.key, &d.signature.left);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn div(subject: &str, key: &str, verdict: &str, reference: &str) -> Divergence {
        Divergence {
            target: crate::targets::Target::named("validate_header"),
            input: Vec::new(),
            case: String::new(),
            left_name: subject.into(),
            right_name: "core".into(),
            left: String::new(),
            right: String::new(),
            signature: crate::judge::Signature {
                key: key.into(),
                left: verdict.into(),
                right: reference.into(),
            },
            class: crate::judge::Class::DifferentOutput,
            cohorts: Vec::new(),
            answers: Default::default(),
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
