//! Triage of gate findings: each deduplicated representative is minimised ([`shrink`](fn@shrink)) while
//! it reproduces with the same dedup key on the same subjects, except a subject's crash or
//! hang (never run again); [`replay_command`] is one shell line runnable from any folder
//! (docs/guarantees.md G19).

use crate::findings::{DedupKey, Finding, Findings, Kept, Origin};
use crate::generation::Generation;
use crate::judge::pair::guard;
use crate::judge::{bundle_from_input, Class, Judge};
use crate::layout::{layout, Role};
use crate::subjects::{
    hex, verdict_name, Capabilities, Capability, Subject, SubjectSpec, Validator,
};
use crate::targets::{Check, Target};
use std::fmt::Write as _;

/// A spec as one shell word; one holding a control character is quoted `$'…'` with it as
/// `\xHH` bytes, so a replay command stays one line (a newline in a folder's name).
pub fn shell_word(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else if s.chars().any(char::is_control) {
        let mut w = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' | '\'' => w.extend(['\\', c]),
                c if c.is_control() => {
                    for b in c.to_string().bytes() {
                        w.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => w.push(c),
            }
        }
        w + "'"
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `path` made absolute against the current folder; unchanged when that fails.
fn absolute(path: &str) -> String {
    std::path::absolute(path).map_or_else(|_| path.to_string(), |p| p.display().to_string())
}

/// True for a word of a `cmd:` command naming an existing file by a relative path.
fn relative_file_word(w: &str) -> bool {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./+@,".contains(c);
    !w.is_empty()
        && w.chars().all(plain)
        && !w.starts_with('-')
        && std::path::Path::new(w).is_relative()
        && std::fs::symlink_metadata(w).is_ok()
}

/// A subject spec as a replay command names it: a `lib:` path and each relative file word
/// of a `cmd:` (`python3 my_subject.py`) made absolute, so it reproduces from any folder.
pub fn replay_spec(spec: &SubjectSpec) -> String {
    match spec {
        SubjectSpec::Lib(p) => format!("lib:{}", absolute(p)),
        SubjectSpec::Cmd(c) => {
            let words: Vec<String> = c
                .split(' ')
                .map(|w| {
                    if relative_file_word(w) {
                        absolute(w)
                    } else {
                        w.to_string()
                    }
                })
                .collect();
            format!("cmd:{}", words.join(" "))
        }
        other => other.to_string(),
    }
}

/// The one-line replay command for `input` on `target` under `arch`.
pub fn replay_command(subjects: &[String], arch: Generation, target: &str, input: &[u8]) -> String {
    let arg = format!("--hex {}", hex(input));
    replay_file_command(subjects, arch, target, &arg)
}

/// The replay command with input argument `path` (a file, or any other input argument).
pub fn replay_file_command(
    subjects: &[String],
    arch: Generation,
    target: &str,
    path: &str,
) -> String {
    let mut s = String::from("tpbconform replay ");
    for x in subjects {
        s.push_str(&format!("--subject {} ", shell_word(x)));
    }
    if arch != Generation::default() {
        s.push_str(&format!("--arch {arch} "));
    }
    s + &format!("--target {target} {path}")
}

pub fn divergence_file(number: usize, target: &str) -> String {
    format!("divergences/{number:03}-{target}.bin")
}

/// A triaged finding (`number`, 1-based in the report): its representative, minimised input
/// (re-run, dumped, with replay commands), probable root (`fold`) and the subject's own
/// blame ([`asked_blame`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Triaged {
    pub number: usize,
    pub finding: Finding,
    pub count: u64,
    pub minimized: Vec<u8>,
    pub min_finding: Finding,
    pub left_dump: String,
    pub right_dump: String,
    pub replay_subjects: Vec<String>,
    pub caused_by: Option<usize>,
    pub subject_blame: Option<Vec<usize>>,
}

/// A crash, hang or harness fault: [`triage`] neither minimises nor re-runs it.
pub fn is_fault_class(class: Class) -> bool {
    matches!(class, Class::Crash | Class::Timeout | Class::Harness)
}

/// Deduplicated, minimised findings in report order (registry targets, then vectors; key
/// order within one), each on its generation's engine of `engines`.
pub fn triage(findings: &Findings, engines: &[Judge], specs: &[SubjectSpec]) -> Vec<Triaged> {
    let reference = Judge::reference();
    // Vector lines after every target.
    let rank = |f: &Finding| {
        if f.is_vector() {
            usize::MAX
        } else {
            f.divergence.target.rank()
        }
    };
    let mut kept: Vec<&Kept> = findings.0.values().collect();
    // Stable sort: ties keep the BTreeMap's key order, so the report stays deterministic.
    kept.sort_by_key(|k| rank(&k.finding));
    let subjects: Vec<String> = specs.iter().map(replay_spec).collect();
    let mut out = Vec::new();
    for (i, kept) in kept.into_iter().enumerate() {
        let f = &kept.finding;
        let number = i + 1;
        let e = engine_for(engines, f.arch, &reference);
        let faulted = is_fault_class(f.divergence.class);
        let t = f.divergence.target;
        let (minimized, min_finding) = if faulted || f.is_vector() {
            (f.divergence.input.clone(), f.clone())
        } else {
            let m = shrink(e, t, f);
            let mf = reproduce_key(e, t, &m, &f.dedup_key()).unwrap_or_else(|| f.clone());
            (m, mf)
        };
        let mut at_min = min_finding.clone();
        at_min.divergence.input.clone_from(&minimized);
        let (left_dump, right_dump) = dumps(e, Some(t), &at_min, faulted);
        out.push(Triaged {
            number,
            finding: f.clone(),
            count: kept.count,
            replay_subjects: subjects.clone(),
            minimized,
            min_finding,
            left_dump,
            right_dump,
            caused_by: None,
            subject_blame: None,
        });
    }
    fold(&mut out, engines, &reference);
    for t in out.iter_mut() {
        let e = engine_for(engines, t.finding.arch, &reference);
        t.subject_blame = asked_blame(e, &t.finding, &t.minimized);
    }
    out
}

fn engine_for<'a>(engines: &'a [Judge], arch: Generation, reference: &'a Judge) -> &'a Judge {
    engines
        .iter()
        .find(|e| e.arch() == arch)
        .unwrap_or(reference)
}

/// Blame from the subject's own answers (issue 32): the bytes of its minimised bundle whose
/// change (nonzero to 0, zero to 1) changes its answer; not for a fault, vector or core.
pub fn asked_blame(e: &Judge, f: &Finding, minimized: &[u8]) -> Option<Vec<usize>> {
    if is_fault_class(f.divergence.class) || f.is_vector() {
        return None;
    }
    let t = f.divergence.target;
    if !t.is_bundle() {
        return None;
    }
    let subject = e
        .under_test()
        .iter()
        .find(|s| s.name() == f.divergence.left_name)?;
    let b = crate::judge::bundle_from_input(minimized);
    let variants: Vec<[u8; 64]> = (0..64)
        .map(|i| {
            let mut v = b;
            v[i] = if b[i] == 0 { 1 } else { 0 };
            v
        })
        .collect();
    let batch = match t.check() {
        Check::Validator(v) => crate::subjects::Batch::Validate(v, &variants),
        _ => crate::subjects::Batch::Decode(&variants),
    };
    let reason = |x: &[u8; 64]| {
        crate::blame::ask(subject.as_ref(), t.check(), x).map(|a| a.reason().map(str::to_string))
    };
    let base = reason(&b)?;
    if let Some(x) = subject.transport() {
        x.prefetch(batch, &|| {});
    }
    Some(
        variants
            .iter()
            .enumerate()
            .filter(|(_, v)| reason(v).is_some_and(|r| r != base))
            .map(|(i, _)| i)
            .collect(),
    )
}

/// Root causes first (issue 32): a divergence whose case holds a bundle diverging the same
/// way on an earlier validator divergence is caused by it (a faulted subject is not asked).
fn fold(out: &mut [Triaged], engines: &[Judge], reference: &Judge) {
    let faulted: Vec<String> = out
        .iter()
        .map(|t| &t.finding.divergence)
        .filter(|d| is_fault_class(d.class))
        .flat_map(|d| [d.left_name.clone(), d.right_name.clone()])
        .collect();
    let roots: Vec<(usize, Target, Finding)> = out
        .iter()
        .filter(|a| !is_fault_class(a.finding.divergence.class) && !a.finding.is_vector())
        .filter_map(|a| {
            let t = a.finding.divergence.target;
            matches!(t.check(), Check::Validator(_)).then(|| (a.number, t, a.finding.clone()))
        })
        .collect();
    if roots.is_empty() {
        return;
    }
    for b in out.iter_mut() {
        let (f, d) = (&b.finding, &b.finding.divergence);
        if is_fault_class(d.class) || faulted.contains(&d.left_name) {
            continue;
        }
        let bundles = if f.is_vector() {
            // A vector mismatch: its bundle.
            vec![crate::judge::bundle_from_input(&b.minimized)]
        } else {
            crate::kinds::of(d.target).case_bundles(d.target, &b.minimized)
        };
        if bundles.is_empty() {
            continue;
        }
        let e = engine_for(engines, f.arch, reference);
        b.caused_by = roots
            .iter()
            .filter(|(n, _, a)| {
                let a = (a.arch, &a.divergence.left_name, &a.divergence.right_name);
                *n < b.number && a == (f.arch, &d.left_name, &d.right_name)
            })
            .find(|(_, ta, a)| {
                let a = &a.divergence;
                bundles.iter().any(|x| {
                    e.compare(*ta, x).into_iter().any(|c| {
                        (&c.left_name, &c.right_name, &c.signature)
                            == (&a.left_name, &a.right_name, &a.signature)
                    })
                })
            })
            .map(|(n, _, _)| *n);
    }
}

/// Canonical `opcode` bundle: the opcode, the constants the encoder stamps, zero elsewhere.
pub fn canonical(opcode: u8) -> [u8; 64] {
    let mut c = [0u8; 64];
    c[0] = opcode;
    for s in layout(opcode) {
        match s.role {
            Role::Const(v) => c[s.off] = v,
            // 0x86 arg_type: TENSOR, what the group encoder writes (S000 §C3; F§8).
            Role::Field(_) if s.name == "arg_type" => c[s.off] = 0x01,
            _ => {}
        }
    }
    c
}

/// The finding of `target` on `input` with dedup key `want`, if it reproduces.
pub fn reproduce_key(e: &Judge, target: Target, input: &[u8], want: &DedupKey) -> Option<Finding> {
    let origin = Origin::Generated { index: 0 };
    e.compare(target, input)
        .into_iter()
        .map(|divergence| Finding {
            origin: origin.clone(),
            arch: e.arch(),
            divergence,
        })
        .find(|f| f.dedup_key() == *want)
}

pub const MAX_ATTEMPTS: usize = 50_000;

/// Per finding (slow targets such as `sync_handshake`); then it keeps what it has.
pub const MAX_TIME: std::time::Duration = std::time::Duration::from_secs(3);

/// Minimises `f.input` for `target`: resets whole layout fields to their canonical values,
/// then single bytes, then clears bits (high first), until nothing changes, keeping a step
/// only while the finding reproduces; non-bundle inputs are first shortened (never below one
/// byte). Deterministic unless [`MAX_ATTEMPTS`] or [`MAX_TIME`] is hit. The (padded) input
/// if it does not reproduce.
pub fn shrink(e: &Judge, target: Target, f: &Finding) -> Vec<u8> {
    let want = f.dedup_key();
    let mut attempts = 0usize;
    let deadline = std::time::Instant::now() + MAX_TIME;
    let holds = |cand: &[u8]| -> bool {
        attempts += 1;
        attempts <= MAX_ATTEMPTS
            && std::time::Instant::now() < deadline
            && reproduce_key(e, target, cand, &want).is_some()
    };
    shrink_with(target.is_bundle(), &f.divergence.input, holds)
}

/// [`shrink`] for any property `holds`; `bundle` selects the fixed-width 64-byte mode.
pub fn shrink_with(bundle: bool, input: &[u8], mut holds: impl FnMut(&[u8]) -> bool) -> Vec<u8> {
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
        // Bits the canonical value does not have, high first.
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

/// A field dump of `s`'s view of `input`, one item per line (for the report's side-by-side
/// diffs): a bundle's validators, fields and re-encode that
/// `ops` (what both sides declared, issue 32 item 5) has; else the recorded `fallback`.
pub fn dump(
    s: &dyn Subject,
    target: Option<Target>,
    input: &[u8],
    fallback: &str,
    ops: Capabilities,
) -> String {
    let mut out = String::new();
    let shown = [
        Capability::ValidateHeader,
        Capability::ValidatePayload,
        Capability::Decode,
    ];
    if !target.is_some_and(Target::is_bundle) || !shown.iter().any(|c| ops.has(*c)) {
        for l in fallback.lines() {
            let _ = writeln!(out, "{l}");
        }
        return out;
    }
    let b = bundle_from_input(input);
    let answer = |f: &dyn Fn() -> String| guard(f).unwrap_or_else(|_| "PANIC".to_string());
    for (v, declared) in [
        (Validator::Header, shown[0]),
        (Validator::Payload, shown[1]),
    ] {
        if !ops.has(declared) {
            continue;
        }
        let _ = writeln!(
            out,
            "{} = {}",
            v.op(),
            answer(&|| match s.validate(v, &b) {
                Ok(x) => verdict_name(&x).to_string(),
                Err(f) => f.to_string(),
            })
        );
    }
    if !ops.has(Capability::Decode) {
        return out;
    }
    let d = match guard(|| s.decode(&b)) {
        Ok(Ok(Ok(d))) => d,
        other => {
            let what = match other {
                Ok(Ok(Err(e))) => format!("err {e}"),
                Ok(Err(f)) => f.to_string(),
                _ => "PANIC".to_string(),
            };
            let _ = writeln!(out, "decode = {what}");
            return out;
        }
    };
    let _ = writeln!(out, "decode = ok {} (0x{:02X})", d.mnemonic, d.opcode);
    for (n, v) in &d.fields {
        let _ = writeln!(out, "  {n} = {v}");
    }
    if ops.has(Capability::Encode) {
        let enc = answer(&|| match s.encode(d.opcode, &d.fields) {
            Ok(Ok(e)) if e == b => "ok (same bytes)".to_string(),
            Ok(Ok(e)) => format!("other bytes {}", hex(&e)),
            Ok(Err(e)) => format!("err:{e}"),
            Err(f) => f.to_string(),
        });
        let _ = writeln!(out, "encode(decode) = {enc}");
    }
    out
}

/// The left and right dumps of `f`; a subject not in `e` falls back to core.
pub fn dumps(e: &Judge, target: Option<Target>, f: &Finding, faulted: bool) -> (String, String) {
    let by_name = |n: &str| {
        let core: &dyn Subject = e.references().0;
        e.subjects()
            .into_iter()
            .find(|s| s.name() == n)
            .unwrap_or(core)
    };
    let under_test = |n: &str| e.under_test().iter().any(|s| s.name() == n);
    let f = &f.divergence;
    let ops = by_name(&f.left_name)
        .capabilities()
        .intersection(by_name(&f.right_name).capabilities());
    let side = |name: &str, recorded: &str| {
        let t = target.filter(|_| !(faulted && under_test(name)));
        dump(by_name(name), t, &f.input, recorded, ops)
    };
    (side(&f.left_name, &f.left), side(&f.right_name, &f.right))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Origin;

    /// Every word reads back as itself in bash, on one line.
    #[test]
    fn shell_words_read_back_as_themselves_on_one_line() {
        let words = [
            "plain",
            "it's a dir",
            "r\n\x1b[2J\\'x\u{85}модель",
            "tab\there",
            "",
        ];
        for w in words {
            let q = shell_word(w);
            assert!(!q.chars().any(char::is_control), "{q:?}");
            let o = std::process::Command::new("bash")
                .args(["-c", &format!("printf %s {q}")])
                .output()
                .expect("bash");
            assert_eq!(String::from_utf8_lossy(&o.stdout), w, "{q}");
        }
    }

    fn fake(origin: Origin, key: &str) -> Finding {
        Finding {
            origin,
            arch: Generation::default(),
            divergence: crate::judge::Divergence {
                target: Target::named("validate_header"),
                input: vec![1],
                case: String::new(),
                left_name: "core".into(),
                right_name: "oracle".into(),
                left: String::new(),
                right: String::new(),
                signature: crate::judge::Signature {
                    key: key.into(),
                    left: "valid".into(),
                    right: key.into(),
                },
                class: Class::OverAccept,
                cohorts: Vec::new(),
                answers: Default::default(),
            },
        }
    }

    #[test]
    fn dedup_keeps_smallest_origin_any_order() {
        let g = |i| Origin::Generated { index: i };
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
        let m = shrink_with(true, &b, |c| c[0] == 0x85 && c[0x15] != 0);
        let mut want = canonical(0x85);
        want[0x15] = 0x01;
        assert_eq!(m, want.to_vec());
        // Non-bundle: shortened, then zeroed, never empty.
        let m = shrink_with(false, &[9, 9, 9, 9, 9], |c| c.len() >= 2 && c[1] & 8 != 0);
        assert_eq!(m, vec![0, 8]);
        let m = shrink_with(false, &[7, 7], |_| true);
        assert_eq!(m, vec![0]);
    }

    #[test]
    fn canonical_has_constants() {
        let c = canonical(0x86);
        assert_eq!((c[0], c[1], c[0x0F]), (0x86, 0x10, 0x01));
        assert_eq!(canonical(0xDA)[1], 0x00);
    }
}
