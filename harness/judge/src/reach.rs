//! Domain reach: the value classes of every field of every opcode's bundle (SPEC §1–§5), and
//! of streams, linted streams, sync programs and engine programs ([`Field`]), and which of
//! them a set of cases hits. A *class* is a slice of a field's domain a bug could hide in:
//! each enum member and the non-members, table edges, zero / one / all-ones / other, zero /
//! nonzero reserved spans, and per opcode *equal nonzero values in two reserved bytes* (the
//! correlated faults single-byte mutation never builds). [`Reach::unhit`] lists the declared
//! classes a run never exercised.

use crate::generators::sync_program::PSEUDO_RUNS;
use crate::layout::{layout, Role, Span, OPCODES, UPDATE_MEMBERS, WAIT_MEMBERS};
use std::collections::BTreeMap;
use tpb_core::stream::{parse_custom_op_stream, StreamItem};

/// `0x00` … `0xFF`: the class names of single byte values.
static HEX: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| (0..=255u8).map(|b| format!("0x{b:02X}")).collect());

fn hex(b: u8) -> &'static str {
    HEX.get(usize::from(b)).map_or("", String::as_str)
}

/// A class of a one-byte field: byte 0 in `lo..=hi`, and its name.
type Band = (u8, u8, &'static str);

/// One band per member of an enum byte (SPEC §6.5, FACTS §2 [H]: each WAIT_MODE /
/// UPDATE_MODE member), in member order, then the non-members.
static MEMBER_BANDS: std::sync::LazyLock<[Vec<Band>; 2]> = std::sync::LazyLock::new(|| {
    [&WAIT_MEMBERS[..], &UPDATE_MEMBERS].map(|members| {
        let one = members.iter().map(|&m| (m, m, hex(m)));
        one.chain([(0, 0xFF, "non-member")]).collect()
    })
});

/// The value bands of a one-byte field, in report order (the first holding the byte wins).
fn byte_bands(name: &str) -> Option<&'static [Band]> {
    Some(match name {
        "wait_mode" => &MEMBER_BANDS[0],
        "update_mode" => &MEMBER_BANDS[1],
        // FACTS §8 [H]: TENSOR, ARRAY_OF_TENSOR
        "arg_type" => &[(1, 1, "0x01"), (2, 2, "0x02"), (0, 0xFF, "non-member")],
        // SPEC §6.2 shipped CCE ops (D-13)
        "cce_op" => &[(0, 0, "0x00"), (4, 4, "0x04"), (0, 0xFF, "non-member")],
        // SPEC §6.4 wire tags 0x01..=0x10
        "dtype" | "src_dtype" | "dst_dtype" => &DTYPE_BANDS,
        // SPEC §6.1 CollectiveKind wire bytes 0x01..=0x09
        "kind" => &KIND_BANDS,
        // D-7
        "valid" => &[(0, 0, "0"), (1, 1, "1"), (0, 0xFF, "other")],
        _ => return None,
    })
}

const DTYPE_BANDS: [Band; 5] = [
    (0x01, 0x01, "0x01"),
    (0x02, 0x0F, "0x02..0x0F"),
    (0x10, 0x10, "0x10"),
    (0x00, 0x00, "0x00"),
    (0x11, 0xFF, "0x11..0xFF"),
];
const KIND_BANDS: [Band; 5] = [
    (0x01, 0x01, "0x01"),
    (0x02, 0x08, "0x02..0x08"),
    (0x09, 0x09, "0x09"),
    (0x00, 0x00, "0x00"),
    (0x0A, 0xFF, "0x0A..0xFF"),
];

fn span_classes(s: &Span) -> Vec<&'static str> {
    let fixed: &[&'static str] = match (s.role, s.name) {
        (Role::Reserved, _) => &["zero", "nonzero"],
        (Role::Const(_), _) => &["stamp", "other"],
        (Role::Unknown, _) | (_, "opcode") => &[],
        (_, name) => match byte_bands(name) {
            Some(bands) => return bands.iter().map(|b| b.2).collect(),
            None if s.len > 8 => &["zero", "all-ones", "other"],
            None => &["zero", "one", "max", "other"],
        },
    };
    fixed.to_vec()
}

fn span_class(s: &Span, v: &[u8]) -> &'static str {
    let b0 = v.first().copied().unwrap_or(0);
    let zero = v.iter().all(|&x| x == 0);
    let ones = v.iter().all(|&x| x == 0xFF);
    let bands = || byte_bands(s.name).unwrap_or_default();
    match s.role {
        Role::Reserved if zero => "zero",
        Role::Reserved => "nonzero",
        Role::Const(c) if b0 == c => "stamp",
        Role::Const(_) => "other",
        _ if !bands().is_empty() => bands()
            .iter()
            .find(|&&(lo, hi, _)| (lo..=hi).contains(&b0))
            .map_or("other", |b| b.2),
        _ if zero => "zero",
        _ if s.len > 8 && ones => "all-ones",
        _ if s.len > 8 => "other",
        _ if b0 == 1 && v.iter().skip(1).all(|&x| x == 0) => "one",
        _ if ones => "max",
        _ => "other",
    }
}

const BUNDLE_CLASSES: [&str; 1] = ["equal nonzero reserved pair"];

/// Group-argument-count bands (SPEC §5.3: `num_arguments` is a u8).
const ARG_BANDS: [&str; 7] = ["0", "1", "2..3", "4..15", "16..127", "128..254", "255"];
/// Stream errors of a linted stream (SPEC §5.3 "Linting a stream").
pub const STREAM_ERRORS: [&str; 7] = [
    "payload_count_mismatch",
    "stray_payload",
    "short_group",
    "missing_leg",
    "leg_mismatch",
    "stray_leg",
    "truncated_instruction",
];
/// Verdicts of a linted instruction (SPEC §5.3's verdict table: the skeleton predicates by
/// name, every body predicate as `invalid: body`).
pub const LINT_VERDICTS: [&str; 6] = [
    "valid",
    "skeleton",
    "invalid: valid_opcode",
    "invalid: inst_word_len",
    "invalid: has_valid_neuron_events",
    "invalid: body",
];
/// What the SPEC §11 engine model found in a program: each finding kind, or nothing.
pub const ENGINE_SYNC_FINDINGS: [&str; 9] = [
    "clean",
    "deadlock",
    "unsatisfiable_wait",
    "unset_event",
    "semaphore_underflow",
    "semaphore_overflow",
    "unconsumed_update",
    "analysis_stopped",
    "deadlock+unsatisfiable_wait",
];
/// Sync program shapes beyond the pseudo runs ([`crate::generators::sync_program::Shape`]).
pub const SYNC_SHAPES: [&str; 3] = ["fan-out", "several engines", "long chain"];

/// The fields besides each opcode's own, declared and counted by the kind whose cases they
/// classify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Opcode,
    /// A parsed custom-op stream's groups' argument counts, groups, other bundles mixed in.
    StreamArguments,
    StreamGroups,
    StreamMix,
    /// SPEC §5.3 "Linting a stream": whole groups' argument counts, stream errors, verdict
    /// kinds, instruction lengths (isa/opcodes.tsv `length`).
    LintArguments,
    LintStreamError,
    LintVerdict,
    LintLength,
    /// SPEC §11.
    EngineSyncFinding,
    /// The run of pseudo instructions between a producer and its consumer.
    SyncPseudoRun,
    SyncShape,
    /// One class per generation of the run; a classified case counts under its own.
    Generation,
}

pub const STREAM: [Field; 3] = [
    Field::StreamArguments,
    Field::StreamGroups,
    Field::StreamMix,
];
pub const LINT: [Field; 4] = [
    Field::LintArguments,
    Field::LintStreamError,
    Field::LintVerdict,
    Field::LintLength,
];

impl Field {
    fn spec(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Field::Opcode => (
                "opcode",
                &["one of the eleven", "other roster", "non-roster"],
            ),
            Field::StreamArguments => ("stream.num_arguments", &ARG_BANDS),
            Field::StreamGroups => ("stream.groups", &["1", "2..4", "5+"]),
            Field::StreamMix => ("stream.mix", &["groups only", "other opcodes mixed in"]),
            Field::LintArguments => ("lint.num_arguments", &ARG_BANDS),
            Field::LintStreamError => ("lint.stream_error", &STREAM_ERRORS),
            Field::LintVerdict => ("lint.verdict", &LINT_VERDICTS),
            Field::LintLength => ("lint.length", &["64", "128"]),
            Field::EngineSyncFinding => ("engine_sync.finding", &ENGINE_SYNC_FINDINGS),
            Field::SyncPseudoRun => ("sync.pseudo_run", &PSEUDO_RUNS),
            Field::SyncShape => ("sync.shape", &SYNC_SHAPES),
            Field::Generation => ("generation", &[]),
        }
    }
}

pub fn arg_band(n: usize) -> &'static str {
    match n {
        0 => "0",
        1 => "1",
        2..=3 => "2..3",
        4..=15 => "4..15",
        16..=127 => "16..127",
        128..=254 => "128..254",
        _ => "255",
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Counts {
    key: String,
    classes: Vec<(&'static str, u64)>,
}

/// Per opcode: its classified spans (with their field index) and its `bundle` field's index
/// (equal reserved pair; none with fewer than two reserved bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
struct OpFields {
    spans: Vec<(Span, usize)>,
    bundle: Option<usize>,
}

/// Hit counts per `(field, class)`; every declared class is present (0 = unhit). Counting is
/// by index (no string work per case), so the gate classifies cases while it runs them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    fields: Vec<Counts>,
    by_op: Option<Box<[Option<u8>; 256]>>,
    ops: Vec<OpFields>,
    named: [Option<usize>; Field::Generation as usize + 1],
}

impl Reach {
    /// Declares the classes of every opcode's bundle fields (once).
    pub fn declare_bundles(&mut self) {
        if self.by_op.is_some() {
            return;
        }
        self.declare(&[Field::Opcode]);
        let mut by_op = Box::new([None; 256]);
        for (k, &op) in OPCODES.iter().enumerate() {
            let spans = layout(op)
                .into_iter()
                .filter(|s| !span_classes(s).is_empty())
                .map(|s| {
                    let i = self.decl(key(op, &s), &span_classes(&s));
                    (s, i)
                })
                .collect();
            // A pair needs two reserved bytes (0xD9 has one since bytes 2..3 are
            // debug_cmd / debug_hint, FACTS §2 [H]).
            let reserved: usize = layout(op)
                .iter()
                .filter(|s| s.role == Role::Reserved)
                .map(|s| s.len)
                .sum();
            let bundle =
                (reserved >= 2).then(|| self.decl(format!("0x{op:02X}.bundle"), &BUNDLE_CLASSES));
            self.ops.push(OpFields { spans, bundle });
            by_op[usize::from(op)] = u8::try_from(k).ok();
        }
        self.by_op = Some(by_op);
    }

    pub fn declare(&mut self, fields: &[Field]) {
        for &f in fields {
            self.declare_with(f, f.spec().1);
        }
    }

    pub fn declare_with(&mut self, f: Field, classes: &[&'static str]) {
        self.named[f as usize] = Some(self.decl(f.spec().0.into(), classes));
    }

    /// Counts one hit of `class` of `f` (nothing when `f` is undeclared).
    pub fn hit(&mut self, f: Field, class: &str) {
        if let Some(i) = self.named[f as usize] {
            self.add(i, class, 1);
        }
    }

    /// Declares `classes` of field `key` (added to those it has); its index.
    fn decl(&mut self, key: String, classes: &[&'static str]) -> usize {
        let at = self.fields.iter().position(|f| f.key == key);
        let i = at.unwrap_or_else(|| {
            let classes = Vec::new();
            self.fields.push(Counts { key, classes });
            self.fields.len() - 1
        });
        let f = &mut self.fields[i];
        for c in classes {
            if !f.classes.iter().any(|(x, _)| x == c) {
                f.classes.push((*c, 0));
            }
        }
        i
    }

    fn add(&mut self, field: usize, class: &str, n: u64) {
        if let Some(c) = self.fields[field]
            .classes
            .iter_mut()
            .find(|(x, _)| *x == class)
        {
            c.1 += n;
        }
    }

    pub fn bundle(&mut self, b: &[u8; 64]) {
        let op = b[0];
        let Some(by_op) = &self.by_op else {
            return;
        };
        let at = by_op[usize::from(op)];
        let oc = if OPCODES.contains(&op) {
            "one of the eleven"
        } else if crate::generation::Generation::V2.is_valid_opcode(op) {
            "other roster"
        } else {
            "non-roster"
        };
        self.hit(Field::Opcode, oc);
        let Some(k) = at else {
            return;
        };
        let k = usize::from(k);
        let mut seen = [false; 256];
        let mut pair = false;
        for j in 0..self.ops[k].spans.len() {
            let (s, field) = self.ops[k].spans[j];
            let v = &b[s.off..s.off + s.len];
            self.add(field, span_class(&s, v), 1);
            if s.role == Role::Reserved {
                for &x in v.iter().filter(|&&x| x != 0) {
                    pair |= seen[usize::from(x)];
                    seen[usize::from(x)] = true;
                }
            }
        }
        if let (true, Some(f)) = (pair, self.ops[k].bundle) {
            self.add(f, BUNDLE_CLASSES[0], 1);
        }
    }

    /// Counts the stream a stream-program input builds, as core parses it (nothing if refused):
    /// each group's argument count, the groups, whether other bundles are mixed in.
    pub fn stream_program(&mut self, program: &[u8]) {
        if self.named[Field::StreamArguments as usize].is_none() {
            return;
        }
        let stream = crate::judge::stream_from_input(program);
        let Ok(items) = parse_custom_op_stream(&stream, crate::generation::Generation::V2) else {
            return;
        };
        let (mut groups, mut others) = (0, false);
        for it in items {
            match it {
                StreamItem::Group { args, .. } => {
                    groups += 1;
                    self.hit(Field::StreamArguments, arg_band(args.len()));
                }
                StreamItem::Other { .. } => others = true,
            }
        }
        let g = match groups {
            0 => return,
            1 => "1",
            2..=4 => "2..4",
            _ => "5+",
        };
        self.hit(Field::StreamGroups, g);
        self.hit(
            Field::StreamMix,
            Field::StreamMix.spec().1[usize::from(others)],
        );
    }

    /// Adds another run's counts (and the fields it declares that this one lacks).
    pub fn merge(&mut self, other: &Reach) {
        if self.fields.is_empty() {
            *self = other.clone();
            return;
        }
        for f in &other.fields {
            let names: Vec<&'static str> = f.classes.iter().map(|(c, _)| *c).collect();
            let i = self.decl(f.key.clone(), &names);
            for (class, n) in &f.classes {
                self.add(i, class, *n);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Per field (sorted by name): its classes with their hit counts, in declaration order.
    pub fn table(&self) -> BTreeMap<&str, &[(&'static str, u64)]> {
        self.fields
            .iter()
            .map(|f| (f.key.as_str(), f.classes.as_slice()))
            .collect()
    }

    /// The declared classes with zero hits, as `field: class`.
    pub fn unhit(&self) -> Vec<String> {
        self.table()
            .iter()
            .flat_map(|(k, cs)| {
                cs.iter()
                    .filter(|(_, n)| *n == 0)
                    .map(move |(c, _)| format!("{k}: {c}"))
            })
            .collect()
    }
}

fn key(op: u8, s: &Span) -> String {
    if s.role == Role::Reserved {
        format!("0x{op:02X}.reserved@0x{:02X}", s.off)
    } else {
        format!("0x{op:02X}.{}", s.name)
    }
}
