//! The engine simulator and its independent rule check (SPEC §8, S000 §"The sync handshake").
//! Expected values come from the seed and SPEC §8, not from running the code.

use tpb_oracle::sim::{
    band_sync, read_band, simulate, vet, Band, BandSync, Edge, PlanEntry, PlanUpdate, PlanWait,
    Reject, Script, Signal, Step, Trace, Unit, Violation,
};

fn step(unit: Unit, inputs: &[u16], signals: &[(u16, Option<u8>)], tick: u32) -> Step {
    Step {
        unit,
        inputs: inputs
            .iter()
            .map(|&from| Edge {
                from,
                sem_handle: None,
            })
            .collect(),
        signals: signals
            .iter()
            .map(|&(handle, core)| Signal { handle, core })
            .collect(),
        tick,
    }
}

fn script(grabs: usize, steps: Vec<Step>) -> Script {
    Script {
        pool: 256,
        grabs: vec![false; grabs],
        steps,
    }
}

/// DMA queue 0 produces (signal handle 0), the host consumes.
fn dma_then_host() -> Script {
    script(
        1,
        vec![
            step(Unit::Queue(0), &[], &[(0, None)], 1),
            step(Unit::Host, &[0], &[], 1),
        ],
    )
}

fn entry(waits: &[(u8, u32)], updates: &[(u8, u32, Option<u8>)]) -> PlanEntry {
    PlanEntry {
        waits: waits
            .iter()
            .map(|&(sem, at_least)| PlanWait { sem, at_least })
            .collect(),
        updates: updates
            .iter()
            .map(|&(sem, add, core)| PlanUpdate { sem, add, core })
            .collect(),
    }
}

#[test]
fn correct_handshake_runs_under_every_first_choice() {
    let s = dma_then_host();
    let exp = vet(&s).unwrap();
    assert_eq!(exp.ids, vec![0]);
    assert_eq!(exp.ancestors, vec![vec![], vec![0]]);
    let plan = vec![entry(&[], &[(0, 1, None)]), entry(&[(0, 1)], &[])];
    for b in 0..=255u8 {
        let t = simulate(&s, &exp, &plan, &[b, b, b, b]).unwrap();
        assert_eq!(t.steps, 4);
        assert_eq!(t.started, vec![0, 1]);
        assert_eq!(t.finals.get(&(None, 0)), Some(&1));
    }
}

#[test]
fn missing_wait_breaks_happens_before() {
    let s = dma_then_host();
    let exp = vet(&s).unwrap();
    let plan = vec![entry(&[], &[(0, 1, None)]), entry(&[], &[])];
    // Units in order Host, Queue(0): choice 0 starts the host's consumer first.
    assert_eq!(
        simulate(&s, &exp, &plan, &[0]),
        Err(Violation::HappensBefore {
            consumer: 1,
            producer: 0
        })
    );
    // Starting the DMA (1) and then completing it (1, after the host's start) is fine;
    // starting the host while the DMA still runs is not.
    assert!(simulate(&s, &exp, &plan, &[1, 1, 0, 0]).is_ok());
    assert_eq!(
        simulate(&s, &exp, &plan, &[1, 0]),
        Err(Violation::HappensBefore {
            consumer: 1,
            producer: 0
        })
    );
}

/// [`dma_then_host`] simulated with the DMA's update of semaphore 0 (`by`, remote core) and the
/// host's wait threshold on it.
fn dma_then_host_with(update: (u32, Option<u8>), wait: u32) -> Result<Trace, Violation> {
    let s = dma_then_host();
    let exp = vet(&s).unwrap();
    let plan = vec![
        entry(&[], &[(0, update.0, update.1)]),
        entry(&[(0, wait)], &[]),
    ];
    simulate(&s, &exp, &plan, &[])
}

#[test]
fn unreachable_threshold_deadlocks() {
    // The DMA adds 1; the host waits for 2.
    assert_eq!(
        dma_then_host_with((1, None), 2),
        Err(Violation::Deadlock(vec![1]))
    );
}

#[test]
fn wrong_update_value_is_a_final_value_violation() {
    // The DMA adds 2; the host waits for 1.
    assert_eq!(
        dma_then_host_with((2, None), 1),
        Err(Violation::FinalValue {
            core: None,
            sem: 0,
            got: 2,
            want: 1
        })
    );
}

#[test]
fn plan_and_ancestors_must_hold_one_entry_per_instruction() {
    // simulate's contract: one plan entry per instruction, and `exp` is vet(s)'s result (one
    // ancestor list per instruction). Any other length is refused by name, carrying the lengths;
    // never a panic (the oracle is total) and never a silent run over a prefix.
    let s = dma_then_host();
    let exp = vet(&s).unwrap();
    let good = vec![entry(&[], &[(0, 1, None)]), entry(&[(0, 1)], &[])];
    assert!(simulate(&s, &exp, &good, &[]).is_ok());
    let shape = |plan: usize, ancestors: usize| {
        Err(Violation::PlanLength {
            steps: 2,
            plan,
            ancestors,
        })
    };
    // Plan too short, too long, empty.
    assert_eq!(simulate(&s, &exp, &good[..1], &[]), shape(1, 2));
    let mut long = good.clone();
    long.push(entry(&[], &[]));
    assert_eq!(simulate(&s, &exp, &long, &[]), shape(3, 2));
    assert_eq!(simulate(&s, &exp, &[], &[]), shape(0, 2));
    // Ancestor list too short and too long, with a plan of the right length.
    let mut short_anc = exp.clone();
    short_anc.ancestors.pop();
    assert_eq!(simulate(&s, &short_anc, &good, &[]), shape(2, 1));
    let mut long_anc = exp.clone();
    long_anc.ancestors.push(vec![]);
    assert_eq!(simulate(&s, &long_anc, &good, &[]), shape(2, 3));
}

#[test]
fn pseudo_instructions_must_carry_no_sync() {
    let s = script(0, vec![step(Unit::Pseudo, &[], &[], 1)]);
    let exp = vet(&s).unwrap();
    assert!(matches!(
        simulate(&s, &exp, &[entry(&[(0, 1)], &[])], &[]),
        Err(Violation::PlanShape(_))
    ));
}

#[test]
fn remote_updates_land_in_the_target_cores_file() {
    let s = script(
        1,
        vec![step(Unit::Core(0), &[], &[(0, None), (0, Some(5))], 3)],
    );
    let exp = vet(&s).unwrap();
    assert_eq!(exp.finals.get(&(Some(5), 0)), Some(&3));
    assert_eq!(exp.finals.get(&(None, 0)), Some(&3));
    let plan = vec![entry(&[], &[(0, 3, None), (0, 3, Some(5))])];
    let t = simulate(&s, &exp, &plan, &[]).unwrap();
    assert_eq!(t.finals, exp.finals);
}

#[test]
fn vet_rejects_each_rule() {
    // :171 hasSingleLocalUpdate — two local signals, waited on.
    let s = script(
        2,
        vec![
            step(Unit::Queue(0), &[], &[(0, None), (1, None)], 1),
            step(Unit::Host, &[0], &[], 1),
        ],
    );
    assert_eq!(vet(&s), Err(Reject::FanOut(0, 2)));
    // :172 — the consumer expects handle 1, the producer signals handle 0.
    let mut s = dma_then_host();
    s.grabs.push(false);
    s.steps[1].inputs[0].sem_handle = Some(1);
    assert_eq!(vet(&s), Err(Reject::WrongSem(0)));
    // Fan-in on one local semaphore from two units; :214 — a dependency on no instruction; a
    // cycle.
    let fan_in = [(Unit::Queue(0), 0), (Unit::Queue(1), 0)];
    let cycle = [(Unit::Host, 1), (Unit::Core(1), 0)];
    let shared = fan_in.map(|(u, _)| step(u, &[], &[(0, None)], 1));
    let looped = cycle.map(|(u, dep)| step(u, &[dep], &[], 1));
    let dangling = [step(Unit::Host, &[3], &[], 1)];
    assert_eq!(vet(&script(1, shared.to_vec())), Err(Reject::Shared(0)));
    assert_eq!(vet(&script(0, dangling.to_vec())), Err(Reject::Dangling(0)));
    assert_eq!(vet(&script(0, looped.to_vec())), Err(Reject::Loop(0)));
    // :256 — pool of 3: ids 0 and 1, then bottom 2 meets top 2.
    let s = Script {
        pool: 3,
        grabs: vec![false; 3],
        steps: vec![],
    };
    assert_eq!(vet(&s), Err(Reject::Exhausted(2)));
    // :207 — 2 × 0x8000_0000 does not fit u32.
    let s = script(
        1,
        vec![
            step(Unit::Queue(0), &[], &[(0, None)], 0x8000_0000),
            step(Unit::Queue(0), &[], &[(0, None)], 0x8000_0000),
        ],
    );
    assert_eq!(vet(&s), Err(Reject::Overflow(0)));
    assert_eq!(vet(&s).unwrap_err().class(), "overflow");
}

#[test]
fn pool_ids_come_from_both_ends() {
    let s = Script {
        pool: 256,
        grabs: vec![false, true, false, true],
        steps: vec![],
    };
    assert_eq!(vet(&s).unwrap().ids, vec![0, 255, 1, 254]);
}

#[test]
fn band_reads_bytes_four_to_eleven() {
    let mut b = [0u8; 64];
    b[4..12].copy_from_slice(&[0x05, 7, 0x13, 9, 3, 0, 0, 1]);
    let band = read_band(&b);
    assert_eq!(
        band,
        Band {
            wait_mode: 0x05,
            wait_idx: 7,
            update_mode: 0x13,
            update_idx: 9,
            semaphore_value: 0x0100_0003,
        }
    );
    // DS-13/DS-14: WAIT_FOR_SEM_GE_IMM with the threshold in semaphore_value; SEM_INC_COMPLETE.
    let sync = band_sync(&band, 2).unwrap();
    assert_eq!(
        sync.wait,
        Some(PlanWait {
            sem: 7,
            at_least: 0x0100_0003
        })
    );
    assert_eq!(
        sync.update,
        Some(PlanUpdate {
            sem: 9,
            add: 2,
            core: None
        })
    );
    // Anything else is not a band the pass stamps.
    for (off, v) in [(4usize, 0x85u8), (4, 0x07), (6, 0x01), (6, 0x03)] {
        let mut c = b;
        c[off] = v;
        assert_eq!(
            band_sync(&read_band(&c), 1),
            Err(off),
            "byte {off} = {v:#x}"
        );
    }
    assert_eq!(
        band_sync(&read_band(&[0u8; 64]), 1),
        Ok(BandSync::default())
    );
}

#[test]
fn final_values_are_checked_in_every_row_of_the_semaphore_file() {
    // One DMA signalling handle 1 (the second bottom grant: id 1) on core 3's file, once.
    let s = script(2, vec![step(Unit::Queue(0), &[], &[(1, Some(3))], 1)]);
    let exp = vet(&s).unwrap();
    assert_eq!(exp.ids, vec![0, 1]);
    let ok = simulate(&s, &exp, &[entry(&[], &[(1, 1, Some(3))])], &[]).unwrap();
    assert_eq!(
        ok.finals.into_iter().collect::<Vec<_>>(),
        [((Some(3), 1), 1)]
    );
    // The update never sent: the expected slot ends at zero.
    assert_eq!(
        simulate(&s, &exp, &[entry(&[], &[])], &[]),
        Err(Violation::FinalValue {
            core: Some(3),
            sem: 1,
            got: 0,
            want: 1
        })
    );
    // Sent to core 2 instead: core 2's row comes first in (core, sem) order.
    assert_eq!(
        simulate(&s, &exp, &[entry(&[], &[(1, 1, Some(2))])], &[]),
        Err(Violation::FinalValue {
            core: Some(2),
            sem: 1,
            got: 1,
            want: 0
        })
    );
    // Sent locally: the local row comes before every core's.
    assert_eq!(
        simulate(&s, &exp, &[entry(&[], &[(1, 1, None)])], &[]),
        Err(Violation::FinalValue {
            core: None,
            sem: 1,
            got: 1,
            want: 0
        })
    );
}
