#![forbid(unsafe_code)]
//! `tpb-oracle` — an independent second reading of the TPB bundle spec (`SPEC.md`).
//!
//! Written from `SPEC.md` and the two seed documents only; it shares no code, tables or
//! dependencies with `tpb-core`. Every record type is described by a declarative *region table*
//! (see `regions`) and one generic interpreter validates, decodes and encodes all of them.
//! Lookup tables are rows of `(name, ordinal, wire)` searched by value; the opcode enums are a
//! per-chip transcription checked by membership; every wire function takes the [`Generation`] (v2
//! Sunda … v5 Maverick; Sunda is the default). See `oracles/README.md`.

mod codec;
mod errors;
mod events;
mod gates;
mod lint;
mod lower;
pub mod lut;
mod profile;
mod regions;
mod roster;
mod stream;
mod val;
mod verdict;

pub use codec::{decode, encode, encode_custom_op_group, Decoded};
pub use errors::{
    DecodeRejection, EncodeRejection, GateRejection, LutRejection, Operand, Predicate, Rejection,
    StreamRejection,
};
pub use events::{is_member, member_name, UPDATE_MODE_MEMBERS, WAIT_MODE_MEMBERS};
pub use gates::{
    gate_cc_dim, gate_custom_op, gate_lnc, gate_rank_id_output, gate_sb_scratchpad, route_is_sb2sb,
};
pub use lint::{length_of, lint_one, lint_stream, Lint, NotBundles, Report, LONG_INSTRUCTIONS};
pub use lower::{Band, Emitted, Ledger, LowerRejection, Request, Tensor};
pub use lut::{
    alu_wire, cce_wire, collective_wire, dge_op, dtype_wire, is_dtype_tag, update_mode_lut,
    uses_v4_dtypes, wait_mode_lut, Table, ALU, COLLECTIVE,
};
pub use profile::{alu_member, chip_emits, dtype_member};
pub use regions::{opcode_field_names, RECORD_OPCODES};
pub use roster::{is_named_opcode, Generation, CHIPS};
pub use stream::{parse_bundle_stream, parse_stream, Item, Span};
pub use val::Val;
pub use verdict::{dbg_header_verdict, dbg_payload_verdict, header_verdict, payload_verdict};
pub mod engines;
pub mod sim;
