//! What a `lib:` subject's batch worker wrote into the region
//! ([`super::shm`]), as answers: [`ShmAnswer`], the [`ShmSink`] a chunk's
//! answers go to, and the decoding of the region's answer codes and texts
//! ([`collect`]). [`super::shm_client`] runs the
//! hand-offs.

use super::process::{Fault, FaultClass};
use super::shm::{self, Region};
use super::verdict;
use crate::subjects::{Name, Predicate, Verdict};

/// One entry's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ShmAnswer {
    /// A validator's verdict.
    Verdict(Verdict),
    /// A LUT's wire value.
    Wire(u32),
    /// A LUT refusal, its text interned ([`super::names::foreign`]).
    Refused(Name),
    /// `TPB_UNSUPPORTED`.
    Unsupported,
    /// A binary answer record (an [`shm::OP_RECORDS`] entry,
    /// [`super::record`]): the answer or the library's error text (whether
    /// it answers its request's operation is the caller's check).
    Record(Result<super::protocol::Answer, String>),
    /// No answer: crash, timeout, `TPB_ERROR`, or not sent.
    Fault(Fault),
}

/// Where a chunk's answers go, in order. Any `FnMut(ShmAnswer)` is one;
/// a sink that keeps the worker's compact codes (the judge's store) takes
/// the usual answers as they are in the region, untyped.
pub trait ShmSink {
    /// The next entry's answer.
    fn answer(&mut self, a: ShmAnswer);

    /// The next entry's answer when it is a validator's `tpb_verdict` id.
    #[inline]
    fn verdict_id(&mut self, id: u16) {
        self.answer(ShmAnswer::Verdict(verdict::verdict_of(id)));
    }

    /// The next entry's answer when it is a LUT's wire value.
    #[inline]
    fn wire(&mut self, w: u32) {
        self.answer(ShmAnswer::Wire(w));
    }

    /// The next entry's answer when it is a LUT refusal, its text interned.
    #[inline]
    fn refused(&mut self, n: &Name) {
        self.answer(ShmAnswer::Refused(n.clone()));
    }
}

impl<F: FnMut(ShmAnswer)> ShmSink for F {
    #[inline]
    fn answer(&mut self, a: ShmAnswer) {
        self(a);
    }
}

/// True if `a` is an answer the transport delivered (well-formed or not):
/// not a crash, hang, harness fault or request never sent.
pub fn delivered(a: &ShmAnswer) -> bool {
    !matches!(a, ShmAnswer::Fault(f) if f.class != FaultClass::Protocol)
}

/// A sink that counts the answers it passes on that were delivered
/// ([`delivered`]).
pub(super) struct Counted<'a, S: ShmSink> {
    pub(super) sink: &'a mut S,
    pub(super) n: u64,
}

impl<S: ShmSink> ShmSink for Counted<'_, S> {
    fn answer(&mut self, a: ShmAnswer) {
        self.n += u64::from(delivered(&a));
        self.sink.answer(a);
    }

    #[inline]
    fn verdict_id(&mut self, id: u16) {
        self.n += 1;
        self.sink.verdict_id(id);
    }

    #[inline]
    fn wire(&mut self, w: u32) {
        self.n += 1;
        self.sink.wire(w);
    }

    #[inline]
    fn refused(&mut self, n: &Name) {
        self.n += 1;
        self.sink.refused(n);
    }
}

/// Hands entries `range` of the region to `sink` in order, the usual
/// answers (a verdict id, a wire value) as the worker wrote them; true if
/// one of them was a good answer.
pub(super) fn collect(
    r: &mut Region,
    op: u32,
    range: std::ops::Range<usize>,
    sink: &mut impl ShmSink,
) -> bool {
    let mut good = false;
    let mut refusals = Refusals::default();
    let validator = matches!(op, shm::OP_VALIDATE_HEADER | shm::OP_VALIDATE_PAYLOAD);
    for i in range {
        let (code, value) = (r.codes()[i], r.values()[i]);
        if validator && code < shm::CODE_RESERVED {
            sink.verdict_id(code);
            good = true;
        } else if op == shm::OP_LUT && code == shm::CODE_WIRE {
            sink.wire(value);
            good = true;
        } else if let Some(n) = (op == shm::OP_LUT && code == shm::CODE_REFUSED)
            .then(|| refusals.get(value))
            .flatten()
        {
            // A refusal text already read in this hand-off.
            sink.refused(n);
            good = true;
        } else {
            let a = decode(r, op, i, code, value, &mut refusals);
            good |= !matches!(a, ShmAnswer::Fault(_));
            sink.answer(a);
        }
    }
    good
}

/// Refusals of one hand-off by arena offset: the worker writes each
/// distinct text once, so each is read and interned once per hand-off.
#[derive(Default)]
struct Refusals(Vec<(u32, Name)>);

impl Refusals {
    /// The refusal at arena offset `offset`, if read already.
    #[inline]
    fn get(&self, offset: u32) -> Option<&Name> {
        self.0.iter().find(|(o, _)| *o == offset).map(|(_, n)| n)
    }
}

/// A harness fault: the worker's own mistake, never the library's answer.
#[cold]
fn harness(detail: String) -> ShmAnswer {
    ShmAnswer::Fault(Fault {
        class: FaultClass::Harness,
        detail,
    })
}

/// Entry `i`'s answer (`code`, `value`) of `op`, typed.
fn decode(
    r: &mut Region,
    op: u32,
    i: usize,
    code: u16,
    value: u32,
    refusals: &mut Refusals,
) -> ShmAnswer {
    let text = |r: &mut Region| {
        r.text_at(value)
            .unwrap_or_else(|| "(text lost: the worker's text arena is full)".into())
    };
    match code {
        shm::CODE_UNSET => harness("harness fault: the worker left this entry unwritten".into()),
        shm::CODE_UNSUPPORTED => ShmAnswer::Unsupported,
        shm::CODE_ERROR => ShmAnswer::Fault(Fault {
            class: FaultClass::Protocol,
            detail: format!("the library answered an error: {}", text(r)),
        }),
        shm::CODE_RECORD if op == shm::OP_RECORDS => match r.answer_at(value) {
            Some((at, rec)) if at as usize == i => match super::record::get_answer(rec) {
                Ok(a) => ShmAnswer::Record(a),
                Err(e) => harness(format!("harness fault: entry {i}'s {e}")),
            },
            Some((at, _)) => harness(format!(
                "harness fault: entry {i}'s answer record holds entry {at}'s answer (out of place)"
            )),
            None => harness(format!("harness fault: entry {i}'s answer record is cut")),
        },
        _ if op == shm::OP_RECORDS => harness(format!(
            "harness fault: worker wrote code {code} for a record"
        )),
        shm::CODE_NAMED if op != shm::OP_LUT => {
            ShmAnswer::Verdict(Some(Predicate::from_name(&text(r))))
        }
        _ if op != shm::OP_LUT => ShmAnswer::Verdict(verdict::verdict_of(code)),
        shm::CODE_WIRE => ShmAnswer::Wire(value),
        shm::CODE_REFUSED => match refusals.get(value) {
            Some(n) => ShmAnswer::Refused(n.clone()),
            None => {
                let n = super::names::foreign(&text(r));
                if value != u32::MAX && refusals.0.len() < 64 {
                    refusals.0.push((value, n.clone()));
                }
                ShmAnswer::Refused(n)
            }
        },
        c => ShmAnswer::Fault(Fault {
            class: FaultClass::Protocol,
            detail: format!("worker wrote answer code {c}"),
        }),
    }
}
