//! Kind `lut` (targets `*_lut`): a `u32` LE ordinal (first ≤ 4 bytes,
//! zero-padded) through each SPEC §6 lookup table of the row, in order, on
//! each subject.

use super::kind::{CaseBuf, Draw, Form, TargetKind};
use crate::engine::nway::Engine;
use crate::engine::{ordinal_from_input, Outcome};
use crate::generators::gate_inputs;
use crate::targets::{Check, Target};

/// The lookup-table kind.
pub struct LutKind;

impl TargetKind for LutKind {
    fn name(&self) -> &'static str {
        "lut"
    }

    fn generate(&self, _t: Target, d: Draw<'_>, buf: &mut CaseBuf) -> Form {
        gate_inputs::lut_input(d.r, d.kind, &mut buf.bytes);
        Form::Bytes
    }

    fn compare(&self, e: &Engine, t: Target, input: &[u8]) -> Outcome {
        match t.check() {
            Check::Luts(tables) => e.luts(t, tables, ordinal_from_input(input), input),
            _ => Outcome::agree(),
        }
    }
}
