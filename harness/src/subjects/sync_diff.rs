//! Differential target `sync_handshake`: the `alloc_semaphores` model (`tpb_core::sync`) against
//! the engine simulator (`tpb_oracle::sim`) on generated programs (SPEC §8).
//!
//! A program is built from bytes through [`arbitrary::Unstructured`] as a `Vec<`[`Op`]`>`: custom-op
//! flows (DMA in → custom op on the host → GPSIMD compute → result DMA → consumers, with
//! optional remote updates to peer cores) mixed with free instructions that may break every
//! rule. The bytes left over pick the interleaving the simulator runs.

use arbitrary::{Arbitrary, Unstructured};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use tpb_core::sync::{self as model, AllocFrom, Dep, Engine, Instr, Program, SemArg};
use tpb_oracle::sim;

/// Most generated instructions (below the model's 256 limit, DS-2).
pub const GEN_MAX_INSTRS: usize = 200;
/// Most ops read from one input.
pub const GEN_MAX_OPS: usize = 48;

/// One generator step.
#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    /// A whole custom-op flow, valid by construction.
    CustomFlow {
        /// Input DMA queue (mod 4).
        in_queue: u8,
        /// Result DMA queue (mod 4).
        out_queue: u8,
        /// GPSIMD cores used (mod 4); 0 means the custom op feeds the result DMA directly.
        cores: u8,
        /// Consumers of the result (mod 4).
        consumers: u8,
        /// Increment (mod 4, + 1).
        mult: u8,
        /// Also signal a peer core remotely from each compute.
        remote: bool,
    },
    /// A consumer of an earlier instruction on some engine, signalling its engine's semaphore.
    Consume {
        /// Engine selector.
        engine: u8,
        /// How far back the producer is.
        back: u8,
    },
    /// A free instruction: may dangle, loop, share semaphores, fan out, overflow.
    Raw {
        /// Engine selector (255 = GPSIMD core 8, invalid).
        engine: u8,
        /// `(producer selector, expected-semaphore selector)`.
        deps: Vec<(u8, Option<u8>)>,
        /// `(semaphore selector, remote core selector)`.
        sems: Vec<(u8, Option<u8>)>,
        /// Increment selector.
        mult: u32,
    },
    /// A pseudo instruction depending on earlier ones.
    Pseudo {
        /// Producer selectors (backwards).
        deps: Vec<u8>,
    },
    /// An extra allocation request.
    Alloc {
        /// From the top.
        top: bool,
    },
}

/// A custom-op flow's instructions, for checking the stamped bands.
#[derive(Debug, Clone)]
pub struct Flow {
    /// Input DMA.
    pub dma_in: u16,
    /// The custom op (0x85 header carrier, on the host).
    pub custom_op: u16,
    /// The result DMA.
    pub result_dma: u16,
    /// Consumers of the result.
    pub consumers: Vec<u16>,
}

/// A generated case.
#[derive(Debug, Clone)]
pub struct Case {
    /// The program, in the model's types.
    pub program: Program,
    /// Its custom-op flows.
    pub flows: Vec<Flow>,
}

#[derive(Default)]
struct Builder {
    num_semaphores: u16,
    allocs: Vec<AllocFrom>,
    instrs: Vec<Instr>,
    flows: Vec<Flow>,
    engine_sem: BTreeMap<Engine, u16>,
    /// Instructions of an earlier case whose lists [`Builder::own`] refills (capacity only;
    /// every field is overwritten).
    spare: Vec<Instr>,
}

thread_local! {
    /// Per-thread recycling for [`sync_handshake_case`]: the last case's instruction list
    /// (empty, with its capacity) and its instructions.
    static RECYCLED: RefCell<(Vec<Instr>, Vec<Instr>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl Builder {
    fn n(&self) -> u16 {
        self.instrs.len() as u16
    }
    fn alloc(&mut self, from: AllocFrom) -> u16 {
        self.allocs.push(from);
        (self.allocs.len() - 1) as u16
    }
    /// The engine's own semaphore handle: compute engines from the bottom, DMA from the top.
    fn sem_of(&mut self, e: Engine) -> u16 {
        if let Some(&h) = self.engine_sem.get(&e) {
            return h;
        }
        let h = self.alloc(if matches!(e, Engine::Dma(_)) {
            AllocFrom::Top
        } else {
            AllocFrom::Bottom
        });
        self.engine_sem.insert(e, h);
        h
    }
    fn push(&mut self, engine: Engine, deps: Vec<Dep>, sems: Vec<SemArg>, mult: u32) -> u16 {
        self.instrs.push(Instr {
            engine,
            deps,
            sems,
            mult,
        });
        self.n() - 1
    }
    fn own(&mut self, engine: Engine, deps: &[u16], mult: u32) -> u16 {
        let h = self.sem_of(engine);
        let deps = deps.iter().map(|&p| Dep {
            producer: p,
            via: None,
        });
        let sem = SemArg {
            handle: h,
            target_core: None,
        };
        match self.spare.pop() {
            Some(mut ins) => {
                ins.engine = engine;
                ins.deps.clear();
                ins.deps.extend(deps);
                ins.sems.clear();
                ins.sems.push(sem);
                ins.mult = mult;
                self.instrs.push(ins);
                self.n() - 1
            }
            None => self.push(engine, deps.collect(), vec![sem], mult),
        }
    }
    fn back(&self, sel: u8) -> u16 {
        let n = self.n();
        if n == 0 {
            0
        } else {
            n - 1 - u16::from(sel) % n
        }
    }
}

fn engine_of(sel: u8) -> Engine {
    match sel {
        255 => Engine::Gpsimd(8),
        _ => match sel % 16 {
            0 | 1 => Engine::Host,
            k @ 2..=9 => Engine::Gpsimd(k - 2),
            k @ 10..=14 => Engine::Dma(k - 10),
            _ => Engine::Pseudo,
        },
    }
}

fn apply(b: &mut Builder, op: Op) {
    match op {
        Op::CustomFlow {
            in_queue,
            out_queue,
            cores,
            consumers,
            mult,
            remote,
        } => {
            let m = u32::from(mult % 4) + 1;
            let dma_in = b.own(Engine::Dma(in_queue % 4), &[], m);
            let custom_op = b.own(Engine::Host, &[dma_in], m);
            let mut computes = Vec::with_capacity(4);
            for k in 0..cores % 4 {
                let e = Engine::Gpsimd((in_queue.wrapping_add(k)) % 8);
                let c = b.own(e, &[custom_op], m);
                if remote {
                    let h = b.sem_of(e);
                    let peer = k.wrapping_add(1).wrapping_add(out_queue) % 8;
                    b.instrs[usize::from(c)].sems.push(SemArg {
                        handle: h,
                        target_core: Some(peer),
                    });
                }
                computes.push(c);
            }
            if computes.is_empty() {
                computes.push(custom_op);
            }
            let result_dma = b.own(Engine::Dma(out_queue % 4), &computes, m);
            let mut cons = Vec::with_capacity(3);
            for k in 0..consumers % 4 {
                let e = [Engine::Host, Engine::Gpsimd(k), Engine::Dma(4)][usize::from(k % 3)];
                cons.push(b.own(e, &[result_dma], m));
            }
            b.flows.push(Flow {
                dma_in,
                custom_op,
                result_dma,
                consumers: cons,
            });
        }
        Op::Consume { engine, back } => {
            let e = engine_of(engine % 15);
            let p = b.back(back);
            if b.n() == 0 {
                b.own(e, &[], 1);
            } else {
                b.own(e, &[p], 1);
            }
        }
        Op::Raw {
            engine,
            deps,
            sems,
            mult,
        } => {
            let e = engine_of(engine);
            let n = b.n();
            let n_allocs = b.allocs.len() as u16;
            let mut ds = Vec::with_capacity(deps.len().min(6));
            for (sel, via) in deps.into_iter().take(6) {
                // 1/32: a forward or self reference (cycles, dangling producers).
                let producer = if sel >= 0xF8 {
                    n + u16::from(sel & 7)
                } else {
                    b.back(sel)
                };
                let own = b
                    .instrs
                    .get(usize::from(producer))
                    .and_then(|i| i.sems.iter().find(|s| s.target_core.is_none()))
                    .map(|s| s.handle);
                let via = match via {
                    Some(255) => Some(n_allocs),
                    Some(v) if v >= 0xE0 => Some(u16::from(v) % n_allocs.max(1)),
                    Some(v) if v >= 0xC0 => own,
                    _ => None,
                };
                ds.push(Dep { producer, via });
            }
            let mut args = Vec::with_capacity(sems.len().min(4));
            for (sel, core) in sems.into_iter().take(4) {
                let handle = match sel {
                    255 => n_allocs + 1,
                    s if s % 8 == 7 => u16::from(s) % n_allocs.max(1),
                    _ => b.sem_of(e),
                };
                let target_core = core.map(|c| if c == 255 { 8 } else { c % 8 });
                args.push(SemArg {
                    handle,
                    target_core,
                });
            }
            let mult = if mult >= 0xF000_0000 || mult == 0 {
                mult
            } else {
                mult % 4 + 1
            };
            b.push(e, ds, args, mult);
        }
        Op::Pseudo { deps } => {
            let deps = deps
                .into_iter()
                .take(4)
                .map(|s| Dep {
                    producer: b.back(s),
                    via: None,
                })
                .collect();
            b.push(Engine::Pseudo, deps, vec![], 1);
        }
        Op::Alloc { top } => {
            b.alloc(if top {
                AllocFrom::Top
            } else {
                AllocFrom::Bottom
            });
        }
    }
}

/// Build a case from the front of `u` (at most [`GEN_MAX_OPS`] ops, [`GEN_MAX_INSTRS`]
/// instructions). Never fails: missing bytes read as zeros.
pub fn build_case(u: &mut Unstructured<'_>) -> Case {
    build_case_from(u, Vec::new(), Vec::new()).0
}

/// [`build_case`] into the list `instrs` (emptied first), refilling instructions taken from
/// `spare`; also returns the spare ones it did not use.
fn build_case_from(
    u: &mut Unstructured<'_>,
    mut instrs: Vec<Instr>,
    spare: Vec<Instr>,
) -> (Case, Vec<Instr>) {
    let pool_sel: u8 = u.arbitrary().unwrap_or(0);
    let num_semaphores = if pool_sel < 224 {
        model::DEFAULT_NUM_SEMAPHORES
    } else {
        u16::from(pool_sel % 16)
    };
    instrs.clear();
    let mut b = Builder {
        num_semaphores,
        instrs,
        spare,
        ..Builder::default()
    };
    let n_ops = u.int_in_range(0..=GEN_MAX_OPS).unwrap_or(0);
    for _ in 0..n_ops {
        if b.instrs.len() + 16 > GEN_MAX_INSTRS || u.is_empty() {
            break;
        }
        match u.arbitrary::<Op>() {
            Ok(op) => apply(&mut b, op),
            Err(_) => break,
        }
    }
    let case = Case {
        program: Program {
            num_semaphores: b.num_semaphores,
            allocs: b.allocs,
            instrs: b.instrs,
        },
        flows: b.flows,
    };
    (case, b.spare)
}

/// The same program in the oracle's vocabulary (a field-by-field mapping; no logic).
pub fn to_script(p: &Program) -> sim::Script {
    let mut s = sim::Script {
        pool: 0,
        grabs: Vec::new(),
        steps: Vec::new(),
    };
    to_script_into(p, &mut s);
    s
}

/// [`to_script`] into `s`, reusing its lists (and each step's) from an earlier program.
fn to_script_into(p: &Program, s: &mut sim::Script) {
    s.pool = p.num_semaphores;
    s.grabs.clear();
    s.grabs
        .extend(p.allocs.iter().map(|a| *a == AllocFrom::Top));
    s.steps.truncate(p.instrs.len());
    for (k, i) in p.instrs.iter().enumerate() {
        let unit = match i.engine {
            Engine::Host => sim::Unit::Host,
            Engine::Gpsimd(c) => sim::Unit::Core(c),
            Engine::Dma(q) => sim::Unit::Queue(q),
            Engine::Pseudo => sim::Unit::Pseudo,
        };
        let inputs = i.deps.iter().map(|d| sim::Edge {
            from: d.producer,
            sem_handle: d.via,
        });
        let signals = i.sems.iter().map(|s| sim::Signal {
            handle: s.handle,
            core: s.target_core,
        });
        match s.steps.get_mut(k) {
            Some(st) => {
                st.unit = unit;
                st.inputs.clear();
                st.inputs.extend(inputs);
                st.signals.clear();
                st.signals.extend(signals);
                st.tick = i.mult;
            }
            None => s.steps.push(sim::Step {
                unit,
                inputs: inputs.collect(),
                signals: signals.collect(),
                tick: i.mult,
            }),
        }
    }
}

thread_local! {
    /// Per-thread scratch for [`compare_case`]'s script: its lists keep their capacity from
    /// case to case instead of being allocated and freed per instruction.
    static SCRIPT: RefCell<sim::Script> = const {
        RefCell::new(sim::Script {
            pool: 0,
            grabs: Vec::new(),
            steps: Vec::new(),
        })
    };
}

/// The model's plan in the oracle's vocabulary.
pub fn to_sim_plan(plan: &model::SyncPlan) -> Vec<sim::PlanEntry> {
    plan.infos
        .iter()
        .map(|si| sim::PlanEntry {
            waits: si
                .waits
                .iter()
                .map(|w| sim::PlanWait {
                    sem: w.sem,
                    at_least: w.value,
                })
                .collect(),
            updates: si
                .updates
                .iter()
                .map(|u| sim::PlanUpdate {
                    sem: u.sem,
                    add: u.delta,
                    core: u.target_core,
                })
                .collect(),
        })
        .collect()
}

/// Model and simulator agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncCaseOutcome {
    /// Both reject the program with the same error class.
    Rejected {
        /// SPEC §8 class name.
        class: &'static str,
    },
    /// Both accept it, and the model's plan ran clean in the simulator.
    Accepted {
        /// Instructions.
        instrs: usize,
        /// Simulator steps.
        steps: usize,
    },
}

/// Model and simulator disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncDivergence {
    /// What differs.
    pub description: String,
    /// The program (Debug form).
    pub program: String,
}

impl fmt::Display for SyncDivergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sync_handshake divergence: {}\nprogram: {}",
            self.description, self.program
        )
    }
}

impl std::error::Error for SyncDivergence {}

/// Run one case: build a program from `data`, run the model and the simulator, compare.
pub fn sync_handshake_case(data: &[u8]) -> Result<SyncCaseOutcome, SyncDivergence> {
    let mut u = Unstructured::new(data);
    let (list, spare) = RECYCLED
        .with(|r| r.try_borrow_mut().map(|mut r| std::mem::take(&mut *r)))
        .unwrap_or_default();
    let (case, mut spare) = build_case_from(&mut u, list, spare);
    let schedule = u.take_rest();
    let outcome = compare_case(&case, schedule);
    // Hand the instructions back for the next case on this thread.
    let mut list = case.program.instrs;
    spare.append(&mut list);
    spare.truncate(GEN_MAX_INSTRS);
    RECYCLED.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            *r = (list, spare);
        }
    });
    outcome
}

/// Compare model and simulator on a built case, with interleaving bytes `schedule`.
pub fn compare_case(case: &Case, schedule: &[u8]) -> Result<SyncCaseOutcome, SyncDivergence> {
    SCRIPT.with(|cell| match cell.try_borrow_mut() {
        Ok(mut script) => {
            to_script_into(&case.program, &mut script);
            compare_with(case, schedule, &script)
        }
        // Only if a compare were nested in another on this thread.
        Err(_) => compare_with(case, schedule, &to_script(&case.program)),
    })
}

/// [`compare_case`] with the program already in the oracle's vocabulary.
fn compare_with(
    case: &Case,
    schedule: &[u8],
    script: &sim::Script,
) -> Result<SyncCaseOutcome, SyncDivergence> {
    let diverge = |description: String| SyncDivergence {
        description,
        program: format!("{:?}", case.program),
    };
    let (plan, exp) = match (model::alloc_semaphores(&case.program), sim::vet(script)) {
        (Err(e), Err(r)) if e.class() == r.class() => {
            return Ok(SyncCaseOutcome::Rejected { class: e.class() })
        }
        (Err(e), Err(r)) => {
            return Err(diverge(format!(
                "model rejects with {e}, oracle with {r:?}"
            )))
        }
        (Err(e), Ok(_)) => return Err(diverge(format!("model rejects with {e}, oracle accepts"))),
        (Ok(_), Err(r)) => {
            return Err(diverge(format!("model accepts, oracle rejects with {r:?}")))
        }
        (Ok(plan), Ok(exp)) => (plan, exp),
    };
    if plan.sem_ids != exp.ids {
        return Err(diverge(format!(
            "pool ids: model {:?}, oracle {:?}",
            plan.sem_ids, exp.ids
        )));
    }
    let model_finals: BTreeMap<(Option<u8>, u8), u64> = plan
        .values
        .iter()
        .filter(|(_, v)| *v != 0)
        .map(|(k, v)| ((k.core, k.sem), u64::from(v)))
        .collect();
    if model_finals != exp.finals {
        return Err(diverge(format!(
            "final values: model {model_finals:?}, oracle {:?}",
            exp.finals
        )));
    }
    let base = to_sim_plan(&plan);
    let trace = sim::simulate(script, &exp, &base, schedule).map_err(|v| {
        let shown = &schedule[..schedule.len().min(32)];
        diverge(format!(
            "simulator: {v:?} under schedule {shown:02x?} ({} bytes)",
            schedule.len()
        ))
    })?;
    if trace.finals != model_finals {
        return Err(diverge(format!(
            "simulated finals {:?} != model {model_finals:?}",
            trace.finals
        )));
    }
    check_stamps(case, &plan, &exp, script, &base, schedule).map_err(diverge)?;
    Ok(SyncCaseOutcome::Accepted {
        instrs: case.program.instrs.len(),
        steps: trace.steps,
    })
}

/// The local semaphore id of instruction `i` as the oracle derives it.
fn local_id(case: &Case, exp: &sim::Expectation, i: u16) -> Option<u8> {
    let ins = case.program.instrs.get(usize::from(i))?;
    let s = ins.sems.iter().find(|s| s.target_core.is_none())?;
    exp.ids.get(usize::from(s.handle)).copied()
}

/// Replace the last Wait on `w.sem` in `e` by `w` (the band's one wait slot, DS-9).
fn put_band_wait(e: &mut sim::PlanEntry, w: sim::PlanWait) -> Result<(), String> {
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

/// Stamp each flow's header and consumers with the model, read the bands back with the oracle
/// and check the handshake of S000 §sync NOTE "the handshake in one line" with the compiler's
/// encoding (SPEC §8 DS-13/DS-14: WAIT_FOR_SEM_GE_IMM 0x05 with the threshold in
/// `semaphore_value`, SEM_INC_COMPLETE 0x13). Then the simulator runs the plan with every
/// stamped wait taken from the bytes (`sim::band_sync`), so a wrong threshold on the wire shows
/// up as an early start.
fn check_stamps(
    case: &Case,
    plan: &model::SyncPlan,
    exp: &sim::Expectation,
    script: &sim::Script,
    base: &[sim::PlanEntry],
    schedule: &[u8],
) -> Result<(), String> {
    if case.flows.is_empty() {
        return Ok(());
    }
    let mut from_bytes = base.to_vec();
    let mult = |i: u16| {
        case.program
            .instrs
            .get(usize::from(i))
            .map_or(0, |x| x.mult)
    };
    for f in &case.flows {
        let mut header = [0u8; 64];
        header[0] = 0x85;
        header[1] = 0x10;
        model::stamp_custom_op_header(&mut header, plan, f.custom_op, f.dma_in, f.result_dma)
            .map_err(|e| format!("stamping header of flow {f:?}: {e}"))?;
        let band = sim::read_band(&header);
        // No silent default: a flow endpoint without a local semaphore id is a
        // generator/simulator fault, not an id 0 both stampers could agree on.
        let id = |i: u16| {
            local_id(case, exp, i).ok_or_else(|| {
                format!("flow {f:?}: instruction {i} has no local semaphore id in the plan")
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
            return Err(format!(
                "header band {band:?}, expected (wait, idx, update, idx) {want:02x?} (flow {f:?})"
            ));
        }
        let bs = sim::band_sync(&band, mult(f.result_dma))
            .map_err(|off| format!("header band byte {off} not stamped by the pass: {band:?}"))?;
        if let (Some(w), Some(e)) = (bs.wait, from_bytes.get_mut(usize::from(f.custom_op))) {
            put_band_wait(e, w).map_err(|m| format!("header of flow {f:?}: {m}"))?;
        }
        for &c in &f.consumers {
            let mut bundle = [0u8; 64];
            model::stamp_consumer(&mut bundle, plan, c, f.result_dma)
                .map_err(|e| format!("stamping consumer {c}: {e}"))?;
            let band = sim::read_band(&bundle);
            if (band.wait_mode, band.wait_idx) != (0x05, want.3) {
                return Err(format!(
                    "consumer {c} band {band:?}, expected a 0x05 wait on {}",
                    want.3
                ));
            }
            let bs = sim::band_sync(&band, mult(c))
                .map_err(|off| format!("consumer {c} band byte {off} not stamped: {band:?}"))?;
            let Some(entry) = from_bytes.get_mut(usize::from(c)) else {
                return Err(format!("consumer {c} outside the plan"));
            };
            if let Some(w) = bs.wait {
                put_band_wait(entry, w).map_err(|m| format!("consumer {c}: {m}"))?;
            }
            if let Some(u) = bs.update {
                if !entry.updates.contains(&u) {
                    return Err(format!("consumer {c} band update {u:?} not in the plan"));
                }
            }
        }
    }
    if from_bytes != *base {
        sim::simulate(script, exp, &from_bytes, schedule)
            .map_err(|v| format!("simulator on the stamped bytes: {v:?}"))?;
    }
    Ok(())
}

/// Counts from [`smoke`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SmokeStats {
    /// Programs both sides accepted.
    pub accepted: usize,
    /// Programs both sides rejected, per class.
    pub rejected: BTreeMap<&'static str, usize>,
}

/// Run `n` cases from a deterministic xorshift stream seeded with `seed`; the first divergence
/// is returned with its input bytes.
pub fn smoke(n: usize, seed: u64) -> Result<SmokeStats, (Vec<u8>, SyncDivergence)> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut stats = SmokeStats::default();
    let mut data = Vec::with_capacity(2048);
    for _ in 0..n {
        let len = (next() % 1536) as usize;
        data.clear();
        while data.len() < len {
            data.extend_from_slice(&next().to_le_bytes());
        }
        data.truncate(len);
        match sync_handshake_case(&data) {
            Ok(SyncCaseOutcome::Accepted { .. }) => stats.accepted += 1,
            Ok(SyncCaseOutcome::Rejected { class }) => {
                *stats.rejected.entry(class).or_insert(0) += 1
            }
            Err(d) => return Err((data.clone(), d)),
        }
    }
    Ok(stats)
}
