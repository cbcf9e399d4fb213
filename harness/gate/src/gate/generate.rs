//! Phase 3 of the gate: generated cases on worker threads, with a monitor for progress,
//! stops and per-case timeouts.

use super::config::GateConfig;
use super::coverage::{file_case, runners, CovMap, Runner};
use super::outcome::{add_counts, count_cohorts, merge_cov, merge_judged, GateFailure, GateRun};
use super::stage::{Staged, Stager};
use crate::external::watch::{self, Watch};
use crate::findings::{CaseKind, Findings, Origin};
use crate::generators::name_hash;
use crate::judge::batch::{Cases, Step};
use crate::judge::{pair::guard, panic_text};
use crate::kinds::{self, CaseBuf, Ran, TargetKind};
use crate::reach::Reach;
use crate::targets::Target;
use std::collections::BTreeMap;
use std::iter::StepBy;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One gate thread's progress, read by the monitor; cache lines of its own (shared ones cost
/// a quarter of the judging loop, measured). Its [`Watch`] is also its subject clients' (issue 35).
#[derive(Default)]
#[repr(align(128))]
struct Slot {
    watch: Arc<Watch>,
    busy: AtomicBool,
    target: AtomicUsize,
    case: AtomicU64,
    /// 0 while case `case` is judged; n while the subjects answer n cases from it on.
    batch: AtomicU64,
    done: AtomicU64,
}

/// One in this many generated cases is classified for [`GateRun::reach`].
pub const REACH_SAMPLE: u64 = 16;

/// True for the sampled case indices: a multiplicative hash of the index, so shards sample
/// exactly what the unsharded run samples (a merged report's reach is the unsharded one).
pub fn reach_sampled(index: u64) -> bool {
    index.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60 == 0
}

/// [`GateFailure::Unreached`] when a full run (complete, unsharded, every gate target, at
/// least [`GateConfig::reach_required_from`] cases) left declared classes unhit.
pub fn reach_failure(cfg: &GateConfig, run: &GateRun) -> Option<GateFailure> {
    let full = !run.stopped_early
        && cfg.shard.count == 1
        && cfg.cases >= cfg.reach_required_from
        && Target::gate_targets()
            .iter()
            .all(|t| cfg.targets.contains(t));
    let classes = run.reach.unhit();
    (full && !classes.is_empty()).then_some(GateFailure::Unreached { classes })
}

/// What the workers share. The work list is on demand: item `j` is chunk `j / n` of target
/// `j % n`, skipped when that target has fewer `chunks`; `total` is `rounds × targets`.
struct Shared {
    cfg: GateConfig,
    chunks: Vec<u64>,
    total: u64,
    planned: Vec<u64>,
    next: AtomicU64,
    stop: AtomicBool,
    deadline: Option<Instant>,
    slots: Vec<Slot>,
    /// Per worker, what its items found.
    accs: Vec<Mutex<GateRun>>,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn done(&self) -> u64 {
        self.slots.iter().map(|s| s.done.load(Relaxed)).sum()
    }

    fn item(&self, j: u64) -> Option<(usize, u64)> {
        let n = self.chunks.len() as u64;
        let (k, ti) = (j / n, (j % n) as usize);
        (k < self.chunks[ti]).then_some((ti, k))
    }
}

/// What one work item found (`by_arch`: cases run and diverged per generation).
#[derive(Default)]
struct Filed {
    diverged: u64,
    by_arch: Vec<[u64; 2]>,
    cohorts: BTreeMap<String, u64>,
    findings: Findings,
    by_kind: [u64; 3],
    cov: CovMap,
}

impl Filed {
    #[inline(always)]
    fn file(&mut self, a: usize, fs: Vec<crate::findings::Finding>) {
        if !fs.is_empty() {
            self.file_some(a, fs);
        }
    }

    #[inline(never)]
    fn file_some(&mut self, a: usize, fs: Vec<crate::findings::Finding>) {
        self.diverged += 1;
        if let Some(x) = self.by_arch.get_mut(a) {
            x[1] += 1;
        }
        count_cohorts(&mut self.cohorts, &fs);
        for f in fs {
            self.findings.add(f);
        }
    }
}

/// One generation's cases of a work item: position `j` is case `at.1 + j` of target `at.0`.
struct Item<'a, 'b> {
    stager: &'a Stager<'b>,
    cur: &'a Staged,
    at: (usize, u64),
    len: u32,
    a: usize,
    r: &'a Runner,
    slot: &'a Slot,
    one: &'a mut CaseBuf,
    filed: &'a mut Filed,
    reach: &'a mut Reach,
}

impl Cases for Item<'_, '_> {
    /// One step range: case `i` runs under generation `i mod n`, a shard steps by its count.
    fn positions(&self) -> StepBy<Range<u32>> {
        let cfg = self.stager.cfg;
        let ours = |j: &u32| {
            let i = cfg.shard.case_index(self.at.1 + u64::from(*j));
            cfg.arch_index(i).min(self.stager.rs.len() - 1) == self.a
        };
        let n = self.stager.rs.len() as u32;
        let Some(first) = (0..n).find(ours) else {
            return (0..0).step_by(1);
        };
        let next = (first + 1..=first + n).find(ours).unwrap_or(first + n);
        (first..self.len).step_by((next - first) as usize)
    }

    #[inline(always)]
    fn case(&mut self, j: u32, buf: &mut CaseBuf, again: bool) -> Option<Step> {
        let cfg = self.stager.cfg;
        let (ti, lo) = self.at;
        let m = lo + u64::from(j);
        let i = cfg.shard.case_index(m);
        // At least once in 64 positions (a generation's cases step by at most `rs.len()`); a
        // stopped chunk is dropped.
        if (again || j % 64 < self.stager.rs.len() as u32) && cfg.interrupted() {
            return None;
        }
        self.slot.case.store(i, Relaxed);
        self.slot.watch.tick();
        if !again {
            if ti == 0 && cfg.debug_hang_case == Some(i) {
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
            if ti == 0 && cfg.debug_panic_case == Some(i) {
                panic!("debug_panic_case {i}");
            }
            if ti == 0 && cfg.debug_subject_panic_case == Some(i) {
                self.r.key.arm_fault();
            }
            self.filed.by_kind[CaseKind::of(i).index()] += 1;
            self.filed.by_arch[self.a][0] += 1;
        }
        let form =
            self.stager
                .case_input(self.cur, self.at, (m, i), (self.a, self.r), buf, self.one);
        Some(Step {
            form,
            judged: cfg.judges(i),
            sampled: reach_sampled(i),
        })
    }

    fn reach(&mut self) -> &mut Reach {
        self.reach
    }

    #[inline(always)]
    fn judged(&mut self, j: u32, ran: Ran, key: &str) {
        let i = self.stager.cfg.shard.case_index(self.at.1 + u64::from(j));
        let origin = || Origin::Generated { index: i };
        let fs = file_case(self.r, ran, key, self.reach, origin, &mut self.filed.cov);
        self.filed.file(self.a, fs);
    }
}

/// Runs work items until none is left; `_finished` is dropped when it returns or unwinds.
fn worker(sh: &Shared, w: usize, _finished: std::sync::mpsc::Sender<()>) {
    let rs = match runners(&sh.cfg) {
        Ok(r) if !r.is_empty() => r,
        Ok(_) => return,
        Err(_) if sh.cfg.interrupted() => return,
        Err(e) => {
            // Opened once before the workers started; a second failure is internal.
            let mut acc = sh.accs[w].lock().unwrap_or_else(|p| p.into_inner());
            acc.failures.push(GateFailure::InternalPanic {
                target: "-".into(),
                index: 0,
                message: e.to_string(),
            });
            sh.stop.store(true, Relaxed);
            return;
        }
    };
    let slot = &sh.slots[w];
    let cfg = &sh.cfg;
    watch::watch_this_thread(Some(Arc::clone(&slot.watch)));
    let hashes: Vec<u64> = cfg.targets.iter().map(|t| name_hash(t.name())).collect();
    let target_kinds: Vec<&dyn TargetKind> = cfg.targets.iter().map(|&t| kinds::of(t)).collect();
    let mut buf = CaseBuf::default();
    let mut one = CaseBuf::default();
    let mut reach = kinds::declared_reach(&cfg.targets, &cfg.arches());
    // With subjects, the next item is staged before this one is judged, so they answer it
    // meanwhile.
    let piped = rs.iter().any(|r| !r.judge.under_test().is_empty());
    let next_item = || loop {
        if sh.stopping() {
            return None;
        }
        let j = sh.next.fetch_add(1, Relaxed);
        if j >= sh.total {
            return None;
        }
        if let Some(item) = sh.item(j) {
            return Some(item);
        }
    };
    let (mut cur, mut next) = (Staged::default(), Staged::default());
    let stager = Stager {
        cfg: &sh.cfg,
        planned: &sh.planned,
        rs: &rs,
        hashes: &hashes,
        kinds: &target_kinds,
    };
    loop {
        if sh.stopping() {
            break;
        }
        if cur.item.is_none() {
            let Some(item) = next_item() else { break };
            stager.stage(&mut cur, item, &mut one);
        }
        let Some((ti, k)) = cur.item else { break };
        let t = cfg.targets[ti];
        let chunk = cfg.chunk_of(t);
        let lo = k * chunk;
        let hi = lo.saturating_add(chunk).min(sh.planned[ti]);
        let mut filed = Filed {
            by_arch: vec![[0u64; 2]; rs.len()],
            ..Filed::default()
        };
        slot.target.store(ti, Relaxed);
        slot.busy.store(true, Relaxed);
        let t0 = Instant::now();
        next.item = None;
        next.took = Duration::ZERO;
        let res = guard(|| {
            let tick = || slot.watch.tick();
            // A timeout names the item's cases, not the last one judged (issue 35).
            slot.case.store(cfg.shard.case_index(lo), Relaxed);
            slot.batch.store(hi - lo, Relaxed);
            stager.collect(&cur, &tick);
            if piped {
                if let Some(item) = next_item() {
                    stager.stage(&mut next, item, &mut one);
                }
            }
            slot.batch.store(0, Relaxed);
            for (a, r) in rs.iter().enumerate() {
                let mut item = Item {
                    stager: &stager,
                    cur: &cur,
                    at: (ti, lo),
                    len: u32::try_from(hi - lo).unwrap_or(u32::MAX),
                    a,
                    r,
                    slot,
                    one: &mut one,
                    filed: &mut filed,
                    reach: &mut reach,
                };
                let prefetched = cur.runs.get(a).is_some_and(|run| run.on);
                r.judge.judge_batch(t, prefetched, &mut buf, &mut item);
            }
        });
        slot.busy.store(false, Relaxed);
        // Its own staging, not the next one's.
        let dt = (t0.elapsed() + cur.took).saturating_sub(next.took);
        std::mem::swap(&mut cur, &mut next);
        if cfg.interrupted() {
            break; // answers cut short by the stop are not results
        }
        let mut acc = sh.accs[w].lock().unwrap_or_else(|p| p.into_inner());
        let acc = &mut *acc;
        let st = &mut acc.targets[ti].1;
        match res {
            Ok(()) => {
                st.add_kinds(hi - lo, filed.by_kind, filed.diverged);
                for ((_, x), y) in acc.arches.iter_mut().zip(&filed.by_arch) {
                    x.ran += y[0];
                    x.diverged += y[1];
                }
            }
            Err(message) => {
                acc.failures.push(GateFailure::InternalPanic {
                    target: t.name().to_string(),
                    index: slot.case.load(Relaxed),
                    message,
                });
                sh.stop.store(true, Relaxed);
            }
        }
        st.busy += dt;
        merge_cov(&mut st.coverage, filed.cov);
        acc.findings.merge(filed.findings);
        add_counts(&mut acc.cohorts, filed.cohorts);
        slot.done.fetch_add(hi - lo, Relaxed);
    }
    let mut acc = sh.accs[w].lock().unwrap_or_else(|p| p.into_inner());
    acc.reach.merge(&reach);
    acc.count_judged(rs.iter().map(|r| (r.arch, &r.judge)), true);
    drop(acc);
    watch::watch_this_thread(None);
}

/// Progress callback: `(cases done, cases planned)`.
pub type Progress<'a> = &'a dyn Fn(u64, u64);

pub fn generate(
    cfg: &GateConfig,
    start: Instant,
    run: &mut GateRun,
    progress: Option<Progress<'_>>,
) {
    let planned: Vec<u64> = cfg
        .targets
        .iter()
        .map(|t| cfg.shard.len(cfg.cases_for(*t)))
        .collect();
    let chunks: Vec<u64> = cfg
        .targets
        .iter()
        .zip(&planned)
        .map(|(t, n)| n.div_ceil(cfg.chunk_of(*t)))
        .collect();
    let rounds = chunks.iter().copied().max().unwrap_or(0);
    let total_items = rounds.saturating_mul(chunks.len() as u64);
    let threads = cfg.threads.max(1);
    let total_planned: u64 = planned.iter().fold(0u64, |a, &p| a.saturating_add(p));
    let sh = Arc::new(Shared {
        cfg: cfg.clone(),
        chunks,
        total: total_items,
        planned: planned.clone(),
        next: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        deadline: cfg
            .seconds
            .map(|s| start + Duration::from_secs_f64(s.max(0.0))),
        slots: (0..threads).map(|_| Slot::default()).collect(),
        accs: (0..threads).map(|_| Mutex::new(GateRun::of(cfg))).collect(),
    });
    // Each worker holds a sender: the monitor wakes as soon as the last one finishes.
    let (finished, all_finished) = std::sync::mpsc::channel::<()>();
    run.reach = kinds::declared_reach(&cfg.targets, &cfg.arches());
    let t0 = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|w| {
            let (sh, _finished) = (Arc::clone(&sh), finished.clone());
            std::thread::Builder::new()
                .name(format!("gate-{w}"))
                .spawn(move || worker(&sh, w, _finished))
        })
        .collect();
    drop(finished);
    let mut handles: Vec<_> = handles.into_iter().filter_map(Result::ok).collect();
    // Monitor: progress, external stop, per-case timeout.
    let mut last: Vec<(u64, Instant)> = (0..threads).map(|_| (0, Instant::now())).collect();
    let mut stuck: Option<usize> = None;
    loop {
        if handles.iter().all(|h| h.is_finished()) {
            break;
        }
        let _ = all_finished.recv_timeout(Duration::from_millis(50));
        if cfg.interrupted() {
            sh.stop.store(true, Relaxed);
        }
        if let Some(p) = progress {
            p(sh.done(), total_planned);
        }
        for (w, s) in sh.slots.iter().enumerate() {
            let ticks = s.watch.ticks();
            if ticks != last[w].0 || !s.busy.load(Relaxed) {
                last[w] = (ticks, Instant::now());
            } else if last[w].1.elapsed() >= s.watch.limit(cfg.case_timeout) && stuck.is_none() {
                // Stuck in the gate's code (or a client past its own timeout): abandoned.
                stuck = Some(w);
                sh.stop.store(true, Relaxed);
                let ti = s.target.load(Relaxed);
                run.failures.push(GateFailure::Timeout {
                    target: cfg.targets[ti].name().to_string(),
                    index: s.case.load(Relaxed),
                    batch: s.batch.load(Relaxed),
                    seconds: s.watch.limit(cfg.case_timeout).as_secs(),
                });
            }
        }
        if let Some(stuck) = stuck {
            // The others get a moment to finish their chunk; the stuck thread is detached.
            let until = Instant::now() + Duration::from_secs(2);
            while Instant::now() < until
                && handles
                    .iter()
                    .enumerate()
                    .any(|(w, h)| w != stuck && !h.is_finished())
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            break;
        }
    }
    let timed_out = stuck.is_some();
    if !timed_out {
        for h in handles.drain(..) {
            if let Err(p) = h.join() {
                run.failures.push(GateFailure::InternalPanic {
                    target: "-".into(),
                    index: 0,
                    message: panic_text(&*p),
                });
            }
        }
    }
    run.gen_elapsed = t0.elapsed();
    if let Some(p) = progress {
        p(sh.done(), total_planned);
    }
    for m in &sh.accs {
        let a = std::mem::take(&mut *m.lock().unwrap_or_else(|p| p.into_inner()));
        for ((_, st), (_, x)) in run.arches.iter_mut().zip(&a.arches) {
            st.ran += x.ran;
            st.diverged += x.diverged;
        }
        for ((_, st), (_, x)) in run.targets.iter_mut().zip(a.targets) {
            st.add_generated(x);
        }
        run.reach.merge(&a.reach);
        merge_judged(&mut run.subject_judged, &a.subject_judged);
        add_counts(&mut run.cohorts, a.cohorts);
        for (key, (why, n)) in a.given_up {
            run.given_up.entry(key).or_insert((why, 0)).1 += n;
        }
        run.findings.merge(a.findings);
        run.failures.extend(a.failures);
    }
    for ((_, st), p) in run.targets.iter_mut().zip(&planned) {
        st.planned = *p;
    }
    let processed = sh.next.load(Relaxed).min(total_items);
    run.stopped_early = processed < total_items || timed_out;
    if run.stopped_early && !timed_out {
        let why = if cfg.interrupted() {
            run.failures.push(GateFailure::Interrupted);
            "interrupted"
        } else {
            "time budget reached"
        };
        run.notes.push(format!(
            "{why}: ran {} of {} planned generated cases",
            run.generated(),
            total_planned
        ));
    }
    run.failures.extend(reach_failure(cfg, run));
    for (t, st) in &run.targets {
        // Fail closed: a target that checked nothing (an empty shard too) never passes.
        if st.ran == 0 {
            run.failures.push(GateFailure::TargetDidNotRun {
                target: t.name().to_string(),
            });
        }
    }
}
