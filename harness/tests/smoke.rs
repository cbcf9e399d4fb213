//! `smoke()`: every cargo-fuzz target's entry point, run a few hundred times on
//! deterministic pseudo-random inputs under plain `cargo test` (wasmtime
//! `crates/fuzzing` style). A divergence, or a panic in either subject, fails
//! the test with the fuzz target's own report.

use tpb_harness::fuzz_entry::{self, FuzzTarget};
use tpb_harness::sync_diff::sync_handshake_case;

const RUNS: u64 = 300;

/// splitmix64: input `i` of a target is a pure function of `(target, i)`.
fn input(target: u64, i: u64) -> Vec<u8> {
    let mut s = target.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i;
    let mut next = move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    // Lengths 0..=320 so short, exact-64, multi-bundle and odd-length inputs all occur.
    let len = (next() % 321) as usize;
    (0..len).map(|_| next() as u8).collect()
}

#[test]
fn smoke() {
    for (t, target) in FuzzTarget::ALL.into_iter().enumerate() {
        for i in 0..RUNS {
            let data = input(t as u64, i);
            if let Err(f) = fuzz_entry::check(target, &data) {
                panic!("fuzz target {} input #{i}: {f}", target.name());
            }
        }
    }
    for i in 0..RUNS {
        let data = input(99, i);
        if let Err(d) = sync_handshake_case(&data) {
            panic!("fuzz target sync_handshake input #{i}: {d}");
        }
    }
}
