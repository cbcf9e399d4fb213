//! The `collective_lowering` comparison: core's lowering against the
//! oracle's, plus the lowering properties, via
//! [`crate::subjects::lowering_diff`] (reference pair only).
//!
//! The generation is the engine's (`--arch`; the gate runs case i under the
//! (i mod 4)-th), so one input is one case per generation.
//!
//! Contract: [`compare`] never panics (a panic in either implementation
//! becomes a `Panic` divergence); its coverage key is the generation and
//! the first instruction's verdict (`v3 ok:d9+da`, `v2 err:duplicate_rank`)
//! or `diverged`; the signature key is the description with digits masked and
//! cut at the first `:` context, so one bug deduplicates to one entry.

use super::divergence::{Class, Divergence, Signature};
use crate::subjects::lowering_diff;
use crate::targets::Target;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tpb_core::Generation as Gen;

fn class_of(name: &str) -> Class {
    match name {
        "OverAccept" => Class::OverAccept,
        "UnderAccept" => Class::UnderAccept,
        "SameVerdictDifferentReason" => Class::SameVerdictDifferentReason,
        _ => Class::DifferentOutput,
    }
}

/// Digits masked, instruction index and values dropped: `[#] records`.
fn signature_key(class: &str, description: &str) -> String {
    let head: String = description
        .split(&[',', ':', '('][..])
        .next()
        .unwrap_or("")
        .chars()
        .take(72)
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    format!("{class}:{head}")
}

/// Runs one case under generation `gen` (input mapping:
/// [`lowering_diff::collective_lowering_case`]): the coverage key and the
/// divergence.
pub fn compare(
    target: Target,
    data: &[u8],
    names: (&str, &str),
    gen: Gen,
) -> (String, Option<Divergence>) {
    let div = |class: Class, key: String, description: String, case: String| Divergence {
        target,
        input: data.to_vec(),
        case,
        left_name: names.0.to_string(),
        right_name: names.1.to_string(),
        left: description,
        right: String::new(),
        signature: Signature {
            key,
            left: "core".into(),
            right: "oracle".into(),
        },
        class,
    };
    match catch_unwind(AssertUnwindSafe(|| {
        lowering_diff::collective_lowering_case(data, Some(gen))
    })) {
        Ok(Ok(o)) => (o.key, None),
        Ok(Err(d)) => (
            "diverged".into(),
            Some(div(
                class_of(d.class),
                signature_key(d.class, &d.description),
                d.description,
                d.case,
            )),
        ),
        Err(p) => {
            let msg = super::pair::panic_text(&*p);
            (
                "diverged".into(),
                Some(div(
                    Class::Panic,
                    "collective_lowering:panic".into(),
                    format!("PANIC: {msg}"),
                    String::new(),
                )),
            )
        }
    }
}
