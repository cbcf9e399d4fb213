//! The differential engine: run one input through two [`Subject`]s and say
//! whether they agree.
//!
//! # Targets and input mapping
//!
//! Every [`Target`] takes raw `&[u8]` (fuzz-friendly). The input→case mapping is
//! deterministic and defined here:
//!
//! | target | case derived from the input |
//! |---|---|
//! | `validate_header`, `validate_payload`, `decode_any`, `roundtrip` | the first 64 bytes, zero-padded ([`bundle_from_input`]) |
//! | `custom_op_group` | a small stream program → a byte stream ([`stream_from_input`]) |
//! | `collective_lut`, `alu_lut`, `dge_lut`, `dtype_lut` | `u32` little-endian of the first ≤ 4 bytes, zero-padded ([`ordinal_from_input`]) |
//! | `ir_gates` | one IR query ([`IrQuery::from_input`]) |
//!
//! `alu_lut` also compares the CCE subset (`cce_lut`) and both wait-mode tables
//! (`wait_mode_lut`, `wait_mode_wire`) for the same ordinal; `dtype_lut`
//! compares both the pre-v4 and the v4 column.
//!
//! # Classes
//!
//! The *left* subject is the implementation under test (core), the *right* one
//! the reference (oracle); classes are named from the left's perspective:
//!
//! - [`Class::OverAccept`]: left accepts (valid / `Ok`), right rejects;
//! - [`Class::UnderAccept`]: left rejects, right accepts;
//! - [`Class::SameVerdictDifferentReason`]: both reject, with different
//!   predicate / field / offset / error names;
//! - [`Class::DifferentOutput`]: both accept but the decoded fields, encoded
//!   bytes, wire bytes or stream summaries differ, or (target `roundtrip`) an
//!   `encode(decode(b)) == b` invariant fails on both sides;
//! - [`Class::Panic`]: a subject panicked.
//!
//! # Panics in subjects
//!
//! Each subject call runs under `catch_unwind(AssertUnwindSafe(..))`; a panic is
//! reported as a [`Class::Panic`] divergence, never skipped. The process panic
//! hook is left alone (so the default hook still prints the message, and under
//! libFuzzer — whose hook aborts — a subject panic aborts the run: fail closed).

use crate::subject::{
    self, hex, CoreSubject, DecodeFail, Decoded, GateResult, LutResult, OracleSubject, StreamFail,
    StreamSummary, Subject, Verdict,
};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;

/// A differential target. Names (`Target::name`) are stable: fuzz targets,
/// reports and the gate use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// SPEC §3 header validator verdicts.
    ValidateHeader,
    /// SPEC §4 payload validator verdicts.
    ValidatePayload,
    /// SPEC §5.1 decode of any bundle: same fields, or same failure.
    DecodeAny,
    /// SPEC §5.1 `encode(decode(b)) == b`, self and cross.
    Roundtrip,
    /// SPEC §5.3 stream parser.
    CustomOpGroup,
    /// SPEC §6.1 CollectiveKind LUT.
    CollectiveLut,
    /// SPEC §6.2 AluOp LUT, the CCE subset and the §6.5 wait-mode LUTs.
    AluLut,
    /// SPEC §6.3 DgeComputeOp LUT.
    DgeLut,
    /// SPEC §6.4 dtype LUT, both columns.
    DtypeLut,
    /// SPEC §7 IR gates.
    IrGates,
}

impl Target {
    /// Every target, in a stable order.
    pub const ALL: [Target; 10] = [
        Target::ValidateHeader,
        Target::ValidatePayload,
        Target::DecodeAny,
        Target::Roundtrip,
        Target::CustomOpGroup,
        Target::CollectiveLut,
        Target::AluLut,
        Target::DgeLut,
        Target::DtypeLut,
        Target::IrGates,
    ];

    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Target::ValidateHeader => "validate_header",
            Target::ValidatePayload => "validate_payload",
            Target::DecodeAny => "decode_any",
            Target::Roundtrip => "roundtrip",
            Target::CustomOpGroup => "custom_op_group",
            Target::CollectiveLut => "collective_lut",
            Target::AluLut => "alu_lut",
            Target::DgeLut => "dge_lut",
            Target::DtypeLut => "dtype_lut",
            Target::IrGates => "ir_gates",
        }
    }

    /// Looks a target up by its name.
    pub fn from_name(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == s)
    }

    /// True for the targets whose case is one 64-byte bundle.
    pub fn is_bundle(self) -> bool {
        matches!(
            self,
            Target::ValidateHeader
                | Target::ValidatePayload
                | Target::DecodeAny
                | Target::Roundtrip
        )
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error of [`Target::from_str`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownTarget(pub String);

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown target `{}` (expected one of:", self.0)?;
        for t in Target::ALL {
            write!(f, " {}", t.name())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownTarget {}

impl FromStr for Target {
    type Err = UnknownTarget;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Target::from_name(s).ok_or_else(|| UnknownTarget(s.to_string()))
    }
}

/// Divergence class, named from the left (core) subject's perspective.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Left accepts, right rejects.
    OverAccept,
    /// Left rejects, right accepts.
    UnderAccept,
    /// Both reject, for different reasons.
    SameVerdictDifferentReason,
    /// Both accept, different outputs (or a shared invariant failure).
    DifferentOutput,
    /// A subject panicked.
    Panic,
}

impl Class {
    /// Stable name (the variant name).
    pub fn name(self) -> &'static str {
        match self {
            Class::OverAccept => "OverAccept",
            Class::UnderAccept => "UnderAccept",
            Class::SameVerdictDifferentReason => "SameVerdictDifferentReason",
            Class::DifferentOutput => "DifferentOutput",
            Class::Panic => "Panic",
        }
    }

    fn from_accepts(left_ok: bool, right_ok: bool) -> Class {
        match (left_ok, right_ok) {
            (true, false) => Class::OverAccept,
            (false, true) => Class::UnderAccept,
            (false, false) => Class::SameVerdictDifferentReason,
            (true, true) => Class::DifferentOutput,
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Deduplication key of a divergence: (predicate-or-field, left verdict,
/// right verdict). Inputs are not part of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Signature {
    /// Predicate, field, LUT or gate name (e.g. `custom_op_header_reserved_zero`,
    /// `reserved`, `alu_lut`, `roundtrip.self`).
    pub key: String,
    /// The left subject's short verdict (`valid`, a predicate, `ok`, `err:<name>`, …).
    pub left: String,
    /// The right subject's short verdict.
    pub right: String,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} vs {}", self.key, self.left, self.right)
    }
}

/// One disagreement between the two subjects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The target that found it.
    pub target: Target,
    /// The raw input (for bundle targets: the 64-byte bundle).
    pub input: Vec<u8>,
    /// The case derived from the input, human-readable (e.g. `ordinal 24`).
    pub case: String,
    /// Name of the left subject (e.g. `core`).
    pub left_name: &'static str,
    /// Name of the right subject (e.g. `oracle`).
    pub right_name: &'static str,
    /// The left subject's full result, human-readable.
    pub left: String,
    /// The right subject's full result, human-readable.
    pub right: String,
    /// Deduplication signature.
    pub signature: Signature,
    /// Class.
    pub class: Class,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "divergence in target `{}` [{}]", self.target, self.class)?;
        writeln!(
            f,
            "  signature: {} — {}={} {}={}",
            self.signature.key,
            self.left_name,
            self.signature.left,
            self.right_name,
            self.signature.right
        )?;
        writeln!(
            f,
            "  input ({} bytes): {}",
            self.input.len(),
            hex(&self.input)
        )?;
        if !self.case.is_empty() {
            writeln!(f, "  case: {}", self.case)?;
        }
        writeln!(f, "  {}: {}", self.left_name, self.left)?;
        write!(f, "  {}: {}", self.right_name, self.right)?;
        if self.class == Class::DifferentOutput && self.left.contains('\n') {
            let diff = similar::TextDiff::from_lines(&self.left, &self.right);
            write!(
                f,
                "\n  diff ({} → {}):\n{}",
                self.left_name,
                self.right_name,
                diff.unified_diff().context_radius(2)
            )?;
        }
        Ok(())
    }
}

/// Result of one comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Both subjects said the same thing.
    Agree,
    /// They did not.
    Divergence(Box<Divergence>),
}

impl Outcome {
    /// True for [`Outcome::Agree`].
    pub fn is_agree(&self) -> bool {
        matches!(self, Outcome::Agree)
    }

    /// The divergence, if any.
    pub fn divergence(&self) -> Option<&Divergence> {
        match self {
            Outcome::Agree => None,
            Outcome::Divergence(d) => Some(d),
        }
    }
}

// ---------------------------------------------------------------------------
// Input mapping
// ---------------------------------------------------------------------------

/// The first 64 bytes of `input`, zero-padded.
pub fn bundle_from_input(input: &[u8]) -> [u8; 64] {
    let mut b = [0u8; 64];
    let n = input.len().min(64);
    b[..n].copy_from_slice(&input[..n]);
    b
}

/// `u32` little-endian of the first ≤ 4 bytes of `input`, zero-padded.
pub fn ordinal_from_input(input: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    let n = input.len().min(4);
    a[..n].copy_from_slice(&input[..n]);
    u32::from_le_bytes(a)
}

/// A byte reader that yields zeros past the end.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, pos: 0 }
    }
    fn u8(&mut self) -> u8 {
        let v = self.b.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v
    }
    fn u32(&mut self) -> u32 {
        let mut a = [0u8; 4];
        for x in &mut a {
            *x = self.u8();
        }
        u32::from_le_bytes(a)
    }
    fn u64(&mut self) -> u64 {
        let mut a = [0u8; 8];
        for x in &mut a {
            *x = self.u8();
        }
        u64::from_le_bytes(a)
    }
}

/// A canonical valid 0x85 header announcing `n_args` arguments.
pub fn group_header(n_args: u8, function_id: u8) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = 0x85;
    b[1] = 0x10;
    let np = u16::from(n_args) + 2;
    b[0x0C..0x0E].copy_from_slice(&np.to_le_bytes());
    b[0x0E] = function_id;
    b[0x0F] = n_args;
    b
}

/// A canonical valid 0x86 payload whose 48-byte AP is filled with `fill`.
pub fn group_payload(fill: u8) -> [u8; 64] {
    let mut b = [fill; 64];
    b[0] = 0x86;
    b[1] = 0x10;
    b[2..0x0F].fill(0);
    b[0x0F] = 0x01;
    b
}

fn flip(mut b: [u8; 64], bit: usize) -> [u8; 64] {
    let bit = bit % 512;
    b[bit / 8] ^= 1 << (bit % 8);
    b
}

/// Maps a raw input to a bundle stream for target `custom_op_group`.
///
/// byte 0 = flags (bit 0: append `(flags >> 1) % 63 + 1` trailing bytes);
/// then pairs `(op, p)`, at most 48, each appending one bundle:
///
/// | `op % 8` | bundle |
/// |---|---|
/// | 0 | valid header, `num_arguments = p % 4`, `function_id = p` |
/// | 1 | header with `num_payloads ≠ num_arguments + 2` |
/// | 2, 3 | valid payload, AP filled with `p` |
/// | 4 | other bundle `[p, 0x10, 0, …]` |
/// | 5 | valid header (`p % 4` args) with bit `(2p + (op>>3 & 1)) % 512` flipped |
/// | 6 | valid payload with bit `(2p + (op>>3 & 1)) % 512` flipped |
/// | 7 | header with a scratch descriptor: `byte[0x10]=p&1`, `dword[0x18]=p&2`, `byte[0x1C]=p&4`, `dword[0x14]=p&8` |
pub fn stream_from_input(input: &[u8]) -> Vec<u8> {
    let flags = input.first().copied().unwrap_or(0);
    let rest = input.get(1..).unwrap_or(&[]);
    let mut out = Vec::with_capacity(rest.len() / 2 * 64 + 64);
    for pair in rest.chunks(2).take(48) {
        let op = pair[0];
        let p = pair.get(1).copied().unwrap_or(0);
        let bit = usize::from(p) * 2 + usize::from((op >> 3) & 1);
        let b = match op % 8 {
            0 => group_header(p % 4, p),
            1 => {
                let mut h = group_header(p % 4, 0);
                let good = u16::from(p % 4) + 2;
                let np = if p & 0x40 != 0 {
                    good - 1 - u16::from((p >> 2) % 2)
                } else {
                    good + 1 + u16::from((p >> 2) % 3)
                };
                h[0x0C..0x0E].copy_from_slice(&np.to_le_bytes());
                h
            }
            2 | 3 => group_payload(p),
            4 => {
                let mut o = [0u8; 64];
                o[0] = p;
                o[1] = 0x10;
                o
            }
            5 => flip(group_header(p % 4, 0), bit),
            6 => flip(group_payload(0), bit),
            _ => {
                let mut h = group_header(0, 0);
                h[0x10] = p & 1;
                h[0x18] = (p >> 1) & 1;
                h[0x1C] = (p >> 2) & 1;
                h[0x14] = (p >> 3) & 1;
                h
            }
        };
        out.extend_from_slice(&b);
    }
    if flags & 1 != 0 {
        let n = usize::from(flags >> 1) % 63 + 1;
        out.extend(std::iter::repeat_n(0x86, n));
    }
    out
}

/// One IR-gate query (SPEC §7). Memory-space / arch values are the ordinals of
/// [`subject::mem`] / [`subject::arch`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IrQuery {
    /// checkCustomOp.
    CheckCustomOp {
        /// Memory space of each argument.
        args: Vec<u8>,
        /// Memory space of each output.
        outputs: Vec<u8>,
        /// Target arch.
        arch: u8,
    },
    /// isCCHavingSBScratchPad.
    SbScratchpad {
        /// IR instruction kind (0x30 = CustomOp).
        kind: u32,
        /// Subkind.
        subkind: u32,
        /// isSBArgGlobalCCOp.
        sb_arg_global: bool,
        /// Argument count.
        n_args: u64,
        /// Output count.
        n_outputs: u64,
        /// Scratch MemoryLocation count.
        n_scratch: u64,
    },
    /// cc_dim.
    CcDim(u32),
    /// GetGlobalRankId output storage kind.
    RankIdOutput(u32),
    /// GPSIMDSB2SB cores_per_lnc.
    Lnc(u32),
    /// SB2SB-vs-DMA route, bytes per partition.
    Route(u64),
}

impl IrQuery {
    /// Deterministic mapping from raw bytes (target `ir_gates`):
    /// `b[0] % 6` selects the gate, the rest are its parameters (zeros past the end).
    ///
    /// - 0 checkCustomOp: `n_args = r % 5`, `n_outputs = r % 4`, `arch = r % 4`,
    ///   then one byte `% 4` per argument then per output memory space;
    /// - 1 isCCHavingSBScratchPad: flags byte `f`; `kind = 0x30` if `f & 1` else
    ///   the next byte; `subkind` = next byte `% 8` (or the next u32 LE when `f & 2`);
    ///   `sb_arg_global = f & 4`; `n_args`, `n_outputs`, `n_scratch` = one byte each,
    ///   or the next u64 LE when `f & 8` / `f & 16` / `f & 32`;
    /// - 2 cc_dim, 3 rank_id_output, 4 lnc: next u32 LE;
    /// - 5 route: next u64 LE.
    pub fn from_input(input: &[u8]) -> IrQuery {
        let mut r = Reader::new(input);
        match r.u8() % 6 {
            0 => {
                let na = r.u8() % 5;
                let no = r.u8() % 4;
                let arch = r.u8() % 4;
                let args = (0..na).map(|_| r.u8() % 4).collect();
                let outputs = (0..no).map(|_| r.u8() % 4).collect();
                IrQuery::CheckCustomOp {
                    args,
                    outputs,
                    arch,
                }
            }
            1 => {
                let f = r.u8();
                let kind = if f & 1 != 0 { 0x30 } else { u32::from(r.u8()) };
                let subkind = if f & 2 != 0 {
                    r.u32()
                } else {
                    u32::from(r.u8() % 8)
                };
                let sb_arg_global = f & 4 != 0;
                let mut count = |wide: bool| {
                    if wide {
                        r.u64()
                    } else {
                        u64::from(r.u8())
                    }
                };
                let n_args = count(f & 8 != 0);
                let n_outputs = count(f & 16 != 0);
                let n_scratch = count(f & 32 != 0);
                IrQuery::SbScratchpad {
                    kind,
                    subkind,
                    sb_arg_global,
                    n_args,
                    n_outputs,
                    n_scratch,
                }
            }
            2 => IrQuery::CcDim(r.u32()),
            3 => IrQuery::RankIdOutput(r.u32()),
            4 => IrQuery::Lnc(r.u32()),
            _ => IrQuery::Route(r.u64()),
        }
    }

    /// The gate's name (used as the signature key).
    pub fn gate(&self) -> &'static str {
        match self {
            IrQuery::CheckCustomOp { .. } => "check_custom_op",
            IrQuery::SbScratchpad { .. } => "sb_scratchpad",
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
                let a: Vec<_> = args.iter().map(|&m| subject::mem::name(m)).collect();
                let o: Vec<_> = outputs.iter().map(|&m| subject::mem::name(m)).collect();
                write!(
                    f,
                    "check_custom_op(args={a:?}, outputs={o:?}, arch={})",
                    subject::arch::name(*arch)
                )
            }
            IrQuery::SbScratchpad {
                kind,
                subkind,
                sb_arg_global,
                n_args,
                n_outputs,
                n_scratch,
            } => write!(
                f,
                "sb_scratchpad(kind={kind:#x}, subkind={subkind}, sb_arg_global={sb_arg_global}, \
                 n_args={n_args}, n_outputs={n_outputs}, n_scratch={n_scratch})"
            ),
            IrQuery::CcDim(d) => write!(f, "cc_dim({d})"),
            IrQuery::RankIdOutput(k) => write!(f, "rank_id_output({k})"),
            IrQuery::Lnc(n) => write!(f, "lnc({n})"),
            IrQuery::Route(n) => write!(f, "route({n})"),
        }
    }
}

// ---------------------------------------------------------------------------
// Rendering helpers
// ---------------------------------------------------------------------------

fn verdict_str(v: Verdict) -> &'static str {
    v.unwrap_or("valid")
}

fn lut_str(r: &LutResult) -> String {
    match r {
        Ok(b) => format!("0x{b:02X}"),
        Err(e) => format!("err:{e}"),
    }
}

fn gate_str(r: &GateResult) -> String {
    match r {
        Ok(()) => "ok".to_string(),
        Err(e) => format!("err:{e}"),
    }
}

fn fail_key(f: &DecodeFail) -> String {
    if f.field == "reserved" {
        format!("reserved@0x{:02X}", f.offset)
    } else {
        f.field.clone()
    }
}

fn decoded_long(d: &Decoded) -> String {
    let mut s = format!("Ok {} (0x{:02X})\n", d.mnemonic, d.opcode);
    for (n, v) in &d.fields {
        s.push_str(&format!("    {n} = {v}\n"));
    }
    s
}

fn decode_long(r: &Result<Decoded, DecodeFail>) -> String {
    match r {
        Ok(d) => decoded_long(d),
        Err(e) => format!("Err({e})"),
    }
}

fn encode_long(r: &Result<[u8; 64], String>) -> String {
    match r {
        Ok(b) => format!("Ok {}", hex(b)),
        Err(e) => format!("Err(field {e})"),
    }
}

fn stream_long(r: &Result<Vec<StreamSummary>, StreamFail>) -> String {
    match r {
        Ok(v) => {
            let mut s = String::from("Ok [\n");
            for it in v {
                s.push_str(&format!("    {it:?}\n"));
            }
            s.push(']');
            s
        }
        Err(e) => format!("Err({e})"),
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    }
}

/// Runs `f`, turning a panic into `Err(message)`.
fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(&*p))
}

// ---------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------

/// A pair of subjects. `left` is the implementation under test, `right` the
/// reference; [`Class`] names are from the left's perspective.
#[derive(Clone, Copy, Debug, Default)]
pub struct Engine<L = CoreSubject, R = OracleSubject> {
    /// Implementation under test.
    pub left: L,
    /// Reference.
    pub right: R,
}

impl Engine<CoreSubject, OracleSubject> {
    /// core (left) vs oracle (right).
    pub fn new() -> Self {
        Engine {
            left: CoreSubject,
            right: OracleSubject,
        }
    }
}

/// Builds divergences for one comparison.
struct Ctx<'a, L, R> {
    e: &'a Engine<L, R>,
    target: Target,
    input: &'a [u8],
    case: &'a dyn Fn() -> String,
}

impl<L: Subject, R: Subject> Ctx<'_, L, R> {
    fn div(
        &self,
        class: Class,
        key: impl Into<String>,
        ls: impl Into<String>,
        rs: impl Into<String>,
        left: String,
        right: String,
    ) -> Outcome {
        Outcome::Divergence(Box::new(Divergence {
            target: self.target,
            input: self.input.to_vec(),
            case: (self.case)(),
            left_name: self.e.left.name(),
            right_name: self.e.right.name(),
            left,
            right,
            signature: Signature {
                key: key.into(),
                left: ls.into(),
                right: rs.into(),
            },
            class,
        }))
    }

    /// Reports a panic on either side (`op` names the operation).
    fn panic<A: fmt::Debug, B: fmt::Debug>(
        &self,
        op: &str,
        l: &Result<A, String>,
        r: &Result<B, String>,
    ) -> Outcome {
        let who = match (l.is_err(), r.is_err()) {
            (true, true) => "both",
            (true, false) => self.e.left.name(),
            _ => self.e.right.name(),
        };
        let show = |x: Result<String, &String>| match x {
            Ok(s) => s,
            Err(m) => format!("PANIC: {m}"),
        };
        let ls = show(l.as_ref().map(|v| format!("{v:?}")));
        let rs = show(r.as_ref().map(|v| format!("{v:?}")));
        self.div(
            Class::Panic,
            format!("{op}:panic"),
            if l.is_err() { "panic" } else { "no-panic" },
            if r.is_err() { "panic" } else { "no-panic" },
            format!("{ls}  [{op}; panicked: {who}]"),
            rs,
        )
    }
}

macro_rules! both {
    ($ctx:expr, $op:expr, $l:expr, $r:expr) => {{
        let l = guard(|| $l);
        let r = guard(|| $r);
        match (l, r) {
            (Ok(l), Ok(r)) => (l, r),
            (l, r) => return $ctx.panic($op, &l, &r),
        }
    }};
}

impl<L: Subject, R: Subject> Engine<L, R> {
    /// A pair of arbitrary subjects.
    pub fn with(left: L, right: R) -> Self {
        Engine { left, right }
    }

    /// Compares the two subjects on `target` with the raw `input` (mapping in
    /// the module docs).
    pub fn compare(&self, target: Target, input: &[u8]) -> Outcome {
        match target {
            Target::ValidateHeader
            | Target::ValidatePayload
            | Target::DecodeAny
            | Target::Roundtrip => {
                let b = bundle_from_input(input);
                self.bundle_inner(target, &b, input)
            }
            Target::CustomOpGroup => {
                let s = stream_from_input(input);
                self.stream_inner(target, &s, input, true)
            }
            Target::CollectiveLut | Target::AluLut | Target::DgeLut | Target::DtypeLut => {
                self.lut_inner(target, ordinal_from_input(input), input)
            }
            Target::IrGates => {
                let q = IrQuery::from_input(input);
                self.ir_inner(&q, input)
            }
        }
    }

    /// Typed entry for generator-produced bundles. For the four bundle targets
    /// the bundle is the case; for the others it is the raw input of
    /// [`Engine::compare`].
    pub fn compare_bundle(&self, target: Target, b: &[u8; 64]) -> Outcome {
        if target.is_bundle() {
            self.bundle_inner(target, b, b)
        } else {
            self.compare(target, b)
        }
    }

    /// Typed entry: compares the stream parsers on a raw byte stream (no mapping;
    /// any length). Reported under target `custom_op_group`.
    pub fn compare_stream(&self, stream: &[u8]) -> Outcome {
        self.stream_inner(Target::CustomOpGroup, stream, stream, false)
    }

    /// Typed entry: compares a LUT target at one ordinal.
    /// `target` must be one of the four LUT targets (others: [`Engine::compare`]
    /// on the ordinal's LE bytes).
    pub fn compare_lut(&self, target: Target, ordinal: u32) -> Outcome {
        let bytes = ordinal.to_le_bytes();
        match target {
            Target::CollectiveLut | Target::AluLut | Target::DgeLut | Target::DtypeLut => {
                self.lut_inner(target, ordinal, &bytes)
            }
            _ => self.compare(target, &bytes),
        }
    }

    /// Typed entry: compares one IR query (reported under target `ir_gates`,
    /// with an empty input).
    pub fn compare_ir(&self, q: &IrQuery) -> Outcome {
        self.ir_inner(q, &[])
    }

    // -- bundle targets -----------------------------------------------------

    fn bundle_inner(&self, target: Target, b: &[u8; 64], input: &[u8]) -> Outcome {
        let case = || String::new();
        let ctx = Ctx {
            e: self,
            target,
            input: if input.len() == 64 { input } else { &b[..] },
            case: &case,
        };
        match target {
            Target::ValidateHeader => {
                let (l, r) = both!(
                    ctx,
                    "validate_header",
                    self.left.validate_header(b),
                    self.right.validate_header(b)
                );
                self.verdicts(&ctx, l, r)
            }
            Target::ValidatePayload => {
                let (l, r) = both!(
                    ctx,
                    "validate_payload",
                    self.left.validate_payload(b),
                    self.right.validate_payload(b)
                );
                self.verdicts(&ctx, l, r)
            }
            Target::DecodeAny => {
                let (l, r) = both!(ctx, "decode", self.left.decode(b), self.right.decode(b));
                Self::decodes(&ctx, &l, &r)
            }
            _ => self.roundtrip(&ctx, b),
        }
    }

    fn verdicts(&self, ctx: &Ctx<'_, L, R>, l: Verdict, r: Verdict) -> Outcome {
        if l == r {
            return Outcome::Agree;
        }
        let class = Class::from_accepts(l.is_none(), r.is_none());
        let key = l.or(r).unwrap_or("valid");
        let (ls, rs) = (verdict_str(l), verdict_str(r));
        ctx.div(class, key, ls, rs, ls.to_string(), rs.to_string())
    }

    fn decodes(
        ctx: &Ctx<'_, L, R>,
        l: &Result<Decoded, DecodeFail>,
        r: &Result<Decoded, DecodeFail>,
    ) -> Outcome {
        match (l, r) {
            (Ok(a), Ok(b)) if a == b => Outcome::Agree,
            (Err(a), Err(b)) if a.same_as(b) => Outcome::Agree,
            (Ok(a), Ok(b)) => {
                let key = if a.opcode != b.opcode {
                    "opcode".to_string()
                } else if a.mnemonic != b.mnemonic {
                    "mnemonic".to_string()
                } else {
                    first_field_diff(&a.fields, &b.fields)
                };
                ctx.div(
                    Class::DifferentOutput,
                    key,
                    "ok",
                    "ok",
                    decoded_long(a),
                    decoded_long(b),
                )
            }
            (Ok(_), Err(e)) => ctx.div(
                Class::OverAccept,
                e.field.clone(),
                "ok",
                fail_key(e),
                decode_long(l),
                decode_long(r),
            ),
            (Err(e), Ok(_)) => ctx.div(
                Class::UnderAccept,
                e.field.clone(),
                fail_key(e),
                "ok",
                decode_long(l),
                decode_long(r),
            ),
            (Err(a), Err(b)) => ctx.div(
                Class::SameVerdictDifferentReason,
                a.field.clone(),
                fail_key(a),
                fail_key(b),
                decode_long(l),
                decode_long(r),
            ),
        }
    }

    fn roundtrip(&self, ctx: &Ctx<'_, L, R>, b: &[u8; 64]) -> Outcome {
        let (dl, dr) = both!(ctx, "decode", self.left.decode(b), self.right.decode(b));
        let (dl, dr) = match (&dl, &dr) {
            (Ok(a), Ok(c)) => (a, c),
            (Err(_), Err(_)) => return Outcome::Agree, // decode_any compares the failures
            _ => return Self::decodes(ctx, &dl, &dr),
        };
        // self: each subject re-encodes its own decode.
        let (el, er) = both!(
            ctx,
            "encode(self)",
            self.left.encode(dl.opcode, &dl.fields),
            self.right.encode(dr.opcode, &dr.fields)
        );
        if let Some(o) = Self::encodes(ctx, "roundtrip.self", b, &el, &er, dl, dr) {
            return o;
        }
        // cross: each subject encodes the other's decode.
        let (el, er) = both!(
            ctx,
            "encode(cross)",
            self.left.encode(dr.opcode, &dr.fields),
            self.right.encode(dl.opcode, &dl.fields)
        );
        Self::encodes(ctx, "roundtrip.cross", b, &el, &er, dr, dl).unwrap_or(Outcome::Agree)
    }

    /// Checks both encodes returned `b`. `fl`/`fr` are the field lists each side encoded.
    fn encodes(
        ctx: &Ctx<'_, L, R>,
        key: &str,
        b: &[u8; 64],
        el: &Result<[u8; 64], String>,
        er: &Result<[u8; 64], String>,
        fl: &Decoded,
        fr: &Decoded,
    ) -> Option<Outcome> {
        let st = |r: &Result<[u8; 64], String>| match r {
            Ok(x) if x == b => "ok".to_string(),
            Ok(_) => "other_bytes".to_string(),
            Err(f) => format!("err:{f}"),
        };
        let (sl, sr) = (st(el), st(er));
        if sl == "ok" && sr == "ok" {
            return None;
        }
        let class = match (el, er) {
            (Ok(_), Err(_)) => Class::OverAccept,
            (Err(_), Ok(_)) => Class::UnderAccept,
            (Err(a), Err(c)) if a != c => Class::SameVerdictDifferentReason,
            _ => Class::DifferentOutput,
        };
        let long = |r: &Result<[u8; 64], String>, d: &Decoded| {
            format!(
                "encode(…) = {}\n  expected    {}\n  fields: {}",
                encode_long(r),
                hex(b),
                d
            )
        };
        Some(ctx.div(
            class,
            format!("{key}@0x{:02X}", b[0]),
            sl,
            sr,
            long(el, fl),
            long(er, fr),
        ))
    }

    // -- stream ---------------------------------------------------------------

    fn stream_inner(&self, target: Target, s: &[u8], input: &[u8], mapped: bool) -> Outcome {
        let case = || {
            if mapped {
                format!("stream ({} bytes): {}", s.len(), hex(s))
            } else {
                String::new()
            }
        };
        let ctx = Ctx {
            e: self,
            target,
            input,
            case: &case,
        };
        let (l, r) = both!(
            ctx,
            "parse_stream",
            self.left.parse_stream(s),
            self.right.parse_stream(s)
        );
        if l == r {
            return Outcome::Agree;
        }
        let short = |x: &Result<Vec<StreamSummary>, StreamFail>| match x {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("err:{}", e.name),
        };
        let key = match (&l, &r) {
            (Err(e), _) | (Ok(_), Err(e)) => e.name.to_string(),
            (Ok(_), Ok(_)) => "summary".to_string(),
        };
        ctx.div(
            Class::from_accepts(l.is_ok(), r.is_ok()),
            key,
            short(&l),
            short(&r),
            stream_long(&l),
            stream_long(&r),
        )
    }

    // -- LUTs -----------------------------------------------------------------

    fn lut_inner(&self, target: Target, ord: u32, input: &[u8]) -> Outcome {
        let case = || format!("ordinal {ord} ({ord:#x})");
        let ctx = Ctx {
            e: self,
            target,
            input,
            case: &case,
        };
        let (l, r) = (&self.left, &self.right);
        match target {
            Target::CollectiveLut => {
                let (a, b) = both!(
                    ctx,
                    "collective_lut",
                    l.collective_lut(ord),
                    r.collective_lut(ord)
                );
                Self::lut_cmp(&ctx, "collective_lut", a, b)
            }
            Target::AluLut => {
                let (a, b) = both!(ctx, "alu_lut", l.alu_lut(ord), r.alu_lut(ord));
                let o = Self::lut_cmp(&ctx, "alu_lut", a, b);
                if !o.is_agree() {
                    return o;
                }
                let (a, b) = both!(ctx, "cce_lut", l.cce_lut(ord), r.cce_lut(ord));
                let o = Self::lut_cmp(&ctx, "cce_lut", a, b);
                if !o.is_agree() {
                    return o;
                }
                let (a, b) = both!(
                    ctx,
                    "wait_mode_lut",
                    l.wait_mode_lut(ord),
                    r.wait_mode_lut(ord)
                );
                let o = Self::lut_cmp(&ctx, "wait_mode_lut", a, b);
                if !o.is_agree() {
                    return o;
                }
                let (a, b) = both!(
                    ctx,
                    "wait_mode_wire",
                    l.wait_mode_wire(ord),
                    r.wait_mode_wire(ord)
                );
                Self::lut_cmp(&ctx, "wait_mode_wire", a, b)
            }
            Target::DgeLut => {
                let (a, b) = both!(ctx, "dge_lut", l.dge_lut(ord), r.dge_lut(ord));
                Self::lut_cmp(&ctx, "dge_lut", a, b)
            }
            _ => {
                let (a, b) = both!(
                    ctx,
                    "dtype_lut",
                    l.dtype_lut(ord, false),
                    r.dtype_lut(ord, false)
                );
                let o = Self::lut_cmp(&ctx, "dtype_lut.pre_v4", a, b);
                if !o.is_agree() {
                    return o;
                }
                let (a, b) = both!(
                    ctx,
                    "dtype_lut",
                    l.dtype_lut(ord, true),
                    r.dtype_lut(ord, true)
                );
                Self::lut_cmp(&ctx, "dtype_lut.v4", a, b)
            }
        }
    }

    fn lut_cmp(ctx: &Ctx<'_, L, R>, key: &str, a: LutResult, b: LutResult) -> Outcome {
        if a == b {
            return Outcome::Agree;
        }
        let (ls, rs) = (lut_str(&a), lut_str(&b));
        ctx.div(
            Class::from_accepts(a.is_ok(), b.is_ok()),
            key,
            ls.clone(),
            rs.clone(),
            format!("{key} = {ls}"),
            format!("{key} = {rs}"),
        )
    }

    // -- IR gates -------------------------------------------------------------

    fn ir_inner(&self, q: &IrQuery, input: &[u8]) -> Outcome {
        let case = || q.to_string();
        let ctx = Ctx {
            e: self,
            target: Target::IrGates,
            input,
            case: &case,
        };
        let gate = q.gate();
        let (l, r) = (&self.left, &self.right);
        let (a, b) = match q {
            IrQuery::CheckCustomOp {
                args,
                outputs,
                arch,
            } => both!(
                ctx,
                gate,
                l.check_custom_op(args, outputs, *arch),
                r.check_custom_op(args, outputs, *arch)
            ),
            IrQuery::SbScratchpad {
                kind,
                subkind,
                sb_arg_global,
                n_args,
                n_outputs,
                n_scratch,
            } => both!(
                ctx,
                gate,
                l.sb_scratchpad(
                    *kind,
                    *subkind,
                    *sb_arg_global,
                    *n_args,
                    *n_outputs,
                    *n_scratch
                ),
                r.sb_scratchpad(
                    *kind,
                    *subkind,
                    *sb_arg_global,
                    *n_args,
                    *n_outputs,
                    *n_scratch
                )
            ),
            IrQuery::CcDim(d) => both!(ctx, gate, l.cc_dim(*d), r.cc_dim(*d)),
            IrQuery::RankIdOutput(k) => {
                both!(ctx, gate, l.rank_id_output(*k), r.rank_id_output(*k))
            }
            IrQuery::Lnc(n) => both!(ctx, gate, l.lnc(*n), r.lnc(*n)),
            IrQuery::Route(n) => {
                let (a, b) = both!(ctx, gate, l.route(*n), r.route(*n));
                if a == b {
                    return Outcome::Agree;
                }
                let (ls, rs) = (format!("{a:?}"), format!("{b:?}"));
                return ctx.div(
                    Class::DifferentOutput,
                    gate,
                    ls.clone(),
                    rs.clone(),
                    format!("route = {ls}"),
                    format!("route = {rs}"),
                );
            }
        };
        if a == b {
            return Outcome::Agree;
        }
        let (ls, rs) = (gate_str(&a), gate_str(&b));
        ctx.div(
            Class::from_accepts(a.is_ok(), b.is_ok()),
            gate,
            ls.clone(),
            rs.clone(),
            format!("{gate} = {ls}"),
            format!("{gate} = {rs}"),
        )
    }
}

fn first_field_diff(
    a: &[(String, crate::subject::Value)],
    b: &[(String, crate::subject::Value)],
) -> String {
    for (x, y) in a.iter().zip(b.iter()) {
        if x.0 != y.0 {
            return format!("field_order:{}", x.0);
        }
        if x.1 != y.1 {
            return x.0.clone();
        }
    }
    match (a.get(b.len()), b.get(a.len())) {
        (Some(x), _) => x.0.clone(),
        (_, Some(y)) => y.0.clone(),
        _ => "fields".to_string(),
    }
}

/// core vs oracle on `target` with raw `input`.
pub fn compare(target: Target, input: &[u8]) -> Outcome {
    Engine::new().compare(target, input)
}

/// core vs oracle on a 64-byte bundle (see [`Engine::compare_bundle`]).
pub fn compare_bundle(target: Target, b: &[u8; 64]) -> Outcome {
    Engine::new().compare_bundle(target, b)
}

/// core vs oracle on a raw byte stream (see [`Engine::compare_stream`]).
pub fn compare_stream(stream: &[u8]) -> Outcome {
    Engine::new().compare_stream(stream)
}

/// core vs oracle on one LUT ordinal (see [`Engine::compare_lut`]).
pub fn compare_lut(target: Target, ordinal: u32) -> Outcome {
    Engine::new().compare_lut(target, ordinal)
}

/// core vs oracle on one IR query (see [`Engine::compare_ir`]).
pub fn compare_ir(q: &IrQuery) -> Outcome {
    Engine::new().compare_ir(q)
}

/// For fuzz targets: compares core vs oracle and panics with the full
/// divergence report (input as hex, both results) on disagreement.
pub fn run_target_or_panic(target: Target, data: &[u8]) {
    if let Outcome::Divergence(d) = compare(target, data) {
        panic!("{d}");
    }
}
