//! Bulk judging: the gate's generated cases of a validator or LUT target
//! whose one subject under test answered them ahead, in a batch
//! ([`crate::subjects::Subject::prefetch`]).
//!
//! While deferring ([`Judge::defer_begin`]), each case runs only the
//! reference pair; core's answer is kept. [`Judge::settle`] then hands the
//! whole batch to the subject ([`crate::subjects::Subject::vouch`]), which
//! vouches for every answer equal to core's: those cases count as judged
//! and agreeing. Every other case (a different answer, a fault, an answer
//! not held) is returned to the caller, which runs it again in replay mode
//! ([`Judge::set_replaying`]): the subject under test alone is judged on
//! it, exactly as it would have been case by case. A case the reference
//! pair disagreed on is not judged, as without bulk judging.

use super::bulk_state::{Deferred, Mode};
use super::divergence::{Divergence, Outcome};
use super::nway::Judge;
use super::pair;
use crate::subjects::{Batch, Compact, LutTable, Validator};
use crate::targets::{Check, Target};

/// The outcome of a reference comparison that gave `a` (no list built
/// when the pair agreed: the usual case).
#[inline]
fn outcome_of<T>(a: Result<T, Option<Divergence>>) -> Outcome {
    match a {
        Ok(_) | Err(None) => Outcome(Vec::new()),
        Err(Some(d)) => Outcome(vec![d]),
    }
}

impl Judge {
    /// Starts bulk judging of target `t`'s next cases, until
    /// [`Judge::settle`]: true if it did. Only for a validator or LUT target
    /// that exactly one subject under test supports, and only if that
    /// subject vouches ([`crate::subjects::Subject::vouches`]) and is not
    /// given up. Call it after the batch's prefetch.
    pub fn defer_begin(&self, t: Target) -> bool {
        self.bulk.set_mode(Mode::Off);
        if !matches!(t.check(), Check::Validator(_) | Check::Lut(_)) {
            return false;
        }
        let Some(k) = self.bulk_subject(t) else {
            return false;
        };
        let mut d = self.bulk.cases.borrow_mut();
        d.under = k;
        d.target = Some(t);
        d.bundles.clear();
        d.ords.clear();
        d.reference.clear();
        d.tokens.clear();
        self.bulk.set_mode(Mode::Deferring);
        true
    }

    /// The token [`Judge::settle`] returns for the next case if that case
    /// has to be judged again (the gate's position of the case in its chunk).
    #[inline]
    pub fn set_case_token(&self, token: u32) {
        self.bulk.token.set(token);
    }

    /// Ends deferring: the subject under test vouches for the answers equal
    /// to core's (counted as judged), and the tokens of the cases it did not
    /// vouch for are appended to `replay`, in order. Run each of those again
    /// with [`Judge::set_replaying`] on. Nothing when not deferring.
    pub fn settle(&self, replay: &mut Vec<u32>) {
        if self.bulk.mode.get() != Mode::Deferring {
            return;
        }
        self.bulk.set_mode(Mode::Off);
        let mut d = self.bulk.cases.borrow_mut();
        let Deferred {
            under,
            target,
            bundles,
            ords,
            reference,
            tokens,
            agreed,
        } = &mut *d;
        let Some(t) = *target else { return };
        agreed.clear();
        agreed.resize(tokens.len(), false);
        if let Some(s) = self.under_test().get(*under) {
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
        let mut vouched = 0u64;
        for (tok, ok) in tokens.iter().zip(agreed.iter()) {
            match tok {
                None => {}
                Some(_) if *ok => vouched += 1,
                Some(tok) => replay.push(*tok),
            }
        }
        self.note_judged_times_in(*under, t.rank(), vouched);
    }

    /// Turns replay mode on or off: the following validator and LUT cases
    /// judge the subjects under test only (see the module docs).
    pub fn set_replaying(&self, on: bool) {
        self.bulk
            .set_mode(if on { Mode::Replaying } else { Mode::Off });
    }

    /// Ends bulk judging without settling: every following case is judged
    /// on its own (a chunk cut short; no-op otherwise).
    pub fn end_bulk(&self) {
        self.bulk.set_mode(Mode::Off);
    }

    /// Validator `v` on `b` while bulk judging.
    pub(super) fn validator_in_bulk(
        &self,
        t: Target,
        v: Validator,
        b: &[u8; 64],
        input: &[u8],
    ) -> Outcome {
        let case = String::new;
        if self.bulk.mode.get() == Mode::Replaying {
            return self.judge_under_test(t, input, &case, &|p| pair::validator(p, v, b));
        }
        let p = self.reference_pair(t, input, &case);
        let a = pair::validator_agreed(&p, v, b);
        if self.judging() {
            let mut d = self.bulk.cases.borrow_mut();
            d.bundles.push(*b);
            d.push(
                a.as_ref().ok().map(Compact::of_verdict),
                self.bulk.token.get(),
            );
        }
        outcome_of(a)
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
        if self.bulk.mode.get() == Mode::Replaying {
            return self.judge_under_test(t, input, &case, &|p| pair::lut(p, table, ord));
        }
        let p = self.reference_pair(t, input, &case);
        let a = pair::lut_agreed(&p, table, ord);
        if self.judging() {
            let mut d = self.bulk.cases.borrow_mut();
            d.ords.push(ord);
            d.push(a.as_ref().ok().map(Compact::of_lut), self.bulk.token.get());
        }
        outcome_of(a)
    }
}
