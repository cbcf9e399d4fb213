//! The host-engine ↔ GPSIMD-CPU semaphore handshake: a model of the `alloc_semaphores` pass
//! (`neuronxcc::backend::AllocSemaphores`) and the stamping of its result into the SyncInfo
//! band `[0x04..0x0B]` of a bundle.
//!
//! Source: S000 §"The sync handshake — host engine ↔ GPSIMD-CPU" (cited below as **S000 §sync**)
//! and F§2. Rules and decisions: SPEC §8 (decisions **DS-n**).
//!
//! The pass runs in five phases; the first error wins (DS-1):
//!
//! 1. limits ([`MAX_INSTRUCTIONS`], [`MAX_ALLOCS`], [`MAX_DEPS`], [`MAX_SEMS`], pool ≤ 256);
//! 2. per instruction, in index order: engine core, deps (`:214`), `via` handles, sem args, mult;
//! 3. the pool hands out every requested id, in request order (`:256`);
//! 4. the canonical order: the lexicographically smallest topological order of the dependency
//!    edges plus the per-engine program-order edges (a cycle is a deadlock);
//! 5. `setupSync` for every real (non-pseudo) instruction, in canonical order (`:171/:172/:207`).
//!
//! Every function is total: no input panics, and memory is bounded by the limits above.

mod band;
mod pool;

pub use band::{
    local_update_of, stamp_band, stamp_consumer, stamp_custom_op_header, sync_band, wait_on,
};
pub use pool::{SemKey, SemaphorePool, SemaphoreValues};
use std::fmt;

/// Most instructions a program may hold (DS-2: bounded memory).
pub const MAX_INSTRUCTIONS: usize = 256;
/// Most semaphore allocation requests a program may hold (DS-2).
pub const MAX_ALLOCS: usize = 256;
/// Most dependency entries one instruction may hold (DS-2).
pub const MAX_DEPS: usize = 64;
/// Most `sems` entries one instruction may hold (DS-2).
pub const MAX_SEMS: usize = 16;
/// Default `HwmCore->NumSemaphores`: 256 semaphores per core on v2/v3 (F§2 \[S\]).
pub const DEFAULT_NUM_SEMAPHORES: u16 = 256;
/// Largest `NumSemaphores` the model accepts: the ids are one byte in the band (F§2 +0x05/+0x07).
pub const MAX_NUM_SEMAPHORES: u16 = 256;
/// GPSIMD cores: "splitting across ≤8 cores" (S000 §sync R3); also the range of `targetCore`.
pub const NUM_CORES: u8 = 8;

/// Index of an instruction in [`Program::instrs`].
pub type InstrId = u16;
/// A hardware semaphore id handed out by the pool.
pub type SemId = u8;

named_error! {
    /// The error class: the variant name in snake_case. Differential harnesses compare this.
    fn class;
    /// Everything `alloc_semaphores` can reject. Each variant names the seed assert it models, or the
    /// decision (DS-n in SPEC §8.4) where the seed is silent.
    #[non_exhaustive]
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum SyncError {
        /// A size limit was exceeded (DS-2). `what` ∈ {`num_semaphores`, `allocs`, `instrs`, `deps`,
        /// `sems`}.
        LimitExceeded {
            /// Which limit.
            what: &'static str,
            /// The size found.
            found: usize,
            /// The limit.
            limit: usize,
        } => "limit_exceeded",
        /// A GPSIMD engine or a remote `targetCore` names a core ≥ 8 (S000 §sync R3; DS-3).
        BadCore {
            /// The instruction.
            instr: InstrId,
            /// The core named.
            core: u8,
        } => "bad_core",
        /// `I != nullptr` (alloc_semaphores.cpp:214): a dependency names no instruction.
        NullInstruction {
            /// The instruction holding the dependency.
            instr: InstrId,
            /// The nonexistent producer index.
            dep: u16,
        } => "null_instruction",
        /// A semaphore handle names no allocation request (DS-4).
        UnknownSemaphore {
            /// The instruction.
            instr: InstrId,
            /// The handle (index into [`Program::allocs`]).
            handle: u16,
        } => "unknown_semaphore",
        /// An instruction updates semaphores by a zero delta (DS-5: a zero tick cannot signal).
        ZeroIncrement {
            /// The instruction.
            instr: InstrId,
        } => "zero_increment",
        /// `currSemaphore < currSemaIDFromUpperBound < NumSemaphores` failed
        /// (alloc_semaphores.cpp:256). Values are the counters before the failed allocation.
        PoolExhausted {
            /// The bottom counter (`AllocSemaphores+0x28`).
            bottom: u16,
            /// The top counter (`AllocSemaphores+0x2C`).
            top: u16,
            /// `HwmCore->NumSemaphores`.
            num: u16,
        } => "pool_exhausted",
        /// The dependency graph plus per-engine program order has a cycle: a deadlock (DS-6).
        /// `instr` is the smallest index that can never be scheduled.
        Cycle {
            /// Smallest unschedulable instruction.
            instr: InstrId,
        } => "cycle",
        /// `hasSingleLocalUpdate(SI.OnUpdate)` (alloc_semaphores.cpp:171): a waited-on producer has
        /// `n_local != 1` local (non-remote) Updates.
        NotSingleLocalUpdate {
            /// The producer.
            producer: InstrId,
            /// Its number of local updates.
            n_local: usize,
        } => "not_single_local_update",
        /// `getLocalSemaphore(SI.OnUpdate) == semaphore` (alloc_semaphores.cpp:172).
        LocalSemaphoreMismatch {
            /// The producer.
            producer: InstrId,
            /// The semaphore being waited on.
            expected: SemId,
            /// The producer's local Update semaphore.
            found: SemId,
        } => "local_semaphore_mismatch",
        /// Two engines update one local semaphore: fan-in on a shared semaphore (DS-7).
        SharedSemaphore {
            /// The semaphore.
            sem: SemId,
            /// The first instruction that updated it locally.
            owner: InstrId,
            /// The instruction on another engine that tried to.
            instr: InstrId,
        } => "shared_semaphore",
        /// `incrementSemaphore` overflow guard (alloc_semaphores.cpp:207).
        Overflow {
            /// The semaphore.
            sem: SemId,
            /// Its running value.
            value: u32,
            /// The delta that does not fit.
            delta: u32,
        } => "overflow",
        /// Stamping asked for a Wait the plan does not hold (DS-9).
        MissingWait {
            /// The waiting instruction.
            instr: InstrId,
            /// The producer it should wait on.
            producer: InstrId,
        } => "missing_wait",
        /// Stamping asked for the local Update of an instruction that has none (DS-9).
        MissingUpdate {
            /// The instruction.
            instr: InstrId,
        } => "missing_update",
    }
}

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {:?}", self.class(), self)
    }
}

impl std::error::Error for SyncError {}

/// The engine an instruction runs on. Each non-pseudo engine executes its instructions one at a
/// time in index order (DS-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Engine {
    /// The issuing TPB engine (S000 §sync R1/R2): it carries the 0x85 header.
    Host,
    /// GPSIMD core `0..8` (S000 §sync R3).
    Gpsimd(u8),
    /// DMA queue `q` (S000 §sync C2: "tensor-staging DMAs").
    Dma(u8),
    /// Not a real instruction: takes part in the dependency graph only; the pass never calls
    /// `setupSync` on it and it never executes (DS-8, S000 "realDescendents").
    Pseudo,
}

/// One dependency: `producer`'s output is consumed by the holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dep {
    /// The producer's index.
    pub producer: u16,
    /// The semaphore (handle into [`Program::allocs`]) the consumer expects to wait on; `None`
    /// means "the producer's local semaphore". Checked by `:172` (DS-10).
    pub via: Option<u16>,
}

/// One entry of the `sems` list handed to `setupSync` (S000 §sync "setupSync(I, sems, mult)").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SemArg {
    /// Handle: index into [`Program::allocs`].
    pub handle: u16,
    /// `targetCore`: engaged ⇒ a remote Update (S000 §sync "Update (32 B) +0x18").
    pub target_core: Option<u8>,
}

/// One instruction of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instr {
    /// Where it runs.
    pub engine: Engine,
    /// Its producers.
    pub deps: Vec<Dep>,
    /// The semaphores it signals on completion.
    pub sems: Vec<SemArg>,
    /// `mult`: each Update increments by this (S000 §sync incrementSemaphore "delta").
    pub mult: u32,
}

/// Where the pool hands an id out from (S000 §"Semaphore id allocation").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocFrom {
    /// The bottom counter, `++`.
    Bottom,
    /// The top counter, `--`.
    Top,
}

/// A program: a semaphore pool, allocation requests, and instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// `HwmCore->NumSemaphores` (default [`DEFAULT_NUM_SEMAPHORES`]).
    pub num_semaphores: u16,
    /// Allocation requests; a request's index is its handle.
    pub allocs: Vec<AllocFrom>,
    /// The instructions; an instruction's index is its [`InstrId`].
    pub instrs: Vec<Instr>,
}

/// BIR wait mode (F§2 wire table; SPEC §6.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BirWaitMode {
    /// `WAIT_FOR_SEM_GE_IMM`: wait until `sem ≥ semaphore_value` — the only mode the pass
    /// installs (DS-13).
    SemGeImm,
    /// `WAIT_FOR_SEM_GE_REG`: compare against a register.
    SemGeReg,
}

impl BirWaitMode {
    /// The wire byte for band byte\[4\] (F§2 wire table: BIR 1 → 0x05, 2 → 0x85).
    pub fn wire(self) -> u8 {
        match self {
            BirWaitMode::SemGeImm => crate::events::WAIT_FOR_SEM_GE_IMM,
            BirWaitMode::SemGeReg => 0x85,
        }
    }
}

/// The Update mode the pass installs: `SEM_INC_COMPLETE` (F§2 \[H\] 0x13; DS-13). It fires when
/// the instruction completes and adds one tick per wire record; an instruction's `mult` is the
/// number of ticks its completion counts for (S000 §sync incrementSemaphore "delta").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BirUpdateMode {
    /// `SEM_INC_COMPLETE`, the only mode the pass installs (DS-13).
    SemIncComplete,
}

impl BirUpdateMode {
    /// The wire byte for band byte\[6\] (F§2 \[H\]: SEM_INC_COMPLETE 0x13).
    pub fn wire(self) -> u8 {
        match self {
            BirUpdateMode::SemIncComplete => crate::events::SEM_INC_COMPLETE,
        }
    }
}

/// `bir::sync::Wait` (S000 §"The SyncInfo object"): block until `sem ≥ value`. Always on the
/// local semaphore file (DS-12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Semaphore id (+0x0C).
    pub sem: SemId,
    /// BirWaitMode (+0x10).
    pub mode: BirWaitMode,
    /// Threshold (+0x14).
    pub value: u32,
    /// The producer whose Update satisfies it (+0x18 "from-Instruction*").
    pub from: InstrId,
}

/// `bir::sync::Update` (S000 §"The SyncInfo object").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update {
    /// Semaphore id (+0x0C).
    pub sem: SemId,
    /// BirUpdateMode (+0x10).
    pub mode: BirUpdateMode,
    /// The increment (`mult`).
    pub delta: u32,
    /// The running value after this Update (what the matching Waits use as threshold).
    pub value: u32,
    /// `targetCore` (+0x18): engaged ⇒ remote.
    pub target_core: Option<u8>,
}

impl Update {
    /// `Update::isRemote`.
    pub fn is_remote(&self) -> bool {
        self.target_core.is_some()
    }
}

/// An instruction's SyncInfo: its Waits and its `OnUpdate` list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncInfo {
    /// Waits, in installation order.
    pub waits: Vec<Wait>,
    /// Updates (`SI.OnUpdate`), in `sems` order.
    pub updates: Vec<Update>,
}

impl SyncInfo {
    /// `getLocalSemaphore(SI.OnUpdate)` when `hasSingleLocalUpdate` holds.
    pub fn local_update(&self) -> Option<&Update> {
        let mut it = self.updates.iter().filter(|u| !u.is_remote());
        match (it.next(), it.next()) {
            (Some(u), None) => Some(u),
            _ => None,
        }
    }

    fn n_local(&self) -> usize {
        self.updates.iter().filter(|u| !u.is_remote()).count()
    }
}

/// The pass's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncPlan {
    /// The id handed out for each allocation request (handle order).
    pub sem_ids: Vec<SemId>,
    /// The canonical order (phase 4); pseudo instructions included.
    pub order: Vec<InstrId>,
    /// One SyncInfo per instruction (empty for pseudo instructions).
    pub infos: Vec<SyncInfo>,
    /// The running-value map after the pass: the final value of every semaphore.
    pub values: SemaphoreValues,
}

/// Small fixed bitset over ≤ 256 instructions.
#[derive(Clone, Copy, Default)]
struct Bits([u64; 4]);

impl Bits {
    fn set(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1u64 << (i % 64);
        }
    }
    fn or(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a |= *b;
        }
    }
    /// Set members in ascending order (one step per member, not per bit).
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(k * 64 + b)
            })
        })
    }
}

fn limit(what: &'static str, found: usize, limit: usize) -> Result<(), SyncError> {
    if found > limit {
        Err(SyncError::LimitExceeded { what, found, limit })
    } else {
        Ok(())
    }
}

fn id(i: usize) -> InstrId {
    // i < MAX_INSTRUCTIONS (checked in phase 1), so this never saturates.
    InstrId::try_from(i).unwrap_or(InstrId::MAX)
}

/// Phases 1–2: limits, then per-instruction reference checks in index order (DS-1).
fn check_structure(p: &Program) -> Result<(), SyncError> {
    limit(
        "num_semaphores",
        usize::from(p.num_semaphores),
        usize::from(MAX_NUM_SEMAPHORES),
    )?;
    limit("allocs", p.allocs.len(), MAX_ALLOCS)?;
    limit("instrs", p.instrs.len(), MAX_INSTRUCTIONS)?;
    for ins in &p.instrs {
        limit("deps", ins.deps.len(), MAX_DEPS)?;
        limit("sems", ins.sems.len(), MAX_SEMS)?;
    }
    let n = p.instrs.len();
    let handles = p.allocs.len();
    for (i, ins) in p.instrs.iter().enumerate() {
        let instr = id(i);
        if let Engine::Gpsimd(core) = ins.engine {
            if core >= NUM_CORES {
                return Err(SyncError::BadCore { instr, core });
            }
        }
        for d in &ins.deps {
            if usize::from(d.producer) >= n {
                return Err(SyncError::NullInstruction {
                    instr,
                    dep: d.producer,
                });
            }
            if let Some(h) = d.via {
                if usize::from(h) >= handles {
                    return Err(SyncError::UnknownSemaphore { instr, handle: h });
                }
            }
        }
        for s in &ins.sems {
            if usize::from(s.handle) >= handles {
                return Err(SyncError::UnknownSemaphore {
                    instr,
                    handle: s.handle,
                });
            }
            if let Some(core) = s.target_core {
                if core >= NUM_CORES {
                    return Err(SyncError::BadCore { instr, core });
                }
            }
        }
        if !ins.sems.is_empty() && ins.mult == 0 {
            return Err(SyncError::ZeroIncrement { instr });
        }
    }
    Ok(())
}

/// Successor lists of `n` nodes in one buffer (edges kept in insertion order per node).
struct Succ {
    /// `start[i]..start[i + 1]` indexes `to` for node `i`.
    start: Vec<usize>,
    to: Vec<usize>,
}

impl Succ {
    /// Edges `(from, to)` with `from < n` (phase 2 range-checked every producer).
    fn new(n: usize, edges: &[(usize, usize)]) -> Succ {
        let mut start = vec![0usize; n + 1];
        for &(from, _) in edges {
            if let Some(c) = start.get_mut(from + 1) {
                *c += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut to = vec![0usize; edges.len()];
        for &(from, t) in edges {
            if let Some(slot) = next.get_mut(from) {
                if let Some(cell) = to.get_mut(*slot) {
                    *cell = t;
                }
                *slot += 1;
            }
        }
        Succ { start, to }
    }

    fn of(&self, i: usize) -> &[usize] {
        match (self.start.get(i), self.start.get(i + 1)) {
            (Some(&a), Some(&b)) => self.to.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// Phase 4: the lexicographically smallest topological order of dependency edges plus
/// per-engine program-order edges (DS-6). Requires phase 2 (all deps in range).
fn canonical_order(p: &Program) -> Result<Vec<InstrId>, SyncError> {
    let n = p.instrs.len();
    let mut edges = Vec::with_capacity(n * 2);
    let mut indeg = vec![0usize; n];
    // Engine → its last instruction so far (a handful of engines: a short list).
    let mut last_on: Vec<(Engine, usize)> = Vec::new();
    for (i, ins) in p.instrs.iter().enumerate() {
        for d in &ins.deps {
            edges.push((usize::from(d.producer), i));
            indeg[i] += 1;
        }
        if ins.engine != Engine::Pseudo {
            let prev = match last_on.iter_mut().find(|(e, _)| *e == ins.engine) {
                Some((_, last)) => Some(std::mem::replace(last, i)),
                None => {
                    last_on.push((ins.engine, i));
                    None
                }
            };
            if let Some(prev) = prev {
                edges.push((prev, i));
                indeg[i] += 1;
            }
        }
    }
    let succ = Succ::new(n, &edges);
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&i| indeg[i] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(id(i));
        for &s in succ.of(i) {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                ready.push(std::cmp::Reverse(s));
            }
        }
    }
    if order.len() < n {
        let stuck = (0..n).find(|&i| indeg[i] > 0).unwrap_or(0);
        return Err(SyncError::Cycle { instr: id(stuck) });
    }
    Ok(order)
}

/// `realDescendents()` of every instruction: the real (non-pseudo) transitive successors along
/// dependency edges, walking through pseudo ones (S000 §"setupSyncUpdate"; DS-8).
fn real_descendants(p: &Program, order: &[InstrId]) -> Vec<Bits> {
    let n = p.instrs.len();
    let edges: Vec<(usize, usize)> = p
        .instrs
        .iter()
        .enumerate()
        .flat_map(|(i, ins)| ins.deps.iter().map(move |d| (usize::from(d.producer), i)))
        .collect();
    let succ = Succ::new(n, &edges);
    let mut desc = vec![Bits::default(); n];
    for &i in order.iter().rev() {
        let i = usize::from(i);
        let mut acc = Bits::default();
        for &s in succ.of(i) {
            if p.instrs[s].engine != Engine::Pseudo {
                acc.set(s);
            }
            acc.or(&desc[s]);
        }
        desc[i] = acc;
    }
    desc
}

/// The producers `setupSyncWait(I)` validates: I's deps in order, each pseudo dep replaced by
/// its own producers (pre-order, each pseudo expanded once, `via` dropped under a pseudo) (DS-8).
/// `out` and `stack` are scratch, cleared first.
fn real_producers(p: &Program, i: usize, out: &mut Vec<Dep>, stack: &mut Vec<(usize, usize)>) {
    out.clear();
    stack.clear();
    let mut seen = Bits::default();
    stack.push((i, 0));
    while let Some((node, k)) = stack.pop() {
        let Some(d) = p.instrs[node].deps.get(k).copied() else {
            continue;
        };
        stack.push((node, k + 1));
        let prod = usize::from(d.producer);
        if p.instrs[prod].engine == Engine::Pseudo {
            if seen.0[prod / 64] >> (prod % 64) & 1 == 0 {
                seen.set(prod);
                stack.push((prod, 0));
            }
        } else {
            let via = if node == i { d.via } else { None };
            out.push(Dep {
                producer: d.producer,
                via,
            });
        }
    }
}

/// Run the `alloc_semaphores` pass over `p` (S000 §sync C2, `AllocSemaphores::run` 0x1126d30).
pub fn alloc_semaphores(p: &Program) -> Result<SyncPlan, SyncError> {
    check_structure(p)?;
    let mut pool = SemaphorePool::new(p.num_semaphores)?;
    let mut sem_ids = Vec::with_capacity(p.allocs.len());
    for &a in &p.allocs {
        sem_ids.push(pool.allocate(a)?);
    }
    let order = canonical_order(p)?;
    let desc = real_descendants(p, &order);
    // Capacity hints only: each local semaphore of a real instruction becomes one Wait on
    // each of its real descendants (setupSyncUpdate), so no list grows one push at a time.
    let mut n_waits = vec![0usize; p.instrs.len()];
    for (ins, d) in p.instrs.iter().zip(&desc) {
        let locals = ins.sems.iter().filter(|s| s.target_core.is_none()).count();
        if ins.engine != Engine::Pseudo && locals > 0 {
            for k in d.iter() {
                if let Some(c) = n_waits.get_mut(k) {
                    *c += locals;
                }
            }
        }
    }
    let infos = p
        .instrs
        .iter()
        .zip(&n_waits)
        .map(|(ins, &waits)| SyncInfo {
            waits: Vec::with_capacity(waits),
            updates: match ins.engine {
                Engine::Pseudo => Vec::new(),
                _ => Vec::with_capacity(ins.sems.len()),
            },
        })
        .collect();
    let mut pass = Pass {
        p,
        sem_ids: &sem_ids,
        desc: &desc,
        infos,
        values: SemaphoreValues::default(),
        owner: [None; 256],
        producers: Vec::new(),
        stack: Vec::new(),
    };
    for &i in &order {
        if p.instrs[usize::from(i)].engine != Engine::Pseudo {
            pass.setup_sync(usize::from(i))?;
        }
    }
    let (infos, values) = (pass.infos, pass.values);
    Ok(SyncPlan {
        sem_ids,
        order,
        infos,
        values,
    })
}

struct Pass<'a> {
    p: &'a Program,
    sem_ids: &'a [SemId],
    desc: &'a [Bits],
    infos: Vec<SyncInfo>,
    values: SemaphoreValues,
    /// Local semaphore → first instruction that updated it (DS-7).
    owner: [Option<usize>; 256],
    /// Scratch for [`real_producers`].
    producers: Vec<Dep>,
    stack: Vec<(usize, usize)>,
}

impl Pass<'_> {
    fn sem(&self, handle: u16) -> SemId {
        // Handles were range-checked in phase 2.
        self.sem_ids.get(usize::from(handle)).copied().unwrap_or(0)
    }

    /// `setupSync(I, sems, mult)` (S000 §sync 0x1123ec0): setupSyncWait, then per semaphore
    /// incrementSemaphore + setupSyncUpdate. `I != nullptr` (:214) is phase 2's NullInstruction.
    fn setup_sync(&mut self, i: usize) -> Result<(), SyncError> {
        self.setup_sync_wait(i)?;
        let ins = &self.p.instrs[i];
        for s in &ins.sems {
            let sem = self.sem(s.handle);
            if s.target_core.is_none() {
                let owner = *self.owner[usize::from(sem)].get_or_insert(i);
                if self.p.instrs[owner].engine != ins.engine {
                    return Err(SyncError::SharedSemaphore {
                        sem,
                        owner: id(owner),
                        instr: id(i),
                    });
                }
            }
            let key = SemKey {
                core: s.target_core,
                sem,
            };
            let value = self.values.increment(key, ins.mult)?;
            let upd = Update {
                sem,
                mode: BirUpdateMode::SemIncComplete,
                delta: ins.mult,
                value,
                target_core: s.target_core,
            };
            self.setup_sync_update(i, upd);
        }
        Ok(())
    }

    /// `setupSyncWait` (S000 §"setupSyncWait — the 1:1 invariant", sub_1122190): validate every
    /// real producer: exactly one local Update (:171) on the semaphore waited on (:172).
    fn setup_sync_wait(&mut self, i: usize) -> Result<(), SyncError> {
        let mut producers = std::mem::take(&mut self.producers);
        real_producers(self.p, i, &mut producers, &mut self.stack);
        let verdict = self.check_producers(&producers);
        self.producers = producers;
        verdict
    }

    /// The checks of [`Pass::setup_sync_wait`] over `i`'s real producers.
    fn check_producers(&self, producers: &[Dep]) -> Result<(), SyncError> {
        for &d in producers {
            let si = &self.infos[usize::from(d.producer)];
            let n_local = si.n_local();
            if n_local != 1 {
                return Err(SyncError::NotSingleLocalUpdate {
                    producer: d.producer,
                    n_local,
                });
            }
            let found = si.local_update().map(|u| u.sem).unwrap_or(0);
            let expected = d.via.map(|h| self.sem(h)).unwrap_or(found);
            if found != expected {
                return Err(SyncError::LocalSemaphoreMismatch {
                    producer: d.producer,
                    expected,
                    found,
                });
            }
        }
        Ok(())
    }

    /// `setupSyncUpdate` (S000 §"setupSyncUpdate — spread to all consumers", sub_1123A30): install
    /// the Update on I; a local one is spread as a `SEM_GE_IMM` Wait to every real descendant.
    /// Remote Updates are not spread (the VNC link relinks them, S000 §sync NOTE; DS-12).
    fn setup_sync_update(&mut self, i: usize, upd: Update) {
        self.infos[i].updates.push(upd);
        if upd.is_remote() {
            return;
        }
        let w = Wait {
            sem: upd.sem,
            mode: BirWaitMode::SemGeImm,
            value: upd.value,
            from: id(i),
        };
        for d in self.desc[i].iter() {
            if let Some(info) = self.infos.get_mut(d) {
                info.waits.push(w);
            }
        }
    }
}
