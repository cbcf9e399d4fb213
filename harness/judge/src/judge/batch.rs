//! The judge's one entry for a batch of cases ([`Judge::judge_batch`]):
//! each case of one target through every subject, its outcome reported
//! once to the caller's [`Cases`].
//!
//! Bulk judging, inside the entry: a validator or LUT batch whose one
//! subject under test answered it ahead ([`crate::subjects::Subject::prefetch`])
//! and vouches. Each case first runs the reference pair only; core's answer
//! and coverage key are kept. The whole batch then goes to the subject
//! ([`crate::subjects::Subject::vouch`]), which vouches for every answer
//! equal to core's: those cases count as judged and agreeing. Every other
//! case (a different answer, a fault, an answer not held) is judged on the
//! subject under test alone, exactly as it would have been case by case. A
//! case the reference pair disagreed on is reported at once, and the
//! subject is not judged on it, as without bulk judging.

use super::bulk::{Held, Mode};
use super::divergence::{Divergence, Outcome};
use super::nway::Judge;
use super::pair::{self, Pair};
use crate::kinds::{self, CaseBuf, Form, Ran};
use crate::reach::Reach;
use crate::subjects::{Batch, Compact, LutTable, Validator};
use crate::targets::{Check, Target};

/// What [`Cases::case`] hands the judge.
pub enum Step {
    /// The case, in the judge's buffer as `form`; `judged`: the subjects
    /// under test are judged on it (else the reference pair only);
    /// `sampled`: its reach classes are counted into [`Cases::reach`].
    Case {
        form: Form,
        judged: bool,
        sampled: bool,
    },
    Skip,
    Stop,
}

/// The caller's side of [`Judge::judge_batch`]: the cases, and where their
/// outcomes go.
pub trait Cases {
    /// Positions in the batch.
    fn positions(&self) -> u32;
    /// Case `j` into `buf`; `again`: asked a second time, after a bulk
    /// vouch left it to be judged on its own (not a new case).
    fn case(&mut self, j: u32, buf: &mut CaseBuf, again: bool) -> Step;
    /// Where sampled cases' reach classes are counted.
    fn reach(&mut self) -> &mut Reach;
    /// Case `j`'s outcome (once per case), with its coverage key (the
    /// kind's own, else core's recorded verdict, [`super::record`]).
    fn judged(&mut self, j: u32, ran: Ran, key: &str);
}

/// The outcome of a reference comparison that gave `a` (no list built
/// when the pair agreed: the usual case).
#[inline]
fn outcome_of<T>(a: Result<T, Option<Divergence>>) -> Outcome {
    match a {
        Ok(_) | Err(None) => Outcome(Vec::new()),
        Err(Some(d)) => Outcome(vec![d]),
    }
}

/// Turns bulk judging off and judging on when the batch ends (also when a
/// case panics).
struct Ended<'a>(&'a Judge);

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        self.0.set_mode(Mode::Off);
        self.0.judging.set(true);
    }
}

impl Judge {
    /// Compares the subjects on `target` with the raw `input` (its kind's
    /// [`crate::kinds::TargetKind::compare`]).
    pub fn compare(&self, target: Target, input: &[u8]) -> Outcome {
        kinds::of(target).compare(self, target, input)
    }

    /// Judges the cases of `cases`, of target `t`, on every subject (its
    /// kind's [`crate::kinds::TargetKind::run`]) and reports each one's
    /// outcome once, to [`Cases::judged`]. `prefetched`: the subjects under
    /// test were handed the batch ahead ([`Judge::prefetch`]), so a
    /// validator or LUT batch may be judged in bulk (see the module docs;
    /// its cases are then reported after the whole batch ran).
    pub fn judge_batch<C: Cases>(
        &self,
        t: Target,
        prefetched: bool,
        buf: &mut CaseBuf,
        cases: &mut C,
    ) {
        let kind = kinds::of(t);
        let _ended = Ended(self);
        let bulk = prefetched && self.defer_begin(t);
        for j in 0..cases.positions() {
            let (form, judged, sampled) = match cases.case(j, buf, false) {
                Step::Case {
                    form,
                    judged,
                    sampled,
                } => (form, judged, sampled),
                Step::Skip => continue,
                Step::Stop => break,
            };
            self.judging.set(judged);
            self.deferred.token.set(j);
            self.reset_key();
            let reach = if sampled { Some(cases.reach()) } else { None };
            let ran = kind.run(self, t, buf.input(form), reach);
            if bulk && self.hold(ran.classified) {
                continue;
            }
            self.report(cases, j, ran);
        }
        if bulk {
            self.settle(t, buf, cases);
        }
    }

    /// After a deferred case ran: true if it was held for the vouch (its
    /// coverage key and `classified` kept); false if it is reported now.
    #[inline]
    fn hold(&self, classified: bool) -> bool {
        let mut d = self.deferred.cases.borrow_mut();
        let d = &mut *d;
        let (n, seen) = (d.cases.len(), self.deferred.seen.get());
        if n == seen {
            return false;
        }
        self.deferred.seen.set(n);
        let Some(p) = d.cases.last_mut() else {
            return false;
        };
        p.classified = classified;
        if p.at.is_some() {
            self.with_key(|k| d.keys.push_str(k));
            p.key_end = d.keys.len();
        }
        p.at.is_some()
    }

    /// Forgets core's recorded key (before a case).
    #[inline]
    fn reset_key(&self) {
        if let Some(k) = &self.recorder {
            k.reset();
        }
    }

    /// `f` on core's recorded coverage key (`"-"`: none).
    #[inline]
    fn with_key<T>(&self, f: impl FnOnce(&str) -> T) -> T {
        match &self.recorder {
            Some(k) => k.with_key(f),
            None => f("-"),
        }
    }

    /// Reports case `j`'s `ran` with its coverage key.
    #[inline]
    fn report<C: Cases>(&self, cases: &mut C, j: u32, mut ran: Ran) {
        match ran.key.take() {
            Some(k) => cases.judged(j, ran, &k),
            None => self.with_key(|k| cases.judged(j, ran, k)),
        }
    }

    /// Sets the bulk mode, pausing core's memo exactly while deferring (no
    /// subject under test is judged case by case against core then).
    #[inline]
    fn set_mode(&self, m: Mode) {
        self.deferred.mode.set(m);
        if let Some(k) = &self.recorder {
            k.pause_memo(m == Mode::Deferring);
        }
    }

    /// Starts deferring target `t`'s cases: true if it did. Only for a
    /// validator or LUT target that exactly one subject under test
    /// supports, and only if that subject vouches and is not given up.
    fn defer_begin(&self, t: Target) -> bool {
        if !matches!(t.check(), Check::Validator(_) | Check::Lut(_)) {
            return false;
        }
        let Some(k) = self.bulk_subject(t) else {
            return false;
        };
        self.deferred.cases.borrow_mut().reset(k);
        self.deferred.seen.set(0);
        self.set_mode(Mode::Deferring);
        true
    }

    /// Ends deferring: the subject under test vouches for the answers equal
    /// to core's (reported agreeing, counted as judged); every other held
    /// case is asked of `cases` again and judged on the subjects under test
    /// alone.
    fn settle<C: Cases>(&self, t: Target, buf: &mut CaseBuf, cases: &mut C) {
        self.set_mode(Mode::Off);
        let mut d = std::mem::take(&mut *self.deferred.cases.borrow_mut());
        let Held {
            under,
            bundles,
            ords,
            reference,
            cases: held,
            agreed,
            ..
        } = &mut d;
        agreed.clear();
        agreed.resize(held.len(), false);
        if let Some(s) = self.under_test().get(*under).and_then(|s| s.transport()) {
            let table: [LutTable; 1];
            let batch = match t.check() {
                Check::Validator(v) => Some(Batch::Validate(v, bundles)),
                Check::Lut(x) => {
                    table = [x];
                    Some(Batch::Lut(&table, ords))
                }
                _ => None,
            };
            if let Some(b) = batch {
                s.vouch(b, reference, agreed);
            }
        }
        let vouched = d.cases.iter().zip(&d.agreed);
        let n = vouched.filter(|(p, ok)| p.at.is_some() && **ok).count();
        self.note_judged_in(d.under, t.rank(), n as u64);
        let kind = kinds::of(t);
        let mut from = 0;
        let mut replaying = false;
        for (p, ok) in d.cases.iter().zip(&d.agreed) {
            let Some(j) = p.at else { continue };
            let key = &d.keys[from..p.key_end];
            from = p.key_end;
            if *ok {
                let ran = Ran {
                    outcome: Outcome::agree(),
                    key: None,
                    classified: p.classified,
                };
                cases.judged(j, ran, key);
                continue;
            }
            let form = match cases.case(j, buf, true) {
                Step::Case { form, .. } => form,
                Step::Skip => continue,
                Step::Stop => break,
            };
            if !replaying {
                replaying = true;
                self.set_mode(Mode::Replaying);
                self.judging.set(true);
            }
            self.reset_key();
            let mut ran = kind.run(self, t, buf.input(form), None);
            ran.classified = p.classified;
            self.report(cases, j, ran);
        }
        // The buffers back for the next batch.
        *self.deferred.cases.borrow_mut() = d;
    }

    /// True while cases are deferred or replayed.
    #[inline]
    pub(super) fn in_bulk(&self) -> bool {
        self.deferred.mode.get() != Mode::Off
    }

    /// Validator `v` on `b` while bulk judging.
    pub(super) fn validator_in_bulk(
        &self,
        t: Target,
        v: Validator,
        b: &[u8; 64],
        input: &[u8],
    ) -> Outcome {
        let (case, judge) = (String::new, |p: &Pair<'_>| pair::validator(p, v, b));
        self.bulk_case(t, input, &case, &judge, |p| {
            let a = pair::validator_agreed(p, v, b);
            (a.as_ref().ok().map(Compact::of_verdict), outcome_of(a))
        })
        .inspect_held(|d| d.bundles.push(*b))
    }

    /// LUT `table` at `ord` while bulk judging.
    pub(super) fn lut_in_bulk(
        &self,
        t: Target,
        table: LutTable,
        ord: u32,
        input: &[u8],
    ) -> Outcome {
        let case = || format!("ordinal {ord} ({ord:#x})");
        let judge = |p: &Pair<'_>| pair::lut(p, table, ord);
        self.bulk_case(t, input, &case, &judge, |p| {
            let a = pair::lut_agreed(p, table, ord);
            (a.as_ref().ok().map(Compact::of_lut), outcome_of(a))
        })
        .inspect_held(|d| d.ords.push(ord))
    }

    /// One case while bulk judging: replaying, `judge` on the subjects under
    /// test alone; deferring, `reference` on the reference pair (core's
    /// compact answer, the outcome), core's answer held when the subjects
    /// are judged on the case.
    fn bulk_case<'a>(
        &'a self,
        t: Target,
        input: &[u8],
        case: &dyn Fn() -> String,
        judge: &dyn Fn(&Pair<'_>) -> Option<Divergence>,
        reference: impl FnOnce(&Pair<'_>) -> (Option<Compact>, Outcome),
    ) -> InBulk<'a> {
        if self.deferred.mode.get() == Mode::Replaying {
            return InBulk(self.judge_under_test(t, input, case, judge), None);
        }
        let (answer, outcome) = reference(&self.reference_pair(t, input, case).as_subjects());
        if !self.judging.get() {
            return InBulk(outcome, None);
        }
        let mut d = self.deferred.cases.borrow_mut();
        d.push(answer, self.deferred.token.get());
        InBulk(outcome, Some(d))
    }
}

/// A case's outcome while bulk judging, with the batch it was held in.
struct InBulk<'a>(Outcome, Option<std::cell::RefMut<'a, Held>>);

impl InBulk<'_> {
    /// `keep` the case's operand in the batch it was held in; the outcome.
    #[inline]
    fn inspect_held(self, keep: impl FnOnce(&mut Held)) -> Outcome {
        if let Some(mut d) = self.1 {
            keep(&mut d);
        }
        self.0
    }
}
