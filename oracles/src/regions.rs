//! Declarative region tables: every record type is a static list of byte ranges with a role.
//!
//! One generic interpreter (in `verdict` and `codec`) reads these tables to validate, decode
//! and encode. A record's regions are its shared skeleton followed by its body; together they
//! tile bytes 0x00..0x40 exactly once, in ascending order (checked by a test).

use crate::events::{is_member, UPDATE_MODE_MEMBERS, WAIT_MODE_MEMBERS};
use crate::roster::Generation;

/// What values a live field admits, and how it is shown when decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Domain {
    /// Any unsigned integer that fits the width (decoded as Int).
    Any,
    /// `wait_mode`: a NEURON_ISA_TPB_WAIT_MODE member (FACTS §2 \[H\]).
    WaitMode,
    /// `update_mode`: a NEURON_ISA_TPB_UPDATE_MODE member (FACTS §2 \[H\]).
    UpdateMode,
    /// 0x86 `arg_type`: TENSOR 1 or ARRAY_OF_TENSOR 2 (FACTS §8 \[H\]).
    ArgType,
    /// A 0/1 flag (GetGlobalRankId `valid`, D-7).
    Flag,
    /// A dtype wire tag of the chip's column (SPEC §6.4).
    DtypeTag,
    /// An AluOp wire byte of the shipped CCE subset, decoded as its name (SPEC §6.2, D-13).
    CceOpName,
    /// A CollectiveKind wire byte, decoded as its name (SPEC §6.1).
    KindName,
    /// An opaque byte block (access patterns, D-5).
    Opaque,
}

/// Who checks a reserved-zero range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Guard {
    /// The record's validator reserved-zero predicate (0x85 / 0x86).
    Validator,
    /// The decoder's own walk (SPEC §5.1).
    Decoder,
}

/// The role of one byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// byte\[0\].
    Opcode,
    /// byte\[1\], `inst_word_len`, with its required value.
    Tag(u8),
    /// Must be zero.
    Reserved(Guard),
    /// A fixed byte that is not a decoded field (`cross_core_enable`).
    Constant { name: &'static str, value: u8 },
    /// A decoded/encoded field.
    Live { name: &'static str, domain: Domain },
    /// A part of the 0x85 scratch descriptor (decoded as Int). `required` parts must be nonzero
    /// when the descriptor is non-empty; every part counts in the non-empty test.
    Scratch { name: &'static str, required: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub start: usize,
    pub len: usize,
    pub role: Role,
}

const fn r(start: usize, len: usize, role: Role) -> Region {
    Region { start, len, role }
}

const fn live(start: usize, len: usize, name: &'static str, domain: Domain) -> Region {
    r(start, len, Role::Live { name, domain })
}

const fn resv(start: usize, len: usize) -> Region {
    r(start, len, Role::Reserved(Guard::Decoder))
}

const fn vresv(start: usize, len: usize) -> Region {
    r(start, len, Role::Reserved(Guard::Validator))
}

/// The skeleton of every setupHeader-stamped record (SPEC §1; FACTS §2 \[H\]
/// NEURON_ISA_TPB_HEADER + NEURON_ISA_TPB_EVENTS): opcode, inst_word_len 0x10, the two debug
/// bytes (any value), and the events band.
const SKELETON_SYNC: &[Region] = &[
    r(0x00, 1, Role::Opcode),
    r(0x01, 1, Role::Tag(0x10)),
    live(0x02, 1, "debug_cmd", Domain::Any),
    live(0x03, 1, "debug_hint", Domain::Any),
    live(0x04, 1, "wait_mode", Domain::WaitMode),
    live(0x05, 1, "wait_idx", Domain::Any),
    live(0x06, 1, "update_mode", Domain::UpdateMode),
    live(0x07, 1, "update_idx", Domain::Any),
    live(0x08, 4, "semaphore_value", Domain::Any),
];

/// Fields an encoder input may leave out; they encode as 0 ("encoders write 0 unless given").
pub(crate) const OPTIONAL_FIELDS: &[&str] = &["debug_cmd", "debug_hint"];

/// The skeleton of the raw-stamped 0xDA record (D-3): inst_word_len 0x00, no sync band.
const SKELETON_RAW: &[Region] = &[
    r(0x00, 1, Role::Opcode),
    r(0x01, 1, Role::Tag(0x00)),
    resv(0x02, 2),
    live(0x04, 2, "channel_id", Domain::Any),
    resv(0x06, 6),
];

/// 0x85 CustomOpHeader body (SPEC §3; seed 000 §C3, reserved-zero region, scratch QUIRK).
const BODY_85: &[Region] = &[
    live(0x0C, 2, "num_payloads", Domain::Any),
    live(0x0E, 1, "function_id", Domain::Any),
    live(0x0F, 1, "num_arguments", Domain::Any),
    r(
        0x10,
        1,
        Role::Scratch {
            name: "has_scratch_space",
            required: true,
        },
    ),
    vresv(0x11, 3),
    r(
        0x14,
        4,
        Role::Scratch {
            name: "scratch_space_addr",
            required: false,
        },
    ),
    r(
        0x18,
        4,
        Role::Scratch {
            name: "scratch_space_size",
            required: true,
        },
    ),
    r(
        0x1C,
        1,
        Role::Scratch {
            name: "scratch_space_num_partitions",
            required: true,
        },
    ),
    vresv(0x1D, 3),
    vresv(0x20, 32),
];

/// 0x86 CustomOpPayload body (SPEC §4; seed 000 AC03-C2).
const BODY_86: &[Region] = &[
    vresv(0x0C, 3),
    live(0x0F, 1, "arg_type", Domain::ArgType),
    live(0x10, 48, "ap", Domain::Opaque),
];

/// 0xD9 CollectiveCompute (seed 003 §3.1).
const BODY_D9: &[Region] = &[
    live(0x0C, 1, "cce_op", Domain::CceOpName),
    live(0x0D, 1, "dtype", Domain::DtypeTag),
    live(0x0E, 1, "kind", Domain::KindName),
    resv(0x0F, 1),
    live(0x10, 48, "ap", Domain::Opaque),
];

/// 0xDA CollectiveComputeSecondary body after its raw skeleton (seed 003 §3.2, D-3).
const BODY_DA: &[Region] = BODY_D9;

/// 0xCB CollectiveSendRecv (seed 003 §4.1).
const BODY_CB: &[Region] = &[
    resv(0x0C, 4),
    live(0x10, 8, "tensor_id", Domain::Any),
    resv(0x18, 24),
    live(0x30, 8, "tensor_base", Domain::Any),
    live(0x38, 8, "num_elements_per_partition", Domain::Any),
];

/// 0xBF Gpsimdsb2sb (seed 003 §5).
const BODY_BF: &[Region] = &[
    live(0x0C, 1, "src_dtype", Domain::DtypeTag),
    live(0x0D, 1, "dst_dtype", Domain::DtypeTag),
    resv(0x0E, 2),
    live(0x10, 16, "src_ap", Domain::Opaque),
    r(
        0x20,
        1,
        Role::Constant {
            name: "cross_core_enable",
            value: 0x01,
        },
    ),
    live(0x21, 1, "peer_partition", Domain::Any),
    resv(0x22, 14),
    live(0x30, 16, "dst_ap", Domain::Opaque),
];

/// 0xBE GetSequenceBounds (seed 003 §6, D-6).
const BODY_BE: &[Region] = &[
    live(0x0C, 1, "dtype", Domain::DtypeTag),
    resv(0x0D, 1),
    live(0x0E, 1, "flag_0e", Domain::Any),
    live(0x0F, 1, "flag_0f", Domain::Any),
    live(0x10, 16, "in_ap", Domain::Opaque),
    live(0x20, 16, "out_ap", Domain::Opaque),
    resv(0x30, 16),
];

/// 0xD8 CoreBarrier (seed 003 §7).
const BODY_D8: &[Region] = &[
    live(0x0C, 4, "barrier_id", Domain::Any),
    live(0x10, 4, "barrier_index", Domain::Any),
    resv(0x14, 12),
    live(0x20, 32, "sema_ap", Domain::Opaque),
];

/// 0xDC GetGlobalRankId (seed 003 §8.1, D-7).
const BODY_DC: &[Region] = &[
    live(0x0C, 1, "valid", Domain::Flag),
    resv(0x0D, 10),
    live(0x17, 1, "reg_id", Domain::Any),
    resv(0x18, 40),
];

/// 0xDB GetCurProcessingRankID (seed 003 §8.2).
const BODY_DB: &[Region] = &[
    live(0x0C, 2, "group_id", Domain::Any),
    live(0x0E, 2, "channel_id", Domain::Any),
    live(0x10, 2, "iteration_id", Domain::Any),
    live(0x12, 1, "reg_id", Domain::Any),
    resv(0x13, 1),
    live(0x14, 2, "stream_id", Domain::Any),
    resv(0x16, 42),
];

/// 0xDE TensorCompletion (seed 003 §9).
const BODY_DE: &[Region] = &[
    live(0x0C, 4, "handle", Domain::Any),
    live(0x10, 1, "ap_byte", Domain::Any),
    resv(0x11, 47),
];

/// Which validator chain a record is gated by (0x85 / 0x86 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chain {
    Header,
    Payload,
}

/// One record type: opcode, mnemonic, the first chip whose compiler emits it, skeleton + body
/// regions, and its validator if any.
pub(crate) struct Record {
    pub opcode: u8,
    pub first_chip: Generation,
    pub mnemonic: &'static str,
    pub skeleton: &'static [Region],
    pub body: &'static [Region],
    pub chain: Option<Chain>,
}

impl Record {
    /// All regions, ascending.
    pub fn regions(&self) -> impl Iterator<Item = &'static Region> {
        self.skeleton.iter().chain(self.body.iter())
    }

    /// The region carrying the field `name`.
    pub fn field_region(&self, name: &str) -> Option<&'static Region> {
        self.regions()
            .find(|reg| reg.role.field_name() == Some(name))
    }
}

impl Role {
    /// The canonical field name if this region is a decoded field.
    pub fn field_name(&self) -> Option<&'static str> {
        match *self {
            Role::Live { name, .. } | Role::Scratch { name, .. } => Some(name),
            _ => None,
        }
    }
}

/// The record types (seed 003 "At a glance": CoreV2 emits eight, CoreV3 adds 0xBE, 0xD8,
/// 0xBF; later chips inherit), searched by opcode. The oracle's own transcription of the seeds;
/// a test compares it with isa/records.tsv, core's source.
pub(crate) const RECORDS: &[Record] = &[
    Record {
        opcode: 0x85,
        first_chip: Generation::Sunda,
        mnemonic: "CustomOpHeader",
        skeleton: SKELETON_SYNC,
        body: BODY_85,
        chain: Some(Chain::Header),
    },
    Record {
        opcode: 0x86,
        first_chip: Generation::Sunda,
        mnemonic: "CustomOpPayload",
        skeleton: SKELETON_SYNC,
        body: BODY_86,
        chain: Some(Chain::Payload),
    },
    Record {
        opcode: 0xD9,
        first_chip: Generation::Sunda,
        mnemonic: "CollectiveCompute",
        skeleton: SKELETON_SYNC,
        body: BODY_D9,
        chain: None,
    },
    Record {
        opcode: 0xDA,
        first_chip: Generation::Sunda,
        mnemonic: "CollectiveComputeSecondary",
        skeleton: SKELETON_RAW,
        body: BODY_DA,
        chain: None,
    },
    Record {
        opcode: 0xCB,
        first_chip: Generation::Sunda,
        mnemonic: "CollectiveSendRecv",
        skeleton: SKELETON_SYNC,
        body: BODY_CB,
        chain: None,
    },
    Record {
        opcode: 0xBF,
        first_chip: Generation::Cayman,
        mnemonic: "Gpsimdsb2sb",
        skeleton: SKELETON_SYNC,
        body: BODY_BF,
        chain: None,
    },
    Record {
        opcode: 0xBE,
        first_chip: Generation::Cayman,
        mnemonic: "GetSequenceBounds",
        skeleton: SKELETON_SYNC,
        body: BODY_BE,
        chain: None,
    },
    Record {
        opcode: 0xD8,
        first_chip: Generation::Cayman,
        mnemonic: "CoreBarrier",
        skeleton: SKELETON_SYNC,
        body: BODY_D8,
        chain: None,
    },
    Record {
        opcode: 0xDC,
        first_chip: Generation::Sunda,
        mnemonic: "GetGlobalRankId",
        skeleton: SKELETON_SYNC,
        body: BODY_DC,
        chain: None,
    },
    Record {
        opcode: 0xDB,
        first_chip: Generation::Sunda,
        mnemonic: "GetCurProcessingRankID",
        skeleton: SKELETON_SYNC,
        body: BODY_DB,
        chain: None,
    },
    Record {
        opcode: 0xDE,
        first_chip: Generation::Sunda,
        mnemonic: "TensorCompletion",
        skeleton: SKELETON_SYNC,
        body: BODY_DE,
        chain: None,
    },
];

/// The record opcodes this crate decodes and encodes, in `RECORDS` order.
pub const RECORD_OPCODES: [u8; RECORDS.len()] = {
    let mut out = [0u8; RECORDS.len()];
    let mut i = 0;
    while i < RECORDS.len() {
        out[i] = RECORDS[i].opcode;
        i += 1;
    }
    out
};

/// Find the record table of `opcode`.
pub(crate) fn record(opcode: u8) -> Option<&'static Record> {
    RECORDS.iter().find(|rec| rec.opcode == opcode)
}

/// The canonical decoded field names of `opcode`, in order (SPEC §5.2), or None.
pub fn opcode_field_names(opcode: u8) -> Option<Vec<&'static str>> {
    record(opcode).map(|rec| {
        rec.regions()
            .filter_map(|reg| reg.role.field_name())
            .collect()
    })
}

/// The bytes of `region` in `b`, or an empty slice if the table were out of bounds.
pub(crate) fn slice<'a>(b: &'a [u8; 64], region: &Region) -> &'a [u8] {
    b.get(region.start..region.start.saturating_add(region.len))
        .unwrap_or(&[])
}

/// Unsigned little-endian value of `bytes` (at most the low 8 bytes count).
pub(crate) fn le_value(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .rev()
        .fold(0u64, |acc, &byte| (acc << 8) | u64::from(byte))
}

/// The first nonzero byte of `region` in `b`, as (offset, value).
pub(crate) fn first_nonzero(b: &[u8; 64], region: &Region) -> Option<(usize, u8)> {
    slice(b, region)
        .iter()
        .enumerate()
        .find(|(_, &byte)| byte != 0)
        .map(|(i, &byte)| (region.start + i, byte))
}

/// Byte at `offset` (0 if out of range — never happens for a 64-byte bundle and table offsets).
pub(crate) fn byte_at(b: &[u8; 64], offset: usize) -> u8 {
    b.get(offset).copied().unwrap_or(0)
}

/// 0x86 `arg_type` members that decode (FACTS §8 \[H\]; INVALID 0 does not).
const ARG_TYPES: &[(&str, u8)] = &[("TENSOR", 0x01), ("ARRAY_OF_TENSOR", 0x02)];

/// Flag values (D-7).
const FLAG_BYTES: &[(&str, u8)] = &[("false", 0x00), ("true", 0x01)];

fn in_named_set(set: &[(&str, u8)], value: u64) -> bool {
    set.iter().any(|&(_, byte)| u64::from(byte) == value)
}

impl Domain {
    /// Does the field admit the unsigned `value` on `chip` (read from / destined for the wire)?
    pub(crate) fn admits(self, value: u64, chip: Generation) -> bool {
        let byte = u8::try_from(value).ok();
        match self {
            Domain::Any | Domain::Opaque => true,
            Domain::WaitMode => is_member(WAIT_MODE_MEMBERS, value),
            Domain::UpdateMode => is_member(UPDATE_MODE_MEMBERS, value),
            Domain::ArgType => in_named_set(ARG_TYPES, value),
            Domain::Flag => in_named_set(FLAG_BYTES, value),
            Domain::DtypeTag => byte.is_some_and(|t| crate::lut::is_dtype_tag(chip, t)),
            Domain::CceOpName => byte
                .and_then(|w| crate::lut::ALU.of_wire(w))
                .is_some_and(|op| crate::lut::cce_wire(op).is_ok()),
            Domain::KindName => byte
                .and_then(|w| crate::lut::COLLECTIVE.of_wire(w))
                .is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_tiles_the_bundle_once_ascending() {
        for rec in RECORDS {
            let mut next = 0usize;
            for reg in rec.regions() {
                assert_eq!(
                    reg.start, next,
                    "gap/overlap in 0x{:02x} at {}",
                    rec.opcode, next
                );
                assert!(reg.len > 0);
                next = reg.start + reg.len;
            }
            assert_eq!(next, 64, "0x{:02x} does not end at 64", rec.opcode);
        }
    }

    #[test]
    fn field_names_are_distinct_within_a_record() {
        for rec in RECORDS {
            let names: Vec<&str> = rec.regions().filter_map(|r| r.role.field_name()).collect();
            for (i, a) in names.iter().enumerate() {
                assert!(
                    !names[i + 1..].contains(a),
                    "0x{:02x} names {a} twice",
                    rec.opcode
                );
            }
        }
    }

    /// One field as isa/records.tsv writes it: (offset, width, name, kind, domain).
    type Row = (usize, usize, String, &'static str, String);

    fn row_of(reg: &Region) -> Row {
        let (name, kind, domain): (&str, &str, String) = match reg.role {
            Role::Opcode => ("opcode", "constant", "opcode".into()),
            Role::Tag(v) => ("inst_word_len", "constant", format!("0x{v:02X}")),
            Role::Reserved(_) => ("reserved", "reserved", "-".into()),
            Role::Constant { name, value } => (name, "constant", format!("0x{value:02X}")),
            Role::Scratch { name, .. } => (name, "integer", "scratch".into()),
            Role::Live { name, domain } => {
                let (kind, d) = match domain {
                    Domain::Any => ("integer", "-"),
                    Domain::Opaque => ("ap", "-"),
                    Domain::WaitMode => ("enum", "wait_mode"),
                    Domain::UpdateMode => ("enum", "update_mode"),
                    Domain::ArgType => ("enum", "arg_type"),
                    Domain::Flag => ("enum", "flag"),
                    Domain::DtypeTag => ("enum", "dtype"),
                    Domain::CceOpName => ("enum", "cce_op"),
                    Domain::KindName => ("enum", "collective_kind"),
                };
                (name, kind, d.into())
            }
        };
        (reg.start, reg.len, name.to_string(), kind, domain)
    }

    fn number(s: &str) -> usize {
        s.strip_prefix("0x")
            .map_or_else(|| s.parse().ok(), |h| usize::from_str_radix(h, 16).ok())
            .unwrap_or_else(|| panic!("not a number: {s:?}"))
    }

    /// Compare with isa/records.tsv, read here on its own (core never reaches the oracle):
    /// per record its opcode, mnemonic, first generation, length, skeleton, validator, and
    /// every field's offset, width, name, kind and domain, in order.
    #[test]
    fn transcription_matches_the_instruction_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../isa/records.tsv");
        let text = std::fs::read_to_string(path).expect("isa/records.tsv");
        let rows: Vec<Vec<&str>> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split('\t').collect())
            .collect();
        let fields_of = |owner: &str| -> Vec<Row> {
            rows.iter()
                .filter(|c| c[0] == "field" && c[1] == owner)
                .map(|c| {
                    let kind = ["constant", "enum", "integer", "ap", "reserved"]
                        .into_iter()
                        .find(|k| *k == c[5])
                        .unwrap_or_else(|| panic!("kind {:?}", c[5]));
                    (
                        number(c[2]),
                        number(c[3]),
                        c[4].to_string(),
                        kind,
                        c[6].to_string(),
                    )
                })
                .collect()
        };
        let records: Vec<&Vec<&str>> = rows.iter().filter(|c| c[0] == "record").collect();
        assert_eq!(
            records
                .iter()
                .map(|c| number(c[1]) as u8)
                .collect::<Vec<_>>(),
            RECORD_OPCODES.to_vec(),
            "record opcodes and their order"
        );
        for (c, rec) in records.iter().zip(RECORDS) {
            let op = rec.opcode;
            assert_eq!(c[2], rec.mnemonic, "{op:#04x} mnemonic");
            assert_eq!(c[4], rec.first_chip.arch(), "{op:#04x} first generation");
            assert_eq!(number(c[5]), 64, "{op:#04x} length");
            let raw = std::ptr::eq(rec.skeleton, SKELETON_RAW);
            assert_eq!(c[6], if raw { "-" } else { "sync" }, "{op:#04x} skeleton");
            let chain = match rec.chain {
                Some(Chain::Header) => "header",
                Some(Chain::Payload) => "payload",
                None => "-",
            };
            assert_eq!(c[7], chain, "{op:#04x} validator");
            let mut want = if raw { Vec::new() } else { fields_of("sync") };
            want.extend(fields_of(c[1]));
            let got: Vec<Row> = rec.regions().map(row_of).collect();
            assert_eq!(got, want, "{op:#04x} fields");
            for reg in rec.body {
                if let Role::Reserved(g) = reg.role {
                    assert_eq!(g == Guard::Validator, rec.chain.is_some(), "{op:#04x}");
                }
            }
        }
    }

    #[test]
    fn record_opcodes_are_distinct() {
        for (i, a) in RECORD_OPCODES.iter().enumerate() {
            assert!(!RECORD_OPCODES[i + 1..].contains(a), "{a:#04x} twice");
        }
    }
}
