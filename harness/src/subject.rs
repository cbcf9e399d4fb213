//! The `Subject` trait: one implementation of SPEC.md under differential test.
//!
//! Modelled on wasmtime's `DiffEngine`: the engine ([`crate::engine`]) drives two
//! subjects with the same input and compares what they say. Two subjects ship:
//!
//! - [`CoreSubject`] wraps `tpb_core` (the production implementation);
//! - [`OracleSubject`] wraps `tpb_oracle` (the independent second reading).
//!
//! All results are expressed in harness-owned types ([`Verdict`], [`Value`],
//! [`Decoded`], [`DecodeFail`], [`StreamSummary`], [`StreamFail`], [`Route`]) so
//! that the two crates, which share no code, can be compared field by field.
//!
//! The validator entry points ([`Subject::validate_header`],
//! [`Subject::validate_payload`]) and the LUT / IR-gate entry points return only
//! `&'static str` names and never allocate: they are the hot path of the gate.
//!
//! IR enums are passed as harness ordinals (SPEC D-11 order):
//! memory space `0 SBUF, 1 HBM, 2 PSUM, 3 Other` ([`mem`]), arch
//! `0 Tonga, 1 Sunda, 2 Cayman, 3 Mariana` ([`arch`]). The engine only
//! generates ordinals 0..=3; a subject given a larger one must reject it as a bad
//! memory space / arch (core's adapter maps it to `Other` / `Mariana`).

use std::fmt;

mod core_impl;
mod oracle_impl;

pub use core_impl::CoreSubject;
pub use oracle_impl::OracleSubject;

/// Validator result: `None` = valid, `Some(name)` = the first failing predicate
/// (SPEC §3 / §4 names, e.g. `"custom_op_header_reserved_zero"`).
pub type Verdict = Option<&'static str>;

/// Result of a LUT or IR gate: `Ok(wire byte)` / `Ok(())`, or the SPEC error
/// class name (e.g. `"out_of_range"`, `"not_shipped"`, `"bad_arch"`).
pub type LutResult = Result<u8, &'static str>;

/// Result of an IR gate: `Ok(())` = passes, `Err(name)` = the first failing check.
pub type GateResult = Result<(), &'static str>;

/// IR memory-space ordinals used by [`Subject::check_custom_op`] (SPEC §7, D-11).
pub mod mem {
    /// SBUF (state buffer).
    pub const SBUF: u8 = 0;
    /// HBM (device memory).
    pub const HBM: u8 = 1;
    /// PSUM.
    pub const PSUM: u8 = 2;
    /// Any other memory space.
    pub const OTHER: u8 = 3;
    /// Display name of an ordinal.
    pub fn name(m: u8) -> &'static str {
        match m {
            SBUF => "SBUF",
            HBM => "HBM",
            PSUM => "PSUM",
            _ => "Other",
        }
    }
}

/// IR arch ordinals used by [`Subject::check_custom_op`] (SPEC §7, D-11).
pub mod arch {
    /// Tonga.
    pub const TONGA: u8 = 0;
    /// Sunda.
    pub const SUNDA: u8 = 1;
    /// Cayman.
    pub const CAYMAN: u8 = 2;
    /// Mariana.
    pub const MARIANA: u8 = 3;
    /// Display name of an ordinal.
    pub fn name(a: u8) -> &'static str {
        match a {
            TONGA => "Tonga",
            SUNDA => "Sunda",
            CAYMAN => "Cayman",
            _ => "Mariana",
        }
    }
}

/// A decoded field value (SPEC §5.2 value kinds).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// An unsigned integer.
    Int(u64),
    /// A name from the SPEC §6 tables (e.g. `"add"`, `"AllReduce"`).
    Name(String),
    /// A byte range (access patterns).
    Bytes(Vec<u8>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Name(s) => write!(f, "{s}"),
            Value::Bytes(b) => f.write_str(&hex(b)),
        }
    }
}

/// A successfully decoded bundle: opcode, mnemonic and the canonical field list
/// of SPEC §5.2 (sync fields first, named `sync.wait_mode` … `sync.values`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decoded {
    /// `byte[0]`.
    pub opcode: u8,
    /// SPEC §5.2 mnemonic, e.g. `"CollectiveCompute"`.
    pub mnemonic: String,
    /// `(name, value)` in SPEC §5.2 order.
    pub fields: Vec<(String, Value)>,
}

impl Decoded {
    /// The value of a field by name.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

impl fmt::Display for Decoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (0x{:02X}) {{", self.mnemonic, self.opcode)?;
        for (i, (n, v)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, " {n}: {v}")?;
        }
        f.write_str(" }")
    }
}

/// A decode failure (SPEC §5.1): the field that failed and the byte offset of
/// the offending byte. Two failures are the same iff the field names are equal
/// and, when the field is `"reserved"`, the offsets are equal too.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DecodeFail {
    /// SPEC §5.1 field name or validator predicate name.
    pub field: String,
    /// Byte offset of the offending byte (as reported by the subject).
    pub offset: usize,
}

impl DecodeFail {
    /// SPEC §5.1 equivalence: same field, and same offset when field == "reserved".
    pub fn same_as(&self, other: &DecodeFail) -> bool {
        self.field == other.field && (self.field != "reserved" || self.offset == other.offset)
    }
}

impl fmt::Display for DecodeFail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset 0x{:02X}", self.field, self.offset)
    }
}

/// One item of a parsed bundle stream (SPEC §5.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StreamSummary {
    /// A custom-op group: the header's bundle index, the output payload's index,
    /// and the argument payloads' indices.
    Group {
        /// Bundle index of the 0x85 header.
        header_index: usize,
        /// Bundle index of the output 0x86.
        output: usize,
        /// Bundle indices of the argument 0x86s.
        args: Vec<usize>,
    },
    /// Any other bundle.
    Other {
        /// Bundle index.
        index: usize,
        /// `byte[0]`.
        opcode: u8,
    },
}

/// A stream-parser error (SPEC §5.3): the error name and the bundle index it is
/// reported at (for `trailing_bytes`: the stream length in bytes).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StreamFail {
    /// `trailing_bytes`, `invalid_record`, `payload_count_mismatch`,
    /// `stray_payload` or `short_group`.
    pub name: &'static str,
    /// Bundle index (header index for `short_group`; byte length for `trailing_bytes`).
    pub index: usize,
}

impl fmt::Display for StreamFail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.name, self.index)
    }
}

/// SB2SB-vs-DMA routing decision (SPEC §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// GPSIMD SB-to-SB mover, opcode 0xBF.
    Sb2sb,
    /// Plain DMA.
    Dma,
}

/// One implementation of SPEC.md, as the differential engine sees it.
///
/// Implementations must not panic on any input; if they do, the engine
/// reports a `Panic` divergence.
pub trait Subject {
    /// Short stable name, e.g. `"core"` or `"oracle"`.
    fn name(&self) -> &'static str;

    /// SPEC §3 header validator on any 64 bytes. Must not allocate.
    fn validate_header(&self, b: &[u8; 64]) -> Verdict;
    /// SPEC §4 payload validator on any 64 bytes. Must not allocate.
    fn validate_payload(&self, b: &[u8; 64]) -> Verdict;

    /// SPEC §5.1 strict decoder.
    fn decode(&self, b: &[u8; 64]) -> Result<Decoded, DecodeFail>;
    /// SPEC §5.2 encoder: `Err(field)` names the first bad field.
    fn encode(&self, opcode: u8, fields: &[(String, Value)]) -> Result<[u8; 64], String>;

    /// SPEC §5.3 stream parser.
    fn parse_stream(&self, bytes: &[u8]) -> Result<Vec<StreamSummary>, StreamFail>;

    /// SPEC §6.1 CollectiveKind ordinal → wire byte.
    fn collective_lut(&self, kind: u32) -> LutResult;
    /// SPEC §6.2 AluOpType ordinal → wire byte.
    fn alu_lut(&self, op: u32) -> LutResult;
    /// SPEC §6.2 CCE subset: AluOpType ordinal → wire byte, shipped ops only.
    fn cce_lut(&self, op: u32) -> LutResult;
    /// SPEC §6.3 AluOpType ordinal → DgeComputeOp value.
    fn dge_lut(&self, op: u32) -> LutResult;
    /// SPEC §6.4 Dtype ordinal → wire tag (`v4` selects the v4 column).
    fn dtype_lut(&self, dtype: u32, v4: bool) -> LutResult;
    /// SPEC §6.5 BIR wait mode → wire byte (the table; 0 → 0x07).
    fn wait_mode_lut(&self, mode: u32) -> LutResult;
    /// SPEC §6.5 sync encoder: BIR wait mode → wire byte (rejects mode 0 with
    /// `unsupported_wait_mode`).
    fn wait_mode_wire(&self, mode: u32) -> LutResult;

    /// SPEC §7 checkCustomOp; memory spaces per [`mem`], arch per [`arch`].
    fn check_custom_op(&self, args: &[u8], outputs: &[u8], arch: u8) -> GateResult;
    /// SPEC §7 isCCHavingSBScratchPad.
    fn sb_scratchpad(
        &self,
        kind: u32,
        subkind: u32,
        sb_arg_global: bool,
        n_args: u64,
        n_outputs: u64,
        n_scratch: u64,
    ) -> GateResult;
    /// SPEC §7 cc_dim gate.
    fn cc_dim(&self, dim: u32) -> GateResult;
    /// SPEC §7 GetGlobalRankId output storage-kind gate.
    fn rank_id_output(&self, storage_kind: u32) -> GateResult;
    /// SPEC §7 GPSIMDSB2SB LNC gate.
    fn lnc(&self, cores_per_lnc: u32) -> GateResult;
    /// SPEC §7 SB2SB vs DMA route.
    fn route(&self, bytes_per_partition: u64) -> Route;
}

/// Lowercase hex of a byte slice.
pub fn hex(b: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(char::from(D[usize::from(x >> 4)]));
        s.push(char::from(D[usize::from(x & 0xF)]));
    }
    s
}

/// SPEC §5.2 mnemonic of one of the eleven decodable opcodes.
pub fn mnemonic(opcode: u8) -> Option<&'static str> {
    Some(match opcode {
        0x85 => "CustomOpHeader",
        0x86 => "CustomOpPayload",
        0xD9 => "CollectiveCompute",
        0xDA => "CollectiveComputeSecondary",
        0xCB => "CollectiveSendRecv",
        0xBF => "Gpsimdsb2sb",
        0xBE => "GetSequenceBounds",
        0xD8 => "CoreBarrier",
        0xDC => "GetGlobalRankId",
        0xDB => "GetCurProcessingRankID",
        0xDE => "TensorCompletion",
        _ => return None,
    })
}

/// The eleven opcodes with an encoder (SPEC §5).
pub const OPCODES: [u8; 11] = [
    0x85, 0x86, 0xD9, 0xDA, 0xCB, 0xBF, 0xBE, 0xD8, 0xDC, 0xDB, 0xDE,
];

/// The value kind of a SPEC §5.2 field name (used to read JSON back into
/// [`Value`]s): `ap`-like fields are bytes, `cce_op`/`kind` are names, the
/// rest are ints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// [`Value::Int`].
    Int,
    /// [`Value::Name`].
    Name,
    /// [`Value::Bytes`].
    Bytes,
}

/// See [`Kind`].
pub fn field_kind(name: &str) -> Kind {
    match name {
        "ap" | "src_ap" | "dst_ap" | "in_ap" | "out_ap" | "sema_ap" => Kind::Bytes,
        "cce_op" | "kind" => Kind::Name,
        _ => Kind::Int,
    }
}
