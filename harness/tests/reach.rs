//! Domain reach of the default gate: regenerates the first cases of the gate's
//! case set (the same pure function of seed, target and index the gate uses)
//! and fails when a declared value class of some field (`tpb_harness::reach`)
//! is never hit — a blind spot of the generators.

use tpb_harness::arch::Arch;
use tpb_harness::findings::CaseKind;
use tpb_harness::gate::cases::{bundle_case_for, bytes_case, case_rng, name_hash};
use tpb_harness::gate::DEFAULT_SEED;
use tpb_harness::reach::Reach;
use tpb_harness::targets::{Check, Target};

/// Cases per target (the default gate runs 5,000,000; the classes must be
/// reached well before that).
const N: u64 = 30_000;

#[test]
fn default_gate_bundle_cases_reach_every_field_class() {
    let mut reach = Reach::declared(true, false);
    let mut b = [0u8; 64];
    for t in Target::gate_targets().into_iter().filter(|t| t.is_bundle()) {
        let h = name_hash(t.name());
        for i in 0..N {
            let mut r = case_rng(DEFAULT_SEED, h, i);
            // The default gate spreads its cases over the generations.
            let arch = Arch::ALL[(i % Arch::ALL.len() as u64) as usize];
            bundle_case_for(t, arch, &mut r, CaseKind::of(i), &mut b);
            reach.bundle(&b);
        }
    }
    let unhit = reach.unhit();
    assert!(
        unhit.is_empty(),
        "never generated:\n  {}",
        unhit.join("\n  ")
    );
}

#[test]
fn default_gate_stream_cases_reach_every_stream_class() {
    let mut reach = Reach::declared(false, true);
    let t = Target::by_check(Check::StreamProgram).expect("a stream-program target");
    let h = name_hash(t.name());
    let mut prog = Vec::new();
    for i in 0..N / 4 {
        let mut r = case_rng(DEFAULT_SEED, h, i);
        bytes_case(t, &mut r, CaseKind::of(i), &mut prog);
        reach.stream_program(&prog);
    }
    let unhit = reach.unhit();
    assert!(
        unhit.is_empty(),
        "never generated:\n  {}",
        unhit.join("\n  ")
    );
}

#[test]
fn reach_detects_an_unreachable_class() {
    // the guard itself can fail: a case set without dtype 0x10 leaves that class unhit
    let mut reach = Reach::declared(true, false);
    let mut b = [0u8; 64];
    b[..2].copy_from_slice(&[0xD9, 0x10]);
    b[0x0D] = 0x01;
    reach.bundle(&b);
    assert!(reach.unhit().iter().any(|c| c == "0xD9.dtype: 0x10"));
    assert!(!reach.unhit().iter().any(|c| c == "0xD9.dtype: 0x01"));
}
