//! [`ReadyStore`]: an external subject's answers fetched ahead of the
//! judge's per-case calls, by position in the batch. The judge asks in
//! batch order, skipping cases: a lookup moves the cursor past the entry it
//! serves (no hashing); an input not held leaves it. Entries vouched for in
//! bulk are passed over.

use super::client::{lut_reply, sent, verdict_reply};
use super::process::Reply as ClientReply;
use super::protocol::{Answer, Request};
use super::shm_client::ShmSink;
use super::verdict::verdict_of;
use crate::layout::same_bundle;
use crate::subjects::{Capability, Compact, LutResult, LutTable, Name, Reply, Verdict};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Held {
    #[default]
    Nothing,
    Bundles(Capability),
    Luts,
}

/// One stored answer, four bytes: the usual answers inline (as the worker
/// writes them), any other kept aside, typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    /// Never asked (given up before it), or served.
    Empty,
    /// A `tpb_verdict` id.
    Verdict(u16),
    Wire(u8),
    /// A known refusal: its position in the batch's refusal names.
    Refused(u32),
    /// Position in the batch's side list of other answers.
    Other(u32),
    /// Vouched for in bulk: never served.
    Vouched,
}

/// True if `e` holds exactly `c` (`names`: the batch's refusal names).
#[inline]
fn equals(e: Entry, c: Compact, names: &[&'static str]) -> bool {
    match (e, c) {
        (Entry::Verdict(a), Compact::Verdict(b)) => a == b,
        (Entry::Wire(a), Compact::Wire(b)) => a == b,
        (Entry::Refused(i), Compact::Refused(n)) => usize::try_from(i)
            .ok()
            .and_then(|i| names.get(i))
            .is_some_and(|m| *m == n),
        _ => false,
    }
}

/// One operation's (or LUT table's) answers in a batch, by position.
#[derive(Default)]
struct Column {
    entries: Vec<Entry>,
    cursor: usize,
    /// Vouched entries at the end (not pending).
    vouched_tail: usize,
}

/// See the module docs. An entry never asked is not served: the judge
/// counts it as not run.
#[derive(Default)]
pub struct ReadyStore {
    held: Held,
    bundles: Vec<[u8; 64]>,
    verdicts: Column,
    other_verdicts: Vec<Option<Reply<Verdict>>>,
    /// A bundle batch kept as replies (decode answers).
    replies: Vec<Option<ClientReply>>,
    /// Entries up to the last one asked (past it: never sent, not run).
    asked: usize,
    ords: Vec<u32>,
    tables: Vec<(LutTable, Column)>,
    other_luts: Vec<LutEntry>,
    refusals: Vec<&'static str>,
    /// Requests answered ahead (`validate_stream`, `lower`, encodes) with
    /// their replies, in the order the judge asks, served from a cursor
    /// (one it skips is passed over).
    requests: Vec<(Request, Option<ClientReply>)>,
    next: usize,
}

/// `None`: not asked.
pub type LutEntry = Option<Reply<LutResult>>;

/// Where one LUT table's answers go, in ordinal order (wire bytes and
/// known refusals kept compact).
pub struct LutColumn<'a> {
    entries: &'a mut Vec<Entry>,
    others: &'a mut Vec<LutEntry>,
    refusals: &'a mut Vec<&'static str>,
}

/// Distinct refusal names per batch kept compact (others aside, typed).
const MAX_REFUSALS: usize = 64;

impl LutColumn<'_> {
    pub fn push(&mut self, r: LutEntry) {
        let e = match r {
            None => Entry::Empty,
            Some(Ok(Ok(w))) => Entry::Wire(w),
            Some(Ok(Err(Name::Known(n)))) => return self.push_refused(n),
            other => aside(self.others, other),
        };
        self.entries.push(e);
    }

    #[inline]
    pub fn push_refused(&mut self, n: &'static str) {
        let e = match self.refusal(n) {
            Some(i) => Entry::Refused(i),
            None => aside(self.others, Some(Ok(Err(Name::Known(n))))),
        };
        self.entries.push(e);
    }

    /// `n`'s position in the batch's names, added if new (`None`: full).
    fn refusal(&mut self, n: &'static str) -> Option<u32> {
        // Interned names: the pointer first, the text only when that misses.
        let same = |m: &&str| std::ptr::eq(*m, n);
        let at = match self.refusals.iter().position(same) {
            Some(i) => i,
            None if let Some(i) = self.refusals.iter().position(|m| *m == n) => i,
            None if self.refusals.len() < MAX_REFUSALS => {
                self.refusals.push(n);
                self.refusals.len() - 1
            }
            None => return None,
        };
        u32::try_from(at).ok()
    }
}

impl ShmSink for LutColumn<'_> {
    /// Typed (a `NotSent` fault too: the judge reads it as a crash).
    fn answer(&mut self, a: ClientReply) {
        self.push(Some(lut_reply(a)));
    }

    #[inline]
    fn wire(&mut self, w: u32) {
        match u8::try_from(w) {
            Ok(b) => self.entries.push(Entry::Wire(b)),
            Err(_) => self.answer(Ok(Answer::Wire(w.into()))),
        }
    }

    #[inline]
    fn refused(&mut self, n: &Name) {
        match n {
            Name::Known(k) => self.push_refused(k),
            Name::Unknown(s) => self.answer(Ok(Answer::Refused(s.clone()))),
        }
    }
}

impl ShmSink for ReadyStore {
    fn answer(&mut self, a: ClientReply) {
        self.push_verdict(sent(a).map(verdict_reply));
    }

    #[inline]
    fn verdict_id(&mut self, id: u16) {
        self.push_entry(Entry::Verdict(id));
    }
}

impl Column {
    fn clear(&mut self) {
        self.entries.clear();
        self.cursor = 0;
        self.vouched_tail = 0;
    }

    fn pending(&self) -> bool {
        self.cursor + self.vouched_tail < self.entries.len()
    }

    /// The first entry from the cursor, not vouched, whose key `is`
    /// accepts; the cursor moves past it.
    #[inline]
    fn next_of<K>(&mut self, keys: &[K], is: impl Fn(&K) -> bool) -> Option<&mut Entry> {
        let n = self.entries.len().min(keys.len());
        let es = &self.entries;
        let at = (self.cursor..n).find(|&i| es[i] != Entry::Vouched && is(&keys[i]))?;
        self.cursor = at + 1;
        Some(&mut self.entries[at])
    }

    /// Vouches for (and sets `agreed[j]` of) entries `j` from the cursor
    /// whose key is `asked[j]` and answer `reference[j]`.
    fn vouch<K>(
        &mut self,
        (held, asked, same_key): (&[K], &[K], impl Fn(&K, &K) -> bool),
        reference: &[Compact],
        agreed: &mut [bool],
        names: &[&'static str],
    ) {
        let (entries, from) = (&mut self.entries, self.cursor);
        // The last refusal pair compared: a batch repeats a few pairs.
        let mut last: Option<(u32, &'static str, bool)> = None;
        let n = entries
            .len()
            .min(held.len())
            .min(asked.len())
            .min(reference.len())
            .min(agreed.len());
        let from = from.min(n);
        let (es, held, asked) = (&mut entries[from..n], &held[from..n], &asked[from..n]);
        let (reference, agreed) = (&reference[from..n], &mut agreed[from..n]);
        let cases = es
            .iter_mut()
            .zip(held.iter().zip(asked))
            .zip(reference.iter().zip(agreed.iter_mut()));
        for ((e, (h, k)), (&c, a)) in cases {
            let same = match (*e, c) {
                (Entry::Refused(i), Compact::Refused(r)) => match last {
                    Some((li, lr, eq)) if li == i && std::ptr::eq(lr, r) => eq,
                    _ => {
                        let eq = equals(*e, c, names);
                        last = Some((i, r, eq));
                        eq
                    }
                },
                _ => equals(*e, c, names),
            };
            if same && same_key(h, k) {
                *e = Entry::Vouched;
                *a = true;
            }
        }
        self.vouched_tail = entries
            .iter()
            .rev()
            .take_while(|e| **e == Entry::Vouched)
            .count();
    }
}

fn aside<T>(others: &mut Vec<Option<T>>, r: Option<T>) -> Entry {
    others.push(r);
    Entry::Other(u32::try_from(others.len() - 1).unwrap_or(u32::MAX))
}

/// The answer of `e`, once (`inline` types the inline ones).
#[inline]
fn serve<T>(
    e: &mut Entry,
    others: &mut [Option<T>],
    inline: impl Fn(Entry) -> Option<T>,
) -> Option<T> {
    match std::mem::replace(e, Entry::Empty) {
        Entry::Empty => None,
        Entry::Other(i) => others.get_mut(usize::try_from(i).ok()?)?.take(),
        x => inline(x),
    }
}

impl ReadyStore {
    pub fn clear(&mut self) {
        self.held = Held::Nothing;
        self.bundles.clear();
        self.verdicts.clear();
        self.other_verdicts.clear();
        self.replies.clear();
        self.asked = 0;
        self.ords.clear();
        self.other_luts.clear();
        self.refusals.clear();
        self.requests.clear();
        self.next = 0;
        for (_, c) in &mut self.tables {
            c.clear();
        }
    }

    #[inline]
    pub fn pending(&self) -> bool {
        let r = &self.requests;
        if r[self.next.min(r.len())..].iter().any(|(_, a)| a.is_some()) {
            return true;
        }
        match self.held {
            Held::Nothing => false,
            Held::Bundles(_) => self.verdicts.cursor < self.asked && self.verdicts.pending(),
            Held::Luts => match self.tables.as_slice() {
                [(_, c)] => c.pending(),
                ts => ts.iter().any(|(_, c)| c.pending()),
            },
        }
    }

    /// Starts a batch of `op` on `bundles`; answers follow in order.
    pub fn begin_bundles(&mut self, op: Capability, bundles: &[[u8; 64]]) {
        self.clear();
        self.held = Held::Bundles(op);
        self.bundles.extend_from_slice(bundles);
    }

    pub fn push_verdict(&mut self, v: Option<Reply<Verdict>>) {
        let e = match &v {
            None => Entry::Empty,
            Some(Ok(None)) => Entry::Verdict(super::verdict::VALID),
            Some(Ok(Some(p))) => match p.known_index() {
                Some(i) => Entry::Verdict(u16::from(i) + 1),
                None => aside(&mut self.other_verdicts, v),
            },
            Some(Err(_)) => aside(&mut self.other_verdicts, v),
        };
        self.push_entry(e);
    }

    #[inline]
    fn push_entry(&mut self, e: Entry) {
        self.verdicts.entries.push(e);
        if e != Entry::Empty {
            self.asked = self.verdicts.entries.len();
        }
    }

    /// The next bundle's answer as the client's reply (decode).
    pub fn push_reply(&mut self, r: Option<ClientReply>) {
        let e = match r {
            None => Entry::Empty,
            r => aside(&mut self.replies, r),
        };
        self.push_entry(e);
    }

    pub fn take_reply(&mut self, op: Capability, b: &[u8; 64]) -> Option<ClientReply> {
        if self.held != Held::Bundles(op) {
            return None;
        }
        let e = self
            .verdicts
            .next_of(&self.bundles, |x| same_bundle(x, b))?;
        serve(e, &mut self.replies, |_| None)
    }

    /// Keeps `reply` to `request`, beside any bundle batch.
    pub fn push_request(&mut self, request: Request, reply: Option<ClientReply>) {
        self.requests.push((request, reply));
    }

    /// The reply to the first request from the cursor that `is` accepts.
    pub fn take_request(&mut self, is: impl Fn(&Request) -> bool) -> Option<ClientReply> {
        let r = &mut self.requests;
        let at = (self.next..r.len()).find(|&i| r[i].1.is_some() && is(&r[i].0))?;
        self.next = at + 1;
        r[at].1.take()
    }

    /// Pads (or cuts) the answers to `n`, keeping positions aligned.
    pub fn pad_verdicts(&mut self, n: usize) {
        self.verdicts.entries.resize(n, Entry::Empty);
    }

    /// Starts a LUT batch; answers follow table by table.
    pub fn begin_luts(&mut self, tables: &[LutTable], ords: &[u32]) {
        self.clear();
        self.held = Held::Luts;
        self.ords.extend_from_slice(ords);
        self.tables.retain(|(t, _)| tables.contains(t));
        for &t in tables {
            if !self.tables.iter().any(|(u, _)| *u == t) {
                let entries = Vec::with_capacity(ords.len());
                self.tables.push((
                    t,
                    Column {
                        entries,
                        ..Column::default()
                    },
                ));
            }
        }
    }

    pub fn lut_column(&mut self, table: LutTable) -> Option<LutColumn<'_>> {
        let (others, refusals) = (&mut self.other_luts, &mut self.refusals);
        self.tables
            .iter_mut()
            .find(|(t, _)| *t == table)
            .map(|(_, c)| LutColumn {
                entries: &mut c.entries,
                others,
                refusals,
            })
    }

    pub fn extend_luts(&mut self, table: LutTable, rs: impl IntoIterator<Item = LutEntry>) {
        if let Some(mut col) = self.lut_column(table) {
            for r in rs {
                col.push(r);
            }
        }
    }

    #[inline]
    pub fn take_verdict(&mut self, op: Capability, b: &[u8; 64]) -> Option<Reply<Verdict>> {
        if self.held != Held::Bundles(op) {
            return None;
        }
        let e = self
            .verdicts
            .next_of(&self.bundles, |x| same_bundle(x, b))?;
        serve(e, &mut self.other_verdicts, |e| match e {
            Entry::Verdict(id) => Some(Ok(verdict_of(id))),
            _ => None,
        })
    }

    #[inline]
    pub fn take_lut(&mut self, table: LutTable, ord: u32) -> Option<Reply<LutResult>> {
        if self.held != Held::Luts {
            return None;
        }
        let (_, c) = self.tables.iter_mut().find(|(t, _)| *t == table)?;
        let e = c.next_of(&self.ords, |&o| o == ord)?;
        let names = &self.refusals;
        serve(e, &mut self.other_luts, |e| match e {
            Entry::Wire(w) => Some(Ok(Ok(w))),
            Entry::Refused(i) => Some(Ok(Err(Name::Known(names.get(usize::try_from(i).ok()?)?)))),
            _ => None,
        })
    }

    /// Bulk judging ([`Column::vouch`]); false when no such batch is held.
    pub fn vouch_bundles(
        &mut self,
        op: Capability,
        asked: &[[u8; 64]],
        reference: &[Compact],
        agreed: &mut [bool],
    ) -> bool {
        if self.held != Held::Bundles(op) {
            return false;
        }
        let keys = (self.bundles.as_slice(), asked, same_bundle);
        self.verdicts.vouch(keys, reference, agreed, &[]);
        true
    }

    pub fn vouch_luts(
        &mut self,
        table: LutTable,
        asked: &[u32],
        reference: &[Compact],
        agreed: &mut [bool],
    ) -> bool {
        if self.held != Held::Luts {
            return false;
        }
        let Some((_, c)) = self.tables.iter_mut().find(|(t, _)| *t == table) else {
            return false;
        };
        let keys = (self.ords.as_slice(), asked, |a: &u32, b: &u32| a == b);
        c.vouch(keys, reference, agreed, &self.refusals);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::{Fault, Predicate};

    fn b(x: u8) -> [u8; 64] {
        [x; 64]
    }

    #[test]
    fn bundles_are_served_in_order_skipping_the_unasked() {
        let mut s = ReadyStore::default();
        s.begin_bundles(Capability::ValidateHeader, &[b(1), b(2), b(3), b(2)]);
        s.push_verdict(Some(Ok(None)));
        s.push_verdict(Some(Ok(Some(Predicate::from_name("inst_word_len")))));
        s.push_verdict(None);
        s.push_verdict(Some(Err(Fault::Unsupported)));
        assert!(s.pending());
        // Another op, or an input not in the batch: nothing, cursor kept.
        assert_eq!(s.take_verdict(Capability::ValidatePayload, &b(1)), None);
        assert_eq!(s.take_verdict(Capability::ValidateHeader, &b(9)), None);
        // b(1) is skipped; the first b(2) is served, then the second one.
        let first = s.take_verdict(Capability::ValidateHeader, &b(2));
        assert_eq!(first, Some(Ok(Some(Predicate::from_name("inst_word_len")))));
        // b(3) was never asked: not served (the caller asks directly).
        assert_eq!(s.take_verdict(Capability::ValidateHeader, &b(3)), None);
        assert_eq!(
            s.take_verdict(Capability::ValidateHeader, &b(2)),
            Some(Err(Fault::Unsupported))
        );
        assert!(!s.pending());
        assert_eq!(s.take_verdict(Capability::ValidateHeader, &b(1)), None);
    }

    #[test]
    fn compact_and_other_answers_are_served_as_given() {
        let mut s = ReadyStore::default();
        s.begin_bundles(Capability::ValidateHeader, &[b(1), b(2), b(3), b(4)]);
        s.verdict_id(0);
        s.verdict_id(2);
        s.push_verdict(Some(Ok(Some(Predicate::from_name("not_a_spec_name")))));
        s.push_verdict(Some(Err(Fault::Protocol("x".into()))));
        assert_eq!(
            s.take_verdict(Capability::ValidateHeader, &b(1)),
            Some(Ok(None))
        );
        let p = s.take_verdict(Capability::ValidateHeader, &b(2));
        assert_eq!(p, Some(Ok(Some(Predicate::from_name("inst_word_len")))));
        // An unknown name stays unknown (never equal to anything).
        match s.take_verdict(Capability::ValidateHeader, &b(3)) {
            Some(Ok(Some(p))) => assert_eq!(p.name(), "not_a_spec_name"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            s.take_verdict(Capability::ValidateHeader, &b(4)),
            Some(Err(Fault::Protocol("x".into())))
        );
        s.begin_luts(&[LutTable::Dge], &[0, 4, 9]);
        let mut col = s.lut_column(LutTable::Dge).expect("column");
        col.wire(1);
        col.push(Some(Ok(Err(crate::subjects::Name::Known("not_dge_op")))));
        col.push(None);
        assert_eq!(s.take_lut(LutTable::Dge, 0), Some(Ok(Ok(1))));
        let r = s.take_lut(LutTable::Dge, 4);
        assert!(matches!(r, Some(Ok(Err(n))) if n.as_str() == "not_dge_op"));
        assert_eq!(s.take_lut(LutTable::Dge, 9), None, "never asked");
        assert!(!s.pending());
    }

    #[test]
    fn batch_refusal_names_stay_per_entry() {
        let text = |r: Option<Reply<LutResult>>| match r {
            Some(Ok(Ok(w))) => format!("wire {w}"),
            Some(Ok(Err(n))) => format!("refused {}", n.as_str()),
            Some(Err(f)) => format!("fault {f:?}"),
            None => "none".into(),
        };
        let ords = [0, 1, 2, 3, 4];
        let mut s = ReadyStore::default();
        s.begin_luts(&[LutTable::Dge], &ords);
        let mut col = s.lut_column(LutTable::Dge).expect("column");
        for a in [
            Ok(Answer::Refused("out_of_range".into())),
            Ok(Answer::Refused("not_dge_op".into())),
            Ok(Answer::Wire(5)),
            Ok(Answer::Refused("out_of_range".into())),
            Ok(Answer::Wire(300)),
        ] {
            col.answer(a);
        }
        let got: Vec<String> = ords
            .iter()
            .map(|&o| text(s.take_lut(LutTable::Dge, o)))
            .collect();
        assert_eq!(
            got[..4],
            [
                "refused out_of_range",
                "refused not_dge_op",
                "wire 5",
                "refused out_of_range"
            ]
        );
        assert!(got[4].starts_with("fault Protocol"), "{}", got[4]);
    }

    #[test]
    fn lut_answers_are_per_table_and_position() {
        let mut s = ReadyStore::default();
        s.begin_luts(&[LutTable::AluOp, LutTable::Dge], &[4, 7]);
        s.extend_luts(LutTable::AluOp, [Some(Ok(Ok(4)))]);
        s.extend_luts(LutTable::AluOp, [Some(Ok(Ok(7)))]);
        s.extend_luts(LutTable::Dge, [Some(Ok(Ok(40)))]);
        s.extend_luts(LutTable::Dge, [Some(Ok(Ok(70)))]);
        assert_eq!(s.take_lut(LutTable::Dtype, 4), None);
        assert_eq!(s.take_lut(LutTable::Dge, 7), Some(Ok(Ok(70))));
        assert_eq!(s.take_lut(LutTable::AluOp, 4), Some(Ok(Ok(4))));
        assert_eq!(s.take_lut(LutTable::Dge, 4), None, "cursor moved past it");
        assert!(s.pending());
        assert_eq!(s.take_lut(LutTable::AluOp, 7), Some(Ok(Ok(7))));
        assert!(!s.pending());
        s.begin_bundles(Capability::ValidateHeader, &[b(1)]);
        assert_eq!(s.take_lut(LutTable::AluOp, 4), None);
    }

    #[test]
    fn vouched_entries_are_never_served_and_the_rest_are_served_as_before() {
        let mut s = ReadyStore::default();
        s.begin_bundles(Capability::ValidateHeader, &[b(1), b(2), b(3), b(2)]);
        for id in [0, 2, 0, 3] {
            s.verdict_id(id);
        }
        // Position 1 asked another bundle; position 3 answered differently.
        let asked = [b(1), b(9), b(3), b(2)];
        let reference = [
            Compact::Verdict(0),
            Compact::Verdict(2),
            Compact::Verdict(0),
            Compact::Verdict(2),
        ];
        let mut agreed = [false; 4];
        assert!(!s.vouch_bundles(Capability::ValidatePayload, &asked, &reference, &mut agreed));
        assert!(s.vouch_bundles(Capability::ValidateHeader, &asked, &reference, &mut agreed));
        assert_eq!(agreed, [true, false, true, false]);
        // b(2) is served from position 1 first, then position 3, never a vouched one.
        assert_eq!(s.take_verdict(Capability::ValidateHeader, &b(1)), None);
        let p = |n| Some(Ok(Some(Predicate::from_name(n))));
        assert_eq!(
            s.take_verdict(Capability::ValidateHeader, &b(2)),
            p("inst_word_len")
        );
        assert!(s.pending());
        assert_eq!(
            s.take_verdict(Capability::ValidateHeader, &b(2)),
            p("has_valid_neuron_events")
        );
        assert!(!s.pending());
        s.begin_luts(&[LutTable::Dge], &[0, 5, 7]);
        let mut col = s.lut_column(LutTable::Dge).expect("column");
        col.wire(1);
        col.push(Some(Ok(Err(crate::subjects::Name::Known("not_dge_op")))));
        col.push(Some(Ok(Err(crate::subjects::Name::Known("not_dge_op")))));
        let reference = [
            Compact::Wire(1),
            Compact::Refused("not_dge_op"),
            Compact::Refused("out_of_range"),
        ];
        let mut agreed = [false; 3];
        assert!(s.vouch_luts(LutTable::Dge, &[0, 5, 7], &reference, &mut agreed));
        assert_eq!(agreed, [true, true, false]);
        assert!(s.pending());
        let r = s.take_lut(LutTable::Dge, 7);
        assert!(matches!(r, Some(Ok(Err(n))) if n.as_str() == "not_dge_op"));
        assert!(!s.pending());
    }
}
