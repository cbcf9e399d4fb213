//! Entry points of the cargo-fuzz targets and of the corpus replay. A fuzz target is a
//! registry corpus folder whose targets must agree (core vs oracle) on any input, under v2
//! (`collective_lowering` under every generation). [`check`] returns the first disagreement;
//! [`run`] panics with it, the one deliberate panic (how libFuzzer learns of a finding).
//! Bundle folders take the lean path ([`crate::judge::lean`]: statically dispatched, so
//! libFuzzer scans fewer counters), with a replay command in the report; the others go
//! through the [`Judge`].

use crate::generation::Generation;
use crate::judge::{lean, Divergence, Judge};
use crate::kinds;
use crate::subjects::{registry, Subject, Validator};
use crate::targets::{folder_set, folder_targets, folders, Check, Target, TARGETS};
use std::fmt;

pub use crate::targets::folders as fuzz_targets;

/// How a fuzz target runs its input, chosen from the target registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// The folder's only target is this validator (`lean::validator`).
    Validator(Target, Validator),
    /// Every target of the folder (registry positions, [`folder_set`]) is a bundle target.
    Bundle(u32),
    /// Through the [`Judge`] ([`check_judged`]); the folder's first target.
    Judge(Target),
}

impl Entry {
    /// `None` if no registry target has that folder.
    pub const fn find(folder: &str) -> Option<Entry> {
        let set = folder_set(folder);
        if set == 0 {
            return None;
        }
        let first = set.trailing_zeros() as usize;
        let Some(t) = Target::at(first) else {
            return None;
        };
        if let Check::Validator(v) = TARGETS[first].check {
            if set.count_ones() == 1 {
                return Some(Entry::Validator(t, v));
            }
        }
        let mut i = 0;
        while i < TARGETS.len() {
            let bundle = matches!(
                TARGETS[i].check,
                Check::Validator(_) | Check::Decode | Check::Roundtrip
            );
            if set & (1 << i) != 0 && !bundle {
                return Some(Entry::Judge(t));
            }
            i += 1;
        }
        Some(Entry::Bundle(set))
    }

    /// [`Entry::find`] for a `const`: a name that is not a fuzz target fails the build.
    pub const fn of(folder: &str) -> Entry {
        match Entry::find(folder) {
            Some(e) => e,
            None => panic!("not a fuzz target of the registry (tpbconform::targets)"),
        }
    }

    pub fn folder(self) -> &'static str {
        match self {
            Entry::Validator(t, _) | Entry::Judge(t) => t.spec().folder,
            Entry::Bundle(set) => TARGETS[set.trailing_zeros() as usize % TARGETS.len()].folder,
        }
    }

    #[inline(always)]
    pub fn check(self, data: &[u8]) -> Result<(), String> {
        let (core, oracle) = registry::reference_pair_for(Generation::default());
        self.check_pair(&core, &oracle, data)
    }

    /// A lean entry's check of `left` against `right` (tests plant one); `Judge` runs its own.
    #[inline(always)]
    pub fn check_pair<L: Subject, R: Subject>(
        self,
        left: &L,
        right: &R,
        data: &[u8],
    ) -> Result<(), String> {
        match self {
            Entry::Validator(t, v) => match lean::validator_pair(left, right, t, v, data) {
                None => Ok(()),
                Some(d) => Err(lean_finding(&d, &d.head())),
            },
            Entry::Bundle(set) => {
                for t in Target::all().filter(|t| set & (1 << t.rank()) != 0) {
                    if let Some(d) = lean::bundle_pair(left, right, t, data) {
                        return Err(lean_finding(&d, &d));
                    }
                }
                Ok(())
            }
            Entry::Judge(t) => check_judged(t.spec().folder, data),
        }
    }

    /// [`Entry::check`], panicking with the report (the fuzz target body).
    #[inline(always)]
    pub fn run(self, data: &[u8]) {
        if let Err(f) = self.check(data) {
            panic!("[{}] {f}", self.folder());
        }
    }
}

/// A lean path's report: the divergence (whole or its head) and its replay command.
fn lean_finding(d: &Divergence, shown: &dyn fmt::Display) -> String {
    let replay =
        crate::triage::replay_command(&[], Generation::default(), d.target.name(), &d.input);
    format!("{shown}\n  replay: {replay}")
}

/// Runs fuzz target `name` on `data` as its binary does; `Err` on the first disagreement.
pub fn check(name: &str, data: &[u8]) -> Result<(), String> {
    match Entry::find(name) {
        Some(e) => e.check(data),
        None => check_judged(name, data),
    }
}

/// [`check`] through the [`Judge`] (`Err` too for an unknown name).
pub fn check_judged(name: &str, data: &[u8]) -> Result<(), String> {
    let targets = replay_targets(name);
    if targets.is_empty() {
        return Err(format!(
            "`{name}` is not a fuzz target (expected one of: {})",
            folders().join(", ")
        ));
    }
    let e = Judge::reference();
    for t in targets {
        match kinds::of(t).check_every_generation(&e, t, data) {
            Some((Some(arch), d)) => return Err(format!("[{arch}] {d}")),
            Some((None, d)) => return Err(d.to_string()),
            None => {}
        }
    }
    Ok(())
}

/// The registry targets an input of `name` runs through (the fuzz entry's and `replay
/// --target`'s): the folder's targets, else the target of that name; empty: neither.
pub fn replay_targets(name: &str) -> Vec<Target> {
    let v = folder_targets(name);
    if v.is_empty() {
        Target::from_name(name).into_iter().collect()
    } else {
        v
    }
}

/// The fuzz targets with no property (speed references, `scripts/fuzz_speed.sh`).
pub const BASELINES: [&str; 1] = ["baseline_empty"];

/// Every name `replay --target` takes: the fuzz targets, then the other registry targets.
pub fn replay_names() -> Vec<&'static str> {
    let mut v = folders();
    v.extend(BASELINES);
    for t in Target::all() {
        if !v.contains(&t.name()) {
            v.push(t.name());
        }
    }
    v
}

/// [`check`], panicking with the report (for fuzz targets).
pub fn run(name: &str, data: &[u8]) {
    if let Err(f) = check(name, data) {
        panic!("[{name}] {f}");
    }
}

/// `structured_diff`'s custom mutator (`fuzz_mutator!`) and crossover (`fuzz_crossover!`).
pub use crate::generators::mutate::{
    crossover as crossover_structured, mutate as mutate_structured,
};

/// The spec version the seed corpus must be generated for (`corpus/VERSION`).
pub const CORPUS_VERSION: &str = crate::SPEC_VERSION;

pub use crate::generators::fnv1a64;
