//! Triage of gate findings: each deduplicated representative is minimised ([`shrink`](fn@shrink)) while
//! it reproduces with the same dedup key on the same subjects, except a subject's crash or
//! hang (never run again); [`replay_command`] is one shell line runnable from any folder
//! (docs/guarantees.md G19).

pub mod dump;
pub mod shrink;

pub use dump::{dump, dumps};
pub use shrink::{canonical, reproduce_key, shrink, shrink_with, MAX_ATTEMPTS, MAX_TIME};

use crate::findings::{Finding, Findings, Kept};
use crate::generation::Generation;
use crate::judge::{Class, Judge};
use crate::subjects::{hex, SubjectSpec};
use crate::targets::{Check, Target};

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
