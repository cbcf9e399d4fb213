//! The eleven seed opcodes and their mnemonics (SPEC §5.2). Opcode-enum membership per
//! generation is [`crate::generation::Generation::is_valid_opcode`] (SPEC §2).

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
    fn eleven() {
        assert_eq!(seed_opcodes().count(), 11);
        for op in seed_opcodes() {
            assert!(mnemonic(op).is_some());
        }
        assert_eq!(mnemonic(0x87), None);
    }
}
