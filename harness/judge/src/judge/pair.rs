//! One comparison between two subjects: `left` (under test) against `right` (its reference).
//! Each subject call runs under `catch_unwind`; a panic is a [`Class::Panic`] divergence, never
//! skipped, and a fault one of its class. The panic hook is left alone (under libFuzzer, whose
//! hook aborts, a subject panic aborts the run: fail closed).

use super::divergence::{Answer, Answers, Class, Divergence, Signature};
use super::render::{fail_key, first_field_diff, Shown};
use crate::subjects::{
    hex, verdict_name, DecodeFail, Decoded, EncodeResult, IrAnswer, IrQuery, LutResult, LutTable,
    Name, Predicate, Reference, Reply, StreamFail, Subject, Validator, Verdict,
};
use crate::targets::Target;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The two subjects and the case being compared: `dyn Subject` for the judge, concrete types
/// for the lean fuzz entries ([`super::lean`]).
pub struct Pair<'a, L: ?Sized + 'a = dyn Subject + 'a, R: ?Sized + 'a = dyn Subject + 'a> {
    pub left: &'a L,
    pub right: &'a R,
    pub target: Target,
    pub input: &'a [u8],
    pub case: &'a dyn Fn() -> String,
}

/// The reference pair's [`Pair`] (its comparisons may ask what only it answers).
pub type ReferencePair<'a> = Pair<'a, dyn Reference + 'a, dyn Reference + 'a>;

impl<'a> ReferencePair<'a> {
    #[inline]
    pub fn as_subjects(&self) -> Pair<'a> {
        Pair {
            left: self.left,
            right: self.right,
            target: self.target,
            input: self.input,
            case: self.case,
        }
    }
}

/// The text of a panic payload (the one place it is rendered).
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "<non-string panic payload>".into())
}

pub fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_text(&*p))
}

impl<L: Subject + ?Sized, R: Subject + ?Sized> Pair<'_, L, R> {
    pub fn div(
        &self,
        class: Class,
        key: impl Into<String>,
        ls: impl Into<String>,
        rs: impl Into<String>,
        left: String,
        right: String,
    ) -> Option<Divergence> {
        Some(Divergence {
            target: self.target,
            input: self.input.to_vec(),
            case: (self.case)(),
            left_name: self.left.name().to_string(),
            right_name: self.right.name().to_string(),
            left,
            right,
            signature: Signature {
                key: key.into(),
                left: ls.into(),
                right: rs.into(),
            },
            class,
            cohorts: Vec::new(),
            answers: Answers::default(),
        })
    }

    /// A panic or a fault on either side of `op` (out of line: the comparisons keep a small
    /// frame).
    #[cold]
    #[inline(never)]
    fn failed<A: Shown, B: Shown>(
        &self,
        op: &str,
        l: Result<Reply<A>, String>,
        r: Result<Reply<B>, String>,
    ) -> Option<Divergence> {
        if l.is_err() || r.is_err() {
            let who = match (l.is_err(), r.is_err()) {
                (true, true) => "both",
                (true, false) => self.left.name(),
                _ => self.right.name(),
            };
            let show = |x: Result<String, &String>| x.unwrap_or_else(|m| format!("PANIC: {m}"));
            let (ls, rs) = (
                show(l.as_ref().map(reply_shown)),
                show(r.as_ref().map(reply_shown)),
            );
            let side = |panicked: bool| match panicked {
                true => ("panic", Some(Answer::Fault("panic".into()))),
                false => ("no-panic", None),
            };
            let ((lv, la), (rv, ra)) = (side(l.is_err()), side(r.is_err()));
            let left = format!("{ls}  [{op}; panicked: {who}]");
            let d = self.div(Class::Panic, format!("{op}:panic"), lv, rv, left, rs);
            return d.map(|d| self.about_bytes(d, la, ra));
        }
        let (l, r) = (l.ok()?, r.ok()?);
        let class = Class::of_fault(l.as_ref().err().or(r.as_ref().err())?);
        let (al, ar) = (fault_answer(&l), fault_answer(&r));
        let short = |a: &Option<Answer>| {
            let r = a.as_ref().and_then(Answer::reason);
            r.unwrap_or("answered").to_string()
        };
        self.div(
            class,
            format!("{op}:{}", class.lower()),
            short(&al),
            short(&ar),
            reply_shown(&l),
            reply_shown(&r),
        )
        .map(|d| self.about_bytes(d, al, ar))
    }

    /// `d` with each side's answer, when the target's input is one bundle.
    fn about_bytes(
        &self,
        d: Divergence,
        left: Option<Answer>,
        right: Option<Answer>,
    ) -> Divergence {
        if !self.target.is_bundle() {
            return d;
        }
        Divergence {
            answers: Answers { left, right },
            ..d
        }
    }
}

fn fault_answer<T>(r: &Reply<T>) -> Option<Answer> {
    r.as_ref()
        .err()
        .map(|f| Answer::Fault(Class::of_fault(f).lower().into()))
}

fn reply_shown<T: Shown>(r: &Reply<T>) -> String {
    match r {
        Ok(v) => v.shown(),
        Err(f) => f.to_string(),
    }
}

/// Both sides under [`guard`]; returns a panic's or a fault's divergence from the caller.
macro_rules! both {
    ($p:expr, $op:expr, $l:expr, $r:expr) => {{
        let l = guard(|| $l);
        let r = guard(|| $r);
        match (l, r) {
            (Ok(Ok(l)), Ok(Ok(r))) => (l, r),
            (l, r) => return $p.failed($op, l, r),
        }
    }};
}

/// Both sides' answers to `op`: the answer when they agree, else the divergence (`differ` of
/// two different answers).
// The divergence is returned unboxed: the agreeing path, the hot one, carries only the answer.
#[allow(clippy::result_large_err)]
#[inline]
fn agreed<T: PartialEq + Shown, L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    op: &str,
    l: impl FnOnce() -> Reply<T>,
    r: impl FnOnce() -> Reply<T>,
    differ: impl FnOnce(&T, &T) -> Option<Divergence>,
) -> Result<T, Option<Divergence>> {
    match (guard(l), guard(r)) {
        (Ok(Ok(l)), Ok(Ok(r))) if l == r => Ok(l),
        (Ok(Ok(l)), Ok(Ok(r))) => Err(differ(&l, &r)),
        (l, r) => Err(p.failed(op, l, r)),
    }
}

/// SPEC §3 / §4 validator verdicts.
#[allow(clippy::result_large_err)]
#[inline]
pub fn validator<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    v: Validator,
    b: &[u8; 64],
) -> Result<Verdict, Option<Divergence>> {
    let (left, right) = (|| p.left.validate(v, b), || p.right.validate(v, b));
    agreed(p, v.op(), left, right, |l, r| verdicts_differ(p, l, r))
}

#[cold]
#[inline(never)]
fn verdicts_differ<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    l: &Verdict,
    r: &Verdict,
) -> Option<Divergence> {
    let (ls, rs) = (verdict_name(l), verdict_name(r));
    if let Some(Predicate::Unknown(name)) = l {
        return unknown_name(
            p,
            "predicate",
            name,
            rs,
            rs.to_string(),
            Answer::from_verdict(r),
        );
    }
    let class = Class::from_accepts(l.is_none(), r.is_none());
    let key = l.as_ref().or(r.as_ref()).map_or("valid", |p| p.name());
    p.div(class, key, ls, rs, ls.to_string(), rs.to_string())
        .map(|d| d.with_answers(Answer::from_verdict(l), Answer::from_verdict(r)))
}

/// A name outside SPEC's vocabulary in the left side's answer: a protocol finding naming it,
/// not a "different reason" (issue 32).
#[cold]
#[inline(never)]
fn unknown_name<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    what: &str,
    name: &str,
    rs: impl Into<String>,
    right: String,
    right_answer: Answer,
) -> Option<Divergence> {
    p.div(
        Class::Protocol,
        format!("unknown {what} `{name}`"),
        "protocol",
        rs,
        format!(
            "answered {what} `{name}`, which is not a SPEC name (SPEC §3, §4 predicates, §5.1 \
             decode fields: docs/subject-protocol.md)"
        ),
        right,
    )
    .map(|d| d.with_answers(Answer::Fault("protocol".into()), right_answer))
}

type DecodeReply = Result<Decoded, DecodeFail>;

fn decodes<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    l: &DecodeReply,
    r: &DecodeReply,
) -> Option<Divergence> {
    let short = |x: &DecodeReply| x.as_ref().map_or_else(fail_key, |_| "ok".to_string());
    let key = match (l, r) {
        (Ok(a), Ok(b)) if a == b => return None,
        (Err(a), Err(b)) if a.same_as(b) => return None,
        (
            Err(DecodeFail {
                field: Name::Unknown(name),
                ..
            }),
            _,
        ) => Err(name),
        (Ok(a), Ok(b)) if a.opcode != b.opcode => Ok("opcode".to_string()),
        (Ok(a), Ok(b)) if a.mnemonic != b.mnemonic => Ok("mnemonic".to_string()),
        (Ok(a), Ok(b)) => Ok(first_field_diff(&a.fields, &b.fields)),
        (Err(e), _) | (_, Err(e)) => Ok(e.field.to_string()),
    };
    let d = match key {
        Err(name) => unknown_name(
            p,
            "decode field",
            name,
            short(r),
            r.shown(),
            Answer::of_decode(r),
        ),
        Ok(key) => p.div(
            Class::from_accepts(l.is_ok(), r.is_ok()),
            key,
            short(l),
            short(r),
            l.shown(),
            r.shown(),
        ),
    };
    d.map(|d| d.with_answers(Answer::of_decode(l), Answer::of_decode(r)))
}

/// SPEC §5.1 decode: same fields, or same failure.
pub fn decode<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    b: &[u8; 64],
) -> Option<Divergence> {
    let (l, r) = both!(p, "decode", p.left.decode(b), p.right.decode(b));
    decodes(p, &l, &r)
}

/// SPEC §5.1 `encode(decode(b)) == b`, each side on its own decode and, when they differ, on
/// the other's.
pub fn roundtrip<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    b: &[u8; 64],
) -> Option<Divergence> {
    let (dl, dr) = both!(p, "decode", p.left.decode(b), p.right.decode(b));
    let (dl, dr) = match (&dl, &dr) {
        (Ok(a), Ok(c)) => (a, c),
        (Err(_), Err(_)) => return None, // decode_any compares the failures
        _ => return decodes(p, &dl, &dr),
    };
    let (el, er) = both!(
        p,
        "encode(self)",
        p.left.encode(dl.opcode, &dl.fields),
        p.right.encode(dr.opcode, &dr.fields)
    );
    if let Some(d) = encodes(p, "roundtrip.self", b, &el, &er, dl, dr) {
        return Some(d);
    }
    if dl == dr {
        // The cross encodes would ask each side the fields its self encode
        // was just asked.
        return None;
    }
    let (el, er) = both!(
        p,
        "encode(cross)",
        p.left.encode(dr.opcode, &dr.fields),
        p.right.encode(dl.opcode, &dl.fields)
    );
    encodes(p, "roundtrip.cross", b, &el, &er, dr, dl)
}

/// Checks both encodes of fields `fl`/`fr` returned `b`.
fn encodes<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    key: &str,
    b: &[u8; 64],
    el: &EncodeResult,
    er: &EncodeResult,
    fl: &Decoded,
    fr: &Decoded,
) -> Option<Divergence> {
    let same = |r: &EncodeResult| matches!(r, Ok(x) if x == b);
    if same(el) && same(er) {
        return None;
    }
    let st = |r: &EncodeResult| match r {
        Ok(x) if x == b => "ok".to_string(),
        Ok(_) => "other_bytes".to_string(),
        Err(f) => format!("err:{f}"),
    };
    let (sl, sr) = (st(el), st(er));
    let class = match (el, er) {
        (Ok(_), Err(_)) => Class::OverAccept,
        (Err(_), Ok(_)) => Class::UnderAccept,
        (Err(a), Err(c)) if a != c => Class::SameVerdictDifferentReason,
        _ => Class::DifferentOutput,
    };
    let long = |r: &EncodeResult, d: &Decoded| {
        format!(
            "encode(…) = {}\n  expected    {}\n  fields: {}",
            r.shown(),
            hex(b),
            d
        )
    };
    p.div(
        class,
        format!("{key}@0x{:02X}", b[0]),
        sl,
        sr,
        long(el, fl),
        long(er, fr),
    )
    .map(|d| d.with_answers(Answer::of_encode(el, b), Answer::of_encode(er, b)))
}

/// SPEC §5.3 stream parse.
pub fn stream<L: Reference + ?Sized, R: Reference + ?Sized>(
    p: &Pair<'_, L, R>,
    s: &[u8],
) -> Option<Divergence> {
    let (l, r) = both!(
        p,
        "parse_stream",
        p.left.parse_stream(s),
        p.right.parse_stream(s)
    );
    streams_differ(p, &l, &r, ("ok", "summary"), false)
}

/// SPEC §5.3 stream rules as `validate_stream` answers them: the first stream error's name
/// and index, or valid.
pub fn stream_verdict<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    s: &[u8],
) -> Option<Divergence> {
    let (l, r) = both!(
        p,
        "validate_stream",
        p.left.validate_stream(s),
        p.right.validate_stream(s)
    );
    streams_differ(p, &l, &r, ("valid", "valid"), true)
}

/// Two stream answers, `None` when equal; an accepting side shows `ok.0`, both accepting key
/// `ok.1`; with `index`, the same error at another index keys `<name>:index`.
fn streams_differ<T: PartialEq, L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    l: &Result<T, StreamFail>,
    r: &Result<T, StreamFail>,
    ok: (&str, &str),
    index: bool,
) -> Option<Divergence>
where
    Result<T, StreamFail>: Shown,
{
    if l == r {
        return None;
    }
    let key = match (l, r) {
        (Err(a), Err(b)) if index && a.name == b.name => format!("{}:index", a.name),
        (Err(e), _) | (Ok(_), Err(e)) => e.name.to_string(),
        (Ok(_), Ok(_)) => ok.1.to_string(),
    };
    let short = |x: &Result<T, StreamFail>| match x {
        Ok(_) => ok.0.to_string(),
        Err(e) => format!("err:{}", e.name),
    };
    let class = Class::from_accepts(l.is_ok(), r.is_ok());
    p.div(class, key, short(l), short(r), l.shown(), r.shown())
}

/// SPEC §6: one table at one ordinal.
#[allow(clippy::result_large_err)]
#[inline]
pub fn lut<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    t: LutTable,
    ord: u32,
) -> Result<LutResult, Option<Divergence>> {
    let (left, right) = (|| p.left.lut(t, ord), || p.right.lut(t, ord));
    agreed(p, t.name(), left, right, |a, b| luts_differ(p, t, a, b))
}

#[cold]
#[inline(never)]
fn luts_differ<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    t: LutTable,
    a: &LutResult,
    b: &LutResult,
) -> Option<Divergence> {
    // A LUT's key is its SPEC §6 table name (`alu_op`), as subjects declare it.
    let class = Class::from_accepts(a.is_ok(), b.is_ok());
    equation(p, class, t.name(), a.shown(), b.shown())
}

/// A divergence of two answers to a named question, shown as `name = answer`.
fn equation<L: Subject + ?Sized, R: Subject + ?Sized>(
    p: &Pair<'_, L, R>,
    class: Class,
    name: &str,
    ls: String,
    rs: String,
) -> Option<Divergence> {
    let (left, right) = (format!("{name} = {ls}"), format!("{name} = {rs}"));
    p.div(class, name, ls, rs, left, right)
}

/// SPEC §7 IR gates and the SB2SB-vs-DMA route.
pub fn ir<L: Reference + ?Sized, R: Reference + ?Sized>(
    p: &Pair<'_, L, R>,
    q: &IrQuery,
) -> Option<Divergence> {
    let gate = q.gate();
    let (a, b) = both!(p, gate, p.left.ir(q), p.right.ir(q));
    if a == b {
        return None;
    }
    let class = match (&a, &b) {
        (IrAnswer::Gate(x), IrAnswer::Gate(y)) => Class::from_accepts(x.is_ok(), y.is_ok()),
        _ => Class::DifferentOutput,
    };
    equation(p, class, gate, a.shown(), b.shown())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::Capabilities;

    /// Answers `validate_stream` with `short_group` at its index, or valid.
    struct Streams(Option<usize>);

    impl Subject for Streams {
        fn name(&self) -> &str {
            "streams"
        }
        fn capabilities(&self) -> Capabilities {
            Capabilities::all()
        }
        fn validate_stream(&self, _: &[u8]) -> Reply<Result<(), StreamFail>> {
            Ok(self
                .0
                .map_or(Ok(()), |i| Err(StreamFail::at("short_group", Some(i), 0))))
        }
    }

    fn verdicts(l: Option<usize>, r: Option<usize>) -> Option<Divergence> {
        let (l, r) = (Streams(l), Streams(r));
        let p: Pair<'_, Streams, Streams> = Pair {
            left: &l,
            right: &r,
            target: Target::named("custom_op_group"),
            input: &[],
            case: &|| String::new(),
        };
        stream_verdict(&p, &[])
    }

    #[test]
    fn a_stream_error_at_another_index_keys_its_name_and_index() {
        assert!(verdicts(Some(3), Some(3)).is_none());
        let d = verdicts(Some(3), Some(5)).expect("another index diverges");
        assert_eq!(d.signature.key, "short_group:index");
        assert_eq!(d.signature.left, "err:short_group");
        assert_eq!(d.class, Class::SameVerdictDifferentReason);
        let d = verdicts(None, Some(5)).expect("valid against an error diverges");
        assert_eq!(d.signature.key, "short_group");
        assert_eq!(
            (&*d.signature.left, &*d.signature.right),
            ("valid", "err:short_group")
        );
        assert_eq!(d.class, Class::OverAccept);
    }
}
