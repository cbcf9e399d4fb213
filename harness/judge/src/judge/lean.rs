//! Two subjects on one bundle target with static dispatch: the lean path of
//! the bundle fuzz targets ([`crate::fuzz_entry::Entry`]).
//!
//! libFuzzer scans and clears every coverage counter linked into the binary
//! once per input, so its per-input cost grows with the instrumented code
//! linked, executed or not. [`super::Judge`] holds `Box<dyn Subject>`s,
//! whose vtables link every operation of both implementations and with them
//! the whole judge. These functions run the judge's own comparisons
//! ([`super::pair`]) on concrete subjects (the fuzz entries pass
//! `subjects::registry::reference_pair_for`): same case mapping, same
//! divergence as [`super::Judge::compare`] (`tests/lean_entry.rs` checks
//! both; a subject panic is a `Panic` divergence here too), and only the
//! called operations linked.

use super::divergence::Divergence;
use super::input_map::bundle_from_input;
use super::pair::{self, Pair};
use crate::subjects::{Subject, Validator};
use crate::targets::{Check, Target};

/// `left` (under test) vs `right` (its reference) on validator target
/// `target`, whose check is `Validator(v)`, with raw `input` (first 64 bytes,
/// zero-padded).
#[inline]
pub fn validator_pair<L: Subject, R: Subject>(
    left: &L,
    right: &R,
    target: Target,
    v: Validator,
    input: &[u8],
) -> Option<Divergence> {
    let b = bundle_from_input(input);
    with_pair(left, right, target, input, &b, |p| {
        pair::validator(p, v, &b).err().flatten()
    })
}

/// `left` vs `right` on bundle target `target` (check `Validator`, `Decode`
/// or `Roundtrip`) with raw `input`; `None` for any other target (no bundle
/// target: [`crate::fuzz_entry::Entry::find`] picks bundle targets only).
pub fn bundle_pair<L: Subject, R: Subject>(
    left: &L,
    right: &R,
    target: Target,
    input: &[u8],
) -> Option<Divergence> {
    let b = bundle_from_input(input);
    match target.check() {
        Check::Validator(v) => validator_pair(left, right, target, v, input),
        Check::Decode => with_pair(left, right, target, input, &b, |p| pair::decode(p, &b)),
        Check::Roundtrip => with_pair(left, right, target, input, &b, |p| pair::roundtrip(p, &b)),
        _ => None,
    }
}

/// The pair as [`super::Judge`]'s bundle comparisons build it: the input
/// reported is the raw input when it is one bundle long, else the bundle.
#[inline]
fn with_pair<L: Subject, R: Subject>(
    left: &L,
    right: &R,
    target: Target,
    input: &[u8],
    b: &[u8; 64],
    f: impl FnOnce(&Pair<'_, L, R>) -> Option<Divergence>,
) -> Option<Divergence> {
    let input = if input.len() == 64 { input } else { &b[..] };
    f(&Pair {
        left,
        right,
        target,
        input,
        case: &String::new,
    })
}
