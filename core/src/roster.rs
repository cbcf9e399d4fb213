//! The opcode roster: `is_valid_enum(OPCODE, byte[0])` (SPEC §2).

// ---------------------------------------------------------------------------
// Named opcode ordinals, F§1 [N]: 160 ordinals; 0xFF (Invalid) and gaps excluded.
// Inclusive ranges, decimal as in F§1.
// ---------------------------------------------------------------------------
const ROSTER_RANGES: [(u8, u8); 16] = [
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
];
// 240..=242 listed separately to keep the table shape readable. F§1 last row.
const ROSTER_TAIL: (u8, u8) = (240, 242);

/// Number of valid opcodes. F§1 "Count check: these ranges hold 160 ordinals".
pub const ROSTER_COUNT: u32 = 160;

const fn build_bitmap() -> [u64; 4] {
    let mut map = [0u64; 4];
    let mut i = 0;
    while i < ROSTER_RANGES.len() + 1 {
        let (lo, hi) = if i < ROSTER_RANGES.len() {
            ROSTER_RANGES[i]
        } else {
            ROSTER_TAIL
        };
        let mut o = lo as usize;
        while o <= hi as usize {
            map[o >> 6] |= 1u64 << (o & 63);
            o += 1;
        }
        i += 1;
    }
    map
}

/// 256-bit membership bitmap of the roster, built at compile time.
pub(crate) const ROSTER_BITMAP: [u64; 4] = build_bitmap();

/// `true` iff `op` is one of the 160 named opcode ordinals. S000 Algorithm (1)
/// `is_valid_enum(OPCODE=4,u[0])`; F§1.
#[inline(always)]
pub fn is_valid_opcode(op: u8) -> bool {
    let word = match ROSTER_BITMAP.get(usize::from(op >> 6)) {
        Some(w) => *w,
        None => 0,
    };
    (word >> (op & 63)) & 1 == 1
}

// ---------------------------------------------------------------------------
// Mnemonics of the eleven seed opcodes. S003 §"At a glance"; SPEC §5.2.
// ---------------------------------------------------------------------------
const MNEMONICS: [(u8, &str); 11] = [
    (0x85, "CustomOpHeader"),
    (0x86, "CustomOpPayload"),
    (0xBE, "GetSequenceBounds"),
    (0xBF, "Gpsimdsb2sb"),
    (0xCB, "CollectiveSendRecv"),
    (0xD8, "CoreBarrier"),
    (0xD9, "CollectiveCompute"),
    (0xDA, "CollectiveComputeSecondary"),
    (0xDB, "GetCurProcessingRankID"),
    (0xDC, "GetGlobalRankId"),
    (0xDE, "TensorCompletion"),
];

/// The SPEC §5.2 mnemonic of one of the eleven seed opcodes.
pub fn mnemonic(op: u8) -> Option<&'static str> {
    MNEMONICS.iter().find(|(o, _)| *o == op).map(|(_, m)| *m)
}

/// The eleven opcodes this crate encodes and decodes (S003 §Abstract).
pub fn seed_opcodes() -> impl Iterator<Item = u8> {
    MNEMONICS.iter().map(|(o, _)| *o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_is_160() {
        assert_eq!((0..=255u8).filter(|o| is_valid_opcode(*o)).count(), 160);
        assert_eq!(ROSTER_COUNT, 160);
    }

    #[test]
    fn edges() {
        for op in [
            0u8, 11, 32, 38, 47, 49, 64, 80, 85, 87, 89, 93, 117, 128, 135, 141, 143, 145, 151,
            172, 175, 182, 185, 186, 192, 236, 239, 243, 254, 255,
        ] {
            assert!(!is_valid_opcode(op), "{op}");
        }
        for op in [
            1u8, 10, 33, 37, 48, 65, 79, 81, 84, 88, 94, 116, 118, 127, 129, 134, 142, 146, 150,
            152, 171, 176, 181, 183, 184, 187, 191, 193, 235, 240, 242,
        ] {
            assert!(is_valid_opcode(op), "{op}");
        }
        for op in seed_opcodes() {
            assert!(is_valid_opcode(op));
            assert!(mnemonic(op).is_some());
        }
    }
}
