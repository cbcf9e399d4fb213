//! Domain reach: the value classes of every field of every opcode's bundle
//! (SPEC §1–§5), and which of them a set of cases hits.
//!
//! A *class* is a slice of a field's domain a bug could hide in: each enum
//! member and the non-members, the table edges, zero / one / all-ones / other
//! for integers, zero / nonzero for reserved spans, and, per opcode, *equal
//! nonzero values in two reserved bytes* (the correlated faults that single-byte
//! mutation never builds). Streams (SPEC §5.3) have classes for the number of
//! arguments of a group (0..=255 in bands), the number of groups, and other
//! opcodes mixed in; linted streams (SPEC §5.3 "Linting a stream") have classes for each
//! whole group's argument count, each stream error, each verdict kind and each instruction
//! length (`lint.*`); sync programs (SPEC §8) have classes for their shapes
//! (pseudo runs between producer and consumer, fan-out, several engines,
//! long chains); field `generation` counts the classified cases per
//! generation of the run. [`Reach`] counts hits; [`Reach::unhit`] lists the declared
//! classes a run never exercised.

use crate::generators::sync_program::{Shape, PSEUDO_RUNS};
use crate::layout::{layout, Role, Span, OPCODES, UPDATE_MEMBERS, WAIT_MEMBERS};
use std::collections::BTreeMap;

/// `0x00` … `0xFF`: the class names of single byte values.
static HEX: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| (0..=255u8).map(|b| format!("0x{b:02X}")).collect());

fn hex(b: u8) -> &'static str {
    HEX.get(usize::from(b)).map_or("", String::as_str)
}

/// One class per member of an enum byte (SPEC §6.5: [`WAIT_MEMBERS`], [`UPDATE_MEMBERS`]),
/// in member order, then the non-members.
fn member_classes(members: &[u8]) -> Vec<&'static str> {
    members
        .iter()
        .map(|&m| hex(m))
        .chain(["non-member"])
        .collect()
}

/// The class of `b` among `members` (see [`member_classes`]).
fn member_class(members: &[u8], b: u8) -> &'static str {
    if members.contains(&b) {
        hex(b)
    } else {
        "non-member"
    }
}

/// A class of a one-byte field: byte 0 in `lo..=hi`, and its name.
type Band = (u8, u8, &'static str);

/// The classes of the one-byte fields classed by value bands, in report order (the first
/// band holding the byte is its class).
fn byte_bands(name: &str) -> Option<&'static [Band]> {
    Some(match name {
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

/// The classes of a span, in report order.
fn span_classes(s: &Span) -> Vec<&'static str> {
    let fixed: &[&'static str] = match (s.role, s.name) {
        (Role::Reserved, _) => &["zero", "nonzero"],
        (Role::Const(_), _) => &["stamp", "other"],
        (Role::Unknown, _) => &[],
        (_, "opcode") => &[],
        // SPEC §6.5 (FACTS §2 [H]): each WAIT_MODE / UPDATE_MODE member, and the rest
        (_, "wait_mode") => return member_classes(&WAIT_MEMBERS),
        (_, "update_mode") => return member_classes(&UPDATE_MEMBERS),
        (_, name) if byte_bands(name).is_some() => {
            return byte_bands(name)
                .unwrap_or_default()
                .iter()
                .map(|b| b.2)
                .collect()
        }
        _ if s.len > 8 => &["zero", "all-ones", "other"],
        _ => &["zero", "one", "max", "other"],
    };
    fixed.to_vec()
}

fn span_class(s: &Span, v: &[u8]) -> &'static str {
    let b0 = v.first().copied().unwrap_or(0);
    let zero = v.iter().all(|&x| x == 0);
    let ones = v.iter().all(|&x| x == 0xFF);
    match (s.role, s.name) {
        (Role::Reserved, _) if zero => "zero",
        (Role::Reserved, _) => "nonzero",
        (Role::Const(c), _) if b0 == c => "stamp",
        (Role::Const(_), _) => "other",
        (_, "wait_mode") => member_class(&WAIT_MEMBERS, b0),
        (_, "update_mode") => member_class(&UPDATE_MEMBERS, b0),
        (_, name) if byte_bands(name).is_some() => byte_bands(name)
            .unwrap_or_default()
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

/// Classes of the bundle as a whole, per opcode.
const BUNDLE_CLASSES: [&str; 1] = ["equal nonzero reserved pair"];

/// Classes of `opcode` (byte 0 over the whole u8 domain).
const OPCODE_CLASSES: [&str; 3] = ["one of the eleven", "other roster", "non-roster"];

/// Group-argument-count bands (SPEC §5.3: `num_arguments` is a u8).
const ARG_BANDS: [&str; 7] = ["0", "1", "2..3", "4..15", "16..127", "128..254", "255"];
/// Groups per parsed stream.
const GROUP_COUNTS: [&str; 3] = ["1", "2..4", "5+"];
/// Other bundles mixed into a parsed stream.
const MIXED: [&str; 2] = ["groups only", "other opcodes mixed in"];
/// Stream errors of a linted stream (SPEC §5.3 "Linting a stream", its names).
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
/// Instruction lengths on the wire (isa/opcodes.tsv `length`).
const LINT_LENGTHS: [&str; 2] = ["64", "128"];
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
/// Sync program shapes beyond the pseudo runs ([`Shape`]).
const SYNC_SHAPES: [&str; 3] = ["fan-out", "several engines", "long chain"];

fn arg_band(n: usize) -> &'static str {
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

/// One field's declared classes with their hit counts.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Field {
    key: String,
    classes: Vec<(&'static str, u64)>,
}

/// Per opcode of [`OPCODES`]: its classified spans (with their field index)
/// and the index of its `bundle` field (equal reserved pair; none for an
/// opcode with fewer than two reserved bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
struct OpFields {
    spans: Vec<(Span, usize)>,
    bundle: Option<usize>,
}

/// Hit counts per `(field, class)`; every declared class is present (0 =
/// unhit). Counting is by index (no string work per case), so the gate can
/// classify its cases while it runs them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    fields: Vec<Field>,
    /// Opcode byte → index into `ops` (bundles declared).
    by_op: Option<Box<[Option<u8>; 256]>>,
    ops: Vec<OpFields>,
    /// Field index of `opcode` (bundles declared).
    opcode: Option<usize>,
    /// Field indices of `stream.num_arguments`, `.groups`, `.mix` (streams declared).
    stream: Option<[usize; 3]>,
    /// Field index of `generation` (generations declared).
    generation: Option<usize>,
    /// Field indices of `lint.num_arguments`, `lint.stream_error`, `lint.verdict`,
    /// `lint.length` (linted streams declared).
    lint: Option<[usize; 4]>,
    /// Field indices of `sync.pseudo_run`, `sync.shape` (sync shapes declared).
    sync: Option<[usize; 2]>,
    /// Field index of `engine_sync.finding` (engine programs declared).
    engine_sync: Option<usize>,
}

impl Reach {
    /// The declared classes of bundles (every opcode's fields) and, with
    /// `streams`, of streams; all at zero.
    pub fn declared(bundles: bool, streams: bool) -> Reach {
        let mut r = Reach::default();
        if bundles {
            r.declare_bundles();
        }
        if streams {
            r.declare_streams();
        }
        r
    }

    /// Declares the classes of every opcode's bundle fields (once).
    pub fn declare_bundles(&mut self) {
        if self.opcode.is_some() {
            return;
        }
        self.opcode = Some(self.decl("opcode".into(), &OPCODE_CLASSES));
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

    /// Declares the classes of parsed custom-op streams (once).
    pub fn declare_streams(&mut self) {
        if self.stream.is_none() {
            self.stream = Some([
                self.decl("stream.num_arguments".into(), &ARG_BANDS),
                self.decl("stream.groups".into(), &GROUP_COUNTS),
                self.decl("stream.mix".into(), &MIXED),
            ]);
        }
    }

    /// Declares the classes of linted instruction streams (once, SPEC §5.3 "Linting a
    /// stream"): the `num_arguments` of each whole group (the bands of
    /// `stream.num_arguments`), each stream error, each verdict kind, each instruction length.
    pub fn declare_lint(&mut self) {
        if self.lint.is_none() {
            self.lint = Some([
                self.decl("lint.num_arguments".into(), &ARG_BANDS),
                self.decl("lint.stream_error".into(), &STREAM_ERRORS),
                self.decl("lint.verdict".into(), &LINT_VERDICTS),
                self.decl("lint.length".into(), &LINT_LENGTHS),
            ]);
        }
    }

    /// Counts one linted instruction: its length on the wire and its verdict (`valid`,
    /// `skeleton`, or the failed predicate).
    pub fn lint_instruction(&mut self, length: usize, verdict: &str) {
        let Some([_, _, verdicts, lengths]) = self.lint else {
            return;
        };
        self.hit(lengths, if length > 64 { "128" } else { "64" });
        let class = match verdict {
            "valid" | "skeleton" => verdict,
            "valid_opcode" => "invalid: valid_opcode",
            "inst_word_len" => "invalid: inst_word_len",
            "has_valid_neuron_events" => "invalid: has_valid_neuron_events",
            _ => "invalid: body",
        };
        self.hit(verdicts, class);
    }

    /// Counts one whole group of a linted stream (its header's `num_arguments`; every payload
    /// it announces arrived).
    pub fn lint_whole_group(&mut self, num_arguments: u8) {
        if let Some([args, _, _, _]) = self.lint {
            self.hit(args, arg_band(usize::from(num_arguments)));
        }
    }

    /// Counts one stream error of a linted stream, by its SPEC §5.3 name.
    pub fn lint_stream_error(&mut self, name: &str) {
        if let Some([_, errors, _, _]) = self.lint {
            self.hit(errors, name);
        }
    }

    /// Declares the classes of engine programs (once, SPEC §11): each finding kind, `clean`,
    /// and a deadlock beside an unsatisfiable wait in one program.
    pub fn declare_engine_sync(&mut self) {
        if self.engine_sync.is_none() {
            self.engine_sync = Some(self.decl("engine_sync.finding".into(), &ENGINE_SYNC_FINDINGS));
        }
    }

    /// Counts one class of `engine_sync.finding`.
    pub fn engine_sync_finding(&mut self, class: &str) {
        if let Some(f) = self.engine_sync {
            self.hit(f, class);
        }
    }

    /// Declares the program-shape classes of sync programs (once): the run of
    /// pseudo instructions between a producer and its consumer (0, 1, 2, 3+)
    /// and the shapes fan-out, several engines, long chain
    /// ([`crate::generators::sync_program::shape`]).
    pub fn declare_sync_shapes(&mut self) {
        if self.sync.is_none() {
            self.sync = Some([
                self.decl("sync.pseudo_run".into(), &PSEUDO_RUNS),
                self.decl("sync.shape".into(), &SYNC_SHAPES),
            ]);
        }
    }

    /// Counts the shapes of one sync program.
    pub fn sync_shape(&mut self, s: &Shape) {
        let Some([run, shape]) = self.sync else {
            return;
        };
        for (band, hit) in PSEUDO_RUNS.iter().zip(s.pseudo_runs) {
            if hit {
                self.hit(run, band);
            }
        }
        for (class, hit) in SYNC_SHAPES
            .iter()
            .zip([s.fan_out, s.several_engines, s.long_chain])
        {
            if hit {
                self.hit(shape, class);
            }
        }
    }

    /// Declares field `generation`, one class per generation name (`v2` …): a
    /// classified case counts under the generation it ran under.
    pub fn declare_generations(&mut self, names: &[&'static str]) {
        self.generation = Some(self.decl("generation".into(), names));
    }

    /// Counts one classified case under generation `name`.
    pub fn generation(&mut self, name: &str) {
        if let Some(f) = self.generation {
            self.hit(f, name);
        }
    }

    /// Declares `classes` of field `key` (added to an existing field of that
    /// key); returns the field's index.
    fn decl(&mut self, key: String, classes: &[&'static str]) -> usize {
        let at = self.fields.iter().position(|f| f.key == key);
        let i = at.unwrap_or_else(|| {
            let classes = Vec::new();
            self.fields.push(Field { key, classes });
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

    fn hit(&mut self, field: usize, class: &str) {
        self.hit_n(field, class, 1);
    }

    fn hit_n(&mut self, field: usize, class: &str, n: u64) {
        if let Some(c) = self.fields[field]
            .classes
            .iter_mut()
            .find(|(x, _)| *x == class)
        {
            c.1 += n;
        }
    }

    /// Counts the classes one bundle hits (fields by byte 0's layout).
    pub fn bundle(&mut self, b: &[u8; 64]) {
        let op = b[0];
        let Some(opcode) = self.opcode else {
            return;
        };
        let oc = if OPCODES.contains(&op) {
            "one of the eleven"
        } else if crate::generation::Generation::V2.is_valid_opcode(op) {
            "other roster"
        } else {
            "non-roster"
        };
        self.hit(opcode, oc);
        let Some(k) = self.by_op.as_ref().and_then(|m| m[usize::from(op)]) else {
            return;
        };
        let k = usize::from(k);
        let mut seen = [false; 256];
        let mut pair = false;
        for j in 0..self.ops[k].spans.len() {
            let (s, field) = self.ops[k].spans[j];
            let v = &b[s.off..s.off + s.len];
            self.hit(field, span_class(&s, v));
            if s.role == Role::Reserved {
                for &x in v.iter().filter(|&&x| x != 0) {
                    pair |= seen[usize::from(x)];
                    seen[usize::from(x)] = true;
                }
            }
        }
        if let (true, Some(f)) = (pair, self.ops[k].bundle) {
            self.hit(f, "equal nonzero reserved pair");
        }
    }

    /// Counts the classes of one parsed stream: `groups` holds each group's
    /// argument count, `others` the non-group bundles.
    pub fn stream(&mut self, groups: &[usize], others: usize) {
        let Some([args, count, mix]) = self.stream else {
            return;
        };
        for &n in groups {
            self.hit(args, arg_band(n));
        }
        let g = match groups.len() {
            0 => return,
            1 => "1",
            2..=4 => "2..4",
            _ => "5+",
        };
        self.hit(count, g);
        self.hit(mix, MIXED[usize::from(others > 0)]);
    }

    /// Counts the classes of the stream a stream-program input builds
    /// ([`crate::judge::stream_from_input`], parsed by core); nothing when
    /// core refuses the stream.
    pub fn stream_program(&mut self, program: &[u8]) {
        if self.stream.is_none() {
            return;
        }
        let stream = crate::judge::stream_from_input(program);
        if let Ok(items) =
            tpb_core::stream::parse_custom_op_stream(&stream, tpb_core::Generation::V2)
        {
            let mut groups = Vec::new();
            let mut others = 0;
            for it in items {
                match it {
                    tpb_core::stream::StreamItem::Group { args, .. } => groups.push(args.len()),
                    tpb_core::stream::StreamItem::Other { .. } => others += 1,
                }
            }
            self.stream(&groups, others);
        }
    }

    /// Adds another run's counts (fields it declares that this one lacks are
    /// added too).
    pub fn merge(&mut self, other: &Reach) {
        if self.fields.is_empty() {
            *self = other.clone();
            return;
        }
        for f in &other.fields {
            let names: Vec<&'static str> = f.classes.iter().map(|(c, _)| *c).collect();
            let i = self.decl(f.key.clone(), &names);
            for (class, n) in &f.classes {
                self.hit_n(i, class, *n);
            }
        }
    }

    /// True when nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Per field (sorted by name): its classes with their hit counts, in
    /// declaration order.
    pub fn table(&self) -> BTreeMap<&str, &[(&'static str, u64)]> {
        self.fields
            .iter()
            .map(|f| (f.key.as_str(), f.classes.as_slice()))
            .collect()
    }

    /// Hits of `class` of `field` (`None` when not declared).
    pub fn count(&self, field: &str, class: &str) -> Option<u64> {
        let f = self.fields.iter().find(|f| f.key == field)?;
        f.classes.iter().find(|(c, _)| *c == class).map(|(_, n)| *n)
    }

    /// The declared classes with zero hits, as `field: class`, sorted by field.
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
