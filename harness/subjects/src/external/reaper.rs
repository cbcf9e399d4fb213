//! The registry of running subject processes and the sweep that kills one:
//! its process group and every process holding one of its pipes (a `setsid`
//! child that kept stdout open goes too). [`kill_all`] (exit and panic
//! hooks, `main`'s last step) closes the registry, so a process started
//! afterwards is killed as it registers (issue 35: a `subject-worker`
//! outlived the gate by 97 minutes).

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Clone, Debug)]
struct Tree {
    pgid: i32,
    pipes: Vec<u64>,
}

struct Registry {
    live: Mutex<BTreeMap<u64, Tree>>,
    next: AtomicU64,
    closed: AtomicBool,
}

impl Registry {
    const fn new() -> Registry {
        Registry {
            live: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Tree>> {
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Once closed, sweeps `tree` at once (`closed` is read after the insert
    /// and set before `close` reads the map: every tree is swept).
    fn register(&self, tree: Tree) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.live().insert(id, tree);
        if self.closed.load(Ordering::SeqCst) {
            self.kill(id);
        }
        id
    }

    fn kill(&self, id: u64) {
        let tree = self.live().remove(&id);
        sweep(tree.as_slice());
    }

    /// Closes and sweeps; from a panic hook too, so `try_lock` (retried up
    /// to 100 ms) never deadlocks the exit.
    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let mut trees: Vec<Tree> = Vec::new();
        for _ in 0..100 {
            let mut g = match self.live.try_lock() {
                Ok(g) => g,
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    continue;
                }
            };
            trees = std::mem::take(&mut *g).into_values().collect();
            break;
        }
        sweep(&trees);
    }
}

static REGISTRY: Registry = Registry::new();

/// Kills every subject process still running and closes the registry.
pub fn kill_all() {
    REGISTRY.close();
}

fn pipe_inode(fd: &dyn AsRawFd) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .ok()
        .map(|m| m.ino())
}

/// SIGKILLs each group and every process holding one of the pipes, in one
/// pass over `/proc` (issue 19: a pass per tree cost ~10 ms at exit).
fn sweep(trees: &[Tree]) {
    use nix::sys::signal::{kill, killpg, Signal};
    use nix::unistd::Pid;
    for t in trees {
        let _ = killpg(Pid::from_raw(t.pgid), Signal::SIGKILL);
    }
    let names: Vec<String> = trees
        .iter()
        .flat_map(|t| &t.pipes)
        .map(|i| format!("pipe:[{i}]"))
        .collect();
    if names.is_empty() {
        return;
    }
    let me = std::process::id();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for p in procs.filter_map(Result::ok) {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        // Our own children are subjects (their groups are killed by
        // `killpg`) or being spawned by another thread: between fork and
        // exec those briefly hold every pipe of ours, so never them.
        if pid == me || parent_of(pid) == Some(me) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let mut holds = false;
        for fd in fds.filter_map(Result::ok) {
            match std::fs::read_link(fd.path()) {
                Ok(l) if names.iter().any(|n| l.as_os_str() == n.as_str()) => {
                    holds = true;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => break,
                _ => {}
            }
        }
        if holds {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    }
}

/// `/proc/PID/stat`'s field after the state.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Registers the leader of group `pid` and its pipe ends; the id is for [`kill`].
pub fn register(pid: u32, pipes: &[&dyn AsRawFd]) -> u64 {
    let pipes: Vec<u64> = pipes.iter().filter_map(|p| pipe_inode(*p)).collect();
    // A pid that is no i32 is no process: nothing to sweep.
    let pgid = i32::try_from(pid).unwrap_or(0);
    if pgid <= 0 {
        return u64::MAX;
    }
    REGISTRY.register(Tree { pgid, pipes })
}

pub fn kill(id: u64) {
    REGISTRY.kill(id);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, ChildStdout, Command, Stdio};
    use std::time::{Duration, Instant};

    /// A group leader we started (`sleep`, its own group) and a `setsid
    /// sleep` that is not our child but holds the write end of a pipe whose
    /// read end we keep: (leader, holder pid, read end).
    fn tree() -> (Child, u32, ChildStdout) {
        let leader = Command::new("sleep")
            .arg("60")
            .process_group(0)
            .spawn()
            .expect("sleep");
        let mut sh = Command::new("sh")
            .args(["-c", "setsid sleep 60 & echo $!"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh");
        let mut out = sh.stdout.take().expect("stdout");
        let _ = sh.wait();
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while out.read(&mut b).unwrap_or(0) == 1 && b[0] != b'\n' {
            line.push(b[0]);
        }
        let pid = String::from_utf8_lossy(&line).trim().parse().expect("pid");
        (leader, pid, out)
    }

    fn gone(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        })
    }

    /// Issue 35: a process started after the exit sweep (by a thread the
    /// gate abandoned) is killed as it registers, group and pipe holders.
    #[test]
    fn a_process_registered_after_the_close_is_killed_at_once() {
        let reg = Registry::new();
        let (mut early, early_holder, early_out) = tree();
        let tree_of = |leader: &Child, out: &ChildStdout| Tree {
            pgid: i32::try_from(leader.id()).expect("pid"),
            pipes: pipe_inode(out).into_iter().collect(),
        };
        reg.register(tree_of(&early, &early_out));
        reg.close();
        assert!(early.wait().is_ok_and(|s| !s.success()), "swept on close");
        let (mut late, late_holder, late_out) = tree();
        reg.register(tree_of(&late, &late_out));
        let until = Instant::now() + Duration::from_secs(5);
        while !(gone(early_holder) && gone(late_holder)) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(gone(early_holder) && gone(late_holder), "pipe holders left");
        assert!(late.wait().is_ok_and(|s| !s.success()), "late one left");
        assert!(reg.live().is_empty());
    }

    #[test]
    fn one_sweep_kills_every_trees_group_and_pipe_holders() {
        let mut made: Vec<(Child, u32, ChildStdout)> = (0..2).map(|_| tree()).collect();
        let trees: Vec<Tree> = made
            .iter()
            .map(|(leader, _, out)| Tree {
                pgid: i32::try_from(leader.id()).expect("pid"),
                pipes: pipe_inode(out).into_iter().collect(),
            })
            .collect();
        assert!(made.iter().all(|(_, h, _)| !gone(*h)));
        sweep(&trees);
        let until = Instant::now() + Duration::from_secs(5);
        while made.iter().any(|(_, h, _)| !gone(*h)) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        for (leader, holder, _) in &mut made {
            assert!(gone(*holder), "pipe holder {holder} survived the sweep");
            assert!(leader.wait().is_ok_and(|s| !s.success()), "leader survived");
        }
    }
}
