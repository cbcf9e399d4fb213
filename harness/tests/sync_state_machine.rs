//! Stateful property test of the sync handshake (SPEC §8) with `proptest-state-machine`.
//!
//! The transitions are program-building operations: allocate a semaphore, add a custom-op flow
//! (DMA in → custom op → GPSIMD computes → result DMA → consumers), a GPSIMD compute with or
//! without a remote update, a consumer of an existing instruction, a pseudo join, and rule
//! breakers (a second local update, no local update, an update of another engine's semaphore, a
//! free instruction that may dangle, loop, use a bad core, tick by zero or overflow).
//!
//! The reference state is the program built so far plus the error class SPEC §8 says it must be
//! rejected with (`None`: accepted). [`expect`] derives that class from the rules R1–R13 and the
//! pass order of §8.3 directly; it never calls `tpb_core::sync`. It can stay small because the
//! transitions keep two facts true: every dependency points backwards, at itself, or at
//! [`DANGLING`] (so the canonical order is the index order and the only cycles are self-loops),
//! and unless the pool is exhausted distinct handles get distinct ids (so handles stand for ids).
//!
//! After every transition the system under test runs the model (`alloc_semaphores`) and the
//! model-vs-simulator comparison of `kinds::sync_handshake::compare_case_on`, and asserts that they agree and
//! that the model's error class is the reference's.

use proptest::prelude::*;
use proptest::strategy::Union;
use proptest_state_machine::{prop_state_machine, ReferenceStateMachine, StateMachineTest};
use std::collections::{BTreeMap, BTreeSet};
use tpb_core::sync::{self as model, AllocFrom, Dep, Engine, Instr, Program, SemArg};
use tpbconform::generators::sync_program::{Case, EngineSems, SyncFlow};
use tpbconform::kinds::sync_handshake::{compare_case_on, SyncCaseOutcome};
use tpbconform::subjects::registry;

/// An instruction index or semaphore handle that never exists (programs stay below 256).
const DANGLING: u16 = 1000;
/// Most instructions a built program may reach (below the model's 256 limit, DS-2).
const MAX_BUILT: usize = 200;

/// Which semaphore handle an argument names.
#[derive(Clone, Copy, Debug)]
enum Handle {
    /// The instruction's engine's own semaphore (allocated on first use).
    Own,
    /// The `k`-th most recent allocation request (0 = the latest).
    Recent(u16),
    /// A handle naming no allocation request (DS-4).
    Dangling,
}

/// What a dependency points at.
#[derive(Clone, Copy, Debug)]
enum Producer {
    /// The `k`-th most recent instruction (0 = the latest).
    Back(u16),
    /// The instruction itself: a deadlock (DS-6).
    SelfLoop,
    /// No instruction (`:214`).
    Dangling,
}

/// The semaphore a consumer says it waits on (DS-10).
#[derive(Clone, Copy, Debug)]
enum Via {
    /// The producer's own local semaphore, if it has one.
    ProducersOwn,
    /// The `k`-th most recent allocation request (0 = the latest).
    Recent(u16),
    /// A handle naming no allocation request.
    Dangling,
}

/// The shape of one R12 flow ([`Transition::Flow`]).
#[derive(Clone, Debug)]
struct Flow {
    in_q: u8,
    out_q: u8,
    cores: u8,
    consumers: u8,
    mult: u32,
    remote: bool,
}

/// One program-building operation. References count back from the latest instruction or
/// allocation request (0 = the latest), so they stay meaningful when shrinking drops earlier
/// transitions; `after: Some(k)` is a dependency on the `k`-th most recent instruction.
#[derive(Clone, Debug)]
enum Transition {
    /// R2: one more allocation request.
    Alloc { top: bool },
    /// R12: DMA in → custom op (host) → `cores` GPSIMD computes → result DMA → `consumers`.
    Flow(Flow),
    /// A GPSIMD compute signalling its core's semaphore, optionally also a peer core (R9, DS-12).
    Compute {
        core: u8,
        after: Option<u16>,
        remote: Option<u8>,
        mult: u32,
    },
    /// A consumer of the `back`-th most recent instruction on `engine`, signalling its engine's
    /// semaphore.
    Consume {
        back: u16,
        engine: Engine,
        via: Option<Via>,
    },
    /// A pseudo instruction joining earlier ones (DS-8).
    Join { backs: Vec<u16> },
    /// Two local Updates on the engine's semaphore (R7/R13 fan-out once waited on).
    DoubleUpdate { engine: Engine, after: Option<u16> },
    /// No local Update: nothing, or only a remote one (R7 with `n_local = 0` once waited on).
    Silent {
        engine: Engine,
        after: Option<u16>,
        remote: Option<u8>,
    },
    /// A local Update of the `recent`-th most recent handle, maybe another engine's (DS-7).
    Foreign { engine: Engine, recent: u16 },
    /// A free instruction.
    Raw {
        engine: Engine,
        deps: Vec<(Producer, Option<Via>)>,
        sems: Vec<(Handle, Option<u8>)>,
        mult: u32,
    },
}

impl Transition {
    /// Most instructions it adds.
    fn max_added(&self) -> usize {
        match self {
            Transition::Alloc { .. } => 0,
            Transition::Flow(_) => 9,
            _ => 1,
        }
    }
}

/// A growing program (shared by the reference and the system under test: it only builds data).
#[derive(Clone, Debug)]
struct Built {
    case: Case,
    engine_sem: EngineSems,
}

impl Built {
    fn new(num_semaphores: u16) -> Self {
        Built {
            case: Case {
                program: Program {
                    num_semaphores,
                    allocs: Vec::new(),
                    instrs: Vec::new(),
                },
                flows: Vec::new(),
            },
            engine_sem: EngineSems::default(),
        }
    }
    fn n(&self) -> u16 {
        self.case.program.instrs.len() as u16
    }
    fn n_allocs(&self) -> u16 {
        self.case.program.allocs.len() as u16
    }
    /// The `k`-th most recent instruction (callers check `k < n`).
    fn back(&self, k: u16) -> u16 {
        self.n() - 1 - k
    }
    /// The `k`-th most recent allocation request (callers check `k < n_allocs`).
    fn recent(&self, k: u16) -> u16 {
        self.n_allocs() - 1 - k
    }
    fn alloc(&mut self, from: AllocFrom) -> u16 {
        self.case.program.allocs.push(from);
        self.n_allocs() - 1
    }
    /// Instruction `c` (on `e`) also signals `e`'s semaphore on core `peer` (R9, DS-12).
    fn signal_peer(&mut self, c: u16, e: Engine, peer: u8) {
        let h = self.sem_of(e);
        self.case.program.instrs[usize::from(c)].sems.push(SemArg {
            handle: h,
            target_core: Some(peer),
        });
    }
    /// The engine's own semaphore ([`EngineSems`]: DMA queues from the top, others from
    /// the bottom).
    fn sem_of(&mut self, e: Engine) -> u16 {
        let allocs = &mut self.case.program.allocs;
        self.engine_sem.of(e, |from| {
            allocs.push(from);
            (allocs.len() - 1) as u16
        })
    }
    fn push(&mut self, engine: Engine, deps: Vec<Dep>, sems: Vec<SemArg>, mult: u32) -> u16 {
        self.case.program.instrs.push(Instr {
            engine,
            deps,
            sems,
            mult,
        });
        self.n() - 1
    }
    fn local(handle: u16) -> SemArg {
        SemArg {
            handle,
            target_core: None,
        }
    }
    fn deps(producers: impl IntoIterator<Item = u16>) -> Vec<Dep> {
        producers
            .into_iter()
            .map(|producer| Dep {
                producer,
                via: None,
            })
            .collect()
    }
    /// An instruction on `e` after `deps` signalling `e`'s own semaphore.
    fn own(&mut self, e: Engine, deps: &[u16], mult: u32) -> u16 {
        let h = self.sem_of(e);
        self.push(
            e,
            Self::deps(deps.iter().copied()),
            vec![Self::local(h)],
            mult,
        )
    }
    fn handle(&mut self, e: Engine, h: Handle) -> u16 {
        match h {
            Handle::Own => self.sem_of(e),
            Handle::Recent(k) => self.recent(k),
            Handle::Dangling => DANGLING,
        }
    }
    fn via(&self, producer: u16, v: Via) -> Option<u16> {
        match v {
            Via::ProducersOwn => self
                .case
                .program
                .instrs
                .get(usize::from(producer))
                .and_then(|i| i.sems.iter().find(|s| s.target_core.is_none()))
                .map(|s| s.handle),
            Via::Recent(k) => Some(self.recent(k)),
            Via::Dangling => Some(DANGLING),
        }
    }

    fn apply(&mut self, t: &Transition) {
        match *t {
            Transition::Alloc { top } => {
                self.alloc(if top {
                    AllocFrom::Top
                } else {
                    AllocFrom::Bottom
                });
            }
            Transition::Flow(ref f) => {
                let dma_in = self.own(Engine::Dma(f.in_q), &[], f.mult);
                let custom_op = self.own(Engine::Host, &[dma_in], f.mult);
                let mut computes = Vec::new();
                for k in 0..f.cores {
                    let e = Engine::Gpsimd((f.in_q + k) % 8);
                    let c = self.own(e, &[custom_op], f.mult);
                    if f.remote {
                        self.signal_peer(c, e, (k + 1 + f.out_q) % 8);
                    }
                    computes.push(c);
                }
                if computes.is_empty() {
                    computes.push(custom_op);
                }
                let result_dma = self.own(Engine::Dma(f.out_q), &computes, f.mult);
                let mut cons = Vec::new();
                for k in 0..f.consumers {
                    let e = [Engine::Host, Engine::Gpsimd(k), Engine::Dma(4)][usize::from(k % 3)];
                    cons.push(self.own(e, &[result_dma], f.mult));
                }
                self.case.flows.push(SyncFlow {
                    dma_in,
                    custom_op,
                    result_dma,
                    consumers: cons,
                });
            }
            Transition::Compute {
                core,
                after,
                remote,
                mult,
            } => {
                let e = Engine::Gpsimd(core);
                let deps: Vec<u16> = after.map(|k| self.back(k)).into_iter().collect();
                let c = self.own(e, &deps, mult);
                if let Some(peer) = remote {
                    self.signal_peer(c, e, peer);
                }
            }
            Transition::Consume { back, engine, via } => {
                let producer = self.back(back);
                let via = via.and_then(|v| self.via(producer, v));
                let h = self.sem_of(engine);
                self.push(engine, vec![Dep { producer, via }], vec![Self::local(h)], 1);
            }
            Transition::Join { ref backs } => {
                let deps = Self::deps(backs.iter().map(|&k| self.back(k)));
                self.push(Engine::Pseudo, deps, vec![], 1);
            }
            Transition::DoubleUpdate { engine, after } => {
                let h = self.sem_of(engine);
                let deps = Self::deps(after.map(|k| self.back(k)));
                self.push(engine, deps, vec![Self::local(h), Self::local(h)], 1);
            }
            Transition::Silent {
                engine,
                after,
                remote,
            } => {
                let sems = match remote {
                    Some(core) => vec![SemArg {
                        handle: self.sem_of(engine),
                        target_core: Some(core),
                    }],
                    None => vec![],
                };
                let deps = Self::deps(after.map(|k| self.back(k)));
                self.push(engine, deps, sems, 1);
            }
            Transition::Foreign { engine, recent } => {
                let h = self.recent(recent);
                self.push(engine, vec![], vec![Self::local(h)], 1);
            }
            Transition::Raw {
                engine,
                ref deps,
                ref sems,
                mult,
            } => {
                let me = self.n();
                let deps = deps
                    .iter()
                    .map(|&(p, v)| {
                        let producer = match p {
                            Producer::Back(k) => self.back(k),
                            Producer::SelfLoop => me,
                            Producer::Dangling => DANGLING,
                        };
                        let via = v.and_then(|v| self.via(producer, v));
                        Dep { producer, via }
                    })
                    .collect();
                let sems = sems
                    .iter()
                    .map(|&(h, target_core)| SemArg {
                        handle: self.handle(engine, h),
                        target_core,
                    })
                    .collect();
                self.push(engine, deps, sems, mult);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The reference expectation: SPEC §8 rules, evaluated by hand on the built program.
// ---------------------------------------------------------------------------------------------

/// The producers setupSyncWait checks for `i` (§8.3 step 5a, DS-8): deps in order, a pseudo dep
/// replaced by its own deps (pre-order, once each); `via` only on `i`'s own edges.
fn real_producers(p: &Program, i: usize) -> Vec<(usize, Option<u16>)> {
    fn walk(
        p: &Program,
        node: usize,
        top: bool,
        seen: &mut BTreeSet<usize>,
        out: &mut Vec<(usize, Option<u16>)>,
    ) {
        for d in &p.instrs[node].deps {
            let q = usize::from(d.producer);
            if p.instrs[q].engine == Engine::Pseudo {
                if seen.insert(q) {
                    walk(p, q, false, seen, out);
                }
            } else {
                out.push((q, if top { d.via } else { None }));
            }
        }
    }
    let mut out = Vec::new();
    walk(p, i, true, &mut BTreeSet::new(), &mut out);
    out
}

/// The error class SPEC §8 requires for `p`, or `None` if it must be accepted.
fn expect(p: &Program) -> Option<&'static str> {
    let n = p.instrs.len();
    let handles = p.allocs.len();
    // Phase 2 (references), per instruction in index order (DS-3, DS-4, DS-5, :214).
    for ins in &p.instrs {
        if matches!(ins.engine, Engine::Gpsimd(c) if c >= 8) {
            return Some("bad_core");
        }
        for d in &ins.deps {
            if usize::from(d.producer) >= n {
                return Some("null_instruction");
            }
            if d.via.is_some_and(|h| usize::from(h) >= handles) {
                return Some("unknown_semaphore");
            }
        }
        for s in &ins.sems {
            if usize::from(s.handle) >= handles {
                return Some("unknown_semaphore");
            }
            if s.target_core.is_some_and(|c| c >= 8) {
                return Some("bad_core");
            }
        }
        if !ins.sems.is_empty() && ins.mult == 0 {
            return Some("zero_increment");
        }
    }
    // Phase 3 (R1–R3, DS-11): at most NumSemaphores − 1 ids can be handed out.
    if handles > usize::from(p.num_semaphores.saturating_sub(1)) {
        return Some("pool_exhausted");
    }
    // Phase 4 (DS-6): deps only point backwards or at themselves, engine order forwards.
    for (i, ins) in p.instrs.iter().enumerate() {
        for d in &ins.deps {
            let q = usize::from(d.producer);
            assert!(q <= i, "generator invariant: forward dependency {i} -> {q}");
            if q == i {
                return Some("cycle");
            }
        }
    }
    // Phase 5: setupSync in index order (the canonical order here). Handles stand for ids.
    let mut owner: BTreeMap<u16, Engine> = BTreeMap::new();
    let mut value: BTreeMap<(Option<u8>, u16), u64> = BTreeMap::new();
    for (i, ins) in p.instrs.iter().enumerate() {
        if ins.engine == Engine::Pseudo {
            continue; // DS-8: never set up.
        }
        for (q, via) in real_producers(p, i) {
            let locals: Vec<u16> = p.instrs[q]
                .sems
                .iter()
                .filter(|s| s.target_core.is_none()) // R9: remote Updates do not count.
                .map(|s| s.handle)
                .collect();
            if locals.len() != 1 {
                return Some("not_single_local_update"); // R7, R13.
            }
            if via.is_some_and(|h| h != locals[0]) {
                return Some("local_semaphore_mismatch"); // R8, DS-10.
            }
        }
        for s in &ins.sems {
            if s.target_core.is_none() && *owner.entry(s.handle).or_insert(ins.engine) != ins.engine
            {
                return Some("shared_semaphore"); // DS-7.
            }
            let v = value.entry((s.target_core, s.handle)).or_insert(0);
            *v += u64::from(ins.mult);
            if *v > u64::from(u32::MAX) {
                return Some("overflow"); // R4, DS-15.
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// The reference state machine.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct RefState {
    built: Built,
    /// Interleaving bytes for the simulator (SPEC §8.5).
    schedule: Vec<u8>,
    /// What SPEC §8 says the program built so far must give.
    expected: Option<&'static str>,
}

struct HandshakeMachine;

fn engine_strategy() -> BoxedStrategy<Engine> {
    prop_oneof![
        3 => Just(Engine::Host),
        4 => (0u8..8).prop_map(Engine::Gpsimd),
        3 => (0u8..5).prop_map(Engine::Dma),
    ]
    .boxed()
}

fn raw_engine_strategy() -> BoxedStrategy<Engine> {
    prop_oneof![
        10 => engine_strategy(),
        1 => Just(Engine::Pseudo),
        1 => Just(Engine::Gpsimd(8)),
    ]
    .boxed()
}

/// Remote target core: a valid one, rarely core 8.
fn remote_core() -> BoxedStrategy<u8> {
    prop_oneof![9 => 0u8..8, 1 => Just(8u8)].boxed()
}

fn opt_index(n: u16) -> BoxedStrategy<Option<u16>> {
    if n == 0 {
        Just(None).boxed()
    } else {
        proptest::option::of(0..n).boxed()
    }
}

fn via_strategy(allocs: u16) -> BoxedStrategy<Option<Via>> {
    let mut v: Vec<(u32, BoxedStrategy<Option<Via>>)> = vec![
        (4, Just(None).boxed()),
        (3, Just(Some(Via::ProducersOwn)).boxed()),
        (1, Just(Some(Via::Dangling)).boxed()),
    ];
    if allocs > 0 {
        v.push((2, (0..allocs).prop_map(|k| Some(Via::Recent(k))).boxed()));
    }
    Union::new_weighted(v).boxed()
}

impl ReferenceStateMachine for HandshakeMachine {
    type State = RefState;
    type Transition = Transition;

    fn init_state() -> BoxedStrategy<RefState> {
        (
            prop_oneof![3 => Just(model::DEFAULT_NUM_SEMAPHORES), 1 => 0u16..12],
            proptest::collection::vec(any::<u8>(), 0..48),
        )
            .prop_map(|(num, schedule)| RefState {
                built: Built::new(num),
                schedule,
                expected: None,
            })
            .boxed()
    }

    fn transitions(state: &RefState) -> BoxedStrategy<Transition> {
        let n = state.built.n();
        let a = state.built.n_allocs();
        let mult = || 1u32..=4;
        let mut v: Vec<(u32, BoxedStrategy<Transition>)> = vec![
            (
                2,
                any::<bool>()
                    .prop_map(|top| Transition::Alloc { top })
                    .boxed(),
            ),
            (
                4,
                (0u8..4, 0u8..4, 0u8..=3, 0u8..=3, mult(), any::<bool>())
                    .prop_map(|(in_q, out_q, cores, consumers, mult, remote)| {
                        Transition::Flow(Flow {
                            in_q,
                            out_q,
                            cores,
                            consumers,
                            mult,
                            remote,
                        })
                    })
                    .boxed(),
            ),
            (
                3,
                (
                    0u8..8,
                    opt_index(n),
                    proptest::option::of(remote_core()),
                    mult(),
                )
                    .prop_map(|(core, after, remote, mult)| Transition::Compute {
                        core,
                        after,
                        remote,
                        mult,
                    })
                    .boxed(),
            ),
            (
                1,
                (engine_strategy(), opt_index(n))
                    .prop_map(|(engine, after)| Transition::DoubleUpdate { engine, after })
                    .boxed(),
            ),
            (
                1,
                (
                    engine_strategy(),
                    opt_index(n),
                    proptest::option::of(remote_core()),
                )
                    .prop_map(|(engine, after, remote)| Transition::Silent {
                        engine,
                        after,
                        remote,
                    })
                    .boxed(),
            ),
        ];
        if n > 0 {
            v.push((
                5,
                (0..n, engine_strategy(), via_strategy(a))
                    .prop_map(|(back, engine, via)| Transition::Consume { back, engine, via })
                    .boxed(),
            ));
            v.push((
                1,
                proptest::collection::vec(0..n, 0..=3)
                    .prop_map(|backs| Transition::Join { backs })
                    .boxed(),
            ));
        }
        if a > 0 {
            v.push((
                1,
                (engine_strategy(), 0..a)
                    .prop_map(|(engine, recent)| Transition::Foreign { engine, recent })
                    .boxed(),
            ));
        }
        let producer = {
            let mut p: Vec<(u32, BoxedStrategy<Producer>)> = vec![
                (1, Just(Producer::SelfLoop).boxed()),
                (1, Just(Producer::Dangling).boxed()),
            ];
            if n > 0 {
                p.push((12, (0..n).prop_map(Producer::Back).boxed()));
            }
            Union::new_weighted(p).boxed()
        };
        let handle = {
            let mut h: Vec<(u32, BoxedStrategy<Handle>)> = vec![
                (8, Just(Handle::Own).boxed()),
                (1, Just(Handle::Dangling).boxed()),
            ];
            if a > 0 {
                h.push((3, (0..a).prop_map(Handle::Recent).boxed()));
            }
            Union::new_weighted(h).boxed()
        };
        v.push((
            2,
            (
                raw_engine_strategy(),
                proptest::collection::vec((producer, via_strategy(a)), 0..=3),
                proptest::collection::vec(
                    (
                        handle,
                        prop_oneof![4 => Just(None), 1 => remote_core().prop_map(Some)],
                    ),
                    0..=3,
                ),
                prop_oneof![
                    8 => 1u32..=4,
                    1 => Just(0u32),
                    1 => (u32::MAX - 3)..=u32::MAX,
                ],
            )
                .prop_map(|(engine, deps, sems, mult)| Transition::Raw {
                    engine,
                    deps,
                    sems,
                    mult,
                })
                .boxed(),
        ));
        Union::new_weighted(v).boxed()
    }

    /// Every index a transition names exists (shrinking may drop the transition that made it).
    fn preconditions(state: &RefState, t: &Transition) -> bool {
        let n = state.built.n();
        let a = state.built.n_allocs();
        let ok_via = |v: &Option<Via>| !matches!(v, Some(Via::Recent(k)) if *k >= a);
        let fits = usize::from(n) + t.max_added() <= MAX_BUILT;
        fits && match t {
            Transition::Alloc { .. } | Transition::Flow(_) => true,
            Transition::Compute { after, .. }
            | Transition::DoubleUpdate { after, .. }
            | Transition::Silent { after, .. } => after.is_none_or(|p| p < n),
            Transition::Consume { back, via, .. } => *back < n && ok_via(via),
            Transition::Join { backs } => backs.iter().all(|&k| k < n),
            Transition::Foreign { recent, .. } => *recent < a,
            Transition::Raw { deps, sems, .. } => {
                deps.iter()
                    .all(|(p, v)| !matches!(p, Producer::Back(k) if *k >= n) && ok_via(v))
                    && sems
                        .iter()
                        .all(|(h, _)| !matches!(h, Handle::Recent(k) if *k >= a))
            }
        }
    }

    fn apply(mut state: RefState, t: &Transition) -> RefState {
        state.built.apply(t);
        state.expected = expect(&state.built.case.program);
        state
    }
}

// ---------------------------------------------------------------------------------------------
// The system under test: model + simulator on the growing program.
// ---------------------------------------------------------------------------------------------

struct HandshakeTest;

struct Sut {
    built: Built,
    schedule: Vec<u8>,
}

impl StateMachineTest for HandshakeTest {
    type SystemUnderTest = Sut;
    type Reference = HandshakeMachine;

    fn init_test(ref_state: &RefState) -> Sut {
        Sut {
            built: Built::new(ref_state.built.case.program.num_semaphores),
            schedule: ref_state.schedule.clone(),
        }
    }

    fn apply(mut sut: Sut, ref_state: &RefState, t: Transition) -> Sut {
        sut.built.apply(&t);
        let program = &sut.built.case.program;
        assert_eq!(program, &ref_state.built.case.program, "builders diverged");
        let model_class = model::alloc_semaphores(program).err().map(|e| e.class());
        let (core, oracle) = (registry::core(), registry::oracle());
        let diff = compare_case_on(&*core, &*oracle, &sut.built.case, &sut.schedule);
        let agree = match &diff {
            Ok(SyncCaseOutcome::Rejected { class }) => model_class == Some(*class),
            Ok(SyncCaseOutcome::Accepted { .. }) => model_class.is_none(),
            Err(_) => false,
        };
        assert!(
            agree && model_class == ref_state.expected,
            "after {t:?}:\n  SPEC §8 expects {:?}\n  model gives     {model_class:?}\n  \
             model vs simulator: {}\nprogram: {program:?}",
            ref_state.expected,
            match &diff {
                Ok(o) => format!("agree ({o:?})"),
                Err(d) => format!("DISAGREE: {}", d.filed.text),
            },
        );
        sut
    }
}

prop_state_machine! {
    #[test]
    fn handshake_state_machine(sequential 1..20 => HandshakeTest);
}

/// The transition mix reaches every class `expect` can return and acceptance.
#[test]
fn reference_expectation_covers_every_class() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = HandshakeMachine::sequential_strategy(1..20);
    let mut seen: BTreeMap<Option<&'static str>, usize> = BTreeMap::new();
    for _ in 0..400 {
        let (mut state, transitions, _) = strategy.new_tree(&mut runner).unwrap().current();
        for t in &transitions {
            state = HandshakeMachine::apply(state, t);
            *seen.entry(state.expected).or_insert(0) += 1;
        }
    }
    for class in [
        None,
        Some("null_instruction"),
        Some("unknown_semaphore"),
        Some("bad_core"),
        Some("zero_increment"),
        Some("pool_exhausted"),
        Some("cycle"),
        Some("not_single_local_update"),
        Some("local_semaphore_mismatch"),
        Some("shared_semaphore"),
        Some("overflow"),
    ] {
        assert!(
            seen.contains_key(&class),
            "{class:?} never expected: {seen:?}"
        );
    }
}
