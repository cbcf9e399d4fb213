//! What the three bundle kinds ([`super::validator`], [`super::decode`],
//! [`super::roundtrip`]) share: gate images, field reach, the input mapping.

use super::kind::{CaseBuf, Form};
use crate::arch::Arch;
use crate::engine::bundle_from_input;
use crate::generators::{images, CaseKind, SplitMix64};
use crate::reach::Reach;

/// Writes a gate image biased toward `ops` ([`images::bundle_case`]).
#[inline]
pub fn generate(
    ops: &[u8],
    arch: Arch,
    r: &mut SplitMix64,
    kind: CaseKind,
    buf: &mut CaseBuf,
) -> Form {
    images::bundle_case(ops, arch, r, kind, &mut buf.bundle);
    Form::Bundle
}

/// Counts the field classes of the bundle `input` maps to.
#[inline]
pub fn record_reach(reach: &mut Reach, input: &[u8]) -> bool {
    match <&[u8; 64]>::try_from(input) {
        Ok(b) => reach.bundle(b),
        Err(_) => reach.bundle(&bundle_from_input(input)),
    }
    true
}
