//! The bundle layout as the harness reads it: spans with the harness's domains, derived from
//! core's [`tpb_core::layout::RECORDS`] (isa/records.tsv; the oracle keeps its own
//! transcription, so a slip in the table is a core/oracle divergence).

use crate::generation::Generation;
use std::sync::OnceLock;
use tpb_core::layout::{sync_skeleton, EnumDomain, FieldDef, FieldKind, RECORDS};
pub use tpb_core::lint::{classify, Class};

/// The values a field's byte may legally hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    Opcode,
    /// SPEC §6.5; FACTS §2 \[H\].
    WaitMode,
    /// SPEC §6.5; FACTS §2 \[H\].
    UpdateMode,
    /// 0x86 `arg_type` ∈ {1 TENSOR, 2 ARRAY_OF_TENSOR} (SPEC §4; FACTS §8 \[H\]).
    ArgType,
    /// The shipped CCE ops (SPEC §6.2).
    CceOp,
    /// The generation's column (SPEC §0, §6.4).
    Dtype,
    /// SPEC §6.1.
    Kind,
    /// {0, 1} (0xDC `valid`, SPEC §5.2).
    Flag,
    /// A part of the 0x85 scratch descriptor (SPEC §3 #6, D-4).
    Scratch,
    /// An access pattern: raw bytes (SPEC §5.2).
    Ap,
    Any,
}

/// The closed domains: core's statement of each, and its table's name for messages.
const CLOSED: [(Domain, EnumDomain, &str); 7] = [
    (Domain::WaitMode, EnumDomain::WaitMode, "WAIT_MODE"),
    (Domain::UpdateMode, EnumDomain::UpdateMode, "UPDATE_MODE"),
    (Domain::ArgType, EnumDomain::ArgType, "ARG_TYPE"),
    (Domain::CceOp, EnumDomain::CceOp, "CCE AluOp"),
    (Domain::Dtype, EnumDomain::Dtype, "dtype"),
    (Domain::Kind, EnumDomain::CollectiveKind, "CollectiveKind"),
    (Domain::Flag, EnumDomain::Flag, "flag (0 or 1)"),
];

impl Domain {
    /// The legal values of a closed domain under `arch` (core's [`EnumDomain::admits`]; v4's
    /// dtype column adds tag 0x10: FACTS §6, SPEC §6.4).
    pub fn values_for(self, arch: Generation) -> Option<&'static [u8]> {
        static SETS: OnceLock<Vec<Vec<Vec<u8>>>> = OnceLock::new();
        let i = CLOSED.iter().position(|c| c.0 == self)?;
        let sets = SETS.get_or_init(|| {
            CLOSED
                .iter()
                .map(|&(_, d, _)| {
                    Generation::ALL
                        .iter()
                        .map(|a| (0..=255u8).filter(|&v| d.admits(v, *a)).collect())
                        .collect()
                })
                .collect()
        });
        let g = Generation::ALL.iter().position(|&x| x == arch)?;
        Some(sets[i][g].as_slice())
    }

    pub fn table(self) -> Option<&'static str> {
        CLOSED.iter().find(|c| c.0 == self).map(|c| c.2)
    }

    pub fn kind(self) -> Kind {
        match self {
            Domain::Ap => Kind::Bytes,
            Domain::CceOp | Domain::Kind => Kind::Name,
            _ => Kind::Int,
        }
    }
}

/// WAIT_MODE / UPDATE_MODE members in wire order (FACTS §2 \[H\]), from core's tables.
pub const WAIT_MEMBERS: [u8; tpb_core::events::WAIT_MODES.len()] =
    mode_bytes(&tpb_core::events::WAIT_MODES);
pub const UPDATE_MEMBERS: [u8; tpb_core::events::UPDATE_MODES.len()] =
    mode_bytes(&tpb_core::events::UPDATE_MODES);

const fn mode_bytes<const N: usize>(table: &[(u8, &str); N]) -> [u8; N] {
    let mut v = [0u8; N];
    let mut i = 0;
    while i < N {
        v[i] = table[i].0;
        i += 1;
    }
    v
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Field(Domain),
    /// Must be zero.
    Reserved,
    /// A constant the encoder stamps (`cross_core_enable`, `inst_word_len`).
    Const(u8),
    /// Bytes of an opcode without an encoder.
    Unknown,
}

/// One span of the layout: a SPEC §5.2 field name or `reserved`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub off: usize,
    pub len: usize,
    pub name: &'static str,
    pub role: Role,
}

fn span_of(f: &FieldDef) -> Span {
    let role = match f.kind {
        FieldKind::Opcode => Role::Field(Domain::Opcode),
        FieldKind::Constant(v) => Role::Const(v),
        FieldKind::Enum(e) => Role::Field(
            CLOSED
                .iter()
                .find(|c| c.1 == e)
                .map_or(Domain::Any, |c| c.0),
        ),
        FieldKind::Integer => Role::Field(Domain::Any),
        FieldKind::Scratch => Role::Field(Domain::Scratch),
        FieldKind::Ap => Role::Field(Domain::Ap),
        FieldKind::Reserved => Role::Reserved,
    };
    Span {
        off: f.offset,
        len: f.width,
        name: f.name,
        role,
    }
}

/// The spans of `opcode`'s bundle, all 64 bytes in order (not a record: the skeleton and one
/// `Unknown` body span).
pub fn layout(opcode: u8) -> Vec<Span> {
    if let Some(rec) = tpb_core::layout::record(opcode) {
        return rec.fields.iter().map(span_of).collect();
    }
    let mut spans: Vec<Span> = sync_skeleton::DEFS.iter().map(span_of).collect();
    let off = spans.last().map_or(0, |s| s.off + s.len);
    spans.push(Span {
        off,
        len: 64 - off,
        name: "body",
        role: Role::Unknown,
    });
    spans
}

/// Whether a CUSTOM_OP validator's reserved-zero predicate reads byte `off`: the reserved spans
/// after the SyncInfo band (SPEC §3 #5, §4 #5; bytes 2..3 are decode's).
pub fn validator_reserved(opcode: u8, off: usize) -> bool {
    off >= 0x0C && byte_role(opcode, off) == Some(Role::Reserved)
}

const _: () = assert!(OPCODES.len() < u8::MAX as usize);
/// The position of each opcode in [`OPCODES`] (`u8::MAX`: not a record).
const POSITION: [u8; 256] = {
    let mut at = [u8::MAX; 256];
    let mut i = 0;
    while i < OPCODES.len() {
        at[OPCODES[i] as usize] = i as u8;
        i += 1;
    }
    at
};

/// The layouts of the [`OPCODES`] and, per byte, its span's index (`u8::MAX`: none), computed
/// once: labels and violations ask for every byte of every generated image.
struct Cached {
    spans: [Vec<Span>; OPCODES.len()],
    at: [[u8; 64]; OPCODES.len()],
}

fn cached(opcode: u8) -> Option<(&'static [Span], &'static [u8; 64])> {
    static C: OnceLock<Cached> = OnceLock::new();
    let c = C.get_or_init(|| {
        let spans = OPCODES.map(layout);
        let at = std::array::from_fn(|i| {
            std::array::from_fn(|off| {
                spans[i]
                    .iter()
                    .position(|s: &Span| (s.off..s.off + s.len).contains(&off))
                    .and_then(|k| u8::try_from(k).ok())
                    .unwrap_or(u8::MAX)
            })
        });
        Cached { spans, at }
    });
    let i = usize::from(POSITION[usize::from(opcode)]);
    Some((c.spans.get(i)?.as_slice(), c.at.get(i)?))
}

/// Cached; empty for an opcode not of [`OPCODES`].
pub fn spans(opcode: u8) -> &'static [Span] {
    cached(opcode).map_or(&[], |(s, _)| s)
}

pub fn span_at(opcode: u8, off: usize) -> Option<&'static Span> {
    let (spans, at) = cached(opcode)?;
    spans.get(usize::from(*at.get(off)?))
}

pub fn byte_role(opcode: u8, off: usize) -> Option<Role> {
    span_at(opcode, off).map(|s| s.role)
}

/// The tag byte\[1\] the encoder stamps for `opcode` (SPEC §1; 0x00 for 0xDA, D-3).
pub fn tag_of(opcode: u8) -> u8 {
    match byte_role(opcode, 1) {
        Some(Role::Const(v)) => v,
        _ => 0x10,
    }
}

pub const OPCODES: [u8; RECORDS.len()] = tpb_core::layout::RECORD_OPCODES;

pub use tpb_core::mnemonics::mnemonic;

/// The JSON value kind of a SPEC §5.2 field: integer, SPEC §6 table name, or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Name,
    Bytes,
}

/// A field name of the layouts and the [`Domain::kind`] of its first span, from an
/// open-addressed table built once (every decoded or encoded field is read through it).
fn known_field(name: &str) -> Option<(&'static str, Kind)> {
    type Table = (u32, Vec<Option<(&'static str, Kind)>>);
    static TABLE: OnceLock<Table> = OnceLock::new();
    let (bits, slots) = TABLE.get_or_init(|| {
        let mut first: Vec<(&'static str, Kind)> = Vec::new();
        for s in OPCODES.iter().flat_map(|&op| spans(op)) {
            if let Role::Field(d) = s.role {
                if !first.iter().any(|(n, _)| *n == s.name) {
                    first.push((s.name, d.kind()));
                }
            }
        }
        // At most a quarter full: probes are short.
        let bits = (first.len() * 4)
            .next_power_of_two()
            .trailing_zeros()
            .max(4);
        let mut slots = vec![None; 1 << bits];
        for f in first {
            let mut i = name_hash(f.0, bits);
            while slots[i].is_some() {
                i = (i + 1) & (slots.len() - 1);
            }
            slots[i] = Some(f);
        }
        (bits, slots)
    });
    let mut i = name_hash(name, *bits);
    loop {
        match slots[i] {
            Some(f) if f.0 == name => return Some(f),
            Some(_) => i = (i + 1) & (slots.len() - 1),
            None => return None,
        }
    }
}

/// [`known_field`]'s slot for `name` in a table of `2^bits` slots.
fn name_hash(name: &str, bits: u32) -> usize {
    let b = name.as_bytes();
    let word = |s: &[u8]| {
        let mut w = [0u8; 8];
        w[..s.len()].copy_from_slice(s);
        u64::from_le_bytes(w)
    };
    let head = word(&b[..b.len().min(8)]);
    let tail = word(&b[b.len().saturating_sub(8)..]);
    let h = (head ^ tail.rotate_left(29) ^ b.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - bits)) as usize
}

/// `name` as a field name (the layouts' own text, else a copy) and its value kind
/// ([`Kind::Int`] for a name not in the layouts).
pub fn field(name: &str) -> (std::borrow::Cow<'static, str>, Kind) {
    match known_field(name) {
        Some((n, k)) => (n.into(), k),
        None => (name.to_string().into(), Kind::Int),
    }
}

/// `check`'s verdict on an instruction whose skeleton holds and whose body no record models.
pub const VALID_SKELETON: &str = "valid (skeleton; body not modelled)";

/// `valid_opcode`'s note: which generations have opcode `op` (SPEC §2, isa/opcodes.tsv).
pub fn membership_note(op: u8) -> String {
    let gens: Vec<&str> = tpb_core::generation::generations_with(op)
        .map(|g| g.name())
        .collect();
    match gens.as_slice() {
        [] => format!("0x{op:02X} is an opcode of no generation"),
        [one] => format!("0x{op:02X} is an opcode of {one} only"),
        many => format!("0x{op:02X} is an opcode of {}", many.join(", ")),
    }
}

/// `check`'s verdict on an instruction whose `predicate` failed at byte `offset`: `invalid:
/// <predicate>: <what> (byte 0xNN)`, the one text `check`, `explain`, `decode` and the report
/// print (SPEC §5.3 "Linting a stream").
pub fn invalid_text(op: u8, predicate: &str, offset: usize, value: u8) -> String {
    let detail = failure_detail(op, predicate, offset, value);
    // A decode field fails as itself: `invalid: kind 0x0A is not …`, not `kind: kind 0x0A …`.
    if detail.starts_with(&format!("{predicate} ")) {
        format!("invalid: {detail} (byte 0x{offset:02X})")
    } else {
        format!("invalid: {predicate}: {detail} (byte 0x{offset:02X})")
    }
}

/// What a failed predicate found at byte `offset`, naming the field and its value: `wait_mode
/// 0x08 is not a WAIT_MODE member`, `0x87 is an opcode of v2 only`.
pub fn failure_detail(op: u8, predicate: &str, offset: usize, value: u8) -> String {
    match predicate {
        "valid_opcode" => return membership_note(op),
        "is_custom_op_header_opcode" => return format!("opcode 0x{op:02X} is not 0x85"),
        "is_custom_op_payload_opcode" => return format!("opcode 0x{op:02X} is not 0x86"),
        _ => {}
    }
    let span = layout(op)
        .into_iter()
        .find(|s| (s.off..s.off + s.len).contains(&offset));
    let Some(span) = span else {
        return format!("byte 0x{offset:02X} is 0x{value:02X}");
    };
    let name = span.name;
    match span.role {
        // A side that blames a reserved byte that is zero claims a rule that holds here.
        Role::Reserved if value == 0 => {
            format!("reserved byte 0x{offset:02X} is 0x00: zero, the rule holds here")
        }
        Role::Reserved => format!("reserved byte 0x{offset:02X} is 0x{value:02X}, not zero"),
        Role::Const(v) => format!("{name} 0x{value:02X} is not 0x{v:02X}"),
        Role::Field(Domain::Scratch) => format!(
            "{name} 0x{value:02X}: the scratch-space fields are neither all zero nor all set"
        ),
        // The default generation's members: the text names no generation.
        Role::Field(d) => match (d.values_for(Generation::default()), d.table()) {
            (Some(vs), Some(table)) if !vs.contains(&value) => {
                format!("{name} 0x{value:02X} is not a {table} member")
            }
            _ if span.len > 1 => format!("{name} byte 0x{offset:02X} is 0x{value:02X}"),
            _ => format!("{name} is 0x{value:02X}"),
        },
        Role::Unknown => format!("{name} byte 0x{offset:02X} is 0x{value:02X}"),
    }
}

/// A byte a side's answer depends on, as its field and value: `arg_type 0x01 (byte 0x0F)`.
pub fn byte_detail(op: u8, offset: usize, value: u8) -> String {
    let span = layout(op)
        .into_iter()
        .find(|s| (s.off..s.off + s.len).contains(&offset));
    match span {
        Some(s) if s.role == Role::Reserved => {
            format!("reserved byte 0x{offset:02X} = 0x{value:02X} (byte 0x{offset:02X})")
        }
        Some(s) if s.len > 1 => format!(
            "{} byte 0x{offset:02X} = 0x{value:02X} (byte 0x{offset:02X})",
            s.name
        ),
        Some(s) => format!("{} 0x{value:02X} (byte 0x{offset:02X})", s.name),
        None => format!("byte 0x{offset:02X} = 0x{value:02X}"),
    }
}

/// `a == b` as eight inlined word compares (run on every judged case; the array `==` is an
/// out-of-line `memcmp` call).
#[inline]
pub fn same_bundle(a: &[u8; 64], b: &[u8; 64]) -> bool {
    let word = |x: &[u8; 64], i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&x[i * 8..i * 8 + 8]);
        u64::from_ne_bytes(w)
    };
    (0..8).fold(0u64, |acc, i| acc | (word(a, i) ^ word(b, i))) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_cover_64_bytes() {
        for op in OPCODES.into_iter().chain([0x01]) {
            let l = layout(op);
            let mut next = 0;
            for s in &l {
                assert_eq!(s.off, next, "opcode {op:#x} span {}", s.name);
                next += s.len;
            }
            assert_eq!(next, 64, "opcode {op:#x}");
        }
    }

    fn first_span_is_field(name: &str) -> bool {
        OPCODES
            .iter()
            .flat_map(|&op| layout(op))
            .any(|s| s.name == name && matches!(s.role, Role::Field(_)))
    }

    #[test]
    fn a_field_kind_is_the_kind_of_the_first_span_of_that_name() {
        let mut names: Vec<String> = vec!["no_such_field".into(), "".into(), "reserved".into()];
        for op in OPCODES {
            for s in layout(op) {
                // The name, and near misses of the hashed lookup: one byte
                // more, one less, the last one changed.
                let n = s.name;
                names.extend([n.into(), format!("{n}x"), n[..n.len() - 1].into()]);
                names.push(format!(
                    "{}{}",
                    &n[..n.len() - 1],
                    if n.ends_with('a') { 'b' } else { 'a' }
                ));
            }
        }
        let mut kinds = std::collections::BTreeSet::new();
        for name in &names {
            let name = name.as_str();
            let first = OPCODES
                .iter()
                .flat_map(|&op| layout(op))
                .find_map(|s| match s.role {
                    Role::Field(d) if s.name == name => Some(d.kind()),
                    _ => None,
                })
                .unwrap_or(Kind::Int);
            assert_eq!(field(name).1, first, "{name}");
            assert_eq!(field(name).0, name);
            let borrowed = matches!(field(name).0, std::borrow::Cow::Borrowed(_));
            assert_eq!(borrowed, first_span_is_field(name), "{name}");
            kinds.insert(format!("{first:?}"));
        }
        assert_eq!(
            kinds.len(),
            3,
            "names of every kind are looked up: {kinds:?}"
        );
    }

    #[test]
    fn span_at_is_the_span_of_the_layout_holding_the_byte() {
        for op in 0..=u8::MAX {
            let l = if OPCODES.contains(&op) {
                layout(op)
            } else {
                Vec::new()
            };
            assert_eq!(spans(op), l.as_slice(), "opcode {op:#x}");
            for off in 0..65 {
                let want = l.iter().find(|s| (s.off..s.off + s.len).contains(&off));
                assert_eq!(span_at(op, off), want, "opcode {op:#x} byte {off}");
            }
        }
    }

    #[test]
    fn same_bundle_is_byte_equality() {
        let a = [7u8; 64];
        assert!(super::same_bundle(&a, &a));
        for i in 0..64 {
            let mut b = a;
            b[i] ^= 0x80;
            assert!(!super::same_bundle(&a, &b), "byte {i}");
        }
    }
}
