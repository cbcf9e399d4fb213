//! The events band enums as name → byte rows (FACTS §2 \[H\], common.h L313-330 and L347-370).
//! A byte is admitted iff some row names it; INVALID (0xFF) has no row. One row per member:
//! a newly published member is one more row.

/// `NEURON_ISA_TPB_WAIT_MODE`, by header name.
pub const WAIT_MODE_MEMBERS: &[(&str, u8)] = &[
    ("NONE", 0x00),
    ("WAIT_FOR_EVT_CLEAR", 0x0E),
    ("WAIT_FOR_EVT_CLEAR_THEN_SET", 0x0F),
    ("WAIT_FOR_EVT_SET", 0x06),
    ("WAIT_FOR_EVT_SET_THEN_CLEAR", 0x07),
    ("WAIT_FOR_SEM_EQ_IMM", 0x01),
    ("WAIT_FOR_SEM_EQ_REG", 0x81),
    ("WAIT_FOR_SEM_GE_IMM", 0x05),
    ("WAIT_FOR_SEM_GE_REG", 0x85),
    ("WAIT_FOR_SEM_GT_IMM", 0x04),
    ("WAIT_FOR_SEM_GT_REG", 0x84),
    ("WAIT_FOR_SEM_LE_IMM", 0x03),
    ("WAIT_FOR_SEM_LE_REG", 0x83),
    ("WAIT_FOR_SEM_LT_IMM", 0x02),
    ("WAIT_FOR_SEM_LT_REG", 0x82),
];

/// `NEURON_ISA_TPB_UPDATE_MODE` members quoted by FACTS §2, by header name.
pub const UPDATE_MODE_MEMBERS: &[(&str, u8)] = &[
    ("NONE", 0x00),
    ("EVT_CLR_COMPLETE", 0x12),
    ("EVT_CLR_READ", 0x02),
    ("EVT_SET_COMPLETE", 0x11),
    ("EVT_SET_READ", 0x01),
    ("SEM_ADD_IMM_COMPLETE", 0x15),
    ("SEM_ADD_IMM_READ", 0x05),
    ("SEM_DEC_COMPLETE", 0x14),
    ("SEM_DEC_READ", 0x04),
    ("SEM_INC_COMPLETE", 0x13),
    ("SEM_INC_READ", 0x03),
    ("SEM_SUB_IMM_COMPLETE", 0x17),
    ("SEM_SUB_IMM_READ", 0x07),
    ("SEM_WR_IMM_COMPLETE", 0x19),
    ("SEM_WR_IMM_READ", 0x09),
    ("SEM_WR_REG_COMPLETE", 0x99),
];

/// The header name of a member byte of `table`.
pub fn member_name(table: &[(&'static str, u8)], byte: u64) -> Option<&'static str> {
    table
        .iter()
        .find(|(_, b)| u64::from(*b) == byte)
        .map(|(n, _)| *n)
}

/// `has_valid_neuron_events` half: is `byte` a member of `table` (INVALID never is)?
pub fn is_member(table: &[(&'static str, u8)], byte: u64) -> bool {
    member_name(table, byte).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FACTS §2 as prose ranges, typed again by hand: a one-row slip above fails here.
    #[test]
    fn members_are_facts_2() {
        let wait = |b: u64| {
            (0x00..=0x07).contains(&b) || b == 0x0E || b == 0x0F || (0x81..=0x85).contains(&b)
        };
        let update = |b: u64| {
            let read = [0x01u64, 0x02, 0x03, 0x04, 0x05, 0x07, 0x09];
            b == 0 || read.contains(&b) || read.contains(&b.wrapping_sub(0x10)) || b == 0x99
        };
        for b in 0..=255u64 {
            assert_eq!(is_member(WAIT_MODE_MEMBERS, b), wait(b), "wait {b:#04x}");
            assert_eq!(
                is_member(UPDATE_MODE_MEMBERS, b),
                update(b),
                "update {b:#04x}"
            );
        }
        assert!(!is_member(WAIT_MODE_MEMBERS, 0xFF) && !is_member(UPDATE_MODE_MEMBERS, 0xFF));
    }
}
