//! How the labels and violations read a byte of an image: from its [`crate::layout`] span.

use crate::generation::Generation;
use crate::layout::{span_at, Domain, Role};

/// True when a decoder checks the value of a byte with role `r` (SPEC §5.1): the opcode, a
/// constant or a closed domain.
pub(super) fn checked(r: Role) -> bool {
    !matches!(
        r,
        Role::Reserved | Role::Unknown | Role::Field(Domain::Scratch | Domain::Ap | Domain::Any)
    )
}

/// The SPEC §5.1 decode-failure field of byte `off` of a `base` image: its span's name when
/// [`checked`], else `reserved`.
pub(super) fn field(base: u8, off: usize) -> &'static str {
    match span_at(base, off) {
        Some(s) if checked(s.role) => s.name,
        _ => "reserved",
    }
}

/// Is `v` a legal value under `arch` of a byte with role `r`?
pub(super) fn accepts(r: Role, v: u8, arch: Generation) -> bool {
    match r {
        Role::Const(c) => v == c,
        Role::Field(d) => d.values_for(arch).is_none_or(|vs| vs.contains(&v)),
        Role::Reserved | Role::Unknown => v == 0,
    }
}
