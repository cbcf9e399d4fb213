//! Entry points of the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and of
//! the corpus replay (`tests/corpus_replay.rs`).
//!
//! A fuzz target is a corpus folder of the target registry
//! ([`crate::targets`]): its property is that every registry target whose
//! `folder` it is agrees on the input (core vs oracle). [`check`] returns
//! `Err(report)` on the first disagreement (the report holds the input bytes
//! and both subjects' results); [`run`] panics with it — the only deliberate
//! panic, which is how libFuzzer learns of a finding. Any byte string is a
//! valid input; the mapping is deterministic. Inputs run under v2, except
//! `collective_lowering`'s, which run under every generation (0xBF exists
//! from v3, the v4 dtype column from v4).

use crate::arch::Arch;
use crate::engine::Engine;
use crate::targets::{folder_targets, folders, Check};
use std::fmt;

/// A finding: a rendered report (input bytes and both results).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding(pub String);

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Finding {}

/// The fuzz targets (= corpus folders), in registry order.
pub fn fuzz_targets() -> Vec<&'static str> {
    folders()
}

/// Runs fuzz target `name` on `data`; `Err` on the first disagreement (or
/// for a name that is not a fuzz target).
pub fn check(name: &str, data: &[u8]) -> Result<(), Finding> {
    let targets = folder_targets(name);
    if targets.is_empty() {
        return Err(Finding(format!(
            "`{name}` is not a fuzz target (expected one of: {})",
            folders().join(", ")
        )));
    }
    let e = Engine::reference();
    for t in targets {
        if t.check() == Check::Lowering {
            for arch in Arch::ALL {
                let e = Engine::open(&[], arch).map_err(|e| Finding(e.to_string()))?;
                if let (_, Some(d)) = e.compare_lowering(t, data) {
                    return Err(Finding(format!("[{arch}] {d}")));
                }
            }
        } else if let Some(d) = e.compare(t, data).divergence() {
            return Err(Finding(d.to_string()));
        }
    }
    Ok(())
}

/// [`check`], panicking with the report on a finding (for fuzz targets).
pub fn run(name: &str, data: &[u8]) {
    if let Err(f) = check(name, data) {
        panic!("[{name}] {f}");
    }
}

/// The spec version the seed corpus was generated for (`corpus/VERSION`).
pub const CORPUS_VERSION: &str = "tpb-spec-1";

/// 64-bit FNV-1a of `data`: corpus files are named by its 16-digit lowercase hex.
pub fn fnv1a64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}
