//! What keeps every external subject's process, whatever its transport:
//! the [`Supervisor`] (stderr ring, restarts, give-up per operation).

use super::protocol::Hello;
use crate::subjects::{Capability, Fault};
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const STDERR_LINES: usize = 50;
/// Consecutive failed starts (spawn or hello) before the subject is given up.
pub const MAX_FAILED_STARTS: u32 = 3;
/// K: requests of one operation in a row that fault (crash, protocol,
/// timeout) before the subject is given up on that operation. A good
/// answer of the operation resets its count.
pub const GIVE_UP_AFTER: u32 = 4;
/// Of those, timeouts in a row enough to give up (each costs a whole case
/// timeout).
pub const GIVE_UP_AFTER_TIMEOUTS: u32 = 2;
pub(super) const FIRST_FAULTS: usize = 3;

/// What every client keeps: the first start's hello, the generation, the
/// case timeout, its [`Supervisor`], the answers delivered.
pub struct Kept {
    pub(super) hello: Hello,
    pub(super) arch: String,
    pub(super) timeout: Duration,
    pub(super) sup: Supervisor,
    pub(super) received: u64,
}

impl Kept {
    pub(super) fn new(arch: &str, timeout: Duration) -> Kept {
        Kept {
            hello: Hello::default(),
            arch: arch.to_string(),
            timeout,
            sup: Supervisor::default(),
            received: 0,
        }
    }

    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// True if the subject declared the op carrying `op` (a table: `lut`).
    pub fn supports(&self, op: Capability) -> bool {
        self.hello.ops.has(op)
    }

    pub fn arch(&self) -> &str {
        &self.arch
    }

    pub fn supervisor(&self) -> &Supervisor {
        &self.sup
    }
}

/// The stderr ring (across restarts), restarts, and a give-up budget per
/// operation (issue 35: a library crashing on every `validate_header` is
/// still judged on its other operations). The whole subject is given up
/// when it cannot restart, changes its hello, the run stops, or
/// [`TIMED_OUT_OPS`] operations were given up for timeouts.
#[derive(Debug, Default)]
pub struct Supervisor {
    /// Shared with its `batch64` instance.
    pub(super) stderr: Arc<Mutex<VecDeque<String>>>,
    restarts: u64,
    /// Why the whole subject was given up.
    dead: Option<String>,
    /// Per operation (a LUT: per table) that faulted.
    ops: BTreeMap<Capability, OpBudget>,
}

/// One operation's streak of faults (and timeouts), its first faults, and
/// why it was given up.
#[derive(Debug, Default)]
struct OpBudget {
    faults: u32,
    timeouts: u32,
    first_faults: Vec<String>,
    dead: Option<String>,
}

impl OpBudget {
    fn timed_out(&self) -> bool {
        self.dead.is_some() && self.timeouts >= GIVE_UP_AFTER_TIMEOUTS
    }
}

/// Operations given up for timeouts before the whole subject is.
pub const TIMED_OUT_OPS: usize = 2;

impl Supervisor {
    pub fn stderr_ring(&self) -> Arc<Mutex<VecDeque<String>>> {
        Arc::clone(&self.stderr)
    }

    pub fn stderr_tail(&self) -> Vec<String> {
        let ring = self.stderr.lock();
        ring.map(|r| r.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    pub fn given_up_whole(&self) -> Option<&str> {
        self.dead.as_deref()
    }

    /// Why `op` is not asked any more (the whole subject, or `op`).
    #[inline]
    pub fn given_up_on(&self, op: Capability) -> Option<&str> {
        (self.dead.as_deref()).or_else(|| self.ops.get(&op)?.dead.as_deref())
    }

    pub fn given_up_ops(&self) -> impl Iterator<Item = (Capability, &str)> {
        self.ops
            .iter()
            .filter_map(|(c, b)| b.dead.as_deref().map(|why| (*c, why)))
    }

    /// True if `op` (or the whole subject) was given up for timeouts: the
    /// other generations then give it up too, each timeout being slow.
    pub fn given_up_for_timeouts(&self, op: Capability) -> bool {
        self.ops.get(&op).is_some_and(OpBudget::timed_out)
            || (self.dead.is_some() && self.timed_out_ops() >= TIMED_OUT_OPS)
    }

    fn timed_out_ops(&self) -> usize {
        self.ops.values().filter(|b| b.timed_out()).count()
    }

    /// Counts one answered (`None`) or faulted request of `op`, `input`
    /// naming it; a harness fault is not the subject's, not counted.
    pub fn count(&mut self, op: Capability, fault: Option<(&Fault, String)>) {
        if let Some((Fault::Harness(_), _)) = fault {
            return;
        }
        if fault.is_none() && !self.ops.contains_key(&op) {
            return;
        }
        let b = self.ops.entry(op).or_default();
        let Some((f, input)) = fault else {
            (b.faults, b.timeouts) = (0, 0);
            b.first_faults.clear();
            return;
        };
        b.faults += 1;
        b.timeouts += u32::from(matches!(f, Fault::Timeout(_)));
        if b.first_faults.len() < FIRST_FAULTS {
            b.first_faults.push(format!("{input}: {}", clip(&named(f))));
        }
        let given_up_now =
            b.dead.is_none() && (b.faults >= GIVE_UP_AFTER || b.timeouts >= GIVE_UP_AFTER_TIMEOUTS);
        if given_up_now {
            b.dead = Some(format!(
                "given up on {} after {} faults in a row (first: {})",
                op.name(),
                b.faults,
                b.first_faults.join("; ")
            ));
        }
        if given_up_now && self.dead.is_none() && self.timed_out_ops() >= TIMED_OUT_OPS {
            let ops: Vec<&str> = self
                .ops
                .iter()
                .filter(|(_, b)| b.timed_out())
                .map(|(c, _)| c.name())
                .collect();
            self.dead = Some(format!(
                "given up on every operation: {} each timed out {GIVE_UP_AFTER_TIMEOUTS} \
                 times in a row (a subject that stopped answering)",
                ops.join(" and ")
            ));
        }
    }

    pub fn not_sent(&self, op: Capability) -> Option<Fault> {
        self.given_up_on(op)
            .map(|why| Fault::NotSent(format!("not sent: subject {why}")))
    }

    pub fn start_error(&self, e: String) -> String {
        let tail = self.stderr_tail();
        if tail.is_empty() {
            e
        } else {
            format!("{e}; its stderr ends:\n{}", tail.join("\n"))
        }
    }

    /// Starts the process again (`spawn`: a start and its hello), at most
    /// [`MAX_FAILED_STARTS`] times; gives the subject up when every start
    /// fails, the hello changes, or the run is stopping.
    pub fn restart<W, H: PartialEq + fmt::Display>(
        &mut self,
        hello: &H,
        mut spawn: impl FnMut() -> Result<(W, H), String>,
        kill: impl FnOnce(W),
    ) -> Option<W> {
        if self.dead.is_some() || crate::interrupt::stop_requested() {
            self.dead
                .get_or_insert_with(|| "given up: the run was interrupted".into());
            return None;
        }
        self.restarts += 1;
        let mut last = String::new();
        for _ in 0..MAX_FAILED_STARTS {
            match spawn() {
                Ok((w, h)) if h == *hello => return Some(w),
                Ok((w, h)) => {
                    kill(w);
                    self.dead = Some(format!(
                        "given up: restarted process changed its hello from {hello} to {h}"
                    ));
                    return None;
                }
                Err(e) => last = e,
            }
        }
        self.dead = Some(format!(
            "given up: {MAX_FAILED_STARTS} restarts in a row failed, last: {last}"
        ));
        None
    }
}

/// A fault as a give-up reason names it (`protocol: …`, not the judge's `protocol error: …`).
fn named(f: &Fault) -> String {
    match f {
        Fault::Protocol(m) => format!("protocol: {m}"),
        Fault::NotSent(m) => format!("not sent: {m}"),
        f => f.to_string(),
    }
}

pub(super) fn clip(s: &str) -> String {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return s.to_string();
    }
    format!("{}…", &s[..s.floor_char_boundary(MAX)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::LutTable;

    /// Issue 35: each operation has its own streak; giving one up leaves
    /// the others (and the whole subject) asked.
    #[test]
    fn give_up_is_per_operation() {
        let mut s = Supervisor::default();
        let (vh, lut) = (Capability::ValidateHeader, Capability::Lut(LutTable::Dtype));
        let crash = Fault::Crash("x".into());
        for i in 0..GIVE_UP_AFTER {
            assert!(s.given_up_on(vh).is_none(), "after {i} faults");
            s.count(vh, Some((&crash, format!("in{i}"))));
            // Answers of another operation do not reset its streak.
            s.count(lut, None);
        }
        let why = s.given_up_on(vh).expect("validate_header given up");
        assert!(
            why.starts_with("given up on validate_header after 4 faults"),
            "{why}"
        );
        assert!(why.contains("in0: crash"), "{why}");
        assert!(s.given_up_on(lut).is_none());
        assert!(s.given_up_whole().is_none());
        assert!(matches!(s.not_sent(vh), Some(Fault::NotSent(_))));
        assert!(s.not_sent(lut).is_none());
        assert_eq!(s.given_up_ops().map(|(c, _)| c).collect::<Vec<_>>(), [vh]);
        assert!(!s.given_up_for_timeouts(vh));
        // A good answer resets only its own operation's streak.
        let dec = Capability::Decode;
        for _ in 0..GIVE_UP_AFTER - 1 {
            s.count(dec, Some((&crash, "d".into())));
        }
        s.count(dec, None);
        s.count(dec, Some((&crash, "d".into())));
        assert!(s.given_up_on(dec).is_none());
        // A harness fault is never counted.
        for _ in 0..10 {
            s.count(lut, Some((&Fault::Harness("x".into()), "h".into())));
        }
        assert!(s.given_up_on(lut).is_none());
    }

    /// Two operations given up for timeouts give the whole subject up (a
    /// subject that stopped answering costs a case timeout per request).
    #[test]
    fn two_operations_timing_out_give_the_whole_subject_up() {
        let mut s = Supervisor::default();
        let hang = Fault::Timeout("x".into());
        let (a, b) = (Capability::ValidateHeader, Capability::Decode);
        for _ in 0..GIVE_UP_AFTER_TIMEOUTS {
            s.count(a, Some((&hang, "a".into())));
        }
        assert!(s.given_up_for_timeouts(a));
        assert!(s.given_up_whole().is_none());
        assert!(s.given_up_on(b).is_none());
        for _ in 0..GIVE_UP_AFTER_TIMEOUTS {
            s.count(b, Some((&hang, "b".into())));
        }
        let why = s.given_up_whole().expect("whole subject given up");
        assert!(why.contains("validate_header and decode"), "{why}");
        assert!(s.given_up_on(Capability::Encode).is_some());
        assert!(s.given_up_for_timeouts(Capability::Encode));
    }
}
