//! The `sync_handshake` comparison: the `alloc_semaphores` model against the
//! simulator, via [`crate::subjects::sync_diff`] (reference pair only).
//!
//! Contract: [`compare`] never panics (a panic in the model or the simulator
//! becomes a `Panic` divergence); its coverage key is `accepted`,
//! `rejected:<class>` or `diverged`; a divergence is classed from the
//! model's perspective like [`Class`] and its signature key has the numbers
//! masked out, so one bug deduplicates to one entry.

use super::divergence::{Class, Divergence, Signature};
use crate::subjects::sync_diff;
use crate::targets::Target;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Masks digits and cuts after the first `:` context so similar
/// divergences share a key.
pub fn signature_key(description: &str) -> String {
    let head: String = description
        .chars()
        .take(72)
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    head.split(" under schedule")
        .next()
        .unwrap_or("")
        .to_string()
}

fn class_of(d: &str) -> Class {
    if d.starts_with("model accepts, oracle rejects") {
        Class::OverAccept
    } else if d.starts_with("model rejects") && d.contains("oracle accepts") {
        Class::UnderAccept
    } else if d.starts_with("model rejects") {
        Class::SameVerdictDifferentReason
    } else {
        Class::DifferentOutput
    }
}

/// Runs one case (input mapping: [`sync_diff::sync_handshake_case`]):
/// the coverage key and the divergence, if any. `names` are the model's and
/// the simulator's subject names.
pub fn compare(target: Target, data: &[u8], names: (&str, &str)) -> (String, Option<Divergence>) {
    let div = |class: Class, key: String, description: String, program: String| Divergence {
        target,
        input: data.to_vec(),
        case: program,
        left_name: names.0.to_string(),
        right_name: names.1.to_string(),
        left: description,
        right: String::new(),
        signature: Signature {
            key,
            left: "model".into(),
            right: "simulator".into(),
        },
        class,
    };
    match catch_unwind(AssertUnwindSafe(|| sync_diff::sync_handshake_case(data))) {
        Ok(Ok(sync_diff::SyncCaseOutcome::Accepted { .. })) => ("accepted".into(), None),
        Ok(Ok(sync_diff::SyncCaseOutcome::Rejected { class })) => {
            (format!("rejected:{class}"), None)
        }
        Ok(Err(d)) => (
            "diverged".into(),
            Some(div(
                class_of(&d.description),
                signature_key(&d.description),
                d.description,
                d.program,
            )),
        ),
        Err(p) => {
            let msg = super::pair::panic_text(&*p);
            (
                "diverged".into(),
                Some(div(
                    Class::Panic,
                    "sync_handshake:panic".into(),
                    format!("PANIC: {msg}"),
                    String::new(),
                )),
            )
        }
    }
}
