//! The judge's one entry for a batch of cases ([`Judge::judge_batch`]): each case of one
//! target through every subject, its outcome reported once to the caller's [`Cases`].
//!
//! Bulk judging: a validator or LUT batch whose one subject under test answered it ahead and
//! vouches. Each case runs the reference pair only (core's answer and key kept); the subject
//! then vouches for every answer equal to core's (judged, agreeing); every other case is judged
//! on the subject alone, exactly as case by case. A case the reference pair disagreed on is
//! reported at once and not judged, as without bulk judging.

use super::divergence::{Divergence, Outcome};
use super::input_map::{bundle_from_input, ordinal_from_input};
use super::nway::{batch_of, Built, Judge};
use super::pair::{self, Pair};
use crate::kinds::lut::ordinal_case;
use crate::kinds::{self, CaseBuf, Form, Ran};
use crate::reach::Reach;
use crate::subjects::{Compact, IrQuery};
use crate::targets::{Check, Target};
use std::iter::StepBy;
use std::ops::Range;

/// A case [`Cases::case`] put in the judge's buffer, as `form`.
pub struct Step {
    pub form: Form,
    /// The subjects under test are judged on it (else the reference pair only).
    pub judged: bool,
    /// Its reach classes are counted.
    pub sampled: bool,
}

/// The caller's side of [`Judge::judge_batch`]: the cases, and where their outcomes go.
pub trait Cases {
    fn positions(&self) -> StepBy<Range<u32>>;
    /// Case `j` into `buf` (`None`: interrupted); `again`: asked a second time after a bulk
    /// vouch left it to be judged on its own (not a new case).
    fn case(&mut self, j: u32, buf: &mut CaseBuf, again: bool) -> Option<Step>;
    fn reach(&mut self) -> &mut Reach;
    /// Case `j`'s outcome (once per case), with its coverage key.
    fn judged(&mut self, j: u32, ran: Ran, key: &str);
}

#[inline]
fn outcome_of<T>(a: Result<T, Option<Divergence>>) -> Outcome {
    match a {
        Ok(_) | Err(None) => Outcome(Vec::new()),
        Err(Some(d)) => Outcome(vec![d]),
    }
}

/// Turns core's memo and judging back on when the batch ends (also on a panic).
struct Ended<'a>(&'a Judge);

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        self.0.recorder.pause_memo(false);
        self.0.judging.set(true);
    }
}

/// The cases of a bulk batch the subjects under test are judged on: operands and core's
/// answers ([`Compact::Other`]: the pair disagreed) for the vouch.
#[derive(Default)]
struct Held {
    bundles: Vec<[u8; 64]>,
    ords: Vec<u32>,
    reference: Vec<Compact>,
    /// Per case: its position (`None`: reported already), where its key ends in `keys`, and
    /// whether it was classified.
    cases: Vec<(Option<u32>, usize, bool)>,
    keys: String,
}

impl Judge {
    /// Compares the subjects on `target` with the raw `input`.
    pub fn compare(&self, target: Target, input: &[u8]) -> Outcome {
        kinds::of(target).compare(self, target, input)
    }

    /// [`Judge::compare`] on a LUT ordinal (its little-endian bytes).
    pub fn compare_lut(&self, target: Target, ordinal: u32) -> Outcome {
        self.compare(target, &ordinal.to_le_bytes())
    }

    /// The stream parsers on a raw byte stream, reported under the raw-stream target.
    pub fn compare_stream(&self, stream: &[u8]) -> Outcome {
        Target::by_check(Check::StreamRaw).map_or_else(Outcome::agree, |t| self.compare(t, stream))
    }

    /// One IR query, reported under the IR target with an empty input.
    pub fn compare_ir(&self, q: &IrQuery) -> Outcome {
        let t = Target::by_check(Check::Ir);
        t.map_or_else(Outcome::agree, |t| {
            kinds::ir_gate::compare_query(self, t, q, &[])
        })
    }

    /// Judges `cases` of `t` on every subject and reports each outcome once. `prefetched`:
    /// the subjects under test were handed the batch ahead, so it may be judged in bulk.
    pub fn judge_batch<C: Cases>(
        &self,
        t: Target,
        prefetched: bool,
        buf: &mut CaseBuf,
        cases: &mut C,
    ) {
        let _ended = Ended(self);
        let bulk = matches!(t.check(), Check::Validator(_) | Check::Lut(_)) && prefetched;
        if let Some(under) = bulk.then(|| self.bulk_subject(t)).flatten() {
            return self.judge_in_bulk(t, under, buf, cases);
        }
        let kind = kinds::of(t);
        for j in cases.positions() {
            let Some(c) = cases.case(j, buf, false) else {
                break;
            };
            self.judging.set(c.judged);
            self.recorder.reset();
            let reach = if c.sampled { Some(cases.reach()) } else { None };
            let built = buf.built.take();
            let staged = built.is_some();
            if staged {
                if let Some(Built::Stream(s)) = &built {
                    self.recorder.stage(Some(s));
                }
                self.built.replace(built);
            }
            let ran = kind.run(self, t, buf.input(c.form), reach);
            if staged {
                self.built.replace(None);
                self.recorder.stage(None);
            }
            self.report(cases, j, ran);
        }
    }

    /// What the case at hand's kind built for the subjects, when the caller kept it.
    pub fn built(&self) -> Option<Built> {
        self.built.borrow().clone()
    }

    #[inline(always)]
    fn report<C: Cases>(&self, cases: &mut C, j: u32, mut ran: Ran) {
        match ran.key.take() {
            Some(k) => cases.judged(j, ran, &k),
            None => self.recorder.with_key(|k| cases.judged(j, ran, k)),
        }
    }

    /// [`Judge::judge_batch`] in bulk (module docs), subject under test `under` vouching.
    fn judge_in_bulk<C: Cases>(&self, t: Target, under: usize, buf: &mut CaseBuf, cases: &mut C) {
        let kind = kinds::of(t);
        let mut held = Held::default();
        // No subject under test is judged case by case against core
        // meanwhile: core's memo would only cost.
        self.recorder.pause_memo(true);
        for j in cases.positions() {
            let Some(c) = cases.case(j, buf, false) else {
                break;
            };
            self.recorder.reset();
            let input = buf.input(c.form);
            let held_here = c.judged.then_some(&mut held);
            let (answer, outcome) = self.bulk_case(t, input, held_here, false);
            let classified = c.sampled && kind.record_reach(t, cases.reach(), input);
            if c.judged {
                held.reference.push(answer.unwrap_or(Compact::Other));
                let at = answer.map(|_| j);
                if at.is_some() {
                    self.recorder.with_key(|k| held.keys.push_str(k));
                }
                held.cases.push((at, held.keys.len(), classified));
                if at.is_some() {
                    continue;
                }
            }
            self.report(cases, j, Ran::recorded(outcome, classified));
        }
        self.recorder.pause_memo(false);
        let mut agreed = vec![false; held.cases.len()];
        let s = self.under_test().get(under).and_then(|s| s.transport());
        if let (Some(s), Some(b)) = (s, batch_of(t, &held.bundles, &held.ords)) {
            s.vouch(b, &held.reference, &mut agreed);
        }
        let vouched = held.cases.iter().zip(&agreed);
        let n = vouched.filter(|(p, ok)| p.0.is_some() && **ok).count();
        self.note_judged(under, t.rank(), n as u64);
        self.judging.set(true);
        let mut from = 0;
        for (&(at, key_end, classified), ok) in held.cases.iter().zip(&agreed) {
            let Some(j) = at else { continue };
            let key = &held.keys[from..key_end];
            from = key_end;
            if *ok {
                cases.judged(j, Ran::recorded(Outcome::agree(), classified), key);
                continue;
            }
            let Some(c) = cases.case(j, buf, true) else {
                break;
            };
            self.recorder.reset();
            let (_, outcome) = self.bulk_case(t, buf.input(c.form), None, true);
            self.report(cases, j, Ran::recorded(outcome, classified));
        }
    }

    /// A bulk case on the reference pair only: core's compact answer (`None`: the pair
    /// disagreed) and the outcome, the operand kept in `held`, given one; or, `alone`, on the
    /// subjects under test alone (the reference pair agreed on it).
    fn bulk_case(
        &self,
        t: Target,
        input: &[u8],
        held: Option<&mut Held>,
        alone: bool,
    ) -> (Option<Compact>, Outcome) {
        match t.check() {
            Check::Validator(v) => {
                // Reported as the bundle kind reports it.
                let b = bundle_from_input(input);
                let shown = if input.len() == 64 { input } else { &b[..] };
                if alone {
                    let judge = |p: &Pair<'_>| pair::validator(p, v, &b).err().flatten();
                    return (None, self.judge_under_test(t, shown, &String::new, &judge));
                }
                let p = self.reference_pair(t, shown, &String::new);
                let a = pair::validator(&p.as_subjects(), v, &b);
                if let Some(h) = held {
                    h.bundles.push(b);
                }
                (a.as_ref().ok().map(Compact::of_verdict), outcome_of(a))
            }
            Check::Lut(table) => {
                let ord = ordinal_from_input(input);
                let case = ordinal_case(ord);
                if alone {
                    let judge = |p: &Pair<'_>| pair::lut(p, table, ord).err().flatten();
                    return (None, self.judge_under_test(t, input, &case, &judge));
                }
                let p = self.reference_pair(t, input, &case);
                let a = pair::lut(&p.as_subjects(), table, ord);
                if let Some(h) = held {
                    h.ords.push(ord);
                }
                (a.as_ref().ok().map(Compact::of_lut), outcome_of(a))
            }
            _ => (None, Outcome::agree()),
        }
    }
}
