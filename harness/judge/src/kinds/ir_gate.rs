//! Kind `ir_gate` (target `ir_gates`): one SPEC §7 IR query
//! ([`crate::judge::ir_query_from_input`]) on each subject.

use super::kind::{CaseBuf, Draw, Form, TargetKind};
use crate::generators::gate_inputs;
use crate::judge::nway::Judge;
use crate::judge::{ir_query_from_input, pair, Outcome};
use crate::subjects::IrQuery;
use crate::targets::Target;

pub struct IrGateKind;

impl TargetKind for IrGateKind {
    fn generate(&self, _t: Target, d: Draw<'_>, buf: &mut CaseBuf) -> Form {
        gate_inputs::ir_query_input(d.r, d.kind, &mut buf.bytes);
        Form::Bytes
    }

    fn compare(&self, e: &Judge, t: Target, input: &[u8]) -> Outcome {
        compare_query(e, t, &ir_query_from_input(input), input)
    }
}

/// IR query `q` on the reference pair only (no protocol operation asks it),
/// reported with `input` ([`pair::ir`]).
pub fn compare_query(e: &Judge, t: Target, q: &IrQuery, input: &[u8]) -> Outcome {
    let case = || q.to_string();
    Outcome(
        pair::ir(&e.reference_pair(t, input, &case), q)
            .into_iter()
            .collect(),
    )
}
