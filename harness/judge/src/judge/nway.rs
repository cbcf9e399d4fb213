//! [`Judge`]: the reference pair and the subjects under test (their judged and not-run
//! counts), prefetching, and [`Judge::each`]: one case through the reference pair, then each
//! subject under test against core.

use super::cohort;
use super::divergence::{Divergence, Outcome};
use super::input_map::{bundle_from_input, ordinal_from_input};
use super::pair::{Pair, ReferencePair};
use super::record;
use crate::generation::Generation;
use crate::subjects::registry::{self, OpenError, SubjectSpec};
use crate::subjects::{
    Batch, Capabilities, Capability, IrInstruction, LutTable, Reference, Subject, Transport,
};
use crate::targets::{Check, Target, TARGETS};
use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// The slot of [`Judge::judged`] counting the vector checks (after one per target, by rank).
pub const VECTORS_SLOT: usize = TARGETS.len();

pub const JUDGED_SLOTS: usize = VECTORS_SLOT + 1;

/// The batch of `t`'s cases: `bundles` for a bundle target, `ords` for a LUT target.
pub fn batch_of<'a>(t: Target, bundles: &'a [[u8; 64]], ords: &'a [u32]) -> Option<Batch<'a>> {
    let tables: &'static [LutTable] = &LutTable::ALL;
    Some(match t.check() {
        Check::Validator(v) => Batch::Validate(v, bundles),
        Check::Decode => Batch::Decode(bundles),
        Check::Roundtrip => Batch::Roundtrip(bundles),
        Check::Lut(x) => Batch::Lut(
            std::slice::from_ref(tables.iter().find(|a| **a == x)?),
            ords,
        ),
        _ => return None,
    })
}

/// The subjects of a comparison: the reference pair, then the subjects under test.
pub struct Judge {
    pair: [Box<dyn Reference>; 2],
    tested: Vec<Box<dyn Subject>>,
    /// Whether the subjects under test are judged on the case at hand.
    pub(super) judging: Cell<bool>,
    under: Vec<UnderTest>,
    arch: Generation,
    /// Core's coverage recorder's key (records nothing unless the judge wraps core in one).
    pub(super) recorder: record::RecordKey,
    /// What the case at hand's kind built for the subjects ([`crate::kinds::CaseBuf::built`]).
    pub(super) built: RefCell<Option<Built>>,
}

/// What the cases of a batch ask the subjects, one each (built by the target's kind).
pub enum CaseInputs {
    Streams(Vec<Arc<Vec<u8>>>),
    Modules(Vec<Arc<Vec<IrInstruction>>>),
}

/// One case of [`CaseInputs`]: what its kind built from its input.
#[derive(Clone, Debug)]
pub enum Built {
    Stream(Arc<Vec<u8>>),
    Module(Arc<Vec<IrInstruction>>),
}

impl CaseInputs {
    pub fn get(&self, k: usize) -> Option<Built> {
        match self {
            CaseInputs::Streams(ss) => ss.get(k).cloned().map(Built::Stream),
            CaseInputs::Modules(ms) => ms.get(k).cloned().map(Built::Module),
        }
    }

    pub fn batch(&self) -> Batch<'_> {
        match self {
            CaseInputs::Streams(ss) => Batch::Streams(ss),
            CaseInputs::Modules(ms) => Batch::Lower(ms),
        }
    }
}

struct UnderTest {
    /// Read once: fixed when the subject is opened, so the per-case loop need not ask.
    caps: Capabilities,
    judged: [Cell<u64>; JUDGED_SLOTS],
    /// Per operation ([`Capability::ALL`] order): cases not run since it was given up on it.
    not_run: [Cell<u64>; Capability::ALL.len()],
}

impl UnderTest {
    #[inline]
    fn note_judged(&self, slot: usize, n: u64) {
        if let Some(c) = self.judged.get(slot) {
            c.set(c.get().saturating_add(n));
        }
    }

    #[cold]
    fn note_not_run(&self, op: Capability) {
        if let Some(c) = op_slot(op).and_then(|i| self.not_run.get(i)) {
            c.set(c.get() + 1);
        }
    }
}

fn op_slot(op: Capability) -> Option<usize> {
    Capability::ALL.iter().position(|c| *c == op)
}

/// Cases a subject under test was not asked since it was given up on one operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotRun {
    pub subject: String,
    /// The operation given up (a LUT: its table).
    pub op: Capability,
    pub why: String,
    pub cases: u64,
}

impl Judge {
    /// core vs oracle.
    pub fn reference() -> Judge {
        Judge::new(registry::core(), registry::oracle(), Vec::new())
    }

    /// A reference (left of the pair), its second reading (right) and subjects under test.
    pub fn new(
        reference: Box<dyn Reference>,
        second: Box<dyn Reference>,
        under_test: Vec<Box<dyn Subject>>,
    ) -> Judge {
        let under = under_test
            .iter()
            .map(|s| UnderTest {
                caps: s.capabilities(),
                judged: std::array::from_fn(|_| Cell::new(0)),
                not_run: std::array::from_fn(|_| Cell::new(0)),
            })
            .collect();
        Judge {
            pair: [reference, second],
            tested: under_test,
            judging: Cell::new(true),
            under,
            arch: Generation::default(),
            recorder: record::RecordKey::default(),
            built: RefCell::new(None),
        }
    }

    /// core vs oracle plus the subjects `specs`, each serving `arch`.
    pub fn open(specs: &[SubjectSpec], arch: Generation) -> Result<Judge, OpenError> {
        let mut each = Judge::open_each(specs, &[arch])?;
        Ok(each.pop().unwrap_or_else(|| Judge::of(arch, Vec::new())))
    }

    /// [`Judge::open`] for each of `arches`; all their subjects start at once.
    pub fn open_each(
        specs: &[SubjectSpec],
        arches: &[Generation],
    ) -> Result<Vec<Judge>, OpenError> {
        let opened = registry::open_each(specs, arches)?;
        Ok(arches
            .iter()
            .zip(opened)
            .map(|(&arch, others)| Judge::of(arch, others))
            .collect())
    }

    fn of(arch: Generation, others: Vec<Box<dyn Subject>>) -> Judge {
        let mut e = Judge::new(registry::core_for(arch), registry::oracle_for(arch), others);
        e.arch = arch;
        e
    }

    /// The judge with core wrapped in a coverage [`record::Recorder`], and its key.
    pub fn recorded(mut self) -> (Judge, record::RecordKey) {
        // Core answers twice per case only when a subject under test is
        // judged against it: only then is its last answer kept.
        let memo = !self.under_test().is_empty();
        let (rec, key) = record::Recorder::new(registry::core_for(self.arch), memo);
        self.pair[0] = Box::new(rec);
        self.recorder = key.clone();
        (self, key)
    }

    pub fn arch(&self) -> Generation {
        self.arch
    }

    /// Every subject: the reference pair first.
    pub fn subjects(&self) -> Vec<&dyn Subject> {
        let pair = self.pair.iter().map(|s| &**s as &dyn Subject);
        pair.chain(self.tested.iter().map(|s| &**s)).collect()
    }

    pub fn references(&self) -> (&dyn Reference, &dyn Reference) {
        (&*self.pair[0], &*self.pair[1])
    }

    pub fn under_test(&self) -> &[Box<dyn Subject>] {
        &self.tested
    }

    pub fn note_judged(&self, k: usize, slot: usize, n: u64) {
        if let Some(u) = self.under.get(k) {
            u.note_judged(slot, n);
        }
    }

    /// The one subject under test that supports `t`, if exactly one does, vouches, and is
    /// not given up.
    pub(super) fn bulk_subject(&self, t: Target) -> Option<usize> {
        let needs = t.spec().needs;
        let mut covering = self
            .under_test_with()
            .enumerate()
            .filter(|(_, (_, u))| u.caps.covers(needs));
        let (k, (s, _)) = covering.next()?;
        (covering.next().is_none() && s.transport().is_some() && s.given_up(needs).is_none())
            .then_some(k)
    }

    fn under_test_with(&self) -> impl Iterator<Item = (&dyn Subject, &UnderTest)> {
        self.under_test().iter().map(|s| &**s).zip(&self.under)
    }

    /// Per subject under test, per slot (targets by rank, then [`VECTORS_SLOT`]): the cases
    /// it was judged on.
    pub fn judged(&self) -> Vec<Vec<u64>> {
        self.under
            .iter()
            .map(|u| u.judged.iter().map(Cell::get).collect())
            .collect()
    }

    /// Lets each subject under test that supports `t` answer `batch` ahead of the per-case
    /// comparisons ([`Transport::prefetch`]); `tick` is called as answers arrive.
    pub fn prefetch(&self, t: Target, batch: Option<Batch<'_>>, tick: &dyn Fn()) {
        if let Some(b) = batch {
            self.prefetching(t).for_each(|s| s.prefetch(b, tick));
        }
    }

    /// Announces the [`Judge::prefetch`] that follows ([`Transport::prefetch_begin`]).
    pub fn prefetch_begin(&self, t: Target, batch: Option<Batch<'_>>) {
        if let Some(b) = batch {
            self.prefetching(t).for_each(|s| s.prefetch_begin(b));
        }
    }

    /// [`Judge::prefetch`] on raw inputs (corpus files) of a bundle or LUT target.
    pub fn prefetch_inputs<'a>(&self, t: Target, inputs: impl Iterator<Item = &'a [u8]>) {
        if self.under_test().is_empty() {
            return;
        }
        if matches!(t.check(), Check::Lut(_)) {
            let ords: Vec<u32> = inputs.map(ordinal_from_input).collect();
            self.prefetch(t, batch_of(t, &[], &ords), &|| {});
        } else if t.is_bundle() {
            let bundles: Vec<[u8; 64]> = inputs.map(bundle_from_input).collect();
            self.prefetch(t, batch_of(t, &bundles, &[]), &|| {});
        }
    }

    /// The transports a prefetch of `t` goes to: supporting it and not given up.
    pub fn prefetching(&self, t: Target) -> impl Iterator<Item = &dyn Transport> {
        let needs = t.spec().needs;
        self.under_test_with()
            .filter(move |(_, u)| u.caps.covers(needs))
            .filter_map(|(s, _)| s.transport())
            .filter(move |x| x.given_up(needs).is_none())
    }

    /// Per subject under test and operation it was given up on: why, and the cases not run
    /// since (the gate fails on them).
    pub fn not_run(&self) -> Vec<NotRun> {
        let mut out = Vec::new();
        for (s, u) in self.under_test_with() {
            for op in u.caps.iter() {
                if let Some(g) = s.given_up(Capabilities::of(&[op])) {
                    let cases = op_slot(op)
                        .and_then(|i| u.not_run.get(i))
                        .map_or(0, Cell::get);
                    out.push(NotRun {
                        subject: s.name().to_string(),
                        op,
                        why: g.why,
                        cases,
                    });
                }
            }
        }
        out
    }

    /// The subjects under test that cannot run `t`, with what they lack.
    pub fn unsupported(&self, t: Target) -> Vec<(String, Capabilities)> {
        self.under_test_with()
            .filter(|(_, u)| !u.caps.covers(t.spec().needs))
            .map(|(s, u)| (s.name().to_string(), u.caps.missing(t.spec().needs)))
            .collect()
    }

    /// Runs `f` on the reference pair, then (if it agrees) on each subject under test that
    /// supports `t`, against core.
    #[inline]
    pub fn each(
        &self,
        t: Target,
        input: &[u8],
        case: &dyn Fn() -> String,
        f: impl Fn(&Pair<'_>) -> Option<Divergence>,
    ) -> Outcome {
        self.each_with(t, input, case, |p| f(&p.as_subjects()), &f)
    }

    /// The subjects under test judged on the next case of `t`, each counted as judged (one
    /// given up: as not run). Lazy: the hot path builds no list.
    pub fn judged_on(&self, t: Target) -> impl Iterator<Item = &dyn Subject> {
        let needs = t.spec().needs;
        let on = self.judging.get();
        self.under_test_with()
            .filter(move |(_, u)| on && u.caps.covers(needs))
            .filter_map(move |(x, u)| match x.given_up(needs) {
                Some(g) => {
                    u.note_not_run(g.op);
                    None
                }
                None => {
                    u.note_judged(t.rank(), 1);
                    Some(x)
                }
            })
    }

    /// [`Judge::each`] with another comparison (`judge`) for the subjects under test.
    #[inline]
    pub fn each_with(
        &self,
        t: Target,
        input: &[u8],
        case: &dyn Fn() -> String,
        reference: impl Fn(&ReferencePair<'_>) -> Option<Divergence>,
        judge: &dyn Fn(&Pair<'_>) -> Option<Divergence>,
    ) -> Outcome {
        let p = self.reference_pair(t, input, case);
        if let Some(d) = reference(&p) {
            return Outcome(vec![d]);
        }
        if self.under.is_empty() {
            // No subject under test (the gate without `--subject`).
            return Outcome(Vec::new());
        }
        self.judge_under_test(t, input, case, judge)
    }

    #[inline]
    pub fn reference_pair<'a>(
        &'a self,
        t: Target,
        input: &'a [u8],
        case: &'a dyn Fn() -> String,
    ) -> ReferencePair<'a> {
        Pair {
            left: &*self.pair[0],
            right: &*self.pair[1],
            target: t,
            input,
            case,
        }
    }

    /// Each subject under test that supports `t` against core (the reference pair agreed).
    pub(super) fn judge_under_test(
        &self,
        t: Target,
        input: &[u8],
        case: &dyn Fn() -> String,
        judge: &dyn Fn(&Pair<'_>) -> Option<Divergence>,
    ) -> Outcome {
        // Each subject under test takes the left side.
        let core: &dyn Subject = &*self.pair[0];
        let mut p = Pair {
            left: core,
            right: core,
            target: t,
            input,
            case,
        };
        let mut out: Vec<Divergence> = Vec::new();
        let mut judged = 0usize;
        for x in self.judged_on(t) {
            judged += 1;
            p.left = x;
            if let Some(d) = judge(&p) {
                out.push(d);
            }
        }
        if judged >= 2 && !out.is_empty() {
            self.add_cohorts(t, &mut out);
        }
        Outcome(out)
    }

    /// Sets the [`cohort`]s of a divergent input on each of its divergences.
    fn add_cohorts(&self, t: Target, out: &mut [Divergence]) {
        let judged: Vec<&str> = self
            .under_test_with()
            .filter(|(x, u)| {
                // Given up before this input: not asked; during it: judged.
                let needs = t.spec().needs;
                u.caps.covers(needs)
                    && (x.given_up(needs).is_none() || out.iter().any(|d| d.left_name == x.name()))
            })
            .map(|(x, _)| x.name())
            .collect();
        let names = [self.pair[0].name(), self.pair[1].name()];
        let cs = cohort::cohorts(names, &judged, out);
        for d in out.iter_mut() {
            d.cohorts.clone_from(&cs);
        }
    }
}
