//! Kind `structured` (target `structured_diff`, fuzzing only): a generator program
//! ([`gen::program()`]) whose items all agree across the subjects **and** match the
//! generator's labels. The first failure is reported once: a differential target's
//! disagreement as that target's own divergence (so the gate merges it with the same one
//! found through that target); a failure only this property sees (a label mismatch, a
//! near-valid encode) as a `structured_diff` divergence keyed by what failed.

use super::kind::TargetKind;
use crate::generators::{self as gen, Case, GenError, Item};
use crate::judge::input_map::ir_query_from_input;
use crate::judge::nway::Judge;
use crate::judge::{Class, Divergence, Outcome, Signature};
use crate::subjects::{hex, verdict_name, Capability, EncodeResult, Subject, Validator, Value};
use crate::targets::{Check, Target};
use arbitrary::Unstructured;

pub struct StructuredKind;

impl TargetKind for StructuredKind {
    /// The property on `data`; the first failure as a divergence of `target`.
    fn compare(&self, e: &Judge, target: Target, data: &[u8]) -> Outcome {
        match run(e, data) {
            Ok(()) => Outcome::agree(),
            Err(mut d) => {
                // A failure only this property sees is about the whole program.
                if d.target == target {
                    d.input = data.to_vec();
                }
                Outcome(vec![*d])
            }
        }
    }
}

/// The first failure: a differential target's own divergence, or one of `structured_diff`
/// ([`own`]).
type Failed = Box<Divergence>;

/// A failure only this property sees (its input set by `compare`): `text` as the left
/// answer, keyed by `key` and `left`, about `names` (default: the reference pair).
fn own(e: &Judge, names: Option<(&str, &str)>, text: String, key: String, left: String) -> Failed {
    let s = e.subjects();
    let (l, r) = names.unwrap_or((s[0].name(), s[1].name()));
    Box::new(Divergence {
        target: Target::by_check(Check::Structured).expect("the registry's structured_diff row"),
        input: Vec::new(),
        case: String::new(),
        left_name: l.to_string(),
        right_name: r.to_string(),
        left: text,
        right: String::new(),
        signature: Signature {
            key,
            left,
            right: String::new(),
        },
        class: Class::DifferentOutput,
        cohorts: Vec::new(),
        answers: Default::default(),
    })
}

fn outcome(o: Outcome) -> Result<(), Failed> {
    o.0.into_iter().next().map_or(Ok(()), |d| Err(Box::new(d)))
}

fn gen_err(j: &Judge, e: GenError) -> Result<(), Failed> {
    match e {
        GenError::Arbitrary(_) => Ok(()), // not reachable in practice; nothing to compare
        GenError::Encode(r) => Err(own(
            j,
            None,
            r.to_string(),
            format!(
                "core refused to encode a valid-by-construction instruction: opcode 0x{:02X}",
                r.instruction.opcode()
            ),
            String::new(),
        )),
        e @ GenError::NoGenerator { .. } => {
            Err(own(j, None, e.to_string(), e.to_string(), String::new()))
        }
    }
}

fn run(e: &Judge, data: &[u8]) -> Result<(), Failed> {
    let prog = gen::program(data);
    for (_, item) in prog.items {
        match item {
            Item::Case(c, enc) => {
                check_case(e, &c)?;
                check_encode(e, &mut Unstructured::new(&enc), &c)?;
            }
            Item::Image(b) => {
                for t in Target::all().filter(|t| t.is_bundle()) {
                    outcome(e.compare(t, &b))?;
                }
            }
            Item::Stream(s) => outcome(e.compare_stream(&s))?,
            Item::Lut(ord) => {
                for t in Target::all().filter(|t| matches!(t.check(), Check::Lut(_))) {
                    outcome(e.compare_lut(t, ord))?;
                }
            }
            Item::Ir(input) => outcome(e.compare_ir(&ir_query_from_input(&input)))?,
            Item::Refused(err) => gen_err(e, err)?,
        }
    }
    Ok(())
}

/// A generated case through every bundle target, then each subject against its label.
pub fn check_case_report(e: &Judge, c: &Case) -> Result<(), String> {
    check_case(e, c).map_err(|d| match d.target.check() {
        Check::Structured => d.left,
        _ => format!("{d}{}", context(c)),
    })
}

/// The case and its bundle, for a failure's text.
fn context(c: &Case) -> String {
    format!(
        "\n  case: base 0x{:02X}, violations {:?}\n  bundle: {}",
        c.base,
        c.violations,
        hex(&c.bundle)
    )
}

fn check_case(e: &Judge, c: &Case) -> Result<(), Failed> {
    for t in Target::all().filter(|t| t.is_bundle()) {
        outcome(e.compare(t, &c.bundle))?;
    }
    // The labels are the default generation's; under another the items are only compared.
    if e.arch() != gen::Config::default().arch {
        return Ok(());
    }
    // The reference pair (subjects 0 and 1) was just compared on these very
    // views (same verdict; same decode, or the same failing field and
    // reserved offset), so subject 1 says what subject 0 says: checking the
    // label against subject 0 checks it for both (the others are checked themselves).
    let subjects: Vec<&dyn Subject> = e
        .subjects()
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != 1)
        .map(|(_, s)| &**s)
        .collect();
    let label =
        |view: &str, need: Capability, want: String, got: &dyn Fn(&dyn Subject) -> String| {
            let says: Vec<(String, String)> = subjects
                .iter()
                .filter(|s| s.capabilities().has(need))
                .map(|s| (s.name().to_string(), got(*s)))
                .collect();
            if says.iter().all(|(_, g)| *g == want) {
                return Ok(());
            }
            let list: Vec<String> = says.iter().map(|(n, g)| format!("{n} says {g}")).collect();
            let key = format!(
                "label mismatch in `{view}`: generator expects {want}, {}",
                list.join(", ")
            );
            let kinds: Vec<&str> = c.violations.iter().map(|v| v.kind()).collect();
            Err(own(
                e,
                None,
                format!("{key}{}", context(c)),
                key,
                format!("violations: {}", kinds.join(", ")),
            ))
        };
    let b = &c.bundle;
    let v = |s: &dyn Subject, which: Validator| match s.validate(which, b) {
        Ok(x) => verdict_name(&x).to_string(),
        Err(f) => f.to_string(),
    };
    for (want, which) in [
        (c.expected.header, Validator::Header),
        (c.expected.payload, Validator::Payload),
    ] {
        if let Some(want) = want {
            let (need, want) = (Capability::of_validator(which), want.unwrap_or("valid"));
            label(which.op(), need, want.to_string(), &|s| v(s, which))?;
        }
    }
    if let Some(want) = c.expected.decode {
        let show = |r: Result<(), (&str, usize)>| match r {
            Ok(()) => "ok".to_string(),
            Err(("reserved", o)) => format!("reserved@0x{o:02X}"),
            Err((f, _)) => f.to_string(),
        };
        label(
            "decode",
            Capability::Decode,
            show(want.map_err(|l| (l.field, l.offset))),
            &|s| match s.decode(b) {
                Ok(r) => show(
                    r.as_ref()
                        .map(|_| ())
                        .map_err(|f| (f.field.as_str(), f.offset)),
                ),
                Err(f) => f.to_string(),
            },
        )?;
    }
    Ok(())
}

/// Encode-side near-valid: the reference's decode of the case's valid image with one field
/// out of table or too wide; every encoder must give the reference's bytes or error field.
fn check_encode(e: &Judge, u: &mut Unstructured<'_>, c: &Case) -> Result<(), Failed> {
    let Ok(base) = gen::encode(&c.instruction, gen::Config::default().arch) else {
        return Ok(());
    };
    let reference = e.subjects()[0];
    let Ok(Ok(d)) = reference.decode(&base) else {
        return Ok(()); // decode_any / roundtrip already compared this image
    };
    let mut fields = d.fields.clone();
    if fields.is_empty() {
        return Ok(());
    }
    let i = u.choose_index(fields.len()).unwrap_or(0);
    let (name, val) = &mut fields[i];
    // One of `xs` (the first when `u` has none to choose with).
    let mut one_of = |xs: &[&str]| u.choose(xs).map_or(xs[0], |x| *x).to_string();
    *val = match (&**name, &*val) {
        ("kind", _) => Value::Name(one_of(&["SendRecv", "SendRecvCCE", "AllToAllV", "nope"])),
        ("cce_op", _) => Value::Name(one_of(&[
            "subtract",
            "average",
            "elemwise_mul",
            "abs",
            "bypass",
            "x",
        ])),
        (_, Value::Int(_)) => Value::Int(
            *u.choose(&[0, 0x02, 0x07, 0x11, 0x100, 0x1_0000, 1 << 32, u64::MAX])
                .unwrap_or(&0),
        ),
        (_, Value::Bytes(b)) => {
            let (n, longer) = (b.len(), u.ratio(1, 2).unwrap_or(false));
            Value::Bytes(vec![0xA5; if longer { n + 1 } else { n.saturating_sub(1) }])
        }
        (_, Value::Name(_)) => Value::Name("nope".to_string()),
    };
    let show = |x: &Result<EncodeResult, String>| match x {
        Ok(Ok(b)) => format!("Ok {}", hex(b)),
        Ok(Err(f)) => format!("Err(field {f})"),
        Err(f) => f.clone(),
    };
    let enc = |s: &dyn Subject| s.encode(d.opcode, &fields).map_err(|f| f.to_string());
    let l = enc(reference);
    for s in &e.subjects()[1..] {
        if !s.capabilities().has(Capability::Encode) {
            continue;
        }
        let r = enc(&**s);
        if l == r {
            continue;
        }
        let list: Vec<String> = fields.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let name = &fields[i].0;
        let text = format!(
            "divergence in encode (near-valid field list) for opcode 0x{:02X}\n  fields: {}\n  {}: {}\n  {}: {}",
            d.opcode,
            list.join(", "),
            reference.name(),
            show(&l),
            s.name(),
            show(&r)
        );
        let key = format!(
            "divergence in encode (near-valid field list) for opcode 0x{:02X}: field {name}",
            d.opcode
        );
        let left = match &l {
            Ok(Ok(_)) => format!("{}: Ok", reference.name()),
            _ => format!("{}: {}", reference.name(), show(&l)),
        };
        return Err(own(e, Some((reference.name(), s.name())), text, key, left));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::{registry, FieldName, Reference, Reply};

    /// Core, but encoding what core refuses (as zeros).
    struct Loose(Box<dyn Reference>);

    crate::kinds::test_subjects::stand_in_subject!(Loose, "loose";
        fn forwards_to(&self) -> Option<&dyn Reference> {
            Some(&*self.0)
        }
        fn encode(&self, opcode: u8, fields: &[(FieldName, Value)]) -> Reply<EncodeResult> {
            Ok(self.0.encode(opcode, fields)?.or(Ok([0; 64])))
        }
    );

    #[test]
    fn a_failure_only_the_property_sees_is_a_structured_diff_divergence_of_the_program() {
        let loose: Box<dyn Subject> = Box::new(Loose(registry::core()));
        let e = Judge::new(registry::core(), registry::oracle(), vec![loose]);
        let t = Target::by_check(Check::Structured).expect("the structured_diff row");
        let mut rng = gen::SplitMix64(7);
        let found = (0..2000).find_map(|_| {
            let data: Vec<u8> = (0..512).map(|_| rng.byte()).collect();
            let o = StructuredKind.compare(&e, t, &data);
            o.0.into_iter().find(|d| d.target == t).map(|d| (data, d))
        });
        let (data, d) = found.expect("a near-valid encode only the loose subject accepts");
        assert_eq!(d.input, data);
        assert_eq!((&*d.left_name, &*d.right_name), ("core", "loose"));
        assert!(d
            .signature
            .key
            .starts_with("divergence in encode (near-valid field list)"));
        assert!(d.left.contains("\n  loose: Ok 0000"), "{}", d.left);
        assert_eq!(d.class, Class::DifferentOutput);
    }
}
