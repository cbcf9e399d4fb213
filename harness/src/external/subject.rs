//! [`ExternalSubject`]: a `lib:` / `cmd:` subject as the engine sees it (the
//! [`Subject`] trait) over the tpb-subject/1 client, and [`open`], the
//! registry's opener for external specs.
//!
//! Answers become the harness's typed values. Predicate names go through
//! [`Predicate::from_name`] (an unknown one stays `Unknown`, never equal to
//! core's); decode fields are read back with [`crate::fields_json`]; a decode
//! error field or a refusal is compared by its text with core's. A fault
//! (crash, timeout, protocol) becomes the engine's [`Fault`]; the engine
//! records the case's input with it.
//!
//! Per subject name, the calls, the time spent in them and the stderr tail
//! are accumulated process-wide ([`stats`]) so the gate's report can show
//! cases/s and the last [`STDERR_LINES`] lines after the per-thread
//! subjects are gone.

use super::batch_framing::{self, BatchProcess};
use super::process::{
    Fault as ClientFault, FaultClass, Launch, ProcessSubject, Reply as ClientReply, StartError,
    STDERR_LINES,
};
use super::protocol::{Answer, Hello, Op, Request};
use super::shm_client::{ShmAnswer, ShmChannel};
use crate::arch::Arch;
use crate::fields_json::{fields_from_json, fields_json};
use crate::layout::mnemonic;
use crate::subjects::registry::{OpenError, SubjectSpec};
use crate::subjects::{
    Batch, Capabilities, Capability, DecodeFail, Decoded, EncodeResult, Fault, FieldName,
    IrInstruction, LutResult, LutTable, ModuleAnswer, Name, Predicate, Reply, StreamFail, Subject,
    Validator, Value, Verdict,
};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub use super::worker::WORKER_SUBCOMMAND;

/// A path `dlopen` takes as a file, never as a name to search for: one
/// without a `/` gets `./` in front.
fn dlopen_path(p: &str) -> String {
    if p.contains('/') {
        p.to_string()
    } else {
        format!("./{p}")
    }
}

/// Default per-case timeout of external subjects (the gate's
/// `--case-timeout` overrides it through [`set_case_timeout`]).
pub const DEFAULT_CASE_TIMEOUT: Duration = Duration::from_secs(30);

#[allow(clippy::cast_possible_truncation)]
static CASE_TIMEOUT_MS: AtomicU64 = AtomicU64::new(DEFAULT_CASE_TIMEOUT.as_millis() as u64);

/// Sets the per-case timeout of external subjects opened from now on.
pub fn set_case_timeout(t: Duration) {
    let ms = u64::try_from(t.as_millis()).unwrap_or(u64::MAX).max(1);
    CASE_TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

fn case_timeout() -> Duration {
    Duration::from_millis(CASE_TIMEOUT_MS.load(Ordering::Relaxed))
}

/// What one external subject did in this process (summed over its
/// per-thread instances).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubjectStats {
    /// The hello name.
    pub hello_name: String,
    /// Requests answered or faulted (not counting local `unsupported`).
    pub calls: u64,
    /// Wall time spent waiting for them.
    pub busy: Duration,
    /// Restarts after faults.
    pub restarts: u64,
    /// The last [`STDERR_LINES`] stderr lines.
    pub stderr_tail: Vec<String>,
}

impl SubjectStats {
    /// Calls per second of time spent in the subject.
    pub fn rate(&self) -> f64 {
        let s = self.busy.as_secs_f64();
        if s > 0.0 {
            self.calls as f64 / s
        } else {
            0.0
        }
    }
}

fn registry() -> &'static Mutex<BTreeMap<String, SubjectStats>> {
    static R: OnceLock<Mutex<BTreeMap<String, SubjectStats>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// The generation key of a subject given up on every generation.
const ANY_ARCH: &str = "*";

/// Per (subject name, generation or [`ANY_ARCH`]): why it was given up.
/// One instance (a gate worker thread's) giving up gives up all of them.
fn given_up_registry() -> &'static Mutex<BTreeMap<(String, String), String>> {
    static R: OnceLock<Mutex<BTreeMap<(String, String), String>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// The accumulated statistics of every external subject closed so far, by
/// subject name (the spec).
pub fn stats() -> BTreeMap<String, SubjectStats> {
    registry().lock().map(|g| g.clone()).unwrap_or_default()
}

/// How to start the subject of an external spec (`None` for core / oracle);
/// `worker_exe` is the `tpbconform` binary that serves `lib:` subjects.
pub fn launch(spec: &SubjectSpec, worker_exe: &std::path::Path) -> Option<Launch> {
    match spec {
        SubjectSpec::Cmd(c) => Some(Launch::shell(c)),
        SubjectSpec::Lib(p) => Some(Launch {
            program: worker_exe.as_os_str().to_owned(),
            args: vec![
                WORKER_SUBCOMMAND.into(),
                format!("lib:{}", dlopen_path(p)).into(),
            ],
        }),
        _ => None,
    }
}

/// Starts the client for an external spec serving `arch`.
pub fn start(
    spec: &SubjectSpec,
    worker_exe: &std::path::Path,
    arch: Arch,
    timeout: Duration,
) -> Result<ProcessSubject, StartError> {
    let l = launch(spec, worker_exe)
        .ok_or_else(|| StartError(format!("`{spec}` is not an external subject")))?;
    ProcessSubject::start(l, arch.name(), timeout)
}

/// The registry's opener for `lib:` / `cmd:` specs (installed by the CLI).
pub fn open(spec: &SubjectSpec, arch: Arch) -> Result<Box<dyn Subject>, OpenError> {
    let failed = |reason: String| OpenError::Failed {
        spec: spec.clone(),
        reason,
    };
    let exe = std::env::current_exe().map_err(|e| {
        failed(format!(
            "cannot find the tpbconform binary for the worker: {e}"
        ))
    })?;
    let client = start(spec, &exe, arch, case_timeout()).map_err(|e| failed(e.0))?;
    let mut s = ExternalSubject::new(spec.to_string(), client);
    if let SubjectSpec::Lib(p) = spec {
        if shm_enabled() {
            let ch = ShmChannel::start(exe, dlopen_path(p), arch.name(), case_timeout())
                .map_err(|e| failed(format!("batch worker: {}", e.0)))?;
            s = s.with_shm(ch);
        }
    }
    if let SubjectSpec::Cmd(c) = spec {
        let offered = s.client.lock().is_ok_and(|cl| {
            cl.hello()
                .framings
                .iter()
                .any(|f| f == batch_framing::BATCH64)
        });
        if offered {
            // A subject that offers the framing but cannot start with it
            // keeps the JSON lines (its stderr says why).
            if let Ok(b) = BatchProcess::start(Launch::shell(c), arch.name(), case_timeout()) {
                s.batch = Some(Mutex::new(b));
            }
        }
    }
    Ok(Box::new(s))
}

/// The environment variable that sends a `lib:` subject's validator and LUT
/// chunks over tpb-subject/1 lines instead of shared memory
/// (`TPB_SUBJECT_TRANSPORT=lines`; for comparisons and debugging).
pub const TRANSPORT_ENV: &str = "TPB_SUBJECT_TRANSPORT";

fn shm_enabled() -> bool {
    std::env::var(TRANSPORT_ENV).map_or(true, |v| v != "lines")
}

/// What a prefetched answer is for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ReadyKey {
    Bundle(Op, [u8; 64]),
    Lut(LutTable, u32),
}

/// A prefetched, already typed answer.
enum Ready {
    Verdict(Reply<Verdict>),
    Lut(Reply<LutResult>),
}

fn shm_fault(f: ClientFault) -> Fault {
    fault(Err(f))
}

fn shm_verdict(a: ShmAnswer) -> Reply<Verdict> {
    match a {
        ShmAnswer::Verdict(v) => Ok(v),
        ShmAnswer::Unsupported => Err(Fault::Unsupported),
        ShmAnswer::Fault(f) => Err(shm_fault(f)),
        other => Err(Fault::Protocol(format!(
            "answer of the wrong kind: {other:?}"
        ))),
    }
}

/// A shared-memory LUT answer, typed; `names` keeps the refusal names of
/// one batch (a handful of texts over thousands of entries), so each is
/// looked up in [`foreign`]'s process-wide set once.
fn shm_lut(a: ShmAnswer, names: &mut Vec<(String, Name)>) -> Reply<LutResult> {
    match a {
        ShmAnswer::Wire(w) => u8::try_from(w)
            .map(Ok)
            .map_err(|_| Fault::Protocol(format!("wire value {w} is not a byte"))),
        ShmAnswer::Refused(why) => {
            if let Some((_, n)) = names.iter().find(|(t, _)| *t == why) {
                return Ok(Err(n.clone()));
            }
            let n = foreign(&why);
            if names.len() < 64 {
                names.push((why, n.clone()));
            }
            Ok(Err(n))
        }
        ShmAnswer::Unsupported => Err(Fault::Unsupported),
        ShmAnswer::Fault(f) => Err(shm_fault(f)),
        ShmAnswer::Verdict(_) => Err(Fault::Protocol("answer of the wrong kind".into())),
    }
}

fn lut_reply(r: ClientReply) -> Reply<LutResult> {
    match r {
        Ok(Answer::Wire(w)) => u8::try_from(w)
            .map(Ok)
            .map_err(|_| Fault::Protocol(format!("wire value {w} is not a byte"))),
        Ok(Answer::Refused(why)) => Ok(Err(foreign(&why))),
        other => Err(fault(other)),
    }
}

/// An external subject serving one generation.
pub struct ExternalSubject {
    name: String,
    caps: Capabilities,
    client: Mutex<ProcessSubject>,
    /// Answers of the last [`Subject::prefetch`], served (once each) before
    /// any new round trip.
    prefetched: Mutex<HashMap<(Op, [u8; 64]), ClientReply>>,
    /// The `lib:` batch worker (validator and LUT chunks), if any.
    shm: Option<Mutex<ShmChannel>>,
    /// The `cmd:` subject's `batch64` instance (validator chunks), if any.
    batch: Option<Mutex<BatchProcess>>,
    /// Typed answers of the last [`Subject::prefetch`] in call order, served
    /// (once each) before any new round trip.
    ready: Mutex<VecDeque<(ReadyKey, Ready)>>,
    /// `ready`'s length, kept with every change under its lock, so
    /// [`Subject::given_up`] (asked before every judged case) needs no lock
    /// while answers are queued.
    ready_len: AtomicUsize,
    calls: AtomicU64,
    busy_ns: AtomicU64,
}

/// Names that came from outside, interned so they can be compared with
/// core's by text (at most [`MAX_NAMES`]; beyond that, `Unknown`).
fn foreign(s: &str) -> Name {
    const MAX_NAMES: usize = 4096;
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let Ok(mut set) = NAMES.get_or_init(|| Mutex::new(HashSet::new())).lock() else {
        return Name::Unknown(s.to_string());
    };
    if let Some(k) = set.get(s) {
        return Name::Known(k);
    }
    if set.len() >= MAX_NAMES {
        return Name::Unknown(s.to_string());
    }
    let k: &'static str = Box::leak(s.to_string().into_boxed_str());
    set.insert(k);
    Name::Known(k)
}

fn fault(r: ClientReply) -> Fault {
    match r {
        Err(f) => match f.class {
            FaultClass::Crash | FaultClass::NotSent => Fault::Crash(f.detail),
            FaultClass::Timeout => Fault::Timeout(f.detail),
            FaultClass::Protocol => Fault::Protocol(f.detail),
        },
        Ok(Answer::Unsupported) => Fault::Unsupported,
        Ok(a) => Fault::Protocol(format!("answer of the wrong kind: {a:?}")),
    }
}

/// What a hello declares: one capability per op, one per LUT table
/// (`tables`, or every table when the hello has none).
pub fn capabilities_of(h: &Hello) -> Capabilities {
    let mut caps = Vec::new();
    for op in &h.ops {
        match op {
            Op::ValidateHeader => caps.push(Capability::ValidateHeader),
            Op::ValidatePayload => caps.push(Capability::ValidatePayload),
            Op::Decode => caps.push(Capability::Decode),
            Op::Encode => caps.push(Capability::Encode),
            Op::ValidateStream => caps.push(Capability::ValidateStream),
            Op::Lower => caps.push(Capability::Lower),
            Op::Lut => {}
        }
    }
    caps.extend(h.lut_tables().into_iter().map(Capability::Lut));
    Capabilities::of(&caps)
}

impl ExternalSubject {
    /// Wraps a started client; `name` is the spec (reports and replay
    /// commands use it).
    pub fn new(name: String, client: ProcessSubject) -> ExternalSubject {
        let caps = capabilities_of(client.hello());
        ExternalSubject {
            name,
            caps,
            client: Mutex::new(client),
            prefetched: Mutex::new(HashMap::new()),
            shm: None,
            batch: None,
            ready: Mutex::new(VecDeque::new()),
            ready_len: AtomicUsize::new(0),
            calls: AtomicU64::new(0),
            busy_ns: AtomicU64::new(0),
        }
    }

    /// Sends validator and LUT chunks through `ch` (a `lib:` subject's
    /// batch worker) from now on.
    pub fn with_shm(mut self, ch: ShmChannel) -> ExternalSubject {
        self.shm = Some(Mutex::new(ch));
        self
    }

    /// The prefetched answer for `key`, if one is queued: the queue is in
    /// call order, so entries before it (cases the engine did not ask this
    /// subject about) are dropped; a key not queued leaves it as it is.
    fn take_ready(&self, key: &ReadyKey) -> Option<Ready> {
        let mut q = self.ready.lock().ok()?;
        let p = q.iter().position(|(k, _)| k == key)?;
        q.drain(..p);
        let r = q.pop_front().map(|(_, r)| r);
        self.ready_len.store(q.len(), Ordering::Relaxed);
        r
    }

    fn timed<T>(&self, n: usize, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.busy_ns.fetch_add(ns, Ordering::Relaxed);
        self.calls.fetch_add(n as u64, Ordering::Relaxed);
        out
    }

    /// Answers `batch` through the batch worker or, for LUTs without one,
    /// pipelined lines; false if it is not a batch this path serves.
    fn prefetch_ready(&self, batch: Batch<'_>, tick: &dyn Fn()) -> bool {
        let supports = |op: Op| self.client.lock().is_ok_and(|c| c.supports(op));
        let mut queue: VecDeque<(ReadyKey, Ready)> = VecDeque::new();
        match batch {
            Batch::Validate(v, bs) if self.shm.is_none() => {
                let op = match v {
                    Validator::Header => Op::ValidateHeader,
                    Validator::Payload => Op::ValidatePayload,
                };
                let Some(b) = &self.batch else { return false };
                if !supports(op) || !b.lock().is_ok_and(|b| b.usable()) {
                    return false;
                }
                self.prefetch_framed(b, v, op, bs, tick, &mut queue);
            }
            Batch::Validate(v, bs) => {
                let Some(shm) = &self.shm else { return false };
                let op = match v {
                    Validator::Header => Op::ValidateHeader,
                    Validator::Payload => Op::ValidatePayload,
                };
                if !supports(op) {
                    return true;
                }
                let Ok(mut ch) = shm.lock() else { return true };
                let answers =
                    self.timed(bs.len(), || ch.validate(v == Validator::Payload, bs, tick));
                for (b, a) in bs.iter().zip(answers) {
                    if matches!(&a, ShmAnswer::Fault(f) if f.class == FaultClass::NotSent) {
                        continue;
                    }
                    queue.push_back((ReadyKey::Bundle(op, *b), Ready::Verdict(shm_verdict(a))));
                }
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
                let per_table: Vec<Vec<Reply<LutResult>>> = match &self.shm {
                    Some(shm) => {
                        let Ok(mut ch) = shm.lock() else { return true };
                        let mut names = Vec::new();
                        tables
                            .iter()
                            .map(|&t| {
                                self.timed(ords.len(), || ch.lut(t, ords, tick))
                                    .into_iter()
                                    .map(|a| match a {
                                        ShmAnswer::Fault(f) if f.class == FaultClass::NotSent => {
                                            Err(Fault::Crash(f.detail))
                                        }
                                        a => shm_lut(a, &mut names),
                                    })
                                    .collect()
                            })
                            .collect()
                    }
                    None => {
                        let Ok(mut c) = self.client.lock() else {
                            return true;
                        };
                        tables
                            .iter()
                            .map(|&t| {
                                let reqs: Vec<Request> = ords
                                    .iter()
                                    .map(|&input| Request::Lut { table: t, input })
                                    .collect();
                                self.timed(reqs.len(), || c.call_batch_with(&reqs, tick))
                                    .into_iter()
                                    .map(lut_reply)
                                    .collect()
                            })
                            .collect()
                    }
                };
                let mut cols: Vec<std::vec::IntoIter<Reply<LutResult>>> =
                    per_table.into_iter().map(Vec::into_iter).collect();
                for &o in ords {
                    for (t, col) in tables.iter().zip(cols.iter_mut()) {
                        if let Some(r) = col.next() {
                            queue.push_back((ReadyKey::Lut(*t, o), Ready::Lut(r)));
                        }
                    }
                }
            }
            Batch::Decode(_) => return false,
        }
        if let Ok(mut q) = self.ready.lock() {
            *q = queue;
            self.ready_len.store(q.len(), Ordering::Relaxed);
        }
        true
    }

    /// Validator chunks through the `batch64` instance; a frame that
    /// crashed or timed out goes down the JSON lines one by one instead.
    fn prefetch_framed(
        &self,
        b: &Mutex<BatchProcess>,
        v: Validator,
        op: Op,
        bs: &[[u8; 64]],
        tick: &dyn Fn(),
        queue: &mut VecDeque<(ReadyKey, Ready)>,
    ) {
        let code = match v {
            Validator::Header => batch_framing::FRAME_VALIDATE_HEADER,
            Validator::Payload => batch_framing::FRAME_VALIDATE_PAYLOAD,
        };
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
                    for (x, id) in chunk.iter().zip(ids) {
                        let r = Ok(super::verdict::verdict_of(id));
                        queue.push_back((ReadyKey::Bundle(op, *x), Ready::Verdict(r)));
                    }
                }
                Err(f) if f.class == FaultClass::Protocol => {
                    for x in chunk {
                        let r = Err(Fault::Protocol(format!("batch64: {}", f.detail)));
                        queue.push_back((ReadyKey::Bundle(op, *x), Ready::Verdict(r)));
                    }
                }
                Err(_) => {
                    let reqs: Vec<Request> = chunk
                        .iter()
                        .map(|x| match v {
                            Validator::Header => Request::ValidateHeader(*x),
                            Validator::Payload => Request::ValidatePayload(*x),
                        })
                        .collect();
                    let Ok(mut c) = self.client.lock() else {
                        return;
                    };
                    let replies = self.timed(reqs.len(), || c.call_batch_with(&reqs, tick));
                    for (x, r) in chunk.iter().zip(replies) {
                        if matches!(&r, Err(f) if f.class == FaultClass::NotSent) {
                            continue;
                        }
                        let r = match r {
                            Ok(Answer::Verdict(p)) => Ok(p.map(|s| Predicate::from_name(&s))),
                            other => Err(fault(other)),
                        };
                        queue.push_back((ReadyKey::Bundle(op, *x), Ready::Verdict(r)));
                    }
                }
            }
        }
    }

    /// The hello name.
    pub fn hello_name(&self) -> String {
        self.client
            .lock()
            .map(|c| c.hello().name.clone())
            .unwrap_or_default()
    }

    fn call(&self, r: Request) -> ClientReply {
        let key = match &r {
            Request::ValidateHeader(b) | Request::ValidatePayload(b) | Request::Decode(b) => {
                Some((r.op(), *b))
            }
            _ => None,
        };
        if let Some(k) = key {
            if let Some(hit) = self.prefetched.lock().ok().and_then(|mut m| m.remove(&k)) {
                return hit;
            }
        }
        let Ok(mut c) = self.client.lock() else {
            return Err(ClientFault {
                class: FaultClass::Crash,
                detail: "client lock poisoned".into(),
            });
        };
        if !c.supports(r.op()) {
            return Ok(Answer::Unsupported);
        }
        let t = Instant::now();
        let out = c.call(&r);
        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.busy_ns.fetch_add(ns, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        out
    }
}

impl ExternalSubject {
    /// Why this subject was given up for its generation, by this instance
    /// or another one (recorded in [`given_up_registry`]).
    fn recorded_give_up(&self) -> Option<String> {
        let (arch, mut mine, mut hangs) = {
            let c = self.client.lock().ok()?;
            (
                c.arch().to_string(),
                c.given_up().map(str::to_string),
                c.given_up_for_timeouts(),
            )
        };
        if mine.is_none() {
            if let Some(ch) = self.shm.as_ref().and_then(|m| m.lock().ok()) {
                mine = ch.given_up().map(str::to_string);
                hangs = ch.given_up_for_timeouts();
            }
        }
        let mut g = given_up_registry().lock().ok()?;
        // A subject given up for timeouts is given up on every generation.
        let every = (self.name.clone(), ANY_ARCH.to_string());
        let key = (self.name.clone(), arch);
        match mine {
            Some(why) => {
                if hangs {
                    g.entry(every).or_insert_with(|| why.clone());
                }
                Some(g.entry(key).or_insert(why).clone())
            }
            None => g.get(&key).or_else(|| g.get(&every)).cloned(),
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
        e.restarts += c.restarts();
        let mut tail: VecDeque<String> = std::mem::take(&mut e.stderr_tail).into();
        tail.extend(c.stderr_tail());
        if let Some(ch) = self.shm.as_ref().and_then(|m| m.lock().ok()) {
            e.restarts += ch.restarts();
            tail.extend(ch.stderr_tail());
        }
        if let Some(b) = self.batch.as_ref().and_then(|m| m.lock().ok()) {
            tail.extend(b.stderr_tail());
        }
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

    fn prefetch(&self, batch: Batch<'_>, tick: &dyn Fn()) {
        if let Ok(mut q) = self.ready.lock() {
            q.clear();
            self.ready_len.store(0, Ordering::Relaxed);
        }
        if self.recorded_give_up().is_some() {
            if let Ok(mut m) = self.prefetched.lock() {
                m.clear();
            }
            return;
        }
        if self.prefetch_ready(batch, tick) {
            return;
        }
        let reqs: Vec<Request> = match batch {
            Batch::Validate(Validator::Header, bs) => {
                bs.iter().map(|b| Request::ValidateHeader(*b)).collect()
            }
            Batch::Validate(Validator::Payload, bs) => {
                bs.iter().map(|b| Request::ValidatePayload(*b)).collect()
            }
            Batch::Decode(bs) => bs.iter().map(|b| Request::Decode(*b)).collect(),
            Batch::Lut(..) => return,
        };
        if self.recorded_give_up().is_some() {
            if let Ok(mut m) = self.prefetched.lock() {
                m.clear();
            }
            return;
        }
        let Ok(mut c) = self.client.lock() else {
            return;
        };
        let t = Instant::now();
        let replies = c.call_batch_with(&reqs, tick);
        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.busy_ns.fetch_add(ns, Ordering::Relaxed);
        self.calls.fetch_add(reqs.len() as u64, Ordering::Relaxed);
        drop(c);
        let Ok(mut m) = self.prefetched.lock() else {
            return;
        };
        m.clear();
        for (r, a) in reqs.iter().zip(replies) {
            if matches!(&a, Err(f) if f.class == FaultClass::NotSent) {
                // Never asked: the engine counts these cases as not run.
                continue;
            }
            if let Request::ValidateHeader(b) | Request::ValidatePayload(b) | Request::Decode(b) = r
            {
                m.insert((r.op(), *b), a);
            }
        }
    }

    fn capabilities(&self) -> Capabilities {
        self.caps
    }

    fn given_up(&self) -> Option<String> {
        // Answers fetched before giving up (the faults that caused it among
        // them) are still served, so those cases are judged.
        if self.ready_len.load(Ordering::Relaxed) > 0 {
            return None;
        }
        if self.prefetched.lock().is_ok_and(|m| !m.is_empty())
            || self.ready.lock().is_ok_and(|q| !q.is_empty())
        {
            return None;
        }
        self.recorded_give_up()
    }

    fn validate(&self, v: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        let r = match v {
            Validator::Header => Request::ValidateHeader(*b),
            Validator::Payload => Request::ValidatePayload(*b),
        };
        if let Some(Ready::Verdict(v)) = self.take_ready(&ReadyKey::Bundle(r.op(), *b)) {
            return v;
        }
        match self.call(r) {
            Ok(Answer::Verdict(p)) => Ok(p.map(|s| Predicate::from_name(&s))),
            other => Err(fault(other)),
        }
    }

    fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> {
        match self.call(Request::Decode(*b)) {
            Ok(Answer::Decoded { opcode, fields }) => {
                let fields = fields_from_json(&fields)
                    .map_err(|e| Fault::Protocol(format!("decode answer: {e}")))?;
                Ok(Ok(Decoded {
                    opcode,
                    mnemonic: mnemonic(opcode).unwrap_or("?").into(),
                    fields,
                }))
            }
            Ok(Answer::DecodeError { field, offset }) => Ok(Err(DecodeFail {
                field: foreign(&field),
                offset: usize::try_from(offset).unwrap_or(usize::MAX),
            })),
            other => Err(fault(other)),
        }
    }

    fn encode(&self, opcode: u8, fields: &[(FieldName, Value)]) -> Reply<EncodeResult> {
        let r = Request::Encode {
            opcode,
            fields: fields_json(fields),
        };
        match self.call(r) {
            Ok(Answer::Encoded(b)) => Ok(Ok(b)),
            Ok(Answer::Refused(why)) => Ok(Err(foreign(&why))),
            other => Err(fault(other)),
        }
    }

    fn lut(&self, table: LutTable, input: u32) -> Reply<LutResult> {
        // A table the hello did not declare is never sent.
        if !self.caps.has(Capability::Lut(table)) {
            return Err(Fault::Unsupported);
        }
        if let Some(Ready::Lut(r)) = self.take_ready(&ReadyKey::Lut(table, input)) {
            return r;
        }
        lut_reply(self.call(Request::Lut { table, input }))
    }

    fn validate_stream(&self, bytes: &[u8]) -> Reply<Result<(), StreamFail>> {
        if bytes.len() > super::protocol::MAX_STREAM {
            return Err(Fault::Unsupported);
        }
        match self.call(Request::ValidateStream(bytes.to_vec())) {
            Ok(Answer::Stream(None)) => Ok(Ok(())),
            Ok(Answer::Stream(Some((e, index)))) => Ok(Err(StreamFail {
                name: foreign(&e),
                index: usize::try_from(index).unwrap_or(usize::MAX),
            })),
            other => Err(fault(other)),
        }
    }

    fn lower_module(&self, insns: &[IrInstruction]) -> Reply<ModuleAnswer> {
        let arch = self
            .client
            .lock()
            .ok()
            .and_then(|c| Arch::ALL.into_iter().find(|a| a.name() == c.arch()))
            .unwrap_or_default();
        let gen = arch.generation();
        let ir = super::lower_json::ir_document(gen, insns);
        match self.call(Request::Lower(ir)) {
            Ok(Answer::Lowered(m)) => {
                if m.get("generation").and_then(serde_json::Value::as_str) != Some(gen.name()) {
                    return Err(Fault::Protocol(format!(
                        "lower answer: `generation` is not \"{}\"",
                        gen.name()
                    )));
                }
                super::lower_json::module_from_json(&m, insns.len())
                    .map(ModuleAnswer::Lowered)
                    .map_err(|e| Fault::Protocol(format!("lower answer: {e}")))
            }
            Ok(Answer::LowerRejected { error, instruction }) => {
                match usize::try_from(instruction) {
                    Ok(i) if i < insns.len() => Ok(ModuleAnswer::Rejected {
                        instruction: i,
                        name: foreign(&error),
                    }),
                    _ => Err(Fault::Protocol(format!(
                        "lower answer: instruction {instruction} of {} asked",
                        insns.len()
                    ))),
                }
            }
            other => Err(fault(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_refusal_names_stay_per_entry() {
        let mut names = Vec::new();
        let text = |r: Reply<LutResult>| match r {
            Ok(Ok(w)) => format!("wire {w}"),
            Ok(Err(n)) => format!("refused {}", n.as_str()),
            Err(f) => format!("fault {f:?}"),
        };
        let got: Vec<String> = [
            ShmAnswer::Refused("out_of_range".into()),
            ShmAnswer::Refused("not_dge_op".into()),
            ShmAnswer::Wire(5),
            ShmAnswer::Refused("out_of_range".into()),
            ShmAnswer::Wire(300),
        ]
        .into_iter()
        .map(|a| text(shm_lut(a, &mut names)))
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
    fn dlopen_paths() {
        assert_eq!(dlopen_path("x.so"), "./x.so");
        assert_eq!(dlopen_path("/a/x.so"), "/a/x.so");
    }
}
