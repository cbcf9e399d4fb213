//! Per-chip profile facts beyond the opcode enum: which of the eleven opcodes a chip's compiler
//! emits, the header DTYPE members (FACTS §6 \[H\]) and the header ALU-op members (FACTS §4 \[H\]).
//! Written as "which chips" lists per value band.

use crate::regions::record;
use crate::roster::Generation;

const ALL: &[Generation] = &[
    Generation::Sunda,
    Generation::Cayman,
    Generation::Mariana,
    Generation::Maverick,
];
const FROM_CAYMAN: &[Generation] = &[
    Generation::Cayman,
    Generation::Mariana,
    Generation::Maverick,
];
const FROM_MARIANA: &[Generation] = &[Generation::Mariana, Generation::Maverick];
const MAVERICK: &[Generation] = &[Generation::Maverick];
const SUNDA: &[Generation] = &[Generation::Sunda];

/// NEURON_ISA_TPB_DTYPE: `(first tag, last tag, chips)` (FACTS §6 \[H\]).
const DTYPE_BANDS: &[(u8, u8, &[Generation])] = &[
    (0x01, 0x0F, ALL),
    (0x10, 0x10, FROM_MARIANA),
    (0x11, 0x16, MAVERICK),
    (0x19, 0x1F, FROM_MARIANA),
];

/// ALU op wire bands: `(first, last, chips)` (FACTS §4 \[H\]).
const ALU_BANDS: &[(u8, u8, &[Generation])] = &[
    (0x00, 0x1D, ALL),
    (0x20, 0x23, FROM_MARIANA),
    (0x24, 0x24, MAVERICK),
    (0xC4, 0xC6, SUNDA),
    (0xC4, 0xE1, FROM_CAYMAN),
];

fn in_bands(bands: &[(u8, u8, &[Generation])], chip: Generation, v: u8) -> bool {
    bands
        .iter()
        .any(|(lo, hi, chips)| *lo <= v && v <= *hi && chips.contains(&chip))
}

/// Is `tag` a member of `chip`'s header DTYPE enum?
pub fn dtype_member(chip: Generation, tag: u8) -> bool {
    in_bands(DTYPE_BANDS, chip, tag)
}

/// Is `wire` a member of `chip`'s header ALU-op enum?
pub fn alu_member(chip: Generation, wire: u8) -> bool {
    in_bands(ALU_BANDS, chip, wire)
}

/// Does `chip`'s compiler emit `opcode` (one of the eleven; seed 003 "At a glance")?
pub fn chip_emits(chip: Generation, opcode: u8) -> bool {
    record(opcode).is_some_and(|rec| rec.first_chip <= chip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emitted_dtype_tags_are_header_members() {
        for &chip in ALL {
            for tag in 0..=255u8 {
                if crate::lut::is_dtype_tag(chip, tag) {
                    assert!(dtype_member(chip, tag), "{chip:?} {tag:#x}");
                }
            }
        }
        assert!(crate::lut::is_dtype_tag(Generation::Mariana, 0x10));
        assert!(!crate::lut::is_dtype_tag(Generation::Cayman, 0x10));
    }

    #[test]
    fn shipped_alu_wires_are_members() {
        for &chip in ALL {
            for op in 0..30u32 {
                if let Ok(w) = crate::lut::alu_wire(op) {
                    assert!(alu_member(chip, w), "{chip:?} {w:#x}");
                }
            }
        }
        assert!(alu_member(Generation::Sunda, 0xC6) && !alu_member(Generation::Sunda, 0xC7));
        assert!(alu_member(Generation::Cayman, 0xE1) && !alu_member(Generation::Cayman, 0x20));
        assert!(alu_member(Generation::Maverick, 0x24) && !alu_member(Generation::Mariana, 0x24));
    }

    #[test]
    fn emitting_chips() {
        for op in [0xBEu8, 0xBF, 0xD8] {
            assert!(!chip_emits(Generation::Sunda, op));
            assert!(chip_emits(Generation::Cayman, op) && chip_emits(Generation::Maverick, op));
        }
        assert!(chip_emits(Generation::Sunda, 0xD9));
        assert!(!chip_emits(Generation::Maverick, 0x87));
    }
}
