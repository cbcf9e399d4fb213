//! [`Recorder`]: a transparent [`Subject`] wrapper (same results, name, capabilities) that
//! remembers the verdict of the first call after [`RecordKey::reset`] as the gate's coverage
//! key, in a reused `String` (no allocation once grown). It wraps core, a pure function of its
//! input. With `memo`, core's last validator and LUT answer are kept in a `Copy` form in `Cell`s
//! (a fault or unknown name is not), so a subject under test judged against core on the same
//! case does not make core answer twice. A staged stream ([`RecordKey::stage`]) keeps core's
//! verdict from its parse for its `validate_stream`; the slot holds the stream itself, so its
//! address is a sound key.

use super::divergence::Class;
use crate::layout::same_bundle;
use crate::subjects::{
    module_answer, stream_verdict, verdict_name, Capabilities, DecodeFail, Decoded, EncodeResult,
    FieldName, IrAnswer, IrInstruction, IrQuery, LutResult, LutTable, ModuleAnswer, Name,
    Predicate, Reference, Reply, Route, StreamFail, StreamResult, Subject, Validator, Value,
    Verdict,
};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

#[derive(Debug, Default)]
struct Slot {
    key: RefCell<String>,
    set: Cell<bool>,
    fault: Cell<bool>,
    memo_paused: Cell<bool>,
    staged: RefCell<Option<StagedStream>>,
}

type StagedStream = (Arc<Vec<u8>>, Option<Result<(), StreamFail>>);

/// Whether `bytes` is the staged stream itself (its memory, not a copy).
fn is_staged(s: &StagedStream, bytes: &[u8]) -> bool {
    std::ptr::eq(s.0.as_slice(), bytes)
}

/// The caller's handle on what a [`Recorder`] recorded (the default one: nothing, `"-"`).
#[derive(Clone, Debug, Default)]
pub struct RecordKey(Rc<Slot>);

impl RecordKey {
    /// Fault injection (gate test hook): the next call of the recorded subject panics.
    pub fn arm_fault(&self) {
        self.0.fault.set(true);
    }

    /// Stops keeping the memo (`true`: bulk judging, where it would only cost) or keeps it.
    #[inline]
    pub fn pause_memo(&self, paused: bool) {
        self.0.memo_paused.set(paused);
    }

    #[inline]
    pub fn reset(&self) {
        self.0.set.set(false);
        self.0.key.borrow_mut().clear();
    }

    /// The stream the case at hand staged for the subjects (`None` once judged).
    pub fn stage(&self, stream: Option<&Arc<Vec<u8>>>) {
        self.0.staged.replace(stream.map(|s| (Arc::clone(s), None)));
    }

    /// The key recorded since the last reset (`"-"` if none).
    pub fn with_key<T>(&self, f: impl FnOnce(&str) -> T) -> T {
        let k = self.0.key.borrow();
        if k.is_empty() {
            f("-")
        } else {
            f(&k)
        }
    }
}

pub struct Recorder {
    inner: Box<dyn Reference>,
    slot: Rc<Slot>,
    memo: bool,
    last_bundle: Cell<[u8; 64]>,
    last_verdict: Cell<Option<LastVerdict>>,
    last_lut: Cell<Option<LastLut>>,
}

/// Core's last validator answer: valid (`None`) or the predicate's known index.
type LastVerdict = (Validator, Option<u8>);

type LastLut = (LutTable, u32, Result<u8, &'static str>);

impl Recorder {
    pub fn new(inner: Box<dyn Reference>, memo: bool) -> (Recorder, RecordKey) {
        let slot = Rc::new(Slot {
            key: RefCell::new(String::with_capacity(64)),
            ..Slot::default()
        });
        (
            Recorder {
                inner,
                slot: Rc::clone(&slot),
                memo,
                last_bundle: Cell::new([0; 64]),
                last_verdict: Cell::new(None),
                last_lut: Cell::new(None),
            },
            RecordKey(slot),
        )
    }

    #[inline]
    fn memo(&self) -> bool {
        self.memo && !self.slot.memo_paused.get()
    }

    #[inline]
    fn put(&self, parts: &[&str]) {
        if self.slot.fault.replace(false) {
            panic!("injected subject fault");
        }
        if !self.slot.set.replace(true) {
            let mut k = self.slot.key.borrow_mut();
            k.clear();
            for p in parts {
                k.push_str(p);
            }
        }
    }

    /// [`Subject::validate`] past the memo (out of line: a memo hit keeps a small frame).
    #[inline(never)]
    fn validate_inner(&self, v: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        let r = self.inner.validate(v, b);
        if self.memo() {
            let m = match &r {
                Ok(None) => Some((v, None)),
                Ok(Some(p)) => p.known_index().map(|i| (v, Some(i))),
                Err(_) => None,
            };
            if m.is_some() {
                self.last_bundle.set(*b);
            }
            self.last_verdict.set(m);
        }
        self.noted(r, |v| [verdict_name(v), "", ""])
    }

    #[inline(never)]
    fn lut_inner(&self, table: LutTable, input: u32) -> Reply<LutResult> {
        let r = self.inner.lut(table, input);
        if self.memo() {
            self.last_lut.set(match &r {
                Ok(Ok(w)) => Some((table, input, Ok(*w))),
                Ok(Err(Name::Known(n))) => Some((table, input, Err(*n))),
                _ => None,
            });
        }
        self.noted(r, |r| match r {
            Ok(_) => ["ok", "", ""],
            Err(e) => ["err:", e.as_str(), ""],
        })
    }

    /// Records `r`'s coverage key (an answer's `parts`, a fault's class) and returns it.
    #[inline]
    fn noted<T>(&self, r: Reply<T>, parts: impl FnOnce(&T) -> [&str; 3]) -> Reply<T> {
        match &r {
            Ok(a) => self.put(&parts(a)),
            Err(f) => self.put(&[Class::of_fault(f).lower()]),
        }
        r
    }
}

impl Subject for Recorder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    #[inline]
    fn validate(&self, v: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        if self.memo() && self.slot.set.get() {
            if let Some((lv, known)) = self.last_verdict.get() {
                if lv == v && same_bundle(&self.last_bundle.get(), b) {
                    match known.map(Predicate::known) {
                        None => return Ok(None),
                        Some(Some(p)) => return Ok(Some(p)),
                        Some(None) => {}
                    }
                }
            }
        }
        self.validate_inner(v, b)
    }

    fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> {
        self.noted(self.inner.decode(b), |r| match r {
            Ok(d) => ["ok:", &d.mnemonic, ""],
            Err(e) => ["err:", e.field.as_str(), ""],
        })
    }

    fn encode(&self, opcode: u8, fields: &[(FieldName, Value)]) -> Reply<EncodeResult> {
        self.noted(self.inner.encode(opcode, fields), |r| match r {
            Ok(_) => ["encode:ok", "", ""],
            Err(e) => ["encode:err:", e.as_str(), ""],
        })
    }

    #[inline]
    fn lut(&self, table: LutTable, input: u32) -> Reply<LutResult> {
        if self.memo() && self.slot.set.get() {
            if let Some((lt, li, a)) = self.last_lut.get() {
                if lt == table && li == input {
                    return Ok(a.map_err(Name::Known));
                }
            }
        }
        self.lut_inner(table, input)
    }

    fn validate_stream(&self, bytes: &[u8]) -> Reply<Result<(), StreamFail>> {
        if self.memo() {
            if let Some(s @ (_, Some(v))) = &*self.slot.staged.borrow() {
                if is_staged(s, bytes) {
                    let v = v.clone();
                    // The tests (debug builds) check the kept verdict.
                    #[cfg(debug_assertions)]
                    assert_eq!(Ok(&v), stream_verdict(&*self.inner, bytes).as_ref());
                    return Ok(v);
                }
            }
        }
        stream_verdict(self, bytes)
    }

    fn lower_module(&self, insns: &[IrInstruction]) -> Reply<ModuleAnswer> {
        module_answer(self, insns)
    }

    fn forwards_to(&self) -> Option<&dyn Reference> {
        Some(&*self.inner)
    }
}

impl Reference for Recorder {
    fn parse_stream(&self, bytes: &[u8]) -> Reply<StreamResult> {
        let r = self.inner.parse_stream(bytes);
        if self.memo() {
            if let Some(s) = &mut *self.slot.staged.borrow_mut() {
                if is_staged(s, bytes) {
                    s.1 = r
                        .as_ref()
                        .ok()
                        .map(|r| r.as_ref().map(|_| ()).map_err(Clone::clone));
                }
            }
        }
        self.noted(r, |r| match r {
            Ok(_) => ["ok", "", ""],
            Err(e) => ["err:", e.name.as_str(), ""],
        })
    }

    fn ir(&self, q: &IrQuery) -> Reply<IrAnswer> {
        let gate = q.gate();
        self.noted(self.inner.ir(q), |r| match r {
            IrAnswer::Gate(Ok(())) => [gate, ":ok", ""],
            IrAnswer::Gate(Err(e)) => [gate, ":err:", e.as_str()],
            IrAnswer::Route(Route::Sb2sb) => ["route:sb2sb", "", ""],
            IrAnswer::Route(Route::Dma) => ["route:dma", "", ""],
        })
    }
    // The other operations are forwarded unrecorded (their kinds key their
    // own coverage): `Subject::forwards_to`.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::registry;

    /// The memo answers only the same question in the same case: another
    /// validator, another bundle or another table goes to core.
    #[test]
    fn the_memo_answers_only_the_same_question() {
        let core = registry::core_for(crate::generation::Generation::default());
        let (rec, key) = Recorder::new(
            registry::core_for(crate::generation::Generation::default()),
            true,
        );
        // A header that is valid and a payload check on the same bytes
        // that is not (or the other way round): find one where they differ.
        // A valid CUSTOM_OP header (0x85): the header validator accepts it,
        // the payload validator does not.
        let mut b = [0u8; 64];
        let mut r = crate::generators::SplitMix64(5);
        crate::generators::images::valid_image_for(
            &mut r,
            0x85,
            crate::generation::Generation::default(),
            &mut b,
        );
        assert_ne!(
            core.validate(Validator::Header, &b),
            core.validate(Validator::Payload, &b)
        );
        for (first, second) in [
            (Validator::Header, Validator::Payload),
            (Validator::Payload, Validator::Header),
        ] {
            key.reset();
            assert_eq!(rec.validate(first, &b), core.validate(first, &b));
            assert_eq!(rec.validate(second, &b), core.validate(second, &b));
        }
        let mut c = b;
        c[63] ^= 1;
        key.reset();
        let _ = rec.validate(Validator::Header, &b);
        assert_eq!(
            rec.validate(Validator::Header, &c),
            core.validate(Validator::Header, &c)
        );
        key.reset();
        for (t, n) in [
            (LutTable::AluOp, 3),
            (LutTable::AluOp, 99),
            (LutTable::Dge, 3),
        ] {
            assert_eq!(rec.lut(t, n), core.lut(t, n), "{t:?} {n}");
        }
    }

    /// A memo hit (the same question twice in one case) answers what core
    /// answers, for every predicate and refusal seen: the `Copy` form
    /// round-trips.
    #[test]
    fn a_memo_hit_answers_what_core_answers() {
        let arch = crate::generation::Generation::default();
        let core = registry::core_for(arch);
        let (rec, key) = Recorder::new(registry::core_for(arch), true);
        let mut r = crate::generators::SplitMix64(9);
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..4000u32 {
            let mut b = [0u8; 64];
            let op = if i % 2 == 0 { 0x85 } else { 0x86 };
            crate::generators::images::valid_image_for(&mut r, op, arch, &mut b);
            // Break one byte (or none) so that every predicate fails somewhere.
            let at = usize::try_from(r.next_u64() % 80).unwrap_or(0);
            if let Some(x) = b.get_mut(at) {
                *x ^= u8::try_from(r.next_u64() & 0xFF).unwrap_or(1) | 1;
            }
            for v in [Validator::Header, Validator::Payload] {
                key.reset();
                let want = core.validate(v, &b);
                assert_eq!(rec.validate(v, &b), want, "first call");
                let hit = rec.validate(v, &b);
                assert_eq!(hit, want, "memo hit on {v:?}");
                if let Ok(w) = &want {
                    seen.insert(verdict_name(w).to_string());
                }
            }
        }
        assert!(seen.len() >= 8, "predicates seen: {seen:?}");
        let mut refusals = std::collections::BTreeSet::new();
        for t in LutTable::ALL {
            for n in 0..300 {
                key.reset();
                let want = core.lut(t, n);
                assert_eq!(rec.lut(t, n), want);
                assert_eq!(rec.lut(t, n), want, "memo hit on {t:?} {n}");
                if let Ok(Err(e)) = &want {
                    refusals.insert(e.to_string());
                }
            }
        }
        assert!(!refusals.is_empty());
    }
}
