//! Re-running a finding's input on the run's subjects.

use crate::findings::{CaseKind, DedupKey, Finding, Origin};
use crate::judge::Judge;
use crate::targets::Target;

/// Runs `input` through `target` once on `e`'s subjects and returns every
/// finding. Origins are a placeholder (`Generated #0`).
pub fn reproduce(e: &Judge, target: Target, input: &[u8]) -> Vec<Finding> {
    let origin = || Origin::Generated {
        index: 0,
        kind: CaseKind::Raw,
    };
    e.compare(target, input)
        .into_iter()
        .map(|d| Finding::from_divergence(&d, origin()).with_arch(e.arch()))
        .collect()
}

/// The finding of `target` on `input` with dedup key `want`, if it reproduces.
pub fn reproduce_key(e: &Judge, target: Target, input: &[u8], want: &DedupKey) -> Option<Finding> {
    reproduce(e, target, input)
        .into_iter()
        .find(|f| f.dedup_key() == *want)
}
