//! What each external subject did in this process ([`SubjectStats`], summed over its
//! per-thread instances when they close), kept by subject name so the gate's report can show
//! calls, answers, cases/s and the stderr tail after those instances are gone.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// What one external subject did in this process (summed over its
/// per-thread instances).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubjectStats {
    /// The hello name.
    pub hello_name: String,
    /// Requests answered or faulted (not counting local `unsupported`):
    /// a roundtrip case makes a decode and up to two encodes.
    pub calls: u64,
    /// Answers the transport delivered (well-formed or not): every call
    /// but those that crashed, hung, were never sent, or whose answer the
    /// harness lost (a harness fault). One per case: a roundtrip case's
    /// encodes are part of its answer, counted by its decode.
    pub received: u64,
    /// Answers the judge compared with core's (one per case likewise).
    pub compared: u64,
    /// Wall time spent waiting for them.
    pub busy: Duration,
    /// Restarts after faults.
    pub restarts: u64,
    /// The last [`super::process::STDERR_LINES`] stderr lines.
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

pub(super) fn registry() -> &'static Mutex<BTreeMap<String, SubjectStats>> {
    static R: OnceLock<Mutex<BTreeMap<String, SubjectStats>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// The accumulated statistics of every external subject closed so far, by
/// subject name (the spec).
pub fn stats() -> BTreeMap<String, SubjectStats> {
    registry().lock().map(|g| g.clone()).unwrap_or_default()
}
