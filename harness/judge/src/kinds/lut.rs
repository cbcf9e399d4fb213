//! Kind `lut` (targets `*_lut`, one per SPEC §6 table): an ordinal through the row's lookup
//! table on each subject that declares that table.

use super::kind::{CaseBuf, Draw, Form, TargetKind};
use crate::generators::gate_inputs;
use crate::judge::nway::Judge;
use crate::judge::{ordinal_from_input, pair, Outcome};
use crate::targets::{Check, Target};

pub struct LutKind;

impl TargetKind for LutKind {
    fn generate(&self, _t: Target, d: Draw<'_>, buf: &mut CaseBuf) -> Form {
        gate_inputs::lut_input(d.r, d.kind, &mut buf.bytes);
        Form::Bytes
    }

    fn case_reading(&self, t: Target, input: &[u8]) -> Option<String> {
        let Check::Lut(table) = t.check() else {
            return None;
        };
        let ord = ordinal_from_input(input);
        Some(format!(
            "ordinal {ord} ({ord:#x}) through table {} (SPEC §6)\n",
            table.name()
        ))
    }

    fn compare(&self, e: &Judge, t: Target, input: &[u8]) -> Outcome {
        let Check::Lut(table) = t.check() else {
            return Outcome::agree();
        };
        let ord = ordinal_from_input(input);
        e.each(t, input, &ordinal_case(ord), |p| {
            pair::lut(p, table, ord).err().flatten()
        })
    }
}

/// A LUT case as a divergence reports it.
pub(crate) fn ordinal_case(ord: u32) -> impl Fn() -> String {
    move || format!("ordinal {ord} ({ord:#x})")
}
