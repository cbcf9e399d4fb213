//! [`Subject`] over `tpb_oracle`.

use super::{
    DecodeFail, Decoded, GateResult, LutResult, Route, StreamFail, StreamSummary, Subject, Value,
    Verdict,
};
use tpb_oracle as o;

/// The independent oracle (`tpb_oracle`), as a [`Subject`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OracleSubject;

fn val_from(v: o::Val) -> Value {
    match v {
        o::Val::Int(n) => Value::Int(n),
        o::Val::Name(s) => Value::Name(s),
        o::Val::Bytes(b) => Value::Bytes(b),
    }
}

fn val_to(v: &Value) -> o::Val {
    match v {
        Value::Int(n) => o::Val::Int(*n),
        Value::Name(s) => o::Val::Name(s.clone()),
        Value::Bytes(b) => o::Val::Bytes(b.clone()),
    }
}

fn lut(r: Result<u8, o::LutRejection>) -> LutResult {
    r.map_err(|e| e.name())
}

fn gate(r: Result<(), o::GateRejection>) -> GateResult {
    r.map_err(|e| e.name())
}

impl Subject for OracleSubject {
    fn name(&self) -> &'static str {
        "oracle"
    }

    #[inline]
    fn validate_header(&self, b: &[u8; 64]) -> Verdict {
        o::header_verdict(b).err().map(|r| r.predicate_name())
    }

    #[inline]
    fn validate_payload(&self, b: &[u8; 64]) -> Verdict {
        o::payload_verdict(b).err().map(|r| r.predicate_name())
    }

    fn decode(&self, b: &[u8; 64]) -> Result<Decoded, DecodeFail> {
        match o::decode(b) {
            Ok(d) => Ok(Decoded {
                opcode: d.opcode,
                mnemonic: d.mnemonic.to_string(),
                fields: d
                    .fields
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
        let f: Vec<(&str, o::Val)> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), val_to(v)))
            .collect();
        o::encode(opcode, &f).map_err(|e| e.field().to_string())
    }

    fn parse_stream(&self, bytes: &[u8]) -> Result<Vec<StreamSummary>, StreamFail> {
        match o::parse_stream(bytes) {
            Ok(items) => Ok(items
                .into_iter()
                .map(|it| match it {
                    o::Item::Group {
                        header_index,
                        n_args,
                    } => StreamSummary::Group {
                        header_index,
                        output: header_index + 1,
                        args: (header_index + 2..header_index + 2 + n_args).collect(),
                    },
                    o::Item::Other { index, opcode } => StreamSummary::Other { index, opcode },
                })
                .collect()),
            Err(e) => Err(StreamFail {
                name: e.name(),
                index: e.index().unwrap_or(bytes.len()),
            }),
        }
    }

    fn collective_lut(&self, kind: u32) -> LutResult {
        lut(o::collective_wire(kind))
    }

    fn alu_lut(&self, op: u32) -> LutResult {
        lut(o::alu_wire(op))
    }

    fn cce_lut(&self, op: u32) -> LutResult {
        lut(o::cce_wire(op))
    }

    fn dge_lut(&self, op: u32) -> LutResult {
        lut(o::dge_op(op))
    }

    fn dtype_lut(&self, dtype: u32, v4: bool) -> LutResult {
        lut(o::dtype_wire(dtype, v4))
    }

    fn wait_mode_lut(&self, mode: u32) -> LutResult {
        lut(o::wait_mode_lut(mode))
    }

    fn wait_mode_wire(&self, mode: u32) -> LutResult {
        lut(o::wait_mode_wire(mode))
    }

    fn check_custom_op(&self, args: &[u8], outputs: &[u8], arch: u8) -> GateResult {
        gate(o::gate_custom_op(args, outputs, arch))
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
        gate(o::gate_sb_scratchpad(
            kind,
            subkind,
            sb_arg_global,
            n_args,
            n_outputs,
            n_scratch,
        ))
    }

    fn cc_dim(&self, dim: u32) -> GateResult {
        gate(o::gate_cc_dim(dim))
    }

    fn rank_id_output(&self, storage_kind: u32) -> GateResult {
        gate(o::gate_rank_id_output(storage_kind))
    }

    fn lnc(&self, cores_per_lnc: u32) -> GateResult {
        gate(o::gate_lnc(cores_per_lnc))
    }

    fn route(&self, bytes_per_partition: u64) -> Route {
        if o::route_is_sb2sb(bytes_per_partition) {
            Route::Sb2sb
        } else {
            Route::Dma
        }
    }
}
