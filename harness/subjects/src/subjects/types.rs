//! The typed values that cross the [`super::Subject`] interface. A reported name the harness
//! does not know is `Unknown` and never equal to anything, so an invented name always diverges.

use std::fmt;

pub fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    push_hex(&mut s, b);
    s
}

pub fn push_hex(s: &mut String, b: &[u8]) {
    for &x in b {
        let [h, l] = hex_pair(x);
        s.push(char::from(h));
        s.push(char::from(l));
    }
}

pub fn hex_pair(x: u8) -> [u8; 2] {
    const D: &[u8; 16] = b"0123456789abcdef";
    [D[usize::from(x >> 4)], D[usize::from(x & 0xF)]]
}

/// A name a subject reports: `Known` to the harness, or `Unknown` (never equal to anything).
#[derive(Clone, Debug)]
pub enum Reported<T> {
    Known(T),
    Unknown(String),
}

impl<T: PartialEq> PartialEq for Reported<T> {
    fn eq(&self, other: &Reported<T>) -> bool {
        matches!((self, other), (Reported::Known(a), Reported::Known(b)) if a == b)
    }
}

/// A validator predicate of SPEC §3 / §4 (core's, in chain order).
pub type Predicate = Reported<tpb_core::validate::Predicate>;

impl Predicate {
    /// In SPEC order (core's `Predicate::ALL`).
    pub const KNOWN: [Predicate; 8] = {
        let p = tpb_core::validate::Predicate::ALL;
        [
            Predicate::Known(p[0]),
            Predicate::Known(p[1]),
            Predicate::Known(p[2]),
            Predicate::Known(p[3]),
            Predicate::Known(p[4]),
            Predicate::Known(p[5]),
            Predicate::Known(p[6]),
            Predicate::Known(p[7]),
        ]
    };

    pub fn name(&self) -> &str {
        match self {
            Predicate::Known(p) => p.name(),
            Predicate::Unknown(s) => s,
        }
    }

    pub fn from_name(s: &str) -> Predicate {
        tpb_core::validate::Predicate::from_name(s)
            .map_or_else(|| Predicate::Unknown(s.to_string()), Predicate::Known)
    }

    /// Its position in [`Predicate::KNOWN`] (its `Copy` form); [`Predicate::known`] inverts it.
    #[inline]
    pub fn known_index(&self) -> Option<u8> {
        match self {
            Predicate::Known(p) => Some(*p as u8),
            Predicate::Unknown(_) => None,
        }
    }

    #[inline]
    pub fn known(i: u8) -> Option<Predicate> {
        let all = tpb_core::validate::Predicate::ALL;
        all.get(usize::from(i)).map(|&p| Predicate::Known(p))
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Predicate::Unknown(_))
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Validator result: `None` = valid, `Some(p)` = the first failing predicate.
pub type Verdict = Option<Predicate>;

pub fn verdict_name(v: &Verdict) -> &str {
    v.as_ref().map_or("valid", Predicate::name)
}

/// A reason or field name reported by a subject.
pub type Name = Reported<&'static str>;

impl Name {
    pub fn as_str(&self) -> &str {
        match self {
            Name::Known(s) => s,
            Name::Unknown(s) => s,
        }
    }

    /// A foreign name: `Known` if it is one of `vocabulary`, else `Unknown`.
    pub fn foreign(s: &str, vocabulary: &[&'static str]) -> Name {
        vocabulary
            .iter()
            .find(|v| **v == s)
            .map_or_else(|| Name::Unknown(s.to_string()), |v| Name::Known(v))
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        matches!(self, Name::Known(a) if *a == other)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub use tpb_core::FieldValue as Value;

/// Borrowed from an in-process subject's tables, owned when it came over a wire.
pub type FieldName = std::borrow::Cow<'static, str>;

/// A decoded bundle: opcode, SPEC §5.2 mnemonic and fields in SPEC §5.2 order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decoded {
    pub opcode: u8,
    pub mnemonic: FieldName,
    pub fields: Vec<(FieldName, Value)>,
}

impl Decoded {
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

/// A decode failure (SPEC §5.1): the field (or predicate) name and the offending byte's offset.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeFail {
    pub field: Name,
    pub offset: usize,
}

impl DecodeFail {
    /// SPEC §5.1 equivalence: same field, and same offset when field == "reserved".
    pub fn same_as(&self, other: &DecodeFail) -> bool {
        self.field == other.field
            && (self.field.as_str() != "reserved" || self.offset == other.offset)
    }
}

impl fmt::Display for DecodeFail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset 0x{:02X}", self.field, self.offset)
    }
}

/// The bundle, or the first bad field's name.
pub type EncodeResult = Result<[u8; 64], Name>;

/// One item of a parsed bundle stream (SPEC §5.3), by bundle index: a custom-op group (its
/// 0x85, then its output 0x86 and `n_args` argument 0x86s), or any other bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamSummary {
    Group { header_index: usize, n_args: usize },
    Other { index: usize, opcode: u8 },
}

/// A stream-parser error (SPEC §5.3, DL-12) and the bundle index it is reported at (for
/// `trailing_bytes`: the stream length in bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamFail {
    pub name: Name,
    pub index: usize,
}

impl StreamFail {
    /// An in-process parser's failure `name` at bundle `index`, or at the end
    /// of the `len`-byte stream when it names no bundle (`trailing_bytes`).
    pub fn at(name: &'static str, index: Option<usize>, len: usize) -> StreamFail {
        StreamFail {
            name: Name::Known(name),
            index: index.unwrap_or(len),
        }
    }
}

impl fmt::Display for StreamFail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.name, self.index)
    }
}

pub type StreamResult = Result<Vec<StreamSummary>, StreamFail>;

/// One item of a bundle stream with 0xD9 + 0xDA pairing (SPEC §5.3 "Bundle stream", DL-12):
/// its first bundle index, its bundle count, and `pair`, `single` or `group`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BundleSpan {
    pub start: usize,
    pub count: usize,
    pub what: &'static str,
}

pub type BundleStreamResult = Result<Vec<BundleSpan>, StreamFail>;

/// Which CUSTOM_OP validator (SPEC §3 header 0x85 / §4 payload 0x86).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Validator {
    Header,
    Payload,
}

impl Validator {
    pub fn op(self) -> &'static str {
        match self {
            Validator::Header => "validate_header",
            Validator::Payload => "validate_payload",
        }
    }
}

/// Declares [`LutTable`] from one row per SPEC §6 table: variant, the name external subjects
/// see (`tpb-subject/1` `lut` op, `TPB_LUT_<NAME>` in include/tpb_subject.h), its
/// [`crate::targets::TARGETS`] row's name, core's reading and the oracle's. Everything else
/// about a table derives from here.
macro_rules! lut_tables {
    ($($(#[$doc:meta])* $v:ident $name:literal $target:literal $core:expr, $oracle:expr;)*) => {
        /// A lookup table of SPEC §6. The declaration order is the bit order of
        /// `TPB_LUT_*` in include/tpb_subject.h (bit `t as u32`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum LutTable { $($(#[$doc])* $v,)* }

        impl LutTable {
            pub const ALL: [LutTable; [$($name),*].len()] = [$(LutTable::$v),*];

            pub const fn name(self) -> &'static str {
                match self { $(LutTable::$v => $name,)* }
            }

            /// `lut:<name>`.
            pub const fn capability_name(self) -> &'static str {
                match self { $(LutTable::$v => concat!("lut:", $name),)* }
            }

            pub const fn target_name(self) -> &'static str {
                match self { $(LutTable::$v => $target,)* }
            }

            /// Core's answer: the wire byte, or its SPEC error class name.
            #[inline]
            pub fn core(self, n: u32) -> Result<u8, &'static str> {
                match self { $(LutTable::$v => ($core)(n).map_err(|e| e.name()),)* }
            }

            /// The oracle's answer, as [`LutTable::core`].
            #[inline]
            pub fn oracle(self, n: u32) -> Result<u8, &'static str> {
                match self { $(LutTable::$v => ($oracle)(n).map_err(|e| e.name()),)* }
            }
        }
    };
}

use tpb_core::lut;
use tpb_oracle::lut as o;

lut_tables! {
    /// §6.1 CollectiveKind ordinal → wire byte.
    CollectiveKind "collective_kind" "collective_lut" lut::collective_kind_to_wire, o::collective_wire;
    /// §6.2 AluOpType ordinal → wire byte.
    AluOp "alu_op" "alu_lut" lut::alu_op_to_wire, o::alu_wire;
    /// §6.2 CCE subset: AluOpType ordinal → wire byte, shipped ops only.
    CceOp "cce_op" "cce_lut" lut::cce_op_to_wire, o::cce_wire;
    /// §6.3 AluOpType ordinal → DgeComputeOp value.
    Dge "dge" "dge_lut" lut::alu_op_to_dge, o::dge_op;
    /// §6.4 Dtype ordinal → wire tag, pre-v4 column.
    Dtype "dtype" "dtype_lut"
        |n| lut::dtype_to_wire(n, lut::DtypeColumn::PreV4), |n| o::dtype_wire(n, false);
    /// §6.4 Dtype ordinal → wire tag, v4 column.
    DtypeV4 "dtype_v4" "dtype_v4_lut"
        |n| lut::dtype_to_wire(n, lut::DtypeColumn::V4), |n| o::dtype_wire(n, true);
    /// §6.5 BIR wait mode → wire byte (the table; 0 → 0x07).
    WaitMode "wait_mode" "wait_mode_lut" lut::wait_mode_lut, o::wait_mode_lut;
    /// §6.5 BIR update mode → wire byte (the table `11 15 17 13 14 19`).
    UpdateMode "update_mode" "update_mode_lut" lut::update_mode_lut, o::update_mode_lut;
}

impl LutTable {
    pub fn from_name(s: &str) -> Option<LutTable> {
        LutTable::ALL.into_iter().find(|t| t.name() == s)
    }

    /// Its `TPB_LUT_*` bit (include/tpb_subject.h).
    pub const fn abi_bit(self) -> u32 {
        1 << self as u32
    }
}

/// The wire byte, or the SPEC error class name (e.g. `out_of_range`, `not_shipped`).
pub type LutResult = Result<u8, Name>;

/// Passes, or the first failing check.
pub type GateResult = Result<(), Name>;

pub use tpb_core::ir::Route;

/// What an IR query answers: a gate result, or (query `route`) a route.
#[derive(Clone, Debug, PartialEq)]
pub enum IrAnswer {
    Gate(GateResult),
    Route(Route),
}

/// The name of an IR memory-space ordinal of [`IrQuery::CheckCustomOp`] (SPEC §7, D-11):
/// 0 SBUF (state buffer), 1 HBM (device memory), 2 PSUM, any other `Other`.
pub fn mem_name(m: u8) -> &'static str {
    ["SBUF", "HBM", "PSUM"]
        .get(usize::from(m))
        .map_or("Other", |n| n)
}

/// The name of an IR `Generation` ordinal of [`IrQuery::CheckCustomOp`] (the compiler's
/// target-architecture enum, SPEC §7, D-11; not the wire generation, that is
/// [`crate::generation::Generation`]): 0 Tonga, 1 Sunda, 2 Cayman, 3 (and above) Mariana.
pub fn ir_arch_name(a: u8) -> &'static str {
    ["Tonga", "Sunda", "Cayman"]
        .get(usize::from(a))
        .map_or("Mariana", |n| n)
}

/// One SPEC §7 IR query. IR enums are harness ordinals ([`mem_name`], [`ir_arch_name`]); a
/// subject given an ordinal above 3 must reject it as a bad memory space / arch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IrQuery {
    /// checkCustomOp: memory spaces of the arguments and outputs, arch.
    CheckCustomOp {
        args: Vec<u8>,
        outputs: Vec<u8>,
        arch: u8,
    },
    /// isCCHavingSBScratchPad.
    SbScratchpad(ScratchPadQuery),
    CcDim(u32),
    /// GetGlobalRankId output storage kind.
    RankIdOutput(u32),
    /// GPSIMDSB2SB cores_per_lnc.
    Lnc(u32),
    /// SB2SB-vs-DMA route, bytes per partition.
    Route(u64),
}

pub use tpb_core::ir::ScratchPadQuery;

impl IrQuery {
    /// The gate's name (the signature key).
    pub fn gate(&self) -> &'static str {
        match self {
            IrQuery::CheckCustomOp { .. } => "check_custom_op",
            IrQuery::SbScratchpad(_) => "sb_scratchpad",
            IrQuery::CcDim(_) => "cc_dim",
            IrQuery::RankIdOutput(_) => "rank_id_output",
            IrQuery::Lnc(_) => "lnc",
            IrQuery::Route(_) => "route",
        }
    }
}

impl fmt::Display for IrQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IrQuery::CheckCustomOp {
                args,
                outputs,
                arch,
            } => {
                let a: Vec<_> = args.iter().map(|&m| mem_name(m)).collect();
                let o: Vec<_> = outputs.iter().map(|&m| mem_name(m)).collect();
                write!(
                    f,
                    "check_custom_op(args={a:?}, outputs={o:?}, arch={})",
                    ir_arch_name(*arch)
                )
            }
            IrQuery::SbScratchpad(q) => write!(
                f,
                "sb_scratchpad(kind={:#x}, subkind={}, sb_arg_global={}, n_args={}, \
                 n_outputs={}, n_scratch={})",
                q.kind, q.subkind, q.sb_arg_global, q.n_args, q.n_outputs, q.n_scratch
            ),
            IrQuery::CcDim(d) => write!(f, "cc_dim({d})"),
            IrQuery::RankIdOutput(k) => write!(f, "rank_id_output({k})"),
            IrQuery::Lnc(n) => write!(f, "lnc({n})"),
            IrQuery::Route(n) => write!(f, "route({n})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_never_match() {
        let u = Predicate::from_name("custom_op_header_reserved_zer0");
        assert!(u.is_unknown());
        assert_ne!(u, u.clone());
        assert_ne!(
            Some(u),
            Some(Predicate::Known(
                tpb_core::validate::Predicate::CustomOpHeaderReservedZero
            ))
        );
        for p in Predicate::KNOWN {
            assert_eq!(Predicate::from_name(p.name()), p);
        }
        assert_eq!(Predicate::from_name("x").known_index(), None);
        let names: Vec<String> = (0..=8u8)
            .map(|i| Predicate::known(i).map_or("-".into(), |p| p.name().to_string()))
            .collect();
        let known: Vec<&str> = Predicate::KNOWN.iter().map(Predicate::name).collect();
        assert_eq!(names[..8], known[..], "known(i) is KNOWN[i]");
        assert_eq!(names[8], "-");
        for (i, p) in Predicate::KNOWN.iter().enumerate() {
            assert_eq!(p.known_index(), u8::try_from(i).ok(), "{p}");
        }
        let n = Name::foreign("reserved", &["opcode"]);
        assert_ne!(n, n.clone());
        assert_eq!(Name::foreign("opcode", &["opcode"]), Name::Known("opcode"));
    }
}
