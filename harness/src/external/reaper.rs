//! The registry of running subject processes and the sweep that kills one:
//! its process group and every other process holding one of its pipes
//! (found in `/proc`, so a `setsid` child that kept stdout open goes too).
//! [`kill_all`] is the exit hook of [`crate::interrupt`] and of the CLI's
//! panic hooks.

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A process to sweep: its group id and the inodes of its three pipes.
#[derive(Clone, Debug)]
struct Tree {
    pgid: i32,
    pipes: Vec<u64>,
}

static LIVE: Mutex<BTreeMap<u64, Tree>> = Mutex::new(BTreeMap::new());
static NEXT_LIVE: AtomicU64 = AtomicU64::new(0);

fn live() -> std::sync::MutexGuard<'static, BTreeMap<u64, Tree>> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kills every subject process still running, with its group and every
/// process holding its pipes (the exit hook of [`crate::interrupt`]).
/// Callable from a panic hook: the registry is taken with `try_lock` (a
/// thread that panicked while holding it must not deadlock the exit), retried
/// for up to 100 ms while another thread holds it.
pub fn kill_all() {
    let mut trees: Vec<Tree> = Vec::new();
    for _ in 0..100 {
        match LIVE.try_lock() {
            Ok(g) => trees = g.values().cloned().collect(),
            Err(std::sync::TryLockError::Poisoned(p)) => {
                trees = p.into_inner().values().cloned().collect();
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
        }
        break;
    }
    for t in &trees {
        sweep(t);
    }
}

/// The inode of an open pipe end (`/proc/self/fd/N` names it).
fn pipe_inode(fd: &dyn AsRawFd) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .ok()
        .map(|m| m.ino())
}

/// SIGKILLs the group `t.pgid` and every other process that holds one of
/// `t.pipes` open.
fn sweep(t: &Tree) {
    use nix::sys::signal::{kill, killpg, Signal};
    use nix::unistd::Pid;
    let _ = killpg(Pid::from_raw(t.pgid), Signal::SIGKILL);
    if t.pipes.is_empty() {
        return;
    }
    let me = std::process::id();
    let names: Vec<String> = t.pipes.iter().map(|i| format!("pipe:[{i}]")).collect();
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
        let holds = fds.filter_map(Result::ok).any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|l| names.iter().any(|n| l.as_os_str() == n.as_str()))
        });
        if holds {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    }
}

/// The parent pid of `pid` (`/proc/PID/stat`, the field after the state).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Registers a process that leads its own group `pid`, with its pipe ends
/// `pipes`; the id is for [`kill`].
pub fn register(pid: u32, pipes: &[&dyn AsRawFd]) -> u64 {
    let pipes: Vec<u64> = pipes.iter().filter_map(|p| pipe_inode(*p)).collect();
    let id = NEXT_LIVE.fetch_add(1, Ordering::Relaxed);
    if let Ok(pgid) = i32::try_from(pid) {
        live().insert(id, Tree { pgid, pipes });
    }
    id
}

/// Kills the process registered as `id` (its group and pipe holders) and
/// forgets it.
pub fn kill(id: u64) {
    let tree = live().remove(&id);
    if let Some(t) = &tree {
        sweep(t);
    }
}
