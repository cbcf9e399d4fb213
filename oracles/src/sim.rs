//! A discrete-event simulator of the host TPB engine, up to 8 GPSIMD cores and the DMA queues,
//! executing a program whose instructions carry Waits and Updates on hardware semaphores.
//!
//! Written from S000 §"The sync handshake — host engine ↔ GPSIMD-CPU" and SPEC §8 only; it
//! shares no code with `tpb-core`. Two parts:
//!
//! * [`vet`] — an independent second reading of the rules the `alloc_semaphores` pass enforces:
//!   it decides whether a [`Script`] is acceptable, and if so what every semaphore must end at.
//!   Its algorithms deliberately differ from core's (counting formulas for the pool, a quadratic
//!   scan for the canonical order, recursion for producer walks, sums for final values).
//! * [`simulate`] — runs a [`Script`] with a Wait/Update plan under an interleaving chosen by a
//!   byte stream and checks: no instruction starts before its Waits hold; every instruction starts
//!   after all its real ancestors completed (happens-before); no deadlock; final semaphore values
//!   equal [`vet`]'s sums.
//!
//! Total: no input panics; memory is bounded by the limits below.

use std::collections::BTreeMap;

/// Limits (SPEC §8 DS-2): instructions, allocation requests, deps per instruction, signals per
/// instruction, pool size.
pub const LIMITS: [(&str, usize); 5] = [
    ("num_semaphores", 256),
    ("allocs", 256),
    ("instrs", 256),
    ("deps", 64),
    ("sems", 16),
];
/// Cores a GPSIMD unit or a remote update may name (S000 §sync R3 "≤8 cores").
pub const CORES: u8 = 8;

/// An execution unit. Every unit but `Pseudo` runs its instructions one at a time, in index order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    /// The host TPB engine.
    Host,
    /// A GPSIMD core.
    Core(u8),
    /// A DMA queue.
    Queue(u8),
    /// A pseudo instruction: graph node only, never runs.
    Pseudo,
}

/// "The holder consumes `from`'s output", optionally naming the semaphore handle it expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// Producer index.
    pub from: u16,
    /// Expected semaphore handle.
    pub sem_handle: Option<u16>,
}

/// A completion signal: increment semaphore `handle` (local, or on core `core`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal {
    /// Index into [`Script::grabs`].
    pub handle: u16,
    /// Remote target core.
    pub core: Option<u8>,
}

/// One instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Where it runs.
    pub unit: Unit,
    /// What it consumes.
    pub inputs: Vec<Edge>,
    /// What it signals.
    pub signals: Vec<Signal>,
    /// Increment per signal.
    pub tick: u32,
}

/// A program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// Pool size (`NumSemaphores`).
    pub pool: u16,
    /// Allocation requests: `true` = from the top.
    pub grabs: Vec<bool>,
    /// Instructions.
    pub steps: Vec<Step>,
}

/// Why [`vet`] refuses a script. [`Reject::class`] uses SPEC §8's error class names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reject {
    /// A size limit.
    Limit(&'static str),
    /// Core ≥ 8.
    Core(u16),
    /// Input from a nonexistent instruction.
    Dangling(u16),
    /// Handle beyond the allocation requests.
    NoSuchSem(u16),
    /// Signals with a zero tick.
    ZeroTick(u16),
    /// The pool cannot serve request `k`.
    Exhausted(usize),
    /// No schedule exists; the smallest stuck instruction.
    Loop(u16),
    /// Producer with `n` local signals is waited on.
    FanOut(u16, usize),
    /// Consumer expects a semaphore other than the producer's local one.
    WrongSem(u16),
    /// Two units signal one local semaphore.
    Shared(u8),
    /// A semaphore's running count passes u32::MAX.
    Overflow(u8),
}

impl Reject {
    /// SPEC §8 error class.
    pub fn class(&self) -> &'static str {
        match self {
            Reject::Limit(_) => "limit_exceeded",
            Reject::Core(_) => "bad_core",
            Reject::Dangling(_) => "null_instruction",
            Reject::NoSuchSem(_) => "unknown_semaphore",
            Reject::ZeroTick(_) => "zero_increment",
            Reject::Exhausted(_) => "pool_exhausted",
            Reject::Loop(_) => "cycle",
            Reject::FanOut(..) => "not_single_local_update",
            Reject::WrongSem(_) => "local_semaphore_mismatch",
            Reject::Shared(_) => "shared_semaphore",
            Reject::Overflow(_) => "overflow",
        }
    }
}

/// What [`vet`] derives from an acceptable script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectation {
    /// The id each allocation request gets.
    pub ids: Vec<u8>,
    /// Final value of every signalled semaphore: `(remote core, id) → sum of ticks`.
    pub finals: BTreeMap<(Option<u8>, u8), u64>,
    /// Real transitive ancestors of each instruction (through pseudo ones), ascending.
    pub ancestors: Vec<Vec<u16>>,
}

fn is_real(s: &Step) -> bool {
    s.unit != Unit::Pseudo
}

/// Decide whether `s` is acceptable (SPEC §8 phases 1–5, in order).
pub fn vet(s: &Script) -> Result<Expectation, Reject> {
    // Phase 1: limits.
    let sizes = [usize::from(s.pool), s.grabs.len(), s.steps.len()];
    for (k, &n) in sizes.iter().enumerate() {
        if n > LIMITS[k].1 {
            return Err(Reject::Limit(LIMITS[k].0));
        }
    }
    for st in &s.steps {
        if st.inputs.len() > LIMITS[3].1 {
            return Err(Reject::Limit(LIMITS[3].0));
        }
        if st.signals.len() > LIMITS[4].1 {
            return Err(Reject::Limit(LIMITS[4].0));
        }
    }
    // Phase 2: references, per instruction.
    let n = s.steps.len();
    for (i, st) in s.steps.iter().enumerate() {
        let i = i as u16;
        if matches!(st.unit, Unit::Core(c) if c >= CORES) {
            return Err(Reject::Core(i));
        }
        for e in &st.inputs {
            if usize::from(e.from) >= n {
                return Err(Reject::Dangling(i));
            }
            if e.sem_handle
                .is_some_and(|h| usize::from(h) >= s.grabs.len())
            {
                return Err(Reject::NoSuchSem(i));
            }
        }
        for g in &st.signals {
            if usize::from(g.handle) >= s.grabs.len() {
                return Err(Reject::NoSuchSem(i));
            }
            if g.core.is_some_and(|c| c >= CORES) {
                return Err(Reject::Core(i));
            }
        }
        if st.tick == 0 && !st.signals.is_empty() {
            return Err(Reject::ZeroTick(i));
        }
    }
    // Phase 3: the pool. After b bottom and t top grants, the counters are bottom = b and
    // top = pool − 1 − t; a grant needs bottom < top < pool.
    let pool = u32::from(s.pool);
    let (mut b, mut t) = (0u32, 0u32);
    let mut ids = Vec::with_capacity(s.grabs.len());
    for (k, &from_top) in s.grabs.iter().enumerate() {
        let top = pool.saturating_sub(1).saturating_sub(t);
        if !(b < top && top < pool) {
            return Err(Reject::Exhausted(k));
        }
        if from_top {
            ids.push(top as u8);
            t += 1;
        } else {
            ids.push(b as u8);
            b += 1;
        }
    }
    // Phase 4: canonical order — repeatedly the smallest instruction whose producers and unit
    // predecessor are all placed.
    let unit_prev: Vec<Option<usize>> = (0..n)
        .map(|i| {
            let u = s.steps[i].unit;
            if u == Unit::Pseudo {
                None
            } else {
                (0..i).rev().find(|&j| s.steps[j].unit == u)
            }
        })
        .collect();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let next = (0..n).find(|&i| {
            !placed[i]
                && match unit_prev[i] {
                    Some(j) => placed[j],
                    None => true,
                }
                && s.steps[i]
                    .inputs
                    .iter()
                    .all(|e| placed[usize::from(e.from)])
        });
        match next {
            Some(i) => {
                placed[i] = true;
                order.push(i);
            }
            None => {
                let stuck = (0..n).find(|&i| !placed[i]).unwrap_or(0);
                return Err(Reject::Loop(stuck as u16));
            }
        }
    }
    // Phase 5: the pass's checks, in canonical order.
    let mut owner: [Option<Unit>; 256] = [None; 256];
    let mut finals: BTreeMap<(Option<u8>, u8), u64> = BTreeMap::new();
    // Scratch reused by every instruction.
    let mut producers = Vec::new();
    let mut visited = vec![false; n];
    for &i in &order {
        let st = &s.steps[i];
        if !is_real(st) {
            continue;
        }
        producers.clear();
        visited.fill(false);
        gather_producers(s, i, true, &mut visited, &mut producers);
        for &(p, handle) in &producers {
            let mut locals = s.steps[p]
                .signals
                .iter()
                .filter(|g| g.core.is_none())
                .map(|g| ids[usize::from(g.handle)]);
            let first = locals.next();
            let count = first.map_or(0, |_| 1 + locals.count());
            if count != 1 {
                return Err(Reject::FanOut(p as u16, count));
            }
            if let (Some(h), Some(local)) = (handle, first) {
                if ids[usize::from(h)] != local {
                    return Err(Reject::WrongSem(p as u16));
                }
            }
        }
        for g in &st.signals {
            let id = ids[usize::from(g.handle)];
            if g.core.is_none() && *owner[usize::from(id)].get_or_insert(st.unit) != st.unit {
                return Err(Reject::Shared(id));
            }
            let v = finals.entry((g.core, id)).or_insert(0);
            *v += u64::from(st.tick);
            if *v > u64::from(u32::MAX) {
                return Err(Reject::Overflow(id));
            }
        }
    }
    let mut seen = visited;
    let ancestors = (0..n)
        .map(|i| {
            seen.fill(false);
            let mut out = Vec::new();
            collect_ancestors(s, i, &mut seen, &mut out);
            out.sort_unstable();
            out
        })
        .collect();
    Ok(Expectation {
        ids,
        finals,
        ancestors,
    })
}

/// Pre-order walk of `i`'s inputs; a pseudo input is replaced by its own inputs (once per walk);
/// the expected-semaphore handle only counts on `i`'s own edges.
fn gather_producers(
    s: &Script,
    i: usize,
    top: bool,
    visited: &mut [bool],
    out: &mut Vec<(usize, Option<u16>)>,
) {
    for e in &s.steps[i].inputs {
        let p = usize::from(e.from);
        if is_real(&s.steps[p]) {
            out.push((p, if top { e.sem_handle } else { None }));
        } else if !visited[p] {
            visited[p] = true;
            gather_producers(s, p, false, visited, out);
        }
    }
}

fn collect_ancestors(s: &Script, i: usize, seen: &mut [bool], out: &mut Vec<u16>) {
    for e in &s.steps[i].inputs {
        let p = usize::from(e.from);
        if !seen[p] {
            seen[p] = true;
            if is_real(&s.steps[p]) {
                out.push(p as u16);
            }
            collect_ancestors(s, p, seen, out);
        }
    }
}

/// A Wait in a plan: block until local semaphore `sem ≥ at_least`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanWait {
    /// Semaphore id.
    pub sem: u8,
    /// Threshold.
    pub at_least: u32,
}

/// An Update in a plan: on completion add `add` to semaphore `sem` (on `core` if remote).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanUpdate {
    /// Semaphore id.
    pub sem: u8,
    /// Increment.
    pub add: u32,
    /// Remote target core.
    pub core: Option<u8>,
}

/// The sync of one instruction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanEntry {
    /// Waits.
    pub waits: Vec<PlanWait>,
    /// Updates.
    pub updates: Vec<PlanUpdate>,
}

/// What the simulator observed going wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// `plan` or `exp.ancestors` does not hold one entry per instruction of the script.
    PlanLength {
        /// Instructions in the script.
        steps: usize,
        /// Entries in `plan`.
        plan: usize,
        /// Entries in `exp.ancestors`.
        ancestors: usize,
    },
    /// The plan does not fit the script (pseudo with sync, core ≥ 8).
    PlanShape(String),
    /// An instruction started before one of its Waits held.
    EarlyStart {
        /// Instruction.
        instr: u16,
        /// Semaphore.
        sem: u8,
    },
    /// An instruction started before a real ancestor completed.
    HappensBefore {
        /// The starting instruction.
        consumer: u16,
        /// The unfinished ancestor.
        producer: u16,
    },
    /// Nothing can step but instructions remain; the first pending one of each unit.
    Deadlock(Vec<u16>),
    /// A semaphore ended at the wrong value.
    FinalValue {
        /// Remote core, or local.
        core: Option<u8>,
        /// Semaphore.
        sem: u8,
        /// Simulated.
        got: u64,
        /// [`vet`]'s sum.
        want: u64,
    },
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Engine steps taken (a start or a completion each).
    pub steps: usize,
    /// Nonzero semaphores at the end.
    pub finals: BTreeMap<(Option<u8>, u8), u64>,
    /// Start order of the real instructions.
    pub started: Vec<u16>,
}

/// Run `s` with `plan` (one entry per instruction) under the interleaving `choices` picks: at
/// each step, byte `k` chooses among the ready actions (`byte % count`); after the bytes run out
/// the first ready action is taken. `exp` must be `vet(s)`'s result.
pub fn simulate(
    s: &Script,
    exp: &Expectation,
    plan: &[PlanEntry],
    choices: &[u8],
) -> Result<Trace, Violation> {
    let n = s.steps.len();
    if plan.len() != n || exp.ancestors.len() != n {
        return Err(Violation::PlanLength {
            steps: n,
            plan: plan.len(),
            ancestors: exp.ancestors.len(),
        });
    }
    for (i, (st, e)) in s.steps.iter().zip(plan).enumerate() {
        if !is_real(st) && (!e.waits.is_empty() || !e.updates.is_empty()) {
            return Err(Violation::PlanShape(format!(
                "pseudo instruction {i} carries sync"
            )));
        }
        if e.updates.iter().any(|u| u.core.is_some_and(|c| c >= CORES)) {
            return Err(Violation::PlanShape(format!(
                "instruction {i} updates core >= 8"
            )));
        }
    }
    // Queues: each real unit's instructions in index order.
    let mut queues: BTreeMap<Unit, Vec<usize>> = BTreeMap::new();
    for (i, st) in s.steps.iter().enumerate() {
        if is_real(st) {
            queues.entry(st.unit).or_default().push(i);
        }
    }
    let queues: Vec<Vec<usize>> = queues.into_values().collect();
    let mut pos = vec![0usize; queues.len()];
    let mut running: Vec<Option<usize>> = vec![None; queues.len()];
    let mut done = vec![false; n];
    // Semaphore file: row 0 local, row c+1 core c.
    // (On the stack: 18 KiB, zeroed per run, no allocator round trip.)
    let mut sems = [0u64; 256 * (CORES as usize + 1)];
    let slot =
        |core: Option<u8>, sem: u8| usize::from(core.map_or(0, |c| c + 1)) * 256 + usize::from(sem);
    let mut cursor = 0usize;
    let mut steps = 0usize;
    let mut started = Vec::new();
    let mut ready: Vec<(usize, bool)> = Vec::new();
    loop {
        ready.clear();
        for (q, queue) in queues.iter().enumerate() {
            if running[q].is_some() {
                ready.push((q, true));
            } else if let Some(&i) = queue.get(pos[q]) {
                if plan[i]
                    .waits
                    .iter()
                    .all(|w| sems[slot(None, w.sem)] >= u64::from(w.at_least))
                {
                    ready.push((q, false));
                }
            }
        }
        if ready.is_empty() {
            break;
        }
        let pick = match choices.get(cursor) {
            Some(&b) => usize::from(b) % ready.len(),
            None => 0,
        };
        cursor += 1;
        steps += 1;
        let (q, completing) = ready[pick];
        if completing {
            let i = running[q].take().unwrap_or(0);
            for u in &plan[i].updates {
                sems[slot(u.core, u.sem)] += u64::from(u.add);
            }
            done[i] = true;
            pos[q] += 1;
        } else {
            let i = queues[q][pos[q]];
            if let Some(w) = plan[i]
                .waits
                .iter()
                .find(|w| sems[slot(None, w.sem)] < u64::from(w.at_least))
            {
                return Err(Violation::EarlyStart {
                    instr: i as u16,
                    sem: w.sem,
                });
            }
            if let Some(&a) = exp.ancestors[i]
                .iter()
                .find(|&&a| !done.get(usize::from(a)).copied().unwrap_or(false))
            {
                return Err(Violation::HappensBefore {
                    consumer: i as u16,
                    producer: a,
                });
            }
            running[q] = Some(i);
            started.push(i as u16);
        }
    }
    let pending: Vec<u16> = queues
        .iter()
        .zip(&pos)
        .filter_map(|(qu, &p)| qu.get(p).map(|&i| i as u16))
        .collect();
    if !pending.is_empty() {
        return Err(Violation::Deadlock(pending));
    }
    // The expected finals walked alongside the slots as slot numbers: both run in (core, sem)
    // order (None first), so one pass replaces a map lookup per slot. A key outside the file
    // (core >= CORES) has no slot and is never compared, as before.
    let mut wants = exp
        .finals
        .iter()
        .filter(|((core, _), _)| core.is_none_or(|c| c < CORES))
        .map(|(&(core, sem), &w)| (slot(core, sem), w))
        .peekable();
    let mut finals = BTreeMap::new();
    for (at, &v) in sems.iter().enumerate() {
        let want = match wants.peek() {
            Some(&(s, w)) if s == at => {
                wants.next();
                w
            }
            _ => 0,
        };
        if v == want && v == 0 {
            continue;
        }
        // Row 0 is the local file, row c + 1 core c.
        let core = match at / 256 {
            0 => None,
            row => u8::try_from(row - 1).ok(),
        };
        let sem = (at % 256) as u8;
        if v != want {
            return Err(Violation::FinalValue {
                core,
                sem,
                got: v,
                want,
            });
        }
        finals.insert((core, sem), v);
    }
    Ok(Trace {
        steps,
        finals,
        started,
    })
}

/// The events band of a bundle as this oracle reads it (FACTS §2 \[H\]: +4 wait_mode, +5 wait_idx,
/// +6 update_mode, +7 update_idx, +8..+0B semaphore_value u32 LE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    /// byte\[4\].
    pub wait_mode: u8,
    /// byte\[5\].
    pub wait_idx: u8,
    /// byte\[6\].
    pub update_mode: u8,
    /// byte\[7\].
    pub update_idx: u8,
    /// bytes[8..12]: the wait threshold.
    pub semaphore_value: u32,
}

/// Read the band of a 64-byte bundle.
pub fn read_band(bundle: &[u8; 64]) -> Band {
    Band {
        wait_mode: bundle[4],
        wait_idx: bundle[5],
        update_mode: bundle[6],
        update_idx: bundle[7],
        semaphore_value: u32::from_le_bytes([bundle[8], bundle[9], bundle[10], bundle[11]]),
    }
}

/// What a stamped band asks of the engine, as the simulator executes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BandSync {
    /// WAIT_FOR_SEM_GE_IMM on `wait_idx` with threshold `semaphore_value`, if any.
    pub wait: Option<PlanWait>,
    /// SEM_INC_COMPLETE on `update_idx`, one tick per wire record (`ticks` of them), if any.
    pub update: Option<PlanUpdate>,
}

/// Interpret a stamped band (SPEC §8 DS-13/DS-14): byte\[4\] must be NONE (0x00) or
/// WAIT_FOR_SEM_GE_IMM (0x05), byte\[6\] NONE or SEM_INC_COMPLETE (0x13); anything else is not a
/// band the pass stamps and is returned as `Err(byte offset)`. `ticks` is the instruction's
/// increment per completion.
pub fn band_sync(band: &Band, ticks: u32) -> Result<BandSync, usize> {
    let wait = match band.wait_mode {
        0x00 => None,
        0x05 => Some(PlanWait {
            sem: band.wait_idx,
            at_least: band.semaphore_value,
        }),
        _ => return Err(4),
    };
    let update = match band.update_mode {
        0x00 => None,
        0x13 => Some(PlanUpdate {
            sem: band.update_idx,
            add: ticks,
            core: None,
        }),
        _ => return Err(6),
    };
    Ok(BandSync { wait, update })
}
