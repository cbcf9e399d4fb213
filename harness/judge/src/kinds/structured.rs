//! Kind `structured` (target `structured_diff`, fuzzing only): a generator
//! program whose items agree across the subjects and match the generators'
//! labels ([`crate::judge::structured`]).

use super::kind::TargetKind;
use crate::judge::nway::Judge;
use crate::judge::{structured, Outcome};
use crate::targets::Target;

/// The structured-generator kind.
pub struct StructuredKind;

impl TargetKind for StructuredKind {
    fn name(&self) -> &'static str {
        "structured"
    }

    fn compare(&self, e: &Judge, t: Target, input: &[u8]) -> Outcome {
        structured::check(e, t, input)
    }
}
