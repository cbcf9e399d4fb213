//! Near-valid: the violated predicates and how they are drawn.

use super::roles::{accepts, checked};
use super::valid::{nonzero_u32, nonzero_u8};
use crate::generation::Generation;
use crate::layout::{byte_role, tag_of, Domain, Role, OPCODES};
use arbitrary::{Result, Unstructured};

/// One violated predicate. Each writes only the bytes of [`Violation::footprint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    /// byte\[0\] := the value (never the base; for non-custom bases never one of the eleven).
    Opcode(u8),
    /// byte\[1\] := a wrong tag.
    Tag(u8),
    /// Flip bit 0..=7 of a reserved byte (so exactly one reserved bit is set).
    ReservedBit { offset: u8, bit: u8 },
    /// byte\[4\] := an illegal wait mode.
    WaitMode(u8),
    /// byte\[6\] := an illegal update mode.
    UpdateMode(u8),
    /// 0x85 only: a partial scratch descriptor: `parts` bits 0..=3 (byte 0x10, dwords 0x14,
    /// 0x18, byte 0x1C) get their nonzero value, the others zero (never all of 0, 2, 3).
    Scratch {
        parts: u8,
        b10: u8,
        d14: u32,
        d18: u32,
        b1c: u8,
    },
    /// A LUT or flag byte (cce_op, dtype, kind, valid, cross-core, arg_type) := out of table.
    Field { offset: u8, value: u8 },
}

/// Every partial scratch combination (13 of the 15 nonempty part sets).
pub const SCRATCH_PARTIAL: [u8; 13] = [
    0b0001, 0b0010, 0b0011, 0b0100, 0b0101, 0b0110, 0b0111, 0b1000, 0b1001, 0b1010, 0b1011, 0b1100,
    0b1110,
];

impl Violation {
    pub fn footprint(&self) -> Vec<usize> {
        match *self {
            Violation::Opcode(_) => vec![0],
            Violation::Tag(_) => vec![1],
            Violation::ReservedBit { offset, .. } | Violation::Field { offset, .. } => {
                vec![usize::from(offset)]
            }
            Violation::WaitMode(_) => vec![4],
            Violation::UpdateMode(_) => vec![6],
            Violation::Scratch { .. } => [0x10].into_iter().chain(0x14..=0x1C).collect(),
        }
    }

    pub fn apply(&self, b: &mut [u8; 64]) {
        match *self {
            Violation::Opcode(v) => b[0] = v,
            Violation::Tag(v) => b[1] = v,
            Violation::ReservedBit { offset, bit } => b[usize::from(offset)] ^= 1 << (bit % 8),
            Violation::WaitMode(v) => b[4] = v,
            Violation::UpdateMode(v) => b[6] = v,
            Violation::Field { offset, value } => b[usize::from(offset)] = value,
            Violation::Scratch {
                parts,
                b10,
                d14,
                d18,
                b1c,
            } => {
                let pick = |bit: u8| parts & (1 << bit) != 0;
                b[0x10] = if pick(0) { b10 } else { 0 };
                let d14 = if pick(1) { d14 } else { 0 };
                let d18 = if pick(2) { d18 } else { 0 };
                b[0x14..0x18].copy_from_slice(&d14.to_le_bytes());
                b[0x18..0x1C].copy_from_slice(&d18.to_le_bytes());
                b[0x1C] = if pick(3) { b1c } else { 0 };
            }
        }
    }

    /// A short stable name of the kind (for matrices and reports).
    pub fn kind(&self) -> &'static str {
        match self {
            Violation::Opcode(_) => "opcode",
            Violation::Tag(_) => "tag",
            Violation::ReservedBit { .. } => "reserved_bit",
            Violation::WaitMode(_) => "wait_mode",
            Violation::UpdateMode(_) => "update_mode",
            Violation::Scratch { .. } => "scratch",
            Violation::Field { .. } => "field",
        }
    }
}

/// A value `v` with `!ok(v)`: an edge value half the time, else a random one.
fn bad_value(u: &mut Unstructured<'_>, edges: &[u8], ok: impl Fn(u8) -> bool) -> Result<u8> {
    let edges: Vec<u8> = edges.iter().copied().filter(|&v| !ok(v)).collect();
    if u.ratio(1, 2)? {
        if let Ok(v) = u.choose(&edges) {
            return Ok(*v);
        }
    }
    for _ in 0..4 {
        let v: u8 = u.arbitrary()?;
        if !ok(v) {
            return Ok(v);
        }
    }
    // Deterministic fallback: the first edge, else the first bad byte.
    Ok(edges
        .first()
        .copied()
        .or_else(|| (0..=u8::MAX).find(|&v| !ok(v)))
        .unwrap_or(0xFF))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Menu {
    Opcode,
    Tag,
    ReservedBit,
    Wait,
    Update,
    Scratch,
    Field,
}

/// The payload bytes (from +0x0C) of `base` a decoder checks, with their roles.
fn checked_field_bytes(base: u8) -> Vec<(u8, Role)> {
    (0x0Cu8..64)
        .filter_map(|o| byte_role(base, usize::from(o)).map(|r| (o, r)))
        .filter(|&(_, r)| checked(r))
        .collect()
}

fn menu(base: u8) -> Vec<Menu> {
    let mut m = vec![Menu::Opcode, Menu::Tag, Menu::ReservedBit];
    if base != 0xDA {
        m.extend([Menu::Wait, Menu::Update]);
    }
    if base == 0x85 {
        m.push(Menu::Scratch);
    }
    if !checked_field_bytes(base).is_empty() {
        m.push(Menu::Field);
    }
    m
}

/// One violation for `base` under `arch`.
pub fn violation(u: &mut Unstructured<'_>, base: u8, arch: Generation) -> Result<Violation> {
    let tag = tag_of(base);
    let m = menu(base);
    Ok(match *u.choose(&m)? {
        Menu::Opcode => {
            let custom = base == 0x85 || base == 0x86;
            let other_custom = if base == 0x85 { 0x86 } else { 0x85 };
            let edges: &[u8] = if custom {
                &[0xFF, 0x00, other_custom, 0x87, 0x84, 0x80, 0x0B, 0x01]
            } else {
                &[0xFF, 0x00, 0x80, 0x01, 0xEC, 0xDD, 0xD7, 0x0B]
            };
            let v = bad_value(u, edges, |v| {
                v == base || (OPCODES.contains(&v) && !(custom && v == other_custom))
            })?;
            Violation::Opcode(v)
        }
        Menu::Tag => Violation::Tag(bad_value(u, &[0x00, 0x11, 0x0F, 0x20, 0x90, 0xFF], |v| {
            v == tag || v == 0x10 || (base == 0xDA && v == 0)
        })?),
        Menu::ReservedBit => {
            let offs: Vec<u8> = (0u8..64)
                .filter(|&o| {
                    matches!(
                        byte_role(base, usize::from(o)),
                        Some(Role::Reserved | Role::Unknown)
                    )
                })
                .collect();
            // Half the time a reserved run's first or last byte (mask off-by-ones show there).
            let ends: Vec<u8> = offs
                .iter()
                .copied()
                .filter(|&o| {
                    o == 0 || !offs.contains(&(o - 1)) || o == 63 || !offs.contains(&(o + 1))
                })
                .collect();
            let pool = if u.arbitrary()? { &ends } else { &offs };
            Violation::ReservedBit {
                offset: *u.choose(pool)?,
                bit: u.int_in_range(0..=7)?,
            }
        }
        Menu::Wait => Violation::WaitMode(bad_value(
            u,
            &[0x08, 0x80, 0x0D, 0x10, 0x86, 0x8F, 0x45, 0xFF],
            |v| accepts(Role::Field(Domain::WaitMode), v, arch),
        )?),
        Menu::Update => Violation::UpdateMode(bad_value(
            u,
            &[0x06, 0x08, 0x10, 0x16, 0x18, 0x1A, 0x98, 0xFF],
            |v| accepts(Role::Field(Domain::UpdateMode), v, arch),
        )?),
        Menu::Scratch => Violation::Scratch {
            parts: *u.choose(&SCRATCH_PARTIAL)?,
            b10: nonzero_u8(u)?,
            d14: nonzero_u32(u)?,
            d18: nonzero_u32(u)?,
            b1c: nonzero_u8(u)?,
        },
        Menu::Field => {
            let offs = checked_field_bytes(base);
            let (offset, r) = *u.choose(&offs)?;
            let edges: &[u8] = match r {
                Role::Field(Domain::CceOp) => &[0x01, 0x03, 0x05, 0x1A, 0xFF],
                Role::Field(Domain::Kind) => &[0x00, 0x0A, 0x0B, 0xFF],
                Role::Const(_) => &[0x00, 0x02, 0x81, 0xFF],
                Role::Field(Domain::ArgType) => &[0x00, 0x03, 0x81, 0xFF],
                Role::Field(Domain::Flag) => &[0x02, 0x03, 0x80, 0xFF],
                _ => &[0x00, 0x10, 0x11, 0x12, 0xFF],
            };
            Violation::Field {
                offset,
                value: bad_value(u, edges, |v| accepts(r, v, arch))?,
            }
        }
    })
}
