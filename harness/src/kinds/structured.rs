//! Kind `structured` (target `structured_diff`, fuzzing only): a generator
//! program whose items agree across the subjects and match the generators'
//! labels ([`crate::engine::structured`]).

use super::kind::{CaseBuf, Form, TargetKind};
use crate::arch::Arch;
use crate::engine::nway::Engine;
use crate::engine::{structured, Outcome};
use crate::generators::{gate_inputs, CaseKind, SplitMix64};
use crate::targets::Target;

/// The structured-generator kind.
pub struct StructuredKind;

impl TargetKind for StructuredKind {
    fn name(&self) -> &'static str {
        "structured"
    }

    fn generate(
        &self,
        _t: Target,
        _arch: Arch,
        r: &mut SplitMix64,
        kind: CaseKind,
        buf: &mut CaseBuf,
    ) -> Form {
        gate_inputs::banded_bytes(r, kind, &mut buf.bytes);
        Form::Bytes
    }

    fn compare(&self, e: &Engine, t: Target, input: &[u8]) -> Outcome {
        structured::check(e, t, input)
    }
}
