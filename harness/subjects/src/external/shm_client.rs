//! The gate's side of a `lib:` subject's worker ([`super::shm_worker`]):
//! chunks of one operation through the region ([`super::shm`]), one doorbell
//! byte each way per hand-off. The worker's stamp names the input a crash or
//! hang was on; a library batch call that crashes or overruns
//! [`batch_budget`] is re-run one entry at a time, which names it.

use super::process::{describe_exit, Group, Reply, Ring, POLL};
use super::protocol::{parse_hello, wrong_kind, Answer, Hello, Request};
use super::shm::{self, Field, Region};
use super::supervisor::Kept;
use super::verdict;
use super::watch::HELLO_MIN;
use crate::subjects::Fault;
use crate::subjects::{Capability, LutTable, Name};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, ExitStatus};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// The time a library batch call of `n` entries gets before it is re-run
/// one entry at a time: 1 s + 100 µs per entry, at most the case timeout.
pub fn batch_budget(n: usize, case_timeout: Duration) -> Duration {
    let per = Duration::from_micros(100).saturating_mul(u32::try_from(n).unwrap_or(u32::MAX));
    (Duration::from_secs(1) + per).min(case_timeout)
}

pub struct ShmChannel {
    k: Kept,
    exe: PathBuf,
    lib: String,
    worker: Option<Worker>,
    flags: u32,
    seq: u32,
    /// One hand-off's answers, reused (allocating a chunk's worth per
    /// hand-off costs page faults).
    scratch: Vec<Option<Reply>>,
    /// Worker-reported time not yet taken ([`ShmChannel::take_busy`]).
    busy: Duration,
    /// The hand-off rung ahead ([`ShmChannel::begin`]), not yet collected:
    /// what it runs ([`Chunk::key`]: the collecting call must pass the very
    /// slice) and its number.
    in_flight: Option<(Key, u32)>,
}

/// A hand-off's op, LUT table, inputs' address and count.
type Key = (u32, u32, usize, usize);

/// What a hand-off runs: a validator's bundles (`true`: payload), one
/// table's ordinals, or request records of one operation.
#[derive(Clone, Copy)]
pub enum Chunk<'a> {
    Bundles(bool, &'a [[u8; 64]]),
    Lut(LutTable, &'a [u32]),
    Records(&'a [Request]),
}

impl Chunk<'_> {
    fn len(self) -> usize {
        self.key().3
    }

    fn part(self, r: std::ops::Range<usize>) -> Self {
        match self {
            Chunk::Bundles(p, c) => Chunk::Bundles(p, &c[r]),
            Chunk::Lut(t, c) => Chunk::Lut(t, &c[r]),
            Chunk::Records(c) => Chunk::Records(&c[r]),
        }
    }

    /// The hand-off op, the LUT table index (its position in
    /// [`LutTable::ALL`]), and the capability given up on.
    fn op(self) -> (u32, u32, Capability) {
        match self {
            Chunk::Bundles(false, _) => (shm::OP_VALIDATE_HEADER, 0, Capability::ValidateHeader),
            Chunk::Bundles(true, _) => (shm::OP_VALIDATE_PAYLOAD, 0, Capability::ValidatePayload),
            Chunk::Lut(t, _) => (shm::OP_LUT, t as u32, Capability::Lut(t)),
            Chunk::Records(c) => (shm::OP_RECORDS, 0, c[0].capability()),
        }
    }

    fn key(self) -> Key {
        let (at, n) = match self {
            Chunk::Bundles(_, c) => (c.as_ptr() as usize, c.len()),
            Chunk::Lut(_, c) => (c.as_ptr() as usize, c.len()),
            Chunk::Records(c) => (c.as_ptr() as usize, c.len()),
        };
        let (op, table, _) = self.op();
        (op, table, at, n)
    }

    /// Writes the inputs into the region (a record's input: its offset).
    fn fill(self, r: &mut Region) {
        match self {
            Chunk::Bundles(_, c) => {
                r.areas().inputs[..c.len() * 64].copy_from_slice(c.as_flattened());
            }
            Chunk::Lut(_, c) => {
                let dst = r.areas().inputs;
                for (i, o) in c.iter().enumerate() {
                    dst[i * 4..i * 4 + 4].copy_from_slice(&o.to_ne_bytes());
                }
            }
            Chunk::Records(c) => {
                let mut used = 0usize;
                for (k, q) in c.iter().enumerate() {
                    let off =
                        shm::put_request(r.areas().requests, &mut used, q).unwrap_or(u32::MAX);
                    r.areas().inputs[k * 4..k * 4 + 4].copy_from_slice(&off.to_ne_bytes());
                }
            }
        }
    }

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
    ) -> Result<ShmChannel, String> {
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
        };
        let (w, hello) = spawn(&c.exe, &c.lib, arch, timeout, &c.k.sup.stderr_ring())
            .map_err(|e| c.k.sup.start_error(e))?;
        c.flags = w.region.get(Field::Flags);
        c.k.hello = hello;
        c.worker = Some(w);
        Ok(c)
    }

    /// The worker's own time on the hand-offs finished since the last call.
    pub fn take_busy(&mut self) -> Duration {
        std::mem::take(&mut self.busy)
    }

    /// True if the library exports the batch entry point of this validator.
    pub fn has_batch(&self, payload: bool) -> bool {
        self.batchable(Chunk::Bundles(payload, &[]).op().0)
    }

    fn restart(&mut self) {
        let ring = self.k.sup.stderr_ring();
        let (exe, lib, arch, timeout) = (&self.exe, &self.lib, &self.k.arch, self.k.timeout);
        self.worker = self.k.sup.restart(
            &self.k.hello,
            || spawn(exe, lib, arch, timeout, &ring),
            |mut w| _ = w.group.kill(),
        );
    }

    /// Runs `reqs` as request records, one hand-off per [`shm::CHUNK`]
    /// requests or [`shm::REQ`] bytes; one reply each, in order (an op not
    /// declared: [`Answer::Unsupported`], no hand-off).
    pub fn call_batch(&mut self, reqs: &[Request], tick: &dyn Fn()) -> Vec<Reply> {
        let mut out = Vec::with_capacity(reqs.len());
        let mut i = 0;
        while i < reqs.len() {
            if !self.supports(reqs[i].capability()) {
                out.push(Ok(Answer::Unsupported));
                i += 1;
                continue;
            }
            // The next run of declared requests that fits one hand-off.
            let n = self.records_fitting(&reqs[i..]);
            let chunk = &reqs[i..i + n];
            let cap = reqs[i].capability();
            let from = out.len();
            let mut sink = |a: Reply| {
                out.push(match a {
                    Ok(a) if !a.answers(cap) => Err(wrong_kind(&a)),
                    a => a,
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
                        Err(f @ Fault::Protocol(_)) => {
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

    /// How many of `reqs` fit one hand-off: declared requests of one
    /// operation (one give-up budget), at most [`shm::CHUNK`] and
    /// [`shm::REQ`] bytes (at least one).
    fn records_fitting(&self, reqs: &[Request]) -> usize {
        let Some(cap) = reqs.first().map(Request::capability) else {
            return 0;
        };
        let mut bytes = 0usize;
        let mut n = 0;
        while let Some(r) = reqs.get(n) {
            if !self.supports(r.capability()) || r.capability() != cap || n == shm::CHUNK {
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

    /// [`ShmChannel::begin`] for [`ShmChannel::call_batch`] on `reqs`.
    pub fn begin_records(&mut self, reqs: &[Request]) {
        let n = self.records_fitting(reqs);
        if n > 0 {
            self.begin(Chunk::Records(&reqs[..n]));
        }
    }

    /// Runs `all` in hand-offs of [`shm::CHUNK`], answers to `sink` in order.
    pub fn run_into(&mut self, all: Chunk<'_>, tick: &dyn Fn(), sink: &mut impl ShmSink) {
        for at in (0..all.len()).step_by(shm::CHUNK) {
            let c = all.part(at..all.len().min(at + shm::CHUNK));
            self.run_chunk(c, sink, tick);
        }
    }

    /// Rings the hand-off of `chunk` now so the worker runs it meanwhile;
    /// the run call with the same slice collects it (and its faults). Only
    /// a one-hand-off batch on a running worker is rung ahead.
    pub fn begin(&mut self, chunk: Chunk<'_>) {
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
            self.in_flight = Some((chunk.key(), seq));
        }
    }

    /// The hand-off rung ahead, if it is this call's; another call's is
    /// waited for and dropped, freeing the region.
    fn take_in_flight(&mut self, key: Key) -> Option<u32> {
        let (k, seq) = self.in_flight.take()?;
        if k == key {
            return Some(seq);
        }
        let single = !self.batchable(k.0);
        let budget = self.budget(single, k.3);
        if let Some(w) = self.worker.as_mut() {
            if !matches!(wait(w, seq, single, budget, &|| {}), Wait::Finished) {
                self.kill();
            }
        }
        None
    }

    /// A hand-off's time: the case timeout per entry (`single`), else [`batch_budget`].
    fn budget(&self, single: bool, n: usize) -> Duration {
        if single {
            self.k.timeout
        } else {
            batch_budget(n, self.k.timeout)
        }
    }

    fn kill(&mut self) -> Option<ExitStatus> {
        self.worker.take().and_then(|mut w| w.group.kill())
    }

    fn batchable(&self, op: u32) -> bool {
        self.flags & shm::batch_flag(op) != 0
    }

    /// Runs `chunk` (rung ahead or not), answers to `sink` in order.
    fn run_chunk(&mut self, chunk: Chunk<'_>, sink: &mut impl ShmSink, tick: &dyn Fn()) {
        let (op, table, cap) = chunk.op();
        let n = chunk.len();
        let input_name = |i: usize| chunk.input_name(i);
        let mut rung = self.take_in_flight(chunk.key());
        // Sized only off the usual one-hand-off path.
        let mut answers = std::mem::take(&mut self.scratch);
        answers.clear();
        let mut single = !self.batchable(op);
        let mut start = 0usize;
        let mut fresh = rung.is_none();
        while start < n {
            if let Some(f) = self.k.sup.not_sent(cap) {
                fault_from(&mut answers, n, start, &f);
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
            let budget = self.budget(single, n - start);
            let Some(w) = self.worker.as_mut() else {
                continue;
            };
            let outcome = if !rang {
                Wait::Died(None)
            } else {
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
                    // The usual case: straight to the sink.
                    let (good, delivered) = collect(&mut w.region, op, 0..n, sink);
                    if good {
                        self.k.sup.count(cap, None);
                    }
                    self.k.received += delivered;
                    tick();
                    self.scratch = answers;
                    return;
                }
                Wait::Stopped => {
                    let f = Fault::NotSent("not answered: the run was interrupted".into());
                    fault_from(&mut answers, n, start, &f);
                    self.kill();
                    break;
                }
                Wait::Died(_) | Wait::Hung if !single => {
                    // Re-run one entry at a time, which names the input.
                    self.kill();
                    single = true;
                    self.restart();
                    fresh = true;
                    continue;
                }
                _ => {}
            }
            // The entries finished are answers.
            let mut i = start;
            let (good, _) = collect(&mut w.region, op, start..done, &mut |a| {
                sized(&mut answers, n)[i] = Some(a);
                i += 1;
            });
            if good {
                self.k.sup.count(cap, None);
            }
            let st = match outcome {
                Wait::Finished if full && done > start => {
                    // Its answer area filled: the rest in a new hand-off.
                    tick();
                    start = done;
                    continue;
                }
                Wait::Finished => {
                    // Finished short: the worker's fault, not the library's.
                    tick();
                    let f = format!(
                        "the worker finished hand-off {seq} at entry {done} of {n}, \
                         this entry unanswered"
                    );
                    fault_from(&mut answers, n, done, &Fault::Harness(f));
                    break;
                }
                Wait::Died(st) => st,
                _ => None,
            };
            // The stamped entry not finished (stamp 1 + i, then `done` i + 1);
            // none between entries.
            let running = usize::try_from(stamp)
                .ok()
                .and_then(|s| s.checked_sub(1))
                .filter(|&i| i == done && i < n);
            let status = self.kill().or(st);
            let on = match running {
                Some(_) => "while running this input (stamped by the worker)".to_string(),
                None => format!("between entries, no input running ({done} of {n} answered)"),
            };
            let f = match outcome {
                Wait::Hung => {
                    let t = self.k.timeout;
                    Fault::Timeout(format!("no answer within {t:?} {on}"))
                }
                _ => Fault::Crash(format!("{} {on}", describe_exit(status))),
            };
            let culprit = running.map_or_else(|| "no input".to_string(), input_name);
            self.k.sup.count(cap, Some((&f, culprit)));
            start = match running {
                Some(i) => {
                    sized(&mut answers, n)[i] = Some(Err(f));
                    i + 1
                }
                // Nothing to blame: the rest runs again (the fault counts
                // toward giving up, so no endless restarts).
                None => done,
            };
            tick();
            if start < n && self.k.sup.given_up_on(cap).is_none() {
                self.restart();
                fresh = true;
            }
        }
        for a in sized(&mut answers, n).drain(..) {
            let a = a.unwrap_or_else(|| Err(Fault::Crash("internal: entry not answered".into())));
            self.k.received += u64::from(delivered(&a));
            sink.answer(a);
        }
        self.scratch = answers;
    }
}

fn sized(answers: &mut Vec<Option<Reply>>, n: usize) -> &mut Vec<Option<Reply>> {
    if answers.len() < n {
        answers.resize(n, None);
    }
    answers
}

/// Where a chunk's answers go, in order (any `FnMut(Reply)`); a sink
/// keeping compact codes (the judge's store) takes the usual answers
/// (verdict id, wire, refusal) untyped.
pub trait ShmSink {
    fn answer(&mut self, a: Reply);

    #[inline]
    fn verdict_id(&mut self, id: u16) {
        let p = verdict::verdict_of(id).map(|p| p.name().to_string());
        self.answer(Ok(Answer::Verdict(p)));
    }

    #[inline]
    fn wire(&mut self, w: u32) {
        self.answer(Ok(Answer::Wire(w.into())));
    }

    #[inline]
    fn refused(&mut self, n: &Name) {
        self.answer(Ok(Answer::Refused(n.as_str().to_string())));
    }
}

impl<F: FnMut(Reply)> ShmSink for F {
    #[inline]
    fn answer(&mut self, a: Reply) {
        self(a);
    }
}

/// True if the transport delivered `a` (well-formed or not).
pub fn delivered(a: &Reply) -> bool {
    !matches!(a, Err(f) if !matches!(f, Fault::Protocol(_)))
}

/// Entries `range` to `sink` in order; whether one was good, and how
/// many were [`delivered`]. Refusals are kept by arena offset (the worker
/// writes each text once, so each is read and interned once).
fn collect(
    r: &mut Region,
    op: u32,
    range: std::ops::Range<usize>,
    sink: &mut impl ShmSink,
) -> (bool, u64) {
    let mut good = false;
    let mut delivered_n = range.len() as u64;
    let mut refusals = Vec::new();
    let validator = matches!(op, shm::OP_VALIDATE_HEADER | shm::OP_VALIDATE_PAYLOAD);
    for i in range {
        let (code, value) = (r.areas().codes[i], r.areas().values[i]);
        if validator && code < shm::CODE_RESERVED {
            sink.verdict_id(code);
            good = true;
        } else if op == shm::OP_LUT && code == shm::CODE_WIRE {
            sink.wire(value);
            good = true;
        } else if let Some((_, n)) = (op == shm::OP_LUT && code == shm::CODE_REFUSED)
            .then(|| refusals.iter().find(|(o, _)| *o == value))
            .flatten()
        {
            sink.refused(n);
            good = true;
        } else {
            let a = decode(r, op, i, code, value, &mut refusals);
            // A record of the library's error is delivered, as an answer.
            good |= a.is_ok() || op == shm::OP_RECORDS && matches!(a, Err(Fault::Protocol(_)));
            delivered_n -= u64::from(!delivered(&a));
            sink.answer(a);
        }
    }
    (good, delivered_n)
}

fn fault_from(answers: &mut Vec<Option<Reply>>, n: usize, from: usize, f: &Fault) {
    for a in &mut sized(answers, n)[from..] {
        *a = Some(Err(f.clone()));
    }
}

/// The worker's own mistake, never the library's answer.
#[cold]
fn harness(detail: String) -> Reply {
    Err(Fault::Harness(detail))
}

fn decode(
    r: &mut Region,
    op: u32,
    i: usize,
    code: u16,
    value: u32,
    refusals: &mut Vec<(u32, Name)>,
) -> Reply {
    let text = |r: &mut Region| {
        r.text_at(value)
            .unwrap_or_else(|| "(text lost: the worker's text arena is full)".into())
    };
    match code {
        shm::CODE_UNSET => harness("the worker left this entry unwritten".into()),
        shm::CODE_UNSUPPORTED => Ok(Answer::Unsupported),
        shm::CODE_ERROR => library_error(&text(r)),
        shm::CODE_RECORD if op == shm::OP_RECORDS => match r.answer_at(value) {
            Some((at, rec)) if at as usize == i => match super::protocol::get_answer(rec) {
                Ok(Ok(a)) => Ok(a),
                Ok(Err(e)) => library_error(&e),
                Err(e) => harness(format!("entry {i}'s {e}")),
            },
            Some((at, _)) => harness(format!(
                "entry {i}'s answer record holds entry {at}'s answer (out of place)"
            )),
            None => harness(format!("entry {i}'s answer record is cut")),
        },
        _ if op == shm::OP_RECORDS => harness(format!("worker wrote code {code} for a record")),
        shm::CODE_NAMED if op != shm::OP_LUT => Ok(Answer::Verdict(Some(text(r)))),
        _ if op != shm::OP_LUT => {
            let p = verdict::verdict_of(code).map(|p| p.name().to_string());
            Ok(Answer::Verdict(p))
        }
        shm::CODE_WIRE => Ok(Answer::Wire(value.into())),
        // A refusal not read yet in this hand-off (`collect` serves the others).
        shm::CODE_REFUSED => {
            let why = text(r);
            if value != u32::MAX && refusals.len() < 64 {
                refusals.push((value, verdict::foreign(&why)));
            }
            Ok(Answer::Refused(why))
        }
        c => Err(Fault::Protocol(format!("worker wrote answer code {c}"))),
    }
}

fn library_error(e: &str) -> Reply {
    Err(Fault::Protocol(format!(
        "the library answered an error: {e}"
    )))
}

/// A started worker: process group, doorbell (its stdin), rings, region.
struct Worker {
    group: Group,
    bell: ChildStdin,
    rings: Receiver<()>,
    region: Region,
}

enum Wait {
    Finished,
    Died(Option<ExitStatus>),
    Hung,
    Stopped,
}

fn spawn(
    exe: &std::path::Path,
    lib: &str,
    arch: &str,
    timeout: Duration,
    ring: &Ring,
) -> Result<(Worker, Hello), String> {
    let (region, path) = Region::create()?;
    let mut cmd = Command::new(exe);
    cmd.arg(super::shm_worker::WORKER_SUBCOMMAND)
        .arg("--shm")
        .arg(&path)
        .arg("--arch")
        .arg(arch)
        .arg(format!("lib:{}", lib));
    let (group, bell, out) = Group::spawn(&mut cmd, &exe.display().to_string(), ring)
        .inspect_err(|_| crate::interrupt::discard_temp(&path))?;
    let (tx, rings) = mpsc::channel();
    thread::spawn(move || {
        let (mut out, mut buf) = (out, [0u8; 64]);
        while out.read(&mut buf).is_ok_and(|n| n > 0) && tx.send(()).is_ok() {}
    });
    let mut w = Worker {
        group,
        bell,
        rings,
        region,
    };
    let wait = timeout.max(HELLO_MIN);
    let got = {
        let _waiting = super::watch::waiting();
        w.rings.recv_timeout(wait)
    };
    crate::interrupt::discard_temp(&path);
    let e = match (got, w.region.get(Field::Ready)) {
        (Ok(()), shm::READY_OK | shm::READY_UNSUPPORTED) => {
            let line = w
                .region
                .answer_at(0)
                .map(|(_, l)| String::from_utf8_lossy(l).into_owned());
            if let Some(Ok(h)) = line.as_deref().map(parse_hello) {
                return Ok((w, h));
            }
            format!("worker wrote no hello: {line:?}")
        }
        // The worker's report is the reason (its exit status would be our SIGKILL).
        (Ok(()), shm::READY_FAILED) => format!(
            "worker failed: {} (the harness ended the worker)",
            w.region.error()
        ),
        (Ok(()), s) => format!("worker rang in state {s}"),
        (Err(RecvTimeoutError::Timeout), _) => format!("worker not ready within {wait:?}"),
        (Err(RecvTimeoutError::Disconnected), _) => {
            let st = w.group.kill();
            return Err(format!(
                "worker exited before it was ready ({})",
                describe_exit(st)
            ));
        }
    };
    w.group.kill();
    Err(e)
}

/// Sets up hand-off `seq` (entries `start..n`) and rings; false if the
/// worker is gone.
fn ring(
    w: &mut Worker,
    op: u32,
    table: u32,
    n: usize,
    start: usize,
    single: bool,
    seq: u32,
) -> bool {
    let r = &w.region;
    r.set(Field::Op, op);
    r.set(Field::Table, table);
    r.set(Field::N, u32::try_from(n).unwrap_or(u32::MAX));
    r.set(Field::Start, u32::try_from(start).unwrap_or(u32::MAX));
    r.set(Field::Mode, u32::from(single));
    r.set(Field::Done, u32::try_from(start).unwrap_or(u32::MAX));
    r.set(Field::Full, 0);
    // An entry the worker does not write stays unset (a harness fault).
    w.region.areas().codes[start.min(n)..n.min(shm::CHUNK)].fill(shm::CODE_UNSET);
    let r = &w.region;
    r.clear_stamp();
    r.set(Field::Seq, seq);
    w.bell.write_all(&[1]).and_then(|()| w.bell.flush()).is_ok()
}

/// How long [`wait`] polls the region before it sleeps on the doorbell.
const SPIN: Duration = Duration::from_millis(5);

/// Waits for hand-off `seq`. In single mode the deadline moves with every
/// finished entry (a slow chunk is no hang; one entry taking `budget` is).
fn wait(w: &mut Worker, seq: u32, single: bool, budget: Duration, tick: &dyn Fn()) -> Wait {
    let _waiting = super::watch::waiting();
    // Most hand-offs finish within milliseconds: poll first (yielding the
    // core), saving wake-ups; drain the doorbell bytes rung meanwhile.
    let finished = |w: &Worker| w.region.get(Field::Finished) == seq;
    let spin_until = Instant::now() + SPIN;
    while Instant::now() < spin_until {
        if finished(w) {
            while w.rings.try_recv().is_ok() {}
            return Wait::Finished;
        }
        thread::yield_now();
    }
    let mut deadline = Instant::now() + budget;
    let mut last_done = w.region.get(Field::Done);
    loop {
        if crate::interrupt::stop_requested() {
            return Wait::Stopped;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match w.rings.recv_timeout(left.min(POLL)) {
            Ok(()) if finished(w) => return Wait::Finished,
            Ok(()) => {}
            Err(RecvTimeoutError::Disconnected) if finished(w) => return Wait::Finished,
            Err(RecvTimeoutError::Disconnected) => {
                return Wait::Died(w.group.child.try_wait().ok().flatten());
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Ok(Some(st)) = w.group.child.try_wait() {
                    return if finished(w) {
                        Wait::Finished
                    } else {
                        Wait::Died(Some(st))
                    };
                }
                if single {
                    let d = w.region.get(Field::Done);
                    if d != last_done {
                        last_done = d;
                        deadline = Instant::now() + budget;
                        tick();
                    }
                }
                if Instant::now() >= deadline {
                    return Wait::Hung;
                }
            }
        }
    }
}
