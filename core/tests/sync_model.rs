//! The alloc_semaphores model against the seed (S000 §"The sync handshake"). Expected values
//! come from the seed text and SPEC §8, not from running the code.

use tpb_core::sync::{
    alloc_semaphores, stamp_consumer, stamp_custom_op_header, AllocFrom, BirUpdateMode,
    BirWaitMode, Dep, Engine, Instr, Program, SemArg, SemKey, SemaphorePool, SemaphoreValues,
    SyncError, SyncPlan,
};

fn local(handle: u16) -> SemArg {
    SemArg {
        handle,
        target_core: None,
    }
}
fn remote(handle: u16, core: u8) -> SemArg {
    SemArg {
        handle,
        target_core: Some(core),
    }
}
fn dep(p: u16) -> Dep {
    Dep {
        producer: p,
        via: None,
    }
}
fn ins(engine: Engine, deps: &[u16], sems: Vec<SemArg>, mult: u32) -> Instr {
    Instr {
        engine,
        deps: deps.iter().map(|&p| dep(p)).collect(),
        sems,
        mult,
    }
}
/// `alloc_semaphores` rejects the program of `allocs` bottom allocations and `instrs` with `err`.
#[track_caller]
fn rejects(allocs: usize, instrs: Vec<Instr>, err: SyncError) {
    assert_eq!(alloc_semaphores(&prog(allocs, instrs)), Err(err));
}

/// `alloc_semaphores`'s plan of the program of `allocs` bottom allocations and `instrs`, which
/// it must accept.
#[track_caller]
fn plan(allocs: usize, instrs: Vec<Instr>) -> SyncPlan {
    alloc_semaphores(&prog(allocs, instrs)).unwrap()
}

fn prog(allocs: usize, instrs: Vec<Instr>) -> Program {
    Program {
        num_semaphores: 256,
        allocs: vec![AllocFrom::Bottom; allocs],
        instrs,
    }
}

// ---- the pool: alloc_semaphores.cpp:256 ----

#[test]
fn pool_bottom_counts_up_top_counts_down() {
    // S000 §"Semaphore id allocation": bottom counter ++, top counter --; F§2: 256 semaphores.
    let mut pool = SemaphorePool::new(256).unwrap();
    assert_eq!(pool.allocate(AllocFrom::Bottom), Ok(0));
    assert_eq!(pool.allocate(AllocFrom::Top), Ok(255));
    assert_eq!(pool.allocate(AllocFrom::Bottom), Ok(1));
    assert_eq!(pool.allocate(AllocFrom::Top), Ok(254));
}

#[test]
fn pool_exhausts_when_bottom_meets_top() {
    // bottom < top < NumSemaphores (:256), checked before handing out (DS-11).
    let mut pool = SemaphorePool::new(3).unwrap();
    assert_eq!(pool.allocate(AllocFrom::Bottom), Ok(0));
    assert_eq!(pool.allocate(AllocFrom::Top), Ok(2));
    assert_eq!(
        pool.allocate(AllocFrom::Bottom),
        Err(SyncError::PoolExhausted {
            bottom: 1,
            top: 1,
            num: 3
        })
    );
    let mut empty = SemaphorePool::new(0).unwrap();
    assert_eq!(
        empty.allocate(AllocFrom::Top),
        Err(SyncError::PoolExhausted {
            bottom: 0,
            top: 0,
            num: 0
        })
    );
}

#[test]
fn default_pool_hands_out_255_ids() {
    let mut pool = SemaphorePool::new(256).unwrap();
    for _ in 0..255 {
        pool.allocate(AllocFrom::Bottom).unwrap();
    }
    assert_eq!(
        pool.allocate(AllocFrom::Bottom),
        Err(SyncError::PoolExhausted {
            bottom: 255,
            top: 255,
            num: 256
        })
    );
}

#[test]
fn pool_over_256_is_a_limit() {
    assert_eq!(
        SemaphorePool::new(257),
        Err(SyncError::LimitExceeded {
            what: "num_semaphores",
            found: 257,
            limit: 256
        })
    );
}

#[test]
fn program_exhausting_the_pool_is_rejected() {
    let mut p = prog(3, vec![]);
    p.num_semaphores = 3;
    assert_eq!(
        alloc_semaphores(&p),
        Err(SyncError::PoolExhausted {
            bottom: 2,
            top: 2,
            num: 3
        })
    );
}

// ---- incrementSemaphore: alloc_semaphores.cpp:207 ----

#[test]
fn increment_guards_overflow() {
    let mut v = SemaphoreValues::default();
    let k = SemKey { core: None, sem: 7 };
    assert_eq!(v.increment(k, u32::MAX), Ok(u32::MAX));
    assert_eq!(
        v.increment(k, 1),
        Err(SyncError::Overflow {
            sem: 7,
            value: u32::MAX,
            delta: 1
        })
    );
    assert_eq!(v.get(k), u32::MAX);
}

#[test]
fn program_overflowing_a_semaphore_is_rejected() {
    rejects(
        1,
        vec![
            ins(Engine::Dma(0), &[], vec![local(0)], 0x8000_0000),
            ins(Engine::Dma(0), &[], vec![local(0)], 0x8000_0000),
        ],
        SyncError::Overflow {
            sem: 0,
            value: 0x8000_0000,
            delta: 0x8000_0000,
        },
    );
}

#[test]
fn running_values_accumulate_per_semaphore() {
    // S000 §incrementSemaphore: "tracks the cumulative semaphore count so each Update gets the
    // correct value and each Wait targets the right threshold".
    let plan = plan(
        1,
        vec![
            ins(Engine::Dma(0), &[], vec![local(0)], 2),
            ins(Engine::Dma(0), &[], vec![local(0)], 3),
            ins(Engine::Host, &[1], vec![], 1),
        ],
    );
    assert_eq!(plan.infos[0].updates[0].value, 2);
    assert_eq!(plan.infos[1].updates[0].value, 5);
    assert_eq!(plan.infos[1].updates[0].mode, BirUpdateMode::SemIncComplete);
    assert_eq!(plan.infos[2].waits.len(), 1);
    assert_eq!(plan.infos[2].waits[0].value, 5);
    assert_eq!(plan.infos[2].waits[0].mode, BirWaitMode::SemGeImm);
    assert_eq!(plan.values.get(SemKey { core: None, sem: 0 }), 5);
}

// ---- setupSync(I, ...): I != nullptr, alloc_semaphores.cpp:214 ----

#[test]
fn dependency_on_missing_instruction_is_null_instruction() {
    rejects(
        0,
        vec![
            ins(Engine::Host, &[], vec![], 1),
            ins(Engine::Host, &[5], vec![], 1),
        ],
        SyncError::NullInstruction { instr: 1, dep: 5 },
    );
}

// ---- setupSyncWait: alloc_semaphores.cpp:171 / :172 ----

#[test]
fn producer_with_two_local_updates_is_rejected() {
    // "A reimplementation that allows fan-out updates ... will trip both asserts" (:171).
    rejects(
        2,
        vec![
            ins(Engine::Dma(0), &[], vec![local(0), local(1)], 1),
            ins(Engine::Host, &[0], vec![], 1),
        ],
        SyncError::NotSingleLocalUpdate {
            producer: 0,
            n_local: 2,
        },
    );
}

#[test]
fn producer_with_only_a_remote_update_is_rejected() {
    // :171 counts only non-remote updates ("v10 += (isRemote(u)==0)").
    rejects(
        1,
        vec![
            ins(Engine::Gpsimd(0), &[], vec![remote(0, 1)], 1),
            ins(Engine::Host, &[0], vec![], 1),
        ],
        SyncError::NotSingleLocalUpdate {
            producer: 0,
            n_local: 0,
        },
    );
}

#[test]
fn one_local_plus_remote_updates_is_accepted() {
    let plan = plan(
        2,
        vec![
            ins(
                Engine::Gpsimd(0),
                &[],
                vec![remote(1, 3), local(0), remote(1, 4)],
                1,
            ),
            ins(Engine::Host, &[0], vec![], 1),
        ],
    );
    assert_eq!(plan.infos[0].updates.len(), 3);
    assert_eq!(plan.infos[0].updates[0].target_core, Some(3));
    // Only the local update is spread: one wait, on sem 0.
    assert_eq!(plan.infos[1].waits.len(), 1);
    assert_eq!(plan.infos[1].waits[0].sem, 0);
    assert_eq!(
        plan.values.get(SemKey {
            core: Some(3),
            sem: 1
        }),
        1
    );
    assert_eq!(
        plan.values.get(SemKey {
            core: Some(4),
            sem: 1
        }),
        1
    );
}

#[test]
fn waiting_on_another_semaphore_is_a_mismatch() {
    // :172 getLocalSemaphore(SI.OnUpdate) == semaphore.
    let mut p = prog(
        2,
        vec![
            ins(Engine::Dma(0), &[], vec![local(0)], 1),
            ins(Engine::Host, &[], vec![], 1),
        ],
    );
    p.instrs[1].deps = vec![Dep {
        producer: 0,
        via: Some(1),
    }];
    assert_eq!(
        alloc_semaphores(&p),
        Err(SyncError::LocalSemaphoreMismatch {
            producer: 0,
            expected: 1,
            found: 0
        })
    );
    p.instrs[1].deps = vec![Dep {
        producer: 0,
        via: Some(0),
    }];
    assert!(alloc_semaphores(&p).is_ok());
}

#[test]
fn producer_without_consumers_needs_no_local_update() {
    // The asserts live in setupSyncWait: only a waited-on producer is checked.
    let p = prog(
        2,
        vec![ins(Engine::Dma(0), &[], vec![local(0), local(1)], 1)],
    );
    assert!(alloc_semaphores(&p).is_ok());
}

#[test]
fn producer_behind_a_pseudo_is_still_checked() {
    rejects(
        0,
        vec![
            ins(Engine::Dma(0), &[], vec![], 1),
            ins(Engine::Pseudo, &[0], vec![], 1),
            ins(Engine::Host, &[1], vec![], 1),
        ],
        SyncError::NotSingleLocalUpdate {
            producer: 0,
            n_local: 0,
        },
    );
}

// ---- setupSyncUpdate: the realDescendents spread ----

#[test]
fn update_is_spread_to_transitive_descendants() {
    // "walks I.realDescendents() (the transitive successor instructions) and adds the
    // Wait/Update to each".
    let plan = plan(
        3,
        vec![
            ins(Engine::Dma(0), &[], vec![local(0)], 1),
            ins(Engine::Host, &[0], vec![local(1)], 1),
            ins(Engine::Gpsimd(0), &[1], vec![local(2)], 1),
        ],
    );
    let froms: Vec<u16> = plan.infos[2].waits.iter().map(|w| w.from).collect();
    assert_eq!(froms, vec![0, 1]);
    assert_eq!(plan.infos[2].waits[0].sem, 0);
    assert_eq!(plan.infos[2].waits[1].sem, 1);
}

#[test]
fn spread_walks_through_pseudo_instructions() {
    let plan = plan(
        1,
        vec![
            ins(Engine::Dma(0), &[], vec![local(0)], 4),
            ins(Engine::Pseudo, &[0], vec![], 1),
            ins(Engine::Host, &[1], vec![], 1),
        ],
    );
    assert!(plan.infos[1].waits.is_empty());
    assert_eq!(plan.infos[2].waits.len(), 1);
    assert_eq!(
        (plan.infos[2].waits[0].from, plan.infos[2].waits[0].value),
        (0, 4)
    );
}

// ---- fan-in on a shared semaphore (DS-7) ----

#[test]
fn two_engines_on_one_local_semaphore_are_rejected() {
    rejects(
        1,
        vec![
            ins(Engine::Dma(0), &[], vec![local(0)], 1),
            ins(Engine::Dma(1), &[], vec![local(0)], 1),
        ],
        SyncError::SharedSemaphore {
            sem: 0,
            owner: 0,
            instr: 1,
        },
    );
}

// ---- bad programs ----

#[test]
fn dependency_cycle_is_rejected() {
    rejects(
        0,
        vec![
            ins(Engine::Host, &[1], vec![], 1),
            ins(Engine::Dma(0), &[0], vec![], 1),
        ],
        SyncError::Cycle { instr: 0 },
    );
    rejects(
        0,
        vec![ins(Engine::Pseudo, &[0], vec![], 1)],
        SyncError::Cycle { instr: 0 },
    );
}

#[test]
fn engine_order_deadlock_is_a_cycle() {
    // Host runs 0 before 2, but 0 needs 1, which needs 2 (DS-6).
    rejects(
        0,
        vec![
            ins(Engine::Host, &[1], vec![], 1),
            ins(Engine::Dma(0), &[2], vec![], 1),
            ins(Engine::Host, &[], vec![], 1),
        ],
        SyncError::Cycle { instr: 0 },
    );
}

#[test]
fn reference_errors_are_named() {
    let p = prog(0, vec![ins(Engine::Host, &[], vec![local(0)], 1)]);
    assert_eq!(
        alloc_semaphores(&p),
        Err(SyncError::UnknownSemaphore {
            instr: 0,
            handle: 0
        })
    );
    let p = prog(1, vec![ins(Engine::Gpsimd(8), &[], vec![], 1)]);
    assert_eq!(
        alloc_semaphores(&p),
        Err(SyncError::BadCore { instr: 0, core: 8 })
    );
    let p = prog(1, vec![ins(Engine::Host, &[], vec![remote(0, 9)], 1)]);
    assert_eq!(
        alloc_semaphores(&p),
        Err(SyncError::BadCore { instr: 0, core: 9 })
    );
    let p = prog(1, vec![ins(Engine::Host, &[], vec![local(0)], 0)]);
    assert_eq!(
        alloc_semaphores(&p),
        Err(SyncError::ZeroIncrement { instr: 0 })
    );
    let p = prog(0, vec![ins(Engine::Host, &[], vec![], 1); 257]);
    assert_eq!(
        alloc_semaphores(&p),
        Err(SyncError::LimitExceeded {
            what: "instrs",
            found: 257,
            limit: 256
        })
    );
}

// ---- stamping the SyncInfo band (F§2) ----

#[test]
fn custom_op_header_band_carries_the_handshake() {
    // S000 NOTE "host engine Wait (header [0x04..05]) ← input-DMA Update; GPSIMD-CPU compute;
    // result-DMA Update → header [0x06..07] → consumer Wait".
    let mut p = prog(
        3,
        vec![
            ins(Engine::Dma(0), &[], vec![local(0)], 3), // 0 input DMA, 3 ticks
            ins(Engine::Host, &[0], vec![local(1)], 1),  // 1 custom op (0x85)
            ins(Engine::Gpsimd(0), &[1], vec![], 1),     // placeholder, replaced below
            ins(Engine::Host, &[], vec![], 1),           // 3 consumer
        ],
    );
    p.allocs = vec![AllocFrom::Bottom, AllocFrom::Bottom, AllocFrom::Top];
    p.instrs[2] = ins(Engine::Dma(1), &[1], vec![local(2)], 1); // 2 result DMA
    p.instrs[3].deps = vec![dep(2)];
    let plan = alloc_semaphores(&p).unwrap();
    let mut header = [0u8; 64];
    header[0] = 0x85;
    header[1] = 0x10;
    stamp_custom_op_header(&mut header, &plan, 1, 0, 2).unwrap();
    // input DMA sem = first bottom id 0, threshold 3 (its 3 ticks) in semaphore_value;
    // completion sem = first top id 255, SEM_INC_COMPLETE 0x13 (F§2 [H]; DS-13, DS-14).
    assert_eq!(
        &header[0..12],
        &[0x85, 0x10, 0, 0, 0x05, 0, 0x13, 255, 3, 0, 0, 0]
    );
    let mut consumer = [0u8; 64];
    stamp_consumer(&mut consumer, &plan, 3, 2).unwrap();
    // waits for the result DMA's single tick: WAIT_FOR_SEM_GE_IMM on 255, threshold 1.
    assert_eq!(&consumer[4..12], &[0x05, 255, 0x00, 0x00, 1, 0, 0, 0]);
    assert_eq!(
        stamp_custom_op_header(&mut header, &plan, 0, 3, 2),
        Err(SyncError::MissingWait {
            instr: 0,
            producer: 3
        })
    );
    assert_eq!(
        stamp_consumer(&mut consumer, &plan, 0, 3),
        Err(SyncError::MissingWait {
            instr: 0,
            producer: 3
        })
    );
}
