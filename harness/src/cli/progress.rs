//! The gate's progress: a bar on a terminal's stderr, else a line every few seconds.

use indicatif::{ProgressBar, ProgressState, ProgressStyle};

/// `whole_rate(1336427.9009, "cases/s") == "1,336,428 cases/s"` (not finite or negative: `0`).
pub fn whole_rate(rate: f64, unit: &str) -> String {
    let n = if rate.is_finite() && rate > 0.0 {
        // Saturating: u64::MAX cases per second is far beyond any run.
        rate.round() as u64
    } else {
        0
    };
    format!("{} {unit}", crate::report::format::grouped(n))
}

pub fn gate_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    let style = ProgressStyle::with_template(
        "{spinner} gate [{elapsed_precise}] {wide_bar} {pos}/{len} cases ({rate}) {msg}",
    )
    .map(|s| {
        s.with_key("rate", |st: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&whole_rate(st.per_sec(), "cases/s"));
        })
    })
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// What the gate is doing, for [`Ticker`]'s lines.
#[derive(Default)]
pub struct Phase {
    /// Generated cases done and planned (the gate's progress callback).
    done: std::sync::atomic::AtomicU64,
    total: std::sync::atomic::AtomicU64,
    what: std::sync::Mutex<&'static str>,
}

impl Phase {
    pub fn set(&self, what: &'static str) {
        if let Ok(mut w) = self.what.lock() {
            *w = what;
        }
    }

    pub fn cases(&self, done: u64, total: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        self.done.store(done, Relaxed);
        self.total.store(total, Relaxed);
    }
}

/// A progress line on stderr every `every` while the gate runs, for a stderr that is not a
/// terminal (no bar there): `tpbconform: gate: 42 s: generated cases: 120,000/400,000`
/// (issue 32: a piped gate is never silent for long).
pub struct Ticker {
    stop: std::sync::mpsc::Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    pub fn start(phase: std::sync::Arc<Phase>, every: std::time::Duration) -> Ticker {
        let (stop, rx) = std::sync::mpsc::channel::<()>();
        let start = std::time::Instant::now();
        let thread = std::thread::spawn(move || {
            use std::sync::atomic::Ordering::Relaxed;
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                let what = phase.what.lock().map(|w| *w).unwrap_or("running");
                let (done, total) = (phase.done.load(Relaxed), phase.total.load(Relaxed));
                let cases = if total > 0 {
                    format!(
                        ": generated cases: {}/{}",
                        crate::report::format::grouped(done),
                        crate::report::format::grouped(total)
                    )
                } else {
                    String::new()
                };
                eprintln!(
                    "tpbconform: gate: {} s: {what}{cases}",
                    start.elapsed().as_secs()
                );
            }
        });
        Ticker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::whole_rate;

    #[test]
    fn rates_are_whole_numbers_with_units() {
        assert_eq!(whole_rate(1_336_427.900_9, "cases/s"), "1,336,428 cases/s");
        assert_eq!(whole_rate(999.4, "cases/s"), "999 cases/s");
        assert_eq!(whole_rate(1000.0, "cases/s"), "1,000 cases/s");
        assert_eq!(whole_rate(0.4, "cases/s"), "0 cases/s");
        assert_eq!(whole_rate(f64::NAN, "cases/s"), "0 cases/s");
        assert_eq!(whole_rate(-5.0, "cases/s"), "0 cases/s");
        assert_eq!(whole_rate(12_345_678.0, "x/s"), "12,345,678 x/s");
    }
}
