//! Kind `decode` (targets `decode_any`, `roundtrip`): one bundle (first 64
//! bytes, zero-padded) through the
//! SPEC §5.1 decoder on each subject (same fields, or the same failure), or,
//! for a `Roundtrip` row, `encode(decode(b)) == b` on each side and crosswise.

use super::bundle;
use super::kind::{CaseBuf, Form, Shrink, TargetKind};
use crate::arch::Arch;
use crate::engine::nway::Engine;
use crate::engine::{bundle_from_input, Outcome};
use crate::generators::{CaseKind, SplitMix64};
use crate::reach::Reach;
use crate::targets::Target;

/// The decode kind.
pub struct DecodeKind;

impl TargetKind for DecodeKind {
    fn name(&self) -> &'static str {
        "decode"
    }

    fn generate(
        &self,
        t: Target,
        arch: Arch,
        r: &mut SplitMix64,
        kind: CaseKind,
        buf: &mut CaseBuf,
    ) -> Form {
        let _ = t;
        bundle::generate(&crate::layout::OPCODES, arch, r, kind, buf)
    }

    fn compare(&self, e: &Engine, t: Target, input: &[u8]) -> Outcome {
        e.bundle(t, &bundle_from_input(input), input)
    }

    fn declare_reach(&self, _t: Target, reach: &mut Reach) {
        reach.declare_bundles();
    }

    fn record_reach(&self, _t: Target, reach: &mut Reach, input: &[u8]) -> bool {
        bundle::record_reach(reach, input)
    }

    fn shrink(&self) -> Shrink {
        Shrink::Bundle
    }
}
