//! [`Subject`] over `tpb_core`.

use super::{
    DecodeFail, Decoded, GateResult, LutResult, Route, StreamFail, StreamSummary, Subject, Value,
    Verdict,
};
use tpb_core as c;
use tpb_core::lut::Generation;
use tpb_core::Bundle;

/// The production implementation (`tpb_core`), as a [`Subject`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreSubject;

fn val_from(v: c::FieldValue) -> Value {
    match v {
        c::FieldValue::Int(n) => Value::Int(n),
        c::FieldValue::Name(s) => Value::Name(s),
        c::FieldValue::Bytes(b) => Value::Bytes(b),
    }
}

fn val_to(v: &Value) -> c::FieldValue {
    match v {
        Value::Int(n) => c::FieldValue::Int(*n),
        Value::Name(s) => c::FieldValue::Name(s.clone()),
        Value::Bytes(b) => c::FieldValue::Bytes(b.clone()),
    }
}

fn lut(r: Result<u8, c::lut::LutError>) -> LutResult {
    r.map_err(|e| e.name())
}

impl Subject for CoreSubject {
    fn name(&self) -> &'static str {
        "core"
    }

    #[inline]
    fn validate_header(&self, b: &[u8; 64]) -> Verdict {
        c::validate::validate_header(&Bundle(*b))
            .err()
            .map(|e| e.predicate().name())
    }

    #[inline]
    fn validate_payload(&self, b: &[u8; 64]) -> Verdict {
        c::validate::validate_payload(&Bundle(*b))
            .err()
            .map(|e| e.predicate().name())
    }

    fn decode(&self, b: &[u8; 64]) -> Result<Decoded, DecodeFail> {
        match c::decode(&Bundle(*b)) {
            Ok(i) => Ok(Decoded {
                opcode: i.opcode(),
                mnemonic: i.mnemonic().to_string(),
                fields: i
                    .fields()
                    .into_iter()
                    .map(|(n, v)| (n.to_string(), val_from(v)))
                    .collect(),
            }),
            Err(e) => Err(DecodeFail {
                field: e.field().to_string(),
                offset: e.offset(),
            }),
        }
    }

    fn encode(&self, opcode: u8, fields: &[(String, Value)]) -> Result<[u8; 64], String> {
        let f: Vec<(&str, c::FieldValue)> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), val_to(v)))
            .collect();
        c::Instruction::from_fields(opcode, &f)
            .and_then(|i| i.encode())
            .map(|b| b.0)
            .map_err(|e| match e {
                // Name the unknown input field itself, not the reason tag.
                c::EncodeError::UnknownField { position } => fields
                    .get(position)
                    .map_or_else(|| e.field().to_string(), |(n, _)| n.clone()),
                _ => e.field().to_string(),
            })
    }

    fn parse_stream(&self, bytes: &[u8]) -> Result<Vec<StreamSummary>, StreamFail> {
        match c::stream::parse_custom_op_stream(bytes) {
            Ok(items) => Ok(items
                .into_iter()
                .map(|it| match it {
                    c::stream::StreamItem::Group {
                        header_index, args, ..
                    } => StreamSummary::Group {
                        header_index,
                        output: header_index + 1,
                        args: (header_index + 2..header_index + 2 + args.len()).collect(),
                    },
                    c::stream::StreamItem::Other { index, opcode } => {
                        StreamSummary::Other { index, opcode }
                    }
                })
                .collect()),
            Err(e) => Err(StreamFail {
                name: e.name(),
                index: e.index().unwrap_or(bytes.len()),
            }),
        }
    }

    fn collective_lut(&self, kind: u32) -> LutResult {
        lut(c::lut::collective_kind_to_wire(kind))
    }

    fn alu_lut(&self, op: u32) -> LutResult {
        lut(c::lut::alu_op_to_wire(op))
    }

    fn cce_lut(&self, op: u32) -> LutResult {
        lut(c::lut::cce_op_to_wire(op))
    }

    fn dge_lut(&self, op: u32) -> LutResult {
        lut(c::lut::alu_op_to_dge(op))
    }

    fn dtype_lut(&self, dtype: u32, v4: bool) -> LutResult {
        let g = if v4 {
            Generation::V4
        } else {
            Generation::PreV4
        };
        lut(c::lut::dtype_to_wire(dtype, g))
    }

    fn wait_mode_lut(&self, mode: u32) -> LutResult {
        lut(c::lut::wait_mode_lut(mode))
    }

    fn wait_mode_wire(&self, mode: u32) -> LutResult {
        lut(c::lut::wait_mode_to_wire(mode))
    }

    fn check_custom_op(&self, args: &[u8], outputs: &[u8], arch: u8) -> GateResult {
        // Codes >= 4 have no core variant; they map to Other / Mariana, which
        // fail the same checks (bad_memory_space / bad_arch) as in the oracle.
        let space = |m: &u8| c::ir::MemSpace::from_code(*m).unwrap_or(c::ir::MemSpace::Other);
        let a: Vec<c::ir::MemSpace> = args.iter().map(space).collect();
        let o: Vec<c::ir::MemSpace> = outputs.iter().map(space).collect();
        let arch = c::ir::Arch::from_code(arch).unwrap_or(c::ir::Arch::Mariana);
        c::ir::check_custom_op(&a, &o, arch).map_err(|e| e.name())
    }

    fn sb_scratchpad(
        &self,
        kind: u32,
        subkind: u32,
        sb_arg_global: bool,
        n_args: u64,
        n_outputs: u64,
        n_scratch: u64,
    ) -> GateResult {
        c::ir::is_cc_having_sb_scratchpad(&c::ir::ScratchPadQuery {
            kind,
            subkind,
            sb_arg_global,
            n_args,
            n_outputs,
            n_scratch,
        })
        .map_err(|e| e.name())
    }

    fn cc_dim(&self, dim: u32) -> GateResult {
        c::ir::check_cc_dim(dim).map_err(|e| e.name())
    }

    fn rank_id_output(&self, storage_kind: u32) -> GateResult {
        c::ir::check_rank_id_output(storage_kind).map_err(|e| e.name())
    }

    fn lnc(&self, cores_per_lnc: u32) -> GateResult {
        c::ir::check_lnc(cores_per_lnc).map_err(|e| e.name())
    }

    fn route(&self, bytes_per_partition: u64) -> Route {
        match c::ir::route_local_collective(bytes_per_partition) {
            c::ir::Route::Sb2sb => Route::Sb2sb,
            c::ir::Route::Dma => Route::Dma,
        }
    }
}
