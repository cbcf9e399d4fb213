//! Field dumps: one subject's view of an input, one item per line, for the
//! side-by-side diffs of the report.

use crate::findings::Finding;
use crate::judge::pair::guard;
use crate::judge::{bundle_from_input, Judge};
use crate::subjects::{hex, verdict_name, Capabilities, Capability, Subject, Validator};
use crate::targets::Target;
use std::fmt::Write as _;

/// A field dump of `s`'s view of `input`: a bundle's validators, fields and re-encode that
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
