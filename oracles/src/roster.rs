//! The opcode roster of FACTS §1 / SPEC §2, written as the decimal ranges the documents list.

/// Inclusive decimal ranges of the 160 named opcode ordinals (FACTS §1; SPEC §2).
/// 0xFF (`Invalid`) and every gap are not named.
pub const ROSTER_RANGES: &[(u8, u8)] = &[
    (1, 10),
    (33, 37),
    (48, 48),
    (65, 79),
    (81, 84),
    (88, 88),
    (94, 116),
    (118, 127),
    (129, 134),
    (142, 142),
    (146, 150),
    (152, 171),
    (176, 181),
    (183, 184),
    (187, 191),
    (193, 235),
    (240, 242),
];

/// `is_valid_enum(OPCODE, op)`: is `op` one of the 160 named ordinals?
pub fn is_named_opcode(op: u8) -> bool {
    ROSTER_RANGES
        .iter()
        .any(|&(lo, hi)| (lo..=hi).contains(&op))
}
