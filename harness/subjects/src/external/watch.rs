//! The gate's no-progress watchdog as the subject clients see it (issue 35).
//! A gate thread installs its [`Watch`]; its clients mark each wait for a
//! subject process ([`waiting`]; its end is progress). Those waits are
//! bounded by the clients' own timeouts, which name the stuck input, so a
//! waiting thread gets [`Watch::limit`]'s longer limit and a slow machine's
//! restarts never look like a hang of the gate.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// One gate thread's progress: written by that thread alone, read by the
/// monitor. Its own cache lines (two threads' counters sharing one made
/// every case's write a cross-core transfer, issue 19).
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Watch {
    ticks: AtomicU64,
    waiting: AtomicU32,
}

impl Watch {
    /// The owning thread is the only writer: no read-modify-write needed.
    #[inline]
    pub fn tick(&self) {
        self.ticks
            .store(self.ticks.load(Relaxed).wrapping_add(1), Relaxed);
    }

    pub fn ticks(&self) -> u64 {
        self.ticks.load(Relaxed)
    }

    pub fn is_waiting(&self) -> bool {
        self.waiting.load(Relaxed) > 0
    }

    /// How long the thread may go without progress before it is stuck:
    /// `case_timeout` in the gate's own code; while it waits for a subject,
    /// one more wait of the longest a client waits (an answer or a
    /// restart's hello, at least 10 s) and 5 s of slack, since the client
    /// times that wait out itself and names the input.
    pub fn limit(&self, case_timeout: Duration) -> Duration {
        if self.is_waiting() {
            case_timeout + case_timeout.max(HELLO_MIN) + Duration::from_secs(5)
        } else {
            case_timeout
        }
    }
}

/// The least a (re)started subject gets for its hello (or ready), whatever
/// the case timeout: a start on a busy machine is slow.
pub const HELLO_MIN: Duration = Duration::from_secs(10);

thread_local! {
    static WATCH: RefCell<Option<Arc<Watch>>> = const { RefCell::new(None) };
}

/// Makes `w` this thread's watch (`None`: no watchdog).
pub fn watch_this_thread(w: Option<Arc<Watch>>) {
    WATCH.with(|c| *c.borrow_mut() = w);
}

/// Marks this thread as waiting for a subject until the guard drops.
#[must_use]
pub struct Waiting(Option<Arc<Watch>>);

pub fn waiting() -> Waiting {
    let w = WATCH.with(|c| c.borrow().clone());
    if let Some(w) = &w {
        w.waiting.fetch_add(1, Relaxed);
    }
    Waiting(w)
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(w) = &self.0 {
            w.waiting.fetch_sub(1, Relaxed);
            // The wait ended: an answer, a fault or a start.
            w.tick();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_reach_the_installed_watch_only() {
        drop(waiting());
        let w = Arc::new(Watch::default());
        watch_this_thread(Some(Arc::clone(&w)));
        assert_eq!(w.ticks(), 0);
        let t = Duration::from_secs(5);
        assert_eq!(w.limit(t), t);
        {
            let _g = waiting();
            assert!(w.is_waiting());
            assert_eq!(w.limit(t), Duration::from_secs(20));
        }
        assert!(!w.is_waiting());
        assert_eq!(w.ticks(), 1, "a finished wait is progress");
        watch_this_thread(None);
        drop(waiting());
        assert_eq!(w.ticks(), 1);
    }
}
