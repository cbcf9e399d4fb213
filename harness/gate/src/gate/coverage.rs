//! One gate case through the judge, and the coverage matrix it fills.
//!
//! Coverage: core's verdict key (recorded by [`crate::judge::record`], or
//! the kind's own key, [`TargetKind::run`]) → counts per [`super::OUTCOMES`] column. Agreeing
//! validator, LUT and IR-gate cases do not allocate: the key is written into
//! a reused buffer and looked up in place.

use super::config::GateConfig;
use super::outcome::outcome_col;
use crate::arch::Arch;
use crate::findings::{Finding, Origin};
use crate::judge::record::RecordKey;
use crate::judge::Judge;
use crate::kinds::TargetKind;
use crate::reach::Reach;
use crate::subjects::registry::OpenError;
use crate::targets::Target;
use std::collections::{BTreeMap, HashMap};

/// FNV-1a hasher for the per-chunk coverage maps (keys are short strings;
/// SipHash showed up in profiles).
#[derive(Clone, Copy, Default)]
pub struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        self.0 = h;
    }
}

pub type CovMap = HashMap<String, [u64; 6], std::hash::BuildHasherDefault<Fnv>>;

/// The judge of one worker for one generation: core wrapped in a coverage
/// recorder.
pub struct Runner {
    /// The generation every subject of `judge` serves.
    pub arch: Arch,
    /// The subjects.
    pub judge: Judge,
    /// What core said on the last case.
    pub key: RecordKey,
}

/// A worker's judges, one per generation of [`GateConfig::arches`] in
/// order: core (recorded) vs oracle plus `cfg.subjects`, all serving it.
pub fn runners(cfg: &GateConfig) -> Result<Vec<Runner>, OpenError> {
    cfg.arches()
        .iter()
        .map(|&arch| {
            let (judge, key) = Judge::open_recorded(&cfg.subjects, arch)?;
            Ok(Runner { arch, judge, key })
        })
        .collect()
}

/// Runs one input through a target, bumps the coverage cell of core's
/// verdict (or the kind's key), counts its reach classes and generation into
/// `reach` when given, and returns the findings (none when every subject
/// agrees).
#[inline(always)]
pub fn run_one(
    r: &Runner,
    t: Target,
    kind: &dyn TargetKind,
    input: &[u8],
    reach: Option<&mut Reach>,
    origin: impl Fn() -> Origin,
    cov: &mut CovMap,
) -> Vec<Finding> {
    r.key.reset();
    let mut reach = reach;
    let ran = kind.run(&r.judge, t, input, reach.as_deref_mut());
    if let (true, Some(reach)) = (ran.classified, reach) {
        reach.generation(r.arch.name());
    }
    let (col, findings, own_key) = findings_of(r, ran, origin);
    let mut bump = |k: &str| count(cov, k, col, None);
    match own_key {
        Some(k) => bump(&k),
        None => r.key.with_key(bump),
    }
    findings
}

/// The coverage column of a case's outcome, its findings, and the kind's
/// own coverage key if any.
#[inline(always)]
fn findings_of(
    r: &Runner,
    ran: crate::kinds::Ran,
    origin: impl Fn() -> Origin,
) -> (usize, Vec<Finding>, Option<String>) {
    let (outcome, own_key) = (ran.outcome, ran.key);
    let col = outcome.divergence().map_or(0, |d| outcome_col(d.class));
    let findings = outcome
        .into_iter()
        .map(|d| Finding::from_divergence(&d, origin()).with_arch(r.arch))
        .collect();
    (col, findings, own_key)
}

/// Counts one case into column `col` of coverage key `k`, taking it out of
/// column `from` first when given.
#[inline(always)]
fn count(cov: &mut CovMap, k: &str, col: usize, from: Option<usize>) {
    match cov.get_mut(k) {
        Some(c) => {
            if let Some(f) = from {
                c[f] = c[f].saturating_sub(1);
            }
            c[col] += 1;
        }
        None => {
            let mut c = [0u64; 6];
            c[col] = 1;
            cov.insert(k.to_string(), c);
        }
    }
}

/// Runs again one case that bulk judging did not vouch for
/// ([`crate::judge::Judge::settle`]; the judge is replaying): the subjects
/// under test alone are judged. [`run_one`] counted the case in coverage
/// column 0 (agree) when it ran the reference pair; a divergence found now
/// moves that count to its own column, so the matrix is the one judging
/// case by case fills.
pub fn rejudge_one(
    r: &Runner,
    t: Target,
    kind: &dyn TargetKind,
    input: &[u8],
    origin: impl Fn() -> Origin,
    cov: &mut CovMap,
) -> Vec<Finding> {
    r.key.reset();
    let ran = kind.run(&r.judge, t, input, None);
    let (col, findings, own_key) = findings_of(r, ran, origin);
    if col != 0 {
        let mut moved = |k: &str| count(cov, k, col, Some(0));
        match own_key {
            Some(k) => moved(&k),
            None => r.key.with_key(moved),
        }
    }
    findings
}

/// Adds a chunk's coverage into the run's.
pub fn merge_cov(into: &mut BTreeMap<String, [u64; 6]>, from: CovMap) {
    for (k, v) in from {
        let e = into.entry(k).or_insert([0; 6]);
        for (a, b) in e.iter_mut().zip(v) {
            *a += b;
        }
    }
}
