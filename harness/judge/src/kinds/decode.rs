//! Kind `decode` (targets `decode_any`, `roundtrip`): one bundle (first 64
//! bytes, zero-padded) through the SPEC §5.1 decoder on each subject (same
//! fields, or the same failure), or, for a `Roundtrip` row,
//! `encode(decode(b)) == b` on each side and crosswise.

use super::bundle::BundleKind;

/// The decode kind: gate images of every record opcode.
pub static DECODE: BundleKind = BundleKind {
    name: "decode",
    opcodes: |_| &crate::layout::OPCODES,
};
