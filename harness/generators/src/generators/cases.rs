//! Labelled bundle cases: valid, near-valid, or either.

use super::config::Config;
use super::labels::{label, Expected};
use super::roles::role;
use super::valid::{encode, valid_instruction, GenError};
use super::violations::{violation, Violation};
use arbitrary::{Result, Unstructured};
use tpb_core::insn::Instruction;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The valid instruction the case started from.
    pub instruction: Instruction,
    /// Its opcode.
    pub base: u8,
    /// The violations applied, in order (empty = valid case).
    pub violations: Vec<Violation>,
    /// The bundle.
    pub bundle: [u8; 64],
    /// The label.
    pub expected: Expected,
}

/// A valid case.
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

/// Correlated fault: writes one value into two bytes of the same SPEC role
/// (two reserved bytes, two dtype bytes, …), copies one byte's value into
/// another (field copy), or (half the time) writes one value at the same
/// position of two layout spans of the same role and width class (e.g. the
/// 0x85 reserved spans 0x11..0x14 and 0x1D..0x20). Equal values across fields
/// are what single-byte and bit-flip mutations almost never build (e.g. two
/// reserved dwords combined with XOR instead of OR fail only when both hold
/// the same nonzero byte). The result is unlabelled: only the differential
/// comparison applies.
pub fn correlate(u: &mut Unstructured<'_>, c: &mut Case) -> Result<()> {
    if u.arbitrary()? {
        let spans = crate::layout::spans(c.base);
        if let Ok(a) = u.choose(spans) {
            let same: Vec<_> = spans
                .iter()
                .filter(|s| s.off != a.off && s.role == a.role)
                .collect();
            let b = if same.is_empty() {
                a
            } else {
                *u.choose(&same)?
            };
            let k = u.int_in_range(0..=a.len.min(b.len) - 1)?;
            let v = value(u)?;
            c.bundle[a.off + k] = v;
            c.bundle[b.off + k] = v;
            c.expected = Expected::default();
            return Ok(());
        }
    }
    let i = usize::from(u.int_in_range(0..=63u8)?);
    let r = role(c.base, i);
    let same: Vec<usize> = (0..64)
        .filter(|&o| o != i && role(c.base, o) == r)
        .collect();
    let j = match u.choose(&same) {
        Ok(&j) if u.ratio(3, 4)? => j,
        _ => usize::from(u.int_in_range(0..=63u8)?),
    };
    if u.ratio(1, 4)? {
        c.bundle[j] = c.bundle[i];
    } else {
        let v = value(u)?;
        c.bundle[i] = v;
        c.bundle[j] = v;
    }
    c.expected = Expected::default();
    Ok(())
}

/// A nonzero byte, half the time an edge value.
fn value(u: &mut Unstructured<'_>) -> Result<u8> {
    if u.ratio(1, 2)? {
        u.choose(&[0x01u8, 0x80, 0xFF, 0x10, 0x05, 0x0F]).copied()
    } else {
        u.int_in_range(1..=0xFF)
    }
}

/// A valid case or, with probability `cfg.near / 256`, a near-valid one.
pub fn case(u: &mut Unstructured<'_>, cfg: &Config) -> std::result::Result<Case, GenError> {
    if u.int_in_range(0..=255u8)? < cfg.near {
        near_valid_case(u, cfg)
    } else {
        valid_case(u, cfg)
    }
}
