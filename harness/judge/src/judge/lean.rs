//! Two subjects on one bundle target with static dispatch: the lean path of the bundle fuzz
//! targets. libFuzzer scans every coverage counter linked into the binary once per input, and
//! [`super::Judge`]'s `dyn Subject` vtables link every operation. These run the judge's own
//! comparisons on concrete subjects: the same divergence as [`super::Judge::compare`]
//! (`tests/lean_entry.rs`), only the called operations linked.

use super::divergence::Divergence;
use super::input_map::bundle_from_input;
use super::pair::{self, Pair};
use crate::subjects::{Subject, Validator};
use crate::targets::{Check, Target};

/// `left` vs `right` on validator target `target` (check `Validator(v)`) with raw `input`.
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

/// `left` vs `right` on bundle target `target` with raw `input`; `None` for another target.
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

/// The pair as the judge's bundle comparisons build it.
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
