//! Triage of gate findings: deduplication by signature, minimisation, replay
//! commands and field dumps.
//!
//! # Contracts
//!
//! - A [`Finding`] is one disagreement, from the corpus, a vector file or a
//!   generated case. Its [`DedupKey`] is `(target, class, key, left verdict,
//!   right verdict)`; inputs are not part of it. [`Findings`] keeps, per key,
//!   the count and the finding with the smallest [`Origin`] (corpus before
//!   vectors before generated; then path/line/case index), so the kept
//!   representative does not depend on thread scheduling.
//! - [`minimize`] is a fixed-width field minimiser: starting from the
//!   finding's input it resets whole fields of the opcode's layout to their
//!   canonical values (zero, or the constant the encoder stamps), then single
//!   bytes (canonical, then zero), then clears bits one at a time (high bits
//!   first, so values shrink), repeating
//!   until nothing changes; a step is kept only while [`reproduce`] gives the
//!   same [`DedupKey`]. Non-bundle inputs are first shortened (never below one
//!   byte). The result is deterministic unless a finding hits the attempt or
//!   time cap ([`MAX_ATTEMPTS`], [`MAX_TIME`]).
//! - [`replay_command`] is a single shell line that [`reproduce`]s the finding:
//!   `tpbconform replay --target <t> --hex <hex>` (128 digits for bundle
//!   targets).

use crate::cli::layout::{layout, Role};
use crate::engine::{bundle_from_input, Divergence, Engine, Outcome, Target};
use crate::gate::cases::CaseKind;
use crate::gate::sync::{self, SyncResult};
use crate::gate::GateTarget;
use crate::subject::{hex, CoreSubject, OracleSubject, Subject};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Where a finding came from. The derived order is the preference order for
/// the kept representative of a signature.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// A file of `corpus/<target>/`.
    Corpus {
        /// Path as walked (sorted walk).
        path: String,
    },
    /// A line of a `corpus/vectors/` file.
    Vector {
        /// Path of the vector file.
        path: String,
        /// 1-based line.
        line: usize,
        /// The expectation written in the file.
        expected: String,
    },
    /// Generated case `index` (derived from `(seed, target, index)`).
    Generated {
        /// Case index.
        index: u64,
        /// Case kind.
        kind: CaseKind,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Corpus { path } => write!(f, "corpus file {path}"),
            Origin::Vector {
                path,
                line,
                expected,
            } => write!(f, "vector {path}:{line} (expected `{expected}`)"),
            Origin::Generated { index, kind } => {
                write!(f, "generated case #{index} ({})", kind.name())
            }
        }
    }
}

/// One disagreement (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Gate target name, or `vectors` for a vector-file mismatch.
    pub target: String,
    /// Where it came from.
    pub origin: Origin,
    /// The raw input.
    pub input: Vec<u8>,
    /// Class name ([`crate::engine::Class`] names, `Panic`, or `VectorMismatch`).
    pub class: String,
    /// Signature key: predicate / field / LUT / gate name.
    pub key: String,
    /// Left (core) short verdict.
    pub left_verdict: String,
    /// Right (oracle) short verdict.
    pub right_verdict: String,
    /// Left subject name.
    pub left_name: String,
    /// Right subject name.
    pub right_name: String,
    /// Left full result.
    pub left: String,
    /// Right full result.
    pub right: String,
    /// The case derived from the input, human-readable (may be empty).
    pub case: String,
}

/// Deduplication key: `(target, class, key, left verdict, right verdict)`.
pub type DedupKey = (String, String, String, String, String);

impl Finding {
    /// From an engine divergence.
    pub fn from_divergence(d: &Divergence, origin: Origin) -> Finding {
        Finding {
            target: d.target.name().to_string(),
            origin,
            input: d.input.clone(),
            class: d.class.name().to_string(),
            key: d.signature.key.clone(),
            left_verdict: d.signature.left.clone(),
            right_verdict: d.signature.right.clone(),
            left_name: d.left_name.to_string(),
            right_name: d.right_name.to_string(),
            left: d.left.clone(),
            right: d.right.clone(),
            case: d.case.clone(),
        }
    }

    /// From a sync divergence.
    pub fn from_sync(r: &SyncResult, input: &[u8], origin: Origin) -> Option<Finding> {
        match r {
            SyncResult::Agree(_) => None,
            SyncResult::Diverge {
                class,
                key,
                description,
                program,
            } => Some(Finding {
                target: GateTarget::SyncHandshake.name().to_string(),
                origin,
                input: input.to_vec(),
                class: (*class).to_string(),
                key: key.clone(),
                left_verdict: "model".into(),
                right_verdict: "simulator".into(),
                left_name: "core".into(),
                right_name: "oracle".into(),
                left: description.clone(),
                right: String::new(),
                case: program.clone(),
            }),
        }
    }

    /// The deduplication key.
    pub fn dedup_key(&self) -> DedupKey {
        (
            self.target.clone(),
            self.class.clone(),
            self.key.clone(),
            self.left_verdict.clone(),
            self.right_verdict.clone(),
        )
    }

    /// `key: left vs right` (one line).
    pub fn signature(&self) -> String {
        format!(
            "{}: {}={} {}={}",
            self.key, self.left_name, self.left_verdict, self.right_name, self.right_verdict
        )
    }
}

/// A kept representative and how many findings share its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    /// The representative (smallest origin).
    pub finding: Finding,
    /// Findings with this key.
    pub count: u64,
}

/// Deduplicated findings, ordered by key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Findings(pub BTreeMap<DedupKey, Kept>);

impl Findings {
    /// Adds one finding.
    pub fn add(&mut self, f: Finding) {
        self.add_n(f, 1);
    }

    fn add_n(&mut self, f: Finding, n: u64) {
        match self.0.entry(f.dedup_key()) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(Kept {
                    finding: f,
                    count: n,
                });
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                let k = o.get_mut();
                k.count += n;
                if f.origin < k.finding.origin {
                    k.finding = f;
                }
            }
        }
    }

    /// Merges `other` in (order-independent).
    pub fn merge(&mut self, other: Findings) {
        for (_, k) in other.0 {
            self.add_n(k.finding, k.count);
        }
    }

    /// Total findings (with duplicates).
    pub fn total(&self) -> u64 {
        self.0.values().map(|k| k.count).sum()
    }

    /// Number of distinct signatures.
    pub fn distinct(&self) -> usize {
        self.0.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Runs `input` through `target` once (core vs oracle) and returns the
/// finding, if they disagree. The origin is a placeholder (`Generated #0`).
pub fn reproduce(target: GateTarget, input: &[u8]) -> Option<Finding> {
    let origin = Origin::Generated {
        index: 0,
        kind: CaseKind::Raw,
    };
    match target {
        GateTarget::Engine(t) => match Engine::new().compare(t, input) {
            Outcome::Agree => None,
            Outcome::Divergence(d) => Some(Finding::from_divergence(&d, origin)),
        },
        GateTarget::SyncHandshake => Finding::from_sync(&sync::run_case(input), input, origin),
    }
}

/// Replays `input` through a target named by a gate target or a fuzz target
/// (`structured_diff`, `custom_op_stream`, `luts`: [`crate::fuzz_entry`]).
/// `None` if they agree or the name is unknown.
pub fn reproduce_named(name: &str, input: &[u8]) -> Option<Finding> {
    if let Some(t) = GateTarget::from_name(name) {
        return reproduce(t, input);
    }
    let ft = crate::fuzz_entry::FuzzTarget::from_name(name)?;
    let err = crate::fuzz_entry::check(ft, input).err()?;
    Some(fuzz_finding(name, &err.0, input))
}

/// A finding from a fuzz-entry report (text): the class is read from the
/// `[Class]` of its first line, the key is its second line with the digits
/// and hex masked.
pub fn fuzz_finding(name: &str, report: &str, input: &[u8]) -> Finding {
    let mut lines = report.lines();
    let first = lines.next().unwrap_or("");
    let second = lines.next().unwrap_or("").trim();
    let class = first
        .rsplit_once('[')
        .and_then(|(_, c)| c.split_once(']'))
        .map_or("Divergence", |(c, _)| c);
    let mask = |s: &str| -> String {
        s.split_whitespace()
            .map(|w| {
                if w.len() > 8 && w.chars().all(|c| c.is_ascii_hexdigit()) {
                    "<hex>".to_string()
                } else {
                    w.chars()
                        .map(|c| if c.is_ascii_digit() { '#' } else { c })
                        .collect()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    Finding {
        target: name.to_string(),
        origin: Origin::Generated {
            index: 0,
            kind: CaseKind::Raw,
        },
        input: input.to_vec(),
        class: class.to_string(),
        key: mask(first),
        left_verdict: mask(second),
        right_verdict: String::new(),
        left_name: "core".into(),
        right_name: "oracle".into(),
        left: report.to_string(),
        right: String::new(),
        case: String::new(),
    }
}

/// Canonical value of each byte of an `opcode` bundle: the opcode itself,
/// the constants the encoder stamps, zero elsewhere.
pub fn canonical(opcode: u8) -> [u8; 64] {
    let mut c = [0u8; 64];
    c[0] = opcode;
    for s in layout(opcode) {
        if let Role::Const(v) = s.role {
            c[s.off] = v;
        }
    }
    c
}

/// Upper bound on reproduction attempts per finding.
pub const MAX_ATTEMPTS: usize = 50_000;

/// Upper bound on minimisation time per finding (slow targets such as
/// `sync_handshake`); the minimiser then keeps what it has.
pub const MAX_TIME: std::time::Duration = std::time::Duration::from_secs(3);

/// Minimises `f.input` for `target` (see the module docs). Returns the
/// original input (64-byte padded for bundle targets) if it does not
/// reproduce.
pub fn minimize(target: GateTarget, f: &Finding) -> Vec<u8> {
    let want = f.dedup_key();
    let mut attempts = 0usize;
    let deadline = std::time::Instant::now() + MAX_TIME;
    let holds = |cand: &[u8]| -> bool {
        attempts += 1;
        attempts <= MAX_ATTEMPTS
            && std::time::Instant::now() < deadline
            && reproduce(target, cand).is_some_and(|g| g.dedup_key() == want)
    };
    minimize_with(target.is_bundle(), &f.input, holds)
}

/// The minimiser behind [`minimize`], for any property `holds` (which must
/// hold for the input): `bundle` selects the fixed-width 64-byte mode.
pub fn minimize_with(bundle: bool, input: &[u8], mut holds: impl FnMut(&[u8]) -> bool) -> Vec<u8> {
    let mut cur: Vec<u8> = if bundle {
        bundle_from_input(input).to_vec()
    } else if input.is_empty() {
        vec![0]
    } else {
        input.to_vec()
    };
    if !holds(&cur) {
        return if bundle { cur } else { input.to_vec() };
    }
    if !bundle {
        // Shorten: halve, then drop one byte at a time from the end.
        while cur.len() > 1 {
            let half = (cur.len() / 2).max(1);
            if holds(&cur[..half]) {
                cur.truncate(half);
            } else {
                break;
            }
        }
        while cur.len() > 1 && holds(&cur[..cur.len() - 1]) {
            cur.pop();
        }
    }
    for _round in 0..8 {
        let before = cur.clone();
        let canon = if bundle { canonical(cur[0]) } else { [0u8; 64] };
        let canon_at = |i: usize| if bundle { canon[i] } else { 0 };
        // Fields of the layout (bundle targets), widest first.
        if bundle {
            let mut spans = layout(cur[0]);
            spans.sort_by_key(|s| (std::cmp::Reverse(s.len), s.off));
            for s in spans {
                let r = s.off..s.off + s.len;
                if cur[r.clone()] == canon[r.clone()] {
                    continue;
                }
                let mut cand = cur.clone();
                cand[r.clone()].copy_from_slice(&canon[r]);
                if holds(&cand) {
                    cur = cand;
                }
            }
        }
        // Bytes: canonical, then zero.
        for i in 0..cur.len() {
            if cur[i] == canon_at(i) {
                continue;
            }
            for v in [canon_at(i), 0] {
                if cur[i] != v {
                    let old = cur[i];
                    cur[i] = v;
                    if holds(&cur) {
                        break;
                    }
                    cur[i] = old;
                }
            }
        }
        // Bits: clear one at a time, high bits first (bits the canonical
        // value does not have).
        for i in 0..cur.len() {
            for bit in (0..8).rev() {
                let m = 1u8 << bit;
                if cur[i] & m != 0 && canon_at(i) & m == 0 {
                    cur[i] &= !m;
                    if !holds(&cur) {
                        cur[i] |= m;
                    }
                }
            }
        }
        if cur == before {
            break;
        }
    }
    cur
}

/// The one-line replay command for `input` on `target`.
pub fn replay_command(target: &str, input: &[u8]) -> String {
    format!("tpbconform replay --target {target} --hex {}", hex(input))
}

/// The replay command for a raw input file at `path`.
pub fn replay_file_command(target: &str, path: &str) -> String {
    format!("tpbconform replay --target {target} {path}")
}

/// A field dump of one subject's view of `input` under `target`, one item
/// per line, for side-by-side diffs. Bundle targets show both validators,
/// the decoded field list and the re-encode; other targets show the
/// subject's result from the divergence.
pub fn dump<S: Subject>(s: &S, target: GateTarget, input: &[u8], fallback: &str) -> String {
    let mut out = String::new();
    match target {
        GateTarget::Engine(t) if t.is_bundle() || t == Target::DecodeAny => {
            let b = bundle_from_input(input);
            let guard = |f: &dyn Fn() -> String| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
                    .unwrap_or_else(|_| "PANIC".to_string())
            };
            let _ = writeln!(
                out,
                "validate_header = {}",
                guard(&|| s.validate_header(&b).unwrap_or("valid").to_string())
            );
            let _ = writeln!(
                out,
                "validate_payload = {}",
                guard(&|| s.validate_payload(&b).unwrap_or("valid").to_string())
            );
            let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.decode(&b)));
            match decoded {
                Ok(Ok(d)) => {
                    let _ = writeln!(out, "decode = ok {} (0x{:02X})", d.mnemonic, d.opcode);
                    for (n, v) in &d.fields {
                        let _ = writeln!(out, "  {n} = {v}");
                    }
                    let enc = guard(&|| match s.encode(d.opcode, &d.fields) {
                        Ok(e) if e == b => "ok (same bytes)".to_string(),
                        Ok(e) => format!("other bytes {}", hex(&e)),
                        Err(e) => format!("err:{e}"),
                    });
                    let _ = writeln!(out, "encode(decode) = {enc}");
                }
                Ok(Err(e)) => {
                    let _ = writeln!(out, "decode = err {e}");
                }
                Err(_) => {
                    let _ = writeln!(out, "decode = PANIC");
                }
            }
        }
        _ => {
            for l in fallback.lines() {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    out
}

/// Core's and the oracle's dumps of `f` (see [`dump`]).
pub fn dumps(target: GateTarget, f: &Finding) -> (String, String) {
    (
        dump(&CoreSubject, target, &f.input, &f.left),
        dump(&OracleSubject, target, &f.input, &f.right),
    )
}

/// A triaged finding: the representative, its minimised input and what the
/// reports show about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Triaged {
    /// 1-based number in the report.
    pub number: usize,
    /// The kept representative.
    pub finding: Finding,
    /// How many findings share its signature.
    pub count: u64,
    /// The minimised input (equal to the input when not minimisable).
    pub minimized: Vec<u8>,
    /// The finding re-run on the minimised input.
    pub min_finding: Finding,
    /// Core's field dump of the minimised input.
    pub left_dump: String,
    /// The oracle's field dump of the minimised input.
    pub right_dump: String,
    /// One-line replay command (hex form).
    pub replay: String,
    /// Report-relative file holding the minimised input (raw bytes).
    pub file: String,
    /// Replay command (file form, run from the report folder).
    pub replay_file: String,
}

/// Deduplicated, minimised findings: gate targets in report order (the
/// validators first), then other folders by name; within a target, key order.
pub fn triage(findings: &Findings) -> Vec<Triaged> {
    let rank = |name: &str| {
        GateTarget::all()
            .iter()
            .position(|t| t.name() == name)
            .unwrap_or(usize::MAX)
    };
    let mut kept: Vec<&Kept> = findings.0.values().collect();
    // Stable sort: ties keep the BTreeMap's key order, so the report stays deterministic.
    kept.sort_by_key(|k| rank(&k.finding.target));
    let mut out = Vec::new();
    for (i, kept) in kept.into_iter().enumerate() {
        let f = &kept.finding;
        let number = i + 1;
        let fuzz = crate::fuzz_entry::FuzzTarget::from_name(&f.target).is_some()
            && GateTarget::from_name(&f.target).is_none();
        let (replay_target, minimized, min_finding) = match GateTarget::from_name(&f.target) {
            Some(t) => {
                let m = minimize(t, f);
                let mf = reproduce(t, &m).unwrap_or_else(|| f.clone());
                (f.target.clone(), m, mf)
            }
            None if fuzz => {
                let want = f.dedup_key();
                let deadline = std::time::Instant::now() + MAX_TIME;
                let mut attempts = 0usize;
                let m = minimize_with(false, &f.input, |c| {
                    attempts += 1;
                    attempts <= MAX_ATTEMPTS
                        && std::time::Instant::now() < deadline
                        && reproduce_named(&f.target, c).is_some_and(|g| g.dedup_key() == want)
                });
                let mf = reproduce_named(&f.target, &m).unwrap_or_else(|| f.clone());
                (f.target.clone(), m, mf)
            }
            None => {
                // Vector mismatches: replay the bundle on the matching target.
                let t = vector_target(f);
                (t.name().to_string(), f.input.clone(), f.clone())
            }
        };
        let gt =
            GateTarget::from_name(&replay_target).unwrap_or(GateTarget::Engine(Target::DecodeAny));
        let (left_dump, right_dump) = dumps(
            gt,
            &Finding {
                input: minimized.clone(),
                ..min_finding.clone()
            },
        );
        let file = format!("divergences/{number:03}-{replay_target}.bin");
        out.push(Triaged {
            number,
            finding: f.clone(),
            count: kept.count,
            replay: replay_command(&replay_target, &minimized),
            replay_file: replay_file_command(&replay_target, &file),
            file,
            minimized,
            min_finding,
            left_dump,
            right_dump,
        });
    }
    out
}

/// The engine target a vector finding is about.
fn vector_target(f: &Finding) -> GateTarget {
    GateTarget::Engine(match f.key.as_str() {
        "header" => Target::ValidateHeader,
        "payload" => Target::ValidatePayload,
        _ => Target::DecodeAny,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(origin: Origin, key: &str) -> Finding {
        Finding {
            target: "validate_header".into(),
            origin,
            input: vec![1],
            class: "OverAccept".into(),
            key: key.into(),
            left_verdict: "valid".into(),
            right_verdict: key.into(),
            left_name: "core".into(),
            right_name: "oracle".into(),
            left: String::new(),
            right: String::new(),
            case: String::new(),
        }
    }

    #[test]
    fn dedup_keeps_smallest_origin_any_order() {
        let g = |i| Origin::Generated {
            index: i,
            kind: CaseKind::Raw,
        };
        let mut a = Findings::default();
        a.add(fake(g(9), "x"));
        a.add(fake(g(3), "x"));
        a.add(fake(g(5), "y"));
        let mut b = Findings::default();
        b.add(fake(g(5), "y"));
        b.add(fake(g(3), "x"));
        b.add(fake(g(9), "x"));
        assert_eq!(a, b);
        assert_eq!(a.distinct(), 2);
        assert_eq!(a.total(), 3);
        let kept = &a.0.values().next().unwrap().finding;
        assert_eq!(kept.origin, g(3));
    }

    #[test]
    fn minimiser_resets_to_canonical() {
        // Property: a 0x85 bundle whose byte 0x15 is nonzero.
        let mut b = [0xA5u8; 64];
        b[0] = 0x85;
        let m = minimize_with(true, &b, |c| c[0] == 0x85 && c[0x15] != 0);
        let mut want = canonical(0x85);
        want[0x15] = 0x01;
        assert_eq!(m, want.to_vec());
        // Non-bundle: shortened, then zeroed, never empty.
        let m = minimize_with(false, &[9, 9, 9, 9, 9], |c| c.len() >= 2 && c[1] & 8 != 0);
        assert_eq!(m, vec![0, 8]);
        let m = minimize_with(false, &[7, 7], |_| true);
        assert_eq!(m, vec![0]);
    }

    #[test]
    fn canonical_has_constants() {
        let c = canonical(0x86);
        assert_eq!((c[0], c[1], c[0x0F]), (0x86, 0x10, 0x01));
        assert_eq!(canonical(0xDA)[1], 0x00);
    }
}
