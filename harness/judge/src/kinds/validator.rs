//! Kind `validator` (targets `validate_header`, `validate_payload`): one bundle through a
//! SPEC §3 / §4 CUSTOM_OP validator on each subject.

use super::bundle::BundleKind;
use crate::subjects::Validator;
use crate::targets::Check;

/// The validator kind.
pub static VALIDATOR: BundleKind = BundleKind {
    name: "validator",
    opcodes: row_opcodes,
};

/// The opcode a validator's chain is about (SPEC §3: 0x85, §4: 0x86).
pub fn opcodes(v: Validator) -> &'static [u8] {
    match v {
        Validator::Header => &[0x85],
        Validator::Payload => &[0x86],
    }
}

fn row_opcodes(c: Check) -> &'static [u8] {
    match c {
        Check::Validator(v) => opcodes(v),
        _ => &crate::layout::OPCODES,
    }
}
