//! The `tpb-subject/1` client of a `cmd:` subject: one child process per
//! generation, requests pipelined (at most [`MAX_IN_FLIGHT`] unanswered),
//! answers in request order. A fault (docs/subject-protocol.md "Faults") is
//! the oldest unanswered request's: the process is restarted and the
//! unanswered requests sent again. A writer thread (a subject that stops
//! reading cannot block the harness), a stdout reader and a stderr reader
//! run per process.

use super::protocol::{
    self, parse_answer, parse_hello, Answer, Hello, Request, MAX_IN_FLIGHT, MAX_LINE,
};
use super::reaper::{self, kill_all};
use super::supervisor::{clip, Kept, STDERR_LINES};
use super::watch::HELLO_MIN;
use crate::subjects::Fault;
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

/// How often a wait looks at the stop request and the process.
pub const POLL: Duration = Duration::from_millis(50);
/// The least time a [`Running::wait`] gives the stdout reader after the
/// process exits to hand over what it wrote.
const DRAIN: Duration = Duration::from_secs(2);
const STDERR_LINE_MAX: usize = 1000;

pub type Reply = Result<Answer, Fault>;
type WaitResult<Ev> = Result<Ev, RecvTimeoutError>;

enum Event {
    Line(String),
    Bad(String),
    Eof,
}

pub(super) type Ring = Arc<Mutex<VecDeque<String>>>;

/// A started child (a `cmd:` subject, its `batch64` instance, a `lib:`
/// worker): leader of its own process group, registered with the
/// [`reaper`], its stderr kept in the ring.
pub(super) struct Group {
    pub(super) child: Child,
    live: u64,
    stderr_done: Receiver<()>,
}

impl Group {
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

    /// Kills the group and whoever holds its pipes; the exit status.
    pub(super) fn kill(&mut self) -> Option<ExitStatus> {
        reaper::kill(self.live);
        let _ = self.child.kill();
        self.child.wait().ok()
    }
}

/// A child's stdout, ending once the child has exited (`seen_exit`) and the
/// pipe is empty: all it wrote is read, and a grandchild holding the pipe
/// open cannot keep the reader waiting.
pub(super) struct Output {
    pipe: ChildStdout,
    seen_exit: Arc<AtomicBool>,
}

impl Read for Output {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            // Before the poll: after the exit an empty pipe stays empty.
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

/// A [`Group`] with a writer thread fed by `to_stdin` and a stdout reader
/// feeding `events`.
pub(super) struct Running<In, Ev> {
    pub(super) group: Group,
    pub(super) to_stdin: Option<Sender<In>>,
    pub(super) events: Receiver<Ev>,
    seen_exit: Arc<AtomicBool>,
}

impl<In: Send + 'static, Ev: Send + 'static> Running<In, Ev> {
    /// Starts `sh -c COMMAND`, `write` on its stdin, `read` on its stdout.
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
    /// False once stdin is closed.
    pub(super) fn send(&self, m: In) -> bool {
        self.to_stdin.as_ref().is_some_and(|tx| tx.send(m).is_ok())
    }

    /// Waits up to `timeout` for the next event (a stop request: a timeout
    /// at once). After the process exits, what it wrote is still read for
    /// at least [`DRAIN`]; then the wait ends as `eof`.
    pub(super) fn wait(&mut self, timeout: Duration, eof: Ev) -> WaitResult<Ev> {
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

    /// Sends the hello `line`; its answer as [`Running::wait`] (`timeout`,
    /// at least [`HELLO_MIN`]).
    pub(super) fn hello(&mut self, line: In, timeout: Duration, eof: Ev) -> WaitResult<Ev> {
        if !self.send(line) {
            return Err(RecvTimeoutError::Disconnected);
        }
        self.wait(timeout.max(HELLO_MIN), eof)
    }

    pub(super) fn exited(&mut self) -> bool {
        matches!(self.group.child.try_wait(), Ok(Some(_)))
    }

    pub(super) fn kill(mut self) -> Option<ExitStatus> {
        drop(self.to_stdin);
        self.group.kill()
    }

    /// [`Running::kill`], then a moment for the stderr reader to drain.
    pub(super) fn kill_and_drain(mut self) -> Option<ExitStatus> {
        drop(self.to_stdin);
        let st = self.group.kill();
        let _ = self
            .group
            .stderr_done
            .recv_timeout(Duration::from_millis(500));
        st
    }
}

type LineProcess = Running<String, Event>;

pub struct ProcessSubject {
    k: Kept,
    command: String,
    running: Option<LineProcess>,
    /// 1 after each start.
    next_id: u64,
}

impl std::ops::Deref for ProcessSubject {
    type Target = Kept;

    fn deref(&self) -> &Kept {
        &self.k
    }
}

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

/// One line of at most `max` bytes, without the newline (`Ok(None)`: end);
/// `Err(true)`: longer, reported as soon as the limit is passed, the rest
/// unread (a gigabyte without a newline is a fault at once, not a
/// timeout); `Err(false)`: not UTF-8.
fn read_line(r: &mut impl BufRead, max: usize) -> std::io::Result<Option<Result<String, bool>>> {
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
        return Ok(Some(Err(true)));
    }
    Ok(Some(String::from_utf8(buf).map_err(|_| false)))
}

impl ProcessSubject {
    /// Starts the subject for `arch` and performs the hello; `timeout`
    /// bounds every answer (the hello's at least [`HELLO_MIN`]).
    pub fn start(command: &str, arch: &str, timeout: Duration) -> Result<ProcessSubject, String> {
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

    /// Runs requests pipelined, one reply each in order, `tick` after each
    /// (an op not declared: [`Answer::Unsupported`], no round trip).
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
        // `next`: the position in `wire` of the next request to send;
        // `in_flight`: positions sent, unanswered.
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
                    self.restart();
                    tick();
                    continue;
                };
                if in_flight.is_empty() && run.exited() {
                    // Exited with nothing unanswered: no input is blamed;
                    // the fault counts toward giving up.
                    let status = self.running.take().and_then(LineProcess::kill);
                    let f = format!(
                        "{} between requests, none unanswered",
                        describe_exit(status)
                    );
                    let f = Fault::Crash(f);
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
            let failed = match got {
                Ok(Event::Line(l)) => match parse_answer(&l, id, op) {
                    Ok(a) => {
                        out[i] = Some(Ok(a));
                        in_flight.pop_front();
                        self.k.sup.count(op, None);
                        tick();
                        continue;
                    }
                    Err(e) => Fault::Protocol(format!("{e}; answer line: {}", clip(&l))),
                },
                Ok(Event::Bad(e)) => Fault::Protocol(e),
                Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => {
                    let status = self.running.take().and_then(LineProcess::kill);
                    Fault::Crash(format!("{} before answering", describe_exit(status)))
                }
                Err(RecvTimeoutError::Timeout) => {
                    Fault::Timeout(format!("no answer within {:?}", self.k.timeout))
                }
            };
            if crate::interrupt::stop_requested() {
                // Not the subject's fault: the run is stopping.
                let f = Fault::NotSent("not answered: the run was interrupted".into());
                let left = in_flight.iter().map(|&(q, _)| q).chain(next..wire.len());
                for q in left {
                    out[wire[q]] = Some(Err(f.clone()));
                }
                if let Some(r) = self.running.take() {
                    r.kill();
                }
                break;
            }
            self.k.sup.count(op, Some((&failed, reqs[i].input_text())));
            out[i] = Some(Err(failed));
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
                r.unwrap_or_else(|| Err(Fault::Crash("internal: request not answered".into())))
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
        // Close stdin, give it a moment unless stopping, then kill the rest.
        if let Some(mut r) = self.running.take() {
            r.to_stdin = None;
            // Up to 500 ms, looked at every millisecond.
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

fn spawn(
    command: &str,
    arch: &str,
    timeout: Duration,
    ring: &Ring,
) -> Result<(LineProcess, Hello), String> {
    let mut run = LineProcess::spawn(command, ring, write_loop, read_loop)?;
    let wait = timeout.max(HELLO_MIN);
    let why = match run.hello(protocol::hello_line(arch), timeout, Event::Eof) {
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
    // The harness's SIGKILL is no crash of the subject's: say so (issue 32).
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
        for l in std::iter::once(line).chain(rx.try_iter()) {
            if writeln!(w, "{l}").is_err() {
                return;
            }
        }
        if w.flush().is_err() {
            return;
        }
    }
}

fn read_loop(stdout: Output, tx: Sender<Event>) {
    let mut r = BufReader::new(stdout);
    loop {
        let (ev, long) = match read_line(&mut r, MAX_LINE) {
            Ok(Some(Ok(l))) => (Event::Line(l), false),
            Ok(Some(Err(long))) => {
                let e = match long {
                    true => format!("answer line longer than {MAX_LINE} bytes"),
                    false => "answer line is not UTF-8".to_string(),
                };
                (Event::Bad(e), long)
            }
            Ok(None) | Err(_) => {
                let _ = tx.send(Event::Eof);
                return;
            }
        };
        if tx.send(ev).is_err() {
            return;
        }
        // Reported: the rest of an over-long line is skipped.
        if long && r.skip_until(b'\n').is_err() {
            let _ = tx.send(Event::Eof);
            return;
        }
    }
}

pub(super) fn stderr_loop(stderr: impl Read, ring: &Mutex<VecDeque<String>>) {
    let mut r = BufReader::new(stderr);
    loop {
        let line = match read_line(&mut r, STDERR_LINE_MAX) {
            Ok(Some(Ok(l))) => l,
            Ok(Some(Err(long))) => {
                if long && r.skip_until(b'\n').is_err() {
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
