//! What the two bundle kinds ([`super::validator`], [`super::decode`]) share: one 64-byte
//! bundle per case, compared by the judge's bundle comparison for the row's check.

use super::kind::{CaseBuf, Draw, Form, TargetKind};
use crate::generators::images;
use crate::judge::nway::Judge;
use crate::judge::{bundle_from_input, pair, Outcome};
use crate::reach::Reach;
use crate::targets::{Check, Target};

/// A kind whose case is one bundle.
pub struct BundleKind {
    pub name: &'static str,
    /// The opcodes a row's gate images are biased toward.
    pub opcodes: fn(Check) -> &'static [u8],
}

impl TargetKind for BundleKind {
    fn name(&self) -> &'static str {
        self.name
    }

    fn generate(&self, t: Target, d: Draw<'_>, buf: &mut CaseBuf) -> Form {
        images::bundle_case(
            (self.opcodes)(t.check()),
            d.arch,
            d.r,
            d.kind,
            &mut buf.bundle,
        );
        Form::Bundle
    }

    /// The raw input is reported when it is one bundle long, else the bundle.
    fn compare(&self, e: &Judge, t: Target, input: &[u8]) -> Outcome {
        let b = &bundle_from_input(input);
        let input = if input.len() == 64 { input } else { &b[..] };
        let case = String::new;
        match t.check() {
            Check::Validator(v) => e.each(t, input, &case, |p| {
                pair::validator(p, v, b).err().flatten()
            }),
            Check::Decode => e.each(t, input, &case, |p| pair::decode(p, b)),
            _ => e.each(t, input, &case, |p| pair::roundtrip(p, b)),
        }
    }

    fn declare_reach(&self, _t: Target, reach: &mut Reach) {
        reach.declare_bundles();
    }

    fn record_reach(&self, _t: Target, reach: &mut Reach, input: &[u8]) -> bool {
        reach.bundle(&bundle_from_input(input));
        true
    }

    fn case_bundles(&self, t: Target, input: &[u8]) -> Vec<[u8; 64]> {
        match t.check() {
            Check::Validator(_) => Vec::new(),
            _ => vec![bundle_from_input(input)],
        }
    }
}
