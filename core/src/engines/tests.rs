//! Hand-built subgraphs for each rule of SPEC §11; mode bytes typed from FACTS §2.

use super::*;

const GE: u8 = 0x05;
const EQ: u8 = 0x01;
const INC: u8 = 0x13;
const DEC: u8 = 0x14;
const WR: u8 = 0x19;
const EVT_SET: u8 = 0x11;
const W_EVT_SET: u8 = 0x06;
const W_SET_THEN_CLEAR: u8 = 0x07;

fn st(wait_mode: u8, wait_idx: u8, update_mode: u8, update_idx: u8, value: u32) -> Step {
    Step {
        wait_mode,
        wait_idx,
        update_mode,
        update_idx,
        value,
    }
}

fn wait(mode: u8, idx: u8, value: u32) -> Step {
    st(mode, idx, 0, 0, value)
}

fn upd(mode: u8, idx: u8, value: u32) -> Step {
    st(0, 0, mode, idx, value)
}

fn at(engine: u16, index: u32) -> Loc {
    Loc::Instr { engine, index }
}

fn run(engines: &[&[Step]], dma: &[DmaIncrement]) -> Report {
    analyze(engines, dma, Options { links: true }).expect("accepted")
}

fn kinds(r: &Report) -> Vec<&'static str> {
    r.findings.iter().map(|f| f.kind()).collect()
}

#[test]
fn a_producer_and_its_consumer_are_clean() {
    let r = run(&[&[upd(INC, 0, 0)], &[wait(GE, 0, 1)]], &[]);
    assert_eq!(kinds(&r), Vec::<&str>::new());
    assert_eq!(r.ends, [End::Finished, End::Finished]);
    assert_eq!(
        r.links,
        [Link {
            wait: at(1, 0),
            by: Some(at(0, 0))
        }]
    );
}

#[test]
fn two_engines_waiting_on_each_other_deadlock() {
    let e0 = [wait(GE, 0, 1), upd(INC, 1, 0)];
    let e1 = [wait(GE, 1, 1), upd(INC, 0, 0)];
    let r = run(&[&e0, &e1], &[]);
    assert_eq!(kinds(&r), ["deadlock"]);
    let Finding::Deadlock { cycle } = &r.findings[0] else {
        unreachable!()
    };
    assert_eq!(
        cycle,
        &[
            WaitEdge {
                waiter: at(0, 0),
                resource: Resource::Semaphore(0),
                mode: GE,
                threshold: 1,
                value: 0,
                helper: at(1, 1),
            },
            WaitEdge {
                waiter: at(1, 0),
                resource: Resource::Semaphore(1),
                mode: GE,
                threshold: 1,
                value: 0,
                helper: at(0, 1),
            },
        ]
    );
    assert_eq!(
        r.ends,
        [End::Blocked { index: 0 }, End::Blocked { index: 0 }]
    );
}

#[test]
fn a_wait_above_every_remaining_increment_is_unsatisfiable() {
    let r = run(&[&[wait(GE, 0, 3)], &[upd(INC, 0, 0), upd(INC, 0, 0)]], &[]);
    assert_eq!(
        r.findings,
        [Finding::UnsatisfiableWait {
            at: at(0, 0),
            resource: Resource::Semaphore(0),
            mode: GE,
            threshold: 3,
            value: 2,
            last_update: Some(at(1, 1)),
        }]
    );
    // The waiter's own later increments cannot help it.
    let r = run(&[&[wait(GE, 0, 1), upd(INC, 0, 0)]], &[]);
    assert_eq!(kinds(&r), ["unsatisfiable_wait"]);
}

#[test]
fn dma_increments_satisfy_waits() {
    let untriggered = DmaIncrement {
        sem: 5,
        by: 16,
        trigger: None,
    };
    let r = run(&[&[wait(GE, 5, 16)]], &[untriggered]);
    assert_eq!(kinds(&r), Vec::<&str>::new());
    assert_eq!(
        r.links[0].by,
        Some(Loc::Dma { index: 0 }),
        "joined to the DMA"
    );
    // Triggered by another engine's instruction: clean; by the waiter's own later one: not.
    let by_other = DmaIncrement {
        trigger: Some((1, 0)),
        ..untriggered
    };
    let r = run(&[&[wait(GE, 5, 16)], &[upd(0, 0, 0)]], &[by_other]);
    assert_eq!(kinds(&r), Vec::<&str>::new());
    let by_self = DmaIncrement {
        trigger: Some((0, 1)),
        ..untriggered
    };
    let r = run(&[&[wait(GE, 5, 16), upd(0, 0, 0)]], &[by_self]);
    assert_eq!(kinds(&r), ["unsatisfiable_wait"]);
    // A pending DMA of a blocked engine counts as a remaining update (and names its trigger).
    let e0 = [wait(GE, 1, 1), upd(0, 0, 0)];
    let e1 = [wait(GE, 5, 16), upd(INC, 1, 0)];
    let d = DmaIncrement {
        sem: 5,
        by: 16,
        trigger: Some((0, 1)),
    };
    let r = run(&[&e0, &e1], &[d]);
    assert_eq!(kinds(&r), ["deadlock"]);
    let Finding::Deadlock { cycle } = &r.findings[0] else {
        unreachable!()
    };
    assert_eq!(cycle[1].helper, at(0, 1));
    // A trigger naming no instruction is refused.
    let bad = DmaIncrement {
        trigger: Some((0, 9)),
        ..d
    };
    assert_eq!(
        analyze(&[&e0], &[bad], Options::default()),
        Err(EngineSyncError::BadTrigger {
            dma: 0,
            engine: 0,
            index: 9
        })
    );
}

#[test]
fn events() {
    // Nobody sets it.
    let r = run(&[&[wait(W_EVT_SET, 3, 0)]], &[]);
    assert_eq!(
        r.findings,
        [Finding::UnsetEvent {
            at: at(0, 0),
            event: 3,
            mode: W_EVT_SET,
            last_update: None
        }]
    );
    // Set once, consumed by the first SET_THEN_CLEAR: the second waits in vain.
    let r = run(
        &[
            &[upd(EVT_SET, 1, 0)],
            &[wait(W_SET_THEN_CLEAR, 1, 0)],
            &[wait(W_SET_THEN_CLEAR, 1, 0)],
        ],
        &[],
    );
    assert_eq!(kinds(&r), ["unsatisfiable_wait"]);
    assert_eq!(r.findings[0].at(), Some(at(2, 0)));
    // CLEAR waits pass on the initial (clear) state; CLEAR_THEN_SET sets it for a later waiter.
    let r = run(
        &[
            &[wait(0x0E, 2, 0), wait(0x0F, 2, 0)],
            &[wait(W_EVT_SET, 2, 0)],
        ],
        &[],
    );
    assert_eq!(kinds(&r), Vec::<&str>::new());
}

#[test]
fn underflow_and_overflow_are_reported_once_per_semaphore() {
    let r = run(&[&[upd(DEC, 2, 0), upd(DEC, 2, 0), wait(GE, 2, 0)]], &[]);
    assert_eq!(
        r.findings,
        [Finding::SemaphoreUnderflow {
            at: at(0, 0),
            sem: 2,
            value: 0,
            delta: 1,
            last_update: None
        }]
    );
    let r = run(
        &[&[upd(WR, 4, u32::MAX), upd(INC, 4, 0), wait(GE, 4, 0)]],
        &[],
    );
    assert_eq!(kinds(&r), ["semaphore_overflow"]);
    assert_eq!(r.semaphores[4], u32::MAX);
}

#[test]
fn an_update_nobody_waits_for_is_a_warning() {
    let r = run(&[&[upd(INC, 7, 0), upd(INC, 7, 0)]], &[]);
    assert_eq!(
        r.findings,
        [Finding::UnconsumedUpdate {
            at: at(0, 0),
            resource: Resource::Semaphore(7)
        }]
    );
    assert!(r.findings[0].is_warning());
}

#[test]
fn what_the_model_cannot_follow_stops_it_and_nothing_blocked_is_judged() {
    let r = run(&[&[wait(0x85, 0, 1)], &[wait(GE, 1, 1)]], &[]);
    assert_eq!(
        r.findings,
        [Finding::AnalysisStopped {
            at: at(0, 0),
            reason: StopReason::RegisterWait { mode: 0x85 }
        }]
    );
    assert_eq!(
        r.ends,
        [End::Stopped { index: 0 }, End::Blocked { index: 0 }]
    );
    for (step, reason) in [
        (upd(0x99, 0, 0), "register_update"),
        (wait(0x08, 0, 0), "unknown_wait_mode"),
        (upd(0x06, 0, 0), "unknown_update_mode"),
        (upd(0xFF, 0, 0), "unknown_update_mode"),
    ] {
        let r = run(&[&[step]], &[]);
        let Some(Finding::AnalysisStopped { reason: got, .. }) = r.findings.first() else {
            panic!("{step:?}: {:?}", r.findings);
        };
        assert_eq!(got.name(), reason);
    }
}

/// DE-3: the lowest-indexed engine that can run goes first, so an EQ wait sees a value it
/// would miss under another order.
#[test]
fn the_schedule_prefers_the_lowest_engine() {
    let waiter = [wait(EQ, 0, 1)];
    let incs = [upd(INC, 0, 0), upd(INC, 0, 0)];
    assert_eq!(kinds(&run(&[&waiter, &incs], &[])), Vec::<&str>::new());
    assert_eq!(kinds(&run(&[&incs, &waiter], &[])), ["unsatisfiable_wait"]);
}

#[test]
fn mode_meanings_follow_facts_2() {
    for (b, want) in [
        (0x01, WaitKind::Sem(Cmp::Eq)),
        (0x02, WaitKind::Sem(Cmp::Lt)),
        (0x03, WaitKind::Sem(Cmp::Le)),
        (0x04, WaitKind::Sem(Cmp::Gt)),
        (0x05, WaitKind::Sem(Cmp::Ge)),
        (
            0x06,
            WaitKind::Evt {
                set: true,
                flip: false,
            },
        ),
        (
            0x07,
            WaitKind::Evt {
                set: true,
                flip: true,
            },
        ),
        (
            0x0E,
            WaitKind::Evt {
                set: false,
                flip: false,
            },
        ),
        (
            0x0F,
            WaitKind::Evt {
                set: false,
                flip: true,
            },
        ),
    ] {
        assert_eq!(wait_kind(b), want, "{b:#04x}");
    }
    for (read, want) in [
        (0x01, UpdateKind::EvtSet),
        (0x02, UpdateKind::EvtClr),
        (0x03, UpdateKind::Inc),
        (0x04, UpdateKind::Dec),
        (0x05, UpdateKind::Add),
        (0x07, UpdateKind::Sub),
        (0x09, UpdateKind::Write),
    ] {
        assert_eq!(update_kind(read), want);
        assert_eq!(update_kind(read + 0x10), want);
    }
}

#[test]
fn too_many_engines_are_refused() {
    let empty: &[Step] = &[];
    let engines = vec![empty; MAX_ENGINES + 1];
    assert_eq!(
        analyze(&engines, &[], Options::default()),
        Err(EngineSyncError::TooManyEngines {
            found: 65,
            limit: 64
        })
    );
    assert!(analyze(&engines[..64], &[], Options::default()).is_ok());
}

#[test]
fn streams_read_one_step_per_instruction() {
    let mut s = vec![0u8; 64 * 5 + 10];
    s[0] = 0x01;
    s[4..12].copy_from_slice(&[GE, 3, INC, 4, 7, 0, 0, 0]);
    s[64] = 0xD4; // 128 bytes: one instruction
    s[64 + 4] = 0x06;
    s[192] = 0xD9;
    s[256] = 0xDA; // the 0xD9's second half: no band
    s[256 + 4] = 0x55;
    s[320] = 0x01;
    let x = steps_of_stream(&s);
    assert_eq!(x.offsets, [0, 64, 192]);
    assert_eq!(x.steps[0], st(GE, 3, INC, 4, 7));
    assert_eq!(x.steps[1].wait_mode, 0x06);
    assert_eq!(x.trailing, 10);
    assert_eq!(Step::from_band(x.steps[0].to_band()), x.steps[0]);
    // Read in pieces cut anywhere: the same steps.
    for cut in [1, 7, 63, 64, 65, 100, 129] {
        let mut r = StepReader::default();
        for piece in s.chunks(cut) {
            r.push(piece);
        }
        assert_eq!(r.finish(), x, "pieces of {cut}");
    }
}

/// Linear time: `cargo test -p tpb-core --release -- --ignored ten_million --nocapture`.
#[test]
#[ignore]
fn ten_million_instructions() {
    let n = 2_500_000usize;
    // Four engines in a ring: each waits for the previous one's count, then bumps its own.
    let engines: Vec<Vec<Step>> = (0..4u8)
        .map(|e| {
            (0..n)
                .map(|i| {
                    let t = if e == 0 { i as u32 } else { i as u32 + 1 };
                    st(GE, (e + 3) % 4, INC, e, t)
                })
                .collect()
        })
        .collect();
    let refs: Vec<&[Step]> = engines.iter().map(Vec::as_slice).collect();
    let t = std::time::Instant::now();
    let r = analyze(&refs, &[], Options::default()).expect("ok");
    let dt = t.elapsed();
    assert_eq!(r.executed, 10_000_000);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    println!("10M instructions: {dt:?}");
}
