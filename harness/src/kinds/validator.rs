//! Kind `validator`: one bundle (first 64 bytes, zero-padded) through a
//! SPEC §3 / §4 CUSTOM_OP validator on each subject.

use super::bundle;
use super::kind::{CaseBuf, Form, Shrink, TargetKind};
use crate::arch::Arch;
use crate::engine::nway::Engine;
use crate::engine::{bundle_from_input, Outcome};
use crate::generators::{CaseKind, SplitMix64};
use crate::reach::Reach;
use crate::subjects::Validator;
use crate::targets::{Check, Target};

/// The validator kind.
pub struct ValidatorKind;

/// The opcode a validator's chain is about (SPEC §3: 0x85, §4: 0x86).
pub fn opcodes(v: Validator) -> &'static [u8] {
    match v {
        Validator::Header => &[0x85],
        Validator::Payload => &[0x86],
    }
}

impl TargetKind for ValidatorKind {
    fn name(&self) -> &'static str {
        "validator"
    }

    fn generate(
        &self,
        t: Target,
        arch: Arch,
        r: &mut SplitMix64,
        kind: CaseKind,
        buf: &mut CaseBuf,
    ) -> Form {
        let ops = match t.check() {
            Check::Validator(v) => opcodes(v),
            _ => &crate::layout::OPCODES,
        };
        bundle::generate(ops, arch, r, kind, buf)
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
