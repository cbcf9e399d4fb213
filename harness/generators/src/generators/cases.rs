//! Labelled bundle cases: valid, near-valid, or either.

use super::config::Config;
use super::labels::{label, Expected};
use super::rng::SplitMix64;
use super::valid::{encode, valid_instruction, GenError};
use super::violations::{violation, Violation};
use crate::layout::spans;
use arbitrary::Unstructured;
use std::ops::Range;
use tpb_core::insn::Instruction;

/// A labelled case: the valid instruction it started from (opcode `base`) and the
/// violations applied, in order (none: valid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub instruction: Instruction,
    pub base: u8,
    pub violations: Vec<Violation>,
    pub bundle: [u8; 64],
    pub expected: Expected,
}

pub fn valid_case(u: &mut Unstructured<'_>, cfg: &Config) -> std::result::Result<Case, GenError> {
    let instruction = valid_instruction(u, cfg)?;
    let bundle = encode(&instruction, cfg.arch)?;
    let base = instruction.opcode();
    Ok(Case {
        instruction,
        base,
        violations: Vec::new(),
        bundle,
        expected: label(base, &[], cfg.arch),
    })
}

/// A near-valid case: a valid case with `cfg.violations()` violations on
/// disjoint bytes (fewer if the opcode's menu runs out).
pub fn near_valid_case(
    u: &mut Unstructured<'_>,
    cfg: &Config,
) -> std::result::Result<Case, GenError> {
    let mut c = valid_case(u, cfg)?;
    let mut used: Vec<usize> = Vec::new();
    for _ in 0..cfg.violations() * 3 {
        if c.violations.len() >= cfg.violations() {
            break;
        }
        let v = violation(u, c.base, cfg.arch)?;
        let fp = v.footprint();
        if fp.iter().any(|o| used.contains(o)) {
            continue;
        }
        used.extend(fp);
        v.apply(&mut c.bundle);
        c.violations.push(v);
    }
    c.expected = label(c.base, &c.violations, cfg.arch);
    Ok(c)
}

/// Correlated fault: one span's value copied into another of its role (else any), or one
/// value into both; returns the two, now equal: what byte and bit mutations almost never
/// build (two reserved dwords combined with XOR instead of OR fail only then).
pub fn field_copy(b: &mut [u8; 64], r: &mut SplitMix64) -> (Range<usize>, Range<usize>) {
    let l = spans(b[0]);
    let (src, dst) = if l.len() < 2 {
        let (i, j) = (r.index(64), r.index(64));
        (i..i + 1, j..j + 1)
    } else {
        let a = l[r.index(l.len())];
        let same: Vec<_> = l
            .iter()
            .filter(|s| s.off != a.off && s.role == a.role)
            .collect();
        let d = if same.is_empty() || r.index(4) == 0 {
            let others: Vec<_> = l.iter().filter(|s| s.off != a.off).collect();
            *others[r.index(others.len())]
        } else {
            *same[r.index(same.len())]
        };
        let w = a.len.min(d.len);
        (a.off..a.off + w, d.off..d.off + w)
    };
    if src.clone().all(|k| b[k] == 0) || r.index(2) == 0 {
        // A fresh value: one nonzero byte at one position, or the whole width.
        let v = |r: &mut SplitMix64| match r.index(4) {
            0 => [0x01, 0x80, 0xFF, 0x0F][r.index(4)],
            _ => r.byte() | 1,
        };
        if r.index(2) == 0 {
            let k = r.index(src.len());
            let x = v(r);
            b[src.start + k] = x;
            b[dst.start + k] = x;
            return (
                src.start + k..src.start + k + 1,
                dst.start + k..dst.start + k + 1,
            );
        }
        for k in src.clone() {
            b[k] = v(r);
        }
    }
    let val: Vec<u8> = b[src.clone()].to_vec();
    b[dst.clone()].copy_from_slice(&val);
    (src, dst)
}

/// A valid case or, with probability `cfg.near / 256`, a near-valid one.
pub fn case(u: &mut Unstructured<'_>, cfg: &Config) -> std::result::Result<Case, GenError> {
    if u.int_in_range(0..=255u8)? < cfg.near {
        near_valid_case(u, cfg)
    } else {
        valid_case(u, cfg)
    }
}
