//! Hand-derived test vectors (`corpus/vectors/`, format in its README.md, read as
//! docs/guarantees.md G16 says): an unmet expectation is a `VectorMismatch` finding, core
//! (left) vs oracle, or a subject under test (left) vs core. A malformed or unreadable file
//! is an error said in full (`path[:line[:column]]: what`, exit 2).

use crate::findings::{Finding, Origin};
use crate::generation::Generation;
use crate::judge::{nway::VECTORS_SLOT, pair::guard};
use crate::judge::{Answer, Answers, Class, Divergence, Judge, Signature};
use crate::subjects::{verdict_name, Batch, Subject, Validator};
use crate::targets::{Check, Target};
use std::fmt;
use std::path::{Path, PathBuf};

/// A file with no vector line.
fn empty(path: &str) -> String {
    format!("{path}: empty vector file: no vector found")
}

/// A line in neither format.
fn bad_line(path: &str, line: usize, reason: impl fmt::Display) -> String {
    format!("{path}:{line}: bad vector line: {reason}")
}

/// One vector line: its operation, bundle, and expected answer in [`actual`]'s words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    pub op: Check,
    pub bundle: [u8; 64],
    pub expected: String,
}

/// Counts of one vector file (a `vector_files` row of `run.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileStats {
    pub path: String,
    pub vectors: u64,
    pub failed: u64,
    pub other_generations: u64,
}

pub(crate) fn sorted_paths(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()?;
    v.sort();
    Ok(v)
}

const DEFAULT_ARCH: &str = "v2";

/// Splits an optional trailing `arch=v2,v3` field off (no field = v2, SPEC §0).
fn split_arch<'a>(
    fields: &mut Vec<&'a str>,
    bad: &dyn Fn(String) -> String,
) -> Result<Vec<&'a str>, String> {
    let Some(list) = fields.last().and_then(|f| f.strip_prefix("arch=")) else {
        return Ok(vec![DEFAULT_ARCH]);
    };
    let archs: Vec<&str> = list.split(',').collect();
    if let Some(a) = archs
        .iter()
        .find(|a| !matches!(**a, "v2" | "v3" | "v4" | "v5"))
    {
        return Err(bad(format!(
            "unknown generation `{a}` in arch= (v2, v3, v4, v5)"
        )));
    }
    fields.pop();
    Ok(archs)
}

fn parse_hex_field(path: &str, line: usize, col: usize, s: &str) -> Result<[u8; 64], String> {
    let bad = |column: usize, reason: String| format!("{path}:{line}:{column}: bad hex: {reason}");
    let digits = crate::input::hex_nibbles(s.as_bytes(), false)
        .map_err(|e| bad(col + e.index, format!("{:?} is not a hex digit", e.found)))?;
    if digits.len() != 128 {
        let odd = if digits.len() % 2 == 1 {
            " (odd length)"
        } else {
            ""
        };
        return Err(bad(
            col,
            format!("{} hex digits{odd}, expected exactly 128", digits.len()),
        ));
    }
    Ok(crate::judge::bundle_from_input(
        &crate::input::pack_nibbles(&digits),
    ))
}

/// `(line, vector, generations)`.
pub type Parsed = (usize, Vector, Vec<String>);

/// Parses line `line` (1-based) of `path`; `Ok(None)` for a blank or comment-only line.
pub fn parse_line(path: &str, line: usize, raw: &str) -> Result<Option<Parsed>, String> {
    let body = raw.split('#').next().unwrap_or("");
    if body.trim().is_empty() {
        return Ok(None);
    }
    let col = body.len() - body.trim_start().len() + 1;
    let mut fields: Vec<&str> = body.split_whitespace().collect();
    let bad = |reason: String| bad_line(path, line, reason);
    let archs = split_arch(&mut fields, &bad)?;
    let bundle = parse_hex_field(path, line, col, fields[0])?;
    let (op, expected) = match fields.as_slice() {
        [_, which @ ("header" | "payload"), verdict, pred] => {
            let expected = match (*verdict, *pred) {
                ("valid", "-") => "valid".to_string(),
                ("invalid", p) if p != "-" => p.to_string(),
                _ => {
                    return Err(bad(format!(
                        "verdict `{verdict}` with predicate `{pred}` (expected `valid -` or \
                         `invalid <predicate>`)"
                    )))
                }
            };
            let header = *which == "header";
            let v = if header {
                Validator::Header
            } else {
                Validator::Payload
            };
            (Check::Validator(v), expected)
        }
        [_, ok @ ("ok" | "err"), what] => (Check::Decode, format!("{ok} {what}")),
        _ => {
            return Err(bad(format!(
                "{} fields; expected `<hex> header|payload valid|invalid <predicate>` or \
                 `<hex> ok|err <what>`",
                fields.len()
            )))
        }
    };
    let v = Vector {
        op,
        bundle,
        expected,
    };
    Ok(Some((
        line,
        v,
        archs.iter().map(|a| a.to_string()).collect(),
    )))
}

/// What a subject says about a vector: in the file's words, typed, and its fault's class.
pub type VectorAnswer = (String, Answer, Option<Class>);

pub fn actual(s: &dyn Subject, op: Check, bundle: &[u8; 64]) -> VectorAnswer {
    let fault = |f: &crate::subjects::Fault| {
        let class = Class::of_fault(f);
        (
            f.to_string(),
            Answer::Fault(class.lower().into()),
            Some(class),
        )
    };
    let r = guard(|| match op {
        Check::Validator(which) => match s.validate(which, bundle) {
            Ok(verdict) => (
                verdict_name(&verdict).to_string(),
                Answer::from_verdict(&verdict),
                None,
            ),
            Err(f) => fault(&f),
        },
        _ => match s.decode(bundle) {
            Ok(Ok(d)) => (format!("ok {}", d.mnemonic), Answer::Valid, None),
            Ok(Err(e)) if e.field.as_str() == "reserved" => (
                format!("err reserved@0x{:02x}", e.offset),
                Answer::from_decode_fail(&e),
                None,
            ),
            Ok(Err(e)) => (
                format!("err {}", e.field),
                Answer::from_decode_fail(&e),
                None,
            ),
            Err(f) => fault(&f),
        },
    });
    r.unwrap_or_else(|_| {
        let p = Class::Panic;
        (
            "PANIC".to_string(),
            Answer::Fault(p.lower().into()),
            Some(p),
        )
    })
}

/// Not a README, not hidden.
pub fn is_vector_file_name(name: &str) -> bool {
    !name.starts_with("README") && !name.starts_with('.')
}

/// Largest vector file read; a bigger one is skipped.
pub const MAX_VECTOR_FILE: u64 = 16 << 20;

/// What [`check_dir`] checked, and the entries it did not read, with why.
#[derive(Debug, Default)]
pub struct Checked {
    pub files: Vec<FileStats>,
    pub findings: Vec<Finding>,
    pub skipped: Vec<String>,
}

/// Checks every vector file under `dir` (no subfolder) under each generation it names that
/// `engines` serves, a line at a time and at most [`MAX_VECTOR_FILE`] bytes (more: an error);
/// a stop request ends the check early.
pub fn check_dir(dir: &Path, engines: &[(Generation, &Judge)]) -> Result<Checked, String> {
    let io = |p: &Path, e: String| format!("{}: cannot read: {e}", p.display());
    let mut out = Checked::default();
    if std::fs::symlink_metadata(dir).is_err() {
        return Ok(out);
    }
    for p in sorted_paths(dir).map_err(|e| io(dir, e.to_string()))? {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        if !is_vector_file_name(&name) || std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        if crate::interrupt::stop_requested() {
            break;
        }
        let f = match crate::input::open_regular(&p, MAX_VECTOR_FILE)
            .map_err(|e| io(&p, e.to_string()))?
        {
            Ok(f) => f,
            Err(why) => {
                out.skipped.push(format!("{}: {why}", p.display()));
                continue;
            }
        };
        let path = p.display().to_string();
        let reader = std::io::BufReader::new(std::io::Read::take(f, MAX_VECTOR_FILE + 1));
        let mut lines = crate::input::Lines::new(&path, reader);
        let mut st = FileStats {
            path: path.clone(),
            ..FileStats::default()
        };
        let (mut bytes_read, mut vectors_read) = (0u64, 0usize);
        let mut block: Vec<Parsed> = Vec::new();
        while let Some(l) = lines.next_line() {
            let (line, bytes) = l.map_err(|e| io(&p, e.to_string()))?;
            bytes_read += bytes.len() as u64 + 1;
            if bytes_read > MAX_VECTOR_FILE + 1 {
                return Err(io(
                    &p,
                    format!("grew past {MAX_VECTOR_FILE} bytes while being read"),
                ));
            }
            let text =
                std::str::from_utf8(bytes).map_err(|_| bad_line(&path, line, "not UTF-8 text"))?;
            let Some(parsed) = parse_line(&path, line, text)? else {
                continue;
            };
            vectors_read += 1;
            block.push(parsed);
            if block.len() == VECTOR_BLOCK {
                check_block(engines, &path, &mut block, &mut st, &mut out.findings);
            }
            if crate::interrupt::stop_requested() {
                break;
            }
        }
        check_block(engines, &path, &mut block, &mut st, &mut out.findings);
        if vectors_read == 0 && !crate::interrupt::stop_requested() {
            return Err(empty(&path));
        }
        out.files.push(st);
    }
    Ok(out)
}

/// Vectors per [`check_block`]: one hand-off per operation, never a whole 16 MiB file.
const VECTOR_BLOCK: usize = 4096;

/// The operations a vector line asks about.
const OPS: [Check; 3] = [
    Check::Validator(Validator::Header),
    Check::Validator(Validator::Payload),
    Check::Decode,
];

/// The target whose check `op` is (its finding replays there) and the finding's key.
fn target_of(op: Check) -> (Target, &'static str) {
    let (name, key) = match op {
        Check::Validator(Validator::Header) => ("validate_header", "header"),
        Check::Validator(Validator::Payload) => ("validate_payload", "payload"),
        _ => ("decode_any", "decode"),
    };
    (Target::named(name), key)
}

/// True if `s` has the capability and was not given up on it.
fn asks(s: &dyn Subject, op: Check) -> bool {
    let needs = target_of(op).0.spec().needs;
    s.capabilities().covers(needs) && s.given_up(needs).is_none()
}

/// Checks (then empties) `block`, one operation after the other in file order, each
/// subject first given the operation's bundles as one batch.
fn check_block(
    engines: &[(Generation, &Judge)],
    path: &str,
    block: &mut Vec<Parsed>,
    st: &mut FileStats,
    findings: &mut Vec<Finding>,
) {
    let mut bundles: Vec<[u8; 64]> = Vec::new();
    for op in OPS {
        for (arch, e) in engines {
            bundles.clear();
            bundles.extend(
                block
                    .iter()
                    .filter(|(_, v, archs)| v.op == op && archs.iter().any(|x| x == arch.name()))
                    .map(|(_, v, _)| v.bundle),
            );
            if bundles.is_empty() {
                continue;
            }
            let batch = match op {
                Check::Validator(which) => Batch::Validate(which, &bundles),
                _ => Batch::Decode(&bundles),
            };
            let under = e.under_test().iter().filter(|s| asks(&***s, op));
            for x in under.filter_map(|s| s.transport()) {
                x.prefetch(batch, &|| {});
            }
        }
        for (line, v, archs) in block.iter().filter(|(_, v, _)| v.op == op) {
            if crate::interrupt::stop_requested() {
                break;
            }
            check_one(engines, path, *line, v, archs, st, findings);
        }
    }
    block.clear();
}

fn check_one(
    engines: &[(Generation, &Judge)],
    path: &str,
    line: usize,
    v: &Vector,
    archs: &[String],
    st: &mut FileStats,
    findings: &mut Vec<Finding>,
) {
    let runs = engines
        .iter()
        .filter(|(a, _)| archs.iter().any(|x| x == a.name()));
    let mut ran = false;
    for &(arch, e) in runs {
        ran = true;
        let (core, oracle) = e.references();
        st.vectors += 1;
        let (want, op, bundle) = (&v.expected, v.op, &v.bundle);
        // A side that faulted is filed as that fault, never as a mismatch.
        let finding = |l: &dyn Subject,
                       r: &dyn Subject,
                       (ls, la, lf): &VectorAnswer,
                       (rs, ra, rf): &VectorAnswer| Finding {
            origin: Origin::Vector {
                path: path.to_string(),
                line,
                expected: want.clone(),
            },
            arch,
            divergence: Divergence {
                target: target_of(op).0,
                input: bundle.to_vec(),
                case: format!("{path}:{line} ({arch})"),
                left_name: l.name().into(),
                right_name: r.name().into(),
                left: format!("{ls}  (expected {want})"),
                right: format!("{rs}  (expected {want})"),
                signature: Signature {
                    key: target_of(op).1.into(),
                    left: ls.clone(),
                    right: rs.clone(),
                },
                class: lf.or(*rf).unwrap_or(Class::VectorMismatch),
                cohorts: Vec::new(),
                answers: Answers::of(la.clone(), ra.clone()),
            },
        };
        let (c, o) = (actual(core, op, bundle), actual(oracle, op, bundle));
        let mut failed = c.0 != *want || o.0 != *want;
        if failed {
            findings.push(finding(core, oracle, &c, &o));
        }
        for (k, s) in e.under_test().iter().enumerate() {
            if !asks(&**s, op) {
                continue;
            }
            e.note_judged(k, VECTORS_SLOT, 1);
            let x = actual(&**s, op, bundle);
            if x.0 != *want {
                failed = true;
                findings.push(finding(&**s, core, &x, &c));
            }
        }
        st.failed += u64::from(failed);
    }
    st.other_generations += u64::from(!ran);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an implementation says about a vector is kept typed beside its words, and the byte
    /// map blames from the typed answer: a decode failing on the field named `valid` (0xDC byte
    /// 0x0C must be 0 or 1, SPEC §5.1) is a rejection at 0x0C, not the verdict `valid`; a
    /// validator rejection is its predicate.
    #[test]
    fn what_a_subject_says_about_a_vector_is_typed() {
        use crate::blame::{blamed_bytes, ByteSet};
        let core = crate::subjects::registry::core_for(Generation::V2);
        let bundle = |set: [(usize, u8); 3]| {
            let mut b = [0u8; 64];
            for (i, v) in set {
                b[i] = v;
            }
            b
        };
        let b = bundle([(0, 0xDC), (1, 0x10), (0x0C, 0x10)]);
        let (words, answer, fault) = actual(core.as_ref(), Check::Decode, &b);
        assert_eq!(fault, None);
        assert_eq!(words, "err valid");
        assert_eq!(
            answer,
            Answer::Rejected {
                reason: "valid".into(),
                offset: Some(0x0C)
            }
        );
        assert_eq!(blamed_bytes(&b, &answer), ByteSet::of([0x0C]));
        let h = bundle([(0, 0x85), (1, 0x10), (0x3F, 1)]);
        let (words, answer, _) = actual(core.as_ref(), Check::Validator(Validator::Header), &h);
        assert_eq!(words, "custom_op_header_reserved_zero");
        assert_eq!(blamed_bytes(&h, &answer), ByteSet::of([0x3F]));
        // A line's finding is typed with the target that replays it: the one of its check.
        for op in OPS {
            let t = target_of(op).0;
            assert_eq!(t.check(), op, "{}", t.name());
        }
    }

    /// A whole file's text through [`parse_line`], empty as [`check_dir`] refuses it.
    fn parse(path: &str, text: &str) -> Result<Vec<Parsed>, String> {
        let mut out = Vec::new();
        for (li, raw) in text.lines().enumerate() {
            out.extend(parse_line(path, li + 1, raw)?);
        }
        if out.is_empty() {
            return Err(empty(path));
        }
        Ok(out)
    }

    #[test]
    fn parse_forms_and_errors() {
        let h = "00".repeat(64);
        let t = format!(
            "# c\n{h} header invalid valid_opcode # x\n{h} err opcode\n{h} err opcode arch=v3,v5\n"
        );
        let v = parse("f", &t).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].0, 2);
        assert_eq!(v[0].2, ["v2"]);
        assert_eq!(v[2].2, ["v3", "v5"]);
        // Each line's expectation in the words a subject's answer is given in (`actual`).
        let head = Check::Validator(Validator::Header);
        assert_eq!(
            (v[0].1.op, v[0].1.expected.as_str()),
            (head, "valid_opcode")
        );
        assert_eq!(
            (v[1].1.op, v[1].1.expected.as_str()),
            (Check::Decode, "err opcode")
        );
        let ok = parse("f", &format!("{h} payload valid -\n{h} ok nop\n")).unwrap();
        assert_eq!(ok[0].1.expected, "valid");
        assert_eq!(ok[1].1.expected, "ok nop");
        let e = parse("f", &format!("{h} err opcode arch=v6\n")).unwrap_err();
        assert!(e.to_string().contains("unknown generation `v6`"), "{e}");
        let e = parse("f", &format!("{} ok X\n", &h[..127])).unwrap_err();
        assert!(
            e.to_string()
                .contains("f:1:1: bad hex: 127 hex digits (odd"),
            "{e}"
        );
        let e = parse("f", &format!("\n{}g ok X\n", &h[..127])).unwrap_err();
        assert!(e.to_string().starts_with("f:2:128:"), "{e}");
        let e = parse("f", "# nothing\n").unwrap_err();
        assert_eq!(e.to_string(), "f: empty vector file: no vector found");
        let e = parse("f", &format!("{h} maybe\n")).unwrap_err();
        assert!(e.to_string().starts_with("f:1: bad vector line"), "{e}");
    }
}
