//! Kind `decode` (targets `decode_any`, `roundtrip`): one bundle through the SPEC §5.1
//! decoder on each subject, or `encode(decode(b)) == b` on each side and crosswise.

use super::bundle::BundleKind;

/// Gate images of every record opcode.
pub static DECODE: BundleKind = BundleKind {
    name: "decode",
    opcodes: |_| &crate::layout::OPCODES,
};
