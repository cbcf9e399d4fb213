//! Kind `engine_sync`: core's model of a subgraph's engines against the oracle's independent
//! reading (SPEC §11), each asked through [`Reference::engine_sync`] on generated multi-engine
//! programs. Reference pair only (no protocol op carries it). Compared in order: the refusal,
//! every finding in SPEC §11 DE-10 order, each engine's end, the final semaphores, and every
//! passed wait's link to the update that satisfied it.
//!
//! Contract: `compare_on` never panics (a panic is a `Panic` divergence, a fault one of its
//! class); the coverage key is `clean` or the distinct finding kinds, sorted; a divergence's
//! signature key names what differs first, without numbers.

use super::kind::{
    both_answers, differs, first_index_differing, CaseBudget, CaseBuf, DescribedCase, Draw, Form,
    Ran, TargetKind,
};
use crate::generators::engine_sync as gen;
use crate::judge::nway::Judge;
use crate::judge::{Divergence, Filed};
use crate::reach::{Field, Reach};
use crate::subjects::{hex, EngineProgram, EngineSyncAnswer, Reference};
use crate::targets::Target;
use std::collections::BTreeSet;

/// Cap on `engine_sync` gate cases (a few dozen instructions each, both readings).
pub const ENGINE_SYNC_CASES: u64 = 100_000;

pub struct EngineSyncKind;

impl TargetKind for EngineSyncKind {
    fn generate(&self, _t: Target, d: Draw<'_>, buf: &mut CaseBuf) -> Form {
        gen::program_into(d.r, &mut buf.bytes);
        Form::Bytes
    }

    fn run(&self, e: &Judge, t: Target, input: &[u8], reach: Option<&mut Reach>) -> Ran {
        let (core, oracle) = e.references();
        let (key, d, kinds) = compare_on(core, oracle, t, input);
        let classified = reach.map(|r| count_reach(r, &kinds)).is_some();
        Ran::keyed(d, key, classified)
    }

    fn declare_reach(&self, _t: Target, reach: &mut Reach) {
        reach.declare(&[Field::EngineSyncFinding]);
    }

    fn case_budget(&self) -> CaseBudget {
        CaseBudget::AtMost(ENGINE_SYNC_CASES)
    }

    fn case_reading(&self, _t: Target, input: &[u8]) -> Option<String> {
        let p = EngineProgram::from_bytes(input);
        let mut out = String::new();
        for (e, steps) in p.engines.iter().enumerate() {
            for (i, b) in steps.iter().enumerate() {
                out.push_str(&format!("engine {e} #{i}: band {}\n", hex(b)));
            }
        }
        for (k, d) in p.dma.iter().enumerate() {
            out.push_str(&format!(
                "dma {k}: S[{}] += {} after {:?}\n",
                d.sem, d.by, d.trigger
            ));
        }
        Some(out)
    }
}

fn count_reach(reach: &mut Reach, kinds: &BTreeSet<&'static str>) {
    if kinds.is_empty() {
        reach.hit(Field::EngineSyncFinding, "clean");
    }
    if kinds.contains("deadlock") && kinds.contains("unsatisfiable_wait") {
        reach.hit(Field::EngineSyncFinding, "deadlock+unsatisfiable_wait");
    }
    for k in kinds {
        reach.hit(Field::EngineSyncFinding, k);
    }
}

/// Where two answers first differ: (signature key, description), or `None` when they agree.
pub fn first_difference(
    core: &EngineSyncAnswer,
    oracle: &EngineSyncAnswer,
) -> Option<(String, String)> {
    let (c, o) = match (core, oracle) {
        (Ok(c), Ok(o)) => (c, o),
        (Err(a), Err(b)) if a == b => return None,
        _ => {
            let what = |a: &EngineSyncAnswer| match a {
                Ok(_) => "accepted".to_string(),
                Err(n) => format!("refused:{n}"),
            };
            return Some((
                format!("{} / {}", what(core), what(oracle)),
                format!("core {core:?}\noracle {oracle:?}"),
            ));
        }
    };
    if let Some(i) = first_index_differing(&c.findings, &o.findings) {
        return Some(match (c.findings.get(i), o.findings.get(i)) {
            (Some(a), Some(b)) if a.kind() == b.kind() => (
                format!("finding:{}:fields", a.kind()),
                format!("finding {i}: core {a:?}, oracle {b:?}"),
            ),
            (a, b) => {
                let k = |f: Option<&crate::subjects::EngineFinding>| f.map_or("none", |f| f.kind());
                (
                    format!("finding:{} / {}", k(a), k(b)),
                    format!("finding {i}: core {a:?}, oracle {b:?}"),
                )
            }
        });
    }
    if c.ends != o.ends {
        return Some((
            "ends".into(),
            format!("core {:?}, oracle {:?}", c.ends, o.ends),
        ));
    }
    if c.semaphores != o.semaphores {
        let at = (0..256).find(|&s| c.semaphores.get(s) != o.semaphores.get(s));
        return Some((
            "semaphores".into(),
            format!(
                "S[{at:?}]: core {:?}, oracle {:?}",
                at.and_then(|s| c.semaphores.get(s)),
                at.and_then(|s| o.semaphores.get(s))
            ),
        ));
    }
    if let Some(at) = first_index_differing(&c.links, &o.links) {
        let (a, b) = (c.links.get(at), o.links.get(at));
        return Some((
            "links".into(),
            format!("link {at}: core {a:?}, oracle {b:?}"),
        ));
    }
    None
}

/// Compares `core` and `oracle` on `input`: the coverage key, the divergence if any, and the
/// finding kinds.
fn compare_on(
    core: &dyn Reference,
    oracle: &dyn Reference,
    target: Target,
    input: &[u8],
) -> (String, Option<Divergence>, BTreeSet<&'static str>) {
    let filed = DescribedCase::new(target, input, (core, oracle), ("core", "oracle"));
    let p = EngineProgram::from_bytes(input);
    let diverged = |f: Filed| {
        let case = format!(
            "{} engines, {} instructions",
            p.engines.len(),
            p.instructions()
        );
        let d = filed.divergence(f, case);
        ("diverged".to_string(), Some(d), BTreeSet::new())
    };
    let ask = || (core.engine_sync(&p), oracle.engine_sync(&p));
    let (c, o) = match both_answers("engine_sync", "engine_sync", ask) {
        Ok(both) => both,
        Err(filed) => return diverged(filed),
    };
    if let Some((key, detail)) = first_difference(&c, &o) {
        return diverged(differs("engine_sync", &key, detail));
    }
    let kinds: BTreeSet<&'static str> = match &c {
        Ok(o) => o.findings.iter().map(|f| f.kind()).collect(),
        Err(_) => BTreeSet::new(),
    };
    let key = match &c {
        Err(n) => format!("refused:{n}"),
        Ok(_) if kinds.is_empty() => "clean".into(),
        Ok(_) => kinds.iter().copied().collect::<Vec<_>>().join(","),
    };
    (key, None, kinds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::SplitMix64;
    use crate::judge::Class;
    use crate::subjects::registry;

    fn target() -> Target {
        Target::named("engine_sync")
    }

    fn compare(target: Target, input: &[u8]) -> (String, Option<Divergence>) {
        let (core, oracle) = (registry::core(), registry::oracle());
        let (key, d, _) = compare_on(&*core, &*oracle, target, input);
        (key, d)
    }

    #[test]
    fn the_readings_agree_on_generated_programs_and_reach_every_finding() {
        let mut r = SplitMix64(0x5EED_0034);
        let mut seen = BTreeSet::new();
        let mut p = Vec::new();
        for _ in 0..3000 {
            gen::program_into(&mut r, &mut p);
            let (key, d) = compare(target(), &p);
            assert!(d.is_none(), "{d:?}");
            seen.extend(key.split(',').map(String::from));
            // The same program's bytes, one changed: any byte string is a program.
            let mut q = p.clone();
            if !q.is_empty() {
                let i = r.index(q.len());
                q[i] = r.byte();
            }
            let (_, d) = compare(target(), &q);
            assert!(d.is_none(), "{d:?}");
        }
        for k in crate::reach::ENGINE_SYNC_FINDINGS {
            if !k.contains('+') {
                assert!(seen.contains(k), "{k} not reached: {seen:?}");
            }
        }
    }

    /// Core, its answer without its last finding (or with one more semaphore bump).
    struct Slipped;

    crate::kinds::test_subjects::stand_in_subject!(Slipped, "slipped");

    impl Reference for Slipped {
        fn engine_sync(&self, p: &EngineProgram) -> crate::subjects::Reply<EngineSyncAnswer> {
            let mut a = registry::core().engine_sync(p)?;
            if let Ok(o) = &mut a {
                if o.findings.pop().is_none() {
                    o.semaphores[0] += 1;
                }
            }
            Ok(a)
        }
    }

    #[test]
    fn the_answers_are_asked_through_the_subject_interface() {
        let oracle = registry::oracle();
        let mut r = SplitMix64(7);
        let mut p = Vec::new();
        gen::program_into(&mut r, &mut p);
        let (key, d, _) = compare_on(&Slipped, &*oracle, target(), &p);
        let d = d.expect("a difference");
        assert_eq!(
            (key.as_str(), d.class),
            ("diverged", Class::DifferentOutput)
        );
        let silent = crate::kinds::test_subjects::Silent;
        let (_, d, _) = compare_on(&silent, &*oracle, target(), &p);
        assert_eq!(d.expect("no answer").class, Class::Unsupported);
    }
}
