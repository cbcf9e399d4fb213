//! One gate case through the judge, and the coverage matrix it fills: core's verdict key (or
//! the kind's own) → counts per [`super::OUTCOMES`] column, looked up in place.

use super::config::GateConfig;
use super::outcome::outcome_col;
use crate::findings::{Finding, Origin};
use crate::generation::Generation;
use crate::generators::{fnv1a64, fnv1a64_on};
use crate::judge::record::RecordKey;
use crate::judge::Judge;
use crate::kinds::Ran;
use crate::reach::Reach;
use crate::subjects::registry::OpenError;
use std::collections::HashMap;

/// FNV-1a hasher for the per-chunk coverage maps (SipHash showed up in profiles).
#[derive(Clone, Copy, Default)]
pub struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = match self.0 {
            0 => fnv1a64(bytes),
            h => fnv1a64_on(h, bytes),
        };
    }
}

pub type CovMap = HashMap<String, [u64; 6], std::hash::BuildHasherDefault<Fnv>>;

/// A worker's judge for one generation, core recorded (`key`: its say on the last case).
pub struct Runner {
    pub arch: Generation,
    pub judge: Judge,
    pub key: RecordKey,
}

pub fn runners(cfg: &GateConfig) -> Result<Vec<Runner>, OpenError> {
    let arches = cfg.arches();
    let judges = Judge::open_each(&cfg.subjects, &arches)?;
    Ok(arches
        .into_iter()
        .zip(judges.into_iter().map(Judge::recorded))
        .map(|(arch, (judge, key))| Runner { arch, judge, key })
        .collect())
}

/// Files one case's outcome under `r` (coverage cell of `key`, reach if classified): findings.
#[inline(always)]
pub fn file_case(
    r: &Runner,
    ran: Ran,
    key: &str,
    reach: &mut Reach,
    origin: impl Fn() -> Origin,
    cov: &mut CovMap,
) -> Vec<Finding> {
    if ran.classified {
        reach.hit(crate::reach::Field::Generation, r.arch.name());
    }
    let outcome = ran.outcome;
    let col = outcome.divergence().map_or(0, |d| outcome_col(d.class));
    count(cov, key, col);
    if outcome.is_agree() {
        return Vec::new();
    }
    outcome
        .into_iter()
        .map(|divergence| Finding {
            origin: origin(),
            arch: r.arch,
            divergence,
        })
        .collect()
}

#[inline(always)]
fn count(cov: &mut CovMap, k: &str, col: usize) {
    match cov.get_mut(k) {
        Some(c) => c[col] += 1,
        None => {
            let mut c = [0u64; 6];
            c[col] = 1;
            cov.insert(k.to_string(), c);
        }
    }
}
