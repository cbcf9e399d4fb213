//! The `tpb-subject/1` client of a `cmd:` subject: one child process per
//! generation, requests pipelined on its stdin (at most [`MAX_IN_FLIGHT`]
//! unanswered), answers read from its stdout in request order.
//!
//! A fault (docs/subject-protocol.md "Faults") is the oldest unanswered
//! request's; the process group is killed and restarted by the
//! [`super::supervisor::Supervisor`], the unanswered requests are sent
//! again, and an operation given up is [`FaultClass::NotSent`] at once. While a stop is requested
//! ([`crate::interrupt::stop_requested`]) every unanswered request is a
//! fault at once (the waits poll every [`POLL`]). Per process: a writer
//! thread (a subject that stops reading cannot block the harness), a stdout
//! reader feeding a channel (waits with a timeout; it reads everything the
//! process wrote before it exited, [`Output`]) and a stderr reader keeping
//! the last [`STDERR_LINES`] lines in the supervisor's ring.

use super::protocol::{
    self, parse_answer, parse_hello, Answer, Hello, Request, MAX_IN_FLIGHT, MAX_LINE,
};
use super::reaper::{self, kill_all};
use super::supervisor::{clip, Fault, FaultClass, Kept, StartError, STDERR_LINES};
use super::watch::HELLO_MIN;
use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How often a wait for an answer looks at the stop request and the process.
pub const POLL: Duration = Duration::from_millis(50);
/// How long after its process exits a [`Running::wait`] gives the stdout
/// reader at least, whatever is left of the wait, to hand over what the
/// process wrote (it needs one [`POLL`] unless the machine is starved).
const DRAIN: Duration = Duration::from_secs(2);
/// Longest stderr line kept, in bytes (longer lines are cut).
const STDERR_LINE_MAX: usize = 1000;

/// The answer to one request, or the fault it caused.
pub type Reply = Result<Answer, Fault>;

enum Event {
    Line(String),
    Bad(String),
    Eof,
}

/// A stderr ring shared across restarts
/// ([`super::supervisor::Supervisor::stderr_ring`]).
pub(super) type Ring = Arc<Mutex<VecDeque<String>>>;

/// A started child (a `cmd:` subject, its `batch64` instance, a `lib:`
/// worker): the leader of its own process group, registered with the
/// [`reaper`], its stderr kept in the ring (`stderr_done` fires when that
/// reader ends).
pub(super) struct Group {
    pub(super) child: Child,
    live: u64,
    stderr_done: Receiver<()>,
}

impl Group {
    /// Starts `cmd` (`what` names it in the error) with its three pipes.
    pub(super) fn spawn(
        cmd: &mut Command,
        what: &str,
        ring: &Ring,
    ) -> Result<(Group, ChildStdin, ChildStdout), String> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("child has no pipes".into());
        };
        let live = reaper::register(child.id(), &[&stdin, &stdout, &stderr]);
        crate::interrupt::on_hard_exit(kill_all);
        let ring = Arc::clone(ring);
        let (done_tx, stderr_done) = mpsc::channel::<()>();
        thread::spawn(move || {
            stderr_loop(stderr, &ring);
            let _ = done_tx.send(());
        });
        let g = Group {
            child,
            live,
            stderr_done,
        };
        Ok((g, stdin, stdout))
    }

    /// Kills the group (a `sh -c` wrapper's children too) and whoever
    /// holds its pipes; the exit status.
    pub(super) fn kill(mut self) -> Option<ExitStatus> {
        self.stop()
    }

    fn stop(&mut self) -> Option<ExitStatus> {
        reaper::kill(self.live);
        let _ = self.child.kill();
        self.child.wait().ok()
    }
}

/// A child's stdout as its reader thread reads it: the end of output once
/// the child has exited (`seen_exit`, set by [`Running::wait`]) and the pipe is
/// empty, so everything the child wrote before it exited is read, and a
/// child of it that holds the pipe open cannot keep the reader waiting.
pub(super) struct Output {
    pipe: ChildStdout,
    seen_exit: Arc<AtomicBool>,
}

impl Read for Output {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            // Looked at before the poll: once the process has exited, an
            // empty pipe stays empty of anything it wrote.
            let exited = self.seen_exit.load(Ordering::Acquire);
            let wait = if exited { 0 } else { POLL.as_millis() as u16 };
            let mut fd = [PollFd::new(self.pipe.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fd, wait) {
                Ok(0) if exited => return Ok(0),
                Ok(0) | Err(Errno::EINTR) => {}
                Ok(_) => return self.pipe.read(buf),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// A [`Group`] with a writer thread fed by `to_stdin` (`In`: what one send
/// writes) and a stdout reader thread feeding `events`.
pub(super) struct Running<In, Ev> {
    pub(super) group: Group,
    pub(super) to_stdin: Option<Sender<In>>,
    pub(super) events: Receiver<Ev>,
    /// Set once the process is seen exited (its reader then ends at an empty pipe).
    seen_exit: Arc<AtomicBool>,
}

impl<In: Send + 'static, Ev: Send + 'static> Running<In, Ev> {
    /// Starts `sh -c COMMAND` (a `cmd:` subject) with `write` on its stdin
    /// and `read` on its stdout.
    pub(super) fn spawn(
        command: &str,
        ring: &Ring,
        write: fn(ChildStdin, Receiver<In>),
        read: fn(Output, Sender<Ev>),
    ) -> Result<Self, String> {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", command]);
        let (group, stdin, pipe) = Group::spawn(&mut cmd, "\"sh\"", ring)?;
        let (to_stdin, from_harness) = mpsc::channel::<In>();
        thread::spawn(move || write(stdin, from_harness));
        let (tx, events) = mpsc::channel();
        let seen_exit = Arc::new(AtomicBool::new(false));
        let out = Output {
            pipe,
            seen_exit: Arc::clone(&seen_exit),
        };
        thread::spawn(move || read(out, tx));
        Ok(Running {
            group,
            to_stdin: Some(to_stdin),
            events,
            seen_exit,
        })
    }
}

impl<In, Ev> Running<In, Ev> {
    /// Queues `m` for the writer thread; false once stdin is closed.
    pub(super) fn send(&self, m: In) -> bool {
        self.to_stdin.as_ref().is_some_and(|tx| tx.send(m).is_ok())
    }

    /// Waits up to `timeout` for the next event, in [`POLL`] slices; a
    /// stop request ends the wait at once (as a timeout). Once the process
    /// has exited, what it wrote is still read (the reader ends at the
    /// empty pipe, [`Output`], even while a child of it holds the pipe
    /// open), for at least [`DRAIN`]; then the wait ends as `eof`.
    pub(super) fn wait(&mut self, timeout: Duration, eof: Ev) -> Result<Ev, RecvTimeoutError> {
        let _waiting = super::watch::waiting();
        let mut until = Instant::now() + timeout;
        loop {
            if crate::interrupt::stop_requested() {
                return Err(RecvTimeoutError::Timeout);
            }
            let exited = self.seen_exit.load(Ordering::Relaxed);
            if !exited && self.exited() {
                self.seen_exit.store(true, Ordering::Release);
                until = until.max(Instant::now() + DRAIN);
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return if exited {
                    Ok(eof)
                } else {
                    Err(RecvTimeoutError::Timeout)
                };
            }
            match self.events.recv_timeout(left.min(POLL)) {
                Err(RecvTimeoutError::Timeout) => {}
                other => return other,
            }
        }
    }

    /// True once the process has exited (its group may live on).
    pub(super) fn exited(&mut self) -> bool {
        matches!(self.group.child.try_wait(), Ok(Some(_)))
    }

    /// Closes stdin and kills the group; the exit status.
    pub(super) fn kill(self) -> Option<ExitStatus> {
        drop(self.to_stdin);
        self.group.kill()
    }

    /// [`Running::kill`], then a moment for the stderr reader to drain the
    /// dying process.
    pub(super) fn kill_and_drain(mut self) -> Option<ExitStatus> {
        drop(self.to_stdin);
        let st = self.group.stop();
        let _ = self
            .group
            .stderr_done
            .recv_timeout(Duration::from_millis(500));
        st
    }
}

/// The line client's process: one request line per send, answer lines out.
type LineProcess = Running<String, Event>;

/// A `tpb-subject/1` subject running as a child process.
pub struct ProcessSubject {
    k: Kept,
    command: String,
    running: Option<LineProcess>,
    /// The id of the next request to the running process (1 after each start).
    next_id: u64,
}

impl std::ops::Deref for ProcessSubject {
    type Target = Kept;

    fn deref(&self) -> &Kept {
        &self.k
    }
}

/// `exited with status N` / `killed by signal N (SIGX)`.
pub(super) fn describe_exit(s: Option<ExitStatus>) -> String {
    match s {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(sig)) => format!("killed by signal {sig}{}", signal_name(sig)),
            _ => "exited".into(),
        },
        None => "exited (status unknown)".into(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        _ => "",
    }
}

/// Why [`read_line`] refused a line.
#[derive(Debug, PartialEq)]
enum BadLine {
    /// Longer than the limit: reported as soon as the limit is passed, the
    /// rest of the line still unread (the caller skips it with
    /// `skip_until(b'\n')` once it has reported it, so a subject that writes
    /// a gigabyte without a newline is a fault at once, not a timeout).
    TooLong(usize),
    NotUtf8,
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadLine::TooLong(max) => write!(f, "answer line longer than {max} bytes"),
            BadLine::NotUtf8 => f.write_str("answer line is not UTF-8"),
        }
    }
}

/// Reads one line of at most `max` bytes (without the newline). `Ok(None)`
/// at end of input; an over-long line is [`BadLine::TooLong`] after `max + 1`
/// bytes, the rest left unread.
fn read_line(r: &mut impl BufRead, max: usize) -> std::io::Result<Option<Result<String, BadLine>>> {
    let mut buf = Vec::new();
    let n = r
        .by_ref()
        .take(max as u64 + 1)
        .read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    } else if buf.len() > max {
        return Ok(Some(Err(BadLine::TooLong(max))));
    }
    Ok(Some(String::from_utf8(buf).map_err(|_| BadLine::NotUtf8)))
}

impl ProcessSubject {
    /// Starts the subject for generation `arch` (e.g. `"v2"`) and performs the
    /// hello. `timeout` bounds every answer (the hello gets at least 10 s).
    pub fn start(
        command: &str,
        arch: &str,
        timeout: Duration,
    ) -> Result<ProcessSubject, StartError> {
        let mut k = Kept::new(arch, timeout);
        let (running, hello) = spawn(command, arch, timeout, &k.sup.stderr_ring())
            .map_err(|e| k.sup.start_error(e))?;
        k.hello = hello;
        Ok(ProcessSubject {
            k,
            command: command.to_string(),
            running: Some(running),
            next_id: 1,
        })
    }

    /// Runs a batch of requests, pipelined; one reply per request, in
    /// order, calling `tick` after each answer or fault (progress for a
    /// watchdog). Requests for an op the subject did not declare are
    /// answered [`Answer::Unsupported`] without a round trip.
    pub fn call_batch(&mut self, reqs: &[Request], tick: &dyn Fn()) -> Vec<Reply> {
        let mut out: Vec<Option<Reply>> = vec![None; reqs.len()];
        let wire: Vec<usize> = (0..reqs.len())
            .filter(|&i| {
                let ok = self.supports(reqs[i].capability());
                if !ok {
                    out[i] = Some(Ok(Answer::Unsupported));
                }
                ok
            })
            .collect();
        // `next` = the position in `wire` of the next request to send to
        // the current process; `in_flight` = positions sent, unanswered.
        // A request of an operation given up (`Supervisor::not_sent`) is
        // not sent: the other operations go on.
        let mut next = 0usize;
        let mut in_flight: VecDeque<(usize, u64)> = VecDeque::new();
        loop {
            while next < wire.len() && in_flight.len() < MAX_IN_FLIGHT {
                let i = wire[next];
                if let Some(f) = self.k.sup.not_sent(reqs[i].capability()) {
                    out[i] = Some(Err(f));
                    next += 1;
                    continue;
                }
                let Some(run) = self.running.as_mut() else {
                    // Started again after a fault (a restart is progress);
                    // a failed restart gives the whole subject up.
                    self.restart();
                    tick();
                    continue;
                };
                if in_flight.is_empty() && run.exited() {
                    // It exited with every request it was sent answered:
                    // it was working on no input, so none is blamed (as a
                    // `lib:` worker dying between entries); the fault counts
                    // toward giving up and the requests go to a new process.
                    let status = self.running.take().and_then(LineProcess::kill);
                    let f = Fault {
                        class: FaultClass::Crash,
                        detail: format!(
                            "{} between requests, none unanswered",
                            describe_exit(status)
                        ),
                    };
                    self.k
                        .sup
                        .count(reqs[i].capability(), Some((&f, "no input".into())));
                    tick();
                    continue;
                }
                let id = self.next_id;
                self.next_id += 1;
                let ok = run.send(reqs[i].to_line(id));
                in_flight.push_back((next, id));
                next += 1;
                if !ok {
                    break;
                }
            }
            let Some(&(p, id)) = in_flight.front() else {
                break;
            };
            let i = wire[p];
            let Some(run) = self.running.as_mut() else {
                break;
            };
            let got = run.wait(self.k.timeout, Event::Eof);
            self.k.received += u64::from(matches!(got, Ok(Event::Line(_) | Event::Bad(_))));
            let op = reqs[i].capability();
            let fault = match got {
                Ok(Event::Line(l)) => match parse_answer(&l, id, op) {
                    Ok(a) => {
                        out[i] = Some(Ok(a));
                        in_flight.pop_front();
                        self.k.sup.count(op, None);
                        tick();
                        continue;
                    }
                    Err(e) => Fault {
                        class: FaultClass::Protocol,
                        detail: format!("{e}; answer line: {}", clip(&l)),
                    },
                },
                Ok(Event::Bad(e)) => Fault {
                    class: FaultClass::Protocol,
                    detail: e,
                },
                Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => {
                    let status = self.running.take().and_then(LineProcess::kill);
                    Fault {
                        class: FaultClass::Crash,
                        detail: format!("{} before answering", describe_exit(status)),
                    }
                }
                Err(RecvTimeoutError::Timeout) => Fault {
                    class: FaultClass::Timeout,
                    detail: format!("no answer within {:?}", self.k.timeout),
                },
            };
            if crate::interrupt::stop_requested() {
                // Not the subject's fault: the run is stopping.
                let f = Fault {
                    class: FaultClass::NotSent,
                    detail: "not answered: the run was interrupted".into(),
                };
                let left = in_flight.iter().map(|&(q, _)| q).chain(next..wire.len());
                for q in left {
                    out[wire[q]] = Some(Err(f.clone()));
                }
                if let Some(r) = self.running.take() {
                    r.kill();
                }
                break;
            }
            self.k.sup.count(op, Some((&fault, reqs[i].input_text())));
            out[i] = Some(Err(fault));
            tick();
            if let Some(r) = self.running.take() {
                r.kill();
            }
            // The requests sent after it go to the next process again.
            in_flight.pop_front();
            if let Some(&(q, _)) = in_flight.front() {
                next = q;
            }
            in_flight.clear();
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(Fault {
                        class: FaultClass::Crash,
                        detail: "internal: request not answered".into(),
                    })
                })
            })
            .collect()
    }

    fn restart(&mut self) {
        let ring = self.k.sup.stderr_ring();
        let (command, arch, timeout) = (&self.command, &self.k.arch, self.k.timeout);
        self.running = self.k.sup.restart(
            &self.k.hello,
            || spawn(command, arch, timeout, &ring),
            |r| _ = r.kill(),
        );
        self.next_id = 1;
    }
}

impl Drop for ProcessSubject {
    fn drop(&mut self) {
        // Close stdin (the subject exits), give it a moment unless the run
        // is stopping, then kill whatever is left of its group and pipes.
        if let Some(mut r) = self.running.take() {
            r.to_stdin = None;
            // Up to 500 ms, looked at every millisecond (a subject that
            // exits at once costs a millisecond, not a 10 ms tick).
            for _ in 0..500 {
                if crate::interrupt::stop_requested() {
                    break;
                }
                if let Ok(Some(_)) = r.group.child.try_wait() {
                    break;
                }
                thread::sleep(Duration::from_millis(1));
            }
            r.kill();
        }
    }
}

/// Starts the process and runs the hello exchange.
fn spawn(
    command: &str,
    arch: &str,
    timeout: Duration,
    ring: &Ring,
) -> Result<(LineProcess, Hello), String> {
    let mut run = LineProcess::spawn(command, ring, write_loop, read_loop)?;
    let sent = run.send(protocol::hello_line(arch));
    let wait = timeout.max(HELLO_MIN);
    let answer = if sent {
        run.wait(wait, Event::Eof)
    } else {
        Err(RecvTimeoutError::Disconnected)
    };
    let why = match answer {
        Ok(Event::Line(l)) => match parse_hello(&l) {
            Ok(h) => return Ok((run, h)),
            Err(e) => format!("bad hello answer: {e}; line: {}", clip(&l)),
        },
        Ok(Event::Bad(e)) => format!("bad hello answer: {e}"),
        Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => {
            let st = run.kill_and_drain();
            return Err(format!(
                "exited before answering hello ({})",
                describe_exit(st)
            ));
        }
        Err(RecvTimeoutError::Timeout) => format!("no hello answer within {wait:?}"),
    };
    // A bad or missing hello: the harness ends the subject itself, so its SIGKILL is no crash
    // of the subject's; say so, and why (issue 32).
    let how = match run.kill_and_drain().map(|s| s.code()) {
        Some(Some(c)) => format!("it exited with status {c} first"),
        _ => "the harness ended the subject: a subject must answer the hello line first \
              (docs/subject-protocol.md)"
            .to_string(),
    };
    Err(format!("{why}; {how}"))
}

fn write_loop(stdin: ChildStdin, rx: Receiver<String>) {
    let mut w = std::io::BufWriter::new(stdin);
    while let Ok(line) = rx.recv() {
        // Batch whatever is queued, flush when the queue is empty.
        for l in std::iter::once(line).chain(rx.try_iter()) {
            if writeln!(w, "{l}").is_err() {
                return;
            }
        }
        if w.flush().is_err() {
            return;
        }
    }
    // Channel closed: dropping `w` closes the subject's stdin.
}

fn read_loop(stdout: Output, tx: Sender<Event>) {
    let mut r = BufReader::new(stdout);
    loop {
        let (ev, long) = match read_line(&mut r, MAX_LINE) {
            Ok(Some(Ok(l))) => (Event::Line(l), false),
            Ok(Some(Err(e))) => (Event::Bad(e.to_string()), matches!(e, BadLine::TooLong(_))),
            Ok(None) | Err(_) => {
                let _ = tx.send(Event::Eof);
                return;
            }
        };
        if tx.send(ev).is_err() {
            return;
        }
        // The fault is reported; the rest of an over-long line is skipped
        // (the harness kills the process meanwhile, ending it at EOF).
        if long && r.skip_until(b'\n').is_err() {
            let _ = tx.send(Event::Eof);
            return;
        }
    }
}

/// Keeps the last [`STDERR_LINES`] lines of `stderr` in `ring`.
pub(super) fn stderr_loop(stderr: impl Read, ring: &Mutex<VecDeque<String>>) {
    let mut r = BufReader::new(stderr);
    loop {
        let line = match read_line(&mut r, STDERR_LINE_MAX) {
            Ok(Some(Ok(l))) => l,
            Ok(Some(Err(BadLine::NotUtf8))) => "[over-long or non-UTF-8 stderr line]".to_string(),
            Ok(Some(Err(BadLine::TooLong(_)))) => {
                if r.skip_until(b'\n').is_err() {
                    return;
                }
                "[over-long or non-UTF-8 stderr line]".to_string()
            }
            Ok(None) | Err(_) => return,
        };
        if let Ok(mut g) = ring.lock() {
            if g.len() == STDERR_LINES {
                g.pop_front();
            }
            g.push_back(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a process wrote before it exited is its answer however late
    /// its reader thread gets to the pipe (on a loaded machine it may not
    /// run for a while), and the wait after it ends at once although a
    /// child of the process holds the pipe open. Before, the wait gave the
    /// reader one [`POLL`] after the exit and then lost the answer.
    #[test]
    fn what_an_exited_process_wrote_is_read_however_late_the_reader() {
        fn late(out: Output, tx: Sender<Event>) {
            thread::sleep(Duration::from_millis(300));
            read_loop(out, tx);
        }
        let ring = Ring::default();
        let mut run = LineProcess::spawn("sleep 60 & echo answer", &ring, write_loop, late)
            .expect("sh starts");
        let long = Duration::from_secs(30);
        let got = run.wait(long, Event::Eof);
        assert!(matches!(&got, Ok(Event::Line(l)) if l == "answer"));
        let t0 = Instant::now();
        assert!(matches!(run.wait(long, Event::Eof), Ok(Event::Eof)));
        assert!(t0.elapsed() < long / 2, "{:?}", t0.elapsed());
        run.kill();
    }
}
