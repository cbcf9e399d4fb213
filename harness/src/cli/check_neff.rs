//! `check` on a NEFF file, an unpacked NEFF folder, or `--engine NAME=FILE` streams (issue 33,
//! SPEC §12): each engine stream walked as a raw stream is, named by its origin.
//!
//! Threads: one reads the NEFF and hands each stream's blocks to a job; workers lint jobs in
//! parallel; this thread prints each job's output in job order, so the output is the same on
//! every run. Memory is bounded: a few blocks and output chunks per job. With `--max-errors`
//! one worker lints the jobs in turn, so the stop is where it is without threads.

use super::check_output::{Printer, Tally};
use super::check_read::{read_blocks, Splitter};
use super::check_sync::{self, SubgraphSync};
use super::{CheckArgs, CliError, Format};
use crate::strict_json;
use crate::subjects::DmaRow;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::sync::Mutex;
use tpb_core::engines::StepReader;
use tpb_core::walk::Walker;
use tpb_neff::payload::Limits;
use tpb_neff::{Engine, NeffError, Opened, Report, StreamRef, StreamSink};

const BLOCK: usize = 256 << 10;
const BLOCKS_IN_FLIGHT: usize = 4;
/// A worker's output is sent on in chunks of about this size.
const CHUNK: usize = 64 << 10;
/// Stream bytes kept as steps for the engine model (SPEC §11) per NEFF (16 bytes per
/// instruction until every stream is read: a 1 GiB stream took 400 MB); past it, a subgraph's
/// sync line says it was not analysed.
pub const MAX_SYNC_BYTES: u64 = 256 << 20;

pub enum NeffInput {
    File(PathBuf),
    Folder(PathBuf),
    /// `--engine NAME=FILE` alone.
    Engines(Vec<(Engine, String)>),
}

/// Whether `path` is read as a NEFF: its name ends `.neff`, or it is a regular file whose
/// bytes 8..16 say header_size 1024 and whose payload starts gzip or tar (FACTS §10).
pub fn is_neff(path: &str) -> bool {
    if path.to_ascii_lowercase().ends_with(".neff") {
        return true;
    }
    // A regular file first: opening a FIFO would block.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= 1030) {
        return false;
    }
    let mut b = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(1286).read_to_end(&mut b));
    read.is_ok_and(|n| n >= 1030) && crate::input::looks_like_neff(&b)
}

pub fn parse_engines(args: &[String]) -> Result<Vec<(Engine, String)>, CliError> {
    args.iter()
        .map(|a| {
            let bad = |m: String| CliError::bad("--engine", m);
            let (name, value) = a
                .split_once('=')
                .ok_or_else(|| bad(format!("{a:?}: expected NAME=MEMBER or NAME=FILE")))?;
            let engine = Engine::parse(name).ok_or_else(|| {
                bad(format!(
                    "{name:?} is not an engine (PE, Activation/act, Pool, DVE, SP)"
                ))
            })?;
            if value.is_empty() {
                return Err(bad(format!("{a:?}: no member or file after '='")));
            }
            Ok((engine, value.to_string()))
        })
        .collect()
}

/// The JSON reader of every harness input: a key given twice is refused (E3).
pub(super) fn parse_json(s: &str) -> Result<serde_json::Value, String> {
    strict_json::parse(s)
        .map(|j| j.to_value())
        .map_err(|e| e.to_string())
}

/// A NEFF error as bad input (exit 2), naming the input once.
pub fn neff_error(source: &str, e: NeffError) -> CliError {
    let m = e.to_string();
    CliError::bad(source, m.strip_prefix(&format!("{source}: ")).unwrap_or(&m))
}

enum Input {
    Blocks(Receiver<Vec<u8>>),
    File(PathBuf),
}

enum Msg {
    Out(Vec<u8>),
    /// The stream's tally and its steps, if read whole.
    Done(Box<(Tally, Option<Kept>)>),
    Failed(CliError),
}

struct Job {
    source: String,
    origin: StreamRef,
    input: Input,
    out: SyncSender<Msg>,
}

/// A stream's steps, or `Err` when they were past [`MAX_SYNC_BYTES`].
type Kept = Result<StepReader, ()>;

struct Shared {
    args: CheckArgs,
    sync_bytes: AtomicU64,
    errors: AtomicU64,
    stop: AtomicBool,
    limit: u64,
    pool: Mutex<Vec<Vec<u8>>>,
}

fn lint_job(job: Job, shared: &Shared) {
    // A job queued before `--max-errors` stopped the run is not linted (no output, no row).
    if shared.stop.load(Ordering::Relaxed) || shared.errors.load(Ordering::Relaxed) >= shared.limit
    {
        return;
    }
    let args = shared.args;
    let mut printer = Printer::new(Vec::with_capacity(2 * CHUNK), &args);
    printer.start(&job.source, Some(job.origin.clone()));
    let start = shared.errors.load(Ordering::Relaxed);
    printer.errors = start;
    let out = job.out;
    let mut steps: Option<Kept> = (!args.no_sync).then(|| Ok(StepReader::default()));
    let result = (|| -> Result<bool, CliError> {
        let limit = shared.limit;
        let mut walker = Walker::new(args.arch);
        let mut split = Splitter::default();
        let mut each = |run: &[u8], _: Option<usize>| -> Result<bool, CliError> {
            let stop = printer.walk(&mut walker, run, None, limit)?;
            if printer.out.len() >= CHUNK {
                let chunk = std::mem::take(&mut printer.out);
                if out.send(Msg::Out(chunk)).is_err() {
                    return Ok(true);
                }
            }
            Ok(stop || shared.stop.load(Ordering::Relaxed))
        };
        let mut feed = |b: &[u8]| {
            if let Some(Ok(s)) = &mut steps {
                let n = b.len() as u64;
                if shared.sync_bytes.fetch_add(n, Ordering::Relaxed) + n > MAX_SYNC_BYTES {
                    steps = Some(Err(()));
                } else {
                    s.push(b);
                }
            }
            split.feed(b, &mut each)
        };
        let mut stopped = false;
        match job.input {
            Input::Blocks(rx) => {
                for block in rx {
                    stopped = feed(&block)?;
                    shared.pool.lock().map(|mut p| p.push(block)).ok();
                    if stopped {
                        break;
                    }
                }
            }
            Input::File(p) => {
                let f =
                    tpb_neff::payload::regular_file(&p).map_err(|e| neff_error(&job.source, e))?;
                stopped = read_blocks(&job.source, f, BLOCK, feed)?;
            }
        }
        if stopped {
            steps = None; // not read whole: its subgraph is not analysed
        } else {
            // An empty engine file is an engine with no program (FACTS §10), not bad input.
            split.finish(&job.source, true)?;
            printer.finish(walker)?;
        }
        let stopped = stopped && printer.errors >= limit;
        printer.summary(stopped)?;
        Ok(stopped)
    })();
    shared
        .errors
        .fetch_add(printer.errors.saturating_sub(start), Ordering::Relaxed);
    // Stopped by --max-errors or by a failure: no further job is linted.
    if !matches!(result, Ok(false)) {
        shared.stop.store(true, Ordering::Relaxed);
    }
    let _ = out.send(Msg::Out(printer.out));
    let _ = match result {
        Ok(_) => out.send(Msg::Done(Box::new((printer.tally, steps)))),
        Err(e) => out.send(Msg::Failed(e)),
    };
}

struct JobSink<'a> {
    label: String,
    jobs: SyncSender<Job>,
    order: std::sync::mpsc::Sender<(StreamRef, Receiver<Msg>)>,
    shared: &'a Shared,
}

impl JobSink<'_> {
    /// The name `s`'s lines and errors carry.
    fn source(&self, s: &StreamRef) -> String {
        match self.label.as_str() {
            "" => s.member.clone(),
            label => format!("{label}:{}", s.member),
        }
    }

    /// Queues a job for `s`; `None` when the workers are gone.
    fn start(&mut self, s: &StreamRef, input: Input) -> Option<()> {
        let (out_tx, out_rx) = sync_channel(8);
        self.order.send((s.clone(), out_rx)).ok()?;
        let source = self.source(s);
        self.jobs
            .send(Job {
                source,
                origin: s.clone(),
                input,
                out: out_tx,
            })
            .ok()
    }
}

impl StreamSink for JobSink<'_> {
    fn stream(&mut self, s: &StreamRef, data: &mut dyn Read) -> Result<bool, NeffError> {
        if self.shared.stop.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let (tx, rx) = sync_channel::<Vec<u8>>(BLOCKS_IN_FLIGHT);
        if self.start(s, Input::Blocks(rx)).is_none() {
            return Ok(true);
        }
        loop {
            let mut block = self
                .shared
                .pool
                .lock()
                .ok()
                .and_then(|mut p| p.pop())
                .unwrap_or_default();
            block.clear();
            block.reserve(BLOCK);
            Read::take(&mut *data, BLOCK as u64)
                .read_to_end(&mut block)
                .map_err(|e| tpb_neff::scan::error_of(&e))?;
            if block.is_empty() {
                return Ok(self.shared.stop.load(Ordering::Relaxed));
            }
            if tx.send(block).is_err() {
                // The worker stopped (--max-errors, or the output went away).
                return Ok(true);
            }
        }
    }
}

/// SPEC §11 on each subgraph with two or more engine streams read whole, in scan order; DMA
/// descriptors from the engine JSONs (FACTS §10 D1), an undeclared increment 1 (DE-12).
fn sync_subgraphs(report: &Report, read: Vec<(StreamRef, Kept)>) -> Vec<SubgraphSync> {
    // Grouped through indexes: a NEFF may hold 100 000 subgraphs (a search per stream took
    // 490 s on one of 700 KB).
    let mut by: Vec<(String, Vec<(StreamRef, Kept)>)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for (o, s) in read {
        let i = *at.entry(o.subgraph.clone()).or_insert_with(|| {
            by.push((o.subgraph.clone(), Vec::new()));
            by.len() - 1
        });
        by[i].1.push((o, s));
    }
    let subgraphs: HashMap<&str, &tpb_neff::Subgraph> = report
        .subgraphs
        .iter()
        .map(|g| (g.name.as_str(), g))
        .collect();
    by.into_iter()
        .filter(|(_, engines)| engines.len() >= 2)
        .map(|(sg, engines)| {
            if engines.iter().any(|(_, k)| k.is_err()) {
                let why = format!(
                    "its streams are past the {} MiB of streams the engine model keeps per \
                     NEFF; --no-sync skips the model",
                    MAX_SYNC_BYTES >> 20
                );
                return check_sync::not_analysed(&sg, engines.into_iter().map(|e| e.0), why);
            }
            let engines = engines
                .into_iter()
                .filter_map(|(o, k)| Some((o, k.ok()?)))
                .collect();
            let dma = subgraphs
                .get(sg.as_str())
                .into_iter()
                .flat_map(|g| g.engines.iter().flat_map(|e| e.dma.iter()))
                .filter_map(|d| {
                    Some(DmaRow {
                        sem: u8::try_from(d.semaphore?).ok()?,
                        by: d.increment().unwrap_or(1),
                        trigger: None,
                    })
                })
                .collect();
            check_sync::analyze(&sg, engines, dma)
        })
        .collect()
}

type Drained = (Vec<(StreamRef, Tally)>, Vec<(StreamRef, Kept)>);

/// The file's header (none for a folder or engine files) and the scan's report.
type Ran = (Option<Opened>, Report);

/// Runs `check` on one NEFF target; returns whether `--max-errors` stopped it.
pub fn run<W: Write>(
    target: NeffInput,
    label: &str,
    args: CheckArgs,
    overrides: &[(Engine, String)],
    printer: &mut Printer<W>,
    pictures: &mut Vec<(String, SubgraphSync)>,
) -> Result<bool, CliError> {
    let limit = args.max_errors.unwrap_or(u64::MAX);
    let shared = Shared {
        args,
        sync_bytes: AtomicU64::new(0),
        errors: AtomicU64::new(printer.errors),
        stop: AtomicBool::new(false),
        limit,
        pool: Mutex::new(Vec::new()),
    };
    let workers = if args.max_errors.is_some() {
        1
    } else {
        std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8))
    };
    let limits = Limits {
        max_ratio: args.max_ratio,
        ..Limits::default()
    };
    let (job_tx, job_rx) = sync_channel::<Job>(0);
    let job_rx = Mutex::new(job_rx);
    let (ran, drained) = std::thread::scope(|scope| {
        let (order_tx, order_rx) = channel::<(StreamRef, Receiver<Msg>)>();
        for _ in 0..workers {
            let (job_rx, shared) = (&job_rx, &shared);
            scope.spawn(move || {
                while let Some(job) = job_rx.lock().ok().and_then(|rx| rx.recv().ok()) {
                    lint_job(job, shared);
                }
            });
        }
        let shared = &shared;
        let scan = scope.spawn(move || -> Result<Ran, CliError> {
            let mut sink = JobSink {
                label: label.to_string(),
                jobs: job_tx,
                order: order_tx,
                shared,
            };
            let (opened, report) = match target {
                NeffInput::File(path) => {
                    tpb_neff::scan_file(&path, &limits, parse_json, overrides, &mut sink)
                        .map(|(opened, report)| (Some(opened), report))
                        .map_err(|e| neff_error(label, e))?
                }
                NeffInput::Folder(path) => {
                    let report = tpb_neff::scan_folder(&path, &limits, parse_json, overrides)
                        .map_err(|e| neff_error(label, e))?;
                    // Fail closed: a folder with no engine stream is no unpacked NEFF, and
                    // "nothing to lint" must never read as a pass.
                    if report.streams.is_empty() {
                        return Err(CliError::bad(
                            label,
                            "is a directory with no engine instruction stream (not an unpacked \
                             NEFF: no sgNN/ folder whose def.json or engine-named files lead to \
                             one)",
                        ));
                    }
                    (None, report)
                }
                NeffInput::Engines(list) => {
                    sink.label = String::new();
                    let streams = list.into_iter().map(|(engine, file)| StreamRef {
                        subgraph: "-".into(),
                        engine,
                        file: Some(PathBuf::from(&file)),
                        member: file,
                        size: 0,
                    });
                    let report = Report {
                        streams: streams.collect(),
                        ..Report::default()
                    };
                    (None, report)
                }
            };
            // A folder's or the engines' files are linted here; a NEFF file's streams were.
            if opened.is_none() {
                // Every file opens before any is linted: one that does not is bad input
                // (exit 2) with no stream's lines printed, whichever worker was first.
                for s in &report.streams {
                    let file = s.file.as_deref().unwrap_or(Path::new(""));
                    tpb_neff::payload::regular_file(file)
                        .map_err(|e| neff_error(&sink.source(s), e))?;
                }
                for s in &report.streams {
                    let file = s.file.clone().unwrap_or_default();
                    if sink.start(s, Input::File(file)).is_none() {
                        break;
                    }
                }
            }
            Ok((opened, report))
        });
        // This thread prints each job's output in job order.
        let drained = (|| -> Result<Drained, CliError> {
            let mut rows = Vec::new();
            let mut read = Vec::new();
            for (origin, rx) in order_rx {
                for msg in rx {
                    match msg {
                        Msg::Out(b) => printer.out.write_all(&b)?,
                        Msg::Done(done) => {
                            let (t, s) = *done;
                            read.extend(s.map(|s| (origin.clone(), s)));
                            rows.push((origin.clone(), t));
                        }
                        Msg::Failed(e) => return Err(e),
                    }
                }
            }
            Ok((rows, read))
        })();
        let ran = scan
            .join()
            .unwrap_or_else(|_| Err(CliError::output("the NEFF reader panicked")));
        (ran, drained)
    });
    printer.errors = shared.errors.load(Ordering::Relaxed);
    let (rows, read) = drained?;
    let ran = ran?;
    let stopped = shared.stop.load(Ordering::Relaxed) && printer.errors >= limit;
    let mut sync_errors = 0u64;
    if !args.no_sync && !stopped {
        for s in sync_subgraphs(&ran.1, read) {
            sync_errors += s.errors() as u64;
            if args.format == Format::Summary {
                // The summary counts each subgraph's findings, so an exit 1 has its reason.
                writeln!(printer.out, "{}", s.summary_line(label))?;
            } else {
                s.write(&mut printer.out, label, args.format == Format::Jsonl)?;
            }
            pictures.push((label.to_string(), s));
        }
    }
    printer.errors += sync_errors;
    closing(printer, label, args, &ran, &rows, stopped, sync_errors)?;
    Ok(stopped)
}

/// The closing lines: engines with no stream, then the NEFF's own line.
fn closing<W: Write>(
    printer: &mut Printer<W>,
    label: &str,
    args: CheckArgs,
    (opened, report): &Ran,
    rows: &[(StreamRef, Tally)],
    stopped: bool,
    sync_errors: u64,
) -> Result<(), CliError> {
    let instructions: u64 = rows.iter().map(|(_, t)| t.instructions()).sum();
    let errors: u64 = rows.iter().map(|(_, t)| t.errors()).sum();
    let mut no_stream = Vec::new();
    // After a stop, an engine whose member was not reached is not said to have no stream.
    let subgraphs = if stopped {
        &[][..]
    } else {
        &report.subgraphs[..]
    };
    for sg in subgraphs {
        for e in &sg.engines {
            if e.member.is_none() {
                no_stream.push((sg.name.clone(), e.engine.name(), e.how.text("def.json")));
            }
        }
    }
    let integrity = match (opened, &report.integrity) {
        (_, Some(tpb_neff::Integrity::Verified(k))) => format!("{} verified", k.name()),
        (Some(o), Some(tpb_neff::Integrity::NotVerified { .. })) => format!(
            "hash not verified: pkg_version {} is not 1 (SHA-256) or 2 (MD5)",
            o.header.pkg_version
        ),
        (Some(_), None) => "hash not checked (stopped)".to_string(),
        (None, _) => String::new(),
    };
    let out = &mut printer.out;
    match args.format {
        Format::Text | Format::Summary | Format::Html => {
            let label = super::shown(label);
            for (sg, engine, how) in &no_stream {
                let (sg, how) = (super::shown(sg), super::shown(how));
                writeln!(out, "{label}: {sg} {engine}: no instruction stream ({how})")?;
            }
            let mut line = format!(
                "{label}: {} subgraphs, {} engine streams, {instructions} instructions, {errors} errors",
                report.subgraphs.len(),
                rows.len()
            );
            if let Some(o) = opened {
                line.push_str(&format!(
                    "; NEFF pkg_version {}, payload {}, {integrity}",
                    o.header.pkg_version,
                    o.compression.name()
                ));
            }
            if sync_errors > 0 {
                line.push_str(&format!(
                    "; {sync_errors} sync error(s) across engines (advisory)"
                ));
            }
            if report.passes == 2 {
                line.push_str("; a stream came before its def.json and was read in a second pass");
            }
            if stopped {
                line.push_str(" (stopped at --max-errors)");
            }
            writeln!(out, "{line}")?;
        }
        Format::Jsonl => {
            let mut o = serde_json::json!({
                "source": label,
                "neff": {
                    "subgraphs": report.subgraphs.len(),
                    "streams": rows.len(),
                    "instructions": instructions,
                    "errors": errors,
                    "sync_errors": sync_errors,
                    "passes": report.passes,
                    "stopped": stopped,
                    "no_stream": no_stream.iter().map(|(s, e, how)| serde_json::json!({"subgraph": s, "engine": e, "why": how})).collect::<Vec<_>>(),
                }
            });
            if let Some(op) = opened {
                o["neff"]["pkg_version"] = op.header.pkg_version.into();
                o["neff"]["payload"] = op.compression.name().into();
                o["neff"]["integrity"] = integrity.into();
            }
            writeln!(out, "{o}")?;
        }
    }
    Ok(())
}

/// Whether folder `p` holds an `sgNN` folder (any case).
fn has_subgraph(p: &Path) -> bool {
    std::fs::read_dir(p).is_ok_and(|rd| {
        rd.flatten().any(|e| {
            let n = e.file_name().to_string_lossy().to_ascii_lowercase();
            n.len() > 2
                && n.starts_with("sg")
                && n[2..].bytes().all(|b| b.is_ascii_digit())
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
    })
}

/// `check`'s NEFF target for a path, if it is one: an unpacked NEFF folder (one holding an
/// `sgNN/` folder; any other folder stays bad input) or a NEFF file.
pub fn neff_input(path: &str) -> Option<NeffInput> {
    if path == "-" {
        return None;
    }
    let p = Path::new(path);
    if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
        return has_subgraph(p).then(|| NeffInput::Folder(p.to_path_buf()));
    }
    is_neff(path).then(|| NeffInput::File(p.to_path_buf()))
}
