//! Domain reach of the default gate: regenerates the first cases of the gate's
//! case set (the same pure function of seed, target and index the gate uses)
//! and fails when a declared value class of some field (`tpbconform::reach`)
//! is never hit — a blind spot of the generators.

use tpbconform::findings::CaseKind;
use tpbconform::gate::{DEFAULT_SEED, DEFAULT_SYNC_CASES};
use tpbconform::generation::Generation;
use tpbconform::generators::sync_program::{self, Shape};
use tpbconform::generators::{case_rng, name_hash};
use tpbconform::kinds::{self, CaseBuf, Draw, TargetKind};
use tpbconform::reach::{Field, Reach, STREAM};
use tpbconform::targets::{Check, Target};

/// Hits of `class` of `field` in `reach` (`None` when not declared).
fn hits(reach: &tpbconform::reach::Reach, field: &str, class: &str) -> Option<u64> {
    let classes = *reach.table().get(field)?;
    classes.iter().find(|(c, _)| *c == class).map(|(_, n)| *n)
}

/// Generated case `i` of gate target `t` under the default seed, for
/// generation `arch`, written into `buf`.
fn gate_case(t: Target, arch: Generation, i: u64, buf: &mut CaseBuf) -> &[u8] {
    let mut r = case_rng(DEFAULT_SEED, name_hash(t.name()), i);
    let draw = Draw {
        arch,
        r: &mut r,
        kind: CaseKind::of(i),
    };
    let form = kinds::of(t).generate(t, draw, buf);
    buf.input(form)
}

/// Cases per target (the default gate runs 5,000,000; the classes must be
/// reached well before that).
const N: u64 = 30_000;

/// Fails naming every declared class no case hit.
fn assert_all_hit(reach: &Reach) {
    let unhit = reach.unhit();
    assert!(
        unhit.is_empty(),
        "never generated:\n  {}",
        unhit.join("\n  ")
    );
}

#[test]
fn default_gate_bundle_cases_reach_every_field_class() {
    let mut reach = Reach::default();
    reach.declare_bundles();
    let mut buf = CaseBuf::default();
    for t in Target::gate_targets().into_iter().filter(|t| t.is_bundle()) {
        for i in 0..N {
            // The default gate spreads its cases over the generations.
            let arch = Generation::ALL[(i % Generation::ALL.len() as u64) as usize];
            let input = gate_case(t, arch, i, &mut buf);
            reach.bundle(input.try_into().expect("a bundle case"));
        }
    }
    assert_all_hit(&reach);
}

#[test]
fn default_gate_stream_cases_reach_every_stream_class() {
    let mut reach = Reach::default();
    reach.declare(&STREAM);
    let t = Target::by_check(Check::StreamProgram).expect("a stream-program target");
    let mut buf = CaseBuf::default();
    for i in 0..N / 4 {
        let input = gate_case(t, Generation::default(), i, &mut buf);
        reach.stream_program(input);
    }
    assert_all_hit(&reach);
}

/// Target `name`, its kind, and a reach table with what the kind declares (nothing hit).
fn declared(name: &str) -> (Target, &'static dyn TargetKind, Reach) {
    let t = Target::named(name);
    let kind = kinds::of(t);
    let mut reach = Reach::default();
    kind.declare_reach(t, &mut reach);
    (t, kind, reach)
}

/// The `stream_lint` cases a default gate classifies: one in `gate::REACH_SAMPLE` of its capped
/// case count, each under the generation the gate gives it (case `i` runs under
/// `Generation::ALL[i % 4]`), counted through the kind's `run` as the gate does.
fn stream_lint_reach(cases: u64) -> Reach {
    let (t, kind, mut reach) = declared("stream_lint");
    let engines: Vec<_> = Generation::ALL
        .iter()
        .map(|&a| tpbconform::judge::Judge::open(&[], a).expect("reference engine"))
        .collect();
    let mut buf = CaseBuf::default();
    for i in (0..cases).filter(|&i| tpbconform::gate::reach_sampled(i)) {
        let k = (i % Generation::ALL.len() as u64) as usize;
        let input = gate_case(t, Generation::ALL[k], i, &mut buf).to_vec();
        let ran = kind.run(&engines[k], t, &input, Some(&mut reach));
        assert!(ran.outcome.is_agree(), "case {i}");
        assert!(ran.classified);
    }
    reach
}

#[test]
fn default_gate_stream_lint_cases_reach_every_lint_class() {
    // Declared from SPEC §5.3's tables, not from the generator.
    let declared = stream_lint_reach(0).unhit();
    for c in [
        "lint.num_arguments: 0",
        "lint.num_arguments: 16..127",
        "lint.num_arguments: 128..254",
        "lint.num_arguments: 255",
        "lint.stream_error: truncated_instruction",
        "lint.stream_error: leg_mismatch",
        "lint.verdict: skeleton",
        "lint.verdict: invalid: has_valid_neuron_events",
        "lint.verdict: invalid: body",
        "lint.length: 128",
    ] {
        assert!(declared.iter().any(|u| u == c), "{c} not declared");
    }
    // A tenth of the default gate's sampled cases already hit every class.
    let cases = tpbconform::kinds::stream_lint::STREAM_LINT_CASES / 10;
    let unhit = stream_lint_reach(cases).unhit();
    assert!(
        unhit.is_empty(),
        "never generated in {cases} cases:\n  {}",
        unhit.join("\n  ")
    );
}

#[test]
fn reach_detects_an_unreachable_class() {
    // the guard itself can fail: a case set without dtype 0x10 leaves that class unhit
    let mut reach = Reach::default();
    reach.declare_bundles();
    let mut b = [0u8; 64];
    b[..2].copy_from_slice(&[0xD9, 0x10]);
    b[0x0D] = 0x01;
    reach.bundle(&b);
    assert!(reach.unhit().iter().any(|c| c == "0xD9.dtype: 0x10"));
    assert!(!reach.unhit().iter().any(|c| c == "0xD9.dtype: 0x01"));
}

/// Sync cases the gate classifies for reach in a `--cases 500000` run
/// (one in `gate::REACH_SAMPLE`); the default gate classifies more.
const SYNC_SAMPLED: u64 = {
    let n = 500_000 / tpbconform::gate::REACH_SAMPLE;
    assert!(n <= DEFAULT_SYNC_CASES / tpbconform::gate::REACH_SAMPLE);
    n
};

#[test]
fn default_gate_sync_cases_reach_every_program_shape() {
    // The classes of the gate's sampled sync cases (the same sampling and
    // generator the gate uses), through the kind's own classifier.
    let (t, kind, mut reach) = declared("sync_handshake");
    let mut buf = CaseBuf::default();
    let (mut i, mut sampled) = (0u64, 0u64);
    // A tenth of the sampled cases of a 500,000-case gate must already hit
    // every class.
    while sampled < SYNC_SAMPLED / 10 {
        if tpbconform::gate::reach_sampled(i) {
            sampled += 1;
            let input = gate_case(t, Generation::default(), i, &mut buf);
            kind.record_reach(t, &mut reach, input);
        }
        i += 1;
    }
    assert!(hits(&reach, "sync.pseudo_run", "3+").is_some());
    assert_all_hit(&reach);
}

#[test]
fn the_gate_counts_sync_shapes_as_the_classifier_does() {
    // The gate counts a sampled sync case's shapes inside `run` (from the
    // program the comparison built); that must equal `record_reach`.
    let t = Target::named("sync_handshake");
    let kind = kinds::of(t);
    let e = tpbconform::judge::Judge::reference();
    let (mut by_run, mut by_record) = (Reach::default(), Reach::default());
    kind.declare_reach(t, &mut by_run);
    kind.declare_reach(t, &mut by_record);
    let mut buf = CaseBuf::default();
    let mut classified = 0;
    for i in 0..600 {
        let input = gate_case(t, Generation::default(), i, &mut buf);
        let ran = kind.run(&e, t, input, Some(&mut by_run));
        assert!(ran.outcome.is_agree());
        let recorded = kind.record_reach(t, &mut by_record, input);
        assert_eq!(ran.classified, recorded, "case {i}");
        classified += usize::from(recorded);
    }
    assert!(classified > 100, "{classified}");
    assert_eq!(by_run.table(), by_record.table());
}

#[test]
fn an_unhit_sync_shape_is_reported() {
    let mut reach = Reach::default();
    reach.declare(&[Field::SyncPseudoRun, Field::SyncShape]);
    let mut s = Shape {
        fan_out: true,
        several_engines: true,
        long_chain: true,
        ..Shape::default()
    };
    s.pseudo_runs = [true, true, true, false];
    kinds::sync_handshake::count_shape(&mut reach, &s);
    assert_eq!(reach.unhit(), vec!["sync.pseudo_run: 3+".to_string()]);
    let _ = sync_program::PSEUDO_RUNS;
}

/// The `engine_sync` cases a default gate classifies (one in `gate::REACH_SAMPLE` of its capped
/// count), counted through the kind's `run` as the gate does: every finding kind of SPEC §11,
/// `clean`, and a deadlock beside an unsatisfiable wait.
#[test]
fn default_gate_engine_sync_cases_reach_every_finding() {
    let (t, kind, mut reach) = declared("engine_sync");
    // Declared from SPEC §11's finding names, not from the generator.
    let declared = reach.unhit();
    let findings = concat!(
        "deadlock unsatisfiable_wait unset_event semaphore_underflow semaphore_overflow ",
        "unconsumed_update analysis_stopped clean"
    );
    for c in findings.split(' ') {
        let c = format!("engine_sync.finding: {c}");
        assert!(declared.contains(&c), "{c} not declared: {declared:?}");
    }
    let judge =
        tpbconform::judge::Judge::open(&[], Generation::default()).expect("reference engine");
    let mut buf = CaseBuf::default();
    // A tenth of the default gate's cases already hit every class.
    let cases = tpbconform::kinds::engine_sync::ENGINE_SYNC_CASES / 10;
    for i in (0..cases).filter(|&i| tpbconform::gate::reach_sampled(i)) {
        let input = gate_case(t, Generation::default(), i, &mut buf).to_vec();
        let ran = kind.run(&judge, t, &input, Some(&mut reach));
        assert!(ran.outcome.is_agree(), "case {i}");
    }
    assert_all_hit(&reach);
}
