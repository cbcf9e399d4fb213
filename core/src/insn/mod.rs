//! Typed instructions: one struct per record opcode, the [`Instruction`] sum,
//! [`decode`] and the canonical field list (SPEC §5). The sum and its opcode dispatch are
//! generated from isa/records.tsv (`$OUT_DIR/instruction.rs`); a record's struct lives in the
//! file of its family and is re-exported here by the glob below.

/// A record struct's `OPCODE` and `FIELDS`, from its generated table module
/// (`crate::layout::<record>`).
macro_rules! table_consts {
    ($m:ident) => {
        /// Opcode (isa/records.tsv).
        pub const OPCODE: u8 = crate::layout::$m::OPCODE;
        /// Decoded field names (after the sync band where there is one), SPEC §5.2 order
        /// (isa/records.tsv).
        pub const FIELDS: [&'static str; crate::layout::$m::FIELDS.len()] =
            crate::layout::$m::FIELDS;
    };
}

#[macro_use]
mod codec;
mod check;
mod collective;
mod custom_op;
mod engine_local;
mod error;
mod fields;
mod sync_band;

pub use collective::*;
pub use custom_op::*;
pub use engine_local::*;
pub use error::{DecodeError, EncodeError};
pub use fields::{FieldList, FieldValue};
pub use sync_band::{Sync, UpdateMode, WaitMode, SYNC_FIELDS};

use crate::bundle::Bundle;
use crate::generation::Generation;
use fields::Source;

/// A struct decoder refuses a bundle of another opcode, and one the generation's compiler does
/// not emit (D-22).
pub(crate) fn expect_opcode(b: &Bundle, opcode: u8, gen: Generation) -> Result<(), DecodeError> {
    let op = b.opcode();
    if op != opcode {
        Err(DecodeError::Opcode { opcode: op })
    } else if !gen.emits(op) {
        Err(DecodeError::NotEmitted {
            opcode: op,
            generation: gen,
        })
    } else {
        Ok(())
    }
}

include!(concat!(env!("OUT_DIR"), "/instruction.rs"));

impl Instruction {
    /// The SPEC §5.2 mnemonic.
    pub fn mnemonic(&self) -> &'static str {
        crate::mnemonics::mnemonic(self.opcode()).unwrap_or("")
    }

    /// Encodes to one bundle as generation `gen`'s compiler would (SPEC §5); an opcode that
    /// compiler cannot emit is [`EncodeError::NotEmitted`].
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        each_variant!(self, v => v.encode(gen))
    }

    /// The canonical field list, SPEC §5.2 names and order.
    pub fn fields(&self) -> FieldList {
        let mut out = Vec::with_capacity(12);
        each_variant!(self, v => v.push_fields(&mut out));
        out
    }

    /// The canonical field names of a record opcode (sync fields first except 0xDA), from the
    /// table.
    pub fn field_names(opcode: u8) -> Option<Vec<&'static str>> {
        crate::layout::record(opcode).map(|r| r.field_names().collect())
    }

    /// Inverse of [`Instruction::fields`]: errors name the first bad field in list
    /// order (SPEC §5.2); then any input name outside the list is `UnknownField`.
    pub fn from_fields<S: AsRef<str>>(
        opcode: u8,
        fields: &[(S, FieldValue)],
        gen: Generation,
    ) -> Result<Instruction, EncodeError> {
        record_from_source(opcode, &Source::new(fields), gen)
    }
}

/// Decodes one bundle as generation `gen` (SPEC §5.1 failure order), dispatching on byte\[0\].
pub fn decode(b: &Bundle, gen: Generation) -> Result<Instruction, DecodeError> {
    decode_record(b, gen)
}
