//! How an [`ExternalSubject`] answers a whole [`Batch`] ahead of the
//! judge's per-case calls: a `lib:` subject's validator and LUT chunks
//! through its shared-memory worker ([`super::shm_client`]), a `cmd:`
//! subject's validator chunks through its `batch64` framing
//! ([`super::batch_framing`]), LUTs without a worker as pipelined lines.
//! Answers land in the subject's [`ReadyStore`] by position.

use super::batch_framing::{self, BatchProcess};
use super::client::Client;
use super::client::{lut_reply, sent, shm_lut, shm_verdict, verdict_reply};
use super::process::{Fault as ClientFault, FaultClass};
use super::protocol::{Op, Request};
use super::ready::{LutColumn, ReadyStore};
use super::shm_client::{ShmAnswer, ShmSink};
use super::subject::ExternalSubject;
use crate::subjects::{Batch, Capability, Fault, LutTable, Name, Validator};
use std::sync::Mutex;

/// Shared-memory verdicts into the store, ids kept as the worker wrote them.
struct VerdictSink<'a>(&'a mut ReadyStore);

impl ShmSink for VerdictSink<'_> {
    fn answer(&mut self, a: ShmAnswer) {
        self.0.push_verdict(shm_verdict(a));
    }

    #[inline]
    fn verdict_id(&mut self, id: u16) {
        self.0.push_verdict_id(id);
    }
}

/// Shared-memory LUT answers into one table's column.
struct LutSink<'a>(LutColumn<'a>);

impl ShmSink for LutSink<'_> {
    fn answer(&mut self, a: ShmAnswer) {
        self.0.push(Some(shm_lut(a)));
    }

    #[inline]
    fn wire(&mut self, w: u32) {
        match u8::try_from(w) {
            Ok(b) => self.0.push_wire(b),
            // Not a byte: a protocol fault, the general way.
            Err(_) => self.answer(ShmAnswer::Wire(w)),
        }
    }

    #[inline]
    fn refused(&mut self, n: &Name) {
        match n {
            Name::Known(k) => self.0.push_refused(k),
            Name::Unknown(_) => self.answer(ShmAnswer::Refused(n.clone())),
        }
    }
}

impl ExternalSubject {
    /// Answers `batch` into `store` through the batch worker, the framing,
    /// or (for LUTs without a worker) pipelined lines; false if it is not a
    /// batch this path serves.
    pub(super) fn prefetch_ready(
        &self,
        batch: Batch<'_>,
        tick: &dyn Fn(),
        store: &mut ReadyStore,
    ) -> bool {
        let (supports, shm) = match self.client.lock() {
            Ok(mut c) => (c.hello().ops.clone(), c.shm().is_some()),
            Err(_) => return true,
        };
        let supports = |op: Op| supports.contains(&op);
        match batch {
            Batch::Validate(v, bs) if !shm => {
                let op = Op::of_validator(v);
                let Some(b) = &self.batch else { return false };
                if !supports(op) || !b.lock().is_ok_and(|b| b.usable()) {
                    return false;
                }
                store.begin_bundles(op, bs);
                self.prefetch_framed(b, v, bs, tick, store);
            }
            Batch::Validate(v, bs) => {
                let op = Op::of_validator(v);
                if !supports(op) {
                    return true;
                }
                let Ok(mut c) = self.client.lock() else {
                    return true;
                };
                let Some(ch) = c.shm() else { return true };
                let payload = v == Validator::Payload;
                store.begin_bundles(op, bs);
                let mut sink = VerdictSink(store);
                ch.validate_into(payload, bs, tick, &mut sink);
                self.count_busy(bs.len(), ch.take_busy());
                store.pad_verdicts(bs.len());
            }
            Batch::Lut(tables, ords) => {
                if !supports(Op::Lut) {
                    return true;
                }
                let tables: Vec<LutTable> = tables
                    .iter()
                    .copied()
                    .filter(|t| self.caps.has(Capability::Lut(*t)))
                    .collect();
                store.begin_luts(&tables, ords);
                self.prefetch_luts(&tables, ords, tick, store);
            }
            Batch::Decode(_) | Batch::Roundtrip(_) | Batch::Streams(_) | Batch::Lower(_) => {
                return false
            }
        }
        true
    }

    /// Rings the shared-memory hand-off of `batch` ahead of
    /// [`ExternalSubject::prefetch_ready`] on the same batch
    /// ([`crate::subjects::Subject::prefetch_begin`]): the worker runs it
    /// while the judge works. Only a `lib:` subject's validator batch or a
    /// LUT batch's first table it declares; other transports wait for the
    /// prefetch itself.
    pub(super) fn begin_ready(&self, batch: Batch<'_>) {
        let Ok(mut c) = self.client.lock() else {
            return;
        };
        let declared = |c: &Client, op: Op| c.supports(op);
        match batch {
            Batch::Validate(v, bs) if declared(&c, Op::of_validator(v)) => {
                if let Some(ch) = c.shm() {
                    ch.begin_validate(v == Validator::Payload, bs);
                }
            }
            Batch::Lut(tables, ords) if declared(&c, Op::Lut) => {
                let first = tables
                    .iter()
                    .copied()
                    .find(|t| self.caps.has(Capability::Lut(*t)));
                if let (Some(t), Some(ch)) = (first, c.shm()) {
                    ch.begin_lut(t, ords);
                }
            }
            _ => {}
        }
    }

    fn prefetch_luts(
        &self,
        tables: &[LutTable],
        ords: &[u32],
        tick: &dyn Fn(),
        store: &mut ReadyStore,
    ) {
        let Ok(mut c) = self.client.lock() else {
            return;
        };
        if let Some(ch) = c.shm() {
            for &t in tables {
                let Some(col) = store.lut_column(t) else {
                    continue;
                };
                let mut sink = LutSink(col);
                ch.lut_into(t, ords, tick, &mut sink);
                self.count_busy(ords.len(), ch.take_busy());
            }
            return;
        }
        for &t in tables {
            let reqs: Vec<Request> = ords
                .iter()
                .map(|&input| Request::Lut { table: t, input })
                .collect();
            let replies = self.timed(reqs.len(), || c.call_batch_with(&reqs, tick));
            store.extend_luts(t, replies.into_iter().map(|r| Some(lut_reply(r))));
        }
    }

    /// Validator chunks through the `batch64` instance; a frame that
    /// crashed or timed out goes down the JSON lines one by one instead.
    /// Every chunk leaves exactly one entry per bundle in `store`.
    fn prefetch_framed(
        &self,
        b: &Mutex<BatchProcess>,
        v: Validator,
        bs: &[[u8; 64]],
        tick: &dyn Fn(),
        store: &mut ReadyStore,
    ) {
        let code = match v {
            Validator::Header => batch_framing::FRAME_VALIDATE_HEADER,
            Validator::Payload => batch_framing::FRAME_VALIDATE_PAYLOAD,
        };
        let mut filled = 0usize;
        for chunk in bs.chunks(batch_framing::MAX_RECORDS) {
            let framed = match b.lock() {
                Ok(mut b) if b.usable() => self.timed(chunk.len(), || b.run(code, chunk)),
                _ => Err(ClientFault {
                    class: FaultClass::Crash,
                    detail: "batch framing given up".into(),
                }),
            };
            tick();
            match framed {
                Ok(ids) => {
                    self.note_received(ids.len());
                    for id in ids.into_iter().take(chunk.len()) {
                        store.push_verdict(Some(Ok(super::verdict::verdict_of(id))));
                    }
                }
                Err(f) if f.class == FaultClass::Protocol => {
                    self.note_received(chunk.len());
                    for _ in chunk {
                        let r = Err(Fault::Protocol(format!("batch64: {}", f.detail)));
                        store.push_verdict(Some(r));
                    }
                }
                Err(_) => {
                    let reqs: Vec<Request> =
                        chunk.iter().map(|x| Request::validate(v, *x)).collect();
                    let Ok(mut c) = self.client.lock() else {
                        return;
                    };
                    let replies = self.timed(reqs.len(), || c.call_batch_with(&reqs, tick));
                    for r in replies.into_iter().take(chunk.len()) {
                        store.push_verdict(sent(r).map(verdict_reply));
                    }
                }
            }
            // A short answer leaves the rest of the chunk to direct calls.
            filled += chunk.len();
            store.pad_verdicts(filled);
        }
    }
}
