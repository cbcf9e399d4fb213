//! Sync programs for `sync_handshake` (SPEC §8), built from bytes as a list of [`Op`]s:
//! custom-op flows (DMA in → custom op → GPSIMD compute → result DMA → consumers) and free
//! instructions that may break every rule, now and then ending in a [`Chain`]; the bytes
//! left pick the interleaving. [`shape`] classifies a program for the reach table.

pub use crate::subjects::SyncFlow;
use arbitrary::{Arbitrary, Unstructured};
use std::cell::RefCell;
use std::collections::BTreeMap;
use tpb_core::sync::{self as model, AllocFrom, Dep, Engine, Instr, Program, SemArg};

/// Most generated instructions (below the model's 256 limit, DS-2).
pub const GEN_MAX_INSTRS: usize = 200;
/// Most ops read from one input.
pub const GEN_MAX_OPS: usize = 48;

/// One op of a program; selectors are reduced as `apply` reads them.
#[derive(Arbitrary, Debug, Clone)]
pub enum Op {
    /// A whole custom-op flow, valid by construction (`cores` 0: the custom op feeds the
    /// result DMA directly; `remote`: each compute also signals a peer core).
    CustomFlow {
        in_queue: u8,
        out_queue: u8,
        cores: u8,
        consumers: u8,
        mult: u8,
        remote: bool,
    },
    /// A consumer of an earlier instruction, signalling its engine's semaphore.
    Consume { engine: u8, back: u8 },
    /// A free instruction: may dangle, loop, share semaphores, fan out, overflow (engine 255:
    /// GPSIMD core 8, invalid).
    Raw {
        engine: u8,
        deps: Vec<(u8, Option<u8>)>,
        sems: Vec<(u8, Option<u8>)>,
        mult: u32,
    },
    /// A pseudo instruction depending on earlier ones.
    Pseudo { deps: Vec<u8> },
    /// An extra allocation request.
    Alloc { top: bool },
}

/// A program in the model's types, with its custom-op flows.
#[derive(Debug, Clone)]
pub struct Case {
    pub program: Program,
    pub flows: Vec<SyncFlow>,
}

/// Each engine's own semaphore handle, requested on first use: DMA queues from the top of
/// the pool, compute engines from the bottom (shared with the sync state-machine test).
#[derive(Clone, Debug, Default)]
pub struct EngineSems(BTreeMap<Engine, u16>);

impl EngineSems {
    /// `e`'s handle; on first use `alloc` requests one from the engine's end of the pool.
    pub fn of(&mut self, e: Engine, alloc: impl FnOnce(AllocFrom) -> u16) -> u16 {
        *self.0.entry(e).or_insert_with(|| {
            alloc(if matches!(e, Engine::Dma(_)) {
                AllocFrom::Top
            } else {
                AllocFrom::Bottom
            })
        })
    }
}

#[derive(Default)]
struct Builder {
    num_semaphores: u16,
    allocs: Vec<AllocFrom>,
    instrs: Vec<Instr>,
    flows: Vec<SyncFlow>,
    engine_sem: EngineSems,
    /// Instructions of an earlier case whose lists [`Builder::own`] refills.
    spare: Vec<Instr>,
}

thread_local! {
    /// Per-thread recycling for [`build_recycled`]: the last case's list and instructions.
    static RECYCLED: RefCell<(Vec<Instr>, Vec<Instr>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl Builder {
    fn n(&self) -> u16 {
        self.instrs.len() as u16
    }
    fn sem_of(&mut self, e: Engine) -> u16 {
        let allocs = &mut self.allocs;
        self.engine_sem.of(e, |from| {
            allocs.push(from);
            (allocs.len() - 1) as u16
        })
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
        let deps = deps.iter().map(|&p| dep(p));
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

fn dep(producer: u16) -> Dep {
    Dep {
        producer,
        via: None,
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
            b.flows.push(SyncFlow {
                dma_in,
                custom_op,
                result_dma,
                consumers: cons,
            });
        }
        Op::Consume { engine, back } => {
            let p = [b.back(back)];
            b.own(engine_of(engine % 15), if b.n() == 0 { &[] } else { &p }, 1);
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
            let deps = deps.into_iter().take(4).map(|s| dep(b.back(s))).collect();
            b.push(Engine::Pseudo, deps, vec![], 1);
        }
        Op::Alloc { top } => {
            b.allocs.push(if top {
                AllocFrom::Top
            } else {
                AllocFrom::Bottom
            });
        }
    }
}

/// Appended when the first byte is in [`CHAIN_SELECTORS`]: producers, pseudo instructions,
/// then a fan-out, the shapes the free ops rarely build (pseudo runs of 2, 3+, long chains).
#[derive(Arbitrary, Debug, Clone)]
pub struct Chain {
    pub len: u8,
    pub pseudos: u8,
    pub engine: u8,
    pub consumers: u8,
}

const CHAIN_MAX_INSTRS: usize = 1 + 11 + 4 + 4;

/// 12 of the default pool's first bytes, so other programs stay as they were.
pub const CHAIN_SELECTORS: std::ops::Range<u8> = 212..224;

fn apply_chain(b: &mut Builder, c: Chain) {
    let mut last = b.own(engine_of(c.engine % 15), &[], 1);
    for k in 1..=c.len % 12 {
        let e = engine_of(c.engine.wrapping_add(k.wrapping_mul(3)) % 15);
        let e = if e == Engine::Pseudo { Engine::Host } else { e };
        last = b.own(e, &[last], 1);
    }
    for _ in 0..c.pseudos % 5 {
        last = b.push(Engine::Pseudo, vec![dep(last)], vec![], 1);
    }
    for k in 0..c.consumers % 4 + 1 {
        let e = [
            Engine::Gpsimd(k),
            Engine::Dma(k),
            Engine::Host,
            Engine::Gpsimd(4 + k),
        ][usize::from(k)];
        b.own(e, &[last], 1);
    }
}

/// A case from the front of `u`; never fails (missing bytes read as zeros).
pub fn build_case(u: &mut Unstructured<'_>) -> Case {
    build_case_from(u, Vec::new(), Vec::new()).0
}

/// [`build_case`] into `instrs`, refilling instructions from `spare`; returns those unused.
pub fn build_case_from(
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
    if CHAIN_SELECTORS.contains(&pool_sel) && b.instrs.len() + CHAIN_MAX_INSTRS <= GEN_MAX_INSTRS {
        if let Ok(c) = u.arbitrary::<Chain>() {
            apply_chain(&mut b, c);
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

/// [`build_case`] reusing this thread's lists ([`recycle`]); also returns the schedule bytes.
pub fn build_recycled(data: &[u8]) -> (Case, &[u8]) {
    let mut u = Unstructured::new(data);
    let (list, spare) = RECYCLED
        .with(|r| r.try_borrow_mut().map(|mut r| std::mem::take(&mut *r)))
        .unwrap_or_default();
    let (case, mut spare) = build_case_from(&mut u, list, spare);
    spare.truncate(GEN_MAX_INSTRS);
    RECYCLED.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.1 = spare;
        }
    });
    (case, u.take_rest())
}

pub fn recycle(case: Case) {
    let mut list = case.program.instrs;
    RECYCLED.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.1.append(&mut list);
            r.1.truncate(GEN_MAX_INSTRS);
            r.0 = list;
        }
    });
}

/// Pseudo-instruction run bands between a producer and its consumer.
pub const PSEUDO_RUNS: [&str; 4] = ["0", "1", "2", "3+"];

/// A program's shapes (non-pseudo instructions): a producer-consumer pair per [`PSEUDO_RUNS`]
/// band of pseudos between, fan-out (≥ 2), ≥ 3 engines, a chain of [`LONG_CHAIN`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub pseudo_runs: [bool; 4],
    pub fan_out: bool,
    pub several_engines: bool,
    pub long_chain: bool,
}

pub const LONG_CHAIN: usize = 8;

/// The shapes of `p` (dependencies to a later or missing instruction ignored).
pub fn shape(p: &Program) -> Shape {
    let ins = &p.instrs;
    let n = ins.len();
    let dep_ok = |i: usize, d: &Dep| usize::from(d.producer) < i;
    let mut s = Shape::default();
    let mut consumers = vec![0u8; n];
    let mut depth = vec![1usize; n];
    let mut engines: Vec<Engine> = Vec::new();
    for (i, x) in ins.iter().enumerate() {
        for d in x.deps.iter().filter(|d| dep_ok(i, d)) {
            let p = usize::from(d.producer);
            depth[i] = depth[i].max(depth[p] + 1);
        }
        s.long_chain |= depth[i] >= LONG_CHAIN;
        if x.engine == Engine::Pseudo {
            continue;
        }
        if !engines.contains(&x.engine) {
            engines.push(x.engine);
        }
        for d in x.deps.iter().filter(|d| dep_ok(i, d)) {
            let p = usize::from(d.producer);
            // Back through the pseudo run (first dependency of each; bounded by band 3+).
            let (mut at, mut run) = (p, 0usize);
            while ins[at].engine == Engine::Pseudo && run < 3 {
                match ins[at].deps.iter().find(|d| dep_ok(at, d)) {
                    Some(d) => {
                        at = usize::from(d.producer);
                        run += 1;
                    }
                    None => break,
                }
            }
            if ins[at].engine != Engine::Pseudo {
                s.pseudo_runs[run.min(3)] = true;
            } else if run == 3 {
                s.pseudo_runs[3] = true;
            }
            if run == 0 {
                consumers[p] = consumers[p].saturating_add(1);
            }
        }
    }
    s.fan_out = consumers.iter().any(|&c| c >= 2);
    s.several_engines = engines.len() >= 3;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(engine: Engine, deps: &[u16]) -> Instr {
        Instr {
            engine,
            deps: deps
                .iter()
                .map(|&p| Dep {
                    producer: p,
                    via: None,
                })
                .collect(),
            sems: Vec::new(),
            mult: 1,
        }
    }

    fn program(instrs: Vec<Instr>) -> Program {
        Program {
            num_semaphores: model::DEFAULT_NUM_SEMAPHORES,
            allocs: Vec::new(),
            instrs,
        }
    }

    #[test]
    fn shape_counts_the_pseudo_run_between_producer_and_consumer() {
        for k in 0..5usize {
            let mut v = vec![ins(Engine::Host, &[])];
            for j in 0..k {
                v.push(ins(Engine::Pseudo, &[j as u16]));
            }
            v.push(ins(Engine::Dma(0), &[k as u16]));
            let s = shape(&program(v));
            let want = k.min(3);
            for band in 0..4 {
                assert_eq!(s.pseudo_runs[band], band == want, "run {k}, band {band}");
            }
        }
    }

    #[test]
    fn shape_sees_fan_out_engines_and_chains() {
        let fan = program(vec![
            ins(Engine::Host, &[]),
            ins(Engine::Dma(0), &[0]),
            ins(Engine::Gpsimd(1), &[0]),
        ]);
        let s = shape(&fan);
        assert!(s.fan_out && s.several_engines && !s.long_chain);
        let chain: Vec<Instr> = (0..LONG_CHAIN as u16)
            .map(|i| match i {
                0 => ins(Engine::Host, &[]),
                _ => ins(Engine::Host, &[i - 1]),
            })
            .collect();
        let s = shape(&program(chain.clone()));
        assert!(s.long_chain && !s.fan_out && !s.several_engines);
        let s = shape(&program(chain[..LONG_CHAIN - 1].to_vec()));
        assert!(!s.long_chain);
    }
}
