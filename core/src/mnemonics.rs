//! The record opcodes and their mnemonics (SPEC §5.2), from the instruction table
//! ([`crate::layout::RECORDS`], generated from isa/records.tsv). Opcode-enum membership per
//! generation is [`crate::generation::Generation::is_valid_opcode`] (SPEC §2).

use crate::layout::{record, RECORDS};

/// The SPEC §5.2 mnemonic of a record opcode.
pub fn mnemonic(op: u8) -> Option<&'static str> {
    record(op).map(|r| r.mnemonic)
}

/// The record opcodes this crate encodes and decodes, in table order.
pub fn seed_opcodes() -> impl Iterator<Item = u8> {
    RECORDS.iter().map(|r| r.opcode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_has_its_mnemonic_and_no_other_opcode_has_one() {
        for op in 0..=255u8 {
            assert_eq!(
                mnemonic(op).is_some(),
                seed_opcodes().any(|o| o == op),
                "{op:#04x}"
            );
        }
        assert_eq!(mnemonic(0xDB), Some("GetCurProcessingRankID"));
    }
}
