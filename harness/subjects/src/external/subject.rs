//! [`ExternalSubject`]: a `lib:` / `cmd:` subject as a [`Subject`] over its
//! [`Client`]; [`open`], the registry's opener; per subject name, calls,
//! time and stderr tail summed process-wide ([`stats`]) for the report.

use super::batch_framing::{self, BatchProcess};
use super::client::Client;
use super::client::{fault, lut_reply, sent, verdict_reply};
use super::process::{ProcessSubject, Reply as ClientReply};
use super::protocol::{lower_request, request_of, said, stream_request, Answer, Hello, Request};
use super::ready::ReadyStore;
use super::shm_client::{delivered, Chunk, ShmChannel};
use super::supervisor::STDERR_LINES;
use crate::generation::Generation;
use crate::subjects::registry::{OpenError, SubjectSpec};
use crate::subjects::{
    Batch, Capabilities, Capability, Compact, Fault, GivenUp, LutResult, LutTable, Question, Reply,
    Said, Subject, Transport, Validator, Verdict,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A path `dlopen` takes as a file, never a name to search for.
fn dlopen_path(p: &str) -> String {
    if p.contains('/') {
        p.to_string()
    } else {
        format!("./{p}")
    }
}

/// Default per-case timeout (`--case-timeout`: [`set_case_timeout`]).
pub const DEFAULT_CASE_TIMEOUT: Duration = Duration::from_secs(30);

#[allow(clippy::cast_possible_truncation)]
static CASE_TIMEOUT_MS: AtomicU64 = AtomicU64::new(DEFAULT_CASE_TIMEOUT.as_millis() as u64);

/// The per-case timeout of external subjects opened from now on.
pub fn set_case_timeout(t: Duration) {
    let ms = u64::try_from(t.as_millis()).unwrap_or(u64::MAX).max(1);
    CASE_TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

fn case_timeout() -> Duration {
    Duration::from_millis(CASE_TIMEOUT_MS.load(Ordering::Relaxed))
}

/// The generation key of a subject given up on every generation.
const ANY_ARCH: &str = "*";

/// A give-up: generation (or [`ANY_ARCH`]), operation (`None`: all), why.
type GiveUp = (String, Option<Capability>, String);

/// Per subject name, its give-ups: one instance (a gate thread's) giving
/// an operation up gives it up in all.
fn given_up_registry() -> &'static Mutex<BTreeMap<String, Vec<GiveUp>>> {
    static R: OnceLock<Mutex<BTreeMap<String, Vec<GiveUp>>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// True once [`given_up_registry`] holds anything (else no lock is taken).
static ANY_GIVEN_UP: AtomicBool = AtomicBool::new(false);

/// Starts the client for an external spec serving `arch` (a `lib:`
/// worker runs `worker_exe subject-worker --shm …`).
pub fn start(
    spec: &SubjectSpec,
    worker_exe: &std::path::Path,
    arch: Generation,
    timeout: Duration,
) -> Result<Client, String> {
    match spec {
        SubjectSpec::Cmd(c) => ProcessSubject::start(c, arch.name(), timeout).map(Client::Lines),
        SubjectSpec::Lib(p) => ShmChannel::start(
            worker_exe.to_path_buf(),
            dlopen_path(p),
            arch.name(),
            timeout,
        )
        .map(Client::Shm),
        _ => Err(format!("`{spec}` is not an external subject")),
    }
}

/// The registry's opener for `lib:` / `cmd:` specs (installed by the CLI).
pub fn open(spec: &SubjectSpec, arch: Generation) -> Result<Box<dyn Subject + Send>, OpenError> {
    let failed = |reason: String| OpenError::Failed {
        spec: spec.clone(),
        reason,
    };
    let exe = std::env::current_exe().map_err(|e| {
        failed(format!(
            "cannot find the tpbconform binary for the worker: {e}"
        ))
    })?;
    let client = start(spec, &exe, arch, case_timeout()).map_err(failed)?;
    let offered = client
        .hello()
        .framings
        .iter()
        .any(|f| f == batch_framing::BATCH64);
    let batch = match spec {
        // One that cannot start with it keeps the JSON lines.
        SubjectSpec::Cmd(c) if offered => {
            let ring = client.supervisor().stderr_ring();
            BatchProcess::start(c, arch.name(), case_timeout(), ring).ok()
        }
        _ => None,
    };
    let s = ExternalSubject::new(spec.to_string(), client, batch);
    Ok(Box::new(s))
}

pub struct ExternalSubject {
    name: String,
    caps: Capabilities,
    gen: Generation,
    client: Mutex<Client>,
    /// The `cmd:` subject's `batch64` instance, if any.
    batch: Option<Mutex<BatchProcess>>,
    /// The last prefetch's answers, each served once before any round trip.
    ready: RefCell<ReadyStore>,
    calls: AtomicU64,
    busy_ns: AtomicU64,
    /// Answers delivered outside the client (`batch64` frames).
    received: AtomicU64,
    /// Answers handed to the judge (served, or vouched for in bulk).
    compared: AtomicU64,
    /// Encode answers delivered ([`ExternalSubject::note_encodes`]).
    encodes: AtomicU64,
    /// A roundtrip batch's encodes, rung, collected at the first encode asked.
    encodes_pending: RefCell<Vec<Request>>,
    /// A batch rung ahead ([`Subject::prefetch_begin`]): its kind and length,
    /// and its requests, kept unmoved for the prefetch that collects it.
    begun: RefCell<((u8, usize), Vec<Request>)>,
}

fn batch_key(b: Batch<'_>) -> (u8, usize) {
    match b {
        Batch::Validate(v, bs) => (u8::from(v == Validator::Payload), bs.len()),
        Batch::Decode(bs) => (2, bs.len()),
        Batch::Lut(_, os) => (3, os.len()),
        Batch::Roundtrip(bs) => (4, bs.len()),
        Batch::Streams(ss) => (5, ss.len()),
        Batch::Lower(ms) => (6, ms.len()),
    }
}

/// What a hello declares (of `lut`, only the declared tables).
fn capabilities_of(h: &Hello) -> Capabilities {
    let tables = h.lut_tables().into_iter().map(Capability::Lut).collect();
    Capabilities::LUTS.missing(h.ops).union(tables)
}

impl ExternalSubject {
    pub fn new(name: String, client: Client, batch: Option<BatchProcess>) -> ExternalSubject {
        let caps = capabilities_of(client.hello());
        let gen = Generation::ALL
            .into_iter()
            .find(|a| a.name() == client.arch())
            .unwrap_or_default();
        ExternalSubject {
            name,
            caps,
            gen,
            client: Mutex::new(client),
            batch: batch.map(Mutex::new),
            ready: RefCell::new(ReadyStore::default()),
            calls: AtomicU64::new(0),
            busy_ns: AtomicU64::new(0),
            received: AtomicU64::new(0),
            compared: AtomicU64::new(0),
            encodes: AtomicU64::new(0),
            encodes_pending: RefCell::new(Vec::new()),
            begun: RefCell::default(),
        }
    }

    fn count_busy(&self, n: usize, busy: Duration) {
        let ns = u64::try_from(busy.as_nanos()).unwrap_or(u64::MAX);
        self.busy_ns.fetch_add(ns, Ordering::Relaxed);
        self.calls.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Notes the encode replies delivered, which [`SubjectStats::received`]
    /// leaves out (part of the roundtrip case counted by its decode).
    fn note_encodes(&self, replies: &[ClientReply]) {
        let n = replies.iter().filter(|r| delivered(r)).count();
        self.encodes.fetch_add(n as u64, Ordering::Relaxed);
    }

    #[inline]
    fn compared<T>(&self, r: Reply<T>) -> Reply<T> {
        self.compared.fetch_add(1, Ordering::Relaxed);
        r
    }

    fn timed<T>(&self, n: usize, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.count_busy(n, t.elapsed());
        out
    }

    /// One bundle the batch did not hold, as a one-entry hand-off of a
    /// `lib:` worker; `None`: no worker, or not sent.
    fn validate_one_shared(
        &self,
        v: Validator,
        op: Capability,
        b: &[u8; 64],
    ) -> Option<Reply<Verdict>> {
        let mut c = self.client.lock().ok()?;
        if !c.supports(op) {
            return None;
        }
        let ch = c.shm()?;
        let mut got = None;
        let payload = v == Validator::Payload;
        let chunk = Chunk::Bundles(payload, std::slice::from_ref(b));
        ch.run_into(chunk, &|| {}, &mut |a| got = Some(a));
        self.count_busy(1, ch.take_busy());
        got.and_then(sent).map(verdict_reply)
    }

    /// The stored answer to `q` (found without building the request): a
    /// decode's in the bundle batch, any other among the requests (encodes
    /// once the pending ones are sent).
    fn stored(&self, q: Question<'_>) -> Option<ClientReply> {
        let mut s = self.ready.try_borrow_mut().ok()?;
        match q {
            Question::Decode(b) => return s.take_reply(Capability::Decode, b),
            Question::Encode(..) => {
                let pending = self
                    .encodes_pending
                    .try_borrow_mut()
                    .map(|mut p| std::mem::take(&mut *p))
                    .unwrap_or_default();
                if !pending.is_empty() {
                    self.prefetch_requests(pending, &|| {}, &mut s);
                }
            }
            _ => {}
        }
        s.take_request(|r| super::protocol::asks(q, r, self.gen))
    }

    fn ask_batch(&self, reqs: &[Request], tick: &dyn Fn()) -> Option<Vec<ClientReply>> {
        let mut c = self.client.lock().ok()?;
        Some(self.timed(reqs.len(), || c.call_batch_with(reqs, tick)))
    }

    fn ask_now(&self, r: Request) -> ClientReply {
        let Ok(mut c) = self.client.lock() else {
            return Err(Fault::Crash("client lock poisoned".into()));
        };
        if !c.supports(r.capability()) {
            return Ok(Answer::Unsupported);
        }
        let out = self.timed(1, || c.call(&r));
        if matches!(r, Request::Encode { .. }) {
            self.note_encodes(std::slice::from_ref(&out));
        }
        out
    }
}

impl ExternalSubject {
    #[inline(never)]
    fn validate_unready(&self, v: Validator, op: Capability, b: &[u8; 64]) -> Reply<Verdict> {
        if let Some(r) = self.validate_one_shared(v, op, b) {
            return r;
        }
        verdict_reply(self.ask_now(Request::Validate(v, *b)))
    }

    #[inline(never)]
    fn lut_unready(&self, table: LutTable, input: u32) -> Reply<LutResult> {
        lut_reply(self.ask_now(Request::Lut { table, input }))
    }

    /// Why this subject was given up on an operation of `needs` for its
    /// generation, by any instance ([`given_up_registry`]).
    fn recorded_give_up(&self, needs: Capabilities) -> Option<GivenUp> {
        let (arch, mine) = {
            let c = self.client.lock().ok()?;
            let sup = c.supervisor();
            // Mine, each with whether for timeouts (then every generation's).
            let mut mine: Vec<(Option<Capability>, String, bool)> = Vec::new();
            if let Some(why) = sup.given_up_whole() {
                let hangs = needs.iter().any(|op| sup.given_up_for_timeouts(op));
                mine.push((None, why.to_string(), hangs));
            }
            for (op, why) in sup.given_up_ops() {
                mine.push((Some(op), why.to_string(), sup.given_up_for_timeouts(op)));
            }
            if mine.is_empty() && !ANY_GIVEN_UP.load(Ordering::Relaxed) {
                return None;
            }
            (c.arch().to_string(), mine)
        };
        let mut g = given_up_registry().lock().ok()?;
        let ups = g.entry(self.name.clone()).or_default();
        for (op, why, hangs) in mine {
            let archs = [arch.as_str(), ANY_ARCH];
            for a in &archs[..if hangs { 2 } else { 1 }] {
                if !ups.iter().any(|(x, o, _)| x == a && *o == op) {
                    ups.push(((*a).to_string(), op, why.clone()));
                    ANY_GIVEN_UP.store(true, Ordering::Relaxed);
                }
            }
        }
        needs.iter().find_map(|op| {
            ups.iter()
                .find(|(a, o, _)| (*a == arch || a == ANY_ARCH) && o.is_none_or(|o| o == op))
                .map(|(_, _, why)| GivenUp {
                    op,
                    why: why.clone(),
                })
        })
    }
}

/// The operations a batch asks (a LUT batch: each of its tables).
fn batch_needs(batch: Batch<'_>) -> Capabilities {
    use Capability as C;
    Capabilities::of(match batch {
        Batch::Validate(Validator::Header, _) => &[C::ValidateHeader],
        Batch::Validate(Validator::Payload, _) => &[C::ValidatePayload],
        Batch::Decode(_) => &[C::Decode],
        Batch::Roundtrip(_) => &[C::Decode, C::Encode],
        Batch::Streams(_) => &[C::ValidateStream],
        Batch::Lower(_) => &[C::Lower],
        Batch::Lut(tables, _) => {
            let each = tables.iter().map(|t| Capabilities::of(&[C::Lut(*t)]));
            return each.fold(Capabilities::NONE, Capabilities::union);
        }
    })
}

impl ExternalSubject {
    /// The requests of `batch` (a roundtrip's decodes only).
    fn requests_of(&self, batch: Batch<'_>) -> Vec<Request> {
        let asking = |q| request_of(q, self.gen).ok();
        match batch {
            Batch::Validate(v, bs) => bs.iter().map(|b| Request::Validate(v, *b)).collect(),
            Batch::Decode(bs) | Batch::Roundtrip(bs) => bs
                .iter()
                .filter_map(|b| asking(Question::Decode(b)))
                .collect(),
            Batch::Streams(ss) => ss
                .iter()
                .filter_map(|s| stream_request(s.clone()).ok())
                .collect(),
            Batch::Lower(ms) => ms
                .iter()
                .map(|m| lower_request(m.clone(), self.gen))
                .collect(),
            Batch::Lut(..) => Vec::new(),
        }
    }

    fn prefetch_requests(&self, reqs: Vec<Request>, tick: &dyn Fn(), store: &mut ReadyStore) {
        let Some(replies) = self.ask_batch(&reqs, tick) else {
            return;
        };
        if matches!(reqs.first(), Some(Request::Encode { .. })) {
            self.note_encodes(&replies);
        }
        for (r, a) in reqs.into_iter().zip(replies) {
            store.push_request(r, sent(a));
        }
    }
}

impl Drop for ExternalSubject {
    fn drop(&mut self) {
        let Ok(c) = self.client.lock() else { return };
        let Ok(mut g) = registry().lock() else { return };
        let e = g.entry(self.name.clone()).or_default();
        e.hello_name.clone_from(&c.hello().name);
        e.calls += self.calls.load(Ordering::Relaxed);
        e.busy += Duration::from_nanos(self.busy_ns.load(Ordering::Relaxed));
        e.restarts += c.sup.restarts();
        e.received += (c.received + self.received.load(Ordering::Relaxed))
            .saturating_sub(self.encodes.load(Ordering::Relaxed));
        e.compared += self.compared.load(Ordering::Relaxed);
        let mut tail: VecDeque<String> = std::mem::take(&mut e.stderr_tail).into();
        tail.extend(c.sup.stderr_tail());
        while tail.len() > STDERR_LINES {
            tail.pop_front();
        }
        e.stderr_tail = tail.into();
    }
}

impl Subject for ExternalSubject {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        self.caps
    }

    fn transport(&self) -> Option<&dyn Transport> {
        Some(self)
    }

    #[inline]
    fn validate(&self, v: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        let op = Capability::of_validator(v);
        let ready = self.ready.try_borrow_mut().ok();
        let stored = ready.and_then(|mut s| s.take_verdict(op, b));
        self.compared(stored.unwrap_or_else(|| self.validate_unready(v, op, b)))
    }

    #[inline]
    fn lut(&self, table: LutTable, input: u32) -> Reply<LutResult> {
        // A table the hello did not declare is never sent.
        if !self.caps.has(Capability::Lut(table)) {
            return Err(Fault::Unsupported);
        }
        let ready = self.ready.try_borrow_mut().ok();
        let stored = ready.and_then(|mut s| s.take_lut(table, input));
        self.compared(stored.unwrap_or_else(|| self.lut_unready(table, input)))
    }

    fn asked(&self, q: Question<'_>) -> Reply<Said> {
        let reply = match self.stored(q) {
            Some(a) => a,
            None => self.ask_now(request_of(q, self.gen)?),
        };
        let typed = match reply {
            Ok(a) if !matches!(a, Answer::Unsupported) => said(q, a, self.gen),
            r => Err(fault(r)),
        };
        // An encode is counted with its roundtrip's decode.
        match q {
            Question::Encode(..) => typed,
            _ => self.compared(typed),
        }
    }
}

impl Transport for ExternalSubject {
    fn prefetch(&self, batch: Batch<'_>, tick: &dyn Fn()) {
        let Ok(mut store) = self.ready.try_borrow_mut() else {
            return;
        };
        store.clear();
        // A previous batch's encodes never asked for: dropped.
        if let Ok(mut p) = self.encodes_pending.try_borrow_mut() {
            p.clear();
        }
        if self.recorded_give_up(batch_needs(batch)).is_some()
            || self.prefetch_ready(batch, tick, &mut store)
        {
            return;
        }
        // The rest as one batch of requests (those rung ahead, if any).
        let (key, begun) = self
            .begun
            .try_borrow_mut()
            .map(|mut b| std::mem::take(&mut *b))
            .unwrap_or_default();
        let reqs = if begun.is_empty() || key != batch_key(batch) {
            self.requests_of(batch)
        } else {
            begun
        };
        let (op, bs) = match batch {
            Batch::Validate(v, bs) => (Capability::of_validator(v), bs),
            Batch::Decode(bs) | Batch::Roundtrip(bs) => (Capability::Decode, bs),
            Batch::Streams(_) | Batch::Lower(_) => {
                return self.prefetch_requests(reqs, tick, &mut store)
            }
            Batch::Lut(..) => return,
        };
        let Some(replies) = self.ask_batch(&reqs, tick) else {
            return;
        };
        store.begin_bundles(op, bs);
        // A roundtrip's self encodes, batched after its decodes (a cross
        // encode is asked directly, only when the decodes differ).
        let mut encodes = Vec::new();
        let roundtrip = matches!(batch, Batch::Roundtrip(_)) && self.caps.has(Capability::Encode);
        for a in replies.into_iter().map(sent) {
            match op {
                Capability::Decode => {
                    if let (true, Some(Ok(Answer::Decoded { opcode, fields }))) = (roundtrip, &a) {
                        encodes.push(Request::Encode {
                            opcode: *opcode,
                            fields: fields.clone(),
                        });
                    }
                    store.push_reply(a);
                }
                _ => store.push_verdict(a.map(verdict_reply)),
            }
        }
        if !encodes.is_empty() {
            // Rung now, collected at the first encode asked: the other
            // generations' workers run meanwhile.
            let Ok(mut pending) = self.encodes_pending.try_borrow_mut() else {
                return self.prefetch_requests(encodes, tick, &mut store);
            };
            *pending = encodes;
            if let Ok(mut c) = self.client.lock() {
                if let Some(ch) = c.shm() {
                    ch.begin_records(&pending);
                }
            }
        }
    }

    /// A `lib:` worker's first hand-off of `batch` rung now (a LUT batch:
    /// its first declared table), collected by the same batch's prefetch.
    fn prefetch_begin(&self, batch: Batch<'_>) {
        if self.recorded_give_up(batch_needs(batch)).is_some() {
            return;
        }
        let Ok(mut c) = self.client.lock() else {
            return;
        };
        let chunk = match batch {
            Batch::Validate(v, bs) if c.supports(Capability::of_validator(v)) => {
                Chunk::Bundles(v == Validator::Payload, bs)
            }
            Batch::Lut(tables, ords) if c.supports(Capability::LUT_OP) => {
                let first = tables.iter().find(|t| self.caps.has(Capability::Lut(**t)));
                let Some(&t) = first else { return };
                Chunk::Lut(t, ords)
            }
            Batch::Validate(..) | Batch::Lut(..) => return,
            Batch::Decode(_) | Batch::Roundtrip(_) | Batch::Streams(_) | Batch::Lower(_) => {
                let Ok(mut begun) = self.begun.try_borrow_mut() else {
                    return;
                };
                *begun = (batch_key(batch), self.requests_of(batch));
                if let Some(ch) = c.shm() {
                    ch.begin_records(&begun.1);
                }
                return;
            }
        };
        if let Some(ch) = c.shm() {
            ch.begin(chunk);
        }
    }

    fn vouch(&self, batch: Batch<'_>, reference: &[Compact], agreed: &mut [bool]) -> bool {
        let Ok(mut store) = self.ready.try_borrow_mut() else {
            return false;
        };
        let before = agreed.iter().filter(|a| **a).count();
        let held = match batch {
            Batch::Validate(v, bs) => {
                store.vouch_bundles(Capability::of_validator(v), bs, reference, agreed)
            }
            Batch::Lut([table], ords) => store.vouch_luts(*table, ords, reference, agreed),
            _ => false,
        };
        let vouched = agreed.iter().filter(|a| **a).count().saturating_sub(before);
        self.compared.fetch_add(vouched as u64, Ordering::Relaxed);
        held
    }

    #[inline]
    fn given_up(&self, needs: Capabilities) -> Option<GivenUp> {
        // Answers fetched before giving up are still served (those cases
        // are judged).
        if self.ready.try_borrow().is_ok_and(|s| s.pending()) {
            return None;
        }
        self.recorded_give_up(needs)
    }
}

impl ExternalSubject {
    /// Answers a validator or LUT `batch` into `store` (worker, `batch64`,
    /// or lines for LUTs); false if this path does not serve it.
    fn prefetch_ready(&self, batch: Batch<'_>, tick: &dyn Fn(), store: &mut ReadyStore) -> bool {
        let Ok(mut c) = self.client.lock() else {
            return true;
        };
        let op = match batch {
            Batch::Validate(v, _) => Capability::of_validator(v),
            Batch::Lut(..) => Capability::LUT_OP,
            _ => return false,
        };
        let supported = c.supports(op);
        match batch {
            Batch::Validate(v, bs) if c.shm().is_none() => {
                drop(c);
                let Some(b) = &self.batch else { return false };
                if !supported || !b.lock().is_ok_and(|b| b.usable(v)) {
                    return false;
                }
                store.begin_bundles(op, bs);
                self.prefetch_framed(b, v, bs, tick, store);
            }
            _ if !supported => {}
            Batch::Validate(v, bs) => {
                let Some(ch) = c.shm() else { return true };
                store.begin_bundles(op, bs);
                ch.run_into(Chunk::Bundles(v == Validator::Payload, bs), tick, store);
                self.count_busy(bs.len(), ch.take_busy());
                store.pad_verdicts(bs.len());
            }
            Batch::Lut(tables, ords) => {
                let tables: Vec<LutTable> = tables
                    .iter()
                    .copied()
                    .filter(|t| self.caps.has(Capability::Lut(*t)))
                    .collect();
                store.begin_luts(&tables, ords);
                self.prefetch_luts(&mut c, &tables, ords, tick, store);
            }
            _ => {}
        }
        true
    }

    fn prefetch_luts(
        &self,
        c: &mut Client,
        tables: &[LutTable],
        ords: &[u32],
        tick: &dyn Fn(),
        store: &mut ReadyStore,
    ) {
        if let Some(ch) = c.shm() {
            for &t in tables {
                let Some(mut col) = store.lut_column(t) else {
                    continue;
                };
                ch.run_into(Chunk::Lut(t, ords), tick, &mut col);
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

    /// Validator chunks through `batch64` (a frame that crashed or timed out:
    /// the JSON lines instead), exactly one entry per bundle in `store`.
    fn prefetch_framed(
        &self,
        b: &Mutex<BatchProcess>,
        v: Validator,
        bs: &[[u8; 64]],
        tick: &dyn Fn(),
        store: &mut ReadyStore,
    ) {
        let mut filled = 0usize;
        for chunk in bs.chunks(batch_framing::MAX_RECORDS) {
            let framed = match b.lock() {
                Ok(mut b) if b.usable(v) => self.timed(chunk.len(), || b.run(v, chunk)),
                _ => Err(Fault::Crash("batch framing given up".into())),
            };
            tick();
            match framed {
                Ok(ids) => {
                    self.received.fetch_add(ids.len() as u64, Ordering::Relaxed);
                    for id in ids.into_iter().take(chunk.len()) {
                        store.push_verdict(Some(Ok(super::verdict::verdict_of(id))));
                    }
                }
                Err(Fault::Protocol(why)) => {
                    self.received
                        .fetch_add(chunk.len() as u64, Ordering::Relaxed);
                    for _ in chunk {
                        let r = Err(Fault::Protocol(format!("batch64: {why}")));
                        store.push_verdict(Some(r));
                    }
                }
                Err(_) => {
                    let reqs: Vec<Request> =
                        chunk.iter().map(|x| Request::Validate(v, *x)).collect();
                    let Some(replies) = self.ask_batch(&reqs, tick) else {
                        return;
                    };
                    for r in replies.into_iter().take(chunk.len()) {
                        store.push_verdict(sent(r).map(verdict_reply));
                    }
                }
            }
            filled += chunk.len();
            store.pad_verdicts(filled);
        }
    }
}

/// What one external subject did in this process (all its instances).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubjectStats {
    pub hello_name: String,
    /// Requests answered or faulted (not local `unsupported`).
    pub calls: u64,
    /// Answers delivered (well-formed or not: not crashed, hung, never sent
    /// or lost by the harness), one per case (a roundtrip's encodes are
    /// counted by its decode).
    pub received: u64,
    /// Answers the judge compared with core's (one per case likewise).
    pub compared: u64,
    pub busy: Duration,
    pub restarts: u64,
    pub stderr_tail: Vec<String>,
}

fn registry() -> &'static Mutex<BTreeMap<String, SubjectStats>> {
    static R: OnceLock<Mutex<BTreeMap<String, SubjectStats>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Every external subject closed so far, by spec.
pub fn stats() -> BTreeMap<String, SubjectStats> {
    registry().lock().map(|g| g.clone()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hello_declares_each_op_and_table() {
        let ops = Capability::ALL.into_iter().filter(|c| c.op().is_some());
        let h = Hello {
            ops: ops.clone().collect(),
            tables: Some(vec![LutTable::Dge]),
            ..Hello::default()
        };
        let caps = capabilities_of(&h);
        // The capability of each op; `lut`: only the declared table.
        for c in ops.filter(|c| c.op() != Some("lut")) {
            assert!(caps.has(c), "{c:?}: {caps}");
        }
        assert!(caps.has(Capability::Lut(LutTable::Dge)), "{caps}");
        assert_eq!(caps.iter().count(), 7, "{caps}");
    }

    #[test]
    fn dlopen_paths() {
        assert_eq!(dlopen_path("x.so"), "./x.so");
        assert_eq!(dlopen_path("/a/x.so"), "/a/x.so");
    }
}
