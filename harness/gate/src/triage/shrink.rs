//! The input minimiser of triage: resets whole layout fields to their canonical values,
//! then single bytes, then clears bits (high first), until nothing changes, keeping a step
//! only while the finding reproduces; non-bundle inputs are first shortened (never below one
//! byte). Deterministic unless [`MAX_ATTEMPTS`] or [`MAX_TIME`] is hit.

use crate::findings::{DedupKey, Finding, Origin};
use crate::judge::{bundle_from_input, Judge};
use crate::layout::{layout, Role};
use crate::targets::Target;

/// Canonical `opcode` bundle: the opcode, the constants the encoder stamps, zero elsewhere.
pub fn canonical(opcode: u8) -> [u8; 64] {
    let mut c = [0u8; 64];
    c[0] = opcode;
    for s in layout(opcode) {
        match s.role {
            Role::Const(v) => c[s.off] = v,
            // 0x86 arg_type: TENSOR, what the group encoder writes (S000 §C3; F§8).
            Role::Field(_) if s.name == "arg_type" => c[s.off] = 0x01,
            _ => {}
        }
    }
    c
}

/// The finding of `target` on `input` with dedup key `want`, if it reproduces.
pub fn reproduce_key(e: &Judge, target: Target, input: &[u8], want: &DedupKey) -> Option<Finding> {
    let origin = Origin::Generated { index: 0 };
    e.compare(target, input)
        .into_iter()
        .map(|divergence| Finding {
            origin: origin.clone(),
            arch: e.arch(),
            divergence,
        })
        .find(|f| f.dedup_key() == *want)
}

pub const MAX_ATTEMPTS: usize = 50_000;

/// Per finding (slow targets such as `sync_handshake`); then it keeps what it has.
pub const MAX_TIME: std::time::Duration = std::time::Duration::from_secs(3);

/// Minimises `f.input` for `target`; the (padded) input if it does not reproduce.
pub fn shrink(e: &Judge, target: Target, f: &Finding) -> Vec<u8> {
    let want = f.dedup_key();
    let mut attempts = 0usize;
    let deadline = std::time::Instant::now() + MAX_TIME;
    let holds = |cand: &[u8]| -> bool {
        attempts += 1;
        attempts <= MAX_ATTEMPTS
            && std::time::Instant::now() < deadline
            && reproduce_key(e, target, cand, &want).is_some()
    };
    shrink_with(target.is_bundle(), &f.divergence.input, holds)
}

/// [`shrink`] for any property `holds`; `bundle` selects the fixed-width 64-byte mode.
pub fn shrink_with(bundle: bool, input: &[u8], mut holds: impl FnMut(&[u8]) -> bool) -> Vec<u8> {
    let mut cur: Vec<u8> = if bundle {
        bundle_from_input(input).to_vec()
    } else if input.is_empty() {
        vec![0]
    } else {
        input.to_vec()
    };
    if !holds(&cur) {
        return if bundle { cur } else { input.to_vec() };
    }
    if !bundle {
        // Shorten: halve, then drop one byte at a time from the end.
        while cur.len() > 1 {
            let half = (cur.len() / 2).max(1);
            if holds(&cur[..half]) {
                cur.truncate(half);
            } else {
                break;
            }
        }
        while cur.len() > 1 && holds(&cur[..cur.len() - 1]) {
            cur.pop();
        }
    }
    for _round in 0..8 {
        let before = cur.clone();
        let canon = if bundle { canonical(cur[0]) } else { [0u8; 64] };
        let canon_at = |i: usize| if bundle { canon[i] } else { 0 };
        // Fields of the layout (bundle targets), widest first.
        if bundle {
            let mut spans = layout(cur[0]);
            spans.sort_by_key(|s| (std::cmp::Reverse(s.len), s.off));
            for s in spans {
                let r = s.off..s.off + s.len;
                if cur[r.clone()] == canon[r.clone()] {
                    continue;
                }
                let mut cand = cur.clone();
                cand[r.clone()].copy_from_slice(&canon[r]);
                if holds(&cand) {
                    cur = cand;
                }
            }
        }
        // Bytes: canonical, then zero.
        for i in 0..cur.len() {
            if cur[i] == canon_at(i) {
                continue;
            }
            for v in [canon_at(i), 0] {
                if cur[i] != v {
                    let old = cur[i];
                    cur[i] = v;
                    if holds(&cur) {
                        break;
                    }
                    cur[i] = old;
                }
            }
        }
        // Bits the canonical value does not have, high first.
        for i in 0..cur.len() {
            for bit in (0..8).rev() {
                let m = 1u8 << bit;
                if cur[i] & m != 0 && canon_at(i) & m == 0 {
                    cur[i] &= !m;
                    if !holds(&cur) {
                        cur[i] |= m;
                    }
                }
            }
        }
        if cur == before {
            break;
        }
    }
    cur
}
