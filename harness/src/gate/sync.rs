//! Adapter for the `sync_handshake` target: the `alloc_semaphores` model
//! (`tpb_core::sync`) against the simulator (`tpb_oracle::sim`), via
//! [`crate::sync_diff`].
//!
//! Contract: [`run_case`] never panics (a panic in the model or the
//! simulator becomes a `Panic` result); its coverage key is `accepted` or
//! `rejected:<class>`; a divergence carries the class the gate reports
//! (named from the model's perspective like [`crate::engine::Class`]) and a
//! signature key with the numbers masked out, so one bug deduplicates to one
//! entry.

use crate::sync_diff;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The result of one sync case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncResult {
    /// Model and simulator agree; the coverage key.
    Agree(String),
    /// They disagree.
    Diverge {
        /// Class name (`OverAccept`, `UnderAccept`, `SameVerdictDifferentReason`,
        /// `DifferentOutput`, `Panic`).
        class: &'static str,
        /// Signature key (description with digits masked).
        key: String,
        /// Full description.
        description: String,
        /// The program (Debug form).
        program: String,
    },
}

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

fn class_of(d: &str) -> &'static str {
    if d.starts_with("model accepts, oracle rejects") {
        "OverAccept"
    } else if d.starts_with("model rejects") && d.contains("oracle accepts") {
        "UnderAccept"
    } else if d.starts_with("model rejects") {
        "SameVerdictDifferentReason"
    } else {
        "DifferentOutput"
    }
}

/// Runs one case (input mapping: `sync_diff::sync_handshake_case`).
pub fn run_case(data: &[u8]) -> SyncResult {
    match catch_unwind(AssertUnwindSafe(|| sync_diff::sync_handshake_case(data))) {
        Ok(Ok(sync_diff::SyncCaseOutcome::Accepted { .. })) => SyncResult::Agree("accepted".into()),
        Ok(Ok(sync_diff::SyncCaseOutcome::Rejected { class })) => {
            SyncResult::Agree(format!("rejected:{class}"))
        }
        Ok(Err(d)) => SyncResult::Diverge {
            class: class_of(&d.description),
            key: signature_key(&d.description),
            description: d.description,
            program: d.program,
        },
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic payload>".into());
            SyncResult::Diverge {
                class: "Panic",
                key: "sync_handshake:panic".into(),
                description: format!("PANIC: {msg}"),
                program: String::new(),
            }
        }
    }
}
