//! The gate's side of a `lib:` subject's worker ([`super::shm_worker`]):
//! chunks of validator bundles, LUT ordinals or request records of one
//! operation go through the region ([`super::shm`]), one doorbell byte each
//! way per hand-off.
//!
//! The worker stamps the entry it is about to run: when it dies or makes no
//! progress for the case timeout, the stamp names the input (a
//! [`FaultClass::Crash`] or [`FaultClass::Timeout`] fault), the entries
//! before it keep their answers, and the worker is restarted for the rest.
//! A library batch call that crashes or hangs, given [`batch_budget`], is
//! re-run one entry at a time, which names the input. Give-up is the
//! [`Supervisor`](super::Supervisor)'s.

use super::client::Kept;
use super::process::{describe_exit, Fault, FaultClass, Reply, StartError};
use super::protocol::{Answer, Request, LUT_TABLES};
use super::shm::{self, Field, Region};
use super::shm_answers::{collect, Counted};
pub use super::shm_answers::{ShmAnswer, ShmSink};
use super::shm_process::{ring, spawn, wait, Wait, Worker};
use crate::subjects::{Capability, LutTable};
use std::path::PathBuf;
use std::time::Duration;

/// The time a library batch call of `n` entries gets before it is re-run
/// one entry at a time: 1 s + 100 µs per entry, at most the case timeout.
pub fn batch_budget(n: usize, case_timeout: Duration) -> Duration {
    let per = Duration::from_micros(100).saturating_mul(u32::try_from(n).unwrap_or(u32::MAX));
    (Duration::from_secs(1) + per).min(case_timeout)
}

/// A `lib:` subject's worker, restarted after faults.
pub struct ShmChannel {
    k: Kept,
    exe: PathBuf,
    lib: String,
    worker: Option<Worker>,
    flags: u32,
    seq: u32,
    /// One hand-off's answers, reused (a chunk's worth of entries is too
    /// big to allocate per hand-off without page faults).
    scratch: Vec<Option<ShmAnswer>>,
    /// Time the worker reported spending on finished hand-offs, not yet
    /// taken ([`ShmChannel::take_busy`]).
    busy: Duration,
    /// The hand-off rung by [`ShmChannel::begin_validate`] /
    /// [`ShmChannel::begin_lut`] / [`ShmChannel::begin_records`], not yet
    /// collected.
    in_flight: Option<InFlight>,
    /// The requests of a records hand-off rung ahead (its first run).
    begun: usize,
}

/// A hand-off rung ahead of the call that collects it: what it runs
/// ([`Chunk::key`]: the collecting call must pass the very slice) and the
/// hand-off number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct InFlight {
    key: (u32, u32, usize, usize),
    seq: u32,
}

/// What one hand-off runs: a validator's bundles (`true`: payload), one
/// table's ordinals, or request records of one operation.
#[derive(Clone, Copy)]
enum Chunk<'a> {
    Bundles(bool, &'a [[u8; 64]]),
    Lut(LutTable, &'a [u32]),
    Records(&'a [Request]),
}

impl Chunk<'_> {
    fn len(self) -> usize {
        match self {
            Chunk::Bundles(_, c) => c.len(),
            Chunk::Lut(_, c) => c.len(),
            Chunk::Records(c) => c.len(),
        }
    }

    /// The hand-off op, the LUT table index, and the capability given up on.
    fn op(self) -> (u32, u32, Capability) {
        match self {
            Chunk::Bundles(false, _) => (shm::OP_VALIDATE_HEADER, 0, Capability::ValidateHeader),
            Chunk::Bundles(true, _) => (shm::OP_VALIDATE_PAYLOAD, 0, Capability::ValidatePayload),
            Chunk::Lut(t, _) => {
                let ti = LUT_TABLES.iter().position(|&x| x == t).unwrap_or(0);
                (
                    shm::OP_LUT,
                    u32::try_from(ti).unwrap_or(u32::MAX),
                    Capability::Lut(t),
                )
            }
            Chunk::Records(c) => (shm::OP_RECORDS, 0, c[0].capability()),
        }
    }

    /// Op, table, the slice's address and length.
    fn key(self) -> (u32, u32, usize, usize) {
        let at = match self {
            Chunk::Bundles(_, c) => c.as_ptr() as usize,
            Chunk::Lut(_, c) => c.as_ptr() as usize,
            Chunk::Records(c) => c.as_ptr() as usize,
        };
        let (op, table, _) = self.op();
        (op, table, at, self.len())
    }

    /// Writes the inputs into the region (a record's input: its offset).
    fn fill(self, r: &mut Region) {
        match self {
            Chunk::Bundles(_, c) => {
                let dst = r.inputs();
                for (i, b) in c.iter().enumerate() {
                    dst[i * 64..i * 64 + 64].copy_from_slice(b);
                }
            }
            Chunk::Lut(_, c) => {
                let dst = r.inputs();
                for (i, o) in c.iter().enumerate() {
                    dst[i * 4..i * 4 + 4].copy_from_slice(&o.to_ne_bytes());
                }
            }
            Chunk::Records(c) => {
                let mut used = 0usize;
                for (k, q) in c.iter().enumerate() {
                    let off = shm::put_request(r.requests(), &mut used, q).unwrap_or(u32::MAX);
                    r.inputs()[k * 4..k * 4 + 4].copy_from_slice(&off.to_ne_bytes());
                }
            }
        }
    }

    /// Entry `i` as a report names it.
    fn input_name(self, i: usize) -> String {
        match self {
            Chunk::Bundles(_, c) => crate::subjects::hex(&c[i]),
            Chunk::Lut(t, c) => format!("{} {}", t.name(), c[i]),
            Chunk::Records(c) => c[i].input_text(),
        }
    }
}

impl std::ops::Deref for ShmChannel {
    type Target = Kept;

    fn deref(&self) -> &Kept {
        &self.k
    }
}

impl ShmChannel {
    /// Starts the worker `exe subject-worker --shm … --arch ARCH lib:LIB`.
    pub fn start(
        exe: PathBuf,
        lib: String,
        arch: &str,
        timeout: Duration,
    ) -> Result<ShmChannel, StartError> {
        let mut c = ShmChannel {
            k: Kept::new(arch, timeout),
            exe,
            lib,
            worker: None,
            flags: 0,
            seq: 0,
            scratch: Vec::new(),
            busy: Duration::ZERO,
            in_flight: None,
            begun: 0,
        };
        let (w, hello) = spawn(&c.exe, &c.lib, arch, timeout, &c.k.sup.stderr_ring())
            .map_err(|e| c.k.sup.start_error(e))?;
        c.flags = w.region.get(Field::Flags);
        c.k.hello = hello;
        c.worker = Some(w);
        Ok(c)
    }

    /// The time the worker spent on the hand-offs finished since the last
    /// call (its own clock, per hand-off: the subject's time, whether or
    /// not the gate was waiting meanwhile).
    pub fn take_busy(&mut self) -> Duration {
        std::mem::take(&mut self.busy)
    }

    /// True if the library exports the batch entry point of this validator.
    pub fn has_batch(&self, payload: bool) -> bool {
        let bit = if payload {
            shm::FLAG_PAYLOAD_BATCH
        } else {
            shm::FLAG_HEADER_BATCH
        };
        self.flags & bit != 0
    }

    fn restart(&mut self) {
        let ring = self.k.sup.stderr_ring();
        let (exe, lib, arch, timeout) = (&self.exe, &self.lib, &self.k.arch, self.k.timeout);
        self.worker = self
            .k
            .sup
            .restart(&self.k.hello, || spawn(exe, lib, arch, timeout, &ring));
    }

    /// Runs `reqs` (any operation) as request records, batched: one
    /// hand-off per [`shm::CHUNK`] requests or [`shm::REQ`] bytes; one
    /// reply per request, in order. Requests for an op the library did not
    /// declare are answered [`Answer::Unsupported`] without a hand-off.
    pub fn call_batch(&mut self, reqs: &[Request], tick: &dyn Fn()) -> Vec<Reply> {
        let mut out = Vec::with_capacity(reqs.len());
        let mut i = 0;
        while i < reqs.len() {
            if !self.supports(reqs[i].op()) {
                out.push(Ok(Answer::Unsupported));
                i += 1;
                continue;
            }
            // The next run of declared requests that fits one hand-off (the
            // first one's as it was rung ahead).
            let begun = std::mem::take(&mut self.begun);
            let n = match self.in_flight {
                Some(f)
                    if i == 0
                        && f.key.0 == shm::OP_RECORDS
                        && (f.key.2, f.key.3) == (reqs.as_ptr() as usize, begun) =>
                {
                    begun
                }
                _ => self.records_fitting(&reqs[i..]),
            };
            let chunk = &reqs[i..i + n];
            let cap = reqs[i].capability();
            let from = out.len();
            let mut k = 0usize;
            let mut sink = |a: ShmAnswer| {
                let r = &chunk[k];
                k += 1;
                out.push(match a {
                    ShmAnswer::Record(Ok(a)) if a.answers(r.op()) => Ok(a),
                    ShmAnswer::Record(a) => Err(Fault {
                        class: FaultClass::Protocol,
                        detail: match a {
                            Ok(a) => format!("answer of the wrong kind: {a:?}"),
                            Err(e) => format!("the library answered an error: {e}"),
                        },
                    }),
                    ShmAnswer::Fault(f) => Err(f),
                    ShmAnswer::Unsupported => Ok(Answer::Unsupported),
                    other => Err(Fault {
                        class: FaultClass::Harness,
                        detail: format!("worker answered a record with {other:?}"),
                    }),
                });
            };
            self.run_chunk(Chunk::Records(chunk), &mut sink, tick);
            // A library error (an answer the protocol rejects) counts
            // against the give-up budget like any fault; a crash or hang
            // was counted where it was named.
            if self.k.sup.given_up_on(cap).is_none() {
                for k in from..out.len() {
                    match &out[k] {
                        Ok(_) => self.k.sup.count(cap, None),
                        Err(f) if f.class == FaultClass::Protocol => {
                            self.k
                                .sup
                                .count(cap, Some((f, chunk[k - from].input_text())));
                        }
                        Err(_) => {}
                    }
                    if let Some(f) = self.k.sup.not_sent(cap) {
                        // Given up on this answer: the rest count as not run.
                        for r in &mut out[k + 1..] {
                            *r = Err(f.clone());
                        }
                        break;
                    }
                }
            }
            i += chunk.len();
        }
        out
    }

    /// How many of `reqs` from its start fit one hand-off: declared
    /// requests of one operation, at most [`shm::CHUNK`] of them and
    /// [`shm::REQ`] bytes of records (at least one).
    fn records_fitting(&self, reqs: &[Request]) -> usize {
        // One operation per hand-off (its give-up budget, [`Supervisor::count`]).
        let Some(cap) = reqs.first().map(Request::capability) else {
            return 0;
        };
        let mut bytes = 0usize;
        let mut n = 0;
        while let Some(r) = reqs.get(n) {
            if !self.supports(r.op()) || r.capability() != cap || n == shm::CHUNK {
                break;
            }
            bytes += shm::request_len(r) + 8;
            if bytes > shm::REQ && n > 0 {
                break;
            }
            n += 1;
        }
        n
    }

    /// Rings the first hand-off of [`ShmChannel::call_batch`] on `reqs`
    /// now (see [`ShmChannel::begin_validate`]); that call, with the same
    /// slice, collects it.
    pub fn begin_records(&mut self, reqs: &[Request]) {
        let n = self.records_fitting(reqs);
        if n == 0 || self.in_flight.is_some() {
            return;
        }
        self.begin(Chunk::Records(&reqs[..n]));
        if self.in_flight.is_some() {
            self.begun = n;
        }
    }

    /// The validator (`payload` or header) on every bundle, one answer each.
    pub fn validate(
        &mut self,
        payload: bool,
        bundles: &[[u8; 64]],
        tick: &dyn Fn(),
    ) -> Vec<ShmAnswer> {
        let mut out = Vec::with_capacity(bundles.len());
        self.validate_into(payload, bundles, tick, &mut |a| out.push(a));
        out
    }

    /// `table` on every ordinal, one answer each.
    pub fn lut(&mut self, table: LutTable, ords: &[u32], tick: &dyn Fn()) -> Vec<ShmAnswer> {
        let mut out = Vec::with_capacity(ords.len());
        self.lut_into(table, ords, tick, &mut |a| out.push(a));
        out
    }

    /// [`ShmChannel::validate`], handing each answer to `sink` in order.
    pub fn validate_into(
        &mut self,
        payload: bool,
        bundles: &[[u8; 64]],
        tick: &dyn Fn(),
        sink: &mut impl ShmSink,
    ) {
        for c in bundles.chunks(shm::CHUNK) {
            self.run_chunk(Chunk::Bundles(payload, c), sink, tick);
        }
    }

    /// [`ShmChannel::lut`], handing each answer to `sink` in order.
    pub fn lut_into(
        &mut self,
        table: LutTable,
        ords: &[u32],
        tick: &dyn Fn(),
        sink: &mut impl ShmSink,
    ) {
        for c in ords.chunks(shm::CHUNK) {
            self.run_chunk(Chunk::Lut(table, c), sink, tick);
        }
    }

    /// Rings the hand-off of [`ShmChannel::validate_into`] on `bundles`
    /// now, so the worker runs it while the caller does other work; that
    /// call, with the same slice, collects it (and handles its faults). Only
    /// a batch of one hand-off is rung ahead; anything else, or a worker
    /// that is not running, waits for the collecting call.
    pub fn begin_validate(&mut self, payload: bool, bundles: &[[u8; 64]]) {
        self.begin(Chunk::Bundles(payload, bundles));
    }

    /// [`ShmChannel::begin_validate`] for [`ShmChannel::lut_into`].
    pub fn begin_lut(&mut self, table: LutTable, ords: &[u32]) {
        self.begin(Chunk::Lut(table, ords));
    }

    fn begin(&mut self, chunk: Chunk<'_>) {
        let n = chunk.len();
        if n == 0 || n > shm::CHUNK || self.in_flight.is_some() {
            return;
        }
        let (op, table, cap) = chunk.op();
        if self.k.sup.given_up_on(cap).is_some() {
            return;
        }
        let single = !self.batchable(op);
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let Some(w) = self.worker.as_mut() else {
            return;
        };
        chunk.fill(&mut w.region);
        if ring(w, op, table, n, 0, single, seq) {
            let key = chunk.key();
            self.in_flight = Some(InFlight { key, seq });
        }
    }

    /// The hand-off rung ahead for this call, if it is this call's; one
    /// rung for another call is waited for and dropped (its answers were
    /// never asked for), so the region is free.
    fn take_in_flight(&mut self, key: (u32, u32, usize, usize)) -> Option<u32> {
        let f = self.in_flight.take()?;
        if f.key == key {
            return Some(f.seq);
        }
        let single = !self.batchable(f.key.0);
        let budget = if single {
            self.k.timeout
        } else {
            batch_budget(f.key.3, self.k.timeout)
        };
        if let Some(w) = self.worker.as_mut() {
            if !matches!(wait(w, f.seq, single, budget, &|| {}), Wait::Finished) {
                if let Some(w) = self.worker.take() {
                    w.kill();
                }
            }
        }
        None
    }

    fn batchable(&self, op: u32) -> bool {
        match op {
            shm::OP_VALIDATE_HEADER => self.has_batch(false),
            shm::OP_VALIDATE_PAYLOAD => self.has_batch(true),
            shm::OP_LUT => self.flags & shm::FLAG_LUT_BATCH != 0,
            _ => false,
        }
    }

    /// Runs `chunk` (rung ahead or not), handing each answer to `sink` in
    /// order and counting those delivered.
    fn run_chunk(&mut self, chunk: Chunk<'_>, sink: &mut impl ShmSink, tick: &dyn Fn()) {
        let mut counted = Counted { sink, n: 0 };
        self.run_counted(chunk, &mut counted, tick);
        self.k.received += counted.n;
    }

    fn run_counted(&mut self, chunk: Chunk<'_>, sink: &mut impl ShmSink, tick: &dyn Fn()) {
        let (op, table, cap) = chunk.op();
        let n = chunk.len();
        let input_name = |i: usize| chunk.input_name(i);
        // Rung ahead by `begin` (region filled, start 0, the same mode).
        let mut rung = self.take_in_flight(chunk.key());
        // Sized only off the usual path (a chunk answered in one hand-off
        // goes straight to the sink).
        let mut answers = std::mem::take(&mut self.scratch);
        answers.clear();
        let mut single = !self.batchable(op);
        let mut start = 0usize;
        let mut fresh = rung.is_none();
        while start < n {
            if let Some(f) = self.k.sup.not_sent(cap) {
                for a in &mut sized(&mut answers, n)[start..] {
                    *a = Some(ShmAnswer::Fault(f.clone()));
                }
                break;
            }
            if self.worker.is_none() {
                self.restart();
                fresh = true;
                continue;
            }
            let (seq, rang) = match rung.take() {
                Some(seq) => (seq, true),
                None => {
                    self.seq = self.seq.wrapping_add(1);
                    let seq = self.seq;
                    let Some(w) = self.worker.as_mut() else {
                        continue;
                    };
                    if fresh {
                        chunk.fill(&mut w.region);
                        fresh = false;
                    }
                    (seq, ring(w, op, table, n, start, single, seq))
                }
            };
            let Some(w) = self.worker.as_mut() else {
                continue;
            };
            let outcome = if !rang {
                Wait::Died(None)
            } else {
                let budget = if single {
                    self.k.timeout
                } else {
                    batch_budget(n - start, self.k.timeout)
                };
                wait(w, seq, single, budget, tick)
            };
            if matches!(outcome, Wait::Finished) {
                let us = w.region.get(Field::Busy);
                self.busy += Duration::from_micros(u64::from(us));
            }
            let done = (w.region.get(Field::Done) as usize).clamp(start, n);
            let stamp = w.region.stamp();
            let full = w.region.get(Field::Full) == 1;
            match outcome {
                Wait::Finished if start == 0 && done == n && !full => {
                    // The whole chunk in one hand-off (the usual case): the
                    // answers go straight to the sink, in order.
                    if collect(&mut w.region, op, 0..n, sink) {
                        self.k.sup.count(cap, None);
                    }
                    tick();
                    self.scratch = answers;
                    return;
                }
                Wait::Finished => {
                    let good = collect_at(&mut w.region, op, start..done, &mut answers, n);
                    if good {
                        self.k.sup.count(cap, None);
                    }
                    tick();
                    if full && done > start {
                        // Its answer area filled: the rest in a new hand-off.
                        start = done;
                        continue;
                    }
                    // A hand-off finished short: the worker's fault, not the
                    // library's (a wrong bound, a lost answer).
                    let f = Fault {
                        class: FaultClass::Harness,
                        detail: format!(
                            "harness fault: the worker finished hand-off {seq} at entry {done} of {n}, \
                             this entry unanswered"
                        ),
                    };
                    for a in &mut sized(&mut answers, n)[done..] {
                        *a = Some(ShmAnswer::Fault(f.clone()));
                    }
                    start = n;
                }
                Wait::Stopped => {
                    let f = Fault {
                        class: FaultClass::NotSent,
                        detail: "not answered: the run was interrupted".into(),
                    };
                    for a in &mut sized(&mut answers, n)[start..] {
                        *a = Some(ShmAnswer::Fault(f.clone()));
                    }
                    if let Some(w) = self.worker.take() {
                        w.kill();
                    }
                    break;
                }
                Wait::Died(_) | Wait::Hung if !single => {
                    // A batch call crashed or hung: run it one entry at a
                    // time on a fresh worker, which names the input.
                    if let Some(w) = self.worker.take() {
                        w.kill();
                    }
                    single = true;
                    self.restart();
                    fresh = true;
                }
                Wait::Died(_) | Wait::Hung => {
                    let st = match outcome {
                        Wait::Died(st) => st,
                        _ => None,
                    };
                    let good = collect_at(&mut w.region, op, start..done, &mut answers, n);
                    if good {
                        self.k.sup.count(cap, None);
                    }
                    let culprit = usize::try_from(stamp)
                        .ok()
                        .and_then(|s| s.checked_sub(1))
                        .unwrap_or(done)
                        .clamp(done, n - 1);
                    let hung = matches!(outcome, Wait::Hung);
                    let status = self.worker.take().and_then(Worker::kill).or(st);
                    let f = if hung {
                        Fault {
                            class: FaultClass::Timeout,
                            detail: format!(
                                "no answer within {:?} (the worker was running this input)",
                                self.k.timeout
                            ),
                        }
                    } else {
                        Fault {
                            class: FaultClass::Crash,
                            detail: format!(
                                "{} while running this input (stamped by the worker)",
                                describe_exit(status)
                            ),
                        }
                    };
                    self.k.sup.count(cap, Some((&f, input_name(culprit))));
                    sized(&mut answers, n)[culprit] = Some(ShmAnswer::Fault(f));
                    start = culprit + 1;
                    tick();
                    if start < n && self.k.sup.given_up_on(cap).is_none() {
                        self.restart();
                        fresh = true;
                    }
                }
            }
        }
        for a in sized(&mut answers, n).drain(..) {
            sink.answer(a.unwrap_or_else(|| {
                ShmAnswer::Fault(Fault {
                    class: FaultClass::Crash,
                    detail: "internal: entry not answered".into(),
                })
            }));
        }
        self.scratch = answers;
    }
}

/// Entries `range` of the region into `answers` (grown to `n`) at their
/// positions; true if one of them was a good answer.
fn collect_at(
    r: &mut Region,
    op: u32,
    range: std::ops::Range<usize>,
    answers: &mut Vec<Option<ShmAnswer>>,
    n: usize,
) -> bool {
    let mut i = range.start;
    collect(r, op, range, &mut |a| {
        sized(answers, n)[i] = Some(a);
        i += 1;
    })
}

/// `answers`, grown to `n` unanswered entries if it is shorter.
fn sized(answers: &mut Vec<Option<ShmAnswer>>, n: usize) -> &mut Vec<Option<ShmAnswer>> {
    if answers.len() < n {
        answers.resize(n, None);
    }
    answers
}
