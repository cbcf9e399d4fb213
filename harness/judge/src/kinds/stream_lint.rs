//! Kind `stream_lint`: core's stream walker against the oracle's independent one on whole
//! instruction streams (SPEC §5.3 "Linting a stream", D-27, D-28), each asked through
//! [`Reference::lint_stream`]. Reference pair only: no protocol op carries the walk. Input
//! mapping: the input's whole bundles, at most [`MAX_BUNDLES`] (a trailing partial bundle is
//! dropped; the CLI refuses one, exit 2). Compared row by row ([`Row`]).
//!
//! Contract: `compare_on` never panics (a walker's panic is a `Panic` divergence, a fault
//! one of its class); its coverage key is `clean`, `errors:<names>` (sorted) or `diverged`; a
//! divergence's signature key names what differs first, without numbers.

use super::kind::{
    both_answers, differs, first_index_differing, CaseBudget, CaseBuf, DescribedCase, Draw, Form,
    Ran, TargetKind,
};
use crate::generation::Generation;
use crate::generators::stream_program;
use crate::judge::nway::Judge;
use crate::judge::{Divergence, Filed};
use crate::reach::{arg_band, Field, Reach, LINT_VERDICTS};
use crate::subjects::{registry, Reference};
use crate::targets::Target;
use std::collections::BTreeSet;

pub use crate::subjects::LintRow as Row;

/// The most bundles of an input that are walked (a 255-argument group is 257).
pub const MAX_BUNDLES: usize = 1024;

/// Cap on `stream_lint` gate cases (whole programs walked by both walkers, ~330k cases/s): the
/// default gate's wall time grows by at most 10% with it (measured, issue 20).
pub const STREAM_LINT_CASES: u64 = 100_000;

pub struct StreamLintKind;

impl TargetKind for StreamLintKind {
    fn case_bundles(&self, _t: Target, input: &[u8]) -> Vec<[u8; 64]> {
        super::kind::whole_bundles(input)
    }

    fn corpus_signature(&self, t: Target, input: &[u8]) -> Option<(String, String)> {
        Some(signature(t, input))
    }

    /// A whole program of the case's generation; the case kind is not used (every program
    /// mixes well-formed, cut-short, corrupted and random pieces).
    fn generate(&self, _t: Target, d: Draw<'_>, buf: &mut CaseBuf) -> Form {
        stream_program::program_into(d.r, d.arch, &mut buf.bytes);
        Form::Bytes
    }

    /// Both walks on the judge's reference pair; given `reach`, counts core's rows' classes.
    fn run(&self, e: &Judge, t: Target, input: &[u8], reach: Option<&mut Reach>) -> Ran {
        let (core, oracle) = e.references();
        let (key, d, rows) = compare_on(core, oracle, e.arch(), t, input);
        let classified = reach.map(|r| count_reach(r, input, &rows)).is_some();
        Ran::keyed(d, key, classified)
    }

    fn declare_reach(&self, _t: Target, reach: &mut Reach) {
        reach.declare(&crate::reach::LINT);
    }

    /// The roster, hence every verdict, depends on the generation.
    fn about_every_generation(&self) -> bool {
        true
    }

    fn case_budget(&self) -> CaseBudget {
        CaseBudget::AtMost(STREAM_LINT_CASES)
    }
}

pub fn walked(input: &[u8]) -> &[u8] {
    let n = (input.len() / 64).min(MAX_BUNDLES);
    &input[..64 * n]
}

/// Where two walks first differ: (signature key, description), or `None` when they agree.
pub fn first_difference(core: &[Row], oracle: &[Row]) -> Option<(String, String)> {
    let i = first_index_differing(core, oracle)?;
    Some(match (core.get(i), oracle.get(i)) {
        (Some(c), Some(o)) => {
            let key = if c.what() == o.what() {
                format!("{}:fields", c.what())
            } else {
                format!("{} / {}", c.what(), o.what())
            };
            (key, format!("row {i}: core {c:?}, oracle {o:?}"))
        }
        (c, o) => {
            let (extra, who) = c.map_or(o.map(|o| (o, "oracle")), |c| Some((c, "core")))?;
            let (n, m) = (core.len(), oracle.len());
            (
                format!("only {who}:{}", extra.what()),
                format!("core {n} rows, oracle {m}; first extra ({who}): {extra:?}"),
            )
        }
    })
}

/// Counts the reach classes of core's `rows` of `input` ([`crate::reach::LINT`]; a group's
/// `num_arguments` is its header's byte 0x0F, SPEC §5.3, whole unless a `short_group` names it).
pub fn count_reach(reach: &mut Reach, input: &[u8], rows: &[Row]) {
    let mut headers = Vec::new();
    for row in rows {
        match row {
            Row::Instruction {
                index,
                offset,
                opcode,
                length,
                verdict,
                failure,
            } => {
                reach.hit(Field::LintLength, if *length > 64 { "128" } else { "64" });
                let v = failure.map_or(*verdict, |(p, _)| p);
                let named = LINT_VERDICTS
                    .into_iter()
                    .find(|c| *c == v || c.strip_prefix("invalid: ") == Some(v));
                reach.hit(Field::LintVerdict, named.unwrap_or("invalid: body"));
                if *opcode == 0x85 {
                    if let Some(&n) = input.get(offset + 0x0F) {
                        headers.push((*index, n));
                    }
                }
            }
            Row::StreamError { name, owner, .. } => {
                reach.hit(Field::LintStreamError, name);
                if *name == "short_group" {
                    headers.retain(|h| h.0 != owner.0);
                }
            }
        }
    }
    for (_, n) in headers {
        reach.hit(Field::LintArguments, arg_band(usize::from(n)));
    }
}

/// Compares the walks of `core` and `oracle` on `input`: the coverage key, the divergence if
/// any, and core's rows when they agree.
fn compare_on(
    core: &dyn Reference,
    oracle: &dyn Reference,
    arch: Generation,
    target: Target,
    input: &[u8],
) -> (String, Option<Divergence>, Vec<Row>) {
    let filed = DescribedCase::new(target, input, (core, oracle), ("core", "oracle"));
    let bytes = walked(input);
    let diverged = |f: Filed| {
        let case = format!("{} bundles under {arch}", bytes.len() / 64);
        let d = filed.divergence(f, case);
        ("diverged".to_string(), Some(d), Vec::new())
    };
    let ask = || (core.lint_stream(bytes), oracle.lint_stream(bytes));
    let (core_rows, oracle_rows) = match both_answers("stream_lint", "lint_stream", ask) {
        Ok((Ok(c), Ok(o))) => (c, o),
        Ok((c, o)) => {
            let detail =
                format!("a walker refused whole bundles: core Ok({c:?}), oracle Ok({o:?})");
            return diverged(differs("stream_lint", "refused", detail));
        }
        Err(filed) => return diverged(filed),
    };
    if let Some((key, detail)) = first_difference(&core_rows, &oracle_rows) {
        return diverged(differs("stream_lint", &key, detail));
    }
    let errors: BTreeSet<&str> = core_rows
        .iter()
        .filter_map(|r| match r {
            Row::StreamError { name, .. } => Some(*name),
            Row::Instruction { .. } => None,
        })
        .collect();
    let key = if errors.is_empty() {
        "clean".to_string()
    } else {
        format!(
            "errors:{}",
            errors.into_iter().collect::<Vec<_>>().join(",")
        )
    };
    (key, None, core_rows)
}

/// The coverage signature of `input` for `minimize`: per generation (membership, hence every
/// verdict, depends on it), the distinct classes of core's rows, and whether the walkers agree
/// (else the divergence's class and key).
pub fn signature(target: Target, input: &[u8]) -> (String, String) {
    let (mut classes, mut outcomes) = (Vec::new(), Vec::new());
    for arch in Generation::ALL {
        let (core, oracle) = registry::reference_pair_for(arch);
        let (_, d, rows) = compare_on(&core, &oracle, arch, target, input);
        let seen: BTreeSet<String> = rows
            .iter()
            .flat_map(|r| match r {
                Row::Instruction {
                    length,
                    verdict,
                    failure,
                    ..
                } => [
                    Some(failure.map_or(verdict.to_string(), |(p, _)| format!("invalid:{p}"))),
                    (*length > 64).then(|| "length:128".to_string()),
                ],
                Row::StreamError { name, .. } => [Some(name.to_string()), None],
            })
            .flatten()
            .collect();
        classes.push(format!(
            "{}:{}",
            arch.name(),
            seen.into_iter().collect::<Vec<_>>().join(",")
        ));
        outcomes.push(d.map_or("agree".to_string(), |d| {
            format!("{}:{}", d.class, d.signature.key)
        }));
    }
    (classes.join(" "), outcomes.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::SplitMix64;
    use crate::judge::Class;

    fn target() -> Target {
        Target::named("stream_lint")
    }

    /// Both walkers of `arch`'s reference pair on `input`.
    fn compare_rows(
        arch: Generation,
        target: Target,
        input: &[u8],
    ) -> (String, Option<Divergence>, Vec<Row>) {
        let (core, oracle) = registry::reference_pair_for(arch);
        compare_on(&core, &oracle, arch, target, input)
    }

    fn rows_of(s: &dyn Reference, bytes: &[u8]) -> Result<Vec<Row>, String> {
        s.lint_stream(bytes)
            .map_err(|f| format!("{}: {f}", s.name()))?
    }

    #[test]
    fn the_walkers_agree_on_generated_programs_and_reach_every_stream_error() {
        let mut r = SplitMix64(0x5EED_0021);
        let mut keys = BTreeSet::new();
        for _ in 0..400 {
            let arch = Generation::ALL[r.index(4)];
            let mut p = Vec::new();
            stream_program::program_into(&mut r, arch, &mut p);
            for arch in Generation::ALL {
                let (key, d, _) = compare_rows(arch, target(), &p);
                assert!(d.is_none(), "{d:?}");
                keys.extend(
                    key.trim_start_matches("errors:")
                        .split(',')
                        .map(String::from),
                );
            }
        }
        for name in [
            "clean",
            "leg_mismatch",
            "missing_leg",
            "payload_count_mismatch",
            "short_group",
            "stray_leg",
            "stray_payload",
            "truncated_instruction",
        ] {
            assert!(keys.contains(name), "{name} not reached: {keys:?}");
        }
    }

    #[test]
    fn the_minimize_signature_tells_apart_what_the_walk_reached() {
        let group = [stream_program::header(1, 3), stream_program::payload()].concat();
        let whole = [group.clone(), stream_program::payload().to_vec()].concat();
        let (short, _) = signature(target(), &group);
        let (clean, outcome) = signature(target(), &whole);
        assert!(short.contains("short_group") && !clean.contains("short_group"));
        assert_eq!(outcome, ["agree"; 4].join(" | "));
        // 0x87: skeleton under v2, not a member after (SPEC §0).
        let (v, _) = signature(target(), &stream_program::skeleton(0x87));
        assert!(v.starts_with("v2:skeleton v3:invalid:valid_opcode"), "{v}");
        // The same classes twice: the same signature.
        let twice = [whole.clone(), whole.clone()].concat();
        assert_eq!(signature(target(), &twice).0, clean);
    }

    #[test]
    fn a_partial_bundle_is_dropped_and_the_walk_is_capped() {
        assert_eq!(walked(&[0u8; 130]).len(), 128);
        assert_eq!(walked(&[0u8; 63]).len(), 0);
        assert_eq!(
            walked(&vec![0u8; 64 * (MAX_BUNDLES + 3)]).len(),
            64 * MAX_BUNDLES
        );
        // A stray payload then 65 bytes: the payload is walked, the tail byte is not.
        let mut s = stream_program::payload().to_vec();
        s.push(0x86);
        assert_eq!(
            compare_rows(Generation::V2, target(), &s).0,
            "errors:stray_payload"
        );
    }

    /// Core, its walk answered without its last row.
    struct Short;

    crate::kinds::test_subjects::stand_in_subject!(Short, "short");

    impl Reference for Short {
        fn lint_stream(&self, bytes: &[u8]) -> crate::subjects::Reply<crate::subjects::LintResult> {
            let mut r = registry::core().lint_stream(bytes)?;
            if let Ok(rows) = &mut r {
                rows.pop();
            }
            Ok(r)
        }
    }

    /// Both walks are asked through [`Subject::lint_stream`]: a row missing from one answer,
    /// or no answer, is a divergence.
    #[test]
    fn the_walks_are_asked_through_the_subject_interface() {
        let (_, oracle) = registry::reference_pair_for(Generation::V2);
        let s = [stream_program::header(1, 3), stream_program::payload()].concat();
        let (key, d, _) = compare_on(&Short, &oracle, Generation::V2, target(), &s);
        let d = d.expect("a row missing");
        assert_eq!(
            (key.as_str(), d.class),
            ("diverged", Class::DifferentOutput)
        );
        assert!(
            d.signature.key.starts_with("stream_lint:only oracle:"),
            "{d:?}"
        );
        let silent = crate::kinds::test_subjects::Silent;
        let (_, d, _) = compare_on(&silent, &oracle, Generation::V2, target(), &s);
        let d = d.expect("no answer");
        assert_eq!(d.class, Class::Unsupported, "{d:?}");
    }

    /// Every field of every row is compared: a one-off in any of them, or a row too many, is
    /// a divergence.
    #[test]
    fn a_one_off_in_any_field_is_a_divergence() {
        let s = [
            stream_program::header(1, 3),
            stream_program::payload(),
            stream_program::d9(0x05),
        ]
        .concat();
        let (core, oracle) = registry::reference_pair_for(Generation::V2);
        let good = rows_of(&core, &s).expect("whole bundles");
        let oracle = rows_of(&oracle, &s).expect("whole bundles");
        assert_eq!(first_difference(&good, &oracle), None);
        assert!(good.iter().any(|r| matches!(r, Row::StreamError { .. })));
        let one_offs: [fn(&mut Row); 5] = [
            |r| match r {
                Row::Instruction { index, .. } | Row::StreamError { index, .. } => *index += 1,
            },
            |r| match r {
                Row::Instruction { offset, .. } | Row::StreamError { offset, .. } => *offset += 1,
            },
            |r| match r {
                Row::Instruction { length, .. } => *length += 64,
                Row::StreamError { owner, .. } => owner.0 += 1,
            },
            |r| match r {
                Row::Instruction { opcode, .. } => *opcode ^= 1,
                Row::StreamError { owner, .. } => owner.1 += 64,
            },
            |r| match r {
                Row::Instruction { failure, .. } => *failure = Some(("valid_opcode", 0)),
                Row::StreamError { owner, .. } => owner.2 ^= 1,
            },
        ];
        for i in 0..good.len() {
            for f in one_offs {
                let mut bad = good.clone();
                f(&mut bad[i]);
                let (key, _) = first_difference(&bad, &oracle).expect("a difference");
                assert!(key.ends_with(":fields"), "{key}");
            }
        }
        let mut other = good.clone();
        if let Row::Instruction { verdict, .. } = &mut other[0] {
            *verdict = "skeleton";
        }
        let (key, _) = first_difference(&other, &oracle).expect("another verdict");
        assert_eq!(key, "instruction:skeleton / instruction:valid");
        let mut more = good.clone();
        more.push(good[0].clone());
        let (key, _) = first_difference(&more, &oracle).expect("a row too many");
        assert!(key.starts_with("only core:"), "{key}");
        let (key, _) = first_difference(&good, &more).expect("a row too few");
        assert!(key.starts_with("only oracle:"), "{key}");
    }
}
