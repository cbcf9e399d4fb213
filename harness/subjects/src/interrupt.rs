//! SIGINT / SIGTERM / SIGHUP for every command, and the process-wide
//! registry of temporary paths that no exit path may leave behind.
//!
//! # Contracts
//!
//! - [`install`] (called once, by `main`) routes the three signals to one
//!   handler thread (the `ctrlc` crate; no `unsafe` here). By default a
//!   signal is a hard stop: [`hard_exit`] with status 130.
//! - A command that can stop cleanly (the gate) calls [`set_graceful`]: the
//!   first signal only sets [`stop_requested`], and if the process is still
//!   running [`GRACE`] later, or on a second signal, it is a hard stop. So a
//!   signal ends every command within `GRACE` plus the exit hooks' time,
//!   whatever phase it is in.
//! - [`hard_exit`] runs the exit hooks ([`on_hard_exit`]: e.g. removing a
//!   report's staging folder, killing subject processes), removes every
//!   registered temporary path, then exits, holding the registry lock so
//!   no new temporary path can appear after the sweep.
//! - A temporary path is registered and created in one critical section
//!   ([`create_temp_file`], [`create_temp_dir`]) and renamed into place and
//!   unregistered in another ([`finish_temp`]), so a signal at any moment
//!   finds it either registered or gone.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long a graceful command may take to stop after the first signal
/// before it is stopped hard.
pub const GRACE: Duration = Duration::from_millis(1500);

/// Exit status after a signal (128 + SIGINT, what shells report).
pub const EXIT_SIGNALLED: i32 = 130;

static STOP: AtomicBool = AtomicBool::new(false);
static GRACEFUL: AtomicBool = AtomicBool::new(false);
static TEMPS: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
static HOOKS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// A lock that a panic elsewhere did not make unusable.
fn locked<T>(m: &'static Mutex<T>) -> MutexGuard<'static, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Installs the signal handler (once per process; later calls do nothing).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if GRACEFUL.load(Ordering::SeqCst) && !STOP.swap(true, Ordering::SeqCst) {
            std::thread::spawn(|| {
                std::thread::sleep(GRACE);
                hard_exit(EXIT_SIGNALLED);
            });
            return;
        }
        hard_exit(EXIT_SIGNALLED);
    });
}

/// The first signal only requests a stop (see the module contracts).
pub fn set_graceful(on: bool) {
    GRACEFUL.store(on, Ordering::SeqCst);
}

/// True once a signal asked the process to stop.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Registers `hook` to run on [`hard_exit`] (once per distinct hook).
pub fn on_hard_exit(hook: fn()) {
    let mut g = locked(&HOOKS);
    if !g.iter().any(|h| std::ptr::fn_addr_eq(*h, hook)) {
        g.push(hook);
    }
}

/// Runs the exit hooks, removes every registered temporary path and exits
/// with `code`.
pub fn hard_exit(code: i32) -> ! {
    let hooks: Vec<fn()> = HOOKS.lock().map(|g| g.clone()).unwrap_or_default();
    for h in hooks {
        h();
    }
    let g = locked(&TEMPS);
    for p in g.iter() {
        remove_temp(p);
    }
    std::process::exit(code);
}

fn remove_temp(p: &Path) {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(p);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(p);
        }
        Err(_) => {}
    }
}

/// Registers `path` and creates it with `create` (e.g. an exclusive open)
/// in one critical section; on error it is unregistered again.
pub fn create_temp_file<T>(
    path: &Path,
    create: impl FnOnce(&Path) -> io::Result<T>,
) -> io::Result<T> {
    let mut g = locked(&TEMPS);
    let fresh = g.insert(path.to_path_buf());
    let r = create(path);
    if r.is_err() && fresh {
        g.remove(path);
    }
    r
}

/// Registers and creates a new folder (`mkdir`, never an existing one).
pub fn create_temp_dir(path: &Path) -> io::Result<()> {
    create_temp_file(path, |p| std::fs::create_dir(p))
}

/// Runs `finish` (the rename that puts `path` into place) and unregisters
/// `path`, in one critical section. On error `path` stays registered (the
/// caller removes it with [`discard_temp`]).
pub fn finish_temp(path: &Path, finish: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
    let mut g = locked(&TEMPS);
    let r = finish();
    if r.is_ok() {
        g.remove(path);
    }
    r
}

/// Removes a registered temporary path (file or folder) and unregisters it.
pub fn discard_temp(path: &Path) {
    let mut g = locked(&TEMPS);
    remove_temp(path);
    g.remove(path);
}

/// The temporary paths registered now (tests).
pub fn registered_temps() -> Vec<PathBuf> {
    locked(&TEMPS).iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    #[test]
    fn temps_are_registered_until_finished_or_discarded() {
        let dir = std::env::temp_dir().join(format!("tpb-interrupt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.tmp");
        let f = create_temp_file(&a, |p| File::create_new(p)).unwrap();
        drop(f);
        assert!(registered_temps().contains(&a));
        let b = dir.join("b");
        finish_temp(&a, || std::fs::rename(&a, &b)).unwrap();
        assert!(!registered_temps().contains(&a));
        let d = dir.join("stage");
        create_temp_dir(&d).unwrap();
        std::fs::write(d.join("x"), b"x").unwrap();
        assert!(
            create_temp_dir(&d).is_err(),
            "an existing folder is never taken"
        );
        assert!(registered_temps().contains(&d), "the first claim stays");
        discard_temp(&d);
        assert!(!d.exists() && !registered_temps().contains(&d));
        assert!(create_temp_file(&b, |p| File::create_new(p)).is_err());
        assert!(
            !registered_temps().contains(&b),
            "a failed create is forgotten"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
