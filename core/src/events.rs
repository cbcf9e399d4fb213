//! The events band enums `NEURON_ISA_TPB_WAIT_MODE` and `NEURON_ISA_TPB_UPDATE_MODE`
//! (FACTS §2 \[H\], common.h L313-330 and L347-370), one table each: adding a newly published
//! member is one row. `has_valid_neuron_events` (seed 000 (2)) is membership in these tables
//! minus INVALID 0xFF, which is not listed as a member.

/// `NEURON_ISA_TPB_WAIT_MODE` members: (wire byte, header name). FACTS §2 \[H\].
pub const WAIT_MODES: [(u8, &str); 15] = [
    (0x00, "NONE"),
    (0x01, "WAIT_FOR_SEM_EQ_IMM"),
    (0x02, "WAIT_FOR_SEM_LT_IMM"),
    (0x03, "WAIT_FOR_SEM_LE_IMM"),
    (0x04, "WAIT_FOR_SEM_GT_IMM"),
    (0x05, "WAIT_FOR_SEM_GE_IMM"),
    (0x06, "WAIT_FOR_EVT_SET"),
    (0x07, "WAIT_FOR_EVT_SET_THEN_CLEAR"),
    (0x0E, "WAIT_FOR_EVT_CLEAR"),
    (0x0F, "WAIT_FOR_EVT_CLEAR_THEN_SET"),
    (0x81, "WAIT_FOR_SEM_EQ_REG"),
    (0x82, "WAIT_FOR_SEM_LT_REG"),
    (0x83, "WAIT_FOR_SEM_LE_REG"),
    (0x84, "WAIT_FOR_SEM_GT_REG"),
    (0x85, "WAIT_FOR_SEM_GE_REG"),
];

/// `NEURON_ISA_TPB_UPDATE_MODE` members known from the quoted header lines: (wire byte, header
/// name). FACTS §2 \[H\]: the `_COMPLETE` forms are the `_READ` forms + 0x10. Further `*_REG_*`
/// forms exist in the header but are not quoted (an open question, SPEC D-1).
pub const UPDATE_MODES: [(u8, &str); 16] = [
    (0x00, "NONE"),
    (0x01, "EVT_SET_READ"),
    (0x02, "EVT_CLR_READ"),
    (0x03, "SEM_INC_READ"),
    (0x04, "SEM_DEC_READ"),
    (0x05, "SEM_ADD_IMM_READ"),
    (0x07, "SEM_SUB_IMM_READ"),
    (0x09, "SEM_WR_IMM_READ"),
    (0x11, "EVT_SET_COMPLETE"),
    (0x12, "EVT_CLR_COMPLETE"),
    (0x13, "SEM_INC_COMPLETE"),
    (0x14, "SEM_DEC_COMPLETE"),
    (0x15, "SEM_ADD_IMM_COMPLETE"),
    (0x17, "SEM_SUB_IMM_COMPLETE"),
    (0x19, "SEM_WR_IMM_COMPLETE"),
    (0x99, "SEM_WR_REG_COMPLETE"),
];

/// The INVALID member of both enums: never valid (seed 000 `cmp $0xff`).
pub const INVALID: u8 = 0xFF;

/// WAIT_FOR_SEM_GE_IMM: what the compiler stamps for a Wait (FACTS §2 wire table, BIR 1).
pub const WAIT_FOR_SEM_GE_IMM: u8 = 0x05;
/// SEM_INC_COMPLETE: what the compiler stamps for an Update (FACTS §2, BIR update 3).
pub const SEM_INC_COMPLETE: u8 = 0x13;

/// Membership of every byte value: bit [`WAIT`] for WAIT_MODE, bit [`UPDATE`] for
/// UPDATE_MODE, INVALID in neither; built from the two tables above. One byte-indexed
/// load per test (the validators' hot path; a `u8` index needs no bounds check).
const MEMBERS: [u8; 256] = {
    let mut map = [0u8; 256];
    let mut i = 0;
    while i < WAIT_MODES.len() {
        map[WAIT_MODES[i].0 as usize] |= WAIT;
        i += 1;
    }
    let mut i = 0;
    while i < UPDATE_MODES.len() {
        map[UPDATE_MODES[i].0 as usize] |= UPDATE;
        i += 1;
    }
    map[INVALID as usize] = 0;
    map
};
const WAIT: u8 = 1;
const UPDATE: u8 = 2;

/// byte\[4\] is a WAIT_MODE member other than INVALID.
#[inline(always)]
pub fn is_wait_mode(b: u8) -> bool {
    MEMBERS[usize::from(b)] & WAIT != 0
}

/// byte\[6\] is an UPDATE_MODE member other than INVALID.
#[inline(always)]
pub fn is_update_mode(b: u8) -> bool {
    MEMBERS[usize::from(b)] & UPDATE != 0
}

/// The header name of a wait-mode byte.
pub fn wait_mode_name(b: u8) -> Option<&'static str> {
    WAIT_MODES.iter().find(|(w, _)| *w == b).map(|(_, n)| *n)
}

/// The header name of an update-mode byte.
pub fn update_mode_name(b: u8) -> Option<&'static str> {
    UPDATE_MODES.iter().find(|(w, _)| *w == b).map(|(_, n)| *n)
}

/// Wait-mode byte from its header name.
pub fn wait_mode_from_name(name: &str) -> Option<u8> {
    WAIT_MODES.iter().find(|(_, n)| *n == name).map(|(w, _)| *w)
}

/// Update-mode byte from its header name.
pub fn update_mode_from_name(name: &str) -> Option<u8> {
    UPDATE_MODES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(w, _)| *w)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Member lists typed by hand from FACTS §2 (not from the tables above): a one-member slip
    // in either table fails here.
    const WAIT_BY_HAND: [u8; 15] = [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0E, 0x0F, 0x81, 0x82, 0x83, 0x84, 0x85,
    ];
    const UPDATE_BY_HAND: [u8; 16] = [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x09, 0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x19,
        0x99,
    ];

    #[test]
    fn wait_membership_is_facts_2() {
        for b in 0..=255u8 {
            assert_eq!(is_wait_mode(b), WAIT_BY_HAND.contains(&b), "wait {b:#04x}");
        }
    }

    #[test]
    fn update_membership_is_facts_2() {
        for b in 0..=255u8 {
            assert_eq!(
                is_update_mode(b),
                UPDATE_BY_HAND.contains(&b),
                "update {b:#04x}"
            );
        }
    }

    #[test]
    fn names() {
        assert_eq!(update_mode_name(0x13), Some("SEM_INC_COMPLETE"));
        assert_eq!(wait_mode_name(0x05), Some("WAIT_FOR_SEM_GE_IMM"));
        assert_eq!(wait_mode_name(0x07), Some("WAIT_FOR_EVT_SET_THEN_CLEAR"));
        assert_eq!(wait_mode_name(0xFF), None);
        assert_eq!(update_mode_from_name("SEM_WR_REG_COMPLETE"), Some(0x99));
        assert_eq!(wait_mode_from_name("WAIT_FOR_SEM_GE_REG"), Some(0x85));
        // _COMPLETE = _READ + 0x10 (FACTS §2)
        for (b, n) in UPDATE_MODES {
            if let Some(read) = n.strip_suffix("_COMPLETE") {
                if let Some(r) = update_mode_from_name(&format!("{read}_READ")) {
                    assert_eq!(b, r + 0x10, "{n}");
                }
            }
        }
    }
}
