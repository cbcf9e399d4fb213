//! The `sync_handshake` differential target: model (tpb_core::sync) vs simulator
//! (tpb_oracle::sim) on generated programs.

use proptest::prelude::*;
use std::collections::BTreeMap;
use tpbconform::generators::SplitMix64;
use tpbconform::kinds::sync_handshake::{sync_handshake_case, SyncCaseOutcome};
use tpbconform::kinds::CaseDivergence;

/// Counts from [`smoke`] (programs both sides accepted; both rejected, per class).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SmokeStats {
    accepted: usize,
    rejected: BTreeMap<&'static str, usize>,
}

/// Runs `n` cases of random bytes (0..1536 long) from a [`SplitMix64`]
/// seeded with `seed`; the first divergence is returned with its input bytes.
fn smoke(n: usize, seed: u64) -> Result<SmokeStats, (Vec<u8>, CaseDivergence)> {
    let mut r = SplitMix64(seed);
    let mut stats = SmokeStats::default();
    let mut data = Vec::with_capacity(2048);
    for _ in 0..n {
        let len = r.below(1536) as usize;
        data.resize(len, 0);
        r.fill(&mut data);
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

#[test]
fn smoke_agrees_and_covers_every_rejection_class() {
    let stats = smoke(10_000, 0x5EED_0000_0000_0001).unwrap_or_else(|(data, d)| {
        panic!("{d:?}\ninput: {data:02x?}");
    });
    println!("{stats:?}");
    assert!(
        stats.accepted >= 1_000,
        "too few accepted programs: {stats:?}"
    );
    for class in [
        "null_instruction",
        "unknown_semaphore",
        "bad_core",
        "zero_increment",
        "pool_exhausted",
        "cycle",
        "not_single_local_update",
        "local_semaphore_mismatch",
        "shared_semaphore",
        "overflow",
    ] {
        assert!(
            stats.rejected.contains_key(class),
            "class {class} never generated: {stats:?}"
        );
    }
}

#[test]
fn empty_and_tiny_inputs_are_accepted_without_panic() {
    assert_eq!(
        sync_handshake_case(&[]),
        Ok(SyncCaseOutcome::Accepted {
            instrs: 0,
            steps: 0
        })
    );
    for b in 0..=255u8 {
        sync_handshake_case(&[b]).unwrap();
        sync_handshake_case(&[0, b, b]).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]
    #[test]
    fn model_and_simulator_agree(data in prop::collection::vec(any::<u8>(), 0..2048)) {
        if let Err(d) = sync_handshake_case(&data) {
            prop_assert!(false, "{:?}", d);
        }
    }
}

/// The 10^6-program campaign: `cargo test --release -p tpbconform --test sync_handshake --
/// --ignored --nocapture million`.
#[test]
#[ignore = "long: run in release mode"]
fn million_programs_agree() {
    let t = std::time::Instant::now();
    let stats = smoke(1_000_000, 0x0123_4567_89AB_CDEF).unwrap_or_else(|(data, d)| {
        panic!("{d:?}\ninput: {data:02x?}");
    });
    println!("1e6 programs in {:.1?}: {stats:?}", t.elapsed());
}
