//! A `lib:` subject's worker process as the gate sees it: started and greeted
//! ([`spawn`]), rung for one hand-off ([`ring`]) and waited for ([`wait`]: finished,
//! died, hung or stopped). What goes into a hand-off, and what its answers mean, is
//! [`super::shm_client`]'s.

use super::process::{describe_exit, Group, Ring, HELLO_MIN, POLL};
use super::protocol::{parse_hello, Hello};
use super::shm::{self, Field, Region};
use std::io::{Read, Write};
use std::process::{ChildStdin, Command, ExitStatus};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// A started worker: its process group, doorbell (its stdin), ring receiver and region.
pub(super) struct Worker {
    pub(super) group: Group,
    bell: ChildStdin,
    pub(super) rings: Receiver<()>,
    pub(super) region: Region,
}

impl Worker {
    pub(super) fn kill(self) -> Option<ExitStatus> {
        self.group.kill()
    }
}

impl super::process::Kill for Worker {
    fn kill_now(self) {
        self.kill();
    }
}

/// How a hand-off ended.
pub(super) enum Wait {
    Finished,
    Died(Option<ExitStatus>),
    Hung,
    Stopped,
}

/// Starts a worker for `lib` serving `arch` and waits for its ready ring
/// and hello; its stderr goes to `ring`.
pub(super) fn spawn(
    exe: &std::path::Path,
    lib: &str,
    arch: &str,
    timeout: Duration,
    ring: &Ring,
) -> Result<(Worker, Hello), String> {
    let (region, path) = Region::create().map_err(|e| e.0)?;
    let mut cmd = Command::new(exe);
    cmd.arg(super::shm_worker::WORKER_SUBCOMMAND)
        .arg("--shm")
        .arg(&path)
        .arg("--arch")
        .arg(arch)
        .arg(format!("lib:{}", lib));
    let (group, bell, out) = Group::spawn(&mut cmd, &exe.display().to_string(), ring)
        .inspect_err(|_| Region::unlink(&path))?;
    let (tx, rings) = mpsc::channel();
    thread::spawn(move || {
        let mut out = out;
        let mut buf = [0u8; 64];
        loop {
            match out.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if tx.send(()).is_err() {
                        return;
                    }
                }
            }
        }
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
    Region::unlink(&path);
    match (got, w.region.get(Field::Ready)) {
        (Ok(()), shm::READY_OK | shm::READY_UNSUPPORTED) => {
            let line = w
                .region
                .answer_at(0)
                .map(|(_, l)| String::from_utf8_lossy(l).into_owned());
            match line.as_deref().map(parse_hello) {
                Some(Ok(h)) => Ok((w, h)),
                _ => {
                    w.kill();
                    Err(format!("worker wrote no hello: {line:?}"))
                }
            }
        }
        (Ok(()), shm::READY_FAILED) => {
            // The worker's own report is the reason; the harness then ends it, so its exit
            // status (our SIGKILL) would read as a crash of the subject.
            let e = w.region.error();
            w.kill();
            Err(format!("worker failed: {e} (the harness ended the worker)"))
        }
        (Ok(()), s) => {
            w.kill();
            Err(format!("worker rang in state {s}"))
        }
        (Err(RecvTimeoutError::Timeout), _) => {
            w.kill();
            Err(format!("worker not ready within {wait:?}"))
        }
        (Err(RecvTimeoutError::Disconnected), _) => {
            let st = w.kill();
            Err(format!(
                "worker exited before it was ready ({})",
                describe_exit(st)
            ))
        }
    }
}

/// Sets up hand-off `seq` (entries `start..n` of `op` on `table`, in
/// `single` or batch mode) and rings the worker; false if the doorbell
/// cannot be rung (the worker is gone).
pub(super) fn ring(
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
    r.set(
        Field::Mode,
        if single {
            shm::MODE_SINGLE
        } else {
            shm::MODE_BATCH
        },
    );
    r.set(Field::Done, u32::try_from(start).unwrap_or(u32::MAX));
    r.set(Field::InBatch, 0);
    r.set(Field::Full, 0);
    // An entry the worker does not write stays unset (a harness fault).
    w.region.codes()[start.min(n)..n.min(shm::CHUNK)].fill(shm::CODE_UNSET);
    let r = &w.region;
    r.clear_stamp();
    r.set(Field::Seq, seq);
    w.bell.write_all(&[1]).and_then(|()| w.bell.flush()).is_ok()
}

/// How long [`wait`] polls the region before it sleeps on the doorbell.
const SPIN: Duration = Duration::from_millis(5);

/// Waits for hand-off `seq` to finish. In single mode the deadline moves
/// with every finished entry (a slow chunk is not a hang; one entry that
/// takes `budget` is).
pub(super) fn wait(
    w: &mut Worker,
    seq: u32,
    single: bool,
    budget: Duration,
    tick: &dyn Fn(),
) -> Wait {
    let _waiting = super::watch::waiting();
    // A hand-off usually finishes within a few milliseconds: the region is
    // polled first, yielding the core to whoever needs it (the worker among
    // them), which saves the doorbell thread's and this thread's wake-ups.
    // The doorbell bytes rung meanwhile are drained, so none pile up.
    let spin_until = Instant::now() + SPIN;
    while Instant::now() < spin_until {
        if w.region.get(Field::Finished) == seq {
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
            Ok(()) => {
                if w.region.get(Field::Finished) == seq {
                    return Wait::Finished;
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                if w.region.get(Field::Finished) == seq {
                    return Wait::Finished;
                }
                return Wait::Died(w.group.child.try_wait().ok().flatten());
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Ok(Some(st)) = w.group.child.try_wait() {
                    if w.region.get(Field::Finished) == seq {
                        return Wait::Finished;
                    }
                    return Wait::Died(Some(st));
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
