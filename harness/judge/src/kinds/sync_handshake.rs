//! Kind `sync_handshake`: core's `alloc_semaphores` model against the oracle's engine
//! simulator on generated programs (SPEC §8), through the [`Reference`] sync operations: core
//! plans and stamps, the oracle vets, simulates and reads bands. Reference pair only.
//!
//! Contract: `compare_shaped` never panics (a panic is a `Panic` divergence); its coverage
//! key is `accepted`, `rejected:<class>` or `diverged`; a mismatch is classed from the model's
//! perspective and keyed by what differs (with the SPEC §8 classes), so one bug is one entry.

use super::kind::{CaseBudget, CaseDivergence, DescribedCase, Ran, TargetKind};
use crate::generators::sync_program::{self, Case, Shape};
use crate::judge::nway::Judge;
use crate::judge::{Class, Divergence, Filed};
use crate::reach::{Field, Reach, SYNC_SHAPES};
use crate::subjects::{registry, Fault, Reference, SyncEntry, SyncPlanned, SyncWait};
use crate::targets::Target;

pub struct SyncHandshakeKind;

impl TargetKind for SyncHandshakeKind {
    /// Counts an accepted program's shapes from the program the comparison built.
    fn run(&self, e: &Judge, t: Target, input: &[u8], reach: Option<&mut Reach>) -> Ran {
        let (key, d, shape) = compare_shaped(e, t, input, reach.is_some());
        let classified = match (reach, shape) {
            (Some(r), Some(s)) => {
                count_shape(r, &s);
                true
            }
            _ => false,
        };
        Ran::keyed(d, key, classified)
    }

    fn declare_reach(&self, _t: Target, reach: &mut Reach) {
        reach.declare(&[Field::SyncPseudoRun, Field::SyncShape]);
    }

    fn case_budget(&self) -> CaseBudget {
        CaseBudget::SyncCases
    }

    /// The program's shapes, when the model accepts it (only then is a shape tested).
    fn record_reach(&self, _t: Target, reach: &mut Reach, input: &[u8]) -> bool {
        let case = sync_program::build_case(&mut arbitrary::Unstructured::new(input));
        if !matches!(registry::core().sync_plan(&case.program, &[]), Ok(Ok(_))) {
            return false;
        }
        count_shape(reach, &sync_program::shape(&case.program));
        true
    }
}

pub fn count_shape(reach: &mut Reach, s: &Shape) {
    let runs = sync_program::PSEUDO_RUNS.into_iter().zip(s.pseudo_runs);
    for (class, hit) in runs {
        if hit {
            reach.hit(Field::SyncPseudoRun, class);
        }
    }
    let shapes = [s.fan_out, s.several_engines, s.long_chain];
    for (class, hit) in SYNC_SHAPES.into_iter().zip(shapes) {
        if hit {
            reach.hit(Field::SyncShape, class);
        }
    }
}

/// Model and simulator agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncCaseOutcome {
    /// Both reject the program with the same SPEC §8 class.
    Rejected { class: &'static str },
    /// Both accept it, and the model's plan ran clean in the simulator.
    Accepted { instrs: usize, steps: usize },
}

/// One case on the judge's reference pair: the coverage key, the divergence if any, and the
/// program's shape when `want_shape` and both sides accept it.
fn compare_shaped(
    e: &Judge,
    target: Target,
    data: &[u8],
    want_shape: bool,
) -> (String, Option<Divergence>, Option<Shape>) {
    // In the gate, core is wrapped in its coverage recorder, which forwards the sync operations.
    let (model, sim) = e.references();
    let filed = DescribedCase::new(target, data, (model, sim), ("model", "simulator"));
    match filed.guarded("sync_handshake", || {
        case_shaped(model, sim, data, want_shape)
    }) {
        Ok((SyncCaseOutcome::Accepted { .. }, shape)) => ("accepted".into(), None, shape),
        Ok((SyncCaseOutcome::Rejected { class }, _)) => (format!("rejected:{class}"), None, None),
        Err(d) => ("diverged".into(), Some(d), None),
    }
}

/// One case: a program built from `data`, on the model and the simulator.
pub fn sync_handshake_case(data: &[u8]) -> Result<SyncCaseOutcome, CaseDivergence> {
    case_shaped(&*registry::core(), &*registry::oracle(), data, false).map(|(o, _)| o)
}

/// [`sync_handshake_case`], with the shape of an accepted program when `want_shape`.
fn case_shaped(
    model: &dyn Reference,
    sim: &dyn Reference,
    data: &[u8],
    want_shape: bool,
) -> Result<(SyncCaseOutcome, Option<Shape>), CaseDivergence> {
    let (case, schedule) = sync_program::build_recycled(data);
    let outcome = compare_case_on(model, sim, &case, schedule);
    let accepted = matches!(outcome, Ok(SyncCaseOutcome::Accepted { .. }));
    let shape = (want_shape && accepted).then(|| sync_program::shape(&case.program));
    sync_program::recycle(case);
    outcome.map(|o| (o, shape))
}

/// Compares a planner (`model`) with a checker (`sim`) on a built case, with interleaving
/// bytes `schedule`.
pub fn compare_case_on(
    model: &dyn Reference,
    sim: &dyn Reference,
    case: &Case,
    schedule: &[u8],
) -> Result<SyncCaseOutcome, CaseDivergence> {
    compare_with(model, sim, case, schedule).map_err(|m| CaseDivergence {
        filed: Box::new(m),
        case: format!("{:?}", case.program),
    })
}

fn fault(who: &dyn Reference, op: &str, f: Fault) -> Filed {
    let class = Class::of_fault(&f);
    let text = format!("{} {op}: {f}", who.name());
    Filed::new(class, format!("fault:{}", class.name()), text)
}

fn compare_with(
    model: &dyn Reference,
    sim: &dyn Reference,
    case: &Case,
    schedule: &[u8],
) -> Result<SyncCaseOutcome, Filed> {
    let p = &case.program;
    let planned = model
        .sync_plan(p, &case.flows)
        .map_err(|f| fault(model, "sync_plan", f))?;
    let vetted = sim
        .sync_plan(p, &[])
        .map_err(|f| fault(sim, "sync_plan", f))?;
    // Classed from the model's perspective.
    let (plan, exp) = match (planned, vetted) {
        (Err(e), Err(r)) if e.class == r.class => {
            return Ok(SyncCaseOutcome::Rejected { class: e.class })
        }
        (Err(e), Err(r)) => {
            return Err(Filed::new(
                Class::SameVerdictDifferentReason,
                format!("reject classes:{}/{}", e.class, r.class),
                format!(
                    "model rejects with {}, oracle with {}",
                    e.message, r.message
                ),
            ))
        }
        (Err(e), Ok(_)) => {
            return Err(Filed::new(
                Class::UnderAccept,
                format!("model rejects:{}, oracle accepts", e.class),
                format!("model rejects with {}, oracle accepts", e.message),
            ))
        }
        (Ok(_), Err(r)) => {
            return Err(Filed::new(
                Class::OverAccept,
                format!("model accepts, oracle rejects:{}", r.class),
                format!("model accepts, oracle rejects with {}", r.message),
            ))
        }
        (Ok(plan), Ok(exp)) => (plan, exp),
    };
    let output = Class::DifferentOutput;
    if plan.ids != exp.ids {
        let text = format!("pool ids: model {:?}, oracle {:?}", plan.ids, exp.ids);
        return Err(Filed::new(output, "pool ids", text));
    }
    if plan.finals != exp.finals {
        let (m, o) = (plan.finals, exp.finals);
        let text = format!("final values: model {m:?}, oracle {o:?}");
        return Err(Filed::new(output, "final values", text));
    }
    let Some(base) = plan.plan.as_deref() else {
        return Err(fault(
            model,
            "sync_plan",
            Fault::Protocol("accepted without a plan".into()),
        ));
    };
    let trace = sim
        .sync_simulate(p, exp.ticket, base, schedule)
        .map_err(|f| fault(sim, "sync_simulate", f))?
        .map_err(|v| {
            let shown = &schedule[..schedule.len().min(32)];
            let text = format!(
                "simulator: {v} under schedule {shown:02x?} ({} bytes)",
                schedule.len()
            );
            Filed::new(output, format!("simulator:{}", v.kind()), text)
        })?;
    if trace.finals != plan.finals {
        let (s, m) = (trace.finals, plan.finals);
        let text = format!("simulated finals {s:?} != model {m:?}");
        return Err(Filed::new(output, "simulated finals", text));
    }
    check_stamps(sim, case, &plan, &exp, base, schedule)?;
    Ok(SyncCaseOutcome::Accepted {
        instrs: p.instrs.len(),
        steps: trace.steps,
    })
}

/// What a stamped band got wrong (SPEC §8 DS-9, DS-13, DS-14), keyed `stamp:<fault>`: the
/// fault, then the detail formatted from the rest.
macro_rules! stamp {
    ($fault:literal, $($detail:tt)+) => {{
        let text = format!("{}: {}", $fault, format_args!($($detail)+));
        Filed::new(Class::DifferentOutput, concat!("stamp:", $fault), text)
    }};
}

/// The local semaphore id of instruction `i` as the checker allocated it.
fn local_id(case: &Case, exp: &SyncPlanned, i: u16) -> Option<u8> {
    let ins = case.program.instrs.get(usize::from(i))?;
    let s = ins.sems.iter().find(|s| s.target_core.is_none())?;
    exp.ids.get(usize::from(s.handle)).copied()
}

/// Replace the last Wait on `w.sem` in `e` by `w` (the band's one wait slot, DS-9).
fn put_band_wait(e: &mut SyncEntry, w: SyncWait) -> Result<(), String> {
    match e.waits.iter_mut().rev().find(|x| x.sem == w.sem) {
        Some(slot) => {
            *slot = w;
            Ok(())
        }
        None => Err(format!(
            "band waits on semaphore {} the plan never waits on",
            w.sem
        )),
    }
}

/// Reads the bands the model stamped for each flow's header and consumers with the checker
/// and checks the handshake of S000 §sync NOTE "the handshake in one line" with the compiler's
/// encoding (SPEC §8 DS-13/DS-14: WAIT_FOR_SEM_GE_IMM 0x05, SEM_INC_COMPLETE 0x13). Then the
/// checker runs the plan with every stamped wait from the bytes, so a wrong threshold on the
/// wire shows up as an early start.
fn check_stamps(
    sim: &dyn Reference,
    case: &Case,
    plan: &SyncPlanned,
    exp: &SyncPlanned,
    base: &[SyncEntry],
    schedule: &[u8],
) -> Result<(), Filed> {
    if case.flows.is_empty() {
        return Ok(());
    }
    if plan.stamps.len() != case.flows.len() {
        return Err(stamp!(
            "stamp_refused",
            "{} flows, {} stamped",
            case.flows.len(),
            plan.stamps.len()
        ));
    }
    let mut from_bytes = base.to_vec();
    let mult = |i: u16| {
        case.program
            .instrs
            .get(usize::from(i))
            .map_or(0, |x| x.mult)
    };
    let read = |b: &[u8; 64], ticks: u32| {
        sim.sync_band(b, ticks)
            .map_err(|f| fault(sim, "sync_band", f))
    };
    for (f, stamps) in case.flows.iter().zip(&plan.stamps) {
        let header = stamps
            .header
            .as_ref()
            .map_err(|e| stamp!("stamp_refused", "header of flow {f:?}: {e}"))?;
        let band = read(header, mult(f.result_dma))?;
        // No silent default: a flow endpoint without a local semaphore id is a
        // generator/simulator fault, not an id 0 both stampers could agree on.
        let id = |i: u16| {
            local_id(case, exp, i).ok_or_else(|| {
                stamp!(
                    "no_local_id",
                    "flow {f:?}: instruction {i} has no local semaphore id in the plan"
                )
            })
        };
        let want = (0x05, id(f.dma_in)?, 0x13, id(f.result_dma)?);
        if (
            band.wait_mode,
            band.wait_idx,
            band.update_mode,
            band.update_idx,
        ) != want
        {
            return Err(stamp!(
                "header_band",
                "header band {band:?}, expected (wait, idx, update, idx) {want:02x?} (flow {f:?})"
            ));
        }
        let (wait, _) = band.sync.map_err(|off| {
            stamp!(
                "unstamped",
                "header band byte {off} not stamped by the pass: {band:?}"
            )
        })?;
        if let (Some(w), Some(e)) = (wait, from_bytes.get_mut(usize::from(f.custom_op))) {
            put_band_wait(e, w)
                .map_err(|m| stamp!("unplanned_wait", "header of flow {f:?}: {m}"))?;
        }
        if stamps.consumers.len() != f.consumers.len() {
            return Err(stamp!(
                "stamp_refused",
                "flow {f:?}: {} consumers stamped",
                stamps.consumers.len()
            ));
        }
        for (&c, bundle) in f.consumers.iter().zip(&stamps.consumers) {
            let bundle = bundle
                .as_ref()
                .map_err(|e| stamp!("stamp_refused", "consumer {c}: {e}"))?;
            let band = read(bundle, mult(c))?;
            if (band.wait_mode, band.wait_idx) != (0x05, want.3) {
                return Err(stamp!(
                    "consumer_band",
                    "consumer {c} band {band:?}, expected a 0x05 wait on {}",
                    want.3
                ));
            }
            let (wait, update) = band.sync.map_err(|off| {
                stamp!(
                    "unstamped",
                    "consumer {c} band byte {off} not stamped: {band:?}"
                )
            })?;
            let Some(entry) = from_bytes.get_mut(usize::from(c)) else {
                return Err(stamp!("outside_plan", "consumer {c} outside the plan"));
            };
            if let Some(w) = wait {
                put_band_wait(entry, w)
                    .map_err(|m| stamp!("unplanned_wait", "consumer {c}: {m}"))?;
            }
            if let Some(u) = update {
                if !entry.updates.contains(&u) {
                    return Err(stamp!(
                        "unplanned_update",
                        "consumer {c} band update {u:?} not in the plan"
                    ));
                }
            }
        }
    }
    if from_bytes != *base {
        sim.sync_simulate(&case.program, exp.ticket, &from_bytes, schedule)
            .map_err(|f| fault(sim, "sync_simulate", f))?
            .map_err(|v| stamp!("simulated_bytes", "simulator on the stamped bytes: {v}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::SplitMix64;
    use crate::kinds::test_subjects::Silent;

    use crate::subjects::{Reply, SyncFlow, SyncProgram, SyncRejected, SyncRun, SyncViolation};

    /// Core or the oracle (`.0`), with its `sync_plan` rejecting as class `.1` when given one,
    /// its plan's pool ids changed (`.2`), or its simulator finding an early start (`.3`).
    struct Slipped(Box<dyn Reference>, Option<&'static str>, bool, bool);

    crate::kinds::test_subjects::stand_in_subject!(Slipped, "slipped");

    impl Reference for Slipped {
        fn sync_plan(
            &self,
            p: &SyncProgram,
            flows: &[SyncFlow],
        ) -> Reply<Result<SyncPlanned, SyncRejected>> {
            let mut r = self.0.sync_plan(p, flows)?;
            if let Some(class) = self.1 {
                let message = class.to_uppercase();
                return Ok(Err(SyncRejected { class, message }));
            }
            if let (Ok(planned), true) = (&mut r, self.2) {
                planned.ids.iter_mut().for_each(|id| *id ^= 0x20);
            }
            Ok(r)
        }

        fn sync_simulate(
            &self,
            p: &SyncProgram,
            ticket: u64,
            plan: &[SyncEntry],
            schedule: &[u8],
        ) -> Reply<Result<SyncRun, SyncViolation>> {
            let r = self.0.sync_simulate(p, ticket, plan, schedule)?;
            if self.3 {
                let v = crate::subjects::SimViolation::EarlyStart { instr: 3, sem: 7 };
                return Ok(Err(SyncViolation::Run(v)));
            }
            Ok(r)
        }
    }

    /// An accepted program with a custom-op flow, and its schedule.
    fn accepted_case() -> (Case, Vec<u8>) {
        let (core, oracle) = (registry::core(), registry::oracle());
        (0..2000u64)
            .map(|s| {
                let data = SplitMix64(s).bytes(600);
                let mut u = arbitrary::Unstructured::new(&data);
                let case = sync_program::build_case(&mut u);
                (case, u.take_rest().to_vec())
            })
            .find(|(c, sch)| {
                !c.flows.is_empty()
                    && matches!(
                        compare_case_on(&*core, &*oracle, c, sch),
                        Ok(SyncCaseOutcome::Accepted { .. })
                    )
            })
            .expect("an accepted program with a custom-op flow")
    }

    #[test]
    fn compare_with_files_each_mismatch_from_the_model_perspective() {
        let (case, schedule) = accepted_case();
        let slipped = |oracle: bool, rejects, ids, sim| {
            let s = if oracle {
                registry::oracle()
            } else {
                registry::core()
            };
            Slipped(s, rejects, ids, sim)
        };
        let run = |model: &Slipped, sim: &Slipped| {
            *compare_case_on(model, sim, &case, &schedule)
                .expect_err("a mismatch")
                .filed
        };
        let (core, oracle) = (
            slipped(false, None, false, false),
            slipped(true, None, false, false),
        );
        let (cycle, overflow) = (Some("cycle"), Some("overflow"));
        let over = run(&core, &slipped(true, cycle, false, false));
        assert_eq!(over.class, Class::OverAccept);
        assert_eq!(over.key, "model accepts, oracle rejects:cycle");
        let under = run(&slipped(false, cycle, false, false), &oracle);
        assert_eq!(under.class, Class::UnderAccept);
        assert_eq!(under.key, "model rejects:cycle, oracle accepts");
        let both = run(
            &slipped(false, cycle, false, false),
            &slipped(true, overflow, false, false),
        );
        assert_eq!(both.class, Class::SameVerdictDifferentReason);
        assert_eq!(both.key, "reject classes:cycle/overflow");
        assert_eq!(both.text, "model rejects with CYCLE, oracle with OVERFLOW");
        let ids = run(&slipped(false, None, true, false), &oracle);
        assert_eq!(ids.class, Class::DifferentOutput);
        assert_eq!(ids.key, "pool ids");
        assert!(!ids.key.chars().any(|c| c.is_ascii_digit()));
        // The simulator's violation keys by its kind, not by its rendering.
        let sim = run(&core, &slipped(true, None, false, true));
        assert_eq!(sim.class, Class::DifferentOutput);
        assert_eq!(sim.key, "simulator:EarlyStart");
        assert!(
            sim.text.starts_with("simulator: EarlyStart { instr: 3"),
            "{sim:?}"
        );
    }

    /// Core, with byte 5 (the wait index) of every stamped header changed.
    struct Misstamped(Box<dyn Reference>);

    crate::kinds::test_subjects::stand_in_subject!(Misstamped, "misstamped");

    impl Reference for Misstamped {
        fn sync_plan(
            &self,
            p: &crate::subjects::SyncProgram,
            flows: &[crate::subjects::SyncFlow],
        ) -> crate::subjects::Reply<Result<SyncPlanned, crate::subjects::SyncRejected>> {
            let mut r = self.0.sync_plan(p, flows)?;
            if let Ok(planned) = &mut r {
                for s in &mut planned.stamps {
                    if let Ok(h) = &mut s.header {
                        h[5] ^= 0x01;
                    }
                }
            }
            Ok(r)
        }
    }

    #[test]
    fn sync_goes_through_the_subject_interface() {
        let (core, oracle) = (registry::core(), registry::oracle());
        let (case, schedule) = accepted_case();
        let d = compare_case_on(&Misstamped(registry::core()), &*oracle, &case, &schedule)
            .expect_err("a wrong header band diverges");
        assert_eq!(d.filed.key, "stamp:header_band", "{d:?}");
        let d = compare_case_on(&Silent, &*oracle, &case, &schedule).expect_err("no plan");
        assert_eq!(d.filed.class, Class::Unsupported, "{d:?}");
        let d = compare_case_on(&*core, &Silent, &case, &schedule).expect_err("no checker");
        assert_eq!(d.filed.class, Class::Unsupported, "{d:?}");
        // The gate's engine (core wrapped in its coverage recorder) agrees.
        let (e, _key) = Judge::open(&[], crate::generation::Generation::default())
            .expect("reference pair")
            .recorded();
        let t = Target::named("sync_handshake");
        for s in 0..50u64 {
            let data = SplitMix64(s).bytes(600);
            let (key, d, _) = compare_shaped(&e, t, &data, false);
            assert!(d.is_none() && key != "diverged", "{key} {d:?}");
        }
    }
}
