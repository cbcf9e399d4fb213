//! Domain reach: the value classes of every field of every opcode's bundle
//! (SPEC §1–§5), and which of them a set of cases hits.
//!
//! A *class* is a slice of a field's domain a bug could hide in: each enum
//! member and the non-members, the table edges, zero / one / all-ones / other
//! for integers, zero / nonzero for reserved spans, and, per opcode, *equal
//! nonzero values in two reserved bytes* (the correlated faults that single-byte
//! mutation never builds). Streams (SPEC §5.3) have classes for the number of
//! arguments of a group (0..=255 in bands), the number of groups, and other
//! opcodes mixed in. [`Reach`] counts hits; [`Reach::unhit`] lists the declared
//! classes a run never exercised.

use crate::layout::{layout, Role, Span, OPCODES};
use std::collections::BTreeMap;

/// The classes of a span, in report order.
fn span_classes(s: &Span) -> &'static [&'static str] {
    match (s.role, s.name) {
        (Role::Reserved, _) => &["zero", "nonzero"],
        (Role::Const(_), _) => &["stamp", "other"],
        (Role::Unknown, _) => &[],
        (_, "opcode") => &[],
        // SPEC §1 / D-1 (F§2): wire wait modes
        (_, "sync.wait_mode") => &["0x00", "0x05", "0x85", "non-member"],
        (_, "sync.update_mode") => &["0x00", "0x01", "non-member"],
        // SPEC §6.2 shipped CCE ops (D-13)
        (_, "cce_op") => &["0x00", "0x04", "non-member"],
        // SPEC §6.4 wire tags 0x01..=0x10
        (_, "dtype" | "src_dtype" | "dst_dtype") => {
            &["0x01", "0x02..0x0F", "0x10", "0x00", "0x11..0xFF"]
        }
        // SPEC §6.1 CollectiveKind wire bytes 0x01..=0x09
        (_, "kind") => &["0x01", "0x02..0x08", "0x09", "0x00", "0x0A..0xFF"],
        // D-7
        (_, "valid") => &["0", "1", "other"],
        _ if s.len > 8 => &["zero", "all-ones", "other"],
        _ => &["zero", "one", "max", "other"],
    }
}

fn span_class(s: &Span, v: &[u8]) -> &'static str {
    let b0 = v.first().copied().unwrap_or(0);
    let zero = v.iter().all(|&x| x == 0);
    let ones = v.iter().all(|&x| x == 0xFF);
    match (s.role, s.name) {
        (Role::Reserved, _) => {
            if zero {
                "zero"
            } else {
                "nonzero"
            }
        }
        (Role::Const(c), _) => {
            if b0 == c {
                "stamp"
            } else {
                "other"
            }
        }
        (_, "sync.wait_mode") => match b0 {
            0x00 => "0x00",
            0x05 => "0x05",
            0x85 => "0x85",
            _ => "non-member",
        },
        (_, "sync.update_mode") => match b0 {
            0x00 => "0x00",
            0x01 => "0x01",
            _ => "non-member",
        },
        (_, "cce_op") => match b0 {
            0x00 => "0x00",
            0x04 => "0x04",
            _ => "non-member",
        },
        (_, "dtype" | "src_dtype" | "dst_dtype") => match b0 {
            0x00 => "0x00",
            0x01 => "0x01",
            0x02..=0x0F => "0x02..0x0F",
            0x10 => "0x10",
            _ => "0x11..0xFF",
        },
        (_, "kind") => match b0 {
            0x00 => "0x00",
            0x01 => "0x01",
            0x02..=0x08 => "0x02..0x08",
            0x09 => "0x09",
            _ => "0x0A..0xFF",
        },
        (_, "valid") => match b0 {
            0 => "0",
            1 => "1",
            _ => "other",
        },
        _ if s.len > 8 => {
            if zero {
                "zero"
            } else if ones {
                "all-ones"
            } else {
                "other"
            }
        }
        _ => {
            let one = b0 == 1 && v.iter().skip(1).all(|&x| x == 0);
            if zero {
                "zero"
            } else if one {
                "one"
            } else if ones {
                "max"
            } else {
                "other"
            }
        }
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

/// Hit counts per `(field, class)`; every declared class is present (0 = unhit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reach {
    /// `field` (`0x85.num_arguments`, `opcode`, `stream.num_arguments`, …) →
    /// class → hits, in declaration order of the classes.
    pub hits: BTreeMap<String, Vec<(&'static str, u64)>>,
    /// Per opcode of [`OPCODES`]: its spans with their keys (built once).
    spans: Vec<(u8, Vec<(Span, String)>)>,
}

impl Reach {
    /// The declared classes of bundles (every opcode's fields) and, with
    /// `streams`, of streams; all at zero.
    pub fn declared(bundles: bool, streams: bool) -> Reach {
        let mut hits = BTreeMap::new();
        let mut decl = |k: String, cs: &[&'static str]| {
            let e: &mut Vec<(&'static str, u64)> = hits.entry(k).or_default();
            for c in cs {
                if !e.iter().any(|(x, _)| x == c) {
                    e.push((*c, 0));
                }
            }
        };
        if bundles {
            decl("opcode".into(), &OPCODE_CLASSES);
            for op in OPCODES {
                for s in layout(op) {
                    decl(key(op, &s), span_classes(&s));
                }
                decl(format!("0x{op:02X}.bundle"), &BUNDLE_CLASSES);
            }
        }
        if streams {
            decl("stream.num_arguments".into(), &ARG_BANDS);
            decl("stream.groups".into(), &GROUP_COUNTS);
            decl("stream.mix".into(), &MIXED);
        }
        let spans = OPCODES
            .iter()
            .map(|&op| {
                (
                    op,
                    layout(op).into_iter().map(|s| (s, key(op, &s))).collect(),
                )
            })
            .collect();
        Reach { hits, spans }
    }

    fn hit(&mut self, k: &str, class: &str) {
        if let Some(e) = self.hits.get_mut(k) {
            if let Some(c) = e.iter_mut().find(|(x, _)| *x == class) {
                c.1 += 1;
            }
        }
    }

    /// Counts the classes one bundle hits (fields by byte 0's layout).
    pub fn bundle(&mut self, b: &[u8; 64]) {
        let op = b[0];
        let oc = if OPCODES.contains(&op) {
            "one of the eleven"
        } else if crate::generators::in_roster(op) {
            "other roster"
        } else {
            "non-roster"
        };
        self.hit("opcode", oc);
        let Some(k) = self.spans.iter().position(|(o, _)| *o == op) else {
            return;
        };
        let mut seen = [false; 256];
        let mut pair = false;
        let mut hits: Vec<(usize, &'static str)> = Vec::new();
        for (i, (s, _)) in self.spans[k].1.iter().enumerate() {
            let v = &b[s.off..s.off + s.len];
            if !span_classes(s).is_empty() {
                hits.push((i, span_class(s, v)));
            }
            if s.role == Role::Reserved {
                for &x in v.iter().filter(|&&x| x != 0) {
                    pair |= seen[usize::from(x)];
                    seen[usize::from(x)] = true;
                }
            }
        }
        for (i, class) in hits {
            let key = std::mem::take(&mut self.spans[k].1[i].1);
            self.hit(&key, class);
            self.spans[k].1[i].1 = key;
        }
        if pair {
            self.hit(&format!("0x{op:02X}.bundle"), "equal nonzero reserved pair");
        }
    }

    /// Counts the classes of one parsed stream: `groups` holds each group's
    /// argument count, `others` the non-group bundles.
    pub fn stream(&mut self, groups: &[usize], others: usize) {
        for &n in groups {
            self.hit("stream.num_arguments", arg_band(n));
        }
        let g = match groups.len() {
            0 => return,
            1 => "1",
            2..=4 => "2..4",
            _ => "5+",
        };
        self.hit("stream.groups", g);
        self.hit(
            "stream.mix",
            if others > 0 {
                "other opcodes mixed in"
            } else {
                "groups only"
            },
        );
    }

    /// Adds another run's counts.
    pub fn merge(&mut self, other: &Reach) {
        for (k, cs) in &other.hits {
            let e = self.hits.entry(k.clone()).or_default();
            for (c, n) in cs {
                match e.iter_mut().find(|(x, _)| x == c) {
                    Some(x) => x.1 += n,
                    None => e.push((*c, *n)),
                }
            }
        }
    }

    /// The declared classes with zero hits, as `field: class`.
    pub fn unhit(&self) -> Vec<String> {
        self.hits
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
