//! Structured generators: bundles at the edge of validity, with labels.
//!
//! # What is generated
//!
//! Every generator is a function of an [`arbitrary::Unstructured`] (so the same
//! code serves libFuzzer, bolero, proptest and the corpus builder):
//!
//! - [`valid_instruction`] — a typed `tpb_core` [`Instruction`] for any of the
//!   eleven opcodes of SPEC §5, valid by construction (SyncInfo band from the
//!   legal modes: wait ∈ {0x00, 0x05, 0x85}, update ∈ {0, 1}; shipped `cce_op`;
//!   encodable `kind`; dtype tags 0x01..=0x10; scratch triple all-zero or full).
//!   [`valid_case`] encodes it with core's encoder.
//! - [`near_valid_case`] — a valid bundle with exactly `k` [`Violation`]s applied
//!   (`k` from [`Config::k`], 1 by default), each touching disjoint bytes:
//!   a flipped reserved bit, a half-filled scratch triple (every partial
//!   combination, including dword[0x14] alone), a wrong tag, a wrong / reserved
//!   opcode, an illegal event mode, an out-of-table LUT byte (kind, cce_op, dtype,
//!   valid, cross-core enable, payload marker) or a payload reserved byte.
//! - [`group`] / [`stream`] — custom-op groups of 0..=[`Config::max_args`] args
//!   (core's group encoder) and multi-bundle streams mixing groups, other
//!   bundles, near-valid bundles, short groups, stray payloads, bad counts.
//! - [`lut_ordinal`] and [`ir_query`] — edge-biased LUT ordinals and IR queries.
//!
//! # Labelling guarantee
//!
//! Every [`Case`] carries an [`Expected`] label computed **only** from the
//! chosen mutations and SPEC's chain order (§3, §4 validator chains; §5.1
//! decode walk), never by calling core or the oracle. A view that the
//! mutations do not determine (e.g. a payload relabelled as a header by an
//! opcode mutation) is left unlabelled (`None`). For every labelled view, both
//! subjects must report exactly the label: validators by predicate name,
//! decode by field (and by offset when the field is `reserved`).
//! `tests/generators.rs` checks this over thousands of cases.
//!
//! # Determinism
//!
//! Output depends only on the input bytes and the [`Config`]; no clock, no
//! global RNG. When the bytes run out, `Unstructured` yields its minimal
//! choices (first alternative, lower bound), so generation never fails for lack
//! of data, and shrinking the bytes shrinks the case.

use crate::layout::OPCODES;
use crate::subjects::IrQuery;
use arbitrary::{Arbitrary, Result, Unstructured};
use tpb_core::insn::{
    CollectiveCompute, CollectiveComputeSecondary, CollectiveSendRecv, CoreBarrier, CustomOpGroup,
    CustomOpHeader, CustomOpPayload, GetCurProcessingRankId, GetGlobalRankId, GetSequenceBounds,
    Gpsimdsb2sb, Instruction, Sync, TensorCompletion, UpdateMode, WaitMode,
};
use tpb_core::lut::{AluOp, CollectiveKind};

/// Largest `k` a [`Config`] can ask for.
pub const MAX_K: u8 = 3;

/// Swarm configuration: drawn once per fuzz input, it skews the case mix.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Relative weight of each opcode, in [`OPCODES`] order (all zero = uniform).
    pub weights: [u8; 11],
    /// Violations per near-valid case: `1 + k % MAX_K`.
    pub k: u8,
    /// Out of 256: how often [`case`] returns a near-valid case.
    pub near: u8,
    /// Most arguments in a generated group: `max_args % 16`, or (bit 7 set)
    /// the whole 0..=255 range (SPEC §5.3).
    pub max_args: u8,
}

impl Default for Config {
    /// Uniform opcodes, `k = 1`, half near-valid, up to 4 group args.
    fn default() -> Self {
        Config {
            weights: [1; 11],
            k: 0,
            near: 128,
            max_args: 4,
        }
    }
}

impl Config {
    /// The effective number of violations per near-valid case (1..=[`MAX_K`]).
    pub fn violations(&self) -> usize {
        usize::from(1 + self.k % MAX_K)
    }
}

/// Picks an opcode by the config's weights.
pub fn opcode(u: &mut Unstructured<'_>, cfg: &Config) -> Result<u8> {
    let total: u32 = cfg.weights.iter().map(|&w| u32::from(w)).sum();
    if total == 0 {
        return u.choose(&OPCODES).copied();
    }
    let mut x = u.int_in_range(0..=total - 1)?;
    for (i, &w) in cfg.weights.iter().enumerate() {
        if x < u32::from(w) {
            return Ok(OPCODES[i]);
        }
        x -= u32::from(w);
    }
    Ok(OPCODES[10])
}

// ---------------------------------------------------------------------------
// Valid by construction
// ---------------------------------------------------------------------------

/// A SyncInfo band with legal modes (SPEC §1, D-1).
pub fn sync(u: &mut Unstructured<'_>) -> Result<Sync> {
    Ok(Sync {
        wait_mode: *u.choose(&[WaitMode::NONE, WaitMode::SEM_GE_IMM, WaitMode::SEM_GE_REG])?,
        wait_id: u.arbitrary()?,
        update_mode: *u.choose(&[UpdateMode::SET, UpdateMode::INCREMENT])?,
        update_id: u.arbitrary()?,
        values: u.arbitrary()?,
    })
}

fn dtype_tag(u: &mut Unstructured<'_>) -> Result<u8> {
    u.int_in_range(0x01..=0x10)
}

fn cce_op(u: &mut Unstructured<'_>) -> Result<AluOp> {
    u.choose(&[AluOp::Bypass, AluOp::Add]).copied()
}

fn kind(u: &mut Unstructured<'_>) -> Result<CollectiveKind> {
    u.choose(&CollectiveKind::ALL[2..]).copied()
}

fn nonzero_u8(u: &mut Unstructured<'_>) -> Result<u8> {
    u.int_in_range(1..=0xFF)
}

/// A nonzero u32: half the time a single nonzero byte at a random position
/// (to probe byte-precise masks).
fn nonzero_u32(u: &mut Unstructured<'_>) -> Result<u32> {
    if u.ratio(1, 2)? {
        let pos = u.int_in_range(0..=3u32)?;
        Ok(u32::from(nonzero_u8(u)?) << (8 * pos))
    } else {
        Ok(u.int_in_range(1..=u32::MAX)?)
    }
}

/// The scratch descriptor `(byte_10, dword_14, dword_18, byte_1c)`: all zero
/// (as this build emits) or a full triple plus any dword[0x14] (D-4).
fn scratch(u: &mut Unstructured<'_>) -> Result<(u8, u32, u32, u8)> {
    if u.ratio(2, 3)? {
        return Ok((0, 0, 0, 0));
    }
    Ok((
        nonzero_u8(u)?,
        u.arbitrary()?,
        nonzero_u32(u)?,
        nonzero_u8(u)?,
    ))
}

/// A valid instruction of the given opcode (one of [`OPCODES`]; others are
/// treated as 0xDE).
pub fn instruction_of(u: &mut Unstructured<'_>, opcode: u8) -> Result<Instruction> {
    Ok(match opcode {
        0x85 => {
            let sync = sync(u)?;
            let num_arguments: u8 = u.arbitrary()?;
            let num_payloads = if u.ratio(3, 4)? {
                u16::from(num_arguments) + 2
            } else {
                u.arbitrary()?
            };
            let (b10, d14, d18, b1c) = scratch(u)?;
            CustomOpHeader {
                sync,
                num_payloads,
                function_id: u.arbitrary()?,
                num_arguments,
                scratch_byte_10: b10,
                scratch_dword_14: d14,
                scratch_dword_18: d18,
                scratch_byte_1c: b1c,
            }
            .into()
        }
        0x86 => CustomOpPayload {
            sync: sync(u)?,
            ap: u.arbitrary()?,
        }
        .into(),
        0xD9 => CollectiveCompute {
            sync: sync(u)?,
            cce_op: cce_op(u)?,
            dtype: dtype_tag(u)?,
            kind: kind(u)?,
            ap: u.arbitrary()?,
        }
        .into(),
        0xDA => CollectiveComputeSecondary {
            channel_id: u.arbitrary()?,
            cce_op: cce_op(u)?,
            dtype: dtype_tag(u)?,
            kind: kind(u)?,
            ap: u.arbitrary()?,
        }
        .into(),
        0xCB => CollectiveSendRecv {
            sync: sync(u)?,
            tensor_id: u.arbitrary()?,
            tensor_base: u.arbitrary()?,
            num_elements_per_partition: u.arbitrary()?,
        }
        .into(),
        0xBF => Gpsimdsb2sb {
            sync: sync(u)?,
            src_dtype: dtype_tag(u)?,
            dst_dtype: dtype_tag(u)?,
            src_ap: u.arbitrary()?,
            peer_partition: u.arbitrary()?,
            dst_ap: u.arbitrary()?,
        }
        .into(),
        0xBE => GetSequenceBounds {
            sync: sync(u)?,
            dtype: dtype_tag(u)?,
            flag_0e: u.arbitrary()?,
            flag_0f: u.arbitrary()?,
            in_ap: u.arbitrary()?,
            out_ap: u.arbitrary()?,
        }
        .into(),
        0xD8 => CoreBarrier {
            sync: sync(u)?,
            barrier_id: u.arbitrary()?,
            barrier_index: u.arbitrary()?,
            sema_ap: u.arbitrary()?,
        }
        .into(),
        0xDC => GetGlobalRankId {
            sync: sync(u)?,
            valid: u.arbitrary()?,
            reg_id: u.arbitrary()?,
        }
        .into(),
        0xDB => GetCurProcessingRankId {
            sync: sync(u)?,
            group_id: u.arbitrary()?,
            channel_id: u.arbitrary()?,
            iteration_id: u.arbitrary()?,
            reg_id: u.arbitrary()?,
            stream_id: u.arbitrary()?,
        }
        .into(),
        _ => TensorCompletion {
            sync: sync(u)?,
            handle: u.arbitrary()?,
            ap_byte: u.arbitrary()?,
        }
        .into(),
    })
}

/// A valid instruction, opcode drawn by the config's weights.
pub fn valid_instruction(u: &mut Unstructured<'_>, cfg: &Config) -> Result<Instruction> {
    let op = opcode(u, cfg)?;
    instruction_of(u, op)
}

/// A valid-by-construction instruction that core's encoder refused — itself a
/// finding (the instruction is in the encoder's domain by SPEC §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeRefused {
    /// The instruction.
    pub instruction: Instruction,
    /// Core's error, rendered.
    pub error: String,
}

impl std::fmt::Display for EncodeRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "core refused to encode a valid-by-construction instruction: {:?}: {}",
            self.instruction, self.error
        )
    }
}

/// Generation failed: out of data (never, see module docs) or core's encoder
/// refused a valid instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenError {
    /// `arbitrary` error.
    Arbitrary(arbitrary::Error),
    /// See [`EncodeRefused`].
    Encode(Box<EncodeRefused>),
}

impl From<arbitrary::Error> for GenError {
    fn from(e: arbitrary::Error) -> Self {
        GenError::Arbitrary(e)
    }
}

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenError::Arbitrary(e) => write!(f, "generator: {e}"),
            GenError::Encode(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for GenError {}

/// Encodes with core; a refusal is a [`GenError::Encode`].
pub fn encode(i: &Instruction) -> std::result::Result<[u8; 64], GenError> {
    i.encode().map(|b| b.0).map_err(|e| {
        GenError::Encode(Box::new(EncodeRefused {
            instruction: *i,
            error: format!("{e:?}"),
        }))
    })
}

// ---------------------------------------------------------------------------
// SPEC byte roles (our own reading of SPEC §1, §3, §4, §5 — not core's tables)
// ---------------------------------------------------------------------------

/// What SPEC says a byte of a given opcode's image holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// byte[0].
    Opcode,
    /// byte[1] (0x10; 0x00 for 0xDA).
    Tag,
    /// Must be zero (debug bytes, encoder-unwritten bytes, validator regions).
    Reserved,
    /// byte[4] wait mode.
    WaitMode,
    /// byte[6] update mode.
    UpdateMode,
    /// Any value.
    Free,
    /// 0x85 scratch byte (0x10, 0x14..=0x1C).
    Scratch,
    /// `cce_op` wire byte ∈ {0x00, 0x04}.
    CceOp,
    /// `dtype` tag 0x01..=0x10.
    Dtype,
    /// CollectiveKind wire byte 0x01..=0x09.
    Kind,
    /// `src_dtype` tag.
    SrcDtype,
    /// `dst_dtype` tag.
    DstDtype,
    /// 0xBF byte[0x20] == 0x01.
    CrossCoreEnable,
    /// 0xDC byte[0x0C] ∈ {0, 1}.
    Valid,
    /// 0x86 byte[0x0F] == 0x01.
    Marker,
}

impl Role {
    /// SPEC §5.1 decode-failure field name of a byte with this role.
    pub fn field(self) -> &'static str {
        match self {
            Role::Opcode => "opcode",
            Role::Tag => "inst_word_len",
            Role::Reserved | Role::Free | Role::Scratch => "reserved",
            Role::WaitMode => "sync.wait_mode",
            Role::UpdateMode => "sync.update_mode",
            Role::CceOp => "cce_op",
            Role::Dtype => "dtype",
            Role::Kind => "kind",
            Role::SrcDtype => "src_dtype",
            Role::DstDtype => "dst_dtype",
            Role::CrossCoreEnable => "cross_core_enable",
            Role::Valid => "valid",
            Role::Marker => "marker",
        }
    }

    /// Is `v` a legal value for this role (tag: `tag` is the opcode's tag)?
    fn accepts(self, v: u8, tag: u8) -> bool {
        match self {
            Role::Opcode | Role::Free | Role::Scratch => true,
            Role::Tag => v == tag,
            Role::Reserved => v == 0,
            Role::WaitMode => matches!(v, 0x00 | 0x05 | 0x85),
            Role::UpdateMode => v <= 1,
            Role::CceOp => v == 0x00 || v == 0x04,
            Role::Dtype | Role::SrcDtype | Role::DstDtype => (0x01..=0x10).contains(&v),
            Role::Kind => (0x01..=0x09).contains(&v),
            Role::CrossCoreEnable | Role::Marker => v == 0x01,
            Role::Valid => v <= 1,
        }
    }
}

/// The role of byte `off` (< 64) in an image of `opcode` (one of [`OPCODES`]).
pub fn role(opcode: u8, off: usize) -> Option<Role> {
    use Role::*;
    if !OPCODES.contains(&opcode) || off >= 64 {
        return None;
    }
    let head = if opcode == 0xDA {
        match off {
            0 => Opcode,
            1 => Tag,
            4 | 5 => Free,
            _ => Reserved, // 2..3 debug, 6..0x0B (D-3)
        }
    } else {
        match off {
            0 => Opcode,
            1 => Tag,
            2 | 3 => Reserved,
            4 => WaitMode,
            6 => UpdateMode,
            _ => Free, // 5, 7..0x0B
        }
    };
    if off < 0x0C {
        return Some(head);
    }
    Some(match (opcode, off) {
        (0x85, 0x0C..=0x0F) => Free,
        (0x85, 0x10 | 0x14..=0x1C) => Scratch,
        (0x85, _) => Reserved,
        (0x86, 0x0C..=0x0E) => Reserved,
        (0x86, 0x0F) => Marker,
        (0x86, _) => Free,
        (0xD9 | 0xDA, 0x0C) => CceOp,
        (0xD9 | 0xDA, 0x0D) => Dtype,
        (0xD9 | 0xDA, 0x0E) => Kind,
        (0xD9 | 0xDA, 0x0F) => Reserved,
        (0xD9 | 0xDA, _) => Free,
        (0xCB, 0x10..=0x17 | 0x30..=0x3F) => Free,
        (0xCB, _) => Reserved,
        (0xBF, 0x0C) => SrcDtype,
        (0xBF, 0x0D) => DstDtype,
        (0xBF, 0x10..=0x1F | 0x21 | 0x30..=0x3F) => Free,
        (0xBF, 0x20) => CrossCoreEnable,
        (0xBF, _) => Reserved,
        (0xBE, 0x0C) => Dtype,
        (0xBE, 0x0E..=0x2F) => Free,
        (0xBE, _) => Reserved,
        (0xD8, 0x0C..=0x13 | 0x20..=0x3F) => Free,
        (0xD8, _) => Reserved,
        (0xDC, 0x0C) => Valid,
        (0xDC, 0x17) => Free,
        (0xDC, _) => Reserved,
        (0xDB, 0x0C..=0x12 | 0x14..=0x15) => Free,
        (0xDB, _) => Reserved,
        (0xDE, 0x0C..=0x10) => Free,
        _ => Reserved,
    })
}

/// SPEC §2 roster (160 ordinals; F§1).
pub fn in_roster(op: u8) -> bool {
    matches!(op,
        1..=10 | 33..=37 | 48 | 65..=79 | 81..=84 | 88 | 94..=116 | 118..=127 | 129..=134
        | 142 | 146..=150 | 152..=171 | 176..=181 | 183..=184 | 187..=191 | 193..=235
        | 240..=242)
}

/// The tag byte[1] of an opcode's image.
pub fn tag_of(opcode: u8) -> u8 {
    if opcode == 0xDA {
        0x00
    } else {
        0x10
    }
}

// ---------------------------------------------------------------------------
// Near-valid: violations and labels
// ---------------------------------------------------------------------------

/// One violated predicate. Each writes only the bytes of [`Violation::footprint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    /// byte[0] := the value (never the base opcode; for non-custom bases never
    /// one of the eleven).
    Opcode(u8),
    /// byte[1] := a wrong tag.
    Tag(u8),
    /// Flip one bit of a reserved byte (so exactly one reserved bit is set).
    ReservedBit {
        /// Byte offset.
        offset: u8,
        /// Bit 0..=7.
        bit: u8,
    },
    /// byte[4] := an illegal wait mode.
    WaitMode(u8),
    /// byte[6] := an illegal update mode.
    UpdateMode(u8),
    /// 0x85 only: a partial scratch descriptor. `parts` bit 0 = byte[0x10],
    /// 1 = dword[0x14], 2 = dword[0x18], 3 = byte[0x1C]; the set parts get the
    /// (nonzero) values, the others zero.
    Scratch {
        /// Which parts are nonzero (never all of 0, 2, 3).
        parts: u8,
        /// byte[0x10] if set.
        b10: u8,
        /// dword[0x14] if set.
        d14: u32,
        /// dword[0x18] if set.
        d18: u32,
        /// byte[0x1C] if set.
        b1c: u8,
    },
    /// A LUT / flag byte (cce_op, dtype, kind, src/dst dtype, valid,
    /// cross-core enable, payload marker) := an out-of-table value.
    Field {
        /// Byte offset.
        offset: u8,
        /// The bad value.
        value: u8,
    },
}

/// Every partial scratch combination (13 of the 15 nonempty part sets).
pub const SCRATCH_PARTIAL: [u8; 13] = [
    0b0001, 0b0010, 0b0011, 0b0100, 0b0101, 0b0110, 0b0111, 0b1000, 0b1001, 0b1010, 0b1011, 0b1100,
    0b1110,
];

impl Violation {
    /// The bytes this violation writes.
    pub fn footprint(&self) -> Vec<usize> {
        match *self {
            Violation::Opcode(_) => vec![0],
            Violation::Tag(_) => vec![1],
            Violation::ReservedBit { offset, .. } | Violation::Field { offset, .. } => {
                vec![usize::from(offset)]
            }
            Violation::WaitMode(_) => vec![4],
            Violation::UpdateMode(_) => vec![6],
            Violation::Scratch { .. } => [0x10].into_iter().chain(0x14..=0x1C).collect(),
        }
    }

    /// Applies the violation to `b`.
    pub fn apply(&self, b: &mut [u8; 64]) {
        match *self {
            Violation::Opcode(v) => b[0] = v,
            Violation::Tag(v) => b[1] = v,
            Violation::ReservedBit { offset, bit } => b[usize::from(offset)] ^= 1 << (bit % 8),
            Violation::WaitMode(v) => b[4] = v,
            Violation::UpdateMode(v) => b[6] = v,
            Violation::Field { offset, value } => b[usize::from(offset)] = value,
            Violation::Scratch {
                parts,
                b10,
                d14,
                d18,
                b1c,
            } => {
                let pick = |bit: u8| parts & (1 << bit) != 0;
                b[0x10] = if pick(0) { b10 } else { 0 };
                let d14 = if pick(1) { d14 } else { 0 };
                let d18 = if pick(2) { d18 } else { 0 };
                b[0x14..0x18].copy_from_slice(&d14.to_le_bytes());
                b[0x18..0x1C].copy_from_slice(&d18.to_le_bytes());
                b[0x1C] = if pick(3) { b1c } else { 0 };
            }
        }
    }

    /// A short stable name of the violation's kind (for matrices and reports).
    pub fn kind(&self) -> &'static str {
        match self {
            Violation::Opcode(_) => "opcode",
            Violation::Tag(_) => "tag",
            Violation::ReservedBit { .. } => "reserved_bit",
            Violation::WaitMode(_) => "wait_mode",
            Violation::UpdateMode(_) => "update_mode",
            Violation::Scratch { .. } => "scratch",
            Violation::Field { .. } => "field",
        }
    }
}

/// An expected SPEC §5.1 decode failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecodeLabel {
    /// Field or validator predicate name.
    pub field: &'static str,
    /// Offset; compared only when `field == "reserved"` (D-14).
    pub offset: usize,
}

/// A validator label: `None` = valid, `Some(p)` = the first failing predicate.
pub type Label = Option<&'static str>;

/// The expected result of each view. Outer `None` = not labelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Expected {
    /// SPEC §3 header validator: `Some(None)` = valid, `Some(Some(p))` = first failing `p`.
    pub header: Option<Label>,
    /// SPEC §4 payload validator, same encoding.
    pub payload: Option<Label>,
    /// SPEC §5.1 decode: `Some(Ok(()))` = decodes, `Some(Err(l))` = fails with `l`.
    pub decode: Option<std::result::Result<(), DecodeLabel>>,
}

impl Expected {
    /// The label of the case's primary view: the header validator for a 0x85
    /// base, the payload validator for 0x86, else the decode field; `"valid"`
    /// when that view accepts, `"-"` when unlabelled.
    pub fn primary(&self, base: u8) -> &'static str {
        let v = match base {
            0x85 => self.header,
            0x86 => self.payload,
            _ => {
                return match self.decode {
                    None => "-",
                    Some(Ok(())) => "valid",
                    Some(Err(l)) => l.field,
                }
            }
        };
        match v {
            None => "-",
            Some(None) => "valid",
            Some(Some(p)) => p,
        }
    }
}

/// Which validator.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Validator {
    Header,
    Payload,
}

impl Validator {
    fn opcode(self) -> u8 {
        match self {
            Validator::Header => 0x85,
            Validator::Payload => 0x86,
        }
    }
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Validator::Header => (
                "is_custom_op_header_opcode",
                "custom_op_header_reserved_zero",
            ),
            Validator::Payload => (
                "is_custom_op_payload_opcode",
                "custom_op_payload_reserved_zero",
            ),
        }
    }
    /// Bytes the validator's reserved-zero predicate reads (SPEC §3 #5, §4 #5).
    fn reserved(self, off: usize) -> bool {
        match self {
            Validator::Header => matches!(off, 0x11..=0x13 | 0x1D..=0x3F),
            Validator::Payload => matches!(off, 0x0C..=0x0E),
        }
    }
}

/// The validator chain verdict, from the mutations (SPEC §3 / §4 order).
fn validator_label(v: Validator, base: u8, vs: &[Violation]) -> Option<Label> {
    let (is_op, reserved_zero) = v.names();
    let mut best: Option<(u8, &'static str)> = None;
    let mut note = |rank: u8, name: &'static str| match best {
        Some((r, _)) if r <= rank => {}
        _ => best = Some((rank, name)),
    };
    for x in vs {
        match *x {
            Violation::Opcode(o) => {
                if o == v.opcode() {
                    return None; // relabelled as this validator's record
                }
                if in_roster(o) {
                    note(4, is_op);
                } else {
                    note(1, "valid_opcode");
                }
            }
            Violation::Tag(_) => note(2, "inst_word_len"),
            Violation::WaitMode(_) | Violation::UpdateMode(_) => note(3, "has_valid_neuron_events"),
            Violation::ReservedBit { offset, .. } if v.reserved(usize::from(offset)) => {
                note(5, reserved_zero)
            }
            Violation::Scratch { .. } if v == Validator::Header => {
                note(6, "custom_op_header_scratch_space_val")
            }
            _ => {}
        }
    }
    if base != v.opcode() {
        note(4, is_op);
    }
    if base == 0xDA {
        // raw stamp: byte[1] is 0x00, or a mutated value that is never 0x10
        note(2, "inst_word_len");
    }
    Some(best.map(|(_, n)| n))
}

/// The SPEC §5.1 decode verdict, from the mutations.
fn decode_label(base: u8, vs: &[Violation]) -> Option<std::result::Result<(), DecodeLabel>> {
    for x in vs {
        if let Violation::Opcode(o) = *x {
            if OPCODES.contains(&o) {
                return None; // decodes as another record
            }
            return Some(Err(DecodeLabel {
                field: "opcode",
                offset: 0,
            }));
        }
    }
    let min_by_offset = |pred: &dyn Fn(usize, Role) -> bool| {
        vs.iter()
            .flat_map(|x| {
                let off = x.footprint()[0];
                let r = role(base, off).unwrap_or(Role::Reserved);
                pred(off, r).then_some((off, r))
            })
            .min_by_key(|(off, _)| *off)
    };
    let custom = match base {
        0x85 => Some(Validator::Header),
        0x86 => Some(Validator::Payload),
        _ => None,
    };
    if let Some(v) = custom {
        if let Some(Some(p)) = validator_label(v, base, vs) {
            return Some(Err(DecodeLabel {
                field: p,
                offset: 0,
            }));
        }
        // then the debug bytes, then (0x86) the marker
        let hit = min_by_offset(&|off, r| off == 2 || off == 3 || r == Role::Marker);
        return Some(match hit {
            Some((offset, r)) => Err(DecodeLabel {
                field: r.field(),
                offset,
            }),
            None => Ok(()),
        });
    }
    Some(match min_by_offset(&|_, _| true) {
        Some((offset, r)) => Err(DecodeLabel {
            field: r.field(),
            offset,
        }),
        None => Ok(()),
    })
}

/// Labels `vs` applied to a valid image of `base` (see the module docs).
pub fn label(base: u8, vs: &[Violation]) -> Expected {
    Expected {
        header: validator_label(Validator::Header, base, vs),
        payload: validator_label(Validator::Payload, base, vs),
        decode: decode_label(base, vs),
    }
}

/// A value `v` with `!ok(v)`: an edge value half the time, else a random one.
fn bad_value(u: &mut Unstructured<'_>, edges: &[u8], ok: impl Fn(u8) -> bool) -> Result<u8> {
    let edges: Vec<u8> = edges.iter().copied().filter(|&v| !ok(v)).collect();
    if u.ratio(1, 2)? {
        if let Ok(v) = u.choose(&edges) {
            return Ok(*v);
        }
    }
    for _ in 0..4 {
        let v: u8 = u.arbitrary()?;
        if !ok(v) {
            return Ok(v);
        }
    }
    // Deterministic fallback: the first edge, else the first bad byte.
    Ok(edges
        .first()
        .copied()
        .or_else(|| (0..=u8::MAX).find(|&v| !ok(v)))
        .unwrap_or(0xFF))
}

/// The violation kinds available for a base opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Menu {
    Opcode,
    Tag,
    ReservedBit,
    Wait,
    Update,
    Scratch,
    Field,
}

fn menu(base: u8) -> Vec<Menu> {
    let mut m = vec![Menu::Opcode, Menu::Tag, Menu::ReservedBit];
    if base != 0xDA {
        m.extend([Menu::Wait, Menu::Update]);
    }
    if base == 0x85 {
        m.push(Menu::Scratch);
    }
    if (0x0C..64).any(|o| {
        matches!(
            role(base, o),
            Some(
                Role::CceOp
                    | Role::Dtype
                    | Role::Kind
                    | Role::SrcDtype
                    | Role::DstDtype
                    | Role::CrossCoreEnable
                    | Role::Valid
                    | Role::Marker
            )
        )
    }) {
        m.push(Menu::Field);
    }
    m
}

/// One violation for `base`.
pub fn violation(u: &mut Unstructured<'_>, base: u8) -> Result<Violation> {
    let tag = tag_of(base);
    let m = menu(base);
    Ok(match *u.choose(&m)? {
        Menu::Opcode => {
            let custom = base == 0x85 || base == 0x86;
            let other_custom = if base == 0x85 { 0x86 } else { 0x85 };
            let edges: &[u8] = if custom {
                &[0xFF, 0x00, other_custom, 0x87, 0x84, 0x80, 0x0B, 0x01]
            } else {
                &[0xFF, 0x00, 0x80, 0x01, 0xEC, 0xDD, 0xD7, 0x0B]
            };
            let v = bad_value(u, edges, |v| {
                v == base || (OPCODES.contains(&v) && !(custom && v == other_custom))
            })?;
            Violation::Opcode(v)
        }
        Menu::Tag => Violation::Tag(bad_value(u, &[0x00, 0x11, 0x0F, 0x20, 0x90, 0xFF], |v| {
            v == tag || v == 0x10 || (base == 0xDA && v == 0)
        })?),
        Menu::ReservedBit => {
            let offs: Vec<u8> = (0u8..64)
                .filter(|&o| role(base, usize::from(o)) == Some(Role::Reserved))
                .collect();
            Violation::ReservedBit {
                offset: *u.choose(&offs)?,
                bit: u.int_in_range(0..=7)?,
            }
        }
        Menu::Wait => Violation::WaitMode(bad_value(
            u,
            &[0x07, 0x80, 0x01, 0x04, 0x06, 0x84, 0x86, 0x45, 0xFF],
            |v| Role::WaitMode.accepts(v, tag),
        )?),
        Menu::Update => Violation::UpdateMode(bad_value(u, &[0x02, 0x03, 0x80, 0xFF], |v| {
            Role::UpdateMode.accepts(v, tag)
        })?),
        Menu::Scratch => Violation::Scratch {
            parts: *u.choose(&SCRATCH_PARTIAL)?,
            b10: nonzero_u8(u)?,
            d14: nonzero_u32(u)?,
            d18: nonzero_u32(u)?,
            b1c: nonzero_u8(u)?,
        },
        Menu::Field => {
            let offs: Vec<(u8, Role)> = (0x0Cu8..64)
                .filter_map(|o| {
                    let r = role(base, usize::from(o))?;
                    matches!(
                        r,
                        Role::CceOp
                            | Role::Dtype
                            | Role::Kind
                            | Role::SrcDtype
                            | Role::DstDtype
                            | Role::CrossCoreEnable
                            | Role::Valid
                            | Role::Marker
                    )
                    .then_some((o, r))
                })
                .collect();
            let (offset, r) = *u.choose(&offs)?;
            let edges: &[u8] = match r {
                Role::CceOp => &[0x01, 0x03, 0x05, 0x1A, 0xFF],
                Role::Kind => &[0x00, 0x0A, 0x0B, 0xFF],
                Role::CrossCoreEnable | Role::Marker => &[0x00, 0x02, 0x81, 0xFF],
                Role::Valid => &[0x02, 0x03, 0x80, 0xFF],
                _ => &[0x00, 0x11, 0x12, 0xFF],
            };
            Violation::Field {
                offset,
                value: bad_value(u, edges, |v| r.accepts(v, tag))?,
            }
        }
    })
}

/// A generated bundle and what both subjects must say about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The valid instruction the case started from.
    pub instruction: Instruction,
    /// Its opcode.
    pub base: u8,
    /// The violations applied, in order (empty = valid case).
    pub violations: Vec<Violation>,
    /// The bundle.
    pub bundle: [u8; 64],
    /// The label.
    pub expected: Expected,
}

/// A valid case.
pub fn valid_case(u: &mut Unstructured<'_>, cfg: &Config) -> std::result::Result<Case, GenError> {
    let instruction = valid_instruction(u, cfg)?;
    let bundle = encode(&instruction)?;
    let base = instruction.opcode();
    Ok(Case {
        instruction,
        base,
        violations: Vec::new(),
        bundle,
        expected: label(base, &[]),
    })
}

/// A near-valid case: a valid case with `cfg.violations()` violations on
/// disjoint bytes (fewer if the opcode's menu runs out).
pub fn near_valid_case(
    u: &mut Unstructured<'_>,
    cfg: &Config,
) -> std::result::Result<Case, GenError> {
    let mut c = valid_case(u, cfg)?;
    let mut used: Vec<usize> = Vec::new();
    for _ in 0..cfg.violations() * 3 {
        if c.violations.len() >= cfg.violations() {
            break;
        }
        let v = violation(u, c.base)?;
        let fp = v.footprint();
        if fp.iter().any(|o| used.contains(o)) {
            continue;
        }
        used.extend(fp);
        v.apply(&mut c.bundle);
        c.violations.push(v);
    }
    c.expected = label(c.base, &c.violations);
    Ok(c)
}

/// Correlated fault: writes one value into two bytes of the same SPEC role
/// (two reserved bytes, two dtype bytes, …) or copies one byte's value into
/// another (field copy). Equal values across fields are what single-byte and
/// bit-flip mutations almost never build (e.g. two reserved dwords combined
/// with XOR instead of OR fail only when both hold the same nonzero byte).
/// The result is unlabelled: only the differential comparison applies.
pub fn correlate(u: &mut Unstructured<'_>, c: &mut Case) -> Result<()> {
    let i = usize::from(u.int_in_range(0..=63u8)?);
    let r = role(c.base, i);
    let same: Vec<usize> = (0..64)
        .filter(|&o| o != i && role(c.base, o) == r)
        .collect();
    let j = match u.choose(&same) {
        Ok(&j) if u.ratio(3, 4)? => j,
        _ => usize::from(u.int_in_range(0..=63u8)?),
    };
    if u.ratio(1, 4)? {
        c.bundle[j] = c.bundle[i];
    } else {
        let v = if u.ratio(1, 2)? {
            *u.choose(&[0x01u8, 0x80, 0xFF, 0x10, 0x05, 0x0F])?
        } else {
            u.int_in_range(1..=0xFF)?
        };
        c.bundle[i] = v;
        c.bundle[j] = v;
    }
    c.expected = Expected::default();
    Ok(())
}

/// A valid case or, with probability `cfg.near / 256`, a near-valid one.
pub fn case(u: &mut Unstructured<'_>, cfg: &Config) -> std::result::Result<Case, GenError> {
    if u.int_in_range(0..=255u8)? < cfg.near {
        near_valid_case(u, cfg)
    } else {
        valid_case(u, cfg)
    }
}

// ---------------------------------------------------------------------------
// Groups and streams
// ---------------------------------------------------------------------------

/// A valid custom-op group with 0..=`cfg.max_args % 16` args, or (bit 7 of
/// `max_args`) any count 0..=255.
pub fn group(u: &mut Unstructured<'_>, cfg: &Config) -> Result<CustomOpGroup> {
    let hi = if cfg.max_args & 0x80 != 0 {
        u8::MAX
    } else {
        cfg.max_args % 16
    };
    let n = u.int_in_range(0..=hi)?;
    let (b10, d14, d18, b1c) = scratch(u)?;
    let mut args = Vec::with_capacity(usize::from(n));
    for _ in 0..n {
        args.push(u.arbitrary()?);
    }
    Ok(CustomOpGroup {
        sync: sync(u)?,
        function_id: u.arbitrary()?,
        scratch_byte_10: b10,
        scratch_dword_14: d14,
        scratch_dword_18: d18,
        scratch_byte_1c: b1c,
        output: u.arbitrary()?,
        args,
    })
}

/// Encodes a group with core's group encoder.
pub fn encode_group(g: &CustomOpGroup) -> std::result::Result<Vec<u8>, GenError> {
    match g.encode() {
        Ok(bs) => Ok(bs.iter().flat_map(|b| b.0).collect()),
        Err(e) => Err(GenError::Encode(Box::new(EncodeRefused {
            instruction: Instruction::CustomOpHeader(CustomOpHeader::default()),
            error: format!("group of {} args: {e:?}", g.args.len()),
        }))),
    }
}

/// A multi-bundle stream (SPEC §5.3): up to 6 items, each a valid group, a
/// valid non-group bundle, a near-valid bundle, a short group (last payload
/// dropped), a group with an extra (stray) payload, or a header whose
/// `num_payloads` is off by one; rarely followed by trailing bytes.
pub fn stream(u: &mut Unstructured<'_>, cfg: &Config) -> std::result::Result<Vec<u8>, GenError> {
    let mut out = Vec::new();
    let items = u.int_in_range(1..=6u8)?;
    for _ in 0..items {
        match u.int_in_range(0..=7u8)? {
            0..=2 => out.extend(encode_group(&group(u, cfg)?)?),
            3 => {
                let c = valid_case(u, cfg)?;
                out.extend(c.bundle);
            }
            4 => out.extend(near_valid_case(u, cfg)?.bundle),
            5 => {
                let g = encode_group(&group(u, cfg)?)?;
                out.extend(&g[..g.len() - 64]);
            }
            6 => {
                let g = encode_group(&group(u, cfg)?)?;
                out.extend(g.iter().chain(&g[g.len() - 64..]));
            }
            _ => {
                let mut g = encode_group(&group(u, cfg)?)?;
                let np = u16::from_le_bytes([g[0x0C], g[0x0D]]);
                let np = if u.arbitrary()? {
                    np.wrapping_add(1)
                } else {
                    np.wrapping_sub(1)
                };
                g[0x0C..0x0E].copy_from_slice(&np.to_le_bytes());
                out.extend(g);
            }
        }
    }
    if u.ratio(1, 16)? {
        let n = u.int_in_range(1..=63usize)?;
        out.extend(vec![0u8; n]);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// LUT ordinals and IR queries
// ---------------------------------------------------------------------------

/// LUT ordinals at the tables' edges (SPEC §6): kind 0, 1, 6, 10, 11; AluOp
/// 18..=25, 29, 30; dtype 19, 20; wait mode 0..=3; far out-of-range values.
pub const LUT_EDGE_ORDINALS: [u32; 23] = [
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    9,
    10,
    11,
    18,
    19,
    20,
    23,
    24,
    25,
    29,
    30,
    31,
    0x100,
    0x1_0000,
    0x8000_0000,
    u32::MAX,
];

/// An ordinal for the LUT targets, biased to [`LUT_EDGE_ORDINALS`].
pub fn lut_ordinal(u: &mut Unstructured<'_>) -> Result<u32> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 | 1 => *u.choose(&LUT_EDGE_ORDINALS)?,
        2 => u.int_in_range(0..=40)?,
        _ => u.arbitrary()?,
    })
}

/// An IR query (SPEC §7), biased to each gate's boundary.
pub fn ir_query(u: &mut Unstructured<'_>) -> Result<IrQuery> {
    let mem = |u: &mut Unstructured<'_>| u.int_in_range(0..=3u8);
    let near = |u: &mut Unstructured<'_>, c: u64| -> Result<u64> {
        Ok(match u.int_in_range(0..=3u8)? {
            0 => c.saturating_sub(1),
            1 => c,
            2 => c.saturating_add(1),
            _ => u.arbitrary()?,
        })
    };
    Ok(match u.int_in_range(0..=5u8)? {
        0 => {
            let na = u.int_in_range(0..=4usize)?;
            let no = u.int_in_range(0..=2usize)?;
            let mut args = Vec::with_capacity(na);
            for _ in 0..na {
                args.push(mem(u)?);
            }
            let mut outputs = Vec::with_capacity(no);
            for _ in 0..no {
                outputs.push(mem(u)?);
            }
            IrQuery::CheckCustomOp {
                args,
                outputs,
                arch: mem(u)?,
            }
        }
        1 => {
            let n_args = if u.ratio(1, 8)? {
                u64::MAX - u.int_in_range(0..=2)?
            } else {
                u.int_in_range(0..=8)?
            };
            let n_outputs = u.int_in_range(0..=2)?;
            let n_scratch = near(u, n_args.wrapping_add(2).wrapping_add(n_outputs))?;
            IrQuery::SbScratchpad {
                kind: if u.ratio(3, 4)? { 0x30 } else { u.arbitrary()? },
                subkind: {
                    let c = 2 + u64::from(u.arbitrary::<bool>()?);
                    u32::try_from(near(u, c)?).unwrap_or(u32::MAX)
                },
                sb_arg_global: u.ratio(3, 4)?,
                n_args,
                n_outputs,
                n_scratch,
            }
        }
        2 => IrQuery::CcDim(u32::try_from(near(u, 1)?).unwrap_or(u32::MAX)),
        3 => IrQuery::RankIdOutput(u32::try_from(near(u, 11)?).unwrap_or(u32::MAX)),
        4 => IrQuery::Lnc(u32::try_from(near(u, 2)?).unwrap_or(u32::MAX)),
        _ => IrQuery::Route(near(u, 1024)?),
    })
}
